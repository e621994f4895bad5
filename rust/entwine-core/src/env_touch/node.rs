//! What the env-touch node's glue asks of the core besides the machine: why a setup cannot be
//! used (and the warning that says so), the arm bone lists, the debug drawing's lines and colours,
//! and the node's cost profile.

use glam::{Affine3A, Vec3};

use super::{CalibrationIssue, EnvTouch, Side};
use crate::kit::{draw, rotation_of_axes, Pose};
use crate::rig::{Humanoid, Role};

/// Why the node's setup cannot be used; its text is the warning, naming what to fix.
#[derive(Clone, Debug, PartialEq)]
pub enum SetupIssue {
    /// `character_node` (the path given) is not a Node3D.
    NoCharacter(String),
    /// No Skeleton3D under the character (its name) and no `skeleton_node`.
    NoSkeleton(String),
    /// `skeleton_node` (the path given) is not a Skeleton3D.
    NotASkeleton(String),
    /// An arm's bone list (the property) names neither 0 nor 3 bones (how many it names).
    ArmBoneCount(&'static str, usize),
    /// An arm's bone (the property) was not found: why.
    Bone(&'static str, String),
    /// `interactable_mask` is 0.
    EmptyMask,
    /// The height is auto but the character (its name) has no collider to read it from.
    NoHeight(String),
    /// The measurements cannot be used.
    Calibration(CalibrationIssue),
}

impl core::fmt::Display for SetupIssue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoCharacter(path) => {
                write!(f, "character_node '{path}' does not point at a Node3D")
            }
            Self::NoSkeleton(name) => write!(
                f,
                "no Skeleton3D under the character '{name}' (set skeleton_node)"
            ),
            Self::NotASkeleton(path) => {
                write!(f, "skeleton_node '{path}' does not point at a Skeleton3D")
            }
            Self::ArmBoneCount(property, n) => write!(
                f,
                "{property} must list 3 bones (upper arm, forearm, hand) or none, got {n}"
            ),
            Self::Bone(property, why) => write!(f, "{property}: {why}"),
            Self::EmptyMask => write!(
                f,
                "interactable_mask is 0, so no physics layer is interactable (select at least one layer)"
            ),
            Self::NoHeight(name) => write!(
                f,
                "character_height is 0 (auto) but the character '{name}' has no capsule, cylinder or box CollisionShape3D to read it from (set character_height)"
            ),
            Self::Calibration(issue) => issue.fmt(f),
        }
    }
}

impl SetupIssue {
    /// The warning the node prints for the issue: what is wrong, and that it stays idle.
    #[must_use]
    pub fn warning(&self) -> String {
        format!("{self}; the node stays idle until this is fixed.")
    }
}

/// The rig at rest as the setup reads it once ("locked"), in the character's frame and units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RestRig {
    /// The humanoid's height carried into the character's frame, when the rig has a head (a
    /// model on a body whose collider is another size keeps its own proportions).
    pub rig_height: Option<f32>,
    /// The shoulder joints (the upper arms' origins), left and right.
    pub shoulders: [Vec3; 2],
    /// Their mean height above the character's origin.
    pub shoulder_height: f32,
    /// The hand bones' rest poses (scale dropped).
    pub hands: [Pose; 2],
    /// Each hand's (palm, finger) axes in its own bone's space, from the humanoid.
    pub hand_axes: [(Vec3, Vec3); 2],
}

impl RestRig {
    /// Reads the rig at rest: `to_character` carries the skeleton's space into the character's
    /// frame, `upper_arms` and `hands` are those bones' rest transforms in the skeleton's space
    /// (left, right).
    #[must_use]
    pub fn new(
        humanoid: &Humanoid,
        to_character: Affine3A,
        upper_arms: [Affine3A; 2],
        hands: [Affine3A; 2],
    ) -> Self {
        let rig_height = humanoid
            .bone(Role::Head)
            .map(|_| humanoid.height * to_character.transform_vector3(humanoid.up).length());
        let shoulders = upper_arms.map(|a| to_character.transform_point3(a.translation.into()));
        let pose_of = |a: Affine3A| {
            let rotation = rotation_of_axes(
                a.matrix3.x_axis.into(),
                a.matrix3.y_axis.into(),
                a.matrix3.z_axis.into(),
            );
            Pose::new(a.translation.into(), rotation)
        };
        let hand_axes = [0, 1].map(|s| {
            let q = pose_of(hands[s]).rotation.conjugate();
            (q * humanoid.palm[s], q * humanoid.finger[s])
        });
        Self {
            rig_height,
            shoulders,
            shoulder_height: 0.5 * (shoulders[0].y + shoulders[1].y),
            hands: hands.map(|h| pose_of(to_character * h)),
            hand_axes,
        }
    }

    /// The hands' rest poses as the machine's rest targets: positions in world metres (times the
    /// character's uniform scale in the world, [`super::Calibration::world_scale`]).
    #[must_use]
    pub fn rest_targets(&self, world_scale: f32) -> [Pose; 2] {
        self.hands
            .map(|p| Pose::new(p.position * world_scale, p.rotation))
    }
}

/// The shoulders in the character's frame when last read from the skeleton, so that a frame
/// which skips the skeleton read (while the machine needs no world) carries them with the
/// character.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShoulderMemory {
    local: [Vec3; 2],
}

impl ShoulderMemory {
    /// Remembers shoulders found in the character's frame (at rest, by the setup).
    #[must_use]
    pub const fn new(local: [Vec3; 2]) -> Self {
        Self { local }
    }

    /// Remembers the shoulders read this frame (`world`) relative to the `character`'s transform
    /// in the world, and returns them.
    pub fn read(&mut self, character: Affine3A, world: [Vec3; 2]) -> [Vec3; 2] {
        let to_character = crate::kit::affine_inverse(character);
        self.local = world.map(|w| to_character.transform_point3(w));
        world
    }

    /// Returns the remembered shoulders carried by the `character`'s transform into the world.
    #[must_use]
    pub fn carried(&self, character: Affine3A) -> [Vec3; 2] {
        self.local.map(|l| character.transform_point3(l))
    }
}

/// Returns where the detection query is placed in the world: at the volume's centre (`centre`,
/// character frame) carried by the `character`'s transform, turned as the character (its scale
/// dropped: physics queries take none, the box is sized in the world instead).
#[must_use]
pub fn query_placement(character: Affine3A, centre: Vec3) -> Pose {
    let rotation = rotation_of_axes(
        character.matrix3.x_axis.into(),
        character.matrix3.y_axis.into(),
        character.matrix3.z_axis.into(),
    );
    Pose::new(character.transform_point3(centre), rotation)
}

/// The bone-list properties, left arm then right.
pub const ARM_PROPERTIES: [&str; 2] = ["left_arm_bones", "right_arm_bones"];

/// Returns an arm's three bone names (upper arm, forearm, hand) from its property's list
/// (`property`: see [`ARM_PROPERTIES`]): three empty names (each taken from the humanoid) for an
/// empty list.
///
/// # Errors
///
/// A list of neither 0 nor 3 names.
pub fn arm_bones<'a, S: AsRef<str>>(
    names: &'a [S],
    property: &'static str,
) -> Result<[&'a str; 3], SetupIssue> {
    match names {
        [] => Ok(["", "", ""]),
        [a, b, c] => Ok([a.as_ref(), b.as_ref(), c.as_ref()]),
        _ => Err(SetupIssue::ArmBoneCount(property, names.len())),
    }
}

/// Returns the node's `interactable_mask` when it selects a layer.
///
/// # Errors
///
/// [`SetupIssue::EmptyMask`] for 0.
pub fn check_mask(mask: u32) -> Result<u32, SetupIssue> {
    if mask == 0 {
        Err(SetupIssue::EmptyMask)
    } else {
        Ok(mask)
    }
}

/// The warning for a collider (called `name`) with a shape of the class `kind`, which has no
/// closest-point query.
#[must_use]
pub fn unsupported_shape(name: &str, kind: &str) -> String {
    format!("'{name}' has a {kind}, which has no closest-point query; that shape is ignored.")
}

/// The warning for a collider (called `name`) with no usable shape.
#[must_use]
pub fn no_usable_shape(name: &str) -> String {
    format!("'{name}' has no usable collision shape (box, sphere, capsule, cylinder, convex, concave or world boundary); it is ignored.")
}

/// The debug drawing's colours (RGB): the detection volume, the tracked contact, each hand.
pub const VOLUME_COLOUR: [f32; 3] = [1.0, 0.85, 0.2];
/// See [`VOLUME_COLOUR`].
pub const CONTACT_COLOUR: [f32; 3] = [1.0, 0.1, 0.1];
/// See [`VOLUME_COLOUR`]: left, right.
pub const HAND_COLOURS: [[f32; 3]; 2] = [[0.1, 1.0, 0.2], [0.2, 0.5, 1.0]];

/// Calls `line(colour, a, b)` for every line of the debug drawing (world space): the detection
/// volume's edges (a cube of side `size` centred in `volume`), a star on the tracked contact, and
/// for each hand in use (position weight ≥ 0.001) a star on its target and the line to it from
/// its shoulder (`shoulders`: left, right).
pub fn debug_lines(
    touch: &EnvTouch,
    volume: Affine3A,
    size: f32,
    shoulders: [Vec3; 2],
    mut line: impl FnMut([f32; 3], Vec3, Vec3),
) {
    for (a, b) in draw::cube_edges(volume, size) {
        line(VOLUME_COLOUR, a, b);
    }
    if let Some(p) = touch.closest_point() {
        for (a, b) in draw::star(p, 0.06) {
            line(CONTACT_COLOUR, a, b);
        }
    }
    for side in [Side::Left, Side::Right] {
        let hand = touch.hand(side);
        if hand.position_weight < 1e-3 {
            continue;
        }
        let colour = HAND_COLOURS[side.index()];
        for (a, b) in draw::star(hand.pose.position, 0.04) {
            line(colour, a, b);
        }
        line(colour, shoulders[side.index()], hand.pose.position);
    }
}

/// The node's measured cost, summed over physics frames (microseconds): in physics queries, in
/// the core's logic, and the whole frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Profile {
    /// Time in the physics server's queries.
    pub query_usec: f64,
    /// Time in the state machine and the closest-point geometry.
    pub logic_usec: f64,
    /// Time in the whole physics frame.
    pub total_usec: f64,
    /// Frames measured.
    pub frames: i64,
}

/// A [`Profile`] per frame (microseconds), as `get_profile` shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerFrame {
    /// The core's logic.
    pub logic: f64,
    /// The physics queries.
    pub queries: f64,
    /// The rest: reading the engine and writing the IK.
    pub engine: f64,
    /// Frames measured.
    pub frames: i64,
}

impl Profile {
    /// Counts one frame that took `usec` in all.
    pub fn frame(&mut self, usec: f64) {
        self.total_usec += usec;
        self.frames += 1;
    }

    /// Returns the costs per frame (over at least one frame).
    #[must_use]
    pub fn per_frame(&self) -> PerFrame {
        let frames = self.frames.max(1) as f64;
        PerFrame {
            logic: self.logic_usec / frames,
            queries: self.query_usec / frames,
            engine: (self.total_usec - self.query_usec - self.logic_usec) / frames,
            frames: self.frames,
        }
    }
}

impl Side {
    /// Returns the side for a script's `SIDE_*` constant: 1 is right, anything else left.
    #[must_use]
    pub const fn from_script(side: i64) -> Self {
        if side == 1 {
            Self::Right
        } else {
            Self::Left
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env_touch::TouchConfig;
    use glam::Quat;

    #[test]
    fn setup_warnings_name_what_to_fix() {
        assert_eq!(
            SetupIssue::NoCharacter("../Hero".into()).warning(),
            "character_node '../Hero' does not point at a Node3D; the node stays idle until this is fixed."
        );
        assert_eq!(
            SetupIssue::Bone("left_arm_bones", "bone 'X' not found".into()).to_string(),
            "left_arm_bones: bone 'X' not found"
        );
        assert_eq!(
            SetupIssue::Calibration(CalibrationIssue::BadHeight(-1.0)).to_string(),
            CalibrationIssue::BadHeight(-1.0).to_string()
        );
        assert!(SetupIssue::NoHeight("Bob".into())
            .to_string()
            .contains("the character 'Bob' has no capsule"));
        assert!(SetupIssue::NoSkeleton("Bob".into())
            .to_string()
            .ends_with("(set skeleton_node)"));
    }

    #[test]
    fn the_rest_rig_is_read_in_the_characters_frame() {
        let names = ["Hips", "Head", "LeftUpperArm", "RightUpperArm"];
        let rest = [
            (Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY),
            (Vec3::new(0.0, 1.6, 0.0), Quat::IDENTITY),
            (Vec3::new(-0.2, 1.4, 0.0), Quat::IDENTITY),
            (Vec3::new(0.2, 1.4, 0.0), Quat::IDENTITY),
        ];
        let h = Humanoid::derive(&names, &[-1, 0, 0, 0], &rest);
        // The skeleton at half scale, turned half a turn about Y and 0.1 m up in the character.
        let turn = Quat::from_rotation_y(core::f32::consts::PI);
        let to_character = Affine3A::from_scale_rotation_translation(
            Vec3::splat(0.5),
            turn,
            Vec3::new(0.0, 0.1, 0.0),
        );
        let at = |p: Vec3| Affine3A::from_translation(p);
        let hand = Affine3A::from_rotation_translation(turn, Vec3::new(-0.7, 1.4, 0.0));
        let r = RestRig::new(
            &h,
            to_character,
            [at(rest[2].0), at(rest[3].0)],
            [hand, at(Vec3::new(0.7, 1.4, 0.0))],
        );
        assert!((r.rig_height.unwrap() - 0.5 * h.height).abs() < 1e-5);
        assert!((r.shoulders[0] - Vec3::new(0.1, 0.8, 0.0)).length() < 1e-5);
        assert!((r.shoulder_height - 0.8).abs() < 1e-5);
        assert!((r.hands[0].position - Vec3::new(0.35, 0.8, 0.0)).length() < 1e-5);
        assert!(
            r.hands[0].rotation.angle_between(Quat::IDENTITY) < 1e-4,
            "turned back"
        );
        assert!((r.hand_axes[0].0 - turn.conjugate() * h.palm[0]).length() < 1e-5);
        assert!((r.hand_axes[1].1 - h.finger[1]).length() < 1e-5);
        let targets = r.rest_targets(2.0);
        assert!((targets[0].position - Vec3::new(0.7, 1.6, 0.0)).length() < 1e-5);
        let headless = Humanoid::derive(&names[2..], &[-1, -1], &rest[2..]);
        let r = RestRig::new(&headless, to_character, [at(rest[2].0); 2], [hand; 2]);
        assert_eq!(r.rig_height, None);
    }

    #[test]
    fn shoulders_ride_with_the_character_between_reads() {
        let at = |x: f32, turn: f32| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(2.0),
                Quat::from_rotation_y(turn),
                Vec3::new(x, 0.0, 0.0),
            )
        };
        let mut m = ShoulderMemory::new([Vec3::new(-0.2, 1.4, 0.0), Vec3::new(0.2, 1.4, 0.0)]);
        let carried = m.carried(at(1.0, 0.0));
        assert!((carried[0] - Vec3::new(0.6, 2.8, 0.0)).length() < 1e-5);
        let world = [Vec3::new(3.0, 2.0, 0.0), Vec3::new(5.0, 2.0, 0.0)];
        assert_eq!(m.read(at(4.0, 0.0), world), world);
        // The character walks 1 m and turns half a turn: the shoulders come along.
        let moved = m.carried(at(5.0, core::f32::consts::PI));
        assert!(
            (moved[0] - Vec3::new(6.0, 2.0, 0.0)).length() < 1e-4,
            "{moved:?}"
        );
        assert!(
            (moved[1] - Vec3::new(4.0, 2.0, 0.0)).length() < 1e-4,
            "{moved:?}"
        );
        let p = query_placement(at(1.0, 0.5), Vec3::new(0.0, 0.5, -1.0));
        assert!(
            (p.position - at(1.0, 0.5).transform_point3(Vec3::new(0.0, 0.5, -1.0))).length() < 1e-5
        );
        let turn = Quat::from_rotation_y(0.5);
        assert!(
            p.rotation.dot(turn).abs() > 1.0 - 1e-6,
            "scale dropped: {:?}",
            p.rotation
        );
    }

    #[test]
    fn arm_lists_hold_three_bones_or_none() {
        assert_eq!(arm_bones::<&str>(&[], "left_arm_bones"), Ok(["", "", ""]));
        assert_eq!(
            arm_bones(&["a", "b", "c"], "left_arm_bones"),
            Ok(["a", "b", "c"])
        );
        let two = arm_bones(&["a", "b"], "right_arm_bones").unwrap_err();
        assert_eq!(
            two.to_string(),
            "right_arm_bones must list 3 bones (upper arm, forearm, hand) or none, got 2"
        );
        assert_eq!(check_mask(0), Err(SetupIssue::EmptyMask));
        assert_eq!(check_mask(5), Ok(5));
    }

    #[test]
    fn collider_warnings_name_the_collider() {
        assert_eq!(
            unsupported_shape("Wall", "HeightMapShape3D"),
            "'Wall' has a HeightMapShape3D, which has no closest-point query; that shape is ignored."
        );
        assert!(no_usable_shape("Wall").starts_with("'Wall' has no usable collision shape"));
    }

    #[test]
    fn the_debug_drawing_shows_the_volume_and_only_hands_in_use() {
        let rest = [Pose::IDENTITY; 2];
        let touch = EnvTouch::new(TouchConfig::default(), rest);
        let mut lines = Vec::new();
        let shoulders = [Vec3::new(-0.2, 1.4, 0.0), Vec3::new(0.2, 1.4, 0.0)];
        debug_lines(&touch, Affine3A::IDENTITY, 2.0, shoulders, |c, a, b| {
            lines.push((c, a, b));
        });
        assert_eq!(lines.len(), 12, "an idle node: the volume's edges only");
        assert!(lines.iter().all(|l| l.0 == VOLUME_COLOUR));
        assert!(lines
            .iter()
            .all(|(_, a, b)| a.abs().max_element() == 1.0 && b.abs().max_element() == 1.0));
    }

    #[test]
    fn the_profile_splits_a_frame_into_logic_queries_and_engine() {
        let mut p = Profile::default();
        assert_eq!(p.per_frame().frames, 0);
        assert_eq!(p.per_frame().engine, 0.0, "no frame: no division by zero");
        p.query_usec += 30.0;
        p.logic_usec += 10.0;
        p.frame(100.0);
        p.frame(60.0);
        let f = p.per_frame();
        assert_eq!(
            (f.logic, f.queries, f.engine, f.frames),
            (5.0, 15.0, 60.0, 2)
        );
        assert_eq!(Side::from_script(1), Side::Right);
        assert_eq!(Side::from_script(0), Side::Left);
        assert_eq!(Side::from_script(7), Side::Left);
    }
}
