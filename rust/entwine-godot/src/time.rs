//! The glue's one clock: the engine's monotonic time in seconds, for timeouts, resends and
//! throttled warnings (never for simulation steps, which use the frame's delta); and
//! `EntwineProfiler`, the calling thread's and the process's CPU clocks for benchmarks and users'
//! own profiling, and the CPU time each kind of node spends in its own per-frame callbacks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

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
///
/// **Where a node's time goes.** The Debugger's Monitors show, for each kind of Entwine node, the
/// milliseconds per frame its own callbacks take (`entwine/<Class> (ms)`, debug builds; read them
/// from a script with `Performance.get_custom_monitor`). Behind them, each of Entwine's nodes adds the
/// thread CPU time of its own per-frame callbacks (a skeleton modifier's pass, a node's physics and
/// process callbacks, the ropes' batched step; the engine calls they make and the signal handlers
/// they run included) to a total per class while the timing is on (in debug builds, from the
/// start). Set against the frame's CPU time above a
/// scene without the node, it tells Entwine's share from the engine's work the node causes after
/// it returns (a skeleton recomputing its poses after a modifier wrote bones, physics moving a body
/// it moved). Off in release builds: each callback then costs one flag check; on, two clock reads,
/// whose own cost (measured when the timing is turned on) is taken off each callback's time.
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

    /// Turns the per-class timing of Entwine's own callbacks on or off (off by default; see the
    /// class description). The totals are kept; a reset clears them.
    #[func(rename = _set_own_timing)]
    pub fn set_own_timing(on: bool) {
        if on {
            // What two clock reads in a row cost (a system call on most platforms): taken off
            // every span, which holds about that much of its own reads.
            let read_cost = (0..32)
                .filter_map(|_| Some(cpu_nanos()?.abs_diff(cpu_nanos()?)))
                .min()
                .unwrap_or(0);
            OWN_READ_COST.store(read_cost, Relaxed);
        }
        OWN_TIMING.store(on, Relaxed);
    }

    /// Returns whether the timing is on.
    #[func(rename = _is_own_timing)]
    pub fn is_own_timing() -> bool {
        OWN_TIMING.load(Relaxed)
    }

    /// Clears every class's totals (time and calls).
    #[func(rename = _reset_own_time)]
    pub fn reset_own_time() {
        for part in &OWN {
            part.nanos.store(0, Relaxed);
            part.calls.store(0, Relaxed);
        }
    }

    /// Returns the thread CPU time, in microseconds, that nodes of `class_name` (e.g.
    /// `"SoldierBearing"`) have spent in their own per-frame callbacks while the timing
    /// was on, since the last a reset; -1 (with an error) for a class that is not
    /// one of Entwine's timed nodes, or where there is no thread CPU clock.
    #[func(rename = _get_own_time_usec)]
    pub fn own_time_usec(class_name: GString) -> f64 {
        match own_part(&class_name) {
            Some(_) if cpu_seconds(Clock::Thread).is_none() => -1.0,
            Some(part) => part.nanos.load(Relaxed) as f64 * 1e-3,
            None => -1.0,
        }
    }

    /// Returns how many timed callbacks nodes of `class_name` have run (see the time);
    /// -1 (with an error) for a class that is not one of Entwine's timed nodes.
    #[func(rename = _get_own_call_count)]
    pub fn own_calls(class_name: GString) -> i64 {
        own_part(&class_name).map_or(-1, |part| part.calls.load(Relaxed) as i64)
    }
}

/// The kinds of node whose callbacks [`own_time`] times, by class name.
#[derive(Clone, Copy)]
pub enum Own {
    SoldierBearing,
    LimbIk,
    RopeBoneChain,
    RopeSimulation,
    HoldHandComponent,
    FormationController,
    EnvironmentInteractionStateMachine,
}

/// Each [`Own`]'s class name, in its order (an [`Own`] indexes [`OWN`] and this).
pub const OWN_NAMES: [&str; 7] = [
    "EntwineSoldierBearing",
    "EntwineLimbIK",
    "EntwineRopeBoneChain",
    "RopeSimulation",
    "HoldHandComponent",
    "FormationController",
    "EnvironmentInteractionStateMachine",
];

/// A class's totals.
struct OwnTotal {
    nanos: AtomicU64,
    calls: AtomicU64,
}

static OWN_TIMING: AtomicBool = AtomicBool::new(false);
/// The cost of one clock read, ns, measured when the timing is turned on.
static OWN_READ_COST: AtomicU64 = AtomicU64::new(0);
static OWN: [OwnTotal; OWN_NAMES.len()] = [const {
    OwnTotal {
        nanos: AtomicU64::new(0),
        calls: AtomicU64::new(0),
    }
}; OWN_NAMES.len()];

/// Returns the totals (ns, calls) of the class at `index` in [`OWN_NAMES`].
pub fn own_totals(index: usize) -> (u64, u64) {
    OWN.get(index).map_or((0, 0), |part| {
        (part.nanos.load(Relaxed), part.calls.load(Relaxed))
    })
}

/// Returns the totals of the class named `name`, or `None` (with an error naming the classes).
fn own_part(name: &GString) -> Option<&'static OwnTotal> {
    let name = name.to_string();
    let found = OWN_NAMES.iter().position(|n| *n == name);
    if found.is_none() {
        godot_error!(
            "EntwineProfiler: '{name}' is not a timed Entwine class (one of {})",
            OWN_NAMES.join(", ")
        );
    }
    found.map(|i| &OWN[i])
}

/// A callback being timed: adds its thread CPU time to its class's total when dropped.
pub struct OwnSpan {
    part: Own,
    start: u64,
}

/// Starts timing a callback of `part`, when [`EntwineProfiler::set_own_timing`] is on: keep the
/// returned span alive for the callback's body (`let _own = own_time(Own::LimbIk);`).
pub fn own_time(part: Own) -> Option<OwnSpan> {
    if !OWN_TIMING.load(Relaxed) {
        return None;
    }
    let start = cpu_nanos()?;
    Some(OwnSpan { part, start })
}

impl Drop for OwnSpan {
    fn drop(&mut self) {
        if let Some(end) = cpu_nanos() {
            let total = &OWN[self.part as usize];
            let spent = end
                .saturating_sub(self.start)
                .saturating_sub(OWN_READ_COST.load(Relaxed));
            total.nanos.fetch_add(spent, Relaxed);
            total.calls.fetch_add(1, Relaxed);
        }
    }
}

/// Returns the calling thread's CPU time in nanoseconds, or `None` without a thread clock.
fn cpu_nanos() -> Option<u64> {
    cpu_seconds(Clock::Thread).map(|s| (s * 1e9) as u64)
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
