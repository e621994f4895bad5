//! HoldHandComponent on one machine: the pair's phases, freezing the recipient, moving the roots,
//! mirroring the animation, and solving and driving both hands (with the debug drawing).

use super::*;
use crate::direct::Alive;
use entwine_core::kit::draw;

impl HoldHandComponent {
    pub(super) fn on_phase_change(&mut self, from: Phase, to: Phase) {
        let role = self.lifecycle.interaction().map(|i| i.role);
        if to == Phase::None || (from == Phase::Active && to == Phase::Preparing) {
            self.stop();
        }
        if to == Phase::Preparing {
            self.prepare(role);
        }
        let (f, t) = (PairPhase::of(from), PairPhase::of(to));
        self.signals().phase_changed().emit(f, t);
    }

    /// Enters Preparing: freeze a recipient; an initiator aligns the recipient once.
    pub(super) fn prepare(&mut self, role: Option<Role>) {
        self.resolve_nodes();
        self.runtime.ik_failed = false;
        self.runtime.chain_length = 0.0;
        match role {
            Some(Role::Recipient) => self.freeze(),
            Some(Role::Initiator) => {
                let tuning = self.follow_tuning();
                let (Some(me), Some(mut partner)) = (self.root_pose(), self.get_partner()) else {
                    self.driver.reset();
                    return;
                };
                let mut start = self.driver.prepare(me, &tuning);
                // Only the peer that drives the pair places the partner: every other peer shows
                // both characters where it last showed them until the stream arrives, then
                // glides them in (blend_speed), so nothing jumps on its screen.
                if self.is_owned() {
                    // The recipient's footing: its root's height above the ground it stands on.
                    self.aim_ground_ray(&partner);
                    self.runtime.footing = partner.bind().root_pose().and_then(|p| {
                        Some(p.position.y - self.ground_below(&partner, p.position)?)
                    });
                    if let Some(ground) = self.ground_below(&partner, start.position) {
                        start.position.y = ground + self.runtime.footing.unwrap_or(0.0);
                        self.driver.set_driven(start.position);
                    }
                    partner.bind_mut().place_root(start);
                }
                self.runtime.mirror_rig.ready = false;
                self.runtime.mirror_follow.reset();
                self.sender.restart();
                self.net.stamps.reset();
            }
            None => {}
        }
    }

    /// Leaves an interaction: unfreeze, restore the arm layers, forget the pair's state. The hands'
    /// IK fades out over the following frames.
    pub(super) fn stop(&mut self) {
        self.unfreeze();
        if let Some(mut tree) = self.tree_node().cloned() {
            for (name, value) in self.runtime.arm_saved.drain(..) {
                tree.set(&name, &value);
            }
        }
        self.runtime.arm_saved.clear();
        self.runtime.mirror_rig.ready = false;
        self.runtime.mirror_follow.reset();
        self.driver.reset();
        self.solver.reset();
        self.sender.stop();
        self.receiver.reset();
        self.net.last_ik = None;
        self.net.seen = [None; 2];
        self.net.view_time = 0.0;
        self.net.view_delay = 0.0;
        self.net.view_blend = 0.0;
        self.net.anim_rig.ready = false;
        for follower in &mut self.net.anim_follow {
            follower.reset();
        }
        self.net.watch.reset();
        if self.runtime.connected {
            self.runtime.connected = false;
            self.signals().hands_connected_changed().emit(false);
        }
        self.runtime.shared_reach = false;
        self.runtime.footing = None;
        if let Some(mut mesh) = self.runtime.debug_mesh.clone() {
            mesh.clear_surfaces();
        }
    }

    pub(super) fn freeze(&mut self) {
        if self.runtime.freeze.is_some() {
            return;
        }
        let Some(mut body) = self.character_node().cloned() else {
            return;
        };
        let processing = body.is_physics_processing();
        let frozen_before = body.get("frozen");
        if !frozen_before.is_nil() {
            body.set("frozen", &true.to_variant());
        }
        body.set_physics_process(false);
        if let Ok(mut cb) = body.try_cast::<CharacterBody3D>() {
            cb.set_velocity(Vector3::ZERO);
        }
        self.runtime.freeze = Some((processing, frozen_before));
        self.signals().frozen_changed().emit(true);
    }

    pub(super) fn unfreeze(&mut self) {
        let Some((processing, frozen_before)) = self.runtime.freeze.take() else {
            return;
        };
        if let Some(mut body) = self.character_node().cloned() {
            body.set_physics_process(processing);
            if !frozen_before.is_nil() {
                body.set("frozen", &frozen_before);
            }
        }
        self.signals().frozen_changed().emit(false);
    }

    /// Sets up the ray that finds the ground under the partner (once per pair): on the partner
    /// body's collision layers, passing through both characters.
    fn aim_ground_ray(&mut self, partner: &Gd<HoldHandComponent>) {
        let ray = self.runtime.ground_ray.get_or_insert_with(|| {
            let mut ray = godot::classes::PhysicsRayQueryParameters3D::new_gd();
            ray.set_collide_with_areas(false);
            ray
        });
        let mut exclude = Array::new();
        let mut mask = 1u32;
        let body = partner.bind().character_node().cloned();
        let here = self.runtime.character.clone();
        for (node, own) in [(body, false), (here, true)] {
            let object = node.and_then(|n| n.try_cast::<godot::classes::CollisionObject3D>().ok());
            if let Some(object) = object {
                exclude.push(object.get_rid());
                if !own {
                    mask = object.get_collision_mask();
                }
            }
        }
        ray.set_exclude(&exclude);
        ray.set_collision_mask(mask);
    }

    /// Returns the height of the ground under `spot` for the partner's body: the first surface the
    /// ground ray meets going down from half a metre (times the pair's scale) above the higher of
    /// the spot and where the partner stands, to two metres below the lower. `None` where there is
    /// none.
    pub(super) fn ground_below(
        &mut self,
        partner: &Gd<HoldHandComponent>,
        spot: Vec3,
    ) -> Option<f32> {
        let body = partner.bind().character_node().cloned()?;
        let k = self.proportion();
        let standing = vec3(body.get_global_position()).y;
        let top = spot.y.max(standing) + 0.5 * k;
        let bottom = spot.y.min(standing) - 2.0 * k;
        if !(top.is_finite() && bottom.is_finite() && spot.x.is_finite() && spot.z.is_finite()) {
            return None;
        }
        let mut space = body.get_world_3d()?.get_direct_space_state()?;
        let ray = self.runtime.ground_ray.as_mut()?;
        ray.set_from(Vector3::new(spot.x, top, spot.z));
        ray.set_to(Vector3::new(spot.x, bottom, spot.z));
        let hit = space.intersect_ray(&*ray);
        let y = hit.get("position")?.try_to::<Vector3>().ok()?.y;
        y.is_finite().then_some(y)
    }

    /// Places this character's root at `target` at once (the one-off preparation alignment).
    pub(super) fn place_root(&mut self, target: Pose) {
        if let Some(mut body) = self.character_node().cloned() {
            let scale = body.get_global_transform().basis.get_scale();
            body.set_global_transform(transform_scaled(target, scale));
        }
    }

    /// Moves this character's root toward `target`, sliding along walls when sweeping; returns
    /// where the body ended (its position and facing), or `None` without a character.
    pub(super) fn move_root(&mut self, target: Pose, dt: f32) -> Option<Pose> {
        // The body is lent for the move: checked alive once this tick, then the engine calls
        // straight (nothing in a move frees it; see `direct`).
        let body = self
            .runtime
            .lent(&self.runtime.character, state::ALIVE_CHARACTER)?;
        let origin = match self.runtime.body.as_ref() {
            Some(cb) if self.sweep_collisions && dt > 0.0 => {
                // SAFETY: the character's own body (the same object), found alive just above.
                let cb = unsafe { Lent::assume_alive(cb) };
                let now = cb.global_transform();
                let facing = transform_scaled(target, now.basis.get_scale()).basis;
                cb.set_velocity((vector3(target.position) - now.origin) / dt);
                cb.move_and_slide();
                cb.set_velocity(Vector3::ZERO);
                let origin = cb.global_transform().origin;
                cb.set_global_transform(Transform3D::new(facing, origin));
                origin
            }
            _ => {
                let scale = body.global_transform().basis.get_scale();
                let facing = transform_scaled(target, scale).basis;
                let origin = vector3(target.position);
                body.set_global_transform(Transform3D::new(facing, origin));
                origin
            }
        };
        Some(Pose::new(vec3(origin), target.rotation))
    }

    /// The initiator's frame: follow, mirror, contact and both hands' IK.
    pub(super) fn drive_pair(&mut self, partner_id: PlayerId, dt: f32, frame: u64) {
        let partner = self.partner_in_tree(partner_id);
        let (Some(mut partner), Some(me)) = (partner, self.root_pose()) else {
            // Partner missing: following pauses and the hands are released (they fade out).
            self.solver.release(&ContactTuning::default(), dt);
            return;
        };
        let tuning = self.follow_tuning();
        if self.driver.driven().is_none() {
            // The partner appeared after the preparation: align it now.
            let start = self.driver.prepare(me, &tuning);
            partner.bind_mut().place_root(start);
        }
        // Over uneven ground the recipient finds its own footing under each spot it is led to.
        let target = match self.runtime.footing {
            Some(footing) => {
                let mut driver = self.driver;
                let target = driver.step_on_ground(me, dt, &tuning, |spot| {
                    Some(self.ground_below(&partner, spot)? + footing)
                });
                self.driver = driver;
                target
            }
            None => self.driver.step(me, dt, &tuning),
        };
        // Held back by a wall? Go on from where the body is (this machine's own body, never a
        // remote replay), so catching up keeps to max_follow_speed.
        let partner_root = partner.bind_mut().move_root(target, dt);
        if let Some(actual) = partner_root {
            self.driver.settle(actual.position);
        }
        self.mirror_animation_onto(&mut partner, dt);
        self.solve_hands(&mut partner, (me, partner_root), dt, frame);
    }

    /// Shows the initiator's animation on the partner in the same process: numeric parameters
    /// (blend positions included) copied exactly, state machines, one-shots and play positions
    /// applied as a remote replica would; without trees, the AnimationPlayer's animation and position.
    pub(super) fn mirror_animation_onto(&mut self, partner: &mut Gd<HoldHandComponent>, dt: f32) {
        if !self.mirror_animation {
            return;
        }
        let players = (
            self.runtime.player.as_ref().filter(|p| p.alive()).cloned(),
            partner
                .bind()
                .runtime
                .player
                .as_ref()
                .filter(|p| p.alive())
                .cloned(),
        );
        if let (Some(src), Some(mut dst)) = players {
            // No AnimationTree: mirror the AnimationPlayer's animation and position.
            let animation = src.get_current_animation();
            if animation.is_empty() {
                return;
            }
            if dst.get_current_animation() != animation {
                dst.play_ex().name(&StringName::from(&animation)).done();
            }
            dst.seek_ex(src.get_current_animation_position())
                .update(true)
                .done();
            return;
        }
        let (Some(src), Some(mut dst)) = (
            self.tree_node().cloned(),
            partner.bind().tree_node().cloned(),
        ) else {
            return;
        };
        if !self.runtime.mirror_rig.ready {
            // Once per pair: the initiator's tree, minus the arm layers.
            let arms = self.arm_layers();
            self.runtime.mirror_rig.build(Some(&src), None, &arms);
        }
        let rt = &mut self.runtime;
        rt.mirror_rig.copy_values(&src, &mut dst);
        rt.mirror_rig.read_states(&src, &mut rt.mirror_snapshot);
        rt.mirror_rig.apply(
            &mut rt.mirror_follow,
            &rt.mirror_snapshot,
            Some(&mut dst),
            None,
            dt,
            LOCAL_ANIM_GRACE,
        );
    }

    /// Builds (once) this character's hand IK for `role` and returns it, or `None` when its bones are
    /// missing (warned once).
    pub(super) fn hand_ik(&mut self, role: Role) -> Option<Gd<LimbIK>> {
        let bone = match role {
            Role::Initiator => self.initiator_hand_bone.clone(),
            Role::Recipient => self.recipient_hand_bone.clone(),
        };
        if let Some(ik) = self.runtime.ik.as_ref().filter(|ik| ik.alive()) {
            if self.runtime.ik_bone == bone {
                return Some(ik.clone());
            }
        }
        if self.runtime.ik_failed {
            return None;
        }
        let skeleton = self.skeleton_node().cloned();
        let side = match role {
            Role::Initiator => Side::Left,
            Role::Recipient => Side::Right,
        };
        let humanoid = skeleton.as_ref().map(rig::humanoid);
        let chain = skeleton
            .as_ref()
            .zip(humanoid.as_ref())
            .and_then(|(s, h)| chain_for_hand(s, &bone, side, h));
        let (Some(mut skeleton), Some(humanoid), Some([upper, lower, hand])) =
            (skeleton, humanoid, chain)
        else {
            self.runtime.ik_failed = true;
            let skeleton = self
                .skeleton_node()
                .cloned()
                .map_or_else(|| "none".to_string(), |s| rig::label(&s));
            let tried = if bone.is_empty() {
                format!(
                    "no {} found (tried: {})",
                    RigRole::arm(side)[2].godot_name(),
                    RigRole::arm(side)[2].tried()
                )
            } else {
                format!("hand bone '{bone}' (with a forearm and upper arm above it) not found")
            };
            self.warn_once(
                WARN_BONES,
                format!(
                    "{tried} in skeleton '{skeleton}'; the hands are not held, following and \
                     animation go on"
                ),
            );
            return None;
        };
        let mut ik = match self.runtime.ik.take().filter(|ik| ik.alive()) {
            Some(ik) => ik,
            None => {
                let mut ik = LimbIK::new_alloc();
                ik.set_name("HoldHandIK");
                skeleton.add_child(&ik);
                ik
            }
        };
        {
            let mut b = ik.bind_mut();
            b.set_upper_bone(upper);
            b.set_lower_bone(lower);
            b.set_end_bone(hand.clone());
        }
        // Elbows out and down, away from the body: an IK with no pole flips the elbow inward
        // into the torso. The hand's palm and fingers for the grip.
        let rest = |bone: i32| pose(skeleton.get_bone_global_rest(bone));
        let hips = humanoid
            .bone(RigRole::Hips)
            .map(|h| rest(h as i32).position);
        let held = HoldingHand::new(&humanoid, side, rest(skeleton.find_bone(&hand)), hips);
        {
            let mut b = ik.bind_mut();
            b.set_pole_direction(vector3(held.elbow_pole));
            b.set_position_weight(0.0);
            b.set_rotation_weight(0.0);
        }
        self.runtime.grip = Some(held);
        self.runtime.chain_length = 0.0;
        self.runtime.ik = Some(ik.clone());
        self.runtime.ik_bone = bone;
        Some(ik)
    }

    /// Returns this character's hand input for the contact solver (world space), from its IK's
    /// record of the animated pose.
    pub(super) fn hand_input(
        &mut self,
        role: Role,
        offset: Vector3,
        rotation_deg: Vector3,
        grip: bool,
    ) -> Option<HandInput> {
        let contact = if grip {
            Contact::Grip {
                palm_back: role == Role::Initiator,
            }
        } else {
            let (offset, rotation) = contact_frame(vec3(offset), vec3(rotation_deg))
                .unwrap_or_else(|| {
                    self.warn_once(
                        WARN_CONTACT,
                        "contact offset or rotation is invalid (offsets must be finite and within \
                         2 m, rotations finite); using none"
                            .into(),
                    );
                    (Vec3::ZERO, glam::Quat::IDENTITY)
                });
            Contact::Set { offset, rotation }
        };
        let ik = self.hand_ik(role)?;
        let held = self.runtime.grip?;
        let to_world = self
            .runtime
            .lent(&self.runtime.skeleton, state::ALIVE_SKELETON)?
            .global_transform();
        let scale = vec3(to_world.basis.get_scale());
        if self.runtime.chain_length <= 0.0 {
            // The rest pose is read when the hand's IK is built (as its grip is): once.
            self.runtime.chain_length = ik.clone().bind_mut().get_chain_length();
        }
        let chain = self.runtime.chain_length;
        let reach = HoldingHand::reach(chain, scale, self.reach_margin());
        let ik = ik.bind();
        let hand = to_world * ik.get_animated_end_transform();
        if hand.origin == to_world.origin {
            // Not processed yet: no animated pose recorded.
            return None;
        }
        let upper = vec3(to_world * ik.get_animated_upper_position());
        let world_scale = entwine_core::rig::mean_scale(scale);
        held.input(affine(hand), upper, reach, world_scale, contact)
    }

    /// Solves the pair's contact from both hands and drives both hand IKs, given both roots
    /// this frame (the partner's `None` when it has no character: the hands are released).
    pub(super) fn solve_hands(
        &mut self,
        partner: &mut Gd<HoldHandComponent>,
        (me, partner_root): (Pose, Option<Pose>),
        dt: f32,
        frame: u64,
    ) {
        let tuning = self.contact_tuning();
        let grip = self.uses_grip();
        let (io, ir) = self.contact_setting(Role::Initiator);
        let mine = self.hand_input(Role::Initiator, io, ir, grip);
        let (ro, rr) = self.contact_setting(Role::Recipient);
        let theirs = partner.bind_mut().hand_input(Role::Recipient, ro, rr, grip);
        // The grip's offsets are in the pair's frame: the initiator's body axes in the world.
        let pair_frame = if grip { self.body_frame() } else { None };
        let (Some(tuning), Some(mine), Some(theirs), Some(partner_root)) =
            (tuning, mine, theirs, partner_root)
        else {
            // IK invalid or bones missing: release both hands (they fade out); following goes on.
            self.solver.release(&ContactTuning::default(), dt);
            self.set_connected(false);
            if let Some(ik) = self.net.last_ik.as_mut() {
                ik.release();
            }
            return;
        };
        let distance = me.position.distance(partner_root.position);
        let out = self
            .solver
            .step_in_frame(&mine, &theirs, distance, true, &tuning, dt, pair_frame);
        self.runtime.contact = vector3(out.contact);
        if self.debug_draw {
            self.draw_debug(&out);
        }
        self.runtime.shared_reach = out.has_shared_reach;
        self.set_connected(out.connected);
        self.net.last_ik = Some(SentHands::solved(me, &out, &mine, &theirs));
        self.drive_hand(
            out.initiator_target,
            out.position_weight,
            out.rotation_weight,
            frame,
        );
        partner.bind_mut().drive_hand(
            out.recipient_target,
            out.position_weight,
            out.rotation_weight,
            frame,
        );
    }

    /// Whether the hands take the palm-to-palm grip: [member auto_grip] with no contact offset or
    /// rotation set.
    pub(super) fn uses_grip(&self) -> bool {
        self.auto_grip
            && [
                self.initiator_contact_offset,
                self.initiator_contact_rotation,
                self.recipient_contact_offset,
                self.recipient_contact_rotation,
            ]
            .iter()
            .all(|v| *v == Vector3::ZERO)
    }

    /// This character's body axes (right, up, back of the rig found in its skeleton) as a world
    /// rotation, once its hand IK is built.
    pub(super) fn body_frame(&self) -> Option<glam::Quat> {
        let axes = self.runtime.grip?.body_axes();
        let basis = self
            .runtime
            .lent(&self.runtime.skeleton, state::ALIVE_SKELETON)?
            .global_transform()
            .basis;
        let [x, y, z] = axes.map(|a| vec3(basis * vector3(a)));
        Some(entwine_core::kit::rotation_of_axes(x, y, z))
    }

    /// Draws the reach spheres (three great circles each), the preferred point (grey), the shared
    /// contact (green when connected, red when not) and a line between the hands' targets.
    pub(super) fn draw_debug(&mut self, out: &ContactOutput) {
        let mut mesh = match self.runtime.debug_mesh.clone() {
            Some(mesh) => mesh,
            None => {
                let (instance, mesh) = crate::debug_draw::line_mesh("HoldHandDebug", true);
                self.base_mut().add_child(&instance);
                self.runtime.debug_mesh = Some(mesh.clone());
                mesh
            }
        };
        mesh.clear_surfaces();
        mesh.surface_begin(PrimitiveType::LINES);
        let line = |mesh: &mut Gd<ImmediateMesh>, a: Vector3, b: Vector3, color: Color| {
            mesh.surface_set_color(color);
            mesh.surface_add_vertex(a);
            mesh.surface_add_vertex(b);
        };
        const SEGMENTS: usize = 32;
        for (sphere, color) in out.spheres.iter().zip([
            Color::from_rgb(1.0, 0.5, 0.3),
            Color::from_rgb(0.3, 0.6, 1.0),
        ]) {
            for (a, b) in draw::sphere(sphere.center, sphere.radius, SEGMENTS) {
                line(&mut mesh, vector3(a), vector3(b), color);
            }
        }
        let cross = |mesh: &mut Gd<ImmediateMesh>, p: Vec3, size: f32, color: Color| {
            for (a, b) in draw::star(p, size) {
                line(mesh, vector3(a), vector3(b), color);
            }
        };
        cross(
            &mut mesh,
            out.preferred,
            0.04,
            Color::from_rgb(0.7, 0.7, 0.7),
        );
        let state = if out.connected {
            Color::from_rgb(0.2, 1.0, 0.3)
        } else {
            Color::from_rgb(1.0, 0.2, 0.2)
        };
        cross(&mut mesh, out.contact, 0.07, state);
        line(
            &mut mesh,
            vector3(out.initiator_target.position),
            vector3(out.recipient_target.position),
            state,
        );
        mesh.surface_end();
    }
}
