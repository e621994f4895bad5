//! The physics tick: gather the frame's facts from Godot, step the core, write the two `LimbIK`s,
//! then emit the core's events as signals, last (handlers may call back into the node).

use entwine_core::env_touch::node::{no_usable_shape, query_placement, unsupported_shape};
use entwine_core::env_touch::{
    candidate, HandTarget, Shape, Side, TouchEvent, TouchInput, MAX_EVENTS,
};
use entwine_core::kit::Pose;
use glam::{Affine3A, Vec3};
use godot::classes::{
    CharacterBody3D, CollisionObject3D, Node3D, PhysicsDirectSpaceState3D, RigidBody3D,
};
use godot::prelude::*;

use super::{
    Collider, EnvironmentInteractionStateMachine, TouchStateKind, WARN_COLLIDER, WARN_SETUP,
};
use crate::convert::{affine, pose, rigid_transform, vec3, vector3};
use crate::direct::{Alive, Lent};
use crate::limb_ik::LimbIK;
use entwine_core::kit::warn::problem_key;

/// One step's events, copied out of the core so they can be emitted with no borrow of it held.
pub(super) type Events = [TouchEvent; MAX_EVENTS];

/// What one frame reads from the scene before the core steps.
struct Facts {
    root: Pose,
    shoulders: [Vec3; 2],
    velocity: Vec3,
    grounded: bool,
    surface_normal: Option<Vec3>,
    /// Time spent in the core's logic while gathering (µs).
    logic_usec: f64,
}

impl EnvironmentInteractionStateMachine {
    /// One physics frame: (re)build the setup when needed, gather, step the core, apply, draw, emit.
    pub(super) fn frame(&mut self, dt: f32) {
        if !self.rig_ready() {
            return;
        }
        let Some(facts) = self.gather(dt) else {
            return;
        };
        let hands = self.step_core(dt, &facts);
        self.apply(hands);
        self.draw(facts.shoulders);

        // Emit.
        let (events, n) = self.take_events();
        self.emit(&events[..n]);
    }

    /// Rebuilds the setup when it is dirty and syncs the config; false when there is no live rig.
    fn rig_ready(&mut self) -> bool {
        if self.dirty {
            self.dirty = false;
            self.teardown();
            match self.setup() {
                Ok(rig) => {
                    self.warnings.clear_keys(WARN_SETUP);
                    self.rig = Some(rig);
                }
                Err(issue) => {
                    let node = self.to_gd();
                    let key = problem_key(&issue.to_string());
                    self.warnings
                        .on_change(&node, WARN_SETUP, key, &issue.warning());
                    return false;
                }
            }
        }
        self.sync_config();
        let Some(rig) = &self.rig else {
            return false;
        };
        if !rig.character.alive() || !rig.skeleton.alive() {
            self.rig = None;
            self.dirty = true;
            return false;
        }
        true
    }

    /// Gathers the frame's facts: the character's pose, shoulders and motion, the walls near it.
    fn gather(&mut self, dt: f32) -> Option<Facts> {
        let rig = self.rig.as_ref()?;
        let character = rig.character.clone();
        let shoulder_bones = rig.shoulders;
        // SAFETY (both lent below): just found alive, and nothing frees a node inside this tick
        // (no script runs in it; its signals go out after it). See `direct`.
        let character_xform = unsafe { Lent::assume_alive(&character) }.global_transform();
        let placement = query_placement(affine(character_xform), vec3(rig.volume_local.origin));
        let volume_xform = rigid_transform(placement);
        let root = pose(character_xform);
        let character_body = rig.character_body.clone();
        let rigid_body = rig.rigid_body.clone();
        // No physics query and no skeleton read (which can force the skeleton to recompute its
        // pose) while the core ignores them.
        let needs_world = self.core.needs_world(dt);
        let shoulders = if needs_world {
            // SAFETY: as above.
            let skeleton = unsafe { Lent::assume_alive(&rig.skeleton) };
            let skeleton_xform = skeleton.global_transform();
            let world =
                shoulder_bones.map(|b| vec3(skeleton_xform * skeleton.global_pose(b).origin));
            self.shoulders.read(affine(character_xform), world)
        } else {
            self.shoulders.carried(affine(character_xform))
        };
        let (velocity, grounded) = self.motion(&character, character_body, rigid_body, dt);
        let space = if needs_world {
            self.base()
                .get_world_3d()
                .and_then(|w| w.get_direct_space_state())
        } else {
            None
        };
        // The colliders in the volume and their closest points from the locked shoulder height.
        if let Some(space) = &space {
            self.detect(space.clone(), volume_xform);
        }
        let logic_usec = self.gather_candidates(root, needs_world);
        let surface_normal = match (self.core.normal_ray(shoulders, &self.candidates), &space) {
            (Some((from, to)), Some(space)) => self.cast_normal(space.clone(), from, to),
            _ => None,
        };
        Some(Facts {
            root,
            shoulders,
            velocity,
            grounded,
            surface_normal,
            logic_usec,
        })
    }

    /// Lists the wall points the hands could touch from the shoulders' height; returns its time (µs).
    fn gather_candidates(&mut self, root: Pose, needs_world: bool) -> f64 {
        let logic_start = std::time::Instant::now();
        let query = self.core.query_point(root);
        self.candidates.clear();
        if needs_world {
            for collider in &self.colliders {
                let body = affine(collider.body.get_global_transform());
                let id = collider.id.to_i64() as u64;
                self.candidates
                    .extend(candidate(id, &body, &collider.shapes, query));
            }
        }
        logic_start.elapsed().as_secs_f64() * 1e6
    }

    /// Steps the touch state machine on the gathered facts; returns where each hand should be.
    fn step_core(&mut self, dt: f32, facts: &Facts) -> [HandTarget; 2] {
        let logic_start = std::time::Instant::now();
        let hands = self.core.step(&TouchInput {
            dt,
            root: facts.root,
            shoulders: facts.shoulders,
            velocity: facts.velocity,
            move_input: self.has_move_input.then(|| vec3(self.move_input)),
            grounded: facts.grounded,
            candidates: &self.candidates,
            surface_normal: facts.surface_normal,
        });
        let logic_usec = facts.logic_usec + logic_start.elapsed().as_secs_f64() * 1e6;
        self.profile.logic_usec += logic_usec;
        hands
    }

    /// Writes each hand's target and weights to its arm's IK, switching it on or off.
    fn apply(&mut self, hands: [HandTarget; 2]) {
        if let Some(rig) = &mut self.rig {
            for (ik, hand) in rig.iks.iter_mut().zip(hands) {
                // Its activity goes straight to the engine (see `direct`).
                let Some(lent) = Lent::new(ik) else {
                    continue;
                };
                let active = hand.is_active();
                if lent.is_active() != active {
                    lent.set_active(active);
                }
                set_ik(
                    &mut ik.bind_mut(),
                    rigid_transform(hand.pose),
                    hand.position_weight,
                    hand.rotation_weight,
                );
            }
        }
    }

    /// Returns a copy of the core's last events and how many there are.
    pub(super) fn take_events(&self) -> (Events, usize) {
        let mut events = [TouchEvent::TouchEnded { side: Side::Left }; MAX_EVENTS];
        let n = self.core.events().len();
        events[..n].copy_from_slice(self.core.events());
        (events, n)
    }

    /// Refreshes `colliders` with the interactable bodies overlapping the detection volume.
    fn detect(&mut self, mut space: Gd<PhysicsDirectSpaceState3D>, volume: Transform3D) {
        for c in &mut self.colliders {
            c.seen = false;
        }
        let [key, _] = self.keys().clone();
        if let Some(query) = self.query.as_mut() {
            let start = std::time::Instant::now();
            query.set_transform(volume);
            let hits = space.intersect_shape_ex(&*query).max_results(32).done();
            self.profile.query_usec += start.elapsed().as_secs_f64() * 1e6;
            for hit in hits.iter_shared() {
                let Ok(object) = hit.get_or_nil(&key).try_to::<Gd<Object>>() else {
                    continue;
                };
                let id = object.instance_id();
                if let Some(c) = self.colliders.iter_mut().find(|c| c.id == id) {
                    c.seen = true;
                    continue;
                }
                if self.warnings.printed_for(WARN_COLLIDER, id.to_i64() as u64) {
                    continue;
                }
                self.add_collider(object);
            }
        }
        self.colliders.retain(|c| c.seen && c.body.alive());
    }

    /// Caches a newly detected body's shapes (warning once when none is usable).
    fn add_collider(&mut self, object: Gd<Object>) {
        let id = object.instance_id();
        let Ok(body) = object.try_cast::<CollisionObject3D>() else {
            return;
        };
        let name = body.get_name();
        let (shapes, unsupported) = collider_shapes(&body);
        let name = name.to_string();
        if let Some(kind) = unsupported {
            self.warn_collider(id, &unsupported_shape(&name, &kind.to_string()));
        }
        if shapes.is_empty() {
            self.warn_collider(id, &no_usable_shape(&name));
            return;
        }
        self.colliders.push(Collider {
            id,
            body,
            shapes,
            seen: true,
        });
    }

    /// Emits one signal per event, in order.
    pub(super) fn emit(&mut self, events: &[TouchEvent]) {
        for event in events {
            match *event {
                TouchEvent::StateChanged { from, to } => self
                    .signals()
                    .state_changed()
                    .emit(TouchStateKind::of(from), TouchStateKind::of(to)),
                TouchEvent::TouchStarted {
                    side,
                    point,
                    normal,
                } => self.signals().touch_started().emit(
                    side.index() as i64,
                    vector3(point),
                    vector3(normal),
                ),
                TouchEvent::TouchEnded { side } => {
                    self.signals().touch_ended().emit(side.index() as i64);
                }
            }
        }
    }

    /// Returns the character's velocity (m/s) and whether it stands on the floor.
    fn motion(
        &mut self,
        character: &Gd<Node3D>,
        character_body: Option<Gd<CharacterBody3D>>,
        rigid_body: Option<Gd<RigidBody3D>>,
        dt: f32,
    ) -> (Vec3, bool) {
        if let Some(body) = character_body {
            return (vec3(body.get_real_velocity()), body.is_on_floor());
        }
        if let Some(body) = rigid_body {
            return (vec3(body.get_linear_velocity()), true);
        }
        let position = vec3(character.get_global_position());
        (self.velocity.update(position, dt), true)
    }

    /// Returns the surface normal the ray `from` → `to` finds on the interactable layers.
    fn cast_normal(
        &mut self,
        mut space: Gd<PhysicsDirectSpaceState3D>,
        from: Vec3,
        to: Vec3,
    ) -> Option<Vec3> {
        let [_, key] = self.keys().clone();
        let ray = self.ray.as_mut()?;
        ray.set_from(vector3(from));
        ray.set_to(vector3(to));
        let start = std::time::Instant::now();
        let hit = space.intersect_ray(&*ray);
        self.profile.query_usec += start.elapsed().as_secs_f64() * 1e6;
        let normal = hit.get_or_nil(&key).try_to::<Vector3>().ok()?;
        let n = entwine_core::kit::unit_vec3(vec3(normal))?;
        n.is_finite().then_some(n)
    }

    /// Returns the result-dictionary keys `["collider", "normal"]`.
    fn keys(&mut self) -> &[Variant; 2] {
        self.keys
            .get_or_insert_with(|| ["collider", "normal"].map(|k| GString::from(k).to_variant()))
    }

    fn warn_collider(&mut self, id: InstanceId, warning: &str) {
        let node = self.to_gd();
        let key = id.to_i64() as u64;
        self.warnings.once_for(&node, WARN_COLLIDER, key, warning);
    }
}

/// Writes a target and weights into a `LimbIK` through its Rust accessors (no Variant round trip
/// per frame).
pub(super) fn set_ik(
    ik: &mut LimbIK,
    target: Transform3D,
    position_weight: f32,
    rotation_weight: f32,
) {
    ik.set_target_transform(target);
    ik.set_position_weight(position_weight);
    ik.set_rotation_weight(rotation_weight);
}

/// Returns a body's enabled shapes in its own space and the class of the first unsupported one.
fn collider_shapes(body: &Gd<CollisionObject3D>) -> (Vec<(Shape, Affine3A)>, Option<GString>) {
    let mut shapes = Vec::new();
    let mut unsupported = None;
    for owner in body.get_shape_owners().as_slice() {
        let owner = *owner as u32;
        if body.is_shape_owner_disabled(owner) {
            continue;
        }
        let local = affine(body.shape_owner_get_transform(owner));
        for k in 0..body.shape_owner_get_shape_count(owner) {
            let Some(shape) = body.shape_owner_get_shape(owner, k) else {
                continue;
            };
            match crate::convert::shape(shape.get_rid()) {
                Ok(Some((core, placed))) => shapes.push((core, local * placed)),
                Ok(None) => {}
                Err(_) => {
                    unsupported.get_or_insert_with(|| shape.get_class());
                }
            }
        }
    }
    (shapes, unsupported)
}
