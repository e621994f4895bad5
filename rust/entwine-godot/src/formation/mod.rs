//! The node: `FormationController`'s class, its properties and state; its callbacks, script API
//! and behaviour are in the sibling files, each over the core's `Squad` and `CommandLog`.

use std::collections::HashMap;

use entwine_core::formation::command::CommandLog;
use entwine_core::formation::keyframe::{KeyAgent, KeyframeHeader};
use entwine_core::formation::params::{self, SquadParam as P};
use entwine_core::formation::{BearingWatch, Squad};
use entwine_core::kit::Seq16;
use godot::classes::{ImmediateMesh, Mesh, MeshInstance3D, MultiMesh, Node3D};
use godot::prelude::*;

mod agents;
mod bearing;
mod commands;
mod config;
mod editor;
mod library;
mod network;
mod queries;
mod rendering;
mod replay;
mod shape;
mod soldiers;

pub use bearing::SoldierBearing;
pub use shape::{FormationFacing, FormationKind, FormationShape};

use agents::Body;
use library::FormationFile;
use queries::metrics_dict;
use soldiers::Soldier;

use crate::warnings::Warnings;

/// Warning kinds (each printed once): below 20 the tuning properties (`SquadParam as u32`).
mod warn {
    pub const AGENT_COUNT: u32 = 40;
    pub const PLACE_AGENT: u32 = 41;
    pub const NO_CHILDREN: u32 = 42;
    pub const LEADER: u32 = 43;
    pub const KEYFRAME_MALFORMED: u32 = 47;
    pub const KEYFRAME_SIZE: u32 = 48;
    pub const KEYFRAME_ENCODE: u32 = 49;
}

/// Places `node` over ground point `p` (its height kept) and turns it to `yaw` radians.
fn place_on_ground(node: &mut Gd<Node3D>, p: glam::Vec2, yaw: f32) {
    let y = node.get_position().y;
    node.set_position(crate::convert::from_ground(p, y));
    set_yaw(node, yaw);
}

/// Turns `node` to `yaw` radians about the vertical (its other rotations kept).
fn set_yaw(node: &mut Gd<Node3D>, yaw: f32) {
    let mut rotation = node.get_rotation();
    rotation.y = yaw;
    node.set_rotation(rotation);
}

/// Where the agents come from.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum AgentSource {
    /// The controller's `Node3D` children. `CharacterBody3D` children are driven by velocity
    /// (their `velocity` is set and, with `move_bodies`, `move_and_slide()` is called);
    /// `RigidBody3D` children too (their `linear_velocity` is set for the physics step); other
    /// `Node3D` children are moved directly.
    #[default]
    Children,
    /// `internal_agent_count` agents simulated by the controller and drawn with one
    /// `MultiMeshInstance3D` (thousands of agents).
    Internal,
}

/// A squad that forms up and marches in formations defined as data, holding a measured contract.
///
/// **Agents** are the controller's [Node3D] children, or (with [member agent_source] = Internal)
/// [member internal_agent_count] agents drawn with a [MultiMeshInstance3D]. [CharacterBody3D]
/// and [RigidBody3D] children are driven by velocity so the game keeps its own movement and
/// collisions: a character body's `velocity` is set (see [member move_bodies]); a rigid body's
/// `linear_velocity` is set before each physics step, its vertical part left to gravity, its spin
/// about the vertical cleared, and `can_sleep` is turned off (a sleeping body ignores the velocity
/// it is given). Every body's yaw is set by the controller: lock a rigid body's rotation about X
/// and Z (`axis_lock_angular_x`, `axis_lock_angular_z`) so it cannot tip over, and give it no
/// friction against the ground (a [PhysicsMaterial] with `friction` 0): friction brakes the
/// velocity it is given every step, which the feedback then has to make up. Body agents may act
/// on commands late (network, animation, the game's own movement): each one's latency is measured
/// from its motion and compensated per agent ([member measure_latency],
/// [method get_agent_latency]). Everything
/// happens in the controller's local frame: move or turn the controller and the squad goes with it.
///
/// **Formations** are `.ron` files in [member formations_dir], or text given to [method add_formation].
/// The addon's own (line, column, wedge, circle, arc, spiral, box and hollow_box) are also built into
/// the library, so an exported game has them without exporting the files; a file of the same name
/// replaces a built-in one. Files are re-read when they change ([member hot_reload], on in the
/// editor, off in exported games unless set), and files of new names in the folder are read too; a
/// file that does not parse is reported with its path, line and column and the previous version stays in use.
/// A `Custom` formation (points, e.g. drawn with the [EntwineFormationEditor]) is laid out exactly as
/// given for any agent count: fewer agents than points take the first points, head first, where
/// they are; with more agents than points every point is kept and the extra agents stand in ranks
/// behind, each a copy of the points moved back by their depth plus the formation's spacing (one
/// warning in the game names the formation and both counts).
///
/// **Commands**: [method form], [method march], [method march_to], [method halt], [method face],
/// [method dress]. Each one starts a settle clock; when the squad meets the contract (neighbour
/// spacing error ≤ [member contract_spacing], heading standard deviation ≤
/// [member contract_heading], every agent within [member align_threshold] of its slot) the
/// [signal settled] signal reports the metrics, including whether it took ≤ [member contract_settle].
///
/// **Control**: slots are assigned by minimum total travel (paths do not cross); each agent tracks
/// its slot with a PID ([member k1], [member k2], [member k3]) and a debounced
/// idle/moving/aligning/stabilizing state machine at a fixed 60 Hz, with soft-wall repulsion
/// between agents. Rendering interpolates between ticks.
///
/// **Bearing**: every child agent with a [Skeleton3D] (a `get_skeleton()` method such as the
/// test character's, else its first [Skeleton3D] descendant) gets a [EntwineSoldierBearing] modifier (and
/// a [EntwineLimbIK] for the salute) under that skeleton, unless [member soldier_bearings] is off. During
/// [method dress] every soldier with a file-mate on its right turns its eyes right — the head, and
/// a little of the neck and chest, toward its rank's guide (the last of the file-mates on its
/// right; the guide keeps eyes front) at most [member head_turn_speed] degrees per second — and
/// back to the front on the next command ([signal eyes_changed]). [method salute] raises every
/// soldier's right hand to the brow until [method end_salute] (or for [member salute_duration]
/// seconds) ([signal salute_changed]); it is an agent state that changes no position or heading
/// rule. Agents without a skeleton (internal MultiMesh agents, plain nodes) are unaffected; a
/// soldier whose skeleton disappears mid-drill gives one warning and keeps marching.
///
/// **Network** (with [member networked]): the server's commands are stamped with the
/// [EntwineNetClock]'s time, sent to every client, acknowledged, resent after 100 ms up to three times; a
/// peer that never acknowledges is dropped ([signal peer_dropped]) and its agents leave the
/// contract. Commands from anyone but the server are rejected.
///
/// **In the editor** the controller lays out its [member formation] for its children (or its
/// internal agents) and draws the slots (white crosses), their facings (yellow) and the
/// neighbouring pairs the contract's spacing is measured over (blue); it drives nothing, and the
/// drawing is never saved. The inspector's **Lay out agents** button ([method lay_out_agents])
/// moves the children onto their slots as one undoable action. The 3D viewport's **Edit formation**
/// button opens the [EntwineFormationEditor]: the formation's points edited in the viewport and saved as a
/// `.ron` file in [member formations_dir].
#[derive(GodotClass)]
#[class(tool, base = Node3D)]
pub struct FormationController {
    base: Base<Node3D>,

    /// Children (Node3D / CharacterBody3D / RigidBody3D) or internal MultiMesh agents.
    #[export_group(name = "Agents")]
    #[export]
    #[var(set = set_agent_source)]
    agent_source: AgentSource,
    /// Number of internal agents (agent_source = Internal).
    #[export(range = (params::INTERNAL_AGENT_COUNT.hint_min(), params::INTERNAL_AGENT_COUNT.hint_max(), 1.0, suffix = params::INTERNAL_AGENT_COUNT.suffix()))]
    #[var(set = set_internal_agent_count)]
    internal_agent_count: i32,
    /// Mesh drawn for each internal agent (a capsule when empty). Forward is −Z.
    #[export]
    agent_mesh: Option<Gd<Mesh>>,
    /// For CharacterBody3D children: call `move_and_slide()` after setting `velocity`. Turn off
    /// when the body's own script moves it with the velocity it is given.
    #[export]
    #[var(get = is_moving_bodies)]
    move_bodies: bool,
    /// Emit [signal agent_state_changed] for every agent state change (turn off for huge crowds).
    #[export]
    #[var(get = is_emitting_agent_signals)]
    emit_agent_signals: bool,

    /// Folder scanned for `*.ron` formation files (the file name without extension is the name).
    #[export_group(name = "Formation")]
    #[export(dir)]
    formations_dir: GString,
    /// The formation in use. Setting it calls [method form].
    #[export]
    #[var(set = set_formation)]
    formation: GString,
    /// Re-read changed formation files, and read files of new names in [member formations_dir],
    /// while running (checked twice a second). On by default in the editor and when running from
    /// it, off in exported games.
    #[export]
    #[var(get = is_hot_reload_enabled)]
    hot_reload: bool,
    /// Optional leader: the formation's centre and facing follow this node (global transform).
    #[export(node_path = ("Node3D"))]
    leader_node: NodePath,

    /// Fastest an agent moves, m/s.
    #[export_group(name = "Motion")]
    #[export(range = (P::MaxSpeed.spec().hint_min(), P::MaxSpeed.spec().hint_max(), 0.01, suffix = P::MaxSpeed.spec().suffix()))]
    max_speed: f32,
    /// Fastest an agent turns, in radians per second.
    #[export(range = (P::MaxTurnRate.spec().hint_min(), P::MaxTurnRate.spec().hint_max(), 0.1, radians_as_degrees, suffix = P::MaxTurnRate.spec().suffix()))]
    max_turn_rate: f32,
    /// Shortest time for agents to reach new slots after a command, s. Longer moves
    /// take as long as `max_speed` requires.
    #[export(range = (P::ArrivalTime.spec().hint_min(), P::ArrivalTime.spec().hint_max(), 0.01, suffix = P::ArrivalTime.spec().suffix()))]
    arrival_time: f32,
    /// How fast marching starts and stops, m/s².
    #[export(range = (P::AnchorAcceleration.spec().hint_min(), P::AnchorAcceleration.spec().hint_max(), 0.1, suffix = P::AnchorAcceleration.spec().suffix()))]
    march_acceleration: f32,

    /// Position gain k₁: speed per metre of error.
    #[export_group(name = "Feedback")]
    #[export_subgroup(name = "Gains")]
    #[export(range = (P::K1.spec().hint_min(), P::K1.spec().hint_max(), 0.01, suffix = P::K1.spec().suffix()))]
    k1: f32,
    /// Heading gain k₂: turn rate per radian of error.
    #[export(range = (P::K2.spec().hint_min(), P::K2.spec().hint_max(), 0.01, suffix = P::K2.spec().suffix()))]
    k2: f32,
    /// Integral gain k₃ on the accumulated position error.
    #[export(range = (P::K3.spec().hint_min(), P::K3.spec().hint_max(), 0.001, suffix = P::K3.spec().suffix()))]
    k3: f32,
    /// Anti-windup: largest accumulated position error, m·s.
    #[export(range = (P::IntegralLimit.spec().hint_min(), P::IntegralLimit.spec().hint_max(), 0.01, suffix = P::IntegralLimit.spec().suffix()))]
    integral_limit: f32,
    #[export_subgroup(name = "Thresholds")]
    /// ε: distance from the slot above which an agent starts moving, m.
    #[export(range = (P::Align.spec().hint_min(), P::Align.spec().hint_max(), 0.001, suffix = P::Align.spec().suffix()))]
    align_threshold: f32,
    /// Distance under which an agent must stay for `debounce_frames` ticks to stop moving, m.
    #[export(range = (P::Stable.spec().hint_min(), P::Stable.spec().hint_max(), 0.001, suffix = P::Stable.spec().suffix()))]
    stable_threshold: f32,
    /// Ticks (at 60 Hz) a condition must hold before an agent changes state.
    #[export(range = (P::Frames.spec().hint_min(), P::Frames.spec().hint_max(), 1.0, suffix = P::Frames.spec().suffix()))]
    debounce_frames: i32,
    /// δ: heading error under which an agent counts as facing right, in radians.
    #[export(range = (P::Heading.spec().hint_min(), P::Heading.spec().hint_max(), 0.01, radians_as_degrees, suffix = P::Heading.spec().suffix()))]
    heading_tolerance: f32,
    /// Highest gain reached near the end of a transition (remaining-time guidance), 1/s.
    #[export(range = (P::TransitionGainMax.spec().hint_min(), P::TransitionGainMax.spec().hint_max(), 0.1, suffix = P::TransitionGainMax.spec().suffix()))]
    transition_gain_max: f32,

    /// Soft-wall radius r, m: agents closer than this push apart. 0 disables.
    #[export_group(name = "Soft walls", prefix = "repulsion_")]
    #[export(range = (P::RepulsionRadius.spec().hint_min(), P::RepulsionRadius.spec().hint_max(), 0.01, suffix = P::RepulsionRadius.spec().suffix()))]
    repulsion_radius: f32,
    /// Soft-wall strength k, m²/s: push speed k·(1/d − 1/r).
    #[export(range = (P::RepulsionStrength.spec().hint_min(), P::RepulsionStrength.spec().hint_max(), 0.01, suffix = P::RepulsionStrength.spec().suffix()))]
    repulsion_strength: f32,

    /// Contract: largest neighbour-spacing error, m.
    #[export_group(name = "Contract", prefix = "contract_")]
    #[export(range = (P::ContractSpacing.spec().hint_min(), P::ContractSpacing.spec().hint_max(), 0.001, suffix = P::ContractSpacing.spec().suffix()))]
    contract_spacing: f32,
    /// Contract: largest standard deviation of heading errors, in radians.
    #[export(range = (P::ContractHeading.spec().hint_min(), P::ContractHeading.spec().hint_max(), 0.01, radians_as_degrees, suffix = P::ContractHeading.spec().suffix()))]
    contract_heading: f32,
    /// Contract: longest time from a command to settling, s.
    #[export(range = (P::ContractSettle.spec().hint_min(), P::ContractSettle.spec().hint_max(), 0.01, suffix = P::ContractSettle.spec().suffix()))]
    contract_settle: f32,

    /// Actuation latency, s: agents act on commands this late. The controller compensates
    /// (Smith predictor); internal agents also simulate it (for testing robustness). For body
    /// agents it is the latency *assumed* until each agent's own is measured (see
    /// [member measure_latency]); changing it starts the measurement over.
    #[export_group(name = "Latency and noise")]
    #[export(range = (P::Latency.spec().hint_min(), P::Latency.spec().hint_max(), 0.001, suffix = P::Latency.spec().suffix()))]
    actuation_latency: f32,
    /// Body agents: measure each agent's actuation latency — how long after a velocity command
    /// its body moves with it, found by matching the commands of the last second against its
    /// observed motion (robust to jitter and lost updates) — and use it for that agent: in the
    /// prediction, the lead of its path, and its gain k1, lowered for slow agents so the loop
    /// stays stable ([member k1] kept up to 120 ms, two thirds of it at 210 ms — 1.8 → 1.2 for
    /// the default — and at least half of it beyond; [method get_agent_k1]). Measured once the body has moved
    /// for a fraction of a second with changing commands, at a physics rate of at least the
    /// controller's 60 Hz. Read it with [method get_agent_latency]. Off: every agent uses
    /// [member actuation_latency] (internal agents always do), k1 lowered for it the same way.
    #[export]
    #[var(get = is_measuring_latency)]
    measure_latency: bool,
    /// Internal agents only: standard deviation of a random displacement added every tick, m, to test robustness.
    #[export(range = (P::StepNoise.spec().hint_min(), P::StepNoise.spec().hint_max(), 0.0001, suffix = P::StepNoise.spec().suffix()))]
    step_noise: f32,

    /// Give every child agent that has a [Skeleton3D] a [EntwineSoldierBearing] (eyes right on
    /// [method dress], [method salute]). Turning it off removes the ones the controller added.
    #[export_group(name = "Bearing")]
    #[export]
    #[var(get = has_soldier_bearings, set = set_soldier_bearings)]
    soldier_bearings: bool,
    /// Fastest a soldier's head turns (eyes right and back), in radians per second.
    #[export(range = (params::HEAD_TURN_SPEED.hint_min(), params::HEAD_TURN_SPEED.hint_max(), 1.0, radians_as_degrees, suffix = params::HEAD_TURN_SPEED.suffix()))]
    head_turn_speed: f32,
    /// How long [method salute] lasts, seconds; 0 holds it until [method end_salute].
    #[export(range = (params::SALUTE_DURATION.hint_min(), params::SALUTE_DURATION.hint_max(), 0.1, suffix = params::SALUTE_DURATION.suffix()))]
    salute_duration: f32,

    /// Send commands over the multiplayer API (server → clients, acknowledged).
    #[export_group(name = "Network")]
    #[export]
    #[var(get = is_networked, set = set_networked)]
    networked: bool,
    /// A [EntwineNetClock] whose server time stamps the commands (local clock when empty).
    #[export(node_path = ("EntwineNetClock"))]
    net_clock_node: NodePath,
    /// Clients acknowledge commands (turn off only to test how the server handles a silent peer).
    #[export]
    #[var(get = is_acknowledging_commands)]
    acknowledge_commands: bool,
    /// State keyframes the server sends per second (0 = none): the squad's anchor, transition and
    /// every agent's slot, position and heading, quantised and delta-coded in unreliable chunks of
    /// up to 96 agents, so late joiners and lossy clients converge on the server's squad.
    #[export(range = (params::KEYFRAME_RATE.hint_min(), params::KEYFRAME_RATE.hint_max(), 0.1, suffix = params::KEYFRAME_RATE.suffix()))]
    keyframe_rate: f32,

    /// Draw slots, the baseline, repulsion radii, state colours and (eyes right) each soldier's line
    /// of sight to its guide.
    #[export_group(name = "Debug")]
    #[export]
    #[var(get = is_debug_draw_enabled)]
    debug_draw: bool,
    /// Keep the last `record_frames` ticks of every agent for replay and export.
    #[export]
    #[var(get = is_recording, set = set_recording)]
    recording: bool,
    /// Frames the recording ring keeps.
    #[export(range = (params::RECORD_FRAMES.hint_min(), params::RECORD_FRAMES.hint_max(), 1.0, suffix = params::RECORD_FRAMES.suffix()))]
    record_frames: i32,

    /// Live: largest neighbour-spacing error, m.
    #[var(no_set)]
    spacing_error: f32,
    /// Live: standard deviation of heading errors, radians.
    #[var(no_set)]
    heading_std: f32,
    /// Seconds from the last command to settling, or −1 while settling.
    #[var(no_set)]
    settle_time: f32,

    squad: Squad,
    formations: HashMap<String, FormationFile>,
    /// Files that did not parse, with their modification time then (hot reload reads a file new to
    /// `formations_dir` unless it is here unchanged).
    new_files: HashMap<String, u64>,
    current: String,
    agents: Vec<Gd<Node3D>>,
    bodies: Vec<Option<Body>>,
    peer_of_agent: Vec<i32>,
    children_seen: i32,
    multimesh: Option<Gd<MultiMesh>>,
    mm_buffer: PackedFloat32Array,
    debug_mesh: Option<Gd<ImmediateMesh>>,
    debug_instance: Option<Gd<MeshInstance3D>>,
    last_states: Vec<u8>,
    reload_timer: f64,
    warnings: Warnings,
    replay_frame: Option<usize>,
    /// Duplicate suppression, numbering, the resend ring, acknowledgements, ids already applied.
    commands: CommandLog,
    /// Whether the MultiplayerAPI's `peer_disconnected` is connected to this controller.
    watching_peers: bool,
    /// The keyframe stream's state (runtime only).
    keyframes: Keyframes,
    /// The gate in front of the network messages (runtime only).
    inbox: entwine_core::kit::Inbox,
    ready: bool,
    soldiers: Vec<Option<Soldier>>,
    heads: Vec<Option<Vector3>>,
    /// What changed in the squad's bearing since the last signals.
    bearing_watch: BearingWatch,
    /// The warning kinds the squad's bearings already printed (each kind once per squad).
    bearing_warnings: std::rc::Rc<std::cell::RefCell<Warnings>>,
    /// Inspector button: [method lay_out_agents].
    #[export_tool_button(fn = Self::lay_out_agents, name = "Lay out agents", icon = "ToolMove")]
    lay_out_agents_button: PhantomVar<Callable>,
    /// Running inside the editor: the preview (slots drawn, nothing driven) replaces the game.
    in_editor: bool,
    /// The editor's slot drawing is out of date.
    editor_dirty: bool,
    /// The editor's slot drawing (an internal child, never saved).
    editor_slots: Option<(Gd<MeshInstance3D>, Gd<ImmediateMesh>)>,
    /// The custom formation, its point count and the agent count last warned about for seating
    /// agents beyond its points (warned once per combination).
    custom_overflow_warned: Option<(String, usize, usize)>,
}

/// The keyframe stream's running state: its timer, sequence numbers, buffers and counters.
#[derive(Default)]
struct Keyframes {
    since: f32,
    seq: Seq16,
    last_seq: Option<Seq16>,
    buf: Vec<u8>,
    agents: Vec<KeyAgent>,
    header: KeyframeHeader,
    /// Keyframe bytes sent (server, summed over peers), chunks applied, malformed, stale.
    stats: [i64; 4],
}

// After the class, so the class's generated macros are in scope.
mod api;
mod node;
