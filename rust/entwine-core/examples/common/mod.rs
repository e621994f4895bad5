//! What the timing examples share: the thread's own CPU time, a median with its spread, and where
//! the rope examples hang their ropes.

/// The calling thread's CPU time so far in nanoseconds, when the system says (`clock_gettime` with
/// `CLOCK_THREAD_CPUTIME_ID`: up to the moment of the call, and not inflated by other work on a
/// shared machine; `/proc/thread-self/schedstat` lags a running thread by up to a scheduler tick).
#[cfg(unix)]
pub fn cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    ok.then_some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `None`: no per-thread CPU clock here.
#[cfg(not(unix))]
pub fn cpu_ns() -> Option<u64> {
    None
}

/// Returns the median, the lowest and the highest of `v` (not empty).
pub fn median_and_spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Returns the frame count given as the first command-line argument, or `default`.
#[allow(dead_code)] // not every example takes one
pub fn frames_arg(default: usize) -> usize {
    std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// Returns rope `i`'s home: the ropes stand in rows of 40, 1.5 m apart, hung from 12 m up.
#[allow(dead_code)] // the rope examples only
pub fn home(i: usize) -> glam::Vec3 {
    glam::Vec3::new((i % 40) as f32 * 1.5, 12.0, (i / 40) as f32 * 1.5)
}

/// Returns the sum of every point's coordinates of the ropes that are there: the same code gives
/// the same checksum.
#[allow(dead_code)] // the rope examples only
pub fn points_checksum(ropes: &[Option<Box<entwine_core::rope::Rope>>]) -> f64 {
    ropes
        .iter()
        .flatten()
        .flat_map(|r| r.points().iter())
        .map(|p| f64::from(p.x + p.y + p.z))
        .sum()
}

/// Returns "; cpu M unit (rounds LO-HI)" with `decimals` digits for the thread CPU time of each
/// round, or "" when some round had none (`rounds` shorter than `expected`).
#[allow(dead_code)] // the rope examples only
pub fn cpu_note(rounds: Vec<f64>, expected: usize, unit: &str, decimals: usize) -> String {
    if rounds.len() != expected {
        return String::new();
    }
    let (c, lo, hi) = median_and_spread(rounds);
    format!("; cpu {c:.decimals$} {unit} (rounds {lo:.decimals$}-{hi:.decimals$})")
}

/// Returns rope `i`'s anchor at tick `frame` of `dt` seconds: its [`home`] plus a point going
/// round a 1 m circle at 6 rad/s (about 6 m/s).
#[allow(dead_code)] // the swung-rope examples only
pub fn swung_anchor(i: usize, frame: usize, dt: f32) -> glam::Vec3 {
    let t = frame as f32 * dt;
    home(i) + glam::Vec3::new((t * 6.0).cos(), 0.0, (t * 6.0).sin())
}

/// The rope examples' ropes, each with its world, and the batch that steps them together.
#[allow(dead_code)] // the rope examples only
pub struct Ropes {
    /// The ropes (each is in the batch only during [`Ropes::tick`]).
    pub ropes: Vec<Option<Box<entwine_core::rope::Rope>>>,
    worlds: Vec<entwine_core::rope::World>,
    batch: entwine_core::rope::batch::RopeBatch,
}

#[allow(dead_code)] // the rope examples only
impl Ropes {
    /// Returns `ropes`, each with a world of room for 32 colliders.
    pub fn new(ropes: Vec<entwine_core::rope::Rope>) -> Self {
        let count = ropes.len();
        Self {
            ropes: ropes.into_iter().map(|r| Some(Box::new(r))).collect(),
            worlds: (0..count)
                .map(|_| entwine_core::rope::World::with_capacity(32))
                .collect(),
            batch: entwine_core::rope::batch::RopeBatch::with_capacity(count),
        }
    }

    /// Steps every rope once in one batch, rope `i` with `input(i)` among the colliders
    /// `fill(i, world)` puts in its emptied world (as the rope server's gather does each tick).
    pub fn tick(
        &mut self,
        mut input: impl FnMut(usize) -> entwine_core::rope::batch::StepInput,
        mut fill: impl FnMut(usize, &mut entwine_core::rope::World),
    ) {
        for (i, slot) in self.ropes.iter_mut().enumerate() {
            let mut world = core::mem::take(&mut self.worlds[i]);
            world.clear();
            fill(i, &mut world);
            let rope = slot.take().expect("rope");
            self.batch.push(rope, world, input(i), i);
        }
        self.batch.step();
        for e in self.batch.drain() {
            self.ropes[e.owner] = Some(e.rope);
            self.worlds[e.owner] = e.world;
        }
    }
}

/// Runs `rounds` rounds of `frames` calls of `tick` and returns each round's time per call in
/// milliseconds: wall time, and the thread's own CPU time (empty where there is no such clock).
#[allow(dead_code)] // the rope examples only
pub fn timed_rounds(rounds: usize, frames: usize, tick: impl FnMut()) -> (Vec<f64>, Vec<f64>) {
    paced_rounds(rounds, frames, std::time::Duration::ZERO, tick)
}

/// [`timed_rounds`] with `idle` of sleep before each call (as a game's frame leaves the processors
/// between two physics ticks), which is not timed.
#[allow(dead_code)] // the rope examples only
pub fn paced_rounds(
    rounds: usize,
    frames: usize,
    idle: std::time::Duration,
    mut tick: impl FnMut(),
) -> (Vec<f64>, Vec<f64>) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..rounds {
        let (mut w, mut c) = (0.0, Some(0));
        for _ in 0..frames {
            if !idle.is_zero() {
                std::thread::sleep(idle);
            }
            let (t0, c0) = (std::time::Instant::now(), cpu_ns());
            tick();
            w += t0.elapsed().as_secs_f64();
            c = c.zip(c0).zip(cpu_ns()).map(|((c, c0), c1)| c + (c1 - c0));
        }
        wall.push(w * 1e3 / frames as f64);
        if let Some(c) = c {
            cpu.push(c as f64 / 1e6 / frames as f64);
        }
    }
    (wall, cpu)
}
