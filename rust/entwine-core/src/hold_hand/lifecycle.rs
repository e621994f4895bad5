//! The component's runtime phase: None → Preparing → Active, Preparing lasting exactly one
//! frame.
//!
//! The room's [`Interaction`] arriving starts *Preparing*: the recipient freezes and is placed at the
//! preparation point. Following starts on the next frame (the "formal start frame"), so that a state
//! arriving mid-frame never resets and drives the pair in the same frame. A change of type, role or
//! partner restarts from Preparing; the state disappearing (or an invalid configuration) stops.

use super::room::Interaction;

/// Where a component is in its interaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Phase {
    /// No interaction.
    #[default]
    None,
    /// The interaction arrived; following starts on the next frame.
    Preparing,
    /// Following, mirroring and hand IK are running.
    Active,
}

/// A phase change, for the owner to act on (freeze, align, restore) and to signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseChange {
    /// The phase left.
    pub from: Phase,
    /// The phase entered.
    pub to: Phase,
}

/// Tracks the phase from the room's state, one call per frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lifecycle {
    phase: Phase,
    current: Option<Interaction>,
    formal_start_frame: u64,
}

impl Lifecycle {
    /// Returns the current phase.
    #[must_use]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Returns the interaction the phase is running for (`None` in [`Phase::None`]).
    #[must_use]
    pub fn interaction(&self) -> Option<Interaction> {
        self.current
    }

    /// Advances with the room's `state` for this player at frame `frame`; `config_valid` is false when
    /// the component cannot run (then it stops). Returns the change, if any.
    pub fn update(
        &mut self,
        state: Option<Interaction>,
        config_valid: bool,
        frame: u64,
    ) -> Option<PhaseChange> {
        let from = self.phase;
        let state = state.filter(|_| config_valid);
        match (self.phase, state) {
            (Phase::None, None) => return None,
            (_, None) => {
                self.phase = Phase::None;
                self.current = None;
            }
            (Phase::None, Some(s)) => self.begin(s, frame),
            (_, Some(s)) if Some(s) != self.current => self.begin(s, frame),
            (Phase::Preparing, Some(_)) if frame >= self.formal_start_frame => {
                self.phase = Phase::Active;
            }
            _ => return None,
        }
        Some(PhaseChange {
            from,
            to: self.phase,
        })
    }

    fn begin(&mut self, state: Interaction, frame: u64) {
        self.phase = Phase::Preparing;
        self.current = Some(state);
        self.formal_start_frame = frame + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::room::{Role, HOLD_HAND};
    use super::*;

    const A: Interaction = Interaction {
        role: Role::Initiator,
        partner: 2,
        kind: HOLD_HAND,
    };

    fn change(from: Phase, to: Phase) -> Option<PhaseChange> {
        Some(PhaseChange { from, to })
    }

    #[test]
    fn one_preparation_frame_then_active() {
        let mut l = Lifecycle::default();
        assert_eq!(l.update(None, true, 0), None);
        assert_eq!(
            l.update(Some(A), true, 10),
            change(Phase::None, Phase::Preparing)
        );
        assert_eq!(l.update(Some(A), true, 10), None, "not in the same frame");
        assert_eq!(
            l.update(Some(A), true, 11),
            change(Phase::Preparing, Phase::Active)
        );
        assert_eq!(l.update(Some(A), true, 12), None);
        assert_eq!(l.phase(), Phase::Active);
    }

    #[test]
    fn changed_fields_restart_from_preparing() {
        let mut l = Lifecycle::default();
        l.update(Some(A), true, 0);
        l.update(Some(A), true, 1);
        for changed in [
            Interaction { partner: 3, ..A },
            Interaction {
                role: Role::Recipient,
                ..A
            },
            Interaction { kind: 2, ..A },
        ] {
            assert_eq!(
                l.update(Some(changed), true, 5),
                change(Phase::Active, Phase::Preparing)
            );
            assert_eq!(l.interaction(), Some(changed));
            assert_eq!(
                l.update(Some(changed), true, 6),
                change(Phase::Preparing, Phase::Active)
            );
        }
    }

    #[test]
    fn state_gone_or_invalid_config_stops() {
        let mut l = Lifecycle::default();
        l.update(Some(A), true, 0);
        assert_eq!(
            l.update(None, true, 0),
            change(Phase::Preparing, Phase::None)
        );
        l.update(Some(A), true, 1);
        l.update(Some(A), true, 2);
        assert_eq!(
            l.update(Some(A), false, 3),
            change(Phase::Active, Phase::None)
        );
        assert_eq!(l.interaction(), None);
        assert_eq!(
            l.update(Some(A), false, 4),
            None,
            "stays stopped while invalid"
        );
    }
}
