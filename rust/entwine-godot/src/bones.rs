//! Bone-chain helpers the skeleton modifiers share: ancestry in a skeleton (bounded, so a
//! malformed skeleton cannot loop) and whether a bone's scale is uniform.

use godot::classes::Skeleton3D;
use godot::prelude::*;

/// Returns whether `ancestor` is a proper ancestor of `bone`. A malformed skeleton cannot loop
/// forever: the walk is bounded by the bone count.
pub fn is_ancestor(skeleton: &Gd<Skeleton3D>, ancestor: i32, mut bone: i32) -> bool {
    for _ in 0..=skeleton.get_bone_count() {
        bone = skeleton.get_bone_parent(bone);
        if bone < 0 {
            return false;
        }
        if bone == ancestor {
            return true;
        }
    }
    false
}

/// Returns whether a scale is the same on all three axes (within 0.1 %) and positive.
pub fn is_uniform(scale: Vector3) -> bool {
    let (lo, hi) = (
        scale.x.min(scale.y).min(scale.z),
        scale.x.max(scale.y).max(scale.z),
    );
    lo > 0.0 && hi - lo <= 1e-3 * hi
}
