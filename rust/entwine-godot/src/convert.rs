//! The one place where Godot types and core types meet: vectors, rotations, poses, transforms,
//! colours and physics shapes. Godot's builtins and glam share a memory layout only by accident
//! of the current versions, so the conversions go through fields; they are cheap and inlined.

use entwine_core::kit::{rotation_of_axes, unit_quat, Pose, Shape};
use glam::{Affine3A, Quat, Vec2, Vec3};
use godot::builtin::{
    Basis, PackedVector3Array, Plane, Quaternion, Rid, Transform3D, VarDictionary, Vector3,
};
use godot::classes::physics_server_3d::ShapeType;
use godot::classes::PhysicsServer3D;
use godot::obj::Singleton;

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

/// Returns a Godot transform with the pose's position and rotation (no scale: the rotation's own
/// basis, not multiplied by a unit scale).
#[inline]
pub fn rigid_transform(p: Pose) -> Transform3D {
    Transform3D::new(
        Basis::from_quaternion(quaternion(unit_quat(p.rotation))),
        vector3(p.position),
    )
}

/// Returns a Godot transform with the pose's position and rotation and the given per-axis scale.
#[inline]
pub fn transform_scaled(p: Pose, scale: Vector3) -> Transform3D {
    let basis =
        Basis::from_quaternion(quaternion(unit_quat(p.rotation))) * Basis::from_scale(scale);
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

/// Returns the inverse of a Godot transform at any scale, never asserting: godot-rust's
/// `affine_inverse()` and `Basis::inverse()` assert on a zero determinant (a node scaled to zero);
/// see [`entwine_core::kit::affine_inverse`] for the fallback.
#[inline]
pub fn affine_inverse(t: Transform3D) -> Transform3D {
    transform(entwine_core::kit::affine_inverse(affine(t)))
}

/// Returns the Godot transform of an affine map (rotation, scale, shear and origin).
#[inline]
pub fn transform(a: Affine3A) -> Transform3D {
    let c = |v: glam::Vec3A| vector3(v.into());
    Transform3D::new(
        Basis::from_cols(
            c(a.matrix3.x_axis),
            c(a.matrix3.y_axis),
            c(a.matrix3.z_axis),
        ),
        c(a.translation),
    )
}

/// Returns the Godot colour of a core RGB colour (opaque).
#[inline]
pub fn color([r, g, b]: [f32; 3]) -> godot::builtin::Color {
    godot::builtin::Color::from_rgb(r, g, b)
}

/// Returns the core shape of the physics shape `rid` (a `Shape3D`'s RID) in its own space, with the
/// placement of that space within the shape's (the identity, but for a world boundary's plane);
/// `Ok(None)` for data that cannot be read; or the Godot class's name when the kind has no core
/// shape (a height map, a separation ray). Reads the physics server's copy of the shape, so it works
/// the same for a `Shape3D` resource and for a shape found by a query. Scale is left to the caller.
pub fn shape(rid: Rid) -> Result<Option<(Shape, Affine3A)>, &'static str> {
    let server = PhysicsServer3D::singleton();
    let data = server.shape_get_data(rid);
    let dict = |key: &str| -> Option<godot::builtin::Variant> {
        data.try_to::<VarDictionary>().ok()?.get(key)
    };
    let dict_f32 = |key: &str| dict(key)?.try_to::<f32>().ok();
    let local = |shape: Shape| (shape, Affine3A::IDENTITY);
    let shape = match server.shape_get_type(rid) {
        ShapeType::SPHERE => data
            .try_to::<f32>()
            .ok()
            .map(|r| local(Shape::Sphere { radius: r })),
        ShapeType::BOX => data.try_to::<Vector3>().ok().map(|h| {
            local(Shape::Box {
                half_extents: vec3(h),
            })
        }),
        ShapeType::CAPSULE => dict_f32("radius")
            .zip(dict_f32("height"))
            .map(|(r, h)| local(Shape::capsule(r, h))),
        ShapeType::CYLINDER => dict_f32("radius")
            .zip(dict_f32("height"))
            .map(|(r, h)| local(Shape::cylinder(r, h))),
        ShapeType::WORLD_BOUNDARY => data
            .try_to::<Plane>()
            .ok()
            .and_then(|plane| Shape::world_boundary(vec3(plane.normal), plane.d)),
        ShapeType::CONVEX_POLYGON => data.try_to::<PackedVector3Array>().ok().map(|points| {
            let points: Vec<Vec3> = points.as_slice().iter().map(|v| vec3(*v)).collect();
            local(Shape::convex(&points))
        }),
        ShapeType::CONCAVE_POLYGON => dict("faces")
            .and_then(|faces| faces.try_to::<PackedVector3Array>().ok())
            .map(|faces| {
                let faces: Vec<Vec3> = faces.as_slice().iter().map(|v| vec3(*v)).collect();
                local(Shape::trimesh(&faces))
            }),
        ShapeType::HEIGHTMAP => return Err("HeightMapShape3D"),
        ShapeType::SEPARATION_RAY => return Err("SeparationRayShape3D"),
        _ => return Err("this shape type"),
    };
    Ok(shape)
}

/// Returns the rotation and translation of an affine map as a pose (its scale dropped).
#[inline]
pub fn pose_of_affine(a: Affine3A) -> Pose {
    Pose::new(
        Vec3::from(a.translation),
        rotation_of_axes(
            a.matrix3.x_axis.into(),
            a.matrix3.y_axis.into(),
            a.matrix3.z_axis.into(),
        ),
    )
}
