//! `RopeSimulation`: the core's Verlet rope as a `Node3D`, hung from a node or a skeleton bone.

mod bone_chain;
mod colliders;
mod mesh;
mod preset;
mod server;

use entwine_core::rope::batch::{BatchEntry, RopeBatch, StepInput};
use entwine_core::rope::record::Replayer;
use entwine_core::rope::{
    AnchorSample, CutReason, EndAttachment, ParamIssue, PresetTable, Recorder, Recording, Rope,
    RopeParams, StepEvents, World, DEFAULT_CAPACITY, MAX_CAPACITY,
};
use glam::Vec3;
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::{
    CollisionObject3D, Engine, FileAccess, INode3D, Material, MultiMesh, MultiMeshInstance3D,
    Node3D, PhysicsDirectSpaceState3D, ProjectSettings, RigidBody3D, Skeleton3D, SphereMesh,
    StandardMaterial3D,
};
use godot::prelude::*;

use crate::warnings::Warnings;

pub use bone_chain::{RopeBoneChain, RopeChainFit};
pub use preset::RopePreset;

use crate::convert::{vec3, vector3};
use colliders::{Gatherer, MAX_COLLIDERS};
use mesh::TubeMesh;

/// Extra room around the rope's bounds for the collider query, metres (covers a step of motion).
const QUERY_MARGIN: f32 = 0.5;
/// The same with cutters: a cutter up to 1.5 m past the rope after crossing it since the last frame
/// (90 m/s at 60 Hz) is still found and swept back across it.
const CUTTER_QUERY_MARGIN: f32 = 1.5;

/// A Verlet rope that hangs from a hand bone or a node: it swings, drags on the ground, grows and
/// shrinks, collides with the physics world without tunnelling, and can be cut.
///
/// The rope starts at [member anchor_node] (a [Node3D], or a [Skeleton3D] with [member anchor_bone])
/// plus [member anchor_offset] in that node's or bone's space; without an anchor node it hangs from this
/// node. Its far end hangs free, or is pinned to [member end_node]; when that node is a [RigidBody3D]
/// and [member apply_tension_to_body] is on, the rope pulls the body instead (two-way coupling).
///
/// Each physics frame the anchor is sampled once (the rope follows the pose of the previous frame, as
/// a rope held by an animated hand should), the rope takes one fixed step of the physics tick (split
/// into [member substeps]), and the tube mesh is interpolated between the last two steps every rendered
/// frame. Each of the [member iterations] solves every segment's length at once (a direct solve along
/// the chain), so a rope pinned at both ends hangs as a catenary at its true length; when a rope is so
/// taut for its segment length that one step would make it jitter, it takes more substeps by itself
/// ([method get_substeps_in_use]).
///
/// All the ropes of a world are stepped together, in one batch, right after every node's
/// [method Node._physics_process] of the tick (so an anchor moved by any script during the tick is
/// followed in that tick); a paused rope, or one with physics processing off, is not stepped. Its
/// signals are emitted once every rope of the batch has stepped.
///
/// The points and the segments between them (as capsules of [member radius]) keep out of the ground
/// plane and of the static, kinematic and rigid bodies on [member collision_mask] (a kinematic body
/// moved by a script is seen where the script put it; spheres, boxes, capsules, cylinders, convex hulls
/// by their bounds, world boundaries); every point's path over a step is swept against them, so a fast
/// anchor cannot pull the rope through a thin wall, and a rope drawn over an edge slides around it. A
/// body or an [Area3D] on [member cutter_mask] that touches a segment cuts the rope there: its motion
/// since the last frame is swept (a [RigidBody3D]'s own velocities, else the change of its pose), so a
/// spinning blade or a bullet that crosses the rope between two frames still cuts. The loose part falls,
/// fades over [member fade_time] and [signal rope_cut] is emitted once.
///
/// [member length] grows or shrinks the rope at [member length_speed] without allocating: [member
/// capacity] point slots are allocated once. Record the anchor path with [method start_recording] and
/// play it back with [method start_replay]: the replayed rope matches the recorded one bit for bit.
///
/// Bad values (0 or 1 points, non-positive lengths, damping outside (0, 1], 0 iterations, NaN anchors…)
/// are clamped or ignored with one warning naming the property and its range.
///
/// Cost: the simulation and the tube update allocate nothing per frame. The collider query does (Godot
/// returns shape-query results as an [Array] of [Dictionary]s): a rope that only needs the ground can set
/// [member collision_mask] and [member cutter_mask] to 0 and skip it.
///
/// **In the editor** the rope hangs and swings in the viewport as it would in the game, following
/// its anchors as they are moved (see [member editor_preview]). The preview takes no physics
/// queries (it collides with the ground plane only), pulls no bodies, records nothing, and its
/// state and tube are never saved into the scene.
#[derive(GodotClass)]
#[class(tool, init, base = Node3D)]
pub struct RopeSimulation {
    base: Base<Node3D>,

    /// The node the rope hangs from: any [Node3D], or a [Skeleton3D] together with [member anchor_bone].
    /// Empty: the rope hangs from this node.
    #[export_group(name = "Anchor")]
    #[export]
    #[var(set = set_anchor_node)]
    anchor_node: NodePath,
    /// Bone of the anchor [Skeleton3D] the rope hangs from (e.g. `RightHand`). Empty: the node itself.
    #[export]
    #[var(set = set_anchor_bone)]
    anchor_bone: GString,
    /// Offset of the rope's start in the anchor node's (or bone's) own space, metres (finite, within
    /// ±1e6; else zero, with one warning).
    #[export]
    anchor_offset: Vector3,
    /// Keep the points out of the anchor's own physics body (the character holding the rope).
    #[export]
    #[init(val = true)]
    #[var(set = set_exclude_anchor_body)]
    exclude_anchor_body: bool,

    /// Node the far end is attached to. Empty: the end hangs free.
    #[export_group(name = "End")]
    #[export]
    #[var(set = set_end_node)]
    end_node: NodePath,
    /// Offset of the end attachment in the end node's space, metres (finite, within ±1e6; else
    /// zero, with one warning).
    #[export]
    end_offset: Vector3,
    /// When [member end_node] is a [RigidBody3D]: the rope pulls the body with its tension (applied as a
    /// central force each physics frame) instead of pinning it.
    #[export]
    apply_tension_to_body: bool,

    /// Number of points the rope starts with (2 to [member capacity]); its length is
    /// `(point_count − 1) × segment_length`. Setting it at runtime grows or shrinks the rope smoothly.
    #[export_group(name = "Rope")]
    #[export(range = (2.0, 1024.0, 1.0))]
    #[init(val = 12)]
    #[var(set = set_point_count)]
    point_count: i32,
    /// Point slots allocated once (2–1024). Changing it after the rope was built rebuilds it.
    #[export(range = (2.0, 1024.0, 1.0))]
    #[init(val = DEFAULT_CAPACITY as i32)]
    #[var(set = set_capacity)]
    capacity: i32,
    /// Rest length of one segment (0.01–10 m).
    #[export(range = (0.01, 10.0, 0.01, suffix = "m"))]
    #[init(val = 0.3)]
    #[var(set = set_segment_length)]
    segment_length: f32,
    /// The rope's length in metres. Reading gives the current length; setting starts growing or
    /// shrinking toward the new value at [member length_speed] (clamped to what [member capacity] holds).
    #[var(get = get_length, set = set_length)]
    #[allow(dead_code)] // backs the property; the value lives in the rope
    length: f32,
    /// How fast [member length] changes, m/s.
    #[export(range = (0.001, 100.0, 0.01, suffix = "m/s"))]
    #[init(val = 2.0)]
    #[var(set = set_length_speed)]
    length_speed: f32,

    /// Fraction of velocity kept each step, in (0, 1] (0.99: long swings; lower: heavier air).
    #[export_group(name = "Simulation")]
    #[export(range = (0.001, 1.0, 0.001))]
    #[init(val = 0.99)]
    #[var(set = set_damping)]
    damping: f32,
    /// Distance-constraint iterations per substep (1–64): more is stiffer; see the presets.
    #[export(range = (1.0, 64.0, 1.0))]
    #[init(val = 4)]
    #[var(set = set_iterations)]
    iterations: i32,
    /// Substeps per physics tick (1–16).
    #[export(range = (1.0, 16.0, 1.0))]
    #[init(val = 1)]
    #[var(set = set_substeps)]
    substeps: i32,
    /// Multiplier of the project's default gravity (-10..=10; outside, clamped with one warning).
    #[export(range = (-10.0, 10.0, 0.01))]
    #[init(val = 1.0)]
    #[var(set = set_gravity_scale)]
    gravity_scale: f32,
    /// For a rope whose far end is free: after the iterations, walking from the anchor, no segment is
    /// left longer than this fraction over its rest length (0.03 = 3 %; 0 = off). A safety net for
    /// violent jerks; the iterations themselves keep the rope within a fraction of a percent.
    #[export(range = (0.0, 1.0, 0.001))]
    #[init(val = 0.03)]
    #[var(set = set_stretch_limit)]
    stretch_limit: f32,
    /// Mass of one point, kg: sets the tension and how hard the rope pulls an attached body.
    #[export(range = (0.0001, 100.0, 0.001, suffix = "kg"))]
    #[init(val = 0.05)]
    #[var(set = set_point_mass)]
    point_mass: f32,

    /// Keep the points above [member ground_height] (cheap; works without any physics body).
    #[export_group(name = "Collision")]
    #[export]
    #[init(val = true)]
    #[var(set = set_ground_enabled)]
    ground_enabled: bool,
    /// Height of the ground plane, metres (world Y).
    #[export]
    #[var(set = set_ground_height)]
    ground_height: f32,
    /// Physics layers whose static, kinematic and rigid bodies the rope collides with (0: none).
    #[export(flags_3d_physics)]
    #[init(val = 1)]
    collision_mask: u32,
    /// Thickness of the rope for collisions and the tube, metres (0–1).
    #[export(range = (0.0, 1.0, 0.001, suffix = "m"))]
    #[init(val = 0.03)]
    #[var(set = set_radius)]
    radius: f32,
    /// Fraction of the sliding velocity a contact removes each step (0–1).
    #[export(range = (0.0, 1.0, 0.01))]
    #[init(val = 0.3)]
    #[var(set = set_friction)]
    friction: f32,

    /// Physics layers whose bodies and areas cut the rope on contact (0: nothing cuts).
    #[export_group(name = "Cutting")]
    #[export(flags_3d_physics)]
    cutter_mask: u32,
    /// A segment stretched past this ratio of its rest length tears (0: never; else 1.01–100).
    #[export(range = (0.0, 100.0, 0.01))]
    #[var(set = set_tear_ratio)]
    tear_ratio: f32,
    /// Seconds a cut-off piece takes to fade away.
    #[export(range = (0.0, 60.0, 0.01, suffix = "s"))]
    #[init(val = 1.5)]
    #[var(set = set_fade_time)]
    fade_time: f32,

    /// Draw the rope as a tube mesh.
    #[export_group(name = "Rendering")]
    #[export]
    #[init(val = true)]
    #[var(set = set_tube_enabled)]
    tube_enabled: bool,
    /// Vertices around the tube (3–64).
    #[export(range = (3.0, 64.0, 1.0))]
    #[init(val = 8)]
    #[var(set = set_tube_sides)]
    tube_sides: i32,
    /// Rings per segment: 1 draws straight segments, more draws a Catmull-Rom curve through the points.
    #[export(range = (1.0, 8.0, 1.0))]
    #[init(val = 3)]
    #[var(set = set_smoothing)]
    smoothing: i32,
    /// Material of the tube (a default one when empty).
    #[export]
    #[var(set = set_material)]
    material: Option<Gd<Material>>,
    /// Draw a small sphere on every point.
    #[export]
    #[var(set = set_debug_draw)]
    debug_draw: bool,

    /// A preset to apply (its iterations and segment length); see [RopePreset].
    #[export_group(name = "Presets")]
    #[export]
    #[var(set = set_preset)]
    preset: Option<Gd<RopePreset>>,
    /// A RON file with a preset table (same format as `addons/entwine/presets/rope_presets.ron`).
    /// Empty: the built-in speed table.
    #[export(file = "*.ron")]
    #[var(set = set_presets_file)]
    presets_file: GString,

    /// When the rope is simulated in the editor: [constant EDITOR_PREVIEW_WHILE_SELECTED]
    /// (default: only while it is selected, so a scene full of ropes stays cheap),
    /// [constant EDITOR_PREVIEW_ALWAYS], or [constant EDITOR_PREVIEW_NEVER] (it hangs straight
    /// down from its anchor as built). No effect in the game.
    #[export_group(name = "Editor")]
    #[export]
    editor_preview: EditorPreview,

    /// The force (N, world) the rope exerts on its end attachment during the last physics frame; zero
    /// for a free end. Read-only.
    #[var(get = get_tension, no_set)]
    #[allow(dead_code)] // backs the property; the value lives in the rope
    tension: Vector3,

    rope: Option<Rope>,
    world: World,
    gatherer: Option<Gatherer>,
    tube: Option<TubeMesh>,
    loose_tube: Option<TubeMesh>,
    debug: Option<(Gd<MultiMeshInstance3D>, Gd<MultiMesh>)>,
    scratch: Vec<Vec3>,
    table: Option<PresetTable>,
    recorder: Recorder,
    recording: Option<Recording>,
    replayer: Replayer,
    replaying: bool,
    anchor_cache: Option<Gd<Node3D>>,
    #[init(val = -2)]
    bone_cache: i32,
    exclude_dirty: bool,
    warnings: Warnings,
    /// Target length set before the rope exists.
    pending_length: Option<f32>,
    /// A cut separated the end from [member end_node] (until the property is set again).
    end_detached: bool,
    /// Running inside the editor (set when the node is ready): the preview rules apply.
    in_editor: bool,
    /// Selected in the editor (told by the editor plugin).
    editor_selected: bool,
    /// Physics steps since the editor's gizmo was last redrawn.
    gizmo_age: u32,
    /// The world slot this rope is registered in with the rope server (while in the tree).
    server_slot: Option<usize>,
    /// Queued for this tick's batched step, with its time step.
    queued: bool,
    pending_dt: f32,
    /// Signals of the last step, emitted once every rope of the batch has been stepped.
    due: DueSignals,
}

/// What the last step has to announce.
#[derive(Default)]
struct DueSignals {
    /// The step's events and the length after it.
    step: Option<(StepEvents, f32)>,
    replay_finished: bool,
}

/// When a [RopeSimulation] swings in the editor's viewport.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum EditorPreview {
    /// Simulate only while the rope is selected.
    #[default]
    WhileSelected,
    /// Simulate always.
    Always,
    /// Never simulate in the editor.
    Never,
}

/// Warning kinds (see [`Warnings`]): each kind of bad input warns once until it is fixed.
mod warn {
    pub const PARAM_BASE: u32 = 0; // ParamIssue discriminants 0..16
    pub const POINT_COUNT: u32 = 20;
    pub const CAPACITY: u32 = 21;
    pub const LENGTH: u32 = 22;
    pub const ANCHOR_NODE: u32 = 23;
    pub const ANCHOR_BONE: u32 = 24;
    pub const ANCHOR_NAN: u32 = 25;
    pub const END_NODE: u32 = 26;
    pub const END_NAN: u32 = 27;
    pub const SHAPE: u32 = 28;
    pub const PRESET: u32 = 29;
    pub const PRESETS_FILE: u32 = 30;
    pub const TUBE: u32 = 31;
    pub const SMOOTHING: u32 = 32;
}

#[godot_api]
impl INode3D for RopeSimulation {
    fn ready(&mut self) {
        self.in_editor = Engine::singleton().is_editor_hint();
        self.build();
    }

    fn enter_tree(&mut self) {
        if let Some(world) = self.base().get_world_3d() {
            self.server_slot = Some(server::register(world));
        }
    }

    /// Queues the rope for the tick's batched step (see `server`); without a server it steps now.
    fn physics_process(&mut self, delta: f64) {
        if self.in_editor {
            let run = match self.editor_preview {
                EditorPreview::Always => true,
                EditorPreview::WhileSelected => self.editor_selected,
                EditorPreview::Never => false,
            };
            if !run {
                return;
            }
            self.gizmo_age += 1;
            if self.gizmo_age >= 6 {
                // The handles ride on the swinging rope: redraw them ten times a second.
                self.gizmo_age = 0;
                self.base_mut().update_gizmos();
            }
            // The editor's preview steps on its own (no batch, no physics queries).
            self.physics_step(delta as f32);
            return;
        }
        if self.rope.is_none() || self.queued {
            return;
        }
        if let Some(slot) = self.server_slot {
            self.pending_dt = delta as f32;
            if server::queue(slot, self.to_gd()) {
                self.queued = true;
                return;
            }
        }
        self.physics_step(delta as f32);
    }

    fn process(&mut self, _delta: f64) {
        self.render();
    }

    fn exit_tree(&mut self) {
        self.anchor_cache = None;
        self.queued = false;
        if let Some(slot) = self.server_slot.take() {
            server::unregister(slot, &self.to_gd());
        }
    }
}

#[godot_api]
impl RopeSimulation {
    /// Emitted once when the rope is split: by a cutter, by [method cut_at], or by tearing. `index` is the
    /// segment that was cut (points `0..index` stay attached), `position` where (world).
    #[signal]
    fn rope_cut(index: i32, position: Vector3);
    /// Emitted (after [signal rope_cut]) when the split was a tear from overstretching.
    #[signal]
    fn rope_torn(index: i32, position: Vector3);
    /// Emitted when the piece cut off has faded away.
    #[signal]
    fn cut_piece_faded();
    /// Emitted when [member length] reaches the length it was growing or shrinking toward.
    #[signal]
    fn length_reached(length: f32);
    /// Emitted when a replay started by [method start_replay] has played every recorded step.
    #[signal]
    fn replay_finished();

    /// [member editor_preview] value: simulate in the editor only while selected.
    #[constant]
    const EDITOR_PREVIEW_WHILE_SELECTED: i64 = 0;
    /// [member editor_preview] value: always simulate in the editor.
    #[constant]
    const EDITOR_PREVIEW_ALWAYS: i64 = 1;
    /// [member editor_preview] value: never simulate in the editor.
    #[constant]
    const EDITOR_PREVIEW_NEVER: i64 = 2;

    /// Returns whether the rope is being simulated in the editor right now (false in the game):
    /// what [member editor_preview] and the editor's selection decide.
    #[func]
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
    fn set_anchor_node(&mut self, path: NodePath) {
        self.anchor_node = path;
        self.anchor_cache = None;
        self.bone_cache = -2;
        self.exclude_dirty = true;
        self.clear_warning(warn::ANCHOR_NODE);
    }

    /// Sets [member anchor_bone] (see the property for its range and effect).
    #[func]
    fn set_anchor_bone(&mut self, bone: GString) {
        self.anchor_bone = bone;
        self.bone_cache = -2;
        self.clear_warning(warn::ANCHOR_BONE);
    }

    /// Sets [member exclude_anchor_body] (see the property for its range and effect).
    #[func]
    fn set_exclude_anchor_body(&mut self, on: bool) {
        self.exclude_anchor_body = on;
        self.exclude_dirty = true;
    }

    /// Sets [member end_node] (see the property for its range and effect).
    #[func]
    fn set_end_node(&mut self, path: NodePath) {
        self.end_node = path;
        self.end_detached = false;
        self.exclude_dirty = true;
        self.clear_warning(warn::END_NODE);
    }

    /// Sets [member point_count] (see the property for its range and effect).
    #[func]
    fn set_point_count(&mut self, count: i32) {
        let max = self.capacity.clamp(2, MAX_CAPACITY as i32);
        let fixed = count.clamp(2, max);
        if fixed != count {
            self.warn_once(
                warn::POINT_COUNT,
                &format!("point_count {count} is out of range; accepted 2..={max} (the point slots), using {fixed}"),
            );
        } else {
            self.clear_warning(warn::POINT_COUNT);
        }
        self.point_count = fixed;
        if self.rope.is_some() {
            let length = (fixed - 1) as f32 * self.segment_length;
            self.set_length(length);
        }
    }

    /// Sets [member capacity] (see the property for its range and effect).
    #[func]
    fn set_capacity(&mut self, capacity: i32) {
        let fixed = capacity.clamp(2, MAX_CAPACITY as i32);
        if fixed != capacity {
            self.warn_once(
                warn::CAPACITY,
                &format!("capacity {capacity} is out of range; accepted 2..={MAX_CAPACITY}, using {fixed}"),
            );
        } else {
            self.clear_warning(warn::CAPACITY);
        }
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
    fn set_segment_length(&mut self, v: f32) {
        self.segment_length = v;
        self.sync_params();
    }

    /// Returns [member length] (see the property).
    #[func]
    fn get_length(&self) -> f32 {
        match &self.rope {
            Some(r) => r.length(),
            None => self
                .pending_length
                .unwrap_or((self.point_count - 1) as f32 * self.segment_length),
        }
    }

    /// Sets [member length] (see the property for its range and effect).
    #[func]
    fn set_length(&mut self, length: f32) {
        if !length.is_finite() || length < 0.0 {
            self.warn_once(
                warn::LENGTH,
                &format!("length {length} is invalid; accepted 0 or more metres (up to what capacity holds); ignored"),
            );
            return;
        }
        self.clear_warning(warn::LENGTH);
        match self.rope.as_mut() {
            Some(r) => {
                r.set_target_length(length);
            }
            None => self.pending_length = Some(length),
        }
    }

    /// Sets [member length_speed] (see the property for its range and effect).
    #[func]
    fn set_length_speed(&mut self, v: f32) {
        self.length_speed = v;
        self.sync_params();
    }

    /// Sets [member damping] (see the property for its range and effect).
    #[func]
    fn set_damping(&mut self, v: f32) {
        self.damping = v;
        self.sync_params();
    }

    /// Sets [member iterations] (see the property for its range and effect).
    #[func]
    fn set_iterations(&mut self, v: i32) {
        self.iterations = v;
        self.sync_params();
    }

    /// Sets [member substeps] (see the property for its range and effect).
    #[func]
    fn set_substeps(&mut self, v: i32) {
        self.substeps = v;
        self.sync_params();
    }

    /// Sets [member gravity_scale] (see the property for its range and effect).
    #[func]
    fn set_gravity_scale(&mut self, v: f32) {
        self.gravity_scale = v;
        self.sync_params();
    }

    /// Sets [member stretch_limit] (see the property for its range and effect).
    #[func]
    fn set_stretch_limit(&mut self, v: f32) {
        self.stretch_limit = v;
        self.sync_params();
    }

    /// Sets [member point_mass] (see the property for its range and effect).
    #[func]
    fn set_point_mass(&mut self, v: f32) {
        self.point_mass = v;
        self.sync_params();
    }

    /// Sets [member ground_enabled] (see the property for its range and effect).
    #[func]
    fn set_ground_enabled(&mut self, v: bool) {
        self.ground_enabled = v;
        self.sync_params();
    }

    /// Sets [member ground_height] (see the property for its range and effect).
    #[func]
    fn set_ground_height(&mut self, v: f32) {
        self.ground_height = v;
        self.sync_params();
    }

    /// Sets [member radius] (see the property for its range and effect).
    #[func]
    fn set_radius(&mut self, v: f32) {
        self.radius = v;
        self.sync_params();
    }

    /// Sets [member friction] (see the property for its range and effect).
    #[func]
    fn set_friction(&mut self, v: f32) {
        self.friction = v;
        self.sync_params();
    }

    /// Sets [member tear_ratio] (see the property for its range and effect).
    #[func]
    fn set_tear_ratio(&mut self, v: f32) {
        self.tear_ratio = v;
        self.sync_params();
    }

    /// Sets [member fade_time] (see the property for its range and effect).
    #[func]
    fn set_fade_time(&mut self, v: f32) {
        self.fade_time = v;
        self.sync_params();
    }

    /// Sets [member tube_enabled] (see the property for its range and effect).
    #[func]
    fn set_tube_enabled(&mut self, on: bool) {
        self.tube_enabled = on;
        self.rebuild_visuals();
    }

    /// Sets [member tube_sides] (see the property for its range and effect).
    #[func]
    fn set_tube_sides(&mut self, sides: i32) {
        let fixed = sides.clamp(3, 64);
        if fixed != sides {
            self.warn_once(
                warn::TUBE,
                &format!("tube_sides {sides} is out of range; accepted 3..=64, using {fixed}"),
            );
        } else {
            self.clear_warning(warn::TUBE);
        }
        self.tube_sides = fixed;
        self.rebuild_visuals();
    }

    /// Sets [member smoothing] (see the property for its range and effect).
    #[func]
    fn set_smoothing(&mut self, rings: i32) {
        let fixed = rings.clamp(1, 8);
        if fixed != rings {
            self.warn_once(
                warn::SMOOTHING,
                &format!("smoothing {rings} is out of range; accepted 1..=8, using {fixed}"),
            );
        } else {
            self.clear_warning(warn::SMOOTHING);
        }
        self.smoothing = fixed;
        self.rebuild_visuals();
    }

    /// Sets [member material] (see the property for its range and effect).
    #[func]
    fn set_material(&mut self, material: Option<Gd<Material>>) {
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
    fn set_debug_draw(&mut self, on: bool) {
        self.debug_draw = on;
        self.rebuild_visuals();
    }

    /// Sets [member preset] (see the property for its range and effect).
    #[func]
    fn set_preset(&mut self, preset: Option<Gd<RopePreset>>) {
        self.preset = preset;
        if let Some(p) = self.preset.clone() {
            let p = p.bind();
            self.apply_values(p.iterations, p.segment_length);
        }
    }

    /// Sets [member presets_file] (see the property for its range and effect).
    #[func]
    fn set_presets_file(&mut self, path: GString) {
        self.presets_file = path;
        self.table = None;
        self.clear_warning(warn::PRESETS_FILE);
    }

    /// Returns [member tension] (see the property).
    #[func]
    fn get_tension(&self) -> Vector3 {
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
        let Some(cut) = self.rope.as_mut().and_then(|r| r.cut_at(i)) else {
            return false;
        };
        self.end_detached = !self.end_node.is_empty();
        self.signals()
            .rope_cut()
            .emit(cut.index as i32, vector3(cut.position));
        true
    }

    /// Advances the rope by one step of `delta` seconds now, as the physics step does (sampling the
    /// anchor, the world and the end). For tools and benchmarks that drive the rope themselves: turn
    /// physics processing off first, or the rope also steps every physics frame.
    #[func]
    pub fn advance(&mut self, delta: f32) {
        self.physics_step(delta);
    }

    /// Advances every rope of [param ropes] by one step of [param delta] seconds now, in one batch,
    /// as the physics tick steps the ropes of a world (each rope's anchor, world and end sampled
    /// first; ropes with the same point and iteration counts and no solid collider near are solved
    /// side by side). For tools and benchmarks that drive many ropes themselves: turn their physics
    /// processing off first. Freed ropes in the array are skipped.
    #[func]
    pub fn advance_all(ropes: Array<Gd<RopeSimulation>>, delta: f32) {
        server::advance_now(&ropes, delta);
    }

    /// Rebuilds the tube mesh (and debug points) from the rope now, as every rendered frame does.
    #[func]
    pub fn refresh_mesh(&mut self) {
        self.render();
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

    /// Returns the number of active points.
    #[func]
    pub fn get_active_point_count(&self) -> i32 {
        self.rope.as_ref().map_or(0, |r| r.point_count() as i32)
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
    /// the engine's physics interpolation fraction (the tube and [RopeBoneChain] use these; inside a
    /// physics frame, the last step's). Allocates: for scripts and tools.
    #[func]
    pub fn get_interpolated_points(&self) -> PackedVector3Array {
        let Some(rope) = self.rope.as_ref() else {
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
        self.rope.as_ref().map_or(0.0, Rope::max_stretch)
    }

    /// Lays the rope out again, straight down from the anchor, at rest.
    #[func]
    pub fn reset_rope(&mut self) {
        let anchor = self.sample_anchor().unwrap_or(Vec3::ZERO);
        if let Some(r) = self.rope.as_mut() {
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
        let Some(rope) = self.rope.as_ref() else {
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
        let (Some(rec), Some(rope)) = (self.recording.as_ref(), self.rope.as_mut()) else {
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
    /// (Re)creates the rope at the anchor and the visuals.
    fn build(&mut self) {
        self.bone_cache = -2;
        self.exclude_dirty = true;
        let params = self.params();
        let anchor = self
            .sample_anchor()
            .unwrap_or_else(|| vec3(self.base().get_global_position()));
        let mut rope = Rope::new(
            self.capacity as usize,
            self.point_count as usize,
            params,
            anchor,
            Vec3::NEG_Y,
        );
        if let Some(l) = self.pending_length.take() {
            let target = l.min(rope.max_length());
            rope.reset(anchor, Vec3::NEG_Y, target);
        }
        self.scratch = vec![Vec3::ZERO; rope.capacity()];
        self.rope = Some(rope);
        self.world = World::with_capacity(MAX_COLLIDERS);
        if self.gatherer.is_none() {
            self.gatherer = Some(Gatherer::new());
        }
        self.rebuild_visuals();
        self.sync_params();
    }

    /// Returns the parameters from the properties (unsanitized).
    fn params(&self) -> RopeParams {
        let g = ProjectSettings::singleton()
            .get_setting("physics/3d/default_gravity")
            .try_to::<f32>()
            .unwrap_or(9.8);
        let dir = ProjectSettings::singleton()
            .get_setting("physics/3d/default_gravity_vector")
            .try_to::<Vector3>()
            .map(vec3)
            .unwrap_or(Vec3::NEG_Y);
        RopeParams {
            segment_length: self.segment_length,
            damping: self.damping,
            iterations: u32::try_from(self.iterations).unwrap_or(0),
            substeps: u32::try_from(self.substeps).unwrap_or(0),
            gravity: dir
                * g
                * entwine_core::kit::clamp_finite(self.gravity_scale, -10.0, 10.0, 1.0),
            radius: self.radius,
            ground_enabled: self.ground_enabled,
            ground_height: self.ground_height,
            friction: self.friction,
            tear_ratio: self.tear_ratio,
            stretch_limit: self.stretch_limit,
            length_speed: self.length_speed,
            point_mass: self.point_mass,
            fade_time: self.fade_time,
        }
    }

    /// Sanitizes the properties, warns once per bad one, writes the fixed values back and hands them to
    /// the rope.
    fn sync_params(&mut self) {
        let node = self.to_gd();
        let scale = self.gravity_scale;
        self.warnings
            .f32_within(&node, "gravity_scale", scale, -10.0, 10.0, 1.0);
        let raw = self.params();
        let mut issues: [Option<ParamIssue>; 16] = [None; 16];
        let mut k = 0;
        let fixed = raw.sanitized(|i| {
            if k < issues.len() {
                issues[k] = Some(i);
                k += 1;
            }
        });
        for issue in issues.iter().flatten() {
            let (name, range) = match issue {
                // The rope's gravity is the project's times gravity_scale.
                ParamIssue::Gravity => ("gravity_scale", "a finite scale of the project's gravity"),
                _ => issue.describe(),
            };
            let bit = warn::PARAM_BASE + *issue as u32;
            self.warn_once(
                bit,
                &format!("{name} is out of range; accepted {range}; the value was clamped"),
            );
        }
        if k == 0 {
            // Every parameter is valid again: later bad values warn again.
            self.warnings.clear_below(16);
        }
        self.segment_length = fixed.segment_length;
        self.damping = fixed.damping;
        self.iterations = fixed.iterations as i32;
        self.substeps = fixed.substeps as i32;
        self.radius = fixed.radius;
        self.ground_height = fixed.ground_height;
        self.friction = fixed.friction;
        self.tear_ratio = fixed.tear_ratio;
        self.stretch_limit = fixed.stretch_limit;
        self.length_speed = fixed.length_speed;
        self.point_mass = fixed.point_mass;
        self.fade_time = fixed.fade_time;
        let fixed = self.params();
        if let Some(r) = self.rope.as_mut() {
            r.set_params(fixed, |_| {});
        }
    }

    fn apply_values(&mut self, iterations: i32, segment_length: f32) {
        self.iterations = iterations;
        self.segment_length = segment_length;
        self.sync_params();
    }

    fn preset_table(&mut self) -> &PresetTable {
        if self.table.is_none() {
            let table = if self.presets_file.is_empty() {
                PresetTable::builtin()
            } else {
                let text = FileAccess::get_file_as_string(&self.presets_file).to_string();
                match PresetTable::from_ron(&text) {
                    Ok(t) => t,
                    Err(e) => {
                        let file = self.presets_file.clone();
                        self.warn_once(
                            warn::PRESETS_FILE,
                            &format!("presets_file '{file}' cannot be used ({e}); using the built-in table"),
                        );
                        PresetTable::builtin()
                    }
                }
            };
            self.table = Some(table);
        }
        self.table.get_or_insert_with(PresetTable::builtin)
    }

    fn preset_names(&mut self) -> Vec<String> {
        self.preset_table()
            .presets
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// Rebuilds the tube meshes and the debug points for the current settings.
    fn rebuild_visuals(&mut self) {
        for t in [self.tube.take(), self.loose_tube.take()]
            .into_iter()
            .flatten()
        {
            let mut node = t.instance;
            self.base_mut().remove_child(&node);
            node.queue_free();
        }
        if let Some((mut node, _)) = self.debug.take() {
            self.base_mut().remove_child(&node);
            node.queue_free();
        }
        let Some(capacity) = self.rope.as_ref().map(Rope::capacity) else {
            return;
        };
        if self.tube_enabled {
            let material = self.material.clone().or_else(|| {
                let mut m = StandardMaterial3D::new_gd();
                m.set_albedo(Color::from_rgb(0.85, 0.25, 0.55));
                m.set_roughness(0.7);
                Some(m.upcast())
            });
            for loose in [false, true] {
                let t = TubeMesh::new(
                    capacity,
                    self.tube_sides as usize,
                    self.smoothing as usize,
                    material.as_ref(),
                );
                let mut node = t.instance.clone();
                node.set_name(if loose { "LooseTube" } else { "Tube" });
                self.base_mut().add_child(&node);
                if loose {
                    self.loose_tube = Some(t);
                } else {
                    self.tube = Some(t);
                }
            }
        }
        if self.debug_draw {
            let mut sphere = SphereMesh::new_gd();
            let r = (self.radius * 1.6).max(0.02);
            sphere.set_radius(r);
            sphere.set_height(2.0 * r);
            sphere.set_radial_segments(8);
            sphere.set_rings(4);
            let mut mat = StandardMaterial3D::new_gd();
            mat.set_albedo(Color::from_rgb(1.0, 0.9, 0.1));
            sphere.set_material(&mat);
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            mm.set_mesh(&sphere);
            mm.set_instance_count(capacity as i32);
            mm.set_visible_instance_count(0);
            let mut node = MultiMeshInstance3D::new_alloc();
            node.set_name("DebugPoints");
            node.set_multimesh(&mm);
            node.set_as_top_level(true);
            self.base_mut().add_child(&node);
            node.set_global_transform(Transform3D::IDENTITY);
            self.debug = Some((node, mm));
        }
    }

    /// Returns the anchor node, resolving and caching it (warns once when the path is broken).
    fn anchor(&mut self) -> Option<Gd<Node3D>> {
        if let Some(n) = &self.anchor_cache {
            if n.is_instance_valid() {
                return Some(n.clone());
            }
        }
        if self.anchor_node.is_empty() {
            return None;
        }
        let path = self.anchor_node.clone();
        let node = self.base().try_get_node_as::<Node3D>(&path);
        if node.is_none() {
            self.warn_once(
                warn::ANCHOR_NODE,
                &format!("anchor_node '{path}' is not a Node3D in the tree; the rope hangs from itself until it is fixed"),
            );
        }
        self.anchor_cache = node.clone();
        self.bone_cache = -2;
        self.exclude_dirty = true;
        node
    }

    /// Returns the anchor's world position now, or `None` when it is not finite.
    /// The frame [member anchor_offset] is given in (world): the anchor bone's, the anchor node's,
    /// or this node's.
    pub(crate) fn anchor_frame(&mut self) -> Transform3D {
        match self.anchor() {
            Some(node) => {
                let skeleton = node.clone().try_cast::<Skeleton3D>().ok();
                match skeleton.filter(|_| !self.anchor_bone.is_empty()) {
                    Some(skel) => {
                        if self.bone_cache == -2 || self.bone_cache >= skel.get_bone_count() {
                            self.bone_cache = skel.find_bone(&self.anchor_bone);
                            if self.bone_cache < 0 {
                                let bone = self.anchor_bone.clone();
                                self.warn_once(
                                    warn::ANCHOR_BONE,
                                    &format!("anchor_bone '{bone}' is not a bone of skeleton '{}'; the rope hangs from the skeleton's origin", skel.get_name()),
                                );
                            }
                        }
                        if self.bone_cache >= 0 {
                            skel.get_global_transform() * skel.get_bone_global_pose(self.bone_cache)
                        } else {
                            skel.get_global_transform()
                        }
                    }
                    None => node.get_global_transform(),
                }
            }
            None => self.base().get_global_transform(),
        }
    }

    /// For the editor: marks the rope selected (it previews while selected).
    pub(crate) fn set_editor_selected(&mut self, selected: bool) {
        self.editor_selected = selected;
    }

    /// For the editor's gizmo: the rope's points now (world), into `out`; how many.
    pub(crate) fn editor_points(&self, out: &mut Vec<Vector3>) {
        out.clear();
        if let Some(r) = self.rope.as_ref() {
            out.extend(r.points().iter().map(|p| vector3(*p)));
        }
    }

    fn sample_anchor(&mut self) -> Option<Vec3> {
        let node = self.to_gd();
        let offset = self.warnings.vector_within(
            &node,
            "anchor_offset",
            self.anchor_offset,
            1e6,
            Vector3::ZERO,
        );
        let world = self.anchor_frame() * offset;
        let v = vec3(world);
        if v.is_finite() {
            self.clear_warning(warn::ANCHOR_NAN);
            Some(v)
        } else {
            self.warn_once(
                warn::ANCHOR_NAN,
                "the anchor's position is not finite (NaN or infinite); the rope keeps the last good anchor",
            );
            None
        }
    }

    /// Returns the end attachment for this step.
    fn sample_end(&mut self) -> EndAttachment {
        if self.end_node.is_empty() || self.end_detached {
            return EndAttachment::Free;
        }
        let path = self.end_node.clone();
        let Some(node) = self.base().try_get_node_as::<Node3D>(&path) else {
            self.warn_once(
                warn::END_NODE,
                &format!("end_node '{path}' is not a Node3D in the tree; the end hangs free"),
            );
            return EndAttachment::Free;
        };
        let me = self.to_gd();
        let end_offset =
            self.warnings
                .vector_within(&me, "end_offset", self.end_offset, 1e6, Vector3::ZERO);
        let at = vec3(node.get_global_transform() * end_offset);
        let end = match node.clone().try_cast::<RigidBody3D>() {
            Ok(body) if self.apply_tension_to_body => EndAttachment::Body {
                position: at,
                velocity: vec3(body.get_linear_velocity()),
                mass: body.get_mass(),
            },
            _ => EndAttachment::Pinned(at),
        };
        if at.is_finite() {
            self.clear_warning(warn::END_NAN);
        } else {
            self.warn_once(
                warn::END_NAN,
                "the end node's position is not finite; the end hangs free",
            );
        }
        end
    }

    /// Rebuilds the query's exclusion list: the anchor's own physics body, if any.
    fn refresh_exclude(&mut self) {
        self.exclude_dirty = false;
        let mut exclude: Array<Rid> = Array::new();
        let end_path = self.end_node.clone();
        let end = if end_path.is_empty() {
            None
        } else {
            self.base().try_get_node_as::<Node>(&end_path)
        };
        let anchor = if self.exclude_anchor_body {
            self.anchor().map(|n| n.upcast::<Node>())
        } else {
            None
        };
        // The anchor's body (the character holding the rope) and the body the end is tied to.
        for start in [anchor, end].into_iter().flatten() {
            let mut node = Some(start);
            while let Some(n) = node {
                if let Ok(body) = n.clone().try_cast::<CollisionObject3D>() {
                    exclude.push(body.get_rid());
                    break;
                }
                node = n.get_parent();
            }
        }
        if let Some(g) = self.gatherer.as_mut() {
            g.set_exclude(&exclude);
        }
    }

    /// Steps this rope alone now ([method advance], or a rope outside the server).
    fn physics_step(&mut self, dt: f32) {
        if let Some(input) = self.begin_step(dt, None) {
            if let Some(rope) = self.rope.as_mut() {
                let events = rope.step(input.dt, input.anchor, input.end, &self.world);
                self.finish_step(input, events);
            }
        }
        self.emit_step_signals();
    }

    /// The rope server's gather: samples this tick's inputs and colliders (in `space`, the world's
    /// physics space taken once for all its ropes) and moves the rope into `batch`, tagged `owner`.
    fn begin_batched(
        &mut self,
        batch: &mut RopeBatch,
        space: Option<&mut Gd<PhysicsDirectSpaceState3D>>,
        owner: usize,
    ) {
        self.queued = false;
        let Some(input) = self.begin_step(self.pending_dt, space) else {
            return;
        };
        let Some(rope) = self.rope.take() else {
            return;
        };
        let world = core::mem::take(&mut self.world);
        batch.push(rope, world, input, owner);
    }

    /// The rope server's apply: takes the stepped rope back and applies the step's results.
    fn end_batched(&mut self, entry: BatchEntry) {
        self.rope = Some(entry.rope);
        self.world = entry.world;
        self.finish_step(entry.input, entry.events);
    }

    /// Returns the step's inputs (live, or from the replay), recording them and gathering the
    /// colliders; `None` when there is no step (no rope, or the replay just ended).
    fn begin_step(
        &mut self,
        dt: f32,
        space: Option<&mut Gd<PhysicsDirectSpaceState3D>>,
    ) -> Option<StepInput> {
        self.rope.as_ref()?;
        // Checked every step (it is read only while an end node is attached).
        let me = self.to_gd();
        self.warnings
            .vector_within(&me, "end_offset", self.end_offset, 1e6, Vector3::ZERO);
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
                    if let Some(r) = self.rope.as_mut() {
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
                .unwrap_or_else(|| self.rope.as_ref().map_or(Vec3::ZERO, Rope::anchor));
            (dt, anchor, self.sample_end())
        };
        if self.recorder.is_recording() && !self.in_editor {
            let target_length = self.rope.as_ref().map_or(0.0, Rope::target_length);
            self.recorder.push(AnchorSample {
                dt,
                anchor,
                end,
                target_length,
            });
        }
        self.gather_world(anchor, dt, space);
        Some(StepInput { dt, anchor, end })
    }

    /// Applies a step's results: the pull on an attached body, a cut's detachment; keeps the events
    /// for [`Self::emit_step_signals`].
    fn finish_step(&mut self, input: StepInput, events: StepEvents) {
        let Some(rope) = self.rope.as_ref() else {
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
            self.end_detached = !self.end_node.is_empty();
        }
        self.due.step = Some((events, length));
    }

    /// Emits the signals of the last step; returns whether any was emitted.
    fn emit_step_signals(&mut self) -> bool {
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
        if due.replay_finished {
            self.signals().replay_finished().emit();
            any = true;
        }
        any
    }

    /// Fills the collider list from the physics world around the rope.
    fn gather_world(
        &mut self,
        anchor: Vec3,
        dt: f32,
        space: Option<&mut Gd<PhysicsDirectSpaceState3D>>,
    ) {
        self.world.clear();
        let (solid, cutter) = (self.collision_mask, self.cutter_mask);
        // The editor's preview takes no physics queries (the ground plane is in the core).
        if solid | cutter == 0 || self.in_editor {
            return;
        }
        let Some(rope) = self.rope.as_ref() else {
            return;
        };
        let mut lo = anchor;
        let mut hi = anchor;
        for p in rope.points().iter().chain(rope.loose_points()) {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        // Room for this step's motion: the last step's travel of the anchor, plus a margin (wider
        // when there are cutters, so one that crossed the rope since the last frame is still found).
        let margin = if cutter != 0 {
            CUTTER_QUERY_MARGIN
        } else {
            QUERY_MARGIN
        };
        let travel = (anchor - rope.anchor()).abs() + Vec3::splat(margin + self.radius);
        lo -= travel;
        hi += travel;
        let mut own: Option<Gd<PhysicsDirectSpaceState3D>>;
        let space = match space {
            Some(s) => s,
            None => {
                own = self
                    .base()
                    .get_world_3d()
                    .and_then(|w| w.get_direct_space_state());
                let Some(s) = own.as_mut() else {
                    return;
                };
                s
            }
        };
        let Some(g) = self.gatherer.as_mut() else {
            return;
        };
        if let Some(kind) = g.gather(space, lo, hi, solid, cutter, dt, &mut self.world) {
            self.warn_once(
                warn::SHAPE,
                &format!("{kind} on collision_mask/cutter_mask is not supported by the rope and is ignored (use boxes, spheres, capsules, cylinders or convex shapes)"),
            );
        }
    }

    fn render(&mut self) {
        let Some(rope) = self.rope.as_ref() else {
            return;
        };
        let alpha = Engine::singleton().get_physics_interpolation_fraction() as f32;
        let radius = self.radius;
        if let Some(t) = self.tube.as_mut() {
            let n = rope.interpolated(alpha, &mut self.scratch);
            t.update(&self.scratch[..n], radius);
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
    }

    /// Writes the points as drawn this frame (see [`Self::get_interpolated_points`]) into `out`
    /// without allocating; returns how many (0 before the rope is built).
    pub(crate) fn interpolated_points(&self, out: &mut [Vec3]) -> usize {
        let Some(rope) = self.rope.as_ref() else {
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
        self.rope.as_ref().map_or(0, Rope::capacity)
    }

    fn warn_once(&mut self, kind: u32, message: &str) {
        let node = self.to_gd();
        self.warnings.once(&node, kind, message);
    }

    fn clear_warning(&mut self, kind: u32) {
        self.warnings.clear(kind);
    }
}
