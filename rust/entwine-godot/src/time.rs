//! The glue's one clock: the engine's monotonic time in seconds, for timeouts, resends and
//! throttled warnings (never for simulation steps, which use the frame's delta).

use godot::classes::Time;
use godot::obj::Singleton as _;

/// Returns the engine's monotonic clock (time since the engine started), in seconds.
pub fn now() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}
