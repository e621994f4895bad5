//! RopeSimulation's script API: its signals, the setters behind its properties, and the methods
//! GDScript calls (cutting, stepping by hand, reading points, presets, recording and replay).

use super::*;

#[godot_api]
impl RopeSimulation {
    /// Returns [member exclude_anchor_body].
    #[func]
    pub fn is_anchor_body_excluded(&self) -> bool {
        self.exclude_anchor_body
    }

    /// Returns [member apply_tension_to_body].
    #[func]
    pub fn is_tension_applied_to_body(&self) -> bool {
        self.apply_tension_to_body
    }

    /// Returns [member can_sleep].
    #[func]
    pub fn is_able_to_sleep(&self) -> bool {
        self.can_sleep
    }

    /// Returns [member ground_enabled].
    #[func]
    pub fn is_ground_enabled(&self) -> bool {
        self.ground_enabled
    }

    /// Returns [member tube_enabled].
    #[func]
    pub fn is_tube_enabled(&self) -> bool {
        self.tube_enabled
    }

    /// Returns [member debug_draw].
    #[func]
    pub fn is_debug_draw_enabled(&self) -> bool {
        self.debug_draw
    }

    /// Emitted once when the rope is split: by a cutter, by [method cut_at] or [method cut_along], or
    /// by tearing. `index` is the segment that was cut (points `0..index` stay attached), `position`
    /// where (world): the point of the rope a cutter or [method cut_along] touched.
    #[signal]
    pub(super) fn rope_cut(index: i32, position: Vector3);
    /// Emitted (after [signal rope_cut]) when the split was a tear from overstretching.
    #[signal]
    pub(super) fn rope_torn(index: i32, position: Vector3);
    /// Emitted when the piece cut off has faded away.
    #[signal]
    pub(super) fn cut_piece_faded();
    /// Emitted when [member length] reaches the length it was growing or shrinking toward.
    #[signal]
    pub(super) fn length_reached(length: f32);
    /// Emitted when a replay started by [method start_replay] has played every recorded step.
    #[signal]
    pub(super) fn replay_finished();
    /// Emitted when the rope falls asleep or wakes ([member sleeping] tells which), as
    /// `RigidBody3D`'s signal of the same name.
    #[signal]
    pub(super) fn sleeping_state_changed();

    /// [member editor_preview] value: simulate in the editor only while selected.
    #[constant]
    const EDITOR_PREVIEW_WHILE_SELECTED: i64 = EditorPreview::WhileSelected as i64;
    /// [member editor_preview] value: always simulate in the editor.
    #[constant]
    const EDITOR_PREVIEW_ALWAYS: i64 = EditorPreview::Always as i64;
    /// [member editor_preview] value: never simulate in the editor.
    #[constant]
    const EDITOR_PREVIEW_NEVER: i64 = EditorPreview::Never as i64;

    /// Returns whether the rope is being simulated in the editor right now (false in the game):
    /// what [member editor_preview] and the editor's selection decide.
    #[func(rename = _is_editor_previewing)]
    pub fn is_editor_previewing(&self) -> bool {
        self.in_editor
            && match self.editor_preview {
                EditorPreview::Always => true,
                EditorPreview::WhileSelected => self.editor_selected,
                EditorPreview::Never => false,
            }
    }

    // --- properties -------------------------------------------------------------------------

    /// Sets [member anchor_node] (see the property for its range and effect).
    #[func]
    pub(super) fn set_anchor_node(&mut self, path: NodePath) {
        self.anchor_named = !path.is_empty();
        self.anchor_node = path;
        self.anchor_cache = None;
        self.anchor_skeleton = None;
        self.bone_cache = -2;
        self.exclude_dirty = true;
        self.clear_warning(warn::ANCHOR_NODE);
    }

    /// Sets [member anchor_bone] (see the property for its range and effect).
    #[func]
    pub(super) fn set_anchor_bone(&mut self, bone: GString) {
        self.anchor_bone = bone;
        self.bone_cache = -2;
        self.clear_warning(warn::ANCHOR_BONE);
    }

    /// Sets [member exclude_anchor_body] (see the property for its range and effect).
    #[func]
    pub(super) fn set_exclude_anchor_body(&mut self, on: bool) {
        self.exclude_anchor_body = on;
        self.exclude_dirty = true;
    }

    /// Sets [member end_node] (see the property for its range and effect).
    #[func]
    pub(super) fn set_end_node(&mut self, path: NodePath) {
        self.end_named = !path.is_empty();
        self.end_node = path;
        self.base_mut().notify_property_list_changed();
        self.end_detached = false;
        self.exclude_dirty = true;
        self.clear_warning(warn::END_NODE);
    }

    /// Sets [member point_count] (see the property for its range and effect).
    #[func]
    pub(super) fn set_point_count(&mut self, count: i32) {
        let (lo, hi) = (CAPACITY.min as i32, CAPACITY.max as i32);
        let max = self.capacity.clamp(lo, hi);
        let (fixed, message) = int_accepted("point_count", count, lo, max, " (the point slots)");
        self.warn_or_clear(warn::POINT_COUNT, message);
        self.point_count = fixed;
        if self.rope.is_some() {
            let length = (fixed - 1) as f32 * self.segment_length;
            self.set_length(length);
        }
    }

    /// Sets [member capacity] (see the property for its range and effect).
    #[func]
    pub(super) fn set_capacity(&mut self, capacity: i32) {
        let (lo, hi) = (CAPACITY.min as i32, CAPACITY.max as i32);
        let (fixed, message) = int_accepted("capacity", capacity, lo, hi, "");
        self.warn_or_clear(warn::CAPACITY, message);
        if fixed == self.capacity {
            return;
        }
        self.capacity = fixed;
        self.point_count = self.point_count.min(fixed);
        if self.rope.is_some() {
            self.build();
        }
    }

    /// Sets [member segment_length] (see the property for its range and effect).
    #[func]
    pub(super) fn set_segment_length(&mut self, v: f32) {
        self.segment_length = v;
        self.sync_params();
    }

    /// Returns [member length] (see the property).
    #[func]
    pub(super) fn get_length(&self) -> f32 {
        match &self.rope {
            Some(r) => r.length(),
            None => self
                .pending_length
                .unwrap_or((self.point_count - 1) as f32 * self.segment_length),
        }
    }

    /// Sets [member length] (see the property for its range and effect).
    #[func]
    pub(super) fn set_length(&mut self, length: f32) {
        if !length.is_finite() || length < 0.0 {
            self.warn_once(
                warn::LENGTH,
                &format!("length {length} is invalid; accepted 0 or more metres (up to what capacity holds); ignored"),
            );
            return;
        }
        self.clear_warning(warn::LENGTH);
        match self.rope.as_deref_mut() {
            Some(r) => {
                r.set_target_length(length);
            }
            None => self.pending_length = Some(length),
        }
    }

    /// Sets [member length_speed] (see the property for its range and effect).
    #[func]
    pub(super) fn set_length_speed(&mut self, v: f32) {
        self.length_speed = v;
        self.sync_params();
    }

    /// Sets [member damping] (see the property for its range and effect).
    #[func]
    pub(super) fn set_damping(&mut self, v: f32) {
        self.damping = v;
        self.sync_params();
    }

    /// Sets [member iterations] (see the property for its range and effect).
    #[func]
    pub(super) fn set_iterations(&mut self, v: i32) {
        self.iterations = v;
        self.sync_params();
    }

    /// Sets [member substeps] (see the property for its range and effect).
    #[func]
    pub(super) fn set_substeps(&mut self, v: i32) {
        self.substeps = v;
        self.sync_params();
    }

    /// Sets [member gravity_scale] (see the property for its range and effect).
    #[func]
    pub(super) fn set_gravity_scale(&mut self, v: f32) {
        self.gravity_scale = v;
        self.sync_params();
    }

    /// Sets [member stretch_limit] (see the property for its range and effect).
    #[func]
    pub(super) fn set_stretch_limit(&mut self, v: f32) {
        self.stretch_limit = v;
        self.sync_params();
    }

    /// Sets [member point_mass] (see the property for its range and effect).
    #[func]
    pub(super) fn set_point_mass(&mut self, v: f32) {
        self.point_mass = v;
        self.sync_params();
    }

    /// Sets [member ground_enabled] (see the property for its range and effect).
    #[func]
    pub(super) fn set_ground_enabled(&mut self, v: bool) {
        self.ground_enabled = v;
        self.base_mut().notify_property_list_changed();
        self.sync_params();
    }

    /// Sets [member ground_height] (see the property for its range and effect).
    #[func]
    pub(super) fn set_ground_height(&mut self, v: f32) {
        self.ground_height = v;
        self.sync_params();
    }

    /// Sets [member radius] (see the property for its range and effect).
    #[func]
    pub(super) fn set_radius(&mut self, v: f32) {
        self.radius = v;
        self.sync_params();
    }

    /// Sets [member can_sleep] (see the property); false wakes a sleeping rope.
    #[func]
    pub(super) fn set_can_sleep(&mut self, on: bool) {
        self.can_sleep = on;
        self.base_mut().notify_property_list_changed();
        self.sync_params();
    }

    /// Sets [member sleep_distance] (see the property for its range and effect).
    #[func]
    pub(super) fn set_sleep_distance(&mut self, v: f32) {
        self.sleep_distance = v;
        self.sync_params();
    }

    /// Returns [member sleeping] (see the property).
    #[func]
    pub(super) fn is_sleeping(&self) -> bool {
        self.rope.as_deref().is_some_and(Rope::is_sleeping)
    }

    /// Sets [member sleeping] (see the property): false wakes the rope, true puts it to sleep where
    /// it is. [signal sleeping_state_changed] follows at the rope's next physics step.
    #[func]
    pub(super) fn set_sleeping(&mut self, asleep: bool) {
        if let Some(rope) = self.rope.as_deref_mut() {
            if asleep {
                rope.sleep();
            } else {
                rope.wake();
            }
        }
    }

    /// Sets [member friction] (see the property for its range and effect).
    #[func]
    pub(super) fn set_friction(&mut self, v: f32) {
        self.friction = v;
        self.sync_params();
    }

    /// Sets [member tear_ratio] (see the property for its range and effect).
    #[func]
    pub(super) fn set_tear_ratio(&mut self, v: f32) {
        self.tear_ratio = v;
        self.sync_params();
    }

    /// Sets [member fade_time] (see the property for its range and effect).
    #[func]
    pub(super) fn set_fade_time(&mut self, v: f32) {
        self.fade_time = v;
        self.sync_params();
    }

    /// Sets [member tube_enabled] (see the property for its range and effect).
    #[func]
    pub(super) fn set_tube_enabled(&mut self, on: bool) {
        self.tube_enabled = on;
        self.base_mut().notify_property_list_changed();
        self.rebuild_visuals();
    }

    /// Sets [member tube_sides] (see the property for its range and effect).
    #[func]
    pub(super) fn set_tube_sides(&mut self, sides: i32) {
        let (lo, hi) = (TUBE_SIDES.min as i32, TUBE_SIDES.max as i32);
        let (fixed, message) = int_accepted("tube_sides", sides, lo, hi, "");
        self.warn_or_clear(warn::TUBE, message);
        self.tube_sides = fixed;
        self.rebuild_visuals();
    }

    /// Sets [member smoothing] (see the property for its range and effect).
    #[func]
    pub(super) fn set_smoothing(&mut self, rings: i32) {
        let (lo, hi) = (SMOOTHING.min as i32, SMOOTHING.max as i32);
        let (fixed, message) = int_accepted("smoothing", rings, lo, hi, "");
        self.warn_or_clear(warn::SMOOTHING, message);
        self.smoothing = fixed;
        self.rebuild_visuals();
    }

    /// Sets [member material] (see the property for its range and effect).
    #[func]
    pub(super) fn set_material(&mut self, material: Option<Gd<Material>>) {
        self.material = material;
        let m = self.material.clone();
        if let Some(t) = self.tube.as_mut() {
            t.set_material(m.as_ref());
        }
        if let Some(t) = self.loose_tube.as_mut() {
            t.set_material(m.as_ref());
        }
    }

    /// Sets [member debug_draw] (see the property for its range and effect).
    #[func]
    pub(super) fn set_debug_draw(&mut self, on: bool) {
        self.debug_draw = on;
        self.rebuild_visuals();
    }

    /// Sets [member preset] (see the property for its range and effect).
    #[func]
    pub(super) fn set_preset(&mut self, preset: Option<Gd<RopePreset>>) {
        self.preset = preset;
        if let Some(p) = self.preset.clone() {
            let p = p.bind();
            self.apply_values(p.iterations, p.segment_length);
        }
    }

    /// Sets [member presets_file] (see the property for its range and effect).
    #[func]
    pub(super) fn set_presets_file(&mut self, path: GString) {
        self.presets_file = path;
        self.table = None;
        self.clear_warning(warn::PRESETS_FILE);
    }

    /// Returns [member tension] (see the property).
    #[func]
    pub(super) fn get_tension(&self) -> Vector3 {
        self.rope
            .as_ref()
            .map_or(Vector3::ZERO, |r| vector3(r.tension()))
    }

    // --- methods ----------------------------------------------------------------------------

    /// Returns the magnitude of [member tension], in newtons.
    #[func]
    pub fn get_tension_magnitude(&self) -> f32 {
        self.get_tension().length()
    }

    /// Cuts the rope at segment `index` (between points `index` and `index + 1`); the part beyond falls
    /// and fades, and [signal rope_cut] is emitted. Returns false (and does nothing) when `index` is not a
    /// segment of the rope.
    #[func]
    pub fn cut_at(&mut self, index: i32) -> bool {
        let Ok(i) = usize::try_from(index) else {
            return false;
        };
        let cut = self.rope.as_deref_mut().and_then(|r| r.cut_at(i));
        self.report_cut(cut)
    }

    /// Cuts the rope where a capsule of [param radius] metres around the path from [param from] to
    /// [param to] (world positions) first touches it, going from [param from]: for hitscan weapons
    /// (a ray with [param radius] 0, or a thick shot). The part beyond falls and fades, and [signal
    /// rope_cut] is emitted with the point of the rope where the capsule met it. Returns whether it
    /// cut: false (and nothing happens) when the capsule misses the rope or a value is not finite.
    /// The cut-off piece is not cut.
    #[func]
    pub fn cut_along(&mut self, from: Vector3, to: Vector3, radius: f32) -> bool {
        let cut = self
            .rope
            .as_deref_mut()
            .and_then(|r| r.cut_along(vec3(from), vec3(to), radius));
        self.report_cut(cut)
    }

    /// Advances the rope by one step of `delta` seconds now, as the physics step does (sampling the
    /// anchor, the world and the end). For tools and benchmarks that drive the rope themselves: turn
    /// physics processing off first, or the rope also steps every physics frame.
    #[func(rename = _advance)]
    pub fn advance(&mut self, delta: f32) {
        self.physics_step(delta);
    }

    /// Advances every rope of [param ropes] by one step of [param delta] seconds now, in one batch,
    /// as the physics tick steps the ropes of a world (each rope's anchor, world and end sampled
    /// first; ropes with the same point and iteration counts and no solid collider near are solved
    /// side by side). For tools and benchmarks that drive many ropes themselves: turn their physics
    /// processing off first. Freed ropes in the array are skipped, and a rope listed more than once
    /// is stepped once. Passing the same array every tick is cheapest: the ropes of the array it was
    /// last given are remembered index by index, and an element still holding the same rope is not
    /// converted again (changes to the array between calls are followed).
    #[func(rename = _advance_all)]
    pub fn advance_all(ropes: Array<Gd<RopeSimulation>>, delta: f32) {
        server::advance_now(&ropes, delta);
    }

    /// Rebuilds the tube mesh (and debug points) from the rope now, as every rendered frame does.
    #[func(rename = _refresh_mesh)]
    pub fn refresh_mesh(&mut self) {
        self.drawn_asleep = false;
        self.render();
    }

    /// Rebuilds the tube mesh (and debug points) of every rope of [param ropes] now, as each
    /// rendered frame draws the ropes of a world together: each rope frames its tube, the tubes'
    /// vertices are written (on this thread and the ropes' batch thread once there are 20,000 or
    /// more), then each rope uploads its tube. Each rope is drawn as [method refresh_mesh] would
    /// draw it, to the same vertices. For tools and benchmarks that draw many ropes themselves:
    /// turn their processing off first, or they are also drawn every frame. Freed ropes in the
    /// array are skipped, and a rope listed more than once is drawn once.
    #[func(rename = _refresh_meshes)]
    pub fn refresh_meshes(ropes: Array<Gd<RopeSimulation>>) {
        server::draw_now(&ropes);
    }

    /// Returns the substeps the rope now takes per physics step: [member substeps], or more while it
    /// is so taut for its segment length that fewer would let it jitter (short segments under high
    /// tension); it drops back half a second after the tension does.
    #[func]
    pub fn get_substeps_in_use(&self) -> i32 {
        self.rope
            .as_ref()
            .map_or(self.substeps, |r| r.substeps_in_use() as i32)
    }

    /// Returns how many times the rope's tube has been rebuilt and uploaded to the
    /// `RenderingServer` since the node was made. A rope at rest (no point moved more than 10 µm
    /// since the last upload) keeps its tube as drawn and does not count; a moving rope uploads
    /// once per drawn frame.
    #[func(rename = _get_tube_upload_count)]
    pub fn get_tube_upload_count(&self) -> i64 {
        self.tube_uploads
    }

    /// Returns the positions of the tube's vertices as last written for the `RenderingServer`
    /// (world metres, ring after ring, [member tube_sides] + 1 vertices a ring; the rings the rope
    /// reaches and, after it shrank, those it left). Empty without a tube or before it is first
    /// drawn. Allocates: for tests and tools.
    #[func(rename = _get_tube_vertices)]
    pub fn get_tube_vertices(&self) -> PackedVector3Array {
        self.tube
            .as_ref()
            .map(TubeMesh::written_positions)
            .unwrap_or_default()
    }

    /// Returns how many collider queries (`PhysicsDirectSpaceState3D.intersect_shape` calls) all the
    /// ropes have run since the library was loaded. The ropes of a world stepped by the physics
    /// tick (or by [method advance_all]) share their queries: one per tick for ropes whose query
    /// boxes lie within 2 m of each other, one per such cluster for ropes far apart, and more only
    /// when a query comes back full (256 shapes), when the cluster is split in two and queried
    /// again. A cluster with a [member cutter_mask] takes a second query for its cutters, over its
    /// box grown by how far a cutter can move in two ticks (at 1000 m/s). A rope stepped alone ([method
    /// advance]) runs its own queries. Ropes with [member collision_mask] and [member cutter_mask]
    /// at 0 take none. Read-only; for tests and profiling.
    #[func(rename = _get_collider_query_count)]
    pub fn get_collider_query_count() -> i64 {
        colliders::query_count()
    }

    /// Returns the number of active points.
    #[func]
    pub fn get_active_point_count(&self) -> i32 {
        self.rope.as_deref().map_or(0, |r| r.point_count() as i32)
    }

    /// Returns the points' world positions after the last physics step (allocates: for scripts and
    /// tools, not for per-frame rendering).
    #[func]
    pub fn get_points(&self) -> PackedVector3Array {
        self.rope
            .as_ref()
            .map(|r| r.points().iter().map(|p| vector3(*p)).collect())
            .unwrap_or_default()
    }

    /// Returns the points' world positions as drawn this frame: between the last two physics steps by
    /// the engine's physics interpolation fraction (the tube and [EntwineRopeBoneChain] use these; inside a
    /// physics frame, the last step's). Allocates: for scripts and tools.
    #[func]
    pub fn get_interpolated_points(&self) -> PackedVector3Array {
        let Some(rope) = self.rope.as_deref() else {
            return PackedVector3Array::new();
        };
        let mut out = vec![Vec3::ZERO; rope.point_count()];
        let n = self.interpolated_points(&mut out);
        out[..n].iter().map(|p| vector3(*p)).collect()
    }

    /// Returns the points of the piece cut off last, while it is fading (empty otherwise).
    #[func]
    pub fn get_loose_points(&self) -> PackedVector3Array {
        self.rope
            .as_ref()
            .map(|r| r.loose_points().iter().map(|p| vector3(*p)).collect())
            .unwrap_or_default()
    }

    /// Returns the largest segment stretch after the last step, as a fraction of the segment length
    /// (0.05 = 5 % longer than at rest).
    #[func]
    pub fn get_max_stretch(&self) -> f32 {
        self.rope.as_deref().map_or(0.0, Rope::max_stretch)
    }

    /// Lays the rope out again, straight down from the anchor, at rest.
    #[func]
    pub fn reset_rope(&mut self) {
        let anchor = self.sample_anchor().unwrap_or(Vec3::ZERO);
        if let Some(r) = self.rope.as_deref_mut() {
            let l = r.target_length();
            r.reset(anchor, Vec3::NEG_Y, l);
        }
    }

    /// Applies the preset called `name` from [member presets_file] (or the built-in table: `"low"`,
    /// `"mid"`, `"high"`): its iterations and segment length. Returns false when there is no such preset.
    #[func]
    pub fn apply_preset(&mut self, name: GString) -> bool {
        let found = self
            .preset_table()
            .get(&name.to_string())
            .map(|p| (p.iterations as i32, p.segment_length));
        match found {
            Some((iterations, segment)) => {
                self.clear_warning(warn::PRESET);
                self.apply_values(iterations, segment);
                true
            }
            None => {
                let names = self.preset_names().join(", ");
                self.warn_once(
                    warn::PRESET,
                    &format!("apply_preset: no preset named '{name}'; available: {names}"),
                );
                false
            }
        }
    }

    /// Returns the names of the available presets.
    #[func]
    pub fn get_preset_names(&mut self) -> PackedStringArray {
        self.preset_names().iter().map(GString::from).collect()
    }

    /// Returns the name of the preset meant for a runner at `speed` m/s.
    #[func]
    pub fn preset_for_speed(&mut self, speed: f32) -> GString {
        GString::from(self.preset_table().for_speed(speed).name.as_str())
    }

    /// Returns the preset called `name` as a resource (null when there is none).
    #[func]
    pub fn find_preset(&mut self, name: GString) -> Option<Gd<RopePreset>> {
        self.preset_table()
            .get(&name.to_string())
            .map(RopePreset::from_core)
    }

    /// Starts recording the anchor path (and the length target) from the rope's current state, for at
    /// most `max_seconds` of physics steps (allocated now). Stops any replay.
    #[func]
    pub fn start_recording(&mut self, max_seconds: f32) {
        self.replaying = false;
        let Some(rope) = self.rope.as_deref() else {
            return;
        };
        let tps = Engine::singleton().get_physics_ticks_per_second().max(1) as f32;
        let seconds = if max_seconds.is_finite() {
            max_seconds.clamp(0.0, 3600.0)
        } else {
            60.0
        };
        self.recorder.start(rope, (seconds * tps).ceil() as usize);
    }

    /// Returns true while recording.
    #[func]
    pub fn is_recording(&self) -> bool {
        self.recorder.is_recording()
    }

    /// Stops recording and keeps the recording for [method start_replay]. Returns the steps recorded.
    #[func]
    pub fn stop_recording(&mut self) -> i32 {
        self.recording = self.recorder.stop();
        self.recording
            .as_ref()
            .map_or(0, |r| r.samples.len() as i32)
    }

    /// Puts the rope back in its state when recording started and replays the recorded anchor path, one
    /// step per physics frame, ignoring the live anchor; [signal replay_finished] is emitted at the end.
    /// Returns false when there is no recording.
    #[func]
    pub fn start_replay(&mut self) -> bool {
        let (Some(rec), Some(rope)) = (self.recording.as_ref(), self.rope.as_deref_mut()) else {
            return false;
        };
        self.replayer.begin(rec, rope);
        self.replaying = true;
        true
    }

    /// Returns true while a replay runs.
    #[func]
    pub fn is_replaying(&self) -> bool {
        self.replaying
    }

    /// Returns how many steps the current recording holds (0 without one).
    #[func]
    pub fn get_recorded_steps(&self) -> i32 {
        self.recording
            .as_ref()
            .map_or(0, |r| r.samples.len() as i32)
    }
}

impl RopeSimulation {
    /// Reports a cut made from a script ([method cut_at], [method cut_along]): the end lets go
    /// and [signal rope_cut] is emitted. Returns whether there was a cut.
    fn report_cut(&mut self, cut: Option<entwine_core::rope::Cut>) -> bool {
        let Some(cut) = cut else {
            return false;
        };
        self.end_detached = self.end_named;
        self.signals()
            .rope_cut()
            .emit(cut.index as i32, vector3(cut.position));
        true
    }
}
