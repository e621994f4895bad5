//! One character's holding hand, worked out once from its rig (where its elbow bends, how it
//! grips), and each frame's [`HandInput`] for the contact solver from the hand's animated pose.

use glam::{Affine3A, EulerRot, Quat, Vec3};

use super::contact::{palm_to_palm, HandInput, HandShape};
use crate::kit::{rotation_of_axes, Pose};
use crate::rig::{mean_scale, HandSize, Humanoid, Side, REFERENCE_ARM};

/// The farthest a contact offset may move a hand's contact point from the hand (m): a longer one
/// is taken for a set-up mistake.
pub const MAX_CONTACT_OFFSET: f32 = 2.0;

/// Returns a hand's contact offset (m) and its contact rotation from Euler angles in degrees (YXZ
/// order, as Godot's inspector shows a rotation), or `None` when they are unusable: not finite, or
/// an offset longer than [`MAX_CONTACT_OFFSET`]. Each angle is wrapped to one turn first, so a huge
/// angle keeps its precision.
#[must_use]
pub fn contact_frame(offset: Vec3, rotation_deg: Vec3) -> Option<(Vec3, Quat)> {
    let usable =
        offset.is_finite() && offset.length() <= MAX_CONTACT_OFFSET && rotation_deg.is_finite();
    if !usable {
        return None;
    }
    let r = (rotation_deg % 360.0) * (std::f32::consts::PI / 180.0);
    Some((offset, Quat::from_euler(EulerRot::YXZ, r.y, r.x, r.z)))
}

/// How a hand sits on the shared contact this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Contact {
    /// Palm to palm ([`palm_to_palm`]): the initiator's hand in front with its palm facing back
    /// (`palm_back`), the recipient's behind facing forward.
    Grip {
        /// Whether this is the initiator's hand.
        palm_back: bool,
    },
    /// The offset (m) and rotation the user set (see [`contact_frame`]).
    Set {
        /// From the shared contact to this hand's contact point, in the contact's frame.
        offset: Vec3,
        /// The hand's rotation in the contact's frame.
        rotation: Quat,
    },
}

/// One character's holding hand as the pair needs it, found once from its rig, in the skeleton's
/// space and units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldingHand {
    /// The direction from the shoulder the elbow bends toward (skeleton space): out to the hand's
    /// side, down and a little back, so an elbow never folds into the body.
    pub elbow_pole: Vec3,
    /// Out of the palm, in the hand bone's own space (unit for a rig whose palm was found).
    pub palm: Vec3,
    /// From the wrist toward the fingers, in the hand bone's own space.
    pub finger: Vec3,
    /// The hand's size (skeleton units).
    pub size: HandSize,
    /// The body's right, up and back (skeleton space).
    axes: [Vec3; 3],
}

impl HoldingHand {
    /// Works out the `side` hand of `humanoid` from the hand bone's rest pose in the skeleton's
    /// space and the hips' rest position (the body's centre; `None`: the skeleton's origin).
    #[must_use]
    pub fn new(humanoid: &Humanoid, side: Side, hand_rest: Pose, hips: Option<Vec3>) -> Self {
        // The elbow goes out on the side the hand is on, in the body's axes (x right, y up, z back).
        let centre = hips.unwrap_or(Vec3::ZERO);
        let out = if humanoid.right.dot(hand_rest.position - centre) < 0.0 {
            -0.5
        } else {
            0.5
        };
        let to_hand = hand_rest.rotation.conjugate();
        let s = side as usize;
        Self {
            elbow_pole: humanoid.to_skeleton(Vec3::new(out, -1.0, 0.3)),
            palm: to_hand * humanoid.palm[s],
            finger: to_hand * humanoid.finger[s],
            size: humanoid.hand_size(side),
            axes: [humanoid.right, humanoid.up, -humanoid.forward],
        }
    }

    /// The body's right, up and back in the skeleton's space (the pair's frame once turned into the
    /// world).
    #[must_use]
    pub fn body_axes(&self) -> [Vec3; 3] {
        self.axes
    }

    /// The hand's shape with its lengths multiplied by `scale` (into the world).
    #[must_use]
    pub fn shape(&self, scale: f32) -> HandShape {
        HandShape {
            palm: self.palm,
            finger: self.finger,
            length: self.size.length * scale,
            thickness: self.size.thickness * scale,
        }
    }

    /// Returns how far the hand reaches in the world (m): the arm chain's length in the skeleton's
    /// units times the skeleton's world scale (the mean of its axes), less `margin` (m, for an arm
    /// of [`REFERENCE_ARM`]) in proportion to the arm.
    #[must_use]
    pub fn reach(chain_length: f32, world_scale: Vec3, margin: f32) -> f32 {
        let arm = chain_length * mean_scale(world_scale);
        arm - margin * arm / REFERENCE_ARM
    }

    /// Returns this frame's input for the contact solver: `hand` the hand bone's animated pose in
    /// the world (with the skeleton's scale), `upper` the shoulder joint in the world, `reach` from
    /// [`Self::reach`] and `world_scale` the skeleton's mean world scale. `None` when the arm cannot
    /// reach (`reach ≤ 0`) or the grip's hand is degenerate.
    #[must_use]
    pub fn input(
        &self,
        hand: Affine3A,
        upper: Vec3,
        reach: f32,
        world_scale: f32,
        contact: Contact,
    ) -> Option<HandInput> {
        if reach.is_nan() || reach <= 0.0 {
            return None;
        }
        let rotation = rotation_of_axes(
            hand.matrix3.x_axis.into(),
            hand.matrix3.y_axis.into(),
            hand.matrix3.z_axis.into(),
        );
        let at = Vec3::from(hand.translation);
        let (contact, offset, rotation_in_frame) = match contact {
            Contact::Grip { palm_back } => {
                // The hand's animated grip point is its preferred contact.
                let (offset, turn) = palm_to_palm(&self.shape(world_scale), palm_back)?;
                let grip_at = hand.transform_point3(self.shape(1.0).grip_point()?);
                (Pose::new(grip_at, rotation), offset, turn)
            }
            Contact::Set {
                offset,
                rotation: r,
            } => (Pose::new(at, rotation), offset, r),
        };
        Some(HandInput {
            contact,
            upper_arm: upper,
            reach,
            offset,
            rotation: rotation_in_frame,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn humanoid() -> Humanoid {
        // A T-posed pair of arms on a 1.75 m body: hips at 1 m, hands 0.75 m out on each side.
        let names = [
            "Hips",
            "Spine",
            "Chest",
            "Neck",
            "Head",
            "LeftUpperArm",
            "LeftLowerArm",
            "LeftHand",
            "RightUpperArm",
            "RightLowerArm",
            "RightHand",
            "LeftUpperLeg",
            "LeftLowerLeg",
            "LeftFoot",
            "LeftToes",
            "RightUpperLeg",
            "RightLowerLeg",
            "RightFoot",
            "RightToes",
        ];
        let parents = [
            -1, 0, 1, 2, 3, 2, 5, 6, 2, 8, 9, 0, 11, 12, 13, 0, 15, 16, 17,
        ];
        // Local offsets from each bone's parent, turned into the skeleton-space rests `derive`
        // takes.
        let local = [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 0.1, 0.0),
            Vec3::new(0.0, 0.2, 0.0),
            Vec3::new(0.0, 0.2, 0.0),
            Vec3::new(0.0, 0.1, 0.0),
            Vec3::new(0.2, 0.1, 0.0),
            Vec3::new(0.27, 0.0, 0.0),
            Vec3::new(0.27, 0.0, 0.0),
            Vec3::new(-0.2, 0.1, 0.0),
            Vec3::new(-0.27, 0.0, 0.0),
            Vec3::new(-0.27, 0.0, 0.0),
            Vec3::new(0.1, -0.05, 0.0),
            Vec3::new(0.0, -0.45, 0.0),
            Vec3::new(0.0, -0.45, 0.0),
            Vec3::new(0.0, -0.05, -0.1),
            Vec3::new(-0.1, -0.05, 0.0),
            Vec3::new(0.0, -0.45, 0.0),
            Vec3::new(0.0, -0.45, 0.0),
            Vec3::new(0.0, -0.05, -0.1),
        ];
        let mut rest = [(Vec3::ZERO, Quat::IDENTITY); 19];
        for (i, offset) in local.iter().enumerate() {
            let parent = usize::try_from(parents[i]).map_or(Vec3::ZERO, |p| rest[p].0);
            rest[i].0 = parent + *offset;
        }
        Humanoid::derive(&names, &parents, &rest)
    }

    #[test]
    fn a_contact_frame_is_refused_when_not_finite_or_farther_than_two_metres() {
        let ok = contact_frame(Vec3::new(0.0, 0.0, 1.9), Vec3::ZERO);
        assert_eq!(ok, Some((Vec3::new(0.0, 0.0, 1.9), Quat::IDENTITY)));
        assert_eq!(contact_frame(Vec3::new(0.0, 2.1, 0.0), Vec3::ZERO), None);
        assert_eq!(
            contact_frame(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ZERO),
            None
        );
        assert_eq!(
            contact_frame(Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0)),
            None
        );
    }

    #[test]
    fn contact_rotations_turn_y_then_x_then_z_and_wrap_whole_turns() {
        let deg = std::f32::consts::PI / 180.0;
        let (_, q) = contact_frame(Vec3::ZERO, Vec3::new(30.0, 45.0, 60.0)).unwrap();
        // Godot's YXZ order: the basis is Ry · Rx · Rz.
        let expected = Quat::from_rotation_y(45.0 * deg)
            * Quat::from_rotation_x(30.0 * deg)
            * Quat::from_rotation_z(60.0 * deg);
        assert!(q.dot(expected).abs() > 1.0 - 1e-6, "{q} {expected}");
        let (_, wrapped) =
            contact_frame(Vec3::ZERO, Vec3::new(30.0 + 3600.0, 45.0 - 7200.0, 60.0)).unwrap();
        assert!(
            wrapped.angle_between(expected) < 1e-4,
            "{wrapped} {expected}"
        );
    }

    /// Returns the `side` holding hand of `h` whose hand bone rests `x` m along X at 1.5 m high,
    /// not turned (arms straight out), with the hips at `hips` (`None`: the skeleton's origin).
    fn level_hand(h: &Humanoid, side: Side, x: f32, hips: Option<Vec3>) -> HoldingHand {
        HoldingHand::new(
            h,
            side,
            Pose::new(Vec3::new(x, 1.5, 0.0), Quat::IDENTITY),
            hips,
        )
    }

    #[test]
    fn the_elbow_bends_out_on_the_hands_side_down_and_back() {
        let h = humanoid();
        let left = level_hand(&h, Side::Left, 0.74, Some(Vec3::new(0.0, 1.0, 0.0)));
        let right = level_hand(&h, Side::Right, -0.74, Some(Vec3::new(0.0, 1.0, 0.0)));
        for (hand, side) in [(left, 1.0), (right, -1.0)] {
            let p = hand.elbow_pole;
            // Out toward the hand (its x sign), down, and toward the body's back.
            assert!(p.x * side > 0.0, "{p}");
            assert!(p.y < 0.0, "{p}");
            assert!(p.dot(-h.forward) > 0.0, "{p}");
        }
        assert_eq!(left.body_axes(), [h.right, h.up, -h.forward]);
    }

    #[test]
    fn reach_is_the_scaled_arm_less_a_margin_in_proportion() {
        // A 0.54 m arm at world scale 2: 1.08 m, less a 0.05 m margin doubled.
        let r = HoldingHand::reach(REFERENCE_ARM, Vec3::splat(2.0), 0.05);
        assert!((r - (1.08 - 0.1)).abs() < 1e-6, "{r}");
        // A mirrored axis counts by its size.
        let m = HoldingHand::reach(REFERENCE_ARM, Vec3::new(-2.0, 2.0, 2.0), 0.05);
        assert!((m - r).abs() < 1e-6, "{m}");
    }

    #[test]
    fn a_set_contact_uses_the_hands_pose_and_a_grip_its_palm() {
        let h = humanoid();
        let hand = level_hand(&h, Side::Left, 0.74, None);
        let pose = Affine3A::from_rotation_translation(
            Quat::from_rotation_y(0.5),
            Vec3::new(1.0, 1.2, 0.0),
        );
        let set = Contact::Set {
            offset: Vec3::X * 0.1,
            rotation: Quat::from_rotation_z(0.2),
        };
        let input = hand
            .input(pose, Vec3::new(0.5, 1.4, 0.0), 0.6, 1.0, set)
            .unwrap();
        assert_eq!(input.contact.position, Vec3::new(1.0, 1.2, 0.0));
        let turned = input.contact.rotation.dot(Quat::from_rotation_y(0.5));
        assert!(turned.abs() > 1.0 - 1e-6, "{turned}");
        assert_eq!(
            (input.offset, input.rotation),
            (Vec3::X * 0.1, Quat::from_rotation_z(0.2))
        );
        assert_eq!(
            (input.upper_arm, input.reach),
            (Vec3::new(0.5, 1.4, 0.0), 0.6)
        );
        // The grip's contact is the palm's grip point, carried by the hand's pose.
        let grip = hand
            .input(
                pose,
                Vec3::ZERO,
                0.6,
                1.0,
                Contact::Grip { palm_back: true },
            )
            .unwrap();
        let expected = pose.transform_point3(hand.shape(1.0).grip_point().unwrap());
        assert!(grip.contact.position.distance(expected) < 1e-6);
        assert_eq!(
            Some((grip.offset, grip.rotation)),
            palm_to_palm(&hand.shape(1.0), true)
        );
        // An arm that cannot reach gives no input.
        assert_eq!(hand.input(pose, Vec3::ZERO, 0.0, 1.0, set), None);
        assert_eq!(hand.input(pose, Vec3::ZERO, f32::NAN, 1.0, set), None);
    }
}
