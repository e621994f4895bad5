//! The glue's one warning kit: each kind of bad input is reported once (until cleared) or at most
//! once per interval with a count of those held back, every message naming the node's path.

use entwine_core::kit::WarnThrottle;
use godot::prelude::*;

/// Seconds between two throttled warnings of one kind.
pub const THROTTLE_SECONDS: f64 = 10.0;

/// The kind [`Warnings::property`] keys its warnings under (by property name); apart from the
/// kinds a node numbers itself.
const PROPERTY: u32 = u32::MAX;

/// Kinds a [`Warnings`] tells apart: `0..MAX_KINDS` (a larger kind shares the last one).
pub const MAX_KINDS: u32 = 64;

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
/// Kinds are small integers the node names with constants (`0..`[`MAX_KINDS`]).
#[derive(Clone, Debug)]
pub struct Warnings {
    printed: u64,
    throttle: WarnThrottle<u32, 8>,
    /// (kind, key) pairs printed by [`Warnings::once_for`] and [`Warnings::on_change`].
    keyed: Vec<(u32, u64)>,
}

/// Returns a key for a message or a name (for [`Warnings::on_change`]).
pub fn key_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Default for Warnings {
    fn default() -> Self {
        Self {
            printed: 0,
            throttle: WarnThrottle::new(THROTTLE_SECONDS),
            keyed: Vec::new(),
        }
    }
}

fn bit(kind: u32) -> u64 {
    1 << kind.min(MAX_KINDS - 1)
}

impl Warnings {
    /// Prints `message` about `node` unless `kind` was already printed (and not cleared since).
    /// Returns whether it printed.
    pub fn once(&mut self, node: &Gd<impl Inherits<Node>>, kind: u32, message: &str) -> bool {
        if !self.mark(kind) {
            return false;
        }
        warn(node, message);
        true
    }

    /// Marks `kind` as printed. Returns true when it was not yet (the caller prints the warning
    /// itself, e.g. with a different prefix).
    pub fn mark(&mut self, kind: u32) -> bool {
        let fresh = self.printed & bit(kind) == 0;
        self.printed |= bit(kind);
        fresh
    }

    /// Returns whether `kind` was printed and not cleared since.
    #[must_use]
    pub fn printed(&self, kind: u32) -> bool {
        self.printed & bit(kind) != 0
    }

    /// Lets `kind` print again (the problem was fixed).
    pub fn clear(&mut self, kind: u32) {
        self.printed &= !bit(kind);
    }

    /// Lets every kind below `kinds` print again.
    pub fn clear_below(&mut self, kinds: u32) {
        if kinds >= MAX_KINDS {
            self.printed = 0;
        } else {
            self.printed &= !((1u64 << kinds) - 1);
        }
    }

    /// Lets every kind print again.
    pub fn clear_all(&mut self) {
        self.printed = 0;
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
        if self.printed_for(kind, key) {
            return false;
        }
        self.keyed.push((kind, key));
        warn(node, message);
        true
    }

    /// Returns whether a warning was printed for (`kind`, `key`) and not cleared since.
    #[must_use]
    pub fn printed_for(&self, kind: u32, key: u64) -> bool {
        self.keyed.contains(&(kind, key))
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
        if self.printed_for(kind, key) {
            return false;
        }
        self.clear_keys(kind);
        self.once_for(node, kind, key, message)
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
        self.check(node, name, valid, || {
            format!("{name} {why} (got {value}); using {fallback}")
        });
        if valid {
            value
        } else {
            fallback
        }
    }

    /// Records whether the property `name` is `valid`; the first time it is not (since it last
    /// was), prints `message()` about `node`.
    fn check(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        valid: bool,
        message: impl FnOnce() -> String,
    ) {
        let key = key_of(name);
        if valid {
            if let Some(i) = self.keyed.iter().position(|&k| k == (PROPERTY, key)) {
                self.keyed.swap_remove(i);
            }
        } else if !self.printed_for(PROPERTY, key) {
            self.keyed.push((PROPERTY, key));
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
        self.f32_range(node, name, value, (lo, hi), default, true)
    }

    /// [`Self::f32_within`], with `default` (not the clamped value) for any value outside
    /// `lo..=hi`: for a setting whose nearest valid value would be as wrong as any other.
    pub fn f32_within_or_default(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        value: f32,
        lo: f32,
        hi: f32,
        default: f32,
    ) -> f32 {
        self.f32_range(node, name, value, (lo, hi), default, false)
    }

    fn f32_range(
        &mut self,
        node: &Gd<impl Inherits<Node>>,
        name: &str,
        value: f32,
        (lo, hi): (f32, f32),
        default: f32,
        clamp: bool,
    ) -> f32 {
        let valid = value.is_finite() && (lo..=hi).contains(&value);
        let used = if valid {
            value
        } else if clamp && value.is_finite() {
            value.clamp(lo, hi)
        } else {
            default
        };
        self.check(node, name, valid, || {
            format!("{name} must be in {lo}..={hi} (got {value}); using {used}")
        });
        used
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
        let a = value.abs();
        let valid = value.is_finite() && a.x.max(a.y).max(a.z) <= limit;
        self.check(node, name, valid, || {
            if limit == f32::MAX {
                format!("{name} must be finite (got {value}); using {default}")
            } else {
                format!("{name} must be finite and within ±{limit} (got {value}); using {default}")
            }
        });
        if valid {
            value
        } else {
            default
        }
    }

    /// Forgets every key printed for `kind` (the problems were fixed or the objects are gone).
    pub fn clear_keys(&mut self, kind: u32) {
        self.keyed.retain(|&(k, _)| k != kind);
    }

    /// Prints `message` about `node` unless `kind` was printed in the last [`THROTTLE_SECONDS`]
    /// (then counts it, and the next one printed says how many were held back). Returns whether
    /// it printed.
    pub fn throttled(&mut self, node: &Gd<impl Inherits<Node>>, kind: u32, message: &str) -> bool {
        let Some(held) = self.throttle.check(kind, crate::time::now()) else {
            return false;
        };
        if held > 0 {
            warn(
                node,
                &format!("{message} ({held} more like it in the last {THROTTLE_SECONDS:.0} s)"),
            );
        } else {
            warn(node, message);
        }
        true
    }
}
