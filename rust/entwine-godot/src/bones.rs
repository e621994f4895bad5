//! Bone-chain helpers the skeleton modifiers share, over a Godot skeleton: ancestry (the core's
//! bounded walk) and whether a bone's scale is uniform.

use entwine_core::rig::skeleton;
use godot::classes::Skeleton3D;
use godot::prelude::*;

use crate::convert::vec3;

/// Returns whether `ancestor` is a proper ancestor of `bone` (bounded by the bone count, so a
/// malformed skeleton cannot loop; see [`skeleton::is_ancestor`]).
pub fn is_ancestor(skeleton: &Gd<Skeleton3D>, ancestor: i32, bone: i32) -> bool {
    let count = skeleton.get_bone_count();
    skeleton::is_ancestor(|b| skeleton.get_bone_parent(b), count, ancestor, bone)
}

/// Returns `[grandparent, parent, bone]` of `bone` in `skeleton`, `-1` from the first missing up.
pub fn chain_to(skeleton: &Gd<Skeleton3D>, bone: i32) -> [i32; 3] {
    skeleton::chain_to(|b| skeleton.get_bone_parent(b), bone)
}

/// Returns whether a basis's scale is the same on all three axes (within 0.1 %) and positive.
pub fn is_uniform(basis: Basis) -> bool {
    skeleton::is_uniform(vec3(basis.get_scale()))
}
