//! `RopeSimulation`: the core's Verlet rope as a `Node3D`, hung from a node or a skeleton bone.

mod bone_chain;
mod colliders;
mod mesh;
mod preset;
mod server;

use entwine_core::kit::warn::int_accepted;
use entwine_core::rope::batch::{BatchEntry, RopeBatch, StepInput};
use entwine_core::rope::record::Replayer;
use entwine_core::rope::{
    AnchorSample, CutReason, EndAttachment, ParamIssue, PresetTable, Recorder, Recording, Rope,
    RopeParams, StepEvents, World,
};
use entwine_core::rope::{
    ParamIssue as P, CAPACITY, GRAVITY_SCALE, POINT_COUNT, SMOOTHING, TUBE_SIDES,
};
use glam::Vec3;
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::{
    CollisionObject3D, Engine, FileAccess, INode3D, Material, MultiMesh, MultiMeshInstance3D,
    Node3D, ProjectSettings, RigidBody3D, Skeleton3D, SphereMesh, StandardMaterial3D,
};
use godot::prelude::*;

use crate::warnings::Warnings;

pub use bone_chain::{RopeBoneChain, RopeChainFit};
pub use preset::RopePreset;
pub(crate) use server::release as release_server;

use crate::convert::{vec3, vector3};
use colliders::{Gatherer, Request, SharedGather, MAX_COLLIDERS};
use mesh::{TubeMesh, TubeVertices};

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
/// body or an [Area3D] on [member cutter_mask] cuts the rope where the path it actually took since the
/// last physics frame crosses the rope's segments (however it is moved: by physics, a script or an
/// animation): from its pose then to its pose now, a turn swept as a turn however fast (a
/// [RigidBody3D]'s angular velocity tells how many revolutions it made; a body turned otherwise keeps
/// turning the way it turned), so a spinning blade or a bullet that crosses the rope between two
/// frames still cuts, and a cutter that never touched the rope never cuts it. [method cut_along] cuts
/// along a hitscan's path. The loose part falls, fades over [member fade_time] and [signal rope_cut]
/// is emitted once, with the point of the rope where it was cut.
///
/// A rope that has come to rest falls asleep, as a rigid body does ([member can_sleep], [member
/// sleep_distance]): it is not simulated, and costs next to nothing, until its anchor, its end or a
/// body around it moves, a property changes, it is cut or [member sleeping] is set to false; [signal
/// sleeping_state_changed] tells each change.
///
/// [member length] grows or shrinks the rope at [member length_speed] without allocating: [member
/// capacity] point slots are allocated once. Record the anchor path with [method start_recording] and
/// play it back with [method start_replay]: the replayed rope matches the recorded one bit for bit.
///
/// Bad values (0 or 1 points, non-positive lengths, damping outside (0, 1], 0 iterations, NaN anchors…)
/// are clamped or ignored with one warning naming the property and its range.
///
/// Drawing: the ropes of a world are drawn together once a frame, right after every node's
/// `_process` (a rope's own `_process` only queues it; [code]set_process(false)[/code] leaves it
/// undrawn), their tubes' vertices written on two threads when there are many ropes.
/// [method refresh_mesh] draws one rope at once.
///
/// Cost: the simulation and the tube update allocate nothing per frame; the tube of a rope at rest
/// (no point moved more than 10 µm since it was last drawn) is neither rebuilt nor uploaded. The collider query does (Godot
/// returns shape-query results as an [Array] of [Dictionary]s), but the ropes of a world share it: one
/// query per tick for ropes close together, one per cluster of ropes far apart
/// ([method get_collider_query_count]). A rope that only needs the ground can set
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
    #[export(node_path = ("Node3D"))]
    #[var(set = set_anchor_node)]
    anchor_node: NodePath,
    /// Bone of the anchor [Skeleton3D] the rope hangs from (e.g. `RightHand`). Empty: the node itself.
    #[export]
    #[var(set = set_anchor_bone)]
    anchor_bone: GString,
    /// Offset of the rope's start in the anchor node's (or bone's) own space, metres (finite, within
    /// ±1e6; else zero, with one warning).
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    anchor_offset: Vector3,
    /// Keep the points out of the anchor's own physics body (the character holding the rope).
    #[export]
    #[init(val = true)]
    #[var(get = is_anchor_body_excluded, set = set_exclude_anchor_body)]
    exclude_anchor_body: bool,

    /// Node the far end is attached to. Empty: the end hangs free.
    #[export_group(name = "End")]
    #[export(node_path = ("Node3D"))]
    #[var(set = set_end_node)]
    end_node: NodePath,
    /// Offset of the end attachment in the end node's space, metres (finite, within ±1e6; else
    /// zero, with one warning).
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    end_offset: Vector3,
    /// When [member end_node] is a [RigidBody3D]: the rope pulls the body with its tension (applied as a
    /// central force each physics frame) instead of pinning it.
    #[export]
    #[var(get = is_tension_applied_to_body)]
    apply_tension_to_body: bool,

    /// Number of points the rope starts with (2 to [member capacity]); its length is
    /// `(point_count − 1) × segment_length`. Setting it at runtime grows or shrinks the rope smoothly.
    #[export_group(name = "Rope")]
    #[export(range = (POINT_COUNT.hint_min(), POINT_COUNT.hint_max(), 1.0, suffix = POINT_COUNT.suffix()))]
    #[init(val = POINT_COUNT.default as i32)]
    #[var(set = set_point_count)]
    point_count: i32,
    /// Point slots allocated once. Changing it after the rope was built rebuilds it.
    #[export(range = (CAPACITY.hint_min(), CAPACITY.hint_max(), 1.0, suffix = CAPACITY.suffix()))]
    #[init(val = CAPACITY.default as i32)]
    #[var(set = set_capacity)]
    capacity: i32,
    /// Rest length of one segment.
    #[export(range = (P::SegmentLength.spec().hint_min(), P::SegmentLength.spec().hint_max(), 0.01, suffix = P::SegmentLength.spec().suffix()))]
    #[init(val = P::SegmentLength.spec().default)]
    #[var(set = set_segment_length)]
    segment_length: f32,
    /// The rope's length in metres. Reading gives the current length; setting starts growing or
    /// shrinking toward the new value at [member length_speed] (clamped to what [member capacity] holds).
    #[var(get = get_length, set = set_length)]
    #[allow(dead_code)] // backs the property; the value lives in the rope
    length: f32,
    /// How fast [member length] changes, m/s.
    #[export(range = (P::LengthSpeed.spec().hint_min(), P::LengthSpeed.spec().hint_max(), 0.01, or_greater, suffix = P::LengthSpeed.spec().suffix()))]
    #[init(val = P::LengthSpeed.spec().default)]
    #[var(set = set_length_speed)]
    length_speed: f32,

    /// Fraction of velocity kept each step (0.99: long swings; lower: heavier air).
    #[export_group(name = "Simulation")]
    #[export(range = (P::Damping.spec().hint_min(), P::Damping.spec().hint_max(), 0.001, suffix = P::Damping.spec().suffix()))]
    #[init(val = P::Damping.spec().default)]
    #[var(set = set_damping)]
    damping: f32,
    /// Distance-constraint iterations per substep: more is stiffer; see the presets.
    #[export(range = (P::Iterations.spec().hint_min(), P::Iterations.spec().hint_max(), 1.0, suffix = P::Iterations.spec().suffix()))]
    #[init(val = P::Iterations.spec().default as i32)]
    #[var(set = set_iterations)]
    iterations: i32,
    /// Substeps per physics tick.
    #[export(range = (P::Substeps.spec().hint_min(), P::Substeps.spec().hint_max(), 1.0, suffix = P::Substeps.spec().suffix()))]
    #[init(val = P::Substeps.spec().default as i32)]
    #[var(set = set_substeps)]
    substeps: i32,
    /// Multiplier of the project's default gravity.
    #[export(range = (GRAVITY_SCALE.hint_min(), GRAVITY_SCALE.hint_max(), 0.01, suffix = GRAVITY_SCALE.suffix()))]
    #[init(val = GRAVITY_SCALE.default)]
    #[var(set = set_gravity_scale)]
    gravity_scale: f32,
    /// For a rope whose far end is free: after the iterations, walking from the anchor, no segment is
    /// left longer than this fraction over its rest length (0.03 = 3 %; 0 = off). A safety net for
    /// violent jerks; the iterations themselves keep the rope within a fraction of a percent.
    #[export(range = (P::StretchLimit.spec().hint_min(), P::StretchLimit.spec().hint_max(), 0.001, suffix = P::StretchLimit.spec().suffix()))]
    #[init(val = P::StretchLimit.spec().default)]
    #[var(set = set_stretch_limit)]
    stretch_limit: f32,
    /// Mass of one point, kg: sets the tension and how hard the rope pulls an attached body.
    #[export(range = (P::PointMass.spec().hint_min(), P::PointMass.spec().hint_max(), 0.001, or_greater, suffix = P::PointMass.spec().suffix()))]
    #[init(val = P::PointMass.spec().default)]
    #[var(set = set_point_mass)]
    point_mass: f32,
    /// Let the rope fall asleep once it has come to rest, as a rigid body does: a sleeping rope is
    /// not simulated (it costs next to nothing) until its anchor, its end or the bodies around it
    /// move, a property changes, or [member sleeping] is set to false. [signal sleeping_state_changed]
    /// tells each change.
    #[export]
    #[init(val = true)]
    #[var(get = is_able_to_sleep, set = set_can_sleep)]
    can_sleep: bool,
    /// How still the rope must stay to fall asleep: no point strays farther than this, metres, for
    /// a second (a rope longer than 1 m: half its swing, π √(length / gravity)). A swing the rope can
    /// sleep through is at most half this wide.
    #[export(range = (P::SleepDistance.spec().hint_min(), P::SleepDistance.spec().hint_max(), 0.0001, or_greater, suffix = P::SleepDistance.spec().suffix()))]
    #[init(val = P::SleepDistance.spec().default)]
    #[var(set = set_sleep_distance)]
    sleep_distance: f32,
    /// Whether the rope sleeps now (see [member can_sleep]). Set it to false to wake the rope, or to
    /// true to put it to sleep where it is; it wakes again when something around it changes.
    #[var(get = is_sleeping, set = set_sleeping)]
    #[allow(dead_code)] // backs the property; the state lives in the rope
    sleeping: bool,

    /// Keep the points above [member ground_height] (cheap; works without any physics body).
    #[export_group(name = "Collision")]
    #[export]
    #[init(val = true)]
    #[var(get = is_ground_enabled, set = set_ground_enabled)]
    ground_enabled: bool,
    /// Height of the ground plane, metres (world Y).
    #[export]
    #[var(set = set_ground_height)]
    ground_height: f32,
    /// Physics layers whose static, kinematic and rigid bodies the rope collides with (0: none).
    #[export(flags_3d_physics)]
    #[init(val = 1)]
    collision_mask: u32,
    /// Thickness of the rope for collisions and the tube, metres.
    #[export(range = (P::Radius.spec().hint_min(), P::Radius.spec().hint_max(), 0.001, suffix = P::Radius.spec().suffix()))]
    #[init(val = P::Radius.spec().default)]
    #[var(set = set_radius)]
    radius: f32,
    /// Fraction of the sliding velocity a contact removes each step.
    #[export(range = (P::Friction.spec().hint_min(), P::Friction.spec().hint_max(), 0.01, suffix = P::Friction.spec().suffix()))]
    #[init(val = P::Friction.spec().default)]
    #[var(set = set_friction)]
    friction: f32,

    /// Physics layers whose bodies and areas cut the rope where their path crosses it (0: nothing cuts).
    #[export_group(name = "Cutting")]
    #[export(flags_3d_physics)]
    cutter_mask: u32,
    /// A segment stretched past this ratio of its rest length tears (0: never; else above 1.01).
    #[export(range = (P::TearRatio.spec().hint_min(), P::TearRatio.spec().hint_max(), 0.01, suffix = P::TearRatio.spec().suffix()))]
    #[var(set = set_tear_ratio)]
    tear_ratio: f32,
    /// Seconds a cut-off piece takes to fade away.
    #[export(range = (P::FadeTime.spec().hint_min(), P::FadeTime.spec().hint_max(), 0.01, suffix = P::FadeTime.spec().suffix()))]
    #[init(val = P::FadeTime.spec().default)]
    #[var(set = set_fade_time)]
    fade_time: f32,

    /// Draw the rope as a tube mesh.
    #[export_group(name = "Rendering")]
    #[export]
    #[init(val = true)]
    #[var(get = is_tube_enabled, set = set_tube_enabled)]
    tube_enabled: bool,
    /// Vertices around the tube.
    #[export(range = (TUBE_SIDES.hint_min(), TUBE_SIDES.hint_max(), 1.0, suffix = TUBE_SIDES.suffix()))]
    #[init(val = TUBE_SIDES.default as i32)]
    #[var(set = set_tube_sides)]
    tube_sides: i32,
    /// Rings per segment: 1 draws straight segments, more draws a Catmull-Rom curve through the points.
    #[export(range = (SMOOTHING.hint_min(), SMOOTHING.hint_max(), 1.0, suffix = SMOOTHING.suffix()))]
    #[init(val = SMOOTHING.default as i32)]
    #[var(set = set_smoothing)]
    smoothing: i32,
    /// Material of the tube (a default one when empty).
    #[export]
    #[var(set = set_material)]
    material: Option<Gd<Material>>,
    /// Draw a small sphere on every point.
    #[export]
    #[var(get = is_debug_draw_enabled, set = set_debug_draw)]
    debug_draw: bool,

    /// A preset to apply (its iterations and segment length); see [EntwineRopePreset].
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

    rope: Option<Box<Rope>>,
    world: World,
    gatherer: Option<Gatherer>,
    tube: Option<TubeMesh>,
    loose_tube: Option<TubeMesh>,
    /// Times the rope's own tube was rebuilt and uploaded (`get_tube_upload_count`).
    tube_uploads: i64,
    debug: Option<(Gd<MultiMeshInstance3D>, Gd<MultiMesh>)>,
    scratch: Vec<Vec3>,
    table: Option<PresetTable>,
    recorder: Recorder,
    recording: Option<Recording>,
    replayer: Replayer,
    replaying: bool,
    anchor_cache: Option<Gd<Node3D>>,
    /// This node, kept for the ticks that queue it with the rope server and read its transform (the
    /// anchor when none is set): a kept handle has its checks' and binding's data at hand, where one
    /// made from the base each tick asks the engine for them.
    me: Option<Gd<RopeSimulation>>,
    /// The engine singleton, kept for the frames that read the physics interpolation fraction.
    engine: Option<Gd<Engine>>,
    /// The cached anchor as a skeleton (when it is one), cast once when the anchor is resolved.
    anchor_skeleton: Option<Gd<Skeleton3D>>,
    /// [member anchor_offset] and [member end_offset] as last checked, and what the check gave:
    /// checked again only when the property changed (see [`OffsetCheck`]).
    anchor_offset_seen: OffsetCheck,
    end_offset_seen: OffsetCheck,
    #[init(val = -2)]
    bone_cache: i32,
    exclude_dirty: bool,
    /// The bodies the collider query ignores (the anchor's body, the end's body), as last found.
    exclude_rids: [Option<Rid>; 2],
    warnings: Warnings,
    /// Target length set before the rope exists.
    pending_length: Option<f32>,
    /// A cut separated the end from [member end_node] (until the property is set again).
    end_detached: bool,
    /// [member anchor_node] and [member end_node] are set (not empty), as their setters last saw:
    /// a tick reads these instead of asking the engine whether each path is empty.
    anchor_named: bool,
    end_named: bool,
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
    /// Queued for this frame's drawing (see `server::queue_draw`).
    draw_queued: bool,
    pending_dt: f32,
    /// Signals of the last step, emitted once every rope of the batch has been stepped.
    due: DueSignals,
    /// Whether the rope slept when [signal sleeping_state_changed] last told (awake before).
    sleep_told: bool,
    /// The rope sleeps and has been drawn where it sleeps (nothing to draw until it wakes or its
    /// meshes are made again).
    drawn_asleep: bool,
}

/// What the last step has to announce.
#[derive(Default)]
struct DueSignals {
    /// The step's events and the length after it.
    step: Option<(StepEvents, f32)>,
    replay_finished: bool,
    /// The rope fell asleep or woke since [signal sleeping_state_changed] last told.
    sleep_changed: bool,
}

impl DueSignals {
    /// Returns whether there is a signal to emit.
    fn any(&self) -> bool {
        self.replay_finished
            || self.sleep_changed
            || self
                .step
                .as_ref()
                .is_some_and(|(e, _)| e.cut.is_some() || e.loose_faded || e.length_reached)
    }
}

/// An offset property as last checked (bit for bit) and the value the check gave; `None` before the
/// first check.
type OffsetCheck = Option<(Vector3, Vector3)>;

/// Returns whether `a` and `b` are the same bits (a NaN equals itself; 0 and -0 differ).
fn same_bits(a: Vector3, b: Vector3) -> bool {
    a.x.to_bits() == b.x.to_bits()
        && a.y.to_bits() == b.y.to_bits()
        && a.z.to_bits() == b.z.to_bits()
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

// Declared after the class, whose generated macros they use.
mod api;
mod setup;
mod step;

#[godot_api]
impl INode3D for RopeSimulation {
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        use crate::inspector::hide;
        let no_end = self.end_node.is_empty();
        hide(property, &["end_offset", "apply_tension_to_body"], no_end);
        hide(property, &["ground_height"], !self.ground_enabled);
        hide(property, &["sleep_distance"], !self.can_sleep);
        let no_tube = !self.tube_enabled;
        hide(property, &["tube_sides", "smoothing", "material"], no_tube);
    }

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
        let _own = crate::time::own_time(crate::time::Own::RopeSimulation);
        if self.in_editor {
            if !self.is_editor_previewing() {
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
            if server::queue(slot, self.me().clone()) {
                self.queued = true;
                return;
            }
        }
        self.physics_step(delta as f32);
    }

    /// Queues the rope for the frame's drawing of all ropes (see `server`); without a server, or
    /// in the editor, it draws now.
    fn process(&mut self, _delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::RopeSimulation);
        if !self.render_due() || self.draw_queued {
            return;
        }
        if let (false, Some(slot)) = (self.in_editor, self.server_slot) {
            if server::queue_draw(slot, self.me().clone()) {
                self.draw_queued = true;
                return;
            }
        }
        self.render();
    }

    fn exit_tree(&mut self) {
        self.anchor_cache = None;
        self.anchor_skeleton = None;
        self.queued = false;
        self.draw_queued = false;
        if let Some(slot) = self.server_slot.take() {
            server::unregister(slot, &self.to_gd());
        }
    }
}
