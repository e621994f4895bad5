//! The glue's one warning kit: each kind of bad input is reported once (until cleared) or at most
//! once per interval with a count of those held back, every message naming the node's path.

use entwine_core::kit::WarnThrottle;
use godot::prelude::*;

/// Seconds between two throttled warnings of one kind.
pub const THROTTLE_SECONDS: f64 = 10.0;

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
