//! The wall touch's tunables: [`TouchConfig`], checked by [`TouchConfig::sanitized`], which
//! reports each bad value as a typed [`ConfigIssue`]; and the setup's measurements ([`calibrate`]).

use glam::{Quat, Vec3};

use super::{detection_box, DetectionBox};
use crate::kit::pose::{rotation_of_axes, unit_vec3};

/// Tunables, in metres, seconds, radians and radians per second. Defaults are the seed's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TouchConfig {
    /// Height of the shoulders above the character's origin, locked at setup (m). The closest point
    /// is searched from this height so the walk's bob does not make the hand slide up and down.
    pub shoulder_height: f32,
    /// Height of the character collider's centre above its origin (m): the hand's height in Approach.
    pub waist_height: f32,
    /// Distance (m) the IK target is kept off the surface, toward the shoulder (the hand's thickness).
    pub surface_offset: f32,
    /// A collider tracked before stays preferred after Reset while it is at most this much (m)
    /// farther than the nearest one (keeps a corridor walk on one side).
    pub side_switch_margin: f32,
    /// Reset lasts at least this long (s) before searching again.
    pub reset_duration: f32,
    /// Time scale (s) of the seed's ramp that blends weights and target back in Reset.
    pub reset_blend_duration: f32,
    /// Angular speed (rad/s) of the hand's return to its rest rotation in Reset.
    pub reset_rotation_speed: f32,
    /// Search → Approach when the contact is within this distance (m) of the character's origin.
    pub approach_distance: f32,
    /// IK position weight Approach blends toward.
    pub approach_weight: f32,
    /// IK rotation weight Approach blends toward.
    pub approach_rotation_weight: f32,
    /// Time scale (s) of Approach's weight ramp.
    pub approach_blend_duration: f32,
    /// Approach gives up (→ Reset) after this long (s).
    pub approach_duration: f32,
    /// Angular speed (rad/s) of the palm turning toward the ground in Approach.
    pub approach_rotation_speed: f32,
    /// Approach → Rise when the contact is within this distance (m) of the shoulder.
    pub rise_distance: f32,
    /// IK position and rotation weight Rise blends toward.
    pub rise_weight: f32,
    /// Time scale (s) of Rise's ramp (weights and target height).
    pub rise_blend_duration: f32,
    /// Angular speed (rad/s) of the palm turning against the surface in Rise and Touch.
    pub rise_rotation_speed: f32,
    /// Length (m) of the ray from the shoulder toward the contact that finds the surface normal.
    pub normal_ray_length: f32,
    /// Rise → Touch when the IK target is within this distance (m) of its place on the surface…
    pub touch_distance: f32,
    /// …and Rise has lasted at least this long (s).
    pub touch_min_time: f32,
    /// Touch → Reset after this long (s).
    pub touch_duration: f32,
    /// Moving-away trigger: the distance to the contact may exceed its lowest value by this much (m).
    pub moving_away_offset: f32,
    /// Jumping trigger: upward speed (m/s) from which the character counts as jumping (the seed's
    /// `round(velocity.y) >= 1`).
    pub jump_speed: f32,
    /// The left hand bone's palm normal (the direction out of the palm) in the bone's own space.
    pub palm_axis: Vec3,
    /// The left hand bone's finger direction in the bone's own space.
    pub finger_axis: Vec3,
    /// The right hand bone's palm normal in the bone's own space (a rig's two hands usually have
    /// mirrored axes).
    pub right_palm_axis: Vec3,
    /// The right hand bone's finger direction in the bone's own space.
    pub right_finger_axis: Vec3,
    /// Touch lasts while the hand can reach the wall (a hand kept on a wall or railing while
    /// walking along it) instead of [`TouchConfig::touch_duration`]; off by default.
    pub persistent_touch: bool,
}

impl Default for TouchConfig {
    fn default() -> Self {
        use TouchParam as P;
        let d = |p: TouchParam| p.spec().default;
        Self {
            shoulder_height: d(P::ShoulderHeight),
            waist_height: d(P::WaistHeight),
            surface_offset: d(P::SurfaceOffset),
            side_switch_margin: d(P::SideSwitchMargin),
            reset_duration: d(P::ResetDuration),
            reset_blend_duration: d(P::ResetBlendDuration),
            reset_rotation_speed: d(P::ResetRotationSpeed),
            approach_distance: d(P::ApproachDistance),
            approach_weight: d(P::ApproachWeight),
            approach_rotation_weight: d(P::ApproachRotationWeight),
            approach_blend_duration: d(P::ApproachBlendDuration),
            approach_duration: d(P::ApproachDuration),
            approach_rotation_speed: d(P::ApproachRotationSpeed),
            rise_distance: d(P::RiseDistance),
            rise_weight: d(P::RiseWeight),
            rise_blend_duration: d(P::RiseBlendDuration),
            rise_rotation_speed: d(P::RiseRotationSpeed),
            normal_ray_length: d(P::NormalRayLength),
            touch_distance: d(P::TouchDistance),
            touch_min_time: d(P::TouchMinTime),
            touch_duration: d(P::TouchDuration),
            moving_away_offset: d(P::MovingAwayOffset),
            jump_speed: d(P::JumpSpeed),
            palm_axis: Vec3::Z,
            finger_axis: Vec3::Y,
            right_palm_axis: Vec3::Z,
            right_finger_axis: Vec3::Y,
            persistent_touch: false,
        }
    }
}

/// A parameter of [`TouchConfig`] (named as the node's property).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TouchParam {
    /// `surface_offset`.
    SurfaceOffset,
    /// `side_switch_margin`.
    SideSwitchMargin,
    /// `reset_duration`.
    ResetDuration,
    /// `reset_blend_duration`.
    ResetBlendDuration,
    /// `reset_rotation_speed`.
    ResetRotationSpeed,
    /// `approach_distance`.
    ApproachDistance,
    /// `approach_blend_duration`.
    ApproachBlendDuration,
    /// `approach_duration`.
    ApproachDuration,
    /// `approach_rotation_speed`.
    ApproachRotationSpeed,
    /// `rise_distance`.
    RiseDistance,
    /// `rise_blend_duration`.
    RiseBlendDuration,
    /// `rise_rotation_speed`.
    RiseRotationSpeed,
    /// `normal_ray_length`.
    NormalRayLength,
    /// `touch_distance`.
    TouchDistance,
    /// `touch_min_time`.
    TouchMinTime,
    /// `touch_duration`.
    TouchDuration,
    /// `moving_away_offset`.
    MovingAwayOffset,
    /// `jump_speed`.
    JumpSpeed,
    /// `approach_weight`.
    ApproachWeight,
    /// `approach_rotation_weight`.
    ApproachRotationWeight,
    /// `rise_weight`.
    RiseWeight,
    /// `shoulder_height`.
    ShoulderHeight,
    /// `waist_height`.
    WaistHeight,
    /// `palm_axis` (with `finger_axis`, the left hand's axes).
    PalmAxis,
    /// `right_palm_axis` (with `right_finger_axis`).
    RightPalmAxis,
}

use crate::kit::param::{Param, Unit as U};

/// One degree in radians.
const DEG: f32 = core::f32::consts::PI / 180.0;

/// The table, in [`TouchParam`]'s order up to the hands' axes (which are vectors).
#[rustfmt::skip]
const SPECS: [Param; 23] = [
    Param::at_least("surface_offset", U::Metres, (0.0, 0.3), 0.05, "the IK target stays this far off the surface (the hand's thickness); scaled"),
    Param::at_least("side_switch_margin", U::Metres, (0.0, 1.0), 0.1, "after a reset, the wall touched before stays preferred while at most this much farther; scaled"),
    Param::at_least("reset_duration", U::Seconds, (0.0, 10.0), 2.0, "Reset lasts at least this long before searching again"),
    Param::at_least("reset_blend_duration", U::Seconds, (0.0, 60.0), 10.0, "time scale of Reset's blend back (larger is slower)"),
    Param::at_least("reset_rotation_speed", U::RadiansPerSecond, (0.0, 3600.0 * DEG), 500.0 * DEG, "how fast the hand turns back to its rest rotation in Reset"),
    Param::at_least("approach_distance", U::Metres, (0.0, 10.0), 2.0, "Search → Approach when the contact is this close to the character; scaled"),
    Param::at_least("approach_blend_duration", U::Seconds, (0.0, 60.0), 5.0, "time scale of Approach's weight ramp"),
    Param::at_least("approach_duration", U::Seconds, (0.0, 30.0), 2.0, "Approach gives up and resets after this long"),
    Param::at_least("approach_rotation_speed", U::RadiansPerSecond, (0.0, 3600.0 * DEG), 500.0 * DEG, "how fast the palm turns toward the ground in Approach"),
    Param::at_least("rise_distance", U::Metres, (0.0, 3.0), 0.5, "Approach → Rise when the contact is this close to the shoulder; scaled"),
    Param::at_least("rise_blend_duration", U::Seconds, (0.0, 60.0), 5.0, "time scale of Rise's ramp (weights and hand height)"),
    Param::at_least("rise_rotation_speed", U::RadiansPerSecond, (0.0, 3600.0 * DEG), 1000.0 * DEG, "how fast the palm turns against the surface in Rise and Touch"),
    Param::at_least("normal_ray_length", U::Metres, (0.0, 3.0), 0.5, "length of the ray that finds the surface normal; scaled"),
    Param::at_least("touch_distance", U::Metres, (0.0, 1.0), 0.05, "Rise → Touch when the IK target is this close to its place on the surface…; scaled"),
    Param::at_least("touch_min_time", U::Seconds, (0.0, 10.0), 1.0, "…and Rise has lasted at least this long"),
    Param::at_least("touch_duration", U::Seconds, (0.0, 30.0), 0.5, "the hand rests this long, then lets go"),
    Param::at_least("moving_away_offset", U::Metres, (0.0, 0.5), 0.005, "moving away: how far the distance to the contact may grow past its lowest; scaled"),
    Param::at_least("jump_speed", U::MetresPerSecond, (0.0, 20.0), 0.5, "rising faster than this counts as a jump; scaled"),
    Param::new("approach_weight", U::Number, (0.0, 1.0), 0.5, "IK position weight Approach blends toward"),
    Param::new("approach_rotation_weight", U::Number, (0.0, 1.0), 0.75, "IK rotation weight (palm toward the ground) Approach blends toward"),
    Param::new("rise_weight", U::Number, (0.0, 1.0), 1.0, "IK position and rotation weight Rise blends toward"),
    Param::at_least("shoulder_height", U::Metres, (1e-3, 3.0), 1.45, "height of the shoulders above the origin (measured at setup)"),
    Param::at_least("waist_height", U::Metres, (1e-3, 3.0), 0.875, "height of the collider's centre above the origin (measured at setup)"),
];

/// The character's height (0: measured from the rig or the collider).
#[rustfmt::skip]
pub const CHARACTER_HEIGHT: Param = Param::at_least("character_height", U::Metres, (0.0, 10.0), 0.0, "the character's height (0: found from the rig or its collider)");

/// Every tunable number of an `EnvironmentInteractionStateMachine` (the properties), for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    let mut all = vec![CHARACTER_HEIGHT];
    all.extend(SPECS[..TouchParam::ShoulderHeight as usize].iter().copied());
    all
}

impl TouchParam {
    /// Returns the field's name, which is also the node's property.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::PalmAxis => "palm_axis",
            Self::RightPalmAxis => "right_palm_axis",
            _ => SPECS[self as usize].name,
        }
    }

    /// The parameter's table entry; the hands' axes (vectors) have none.
    #[must_use]
    pub const fn spec(self) -> Param {
        match self {
            Self::PalmAxis | Self::RightPalmAxis => {
                panic!("the hands' axes are vectors, with no table entry")
            }
            _ => SPECS[self as usize],
        }
    }

    /// Returns the accepted values, in words.
    #[must_use]
    pub fn accepted(self) -> String {
        match self {
            Self::PalmAxis => "non-zero and not parallel to finger_axis".into(),
            Self::RightPalmAxis => "non-zero and not parallel to right_finger_axis".into(),
            _ => self.spec().accepted(),
        }
    }
}

/// A bad configuration value, replaced by the field's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigIssue {
    /// The field.
    pub param: TouchParam,
}

impl core::fmt::Display for ConfigIssue {
    /// The warning for the issue: the property, what it accepts, and that its default is used.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "property '{}' must be {}; its default is used instead.",
            self.param.name(),
            self.param.accepted()
        )
    }
}

impl TouchConfig {
    /// Returns a copy where every value outside its table range (or not finite) is replaced by
    /// its default, calling `on_issue` for each one replaced, in [`TouchParam`]'s order (lengths,
    /// durations and speeds, then the weights, the heights and the hands' axes).
    #[must_use]
    pub fn sanitized(mut self, mut on_issue: impl FnMut(ConfigIssue)) -> Self {
        use TouchParam as P;
        let c = &mut self;
        for (param, value) in [
            (P::SurfaceOffset, &mut c.surface_offset),
            (P::SideSwitchMargin, &mut c.side_switch_margin),
            (P::ResetDuration, &mut c.reset_duration),
            (P::ResetBlendDuration, &mut c.reset_blend_duration),
            (P::ResetRotationSpeed, &mut c.reset_rotation_speed),
            (P::ApproachDistance, &mut c.approach_distance),
            (P::ApproachBlendDuration, &mut c.approach_blend_duration),
            (P::ApproachDuration, &mut c.approach_duration),
            (P::ApproachRotationSpeed, &mut c.approach_rotation_speed),
            (P::RiseDistance, &mut c.rise_distance),
            (P::RiseBlendDuration, &mut c.rise_blend_duration),
            (P::RiseRotationSpeed, &mut c.rise_rotation_speed),
            (P::NormalRayLength, &mut c.normal_ray_length),
            (P::TouchDistance, &mut c.touch_distance),
            (P::TouchMinTime, &mut c.touch_min_time),
            (P::TouchDuration, &mut c.touch_duration),
            (P::MovingAwayOffset, &mut c.moving_away_offset),
            (P::JumpSpeed, &mut c.jump_speed),
            (P::ApproachWeight, &mut c.approach_weight),
            (P::ApproachRotationWeight, &mut c.approach_rotation_weight),
            (P::RiseWeight, &mut c.rise_weight),
            (P::ShoulderHeight, &mut c.shoulder_height),
            (P::WaistHeight, &mut c.waist_height),
        ] {
            let spec = param.spec();
            if !spec.accepts(*value) {
                *value = spec.default;
                on_issue(ConfigIssue { param });
            }
        }
        let d = Self::default();
        self.fix_hand_axes(&d, &mut on_issue);
        self
    }

    /// Replaces a hand's palm and finger axes that give no hand frame by their defaults.
    fn fix_hand_axes(&mut self, d: &Self, on_issue: &mut impl FnMut(ConfigIssue)) {
        let c = self;
        for (param, palm, finger, default) in [
            (
                TouchParam::PalmAxis,
                &mut c.palm_axis,
                &mut c.finger_axis,
                (d.palm_axis, d.finger_axis),
            ),
            (
                TouchParam::RightPalmAxis,
                &mut c.right_palm_axis,
                &mut c.right_finger_axis,
                (d.right_palm_axis, d.right_finger_axis),
            ),
        ] {
            if hand_frame(*palm, *finger).is_none() {
                (*palm, *finger) = default;
                on_issue(ConfigIssue { param });
            }
        }
    }

    /// Returns the first invalid field (in [`TouchConfig::sanitized`]'s order), or `None` when every
    /// value is usable.
    #[must_use]
    pub fn check(&self) -> Option<ConfigIssue> {
        let mut first = None;
        let _ = self.sanitized(|issue| {
            first.get_or_insert(issue);
        });
        first
    }

    /// Returns the configuration for a character `k` times the 1.75 m reference human: the lengths
    /// and speeds that follow the body's size (surface offset, side-switch margin, approach, rise and
    /// touch distances, normal ray length, moving-away offset, jump speed) multiplied by `k`; times,
    /// weights, angular speeds, heights and axes as they are.
    #[must_use]
    pub fn proportioned(self, k: f32) -> Self {
        Self {
            surface_offset: self.surface_offset * k,
            side_switch_margin: self.side_switch_margin * k,
            approach_distance: self.approach_distance * k,
            rise_distance: self.rise_distance * k,
            normal_ray_length: self.normal_ray_length * k,
            touch_distance: self.touch_distance * k,
            moving_away_offset: self.moving_away_offset * k,
            jump_speed: self.jump_speed * k,
            ..self
        }
    }
}

/// Returns each hand's `(palm, finger)` axes in its bone's space: `palm` / `finger` when set
/// (non-zero) for both hands, else the ones `found` in the rig (left, right).
#[must_use]
pub fn hand_axes(palm: Vec3, finger: Vec3, found: [(Vec3, Vec3); 2]) -> [(Vec3, Vec3); 2] {
    found.map(|(found_palm, found_finger)| {
        (
            if palm == Vec3::ZERO { found_palm } else { palm },
            if finger == Vec3::ZERO {
                found_finger
            } else {
                finger
            },
        )
    })
}

/// Returns the character's height (m) and its collider's centre in its own frame: `set_height`
/// when it is not 0 (with the collider's centre when there is one, else half that height up),
/// else the collider's (`from_collider`: its height and centre); `None` when the height is auto
/// (0) and there is no collider to read it from.
#[must_use]
pub fn character_size(set_height: f32, from_collider: Option<(f32, Vec3)>) -> Option<(f32, Vec3)> {
    if set_height != 0.0 {
        let centre = from_collider.map_or(Vec3::new(0.0, 0.5 * set_height, 0.0), |(_, c)| c);
        return Some((set_height, centre));
    }
    from_collider
}

/// What the setup measured on the character, in its own frame and units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurements {
    /// The height set on the node (0 = auto).
    pub set_height: f32,
    /// The humanoid's height found in the rig (m, character frame), when the rig has a head.
    pub rig_height: Option<f32>,
    /// The height and centre of the character's collider (or the set height; see
    /// [`character_size`]).
    pub body_height: f32,
    /// The collider's centre (character frame).
    pub centre: Vec3,
    /// The mean height of the two shoulder joints above the character's origin at rest.
    pub shoulder_height: f32,
    /// The character's scale in the world, per axis.
    pub world_scale: Vec3,
    /// Whether lengths and speeds follow the character's size.
    pub auto_proportions: bool,
}

/// The setup's results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The height the detection volume is sized from (character units).
    pub height: f32,
    /// The detection volume (character units and frame).
    pub volume: DetectionBox,
    /// The character's uniform scale in the world (the mean of its axes; 1 when degenerate).
    pub world_scale: f32,
    /// `k`: the character's height in the world over [`crate::rig::REFERENCE_HEIGHT`] (1 when
    /// proportions are off or the value is degenerate).
    pub proportion: f32,
    /// The shoulders' and the collider centre's heights in world metres (the core's
    /// [`TouchConfig::shoulder_height`] and [`TouchConfig::waist_height`]).
    pub shoulder_height: f32,
    /// See `shoulder_height`.
    pub waist_height: f32,
}

/// Why the setup's measurements cannot be used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CalibrationIssue {
    /// The height to size the volume from is not finite and > 0.
    BadHeight(f32),
    /// The shoulders are not above the character's origin (their height, m).
    ShouldersBelowOrigin(f32),
}

impl core::fmt::Display for CalibrationIssue {
    /// The warning for the issue, naming what to fix.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadHeight(height) => {
                write!(
                    f,
                    "character_height must be a finite height > 0 (got {height})"
                )
            }
            Self::ShouldersBelowOrigin(height) => write!(
                f,
                "the shoulder bones are not above the character's origin (height {height} m)"
            ),
        }
    }
}

/// Where each elbow bends toward, left then right, in the character's axes (x right, y up, z
/// back): out, down and a little back.
pub const ELBOW_POLES: [Vec3; 2] = [Vec3::new(-1.0, -1.0, 0.5), Vec3::new(1.0, -1.0, 0.5)];

/// Returns the detection volume, the proportion `k` and the heights the core works with, from what
/// the setup measured: the rig's own height when the height is auto and the rig has a head, else
/// the body's; every length carried into the world by the character's scale.
///
/// # Errors
///
/// A height that is not finite and > 0, or shoulders not above the origin.
pub fn calibrate(m: &Measurements) -> Result<Calibration, CalibrationIssue> {
    let height = match m.rig_height {
        Some(h) if m.set_height == 0.0 && h.is_finite() && h > 0.0 => h,
        _ => m.body_height,
    };
    let volume = detection_box(height, m.centre).ok_or(CalibrationIssue::BadHeight(height))?;
    if !(m.shoulder_height.is_finite() && m.shoulder_height > 0.0) {
        return Err(CalibrationIssue::ShouldersBelowOrigin(m.shoulder_height));
    }
    let world_scale = {
        let s = crate::rig::mean_scale(m.world_scale);
        if s.is_finite() && s > 1e-9 {
            s
        } else {
            1.0
        }
    };
    let proportion = if m.auto_proportions {
        crate::rig::world_proportion(height, world_scale)
    } else {
        1.0
    };
    Ok(Calibration {
        height,
        volume,
        world_scale,
        proportion,
        shoulder_height: m.shoulder_height * world_scale,
        waist_height: m.centre.y.max(0.01) * world_scale,
    })
}

/// Returns the rotation taking the frame (X = `primary`, Y = `secondary` made perpendicular, Z = X × Y)
/// from the identity, or `None` when a vector is zero, non-finite or they are parallel (within
/// 10⁻⁴ rad). Any finite non-zero lengths count (a 10⁻²² axis is an axis): both are normalised by
/// [`unit_vec3`] first, and the rotation is taken by [`rotation_of_axes`], which never asserts.
pub(crate) fn hand_frame(primary: Vec3, secondary: Vec3) -> Option<Quat> {
    let x = unit_vec3(primary)?;
    let s = unit_vec3(secondary)?;
    let across = s - x * x.dot(s);
    if across.length_squared() < 1e-8 {
        return None;
    }
    let y = unit_vec3(across)?;
    let z = unit_vec3(x.cross(y))?;
    Some(rotation_of_axes(x, y, z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_reports_every_bad_value_in_order_and_uses_defaults() {
        let mut seen = Vec::new();
        let bad = TouchConfig {
            jump_speed: f32::NAN,
            surface_offset: -1.0,
            rise_weight: 2.0,
            waist_height: 0.0,
            palm_axis: Vec3::ZERO,
            ..TouchConfig::default()
        };
        let fixed = bad.sanitized(|issue| seen.push(issue.param));
        assert_eq!(
            seen,
            [
                TouchParam::SurfaceOffset,
                TouchParam::JumpSpeed,
                TouchParam::RiseWeight,
                TouchParam::WaistHeight,
                TouchParam::PalmAxis,
            ]
        );
        assert_eq!(fixed, TouchConfig::default());
        assert_eq!(bad.check().unwrap().param, TouchParam::SurfaceOffset);
        assert_eq!(
            bad.check().unwrap().param.accepted(),
            "a finite value >= 0 m"
        );
        assert_eq!(TouchParam::RiseWeight.accepted(), "0 to 1");
        assert_eq!(TouchParam::RightPalmAxis.name(), "right_palm_axis");
    }

    #[test]
    fn proportioned_scales_only_lengths_and_speeds() {
        let c = TouchConfig::default().proportioned(2.0);
        let d = TouchConfig::default();
        assert_eq!(c.surface_offset, 2.0 * d.surface_offset);
        assert_eq!(c.jump_speed, 2.0 * d.jump_speed);
        assert_eq!(c.normal_ray_length, 2.0 * d.normal_ray_length);
        assert_eq!(c.touch_duration, d.touch_duration);
        assert_eq!(c.rise_rotation_speed, d.rise_rotation_speed);
        assert_eq!(c.shoulder_height, d.shoulder_height);
        assert_eq!(TouchConfig::default().proportioned(1.0), d);
    }

    #[test]
    fn set_axes_win_over_found_ones() {
        let found = [(Vec3::X, Vec3::Y), (Vec3::NEG_X, Vec3::NEG_Y)];
        assert_eq!(hand_axes(Vec3::ZERO, Vec3::ZERO, found), found);
        let both = hand_axes(Vec3::Z, Vec3::ZERO, found);
        assert_eq!(both, [(Vec3::Z, Vec3::Y), (Vec3::Z, Vec3::NEG_Y)]);
    }

    #[test]
    fn character_size_prefers_the_set_height() {
        let collider = Some((1.8, Vec3::new(0.0, 0.9, 0.0)));
        assert_eq!(character_size(0.0, collider), collider);
        assert_eq!(character_size(0.0, None), None);
        assert_eq!(
            character_size(2.0, collider),
            Some((2.0, Vec3::new(0.0, 0.9, 0.0)))
        );
        assert_eq!(
            character_size(2.0, None),
            Some((2.0, Vec3::new(0.0, 1.0, 0.0)))
        );
    }

    fn measurements() -> Measurements {
        Measurements {
            set_height: 0.0,
            rig_height: Some(1.75),
            body_height: 1.8,
            centre: Vec3::new(0.0, 0.9, 0.0),
            shoulder_height: 1.45,
            world_scale: Vec3::ONE,
            auto_proportions: true,
        }
    }

    #[test]
    fn calibrate_takes_the_rig_height_and_the_world_scale() {
        let c = calibrate(&measurements()).unwrap();
        assert_eq!(c.height, 1.75);
        assert_eq!(
            c.volume,
            detection_box(1.75, Vec3::new(0.0, 0.9, 0.0)).unwrap()
        );
        assert!((c.proportion - 1.0).abs() < 1e-6);
        assert_eq!((c.shoulder_height, c.waist_height), (1.45, 0.9));
        // A character scaled 0.01 in the world: metres in the world, k follows.
        let small = calibrate(&Measurements {
            world_scale: Vec3::splat(0.01),
            ..measurements()
        })
        .unwrap();
        assert!((small.proportion - 0.01).abs() < 1e-6);
        assert!((small.shoulder_height - 0.0145).abs() < 1e-7);
        // A set height, or a rig without a head, uses the body's height.
        let set = calibrate(&Measurements {
            set_height: 1.8,
            ..measurements()
        })
        .unwrap();
        assert_eq!(set.height, 1.8);
        let headless = calibrate(&Measurements {
            rig_height: None,
            auto_proportions: false,
            ..measurements()
        })
        .unwrap();
        assert_eq!((headless.height, headless.proportion), (1.8, 1.0));
        // Degenerate scale counts as 1; waist at least 1 cm.
        let flat = calibrate(&Measurements {
            world_scale: Vec3::ZERO,
            centre: Vec3::ZERO,
            ..measurements()
        })
        .unwrap();
        assert_eq!((flat.world_scale, flat.waist_height), (1.0, 0.01));
    }

    #[test]
    fn calibrate_names_what_is_unusable() {
        let bad = Measurements {
            rig_height: None,
            body_height: f32::NAN,
            ..measurements()
        };
        assert!(matches!(calibrate(&bad), Err(CalibrationIssue::BadHeight(h)) if h.is_nan()));
        let low = Measurements {
            shoulder_height: -0.1,
            ..measurements()
        };
        assert_eq!(
            calibrate(&low),
            Err(CalibrationIssue::ShouldersBelowOrigin(-0.1))
        );
    }

    #[test]
    fn calibration_issues_say_what_to_fix() {
        assert_eq!(
            CalibrationIssue::BadHeight(f32::NAN).to_string(),
            "character_height must be a finite height > 0 (got NaN)"
        );
        assert_eq!(
            CalibrationIssue::ShouldersBelowOrigin(-0.5).to_string(),
            "the shoulder bones are not above the character's origin (height -0.5 m)"
        );
        // The elbows bend outward, each on its own side, and down.
        assert!(ELBOW_POLES[0].x < 0.0 && ELBOW_POLES[1].x > 0.0);
        assert!(ELBOW_POLES.iter().all(|p| p.y < 0.0));
    }

    #[test]
    fn a_config_issue_names_the_property_and_what_it_accepts() {
        let mut issue = None;
        let bad = TouchConfig {
            rise_weight: 3.0,
            ..TouchConfig::default()
        };
        let _ = bad.sanitized(|i| issue = issue.or(Some(i)));
        let issue = issue.expect("a weight of 3 is corrected");
        let msg = issue.to_string();
        assert!(
            msg.starts_with(&format!("property '{}' must be ", issue.param.name())),
            "{msg}"
        );
        assert!(
            msg.contains(&issue.param.accepted())
                && msg.ends_with("; its default is used instead.")
        );
    }
}
