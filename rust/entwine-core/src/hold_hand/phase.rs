//! How a replica's animation catches up the initiator's play position: how far to run a state
//! machine's tree ahead (learning the tree's rate), and when an `AnimationPlayer` seeks instead.

/// A play position less than this (s, about a frame at 60 Hz) behind the initiator's is left alone.
pub const PHASE_TOLERANCE: f32 = 0.02;
/// A play position less than this (s) ahead of the initiator's is left alone; further ahead, a
/// cycle is run round to the initiator's phase (a tree cannot run backwards).
pub const PHASE_AHEAD: f32 = 0.05;
/// Share of a play-position gap run ahead per frame (below 1 so that a misjudged rate of the
/// tree does not overshoot ahead, which costs a cycle).
pub const PHASE_GAIN: f32 = 0.8;
/// Longest cycle (s) whose phase is corrected by running the tree ahead.
pub const PHASE_CYCLE: f32 = 4.0;

/// A replica's catch-up of one state machine's play position by running its tree ahead.
///
/// A `TimeScale` above the machine multiplies the tree's step, so the rate seen at the last
/// correction (play-position seconds per second of tree advance) divides the next step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseCatchUp {
    rate: f32,
}

/// Returns whether a node of `length` seconds loops short enough to be run round.
fn cyclic(length: f32) -> bool {
    length > 0.0 && length <= PHASE_CYCLE
}

impl PhaseCatchUp {
    /// Returns how many seconds to advance the tree so that a play position `here` catches up
    /// `target` (both in a node of `length` seconds; 0 or less for an unknown length), or `None`
    /// to leave it alone: most of a gap behind ([`PHASE_GAIN`]), or round the cycle when more than
    /// [`PHASE_AHEAD`] ahead in a cycle of at most [`PHASE_CYCLE`].
    #[must_use]
    pub fn advance(&self, target: f32, here: f32, length: f32) -> Option<f32> {
        let cyclic = cyclic(length);
        let mut behind = target - here;
        if cyclic {
            behind = (behind + 0.5 * length).rem_euclid(length) - 0.5 * length;
        }
        let gap = if behind > PHASE_TOLERANCE && behind < PHASE_CYCLE {
            PHASE_GAIN * behind
        } else if cyclic && behind < -PHASE_AHEAD {
            length + behind
        } else {
            return None;
        };
        Some(gap / self.rate())
    }

    /// Learns the tree's rate from an advance of `step` seconds that moved the play position from
    /// `before` to `after` in the same node of `length` seconds (clamped to 0.1–4; a step of 1 ms
    /// or less teaches nothing).
    pub fn observe(&mut self, step: f32, before: f32, after: f32, length: f32) {
        let mut moved = after - before;
        if cyclic(length) {
            moved = moved.rem_euclid(length);
        }
        if step > 1e-3 {
            self.rate = (moved / step).clamp(0.1, 4.0);
        }
    }

    /// Returns the rate in use: the last one learnt, else 1.
    #[must_use]
    pub fn rate(&self) -> f32 {
        if self.rate > 0.0 {
            self.rate
        } else {
            1.0
        }
    }
}

/// Returns where an `AnimationPlayer` at `here` seeks to follow the play position `position` in an
/// animation of `length` seconds (wrapped into it when the length is known), or `None` when it is
/// within [`PHASE_TOLERANCE`] (measured round the loop).
#[must_use]
pub fn player_seek(position: f32, here: f32, length: f32) -> Option<f32> {
    let mut at = position;
    if length > 0.0 {
        at = at.rem_euclid(length);
    }
    let mut off = (at - here).abs();
    if length > 0.0 {
        off = off.min(length - off);
    }
    (off > PHASE_TOLERANCE).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f32>, b: f32) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-5)
    }

    #[test]
    fn a_position_behind_is_run_most_of_the_way_and_a_frame_is_left_alone() {
        let c = PhaseCatchUp::default();
        assert_eq!(c.advance(0.51, 0.5, 1.0), None, "10 ms behind");
        assert!(close(c.advance(1.0, 0.5, 2.0), 0.4));
        // Across the loop's end: 0.95 → 0.05 is 0.1 behind, not 0.9 ahead.
        assert!(close(c.advance(0.05, 0.95, 1.0), 0.08));
        // A long, non-cyclic node is caught up too, but never run round.
        assert!(close(c.advance(3.0, 1.0, 10.0), 1.6));
        assert_eq!(c.advance(1.0, 1.2, 10.0), None);
    }

    #[test]
    fn a_position_ahead_in_a_cycle_runs_round_to_the_initiators_phase() {
        let c = PhaseCatchUp::default();
        assert!(close(c.advance(0.4, 0.5, 1.0), 0.9));
        assert_eq!(c.advance(0.47, 0.5, 1.0), None, "30 ms ahead is left alone");
    }

    #[test]
    fn the_learnt_rate_divides_the_next_step() {
        let mut c = PhaseCatchUp::default();
        assert_eq!(c.rate(), 1.0);
        c.observe(0.4, 0.5, 0.7, 2.0);
        assert!((c.rate() - 0.5).abs() < 1e-6);
        assert!(close(c.advance(1.0, 0.5, 2.0), 0.8));
        // Round the loop end, and a tiny step teaches nothing.
        c.observe(0.2, 0.9, 0.1, 1.0);
        assert!((c.rate() - 1.0).abs() < 1e-5);
        c.observe(0.0005, 0.0, 0.5, 1.0);
        assert!((c.rate() - 1.0).abs() < 1e-5);
        c.observe(0.1, 0.0, 3.0, 10.0);
        assert_eq!(c.rate(), 4.0, "clamped");
    }

    #[test]
    fn a_player_seeks_only_when_off_by_more_than_a_frame_round_the_loop() {
        assert_eq!(player_seek(0.5, 0.51, 2.0), None);
        assert!(close(player_seek(0.5, 1.0, 2.0), 0.5));
        assert!(
            close(player_seek(2.1, 1.9, 2.0), 0.1),
            "0.2 apart across the loop"
        );
        assert_eq!(player_seek(2.1, 0.11, 2.0), None);
        assert_eq!(
            player_seek(1.99, 0.0, 2.0),
            None,
            "10 ms apart across the loop"
        );
        assert!(
            close(player_seek(5.0, 0.0, 0.0), 5.0),
            "unknown length: no wrap"
        );
    }
}
