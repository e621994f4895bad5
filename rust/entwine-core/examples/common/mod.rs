//! What the timing examples share: the thread's own CPU time and a median with its spread.

/// The calling thread's CPU time so far in nanoseconds, when the system says (Linux:
/// `/proc/thread-self/schedstat`, which other work on a shared machine does not inflate).
pub fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Returns the median, the lowest and the highest of `v` (not empty).
pub fn median_and_spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}
