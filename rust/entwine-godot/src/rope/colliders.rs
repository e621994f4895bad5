//! Gathers the physics bodies and areas around a rope into the core's analytic [`World`], once per
//! physics frame, with one shape query (`PhysicsDirectSpaceState3D.intersect_shape`) over the rope's
//! bounds, and gives each cutter its motion over the frame (a rigid body's velocities, else the
//! change from the pose it had in the previous frame).

use entwine_core::kit::Pose;
use entwine_core::rope::{Collider, Motion, Shape, World};
use glam::Vec3;
use godot::classes::physics_server_3d::BodyState;
use godot::classes::{
    Area3D, BoxShape3D, CollisionObject3D, PhysicsDirectSpaceState3D, PhysicsServer3D,
    PhysicsShapeQueryParameters3D, RigidBody3D,
};
use godot::prelude::*;

use crate::convert::{pose, vec3, vector3};

/// Most shapes one query returns (the nearest ones win when a rope lies in a crowd).
pub const MAX_COLLIDERS: usize = 32;

/// A cutter shape's pose in the last frame, keyed by its object's instance id and shape index.
type Seen = (i64, i32, Pose);

/// The reusable query objects, and where each cutter was in the previous frame.
pub struct Gatherer {
    query: Gd<PhysicsShapeQueryParameters3D>,
    bounds: Gd<BoxShape3D>,
    /// Cutter poses of the previous frame, and of this one (swapped each frame; never grow past
    /// [`MAX_COLLIDERS`]).
    last_seen: Vec<Seen>,
    seen: Vec<Seen>,
}

impl Gatherer {
    /// Returns a gatherer with its query shape and parameters created once.
    pub fn new() -> Self {
        let bounds = BoxShape3D::new_gd();
        let mut query = PhysicsShapeQueryParameters3D::new_gd();
        query.set_shape(&bounds);
        query.set_collide_with_bodies(true);
        Self {
            query,
            bounds,
            last_seen: Vec::with_capacity(MAX_COLLIDERS),
            seen: Vec::with_capacity(MAX_COLLIDERS),
        }
    }

    /// Sets the bodies the query ignores (the anchor's own character).
    pub fn set_exclude(&mut self, exclude: &Array<Rid>) {
        self.query.set_exclude(exclude);
    }

    /// Clears `world` and fills it with the shapes overlapping the box `lo..hi` (world metres) whose
    /// object is on `solid_mask` (bodies: solid) or `cutter_mask` (bodies and areas: cutters), each
    /// cutter with its motion over the last `dt` seconds. Returns the name of the first unsupported
    /// shape type met (concave meshes, height maps), so the caller can warn once.
    #[allow(clippy::too_many_arguments)]
    pub fn gather(
        &mut self,
        space: &mut Gd<PhysicsDirectSpaceState3D>,
        lo: Vec3,
        hi: Vec3,
        solid_mask: u32,
        cutter_mask: u32,
        dt: f32,
        world: &mut World,
    ) -> Option<&'static str> {
        world.clear();
        core::mem::swap(&mut self.last_seen, &mut self.seen);
        self.seen.clear();
        let mask = solid_mask | cutter_mask;
        if mask == 0 || !lo.is_finite() || !hi.is_finite() {
            return None;
        }
        let size = (hi - lo).max(Vec3::splat(0.01));
        self.bounds.set_size(vector3(size));
        self.query
            .set_transform(Transform3D::new(Basis::IDENTITY, vector3((lo + hi) * 0.5)));
        self.query.set_collision_mask(mask);
        self.query.set_collide_with_areas(cutter_mask != 0);
        let hits = space
            .intersect_shape_ex(&self.query)
            .max_results(MAX_COLLIDERS as i32)
            .done();
        let server = PhysicsServer3D::singleton();
        let mut unsupported = None;
        for hit in hits.iter_shared() {
            let (Some(rid), Some(index), Some(object)) =
                (hit.get("rid"), hit.get("shape"), hit.get("collider"))
            else {
                continue;
            };
            let (Ok(rid), Ok(index)) = (rid.try_to::<Rid>(), index.try_to::<i32>()) else {
                continue;
            };
            let Ok(object) = object.try_to::<Gd<CollisionObject3D>>() else {
                continue;
            };
            let layer = object.get_collision_layer();
            let is_area = object.clone().try_cast::<Area3D>().is_ok();
            let solid = !is_area && layer & solid_mask != 0;
            let cutter = layer & cutter_mask != 0;
            if !solid && !cutter {
                continue;
            }
            // The node's transform, not the server's: a kinematic body moved by a script earlier in
            // this physics frame is where the script put it (the server applies it at its step).
            let at = object.get_global_transform();
            let (shape_rid, transform) = if is_area {
                (
                    server.area_get_shape(rid, index),
                    at * server.area_get_shape_transform(rid, index),
                )
            } else {
                (
                    server.body_get_shape(rid, index),
                    at * server.body_get_shape_transform(rid, index),
                )
            };
            match describe(shape_rid, transform) {
                Ok(Some((shape, at))) => {
                    let motion = if cutter {
                        self.motion(&object, rid, index, at, dt)
                    } else {
                        Motion::NONE
                    };
                    world.push(Collider {
                        pose: at,
                        shape,
                        solid,
                        cutter,
                        motion,
                    });
                }
                Ok(None) => {}
                Err(name) => {
                    unsupported.get_or_insert(name);
                }
            }
        }
        unsupported
    }

    /// Returns how the cutter shape `index` of `object` (body or area `rid`), now at `at`, moved
    /// during the last `dt` seconds: none when it was not seen in the previous frame, else a moving
    /// rigid body's own velocities (they know a turn of more than half a revolution per frame), else
    /// the change from its pose in the previous frame. Remembers `at` for the next frame.
    fn motion(
        &mut self,
        object: &Gd<CollisionObject3D>,
        rid: Rid,
        index: i32,
        at: Pose,
        dt: f32,
    ) -> Motion {
        let id = object.instance_id().to_i64();
        if self.seen.len() < MAX_COLLIDERS {
            self.seen.push((id, index, at));
        }
        // A cutter seen for the first time (just spawned, or just come near) has no known path.
        let Some(from) = self
            .last_seen
            .iter()
            .find(|(i, k, _)| *i == id && *k == index)
            .map(|(_, _, from)| *from)
        else {
            return Motion::NONE;
        };
        if let Ok(body) = object.clone().try_cast::<RigidBody3D>() {
            if !body.is_freeze_enabled() && !body.is_sleeping() {
                let server = PhysicsServer3D::singleton();
                let v = server.body_get_state(rid, BodyState::LINEAR_VELOCITY);
                let w = server.body_get_state(rid, BodyState::ANGULAR_VELOCITY);
                if let (Ok(v), Ok(w)) = (v.try_to::<Vector3>(), w.try_to::<Vector3>()) {
                    let centre = body.get_global_transform() * body.get_center_of_mass();
                    return Motion {
                        velocity: vec3(v),
                        angular_velocity: vec3(w),
                        pivot: vec3(centre),
                    }
                    .sanitized();
                }
            }
        }
        Motion::between(from, at, dt)
    }
}

/// Returns the core shape and its world pose for a physics shape placed by `transform`, `Ok(None)`
/// for data that cannot be used, or the type's name when the type is not supported (the rope's
/// world takes the four solids and the shapes it approximates by them; see `World::push`).
fn describe(shape: Rid, transform: Transform3D) -> Result<Option<(Shape, Pose)>, &'static str> {
    let Some((shape, local)) = crate::convert::shape(shape)? else {
        return Ok(None);
    };
    if matches!(shape, Shape::Trimesh(_)) {
        return Err("ConcavePolygonShape3D");
    }
    // Godot physics scales shapes with their body; round shapes keep a uniform scale.
    let scaled = shape.scaled(vec3(transform.basis.get_scale()));
    Ok(Some((
        scaled,
        pose(transform).compose(crate::convert::pose_of_affine(local)),
    )))
}
