//! [`Squad`]: the whole controller — contract layer (slots relative to a moving anchor, minimum-
//! travel assignment, baseline) and feedback layer (per-agent state machine, PID, soft walls) —
//! stepped at a fixed 60 Hz with interpolation for rendering.
//!
//! # How a command plays out
//!
//! Every agent tracks a *reference* point and heading. When the slots jump (`form`, `face`,
//! `dress`), each agent's reference glides from where the agent stood to its slot along a straight
//! line with a smoothstep profile over one shared transition time (at least
//! [`SquadConfig::arrival_time`], longer when the farthest agent would exceed `max_speed`). The
//! reference's own motion is fed forward, and the PID (k₁, k₂, k₃) corrects what actuation latency,
//! noise and obstacles add. Because the assignment minimises total travel, the straight paths do not
//! cross, and since all agents progress along their paths in step, no two references meet; the soft
//! walls keep bodies apart where paths pass close. Marching moves the anchor (with limited
//! acceleration), so slots — and the squad — move with it.
//!
//! # Coordinates
//!
//! `Vec2` is (x, z) on the ground plane of the controller's frame; yaw is Godot's `rotation.y`
//! (forward = (−sin yaw, −cos yaw)).

use glam::Vec2;

use super::agent::{
    next_state, position_command, turn_command, AgentState, Gains, LatencyGains, Thresholds,
};
use super::assign::Assigner;
use super::baseline::{axis_angle, slot_weight, Baseline, BaselineFit};
use super::bearing::{right_neighbour_score, Bearing, Eyes, Gesture};
use super::hash::SpatialHash;
use super::keyframe::{KeyAgent, KeyframeHeader};
use super::latency::{LatencyEstimator, LAG_CANDIDATES};
use super::record::{Recorder, Sample, DEFAULT_FRAMES};
use super::rng::Rng;
use super::shape::{forward_of, rotate, yaw_of, FormationDef, FormationError, MAX_AGENTS};
use crate::kit::{move_towards_vec3, wrap_angle as kit_wrap_angle};

/// Returns `a` wrapped into [−π, π]: the kit's `wrap_angle`, with a fast path for the common case
/// of an angle at most one turn out of range (no `fmod`).
#[inline]
fn wrap_angle(a: f32) -> f32 {
    use core::f32::consts::{PI, TAU};
    if (-PI..=PI).contains(&a) {
        a
    } else if (PI..=3.0 * PI).contains(&a) {
        a - TAU
    } else if (-3.0 * PI..-PI).contains(&a) {
        a + TAU
    } else {
        kit_wrap_angle(a)
    }
}

/// Returns the signed shortest turn from `a` to `b` (radians), like the kit's `angle_difference`.
#[inline]
fn angle_difference(a: f32, b: f32) -> f32 {
    wrap_angle(b - a)
}

/// Returns the pose (position, yaw) a fraction `a` of the way from `from` to `to`: the positions
/// blended straight, the yaw along the shorter turn, wrapped into [−π, π].
#[inline]
fn blend_pose(from: (Vec2, f32), to: (Vec2, f32), a: f32) -> (Vec2, f32) {
    let p = from.0.lerp(to.0, a);
    let h = from.1 + angle_difference(from.1, to.1) * a;
    (p, wrap_angle(h))
}

/// Logic rate in Hz.
pub const TICK_HZ: f32 = 60.0;
/// Logic step in seconds.
pub const TICK: f32 = 1.0 / TICK_HZ;
/// Most ticks one `advance` call runs (a long hitch is dropped rather than replayed).
pub const MAX_CATCH_UP: u32 = 8;
/// Longest simulated actuation latency, in ticks.
pub const MAX_LATENCY_TICKS: usize = 60;
/// Largest coordinate (m) accepted for a position: farther counts as bad input and is ignored, so
/// squared distances and the metrics stay finite.
pub const MAX_COORDINATE: f32 = 1.0e7;
/// An aligning agent turns in place without position feedback only while its error is within this
/// fraction of the stable threshold (7.5 mm by default): a wider band let agents that reached
/// their slot early drift ~3 cm while they finished turning, which the all-pairs spacing clause
/// then saw after the settle.
const HOLD_FRACTION: f32 = 0.25;
/// Most neighbours one agent's soft walls examine in a tick: a crowd piled into one spot (a squad
/// spawned at one point) costs O(N) per tick, not O(N²). A squad at its usual spacing (or closing
/// up during a transition) has far fewer candidates around each agent, so its soft walls see every
/// neighbour. See [`SpatialHash::for_each_point_near_capped`] for how a fuller block is sampled,
/// and [`Squad::wall_pairs`] for the count of a tick.
pub const WALL_NEIGHBOURS: usize = 32;
const NONE: u32 = u32::MAX;
const NO_GUIDE: u32 = u32::MAX - 1;
const VISITING: u32 = u32::MAX - 2;

/// Tunables. Defaults are the seed's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SquadConfig {
    /// PID gains.
    pub gains: Gains,
    /// State-machine thresholds.
    pub thresholds: Thresholds,
    /// Fastest an agent moves, m/s.
    pub max_speed: f32,
    /// Fastest an agent turns, rad/s.
    pub max_turn_rate: f32,
    /// Soft-wall radius r (m): agents closer than this push apart (each agent examines at most
    /// [`WALL_NEIGHBOURS`] candidates a tick; see [`Squad::wall_pairs`]).
    pub repulsion_radius: f32,
    /// Soft-wall strength k (m²/s): push speed k·(1/d − 1/r).
    pub repulsion_strength: f32,
    /// Shortest transition after a re-forming command, s.
    pub arrival_time: f32,
    /// Highest feedback gain (1/s) reached near the end of a transition (see [`Squad`]).
    pub transition_gain_max: f32,
    /// Anchor acceleration when marching starts or halts, m/s².
    pub anchor_acceleration: f32,
    /// Contract: largest neighbour-spacing error, m (seed: 0.05).
    pub contract_spacing: f32,
    /// Contract: largest heading standard deviation, rad (seed: 3°).
    pub contract_heading: f32,
    /// Contract: longest settle time, s (seed: 1.2).
    pub contract_settle: f32,
    /// Actuation latency, s: how late agents act on a command. The feedback predicts where each
    /// agent will be once the commands in flight have acted (a Smith predictor), so latency does
    /// not make it overshoot; internal agents also simulate it. For external agents it is the
    /// assumed latency: with `measure_latency` each agent's own latency is measured from its
    /// motion and replaces it once known (see [`Squad::agent_latency`]).
    pub latency: f32,
    /// External agents: measure each agent's actuation latency (commanded velocity against
    /// observed motion) and use it, per agent, in the predictor, the reference's lead and k₁.
    pub measure_latency: bool,
    /// How k₁ shrinks with an agent's latency (seed: 1.8 → 1.2 at 210 ms).
    pub latency_gains: LatencyGains,
    /// Simulated agents only: standard deviation of a random displacement added each tick, m.
    pub step_noise: f32,
}

impl Default for SquadConfig {
    fn default() -> Self {
        use super::params::SquadParam as P;
        Self {
            gains: Gains::default(),
            thresholds: Thresholds::default(),
            max_speed: P::MaxSpeed.spec().default,
            max_turn_rate: P::MaxTurnRate.spec().default,
            repulsion_radius: P::RepulsionRadius.spec().default,
            repulsion_strength: P::RepulsionStrength.spec().default,
            arrival_time: P::ArrivalTime.spec().default,
            transition_gain_max: P::TransitionGainMax.spec().default,
            anchor_acceleration: P::AnchorAcceleration.spec().default,
            contract_spacing: P::ContractSpacing.spec().default,
            contract_heading: P::ContractHeading.spec().default,
            contract_settle: P::ContractSettle.spec().default,
            latency: P::Latency.spec().default,
            measure_latency: true,
            latency_gains: LatencyGains::default(),
            step_noise: P::StepNoise.spec().default,
        }
    }
}

/// The longest step [`advance_steps`] takes, s (eight ticks).
pub const ADVANCE_STEP: f32 = 8.0 / 60.0;
/// The most time one call to [`advance_steps`] covers, s.
pub const MAX_ADVANCE: f32 = 3600.0;

/// Returns the steps that run a squad for `seconds` of simulated time at once (a fast-forward):
/// at most [`ADVANCE_STEP`] each, [`MAX_ADVANCE`] in all; none for a time that is not finite and
/// positive.
pub fn advance_steps(seconds: f32) -> impl Iterator<Item = f32> {
    let mut left = if seconds.is_finite() && seconds > 0.0 {
        seconds.min(MAX_ADVANCE)
    } else {
        0.0
    };
    core::iter::from_fn(move || {
        (left > 1e-6).then(|| {
            let dt = left.min(ADVANCE_STEP);
            left -= dt;
            dt
        })
    })
}

/// The live contract metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Largest |actual − nominal| distance over every *neighbouring pair* of agents, m: two slots
    /// are neighbours when their nominal distance is at most 1.5 × the formation's spacing, and
    /// every slot is also paired with its nearest slot (so sparse layouts are covered too). See
    /// [`Squad::neighbour_pairs`].
    pub spacing_error: f32,
    /// Largest |actual − nominal| distance between an agent and its one nearest slot neighbour, m
    /// (the narrower measure reported before every pair was counted).
    pub nearest_spacing_error: f32,
    /// Mean distance from agents to their slots, m.
    pub mean_slot_error: f32,
    /// Largest distance from an agent to its slot, m.
    pub max_slot_error: f32,
    /// Standard deviation of heading errors (agent − slot heading), rad.
    pub heading_std: f32,
    /// Seconds since the last command.
    pub since_command: f32,
    /// Seconds from the last command to settling, or −1 while not settled yet.
    pub settle_time: f32,
    /// Agents taking part (not dropped).
    pub active: u32,
    /// Agents in each state: idle, moving, aligning, stabilizing.
    pub states: [u32; 4],
    /// Whether the contract holds: the last command settled within the contract's settle time
    /// (a move whose `travel_time` exceeds it cannot) and the squad is formed now. It turns false
    /// while bodies are pushed off their slots after settling, and again true once they are back.
    pub contract_met: bool,
    /// Whether the squad is formed now: spacing and heading within the contract, every agent
    /// within `align_threshold` of its slot.
    pub formed: bool,
    /// Whether the squad is where it was sent: not marching toward a goal it has not reached. A
    /// command settles only once the squad has arrived and is formed.
    pub arrived: bool,
    /// Seconds the last command's move was planned to take, s: the reference glides each agent
    /// to its new slot along a smoothstep whose peak speed keeps 15 % of `max_speed` (and 10 % of
    /// `max_turn_rate`) in hand, so the farthest agent's distance sets it. A settle time far
    /// above the contract's is explained by a long move when this is close to it.
    pub travel_time: f32,
}

/// Where the formation stands and how it moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Anchor {
    /// Centre of the formation (x, z), m.
    pub pos: Vec2,
    /// Yaw of the layout, rad.
    pub layout_yaw: f32,
    /// Yaw the agents face (plus each slot's own offset), rad.
    pub facing_yaw: f32,
    /// Current velocity, m/s.
    pub vel: Vec2,
    /// Velocity being accelerated toward, m/s.
    pub desired_vel: Vec2,
    /// March target, if marching to a point.
    pub goal: Option<Vec2>,
    /// Marching speed toward `goal`, m/s.
    pub goal_speed: f32,
}

impl Default for Anchor {
    fn default() -> Self {
        Self {
            pos: Vec2::ZERO,
            layout_yaw: 0.0,
            facing_yaw: 0.0,
            vel: Vec2::ZERO,
            desired_vel: Vec2::ZERO,
            goal: None,
            goal_speed: 0.0,
        }
    }
}

/// A squad of agents holding a formation. See the module docs.
#[derive(Debug, Clone)]
pub struct Squad {
    cfg: SquadConfig,
    /// Whether the squad integrates positions itself (internal agents) or reads them each tick.
    simulate: bool,
    n: usize,
    active: Vec<bool>,
    pos: Vec<Vec2>,
    prev_pos: Vec<Vec2>,
    heading: Vec<f32>,
    prev_heading: Vec<f32>,
    vel: Vec<Vec2>,
    /// Per agent: the mean commanded velocity over the ticks the last `advance` ran (what a body
    /// moved once per physics frame should move at), and the running sum behind it.
    frame_vel: Vec<Vec2>,
    frame_sum: Vec<Vec2>,
    omega: Vec<f32>,
    state: Vec<AgentState>,
    counter: Vec<u8>,
    integral: Vec<Vec2>,
    slot_of: Vec<u32>,
    agent_of_slot: Vec<u32>,
    start_rel: Vec<Vec2>,
    start_heading: Vec<f32>,
    ref_prev: Vec<Vec2>,
    ref_heading_prev: Vec<f32>,
    delay_vel: Vec<Vec2>,
    delay_omega: Vec<f32>,
    delay_ticks: usize,
    delay_head: usize,
    /// External agents: per agent, the latency (ticks) the predictor and the lead use.
    lag: Vec<u8>,
    /// External agents: each agent's measured latency.
    latency: LatencyEstimator,
    slots: Vec<Vec2>,
    slot_heading: Vec<f32>,
    neighbour: Vec<u32>,
    /// Every neighbouring slot pair (s < t), laid out with the slots.
    pairs: Vec<(u32, u32)>,
    /// Each pair's nominal distance, m (the slots' distance), and each slot's to its nearest.
    pair_nominal: Vec<f32>,
    neighbour_nominal: Vec<f32>,
    /// Per slot, the position of the active agent holding it (NaN: none), for the metrics.
    slot_agent_pos: Vec<Vec2>,
    /// Per agent: its position once its commands in flight have acted (soft walls use it).
    pred: Vec<Vec2>,
    /// How many times the formation was laid out and assigned (see [`Squad::relayout_count`]).
    relayouts: u64,
    /// Neighbour pairs the soft walls examined in the last tick (see [`Squad::wall_pairs`]).
    wall_pairs: u64,
    scratch_pos: Vec<Vec2>,
    scratch_w: Vec<f32>,
    def: FormationDef,
    anchor: Anchor,
    transition: f32,
    since_command: f32,
    settle_counter: u8,
    /// Whether the last settle came within the contract's settle time.
    settled_in_time: bool,
    settled_pending: Option<Metrics>,
    metrics: Metrics,
    accumulator: f32,
    tick: u64,
    hash: SpatialHash,
    assigner: Assigner,
    fit: BaselineFit,
    rng: Rng,
    recorder: Option<Recorder>,
    /// Eyes right: set by `dress`, cleared by the next command.
    eyes_right: bool,
    /// Saluting, and the seconds left (∞: until `end_salute`).
    saluting: bool,
    salute_left: f32,
    /// Per slot: the slot of the file-mate on its right (`NONE`: none).
    right_of: Vec<u32>,
    /// Per slot: the slot of its rank's guide (the end of the right-hand chain), `NONE` while
    /// unresolved, `NO_GUIDE` for none (a ring of file-mates has no end).
    guide_slot: Vec<u32>,
    guide_stack: Vec<u32>,
}

impl Squad {
    /// Returns a squad of `n` agents (clamped to [`MAX_AGENTS`]) standing in a line formation at
    /// the origin, all idle. `simulate` chooses internal agents (the squad moves them) or external
    /// ones (positions are fed with [`Squad::sense`] before each tick).
    #[must_use]
    pub fn new(n: usize, simulate: bool, cfg: SquadConfig) -> Self {
        let mut s = Self {
            cfg: cfg.sanitized(|_| {}),
            simulate,
            n: 0,
            active: Vec::new(),
            pos: Vec::new(),
            prev_pos: Vec::new(),
            heading: Vec::new(),
            prev_heading: Vec::new(),
            vel: Vec::new(),
            frame_vel: Vec::new(),
            frame_sum: Vec::new(),
            omega: Vec::new(),
            state: Vec::new(),
            counter: Vec::new(),
            integral: Vec::new(),
            slot_of: Vec::new(),
            agent_of_slot: Vec::new(),
            start_rel: Vec::new(),
            start_heading: Vec::new(),
            ref_prev: Vec::new(),
            ref_heading_prev: Vec::new(),
            delay_vel: Vec::new(),
            delay_omega: Vec::new(),
            delay_ticks: 0,
            delay_head: 0,
            lag: Vec::new(),
            latency: LatencyEstimator::default(),
            slots: Vec::new(),
            slot_heading: Vec::new(),
            neighbour: Vec::new(),
            pairs: Vec::new(),
            pair_nominal: Vec::new(),
            neighbour_nominal: Vec::new(),
            slot_agent_pos: Vec::new(),
            pred: Vec::new(),
            relayouts: 0,
            wall_pairs: 0,
            scratch_pos: Vec::new(),
            scratch_w: Vec::new(),
            def: FormationDef::default(),
            anchor: Anchor::default(),
            transition: 0.0,
            since_command: 0.0,
            settle_counter: 0,
            settled_in_time: false,
            settled_pending: None,
            metrics: Metrics::default(),
            accumulator: 0.0,
            tick: 0,
            hash: SpatialHash::default(),
            assigner: Assigner::default(),
            fit: BaselineFit::default(),
            rng: Rng::new(0x5EED),
            recorder: None,
            eyes_right: false,
            saluting: false,
            salute_left: f32::INFINITY,
            right_of: Vec::new(),
            guide_slot: Vec::new(),
            guide_stack: Vec::new(),
        };
        s.resize(n);
        s
    }

    /// Changes the number of agents (clamped to [`MAX_AGENTS`]); new agents stand at the anchor.
    /// Re-lays the current formation. Allocates; not for per-frame use.
    pub fn resize(&mut self, n: usize) {
        let n = n.min(MAX_AGENTS);
        let a = self.anchor.pos;
        self.n = n;
        self.active.resize(n, true);
        self.pos.resize(n, a);
        self.prev_pos.resize(n, a);
        self.heading.resize(n, self.anchor.facing_yaw);
        self.prev_heading.resize(n, self.anchor.facing_yaw);
        self.vel.resize(n, Vec2::ZERO);
        self.frame_vel.resize(n, Vec2::ZERO);
        self.frame_sum.resize(n, Vec2::ZERO);
        self.omega.resize(n, 0.0);
        self.state.resize(n, AgentState::Idle);
        self.counter.resize(n, 0);
        self.integral.resize(n, Vec2::ZERO);
        self.start_rel.resize(n, Vec2::ZERO);
        self.start_heading.resize(n, 0.0);
        self.ref_prev.resize(n, a);
        self.ref_heading_prev.resize(n, 0.0);
        self.scratch_pos.reserve(n);
        self.pred.reserve(n.saturating_sub(self.pred.len()));
        self.scratch_w.reserve(n);
        self.set_latency_buffers();
        self.recorder = self
            .recorder
            .as_ref()
            .map(|r| Recorder::new(n, r.capacity()));
        let old_n = self.slot_of.len();
        let def = self.def.clone();
        if self.apply_formation(&def, false).is_err() {
            let _ = self.apply_formation(&FormationDef::default(), false);
        }
        // New agents start in their slots, facing the slot's way.
        for i in old_n..n {
            self.snap_agent(i);
        }
        self.transition = 0.0;
    }

    fn snap_agent(&mut self, i: usize) {
        if let Some(s) = self.slot_of(i) {
            let (p, h) = (self.slot_pos(s), self.slot_yaw(s));
            self.place(i, p, h);
            self.ref_prev[i] = p;
            self.ref_heading_prev[i] = h;
            self.start_rel[i] = p - self.anchor.pos;
            self.start_heading[i] = h;
            self.state[i] = AgentState::Idle;
            self.integral[i] = Vec2::ZERO;
        }
    }

    /// Teleports every agent into its slot, facing the slot's way, with no transition (e.g. to
    /// spawn a squad already formed).
    pub fn snap_to_slots(&mut self) {
        for i in 0..self.n {
            self.snap_agent(i);
        }
        self.transition = 0.0;
    }

    fn set_latency_buffers(&mut self) {
        self.delay_ticks = ((self.cfg.latency * TICK_HZ).round() as usize).min(MAX_LATENCY_TICKS);
        let cols = self.delay_cols();
        let len = self.n * cols;
        self.lag.clear();
        self.lag.resize(self.n, self.delay_ticks as u8);
        self.latency
            .resize(if self.simulate { 0 } else { self.n }, self.cfg.latency);
        self.delay_vel.clear();
        self.delay_vel.resize(len, Vec2::ZERO);
        self.delay_omega.clear();
        self.delay_omega.resize(len, 0.0);
        self.delay_head = 0;
    }

    /// Columns of the command history per agent: the simulated delay line for internal agents,
    /// every candidate latency for external ones.
    fn delay_cols(&self) -> usize {
        if self.simulate {
            self.delay_ticks + 1
        } else {
            LAG_CANDIDATES
        }
    }

    /// Returns agent `i`'s actuation latency, s, as the controller uses it: for external agents
    /// with [`SquadConfig::measure_latency`], the latency measured from its motion once known
    /// (see [`Squad::agent_latency_measured`]), else [`SquadConfig::latency`]. The predictor
    /// rounds it to whole ticks.
    #[must_use]
    pub fn agent_latency(&self, i: usize) -> f32 {
        if i >= self.n {
            return 0.0;
        }
        if !self.simulate && self.cfg.measure_latency {
            self.latency.latency(i)
        } else {
            self.cfg.latency
        }
    }

    /// Returns whether agent `i`'s latency has been measured (external agents, after enough of
    /// its motion was seen; internal agents never are: theirs is simulated).
    #[must_use]
    pub fn agent_latency_measured(&self, i: usize) -> bool {
        !self.simulate && self.cfg.measure_latency && self.latency.measured(i)
    }

    /// Returns agent `i`'s position gain k₁ outside transitions: the configured k₁ scaled for its
    /// latency by [`SquadConfig::latency_gains`].
    #[must_use]
    pub fn agent_k1(&self, i: usize) -> f32 {
        self.cfg.gains.k1 * self.cfg.latency_gains.k1_scale(self.agent_latency(i))
    }

    /// Returns the configuration in use.
    #[must_use]
    pub fn config(&self) -> &SquadConfig {
        &self.cfg
    }

    /// Replaces the configuration (sanitised). A new latency (or turning measurement on or off)
    /// resets the actuation delay line and the measured latencies.
    pub fn set_config(&mut self, cfg: SquadConfig) {
        let cfg = cfg.sanitized(|_| {});
        let relatch =
            cfg.latency != self.cfg.latency || cfg.measure_latency != self.cfg.measure_latency;
        self.cfg = cfg;
        if relatch {
            self.set_latency_buffers();
        }
    }

    /// Reseeds the simulated actuation noise.
    pub fn seed_noise(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
    }

    /// Returns the number of agents.
    #[must_use]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Returns true with no agents.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Returns whether the squad moves its agents itself.
    #[must_use]
    pub fn simulates(&self) -> bool {
        self.simulate
    }

    // ----- commands -------------------------------------------------------------------------

    /// Lays out `def` for the active agents around the anchor, assigns slots by minimum total
    /// travel and starts the transition. On error (e.g. a custom list too short) the previous
    /// formation is kept.
    ///
    /// # Errors
    /// Returns why the formation cannot seat the squad.
    pub fn form(&mut self, def: &FormationDef) -> Result<(), FormationError> {
        self.eyes_right = false;
        self.anchor.layout_yaw = self.anchor.facing_yaw;
        self.apply_formation(def, true)
    }

    fn apply_formation(&mut self, def: &FormationDef, assign: bool) -> Result<(), FormationError> {
        self.relayouts += 1;
        let active = self.active.iter().filter(|a| **a).count();
        let mut slots = core::mem::take(&mut self.slots);
        let mut heads = core::mem::take(&mut self.slot_heading);
        let res = def.layout(active, &mut slots, &mut heads);
        if let Err(e) = res {
            // Keep the previous layout: lay it out again for the current agents.
            let old = self.def.clone();
            if old.layout(active, &mut slots, &mut heads).is_err() {
                let _ = FormationDef::default().layout(active, &mut slots, &mut heads);
            }
            self.slots = slots;
            self.slot_heading = heads;
            self.compute_neighbours();
            self.assign_slots(assign);
            return Err(e);
        }
        self.slots = slots;
        self.slot_heading = heads;
        self.def = def.clone();
        self.compute_neighbours();
        self.assign_slots(assign);
        if self.eyes_right {
            self.compute_guides();
        }
        self.begin_transition();
        Ok(())
    }

    /// Returns the formation in use.
    #[must_use]
    pub fn formation(&self) -> &FormationDef {
        &self.def
    }

    fn assign_slots(&mut self, optimal: bool) {
        let slot_world: Vec<Vec2> = (0..self.slots.len()).map(|s| self.slot_pos(s)).collect();
        self.scratch_pos.clear();
        for i in 0..self.n {
            if self.active[i] {
                self.scratch_pos.push(self.pos[i]);
            }
        }
        let mut order = Vec::with_capacity(self.scratch_pos.len());
        if optimal {
            self.assigner
                .assign(&self.scratch_pos, &slot_world, &mut order);
        } else {
            order.extend(0..self.scratch_pos.len() as u32);
        }
        self.slot_of.clear();
        self.slot_of.resize(self.n, NONE);
        self.agent_of_slot.clear();
        self.agent_of_slot.resize(self.slots.len(), NONE);
        let mut k = 0;
        for i in 0..self.n {
            if self.active[i] {
                let s = order.get(k).copied().unwrap_or(NONE);
                self.slot_of[i] = s;
                if let Some(a) = self.agent_of_slot.get_mut(s as usize) {
                    *a = i as u32;
                }
                k += 1;
            }
        }
    }

    fn compute_neighbours(&mut self) {
        let m = self.slots.len();
        self.neighbour.clear();
        self.neighbour.resize(m, NONE);
        self.pairs.clear();
        self.pair_nominal.clear();
        self.neighbour_nominal.clear();
        // Room for the metrics' per-slot positions, so a tick does not allocate.
        self.slot_agent_pos.clear();
        self.slot_agent_pos.reserve(m);
        if m < 2 {
            self.neighbour_nominal.resize(m, 0.0);
            return;
        }
        let radius = (self.def.spacing * 1.5).max(0.1);
        self.hash.rebuild(&self.slots, radius, |_| true);
        for s in 0..m {
            let p = self.slots[s];
            let (mut best, mut best_d) = (NONE, f32::MAX);
            self.hash.for_each_near(p, |j| {
                let d = self.slots[j].distance_squared(p);
                if j != s && d < best_d {
                    best_d = d;
                    best = j as u32;
                }
            });
            if best == NONE && m <= 4096 {
                for j in 0..m {
                    let d = self.slots[j].distance_squared(p);
                    if j != s && d < best_d {
                        best_d = d;
                        best = j as u32;
                    }
                }
            }
            self.neighbour[s] = best;
        }
        // Every neighbouring pair: within 1.5 spacings, plus each slot's nearest.
        let limit2 = radius * radius;
        self.pairs.clear();
        for s in 0..m {
            let p = self.slots[s];
            let pairs = &mut self.pairs;
            let slots = &self.slots;
            self.hash.for_each_near(p, |j| {
                if j > s && slots[j].distance_squared(p) <= limit2 {
                    pairs.push((s as u32, j as u32));
                }
            });
        }
        for s in 0..m {
            let t = self.neighbour[s];
            if t != NONE {
                let (a, b) = if (s as u32) < t {
                    (s as u32, t)
                } else {
                    (t, s as u32)
                };
                if self.slots[a as usize].distance_squared(self.slots[b as usize]) > limit2 {
                    self.pairs.push((a, b));
                }
            }
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        let slots = &self.slots;
        self.pair_nominal.extend(
            self.pairs
                .iter()
                .map(|&(s, t)| slots[s as usize].distance(slots[t as usize])),
        );
        self.neighbour_nominal
            .extend(self.neighbour.iter().enumerate().map(|(s, &t)| {
                if t == NONE {
                    0.0
                } else {
                    slots[s].distance(slots[t as usize])
                }
            }));
    }

    /// Returns every neighbouring slot pair (s, t), s < t: slots at most 1.5 × the formation's
    /// spacing apart, plus each slot with its nearest slot. The contract's spacing clause
    /// ([`Metrics::spacing_error`]) is measured over the agents holding these pairs.
    #[must_use]
    pub fn neighbour_pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    fn begin_transition(&mut self) {
        let mut t = self.cfg.arrival_time;
        for i in 0..self.n {
            self.start_rel[i] = self.pos[i] - self.anchor.pos;
            self.start_heading[i] = self.heading[i];
            self.ref_prev[i] = self.pos[i];
            self.ref_heading_prev[i] = self.heading[i];
            let s = self.slot_of[i];
            if s == NONE || !self.active[i] {
                continue;
            }
            let d = self.slot_pos(s as usize).distance(self.pos[i]);
            let turn = angle_difference(self.heading[i], self.slot_yaw(s as usize)).abs();
            // A smoothstep peaks at 1.5× its mean speed; keep 15 % in hand for the feedback (the
            // reference leads by the latency, so the feedback only trims noise and shoves).
            t = t
                .max(1.5 * d / (0.85 * self.cfg.max_speed))
                .max(1.5 * turn / (0.9 * self.cfg.max_turn_rate));
        }
        // A long move cruises instead: the same peak speed, reached and left over `MOVE_RAMP` s.
        if t > 3.0 * MOVE_RAMP {
            t = t / 1.5 + MOVE_RAMP;
        }
        self.transition = if t.is_finite() { t.min(600.0) } else { 600.0 };
        // The reference leads by the latency (see `step`): start the previous reference where the
        // led one was a tick ago, so the first feed-forward is the profile's own speed.
        let (lead_pos, lead_yaw) = self.leads();
        let by = move_profile(lead_yaw - TICK, self.transition);
        for i in 0..self.n {
            let s = self.slot_of[i];
            if s == NONE || !self.active[i] {
                continue;
            }
            let b = move_profile(self.lead_of(i, lead_pos) - TICK, self.transition);
            let (slot, yaw) = (self.slot_pos(s as usize), self.slot_yaw(s as usize));
            self.ref_prev[i] = self.pos[i].lerp(slot, b);
            self.ref_heading_prev[i] =
                wrap_angle(self.heading[i] + angle_difference(self.heading[i], yaw) * by);
        }
        self.restart_clock();
    }

    /// Returns how far (s) the position and heading references lead the clock: the actuation
    /// latency (the delay line's length), heading only for internal agents.
    fn leads(&self) -> (f32, f32) {
        let l = self.delay_ticks as f32 * TICK;
        (l, if self.simulate { l } else { 0.0 })
    }

    /// Returns agent `i`'s position lead, s: its own latency for external agents, else `global`.
    fn lead_of(&self, i: usize, global: f32) -> f32 {
        if self.simulate {
            global
        } else {
            f32::from(self.lag.get(i).copied().unwrap_or(0)) * TICK
        }
    }

    /// Returns the sum of agent `i`'s commands in flight (velocity, turn rate): the last `lag`
    /// commands before column `write_at`.
    fn in_flight(&self, i: usize, cols: usize, write_at: usize) -> (Vec2, f32) {
        let lag = if self.simulate {
            self.delay_ticks
        } else {
            usize::from(self.lag.get(i).copied().unwrap_or(0))
        }
        .min(cols - 1);
        let base = i * cols;
        let (mut v, mut w) = (Vec2::ZERO, 0.0);
        for m in 1..=lag {
            let k = base + (write_at + cols - m) % cols;
            v += self.delay_vel[k];
            w += self.delay_omega[k];
        }
        (v, w)
    }

    /// External agents: measures each active agent's latency from its motion since the last tick
    /// and updates the lag its predictor uses (with half a tick of hysteresis).
    fn measure_latencies(&mut self, dt: f32) {
        if self.simulate || !self.cfg.measure_latency {
            return;
        }
        let cols = LAG_CANDIDATES;
        let write_at = self.delay_head;
        for i in 0..self.n {
            if !self.active[i] {
                continue;
            }
            let base = i * cols;
            let hist = &self.delay_vel[base..base + cols];
            self.latency.observe(i, self.pos[i], dt, |k| {
                hist[(write_at + cols - 1 - k) % cols]
            });
            let want = self.latency.latency(i) * TICK_HZ;
            let have = f32::from(self.lag[i]);
            if (want - have).abs() > 0.6 {
                self.lag[i] = (want.round() as usize).min(MAX_LATENCY_TICKS) as u8;
            }
        }
    }

    fn restart_clock(&mut self) {
        self.since_command = 0.0;
        self.settle_counter = 0;
        self.settled_in_time = false;
        self.metrics.settle_time = -1.0;
        self.metrics.contract_met = false;
        // A settle of the previous command that nobody took is not this command's.
        self.settled_pending = None;
    }

    /// Moves the current command's clock forward by `seconds` (clamped to 0..=10), e.g. to catch up
    /// with a command that was issued that long ago on the server.
    pub fn age_command(&mut self, seconds: f32) {
        if seconds.is_finite() && seconds > 0.0 {
            self.since_command += seconds.min(10.0);
        }
    }

    /// Marches the squad along `direction` (x, z; normalised here) at `speed` m/s until
    /// [`Squad::halt`]. The agents face the direction of march (turning in place, as in drill).
    pub fn march(&mut self, direction: Vec2, speed: f32) {
        let dir = direction.normalize_or_zero();
        let speed = if speed.is_finite() {
            speed.clamp(0.0, self.cfg.max_speed)
        } else {
            0.0
        };
        if dir == Vec2::ZERO {
            return;
        }
        self.eyes_right = false;
        self.anchor.goal = None;
        self.anchor.desired_vel = dir * speed;
        self.set_facing(yaw_of(dir));
    }

    /// Marches the squad to `target` (x, z) at `speed` m/s, braking to a halt there.
    pub fn march_to(&mut self, target: Vec2, speed: f32) {
        if !usable(target) {
            return;
        }
        self.eyes_right = false;
        let to = target - self.anchor.pos;
        let speed = if speed.is_finite() {
            speed.clamp(0.0, self.cfg.max_speed)
        } else {
            0.0
        };
        self.anchor.goal = Some(target);
        self.anchor.goal_speed = speed;
        if to.length() > 1e-3 {
            self.set_facing(yaw_of(to));
        } else {
            self.restart_clock();
        }
    }

    /// Stops marching (the anchor brakes at its acceleration).
    pub fn halt(&mut self) {
        self.eyes_right = false;
        self.anchor.goal = None;
        self.anchor.desired_vel = Vec2::ZERO;
        self.restart_clock();
    }

    /// Turns every agent in place to face `yaw` (rad) plus its slot's own offset; the layout stays.
    pub fn face(&mut self, yaw: f32) {
        if yaw.is_finite() {
            self.eyes_right = false;
            self.set_facing(wrap_angle(yaw));
        }
    }

    fn set_facing(&mut self, yaw: f32) {
        self.anchor.facing_yaw = yaw;
        self.begin_transition();
    }

    /// Re-fits the formation to where the squad stands (anchor moved to the squad's weighted-median
    /// baseline point, layout turned to its principal axis for elongated shapes), re-lays it for the
    /// agents still taking part, re-assigns and re-forms: drill's "dress". Every agent with a guide
    /// on its right turns its eyes right (see [`Squad::guide`]) until the next command.
    pub fn dress(&mut self) {
        self.eyes_right = true;
        if let (Some(agents), Some(slots)) = (self.baseline(), self.slot_baseline()) {
            // Turn only when both are clearly elongated (a circle has no axis to trust).
            if agents.major > 4.0 * agents.minor && slots.major > 4.0 * slots.minor {
                let mut turn = slots.direction.angle_to(agents.direction);
                if turn > core::f32::consts::FRAC_PI_2 {
                    turn -= core::f32::consts::PI;
                } else if turn < -core::f32::consts::FRAC_PI_2 {
                    turn += core::f32::consts::PI;
                }
                // `angle_to` turns x toward z; yaw turns the other way (see `rotate`).
                if axis_angle(agents.direction, slots.direction) > 1e-4 {
                    self.anchor.layout_yaw = wrap_angle(self.anchor.layout_yaw - turn);
                    self.anchor.facing_yaw = wrap_angle(self.anchor.facing_yaw - turn);
                }
            }
            let shift = agents.point - slots.point;
            if shift.is_finite() {
                self.anchor.pos += shift;
            }
        }
        let def = self.def.clone();
        let _ = self.apply_formation(&def, true);
    }

    /// Takes an agent out of the contract (it keeps its last state and is ignored) or back in.
    /// The formation is re-laid for the agents taking part; slots are re-assigned.
    pub fn set_active(&mut self, i: usize, active: bool) {
        if i < self.n && self.active[i] != active {
            self.active[i] = active;
            let def = self.def.clone();
            let _ = self.apply_formation(&def, true);
        }
    }

    /// Takes every agent for which `pick(i)` is true out of the contract (`active` false) or back
    /// in, then re-lays and re-assigns the formation **once** (not once per agent): what a dropped
    /// or disconnected peer's agents need. Returns how many agents changed.
    pub fn set_active_where(&mut self, mut pick: impl FnMut(usize) -> bool, active: bool) -> usize {
        let mut changed = 0;
        for i in 0..self.n {
            if self.active[i] != active && pick(i) {
                self.active[i] = active;
                changed += 1;
            }
        }
        if changed > 0 {
            let def = self.def.clone();
            let _ = self.apply_formation(&def, true);
        }
        changed
    }

    /// Returns how many times the formation has been laid out and assigned since the squad was
    /// made (each `form`, `dress`, `set_active` or batch of [`Squad::set_active_where`] counts one).
    #[must_use]
    pub fn relayout_count(&self) -> u64 {
        self.relayouts
    }

    /// Returns how many neighbour pairs the soft walls examined in the last tick: at most
    /// [`WALL_NEIGHBOURS`] per active agent, however closely the agents stand.
    #[must_use]
    pub fn wall_pairs(&self) -> u64 {
        self.wall_pairs
    }

    /// Returns whether agent `i` takes part in the contract.
    #[must_use]
    pub fn is_active(&self, i: usize) -> bool {
        self.active.get(i).copied().unwrap_or(false)
    }

    // ----- keyframes (see `keyframe`) ------------------------------------------------------

    /// Fills `out` with agents `first .. first + count` (clamped to the squad) as a keyframe
    /// carries them: slot, position and heading, or no slot for an agent not taking part.
    pub fn keyframe_agents(&self, first: usize, count: usize, out: &mut Vec<KeyAgent>) {
        out.clear();
        let end = first.saturating_add(count).min(self.n);
        out.extend((first.min(end)..end).map(|i| match self.slot_of(i) {
            Some(s) if self.active[i] => KeyAgent {
                slot: Some(s as u32),
                pos: self.pos[i],
                heading: self.heading[i],
            },
            _ => KeyAgent::default(),
        }));
    }

    /// Fills a keyframe header's squad part (size, anchor) from this squad; the caller sets the
    /// sequence, time, chunk range and formation name.
    pub fn keyframe_header(&self, header: &mut KeyframeHeader) {
        header.total = self.n as u32;
        header.anchor_pos = self.anchor.pos;
        header.layout_yaw = self.anchor.layout_yaw;
        header.facing_yaw = self.anchor.facing_yaw;
        header.anchor_vel = self.anchor.vel;
        header.desired_vel = self.anchor.desired_vel;
        header.goal = self.anchor.goal;
        header.goal_speed = self.anchor.goal_speed;
        header.transition = self.transition;
        header.since_command = self.since_command;
    }

    /// Takes the authority's anchor from a keyframe, carried forward by its velocity over `age`.
    fn take_key_anchor(&mut self, h: &KeyframeHeader, age: f32) {
        let anchor = h.anchor_pos + h.anchor_vel * age;
        if usable(anchor) && h.layout_yaw.is_finite() && h.facing_yaw.is_finite() {
            self.anchor.pos = anchor;
            self.anchor.layout_yaw = wrap_angle(h.layout_yaw);
            self.anchor.facing_yaw = wrap_angle(h.facing_yaw);
            self.anchor.vel = h.anchor_vel;
            self.anchor.desired_vel = h.desired_vel;
            self.anchor.goal = h.goal;
            self.anchor.goal_speed = h.goal_speed;
        }
    }

    /// Converges this copy of the squad on the authority's: applies one keyframe chunk taken
    /// `age` seconds ago (its time in flight, clamped to 0..=1 s). In order:
    /// - the chunk's agents take part or not as the authority's do (one re-form if that changes);
    /// - the anchor takes the authority's state, carried forward by its velocity over `age`, and
    ///   the transition its length and progress;
    /// - each agent takes the authority's slot (swapping with the agent holding it, so slots stay
    ///   a permutation even when other chunks are lost);
    /// - internal agents (the squad simulates them) move to the authority's position and heading,
    ///   carried forward by their own velocity and turn rate over `age`; their transition
    ///   reference moves with them. External agents' positions belong to the game's bodies.
    ///
    /// Returns false, changing nothing, for a chunk that does not fit this squad (another size).
    pub fn apply_keyframe(&mut self, h: &KeyframeHeader, agents: &[KeyAgent], age: f32) -> bool {
        let first = h.first as usize;
        if h.total as usize != self.n
            || agents.len() != h.count as usize
            || first + agents.len() > self.n
        {
            return false;
        }
        let age = if age.is_finite() {
            age.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let range = first..first + agents.len();
        if range
            .clone()
            .zip(agents)
            .any(|(i, a)| self.active[i] != a.slot.is_some())
        {
            for (i, a) in range.clone().zip(agents) {
                self.active[i] = a.slot.is_some();
            }
            let def = self.def.clone();
            let _ = self.apply_formation(&def, true);
        }
        self.take_key_anchor(h, age);
        // The same point of the same transition, so the references agree.
        if h.transition.is_finite() && h.transition > 0.0 && h.since_command.is_finite() {
            self.transition = h.transition.min(600.0);
            self.since_command = (h.since_command + age).clamp(0.0, 1.0e6);
        }
        // The share of the current move done (the reference goes start → slot by the profile).
        let done = if self.transition > 0.0 {
            let (lead, _) = self.leads();
            move_profile(self.since_command + lead, self.transition)
        } else {
            1.0
        };
        for (i, a) in range.zip(agents) {
            let Some(s) = a.slot else { continue };
            let mine = self.slot_of[i];
            if s != mine && (s as usize) < self.slots.len() && mine != NONE {
                let other = self.agent_of_slot[s as usize];
                self.slot_of[i] = s;
                self.agent_of_slot[s as usize] = i as u32;
                self.agent_of_slot[mine as usize] = other;
                if other != NONE {
                    self.slot_of[other as usize] = mine;
                }
            }
            if !self.simulate {
                continue;
            }
            let target = a.pos + self.vel[i] * age;
            if usable(target) {
                let d = target - self.pos[i];
                self.pos[i] += d;
                self.prev_pos[i] += d;
                self.ref_prev[i] += d;
                // The move's start is put where the authority's must be for its reference to pass
                // through the corrected position now (the authority's agents track their
                // references), so the copy's reference runs on as the authority's does; late in
                // a move (the start barely matters then) it moves with the correction.
                if done < 0.9 {
                    let slot = self.slot_pos(s as usize) - self.anchor.pos;
                    self.start_rel[i] = (target - self.anchor.pos - slot * done) / (1.0 - done);
                } else {
                    self.start_rel[i] += d;
                }
            }
            let yaw = a.heading + self.omega[i] * age;
            if yaw.is_finite() {
                let dh = angle_difference(self.heading[i], yaw);
                self.heading[i] = wrap_angle(self.heading[i] + dh);
                self.prev_heading[i] = wrap_angle(self.prev_heading[i] + dh);
                self.start_heading[i] = wrap_angle(self.start_heading[i] + dh);
                self.ref_heading_prev[i] = wrap_angle(self.ref_heading_prev[i] + dh);
            }
        }
        true
    }

    // ----- bearing (eyes right, salute) ----------------------------------------------------

    /// Salutes: every agent taking part raises its right hand to the brow, for `seconds` (a
    /// non-finite or non-positive value: until [`Squad::end_salute`]). Changes no position or
    /// heading rule and restarts no settle clock.
    pub fn salute(&mut self, seconds: f32) {
        self.saluting = true;
        self.salute_left = if seconds.is_finite() && seconds > 0.0 {
            seconds
        } else {
            f32::INFINITY
        };
    }

    /// Ends the salute (hands down).
    pub fn end_salute(&mut self) {
        self.saluting = false;
        self.salute_left = f32::INFINITY;
    }

    /// Returns whether the squad is saluting.
    #[must_use]
    pub fn is_saluting(&self) -> bool {
        self.saluting
    }

    /// Returns whether the squad has eyes right (since the last [`Squad::dress`], until the next
    /// command).
    #[must_use]
    pub fn is_eyes_right(&self) -> bool {
        self.eyes_right
    }

    /// Returns the agent that agent `i` dresses on: the guide of its rank, the last of the
    /// file-mates on its right (each the nearest slot between 0.3 and 1.75 spacings to the right
    /// and within 0.35 spacings of the same depth, in the agent's own facing). `None` for the guide
    /// itself, for an agent with no file-mate on its right, for a ring of file-mates (a circle has
    /// no right flank), for dropped agents, and whenever eyes are front (guides are resolved on
    /// [`Squad::dress`]).
    #[must_use]
    pub fn guide(&self, i: usize) -> Option<usize> {
        if !self.eyes_right || !self.is_active(i) {
            return None;
        }
        let s = self.slot_of(i)?;
        let g = *self.guide_slot.get(s)?;
        if g as usize == s || g >= VISITING {
            return None;
        }
        let a = *self.agent_of_slot.get(g as usize)?;
        (a != NONE && a as usize != i).then_some(a as usize)
    }

    /// Returns agent `i`'s bearing: eyes right when it has a guide (see [`Squad::guide`]), saluting
    /// while the squad salutes and it takes part.
    #[must_use]
    pub fn bearing(&self, i: usize) -> Bearing {
        Bearing {
            eyes: if self.guide(i).is_some() {
                Eyes::Right
            } else {
                Eyes::Front
            },
            gesture: if self.saluting && self.is_active(i) {
                Gesture::Saluting
            } else {
                Gesture::None
            },
        }
    }

    /// Resolves every slot's guide: its file-mate on the right through the spatial hash, then the
    /// end of each right-hand chain (memoised, a ring has none). O(N); allocates only when the
    /// slot count grows.
    fn compute_guides(&mut self) {
        let m = self.slots.len();
        self.right_of.clear();
        self.right_of.resize(m, NONE);
        self.guide_slot.clear();
        self.guide_slot.resize(m, NONE);
        if m == 0 {
            return;
        }
        let spacing = self.def.spacing;
        self.hash
            .rebuild(&self.slots, (spacing * 1.8).max(0.1), |_| true);
        let rel = self.anchor.facing_yaw - self.anchor.layout_yaw;
        for s in 0..m {
            let yaw = rel + self.slot_heading.get(s).copied().unwrap_or(0.0);
            let right = rotate(Vec2::X, yaw);
            let p = self.slots[s];
            let (mut best, mut best_score) = (NONE, f32::MAX);
            self.hash.for_each_near(p, |j| {
                if j != s {
                    if let Some(score) = right_neighbour_score(self.slots[j] - p, right, spacing) {
                        if score < best_score {
                            best_score = score;
                            best = j as u32;
                        }
                    }
                }
            });
            self.right_of[s] = best;
        }
        for s in 0..m {
            if self.guide_slot[s] != NONE {
                continue;
            }
            self.guide_stack.clear();
            let mut cur = s;
            let result = loop {
                match self.guide_slot[cur] {
                    VISITING => break NO_GUIDE,
                    NONE => {}
                    known => break known,
                }
                self.guide_slot[cur] = VISITING;
                self.guide_stack.push(cur as u32);
                match self.right_of[cur] {
                    NONE => break cur as u32,
                    next => cur = next as usize,
                }
            };
            for &k in &self.guide_stack {
                self.guide_slot[k as usize] = result;
            }
        }
    }

    // ----- agent I/O ------------------------------------------------------------------------

    /// Places agent `i` (teleport: position (x, z) m and yaw rad); its interpolation restarts there.
    /// Non-finite values and positions beyond [`MAX_COORDINATE`] are ignored.
    pub fn place(&mut self, i: usize, pos: Vec2, yaw: f32) {
        if i < self.n && usable(pos) && yaw.is_finite() {
            self.pos[i] = pos;
            self.prev_pos[i] = pos;
            self.heading[i] = wrap_angle(yaw);
            self.prev_heading[i] = self.heading[i];
            self.latency.break_track(i);
            let cols = self.delay_cols();
            for k in i * cols..(i + 1) * cols {
                if let Some(v) = self.delay_vel.get_mut(k) {
                    *v = Vec2::ZERO;
                }
                if let Some(w) = self.delay_omega.get_mut(k) {
                    *w = 0.0;
                }
            }
        }
    }

    /// Feeds agent `i`'s measured position (external agents, before each tick). Non-finite
    /// positions and those beyond [`MAX_COORDINATE`] are ignored (the last good one is kept).
    pub fn sense(&mut self, i: usize, pos: Vec2) {
        if i < self.n && usable(pos) {
            self.prev_pos[i] = self.pos[i];
            self.pos[i] = pos;
            self.latency.sensed(i);
        }
    }

    /// Returns agent `i`'s position (x, z) at the last tick.
    #[must_use]
    pub fn position(&self, i: usize) -> Vec2 {
        self.pos.get(i).copied().unwrap_or(Vec2::ZERO)
    }

    /// Returns agent `i`'s yaw (rad) at the last tick.
    #[must_use]
    pub fn heading(&self, i: usize) -> f32 {
        self.heading.get(i).copied().unwrap_or(0.0)
    }

    /// Returns agent `i`'s position and yaw interpolated between the last two ticks by the
    /// leftover time (for drawing between ticks).
    #[must_use]
    pub fn interpolated(&self, i: usize) -> (Vec2, f32) {
        if i >= self.n {
            return (Vec2::ZERO, 0.0);
        }
        let a = self.tick_fraction();
        blend_pose(
            (self.prev_pos[i], self.prev_heading[i]),
            (self.pos[i], self.heading[i]),
            a,
        )
    }

    /// Returns how far the leftover time has gone into the next tick, in [0, 1].
    #[inline]
    fn tick_fraction(&self) -> f32 {
        (self.accumulator / TICK).clamp(0.0, 1.0)
    }

    /// Calls `visit(i, position, yaw)` for every agent in order with what
    /// [`Squad::interpolated`] returns for it (the blend worked out once, not per agent).
    #[inline]
    pub fn for_each_interpolated(&self, mut visit: impl FnMut(usize, Vec2, f32)) {
        let a = self.tick_fraction();
        let n = self.n;
        let poses = self.prev_pos[..n].iter().zip(&self.pos[..n]);
        let yaws = self.prev_heading[..n].iter().zip(&self.heading[..n]);
        for (i, ((p0, p1), (h0, h1))) in poses.zip(yaws).enumerate() {
            let (p, h) = blend_pose((*p0, *h0), (*p1, *h1), a);
            visit(i, p, h);
        }
    }

    /// Returns agent `i`'s commanded velocity (x, z) in m/s (what external agents should move at).
    #[must_use]
    pub fn velocity(&self, i: usize) -> Vec2 {
        self.vel.get(i).copied().unwrap_or(Vec2::ZERO)
    }

    /// Returns agent `i`'s mean commanded velocity (x, z, m/s) over the ticks the last
    /// [`Squad::advance`] ran: what a body that moves once per physics frame should move at for
    /// that frame, so that it covers the squad's displacement whatever the physics rate (at 30 Hz
    /// the squad runs two 60 Hz ticks per frame; moving at the last one's command alone would
    /// drop the first's).
    #[must_use]
    pub fn frame_velocity(&self, i: usize) -> Vec2 {
        self.frame_vel.get(i).copied().unwrap_or(Vec2::ZERO)
    }

    /// Returns agent `i`'s commanded turn rate in rad/s.
    #[must_use]
    pub fn turn_rate(&self, i: usize) -> f32 {
        self.omega.get(i).copied().unwrap_or(0.0)
    }

    /// Returns agent `i`'s heading error: its yaw minus its slot's heading, wrapped to [−π, π];
    /// 0 for a dropped agent.
    #[must_use]
    pub fn heading_error(&self, i: usize) -> f32 {
        match self.slot_of(i) {
            Some(s) if self.is_active(i) => angle_difference(self.slot_yaw(s), self.heading(i)),
            _ => 0.0,
        }
    }

    /// Returns agent `i`'s state.
    #[must_use]
    pub fn state(&self, i: usize) -> AgentState {
        self.state.get(i).copied().unwrap_or_default()
    }

    /// Returns the slot index agent `i` holds, or `None` for a dropped agent.
    #[must_use]
    pub fn slot_of(&self, i: usize) -> Option<usize> {
        self.slot_of
            .get(i)
            .filter(|s| **s != NONE)
            .map(|s| *s as usize)
    }

    /// Returns slot `s`'s current position (x, z), m.
    #[must_use]
    pub fn slot_pos(&self, s: usize) -> Vec2 {
        let local = self.slots.get(s).copied().unwrap_or(Vec2::ZERO);
        self.anchor.pos + rotate(local, self.anchor.layout_yaw)
    }

    /// Returns slot `s`'s heading (yaw, rad).
    #[must_use]
    pub fn slot_yaw(&self, s: usize) -> f32 {
        let off = self.slot_heading.get(s).copied().unwrap_or(0.0);
        wrap_angle(self.anchor.facing_yaw + off)
    }

    /// Returns the number of slots.
    #[must_use]
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Returns the anchor.
    #[must_use]
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }

    /// Moves the anchor (e.g. to follow a leader node) to `pos` with the given layout and facing
    /// yaw, without starting a transition; slots move with it. Non-finite values and positions
    /// beyond [`MAX_COORDINATE`] are ignored.
    pub fn set_anchor(&mut self, pos: Vec2, layout_yaw: f32, facing_yaw: f32) {
        if usable(pos) && layout_yaw.is_finite() && facing_yaw.is_finite() {
            self.anchor.pos = pos;
            self.anchor.layout_yaw = wrap_angle(layout_yaw);
            self.anchor.facing_yaw = wrap_angle(facing_yaw);
        }
    }

    /// Returns the live metrics.
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Returns the metrics of a settle of the current command that happened since the last call
    /// (once per command; a new command drops an untaken settle of the previous one).
    pub fn take_settled(&mut self) -> Option<Metrics> {
        self.settled_pending.take()
    }

    /// Returns the squad's baseline (weighted PCA + weighted median over active agents, weighted by
    /// the slot each holds), or `None` with fewer than two agents.
    pub fn baseline(&mut self) -> Option<Baseline> {
        let m = self.slots.len();
        self.scratch_pos.clear();
        self.scratch_w.clear();
        // In slot order so clustering pools neighbours.
        for s in 0..m {
            let a = self.agent_of_slot[s];
            if a != NONE && self.active[a as usize] {
                self.scratch_pos.push(self.pos[a as usize]);
                self.scratch_w.push(slot_weight(s, m));
            }
        }
        self.fit.fit(&self.scratch_pos, &self.scratch_w)
    }

    /// Returns the baseline of the slots themselves (same weights), or `None`.
    pub fn slot_baseline(&mut self) -> Option<Baseline> {
        let m = self.slots.len();
        self.scratch_pos.clear();
        self.scratch_w.clear();
        for s in 0..m {
            let a = self.agent_of_slot[s];
            if a != NONE && self.active[a as usize] {
                self.scratch_pos.push(self.slot_pos(s));
                self.scratch_w.push(slot_weight(s, m));
            }
        }
        self.fit.fit(&self.scratch_pos, &self.scratch_w)
    }

    // ----- recording ------------------------------------------------------------------------

    /// Starts recording into a ring of `frames` frames (allocated here), or stops with 0. Returns
    /// the frames kept: fewer than asked when the ring would exceed the byte budget
    /// ([`super::record::frames_within_budget`]), 0 when stopped.
    pub fn set_recording(&mut self, frames: usize) -> usize {
        self.recorder = (frames > 0).then(|| Recorder::new(self.n, frames));
        self.recorder.as_ref().map_or(0, Recorder::capacity)
    }

    /// Returns the recorder, if recording.
    #[must_use]
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    /// Returns [`DEFAULT_FRAMES`].
    #[must_use]
    pub fn default_record_frames() -> usize {
        DEFAULT_FRAMES
    }

    // ----- stepping -------------------------------------------------------------------------

    /// Advances by `dt` seconds of game time, running as many fixed 60 Hz ticks as are due (at most
    /// [`MAX_CATCH_UP`]). Returns the number of ticks run. Non-finite or negative `dt` runs none.
    pub fn advance(&mut self, dt: f32) -> u32 {
        if !dt.is_finite() || dt <= 0.0 {
            return 0;
        }
        self.accumulator += dt;
        let mut ran = 0;
        self.frame_sum.fill(Vec2::ZERO);
        while self.accumulator >= TICK && ran < MAX_CATCH_UP {
            self.accumulator -= TICK;
            self.tick_once(true);
            ran += 1;
        }
        // A frame that ran no tick (physics faster than 60 Hz) keeps the last frame's command.
        if ran > 0 {
            let k = 1.0 / ran as f32;
            for (f, sum) in self.frame_vel.iter_mut().zip(&self.frame_sum) {
                *f = *sum * k;
            }
        }
        if ran == MAX_CATCH_UP && self.accumulator >= TICK {
            self.accumulator %= TICK;
        }
        ran
    }

    /// Runs exactly one fixed tick.
    pub fn step(&mut self) {
        self.tick_once(false);
    }

    /// Runs one fixed tick in one pass over the agents: each agent's control law, its actuation
    /// and its share of the metrics (its own motion touches no other agent's inputs in a tick: the
    /// soft walls read the predicted positions taken before the pass). With `sum_frame`, also adds
    /// each agent's command to `frame_sum` (what [`Squad::advance`] averages).
    fn tick_once(&mut self, sum_frame: bool) {
        let dt = TICK;
        self.advance_clock(dt);
        let (t, mut gains) = self.begin_tick(dt);
        let mut sums = MetricSums::default();
        for i in 0..self.n {
            self.tick_agent(i, &t, &mut gains, &mut sums, sum_frame);
        }
        if t.in_flight {
            self.delay_head = t.read_at;
        }
        self.update_metrics(&sums);
        self.record_tick();
    }

    /// Counts the tick, runs down the salute and moves the anchor.
    fn advance_clock(&mut self, dt: f32) {
        self.tick += 1;
        self.since_command += dt;
        if self.saluting && self.salute_left.is_finite() {
            self.salute_left -= dt;
            if self.salute_left <= 0.0 {
                self.end_salute();
            }
        }
        self.step_anchor(dt);
    }

    /// Sets up a tick: latencies, predicted positions, and what every agent shares in it.
    fn begin_tick(&mut self, dt: f32) -> (TickShared, Gains) {
        let cfg = self.cfg;
        let r = cfg.repulsion_radius;
        let repel = r > 0.0 && cfg.repulsion_strength > 0.0;
        self.measure_latencies(dt);
        let cols = self.delay_cols();
        let simulate = self.simulate;
        let in_flight = !simulate || self.delay_ticks > 0;
        let write_at = self.delay_head;
        let read_at = (self.delay_head + 1) % cols;
        self.wall_pairs = 0;
        if repel {
            self.predict_positions(dt, r, cols, in_flight);
        }
        let (lead_pos, blend, blend_yaw) = self.transition_blend();
        let slot_moving = self.anchor.vel.length_squared() > 1e-6
            || self.anchor.desired_vel.length_squared() > 1e-6
            || self.anchor.goal.is_some();
        let (gains, guide) = self.guided_gains();
        // What is the same for every agent this tick: the layout's rotation (`slot_pos`), and k₁
        // unless each agent has its own measured latency (`agent_latency`).
        let (sin_l, cos_l) = self.anchor.layout_yaw.sin_cos();
        let shared = TickShared {
            dt,
            tick: self.tick,
            cfg,
            r,
            repel,
            cols,
            simulate,
            in_flight,
            write_at,
            read_at,
            lead_pos,
            blend,
            blend_yaw,
            slot_moving,
            guide,
            anchor: self.anchor.pos,
            facing_yaw: self.anchor.facing_yaw,
            sin_l,
            cos_l,
            per_agent_k1: !simulate && cfg.measure_latency,
            shared_k1: (cfg.gains.k1 * cfg.latency_gains.k1_scale(cfg.latency)).max(guide),
            hold: HOLD_FRACTION * cfg.thresholds.stable,
        };
        (shared, gains)
    }

    /// Predicts where each agent will be once its commands in flight act, for the soft walls.
    fn predict_positions(&mut self, dt: f32, r: f32, cols: usize, in_flight: bool) {
        // Soft walls act between *predicted* positions, so that under latency two agents do not
        // keep pushing on where they were and oscillate.
        self.pred.clear();
        self.pred.extend_from_slice(&self.pos);
        if in_flight {
            let write_at = self.delay_head;
            for i in 0..self.n {
                let (v, _) = self.in_flight(i, cols, write_at);
                self.pred[i] += v * dt;
            }
        }
        let active = &self.active;
        self.hash.rebuild(&self.pred, r, |i| active[i]);
    }

    /// Returns the position lead and the transition's progress for the position and the heading.
    fn transition_blend(&self) -> (f32, f32, f32) {
        // The reference leads by the actuation latency: a command sent now acts `latency` from
        // now, so it aims at where the reference will be then, and the agent arrives when the
        // transition ends rather than `latency` later. External agents turn at once (their
        // heading is the squad's own), so only their position leads.
        let (lead_pos, lead_yaw) = self.leads();
        let (blend, blend_yaw) = if self.transition > 0.0 {
            (
                move_profile(self.since_command + lead_pos, self.transition),
                move_profile(self.since_command + lead_yaw, self.transition),
            )
        } else {
            (1.0, 1.0)
        };
        (lead_pos, blend, blend_yaw)
    }

    /// Returns this tick's gains and the transition's guidance gain.
    fn guided_gains(&self) -> (Gains, f32) {
        let cfg = &self.cfg;
        // During a transition the gain rises as the deadline nears (remaining-time guidance: the
        // reference's remaining fraction over its remaining time), so a disturbance early in the
        // move (a shove from a neighbour) is gone by arrival; after it, the seed's gains hold.
        // Each agent's own k₁ is first lowered for its latency (slow agents overshoot at full gain).
        let mut gains = cfg.gains;
        let u = if self.transition > 0.0 {
            self.since_command / self.transition
        } else {
            1.0
        };
        let mut guide = 0.0f32;
        if u < 1.0 {
            guide = (2.0 / (self.transition * (1.0 - u))).min(cfg.transition_gain_max);
            gains.k2 = gains.k2.max(guide);
        }
        (gains, guide)
    }

    /// One agent's share of the fused tick: its control law, its actuation and its metrics.
    #[inline(always)]
    fn tick_agent(
        &mut self,
        i: usize,
        t: &TickShared,
        gains: &mut Gains,
        sums: &mut MetricSums,
        sum_frame: bool,
    ) {
        if !self.active[i] {
            self.vel[i] = Vec2::ZERO;
            self.omega[i] = 0.0;
            if t.simulate {
                self.prev_pos[i] = self.pos[i];
                self.prev_heading[i] = self.heading[i];
            }
            if sum_frame {
                self.frame_sum[i] += self.vel[i];
            }
            return;
        }
        let s = self.slot_of.get(i).copied().unwrap_or(NONE);
        // The agent's slot (as `slot_pos` and `slot_yaw` give it), when it holds one.
        let mut seat = None;
        let (v, w) = if s == NONE {
            if t.simulate {
                self.prev_pos[i] = self.pos[i];
                self.prev_heading[i] = self.heading[i];
            }
            (Vec2::ZERO, 0.0)
        } else {
            let (v, w, at) = self.control_agent(i, s as usize, t, gains);
            seat = Some(at);
            (v, w)
        };
        self.vel[i] = v;
        self.omega[i] = w;
        self.actuate_agent(i, v, w, t);
        if let Some((slot, slot_yaw)) = seat {
            sums.add(
                self.state[i],
                slot.distance(self.pos[i]),
                angle_difference(slot_yaw, self.heading[i]),
            );
        }
        if sum_frame {
            self.frame_sum[i] += self.vel[i];
        }
    }

    /// Returns an agent's slot and its heading, and where its reference is on the way there.
    #[inline(always)]
    fn slot_reference(&self, i: usize, s: usize, t: &TickShared) -> (Vec2, f32, Vec2, f32) {
        let local = self.slots.get(s).copied().unwrap_or(Vec2::ZERO);
        let slot = t.anchor + rotate_by(local, t.sin_l, t.cos_l);
        let off = self.slot_heading.get(s).copied().unwrap_or(0.0);
        let slot_yaw = wrap_angle(t.facing_yaw + off);
        let blend = if t.simulate {
            t.blend
        } else if self.transition > 0.0 {
            move_profile(
                self.since_command + self.lead_of(i, t.lead_pos),
                self.transition,
            )
        } else {
            1.0
        };
        let target = t.anchor + self.start_rel[i].lerp(slot - t.anchor, blend);
        let start_heading = self.start_heading[i];
        let target_yaw =
            wrap_angle(start_heading + angle_difference(start_heading, slot_yaw) * t.blend_yaw);
        (slot, slot_yaw, target, target_yaw)
    }

    /// Runs an agent's control law toward slot `s`: its commands, and the slot and its heading.
    #[inline(always)]
    fn control_agent(
        &mut self,
        i: usize,
        s: usize,
        t: &TickShared,
        gains: &mut Gains,
    ) -> (Vec2, f32, (Vec2, f32)) {
        let (slot, slot_yaw, target, target_yaw) = self.slot_reference(i, s, t);
        let v_ff = (target - self.ref_prev[i]) / t.dt;
        let w_ff = angle_difference(self.ref_heading_prev[i], target_yaw) / t.dt;
        self.ref_prev[i] = target;
        self.ref_heading_prev[i] = target_yaw;
        // Smith predictor: compare the reference with where the agent will be once the
        // commands already sent (and not yet acted on) have played out, so that latency
        // neither makes it overshoot nor double-counts the feed-forward.
        let (pending_v, pending_w) = if t.in_flight {
            self.in_flight(i, t.cols, t.write_at)
        } else {
            (Vec2::ZERO, 0.0)
        };
        gains.k1 = if t.per_agent_k1 {
            (t.cfg.gains.k1 * t.cfg.latency_gains.k1_scale(self.agent_latency(i))).max(t.guide)
        } else {
            t.shared_k1
        };
        let (aim, aim_yaw) = (
            target - pending_v * t.dt,
            wrap_angle(target_yaw - pending_w * t.dt),
        );
        let p = self.pos[i];
        let heading = self.heading[i];
        let state = next_state(
            self.state[i],
            &mut self.counter[i],
            slot.distance(p),
            angle_difference(heading, slot_yaw),
            t.slot_moving,
            &t.cfg.thresholds,
        );
        self.state[i] = state;
        let mut v = position_command(
            state,
            aim - p,
            v_ff,
            &mut self.integral[i],
            gains,
            t.dt,
            t.cfg.max_speed,
            t.hold,
        );
        if t.repel {
            let p = self.pred[i];
            let salt = wall_salt(i, t.tick);
            let (push, seen) =
                soft_wall_push(&self.hash, i, p, t.r, t.cfg.repulsion_strength, salt);
            self.wall_pairs += seen as u64;
            v = (v + push.clamp_length_max(t.cfg.max_speed)).clamp_length_max(t.cfg.max_speed);
        }
        let w = turn_command(
            angle_difference(heading, aim_yaw),
            w_ff,
            gains,
            t.cfg.max_turn_rate,
        );
        (v, w, (slot, slot_yaw))
    }

    /// Acts on an agent's commands: moves a simulated agent, keeps an external one's for later.
    #[inline(always)]
    fn actuate_agent(&mut self, i: usize, v: Vec2, w: f32, t: &TickShared) {
        let base = i * t.cols;
        if t.simulate {
            let (v, w) = if self.delay_ticks > 0 {
                self.delay_vel[base + t.write_at] = v;
                self.delay_omega[base + t.write_at] = w;
                (
                    self.delay_vel[base + t.read_at],
                    self.delay_omega[base + t.read_at],
                )
            } else {
                (v, w)
            };
            self.prev_pos[i] = self.pos[i];
            self.prev_heading[i] = self.heading[i];
            let mut step = v * t.dt;
            if t.cfg.step_noise > 0.0 {
                step += Vec2::new(self.rng.gauss(), self.rng.gauss()) * t.cfg.step_noise;
            }
            let (pos, heading) = (self.pos[i] + step, self.heading[i] + w * t.dt);
            if usable(pos) && heading.is_finite() {
                self.pos[i] = pos;
                self.heading[i] = wrap_angle(heading);
            } else {
                // A command that overflowed (hostile input upstream): stay put, stop.
                self.vel[i] = Vec2::ZERO;
                self.omega[i] = 0.0;
            }
        } else {
            // External agents: their motion lags, their heading (set by the squad) does not,
            // so only velocities count as in flight for the predictor. The history is kept at
            // every candidate latency, for the predictor and the latency measurement.
            self.delay_vel[base + t.write_at] = v;
            self.delay_omega[base + t.write_at] = 0.0;
            self.prev_heading[i] = self.heading[i];
            self.heading[i] = wrap_angle(self.heading[i] + w * t.dt);
        }
    }

    /// Records the agents' positions, headings, speeds and states at this tick, when recording.
    fn record_tick(&mut self) {
        if let Some(rec) = self.recorder.as_mut() {
            let (pos, heading, state) = (&self.pos, &self.heading, &self.state);
            let vel = &self.vel;
            rec.push(self.tick, |i| Sample {
                pos: pos[i],
                heading: heading[i],
                speed: vel[i].length(),
                state: state[i],
            });
        }
    }

    fn step_anchor(&mut self, dt: f32) {
        let a = &mut self.anchor;
        if let Some(goal) = a.goal {
            let to = goal - a.pos;
            let d = to.length();
            if d < 0.005 {
                a.goal = None;
                a.desired_vel = Vec2::ZERO;
                a.vel = Vec2::ZERO;
                a.pos = goal;
            } else {
                let brake = (2.0 * self.cfg.anchor_acceleration * d).sqrt();
                a.desired_vel = to / d * a.goal_speed.min(brake);
            }
        }
        let v = move_towards_vec3(
            a.vel.extend(0.0),
            a.desired_vel.extend(0.0),
            self.cfg.anchor_acceleration * dt,
        );
        a.vel = Vec2::new(v.x, v.y);
        if let Some(goal) = a.goal {
            // Never step past the goal.
            let to = goal - a.pos;
            if a.vel.length() * dt >= to.length() {
                a.vel = to / dt;
            }
        }
        a.pos += a.vel * dt;
        if !a.pos.is_finite() || !a.vel.is_finite() {
            a.vel = Vec2::ZERO;
            a.desired_vel = Vec2::ZERO;
            a.goal = None;
            if !a.pos.is_finite() {
                a.pos = Vec2::ZERO;
            }
        }
    }

    /// Finishes the metrics from the agents' own shares (`sums`, summed in agent order during the
    /// tick's pass): the spacing clauses over the neighbouring pairs, then the settle.
    fn update_metrics(&mut self, sums: &MetricSums) {
        let mut m = Metrics {
            since_command: self.since_command,
            settle_time: self.metrics.settle_time,
            contract_met: self.metrics.contract_met,
            travel_time: self.transition,
            active: sums.active,
            states: sums.states,
            max_slot_error: sums.max_e,
            ..Metrics::default()
        };
        // Each slot's agent's position, NaN where no active agent holds it (a pair with a NaN end
        // is skipped: so would `max` skip its NaN error).
        let m_slots = self.slots.len();
        self.slot_agent_pos.clear();
        self.slot_agent_pos.extend((0..m_slots).map(|s| {
            match self.agent_of_slot.get(s).copied().unwrap_or(NONE) {
                a if a != NONE && self.active.get(a as usize) == Some(&true) => {
                    self.pos[a as usize]
                }
                _ => Vec2::NAN,
            }
        }));
        let at = &self.slot_agent_pos;
        let nearest = (&self.neighbour, &self.neighbour_nominal);
        let count = nearest.0.len().min(nearest.1.len());
        m.nearest_spacing_error = largest_spacing_error(at, count, m.nearest_spacing_error, |k| {
            (k, nearest.0[k] as usize, nearest.1[k])
        });
        let pairs = (&self.pairs, &self.pair_nominal);
        let count = pairs.0.len().min(pairs.1.len());
        m.spacing_error = largest_spacing_error(at, count, m.spacing_error, |k| {
            let (s, t) = pairs.0[k];
            (s as usize, t as usize, pairs.1[k])
        });
        if m.active > 0 {
            let n = m.active as f32;
            m.mean_slot_error = sums.sum_e / n;
            let mean = sums.sum_h / n;
            m.heading_std = (sums.sum_h2 / n - mean * mean).max(0.0).sqrt();
        }
        if !m.spacing_error.is_finite() {
            m.spacing_error = f32::MAX;
        }
        if !m.nearest_spacing_error.is_finite() {
            m.nearest_spacing_error = f32::MAX;
        }
        self.settle(&mut m);
        self.metrics = m;
    }

    /// Settles the command once the squad has arrived and held formed for the debounce ticks,
    /// and keeps the report true afterwards: `contract_met` holds only while the squad is formed.
    pub(super) fn settle(&mut self, m: &mut Metrics) {
        let cfg = &self.cfg;
        m.formed = m.spacing_error <= cfg.contract_spacing
            && m.heading_std <= cfg.contract_heading
            && m.max_slot_error <= cfg.thresholds.align;
        m.arrived = self.anchor.goal.is_none();
        if m.settle_time >= 0.0 {
            m.contract_met = self.settled_in_time && m.formed;
            return;
        }
        let within =
            m.formed && m.arrived && self.since_command >= self.transition.min(cfg.arrival_time);
        if !within {
            self.settle_counter = 0;
            return;
        }
        self.settle_counter = self.settle_counter.saturating_add(1);
        if self.settle_counter >= cfg.thresholds.frames {
            m.settle_time = self.since_command;
            self.settled_in_time = m.settle_time <= cfg.contract_settle;
            m.contract_met = self.settled_in_time;
            self.settled_pending = Some(*m);
        }
    }
}

/// What every agent's control law and actuation share in one tick.
struct TickShared {
    dt: f32,
    /// The tick's number (it moves the soft walls' window over a crowded block from tick to tick).
    tick: u64,
    cfg: SquadConfig,
    r: f32,
    repel: bool,
    cols: usize,
    simulate: bool,
    in_flight: bool,
    write_at: usize,
    read_at: usize,
    lead_pos: f32,
    blend: f32,
    blend_yaw: f32,
    slot_moving: bool,
    guide: f32,
    anchor: Vec2,
    facing_yaw: f32,
    sin_l: f32,
    cos_l: f32,
    per_agent_k1: bool,
    shared_k1: f32,
    hold: f32,
}

/// The agents' own shares of the metrics, summed in agent order over a tick's pass.
#[derive(Clone, Copy, Debug, Default)]
struct MetricSums {
    active: u32,
    states: [u32; 4],
    sum_e: f32,
    max_e: f32,
    sum_h: f32,
    sum_h2: f32,
}

impl MetricSums {
    /// Adds an agent in `state`, `e` m from its slot and `h` rad off its slot's heading.
    #[inline]
    fn add(&mut self, state: AgentState, e: f32, h: f32) {
        self.active += 1;
        self.states[state as usize] += 1;
        self.sum_e += e;
        self.max_e = self.max_e.max(e);
        self.sum_h += h;
        self.sum_h2 += h * h;
    }
}

/// Returns `v` rotated as [`rotate`] does by the yaw whose sine and cosine are `s` and `c`.
#[inline]
fn rotate_by(v: Vec2, s: f32, c: f32) -> Vec2 {
    Vec2::new(v.x * c + v.y * s, -v.x * s + v.y * c)
}

/// Returns the soft walls' push on agent `i` at `p`, and how many neighbours it examined.
///
/// The neighbours are the points hashed in `hash` (rebuilt over the predicted positions) in the
/// 2×2 block of cells around `p`: all of them when the block holds at most [`WALL_NEIGHBOURS`],
/// else a window of that many placed by `salt` ([`SpatialHash::for_each_point_near_capped`]).
/// Every one within `r` pushes `i` away at `strength · (1/d − 1/r)`, summed in the hash's order;
/// a window's sum is scaled by the block's count over the window's, so it estimates the whole
/// block's push. Two agents less than 0.1 mm apart are pushed apart along [`split_direction`], so
/// agents standing at one point leave it in different directions.
#[inline]
fn soft_wall_push(
    hash: &SpatialHash,
    i: usize,
    p: Vec2,
    r: f32,
    strength: f32,
    salt: u32,
) -> (Vec2, usize) {
    let mut push = Vec2::ZERO;
    let (seen, total) = hash.for_each_point_near_capped(p, WALL_NEIGHBOURS, salt, |j, q| {
        if j != i {
            let d = q.distance(p);
            if d < r {
                let away = if d > 1e-4 {
                    (p - q) / d
                } else {
                    split_direction(i, j)
                };
                push += away * strength * (1.0 / d.max(0.02) - 1.0 / r);
            }
        }
    });
    if seen > 0 && seen < total {
        push *= total as f32 / seen as f32;
    }
    (push, seen)
}

/// Returns the salt that places agent `i`'s soft-wall window at `tick` (see [`soft_wall_push`]):
/// the pair's bits mixed (splitmix64's finaliser), so the windows of agents and ticks are spread
/// evenly over a crowded block.
#[inline]
fn wall_salt(i: usize, tick: u64) -> u32 {
    let mut z = (tick << 32 ^ i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// Returns the direction in which agent `i` is pushed away from agent `j` standing at the same
/// point: a unit vector fixed by the pair (its angle spread almost evenly round the circle by a
/// hash of the pair), and the opposite one for `j`, so the two separate, and each agent of a pile
/// sums a different mix of directions and leaves it along its own.
#[inline]
fn split_direction(i: usize, j: usize) -> Vec2 {
    let (lo, hi) = (i.min(j) as u64, i.max(j) as u64);
    let mut z = (lo << 32 ^ hi).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    // An angle in ±π/4 as t = tan(angle / 2) (no trigonometry: a rational point of the unit
    // circle), then turned by a quarter turn picked by the top two bits, and reversed for the
    // pair's higher index (all without branches: the bits are random, no predictor guesses them).
    let t = ((z as u32 >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0) * 0.414_213_56;
    let d = Vec2::new(1.0 - t * t, 2.0 * t) / (1.0 + t * t);
    let q = QUARTER_TURNS[(z >> 62) as usize];
    let d = Vec2::new(q.x * d.x - q.y * d.y, q.y * d.x + q.x * d.y);
    d * if i < j { 1.0 } else { -1.0 }
}

/// The rotations by 0, 1, 2 and 3 quarter turns, as (cos, sin).
const QUARTER_TURNS: [Vec2; 4] = [
    Vec2::new(1.0, 0.0),
    Vec2::new(0.0, 1.0),
    Vec2::new(-1.0, 0.0),
    Vec2::new(0.0, -1.0),
];

/// Returns the largest spacing error `|‖at[s] − at[t]‖ − nominal|` over the `count` pairs
/// `pair(k) = (s, t, nominal)`, and `start`, as one running maximum over them gives it. A pair with
/// an end outside `at` or NaN there (a slot no active agent holds) has a NaN error, which `max`
/// skips. The pairs go four at a time, one to a lane, so the four square roots and maxima run side
/// by side in one vector register (a maximum does not depend on the order of its values, so this is
/// the same value as one running maximum).
#[inline]
fn largest_spacing_error(
    at: &[Vec2],
    count: usize,
    start: f32,
    pair: impl Fn(usize) -> (usize, usize, f32),
) -> f32 {
    let point = |i: usize| at.get(i).copied().unwrap_or(Vec2::NAN);
    let mut largest = [start; 4];
    let mut k = 0;
    while k + 4 <= count {
        let (mut dx, mut dy, mut nominal) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
        for lane in 0..4 {
            let (s, t, n) = pair(k + lane);
            let (a, b) = (point(s), point(t));
            dx[lane] = a.x - b.x;
            dy[lane] = a.y - b.y;
            nominal[lane] = n;
        }
        for lane in 0..4 {
            // `Vec2::distance`'s arithmetic: the square root of the difference's dot product.
            let e = ((dx[lane] * dx[lane] + dy[lane] * dy[lane]).sqrt() - nominal[lane]).abs();
            largest[lane] = largest[lane].max(e);
        }
        k += 4;
    }
    for k in k..count {
        let (s, t, n) = pair(k);
        let e = (point(s).distance(point(t)) - n).abs();
        largest[k & 3] = largest[k & 3].max(e);
    }
    max4(largest)
}

/// Returns the largest of four running maxima, as one running maximum over their values gives it.
#[inline]
fn max4(m: [f32; 4]) -> f32 {
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// Returns `true` when `p` is finite and within [`MAX_COORDINATE`].
fn usable(p: Vec2) -> bool {
    p.is_finite() && p.abs().max_element() <= MAX_COORDINATE
}

/// Seconds a long move takes to reach its cruising speed and to stop from it (see [`move_profile`]).
pub const MOVE_RAMP: f32 = 2.0;

/// Returns how far (0..=1) a move planned to take `total` s has gone `t` s after it began: a
/// smoothstep for moves of up to `3 × MOVE_RAMP` s; a longer move speeds up over [`MOVE_RAMP`] s
/// (acceleration rising and falling as a smoothstep's), cruises at `1 / (total − MOVE_RAMP)` of
/// its distance per second, and slows down the same way, so it peaks at the speed a smoothstep of
/// `1.5 × (total − MOVE_RAMP)` s would and arrives a third sooner on long moves.
#[must_use]
pub fn move_profile(t: f32, total: f32) -> f32 {
    if !total.is_finite() || total <= 0.0 {
        return 1.0;
    }
    if total <= 3.0 * MOVE_RAMP {
        return smoothstep(t / total);
    }
    let t = if t.is_finite() {
        t.clamp(0.0, total)
    } else {
        total
    };
    let cruise = 1.0 / (total - MOVE_RAMP);
    // Distance covered while the speed rises as a smoothstep over the ramp: ∫ smoothstep.
    let ramp = |u: f32| cruise * MOVE_RAMP * (u * u * u - 0.5 * u * u * u * u);
    if t < MOVE_RAMP {
        ramp(t / MOVE_RAMP)
    } else if t <= total - MOVE_RAMP {
        cruise * (0.5 * MOVE_RAMP + (t - MOVE_RAMP))
    } else {
        (1.0 - ramp((total - t) / MOVE_RAMP)).min(1.0)
    }
}

/// Returns the cubic smoothstep of `u` clamped to 0..=1.
#[must_use]
pub fn smoothstep(u: f32) -> f32 {
    let u = if u.is_finite() {
        u.clamp(0.0, 1.0)
    } else {
        1.0
    };
    u * u * (3.0 - 2.0 * u)
}

/// Returns the forward direction (x, z) of a yaw; see [`forward_of`].
#[must_use]
pub fn forward(yaw: f32) -> Vec2 {
    forward_of(yaw)
}

#[cfg(test)]
#[path = "squad_reference.rs"]
mod reference;

#[cfg(test)]
mod param_tests {
    use super::*;
    use crate::formation::SquadParam;
    use crate::kit::param::Correction;

    #[test]
    fn every_parameter_has_its_own_property() {
        for (i, a) in SquadParam::ALL.iter().enumerate() {
            for b in &SquadParam::ALL[i + 1..] {
                assert_ne!(a.property(), b.property());
            }
        }
    }

    #[test]
    fn a_correction_warns_in_the_inspector_units_and_stable_waits_for_align() {
        let mut got = Vec::new();
        let raw = SquadConfig {
            max_turn_rate: f32::NAN,
            ..SquadConfig::default()
        };
        let _ = raw.sanitized(|c| got.push(c));
        let c = got
            .iter()
            .find(|c| c.param == SquadParam::MaxTurnRate)
            .expect("NaN is corrected");
        let msg = c.warning();
        assert!(msg.starts_with("max_turn_rate must be in "), "{msg}");
        // Degrees in the message: the default turn rate is shown as degrees per second.
        let used = msg.rsplit("using ").next().unwrap().parse::<f32>().unwrap();
        assert!((used - SquadConfig::default().max_turn_rate.to_degrees()).abs() < 1e-3);
        let stable = Correction {
            param: SquadParam::Stable,
            got: 9.0,
            lo: 0.0,
            hi: 0.5,
            used: 0.5,
        };
        assert_eq!(
            stable.warning(),
            "stable_threshold must be in 0..=0.5 m (at most align_threshold) (got 9); using 0.5"
        );
        assert!(SquadParam::Stable.masked(|p| p == SquadParam::Align));
        assert!(!SquadParam::Stable.masked(|_| false));
        assert!(!SquadParam::K1.masked(|_| true));
    }

    #[test]
    fn advancing_splits_the_time_into_steps_of_at_most_eight_ticks() {
        let steps: Vec<f32> = advance_steps(0.3).collect();
        assert_eq!(steps.len(), 3);
        assert!(steps[..2].iter().all(|&s| s == ADVANCE_STEP));
        assert!((steps.iter().sum::<f32>() - 0.3).abs() < 1e-6);
        assert_eq!(advance_steps(f32::NAN).count(), 0);
        assert_eq!(advance_steps(-1.0).count(), 0);
        assert_eq!(advance_steps(0.0).count(), 0);
        let hour: f32 = advance_steps(1e9).sum();
        assert!(
            (hour - MAX_ADVANCE).abs() < 1.0,
            "capped at an hour: {hour}"
        );
    }
}
