//! The gate in front of every network message a node receives: a size cap, a per-peer rate
//! limit, the sender check, counters by reason, warnings throttled per peer and reason, and the
//! abuse score that tells the server when to disconnect a peer.
//!
//! Every message arrives as one byte array (see [`Inbox::bytes`]), so nothing a peer sends is
//! rejected, or printed, before Entwine has judged it. Tables are fixed ([`PEER_SLOTS`] most
//! recently heard peers): a flood costs neither memory nor allocations. The inbox decides; the
//! node reads, warns and disconnects.

use super::limit::{KeyedTable, RateLimit, TokenBucket, WarnThrottle};

/// A multiplayer peer id (the server is [`SERVER`]).
pub type PeerId = i64;
/// The server's peer id in Godot's high-level multiplayer.
pub const SERVER: PeerId = 1;
/// Peers whose buckets and scores the inbox keeps (the most recently heard ones).
pub const PEER_SLOTS: usize = 64;
/// Seconds between two warnings of one reason about one peer, and between two abuse reports.
pub const WARN_INTERVAL: f64 = 10.0;
/// The abuse limit's default: dropped calls per second a peer may cause (a burst of
/// [`ABUSE_BURST_SECONDS`] worth) before the server disconnects it.
pub const ABUSE_PER_SECOND: f32 = 50.0;
/// How many seconds' worth of dropped calls a peer may cause at once.
pub const ABUSE_BURST_SECONDS: f32 = 10.0;

/// Why a message was dropped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dropped {
    /// The peer sends more than the rate limit.
    RateLimited,
    /// The sender may not send this message (not the server, not the player it speaks for).
    Forged,
    /// Not a byte array, too big, or bytes that do not decode.
    Malformed,
    /// Well-formed and from the right peer, but not expected now (early, late, or for a pair
    /// this peer does not lead): an honest peer's race, never counted as abuse.
    Unexpected,
}

impl Dropped {
    /// The reason's name in counters (`get_dropped_calls()`) and warnings.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::RateLimited => "rate_limited",
            Self::Forged => "forged",
            Self::Malformed => "malformed",
            Self::Unexpected => "unexpected",
        }
    }
}

/// Dropped messages by reason, over every peer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Dropped by the rate limit.
    pub rate_limited: i64,
    /// From a sender who may not send them.
    pub forged: i64,
    /// Not a byte array, too big, or not decodable.
    pub malformed: i64,
    /// Not expected now.
    pub unexpected: i64,
    /// Peers this node's server disconnected for abuse.
    pub peers_disconnected: i64,
    /// Warnings held back by the throttle.
    pub warnings_held_back: i64,
}

impl DropCounts {
    /// Returns the counter of `why`.
    #[must_use]
    pub fn of(&self, why: Dropped) -> i64 {
        match why {
            Dropped::RateLimited => self.rate_limited,
            Dropped::Forged => self.forged,
            Dropped::Malformed => self.malformed,
            Dropped::Unexpected => self.unexpected,
        }
    }

    /// Returns every counter as `(name, value)`, in a fixed order.
    #[must_use]
    pub fn fields(&self) -> [(&'static str, i64); 6] {
        [
            ("rate_limited", self.rate_limited),
            ("forged", self.forged),
            ("malformed", self.malformed),
            ("unexpected", self.unexpected),
            ("peers_disconnected", self.peers_disconnected),
            ("warnings_held_back", self.warnings_held_back),
        ]
    }
}

/// What the node does about one dropped message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Why it was dropped.
    pub why: Dropped,
    /// `Some(held_back)` when a warning is due now (`held_back` like it were held back since the
    /// last one of this reason about this peer), `None` when it is held back.
    pub warn: Option<u32>,
    /// The peer has caused more dropped calls than the abuse limit allows: the server should
    /// disconnect it ([`Inbox::cut`]), or warn that it keeps it ([`Inbox::kept_warning`]).
    pub abusive: bool,
}

#[derive(Clone, Copy, Default)]
struct Peer {
    calls: TokenBucket,
    strikes: TokenBucket,
    cut: bool,
}

/// The throttle key of the warning that an abusive peer is kept (beside the [`Dropped`] reasons).
const KEPT: u8 = 255;

/// See the module.
#[derive(Clone, Copy)]
pub struct Inbox {
    peers: KeyedTable<PeerId, Peer, PEER_SLOTS>,
    warns: WarnThrottle<(PeerId, u8), PEER_SLOTS>,
    counts: DropCounts,
}

impl Default for Inbox {
    fn default() -> Self {
        Self {
            peers: KeyedTable::default(),
            warns: WarnThrottle::new(WARN_INTERVAL),
            counts: DropCounts::default(),
        }
    }
}

/// The abuse limit for `per_second` dropped calls per second (0 or less, or not finite: none
/// ever counts as abuse).
#[must_use]
pub fn abuse_limit(per_second: f32) -> Option<RateLimit> {
    (per_second.is_finite() && per_second > 0.0).then(|| RateLimit {
        capacity: (per_second * ABUSE_BURST_SECONDS).max(1.0),
        per_second,
    })
}

impl Inbox {
    /// Spends one of `sender`'s calls at `limit` at time `now` (seconds): `Ok` when the message
    /// may be read, else the verdict on a message dropped by the rate limit.
    pub fn admit(
        &mut self,
        sender: PeerId,
        now: f64,
        limit: RateLimit,
        abuse: Option<RateLimit>,
    ) -> Result<(), Verdict> {
        let passed = self
            .peers
            .entry(sender)
            .is_none_or(|p| p.calls.try_take(now, limit));
        if passed {
            Ok(())
        } else {
            Err(self.drop(sender, Dropped::RateLimited, now, abuse))
        }
    }

    /// Returns the payload of a message whose argument was `bytes` (`None`: not a byte array):
    /// `Ok` when it is a byte array of at most `cap` bytes, else the verdict on a malformed one.
    pub fn bytes<'a>(
        &mut self,
        sender: PeerId,
        bytes: Option<&'a [u8]>,
        cap: usize,
        now: f64,
        abuse: Option<RateLimit>,
    ) -> Result<&'a [u8], Verdict> {
        match bytes {
            Some(b) if b.len() <= cap => Ok(b),
            _ => Err(self.drop(sender, Dropped::Malformed, now, abuse)),
        }
    }

    /// Returns `Ok` when `sender` is `expected`, else the verdict on a forged message.
    pub fn sender_is(
        &mut self,
        sender: PeerId,
        expected: PeerId,
        now: f64,
        abuse: Option<RateLimit>,
    ) -> Result<(), Verdict> {
        if sender == expected {
            Ok(())
        } else {
            Err(self.drop(sender, Dropped::Forged, now, abuse))
        }
    }

    /// Counts a message from `sender` dropped for `why` at time `now` and returns what to do
    /// about it. Every reason but [`Dropped::Unexpected`] counts against the peer's `abuse`
    /// limit (`None`: never abusive).
    pub fn drop(
        &mut self,
        sender: PeerId,
        why: Dropped,
        now: f64,
        abuse: Option<RateLimit>,
    ) -> Verdict {
        let c = &mut self.counts;
        match why {
            Dropped::RateLimited => c.rate_limited += 1,
            Dropped::Forged => c.forged += 1,
            Dropped::Malformed => c.malformed += 1,
            Dropped::Unexpected => c.unexpected += 1,
        }
        let abusive = match (why, abuse, self.peers.entry(sender)) {
            (Dropped::Unexpected, ..) | (_, None, _) | (_, _, None) => false,
            (_, Some(limit), Some(p)) => !p.strikes.try_take(now, limit),
        };
        let warn = self.warns.check((sender, why as u8), now);
        if warn.is_none() {
            self.counts.warnings_held_back += 1;
        }
        Verdict { why, warn, abusive }
    }

    /// Marks abusive `peer` as being disconnected: returns `true` (and counts it) the first time,
    /// `false` while its disconnection is under way.
    pub fn cut(&mut self, peer: PeerId) -> bool {
        let first = self
            .peers
            .entry(peer)
            .is_some_and(|p| !core::mem::replace(&mut p.cut, true));
        if first {
            self.counts.peers_disconnected += 1;
        }
        first
    }

    /// Returns `Some(held_back)` when the warning that abusive `peer` is kept (not disconnected)
    /// is due at `now` (at most once per [`WARN_INTERVAL`]).
    pub fn kept_warning(&mut self, peer: PeerId, now: f64) -> Option<u32> {
        self.warns.check((peer, KEPT), now)
    }

    /// Returns the counters.
    #[must_use]
    pub fn counts(&self) -> DropCounts {
        self.counts
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
    fn a_flooding_peer_gets_its_rate_one_warning_per_interval_and_is_abusive_past_its_burst() {
        let mut inbox = Inbox::default();
        let abuse = abuse_limit(5.0); // 50 dropped at once, then 5 per second
        let mut verdicts = Vec::new();
        let passed = (0..200)
            .filter(|_| match inbox.admit(7, 0.0, TEN, abuse) {
                Ok(()) => true,
                Err(v) => {
                    verdicts.push(v);
                    false
                }
            })
            .count();
        assert_eq!(passed, 10, "one second's worth");
        assert_eq!(inbox.counts().rate_limited, 190);
        let warned = verdicts.iter().filter(|v| v.warn.is_some()).count();
        assert_eq!(warned, 1, "one warning per interval");
        assert_eq!(inbox.counts().warnings_held_back, 189);
        let first = verdicts.iter().position(|v| v.abusive);
        assert_eq!(
            first,
            Some(50),
            "abusive from the first drop past the burst of 50"
        );
        assert!(
            verdicts[50..].iter().all(|v| v.abusive),
            "and on every drop after it"
        );
        // Another peer has its own buckets.
        assert_eq!(inbox.admit(8, 0.0, TEN, abuse), Ok(()));
        // The server cuts the peer once; the warning that it is kept instead comes once per
        // interval.
        assert!(inbox.cut(7));
        assert!(!inbox.cut(7), "already being disconnected");
        assert_eq!(inbox.counts().peers_disconnected, 1);
        assert_eq!(inbox.kept_warning(8, 0.0), Some(0));
        assert_eq!(inbox.kept_warning(8, 1.0), None);
        assert_eq!(inbox.kept_warning(8, WARN_INTERVAL + 0.5), Some(1));
        // After ten seconds of calm the bucket is full again: not abusive.
        let later = inbox.drop(7, Dropped::Forged, 20.0, abuse);
        assert!(!later.abusive && later.warn == Some(0));
    }

    #[test]
    fn unexpected_messages_and_no_limit_are_never_abuse() {
        let mut inbox = Inbox::default();
        let abuse = abuse_limit(1.0);
        for i in 0..1000 {
            let v = inbox.drop(3, Dropped::Unexpected, f64::from(i) * 0.001, abuse);
            assert!(!v.abusive);
            let v = inbox.drop(4, Dropped::Malformed, f64::from(i) * 0.001, None);
            assert!(!v.abusive);
        }
        assert_eq!(inbox.counts().unexpected, 1000);
        assert_eq!(inbox.counts().malformed, 1000);
        assert_eq!(abuse_limit(0.0), None);
        assert_eq!(abuse_limit(f32::NAN), None);
        assert_eq!(abuse_limit(-3.0), None);
    }

    #[test]
    fn the_payload_must_be_bytes_within_the_cap_from_the_expected_sender() {
        let mut inbox = Inbox::default();
        let data = [1u8, 2, 3];
        assert_eq!(inbox.bytes(2, Some(&data), 3, 0.0, None), Ok(&data[..]));
        let long = inbox.bytes(2, Some(&data), 2, 0.0, None).unwrap_err();
        assert_eq!(long.why, Dropped::Malformed);
        assert!(inbox.bytes(2, None, 64, 0.0, None).is_err());
        assert_eq!(inbox.sender_is(1, SERVER, 0.0, None), Ok(()));
        assert_eq!(
            inbox.sender_is(9, SERVER, 0.0, None).unwrap_err().why,
            Dropped::Forged
        );
        let c = inbox.counts();
        assert_eq!((c.malformed, c.forged), (2, 1));
        assert_eq!(c.of(Dropped::Malformed), 2);
    }

    #[test]
    fn a_flood_from_many_peers_stays_in_fixed_tables() {
        let mut inbox = Inbox::default();
        let abuse = abuse_limit(50.0);
        for i in 0..100_000i64 {
            let _ = inbox.admit(i % 1000, i as f64 * 1e-4, TEN, abuse);
            let _ = inbox.drop(i % 1000, Dropped::Malformed, i as f64 * 1e-4, abuse);
        }
        assert_eq!(inbox.counts().malformed, 100_000);
    }
}
