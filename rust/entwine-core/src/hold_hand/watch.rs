//! A recipient's watch over an initiator on another peer, and who writes a character's root.
//!
//! The recipient's peer counts the initiator's silence itself (so a pair whose initiator crashed or
//! never loaded still ends): after `timeout` seconds without a frame it gives the initiator up, and
//! before the pair's first frame it waits `start_timeout` (the initiator may hear of the pair
//! seconds after the recipient on a lossy link). A frame heard after giving up takes the recipient
//! back.

use super::lifecycle::Phase;
use super::room::Role;

/// The recipient's count of the initiator's silence.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InitiatorWatch {
    silence: f32,
    heard: bool,
    released: bool,
}

impl InitiatorWatch {
    /// Counts `dt` seconds more of silence and returns how long the silence has lasted when it
    /// reaches the limit now, giving the initiator up: `timeout` once a frame was heard in this
    /// pair, else the longer of `timeout` and `start_timeout`. Returns `None` while the silence is
    /// shorter, and after the initiator was given up. A negative or non-finite `dt` counts as 0.
    pub fn tick(&mut self, dt: f32, timeout: f32, start_timeout: f32) -> Option<f32> {
        if self.released {
            return None;
        }
        if dt.is_finite() {
            self.silence += dt.max(0.0);
        }
        let limit = if self.heard {
            timeout
        } else {
            start_timeout.max(timeout)
        };
        if self.silence < limit {
            return None;
        }
        self.released = true;
        Some(self.silence)
    }

    /// Notes a frame from the initiator; returns whether it takes back a recipient that was given
    /// up (`paired_recipient`: this character is still the pair's recipient).
    pub fn heard(&mut self, paired_recipient: bool) -> bool {
        self.silence = 0.0;
        self.heard = true;
        if self.released && paired_recipient {
            self.released = false;
            return true;
        }
        false
    }

    /// Returns whether the initiator was given up.
    #[must_use]
    pub fn released(&self) -> bool {
        self.released
    }

    /// Returns the seconds since the initiator was last heard (or since the pair began).
    #[must_use]
    pub fn silence(&self) -> f32 {
        self.silence
    }

    /// Starts over for a new pair.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Returns whether the pair writes a character's root (so the game's own position sync must step
/// aside): a recipient's always while it is paired and not given up; an initiator's on every peer
/// but the one that plays it (`owned`).
#[must_use]
pub fn root_driven(phase: Phase, role: Option<Role>, released: bool, owned: bool) -> bool {
    phase != Phase::None
        && !released
        && match role {
            Some(Role::Recipient) => true,
            Some(Role::Initiator) => !owned,
            None => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time step that adds up exactly in f32.
    const DT: f32 = 1.0 / 64.0;

    fn ticks_until_released(w: &mut InitiatorWatch, timeout: f32, start: f32) -> usize {
        (1..10_000)
            .find(|_| w.tick(DT, timeout, start).is_some())
            .unwrap_or(usize::MAX)
    }

    #[test]
    fn before_the_first_frame_the_longer_start_timeout_applies_then_the_timeout() {
        let mut w = InitiatorWatch::default();
        // 10 s before any frame…
        assert_eq!(ticks_until_released(&mut w, 3.0, 10.0), 640);
        assert!(w.released());
        // …then, once a frame took it back, 3 s of silence.
        assert!(w.heard(true));
        assert!(!w.released());
        assert_eq!(ticks_until_released(&mut w, 3.0, 10.0), 192);
        // A start timeout shorter than the timeout does not shorten it.
        let mut w = InitiatorWatch::default();
        assert_eq!(ticks_until_released(&mut w, 3.0, 1.0), 192);
    }

    #[test]
    fn frames_keep_the_watch_quiet_and_a_given_up_initiator_is_reported_once() {
        let mut w = InitiatorWatch::default();
        for _ in 0..1_000 {
            assert_eq!(w.tick(DT, 3.0, 10.0), None);
            w.heard(true);
        }
        let n = ticks_until_released(&mut w, 3.0, 10.0);
        assert_eq!(n, 192);
        for _ in 0..100 {
            assert_eq!(w.tick(DT, 3.0, 10.0), None);
        }
        // A frame for a character that is no longer the recipient does not take it back.
        assert!(!w.heard(false));
        assert!(w.released());
    }

    #[test]
    fn bad_time_steps_count_as_nothing() {
        let mut w = InitiatorWatch::default();
        for dt in [f32::NAN, f32::INFINITY, -5.0, f32::NEG_INFINITY] {
            assert_eq!(w.tick(dt, 3.0, 10.0), None);
        }
        assert_eq!(w.silence(), 0.0);
    }

    #[test]
    fn a_root_is_driven_by_the_pair_where_it_is_not_played() {
        use Phase::{Active, None as Unpaired, Preparing};
        use Role::{Initiator, Recipient};
        for phase in [Preparing, Active] {
            assert!(root_driven(phase, Some(Recipient), false, true));
            assert!(root_driven(phase, Some(Recipient), false, false));
            assert!(!root_driven(phase, Some(Recipient), true, false));
            assert!(root_driven(phase, Some(Initiator), false, false));
            assert!(!root_driven(phase, Some(Initiator), false, true));
            assert!(!root_driven(phase, None, false, false));
        }
        assert!(!root_driven(Unpaired, Some(Recipient), false, false));
    }
}
