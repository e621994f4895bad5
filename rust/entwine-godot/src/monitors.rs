//! Entwine's entries in the editor's Debugger → Monitors (readable by scripts through
//! `Performance.get_custom_monitor`): for each kind of Entwine node, the CPU time its own per-frame
//! callbacks took, in milliseconds per frame, averaged over the frames since the monitor was last
//! read. Registered once the main loop exists, in debug builds only (a release build keeps the
//! timing off and pays nothing); the monitors are named `entwine/<Class> (ms)`.

use std::cell::RefCell;

use godot::classes::{Engine, Os, Performance};
use godot::prelude::*;

use crate::time;

/// What each monitor read last: the class's total (ns) and the frame count then.
struct Last {
    nanos: u64,
    frame: u64,
}

thread_local! {
    static REGISTERED: RefCell<Vec<StringName>> = const { RefCell::new(Vec::new()) };
}

/// The monitor's id for `class`.
fn monitor_id(class: &str) -> StringName {
    StringName::from(&format!("entwine/{class} (ms)"))
}

/// Registers one monitor per timed class and turns the per-class timing on (debug builds only).
pub fn register() {
    if !Os::singleton().is_debug_build() {
        return;
    }
    let mut performance = Performance::singleton();
    let mut ids = Vec::new();
    for (index, class) in time::OWN_NAMES.iter().enumerate() {
        let id = monitor_id(class);
        if performance.has_custom_monitor(&id) {
            continue;
        }
        let mut last = Last { nanos: 0, frame: 0 };
        let read = Callable::from_fn(format!("entwine_monitor_{class}"), move |_| {
            let (nanos, _) = time::own_totals(index);
            let frame = Engine::singleton().get_process_frames();
            let frames = frame.saturating_sub(last.frame).max(1);
            let ms = nanos.saturating_sub(last.nanos) as f64 * 1e-6 / frames as f64;
            last = Last { nanos, frame };
            ms
        });
        performance.add_custom_monitor(&id, &read);
        ids.push(id);
    }
    time::EntwineProfiler::set_own_timing(true);
    REGISTERED.with(|r| r.borrow_mut().extend(ids));
}

/// Removes the monitors [`register`] added (before the library is unloaded).
pub fn unregister() {
    let ids = REGISTERED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    if ids.is_empty() {
        return;
    }
    let mut performance = Performance::singleton();
    for id in ids {
        if performance.has_custom_monitor(&id) {
            performance.remove_custom_monitor(&id);
        }
    }
}
