//! Bone-chain helpers the skeleton modifiers share, over a Godot skeleton: ancestry (the core's
//! bounded walk) and whether a bone's scale is uniform.

use entwine_core::rig::skeleton::{self, Bones};
use entwine_core::rig::{Humanoid, Side};
use godot::classes::notify::Node3DNotification;
use godot::classes::Skeleton3D;
use godot::prelude::*;

use crate::convert::vec3;

/// Returns whether `ancestor` is a proper ancestor of `bone` (bounded by the bone count, so a
/// malformed skeleton cannot loop; see [`skeleton::is_ancestor`]).
pub fn is_ancestor(skeleton: &Gd<Skeleton3D>, ancestor: i32, bone: i32) -> bool {
    let count = skeleton.get_bone_count();
    skeleton::is_ancestor(|b| skeleton.get_bone_parent(b), count, ancestor, bone)
}

/// Returns the `[upper, lower, hand]` bones of the arm `hand` hangs from (its grandparent, parent
/// and itself), or for an empty name the `side` arm of `humanoid`: the core's
/// [`skeleton::arm_chain`]. `None` when one of them is missing.
pub fn arm_chain(
    skeleton: &Gd<Skeleton3D>,
    hand: &GString,
    side: Side,
    humanoid: &Humanoid,
) -> Option<[i32; 3]> {
    skeleton::arm_chain(&SkeletonBones(skeleton), &hand.to_string(), side, humanoid)
}

/// A Godot skeleton as the core's [`Bones`].
pub struct SkeletonBones<'a>(pub &'a Gd<Skeleton3D>);

impl Bones for SkeletonBones<'_> {
    fn count(&self) -> i32 {
        self.0.get_bone_count()
    }
    fn find(&self, name: &str) -> i32 {
        self.0.find_bone(name)
    }
    fn parent(&self, bone: i32) -> i32 {
        self.0.get_bone_parent(bone)
    }
    fn name(&self, bone: i32) -> String {
        self.0.get_bone_name(bone).to_string()
    }
    fn label(&self) -> String {
        crate::rig::label(self.0)
    }
}

/// Returns whether `what` gives a skeleton modifier another parent, so another skeleton or none (a
/// modifier that keeps its skeleton between passes looks it up again after one).
pub fn parent_changed(what: Node3DNotification) -> bool {
    matches!(
        what,
        Node3DNotification::PARENTED | Node3DNotification::UNPARENTED
    )
}

/// Returns whether a basis's scale is the same on all three axes (within 0.1 %) and positive.
pub fn is_uniform(basis: Basis) -> bool {
    skeleton::is_uniform(vec3(basis.get_scale()))
}
