//! The soldier's rig: its head, neck, chest and saluting arm found once per skeleton (named bones
//! or the humanoid's), with the rest-pose data the look and the salute need.

use entwine_core::formation::bearing::{rotate_vec, salute_hand, BodyFrame};
use entwine_core::rig::{Humanoid, Role as RigRole, Side};
use glam::{Quat, Vec3};
use godot::classes::Skeleton3D;
use godot::prelude::*;

use super::{SoldierBearing, WARN_HEAD};
use crate::bones::{arm_chain, is_ancestor};
use crate::convert::vec3;
use crate::direct::Lent;
use crate::limb_ik::LimbIK;
use crate::rig;

/// Bones and rest-pose data resolved once per skeleton.
#[derive(Clone, Copy)]
pub(super) struct Rig {
    pub(super) head: i32,
    pub(super) neck: i32,
    pub(super) chest: i32,
    /// Parents of `[chest, neck, head]` (−1 for a missing bone or a root).
    pub(super) parents: [i32; 3],
    /// Whether chest, neck and head (those present) each descend from the one before.
    pub(super) in_order: bool,
    pub(super) frame: BodyFrame,
    /// The head's forward in its own (bone) frame.
    pub(super) head_forward: Vec3,
    /// The hand bone's salute pose in the head's frame (rotation; position is the offset).
    pub(super) hand_in_head: Option<(Quat, Vec3)>,
}

impl SoldierBearing {
    /// Returns the rig for `skeleton`, resolving it (and warning once) when the skeleton changed.
    pub(super) fn resolve(&mut self, lent: &Lent<Skeleton3D>) -> Option<Rig> {
        let key = lent.rig_key();
        if self.resolved_for == Some(key) {
            return self.rig;
        }
        self.resolved_for = Some(key);
        let skeleton = lent.object();
        self.rig = None;
        let humanoid = rig::humanoid(skeleton);
        let find = |property: &str, name: &GString, role: RigRole| {
            rig::pick(skeleton, property, name, role, &humanoid)
        };
        let head = match find("head_bone", &self.head_bone, RigRole::Head) {
            Ok(head) => head,
            Err(why) => {
                let msg = format!("{why}; the bearing leaves the pose alone");
                self.warn_once(WARN_HEAD, &msg);
                return None;
            }
        };
        let Some(frame) = self.body_frame(&humanoid) else {
            // Warned about where it was set (see `set_body_forward`).
            self.body_forward = Vector3::new(0.0, 0.0, -1.0);
            self.resolved_for = None;
            return self.resolve(lent);
        };
        let head_rest = skeleton.get_bone_global_rest(head);
        let head_rest_rot = rotation_of(head_rest.basis);
        let head_forward = rotate_vec(head_rest_rot.conjugate(), frame.forward);
        let hand = find("hand_bone", &self.hand_bone, RigRole::RightHand).unwrap_or(-1);
        self.retarget_salute_ik(skeleton, &humanoid);
        let hand_in_head = (hand >= 0)
            .then(|| self.salute_in_head(skeleton, hand, &frame, head_rest_rot, &humanoid));
        let (neck, chest) = (
            find("neck_bone", &self.neck_bone, RigRole::Neck).unwrap_or(-1),
            find("chest_bone", &self.chest_bone, RigRole::Chest).unwrap_or(-1),
        );
        let present: Vec<i32> = [chest, neck, head]
            .into_iter()
            .filter(|b| *b >= 0)
            .collect();
        let in_order = present
            .windows(2)
            .all(|w| is_ancestor(skeleton, w[0], w[1]));
        let parent = |b: i32| {
            if b >= 0 {
                skeleton.get_bone_parent(b)
            } else {
                -1
            }
        };
        self.rig = Some(Rig {
            head,
            neck,
            chest,
            parents: [parent(chest), parent(neck), parent(head)],
            in_order,
            frame,
            head_forward,
            hand_in_head,
        });
        self.rig
    }

    /// The body's forward and up in the skeleton: the set body forward, else the rig's.
    fn body_frame(&self, humanoid: &Humanoid) -> Option<BodyFrame> {
        let forward = if self.body_forward == Vector3::ZERO {
            humanoid.forward
        } else {
            vec3(self.body_forward)
        };
        let up = if self.body_forward == Vector3::ZERO {
            humanoid.up
        } else {
            Vec3::Y
        };
        BodyFrame::new(forward, up)
    }

    /// Points the LimbIK made for the salute at the arm of the hand bone the bearing uses.
    fn retarget_salute_ik(&self, skeleton: &Gd<Skeleton3D>, humanoid: &Humanoid) {
        if let Some(mut ik) = self
            .own_ik
            .and_then(|id| Gd::<LimbIK>::try_from_instance_id(id).ok())
        {
            // The LimbIK made for the salute follows the hand bone the bearing uses.
            let [upper, lower, hand] = salute_arm(skeleton, &self.hand_bone, humanoid);
            let mut b = ik.bind_mut();
            if b.get_resolved_bones().get(2) != Some(hand.clone()) {
                b.set_upper_bone(upper);
                b.set_lower_bone(lower);
                b.set_end_bone(hand);
            }
        }
    }

    /// The saluting hand's pose in the head's frame, from the rest pose and the set offset.
    fn salute_in_head(
        &self,
        skeleton: &Gd<Skeleton3D>,
        hand: i32,
        frame: &BodyFrame,
        head_rest_rot: Quat,
        humanoid: &Humanoid,
    ) -> (Quat, Vec3) {
        let hand_rest = skeleton.get_bone_global_rest(hand);
        let parent = skeleton.get_bone_parent(hand);
        // The hand points along the forearm at rest; its palm faces the body (inward).
        let fingers = (parent >= 0)
            .then(|| vec3(hand_rest.origin - skeleton.get_bone_global_rest(parent).origin));
        // Given for a 1.75 m human: scaled with the rig's height in the skeleton's units.
        // Warned about where it was set.
        salute_hand(
            frame,
            head_rest_rot,
            rotation_of(hand_rest.basis),
            fingers,
            vec3(self.salute_hand_offset),
            humanoid.scale(),
        )
    }
}

/// Returns the `[upper, lower, hand]` names of the saluting arm: for a named hand its grandparent
/// and parent, for an empty name the humanoid's right arm (Godot's names when nothing is found, so
/// the [EntwineLimbIK] warns about them).
pub(super) fn salute_arm(
    skeleton: &Gd<Skeleton3D>,
    hand: &GString,
    humanoid: &Humanoid,
) -> [GString; 3] {
    let fallback = RigRole::arm(Side::Right).map(|r| GString::from(r.godot_name()));
    match arm_chain(skeleton, hand, Side::Right, humanoid) {
        Some(chain) => chain.map(|b| skeleton.get_bone_name(b)),
        None if hand.is_empty() => fallback,
        None => [fallback[0].clone(), fallback[1].clone(), hand.clone()],
    }
}

/// Returns the rotation of a basis (scale removed) as a core quaternion.
pub(super) fn rotation_of(basis: Basis) -> Quat {
    let q = crate::convert::rotation(basis);
    glam::Vec4::from(q)
        .try_normalize()
        .map_or(Quat::IDENTITY, Quat::from_vec4)
}
