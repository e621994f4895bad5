//! A `HoldHandComponent`'s parameter table: every tunable number's name, unit, range, default
//! and description, in one place. [`super::PairSettings::sanitized`] checks with it, the tuning
//! types take their defaults from it, the node its inspector hints, and the docs print it.

use crate::kit::param::{Param, Unit as U};

/// Largest follow, preparation or contact offset on any axis (m).
pub const MAX_OFFSET: f32 = 100.0;
/// Largest contact rotation on any axis (degrees: ten turns).
pub const MAX_ROTATION: f32 = 3600.0;

/// One setting of [`PairSettings`], named as the node's property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum PairParam {
    FollowOffset,
    PreparationOffset,
    SpringCoefficient,
    MinFollowSpeed,
    MaxFollowSpeed,
    StopRadius,
    ContactSmoothTime,
    ReconnectDistance,
    DisconnectDistance,
    FadeInTime,
    FadeOutTime,
    MaxPositionWeight,
    MaxRotationWeight,
    PoseInterval,
    IkInterval,
    AnimationInterval,
    MaxRootSpeed,
    BlendSpeed,
    IkTimeout,
    IkFadeTime,
    ReachMargin,
    InitiatorTimeout,
    InitiatorStartTimeout,
    ArmLayerHoldValue,
    InitiatorContactOffset,
    InitiatorContactRotation,
    RecipientContactOffset,
    RecipientContactRotation,
}

impl PairParam {
    /// Every setting, in [`PairSettings::sanitized`]'s order (each one's index is its value).
    pub const ALL: [Self; 28] = [
        Self::FollowOffset,
        Self::PreparationOffset,
        Self::SpringCoefficient,
        Self::MinFollowSpeed,
        Self::MaxFollowSpeed,
        Self::StopRadius,
        Self::ContactSmoothTime,
        Self::ReconnectDistance,
        Self::DisconnectDistance,
        Self::FadeInTime,
        Self::FadeOutTime,
        Self::MaxPositionWeight,
        Self::MaxRotationWeight,
        Self::PoseInterval,
        Self::IkInterval,
        Self::AnimationInterval,
        Self::MaxRootSpeed,
        Self::BlendSpeed,
        Self::IkTimeout,
        Self::IkFadeTime,
        Self::ReachMargin,
        Self::InitiatorTimeout,
        Self::InitiatorStartTimeout,
        Self::ArmLayerHoldValue,
        Self::InitiatorContactOffset,
        Self::InitiatorContactRotation,
        Self::RecipientContactOffset,
        Self::RecipientContactRotation,
    ];

    /// Returns the property's name on the node.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::FollowOffset => "follow_offset",
            Self::PreparationOffset => "preparation_offset",
            Self::InitiatorContactOffset => "initiator_contact_offset",
            Self::InitiatorContactRotation => "initiator_contact_rotation",
            Self::RecipientContactOffset => "recipient_contact_offset",
            Self::RecipientContactRotation => "recipient_contact_rotation",
            _ => self.spec().name,
        }
    }

    /// The setting's table entry (its name, unit, range, default and description); the offsets
    /// and rotations are vectors, bounded by [`MAX_OFFSET`] and [`MAX_ROTATION`], with none.
    #[must_use]
    pub const fn spec(self) -> Param {
        match self {
            Self::FollowOffset
            | Self::PreparationOffset
            | Self::InitiatorContactOffset
            | Self::InitiatorContactRotation
            | Self::RecipientContactOffset
            | Self::RecipientContactRotation => panic!("a vector setting has no table entry"),
            _ => SPECS[self as usize - Self::SpringCoefficient as usize],
        }
    }

    /// Whether a correction of this setting releases the hands (following goes on): the contact
    /// solver's own tuning, which has no safe stand-in mid-pair.
    #[must_use]
    pub fn releases_hands(self) -> bool {
        matches!(
            self,
            Self::ContactSmoothTime
                | Self::ReconnectDistance
                | Self::DisconnectDistance
                | Self::FadeInTime
                | Self::FadeOutTime
                | Self::MaxPositionWeight
                | Self::MaxRotationWeight
        )
    }
}

/// The table of the numbers, in [`PairParam`]'s order from `spring_coefficient` to
/// `arm_layer_hold_value`.
#[rustfmt::skip]
const SPECS: [Param; 22] = [
    Param::new("spring_coefficient", U::PerSecond, (0.0, 100.0), 16.0, "follow speed per metre of distance to the follow point"),
    Param::new("min_follow_speed", U::MetresPerSecond, (0.0, 100.0), 12.0, "lowest follow speed outside the stop radius; scaled"),
    Param::new("max_follow_speed", U::MetresPerSecond, (0.0, 100.0), 24.0, "highest follow speed, also when catching up after a wall (at least min_follow_speed); scaled"),
    Param::new("stop_radius", U::Metres, (0.0, 1.0), 0.02, "closer than this, the recipient snaps onto the follow point; scaled"),
    Param::new("contact_smooth_time", U::Seconds, (0.0, 1.0), 0.08, "smoothing of the shared contact point"),
    Param::new("reconnect_distance", U::Metres, (0.0, 5.0), 1.1, "let-go hands take hold again when the roots are this close; scaled"),
    Param::new("disconnect_distance", U::Metres, (0.0, 5.0), 1.51, "the hands let go when the roots are farther apart (at least reconnect_distance); scaled"),
    Param::new("fade_in_time", U::Seconds, (0.0, 2.0), 0.15, "how long the hand IK takes to fade in"),
    Param::new("fade_out_time", U::Seconds, (0.0, 2.0), 0.1, "how long the hand IK takes to fade out"),
    Param::new("max_position_weight", U::Number, (0.0, 1.0), 1.0, "strongest hand IK position weight"),
    Param::new("max_rotation_weight", U::Number, (0.0, 1.0), 1.0, "strongest hand IK rotation weight"),
    Param::new("pose_interval", U::Seconds, (0.02, 1.0), 0.1, "networked: how often the initiator sends both positions"),
    Param::new("ik_interval", U::Seconds, (0.02, 1.0), 0.05, "networked: how often it sends the hands"),
    Param::new("animation_interval", U::Seconds, (0.0, 1.0), 0.1, "networked: how often it sends animation snapshots (0: never)"),
    Param::new("max_root_speed", U::MetresPerSecond, (0.5, 100.0), 12.0, "networked: frames moving the initiator faster are refused (unless it called teleport()); scaled"),
    Param::new("blend_speed", U::MetresPerSecond, (0.1, 50.0), 4.0, "networked: how fast remote peers glide each character into the pair at its start; scaled"),
    Param::new("ik_timeout", U::Seconds, (0.05, 10.0), 0.5, "networked: remote hands fade out after this much silence"),
    Param::new("ik_fade_time", U::Seconds, (0.0, 2.0), 0.2, "networked: over this long"),
    Param::new("reach_margin", U::Metres, (0.0, 0.2), 0.02, "each reach sphere is this much shorter than the arm; scaled"),
    Param::new("initiator_timeout", U::Seconds, (0.2, 60.0), 3.0, "a silent initiator releases the recipient after this long"),
    Param::new("initiator_start_timeout", U::Seconds, (0.2, 120.0), 10.0, "the same, before the initiator's first frame"),
    Param::new("arm_layer_hold_value", U::Number, (0.0, 1.0), 0.0, "value the arm layers blend to while the hands are held"),
];

/// Every number of a `HoldHandComponent`, in the table's order, for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    SPECS.to_vec()
}
