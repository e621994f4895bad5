//! The command pipeline's bookkeeping: the server numbers and timestamps each
//! command, every client acknowledges it, unacknowledged commands are resent every
//! [`RESEND_AFTER`] seconds up to [`MAX_RESENDS`] times, and a peer that never answers is dropped.
//! Clients apply each command id once ([`SeenIds`]), so resends are harmless.

/// Seconds before an unacknowledged command is sent again.
pub const RESEND_AFTER: f64 = 0.1;
/// Resends before a silent peer is dropped.
pub const MAX_RESENDS: u8 = 3;
/// Most acknowledgements awaited at once; further sends are not tracked.
pub const MAX_PENDING: usize = 4096;
/// Most dropped peers remembered (the oldest is forgotten first).
pub const MAX_DROPPED: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pending {
    id: u32,
    peer: i32,
    sent_at: f64,
    resends: u8,
}

/// What [`AckTracker::poll`] asks the caller to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Send command `id` to `peer` again.
    Resend {
        /// Peer id.
        peer: i32,
        /// Command id.
        id: u32,
    },
    /// `peer` never acknowledged: drop it from the contract and report it.
    Drop {
        /// Peer id.
        peer: i32,
    },
}

/// Server side: which peers still owe an acknowledgement for which commands.
#[derive(Default, Debug, Clone)]
pub struct AckTracker {
    pending: Vec<Pending>,
    dropped: Vec<i32>,
    next_id: u32,
}

impl AckTracker {
    /// Returns a fresh command id (starting at 1, wrapping past `u32::MAX` to 1).
    pub fn next_id(&mut self) -> u32 {
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.next_id
    }

    /// Records that command `id` was sent to `peer` at `now` (s). Dropped peers are ignored.
    pub fn sent(&mut self, id: u32, peer: i32, now: f64) {
        if self.dropped.contains(&peer) || self.pending.len() >= MAX_PENDING {
            return;
        }
        self.pending.push(Pending {
            id,
            peer,
            sent_at: now,
            resends: 0,
        });
    }

    /// Records `peer`'s acknowledgement of `id`. Returns false for an ack nobody waited for
    /// (unknown id, wrong peer, or a duplicate).
    pub fn ack(&mut self, id: u32, peer: i32) -> bool {
        let before = self.pending.len();
        self.pending.retain(|p| !(p.id == id && p.peer == peer));
        self.pending.len() != before
    }

    /// Returns the next due action at time `now` (s), or `None`: call until `None` each frame.
    pub fn poll(&mut self, now: f64) -> Option<AckAction> {
        let k = self
            .pending
            .iter()
            .position(|p| now - p.sent_at >= RESEND_AFTER)?;
        let p = self.pending[k];
        if p.resends >= MAX_RESENDS {
            self.pending.retain(|q| q.peer != p.peer);
            if self.dropped.len() >= MAX_DROPPED {
                self.dropped.remove(0);
            }
            self.dropped.push(p.peer);
            return Some(AckAction::Drop { peer: p.peer });
        }
        self.pending[k].resends += 1;
        self.pending[k].sent_at = now;
        Some(AckAction::Resend {
            peer: p.peer,
            id: p.id,
        })
    }

    /// Forgets `peer` entirely (it disconnected): what it owed, and that it was dropped (a new
    /// peer may reuse the id). Returns whether anything was known about it.
    pub fn forget(&mut self, peer: i32) -> bool {
        let before = self.pending.len() + self.dropped.len();
        self.pending.retain(|p| p.peer != peer);
        self.dropped.retain(|p| *p != peer);
        before != self.pending.len() + self.dropped.len()
    }

    /// Forgets every peer for which `connected` is false (see [`AckTracker::forget`]).
    pub fn retain_connected(&mut self, mut connected: impl FnMut(i32) -> bool) {
        self.pending.retain(|p| connected(p.peer));
        self.dropped.retain(|p| connected(*p));
    }

    /// Returns how many dropped peers are remembered (at most [`MAX_DROPPED`]).
    #[must_use]
    pub fn dropped_count(&self) -> usize {
        self.dropped.len()
    }

    /// Returns whether `peer` was dropped for never acknowledging.
    #[must_use]
    pub fn is_dropped(&self, peer: i32) -> bool {
        self.dropped.contains(&peer)
    }

    /// Returns how many acknowledgements are still awaited.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// Client side: the ids already applied, so a resent command is acknowledged but not re-applied.
#[derive(Debug, Clone)]
pub struct SeenIds {
    ring: [u32; 64],
    at: usize,
}

impl Default for SeenIds {
    fn default() -> Self {
        Self {
            ring: [0; 64],
            at: 0,
        }
    }
}

impl SeenIds {
    /// Returns true the first time `id` is seen (among the last 64 ids), false for a repeat.
    pub fn first_time(&mut self, id: u32) -> bool {
        if id == 0 || self.ring.contains(&id) {
            return false;
        }
        self.ring[self.at] = id;
        self.at = (self.at + 1) % self.ring.len();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_peer_is_resent_three_times_then_dropped() {
        let mut t = AckTracker::default();
        let id = t.next_id();
        t.sent(id, 2, 0.0);
        t.sent(id, 3, 0.0);
        assert!(t.ack(id, 2));
        assert!(!t.ack(id, 2), "duplicate ack");
        assert!(!t.ack(99, 3), "unknown id");
        assert_eq!(t.poll(0.05), None);
        let mut resends = 0;
        let mut now = 0.0;
        let dropped = loop {
            now += 0.11;
            match t.poll(now) {
                Some(AckAction::Resend { peer: 3, .. }) => resends += 1,
                Some(AckAction::Drop { peer }) => break peer,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!((resends, dropped), (3, 3));
        assert!(t.is_dropped(3) && !t.is_dropped(2));
        assert_eq!(t.pending(), 0);
        let id = t.next_id();
        t.sent(id, 3, now);
        assert_eq!(t.pending(), 0, "dropped peers are not waited for");
    }

    #[test]
    fn disconnected_peers_are_forgotten_and_the_lists_are_bounded() {
        let mut t = AckTracker::default();
        let id = t.next_id();
        t.sent(id, 7, 0.0);
        t.sent(id, 8, 0.0);
        // Peer 7 disconnects with a command in flight: forgotten, never dropped.
        t.retain_connected(|p| p != 7);
        assert_eq!(t.pending(), 1);
        assert!(t.ack(id, 8));
        assert_eq!(t.poll(10.0), None, "nothing left to resend or drop");
        assert!(!t.is_dropped(7));
        // A dropped peer that later disconnects is forgotten too.
        let id = t.next_id();
        t.sent(id, 9, 0.0);
        let mut now = 0.0;
        while t.poll(now) != Some(AckAction::Drop { peer: 9 }) {
            now += 0.11;
        }
        assert!(t.is_dropped(9));
        assert!(t.forget(9) && !t.is_dropped(9));
        // Bounds: pending stops at MAX_PENDING, the dropped list at MAX_DROPPED.
        for k in 0..(MAX_PENDING as i32 + 100) {
            t.sent(1, 1000 + k, 0.0);
        }
        assert_eq!(t.pending(), MAX_PENDING);
        let mut t = AckTracker::default();
        for peer in 0..(MAX_DROPPED as i32 + 50) {
            t.sent(1, peer, 0.0);
        }
        let mut now = 0.0;
        let mut drops = 0;
        for _ in 0..100_000 {
            now += 0.11;
            match t.poll(now) {
                Some(AckAction::Drop { .. }) => drops += 1,
                Some(AckAction::Resend { .. }) => {}
                None => break,
            }
        }
        assert_eq!(drops, MAX_DROPPED + 50);
        assert_eq!(t.dropped_count(), MAX_DROPPED);
        assert!(t.is_dropped(MAX_DROPPED as i32 + 49) && !t.is_dropped(0));
    }

    #[test]
    fn resends_apply_once() {
        let mut s = SeenIds::default();
        assert!(s.first_time(5));
        assert!(!s.first_time(5));
        assert!(!s.first_time(0));
        for id in 6..200 {
            assert!(s.first_time(id));
        }
    }
}
