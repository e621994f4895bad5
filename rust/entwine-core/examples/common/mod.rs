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
pub fn points_checksum(ropes: &[Option<entwine_core::rope::Rope>]) -> f64 {
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
