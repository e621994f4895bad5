//! A Verlet rope: points with position and previous position, gravity, damping, distance-constraint
//! iterations, a ground clamp, colliders, cutting, tearing and smooth length changes.
//!
//! # Model
//!
//! Points `0..n` are stored as structs of arrays in buffers of a fixed capacity (default 32) that are
//! allocated once; `n` is the active count. Point 0 is pinned to the anchor (a hand bone or a node),
//! the last point is free, pinned to an end anchor, or attached to a body of finite mass. Segment `j`
//! joins points `j` and `j + 1`; every segment rests at `segment_length` except segment 0 (at the
//! anchor), whose rest length `head_rest` is in `(0, segment_length]`: the rope pays out and reels in
//! at the hand, so [`Rope::set_target_length`] grows or shrinks it smoothly by changing `head_rest` and
//! inserting or removing point 1, without allocating.
//!
//! # One step (fixed `dt`, split into `substeps`)
//!
//! 1. Length: move the current length toward the target at `length_speed`.
//! 2. Anchor: point 0 is placed on the anchor, linearly from the previous sample to this step's sample
//!    across substeps (the anchor is sampled once at the start of each physics step, the seed's
//!    one-frame lag).
//! 3. Verlet: `v = (pos − prev) · damping; prev = pos; pos += v + g·h²`.
//! 4. `iterations` times: one relaxed Newton step on every distance constraint together, solved
//!    exactly along the chain (a tridiagonal system solved by the Thomas algorithm); then every free point is
//!    pushed out of the ground plane and the solid colliders (out of a box through the face on the
//!    side it came from), and every segment, as a capsule of the rope's radius, out of the solid
//!    colliders (so a rope over a thin wall's edge never cuts through it between two points).
//! 5. Tearing: a segment longer than `tear_ratio` × rest splits the rope there.
//! 6. Strain limit (free end only, a safety net): walking from the anchor, no segment stays longer
//!    than `1 + stretch_limit` times its rest length; then one more push-out.
//! 7. Continuous collision: each free point's path from where it started the substep to where it ends
//!    is sphere-traced against the solid colliders; a crossing stops the point at the first contact
//!    and keeps the motion along the surface (collide and slide). This is what keeps the rope from
//!    tunnelling through thin walls at 12 m/s.
//! 8. Cutters: each cutter is swept back along its [`Motion`] (the path it took since the last step,
//!    a turn swept as a turn however large) over the substep and met by the rope interpolated across
//!    it; the earliest touch splits the rope at that segment, where it touched. The loose part of a
//!    split keeps simulating, fades over `fade_time` and disappears.
//!
//! The number of substeps is at least `substeps`, and more while the rope is so taut for its segment
//! length that its sideways waves would cross more than a segment per substep (see
//! [`Rope::substeps_in_use`]).
//!
//! Everything is `f32` and follows one fixed order of operations, so the same inputs give the same
//! bits (see [`record`]).

pub mod batch;
pub mod chain;
pub mod gather;
mod lanes;
pub mod presets;
pub mod record;
pub mod tube;
pub mod world;

use glam::Vec3;

pub use chain::{BoneChain, ChainError, ChainFit};
pub use presets::{PresetTable, RopePreset};
pub use record::{AnchorSample, Recorder, Recording, Replayer, MAX_RECORD_STEPS};
pub use tube::{Tube, MAX_SIDES, MAX_SUBDIVISIONS, MIN_SIDES, MIN_SUBDIVISIONS};
pub use world::{Collider, Motion, Shape, World};

/// Default number of point slots allocated per rope.
pub const DEFAULT_CAPACITY: usize = 32;
/// Smallest capacity accepted (points per rope: a rope has two ends).
pub const MIN_CAPACITY: usize = 2;
/// Largest capacity accepted (points per rope).
pub const MAX_CAPACITY: usize = 1024;
/// Shortest accepted segment length, in metres.
pub const MIN_SEGMENT_LENGTH: f32 = 0.01;
/// Longest accepted segment length, in metres.
pub const MAX_SEGMENT_LENGTH: f32 = 10.0;
/// Most constraint iterations accepted per step.
pub const MAX_ITERATIONS: u32 = 64;
/// Most substeps accepted per step.
pub const MAX_SUBSTEPS: u32 = 16;
/// A point never moves faster than this (m/s); a safety net against runaway input.
pub const MAX_POINT_SPEED: f32 = 200.0;
/// Longest step accepted, in seconds (a longer `dt` is clamped: a hitch must not explode the rope).
pub const MAX_STEP: f32 = 0.1;
/// Fewest seconds a rope must stay still (every point within `sleep_distance` of where it was,
/// nothing around it changing) before it falls asleep; a rope longer than 1 m waits half its swing,
/// `π √(L / g)`, so that a swing wider than `sleep_distance` always moves a point that far.
pub const SLEEP_TIME: f32 = 1.0;

/// The rope's tunable parameters. Defaults are the seed's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeParams {
    /// Rest length of one segment, in metres (seed: 0.3; range [`MIN_SEGMENT_LENGTH`], [`MAX_SEGMENT_LENGTH`]).
    pub segment_length: f32,
    /// Fraction of velocity kept per step, in (0, 1] (seed: 0.99).
    pub damping: f32,
    /// Distance-constraint iterations per substep, 1..=[`MAX_ITERATIONS`] (seed: 4).
    pub iterations: u32,
    /// Substeps per step, 1..=[`MAX_SUBSTEPS`] (1).
    pub substeps: u32,
    /// Gravity acceleration, m/s² (Godot's default `(0, −9.8, 0)`).
    pub gravity: Vec3,
    /// Thickness of the rope for collisions, in metres (≥ 0).
    pub radius: f32,
    /// Whether points are kept above `ground_height` (the seed's ground clamp).
    pub ground_enabled: bool,
    /// Height of the ground plane, metres.
    pub ground_height: f32,
    /// Fraction of the sliding velocity removed at a contact, in [0, 1].
    pub friction: f32,
    /// A segment longer than `tear_ratio` × its rest length tears; 0 disables tearing, else > 1.
    pub tear_ratio: f32,
    /// Strain limit: after the iterations no segment may be longer than `1 + stretch_limit` times its
    /// rest length (the limiter walks from the anchor, Provot-style); 0 turns it off. In [0, 1]
    /// (0.03 = 3 %). Tearing is judged before the limit applies.
    pub stretch_limit: f32,
    /// How fast the length follows the target, in m/s (> 0).
    pub length_speed: f32,
    /// Mass of one point, in kg (> 0); sets the tension and the pull on an attached body.
    pub point_mass: f32,
    /// Seconds a cut-off piece takes to fade out (≥ 0).
    pub fade_time: f32,
    /// A rope none of whose points strays farther than this (metres) for [`SLEEP_TIME`] (or half its
    /// swing), with its anchor, its end and its colliders unchanged, falls asleep: it is not stepped
    /// again until one of them changes or it is woken (see [`Rope::is_sleeping`]). A swing it can
    /// sleep through is at most half this wide. 0 keeps it awake; in [0, 1].
    pub sleep_distance: f32,
}

impl Default for RopeParams {
    fn default() -> Self {
        use ParamIssue as P;
        let d = |p: ParamIssue| p.spec().default;
        Self {
            segment_length: d(P::SegmentLength),
            damping: d(P::Damping),
            iterations: d(P::Iterations) as u32,
            substeps: d(P::Substeps) as u32,
            gravity: Vec3::new(0.0, -9.8, 0.0),
            radius: d(P::Radius),
            ground_enabled: true,
            ground_height: d(P::GroundHeight),
            friction: d(P::Friction),
            tear_ratio: d(P::TearRatio),
            stretch_limit: d(P::StretchLimit),
            length_speed: d(P::LengthSpeed),
            point_mass: d(P::PointMass),
            fade_time: d(P::FadeTime),
            sleep_distance: d(P::SleepDistance),
        }
    }
}

/// A parameter that [`RopeParams::sanitized`] had to correct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamIssue {
    /// `segment_length` was not in range.
    SegmentLength,
    /// `damping` was not in (0, 1].
    Damping,
    /// `iterations` was 0 or too many.
    Iterations,
    /// `substeps` was 0 or too many.
    Substeps,
    /// `gravity` was not finite.
    Gravity,
    /// `radius` was negative or not finite.
    Radius,
    /// `ground_height` was not finite or beyond ±[`MAX_COORDINATE`] (clamped; NaN: the default).
    GroundHeight,
    /// `friction` was not in [0, 1].
    Friction,
    /// `tear_ratio` was not 0 and not > 1.
    TearRatio,
    /// `stretch_limit` was not in [0, 1].
    StretchLimit,
    /// `length_speed` was not > 0.
    LengthSpeed,
    /// `point_mass` was not > 0.
    PointMass,
    /// `fade_time` was negative or not finite.
    FadeTime,
    /// `sleep_distance` was not in [0, 1].
    SleepDistance,
}

use crate::kit::param::{Param, Unit as U};

/// The table, in [`ParamIssue`]'s order (gravity, a vector, has none).
#[rustfmt::skip]
const SPECS: [Param; 14] = [
    Param::new("segment_length", U::Metres, (MIN_SEGMENT_LENGTH, MAX_SEGMENT_LENGTH), 0.3, "rest length of one segment"),
    // Damping 0 would freeze the rope; the smallest accepted value is a tiny positive one.
    Param::new("damping", U::Number, (1e-3, 1.0), 0.99, "fraction of velocity kept per step"),
    Param::new("iterations", U::Count, (1.0, MAX_ITERATIONS as f32), 4.0, "distance-constraint iterations per substep"),
    Param::new("substeps", U::Count, (1.0, MAX_SUBSTEPS as f32), 1.0, "substeps per physics step"),
    Param::new("gravity", U::Number, (0.0, 0.0), 0.0, "(a vector: no table entry)"),
    Param::new("radius", U::Metres, (0.0, 1.0), 0.03, "thickness for collisions"),
    Param::new("ground_height", U::Metres, (-MAX_COORDINATE, MAX_COORDINATE), 0.0, "height of the ground plane (with ground_enabled)"),
    Param::new("friction", U::Number, (0.0, 1.0), 0.3, "fraction of the sliding velocity removed at a contact"),
    Param::new("tear_ratio", U::Number, (0.0, 100.0), 0.0, "a segment longer than this × its rest length tears (0: never; else above 1.01)"),
    Param::new("stretch_limit", U::Number, (0.0, 1.0), 0.03, "no segment ends longer than 1 + this × its rest length (0: off)"),
    Param::new("length_speed", U::MetresPerSecond, (1e-3, 1000.0), 2.0, "how fast the length follows set_length()").with_slider(100.0),
    Param::new("point_mass", U::Kilograms, (1e-4, 1000.0), 0.05, "mass of one point: sets the tension and the pull on a body").with_slider(100.0),
    Param::new("fade_time", U::Seconds, (0.0, 60.0), 1.5, "how long a cut-off piece takes to fade out"),
    Param::new("sleep_distance", U::Metres, (0.0, 1.0), 0.001, "a rope that moves less than this for a while falls asleep (0: never)").with_slider(0.01),
];

/// The smallest tear ratio other than 0 (off).
pub const MIN_TEAR_RATIO: f32 = 1.01;

/// Gravity's multiplier (the project's gravity times this).
#[rustfmt::skip]
pub const GRAVITY_SCALE: Param = Param::new("gravity_scale", U::Number, (-10.0, 10.0), 1.0, "multiplies the project's gravity");
/// How many points the rope has.
#[rustfmt::skip]
pub const POINT_COUNT: Param = Param::new("point_count", U::Count, (MIN_CAPACITY as f32, MAX_CAPACITY as f32), 12.0, "points of the rope (grows its capacity when needed)");
/// How many points are allocated.
#[rustfmt::skip]
pub const CAPACITY: Param = Param::new("capacity", U::Count, (MIN_CAPACITY as f32, MAX_CAPACITY as f32), DEFAULT_CAPACITY as f32, "points allocated (the rope grows up to this without allocating)");
/// Sides of the drawn tube.
#[rustfmt::skip]
pub const TUBE_SIDES: Param = Param::new("tube_sides", U::Count, (MIN_SIDES as f32, MAX_SIDES as f32), 8.0, "sides of the drawn tube");
/// Rings drawn per segment.
#[rustfmt::skip]
pub const SMOOTHING: Param = Param::new("smoothing", U::Count, (MIN_SUBDIVISIONS as f32, MAX_SUBDIVISIONS as f32), 3.0, "rings drawn per segment (a smooth curve through the points)");

/// Every tunable number of a `RopeSimulation`, in the inspector's order, for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    use ParamIssue as P;
    let mut all = vec![POINT_COUNT, CAPACITY];
    all.extend(
        [
            P::SegmentLength,
            P::LengthSpeed,
            P::Damping,
            P::Iterations,
            P::Substeps,
        ]
        .map(ParamIssue::spec),
    );
    all.push(GRAVITY_SCALE);
    all.extend(
        [
            P::StretchLimit,
            P::PointMass,
            P::SleepDistance,
            P::GroundHeight,
            P::Radius,
            P::Friction,
            P::TearRatio,
            P::FadeTime,
        ]
        .map(ParamIssue::spec),
    );
    all.extend([TUBE_SIDES, SMOOTHING]);
    all
}

impl ParamIssue {
    /// The parameter's table entry (name, unit, range, default, description). Gravity is a
    /// vector, with a placeholder entry.
    #[must_use]
    pub const fn spec(self) -> Param {
        SPECS[self as usize]
    }

    /// Returns the parameter's name and its accepted values in words, for a warning.
    #[must_use]
    pub fn describe(self) -> (&'static str, String) {
        let spec = self.spec();
        let accepted = match self {
            Self::Gravity => "a finite vector".into(),
            Self::TearRatio => format!("0 (off) or {MIN_TEAR_RATIO} to {}", spec.max),
            _ => spec.accepted(),
        };
        (spec.name, accepted)
    }
}

/// Returns `x` clamped into `[lo, hi]`, or `fallback` when `x` is NaN, and whether it changed.
fn fix(x: f32, lo: f32, hi: f32, fallback: f32) -> (f32, bool) {
    if x.is_nan() {
        (fallback, true)
    } else if x < lo || x > hi {
        (x.clamp(lo, hi), true)
    } else {
        (x, false)
    }
}

impl RopeParams {
    /// Returns the parameters with every out-of-range value clamped (NaN → the default), and calls
    /// `issue` once for each parameter that was corrected.
    #[must_use]
    pub fn sanitized(self, mut issue: impl FnMut(ParamIssue)) -> Self {
        let mut p = self;
        p.clamp_ranged(&mut issue);
        p.fix_unranged(&mut issue);
        p
    }

    /// Clamps the parameters that have a range (lengths, damping, friction, masses, times), each
    /// into its table range (NaN: the default).
    fn clamp_ranged(&mut self, issue: &mut impl FnMut(ParamIssue)) {
        use ParamIssue as P;
        let p = self;
        for (which, value) in [
            (P::SegmentLength, &mut p.segment_length),
            (P::Damping, &mut p.damping),
            (P::Radius, &mut p.radius),
            (P::Friction, &mut p.friction),
            (P::StretchLimit, &mut p.stretch_limit),
            (P::LengthSpeed, &mut p.length_speed),
            (P::PointMass, &mut p.point_mass),
            (P::FadeTime, &mut p.fade_time),
            (P::SleepDistance, &mut p.sleep_distance),
        ] {
            let spec = which.spec();
            let (v, bad) = fix(*value, spec.min, spec.max, spec.default);
            *value = v;
            if bad {
                issue(which);
            }
        }
    }

    /// Fixes the ground height, tear ratio, gravity, iteration and substep counts.
    fn fix_unranged(&mut self, issue: &mut impl FnMut(ParamIssue)) {
        let d = Self::default();
        let p = self;
        let ground = ParamIssue::GroundHeight.spec();
        if p.ground_height.is_nan() || p.ground_height.abs() > ground.max {
            p.ground_height = if p.ground_height.is_nan() {
                d.ground_height
            } else {
                p.ground_height.clamp(ground.min, ground.max)
            };
            issue(ParamIssue::GroundHeight);
        }
        if p.tear_ratio != 0.0 {
            let tear = ParamIssue::TearRatio.spec();
            let (v, bad) = fix(p.tear_ratio, MIN_TEAR_RATIO, tear.max, tear.default);
            p.tear_ratio = v;
            if bad {
                issue(ParamIssue::TearRatio);
            }
        }
        if !p.gravity.is_finite() {
            p.gravity = d.gravity;
            issue(ParamIssue::Gravity);
        }
        if p.iterations == 0 || p.iterations > MAX_ITERATIONS {
            p.iterations = p.iterations.clamp(1, MAX_ITERATIONS);
            issue(ParamIssue::Iterations);
        }
        if p.substeps == 0 || p.substeps > MAX_SUBSTEPS {
            p.substeps = p.substeps.clamp(1, MAX_SUBSTEPS);
            issue(ParamIssue::Substeps);
        }
    }
}

/// What the far end of the rope is attached to for one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndAttachment {
    /// Nothing: the end hangs free.
    Free,
    /// Pinned to a point that moves with a node (world position, metres).
    Pinned(Vec3),
    /// Attached to a body the rope pulls on: its position (m), velocity (m/s) and mass (kg). The rope
    /// computes the force it exerts; the caller applies it (see [`Rope::tension`]).
    Body {
        /// The body's attachment point, world metres.
        position: Vec3,
        /// The body's velocity, m/s.
        velocity: Vec3,
        /// The body's mass, kg.
        mass: f32,
    },
}

/// Why a rope was split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutReason {
    /// A call to [`Rope::cut_at`].
    Manual,
    /// A cutter collider's path crossed a segment, or [`Rope::cut_along`] did.
    Cutter,
    /// A segment stretched past the tear ratio.
    Torn,
}

/// A split of the rope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    /// The segment that was cut: points `0..=index` stay attached, the rest fall away.
    pub index: usize,
    /// Where the cut happened, world metres: the point of the segment a cutter touched (or
    /// [`Rope::cut_along`]'s capsule met), else the segment's midpoint.
    pub position: Vec3,
    /// Why.
    pub reason: CutReason,
}

/// What happened during one [`Rope::step`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepEvents {
    /// The rope was split this step.
    pub cut: Option<Cut>,
    /// The loose piece from an earlier cut finished fading this step.
    pub loose_faded: bool,
    /// The rope fell asleep at the end of this step, or woke at its start (see
    /// [`Rope::is_sleeping`]).
    pub sleep_changed: bool,
    /// The anchor sample was not finite and was ignored (the rope kept the previous one).
    pub anchor_ignored: bool,
    /// The end attachment was not finite and was ignored (the end hung free this step).
    pub end_ignored: bool,
    /// The current length reached the target this step.
    pub length_reached: bool,
}

/// A piece cut off the rope: free at both ends, fading out.
#[derive(Clone, Debug, Default)]
struct Loose {
    pos: Vec<Vec3>,
    prev: Vec<Vec3>,
    start: Vec<Vec3>,
    render_from: Vec<Vec3>,
    active: usize,
    age: f32,
}

/// A Verlet rope with preallocated point buffers. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Rope {
    params: RopeParams,
    capacity: usize,
    active: usize,
    pos: Vec<Vec3>,
    prev: Vec<Vec3>,
    /// Positions at the start of the current substep (continuous collision).
    start: Vec<Vec3>,
    /// Positions at the start of the last step (render interpolation).
    render_from: Vec<Vec3>,
    head_rest: f32,
    length: f32,
    target_length: f32,
    anchor: Vec3,
    end_pinned: Option<Vec3>,
    tension: Vec3,
    loose: Loose,
    chain: ChainScratch,
    /// Substeps the stiffness of the last steps asks for (see [`Rope::substeps_in_use`]).
    stable_substeps: u32,
    /// Steps in a row that asked for fewer substeps than `stable_substeps`.
    calm_steps: u32,
    /// Whether the rope sleeps, and for how long it has been still.
    rest: Rest,
    /// Where the points were when the rope was last found still (see [`Rope::come_to_rest`]).
    rest_from: Vec<Vec3>,
}

/// How a rope comes to rest (see [`RopeParams::sleep_distance`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Rest {
    /// Not stepped until its inputs change or it is woken.
    asleep: bool,
    /// Seconds it has been still, its inputs unchanged.
    still: f32,
    /// The fingerprint of the last step's inputs (see [`Rope::inputs_key`]).
    inputs: u64,
}

impl Rope {
    /// Returns a rope of `point_count` points (clamped to `2..=capacity`) hanging straight from `anchor`
    /// along `direction` (any non-zero vector; down when zero or not finite), with `capacity` point
    /// slots (clamped to `MIN_CAPACITY..=MAX_CAPACITY`) allocated once. `params` are sanitized.
    #[must_use]
    pub fn new(
        capacity: usize,
        point_count: usize,
        params: RopeParams,
        anchor: Vec3,
        direction: Vec3,
    ) -> Self {
        let capacity = capacity.clamp(MIN_CAPACITY, MAX_CAPACITY);
        let params = params.sanitized(|_| {});
        let buf = || vec![Vec3::ZERO; capacity];
        let mut rope = Self {
            params,
            capacity,
            active: 0,
            pos: buf(),
            prev: buf(),
            start: buf(),
            render_from: buf(),
            head_rest: 0.0,
            length: 0.0,
            target_length: 0.0,
            anchor: Vec3::ZERO,
            end_pinned: None,
            tension: Vec3::ZERO,
            loose: Loose {
                pos: buf(),
                prev: buf(),
                start: buf(),
                render_from: buf(),
                active: 0,
                age: 0.0,
            },
            chain: ChainScratch::new(capacity),
            stable_substeps: 1,
            calm_steps: 0,
            rest: Rest::default(),
            rest_from: buf(),
        };
        let length = (point_count.clamp(2, capacity) - 1) as f32 * params.segment_length;
        rope.reset(anchor, direction, length);
        rope
    }

    /// Lays the rope out straight and at rest from `anchor` along `direction` with `length` metres
    /// (clamped to what the capacity holds); drops any loose piece. Non-finite input falls back to the
    /// origin, straight down and the current length.
    pub fn reset(&mut self, anchor: Vec3, direction: Vec3, length: f32) {
        self.rest = Rest::default();
        let anchor = if usable(anchor) { anchor } else { Vec3::ZERO };
        let dir = direction
            .try_normalize()
            .filter(|d| d.is_finite())
            .unwrap_or(Vec3::NEG_Y);
        let length = if length.is_finite() {
            length
        } else {
            self.length
        };
        let length = length.clamp(0.0, self.max_length());
        self.anchor = anchor;
        self.length = length;
        self.target_length = length;
        let (n, head) = self.layout(length);
        self.active = n;
        self.head_rest = head;
        // Lay the points along `dir`; where that would go under the ground, fold along the ground
        // (horizontally, along `dir`'s horizontal part or +X) instead.
        let floor = self.params.ground_height + self.params.radius;
        let flat = Vec3::new(dir.x, 0.0, dir.z)
            .try_normalize()
            .unwrap_or(Vec3::X);
        let mut p = anchor;
        for i in 0..n {
            if i > 0 {
                let step = if i == 1 {
                    head
                } else {
                    self.params.segment_length
                };
                let next = p + dir * step;
                p = if self.params.ground_enabled && next.y < floor {
                    // Down to the ground, then along it, keeping the segment its length.
                    let drop = (p.y - floor).clamp(0.0, step);
                    Vec3::new(p.x, floor, p.z) + flat * (step * step - drop * drop).sqrt()
                } else {
                    next
                };
            }
            self.pos[i] = p;
            self.prev[i] = p;
            self.start[i] = p;
            self.render_from[i] = p;
        }
        self.end_pinned = None;
        self.tension = Vec3::ZERO;
        self.loose.active = 0;
        self.stable_substeps = 1;
        self.calm_steps = 0;
    }

    /// Returns the active point count and head rest length that give `length` metres.
    fn layout(&self, length: f32) -> (usize, f32) {
        let s = self.params.segment_length;
        if length <= 0.0 {
            return (1, 0.0);
        }
        let segments = ((length / s) - 1e-4).ceil().max(1.0) as usize;
        let segments = segments.min(self.capacity - 1);
        let head = (length - (segments - 1) as f32 * s).clamp(0.0, s);
        (segments + 1, head)
    }

    /// Returns the parameters in use.
    #[must_use]
    pub fn params(&self) -> &RopeParams {
        &self.params
    }

    /// Replaces the parameters (sanitized; `issue` hears each corrected one). A new segment length
    /// keeps the number of segments (the length scales with it) and re-lays the points along the
    /// current shape without adding velocity, so it never kicks the rope.
    pub fn set_params(&mut self, params: RopeParams, issue: impl FnMut(ParamIssue)) {
        let params = params.sanitized(issue);
        let old_s = self.params.segment_length;
        if params != self.params {
            self.wake();
        }
        self.params = params;
        if params.segment_length != old_s {
            // The rope keeps its number of segments: a longer segment makes a longer rope (the seed
            // scales the segments with the character).
            let scale = params.segment_length / old_s;
            self.length = (self.length * scale).min(self.max_length());
            self.target_length = (self.target_length * scale).min(self.max_length());
            self.relayout();
        }
    }

    /// Returns the point capacity (slots allocated).
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Returns the number of active points (1 when the rope was cut at the anchor).
    #[must_use]
    pub fn point_count(&self) -> usize {
        self.active
    }

    /// Returns the longest rope the capacity holds at the current segment length, in metres.
    #[must_use]
    pub fn max_length(&self) -> f32 {
        (self.capacity - 1) as f32 * self.params.segment_length
    }

    /// Returns the current rest length of the rope, in metres.
    #[must_use]
    pub fn length(&self) -> f32 {
        self.length
    }

    /// Returns the length the rope is growing or shrinking toward, in metres.
    #[must_use]
    pub fn target_length(&self) -> f32 {
        self.target_length
    }

    /// Sets the length (metres) the rope grows or shrinks toward at `length_speed`, clamped to
    /// `0..=max_length()`; returns `false` (and changes nothing) when `length` is not finite.
    pub fn set_target_length(&mut self, length: f32) -> bool {
        if !length.is_finite() {
            return false;
        }
        let target = length.clamp(0.0, self.max_length());
        if target != self.target_length {
            self.wake();
        }
        self.target_length = target;
        true
    }

    /// Returns whether the rope sleeps: it has been still for [`SLEEP_TIME`] with nothing around it
    /// changing (see [`RopeParams::sleep_distance`]), and [`Rope::step`] leaves it as it is until its
    /// anchor, its end or its colliders change, or it is woken.
    #[must_use]
    pub fn is_sleeping(&self) -> bool {
        self.rest.asleep
    }

    /// Wakes the rope (its next step moves it) and starts its still time again; returns whether it
    /// slept.
    pub fn wake(&mut self) -> bool {
        let slept = self.rest.asleep;
        self.rest.asleep = false;
        self.rest.still = 0.0;
        slept
    }

    /// Puts the rope to sleep now, where it is (drawn there from now on); returns whether it was
    /// awake. It wakes as [`Rope::is_sleeping`] says.
    pub fn sleep(&mut self) -> bool {
        let was_awake = !self.rest.asleep;
        self.rest.asleep = true;
        self.render_from[..self.active].copy_from_slice(&self.pos[..self.active]);
        self.loose.render_from[..self.loose.active]
            .copy_from_slice(&self.loose.pos[..self.loose.active]);
        was_awake
    }

    /// Returns a fingerprint of a step's inputs: the anchor, the end attachment, the colliders (see
    /// [`World::fingerprint`]) and the target length; equal inputs give equal fingerprints.
    fn inputs_key(&self, anchor: Vec3, end: EndAttachment, world: &World) -> u64 {
        let mut h = world.fingerprint();
        let mut add = |x: f32| h = world::mix(h, x.to_bits());
        for x in anchor.to_array() {
            add(x);
        }
        add(self.target_length);
        match end {
            EndAttachment::Free => add(0.0),
            EndAttachment::Pinned(to) => {
                add(1.0);
                for x in to.to_array() {
                    add(x);
                }
            }
            // A body end is never still for long (the rope pulls on it): it keeps the rope awake.
            EndAttachment::Body { .. } => add(f32::NAN),
        }
        h
    }

    /// Returns the active points' positions (world metres) after the last step.
    #[must_use]
    pub fn points(&self) -> &[Vec3] {
        &self.pos[..self.active]
    }

    /// Returns the anchor sample the last step ended on.
    #[must_use]
    pub fn anchor(&self) -> Vec3 {
        self.anchor
    }

    /// Returns the rest length of segment `j` in metres (0 past the end).
    #[must_use]
    pub fn rest_length(&self, j: usize) -> f32 {
        if j >= self.active.saturating_sub(1) {
            0.0
        } else if j == 0 {
            self.head_rest
        } else {
            self.params.segment_length
        }
    }

    /// Writes the active points interpolated between the last two steps (`alpha` 0 = previous step,
    /// 1 = last step; clamped) into `out` and returns how many were written (at most `out.len()`).
    pub fn interpolated(&self, alpha: f32, out: &mut [Vec3]) -> usize {
        let a = crate::kit::saturate(alpha);
        let n = self.active.min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = self.render_from[i].lerp(self.pos[i], a);
        }
        n
    }

    /// Returns the force (newtons, world) the rope exerts on its end attachment during the last step:
    /// zero for a free end. For a pinned end it is estimated from the last constraint's correction
    /// (`point_mass · Σcorrection / h²`); for a body it is exactly the force that gives the body the
    /// rope-end's motion on top of gravity — apply it to the body as a central force.
    #[must_use]
    pub fn tension(&self) -> Vec3 {
        self.tension
    }

    /// Returns the largest segment stretch, as a fraction of the nominal segment length:
    /// `max_j (|p_{j+1} − p_j| − rest_j) / segment_length` (0 when fully relaxed or slack).
    #[must_use]
    pub fn max_stretch(&self) -> f32 {
        let s = self.params.segment_length;
        (0..self.active.saturating_sub(1))
            .map(|j| ((self.pos[j + 1] - self.pos[j]).length() - self.rest_length(j)) / s)
            .fold(0.0, f32::max)
    }

    /// Returns the loose piece's points (empty when there is none).
    #[must_use]
    pub fn loose_points(&self) -> &[Vec3] {
        &self.loose.pos[..self.loose.active]
    }

    /// Like [`Rope::interpolated`] for the loose piece.
    pub fn loose_interpolated(&self, alpha: f32, out: &mut [Vec3]) -> usize {
        let a = crate::kit::saturate(alpha);
        let n = self.loose.active.min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = self.loose.render_from[i].lerp(self.loose.pos[i], a);
        }
        n
    }

    /// Returns the loose piece's opacity: 1 just after the cut, 0 once faded (or when there is none).
    #[must_use]
    pub fn loose_opacity(&self) -> f32 {
        if self.loose.active == 0 {
            0.0
        } else if self.params.fade_time <= 0.0 {
            1.0
        } else {
            crate::kit::saturate(1.0 - self.loose.age / self.params.fade_time)
        }
    }

    /// Splits the rope at segment `index` (between points `index` and `index + 1`): the part beyond it
    /// becomes the loose piece (replacing any earlier one) and the target length becomes what is left.
    /// Returns the cut, or `None` when `index` is not a segment of the active rope.
    pub fn cut_at(&mut self, index: usize) -> Option<Cut> {
        self.split(index, CutReason::Manual)
    }

    /// Cuts the rope where a capsule of `radius` metres around the path from `from` to `to` (world
    /// metres; a hitscan shot, say) first touches it going from `from`: the segment it reaches first
    /// is split, and the cut lies on that segment where the capsule met it. Returns the cut, or
    /// `None` when the capsule misses the rope or an input is not finite (a negative `radius` counts
    /// as 0).
    pub fn cut_along(&mut self, from: Vec3, to: Vec3, radius: f32) -> Option<Cut> {
        if !(usable(from) && usable(to) && radius.is_finite()) || self.active < 2 {
            return None;
        }
        let reach = radius.max(0.0) + self.params.radius;
        let mut first: Option<(f32, usize)> = None;
        for j in 0..self.active - 1 {
            let (a, b) = (self.pos[j], self.pos[j + 1]);
            let Some(t) = first_within(
                from,
                to,
                |p| (crate::kit::shape::closest_on_segment(p, a, b) - p).length(),
                reach,
            ) else {
                continue;
            };
            if first.is_none_or(|(ft, _)| t < ft) {
                first = Some((t, j));
            }
        }
        let (t, j) = first?;
        let at = from.lerp(to, t);
        let on = crate::kit::shape::closest_on_segment(at, self.pos[j], self.pos[j + 1]);
        let mut cut = self.split(j, CutReason::Cutter)?;
        cut.position = on;
        Some(cut)
    }

    fn split(&mut self, index: usize, reason: CutReason) -> Option<Cut> {
        // Written so that `usize::MAX` cannot overflow: the cut needs a point after `index`.
        if index >= self.active.saturating_sub(1) {
            return None;
        }
        self.wake();
        let position = (self.pos[index] + self.pos[index + 1]) * 0.5;
        let from = index + 1;
        let count = self.active - from;
        let l = &mut self.loose;
        l.pos[..count].copy_from_slice(&self.pos[from..self.active]);
        l.prev[..count].copy_from_slice(&self.prev[from..self.active]);
        l.render_from[..count].copy_from_slice(&self.render_from[from..self.active]);
        l.active = count;
        l.age = 0.0;
        self.active = from;
        self.length = if self.active <= 1 {
            0.0
        } else {
            self.head_rest + (self.active - 2) as f32 * self.params.segment_length
        };
        self.target_length = self.length;
        self.end_pinned = None;
        Some(Cut {
            index,
            position,
            reason,
        })
    }

    /// Re-lays the points for the current length and segment length along the current shape,
    /// moving `prev` with `pos` so no velocity is added.
    fn relayout(&mut self) {
        let (n, head) = self.layout(self.length);
        let old_n = self.active;
        // Extend the polyline straight from its last direction when points are added.
        for i in old_n..n {
            let (a, b) = if i >= 2 {
                (self.pos[i - 2], self.pos[i - 1])
            } else {
                (self.pos[0] - Vec3::NEG_Y, self.pos[0])
            };
            let p = b + (b - a).try_normalize().unwrap_or(Vec3::NEG_Y) * self.params.segment_length;
            self.pos[i] = p;
            self.prev[i] = p - (self.pos[i - 1] - self.prev[i - 1]);
            self.render_from[i] = p;
        }
        self.active = n;
        self.head_rest = head;
        for i in 1..n {
            let rest = self.rest_length(i - 1);
            let dir = (self.pos[i] - self.pos[i - 1])
                .try_normalize()
                .unwrap_or(Vec3::NEG_Y);
            let p = self.pos[i - 1] + dir * rest;
            let shift = p - self.pos[i];
            self.pos[i] = p;
            self.prev[i] += shift;
            self.render_from[i] += shift;
        }
    }

    /// Moves the length toward the target by at most `max_delta` metres, inserting or removing point 1
    /// as the head segment passes a full segment or empties. Returns `true` when the target is reached.
    fn update_length(&mut self, max_delta: f32) -> bool {
        if self.length == self.target_length {
            return false;
        }
        let s = self.params.segment_length;
        self.length = crate::kit::move_towards(self.length, self.target_length, max_delta);
        let (n, head) = self.layout(self.length);
        while self.active < n {
            self.insert_head_point();
        }
        while self.active > n {
            self.remove_head_point();
        }
        self.head_rest = head.min(s);
        self.length == self.target_length
    }

    /// Inserts a point between the anchor and point 1 (or appends point 1), carrying point 1's velocity.
    fn insert_head_point(&mut self) {
        let n = self.active;
        if n >= self.capacity {
            return;
        }
        self.shift_points(1..n, 2);
        let anchor = self.pos[0];
        let (p, v) = if n >= 2 {
            (anchor, self.pos[2] - self.prev[2])
        } else {
            (anchor, Vec3::ZERO)
        };
        self.pos[1] = p;
        self.prev[1] = p - v;
        self.start[1] = p;
        self.render_from[1] = self.render_from[0];
        self.active = n + 1;
    }

    /// Moves the points `from` to start at index `to` in every per-point buffer (positions, last
    /// positions, substep starts and render starts) alike; the points left behind keep their values.
    fn shift_points(&mut self, from: core::ops::Range<usize>, to: usize) {
        for buf in [
            &mut self.pos,
            &mut self.prev,
            &mut self.start,
            &mut self.render_from,
        ] {
            buf.copy_within(from.clone(), to);
        }
    }

    /// Removes point 1 (reels one segment in at the anchor).
    fn remove_head_point(&mut self) {
        let n = self.active;
        if n <= 1 {
            return;
        }
        self.shift_points(2..n, 1);
        self.active = n - 1;
    }

    /// Advances the rope by `dt` seconds (clamped to [`MAX_STEP`]; a non-positive or NaN `dt` does
    /// nothing) with the anchor moving from the last sample to `anchor`, the far end held by `end`,
    /// among the colliders of `world`. Returns what happened.
    pub fn step(&mut self, dt: f32, anchor: Vec3, end: EndAttachment, world: &World) -> StepEvents {
        let Some(mut ctx) = self.begin_step(dt, anchor, end, world) else {
            return StepEvents::default();
        };
        for k in 0..ctx.substeps {
            if let Some(sub) = self.begin_substep(&mut ctx, k) {
                self.iterate(&mut ctx, &sub, world);
                self.end_substep(&mut ctx, &sub, k, world);
            }
        }
        self.finish_step(ctx)
    }

    /// The start of [`Rope::step`]: checks the inputs and returns what the substeps share, or `None`
    /// when there is no step (`dt` not positive, or the rope sleeps and its inputs are unchanged).
    fn begin_step(
        &mut self,
        dt: f32,
        anchor: Vec3,
        end: EndAttachment,
        world: &World,
    ) -> Option<StepCtx> {
        let mut events = StepEvents::default();
        if dt.is_nan() || dt <= 0.0 {
            return None;
        }
        let dt = dt.min(MAX_STEP);
        let anchor = if usable(anchor) {
            anchor
        } else {
            events.anchor_ignored = true;
            self.anchor
        };
        let end = match end {
            EndAttachment::Pinned(p) if !usable(p) => {
                events.end_ignored = true;
                EndAttachment::Free
            }
            EndAttachment::Body {
                position,
                velocity,
                mass,
            } if !(usable(position) && usable(velocity) && mass.is_finite() && mass > 0.0) => {
                events.end_ignored = true;
                EndAttachment::Free
            }
            e => e,
        };
        let inputs = self.inputs_key(anchor, end, world);
        if self.rest.asleep {
            // A body end moves under the rope's pull: put to sleep by hand, the rope wakes with it.
            if inputs == self.rest.inputs && !matches!(end, EndAttachment::Body { .. }) {
                return None;
            }
            self.wake();
            events.sleep_changed = true;
        }
        let p = self.params;
        let substeps = p.substeps.max(self.stable_substeps).clamp(1, MAX_SUBSTEPS);
        let h = dt / substeps as f32;
        let anchor_from = self.anchor;
        let end_from = match (end, self.end_pinned) {
            (EndAttachment::Pinned(_), Some(from)) => from,
            (EndAttachment::Pinned(to), None) => to,
            _ => Vec3::ZERO,
        };
        self.render_from[..self.active].copy_from_slice(&self.pos[..self.active]);
        self.loose.render_from[..self.loose.active]
            .copy_from_slice(&self.loose.pos[..self.loose.active]);

        // A body end starts the step where the body is, with the body's velocity.
        let mut body_v0 = Vec3::ZERO;
        if let EndAttachment::Body {
            position, velocity, ..
        } = end
        {
            if self.active >= 2 {
                let last = self.active - 1;
                self.pos[last] = position;
                self.prev[last] = position - velocity * h;
                body_v0 = velocity;
            }
        }
        // Friction per push-out pass, so that a resting point loses `friction` per substep in total.
        let friction = 1.0 - (1.0 - p.friction).powf(1.0 / p.iterations as f32);
        Some(StepCtx {
            events,
            dt,
            anchor,
            end,
            p,
            substeps,
            h,
            max_lambda: 0.0,
            anchor_from,
            end_from,
            body_v0,
            pinned_correction: Vec3::ZERO,
            friction,
            inputs,
        })
    }

    /// The start of substep `k`: the length, the anchor, Verlet integration and the pinned end.
    /// Returns `None` when the rope has no segment this substep (nothing else to do in it).
    fn begin_substep(&mut self, ctx: &mut StepCtx, k: u32) -> Option<Substep> {
        let p = ctx.p;
        let h = ctx.h;
        let t = (k + 1) as f32 / ctx.substeps as f32;
        if self.update_length(p.length_speed * h) {
            ctx.events.length_reached = true;
        }
        let n = self.active;
        self.pos[0] = ctx.anchor_from.lerp(ctx.anchor, t);
        self.prev[0] = self.pos[0];
        if n < 2 {
            return None;
        }
        let last = n - 1;
        // Inverse masses relative to a rope point.
        let (w_end, end_pin) = match ctx.end {
            EndAttachment::Free => (1.0, None),
            EndAttachment::Pinned(to) => (0.0, Some(ctx.end_from.lerp(to, t))),
            EndAttachment::Body { mass, .. } => (p.point_mass / mass, None),
        };
        self.start[..n].copy_from_slice(&self.pos[..n]);
        // Verlet integration of the free points (a body end is integrated too, undamped).
        let g = p.gravity * (h * h);
        let max_move = MAX_POINT_SPEED * h;
        for i in 1..n {
            if i == last && end_pin.is_some() {
                continue;
            }
            let damping = if i == last && matches!(ctx.end, EndAttachment::Body { .. }) {
                1.0
            } else {
                p.damping
            };
            verlet_move(&mut self.pos[i], &mut self.prev[i], damping, max_move, g);
        }
        if let Some(pin) = end_pin {
            self.pos[last] = pin;
            self.prev[last] = pin;
        }
        Some(Substep {
            n,
            w_end,
            end_pin,
            g,
            max_move,
        })
    }

    /// The constraint iterations of a substep: each projects every distance constraint, then pushes
    /// the points and segments out of the ground and the solid colliders.
    fn iterate(&mut self, ctx: &mut StepCtx, sub: &Substep, world: &World) {
        let p = ctx.p;
        let n = sub.n;
        let s_rest = p.segment_length;
        let head_rest = self.head_rest;
        for _ in 0..p.iterations {
            let (c, lambda) = project_chain(
                &mut self.pos[..n],
                (0.0, sub.w_end),
                (head_rest, s_rest),
                &mut self.chain,
            );
            if sub.end_pin.is_some() {
                ctx.pinned_correction += c;
            }
            ctx.max_lambda = ctx.max_lambda.max(lambda);
            collide(
                &self.start,
                &mut self.pos,
                &mut self.prev,
                1..sub.free_end(),
                world,
                &p,
                ctx.friction,
            );
            self.push_segments_out(ctx, sub, world);
        }
    }

    /// Pushes the substep's segments out of the solid colliders ([`collide_segments`]), the last
    /// point weighted by the substep's `w_end` (0: pinned), the first never moved.
    #[inline]
    fn push_segments_out(&mut self, ctx: &StepCtx, sub: &Substep, world: &World) {
        let n = sub.n;
        collide_segments(
            &mut self.pos[..n],
            &mut self.prev[..n],
            (0.0, sub.w_end),
            world,
            &ctx.p,
            ctx.friction,
        );
    }

    /// The solid colliders' share of one constraint iteration of [`Rope::iterate`], for a rope
    /// whose projection and ground push-out ran in lanes: pushes points `1..free_end` out of the
    /// solid colliders, then every segment. Each point's push-out touches that point only, so
    /// running the ground's for every point first gives the same bits as [`collide`].
    fn push_out(&mut self, ctx: &StepCtx, sub: &Substep, world: &World) {
        let p = ctx.p;
        for i in 1..sub.free_end() {
            push_point_out(
                &self.start,
                &mut self.pos,
                &mut self.prev,
                i,
                world,
                &p,
                ctx.friction,
            );
        }
        self.push_segments_out(ctx, sub, world);
    }

    /// The end of substep `k`: tearing, the strain limit, continuous collision, cutters and the
    /// loose piece.
    fn end_substep(&mut self, ctx: &mut StepCtx, sub: &Substep, k: u32, world: &World) {
        let p = ctx.p;
        let (h, g, max_move, friction) = (ctx.h, sub.g, sub.max_move, ctx.friction);
        let end_pin = sub.end_pin;
        let free_end = sub.free_end();
        if ctx.events.cut.is_none() && p.tear_ratio > 0.0 {
            ctx.events.cut = self.check_tear();
        }
        let n = self.active;
        if n < 2 {
            return;
        }
        let free_end = free_end.min(n);
        if p.stretch_limit > 0.0 && end_pin.is_none() {
            for i in 1..free_end {
                let max = self.rest_length(i - 1) * (1.0 + p.stretch_limit);
                let d = self.pos[i] - self.pos[i - 1];
                let len = d.length();
                if len > max {
                    self.pos[i] = self.pos[i - 1] + d * (max / len);
                }
            }
            collide(
                &self.start,
                &mut self.pos,
                &mut self.prev,
                1..free_end,
                world,
                &p,
                friction,
            );
        }
        sweep(
            &self.start,
            &mut self.pos,
            &mut self.prev,
            1..free_end,
            world,
            &p,
        );
        if ctx.events.cut.is_none() {
            // This substep spans from `back + h` to `back` seconds before the step's end.
            let back = ctx.dt - (k + 1) as f32 * h;
            ctx.events.cut = self.check_cuts(world, back, h);
        }
        if ctx.events.cut.is_some() {
            // The end attachment went with the loose piece: the rest of the step hangs free.
            ctx.end = EndAttachment::Free;
        }
        let loose_n = self.loose.active;
        if loose_n > 0 {
            let l = &mut self.loose;
            l.start[..loose_n].copy_from_slice(&l.pos[..loose_n]);
            for i in 0..loose_n {
                verlet_move(&mut l.pos[i], &mut l.prev[i], p.damping, max_move, g);
            }
            for _ in 0..p.iterations {
                let _ = project_chain(
                    &mut l.pos[..loose_n],
                    (1.0, 1.0),
                    (p.segment_length, p.segment_length),
                    &mut self.chain,
                );
                collide(
                    &l.start,
                    &mut l.pos,
                    &mut l.prev,
                    0..loose_n,
                    world,
                    &p,
                    friction,
                );
                collide_segments(
                    &mut l.pos[..loose_n],
                    &mut l.prev[..loose_n],
                    (1.0, 1.0),
                    world,
                    &p,
                    friction,
                );
            }
            sweep(&l.start, &mut l.pos, &mut l.prev, 0..loose_n, world, &p);
        }
    }

    /// The end of [`Rope::step`]: the loose piece's fade, the next steps' substeps, the anchor, the
    /// tension on the end attachment and the last line of defence against non-finite points.
    fn finish_step(&mut self, ctx: StepCtx) -> StepEvents {
        let StepCtx {
            mut events,
            dt,
            anchor,
            end,
            p,
            substeps,
            h,
            max_lambda,
            body_v0,
            pinned_correction,
            inputs,
            ..
        } = ctx;
        if self.loose.active > 0 {
            self.loose.age += dt;
            if self.loose.age >= p.fade_time {
                self.loose.active = 0;
                events.loose_faded = true;
            }
        }
        self.adapt_substeps(max_lambda, substeps);
        self.anchor = anchor;
        self.end_pinned = match end {
            EndAttachment::Pinned(to) if self.active >= 2 => Some(to),
            _ => None,
        };
        self.tension = match end {
            EndAttachment::Free => Vec3::ZERO,
            _ if self.active < 2 => Vec3::ZERO,
            EndAttachment::Pinned(_) => {
                -pinned_correction * (p.point_mass / (h * h * substeps as f32))
            }
            EndAttachment::Body { mass, .. } => {
                let last = self.active - 1;
                let v = (self.pos[last] - self.prev[last]) / h;
                mass * ((v - body_v0) / dt - p.gravity)
            }
        };
        if !self.tension.is_finite() {
            self.tension = Vec3::ZERO;
        }
        // Last line of defence: a rope that went non-finite (it cannot with sanitized input, but a
        // game must never see NaN) is laid out again hanging from the anchor.
        if !self.pos[..self.active].iter().all(|q| usable(*q)) {
            let length = self.length;
            self.reset(self.anchor, Vec3::NEG_Y, length);
        }
        if self.come_to_rest(inputs, end, dt) {
            events.sleep_changed = true;
        }
        events
    }

    /// Counts the step just taken toward sleep (see [`RopeParams::sleep_distance`]): the rope is
    /// still while its inputs are those of the step before, its end is not a body, no cut-off piece
    /// is falling, its length is not changing and no point has strayed `sleep_distance` from where
    /// it was when it was first found so (the still time starts again from where they are when one
    /// has). Returns whether the rope fell asleep.
    fn come_to_rest(&mut self, inputs: u64, end: EndAttachment, dt: f32) -> bool {
        let limit = self.params.sleep_distance;
        let n = self.active;
        let calm = limit > 0.0
            && inputs == self.rest.inputs
            && !matches!(end, EndAttachment::Body { .. })
            && self.loose.active == 0
            && self.length == self.target_length;
        self.rest.inputs = inputs;
        if !calm {
            self.rest.still = 0.0;
            return false;
        }
        let stayed = self.rest.still > 0.0
            && self.pos[..n]
                .iter()
                .zip(&self.rest_from[..n])
                .all(|(p, q)| p.distance_squared(*q) <= limit * limit);
        if !stayed {
            self.rest_from[..n].copy_from_slice(&self.pos[..n]);
            self.rest.still = 0.0;
        }
        self.rest.still += dt;
        let g = self.params.gravity.length();
        let half_swing = if g > 0.0 {
            core::f32::consts::PI * (self.length / g).sqrt()
        } else {
            0.0
        };
        self.rest.still >= SLEEP_TIME.max(half_swing) && self.sleep()
    }

    /// Returns the number of substeps the rope now takes per step: `substeps`, or more while it is
    /// so taut for its segment length that one step would let its sideways waves run faster than a
    /// segment per step (the rope would jitter).
    #[must_use]
    pub fn substeps_in_use(&self) -> u32 {
        self.params.substeps.max(self.stable_substeps)
    }

    /// Chooses the substeps of the next steps from the largest multiplier of this one.
    ///
    /// A segment's multiplier `λ = T·h²/m` over its rest length `s` is `(c·h/s)²`, where
    /// `c = √(T·s/m)` is the speed of a sideways wave along the rope: the direct projection carries
    /// tension along the whole rope at once, so those waves are integrated explicitly and need
    /// `c·h/s` below 1 (measured: a two-frame jitter from 1.2). Since `λ` scales with `h²`, the
    /// substeps that keep the ratio under [`STABLE_WAVE_RATIO`] are `⌈√(λ·k²/s / ratio)⌉`. More
    /// substeps are taken at once; one fewer only after [`CALM_STEPS`] steps in a row in which it
    /// would have kept the ratio under half the limit (so the count does not flicker).
    fn adapt_substeps(&mut self, max_lambda: f32, used: u32) {
        let s = self.params.segment_length;
        let at_one = max_lambda / s * (used * used) as f32;
        if !at_one.is_finite() {
            self.stable_substeps = MAX_SUBSTEPS;
            self.calm_steps = 0;
            return;
        }
        let ratio_at = |k: u32| at_one / (k * k) as f32;
        let k = self.stable_substeps;
        if ratio_at(k) > STABLE_WAVE_RATIO {
            self.stable_substeps =
                ((at_one / STABLE_WAVE_RATIO).sqrt().ceil() as u32).clamp(1, MAX_SUBSTEPS);
            self.calm_steps = 0;
        } else if k > 1 && ratio_at(k - 1) < 0.5 * STABLE_WAVE_RATIO {
            // One fewer would still leave a margin of 2: drop it once that has held a while. One at
            // a time: dropping several at once let a taut rope fall into a jitter and climb back.
            self.calm_steps += 1;
            if self.calm_steps >= CALM_STEPS {
                self.stable_substeps = k - 1;
                self.calm_steps = 0;
            }
        } else {
            self.calm_steps = 0;
        }
    }

    /// Returns the most stretched segment past the tear ratio, split there.
    fn check_tear(&mut self) -> Option<Cut> {
        let p = self.params;
        let mut worst: Option<(f32, usize)> = None;
        for j in 0..self.active.saturating_sub(1) {
            let rest = self.rest_length(j).max(p.segment_length * 0.25);
            let ratio = (self.pos[j + 1] - self.pos[j]).length() / rest;
            if ratio > p.tear_ratio && worst.is_none_or(|(r, _)| ratio > r) {
                worst = Some((ratio, j));
            }
        }
        worst.and_then(|(_, j)| self.split(j, CutReason::Torn))
    }

    /// Returns the first segment that a cutter touched during the substep that ended `back` seconds
    /// before the step's end and lasted `h`, split where it touched.
    ///
    /// A moving cutter is swept along its [`Motion`] (the path it took since the last step, a turn
    /// swept as a turn however large) by conservative advancement: at each fraction of the substep
    /// it is rewound to, it meets the rope interpolated between where the substep started and
    /// ended, and the gap to the nearest segment says how far the substep may go on before the next
    /// look (no point of the cutter or the rope moves faster than their bound, so no touch is
    /// stepped over, not even a graze). The earliest touch wins, then the segment nearest the
    /// anchor. A still cutter is tested once, against the segments and the path of each segment's
    /// far point.
    fn check_cuts(&mut self, world: &World, back: f32, h: f32) -> Option<Cut> {
        if self.active < 2 {
            return None;
        }
        let radius = self.params.radius;
        let (lo, hi) = self.swept_box();
        // The farthest a rope point moves during the substep.
        let rope_travel = (0..self.active)
            .map(|i| self.pos[i].distance(self.start[i]))
            .fold(0.0f32, f32::max);
        let mut first: Option<(f32, usize, Vec3)> = None;
        for collider in world.colliders().iter().filter(|c| c.cutter) {
            let travel = collider.travel(h);
            // Where the cutter can be during the substep: within `travel` of where it ends it.
            let end = collider.rewound(back).pose.position;
            let reach = travel + collider.shape.bounding_radius() + radius;
            // Per component, without glam's `clamp` (it asserts `lo <= hi`, which a rope with a
            // non-finite point breaks); a distance that is not a number skips the cutter.
            let gap = (end.max(lo).min(hi) - end).length();
            if gap.is_nan() || gap > reach {
                continue;
            }
            let touch = if travel > 0.0 {
                self.first_touch(
                    collider,
                    (back, h),
                    travel + rope_travel,
                    first.map(|t| t.0),
                )
            } else if first.is_none_or(|(ff, _, _)| ff > 1.0) {
                let then = collider.rewound(back);
                self.touched(&then, 1.0, true).map(|(j, at)| (1.0, j, at))
            } else {
                None
            };
            if let Some((f, j, at)) = touch {
                if first.is_none_or(|(ff, fj, _)| f < ff || (f == ff && j < fj)) {
                    first = Some((f, j, at));
                }
            }
        }
        let (_, j, at) = first?;
        let mut cut = self.split(j, CutReason::Cutter)?;
        cut.position = at;
        Some(cut)
    }

    /// Returns the earliest fraction of the substep (`back` seconds before the step's end, `h`
    /// long) at which the moving `collider` touches the rope, before `before` if given, with the
    /// segment and the point where it touches. `speed` bounds how far (metres) any point of the
    /// cutter and of the rope moves over the whole substep, together.
    fn first_touch(
        &self,
        collider: &Collider,
        (back, h): (f32, f32),
        speed: f32,
        before: Option<f32>,
    ) -> Option<(f32, usize, Vec3)> {
        let mut f = 0.0f32;
        for _ in 0..MAX_CUT_LOOKS {
            if before.is_some_and(|b| b <= f) {
                return None;
            }
            let then = collider.rewound(back + h * (1.0 - f));
            let (gap, touch) = self.nearest_gap(&then, f);
            if let Some((j, at)) = touch {
                return Some((f, j, at));
            }
            if f >= 1.0 {
                return None;
            }
            f = (f + (gap / speed).max(MIN_CUT_ADVANCE)).min(1.0);
        }
        None
    }

    /// Returns how far (metres) the collider `then` is from the rope's surface with the rope
    /// interpolated the fraction `f` of the way from where the substep started to where it ended,
    /// and, when it touches (within [`CUT_CONTACT`]), the first segment it touches (nearest the
    /// anchor) and the point of that segment nearest it.
    fn nearest_gap(&self, then: &Collider, f: f32) -> (f32, Option<(usize, Vec3)>) {
        let radius = self.params.radius;
        let (centre, bound) = (then.pose.position, then.shape.bounding_radius());
        let slack = CUT_SLACK * (1.0 + centre.abs().max_element());
        let mut gap = f32::INFINITY;
        for j in 0..self.active - 1 {
            let a = self.start[j].lerp(self.pos[j], f);
            let b = self.start[j + 1].lerp(self.pos[j + 1], f);
            let nearest = crate::kit::shape::closest_on_segment(centre, a, b);
            // The bounding sphere's distance is a lower bound of the shape's.
            let lower = (nearest - centre).length() - bound - radius - slack;
            if lower >= gap {
                continue;
            }
            let (t, distance) = then.segment_distance(a, b);
            let g = distance - radius;
            if g <= CUT_CONTACT {
                return (0.0, Some((j, a.lerp(b, t))));
            }
            gap = gap.min(g);
        }
        (gap, None)
    }

    /// Returns the box of the active points where the substep started and where they are now.
    fn swept_box(&self) -> (Vec3, Vec3) {
        let n = self.active;
        let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for p in self.start[..n].iter().chain(&self.pos[..n]) {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        (lo, hi)
    }

    /// Returns the first segment (nearest the anchor) that the collider `then` touches with the rope
    /// interpolated the fraction `f` of the way from where the substep started to where it ended,
    /// and the point of the segment where it touches; with `paths`, also each segment's far point's
    /// path over the substep.
    fn touched(&self, then: &Collider, f: f32, paths: bool) -> Option<(usize, Vec3)> {
        let radius = self.params.radius;
        let (centre, bound) = (then.pose.position, then.shape.bounding_radius());
        for j in 0..self.active - 1 {
            let a = self.start[j].lerp(self.pos[j], f);
            let b = self.start[j + 1].lerp(self.pos[j + 1], f);
            let nearest = crate::kit::shape::closest_on_segment(centre, a, b);
            let slack = CUT_SLACK * (1.0 + centre.abs().max_element());
            if (nearest - centre).length() > bound + radius + slack {
                continue;
            }
            if then.sweep(a, b, radius).is_some() {
                let at = then
                    .segment_overlap(a, b, radius)
                    .map_or(nearest, |(t, _, _)| a.lerp(b, t));
                return Some((j, at));
            }
            if paths && then.sweep(self.start[j + 1], b, radius).is_some() {
                return Some((j, b));
            }
        }
        None
    }
}

/// Returns the first fraction `t` in [0, 1] of the way from `from` to `to` at which `distance` (a
/// convex function of the point, such as the distance to a segment) is at most `reach`, or `None`
/// when it never is: its least value along the path is found by golden-section search, then the
/// first point within reach before it by bisection (to about 10⁻⁶ of the path).
fn first_within(from: Vec3, to: Vec3, distance: impl Fn(Vec3) -> f32, reach: f32) -> Option<f32> {
    let at = |t: f32| distance(from.lerp(to, t));
    if at(0.0) <= reach {
        return Some(0.0);
    }
    const INV_PHI: f32 = 0.618_034;
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for _ in 0..40 {
        let (x1, x2) = (hi - INV_PHI * (hi - lo), lo + INV_PHI * (hi - lo));
        if at(x1) <= at(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let mut best = 0.5 * (lo + hi);
    if at(1.0) < at(best) {
        best = 1.0;
    }
    if at(best) > reach {
        return None;
    }
    // The distance falls from beyond reach at 0 to within it at `best`: the crossing is between.
    let (mut out, mut within) = (0.0f32, best);
    for _ in 0..24 {
        let mid = 0.5 * (out + within);
        if at(mid) <= reach {
            within = mid;
        } else {
            out = mid;
        }
    }
    Some(within)
}

/// Most looks of one cutter's sweep in one substep (conservative advancement); a cutter that
/// stays within a few millimetres of the rope all along a long path may run out of them.
const MAX_CUT_LOOKS: usize = 4096;
/// Smallest advance of a sweep between two looks, as a fraction of the substep.
const MIN_CUT_ADVANCE: f32 = 1e-6;
/// A cutter nearer than this (metres) to the rope's surface touches it (as in [`Collider::sweep`]).
const CUT_CONTACT: f32 = 1e-4;
/// Room (metres, per metre of the largest coordinate plus one) for rounding when a segment is ruled
/// out by the distance from a cutter's bounding sphere.
const CUT_SLACK: f32 = 1e-5;

/// Largest coordinate accepted for a position, in metres (farther counts as bad input: squaring
/// distances beyond it would overflow `f32`).
pub const MAX_COORDINATE: f32 = 1.0e6;

/// Returns `true` when every component of `v` is finite and within [`MAX_COORDINATE`].
#[inline]
fn usable(v: Vec3) -> bool {
    v.is_finite() && v.abs().max_element() <= MAX_COORDINATE
}

/// What the substeps of one [`Rope::step`] share: its inputs, checked, and what it accumulates.
#[derive(Clone, Copy, Debug)]
struct StepCtx {
    events: StepEvents,
    dt: f32,
    anchor: Vec3,
    /// The end attachment (free from a cut on).
    end: EndAttachment,
    p: RopeParams,
    substeps: u32,
    /// Seconds per substep.
    h: f32,
    max_lambda: f32,
    anchor_from: Vec3,
    end_from: Vec3,
    body_v0: Vec3,
    pinned_correction: Vec3,
    /// Friction per push-out pass.
    friction: f32,
    /// The fingerprint of the step's inputs (see [`Rope::inputs_key`]).
    inputs: u64,
}

/// One substep of a [`Rope::step`] after its integration, for its constraint iterations.
#[derive(Clone, Copy, Debug)]
struct Substep {
    /// Active points.
    n: usize,
    /// Inverse mass of the last point relative to a rope point (0: pinned).
    w_end: f32,
    /// Where a pinned end is this substep.
    end_pin: Option<Vec3>,
    /// Gravity times the substep squared.
    g: Vec3,
    /// Farthest a point moves in the substep.
    max_move: f32,
}

impl Substep {
    /// Returns the end of the points the constraints move, `1..free_end`: every active point but
    /// the first (the anchor) and a pinned last one.
    fn free_end(&self) -> usize {
        if self.end_pin.is_some() {
            self.n - 1
        } else {
            self.n
        }
    }
}

/// Scratch buffers of the direct chain projection, one slot per segment, allocated with the rope.
#[derive(Clone, Debug, Default)]
struct ChainScratch {
    /// Unit direction of each segment.
    dir: Vec<Vec3>,
    /// Right-hand side, then the multipliers.
    lambda: Vec<f32>,
    /// The eliminated upper diagonal of the Thomas algorithm.
    upper: Vec<f32>,
}

impl ChainScratch {
    fn new(capacity: usize) -> Self {
        Self {
            dir: vec![Vec3::NEG_Y; capacity],
            lambda: vec![0.0; capacity],
            upper: vec![0.0; capacity],
        }
    }
}

/// Largest `(c·h/s)²` (sideways wave speed × substep / segment length, squared) a step is allowed
/// before the rope takes more substeps; 1 is the stability limit, this leaves a margin of √2.
pub const STABLE_WAVE_RATIO: f32 = 0.5;
/// Steps in a row that must ask for fewer substeps before one is dropped (half a second at 60 Hz).
pub const CALM_STEPS: u32 = 30;

/// Regularisation added to the diagonal of the chain system (a tiny compliance): it keeps the system
/// definite when the rope is pulled straight past its length (every segment collinear), where the
/// exact system is singular.
const CHAIN_COMPLIANCE: f32 = 1e-4;

/// Fraction of each Newton step applied. A full step (1.0) leaves the stiffest transverse mode of a
/// long chain between two pins undamped (a two-frame jitter of about 1 mm at 32 points); 0.8 settles
/// it while four iterations still remove 99.8 % of the stretch.
const CHAIN_RELAXATION: f32 = 0.8;

/// Projects every distance constraint of the chain `pos` at once: one Newton step on the constraint
/// manifold, solved exactly by the Thomas algorithm on the tridiagonal system `J·W·Jᵀ·λ = −C` (a
/// direct solver, after Deul et al. 2018, "Direct position-based solver for stiff rods"), applied
/// with under-relaxation [`CHAIN_RELAXATION`].
///
/// Interior points have unit inverse mass; `(w_first, w_last)` are the end points' (0 = pinned).
/// Segment 0 rests at `rests.0`, every other at `rests.1`. Unlike Gauss–Seidel sweeps, whose
/// correction travels one segment per sweep, this removes the stretch of every segment together, so
/// a long rope between two pins keeps its length with a few iterations. Returns the correction felt
/// by the last point per unit inverse mass (for the tension at a pinned end) and the largest
/// multiplier `|λ|` (metres: a segment's tension × h² / point mass, for [`Rope`]'s substep choice).
fn project_chain(
    pos: &mut [Vec3],
    (w_first, w_last): (f32, f32),
    (head_rest, rest): (f32, f32),
    scratch: &mut ChainScratch,
) -> (Vec3, f32) {
    let n = pos.len();
    if n < 2 || (n == 2 && w_first + w_last <= 0.0) {
        return (Vec3::ZERO, 0.0);
    }
    let m = n - 1;
    let ChainScratch { dir, lambda, upper } = scratch;
    let w = |i: usize| -> f32 {
        if i == 0 {
            w_first
        } else if i == m {
            w_last
        } else {
            1.0
        }
    };
    let mut last_dir = Vec3::NEG_Y;
    for j in 0..m {
        let delta = pos[j + 1] - pos[j];
        let len = delta.length();
        if len > 1e-7 {
            last_dir = delta / len;
        }
        dir[j] = last_dir;
        let r = if j == 0 { head_rest } else { rest };
        lambda[j] = r - len;
    }
    // Forward elimination. Row j: A[j][j−1] = −w_j·(d_{j−1}·d_j), A[j][j] = w_j + w_{j+1} + ε,
    // A[j][j+1] = −w_{j+1}·(d_j·d_{j+1}).
    let mut prev_upper = 0.0;
    for j in 0..m {
        let (wj, wk) = (w(j), w(j + 1));
        let lower = if j > 0 {
            -wj * dir[j - 1].dot(dir[j])
        } else {
            0.0
        };
        let denom = wj + wk + CHAIN_COMPLIANCE - lower * prev_upper;
        let inv = 1.0 / denom;
        let up = if j + 1 < m {
            -wk * dir[j].dot(dir[j + 1])
        } else {
            0.0
        };
        upper[j] = up * inv;
        lambda[j] = (lambda[j] - if j > 0 { lower * lambda[j - 1] } else { 0.0 }) * inv;
        prev_upper = upper[j];
    }
    for j in (0..m - 1).rev() {
        lambda[j] -= upper[j] * lambda[j + 1];
    }
    let max_lambda = lambda[..m].iter().fold(0.0f32, |acc, l| acc.max(l.abs()));
    // x_i += w_i·(λ_{i−1}·d_{i−1} − λ_i·d_i).
    for (i, p) in pos.iter_mut().enumerate() {
        let wi = w(i);
        if wi <= 0.0 {
            continue;
        }
        let mut delta = Vec3::ZERO;
        if i > 0 {
            delta += lambda[i - 1] * dir[i - 1];
        }
        if i < m {
            delta -= lambda[i] * dir[i];
        }
        *p += delta * (wi * CHAIN_RELAXATION);
    }
    (-lambda[m - 1] * dir[m - 1], max_lambda)
}

/// Removes the velocity into the surface and `friction` of the sliding velocity of a point that was
/// just placed on a surface with outward normal `n`.
#[inline]
fn contact_velocity(pos: Vec3, prev: &mut Vec3, n: Vec3, friction: f32) {
    let v = pos - *prev;
    let vn = v.dot(n);
    let vt = v - n * vn;
    *prev = pos - vt * (1.0 - friction);
}

/// Pushes the points in `range` out of the ground and the solid colliders.
fn collide(
    start: &[Vec3],
    pos: &mut [Vec3],
    prev: &mut [Vec3],
    range: core::ops::Range<usize>,
    world: &World,
    p: &RopeParams,
    friction: f32,
) {
    let floor = p.ground_height + p.radius;
    for i in range {
        if p.ground_enabled && pos[i].y < floor {
            pos[i].y = floor;
            contact_velocity(pos[i], &mut prev[i], Vec3::Y, friction);
        }
        push_point_out(start, pos, prev, i, world, p, friction);
    }
}

/// Moves a point one substep (Verlet): on by its last move times `damping`, capped at `max_move`,
/// plus `g` (gravity times the substep squared); `prev` becomes where it was.
#[inline(always)]
fn verlet_move(pos: &mut Vec3, prev: &mut Vec3, damping: f32, max_move: f32, g: Vec3) {
    let v = ((*pos - *prev) * damping).clamp_length_max(max_move);
    *prev = *pos;
    *pos += v + g;
}

/// Pushes point `i` out of the solid colliders (the colliders' part of [`collide`]). Always inlined:
/// as a call it made a rope's solo step a sixth slower even with no collider.
#[inline(always)]
fn push_point_out(
    start: &[Vec3],
    pos: &mut [Vec3],
    prev: &mut [Vec3],
    i: usize,
    world: &World,
    p: &RopeParams,
    friction: f32,
) {
    for (c, collider) in world.colliders().iter().enumerate() {
        if !collider.solid || !world.near(c, pos[i], p.radius) {
            continue;
        }
        if let Some((q, n)) = collider.resolve(pos[i], start[i], p.radius) {
            pos[i] = q;
            contact_velocity(pos[i], &mut prev[i], n, friction);
        }
    }
}

/// Pushes every segment of the chain `pos` out of the solid colliders it overlaps as a capsule of
/// the rope's radius: the overlap is removed at the segment's deepest point by moving its two ends
/// in proportion to their share of that point and their inverse masses (`(w_first, w_last)` for
/// the chain's ends, 1 inside). This is what keeps a rope drawn over a thin wall's edge from
/// cutting through it between two points.
fn collide_segments(
    pos: &mut [Vec3],
    prev: &mut [Vec3],
    (w_first, w_last): (f32, f32),
    world: &World,
    p: &RopeParams,
    friction: f32,
) {
    if world.is_empty() || pos.len() < 2 {
        return;
    }
    let last = pos.len() - 1;
    let max_move = 2.0 * p.segment_length;
    for j in 0..last {
        let wa = if j == 0 { w_first } else { 1.0 };
        let wb = if j + 1 == last { w_last } else { 1.0 };
        for (c, collider) in world.colliders().iter().enumerate() {
            let (a, b) = (pos[j], pos[j + 1]);
            let mid = (a + b) * 0.5;
            if !collider.solid || !world.near(c, mid, 0.5 * (b - a).length() + p.radius) {
                continue;
            }
            let Some((t, n, depth)) = collider.segment_overlap(a, b, p.radius) else {
                continue;
            };
            let share = wa * (1.0 - t) * (1.0 - t) + wb * t * t;
            if share < 1e-4 {
                continue;
            }
            let push = n * (depth / share);
            if wa > 0.0 {
                pos[j] += (push * (wa * (1.0 - t))).clamp_length_max(max_move);
                contact_velocity(pos[j], &mut prev[j], n, friction);
            }
            if wb > 0.0 {
                pos[j + 1] += (push * (wb * t)).clamp_length_max(max_move);
                contact_velocity(pos[j + 1], &mut prev[j + 1], n, friction);
            }
        }
    }
}

/// Stops each point in `range` at the first solid collider its path from `start` crossed.
fn sweep(
    start: &[Vec3],
    pos: &mut [Vec3],
    prev: &mut [Vec3],
    range: core::ops::Range<usize>,
    world: &World,
    p: &RopeParams,
) {
    if world.is_empty() {
        return;
    }
    for i in range {
        let (a, b) = (start[i], pos[i]);
        let reach = (b - a).length() + p.radius;
        let mut first: Option<(f32, usize)> = None;
        for (c, collider) in world.colliders().iter().enumerate() {
            if !collider.solid || !world.near(c, a, reach) {
                continue;
            }
            // A point already resting inside (a moving body caught it) is left to the push-out.
            let (_, swept) = collider.distance_and_sweep(a, b, p.radius, |d| d - p.radius < -1e-3);
            if let Some(t) = swept {
                if first.is_none_or(|(ft, _)| t < ft) {
                    first = Some((t, c));
                }
            }
        }
        if let Some((t, c)) = first {
            // Collide and slide: stop at the contact, then keep the part of the remaining motion
            // that runs along the surface (so a rope pulled over a wall slides up and over it).
            let collider = &world.colliders()[c];
            let hit = a + (b - a) * t;
            let n = collider.normal(hit);
            let gap = collider.distance(hit) - p.radius;
            let contact = hit + n * (2e-3 - gap.min(0.0));
            let rest = b - hit;
            let slide = rest - n * rest.dot(n).min(0.0);
            let slid = contact + slide;
            // Keep the slide only if its own path is clear of every solid collider.
            let clear = world.colliders().iter().enumerate().all(|(k, other)| {
                !other.solid
                    || !world.near(k, contact, slide.length() + p.radius)
                    || other.sweep(contact, slid, p.radius * 0.9).is_none()
            });
            pos[i] = if clear { slid } else { contact };
            contact_velocity(pos[i], &mut prev[i], n, p.friction);
        }
    }
}

#[cfg(test)]
mod cut_tests;
#[cfg(test)]
mod physics_tests;
#[cfg(test)]
mod tests;
