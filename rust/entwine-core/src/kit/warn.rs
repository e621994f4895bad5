//! Warn-once bookkeeping for a node: which kinds of warning it printed (each once until cleared),
//! which (kind, key) pairs, and which settings are bad right now. The glue prints; this decides.

use glam::Vec3;

/// Kinds a [`WarnOnce`] tells apart: `0..MAX_KINDS` (a larger kind shares the last one).
pub const MAX_KINDS: u32 = 64;

/// The kind [`WarnOnce::setting`] keys its warnings under (by the setting's name), apart from the
/// kinds a node numbers itself.
const SETTING: u32 = u32::MAX;

/// Which warnings a node printed: see the module.
#[derive(Clone, Debug, Default)]
pub struct WarnOnce {
    printed: u64,
    /// (kind, key) pairs printed by [`WarnOnce::mark_for`], [`WarnOnce::mark_change`] and
    /// [`WarnOnce::setting`].
    keyed: Vec<(u32, u64)>,
}

fn bit(kind: u32) -> u64 {
    1 << kind.min(MAX_KINDS - 1)
}

/// Returns a key for a message or a name (for [`WarnOnce::mark_for`] and friends).
#[must_use]
pub fn key_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Returns the key of the problem a warning names: [`key_of`] its text up to where it names the
/// value it got (` (got …`), so another bad value of the same setting is the same problem and is
/// not warned about again.
pub fn problem_key(message: &str) -> u64 {
    key_of(message.split(" (got").next().unwrap_or(message))
}

impl WarnOnce {
    /// Marks `kind` as printed. Returns true when it was not yet (the caller prints it now).
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

    /// Lets every numbered kind print again (keyed warnings stay printed).
    pub fn clear_all(&mut self) {
        self.printed = 0;
    }

    /// Marks (`kind`, `key`) as printed — one warning per offending object, say. Returns true when
    /// it was not yet.
    pub fn mark_for(&mut self, kind: u32, key: u64) -> bool {
        if self.printed_for(kind, key) {
            return false;
        }
        self.keyed.push((kind, key));
        true
    }

    /// Returns whether (`kind`, `key`) was printed and not cleared since.
    #[must_use]
    pub fn printed_for(&self, kind: u32, key: u64) -> bool {
        self.keyed.contains(&(kind, key))
    }

    /// Marks (`kind`, `key`) as the last problem of `kind`: true unless it already was, so a
    /// problem that changes is reported again.
    pub fn mark_change(&mut self, kind: u32, key: u64) -> bool {
        if self.printed_for(kind, key) {
            return false;
        }
        self.clear_keys(kind);
        self.mark_for(kind, key)
    }

    /// Forgets every key printed for `kind` (the problems were fixed or the objects are gone).
    pub fn clear_keys(&mut self, kind: u32) {
        self.keyed.retain(|&(k, _)| k != kind);
    }

    /// Records whether the setting `name` is `valid`. Returns true the first time it is not, since
    /// it last was (the caller prints then). A valid setting while none is warned about (every
    /// frame, as a rule) costs one scan of the few warnings kept, and no hashing of `name`.
    pub fn setting(&mut self, name: &str, valid: bool) -> bool {
        if valid {
            if self.keyed.iter().any(|&(kind, _)| kind == SETTING) {
                let key = (SETTING, key_of(name));
                if let Some(i) = self.keyed.iter().position(|&k| k == key) {
                    self.keyed.swap_remove(i);
                }
            }
            false
        } else {
            self.mark_for(SETTING, key_of(name))
        }
    }
}

/// Returns the value a setting that must be finite and within `lo..=hi` uses, and whether `value`
/// was valid: `value` itself; else a finite value clamped (with `clamp`) or `default`.
#[must_use]
pub fn within(value: f32, lo: f32, hi: f32, default: f32, clamp: bool) -> (f32, bool) {
    let valid = value.is_finite() && (lo..=hi).contains(&value);
    let used = if valid {
        value
    } else if clamp && value.is_finite() {
        value.clamp(lo, hi)
    } else {
        default
    };
    (used, valid)
}

/// Returns the value an integer setting that must be within `lo..=hi` uses (`value` clamped), and
/// whether `value` was valid: the integer counterpart of [`within`].
#[must_use]
pub fn int_within<T: Ord + Copy>(value: T, lo: T, hi: T) -> (T, bool) {
    let used = value.clamp(lo, hi);
    (used, used == value)
}

/// [`int_within`] with the warning to print when `value` was corrected: `{name} must be in
/// {lo}..={hi} (got {value}); using {used}`, the text of [`range_message`].
#[must_use]
pub fn int_checked<T>(name: &str, value: T, lo: T, hi: T) -> (T, Option<String>)
where
    T: Ord + Copy + core::fmt::Display,
{
    let (used, valid) = int_within(value, lo, hi);
    (
        used,
        (!valid).then(|| range_message(name, lo, hi, value, used)),
    )
}

/// [`int_within`] worded as a count that is out of range: `{name} {value} is out of range;
/// accepted {lo}..={hi}{note}, using {used}` (`note` says what bounds it, e.g. ` (the point
/// slots)`, or is empty).
#[must_use]
pub fn int_accepted<T>(name: &str, value: T, lo: T, hi: T, note: &str) -> (T, Option<String>)
where
    T: Ord + Copy + core::fmt::Display,
{
    let (used, valid) = int_within(value, lo, hi);
    let message = (!valid).then(|| {
        format!("{name} {value} is out of range; accepted {lo}..={hi}{note}, using {used}")
    });
    (used, message)
}

/// Returns whether a vector setting is usable: finite, and no component beyond ±`limit`.
#[must_use]
pub fn vector_within(value: Vec3, limit: f32) -> bool {
    value.is_finite() && value.abs().max_element() <= limit
}

/// The warning for a numeric setting outside `lo..=hi` (or NaN), and the value used instead.
pub fn range_message<T: core::fmt::Display>(name: &str, lo: T, hi: T, value: T, used: T) -> String {
    format!("{name} must be in {lo}..={hi} (got {value}); using {used}")
}

/// The warning for a vector setting that is not finite or has a component beyond ±`limit`
/// (`f32::MAX`: only finiteness is asked), and the value used instead.
pub fn vector_message<T: core::fmt::Display>(name: &str, limit: f32, value: T, used: T) -> String {
    if limit == f32::MAX {
        format!("{name} must be finite (got {value}); using {used}")
    } else {
        format!("{name} must be finite and within ±{limit} (got {value}); using {used}")
    }
}

/// Seconds between two throttled warnings of one kind (the glue's `Warnings::throttled`).
pub const THROTTLE_SECONDS: f64 = 10.0;

/// The text of a throttled warning let through after `held` like it were held back in the last
/// `seconds`: `message` itself when none was, else with the count appended.
#[must_use]
pub fn held_back_message(message: &str, held: u32, seconds: f64) -> std::borrow::Cow<'_, str> {
    if held == 0 {
        return message.into();
    }
    format!("{message} ({held} more like it in the last {seconds:.0} s)").into()
}

/// The warning for a setting that is not what it must be (`why`, e.g. "must be a horizontal
/// direction"), and the value used instead.
pub fn setting_message<T: core::fmt::Display>(name: &str, why: &str, value: T, used: T) -> String {
    format!("{name} {why} (got {value}); using {used}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_prints_once_until_cleared() {
        let mut w = WarnOnce::default();
        assert!(w.mark(3) && !w.mark(3) && w.printed(3));
        w.clear(3);
        assert!(!w.printed(3) && w.mark(3));
        // Kinds past the last share it.
        assert!(w.mark(MAX_KINDS - 1) && !w.mark(MAX_KINDS + 5));
        w.mark(1);
        w.clear_below(2);
        assert!(!w.printed(1) && w.printed(3));
        w.clear_below(MAX_KINDS);
        assert!(!w.printed(3));
        w.mark(7);
        w.clear_all();
        assert!(!w.printed(7));
    }

    #[test]
    fn keyed_warnings_print_once_per_key_and_again_when_the_problem_changes() {
        let mut w = WarnOnce::default();
        assert!(w.mark_for(1, 10) && w.mark_for(1, 11) && !w.mark_for(1, 10));
        assert!(w.printed_for(1, 11));
        assert!(w.mark_change(2, key_of("a")));
        assert!(!w.mark_change(2, key_of("a")), "the same problem");
        assert!(w.mark_change(2, key_of("b")), "a new one");
        assert!(!w.printed_for(2, key_of("a")), "the old one is forgotten");
        assert!(w.printed_for(1, 10), "other kinds keep theirs");
        w.clear_keys(1);
        assert!(!w.printed_for(1, 10) && w.mark_for(1, 10));
        w.clear_all();
        assert!(w.printed_for(1, 10), "clear_all leaves keyed warnings");
    }

    #[test]
    fn a_setting_warns_once_while_bad_and_again_after_a_valid_value() {
        let mut w = WarnOnce::default();
        assert!(w.setting("max_speed", false));
        assert!(!w.setting("max_speed", false));
        assert!(!w.setting("max_speed", true));
        assert!(w.setting("max_speed", false));
        assert!(w.setting("other", false), "settings are apart");
        // A valid value clears only its own setting.
        assert!(!w.setting("other", true));
        assert!(!w.setting("max_speed", false), "still warned about");
        assert!(!w.setting("max_speed", true));
        assert!(w.setting("max_speed", false));
    }

    #[test]
    fn within_clamps_finite_values_or_takes_the_default() {
        assert_eq!(within(0.5, 0.0, 1.0, 0.2, true), (0.5, true));
        assert_eq!(within(3.0, 0.0, 1.0, 0.2, true), (1.0, false));
        assert_eq!(within(3.0, 0.0, 1.0, 0.2, false), (0.2, false));
        assert_eq!(within(f32::NAN, 0.0, 1.0, 0.2, true), (0.2, false));
        assert_eq!(within(f32::NEG_INFINITY, 0.0, 1.0, 0.2, true), (0.2, false));
    }

    #[test]
    fn an_integer_setting_is_clamped_with_the_message_of_its_range() {
        assert_eq!(int_within(500, 1, 100_000), (500, true));
        assert_eq!(int_within(0, 1, 100_000), (1, false));
        assert_eq!(int_within(i64::MAX, 1, 8), (8, false));
        assert_eq!(int_checked("record_frames", 1, 1, 100_000), (1, None));
        assert_eq!(
            int_checked("internal_agent_count", -3, 0, 65_536),
            (
                0,
                Some("internal_agent_count must be in 0..=65536 (got -3); using 0".into())
            )
        );
        assert_eq!(
            int_checked("record_frames", i32::MAX, 1, 100_000)
                .1
                .as_deref(),
            Some("record_frames must be in 1..=100000 (got 2147483647); using 100000")
        );
        assert_eq!(int_accepted("tube_sides", 64, 3, 64, ""), (64, None));
        assert_eq!(
            int_accepted("tube_sides", 2, 3, 64, ""),
            (
                3,
                Some("tube_sides 2 is out of range; accepted 3..=64, using 3".into())
            )
        );
        assert_eq!(
            int_accepted("point_count", 1, 2, 32, " (the point slots)")
                .1
                .as_deref(),
            Some("point_count 1 is out of range; accepted 2..=32 (the point slots), using 2")
        );
    }

    #[test]
    fn a_problem_key_ignores_the_value_it_names() {
        let a = problem_key("character_height must be a finite height > 0 (got NaN)");
        let b = problem_key("character_height must be a finite height > 0 (got -1)");
        assert_eq!(a, b);
        assert_eq!(a, key_of("character_height must be a finite height > 0"));
        assert_ne!(a, problem_key("left_arm_bones must list 3 bones (got 2)"));
        assert_eq!(problem_key("no value here"), key_of("no value here"));
    }

    #[test]
    fn a_throttled_warning_says_how_many_were_held_back() {
        assert_eq!(
            held_back_message("peer 3 flooded", 0, 10.0),
            "peer 3 flooded"
        );
        assert_eq!(
            held_back_message("peer 3 flooded", 4, THROTTLE_SECONDS),
            "peer 3 flooded (4 more like it in the last 10 s)"
        );
    }

    #[test]
    fn setting_messages_name_the_setting_the_value_and_what_is_used() {
        assert!(vector_within(Vec3::new(1e6, -1e6, 0.0), 1e6));
        assert!(!vector_within(Vec3::new(0.0, -1.5e6, 0.0), 1e6));
        assert!(!vector_within(Vec3::NAN, f32::MAX));
        assert!(vector_within(Vec3::splat(3e38), f32::MAX));
        assert_eq!(
            range_message("influence", 0.0, 1.0, 2.5, 1.0),
            "influence must be in 0..=1 (got 2.5); using 1"
        );
        assert_eq!(
            vector_message("pole_direction", f32::MAX, "(NaN, 0, 0)", "(0, 0, 0)"),
            "pole_direction must be finite (got (NaN, 0, 0)); using (0, 0, 0)"
        );
        assert_eq!(
            vector_message("offset", 10.0, "(20, 0, 0)", "(0, 0, 0)"),
            "offset must be finite and within ±10 (got (20, 0, 0)); using (0, 0, 0)"
        );
        assert_eq!(
            setting_message(
                "body_forward",
                "must be a horizontal direction",
                "(0, 1, 0)",
                "(0, 0, -1)"
            ),
            "body_forward must be a horizontal direction (got (0, 1, 0)); using (0, 0, -1)"
        );
    }
}
