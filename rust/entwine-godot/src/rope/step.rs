//! RopeSimulation's step: gathering the world, stepping alone or in the rope server's batch,
//! emitting the step's signals, and drawing the rope.

use super::mesh::TubeFraming;
use super::*;
use crate::direct::Lent;
use entwine_core::rope::gather;

impl RopeSimulation {
    /// Steps this rope alone now ([method advance], or a rope outside the server).
    pub(super) fn physics_step(&mut self, dt: f32) {
        if let Some(input) = self.begin_step(dt) {
            self.gather_world(input.anchor, input.dt);
            if let Some(rope) = self.rope.as_deref_mut() {
                let events = rope.step(input.dt, input.anchor, input.end, &self.world);
                self.finish_step(input, events);
            }
        }
        self.emit_step_signals();
    }

    /// The rope server's gather: samples this tick's inputs, asks `gather` for the colliders around
    /// the rope (in the physics space the caller numbered `space`; the server fills the world in the
    /// batch with one query for many ropes) and moves the rope into `batch`, tagged `owner`.
    /// Returns whether a signal is already due (a replay ended instead of a step).
    pub(super) fn begin_batched(
        &mut self,
        batch: &mut RopeBatch,
        gather: &mut SharedGather,
        space: u32,
        owner: usize,
    ) -> bool {
        self.queued = false;
        let Some(input) = self.begin_step(self.pending_dt) else {
            return self.due.any();
        };
        self.world.clear();
        if let Some((lo, hi, solid, cutter)) = self.query_box(input.anchor) {
            gather.request(Request {
                entry: batch.len(),
                space,
                lo,
                hi,
                solid,
                cutter,
                exclude: self.exclude_rids,
                dt: input.dt,
            });
        }
        let Some(rope) = self.rope.take() else {
            return self.due.any();
        };
        let world = core::mem::take(&mut self.world);
        batch.push(rope, world, input, owner);
        false
    }

    /// The rope server's apply: takes the stepped rope back and applies the step's results;
    /// `unsupported` names a shape type its gather met and ignored (warned about once).
    /// Returns whether the step has a signal to emit (the server binds the others no more).
    pub(super) fn end_batched(
        &mut self,
        entry: BatchEntry,
        unsupported: Option<&'static str>,
    ) -> bool {
        self.rope = Some(entry.rope);
        self.world = entry.world;
        if let Some(kind) = unsupported {
            self.warn_unsupported(kind);
        }
        self.finish_step(entry.input, entry.events);
        self.due.any()
    }

    /// Returns the step's inputs (live, or from the replay), recording them (the caller gathers the
    /// colliders); `None` when there is no step (no rope, or the replay just ended).
    pub(super) fn begin_step(&mut self, dt: f32) -> Option<StepInput> {
        self.rope.as_deref()?;
        // Checked every step, also while no end node is attached (again only once it changed).
        self.checked_end_offset();
        if self.exclude_dirty {
            self.refresh_exclude();
        }
        let (dt, anchor, end) = if self.replaying {
            let next = self
                .recording
                .as_ref()
                .and_then(|rec| self.replayer.next(rec));
            match next {
                Some(s) => {
                    if let Some(r) = self.rope.as_deref_mut() {
                        r.set_target_length(s.target_length);
                    }
                    (s.dt, s.anchor, s.end)
                }
                None => {
                    self.replaying = false;
                    self.due.replay_finished = true;
                    return None;
                }
            }
        } else {
            let anchor = self
                .sample_anchor()
                .unwrap_or_else(|| self.rope.as_deref().map_or(Vec3::ZERO, Rope::anchor));
            (dt, anchor, self.sample_end())
        };
        if self.recorder.is_recording() && !self.in_editor {
            let target_length = self.rope.as_deref().map_or(0.0, Rope::target_length);
            self.recorder.push(AnchorSample {
                dt,
                anchor,
                end,
                target_length,
            });
        }
        Some(StepInput { dt, anchor, end })
    }

    /// Applies a step's results: the pull on an attached body, a cut's detachment; keeps the events
    /// for [`Self::emit_step_signals`].
    pub(super) fn finish_step(&mut self, input: StepInput, events: StepEvents) {
        let Some(rope) = self.rope.as_deref() else {
            return;
        };
        let tension = rope.tension();
        let length = rope.length();
        if let (EndAttachment::Body { .. }, true, false) =
            (input.end, tension.is_finite(), self.in_editor)
        {
            let path = self.end_node.clone();
            if let Some(mut body) = self.base().try_get_node_as::<RigidBody3D>(&path) {
                body.apply_central_force(vector3(tension));
            }
        }
        if events.cut.is_some() {
            // The end attachment went with the loose piece.
            self.end_detached = self.end_named;
        }
        self.due.step = Some((events, length));
        // Told at each step, however the rope fell asleep or woke (a step, a property, a cut).
        self.due.sleep_changed = rope.is_sleeping() != self.sleep_told;
    }

    /// Emits the signals of the last step; returns whether any was emitted.
    pub(super) fn emit_step_signals(&mut self) -> bool {
        let due = core::mem::take(&mut self.due);
        let mut any = false;
        if let Some((events, length)) = due.step {
            if let Some(cut) = events.cut {
                let (i, at) = (cut.index as i32, vector3(cut.position));
                self.signals().rope_cut().emit(i, at);
                if cut.reason == CutReason::Torn {
                    self.signals().rope_torn().emit(i, at);
                }
                any = true;
            }
            if events.loose_faded {
                self.signals().cut_piece_faded().emit();
                any = true;
            }
            if events.length_reached {
                self.signals().length_reached().emit(length);
                any = true;
            }
        }
        if due.sleep_changed {
            self.sleep_told = self.rope.as_deref().is_some_and(Rope::is_sleeping);
            self.signals().sleeping_state_changed().emit();
            any = true;
        }
        if due.replay_finished {
            self.signals().replay_finished().emit();
            any = true;
        }
        any
    }

    /// Returns the box (world metres, finite) whose colliders the rope needs for a step from
    /// `anchor`, with its `collision_mask` and `cutter_mask`; `None` when it takes no collider
    /// query (both masks 0, the editor's preview, no rope, bounds not finite).
    pub(super) fn query_box(&self, anchor: Vec3) -> Option<(Vec3, Vec3, u32, u32)> {
        let (solid, cutter) = (self.collision_mask, self.cutter_mask);
        // The editor's preview takes no physics queries (the ground plane is in the core).
        if solid | cutter == 0 || self.in_editor {
            return None;
        }
        let rope = self.rope.as_deref()?;
        let (lo, hi) = gather::query_box(rope, anchor, self.radius)?;
        Some((lo, hi, solid, cutter))
    }

    /// Fills the collider list from the physics world around the rope with its own query (a rope
    /// stepped alone; the rope server's ropes share theirs, see [`Self::begin_batched`]).
    pub(super) fn gather_world(&mut self, anchor: Vec3, dt: f32) {
        self.world.clear();
        let Some((lo, hi, solid, cutter)) = self.query_box(anchor) else {
            return;
        };
        let Some(mut space) = self
            .base()
            .get_world_3d()
            .and_then(|w| w.get_direct_space_state())
        else {
            return;
        };
        let Some(g) = self.gatherer.as_mut() else {
            return;
        };
        if let Some(kind) = g.gather(&mut space, lo, hi, solid, cutter, dt, &mut self.world) {
            self.warn_unsupported(kind);
        }
    }

    /// Warns once that shapes of type `kind` on the masks are ignored.
    pub(super) fn warn_unsupported(&mut self, kind: &str) {
        self.warn_once(
            warn::SHAPE,
            &format!("{kind} on collision_mask/cutter_mask is not supported by the rope and is ignored (use boxes, spheres, capsules, cylinders or convex shapes)"),
        );
    }

    /// Draws the rope for this frame: its tube, the cut-off piece's and the debug points.
    pub(super) fn render(&mut self) {
        let engine = self.engine.get_or_insert_with(Engine::singleton);
        // SAFETY: the Engine singleton lives as long as the engine (see `direct`).
        let alpha = unsafe { Lent::assume_alive(engine) }.physics_interpolation_fraction() as f32;
        if self.render_prepare(alpha) {
            if let Some(t) = self.tube.as_mut() {
                t.vertices().write();
            }
            self.render_upload();
        }
    }

    /// Returns whether [`Self::render`] has anything to do (a rope asleep and drawn where it
    /// sleeps has not).
    pub(super) fn render_due(&self) -> bool {
        self.rope
            .as_ref()
            .is_some_and(|r| !(r.is_sleeping() && self.drawn_asleep))
    }

    /// All of [`Self::render`] but the tube's vertices and upload, with the engine's physics
    /// interpolation fraction `alpha`; returns whether those are due: then [`Self::tube_vertices`]
    /// (on any thread) and [`Self::render_upload`] follow. In three parts, as the rope server
    /// draws many ropes: [`Self::render_framing`], [`RopeFraming::frame`] (on any thread) and
    /// [`Self::render_rest`].
    pub(super) fn render_prepare(&mut self, alpha: f32) -> bool {
        let Some(mut framing) = self.render_framing(alpha) else {
            return false;
        };
        framing.frame();
        let framed = framing.framed;
        self.render_rest(alpha, framed)
    }

    /// The first part of [`Self::render_prepare`]: `None` when the rope is not drawn this time
    /// (none built, or asleep and drawn where it sleeps), else its tube's framing to run.
    pub(super) fn render_framing(&mut self, alpha: f32) -> Option<RopeFraming<'_>> {
        let asleep_and_drawn = self.drawn_asleep;
        let rope = self
            .rope
            .as_ref()
            .filter(|r| !(r.is_sleeping() && asleep_and_drawn))?;
        self.drawn_asleep = rope.is_sleeping();
        Some(RopeFraming {
            rope,
            scratch: &mut self.scratch,
            tube: self.tube.as_mut().map(TubeMesh::framing),
            radius: self.radius,
            alpha,
            framed: None,
        })
    }

    /// The last part of [`Self::render_prepare`], after [`RopeFraming::frame`] gave `framed`:
    /// sizes the tube's buffers, and draws the cut-off piece and the debug points (engine calls);
    /// returns whether the tube's vertices and upload are due.
    pub(super) fn render_rest(&mut self, alpha: f32, framed: Option<usize>) -> bool {
        let Some(rope) = self.rope.as_deref() else {
            return false;
        };
        let radius = self.radius;
        if let (Some(t), Some(n)) = (self.tube.as_mut(), framed) {
            t.size_for(n);
        }
        if let Some(t) = self.loose_tube.as_mut() {
            // The cut-off piece's tube is rebuilt and uploaded only while there is a piece to
            // show; once hidden it is left alone until the next cut.
            let n = rope.loose_interpolated(alpha, &mut self.scratch);
            let opacity = rope.loose_opacity();
            let show = n > 1 && opacity > 0.0;
            if show {
                t.update(&self.scratch[..n], radius);
            }
            if show || t.shown {
                let mut node = t.instance.clone();
                node.set_visible(show);
                node.set_transparency(1.0 - opacity);
                t.shown = show;
            }
        }
        if let Some((_, mm)) = self.debug.as_mut() {
            let n = rope.interpolated(alpha, &mut self.scratch);
            mm.set_visible_instance_count(n as i32);
            for (i, p) in self.scratch[..n].iter().enumerate() {
                mm.set_instance_transform(i as i32, Transform3D::new(Basis::IDENTITY, vector3(*p)));
            }
        }
        self.tube.is_some() && framed.is_some()
    }

    /// The tube's vertices to write, after [`Self::render_prepare`] said they are due.
    pub(super) fn tube_vertices(&mut self) -> Option<TubeVertices<'_>> {
        self.tube.as_mut().map(TubeMesh::vertices)
    }

    /// Uploads the tube written since [`Self::render_prepare`].
    pub(super) fn render_upload(&mut self) {
        if let Some(t) = self.tube.as_mut() {
            t.upload();
            self.tube_uploads += 1;
        }
    }

    /// Writes the points as drawn this frame (see [`Self::get_interpolated_points`]) into `out`
    /// without allocating; returns how many (0 before the rope is built).
    pub(crate) fn interpolated_points(&self, out: &mut [Vec3]) -> usize {
        let Some(rope) = self.rope.as_deref() else {
            return 0;
        };
        let engine = Engine::singleton();
        let alpha = if engine.is_in_physics_frame() {
            1.0
        } else {
            engine.get_physics_interpolation_fraction() as f32
        };
        rope.interpolated(alpha, out)
    }

    /// Returns the number of point slots (0 before the rope is built).
    pub(crate) fn point_capacity(&self) -> usize {
        self.rope.as_deref().map_or(0, Rope::capacity)
    }

    pub(super) fn warn_once(&mut self, kind: u32, message: &str) {
        let node = self.to_gd();
        self.warnings.once(&node, kind, message);
    }

    /// Prints `message` once for `kind` when there is one, else lets `kind` print again.
    pub(super) fn warn_or_clear(&mut self, kind: u32, message: Option<String>) {
        let node = self.to_gd();
        self.warnings.once_or_clear(&node, kind, message);
    }

    pub(super) fn clear_warning(&mut self, kind: u32) {
        self.warnings.clear(kind);
    }
}

/// A rope's tube framing for one drawing, borrowed out of its node (no engine object in it), so that
/// many ropes' framing can be shared between threads (see [`RopeSimulation::render_prepare`]).
pub(super) struct RopeFraming<'a> {
    rope: &'a Rope,
    scratch: &'a mut Vec<Vec3>,
    tube: Option<TubeFraming<'a>>,
    radius: f32,
    alpha: f32,
    /// After [`RopeFraming::frame`]: the tube's vertices to write, `None` when it stays as drawn.
    pub framed: Option<usize>,
}

impl RopeFraming<'_> {
    /// Frames the tube along the rope's points as drawn (interpolated by the fraction given).
    pub fn frame(&mut self) {
        if let Some(t) = self.tube.as_mut() {
            let n = self.rope.interpolated(self.alpha, self.scratch);
            self.framed = t.frame(&self.scratch[..n], self.radius);
        }
    }
}
