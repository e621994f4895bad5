//! The multiplayer server's gate for room calls from peers: a rate limit per peer, forged and
//! unknown calls rejected, refusals answered at a bounded rate, counters, and throttled warnings.
//!
//! Every table is fixed ([`PEER_SLOTS`] most recently heard peers), so a flooding client costs
//! neither memory nor allocations. The gate decides; the node sends, warns and applies.

use crate::kit::{KeyedTable, RateLimit, TokenBucket, WarnThrottle};

use super::room::{CallWire, PlayerId, RoomCall};

/// Peers whose rate limits and counters the server keeps (the most recently heard ones).
pub const PEER_SLOTS: usize = 64;
/// Seconds between two warnings of one kind about one peer.
pub const WARN_INTERVAL: f64 = 10.0;
/// Refusals the server sends one peer: a burst of 5, then 2 per second.
pub const REFUSALS: RateLimit = RateLimit {
    capacity: 5.0,
    per_second: 2.0,
};

/// What the server warns about a peer (each kind throttled separately).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GateWarn {
    /// More calls than the rate limit.
    Flood,
    /// A call acting for another player.
    Forged,
    /// A call of an unknown kind.
    Unknown,
    /// A refusal that could not be sent.
    Unreachable,
}

/// What the gate makes of one call. `warn` is `Some(held_back)` when a warning is due now
/// (`held_back` like it were held back since the last one), `None` when it is held back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Admission {
    /// The call passes: apply it.
    Pass(RoomCall),
    /// Dropped: the peer sends more than its rate limit.
    RateLimited {
        /// A warning is due (see [`Admission`]).
        warn: Option<u32>,
    },
    /// Dropped and counted as rejected: the call's kind is unknown.
    Unknown {
        /// A warning is due (see [`Admission`]).
        warn: Option<u32>,
    },
    /// Dropped and counted as rejected: the sender acted for another player.
    Forged {
        /// A warning is due (see [`Admission`]).
        warn: Option<u32>,
    },
}

/// One peer's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Calls that passed the rate limit.
    pub calls: u32,
    /// Calls dropped by the rate limit.
    pub rate_limited: u32,
    /// Calls that acted for another player, or were unknown.
    pub rejected: u32,
    /// Refusals answered.
    pub refusals_sent: u32,
    /// Refusals not answered because the peer was answered too often.
    pub refusals_dropped: u32,
}

/// Totals over every peer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Calls that passed the rate limit.
    pub calls: i64,
    /// Calls dropped by the rate limit.
    pub rate_limited: i64,
    /// Calls that acted for another player, or were unknown.
    pub rejected: i64,
    /// Refusals answered.
    pub refusals_sent: i64,
    /// Refusals not answered.
    pub refusals_dropped: i64,
    /// Refusals this peer received from the server (client side).
    pub refusals_received: i64,
    /// Warnings held back, over every peer and kind.
    pub warnings_suppressed: i64,
}

#[derive(Clone, Copy, Default)]
struct Peer {
    calls: TokenBucket,
    replies: TokenBucket,
    stats: PeerStats,
}

/// The server's gate: see the module.
#[derive(Clone, Copy)]
pub struct CallGate {
    peers: KeyedTable<PlayerId, Peer, PEER_SLOTS>,
    warns: WarnThrottle<(PlayerId, GateWarn), PEER_SLOTS>,
    stats: GateStats,
}

impl Default for CallGate {
    fn default() -> Self {
        Self {
            peers: KeyedTable::default(),
            warns: WarnThrottle::new(WARN_INTERVAL),
            stats: GateStats::default(),
        }
    }
}

impl CallGate {
    /// Judges the call `wire` from peer `sender` at time `now` (seconds), with `limit` calls per
    /// peer: rate limit first, then the kind, then whether the actor is the sender.
    pub fn admit(
        &mut self,
        sender: PlayerId,
        wire: CallWire,
        now: f64,
        limit: RateLimit,
    ) -> Admission {
        let passed = self.peers.entry(sender).is_none_or(|p| {
            let ok = p.calls.try_take(now, limit);
            if ok {
                p.stats.calls = p.stats.calls.saturating_add(1);
            } else {
                p.stats.rate_limited = p.stats.rate_limited.saturating_add(1);
            }
            ok
        });
        if !passed {
            self.stats.rate_limited += 1;
            let warn = self.warns.check((sender, GateWarn::Flood), now);
            return Admission::RateLimited { warn };
        }
        self.stats.calls += 1;
        let Some(call) = RoomCall::decode(wire) else {
            self.reject(sender);
            let warn = self.warns.check((sender, GateWarn::Unknown), now);
            return Admission::Unknown { warn };
        };
        if call.actor() != sender {
            self.reject(sender);
            let warn = self.warns.check((sender, GateWarn::Forged), now);
            return Admission::Forged { warn };
        }
        Admission::Pass(call)
    }

    /// Returns whether a refusal of `sender`'s call may be answered at time `now` (at most
    /// [`REFUSALS`] per peer), counting it as sent or dropped.
    pub fn answer_refusal(&mut self, sender: PlayerId, now: f64) -> bool {
        let answer = self
            .peers
            .entry(sender)
            .is_none_or(|p| p.replies.try_take(now, REFUSALS));
        if let Some(p) = self.peers.entry(sender) {
            let s = &mut p.stats;
            if answer {
                s.refusals_sent = s.refusals_sent.saturating_add(1);
            } else {
                s.refusals_dropped = s.refusals_dropped.saturating_add(1);
            }
        }
        if answer {
            self.stats.refusals_sent += 1;
        } else {
            self.stats.refusals_dropped += 1;
        }
        answer
    }

    /// Returns `Some(held_back)` when a warning that `sender` cannot be answered is due at `now`.
    pub fn unreachable(&mut self, sender: PlayerId, now: f64) -> Option<u32> {
        self.warns.check((sender, GateWarn::Unreachable), now)
    }

    /// Counts a refusal received from the server (client side).
    pub fn refusal_received(&mut self) {
        self.stats.refusals_received += 1;
    }

    /// Returns the totals.
    #[must_use]
    pub fn stats(&self) -> GateStats {
        GateStats {
            warnings_suppressed: i64::try_from(self.warns.suppressed()).unwrap_or(i64::MAX),
            ..self.stats
        }
    }

    /// Returns `peer`'s counters; all 0 for a peer not heard from (or forgotten).
    #[must_use]
    pub fn peer(&self, peer: PlayerId) -> PeerStats {
        self.peers.get(peer).map(|p| p.stats).unwrap_or_default()
    }

    fn reject(&mut self, peer: PlayerId) {
        self.stats.rejected += 1;
        if let Some(p) = self.peers.entry(peer) {
            p.stats.rejected = p.stats.rejected.saturating_add(1);
        }
    }
}

/// Returns the tail of a warning that says how many like it were held back (empty for none).
#[must_use]
pub fn held_back(held: u32) -> String {
    if held == 0 {
        String::new()
    } else {
        format!("; {held} more like it held back in the last {WARN_INTERVAL} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN: RateLimit = RateLimit::per_second(10.0);

    #[test]
    fn a_flooding_peer_gets_its_rate_and_one_warning_per_interval() {
        let mut gate = CallGate::default();
        let call = RoomCall::Cancel { by: 5 }.encode();
        let passed = (0..100)
            .filter(|_| matches!(gate.admit(5, call, 0.0, TEN), Admission::Pass(_)))
            .count();
        assert_eq!(passed, 10, "a burst of one second's worth");
        let s = gate.stats();
        assert_eq!((s.calls, s.rate_limited), (10, 90));
        assert_eq!(gate.peer(5).calls, 10);
        assert_eq!(gate.peer(5).rate_limited, 90);
        // The first drop warns, the other 89 are held back until the interval has passed.
        assert_eq!(s.warnings_suppressed, 89);
        assert_eq!(
            gate.admit(5, call, 0.05, TEN),
            Admission::RateLimited { warn: None }
        );
        let later = gate.admit(5, call, WARN_INTERVAL + 0.001, TEN);
        assert_eq!(later, Admission::Pass(RoomCall::Cancel { by: 5 }));
        // Another peer has its own bucket.
        assert!(matches!(
            gate.admit(6, RoomCall::Cancel { by: 6 }.encode(), 0.0, TEN),
            Admission::Pass(_)
        ));
    }

    #[test]
    fn forged_and_unknown_calls_are_rejected_and_counted() {
        let mut gate = CallGate::default();
        let forged = RoomCall::Request { from: 2, to: 3 }.encode();
        assert_eq!(
            gate.admit(9, forged, 0.0, TEN),
            Admission::Forged { warn: Some(0) }
        );
        assert_eq!(
            gate.admit(9, forged, 1.0, TEN),
            Admission::Forged { warn: None }
        );
        assert_eq!(
            gate.admit(9, (7, 9, 0), 1.0, TEN),
            Admission::Unknown { warn: Some(0) }
        );
        assert_eq!(gate.stats().rejected, 3);
        assert_eq!(gate.peer(9).rejected, 3);
        assert_eq!(gate.peer(9).calls, 3, "they passed the rate limit");
        assert_eq!(
            gate.admit(9, forged, 11.0, TEN),
            Admission::Forged { warn: Some(1) },
            "the next warning says one was held back"
        );
        assert_eq!(held_back(1), "; 1 more like it held back in the last 10 s");
        assert_eq!(held_back(0), "");
    }

    #[test]
    fn refusals_are_answered_at_a_burst_of_five_then_two_per_second() {
        let mut gate = CallGate::default();
        let answered = (0..20).filter(|_| gate.answer_refusal(4, 0.0)).count();
        assert_eq!(answered, 5);
        assert!(gate.answer_refusal(4, 0.5), "one more after half a second");
        assert!(!gate.answer_refusal(4, 0.5));
        let p = gate.peer(4);
        assert_eq!((p.refusals_sent, p.refusals_dropped), (6, 16));
        let s = gate.stats();
        assert_eq!((s.refusals_sent, s.refusals_dropped), (6, 16));
        gate.refusal_received();
        assert_eq!(gate.stats().refusals_received, 1);
        assert_eq!(gate.unreachable(4, 0.0), Some(0));
        assert_eq!(gate.unreachable(4, 1.0), None);
    }

    #[test]
    fn the_gate_forgets_the_least_recently_heard_peer_beyond_its_slots() {
        let mut gate = CallGate::default();
        for peer in 0..=PEER_SLOTS as i64 {
            let _ = gate.admit(peer, RoomCall::Cancel { by: peer }.encode(), 0.0, TEN);
        }
        assert_eq!(gate.peer(0), PeerStats::default(), "peer 0 was evicted");
        assert_eq!(gate.peer(PEER_SLOTS as i64).calls, 1);
        assert_eq!(gate.stats().calls, PEER_SLOTS as i64 + 1);
    }
}
