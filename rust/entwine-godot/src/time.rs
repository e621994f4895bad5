//! The glue's one clock: the engine's monotonic time in seconds, for timeouts, resends and
//! throttled warnings (never for simulation steps, which use the frame's delta); and
//! `EntwineProfiler`, the calling thread's and the process's CPU clocks for benchmarks and users'
//! own profiling.

use godot::classes::Time;
use godot::prelude::*;

/// Returns the engine's monotonic clock (time since the engine started), in seconds.
pub fn now() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}

/// The calling thread's and the whole process's CPU clocks, for measuring where a scene's time goes.
///
/// `EntwineProfiler.thread_cpu_usec()` returns the CPU time the calling thread has run so far, in
/// microseconds, read from the operating system's per-thread CPU clock (`clock_gettime` with
/// `CLOCK_THREAD_CPUTIME_ID`), which counts the thread's time up to the moment of the call. Read
/// before and after some work on the main thread it gives that work's CPU time — scripts, nodes,
/// skeleton modifiers, physics queries — without the time other processes on a shared machine take
/// from it, so it stays steady where wall time swings. Counters read from `/proc` (`schedstat`,
/// `sched`) are only brought up to date at a scheduler tick or a context switch, so they can be
/// milliseconds behind a thread that is running. `EntwineProfiler.process_cpu_usec()` is the same
/// for every thread of the process together (`CLOCK_PROCESS_CPUTIME_ID`): read around work that
/// runs on several threads (the engine's servers, or a large batch of ropes, which Entwine shares
/// with a second thread) it gives the work's whole CPU time, where wall time gives how long it
/// took. Both return -1 where the platform has no such clock (Windows, the web).
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
        cpu_seconds(Clock::Thread).map_or(-1.0, |s| s * 1e6)
    }

    /// Returns the CPU time every thread of the process has run together, in microseconds
    /// (nanosecond resolution), or -1 where the platform has no process CPU clock.
    #[func]
    pub fn process_cpu_usec() -> f64 {
        cpu_seconds(Clock::Process).map_or(-1.0, |s| s * 1e6)
    }
}

/// Which CPU clock to read.
#[derive(Clone, Copy)]
enum Clock {
    /// The calling thread's.
    Thread,
    /// The whole process's (every thread).
    Process,
}

/// Returns `clock`'s CPU time in seconds, or `None` where it cannot be read.
#[cfg(unix)]
fn cpu_seconds(clock: Clock) -> Option<f64> {
    let id = match clock {
        Clock::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
        Clock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
    };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let ok = unsafe { libc::clock_gettime(id, &mut ts) } == 0;
    ok.then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Returns `None`: no CPU clock here.
#[cfg(not(unix))]
fn cpu_seconds(_clock: Clock) -> Option<f64> {
    None
}
