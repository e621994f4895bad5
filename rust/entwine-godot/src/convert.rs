//! The one place where Godot types and core types meet.
//!
//! Godot's builtins and glam share a memory layout only by accident of the current versions, so the
//! conversions go through fields; they are cheap and inlined.

use entwine_core::kit::{rotation_of_axes, Pose};
use glam::{Quat, Vec2, Vec3};
use godot::builtin::{Basis, Quaternion, Transform3D, Vector3};

/// Returns the core vector for a Godot vector.
#[inline]
pub fn vec3(v: Vector3) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// Returns the Godot vector for a core vector.
#[inline]
pub fn vector3(v: Vec3) -> Vector3 {
    Vector3::new(v.x, v.y, v.z)
}

/// Returns the ground-plane point of a Godot vector: `(x, z)`, the plane the core's 2D systems
/// (formations) work in; `y` is dropped.
#[inline]
pub fn ground(v: Vector3) -> Vec2 {
    Vec2::new(v.x, v.z)
}

/// Returns the Godot vector over ground-plane point `p` at height `y`: `(p.x, y, p.y)`.
#[inline]
pub fn from_ground(p: Vec2, y: f32) -> Vector3 {
    Vector3::new(p.x, y, p.y)
}

/// Returns the Godot quaternion for a core quaternion.
#[inline]
pub fn quaternion(q: Quat) -> Quaternion {
    Quaternion::new(q.x, q.y, q.z, q.w)
}

/// Returns the pose (position + rotation, scale dropped) of a Godot transform.
#[inline]
pub fn pose(t: Transform3D) -> Pose {
    Pose::new(vec3(t.origin), rotation(t.basis))
}

/// Returns the rotation of a basis (scale and shear dropped) at any scale, or the identity for a
/// basis with no rotation to take (see [`rotation_of_axes`]). Godot's `orthonormalized()` and
/// `get_quaternion()` assert on a determinant below 10⁻⁵ (a uniform scale ≤ 0.02, common for FBX
/// armatures imported at 0.01), so they are never used on poses.
#[inline]
pub fn rotation(b: Basis) -> Quat {
    rotation_of_axes(vec3(b.col_a()), vec3(b.col_b()), vec3(b.col_c()))
}

/// Returns a Godot transform with the pose's position and rotation and the given per-axis scale.
#[inline]
pub fn transform_scaled(p: Pose, scale: Vector3) -> Transform3D {
    let basis = Basis::from_quaternion(quaternion(p.rotation)) * Basis::from_scale(scale);
    Transform3D::new(basis, vector3(p.position))
}

/// Returns the full affine map (rotation, scale, shear and origin) of a Godot transform.
#[inline]
pub fn affine(t: Transform3D) -> glam::Affine3A {
    glam::Affine3A::from_cols(
        vec3(t.basis.col_a()).into(),
        vec3(t.basis.col_b()).into(),
        vec3(t.basis.col_c()).into(),
        vec3(t.origin).into(),
    )
}
