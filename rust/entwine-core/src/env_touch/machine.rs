//! The Reset → Search → Approach → Rise → Touch state machine of a hand reaching for a wall.
//!
//! One [`EnvTouch`] per character. Each frame the game reports where the character is, where its
//! shoulders are, how it moves, the interactable colliders in its detection volume (each with its
//! closest point to the character's locked shoulder height, see [`EnvTouch::query_point`]) and the
//! surface normal a ray found; [`EnvTouch::step`] returns IK targets and weights for both hands.
//!
//! The states follow the seed:
//!
//! * **Reset** forgets the collider, blends the hand's IK weights to 0 and its target back to the
//!   rest pose; after [`TouchConfig::reset_duration`] *and* once the character moves, → Search.
//! * **Search** tracks one collider (the nearest; kept until it leaves or Reset, so a narrow corridor
//!   cannot flicker between sides) and picks the hand on the side of the nearer shoulder; within
//!   [`TouchConfig::approach_distance`] of the character, and within reach → Approach. Within reach:
//!   the shoulder is within [`TouchConfig::rise_distance`] of the contact, or walking straight on
//!   passes that close to it before Approach would give up, so a wall beside a corridor walk that
//!   the hand could never reach, or the far side of a bend, is not approached.
//! * **Approach** raises the weights toward [`TouchConfig::approach_weight`] /
//!   [`TouchConfig::approach_rotation_weight`] with the palm toward the ground at waist height; gives
//!   up after [`TouchConfig::approach_duration`]; within [`TouchConfig::rise_distance`] of the shoulder
//!   → Rise.
//! * **Rise** lifts the target to the contact point, weights to [`TouchConfig::rise_weight`], palm
//!   against the surface normal; after [`TouchConfig::touch_min_time`] with the target within
//!   [`TouchConfig::touch_distance`] of the contact → Touch.
//! * **Touch** rests the hand for [`TouchConfig::touch_duration`], then → Reset; with
//!   [`TouchConfig::persistent_touch`], for as long as the contact stays within
//!   [`TouchConfig::rise_distance`] of the shoulder (the hand slides along the wall, and on to the
//!   next collider on its side when that one comes nearer).
//!
//! Search, Approach, Rise and Touch also fall back to Reset on any of the four triggers (see
//! [`ResetReason`]): stopped, moving away, invalid angle, jumping; and when the tracked collider leaves.
//!
//! **Frame-rate independence.** The seed blends with `Lerp(x, target, elapsed / duration)` every frame,
//! which converges faster at higher frame rates. Here the same ramp is integrated in closed form:
//! over a step from state time `t0` to `t1`, `x` moves the fraction `1 − exp(−R (t1² − t0²) / 2D)`
//! toward the target (R = [`REFERENCE_RATE_HZ`], D the duration), which is what the seed does at 60 Hz
//! and gives the same curve at any rate. Timed transitions split the frame at the exact instant they
//! fire, so 30, 60 and 144 Hz follow the same timeline. Rotations turn at a fixed angular speed.
//!
//! Nothing here allocates or panics; non-finite input is ignored or replaced by a safe value.

use glam::{Affine3A, Quat, Vec3};

use crate::kit::Shape;

use super::config::{hand_frame, TouchConfig};

use crate::kit::pose::{rotate, unit_quat, unit_vec3};
use crate::kit::{exp_alpha, slerp_shortest, Pose};

/// The frame rate (Hz) at which the closed-form blends reproduce the seed's per-frame `Lerp`.
pub const REFERENCE_RATE_HZ: f32 = 60.0;

/// Below this horizontal speed (m/s) or input length, the character counts as stopped.
pub const STOPPED_EPSILON: f32 = 1e-3;

/// Time constant (s) with which the hand that is not in use lets go.
const IDLE_SIDE_RELEASE_TAU: f32 = 0.15;

/// Most state transitions taken in one step (guards zero-duration cycles).
const MAX_TRANSITIONS_PER_STEP: usize = 8;

/// Timed transitions within this many seconds of their instant count as due.
const TIME_EPSILON: f32 = 1e-5;

/// Most events recorded in one step.
pub const MAX_EVENTS: usize = 2 * MAX_TRANSITIONS_PER_STEP;

/// The five states of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TouchState {
    /// Letting go; waits for the reset delay and for movement.
    Reset,
    /// Tracking a collider, waiting until it is close enough.
    Search,
    /// The hand moves toward the collider at waist height, palm down.
    Approach,
    /// The hand rises onto the contact point, palm against the surface.
    Rise,
    /// The hand rests on the surface.
    Touch,
}

impl TouchState {
    /// All states, in graph order.
    pub const ALL: [Self; 5] = [
        Self::Reset,
        Self::Search,
        Self::Approach,
        Self::Rise,
        Self::Touch,
    ];

    /// Returns the state's index (Reset 0, Search 1, Approach 2, Rise 3, Touch 4).
    #[must_use]
    pub const fn index(self) -> i32 {
        self as i32
    }

    /// Returns the state's name as shown to users ("Reset", "Search", …).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Reset => "Reset",
            Self::Search => "Search",
            Self::Approach => "Approach",
            Self::Rise => "Rise",
            Self::Touch => "Touch",
        }
    }
}

/// A side of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The character's left (−X in its own frame).
    Left,
    /// The character's right (+X in its own frame).
    Right,
}

impl Side {
    /// Returns 0 for left, 1 for right.
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Returns the other side.
    #[must_use]
    pub const fn other(self) -> Self {
        match self {
            Self::Left => Self::Right,
            Self::Right => Self::Left,
        }
    }

    /// Returns "left" or "right".
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}

/// Why the machine last went to Reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResetReason {
    /// Not reset yet.
    None,
    /// Trigger 1: no movement (input, else velocity).
    Stopped,
    /// Trigger 2: the distance to the contact grew past the lowest seen plus the offset.
    MovingAway,
    /// Trigger 3: the contact is behind the shoulder's side.
    InvalidAngle,
    /// Trigger 4: moving up faster than the jump speed, or airborne.
    Jumping,
    /// The tracked collider left the detection volume.
    ColliderLost,
    /// Approach ran out of time.
    ApproachTimeout,
    /// The touch lasted its duration.
    TouchDone,
    /// The game asked for it ([`EnvTouch::reset`]).
    Forced,
}

impl ResetReason {
    /// Returns the reason's name ("stopped", "moving_away", …; "none" before any reset).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Stopped => "stopped",
            Self::MovingAway => "moving_away",
            Self::InvalidAngle => "invalid_angle",
            Self::Jumping => "jumping",
            Self::ColliderLost => "collider_lost",
            Self::ApproachTimeout => "approach_timeout",
            Self::TouchDone => "touch_done",
            Self::Forced => "forced",
        }
    }
}

/// An interactable collider in the detection volume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// A stable id for the collider (the glue uses Godot's instance id).
    pub id: u64,
    /// The collider's closest point (world, m) to [`EnvTouch::query_point`].
    pub closest_point: Vec3,
}

/// What the machine needs to know about one frame.
#[derive(Clone, Copy, Debug)]
pub struct TouchInput<'a> {
    /// Frame time (s). Non-positive or NaN holds the state (outputs are still refreshed).
    pub dt: f32,
    /// The character's world pose; its forward is −Z, its right +X.
    pub root: Pose,
    /// World positions of the left and right shoulder joints (upper-arm origins), m.
    pub shoulders: [Vec3; 2],
    /// The character's velocity (m/s, world).
    pub velocity: Vec3,
    /// The movement the player asks for (any length; only zero or not matters), when the game
    /// provides one; `None` falls back to `velocity` (which lags under root motion).
    pub move_input: Option<Vec3>,
    /// Whether the character stands on the ground.
    pub grounded: bool,
    /// Interactable colliders currently in the detection volume.
    pub candidates: &'a [Candidate],
    /// The surface normal (unit, world) a ray from the current shoulder toward the contact found.
    pub surface_normal: Option<Vec3>,
}

/// One hand's IK goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandTarget {
    /// Where the hand bone should be and how it should be turned (world).
    pub pose: Pose,
    /// How far the hand moves from its animated position to `pose.position`, in [0, 1].
    pub position_weight: f32,
    /// How far the hand turns from its animated rotation to `pose.rotation`, in [0, 1].
    pub rotation_weight: f32,
}

impl HandTarget {
    /// Returns whether the IK has anything to do (either weight above 10⁻⁴).
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.position_weight > 1e-4 || self.rotation_weight > 1e-4
    }
}

/// The velocity of a character that is not a physics body, from its positions frame to frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VelocityEstimate {
    last: Option<Vec3>,
}

impl VelocityEstimate {
    /// Returns the velocity (m/s) from the previous position to `position` over `dt` seconds, and
    /// remembers `position`; zero on the first call or for a non-positive `dt`.
    pub fn update(&mut self, position: Vec3, dt: f32) -> Vec3 {
        match self.last.replace(position) {
            Some(p) if dt > 0.0 => (position - p) / dt,
            _ => Vec3::ZERO,
        }
    }
}

/// Returns the closest point to the world point `p` over a collider's `shapes` (each with its
/// transform in the collider's space) placed in the world by `body`, as a [`Candidate`] with `id`;
/// `None` when no shape gives one.
#[must_use]
pub fn candidate(
    id: u64,
    body: &Affine3A,
    shapes: &[(Shape, Affine3A)],
    p: Vec3,
) -> Option<Candidate> {
    let mut best: Option<Vec3> = None;
    for (shape, local) in shapes {
        if let Some(q) = shape.closest_point(&(*body * *local), p) {
            if best.is_none_or(|b| q.distance_squared(p) < b.distance_squared(p)) {
                best = Some(q);
            }
        }
    }
    best.map(|closest_point| Candidate { id, closest_point })
}

/// Something that happened during a step, in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TouchEvent {
    /// The machine moved from one state to another.
    StateChanged {
        /// The state left.
        from: TouchState,
        /// The state entered.
        to: TouchState,
    },
    /// A hand started resting on a surface.
    TouchStarted {
        /// Which hand.
        side: Side,
        /// The contact point on the surface (world, m).
        point: Vec3,
        /// The surface normal there (unit, world).
        normal: Vec3,
    },
    /// A hand stopped resting on a surface.
    TouchEnded {
        /// Which hand.
        side: Side,
    },
}

#[derive(Clone, Copy, Debug)]
struct Hand {
    /// Target relative to the character's root.
    target: Pose,
    position_weight: f32,
    rotation_weight: f32,
}

/// The touch state machine for one character (see the module docs).
#[derive(Clone, Debug)]
pub struct EnvTouch {
    config: TouchConfig,
    /// `hand_frame(palm_axis, finger_axis)` per hand (left, right), conjugated: takes the hand's
    /// frame to the bone's axes.
    bone_from_frame: [Quat; 2],
    rest: [Pose; 2],
    state: TouchState,
    elapsed: f32,
    /// Time along the current blend ramp (continues from Rise into Touch).
    blend_time: f32,
    side: Side,
    tracked: Option<u64>,
    last_tracked: Option<u64>,
    closest: Option<Vec3>,
    normal: Option<Vec3>,
    /// The hand's target height above the root (m), the seed's `InteractionPoint_Y_Offset`.
    height: f32,
    lowest_distance: f32,
    lost_collider: bool,
    reset_reason: ResetReason,
    hands: [Hand; 2],
    outputs: [HandTarget; 2],
    root: Pose,
    events: [TouchEvent; MAX_EVENTS],
    event_count: usize,
}

impl Default for EnvTouch {
    fn default() -> Self {
        Self::new(TouchConfig::default(), [Pose::IDENTITY; 2])
    }
}

impl EnvTouch {
    /// Returns a machine in Reset with `config` (invalid fields replaced by defaults) and the hands'
    /// rest targets `rest` (left, right), relative to the character's root: where Reset returns them.
    #[must_use]
    pub fn new(config: TouchConfig, rest: [Pose; 2]) -> Self {
        let mut machine = Self {
            config: TouchConfig::default(),
            bone_from_frame: [Quat::IDENTITY; 2],
            rest: [Pose::IDENTITY; 2],
            state: TouchState::Reset,
            elapsed: 0.0,
            blend_time: 0.0,
            side: Side::Left,
            tracked: None,
            last_tracked: None,
            closest: None,
            normal: None,
            height: 0.0,
            lowest_distance: f32::INFINITY,
            lost_collider: false,
            reset_reason: ResetReason::None,
            hands: [Hand {
                target: Pose::IDENTITY,
                position_weight: 0.0,
                rotation_weight: 0.0,
            }; 2],
            outputs: [HandTarget {
                pose: Pose::IDENTITY,
                position_weight: 0.0,
                rotation_weight: 0.0,
            }; 2],
            root: Pose::IDENTITY,
            events: [TouchEvent::TouchEnded { side: Side::Left }; MAX_EVENTS],
            event_count: 0,
        };
        machine.set_config(config);
        machine.set_rest(rest);
        machine.height = machine.config.waist_height;
        for side in [Side::Left, Side::Right] {
            machine.hands[side.index()].target = machine.rest[side.index()];
        }
        machine
    }

    /// Replaces the configuration (invalid fields are replaced by their defaults; see
    /// [`TouchConfig::sanitized`] to report them). The current state carries on.
    pub fn set_config(&mut self, config: TouchConfig) {
        self.config = config.sanitized(|_| {});
        let c = &self.config;
        self.bone_from_frame = [
            (c.palm_axis, c.finger_axis),
            (c.right_palm_axis, c.right_finger_axis),
        ]
        .map(|(palm, finger)| {
            hand_frame(palm, finger)
                .unwrap_or(Quat::IDENTITY)
                .conjugate()
        });
    }

    /// Replaces the hands' rest targets (left, right; relative to the root). Non-finite poses are
    /// ignored.
    pub fn set_rest(&mut self, rest: [Pose; 2]) {
        for (slot, pose) in self.rest.iter_mut().zip(rest) {
            if pose.is_finite() {
                *slot = Pose::new(pose.position, unit_quat(pose.rotation));
            }
        }
    }

    /// Returns the configuration in use (already sanitized).
    #[must_use]
    pub const fn config(&self) -> &TouchConfig {
        &self.config
    }

    /// Returns the current state.
    #[must_use]
    pub const fn state(&self) -> TouchState {
        self.state
    }

    /// Returns how long (s) the machine has been in its current state.
    #[must_use]
    pub const fn state_time(&self) -> f32 {
        self.elapsed
    }

    /// Returns the side whose hand the machine drives (the last one chosen; left at first).
    #[must_use]
    pub const fn side(&self) -> Side {
        self.side
    }

    /// Returns the id of the tracked collider, if any.
    #[must_use]
    pub const fn tracked(&self) -> Option<u64> {
        self.tracked
    }

    /// Returns the tracked collider's closest point (world, m), if any.
    #[must_use]
    pub const fn closest_point(&self) -> Option<Vec3> {
        self.closest
    }

    /// Returns the last surface normal found for the tracked collider (unit, world), if any.
    #[must_use]
    pub const fn surface_normal(&self) -> Option<Vec3> {
        self.normal
    }

    /// Returns why the machine last entered Reset.
    #[must_use]
    pub const fn reset_reason(&self) -> ResetReason {
        self.reset_reason
    }

    /// Returns the IK goal of one hand after the last step.
    #[must_use]
    pub const fn hand(&self, side: Side) -> HandTarget {
        self.outputs[side.index()]
    }

    /// Returns the events of the last step, in order.
    #[must_use]
    pub fn events(&self) -> &[TouchEvent] {
        &self.events[..self.event_count]
    }

    /// Returns the world point from which colliders' closest points are measured: the root's
    /// position raised to the locked shoulder height.
    #[must_use]
    pub fn query_point(&self, root: Pose) -> Vec3 {
        root.position + Vec3::Y * self.config.shoulder_height
    }

    /// Returns whether the glue should cast the surface-normal ray this frame (a collider is tracked
    /// and the hand may turn toward it). The ray goes from the current side's shoulder toward
    /// [`EnvTouch::closest_point`], [`TouchConfig::normal_ray_length`] long.
    #[must_use]
    pub fn wants_surface_normal(&self) -> bool {
        self.closest.is_some()
            && matches!(
                self.state,
                TouchState::Search | TouchState::Approach | TouchState::Rise | TouchState::Touch
            )
    }

    /// Returns whether this frame needs the world (colliders, the shoulders' animated pose, the
    /// normal ray): not while Reset still has more than `dt` to wait, since it ignores them until
    /// its delay is nearly over (a glue then skips its physics queries and skeleton reads).
    #[must_use]
    pub fn needs_world(&self, dt: f32) -> bool {
        !(self.state == TouchState::Reset && self.elapsed + dt < self.config.reset_duration)
    }

    /// Returns the surface-normal ray to cast this frame, `(from, to)` in world metres, or `None`
    /// when none is wanted (see [`EnvTouch::wants_surface_normal`]): from the current side's
    /// shoulder toward the tracked collider's point among `candidates` (else the last contact),
    /// [`TouchConfig::normal_ray_length`] long.
    #[must_use]
    pub fn normal_ray(
        &self,
        shoulders: [Vec3; 2],
        candidates: &[Candidate],
    ) -> Option<(Vec3, Vec3)> {
        if !self.wants_surface_normal() {
            return None;
        }
        let from = shoulders[self.side.index()];
        let target = self
            .tracked
            .and_then(|id| candidates.iter().find(|c| c.id == id))
            .map(|c| c.closest_point)
            .or(self.closest)?;
        let dir = (target - from).try_normalize()?;
        Some((from, from + dir * self.config.normal_ray_length))
    }

    /// Returns where the hand would rest on the tracked surface (world, m): the contact point moved
    /// [`TouchConfig::surface_offset`] toward `shoulder`. `None` without a contact.
    #[must_use]
    pub fn surface_target(&self, shoulder: Vec3) -> Option<Vec3> {
        let closest = self.closest?;
        let dir = (shoulder - closest)
            .try_normalize()
            .or(self.normal)
            .unwrap_or(Vec3::ZERO);
        Some(closest + dir * self.config.surface_offset)
    }

    /// Forces the machine into Reset now (e.g. on teleport), with reason `reason`.
    /// Its events replace the last step's in [`EnvTouch::events`].
    pub fn reset(&mut self, reason: ResetReason) {
        self.event_count = 0;
        if self.state != TouchState::Reset {
            self.reset_reason = reason;
            self.transition(TouchState::Reset);
        }
    }

    /// Advances the machine by `input.dt` and returns both hands' IK goals (left, right).
    ///
    /// Non-finite root or shoulder positions skip the step (the previous goals are kept); a
    /// non-finite velocity counts as zero, a non-finite move input or normal as absent, and
    /// candidates with non-finite points are ignored.
    pub fn step(&mut self, input: &TouchInput<'_>) -> [HandTarget; 2] {
        self.event_count = 0;
        if !input.root.is_finite() || !input.shoulders.iter().all(|s| s.is_finite()) {
            return self.outputs;
        }
        let root = Pose::new(input.root.position, unit_quat(input.root.rotation));
        let frame = Frame {
            root,
            shoulders: input.shoulders,
            velocity: if input.velocity.is_finite() {
                input.velocity
            } else {
                Vec3::ZERO
            },
            move_input: input.move_input.filter(|m| m.is_finite()),
            grounded: input.grounded,
        };
        if let Some(n) = input.surface_normal.and_then(unit_vec3) {
            self.normal = Some(n);
        }
        self.root = root;
        self.track(&frame, input.candidates);

        let dt = if input.dt.is_finite() {
            input.dt.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let mut remaining = dt;
        let mut transitions = 0;
        loop {
            if transitions < MAX_TRANSITIONS_PER_STEP {
                if let Some(next) = self.next_state(&frame) {
                    self.transition(next);
                    transitions += 1;
                    if next == TouchState::Search {
                        // Pick a collider at the instant Search begins, not a frame later.
                        self.track(&frame, input.candidates);
                    }
                    continue;
                }
            }
            if remaining <= 0.0 {
                break;
            }
            let until_event = self.time_to_event();
            let step = if until_event > TIME_EPSILON && transitions < MAX_TRANSITIONS_PER_STEP {
                remaining.min(until_event)
            } else {
                remaining
            };
            self.update(&frame, step);
            remaining -= step;
            if remaining <= TIME_EPSILON * 0.01 {
                remaining = 0.0;
            }
        }
        for side in [Side::Left, Side::Right] {
            let hand = &self.hands[side.index()];
            self.outputs[side.index()] = HandTarget {
                pose: root.compose(hand.target),
                position_weight: hand.position_weight,
                rotation_weight: hand.rotation_weight,
            };
        }
        self.outputs
    }

    /// Follows the tracked collider, or picks one in Search.
    fn track(&mut self, frame: &Frame, candidates: &[Candidate]) {
        if let Some(id) = self.tracked {
            match candidates
                .iter()
                .find(|c| c.id == id && c.closest_point.is_finite())
            {
                Some(c) => self.closest = Some(c.closest_point),
                None => {
                    self.tracked = None;
                    self.closest = None;
                    if matches!(
                        self.state,
                        TouchState::Approach | TouchState::Rise | TouchState::Touch
                    ) {
                        self.lost_collider = true;
                    }
                }
            }
        }
        if self.holds_on() {
            self.hand_over(frame, candidates);
        }
        if self.tracked.is_some() || self.state != TouchState::Search {
            return;
        }
        let query = self.query_point(frame.root);
        let distance = |c: &Candidate| query.distance(c.closest_point);
        let nearest = candidates
            .iter()
            .filter(|c| c.closest_point.is_finite())
            .min_by(|a, b| distance(a).total_cmp(&distance(b)));
        let Some(nearest) = nearest else {
            return;
        };
        let [left, right] = frame.shoulders;
        let side_of = |p: Vec3| {
            if p.distance(left) < p.distance(right) {
                Side::Left
            } else {
                Side::Right
            }
        };
        let margin = distance(nearest) + self.config.side_switch_margin;
        let usable = |c: &&Candidate| c.closest_point.is_finite() && distance(c) <= margin;
        // Within the margin, the collider tracked before, else the nearest one on the side used
        // before (the next wall of a bending corridor), keeps the hand on its side.
        let sticky = self.last_tracked.and_then(|id| {
            let same = candidates.iter().filter(usable).find(|c| c.id == id);
            same.or_else(|| {
                candidates
                    .iter()
                    .filter(usable)
                    .filter(|c| side_of(c.closest_point) == self.side)
                    .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            })
        });
        let chosen = *sticky.unwrap_or(nearest);
        self.tracked = Some(chosen.id);
        self.last_tracked = Some(chosen.id);
        self.closest = Some(chosen.closest_point);
        self.normal = None;
        self.lowest_distance = f32::INFINITY;
        self.side = side_of(chosen.closest_point);
    }

    /// Returns the state to move to now, if any (the seed's `GetNextState`).
    fn next_state(&mut self, frame: &Frame) -> Option<TouchState> {
        let c = self.config;
        let shoulder = frame.shoulders[self.side.index()];
        match self.state {
            TouchState::Reset => (self.elapsed >= c.reset_duration - TIME_EPSILON
                && frame.is_moving())
            .then_some(TouchState::Search),
            TouchState::Search => {
                if self.check_should_reset(frame) {
                    return Some(TouchState::Reset);
                }
                let closest = self.closest?;
                (closest.distance(frame.root.position) < c.approach_distance
                    && self.within_reach(frame, closest))
                .then_some(TouchState::Approach)
            }
            TouchState::Approach => {
                if self.elapsed >= c.approach_duration - TIME_EPSILON {
                    self.note_reset(ResetReason::ApproachTimeout);
                    return Some(TouchState::Reset);
                }
                if self.check_should_reset(frame) {
                    return Some(TouchState::Reset);
                }
                let closest = self.closest?;
                (closest.distance(shoulder) < c.rise_distance).then_some(TouchState::Rise)
            }
            TouchState::Rise => {
                if self.check_should_reset(frame) {
                    return Some(TouchState::Reset);
                }
                let goal = self.surface_target(shoulder)?;
                let target = frame
                    .root
                    .transform_point(self.hands[self.side.index()].target.position);
                (self.elapsed >= c.touch_min_time - TIME_EPSILON
                    && target.distance(goal) < c.touch_distance)
                    .then_some(TouchState::Touch)
            }
            TouchState::Touch => {
                let done = if c.persistent_touch {
                    self.closest
                        .is_none_or(|p| p.distance(shoulder) >= c.rise_distance)
                } else {
                    self.elapsed >= c.touch_duration - TIME_EPSILON
                };
                if done {
                    self.note_reset(ResetReason::TouchDone);
                    return Some(TouchState::Reset);
                }
                self.check_should_reset(frame).then_some(TouchState::Reset)
            }
        }
    }

    /// Whether the hand can reach `contact` on the character's way: the tracked side's shoulder is
    /// within [`TouchConfig::rise_distance`] of it now, or walking straight on as it does passes
    /// that close to it before Approach would give up ([`TouchConfig::approach_duration`]).
    fn within_reach(&self, frame: &Frame, contact: Vec3) -> bool {
        let c = &self.config;
        let to_contact = contact - frame.shoulders[self.side.index()];
        if to_contact.length() < c.rise_distance {
            return true;
        }
        let velocity = Vec3::new(frame.velocity.x, 0.0, frame.velocity.z);
        let Some(way) = velocity.try_normalize() else {
            return false;
        };
        let ahead = to_contact.dot(way);
        ahead > 0.0
            && (to_contact - way * ahead).length() < c.rise_distance
            && ahead <= velocity.length() * c.approach_duration
    }

    /// During a persistent touch, moves the hand on to the next collider on its side when that one
    /// is nearer the shoulder than the one touched (the next wall piece, the next railing): the
    /// touch goes on along walls made of several colliders.
    fn hand_over(&mut self, frame: &Frame, candidates: &[Candidate]) {
        let shoulder = frame.shoulders[self.side.index()];
        let other = frame.shoulders[self.side.other().index()];
        let held = self.closest.map_or(f32::INFINITY, |p| p.distance(shoulder));
        let next = candidates
            .iter()
            .filter(|c| Some(c.id) != self.tracked && c.closest_point.is_finite())
            .filter(|c| c.closest_point.distance(shoulder) < c.closest_point.distance(other))
            .min_by(|a, b| {
                let d = |c: &Candidate| c.closest_point.distance(shoulder);
                d(a).total_cmp(&d(b))
            });
        if let Some(next) = next.filter(|c| c.closest_point.distance(shoulder) < held) {
            self.tracked = Some(next.id);
            self.last_tracked = Some(next.id);
            self.closest = Some(next.closest_point);
            self.lost_collider = false;
        }
    }

    /// Whether a persistent touch holds on: it ends when the wall leaves the hand's reach, not on
    /// the few millimetres a walk along the wall sways away from it.
    fn holds_on(&self) -> bool {
        self.config.persistent_touch && self.state == TouchState::Touch
    }

    /// Returns whether any reset trigger fired (the seed's `CheckShouldReset`), noting the reason.
    fn check_should_reset(&mut self, frame: &Frame) -> bool {
        let reason = if std::mem::take(&mut self.lost_collider) {
            Some(ResetReason::ColliderLost)
        } else if !frame.is_moving() {
            Some(ResetReason::Stopped)
        } else if !self.holds_on() && self.is_moving_away(frame) {
            Some(ResetReason::MovingAway)
        } else if self.is_invalid_angle(frame) {
            Some(ResetReason::InvalidAngle)
        } else if frame.velocity.y >= self.config.jump_speed || !frame.grounded {
            Some(ResetReason::Jumping)
        } else {
            None
        };
        match reason {
            Some(reason) => {
                self.note_reset(reason);
                true
            }
            None => false,
        }
    }

    /// Records why the touch resets and forgets the lowest distance to the contact, so that the
    /// moving-away trigger starts afresh.
    fn note_reset(&mut self, reason: ResetReason) {
        self.reset_reason = reason;
        self.lowest_distance = f32::INFINITY;
    }

    /// Trigger 2: the root's distance to the contact grew past its lowest value plus the offset.
    fn is_moving_away(&mut self, frame: &Frame) -> bool {
        let (Some(_), Some(closest)) = (self.tracked, self.closest) else {
            return false;
        };
        let distance = frame.root.position.distance(closest);
        if distance <= self.lowest_distance {
            self.lowest_distance = distance;
            return false;
        }
        if distance > self.lowest_distance + self.config.moving_away_offset {
            self.lowest_distance = f32::INFINITY;
            return true;
        }
        false
    }

    /// Trigger 3: the contact lies behind the plane through the shoulder facing the hand's side.
    fn is_invalid_angle(&self, frame: &Frame) -> bool {
        let (Some(_), Some(closest)) = (self.tracked, self.closest) else {
            return false;
        };
        let shoulder = frame.shoulders[self.side.index()];
        let Some(to_target) = (closest - shoulder).try_normalize() else {
            return false;
        };
        let right = rotate(frame.root.rotation, Vec3::X);
        let outward = match self.side {
            Side::Right => right,
            Side::Left => -right,
        };
        outward.dot(to_target) < 0.0
    }

    /// Returns the time (s) until the current state's next timed transition, or infinity.
    fn time_to_event(&self) -> f32 {
        let c = &self.config;
        let due = match self.state {
            TouchState::Reset => c.reset_duration,
            TouchState::Approach => c.approach_duration,
            TouchState::Rise => c.touch_min_time,
            TouchState::Touch if c.persistent_touch => return f32::INFINITY,
            TouchState::Touch => c.touch_duration,
            TouchState::Search => return f32::INFINITY,
        };
        let left = due - self.elapsed;
        if left > 0.0 {
            left
        } else {
            f32::INFINITY
        }
    }

    fn transition(&mut self, to: TouchState) {
        let from = self.state;
        if from == TouchState::Touch {
            self.push(TouchEvent::TouchEnded { side: self.side });
        }
        self.push(TouchEvent::StateChanged { from, to });
        self.state = to;
        self.elapsed = 0.0;
        if !(from == TouchState::Rise && to == TouchState::Touch) {
            self.blend_time = 0.0;
        }
        match to {
            TouchState::Reset => {
                self.tracked = None;
                self.closest = None;
                self.lost_collider = false;
                self.lowest_distance = f32::INFINITY;
            }
            TouchState::Touch => {
                if let Some(point) = self.closest {
                    let normal = self
                        .normal
                        .or_else(|| unit_vec3(self.query_point(self.root) - point))
                        .unwrap_or(Vec3::Y);
                    self.push(TouchEvent::TouchStarted {
                        side: self.side,
                        point,
                        normal,
                    });
                }
            }
            _ => {}
        }
    }

    fn push(&mut self, event: TouchEvent) {
        if self.event_count < MAX_EVENTS {
            self.events[self.event_count] = event;
            self.event_count += 1;
        }
    }

    /// Runs the current state's per-frame behaviour for `dt` seconds (the seed's `UpdateState`).
    fn update(&mut self, frame: &Frame, dt: f32) {
        let c = self.config;
        let (t0, t1) = (self.blend_time, self.blend_time + dt);
        let side = self.side.index();
        let shoulder = frame.shoulders[side];
        match self.state {
            TouchState::Reset => {
                let a = ramp_alpha(t0, t1, c.reset_blend_duration);
                self.height = lerp(self.height, c.waist_height, a);
                let rest = self.rest[side];
                let hand = &mut self.hands[side];
                hand.position_weight = lerp(hand.position_weight, 0.0, a);
                hand.rotation_weight = lerp(hand.rotation_weight, 0.0, a);
                hand.target.position = hand.target.position.lerp(rest.position, a);
                hand.target.rotation = rotate_towards(
                    hand.target.rotation,
                    rest.rotation,
                    c.reset_rotation_speed * dt,
                );
            }
            TouchState::Search => self.follow_surface(frame),
            TouchState::Approach => {
                let a = ramp_alpha(t0, t1, c.approach_blend_duration);
                let forward = rotate(frame.root.rotation, Vec3::NEG_Z);
                let goal = self.hand_rotation(Vec3::NEG_Y, forward);
                self.turn_hand(frame, goal, c.approach_rotation_speed * dt);
                let hand = &mut self.hands[side];
                hand.position_weight = lerp(hand.position_weight, c.approach_weight, a);
                hand.rotation_weight = lerp(hand.rotation_weight, c.approach_rotation_weight, a);
                self.follow_surface(frame);
            }
            TouchState::Rise | TouchState::Touch => {
                let a = ramp_alpha(t0, t1, c.rise_blend_duration);
                if let Some(goal) = self.surface_target(shoulder) {
                    self.height = lerp(self.height, goal.y - frame.root.position.y, a);
                }
                let hand = &mut self.hands[side];
                hand.position_weight = lerp(hand.position_weight, c.rise_weight, a);
                hand.rotation_weight = lerp(hand.rotation_weight, c.rise_weight, a);
                if let Some(normal) = self.normal {
                    let goal = self.hand_rotation(-normal, Vec3::Y);
                    self.turn_hand(frame, goal, c.rise_rotation_speed * dt);
                }
                self.follow_surface(frame);
            }
        }
        // The hand not in use lets go.
        let other = &mut self.hands[self.side.other().index()];
        let release = exp_alpha(dt, IDLE_SIDE_RELEASE_TAU);
        other.position_weight = lerp(other.position_weight, 0.0, release);
        other.rotation_weight = lerp(other.rotation_weight, 0.0, release);
        self.elapsed += dt;
        self.blend_time = t1;
    }

    /// Moves the current hand's target onto the surface at the current height (the seed's
    /// `SetIkTargetPosition`).
    fn follow_surface(&mut self, frame: &Frame) {
        let shoulder = frame.shoulders[self.side.index()];
        let Some(goal) = self.surface_target(shoulder) else {
            return;
        };
        let world = Vec3::new(goal.x, frame.root.position.y + self.height, goal.z);
        let local = frame.root.inverse_transform_point(world);
        if local.is_finite() {
            self.hands[self.side.index()].target.position = local;
        }
    }

    /// Turns the current hand's target toward the world rotation `goal` by at most `max_angle` rad.
    fn turn_hand(&mut self, frame: &Frame, goal: Quat, max_angle: f32) {
        let hand = &mut self.hands[self.side.index()];
        let world = unit_quat(frame.root.rotation * unit_quat(hand.target.rotation));
        let turned = rotate_towards(world, goal, max_angle);
        hand.target.rotation = unit_quat(frame.root.rotation.conjugate() * turned);
    }

    /// Returns the hand bone's world rotation with its palm along `palm` and fingers toward `finger`.
    fn hand_rotation(&self, palm: Vec3, finger: Vec3) -> Quat {
        let frame = hand_frame(palm, finger)
            .or_else(|| hand_frame(palm, rotate(self.root.rotation, Vec3::NEG_Z)))
            .or_else(|| hand_frame(palm, Vec3::X))
            .unwrap_or(Quat::IDENTITY);
        unit_quat(frame * self.bone_from_frame[self.side.index()])
    }
}

/// The per-frame facts the states read, already vetted.
struct Frame {
    root: Pose,
    shoulders: [Vec3; 2],
    velocity: Vec3,
    move_input: Option<Vec3>,
    grounded: bool,
}

impl Frame {
    /// Returns whether the character moves: its input when the game gives one, else its horizontal
    /// velocity (the seed found velocity alone lags behind the player under root motion).
    fn is_moving(&self) -> bool {
        match self.move_input {
            Some(m) => Vec3::new(m.x, 0.0, m.z).length() > STOPPED_EPSILON,
            None => Vec3::new(self.velocity.x, 0.0, self.velocity.z).length() > STOPPED_EPSILON,
        }
    }
}

/// Returns `from` turned toward `to` by at most `max_angle` radians (Unity's `RotateTowards`).
fn rotate_towards(from: Quat, to: Quat, max_angle: f32) -> Quat {
    let (from, to) = (unit_quat(from), unit_quat(to));
    let cos_half = from.dot(to).abs().min(1.0);
    let angle = 2.0 * cos_half.acos();
    let max_angle = if max_angle.is_nan() {
        0.0
    } else {
        max_angle.max(0.0)
    };
    if angle.is_nan() || angle <= 1e-6 || max_angle >= angle {
        return to;
    }
    slerp_shortest(from, to, max_angle / angle)
}

/// Returns the fraction of the remaining distance the seed's ramp `Lerp(x, target, t / duration)`,
/// taken every frame at [`REFERENCE_RATE_HZ`], covers between state times `t0` and `t1` (s), in closed
/// form: `1 − exp(−R (t1² − t0²) / 2D)`, and 1 once `t1` reaches the duration.
#[must_use]
pub fn ramp_alpha(t0: f32, t1: f32, duration: f32) -> f32 {
    if duration.is_nan() || duration <= 0.0 || t1 >= duration {
        return 1.0;
    }
    let exponent = REFERENCE_RATE_HZ * (t1 * t1 - t0 * t0) / (2.0 * duration);
    if exponent.is_nan() || exponent <= 0.0 {
        return 0.0;
    }
    -(-exponent).exp_m1()
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

#[cfg(test)]
mod tests;
