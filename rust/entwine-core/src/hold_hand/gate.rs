//! The multiplayer server's gate for room calls from peers: the shared [`Inbox`] (rate limit per
//! peer, malformed and forged calls dropped, throttled warnings, the abuse score), plus refusals
//! answered at a bounded rate and per-peer counters.
//!
//! Every table is fixed ([`PEER_SLOTS`] most recently heard peers), so a flooding client costs
//! neither memory nor allocations. The gate decides; the node sends, warns and applies.

use crate::kit::inbox::{DropCounts, Dropped, Inbox, Verdict};
use crate::kit::{KeyedTable, RateLimit, TokenBucket, WarnThrottle};

use super::room::{PlayerId, RoomCall};

pub use crate::kit::inbox::{held_back, PEER_SLOTS, WARN_INTERVAL};
/// Refusals the server sends one peer: a burst of 5, then 2 per second.
pub const REFUSALS: RateLimit = RateLimit {
    capacity: 5.0,
    per_second: 2.0,
};

/// What the gate makes of one call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Admission {
    /// The call passes: apply it.
    Pass(RoomCall),
    /// Dropped (rate limited, malformed or forged): see the verdict.
    Dropped(Verdict),
}

/// One peer's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Calls that passed the rate limit.
    pub calls: u32,
    /// Calls dropped by the rate limit.
    pub rate_limited: u32,
    /// Calls that acted for another player, or were malformed.
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
    /// Calls that acted for another player, or were malformed.
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
    replies: TokenBucket,
    stats: PeerStats,
}

/// The server's gate: see the module.
#[derive(Clone, Copy)]
pub struct CallGate {
    inbox: Inbox,
    peers: KeyedTable<PlayerId, Peer, PEER_SLOTS>,
    unreachable: WarnThrottle<PlayerId, PEER_SLOTS>,
    stats: GateStats,
}

impl Default for CallGate {
    fn default() -> Self {
        Self {
            inbox: Inbox::default(),
            peers: KeyedTable::default(),
            unreachable: WarnThrottle::new(WARN_INTERVAL),
            stats: GateStats::default(),
        }
    }
}

impl CallGate {
    /// Judges the call `payload` (`None`: not a byte array) from peer `sender` at time `now`
    /// (seconds), with `limit` calls per peer and the `abuse` limit: rate limit first, then the
    /// bytes, then whether the actor is the sender.
    pub fn admit(
        &mut self,
        sender: PlayerId,
        payload: Option<&[u8]>,
        now: f64,
        limit: RateLimit,
        abuse: Option<RateLimit>,
    ) -> Admission {
        if let Err(v) = self.inbox.admit(sender, now, limit, abuse) {
            self.stats.rate_limited += 1;
            if let Some(p) = self.peers.entry(sender) {
                p.stats.rate_limited = p.stats.rate_limited.saturating_add(1);
            }
            return Admission::Dropped(v);
        }
        self.stats.calls += 1;
        if let Some(p) = self.peers.entry(sender) {
            p.stats.calls = p.stats.calls.saturating_add(1);
        }
        let why = match payload.and_then(RoomCall::decode) {
            None => Dropped::Malformed,
            Some(call) if call.actor() != sender => Dropped::Forged,
            Some(call) => return Admission::Pass(call),
        };
        self.stats.rejected += 1;
        if let Some(p) = self.peers.entry(sender) {
            p.stats.rejected = p.stats.rejected.saturating_add(1);
        }
        Admission::Dropped(self.inbox.drop(sender, why, now, abuse))
    }

    /// Judges a message from `sender` that only the server may send (`refused`, `replay`):
    /// `Err` with the verdict on a forged one.
    pub fn server_sent(
        &mut self,
        sender: PlayerId,
        now: f64,
        abuse: Option<RateLimit>,
    ) -> Result<(), Verdict> {
        self.inbox
            .sender_is(sender, crate::kit::inbox::SERVER, now, abuse)
    }

    /// Counts a message from `sender` dropped for `why` (see [`Inbox::drop`]).
    pub fn drop(
        &mut self,
        sender: PlayerId,
        why: Dropped,
        now: f64,
        abuse: Option<RateLimit>,
    ) -> Verdict {
        self.inbox.drop(sender, why, now, abuse)
    }

    /// The inbox in front of the room's messages (for the abuse policy: `Inbox::cut`,
    /// `Inbox::kept_warning`).
    pub fn inbox_mut(&mut self) -> &mut Inbox {
        &mut self.inbox
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
        self.unreachable.check(sender, now)
    }

    /// Counts a refusal received from the server (client side).
    pub fn refusal_received(&mut self) {
        self.stats.refusals_received += 1;
    }

    /// Returns the totals.
    #[must_use]
    pub fn stats(&self) -> GateStats {
        let held = self.inbox.counts().warnings_held_back
            + i64::try_from(self.unreachable.suppressed()).unwrap_or(i64::MAX);
        GateStats {
            warnings_suppressed: held,
            ..self.stats
        }
    }

    /// Returns the dropped messages by reason.
    #[must_use]
    pub fn dropped(&self) -> DropCounts {
        self.inbox.counts()
    }

    /// Returns `peer`'s counters; all 0 for a peer not heard from (or forgotten).
    #[must_use]
    pub fn peer(&self, peer: PlayerId) -> PeerStats {
        self.peers.get(peer).map(|p| p.stats).unwrap_or_default()
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
        let call = Some(call.as_slice());
        let passed = (0..100)
            .filter(|_| matches!(gate.admit(5, call, 0.0, TEN, None), Admission::Pass(_)))
            .count();
        assert_eq!(passed, 10, "a burst of one second's worth");
        let s = gate.stats();
        assert_eq!((s.calls, s.rate_limited), (10, 90));
        assert_eq!(gate.peer(5).calls, 10);
        assert_eq!(gate.peer(5).rate_limited, 90);
        // The first drop warns, the other 89 are held back until the interval has passed.
        assert_eq!(s.warnings_suppressed, 89);
        let held = Verdict {
            why: Dropped::RateLimited,
            warn: None,
            abusive: false,
        };
        assert_eq!(
            gate.admit(5, call, 0.05, TEN, None),
            Admission::Dropped(held)
        );
        let later = gate.admit(5, call, WARN_INTERVAL + 0.001, TEN, None);
        assert_eq!(later, Admission::Pass(RoomCall::Cancel { by: 5 }));
        // Another peer has its own bucket.
        assert!(matches!(
            gate.admit(
                6,
                Some(&RoomCall::Cancel { by: 6 }.encode()),
                0.0,
                TEN,
                None
            ),
            Admission::Pass(_)
        ));
    }

    #[test]
    fn forged_and_unknown_calls_are_rejected_and_counted() {
        let mut gate = CallGate::default();
        let forged = RoomCall::Request { from: 2, to: 3 }.encode();
        let forged = Some(forged.as_slice());
        let verdict = |why, warn| {
            Admission::Dropped(Verdict {
                why,
                warn,
                abusive: false,
            })
        };
        assert_eq!(
            gate.admit(9, forged, 0.0, TEN, None),
            verdict(Dropped::Forged, Some(0))
        );
        assert_eq!(
            gate.admit(9, forged, 1.0, TEN, None),
            verdict(Dropped::Forged, None)
        );
        let mut unknown = RoomCall::Cancel { by: 9 }.encode();
        unknown[0] = 7;
        assert_eq!(
            gate.admit(9, Some(&unknown), 1.0, TEN, None),
            verdict(Dropped::Malformed, Some(0))
        );
        assert_eq!(gate.stats().rejected, 3);
        assert_eq!(gate.peer(9).rejected, 3);
        assert_eq!(gate.peer(9).calls, 3, "they passed the rate limit");
        assert_eq!(
            gate.admit(9, forged, 11.0, TEN, None),
            verdict(Dropped::Forged, Some(1)),
            "the next warning says one was held back"
        );
        assert_eq!(gate.dropped().forged, 3);
        assert_eq!(gate.dropped().malformed, 1);
        assert_eq!(
            gate.admit(9, None, 11.0, TEN, None),
            verdict(Dropped::Malformed, Some(0)),
            "an argument that is not a byte array is malformed"
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
            let call = RoomCall::Cancel { by: peer }.encode();
            let _ = gate.admit(peer, Some(&call), 0.0, TEN, None);
        }
        assert_eq!(gate.peer(0), PeerStats::default(), "peer 0 was evicted");
        assert_eq!(gate.peer(PEER_SLOTS as i64).calls, 1);
        assert_eq!(gate.stats().calls, PEER_SLOTS as i64 + 1);
    }
}
