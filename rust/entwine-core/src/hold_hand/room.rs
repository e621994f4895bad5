//! The interaction state a "room" holds: who asked whom, who holds whose hand.
//!
//! One [`Room`] is the single source of truth for every player's [`Interaction`]. On one machine a
//! local room node owns it; over the network the server does, and replicates each player's state.
//! Components never change their own state: they ask the room, and follow what it says.

use crate::kit::{ByteReader, ByteWriter};
use serde::{Deserialize, Serialize};

/// A player's identity in a room (a multiplayer peer id, or any stable number on one machine).
pub type PlayerId = i64;

/// The one interaction type the seed supports: holding hands.
pub const HOLD_HAND: u8 = 1;

use crate::kit::param::{Param, Unit};

/// How long a request waits for an answer (a room node's `request_timeout`).
#[rustfmt::skip]
pub const REQUEST_TIMEOUT: Param = Param::new("request_timeout", Unit::Seconds, (0.5, 120.0), 10.0, "how long a request waits for an answer");
/// How many calls the server takes from one peer per second (a room node's
/// `max_calls_per_second`).
#[rustfmt::skip]
pub const MAX_CALLS_PER_SECOND: Param = Param::new("max_calls_per_second", Unit::PerSecond, (1.0, 1e6), 20.0, "calls the server takes from one peer per second (and at once, as a burst)").with_slider(1000.0);

/// Shortest request timeout a room node accepts, s.
pub const MIN_REQUEST_TIMEOUT: f64 = REQUEST_TIMEOUT.min as f64;
/// Longest request timeout a room node accepts, s.
pub const MAX_REQUEST_TIMEOUT: f64 = REQUEST_TIMEOUT.max as f64;

/// Returns the request timeout (s) a room node uses for its setting `seconds`, and whether that
/// was valid (within [`MIN_REQUEST_TIMEOUT`]..=[`MAX_REQUEST_TIMEOUT`]): else clamped into that
/// range (an infinity to its end), or [`Room::DEFAULT_REQUEST_TIMEOUT`] for NaN.
#[must_use]
pub fn request_timeout_within(seconds: f64) -> (f64, bool) {
    let valid = (MIN_REQUEST_TIMEOUT..=MAX_REQUEST_TIMEOUT).contains(&seconds);
    let used = if seconds.is_nan() {
        Room::DEFAULT_REQUEST_TIMEOUT
    } else {
        seconds.clamp(MIN_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT)
    };
    (used, valid)
}

/// The warning for a request timeout of `seconds` outside its range, and the value `used`.
#[must_use]
pub fn request_timeout_message(seconds: f64, used: f64) -> String {
    crate::kit::warn::setting_message(
        "request_timeout",
        &format!("must be in {MIN_REQUEST_TIMEOUT}..={MAX_REQUEST_TIMEOUT} s"),
        seconds,
        used,
    )
}

/// Which side of a pair a player is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Asked first; walks freely and is the single authority for the pair.
    Initiator,
    /// Accepted; is carried along and only consumes what the initiator computes.
    Recipient,
}

/// A player's replicated interaction state: their role, their partner and the interaction type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interaction {
    /// This player's side.
    pub role: Role,
    /// The other player of the pair.
    pub partner: PlayerId,
    /// Interaction type ([`HOLD_HAND`]).
    pub kind: u8,
}

/// Why the room refused a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomError {
    /// The player is not in the room.
    UnknownPlayer(PlayerId),
    /// A player asked to hold their own hand.
    SelfTarget,
    /// The player already has a pending request or an active interaction.
    Busy(PlayerId),
    /// There is no pending request to answer, or no interaction to cancel.
    NothingPending,
    /// The caller may only act for its own player (a multiplayer peer for its peer id).
    NotYours(PlayerId),
    /// The time given was not finite (a request made then could never expire).
    BadTime,
}

impl core::fmt::Display for RoomError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RoomError::UnknownPlayer(id) => write!(f, "player {id} is not in the room"),
            RoomError::SelfTarget => write!(f, "a player cannot hold their own hand"),
            RoomError::Busy(id) => write!(f, "player {id} already has a request or a partner"),
            RoomError::NothingPending => write!(f, "there is nothing to answer or cancel"),
            RoomError::NotYours(id) => write!(f, "this peer cannot act for player {id}"),
            RoomError::BadTime => write!(f, "the time is not a finite number"),
        }
    }
}

/// What changed in a room; returned by its calls so the owner can emit signals and replicate.
///
/// Field names say who is who: `from` asked, `to` was asked, `by` acted.
#[allow(missing_docs)] // the fields are named by the variant docs above
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoomEvent {
    /// `from` asked `to`; the request expires at `expires_at` (room time, seconds).
    Requested {
        from: PlayerId,
        to: PlayerId,
        expires_at: f64,
    },
    /// `recipient` accepted `initiator`'s request: both now have an [`Interaction`].
    Accepted {
        initiator: PlayerId,
        recipient: PlayerId,
    },
    /// `by` declined `from`'s request.
    Declined { from: PlayerId, by: PlayerId },
    /// `from`'s request to `to` ran out of time.
    Expired { from: PlayerId, to: PlayerId },
    /// `from` withdrew the request to `to` (or one of them left).
    Withdrawn { from: PlayerId, to: PlayerId },
    /// The pair ended: `by` cancelled, or left the room.
    Ended {
        initiator: PlayerId,
        recipient: PlayerId,
        by: PlayerId,
    },
}

#[derive(Clone, Copy, Debug)]
struct Player {
    id: PlayerId,
    interaction: Option<Interaction>,
    /// An outgoing request: target and expiry time.
    request: Option<(PlayerId, f64)>,
}

/// Interaction state for every player of a room.
#[derive(Clone, Debug, Default)]
pub struct Room {
    players: Vec<Player>,
}

impl Room {
    /// Seconds a request waits for an answer by default.
    pub const DEFAULT_REQUEST_TIMEOUT: f64 = REQUEST_TIMEOUT.default as f64;

    /// Adds a player (does nothing if already present).
    pub fn join(&mut self, id: PlayerId) {
        if self.index(id).is_none() {
            self.players.push(Player {
                id,
                interaction: None,
                request: None,
            });
        }
    }

    /// Removes a player, ending their pair and their requests; returns what that ended.
    pub fn leave(&mut self, id: PlayerId, events: &mut impl Extend<RoomEvent>) {
        if self.index(id).is_none() {
            return;
        }
        let _ = self.cancel(id, events);
        for p in &mut self.players {
            if let Some((to, _)) = p.request {
                if to == id {
                    p.request = None;
                    events.extend([RoomEvent::Withdrawn { from: p.id, to }]);
                }
            }
        }
        self.players.retain(|p| p.id != id);
    }

    /// Returns whether the player is in the room.
    #[must_use]
    pub fn contains(&self, id: PlayerId) -> bool {
        self.index(id).is_some()
    }

    /// Returns the player's interaction, if any.
    #[must_use]
    pub fn interaction(&self, id: PlayerId) -> Option<Interaction> {
        self.index(id).and_then(|i| self.players[i].interaction)
    }

    /// Returns the player who has a pending request to `to`, if any.
    #[must_use]
    pub fn pending_request_to(&self, to: PlayerId) -> Option<PlayerId> {
        self.players
            .iter()
            .find(|p| p.request.is_some_and(|(t, _)| t == to))
            .map(|p| p.id)
    }

    /// Returns the target of `from`'s outgoing request, if any.
    #[must_use]
    pub fn pending_request_from(&self, from: PlayerId) -> Option<PlayerId> {
        self.index(from)
            .and_then(|i| self.players[i].request)
            .map(|(to, _)| to)
    }

    /// `from` asks `to` to hold hands at room time `now`; the request lives `timeout` seconds.
    ///
    /// Refused when either player is unknown, when `from == to`, or when either side already has a
    /// pending request (in or out) or a partner.
    pub fn request(
        &mut self,
        from: PlayerId,
        to: PlayerId,
        now: f64,
        timeout: f64,
    ) -> Result<RoomEvent, RoomError> {
        let fi = self.index(from).ok_or(RoomError::UnknownPlayer(from))?;
        self.index(to).ok_or(RoomError::UnknownPlayer(to))?;
        if from == to {
            return Err(RoomError::SelfTarget);
        }
        if !now.is_finite() {
            return Err(RoomError::BadTime);
        }
        for id in [from, to] {
            if self.is_busy(id) {
                return Err(RoomError::Busy(id));
            }
        }
        let timeout = if timeout.is_finite() && timeout > 0.0 {
            timeout
        } else {
            Self::DEFAULT_REQUEST_TIMEOUT
        };
        let expires_at = now + timeout;
        self.players[fi].request = Some((to, expires_at));
        Ok(RoomEvent::Requested {
            from,
            to,
            expires_at,
        })
    }

    /// `by` accepts the request addressed to them: both players get their [`Interaction`].
    pub fn accept(&mut self, by: PlayerId) -> Result<RoomEvent, RoomError> {
        self.index(by).ok_or(RoomError::UnknownPlayer(by))?;
        let from = self
            .pending_request_to(by)
            .ok_or(RoomError::NothingPending)?;
        let fi = self.index(from).ok_or(RoomError::UnknownPlayer(from))?;
        self.players[fi].request = None;
        self.players[fi].interaction = Some(Interaction {
            role: Role::Initiator,
            partner: by,
            kind: HOLD_HAND,
        });
        let bi = self.index(by).ok_or(RoomError::UnknownPlayer(by))?;
        self.players[bi].interaction = Some(Interaction {
            role: Role::Recipient,
            partner: from,
            kind: HOLD_HAND,
        });
        Ok(RoomEvent::Accepted {
            initiator: from,
            recipient: by,
        })
    }

    /// `by` declines the request addressed to them.
    pub fn decline(&mut self, by: PlayerId) -> Result<RoomEvent, RoomError> {
        self.index(by).ok_or(RoomError::UnknownPlayer(by))?;
        let from = self
            .pending_request_to(by)
            .ok_or(RoomError::NothingPending)?;
        if let Some(fi) = self.index(from) {
            self.players[fi].request = None;
        }
        Ok(RoomEvent::Declined { from, by })
    }

    /// `by` cancels: withdraws their outgoing request, or ends their pair (either side may).
    pub fn cancel(
        &mut self,
        by: PlayerId,
        events: &mut impl Extend<RoomEvent>,
    ) -> Result<(), RoomError> {
        let bi = self.index(by).ok_or(RoomError::UnknownPlayer(by))?;
        if let Some((to, _)) = self.players[bi].request.take() {
            events.extend([RoomEvent::Withdrawn { from: by, to }]);
            return Ok(());
        }
        let Some(mine) = self.players[bi].interaction.take() else {
            return Err(RoomError::NothingPending);
        };
        if let Some(pi) = self.index(mine.partner) {
            if self.players[pi]
                .interaction
                .is_some_and(|i| i.partner == by)
            {
                self.players[pi].interaction = None;
            }
        }
        let (initiator, recipient) = match mine.role {
            Role::Initiator => (by, mine.partner),
            Role::Recipient => (mine.partner, by),
        };
        events.extend([RoomEvent::Ended {
            initiator,
            recipient,
            by,
        }]);
        Ok(())
    }

    /// Expires requests older than `now`, reporting each.
    pub fn expire(&mut self, now: f64, events: &mut impl Extend<RoomEvent>) {
        for p in &mut self.players {
            if let Some((to, at)) = p.request {
                // A replayed request with a non-finite expiry ends at the first finite time.
                if now >= at || (now.is_finite() && !at.is_finite()) {
                    p.request = None;
                    events.extend([RoomEvent::Expired { from: p.id, to }]);
                }
            }
        }
    }

    /// Applies an event that happened in the authoritative room (the server) to this replica.
    ///
    /// Replicas never decide: they replay the server's events in order, so every peer holds the same
    /// state. Unknown players are added.
    pub fn apply(&mut self, event: RoomEvent) {
        let slot = |room: &mut Self, id: PlayerId| {
            room.join(id);
            room.index(id).unwrap_or(0)
        };
        match event {
            RoomEvent::Requested {
                from,
                to,
                expires_at,
            } => {
                slot(self, to);
                let i = slot(self, from);
                self.players[i].request = Some((to, expires_at));
            }
            RoomEvent::Accepted {
                initiator,
                recipient,
            } => {
                let i = slot(self, initiator);
                self.players[i].request = None;
                self.players[i].interaction = Some(Interaction {
                    role: Role::Initiator,
                    partner: recipient,
                    kind: HOLD_HAND,
                });
                let r = slot(self, recipient);
                self.players[r].interaction = Some(Interaction {
                    role: Role::Recipient,
                    partner: initiator,
                    kind: HOLD_HAND,
                });
            }
            RoomEvent::Declined { from, .. }
            | RoomEvent::Expired { from, .. }
            | RoomEvent::Withdrawn { from, .. } => {
                if let Some(i) = self.index(from) {
                    self.players[i].request = None;
                }
            }
            RoomEvent::Ended {
                initiator,
                recipient,
                ..
            } => {
                for (id, partner) in [(initiator, recipient), (recipient, initiator)] {
                    if let Some(i) = self.index(id) {
                        if self.players[i]
                            .interaction
                            .is_some_and(|x| x.partner == partner)
                        {
                            self.players[i].interaction = None;
                        }
                    }
                }
            }
        }
    }

    /// Returns events that rebuild this room's pairs and pending requests on an empty replica (for a
    /// peer that joins late).
    pub fn snapshot(&self, out: &mut impl Extend<RoomEvent>) {
        for p in &self.players {
            if let Some(Interaction {
                role: Role::Initiator,
                partner,
                ..
            }) = p.interaction
            {
                out.extend([RoomEvent::Accepted {
                    initiator: p.id,
                    recipient: partner,
                }]);
            }
            if let Some((to, expires_at)) = p.request {
                out.extend([RoomEvent::Requested {
                    from: p.id,
                    to,
                    expires_at,
                }]);
            }
        }
    }

    fn is_busy(&self, id: PlayerId) -> bool {
        self.interaction(id).is_some()
            || self.pending_request_from(id).is_some()
            || self.pending_request_to(id).is_some()
    }

    fn index(&self, id: PlayerId) -> Option<usize> {
        self.players.iter().position(|p| p.id == id)
    }
}

/// A call a player makes on the room: what a client submits to the server.
#[allow(missing_docs)] // the fields are named as in [`RoomEvent`]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomCall {
    /// `from` asks `to`.
    Request { from: PlayerId, to: PlayerId },
    /// `by` accepts the request made to it.
    Accept { by: PlayerId },
    /// `by` declines the request made to it.
    Decline { by: PlayerId },
    /// `by` ends its pair or withdraws its request.
    Cancel { by: PlayerId },
}

/// Bytes of a [`RoomCall`] on the wire: kind (0 request, 1 accept, 2 decline, 3 cancel), then
/// the actor and the target (0 but for a request) as little-endian i64.
pub const CALL_BYTES: usize = 17;

/// Bytes of a [`RoomEvent`] on the wire: kind (0 requested (from, to; expiry), 1 accepted
/// (initiator, recipient), 2 declined (from, by), 3 expired (from, to), 4 withdrawn (from, to),
/// 5 ended (initiator, recipient, by)), three little-endian i64 (unused ones 0) and the expiry as
/// a little-endian f64.
pub const EVENT_BYTES: usize = 33;

/// Writes `kind`, the i64s and the trailing f64s into a fixed-size message.
fn pack<const N: usize>(kind: u8, ints: &[i64], floats: &[f64]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut w = ByteWriter::new(&mut out);
    // The sizes are the constants above, so nothing here can run short.
    let _ = w.put_u8(kind);
    for &i in ints {
        let _ = w.put_i64(i);
    }
    for &f in floats {
        let _ = w.put_f64(f);
    }
    out
}

impl RoomCall {
    /// Returns who makes this call.
    #[must_use]
    pub fn actor(self) -> PlayerId {
        match self {
            Self::Request { from, .. } => from,
            Self::Accept { by } | Self::Decline { by } | Self::Cancel { by } => by,
        }
    }

    /// Returns the call as its [`CALL_BYTES`] wire bytes.
    #[must_use]
    pub fn encode(self) -> [u8; CALL_BYTES] {
        let (kind, actor, target) = match self {
            Self::Request { from, to } => (0, from, to),
            Self::Accept { by } => (1, by, 0),
            Self::Decline { by } => (2, by, 0),
            Self::Cancel { by } => (3, by, 0),
        };
        pack(kind, &[actor, target], &[])
    }

    /// Reads a call from its wire bytes, or `None` for another length or an unknown kind.
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != CALL_BYTES {
            return None;
        }
        let mut r = ByteReader::new(bytes);
        let (kind, actor, target) = (r.get_u8().ok()?, r.get_i64().ok()?, r.get_i64().ok()?);
        Some(match kind {
            0 => Self::Request {
                from: actor,
                to: target,
            },
            1 => Self::Accept { by: actor },
            2 => Self::Decline { by: actor },
            3 => Self::Cancel { by: actor },
            _ => return None,
        })
    }
}

impl RoomEvent {
    /// Returns the players whose components hear of this event: the asked player of a request or
    /// a withdrawal, the asker of an acceptance, a refusal or an expiry, and both of an ended pair.
    #[must_use]
    pub fn notified(self) -> [Option<PlayerId>; 2] {
        match self {
            Self::Requested { to, .. } | Self::Withdrawn { to, .. } => [Some(to), None],
            Self::Accepted { initiator, .. } => [Some(initiator), None],
            Self::Declined { from, .. } | Self::Expired { from, .. } => [Some(from), None],
            Self::Ended {
                initiator,
                recipient,
                ..
            } => [Some(initiator), Some(recipient)],
        }
    }

    /// Returns the event as its [`EVENT_BYTES`] wire bytes.
    #[must_use]
    pub fn encode(self) -> [u8; EVENT_BYTES] {
        let (kind, a, b, c, expires_at) = match self {
            Self::Requested {
                from,
                to,
                expires_at,
            } => (0, from, to, 0, expires_at),
            Self::Accepted {
                initiator,
                recipient,
            } => (1, initiator, recipient, 0, 0.0),
            Self::Declined { from, by } => (2, from, by, 0, 0.0),
            Self::Expired { from, to } => (3, from, to, 0, 0.0),
            Self::Withdrawn { from, to } => (4, from, to, 0, 0.0),
            Self::Ended {
                initiator,
                recipient,
                by,
            } => (5, initiator, recipient, by, 0.0),
        };
        pack(kind, &[a, b, c], &[expires_at])
    }

    /// Reads an event from its wire bytes, or `None` for another length or an unknown kind.
    #[must_use]
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != EVENT_BYTES {
            return None;
        }
        let mut r = ByteReader::new(bytes);
        let kind = r.get_u8().ok()?;
        let (a, b, c) = (r.get_i64().ok()?, r.get_i64().ok()?, r.get_i64().ok()?);
        let expires_at = r.get_f64().ok()?;
        Some(match kind {
            0 => Self::Requested {
                from: a,
                to: b,
                expires_at,
            },
            1 => Self::Accepted {
                initiator: a,
                recipient: b,
            },
            2 => Self::Declined { from: a, by: b },
            3 => Self::Expired { from: a, to: b },
            4 => Self::Withdrawn { from: a, to: b },
            5 => Self::Ended {
                initiator: a,
                recipient: b,
                by: c,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_timeout_is_clamped_into_its_range_and_nan_is_the_default() {
        assert_eq!(request_timeout_within(10.0), (10.0, true));
        assert_eq!(request_timeout_within(0.5), (0.5, true));
        assert_eq!(request_timeout_within(120.0), (120.0, true));
        assert_eq!(request_timeout_within(0.1), (0.5, false));
        assert_eq!(request_timeout_within(-3.0), (0.5, false));
        assert_eq!(request_timeout_within(500.0), (120.0, false));
        assert_eq!(request_timeout_within(f64::INFINITY), (120.0, false));
        assert_eq!(request_timeout_within(f64::NEG_INFINITY), (0.5, false));
        assert_eq!(request_timeout_within(f64::NAN), (10.0, false));
        assert_eq!(
            request_timeout_message(f64::NAN, 10.0),
            "request_timeout must be in 0.5..=120 s (got NaN); using 10"
        );
        assert_eq!(
            request_timeout_message(0.1, 0.5),
            "request_timeout must be in 0.5..=120 s (got 0.1); using 0.5"
        );
    }

    #[test]
    fn every_call_and_event_reads_back_as_it_was_sent() {
        let calls = [
            RoomCall::Request { from: 7, to: -3 },
            RoomCall::Accept { by: i64::MAX },
            RoomCall::Decline { by: 0 },
            RoomCall::Cancel { by: i64::MIN },
        ];
        for c in calls {
            assert_eq!(RoomCall::decode(&c.encode()), Some(c));
        }
        assert_eq!(RoomCall::Request { from: 7, to: 9 }.actor(), 7);
        assert_eq!(RoomCall::Cancel { by: 4 }.actor(), 4);
        let events = [
            RoomEvent::Requested {
                from: 1,
                to: 2,
                expires_at: 12.5,
            },
            RoomEvent::Accepted {
                initiator: 3,
                recipient: 4,
            },
            RoomEvent::Declined { from: 5, by: 6 },
            RoomEvent::Expired { from: 7, to: 8 },
            RoomEvent::Withdrawn { from: 9, to: 10 },
            RoomEvent::Ended {
                initiator: 11,
                recipient: 12,
                by: 11,
            },
        ];
        for e in events {
            assert_eq!(RoomEvent::decode(&e.encode()), Some(e));
        }
    }

    #[test]
    fn each_event_notifies_the_players_it_concerns() {
        let requested = RoomEvent::Requested {
            from: 1,
            to: 2,
            expires_at: 0.0,
        };
        assert_eq!(requested.notified(), [Some(2), None]);
        let accepted = RoomEvent::Accepted {
            initiator: 1,
            recipient: 2,
        };
        assert_eq!(accepted.notified(), [Some(1), None]);
        assert_eq!(
            RoomEvent::Declined { from: 1, by: 2 }.notified(),
            [Some(1), None]
        );
        assert_eq!(
            RoomEvent::Expired { from: 1, to: 2 }.notified(),
            [Some(1), None]
        );
        assert_eq!(
            RoomEvent::Withdrawn { from: 1, to: 2 }.notified(),
            [Some(2), None]
        );
        let ended = RoomEvent::Ended {
            initiator: 1,
            recipient: 2,
            by: 2,
        };
        assert_eq!(ended.notified(), [Some(1), Some(2)]);
    }

    #[test]
    fn unknown_kinds_read_as_nothing() {
        for kind in [4u8, 99, 255] {
            let mut call = RoomCall::Cancel { by: 1 }.encode();
            call[0] = kind;
            assert_eq!(RoomCall::decode(&call), None);
        }
        for kind in [6u8, 255] {
            let mut event = RoomEvent::Declined { from: 1, by: 2 }.encode();
            event[0] = kind;
            assert_eq!(RoomEvent::decode(&event), None);
        }
        // Any other length, shorter or longer, reads as nothing.
        let call = RoomCall::Cancel { by: 1 }.encode();
        assert_eq!(RoomCall::decode(&call[..CALL_BYTES - 1]), None);
        assert_eq!(RoomCall::decode(&[call.as_slice(), &[0]].concat()), None);
        assert_eq!(RoomCall::decode(&[]), None);
        assert_eq!(RoomEvent::decode(&[0; EVENT_BYTES + 1]), None);
    }

    fn room(ids: &[PlayerId]) -> Room {
        let mut r = Room::default();
        for &id in ids {
            r.join(id);
        }
        r
    }

    #[test]
    fn request_accept_gives_mutual_roles() {
        let mut r = room(&[1, 2, 3]);
        assert!(matches!(
            r.request(1, 2, 0.0, 10.0),
            Ok(RoomEvent::Requested { from: 1, to: 2, .. })
        ));
        assert_eq!(r.pending_request_to(2), Some(1));
        assert_eq!(r.interaction(1), None, "a request alone is not a pair");
        assert_eq!(
            r.accept(2),
            Ok(RoomEvent::Accepted {
                initiator: 1,
                recipient: 2
            })
        );
        assert_eq!(
            r.interaction(1),
            Some(Interaction {
                role: Role::Initiator,
                partner: 2,
                kind: HOLD_HAND
            })
        );
        assert_eq!(
            r.interaction(2),
            Some(Interaction {
                role: Role::Recipient,
                partner: 1,
                kind: HOLD_HAND
            })
        );
        assert_eq!(r.pending_request_to(2), None);
    }

    #[test]
    fn local_validation_refuses_bad_requests() {
        let mut r = room(&[1, 2, 3]);
        assert_eq!(r.request(1, 1, 0.0, 10.0), Err(RoomError::SelfTarget));
        assert_eq!(r.request(1, 9, 0.0, 10.0), Err(RoomError::UnknownPlayer(9)));
        assert_eq!(r.request(9, 1, 0.0, 10.0), Err(RoomError::UnknownPlayer(9)));
        r.request(1, 2, 0.0, 10.0).unwrap();
        assert_eq!(r.request(3, 2, 0.0, 10.0), Err(RoomError::Busy(2)));
        assert_eq!(r.request(1, 3, 0.0, 10.0), Err(RoomError::Busy(1)));
        r.accept(2).unwrap();
        assert_eq!(r.request(3, 1, 0.0, 10.0), Err(RoomError::Busy(1)));
        assert_eq!(r.accept(3), Err(RoomError::NothingPending));
    }

    #[test]
    fn nobody_holds_hands_without_accepting() {
        let mut r = room(&[1, 2]);
        r.request(1, 2, 0.0, 10.0).unwrap();
        assert_eq!(
            r.accept(1),
            Err(RoomError::NothingPending),
            "the asker cannot accept"
        );
        assert_eq!(r.decline(2), Ok(RoomEvent::Declined { from: 1, by: 2 }));
        assert_eq!(r.interaction(1), None);
        assert_eq!(r.interaction(2), None);
        assert_eq!(r.accept(2), Err(RoomError::NothingPending));
    }

    #[test]
    fn requests_expire() {
        let mut r = room(&[1, 2]);
        r.request(1, 2, 5.0, 10.0).unwrap();
        let mut ev = Vec::new();
        r.expire(14.9, &mut ev);
        assert!(ev.is_empty());
        r.expire(15.0, &mut ev);
        assert_eq!(ev, vec![RoomEvent::Expired { from: 1, to: 2 }]);
        assert_eq!(r.accept(2), Err(RoomError::NothingPending));
    }

    #[test]
    fn either_side_cancels_and_leaving_ends_the_pair() {
        for canceller in [1, 2] {
            let mut r = room(&[1, 2]);
            r.request(1, 2, 0.0, 10.0).unwrap();
            r.accept(2).unwrap();
            let mut ev = Vec::new();
            r.cancel(canceller, &mut ev).unwrap();
            assert_eq!(
                ev,
                vec![RoomEvent::Ended {
                    initiator: 1,
                    recipient: 2,
                    by: canceller
                }]
            );
            assert_eq!(r.interaction(1), None);
            assert_eq!(r.interaction(2), None);
        }
        let mut r = room(&[1, 2, 3]);
        r.request(1, 2, 0.0, 10.0).unwrap();
        r.accept(2).unwrap();
        r.request(3, 1, 0.0, 10.0).unwrap_err();
        let mut ev = Vec::new();
        r.leave(1, &mut ev);
        assert_eq!(r.interaction(2), None);
        assert!(!r.contains(1));
        assert_eq!(ev.len(), 1);
    }

    #[test]
    fn a_replica_replaying_the_events_holds_the_same_state() {
        let mut server = room(&[1, 2, 3]);
        let mut replica = Room::default();
        let mut events = Vec::new();
        events.push(server.request(1, 2, 0.0, 10.0).unwrap());
        server.request(3, 1, 0.0, 10.0).unwrap_err();
        events.push(server.accept(2).unwrap());
        server.request(3, 2, 0.0, 10.0).unwrap_err();
        for e in &events {
            replica.apply(*e);
        }
        for id in [1, 2, 3] {
            assert_eq!(
                replica.interaction(id),
                server.interaction(id),
                "player {id}"
            );
        }
        let mut late = Room::default();
        let mut snap = Vec::new();
        server.snapshot(&mut snap);
        for e in snap {
            late.apply(e);
        }
        assert_eq!(
            late.interaction(2),
            server.interaction(2),
            "a late joiner catches up"
        );
        let mut ended = Vec::new();
        server.cancel(2, &mut ended).unwrap();
        for e in ended {
            replica.apply(e);
        }
        assert_eq!(replica.interaction(1), None);
        assert_eq!(replica.interaction(2), None);
    }

    #[test]
    fn cancelling_a_request_withdraws_it() {
        let mut r = room(&[1, 2]);
        r.request(1, 2, 0.0, 10.0).unwrap();
        let mut ev = Vec::new();
        r.cancel(1, &mut ev).unwrap();
        assert_eq!(ev, vec![RoomEvent::Withdrawn { from: 1, to: 2 }]);
        assert_eq!(r.pending_request_to(2), None);
        assert_eq!(r.cancel(1, &mut ev), Err(RoomError::NothingPending));
    }
}
