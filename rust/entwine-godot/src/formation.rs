//! `FormationController`: a squad forms up and marches in data-defined formations
//! (`entwine_core::formation`), driving child agents or internal MultiMesh agents.

use std::collections::HashMap;

use entwine_core::formation::command::{
    self, flight_age, route, Command, CommandLog, NetAction, Order, Rejection, Route,
};
use entwine_core::formation::keyframe::{
    decode_chunk, encode_chunk, KeyAgent, KeyframeHeader, MAX_CHUNK_AGENTS,
};
use entwine_core::formation::{
    AgentState, Eyes, FormationDef, Gains, Gesture, Metrics, Squad, SquadConfig, SquadParam,
    Thresholds,
};
use glam::Vec2;
use godot::classes::mesh::PrimitiveType;
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::node::InternalMode;
use godot::classes::{
    base_material_3d, CapsuleMesh, CharacterBody3D, DirAccess, FileAccess, INode3D, ImmediateMesh,
    Mesh, MeshInstance3D, MultiMesh, MultiMeshInstance3D, Node3D, RigidBody3D, Skeleton3D,
    StandardMaterial3D, Time,
};
use godot::prelude::*;

use crate::convert::{vec3, vector3};
use crate::limb_ik::LimbIK;
use crate::net_clock::NetClock;

mod bearing;
mod config;
pub use bearing::SoldierBearing;

/// A child agent the game's physics moves: driven by velocity.
#[derive(Clone)]
enum Body {
    /// `velocity` is set (and `move_and_slide()` called with `move_bodies`).
    Character(Gd<CharacterBody3D>),
    /// `linear_velocity` is set before the physics step.
    Rigid(Gd<RigidBody3D>),
}

impl Body {
    /// The body `node` is, if any. A rigid body is kept awake from now on: a sleeping body does
    /// not move with the velocity it is given.
    fn of(node: &Gd<Node3D>) -> Option<Self> {
        if let Ok(c) = node.clone().try_cast::<CharacterBody3D>() {
            Some(Self::Character(c))
        } else {
            let mut rigid = node.clone().try_cast::<RigidBody3D>().ok()?;
            rigid.set_can_sleep(false);
            rigid.set_sleeping(false);
            Some(Self::Rigid(rigid))
        }
    }
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
/// **Formations** are `.ron` files in [member formations_dir] (the addon ships line, column,
/// wedge, circle, arc, spiral, box and hollow_box), or text given to [method add_formation]. Files
/// are re-read when they change ([member hot_reload]); a file that does not parse is reported with
/// its path, line and column and the previous version stays in use.
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
/// test character's, else its first [Skeleton3D] descendant) gets a [SoldierBearing] modifier (and
/// a [LimbIK] for the salute) under that skeleton, unless [member soldier_bearings] is off. During
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
/// [NetClock]'s time, sent to every client, acknowledged, resent after 100 ms up to three times; a
/// peer that never acknowledges is dropped ([signal peer_dropped]) and its agents leave the
/// contract. Commands from anyone but the server are rejected.
#[derive(GodotClass)]
#[class(base = Node3D)]
pub struct FormationController {
    base: Base<Node3D>,

    /// Children (Node3D / CharacterBody3D / RigidBody3D) or internal MultiMesh agents.
    #[export_group(name = "Agents")]
    #[export]
    #[var(set = set_agent_source)]
    agent_source: AgentSource,
    /// Number of internal agents (agent_source = Internal), 0..=65536.
    #[export(range = (0.0, 65536.0, 1.0))]
    #[var(set = set_internal_agent_count)]
    internal_agent_count: i32,
    /// Mesh drawn for each internal agent (a capsule when empty). Forward is −Z.
    #[export]
    agent_mesh: Option<Gd<Mesh>>,
    /// For CharacterBody3D children: call `move_and_slide()` after setting `velocity`. Turn off
    /// when the body's own script moves it with the velocity it is given.
    #[export]
    move_bodies: bool,
    /// Emit [signal agent_state_changed] for every agent state change (turn off for huge crowds).
    #[export]
    emit_agent_signals: bool,

    /// Folder scanned for `*.ron` formation files (the file name without extension is the name).
    #[export_group(name = "Formation")]
    #[export(dir)]
    formations_dir: GString,
    /// The formation in use. Setting it calls [method form].
    #[export]
    #[var(set = set_formation)]
    formation: GString,
    /// Re-read changed formation files while running (checked twice a second).
    #[export]
    hot_reload: bool,
    /// Optional leader: the formation's centre and facing follow this node (global transform).
    #[export]
    leader: NodePath,

    /// Fastest an agent moves, m/s (0.01..=100).
    #[export_group(name = "Motion")]
    #[export(range = (0.01, 100.0, 0.01, suffix = "m/s"))]
    max_speed: f32,
    /// Fastest an agent turns, degrees per second (0.58..=5729.6, i.e. 0.01..=100 rad/s).
    #[export(range = (0.58, 5729.6, 0.1, suffix = "°/s"))]
    max_turn_rate: f32,
    /// Shortest time for agents to reach new slots after a command, s (0.05..=60). Longer moves
    /// take as long as `max_speed` requires.
    #[export(range = (0.05, 60.0, 0.01, suffix = "s"))]
    arrival_time: f32,
    /// How fast marching starts and stops, m/s² (0.1..=100).
    #[export(range = (0.1, 100.0, 0.1, suffix = "m/s²"))]
    march_acceleration: f32,

    /// Position gain k₁ (1/s, 0..=20): speed per metre of error.
    #[export_group(name = "Feedback")]
    #[export(range = (0.0, 20.0, 0.01))]
    k1: f32,
    /// Heading gain k₂ (1/s, 0..=20): turn rate per radian of error.
    #[export(range = (0.0, 20.0, 0.01))]
    k2: f32,
    /// Integral gain k₃ (1/s², 0..=10) on the accumulated position error.
    #[export(range = (0.0, 10.0, 0.001))]
    k3: f32,
    /// Anti-windup: largest accumulated position error, m·s (0..=10).
    #[export(range = (0.0, 10.0, 0.01, suffix = "m·s"))]
    integral_limit: f32,
    /// ε: distance from the slot above which an agent starts moving, m (0.001..=10).
    #[export(range = (0.001, 10.0, 0.001, suffix = "m"))]
    align_threshold: f32,
    /// Distance under which an agent must stay for `debounce_frames` ticks to stop moving, m
    /// (0.0005..=align_threshold).
    #[export(range = (0.0005, 10.0, 0.001, suffix = "m"))]
    stable_threshold: f32,
    /// Ticks (at 60 Hz) a condition must hold before an agent changes state (1..=120).
    #[export(range = (1.0, 120.0, 1.0))]
    debounce_frames: i32,
    /// δ: heading error under which an agent counts as facing right, degrees (0.0058..=57.29,
    /// i.e. 0.0001..=1 rad).
    #[export(range = (0.01, 57.0, 0.01, suffix = "°"))]
    heading_tolerance: f32,
    /// Highest gain reached near the end of a transition (remaining-time guidance), 1/s (0..=30).
    #[export(range = (0.0, 30.0, 0.1))]
    transition_gain_max: f32,

    /// Soft-wall radius r, m (0..=10): agents closer than this push apart. 0 disables.
    #[export_group(name = "Soft walls")]
    #[export(range = (0.0, 10.0, 0.01, suffix = "m"))]
    repulsion_radius: f32,
    /// Soft-wall strength k, m²/s (0..=100): push speed k·(1/d − 1/r).
    #[export(range = (0.0, 100.0, 0.01))]
    repulsion_strength: f32,

    /// Contract: largest neighbour-spacing error, m.
    #[export_group(name = "Contract")]
    #[export(range = (0.0, 10.0, 0.001, suffix = "m"))]
    contract_spacing: f32,
    /// Contract: largest standard deviation of heading errors, degrees (0..=183.3, i.e. 0..=3.2 rad).
    #[export(range = (0.0, 180.0, 0.01, suffix = "°"))]
    contract_heading: f32,
    /// Contract: longest time from a command to settling, s.
    #[export(range = (0.0, 600.0, 0.01, suffix = "s"))]
    contract_settle: f32,

    /// Actuation latency, s (0..=1): agents act on commands this late. The controller compensates
    /// (Smith predictor); internal agents also simulate it (for testing robustness). For body
    /// agents it is the latency *assumed* until each agent's own is measured (see
    /// [member measure_latency]); changing it starts the measurement over.
    #[export_group(name = "Latency and noise")]
    #[export(range = (0.0, 1.0, 0.001, suffix = "s"))]
    actuation_latency: f32,
    /// Body agents: measure each agent's actuation latency — how long after a velocity command
    /// its body moves with it, found by matching the commands of the last second against its
    /// observed motion (robust to jitter and lost updates) — and use it for that agent: in the
    /// prediction, the lead of its path, and its gain k1, lowered for slow agents as the seed
    /// says ([member k1] kept up to 120 ms, two thirds of it at 210 ms — the seed's 1.8 → 1.2 —
    /// and at least half of it beyond; [method get_agent_k1]). Measured once the body has moved
    /// for a fraction of a second with changing commands, at a physics rate of at least the
    /// controller's 60 Hz. Read it with [method get_agent_latency]. Off: every agent uses
    /// [member actuation_latency] (internal agents always do), k1 lowered for it the same way.
    #[export]
    measure_latency: bool,
    /// Internal agents only: standard deviation of a random displacement added every tick, m
    /// (0..=1), to test robustness.
    #[export(range = (0.0, 1.0, 0.0001, suffix = "m"))]
    step_noise: f32,

    /// Give every child agent that has a [Skeleton3D] a [SoldierBearing] (eyes right on
    /// [method dress], [method salute]). Turning it off removes the ones the controller added.
    #[export_group(name = "Bearing")]
    #[export]
    #[var(set = set_soldier_bearings)]
    soldier_bearings: bool,
    /// Fastest a soldier's head turns (eyes right and back), degrees per second (1..=3600).
    #[export(range = (1.0, 3600.0, 1.0, suffix = "°/s"))]
    head_turn_speed: f32,
    /// How long [method salute] lasts, seconds; 0 holds it until [method end_salute] (0..=600).
    #[export(range = (0.0, 600.0, 0.1, suffix = "s"))]
    salute_duration: f32,

    /// Send commands over the multiplayer API (server → clients, acknowledged).
    #[export_group(name = "Network")]
    #[export]
    networked: bool,
    /// A [NetClock] whose server time stamps the commands (local clock when empty).
    #[export]
    net_clock: NodePath,
    /// Clients acknowledge commands (turn off only to test how the server handles a silent peer).
    #[export]
    acknowledge_commands: bool,
    /// State keyframes the server sends per second (0 = none): the squad's anchor, transition and
    /// every agent's slot, position and heading, quantised and delta-coded in unreliable chunks of
    /// up to 96 agents, so late joiners and lossy clients converge on the server's squad (0..=60).
    #[export(range = (0.0, 60.0, 0.1, suffix = "Hz"))]
    keyframe_rate: f32,

    /// Draw slots, the baseline, repulsion radii, state colours and (eyes right) each soldier's line
    /// of sight to its guide.
    #[export_group(name = "Debug")]
    #[export]
    debug_draw: bool,
    /// Keep the last `record_frames` ticks of every agent for replay and export.
    #[export]
    #[var(set = set_recording)]
    recording: bool,
    /// Frames the recording ring keeps (1..=100000; 1000 ≈ 16.7 s).
    #[export(range = (1.0, 100000.0, 1.0))]
    record_frames: i32,

    /// Live: largest neighbour-spacing error, m.
    #[var(no_set)]
    spacing_error: f32,
    /// Live: standard deviation of heading errors, degrees.
    #[var(no_set)]
    heading_std: f32,
    /// Seconds from the last command to settling, or −1 while settling.
    #[var(no_set)]
    settle_time: f32,

    squad: Squad,
    formations: HashMap<String, FormationFile>,
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
    warned: u64,
    replay_frame: Option<usize>,
    /// Duplicate suppression, numbering, the resend ring, acknowledgements, ids already applied.
    commands: CommandLog,
    /// Whether the MultiplayerAPI's `peer_disconnected` is connected to this controller.
    watching_peers: bool,
    kf_since: f32,
    kf_seq: u16,
    kf_last_seq: Option<u16>,
    kf_buf: Vec<u8>,
    kf_agents: Vec<KeyAgent>,
    kf_header: KeyframeHeader,
    /// Keyframe bytes sent (server, summed over peers), chunks applied, malformed, stale.
    kf_stats: [i64; 4],
    ready: bool,
    soldiers: Vec<Option<Soldier>>,
    heads: Vec<Option<Vector3>>,
    last_eyes_right: bool,
    last_saluting: bool,
    last_bearings: Vec<u8>,
    /// The warning kinds the squad's bearings already printed (each kind once per squad).
    bearing_warnings: std::rc::Rc<std::cell::Cell<u8>>,
}

/// A child agent's skeleton and the bearing modifier on it.
struct Soldier {
    skeleton: InstanceId,
    bearing: Gd<SoldierBearing>,
    /// Whether the controller created the modifiers (and frees them when the agent leaves).
    owned: bool,
}

struct FormationFile {
    path: String,
    modified: u64,
    def: FormationDef,
}

#[godot_api]
impl INode3D for FormationController {
    fn init(base: Base<Node3D>) -> Self {
        let cfg = SquadConfig::default();
        Self {
            base,
            agent_source: AgentSource::Children,
            internal_agent_count: 20,
            agent_mesh: None,
            move_bodies: true,
            emit_agent_signals: true,
            formations_dir: "res://addons/entwine/formations".into(),
            formation: "line".into(),
            hot_reload: true,
            leader: NodePath::default(),
            max_speed: cfg.max_speed,
            max_turn_rate: cfg.max_turn_rate.to_degrees(),
            arrival_time: cfg.arrival_time,
            march_acceleration: cfg.anchor_acceleration,
            k1: cfg.gains.k1,
            k2: cfg.gains.k2,
            k3: cfg.gains.k3,
            integral_limit: cfg.gains.integral_limit,
            align_threshold: cfg.thresholds.align,
            stable_threshold: cfg.thresholds.stable,
            debounce_frames: i32::from(cfg.thresholds.frames),
            heading_tolerance: cfg.thresholds.heading.to_degrees(),
            transition_gain_max: cfg.transition_gain_max,
            repulsion_radius: cfg.repulsion_radius,
            repulsion_strength: cfg.repulsion_strength,
            contract_spacing: cfg.contract_spacing,
            contract_heading: cfg.contract_heading.to_degrees(),
            contract_settle: cfg.contract_settle,
            actuation_latency: 0.0,
            measure_latency: true,
            step_noise: 0.0,
            networked: false,
            net_clock: NodePath::default(),
            acknowledge_commands: true,
            keyframe_rate: 2.0,
            kf_since: 0.0,
            kf_seq: 0,
            kf_last_seq: None,
            kf_buf: Vec::new(),
            kf_agents: Vec::new(),
            kf_header: KeyframeHeader::default(),
            kf_stats: [0; 4],
            debug_draw: false,
            recording: false,
            record_frames: 1000,
            spacing_error: 0.0,
            heading_std: 0.0,
            settle_time: -1.0,
            squad: Squad::new(0, false, cfg),
            formations: HashMap::new(),
            current: "line".into(),
            agents: Vec::new(),
            bodies: Vec::new(),
            peer_of_agent: Vec::new(),
            children_seen: -1,
            multimesh: None,
            mm_buffer: PackedFloat32Array::new(),
            debug_mesh: None,
            debug_instance: None,
            last_states: Vec::new(),
            reload_timer: 0.0,
            warned: 0,
            replay_frame: None,
            commands: CommandLog::default(),
            watching_peers: false,
            ready: false,
            soldier_bearings: true,
            head_turn_speed: 180.0,
            salute_duration: 0.0,
            soldiers: Vec::new(),
            heads: Vec::new(),
            last_eyes_right: false,
            last_saluting: false,
            last_bearings: Vec::new(),
            bearing_warnings: Default::default(),
        }
    }

    fn ready(&mut self) {
        self.load_formation_dir();
        self.ready = true;
        self.rebuild_agents(true);
        if self.recording {
            self.start_recording();
        }
    }

    fn physics_process(&mut self, delta: f64) {
        if !self.ready {
            return;
        }
        self.hot_reload_tick(delta);
        self.network_tick();
        self.keyframe_tick(delta as f32);
        if self.replay_frame.is_some() {
            return;
        }
        self.run(delta as f32);
    }

    fn process(&mut self, _delta: f64) {
        if !self.ready {
            return;
        }
        self.draw_agents();
        self.draw_debug();
    }
}

#[godot_api]
impl FormationController {
    /// [member agent_source] value: drive the controller's children.
    #[constant]
    const AGENTS_CHILDREN: i64 = 0;
    /// [member agent_source] value: simulate internal agents drawn with a MultiMesh.
    #[constant]
    const AGENTS_INTERNAL: i64 = 1;

    /// Emitted once per command when the squad meets the contract, with the metrics: `settle_time`
    /// (s), `contract_met`, `spacing_error` (m, over every neighbouring pair: see [method
    /// get_neighbour_pairs]), `nearest_spacing_error` (m, each slot's nearest neighbour only),
    /// `heading_std` (degrees), `max_slot_error` (m), `mean_slot_error` (m), `active`, `command`.
    #[signal]
    fn settled(metrics: VarDictionary);
    /// Emitted when a formation is taken into use.
    #[signal]
    fn formation_changed(name: GString);
    /// Emitted when a formation cannot be used (unknown, unparsable, or it cannot seat the squad);
    /// the previous one stays in use.
    #[signal]
    fn formation_rejected(name: GString, reason: GString);
    /// Emitted when an agent's state changes (0 idle, 1 moving, 2 aligning, 3 stabilizing).
    #[signal]
    fn agent_state_changed(index: i64, state: i64);
    /// Emitted when a command is refused (duplicate, from a non-server peer, bad arguments).
    #[signal]
    fn command_rejected(command: GString, reason: GString);
    /// Emitted on the server when a peer was dropped: it never acknowledged a command, or it
    /// disconnected while owning agents that took part.
    #[signal]
    fn peer_dropped(peer_id: i64);
    /// Emitted on a client when a command from the server was applied.
    #[signal]
    fn command_received(id: i64, command: GString);
    /// Emitted when the squad's eyes turn right ([method dress]) or back to the front (the next
    /// command).
    #[signal]
    fn eyes_changed(right: bool);
    /// Emitted when the squad starts or ends a salute.
    #[signal]
    fn salute_changed(saluting: bool);
    /// Emitted when an agent's bearing changes (with [member emit_agent_signals]): bit flags
    /// [constant BEARING_EYES_RIGHT] and [constant BEARING_SALUTING].
    #[signal]
    fn agent_bearing_changed(index: i64, bearing: i64);

    /// [method get_agent_bearing] flag: the agent's eyes are right (it has a guide to dress on).
    #[constant]
    const BEARING_EYES_RIGHT: i64 = 1;
    /// [method get_agent_bearing] flag: the agent salutes.
    #[constant]
    const BEARING_SALUTING: i64 = 2;

    // ----- properties -------------------------------------------------------------------------

    #[func]
    fn set_agent_source(&mut self, source: AgentSource) {
        self.agent_source = source;
        if self.ready {
            self.rebuild_agents(true);
        }
    }

    #[func]
    fn set_internal_agent_count(&mut self, count: i32) {
        let clamped = count.clamp(0, 65_536);
        if clamped != count {
            self.warn_once(
                1 << 40,
                &format!(
                    "internal_agent_count must be in 0..=65536 (got {count}); using {clamped}"
                ),
            );
        }
        self.internal_agent_count = clamped;
        if self.ready && self.agent_source == AgentSource::Internal {
            self.rebuild_agents(true);
        }
    }

    #[func]
    fn set_soldier_bearings(&mut self, on: bool) {
        self.soldier_bearings = on;
        if self.ready {
            self.attach_bearings();
        }
    }

    #[func]
    fn set_formation(&mut self, name: GString) {
        self.formation = name.clone();
        if self.ready {
            self.form(name);
        }
    }

    #[func]
    fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if self.ready {
            if on {
                self.start_recording();
            } else {
                self.squad.set_recording(0);
                self.replay_frame = None;
            }
        }
    }

    // ----- commands ---------------------------------------------------------------------------

    /// Re-forms the squad into the formation called `name` (a file name without `.ron` from
    /// [member formations_dir], or a name given to [method add_formation]). Returns false (and
    /// keeps the current formation) when it is unknown, cannot seat the squad, or is a duplicate
    /// of the command still settling.
    #[func]
    pub fn form(&mut self, name: GString) -> bool {
        self.command(Command::form(name.to_string()))
    }

    /// Marches the squad along `direction` (global; its vertical part is ignored) at `speed` m/s
    /// until [method halt]. Agents turn in place to face the direction of march.
    #[func]
    pub fn march(&mut self, direction: Vector3, speed: f32) -> bool {
        self.command(Command::march(vec3(direction), speed))
    }

    /// Marches the squad's centre to `target` (global position) at `speed` m/s and halts there.
    #[func]
    pub fn march_to(&mut self, target: Vector3, speed: f32) -> bool {
        self.command(Command::march_to(vec3(target), speed))
    }

    /// Stops marching (the squad brakes at [member march_acceleration]).
    #[func]
    pub fn halt(&mut self) -> bool {
        self.command(Command::halt())
    }

    /// Turns every agent in place to face the global yaw `angle` (radians, like `rotation.y`).
    #[func]
    pub fn face(&mut self, angle: f32) -> bool {
        self.command(Command::face(angle))
    }

    /// Re-fits the formation to where the squad stands (baseline by weighted PCA and weighted
    /// median), closes gaps left by dropped agents and re-forms: drill's "dress".
    #[func]
    pub fn dress(&mut self) -> bool {
        self.command(Command::dress())
    }

    /// Every agent salutes: soldiers with a skeleton raise the right hand to the brow through their
    /// [SoldierBearing]'s [LimbIK]. Lasts until [method end_salute], or [member salute_duration]
    /// seconds when that is above 0. Positions, headings and the settle clock are untouched.
    #[func]
    pub fn salute(&mut self) -> bool {
        let seconds = if self.salute_duration.is_finite() {
            self.salute_duration.clamp(0.0, 600.0)
        } else {
            0.0
        };
        if seconds != self.salute_duration {
            let msg = format!(
                "salute_duration must be in 0..=600 s (got {}); using {seconds}",
                self.salute_duration
            );
            self.warn_once(1 << 45, &msg);
        }
        self.command(Command::salute(seconds))
    }

    /// Ends the salute: hands down (blended over the bearing's `salute_time`).
    #[func]
    pub fn end_salute(&mut self) -> bool {
        self.command(Command::end_salute())
    }

    /// Returns true while the squad salutes.
    #[func]
    pub fn is_saluting(&self) -> bool {
        self.squad.is_saluting()
    }

    /// Returns true while the squad has eyes right (after [method dress], until the next command).
    #[func]
    pub fn is_eyes_right(&self) -> bool {
        self.squad.is_eyes_right()
    }

    /// Returns the index of the agent that agent `index` dresses on (its rank's guide) while eyes
    /// are right, or -1 (eyes front, the guide itself, no file-mate on its right, a circle).
    #[func]
    pub fn get_agent_guide(&self, index: i32) -> i32 {
        self.squad
            .guide(index.max(0) as usize)
            .map_or(-1, |g| g as i32)
    }

    /// Returns agent `index`'s bearing: [constant BEARING_EYES_RIGHT] | [constant BEARING_SALUTING]
    /// flags (0: eyes front, arms down).
    #[func]
    pub fn get_agent_bearing(&self, index: i32) -> i32 {
        i32::from(self.squad.bearing(index.max(0) as usize).bits())
    }

    /// Returns the [SoldierBearing] driving agent `index`'s skeleton (to tune its bones, limits or
    /// salute), or null for an agent without a skeleton.
    #[func]
    pub fn get_soldier_bearing(&self, index: i32) -> Option<Gd<SoldierBearing>> {
        let s = self.soldiers.get(index.max(0) as usize)?.as_ref()?;
        s.bearing.is_instance_valid().then(|| s.bearing.clone())
    }

    /// Parses `ron_text` as a formation and registers it under `name` (replacing one with that
    /// name). Returns false and reports line and column when the text is invalid.
    #[func]
    pub fn add_formation(&mut self, name: GString, ron_text: GString) -> bool {
        match FormationDef::from_ron(&ron_text.to_string()) {
            Ok(def) => {
                self.formations.insert(
                    name.to_string(),
                    FormationFile {
                        path: String::new(),
                        modified: 0,
                        def,
                    },
                );
                true
            }
            Err(e) => {
                let reason = format!("formation '{name}' at {e}");
                self.reject_formation(&name.to_string(), &reason);
                false
            }
        }
    }

    /// Returns the names of the known formations, sorted.
    #[func]
    pub fn get_formation_names(&self) -> PackedStringArray {
        let mut names: Vec<&String> = self.formations.keys().collect();
        names.sort();
        names.into_iter().map(GString::from).collect()
    }

    /// Runs the controller for `seconds` of simulated time right now (in 60 Hz ticks), e.g. for
    /// tests, tools or fast-forwarding. Returns the number of ticks run.
    #[func]
    pub fn advance(&mut self, seconds: f32) -> i32 {
        if !seconds.is_finite() || seconds <= 0.0 {
            return 0;
        }
        let mut ticks = 0;
        let mut left = seconds.min(3600.0);
        while left > 1e-6 {
            let dt = left.min(8.0 / 60.0);
            ticks += self.run(dt);
            left -= dt;
        }
        ticks as i32
    }

    /// Teleports every agent into its slot (e.g. to spawn a squad already formed).
    #[func]
    pub fn snap_to_slots(&mut self) {
        self.squad.snap_to_slots();
        self.write_agents();
    }

    /// Teleports agent `index` to the global `position` facing the global yaw `yaw` (radians).
    #[func]
    pub fn place_agent(&mut self, index: i32, position: Vector3, yaw: f32) {
        let Some(i) = self.index(index, "place_agent") else {
            return;
        };
        let local = self.base().to_local(position);
        let yaw_local = yaw - self.base().get_global_rotation().y;
        if !local.is_finite() || !yaw_local.is_finite() {
            self.warn_once(
                1 << 41,
                "place_agent: position and yaw must be finite; ignored",
            );
            return;
        }
        self.squad.place(i, Vec2::new(local.x, local.z), yaw_local);
        self.write_agents();
    }

    /// Takes agent `index` out of the contract (false) or back in (true); slots are re-laid for
    /// the agents taking part.
    #[func]
    pub fn set_agent_active(&mut self, index: i32, active: bool) {
        if let Some(i) = self.index(index, "set_agent_active") {
            self.squad.set_active(i, active);
        }
    }

    /// Takes every agent listed in [param indices] out of the contract ([param active] false) or
    /// back in, re-laying and re-assigning the formation once for the whole batch (calling
    /// [method set_agent_active] per agent re-lays once per call). Out-of-range indices are
    /// ignored. Returns how many agents changed.
    #[func]
    pub fn set_agents_active(&mut self, indices: PackedInt32Array, active: bool) -> i32 {
        let n = self.squad.len();
        let mut pick = vec![false; n];
        for &i in indices.as_slice() {
            if i >= 0 && (i as usize) < n {
                pick[i as usize] = true;
            }
        }
        self.squad.set_active_where(|i| pick[i], active) as i32
    }

    /// Takes every agent tied to [param peer_id] (see [method set_agent_peer]) out of the contract
    /// in one re-form and forgets the acknowledgements the peer owed — what the server does by
    /// itself when a peer is dropped; call it when a peer disconnects if its agents should leave
    /// the contract too. Returns how many agents left.
    #[func]
    pub fn drop_peer(&mut self, peer_id: i32) -> i32 {
        self.commands.forget_peer(peer_id);
        self.deactivate_peer(peer_id) as i32
    }

    /// Returns how many times the formation has been laid out and slots assigned since the squad
    /// was built: one per `form`, `dress`, [method set_agent_active] that changed something,
    /// [method set_agents_active] batch or dropped peer.
    #[func]
    pub fn get_relayout_count(&self) -> i64 {
        self.squad.relayout_count() as i64
    }

    /// Ties agent `index` to multiplayer peer `peer_id`: when that peer is dropped, so is the agent.
    #[func]
    pub fn set_agent_peer(&mut self, index: i32, peer_id: i32) {
        if let Some(i) = self.index(index, "set_agent_peer") {
            if self.peer_of_agent.len() < self.squad.len() {
                self.peer_of_agent.resize(self.squad.len(), 0);
            }
            self.peer_of_agent[i] = peer_id;
        }
    }

    /// Returns the number of agents.
    #[func]
    pub fn get_agent_count(&self) -> i32 {
        self.squad.len() as i32
    }

    /// Returns agent `index`'s global position (its last tick).
    #[func]
    pub fn get_agent_position(&self, index: i32) -> Vector3 {
        let i = index.max(0) as usize;
        if i >= self.squad.len() {
            return Vector3::ZERO;
        }
        let p = self.squad.position(i);
        let y = self.agents.get(i).map_or(0.0, |a| a.get_position().y);
        self.base().to_global(Vector3::new(p.x, y, p.y))
    }

    /// Returns agent `index`'s global yaw in radians.
    #[func]
    pub fn get_agent_heading(&self, index: i32) -> f32 {
        self.squad.heading(index.max(0) as usize) + self.base().get_global_rotation().y
    }

    /// Returns agent `index`'s commanded global velocity in m/s.
    #[func]
    pub fn get_agent_velocity(&self, index: i32) -> Vector3 {
        let v = self.squad.velocity(index.max(0) as usize);
        self.base().get_global_basis() * Vector3::new(v.x, 0.0, v.y)
    }

    /// Returns agent `index`'s actuation latency in seconds as the controller uses it: for body
    /// agents with [member measure_latency], the latency measured from its motion once known
    /// ([method is_agent_latency_measured]), else [member actuation_latency]. 0 out of range.
    #[func]
    pub fn get_agent_latency(&self, index: i32) -> f32 {
        self.squad.agent_latency(index.max(0) as usize)
    }

    /// Returns whether agent `index`'s latency has been measured (body agents, after a second or
    /// so of changing motion; internal and plain-node agents never are).
    #[func]
    pub fn is_agent_latency_measured(&self, index: i32) -> bool {
        index >= 0 && self.squad.agent_latency_measured(index as usize)
    }

    /// Returns the position gain agent `index` uses outside transitions: [member k1] lowered for
    /// its latency (see [member measure_latency]).
    #[func]
    pub fn get_agent_k1(&self, index: i32) -> f32 {
        self.squad.agent_k1(index.max(0) as usize)
    }

    /// Returns agent `index`'s state: 0 idle, 1 moving, 2 aligning, 3 stabilizing.
    #[func]
    pub fn get_agent_state(&self, index: i32) -> i32 {
        self.squad.state(index.max(0) as usize) as i32
    }

    /// Returns the global position of the slot agent `index` holds (its own position when dropped).
    #[func]
    pub fn get_slot_position(&self, index: i32) -> Vector3 {
        let i = index.max(0) as usize;
        match self.squad.slot_of(i) {
            Some(s) => {
                let p = self.squad.slot_pos(s);
                self.base().to_global(Vector3::new(p.x, 0.0, p.y))
            }
            None => self.get_agent_position(index),
        }
    }

    /// Returns the number of slots the current formation lays out (one per agent taking part).
    #[func]
    pub fn get_slot_count(&self) -> i32 {
        self.squad.slot_count() as i32
    }

    /// Returns slot [param slot]'s target: its global position now (it moves with the anchor),
    /// or `Vector3.ZERO` out of range.
    #[func]
    pub fn get_slot_target(&self, slot: i32) -> Vector3 {
        if slot < 0 || slot as usize >= self.squad.slot_count() {
            return Vector3::ZERO;
        }
        let p = self.squad.slot_pos(slot as usize);
        self.base().to_global(Vector3::new(p.x, 0.0, p.y))
    }

    /// Returns slot [param slot]'s target heading: the global yaw (radians) its holder must face.
    #[func]
    pub fn get_slot_heading(&self, slot: i32) -> f32 {
        if slot < 0 || slot as usize >= self.squad.slot_count() {
            return 0.0;
        }
        self.squad.slot_yaw(slot as usize) + self.base().get_global_rotation().y
    }

    /// Returns the slot agent [param index] holds, or −1 for a dropped agent.
    #[func]
    pub fn get_agent_slot(&self, index: i32) -> i32 {
        self.squad
            .slot_of(index.max(0) as usize)
            .map_or(-1, |s| s as i32)
    }

    /// Returns agent [param index]'s heading error: its yaw minus its slot's target heading,
    /// wrapped to [−π, π] (radians); 0 for a dropped agent.
    #[func]
    pub fn get_agent_heading_error(&self, index: i32) -> f32 {
        self.squad.heading_error(index.max(0) as usize)
    }

    /// Returns every neighbouring pair of slots, flattened (`[s0, t0, s1, t1, …]`): slots at most
    /// 1.5 × the formation's spacing apart, plus each slot with its nearest slot. The contract's
    /// `spacing_error` is the largest |actual − nominal| distance over the agents holding them.
    #[func]
    pub fn get_neighbour_pairs(&self) -> PackedInt32Array {
        let mut out = PackedInt32Array::new();
        for &(s, t) in self.squad.neighbour_pairs() {
            out.push(s as i32);
            out.push(t as i32);
        }
        out
    }

    /// Returns the spacing error now over every neighbouring pair (see [method
    /// get_neighbour_pairs]), in metres: the contract's spacing clause.
    #[func]
    pub fn get_pair_spacing_error(&self) -> f32 {
        self.squad.metrics().spacing_error
    }

    /// Returns the live metrics (see [signal settled]) plus `since_command` (s) and the agent
    /// counts per state `idle`, `moving`, `aligning`, `stabilizing`.
    #[func]
    pub fn get_metrics(&self) -> VarDictionary {
        let m = self.squad.metrics();
        let mut d = metrics_dict(m, &self.current);
        d.set("since_command", m.since_command);
        d.set("idle", m.states[0]);
        d.set("moving", m.states[1]);
        d.set("aligning", m.states[2]);
        d.set("stabilizing", m.states[3]);
        d
    }

    /// Returns the squad's baseline: `point` and `direction` (global, on the ground plane) and
    /// `angle` (global yaw of the axis, radians); empty with fewer than two agents.
    #[func]
    pub fn get_baseline(&mut self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some(b) = self.squad.baseline() {
            let point = self
                .base()
                .to_global(Vector3::new(b.point.x, 0.0, b.point.y));
            let dir =
                self.base().get_global_basis() * Vector3::new(b.direction.x, 0.0, b.direction.y);
            d.set("point", point);
            d.set("direction", dir);
            d.set("angle", (-dir.x).atan2(-dir.z));
        }
        d
    }

    /// Returns how many frames the recording holds.
    #[func]
    pub fn get_recorded_frames(&self) -> i32 {
        self.squad.recorder().map_or(0, |r| r.len() as i32)
    }

    /// Pauses the squad and shows recorded frame `frame` (0 = oldest). Returns false when there is
    /// no such frame.
    #[func]
    pub fn replay_seek(&mut self, frame: i32) -> bool {
        let ok = frame >= 0
            && self
                .squad
                .recorder()
                .is_some_and(|r| (frame as usize) < r.len());
        if ok {
            self.replay_frame = Some(frame as usize);
            self.draw_agents();
        }
        ok
    }

    /// Leaves replay: the squad continues from its live state.
    #[func]
    pub fn replay_stop(&mut self) {
        self.replay_frame = None;
        self.write_agents();
    }

    /// Returns true while showing a recorded frame.
    #[func]
    pub fn is_replaying(&self) -> bool {
        self.replay_frame.is_some()
    }

    /// Returns recorded agent `index`'s sample in frame `frame`: `position` (global), `heading`
    /// (rad, global), `speed` (m/s), `state`; empty when out of range.
    #[func]
    pub fn get_recorded_sample(&self, frame: i32, index: i32) -> VarDictionary {
        let mut d = VarDictionary::new();
        let Some((_, samples)) = self
            .squad
            .recorder()
            .and_then(|r| r.frame(frame.max(0) as usize))
        else {
            return d;
        };
        if let Some(s) = samples.get(index.max(0) as usize) {
            d.set(
                "position",
                self.base().to_global(Vector3::new(s.pos.x, 0.0, s.pos.y)),
            );
            d.set("heading", s.heading + self.base().get_global_rotation().y);
            d.set("speed", s.speed);
            d.set("state", s.state as i32);
        }
        d
    }

    /// Writes the recording as CSV (`tick,agent,x,z,heading,speed,state`, local frame) to `path`.
    /// Returns false when nothing is recorded or the file cannot be written.
    #[func]
    pub fn export_recording(&self, path: GString) -> bool {
        let Some(rec) = self.squad.recorder() else {
            self.warn_plain("export_recording: nothing is recorded (set recording = true first)");
            return false;
        };
        let Some(file) = FileAccess::open(&path, godot::classes::file_access::ModeFlags::WRITE)
        else {
            self.warn_plain(&format!(
                "export_recording: cannot open '{path}' for writing ({:?})",
                FileAccess::get_open_error()
            ));
            return false;
        };
        // Streamed through a 64 KiB buffer: the CSV is never built in memory.
        let mut out = std::io::BufWriter::with_capacity(64 << 10, FileSink(file));
        let written = rec.export_csv(&mut out).and_then(|()| {
            use std::io::Write as _;
            out.flush()
        });
        if let Err(e) = written {
            self.warn_plain(&format!("export_recording: writing '{path}' failed ({e})"));
            return false;
        }
        true
    }

    // ----- network ----------------------------------------------------------------------------

    /// A command from the server, handled on a client: applied once per id (resends are only
    /// acknowledged), aged by its time in flight when a [NetClock] is set, then acknowledged.
    #[rpc(any_peer, call_remote, reliable)]
    fn net_command(&mut self, id: i64, stamp: f64, kind: i64, name: GString, v: Vector3, s: f32) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        let sender = mp.get_remote_sender_id();
        match self.commands.receive(id, sender, mp.is_server()) {
            Err(r) => {
                self.refuse(command::wire_name(kind), &r);
                return;
            }
            Ok(true) => {
                match Command::from_wire(kind, name.to_string(), vec3(v), s) {
                    Some(cmd) => {
                        // With a shared clock, catch up with the time the command spent in flight.
                        let age = flight_age(self.server_time(), stamp);
                        if self.apply(cmd) {
                            self.squad.age_command(age);
                        }
                    }
                    None => self.refuse("unknown", &Rejection::UnknownKind(kind)),
                }
                self.signals()
                    .command_received()
                    .emit(id, command::wire_name(kind));
            }
            Ok(false) => {}
        }
        if self.acknowledge_commands {
            if let Err(e) = self.rpcs().net_ack(id).call_id(1) {
                self.warn_plain(&format!("cannot acknowledge command {id}: {e:?}"));
            }
        }
    }

    /// A client's acknowledgement, handled on the server.
    #[rpc(any_peer, call_remote, reliable)]
    fn net_ack(&mut self, id: i64) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !mp.is_server() {
            return;
        }
        let sender = mp.get_remote_sender_id();
        let _ = self.commands.ack(id, sender);
    }

    /// Returns how many acknowledgements the server still waits for.
    #[func]
    pub fn get_pending_acks(&self) -> i32 {
        self.commands.pending_acks() as i32
    }

    /// A state keyframe chunk from the server, handled on a client (see [member keyframe_rate]):
    /// malformed, stale or foreign chunks are dropped and counted, with one warning.
    #[rpc(any_peer, call_remote, unreliable, channel = 1)]
    fn net_keyframe(&mut self, chunk: PackedByteArray) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        let sender = mp.get_remote_sender_id();
        if sender != 1 || mp.is_server() {
            self.kf_stats[2] += 1;
            self.warn_once(
                1 << 46,
                &format!("state keyframe from peer {sender}, who is not the server; dropped (further ones are counted, not reported)"),
            );
            return;
        }
        let mut header = core::mem::take(&mut self.kf_header);
        let mut agents = core::mem::take(&mut self.kf_agents);
        match decode_chunk(chunk.as_slice(), &mut header, &mut agents) {
            Err(e) => {
                self.kf_stats[2] += 1;
                self.warn_once(
                    1 << 47,
                    &format!("malformed state keyframe from the server ({e}); dropped (further ones are counted, not reported)"),
                );
            }
            Ok(()) => {
                let stale = self
                    .kf_last_seq
                    .is_some_and(|last| (header.seq.wrapping_sub(last) as i16) < 0);
                if stale {
                    self.kf_stats[3] += 1;
                } else {
                    self.kf_last_seq = Some(header.seq);
                    if header.formation != self.formation.to_string()
                        && !header.formation.is_empty()
                    {
                        let name = header.formation.clone();
                        if self.apply_form(&name) {
                            self.formation = name.as_str().into();
                        }
                    }
                    let age = match self.server_time() {
                        Some(now) => (now - header.server_time).clamp(0.0, 1.0) as f32,
                        None => 0.0,
                    };
                    if self.squad.apply_keyframe(&header, &agents, age) {
                        self.kf_stats[1] += 1;
                    } else {
                        self.kf_stats[2] += 1;
                        self.warn_once(
                            1 << 48,
                            &format!("state keyframe for {} agents does not fit this squad of {}; dropped", header.total, self.squad.len()),
                        );
                    }
                }
            }
        }
        self.kf_header = header;
        self.kf_agents = agents;
    }

    /// Returns the state keyframe counters: `bytes_sent` (server, payload summed over clients),
    /// `applied`, `malformed` and `stale` (client, chunks).
    #[func]
    pub fn get_keyframe_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("bytes_sent", self.kf_stats[0]);
        d.set("applied", self.kf_stats[1]);
        d.set("malformed", self.kf_stats[2]);
        d.set("stale", self.kf_stats[3]);
        d
    }

    /// A peer disconnected (connected for you to the MultiplayerAPI's `peer_disconnected` when
    /// [member networked] is on; you never need to call it). On the server, the peer is forgotten
    /// by the acknowledgement tracker and its agents ([method set_agent_peer]) leave the contract
    /// at once in one re-form, without waiting for acknowledgement timeouts; [signal peer_dropped]
    /// is emitted when it owned an agent still taking part.
    #[func]
    pub fn on_peer_disconnected(&mut self, peer_id: i64) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !self.networked || !mp.is_server() {
            return;
        }
        let Ok(peer) = i32::try_from(peer_id) else {
            return;
        };
        self.commands.forget_peer(peer);
        if self.deactivate_peer(peer) > 0 {
            self.signals().peer_dropped().emit(peer_id);
        }
    }
}

impl FormationController {
    fn name(&self) -> String {
        self.base().get_name().to_string()
    }

    /// Starts the squad's recording ring, warning when the byte budget cuts the frames asked for.
    fn start_recording(&mut self) {
        let asked = self.record_frames.clamp(1, 100_000) as usize;
        let kept = self.squad.set_recording(asked);
        if kept < asked {
            self.warn_plain(&format!(
                "record_frames: {asked} frames of {} agents exceed the recording budget of {} MiB; \
                 keeping the last {kept}",
                self.squad.len(),
                entwine_core::formation::MAX_RECORD_BYTES >> 20
            ));
        }
    }

    fn warn_plain(&self, msg: &str) {
        godot_warn!("FormationController '{}': {msg}", self.name());
    }

    fn warn_once(&mut self, bit: u64, msg: &str) {
        if self.warned & bit == 0 {
            self.warned |= bit;
            self.warn_plain(msg);
        }
    }

    fn index(&mut self, index: i32, what: &str) -> Option<usize> {
        if index >= 0 && (index as usize) < self.squad.len() {
            Some(index as usize)
        } else {
            self.warn_plain(&format!(
                "{what}: agent index {index} is out of range 0..{}",
                self.squad.len()
            ));
            None
        }
    }

    /// Returns the shared server time from the [NetClock] at [member net_clock], if there is one.
    fn server_time(&self) -> Option<f64> {
        if self.net_clock.is_empty() {
            return None;
        }
        self.base()
            .try_get_node_as::<NetClock>(&self.net_clock)
            .map(|clock| clock.bind().server_time())
    }

    fn is_online(&self) -> bool {
        self.base().get_multiplayer().is_some_and(|mp| {
            mp.get_multiplayer_peer()
                .is_some_and(|p| p.get_connection_status() == ConnectionStatus::CONNECTED)
        })
    }

    /// Routes a command: local, or (networked) from the server to every client.
    fn command(&mut self, cmd: Command) -> bool {
        let mp = self.base().get_multiplayer();
        let is_server = mp.as_ref().is_some_and(|mp| mp.is_server());
        match route(self.networked, self.is_online(), is_server) {
            Route::Local => self.apply(cmd),
            Route::Refuse => {
                self.refuse(cmd.kind.name(), &Rejection::IssuedByClient);
                false
            }
            Route::Broadcast => {
                if !self.apply(cmd.clone()) {
                    return false;
                }
                let stamp = self.server_time().unwrap_or(-1.0);
                let id = self.commands.issue(cmd, stamp);
                let Some(sent) = self.commands.sent(id).cloned() else {
                    return true;
                };
                let Some(mp) = mp else {
                    return true;
                };
                for peer in mp.get_peers().as_slice() {
                    if self.commands.is_dropped(*peer) {
                        continue;
                    }
                    self.send_command(*peer, &sent);
                    self.commands.sent_to(id, *peer, now_seconds());
                }
                true
            }
        }
    }

    fn send_command(&mut self, peer: i32, sent: &command::Sent) {
        let c = &sent.command;
        let name = GString::from(c.name.as_str());
        let (id, kind, v) = (i64::from(sent.id), c.kind.wire(), vector3(c.vector));
        if let Err(e) = self
            .rpcs()
            .net_command(id, sent.stamp, kind, &name, v, c.scalar)
            .call_id(i64::from(peer))
        {
            self.warn_plain(&format!("cannot send command {id} to peer {peer}: {e:?}"));
        }
    }

    fn network_tick(&mut self) {
        if !self.networked {
            return;
        }
        if !self.watching_peers {
            if let Some(mut mp) = self.base().get_multiplayer() {
                let this = self.to_gd();
                mp.connect("peer_disconnected", &this.callable("on_peer_disconnected"));
                self.watching_peers = true;
            }
        }
        // Peers that disconnected owe nothing: forget them, so a disconnect with a command in
        // flight never turns into a drop.
        if self.commands.tracks_peers() && self.is_online() {
            if let Some(mp) = self.base().get_multiplayer() {
                if mp.is_server() {
                    let peers = mp.get_peers();
                    let peers = peers.as_slice();
                    self.commands.retain_connected(|p| peers.contains(&p));
                }
            }
        }
        let now = now_seconds();
        while let Some(action) = self.commands.poll(now) {
            match action {
                NetAction::Resend { peer, sent } => self.send_command(peer, &sent),
                NetAction::Drop { peer } => {
                    self.warn_plain(&format!(
                        "peer {peer} never acknowledged a command (3 resends); dropped from the contract"
                    ));
                    self.deactivate_peer(peer);
                    self.signals().peer_dropped().emit(i64::from(peer));
                }
            }
        }
    }

    /// On the server, every 1 / [member keyframe_rate] s: sends the squad's state to every client.
    fn keyframe_tick(&mut self, delta: f32) {
        // NaN, negative or zero: off; above 60 Hz: 60 Hz.
        let rate = if self.keyframe_rate.is_finite() {
            self.keyframe_rate.min(60.0)
        } else {
            0.0
        };
        if !self.networked || rate <= 0.0 || !self.is_online() {
            return;
        }
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !mp.is_server() {
            return;
        }
        self.kf_since += delta.clamp(0.0, 1.0);
        if self.kf_since < 1.0 / rate {
            return;
        }
        self.kf_since = 0.0;
        let clients = mp.get_peers().len() as i64;
        if clients == 0 {
            return;
        }
        self.kf_seq = self.kf_seq.wrapping_add(1);
        let mut header = core::mem::take(&mut self.kf_header);
        let mut agents = core::mem::take(&mut self.kf_agents);
        self.squad.keyframe_header(&mut header);
        header.seq = self.kf_seq;
        header.server_time = self.server_time().unwrap_or_else(now_seconds);
        header.formation.clear();
        header.formation.push_str(&self.formation.to_string());
        for first in (0..self.squad.len()).step_by(MAX_CHUNK_AGENTS) {
            self.squad
                .keyframe_agents(first, MAX_CHUNK_AGENTS, &mut agents);
            header.first = first as u32;
            header.count = agents.len() as u32;
            self.kf_buf.clear();
            if let Err(e) = encode_chunk(&header, &agents, &mut self.kf_buf) {
                self.warn_once(
                    1 << 49,
                    &format!("cannot encode a state keyframe ({e}); not sent"),
                );
                break;
            }
            let bytes = PackedByteArray::from(self.kf_buf.as_slice());
            if self.rpcs().net_keyframe(&bytes).call().is_ok() {
                self.kf_stats[0] += self.kf_buf.len() as i64 * clients;
            }
        }
        self.kf_header = header;
        self.kf_agents = agents;
    }

    /// Takes every agent tied to `peer` out of the contract in one re-form. Returns how many.
    fn deactivate_peer(&mut self, peer: i32) -> usize {
        let owner = &self.peer_of_agent;
        self.squad
            .set_active_where(|i| owner.get(i) == Some(&peer), false)
    }

    /// Applies a command locally. Returns false when rejected.
    fn apply(&mut self, cmd: Command) -> bool {
        let settling = self.squad.metrics().settle_time < 0.0;
        if let Err(r) = self.commands.admit(&cmd, settling) {
            self.refuse(cmd.kind.name(), &r);
            return false;
        }
        let frame = NodeFrame(self.to_gd().upcast());
        let ok = match cmd.localize(&frame) {
            Err(r) => {
                self.refuse(cmd.kind.name(), &r);
                false
            }
            Ok(Order::Form(name)) => self.apply_form(name),
            Ok(order) => order.apply(&mut self.squad),
        };
        if ok {
            self.commands.applied(&cmd);
            if !cmd.kind.bearing_only() {
                self.sync_live();
            }
            self.emit_bearing_signals();
        }
        ok
    }

    /// Reports a refused command: a warning (none for a duplicate) and [signal command_rejected].
    fn refuse(&mut self, name: &str, why: &Rejection) {
        if let Some(w) = why.warning(name) {
            self.warn_plain(&w);
        }
        let reason = why.to_string();
        self.signals().command_rejected().emit(name, &reason);
    }

    fn apply_form(&mut self, name: &str) -> bool {
        let Some(file) = self.formations.get(name) else {
            let mut known: Vec<&String> = self.formations.keys().collect();
            known.sort();
            let reason = format!(
                "unknown formation '{name}' (known: {})",
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            self.reject_formation(name, &reason);
            return false;
        };
        let def = file.def.clone();
        match self.squad.form(&def) {
            Ok(()) => {
                self.current = name.to_string();
                self.formation = GString::from(name);
                self.signals().formation_changed().emit(name);
                true
            }
            Err(e) => {
                self.reject_formation(name, &format!("formation '{name}': {e}"));
                false
            }
        }
    }

    fn reject_formation(&mut self, name: &str, reason: &str) {
        self.warn_plain(&format!("{reason}; keeping '{}'", self.current));
        self.signals().formation_rejected().emit(name, reason);
    }

    fn load_formation_dir(&mut self) {
        let dir = self.formations_dir.to_string();
        if dir.is_empty() {
            return;
        }
        if DirAccess::open(&self.formations_dir).is_none() {
            self.warn_plain(&format!(
                "formations_dir '{dir}' cannot be opened; only formations added with add_formation() are available"
            ));
            return;
        }
        let files = DirAccess::get_files_at(&self.formations_dir);
        for f in files.as_slice() {
            let f = f.to_string();
            // Exported projects list remapped files with a suffix.
            let f = f.trim_end_matches(".remap").to_string();
            if let Some(stem) = f.strip_suffix(".ron") {
                let path = format!("{}/{}", dir.trim_end_matches('/'), f);
                self.load_file(stem, &path);
            }
        }
    }

    fn load_file(&mut self, name: &str, path: &str) {
        let modified = FileAccess::get_modified_time(path);
        let text = FileAccess::get_file_as_string(path).to_string();
        match FormationDef::from_ron(&text) {
            Ok(def) => {
                self.formations.insert(
                    name.to_string(),
                    FormationFile {
                        path: path.to_string(),
                        modified,
                        def,
                    },
                );
            }
            Err(e) => {
                // Remember the time so a broken file is reported once per change.
                if let Some(old) = self.formations.get_mut(name) {
                    old.modified = modified;
                }
                let reason = format!("{path}:{e}");
                self.reject_formation(name, &reason);
            }
        }
    }

    fn hot_reload_tick(&mut self, delta: f64) {
        if !self.hot_reload {
            return;
        }
        self.reload_timer += delta;
        if self.reload_timer < 0.5 {
            return;
        }
        self.reload_timer = 0.0;
        let changed: Vec<(String, String)> = self
            .formations
            .iter()
            .filter(|(_, f)| {
                !f.path.is_empty() && FileAccess::get_modified_time(&f.path) != f.modified
            })
            .map(|(n, f)| (n.clone(), f.path.clone()))
            .collect();
        for (name, path) in changed {
            let before = self.formations.get(&name).map(|f| f.def.clone());
            self.load_file(&name, &path);
            let after = self.formations.get(&name).map(|f| f.def.clone());
            if name == self.current && before != after {
                self.commands.forget_last();
                let _ = self.apply_form(&name);
            }
        }
    }

    /// Returns the squad's configuration from the properties, sanitized by the core; each
    /// corrected property is warned about once.
    fn config(&mut self) -> SquadConfig {
        let d = SquadConfig::default();
        let raw = SquadConfig {
            gains: Gains {
                k1: self.k1,
                k2: self.k2,
                k3: self.k3,
                integral_limit: self.integral_limit,
            },
            thresholds: Thresholds {
                align: self.align_threshold,
                stable: self.stable_threshold,
                frames: self.debounce_frames.clamp(0, 255) as u8,
                heading: self.heading_tolerance.to_radians(),
            },
            max_speed: self.max_speed,
            max_turn_rate: self.max_turn_rate.to_radians(),
            repulsion_radius: self.repulsion_radius,
            repulsion_strength: self.repulsion_strength,
            arrival_time: self.arrival_time,
            transition_gain_max: self.transition_gain_max,
            anchor_acceleration: self.march_acceleration,
            contract_spacing: self.contract_spacing,
            contract_heading: self.contract_heading.to_radians(),
            contract_settle: self.contract_settle,
            latency: self.actuation_latency,
            measure_latency: self.measure_latency,
            latency_gains: d.latency_gains,
            step_noise: self.step_noise,
        };
        let warned = self.warned;
        let mut new = [None; SquadParam::ALL.len()];
        let cfg = raw.sanitized(|c| {
            if warned & (1 << c.param as u32) == 0 {
                new[c.param as usize] = Some(c);
            }
        });
        for c in new.into_iter().flatten() {
            self.warned |= 1 << c.param as u32;
            let (prop, got) = config::property(self, c.param);
            let unit = if c.param.is_angle() {
                f32::to_degrees
            } else {
                std::convert::identity
            };
            self.warn_plain(&format!(
                "{prop} must be in {}..={} (got {got}); using {}",
                unit(c.lo),
                unit(c.hi),
                unit(c.used)
            ));
        }
        cfg
    }

    /// Rebuilds the agent list (children or internal) and the squad when it changed.
    fn rebuild_agents(&mut self, force: bool) {
        let internal = self.agent_source == AgentSource::Internal;
        let count = self.base().get_child_count();
        if !force && (internal || count == self.children_seen) {
            return;
        }
        self.children_seen = count;
        self.agents.clear();
        self.bodies.clear();
        if !internal {
            for child in self.base().get_children().iter_shared() {
                if let Ok(node) = child.try_cast::<Node3D>() {
                    self.bodies.push(Body::of(&node));
                    self.agents.push(node);
                }
            }
        }
        let n = if internal {
            self.internal_agent_count.clamp(0, 65_536) as usize
        } else {
            self.agents.len()
        };
        let simulate = internal || self.bodies.iter().all(Option::is_none);
        let cfg = self.config();
        let recording = self.squad.recorder().map(|r| r.capacity());
        self.squad = Squad::new(n, simulate, cfg);
        if let Some(frames) = recording {
            self.squad.set_recording(frames);
        }
        self.peer_of_agent.resize(n, 0);
        self.last_states = vec![0; n];
        self.commands.forget_last();
        let name = self.formation.to_string();
        if let Some(file) = self.formations.get(&name) {
            let def = file.def.clone();
            if self.squad.form(&def).is_ok() {
                self.current = name;
            }
        } else if !self.formations.is_empty() || !name.is_empty() {
            self.reject_formation(&name, &format!("unknown formation '{name}'"));
        }
        if internal {
            self.squad.snap_to_slots();
        } else {
            // Children start where they stand.
            for i in 0..n {
                let p = self.agents[i].get_position();
                let yaw = self.agents[i].get_rotation().y;
                self.squad.place(i, Vec2::new(p.x, p.z), yaw);
            }
            if let Some(file) = self.formations.get(&self.current) {
                let def = file.def.clone();
                let _ = self.squad.form(&def);
            }
        }
        self.setup_multimesh(internal);
        self.attach_bearings();
        if n == 0 && !internal {
            self.warn_once(
                1 << 42,
                "has no Node3D children to drive (add agents as children, or set agent_source = Internal)",
            );
        }
    }

    fn setup_multimesh(&mut self, internal: bool) {
        if !internal {
            if let Some(mm) = self.multimesh.take() {
                drop(mm);
            }
            for child in self
                .base()
                .get_children_ex()
                .include_internal(true)
                .done()
                .iter_shared()
            {
                if child.get_name() == "EntwineAgents" {
                    child.free();
                }
            }
            return;
        }
        let n = self.squad.len();
        let mut mm = match self.multimesh.clone() {
            Some(mm) => mm,
            None => {
                let mut mm = MultiMesh::new_gd();
                mm.set_transform_format(TransformFormat::TRANSFORM_3D);
                mm.set_use_colors(true);
                let mesh: Gd<Mesh> = match self.agent_mesh.clone() {
                    Some(m) => m,
                    None => {
                        let mut capsule = CapsuleMesh::new_gd();
                        capsule.set_radius(0.22);
                        capsule.set_height(1.7);
                        let mut mat = StandardMaterial3D::new_gd();
                        mat.set_flag(base_material_3d::Flags::ALBEDO_FROM_VERTEX_COLOR, true);
                        capsule.set_material(&mat);
                        capsule.upcast()
                    }
                };
                mm.set_mesh(&mesh);
                let mut inst = MultiMeshInstance3D::new_alloc();
                inst.set_name("EntwineAgents");
                inst.set_multimesh(&mm);
                self.base_mut()
                    .add_child_ex(&inst)
                    .internal(InternalMode::FRONT)
                    .done();
                self.multimesh = Some(mm.clone());
                mm
            }
        };
        mm.set_instance_count(n as i32);
        self.mm_buffer.resize(n * 16);
    }

    /// Runs the squad for `dt` seconds. Returns the ticks run.
    fn run(&mut self, dt: f32) -> u32 {
        self.rebuild_agents(false);
        let cfg = self.config();
        if cfg != *self.squad.config() {
            self.squad.set_config(cfg);
        }
        self.follow_leader();
        let external = !self.squad.simulates();
        if external {
            for i in 0..self.agents.len().min(self.squad.len()) {
                if !self.agents[i].is_instance_valid() {
                    continue;
                }
                let p = self.agents[i].get_position();
                self.squad.sense(i, Vec2::new(p.x, p.z));
            }
        }
        let ticks = self.squad.advance(dt);
        if ticks > 0 && external {
            self.drive_bodies(dt);
        } else if ticks > 0 {
            self.write_agents();
        }
        if ticks > 0 {
            self.after_ticks();
        }
        self.update_bearings();
        ticks
    }

    /// Finds each child agent's skeleton and gives it a [SoldierBearing] (reusing one already
    /// there); frees the modifiers this controller made for agents that left.
    fn attach_bearings(&mut self) {
        let old = std::mem::take(&mut self.soldiers);
        let mut soldiers: Vec<Option<Soldier>> = Vec::with_capacity(self.agents.len());
        let enabled = self.soldier_bearings && self.agent_source == AgentSource::Children;
        for agent in &self.agents {
            let found = if enabled && agent.is_instance_valid() {
                find_skeleton(agent)
            } else {
                None
            };
            soldiers.push(found.and_then(|skeleton| {
                let owned_before = old.iter().flatten().any(|s| {
                    s.owned && s.skeleton == skeleton.instance_id() && s.bearing.is_instance_valid()
                });
                let mut soldier = attach_bearing(agent, skeleton, owned_before)?;
                soldier
                    .bearing
                    .bind_mut()
                    .join_squad_warnings(bearing::SquadWarnings {
                        printed: self.bearing_warnings.clone(),
                        name: crate::rig::label(&self.to_gd()),
                    });
                Some(soldier)
            }));
        }
        for s in old.into_iter().flatten() {
            let kept = soldiers.iter().flatten().any(|n| n.skeleton == s.skeleton);
            if s.owned && !kept && s.bearing.is_instance_valid() {
                free_bearing(s.bearing);
            }
        }
        self.soldiers = soldiers;
        self.heads.clear();
        self.heads.resize(self.soldiers.len(), None);
        self.last_bearings = vec![0; self.squad.len()];
        self.last_eyes_right = self.squad.is_eyes_right();
        self.last_saluting = self.squad.is_saluting();
    }

    /// Steers every soldier's [SoldierBearing] from the squad's bearing: eyes on its guide's head,
    /// salute on or off. A skeleton that disappeared gives one warning; the agent marches on.
    fn update_bearings(&mut self) {
        let n = self.soldiers.len().min(self.squad.len());
        if n == 0 {
            return;
        }
        for i in 0..n {
            let lost = self.soldiers[i].as_ref().is_some_and(|s| {
                !s.bearing.is_instance_valid()
                    || Gd::<Skeleton3D>::try_from_instance_id(s.skeleton).is_err()
            });
            if lost {
                self.soldiers[i] = None;
                let who = match self.agents.get(i) {
                    Some(a) if a.is_instance_valid() => format!("agent {i} ('{}')", a.get_name()),
                    _ => format!("agent {i}"),
                };
                self.warn_plain(&format!(
                    "{who} lost its skeleton (freed or removed) mid-drill; it keeps marching in its slot without eyes right or salute"
                ));
            }
        }
        self.heads.resize(n, None);
        for i in 0..n {
            self.heads[i] = self.soldiers[i].as_ref().and_then(|s| {
                let b = s.bearing.bind();
                b.has_head_position().then(|| b.get_head_position())
            });
        }
        let turn_speed = if self.head_turn_speed.is_finite() {
            self.head_turn_speed.clamp(1.0, 3600.0)
        } else {
            180.0
        };
        if turn_speed != self.head_turn_speed {
            let msg = format!(
                "head_turn_speed must be in 1..=3600 °/s (got {}); using {turn_speed}",
                self.head_turn_speed
            );
            self.warn_once(1 << 44, &msg);
        }
        for i in 0..n {
            if self.soldiers[i].is_none() {
                continue;
            }
            let bearing = self.squad.bearing(i);
            let target = match bearing.eyes {
                Eyes::Right => self.squad.guide(i).and_then(|g| self.head_of(g, i)),
                Eyes::Front => None,
            };
            let Some(s) = self.soldiers[i].as_mut() else {
                continue;
            };
            let mut b = s.bearing.bind_mut();
            b.set_looking(target.is_some());
            if let Some(t) = target {
                b.set_look_target(t);
            }
            b.set_saluting(bearing.gesture == Gesture::Saluting);
            b.set_turn_speed(turn_speed);
        }
    }

    /// Returns where agent `g`'s eyes are (global), for agent `looker` to dress on: its head bone
    /// when it has a bearing, else its position raised to the looker's head height.
    fn head_of(&self, g: usize, looker: usize) -> Option<Vector3> {
        if let Some(Some(h)) = self.heads.get(g) {
            return Some(*h);
        }
        let agent = self.agents.get(g).filter(|a| a.is_instance_valid())?;
        let own = self.agents.get(looker).filter(|a| a.is_instance_valid());
        let height = match (self.heads.get(looker), own) {
            (Some(Some(h)), Some(a)) => h.y - a.get_global_position().y,
            _ => 1.6,
        };
        Some(agent.get_global_position() + Vector3::UP * height)
    }

    fn emit_bearing_signals(&mut self) {
        let eyes = self.squad.is_eyes_right();
        if eyes != self.last_eyes_right {
            self.last_eyes_right = eyes;
            self.signals().eyes_changed().emit(eyes);
        }
        let saluting = self.squad.is_saluting();
        if saluting != self.last_saluting {
            self.last_saluting = saluting;
            self.signals().salute_changed().emit(saluting);
        }
        if self.emit_agent_signals {
            let n = self.squad.len();
            if self.last_bearings.len() != n {
                self.last_bearings.resize(n, 0);
            }
            for i in 0..n {
                let bits = self.squad.bearing(i).bits();
                if bits != self.last_bearings[i] {
                    self.last_bearings[i] = bits;
                    self.signals()
                        .agent_bearing_changed()
                        .emit(i as i64, i64::from(bits));
                }
            }
        }
    }

    fn follow_leader(&mut self) {
        if self.leader.is_empty() {
            return;
        }
        let Some(leader) = self.base().try_get_node_as::<Node3D>(&self.leader) else {
            self.warn_once(
                1 << 43,
                &format!("leader '{}' is not a Node3D; not following", self.leader),
            );
            return;
        };
        let local = self.base().to_local(leader.get_global_position());
        let yaw = leader.get_global_rotation().y - self.base().get_global_rotation().y;
        let a = *self.squad.anchor();
        self.squad.set_anchor(
            Vec2::new(local.x, local.z),
            yaw,
            a.facing_yaw + (yaw - a.layout_yaw),
        );
    }

    /// External agents: velocity for bodies (character or rigid), heading as rotation.y.
    fn drive_bodies(&mut self, dt: f32) {
        let basis = self.base().get_global_basis();
        for i in 0..self.agents.len().min(self.squad.len()) {
            if !self.agents[i].is_instance_valid() || !self.squad.is_active(i) {
                continue;
            }
            let v = self.squad.velocity(i);
            let heading = self.squad.heading(i);
            let mut node = self.agents[i].clone();
            let mut rot = node.get_rotation();
            rot.y = heading;
            node.set_rotation(rot);
            match self.bodies[i].clone() {
                Some(Body::Character(mut body)) => {
                    let g = basis * Vector3::new(v.x, 0.0, v.y);
                    let old = body.get_velocity();
                    body.set_velocity(Vector3::new(g.x, old.y, g.z));
                    if self.move_bodies {
                        body.move_and_slide();
                    }
                }
                Some(Body::Rigid(mut body)) => {
                    // The physics step moves it at this velocity (it is kept awake); gravity keeps
                    // the vertical part, and the yaw is the squad's, so no spin about the vertical
                    // is left over.
                    let g = basis * Vector3::new(v.x, 0.0, v.y);
                    let old = body.get_linear_velocity();
                    body.set_linear_velocity(Vector3::new(g.x, old.y, g.z));
                    let spin = body.get_angular_velocity();
                    if spin.y != 0.0 {
                        body.set_angular_velocity(Vector3::new(spin.x, 0.0, spin.z));
                    }
                }
                None => {
                    let p = node.get_position() + Vector3::new(v.x, 0.0, v.y) * dt;
                    node.set_position(p);
                }
            }
        }
    }

    /// Simulated child agents: place them at their interpolated pose.
    fn write_agents(&mut self) {
        if !self.squad.simulates() || self.agent_source == AgentSource::Internal {
            return;
        }
        for i in 0..self.agents.len().min(self.squad.len()) {
            if !self.agents[i].is_instance_valid() {
                continue;
            }
            let (p, h) = self.squad.interpolated(i);
            let mut node = self.agents[i].clone();
            let y = node.get_position().y;
            node.set_position(Vector3::new(p.x, y, p.y));
            let mut rot = node.get_rotation();
            rot.y = h;
            node.set_rotation(rot);
        }
    }

    fn after_ticks(&mut self) {
        self.sync_live();
        if self.emit_agent_signals {
            for i in 0..self.squad.len().min(self.last_states.len()) {
                let s = self.squad.state(i) as u8;
                if s != self.last_states[i] {
                    self.last_states[i] = s;
                    self.signals()
                        .agent_state_changed()
                        .emit(i as i64, i64::from(s));
                }
            }
        }
        if let Some(m) = self.squad.take_settled() {
            let d = metrics_dict(&m, &self.current);
            self.signals().settled().emit(&d);
        }
        self.emit_bearing_signals();
    }

    fn sync_live(&mut self) {
        let m = *self.squad.metrics();
        self.spacing_error = m.spacing_error;
        self.heading_std = m.heading_std.to_degrees();
        self.settle_time = m.settle_time;
    }

    fn draw_agents(&mut self) {
        if self.agent_source != AgentSource::Internal {
            if self.replay_frame.is_some() {
                self.write_replay_children();
            } else if self.squad.simulates() {
                self.write_agents();
            }
            return;
        }
        let Some(mut mm) = self.multimesh.clone() else {
            return;
        };
        let n = self.squad.len();
        if self.mm_buffer.len() != n * 16 {
            self.mm_buffer.resize(n * 16);
        }
        let debug = self.debug_draw;
        let replay = self
            .replay_frame
            .and_then(|f| self.squad.recorder().and_then(|r| r.frame(f)))
            .map(|(_, s)| s);
        let buf = self.mm_buffer.as_mut_slice();
        for i in 0..n {
            let (p, h, state) = match replay {
                Some(samples) => (samples[i].pos, samples[i].heading, samples[i].state),
                None => {
                    let (p, h) = self.squad.interpolated(i);
                    (p, h, self.squad.state(i))
                }
            };
            let (s, c) = h.sin_cos();
            let o = &mut buf[i * 16..i * 16 + 16];
            o[..12].copy_from_slice(&[c, 0.0, s, p.x, 0.0, 1.0, 0.0, 0.85, -s, 0.0, c, p.y]);
            let col = if debug || replay.is_some() {
                state_color(state)
            } else if self.squad.is_active(i) {
                Color::from_rgb(0.25, 0.36, 0.62)
            } else {
                Color::from_rgb(0.4, 0.4, 0.4)
            };
            o[12..].copy_from_slice(&[col.r, col.g, col.b, 1.0]);
        }
        mm.set_buffer(&self.mm_buffer);
    }

    fn write_replay_children(&mut self) {
        let Some(frame) = self.replay_frame else {
            return;
        };
        let Some((_, samples)) = self.squad.recorder().and_then(|r| r.frame(frame)) else {
            return;
        };
        let samples: Vec<_> = samples.to_vec();
        for (i, s) in samples.iter().enumerate().take(self.agents.len()) {
            if !self.agents[i].is_instance_valid() {
                continue;
            }
            let mut node = self.agents[i].clone();
            let y = node.get_position().y;
            node.set_position(Vector3::new(s.pos.x, y, s.pos.y));
            let mut rot = node.get_rotation();
            rot.y = s.heading;
            node.set_rotation(rot);
        }
    }

    fn draw_debug(&mut self) {
        if !self.debug_draw {
            if let Some(mut inst) = self.debug_instance.clone() {
                inst.set_visible(false);
            }
            return;
        }
        let mut mesh = match self.debug_mesh.clone() {
            Some(m) => m,
            None => {
                let mesh = ImmediateMesh::new_gd();
                let mut inst = MeshInstance3D::new_alloc();
                inst.set_name("EntwineDebug");
                inst.set_mesh(&mesh);
                let mut mat = StandardMaterial3D::new_gd();
                mat.set_shading_mode(base_material_3d::ShadingMode::UNSHADED);
                mat.set_flag(base_material_3d::Flags::ALBEDO_FROM_VERTEX_COLOR, true);
                inst.set_material_override(&mat);
                self.base_mut()
                    .add_child_ex(&inst)
                    .internal(InternalMode::BACK)
                    .done();
                self.debug_instance = Some(inst);
                self.debug_mesh = Some(mesh.clone());
                mesh
            }
        };
        if let Some(mut inst) = self.debug_instance.clone() {
            inst.set_visible(true);
        }
        mesh.clear_surfaces();
        let n = self.squad.len();
        if n == 0 {
            return;
        }
        let y = 0.03;
        let v3 = |p: Vec2| Vector3::new(p.x, y, p.y);
        mesh.surface_begin(PrimitiveType::LINES);
        // Slots (white crosses) and agent → slot lines (state colour).
        let cross = 0.12;
        for i in 0..n.min(4096) {
            let Some(s) = self.squad.slot_of(i) else {
                continue;
            };
            let sp = self.squad.slot_pos(s);
            mesh.surface_set_color(Color::from_rgb(0.95, 0.95, 0.95));
            for (a, b) in [
                (Vec2::new(-cross, 0.0), Vec2::new(cross, 0.0)),
                (Vec2::new(0.0, -cross), Vec2::new(0.0, cross)),
            ] {
                mesh.surface_add_vertex(v3(sp + a));
                mesh.surface_add_vertex(v3(sp + b));
            }
            let (p, _) = self.squad.interpolated(i);
            mesh.surface_set_color(state_color(self.squad.state(i)));
            mesh.surface_add_vertex(v3(p));
            mesh.surface_add_vertex(v3(sp));
            // Repulsion radius.
            if n <= 400 {
                let r = self.repulsion_radius.max(0.0);
                for k in 0..16 {
                    let a0 = k as f32 / 16.0 * std::f32::consts::TAU;
                    let a1 = (k + 1) as f32 / 16.0 * std::f32::consts::TAU;
                    mesh.surface_add_vertex(v3(p + Vec2::new(a0.cos(), a0.sin()) * r));
                    mesh.surface_add_vertex(v3(p + Vec2::new(a1.cos(), a1.sin()) * r));
                }
            }
        }
        // Baseline (yellow) through the weighted-median point.
        if let Some(b) = self.squad.baseline() {
            let half = b.major.sqrt() * 2.0 + 1.0;
            mesh.surface_set_color(Color::from_rgb(1.0, 0.85, 0.1));
            mesh.surface_add_vertex(v3(b.point - b.direction * half));
            mesh.surface_add_vertex(v3(b.point + b.direction * half));
        }
        // Eyes right (cyan): each soldier's head to the head it dresses on.
        if self.squad.is_eyes_right() {
            mesh.surface_set_color(Color::from_rgb(0.2, 0.9, 0.95));
            let to_local = self.base().get_global_transform().affine_inverse();
            for i in 0..self.heads.len().min(n) {
                let (Some(Some(from)), Some(g)) = (self.heads.get(i), self.squad.guide(i)) else {
                    continue;
                };
                if let Some(to) = self.head_of(g, i) {
                    mesh.surface_add_vertex(to_local * *from);
                    mesh.surface_add_vertex(to_local * to);
                }
            }
        }
        mesh.surface_end();
    }
}

/// Returns an agent's skeleton: what its `get_skeleton()` method returns (e.g. the test
/// character's), else its first [Skeleton3D] descendant.
fn find_skeleton(agent: &Gd<Node3D>) -> Option<Gd<Skeleton3D>> {
    if agent.has_method("get_skeleton") {
        let v = agent.clone().call("get_skeleton", &[]);
        if let Ok(skeleton) = v.try_to::<Gd<Skeleton3D>>() {
            return Some(skeleton);
        }
    }
    crate::scene::first_descendant::<Skeleton3D>(&agent.clone().upcast())
}

/// Returns the soldier record for `skeleton`: its existing [SoldierBearing] child, or a new one
/// (with a salute [LimbIK]) whose body forward is the agent's −Z in the skeleton's space.
fn attach_bearing(agent: &Gd<Node3D>, skeleton: Gd<Skeleton3D>, owned: bool) -> Option<Soldier> {
    let existing = skeleton
        .get_children()
        .iter_shared()
        .find_map(|c| c.try_cast::<SoldierBearing>().ok());
    let id = skeleton.instance_id();
    if let Some(mut bearing) = existing {
        if bearing.bind().get_salute_ik().is_empty() {
            bearing.bind_mut().create_salute_ik();
        }
        return Some(Soldier {
            skeleton: id,
            bearing,
            owned,
        });
    }
    let mut bearing = SoldierBearing::new_alloc();
    bearing.set_name("SoldierBearing");
    if agent.is_inside_tree() && skeleton.is_inside_tree() {
        let forward = skeleton.get_global_basis().inverse()
            * (agent.get_global_basis() * Vector3::new(0.0, 0.0, -1.0));
        if forward.is_finite() && forward.length() > 1e-4 {
            bearing.bind_mut().set_body_forward(forward);
        }
    }
    let mut sk = skeleton.clone();
    sk.add_child(&bearing);
    bearing.bind_mut().create_salute_ik();
    Some(Soldier {
        skeleton: id,
        bearing,
        owned: true,
    })
}

/// Removes a bearing the controller made, and its salute IK.
fn free_bearing(bearing: Gd<SoldierBearing>) {
    let ik: Option<Gd<LimbIK>> = {
        let b = bearing.bind();
        let path = b.get_salute_ik();
        if path.is_empty() {
            None
        } else {
            bearing.try_get_node_as::<LimbIK>(&path)
        }
    };
    if let Some(mut ik) = ik {
        ik.queue_free();
    }
    let mut bearing = bearing;
    bearing.set_active(false);
    bearing.queue_free();
}

/// The node's frame for [`Command::localize`]: the parent frame is global.
struct NodeFrame(Gd<Node3D>);

impl command::Frame for NodeFrame {
    fn direction_to_local(&self, v: glam::Vec3) -> glam::Vec3 {
        vec3(self.0.get_global_basis().inverse() * vector3(v))
    }
    fn point_to_local(&self, p: glam::Vec3) -> glam::Vec3 {
        vec3(self.0.to_local(vector3(p)))
    }
    fn yaw(&self) -> f32 {
        self.0.get_global_rotation().y
    }
}

/// Returns the engine's monotonic clock in seconds.
fn now_seconds() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}

fn state_color(s: AgentState) -> Color {
    match s {
        AgentState::Idle => Color::from_rgb(0.3, 0.8, 0.35),
        AgentState::Moving => Color::from_rgb(0.95, 0.35, 0.25),
        AgentState::Aligning => Color::from_rgb(0.95, 0.75, 0.2),
        AgentState::Stabilizing => Color::from_rgb(0.3, 0.6, 0.95),
    }
}

fn metrics_dict(m: &Metrics, formation: &str) -> VarDictionary {
    let mut d = VarDictionary::new();
    d.set("settle_time", m.settle_time);
    d.set("contract_met", m.contract_met);
    d.set("spacing_error", m.spacing_error);
    d.set("nearest_spacing_error", m.nearest_spacing_error);
    d.set("heading_std", m.heading_std.to_degrees());
    d.set("max_slot_error", m.max_slot_error);
    d.set("mean_slot_error", m.mean_slot_error);
    d.set("active", m.active);
    d.set("formation", formation);
    d
}

/// The layout family of a [FormationShape].
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum FormationKind {
    /// One rank, side by side.
    #[default]
    Line,
    /// Ranks × files.
    Column,
    /// An arc bulging forward.
    Arc,
    /// A full circle.
    Circle,
    /// An Archimedean spiral.
    Spiral,
    /// A wedge (chevron) led by the head.
    Wedge,
    /// A square block, filled or hollow.
    Box,
    /// Explicit points.
    Custom,
}

/// Which way agents face in a [FormationShape].
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum FormationFacing {
    /// Everyone faces the formation's forward.
    #[default]
    Forward,
    /// Away from the centre.
    Outward,
    /// Toward the centre.
    Inward,
}

/// A formation as a Resource (save it as `.tres`): the same fields as a `.ron` formation file, edited
/// in the inspector. Register it with [method FormationController.add_formation_resource]; it is
/// validated exactly like a file.
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct FormationShape {
    base: Base<Resource>,
    /// Layout family.
    #[export]
    kind: FormationKind,
    /// Distance between neighbours, m (0.05..=100).
    #[export(range = (0.05, 100.0, 0.01, suffix = "m"))]
    #[init(val = 1.2)]
    spacing: f32,
    /// Turn of the layout and facing relative to the anchor, degrees.
    #[export(range = (-360.0, 360.0, 0.1, suffix = "°"))]
    direction: f32,
    /// Offset of the layout's centre from the anchor (x right, y = z back), m.
    #[export]
    offset: Vector2,
    /// Which way agents face.
    #[export]
    facing: FormationFacing,
    /// Column: agents per rank (0: from `ranks`). Box: agents per side (0: smallest square).
    #[export(range = (0.0, 65536.0, 1.0))]
    files: i32,
    /// Column: number of ranks, used when `files` is 0.
    #[export(range = (0.0, 65536.0, 1.0))]
    ranks: i32,
    /// Arc: radius, m.
    #[export(range = (0.1, 10000.0, 0.1, suffix = "m"))]
    #[init(val = 8.0)]
    radius: f32,
    /// Spiral: radius of the first slot, m.
    #[export(range = (0.0, 10000.0, 0.1, suffix = "m"))]
    #[init(val = 1.5)]
    initial_radius: f32,
    /// Spiral: radius gained per radian, m.
    #[export(range = (0.01, 100.0, 0.01, suffix = "m"))]
    #[init(val = 0.35)]
    growth: f32,
    /// Wedge: opening angle between the arms, degrees (10..=170).
    #[export(range = (10.0, 170.0, 1.0, suffix = "°"))]
    #[init(val = 90.0)]
    wedge_angle: f32,
    /// Box: only the perimeter is occupied.
    #[export]
    hollow: bool,
    /// Custom: slot positions (x right, y = z back), m, head first.
    #[export]
    points: PackedVector2Array,
}

#[godot_api]
impl FormationShape {
    /// Returns the formation as RON text (the format of the `.ron` files).
    #[func]
    pub fn to_ron(&self) -> GString {
        let shape = match self.kind {
            FormationKind::Line => "Line".to_string(),
            FormationKind::Column => format!(
                "Column(files: {}, ranks: {})",
                self.files.max(0),
                self.ranks.max(0)
            ),
            FormationKind::Arc => format!("Arc(radius: {:?})", self.radius),
            FormationKind::Circle => "Circle".to_string(),
            FormationKind::Spiral => format!(
                "Spiral(initial_radius: {:?}, growth: {:?})",
                self.initial_radius, self.growth
            ),
            FormationKind::Wedge => format!("Wedge(angle: {:?})", self.wedge_angle),
            FormationKind::Box => {
                format!("Box(files: {}, hollow: {})", self.files.max(0), self.hollow)
            }
            FormationKind::Custom => {
                let pts: Vec<String> = self
                    .points
                    .as_slice()
                    .iter()
                    .map(|p| format!("({:?}, {:?})", p.x, p.y))
                    .collect();
                format!("Custom(points: [{}])", pts.join(", "))
            }
        };
        let facing = match self.facing {
            FormationFacing::Forward => "Forward",
            FormationFacing::Outward => "Outward",
            FormationFacing::Inward => "Inward",
        };
        GString::from(&format!(
            "(\n    shape: {shape},\n    spacing: {:?},\n    direction: {:?},\n    offset: ({:?}, {:?}),\n    facing: {facing},\n)\n",
            self.spacing, self.direction, self.offset.x, self.offset.y
        ))
    }

    /// Returns an empty string when the formation is valid, else what is wrong (with line and
    /// column in [method to_ron]'s text).
    #[func]
    pub fn validate(&self) -> GString {
        match FormationDef::from_ron(&self.to_ron().to_string()) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(&e.to_string()),
        }
    }
}

#[godot_api(secondary)]
impl FormationController {
    /// Registers `shape` under `name` (validated like a file). Returns false and warns when it is
    /// invalid.
    #[func]
    pub fn add_formation_resource(
        &mut self,
        name: GString,
        shape: Option<Gd<FormationShape>>,
    ) -> bool {
        let Some(shape) = shape else {
            self.warn_plain(&format!(
                "add_formation_resource: no FormationShape given for '{name}'"
            ));
            return false;
        };
        let text = shape.bind().to_ron();
        self.add_formation(name, text)
    }
}

/// A `std::io::Write` over a Godot file (each write is one `store_buffer`).
struct FileSink(Gd<FileAccess>);

impl std::io::Write for FileSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.store_buffer(&PackedByteArray::from(buf)) {
            Ok(buf.len())
        } else {
            Err(std::io::Error::other(format!("{:?}", self.0.get_error())))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush();
        Ok(())
    }
}
