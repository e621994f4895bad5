//! The glue's one warning kit: each kind of bad input is reported once (until cleared) or at most
//! once per interval with a count of those held back, every message naming the node's path.
//!
//! What to print when is the core's (`kit::warn::WarnOnce`, `kit::WarnThrottle`); this prints it.

use entwine_core::kit::param::Param;
use entwine_core::kit::warn::{
    held_back_message, range_message, setting_message, vector_message, within, WarnOnce,
};
use entwine_core::kit::WarnThrottle;
use godot::prelude::*;

pub use entwine_core::kit::warn::{key_of, THROTTLE_SECONDS};

/// Returns how warnings name `node`: its class and its path in the tree (its name outside it),
/// e.g. `FormationController '/root/Level/Squad'`.
pub fn label(node: &Gd<impl Inherits<Node>>) -> String {
    let node = node.clone().upcast::<Node>();
    format!("{} '{}'", node.get_class(), crate::rig::label(&node))
}

/// Prints `message` as a warning about `node` (see [`label`]).
pub fn warn(node: &Gd<impl Inherits<Node>>, message: &str) {
    godot_warn!("{}: {message}", label(node));
}

/// A node's warning state: which kinds were printed once, and a throttle per kind.
///
/// Kinds are small integers the node names with constants (`0..`[`entwine_core::kit::warn::MAX_KINDS`]).
#[derive(Clone, Debug)]
pub struct Warnings {
    state: WarnOnce,
    throttle: WarnThrottle<u32, 8>,
}

impl Default for Warnings {
    fn default() -> Self {
        Self {
            state: WarnOnce::default(),
            throttle: WarnThrottle::new(THROTTLE_SECONDS),
        }
    }
}

impl Warnings {
    /// Prints `message` about `node` unless `kind` was already printed (and not cleared since).
    /// Returns whether it printed.
    pub fn once(&mut self, node: &Gd<impl Inherits<Node>>, kind: u32, message: &str) -> bool {
        let fresh = self.state.mark(kind);
        print_if(node, fresh, message)
    }

    /// Prints `message` about `node` once for `kind` (as [`Self::once`]) when there is one; when
    /// there is none the problem was fixed, and `kind` may print again.
    pub fn once_or_clear(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        kind: u32,
        message: Option<String>,
    ) {
        match message {
            Some(message) => {
                self.once(node, kind, &message);
            }
            None => self.clear(kind),
        }
    }

    /// Marks `kind` as printed. Returns true when it was not yet (the caller prints the warning
    /// itself, e.g. with a different prefix).
    pub fn mark(&mut self, kind: u32) -> bool {
        self.state.mark(kind)
    }

    /// Returns whether `kind` was printed and not cleared since.
    #[must_use]
    pub fn printed(&self, kind: u32) -> bool {
        self.state.printed(kind)
    }

    /// Lets `kind` print again (the problem was fixed).
    pub fn clear(&mut self, kind: u32) {
        self.state.clear(kind);
    }

    /// Lets every kind below `kinds` print again.
    pub fn clear_below(&mut self, kinds: u32) {
        self.state.clear_below(kinds);
    }

    /// Lets every kind print again.
    pub fn clear_all(&mut self) {
        self.state.clear_all();
    }

    /// Prints `message` about `node` unless it was already printed for (`kind`, `key`) — one
    /// warning per offending object, say. Returns whether it printed.
    pub fn once_for(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        kind: u32,
        key: u64,
        message: &str,
    ) -> bool {
        let fresh = self.state.mark_for(kind, key);
        print_if(node, fresh, message)
    }

    /// Returns whether a warning was printed for (`kind`, `key`) and not cleared since.
    #[must_use]
    pub fn printed_for(&self, kind: u32, key: u64) -> bool {
        self.state.printed_for(kind, key)
    }

    /// Prints `message` about `node` unless the last warning of `kind` had the same `key`: a
    /// problem that changes is reported again. Returns whether it printed.
    pub fn on_change(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        kind: u32,
        key: u64,
        message: &str,
    ) -> bool {
        let fresh = self.state.mark_change(kind, key);
        print_if(node, fresh, message)
    }

    /// Returns `value` when `valid`, else `fallback` with one warning naming the property `name`
    /// and why: "`name` `why` (got `value`); using `fallback`" (`why` e.g. "must be positive").
    /// The property warns again only after a valid value was seen. Formats nothing unless it
    /// warns, so it may be called every frame.
    pub fn property<T: Copy + std::fmt::Display>(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        value: T,
        valid: bool,
        fallback: T,
        why: &str,
    ) -> T {
        self.setting(node, name, valid, || {
            setting_message(name, why, value, fallback)
        });
        if valid {
            value
        } else {
            fallback
        }
    }

    /// Records whether the property `name` is `valid`; the first time it is not (since it last
    /// was), prints `message()` about `node`.
    pub fn setting(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        valid: bool,
        message: impl FnOnce() -> String,
    ) {
        if self.state.setting(name, valid) {
            warn(node, &message());
        }
    }

    /// [`Self::property`] for a number that must be finite and within `lo..=hi`: a finite value
    /// outside is clamped, a NaN or infinite one replaced by `default`. Warns "`name` must be in
    /// `lo`..=`hi` (got …); using …".
    pub fn f32_within(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        value: f32,
        lo: f32,
        hi: f32,
        default: f32,
    ) -> f32 {
        let (used, valid) = within(value, lo, hi, default, true);
        self.setting(node, name, valid, || {
            range_message(name, lo, hi, value, used)
        });
        used
    }

    /// [`Self::property`] for a tunable with a table entry: `value` (stored units) within the
    /// entry's range, else clamped (the default when not finite), warning in the inspector's
    /// units ([`Param::warning`]).
    pub fn param(&mut self, node: &Gd<impl Inherits<Node>>, spec: &Param, value: f32) -> f32 {
        let used = spec.clamped(value);
        let valid = value.is_finite() && used == value;
        self.setting(node, spec.name, valid, || spec.warning(value, used));
        used
    }

    /// [`Self::param`] for a whole number.
    pub fn count_param(&mut self, node: &Gd<impl Inherits<Node>>, spec: &Param, value: i32) -> i32 {
        self.param(node, spec, value as f32).round() as i32
    }

    /// [`Self::property`] for a vector that must be finite and within `-limit..=limit` on every
    /// axis (metres or directions): else `default`.
    pub fn vector_within(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        value: Vector3,
        limit: f32,
        default: Vector3,
    ) -> Vector3 {
        let valid = entwine_core::kit::warn::vector_within(crate::convert::vec3(value), limit);
        self.setting(node, name, valid, || {
            vector_message(name, limit, value, default)
        });
        if valid {
            value
        } else {
            default
        }
    }

    /// Forgets every key printed for `kind` (the problems were fixed or the objects are gone).
    pub fn clear_keys(&mut self, kind: u32) {
        self.state.clear_keys(kind);
    }

    /// Prints `message` about `node` unless `kind` was printed in the last [`THROTTLE_SECONDS`]
    /// (then counts it, and the next one printed says how many were held back). Returns whether
    /// it printed.
    pub fn throttled(&mut self, node: &Gd<impl Inherits<Node>>, kind: u32, message: &str) -> bool {
        let Some(held) = self.throttle.check(kind, crate::time::now()) else {
            return false;
        };
        warn(node, &held_back_message(message, held, THROTTLE_SECONDS));
        true
    }
}

/// Prints `message` about `node` when `fresh` (the bookkeeping said it is due); returns `fresh`.
fn print_if(node: &Gd<impl Inherits<Node>>, fresh: bool, message: &str) -> bool {
    if fresh {
        warn(node, message);
    }
    fresh
}
