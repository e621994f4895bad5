//! The glue's one clock: the engine's monotonic time in seconds, for timeouts, resends and
//! throttled warnings (never for simulation steps, which use the frame's delta); and
//! `EntwineProfiler`, the calling thread's CPU clock for benchmarks and users' own profiling.

use godot::classes::Time;
use godot::prelude::*;

/// Returns the engine's monotonic clock (time since the engine started), in seconds.
pub fn now() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}

/// The calling thread's CPU clock, for measuring where a scene's time goes.
///
/// `EntwineProfiler.thread_cpu_usec()` returns the CPU time the calling thread has run so far, in
/// microseconds, read from the operating system's per-thread CPU clock (`clock_gettime` with
/// `CLOCK_THREAD_CPUTIME_ID`), which counts the thread's time up to the moment of the call. Read
/// before and after some work on the main thread it gives that work's CPU time — scripts, nodes,
/// skeleton modifiers, physics queries — without the time other processes on a shared machine take
/// from it, so it stays steady where wall time swings. Counters read from `/proc` (`schedstat`,
/// `sched`) are only brought up to date at a scheduler tick or a context switch, so they can be
/// milliseconds behind a thread that is running. Returns -1 where the platform has no such clock
/// (Windows, the web).
#[derive(GodotClass)]
#[class(no_init, base = Object)]
pub struct EntwineProfiler {
    base: Base<Object>,
}

#[godot_api]
impl EntwineProfiler {
    /// Returns the CPU time the calling thread has run, in microseconds (nanosecond resolution),
    /// or -1 where the platform has no per-thread CPU clock.
    #[func]
    pub fn thread_cpu_usec() -> f64 {
        thread_cpu_seconds().map_or(-1.0, |s| s * 1e6)
    }
}

/// Returns the calling thread's CPU time in seconds, or `None` where it cannot be read.
#[cfg(unix)]
fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    ok.then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Returns `None`: no per-thread CPU clock here.
#[cfg(not(unix))]
fn thread_cpu_seconds() -> Option<f64> {
    None
}
