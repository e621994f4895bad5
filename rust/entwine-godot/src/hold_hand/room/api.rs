//! `HoldHandRoom`'s script API: its signals, queries and counters, and the RPCs between a client's
//! room and the server's (calls judged by the core's `CallGate`, events replayed).

use entwine_core::hold_hand::gate::held_back;
use entwine_core::hold_hand::Admission;
use entwine_core::kit::inbox::{Dropped, Verdict};

use super::*;
use crate::direct::Alive;
use crate::inbox::Message;

#[godot_api]
impl HoldHandRoom {
    /// Returns [member networked].
    #[func]
    pub fn is_networked(&self) -> bool {
        self.networked
    }

    /// Returns [member keep_enet_throttle_open].
    #[func]
    pub fn is_keeping_enet_throttle_open(&self) -> bool {
        self.keep_enet_throttle_open
    }

    /// Emitted when `from` asks `to` to hold hands.
    #[signal]
    pub(super) fn requested(from: i64, to: i64);
    /// Emitted when `recipient` accepts `initiator`'s request.
    #[signal]
    pub(super) fn accepted(initiator: i64, recipient: i64);
    /// Emitted when `by` declines `from`'s request.
    #[signal]
    pub(super) fn declined(from: i64, by: i64);
    /// Emitted when `from`'s request to `to` expires unanswered.
    #[signal]
    pub(super) fn expired(from: i64, to: i64);
    /// Emitted when `from` withdraws the request to `to` (or one of them leaves).
    #[signal]
    pub(super) fn withdrawn(from: i64, to: i64);
    /// Emitted when a pair ends because `by` cancelled or left.
    #[signal]
    pub(super) fn ended(initiator: i64, recipient: i64, by: i64);

    /// Returns the component registered for `player_id`, or null.
    #[func]
    pub fn get_component(&self, player_id: i64) -> Option<Gd<HoldHandComponent>> {
        self.members
            .iter()
            .find(|(id, c)| *id == player_id && c.alive())
            .map(|(_, c)| c.clone())
    }

    /// Removes a player (e.g. a peer that disconnected): ends their pair and their requests.
    #[func]
    pub fn remove_player(&mut self, player_id: i64) {
        let before = self.events.len();
        self.room.leave(player_id, &mut self.events);
        self.schedule_flush(before);
    }

    /// Returns how many calls from peers were rejected because they acted for another player.
    #[func]
    pub fn get_rejected_calls(&self) -> i64 {
        self.gate.stats().rejected
    }

    /// Returns how many calls from peers were dropped because their peer exceeded
    /// [member max_calls_per_second] (server side).
    #[func]
    pub fn get_rate_limited_calls(&self) -> i64 {
        self.gate.stats().rate_limited
    }

    /// Returns this room's counters: `calls` (calls from peers that passed the rate limit),
    /// `rate_limited`, `rejected` (acting for another player, or unknown), `refusals_sent`,
    /// `refusals_dropped` (refusals not sent because the peer was answered too often), and
    /// `warnings_suppressed` (server side); `refusals_received` (client side).
    #[func]
    pub fn get_stats(&self) -> VarDictionary {
        let s = self.gate.stats();
        let mut d = VarDictionary::new();
        d.set("calls", s.calls);
        d.set("rate_limited", s.rate_limited);
        d.set("rejected", s.rejected);
        d.set("refusals_sent", s.refusals_sent);
        d.set("refusals_dropped", s.refusals_dropped);
        d.set("refusals_received", s.refusals_received);
        d.set("warnings_suppressed", s.warnings_suppressed);
        d
    }

    /// Returns the server's counters for one peer: `calls` (passed the rate limit), `rate_limited`,
    /// `rejected`, `refusals_sent` and `refusals_dropped`; all 0 for a peer it has not heard from
    /// (or forgot: it keeps the 64 most recently heard peers).
    #[func]
    pub fn get_peer_stats(&self, peer: i64) -> VarDictionary {
        let p = self.gate.peer(peer);
        let mut d = VarDictionary::new();
        d.set("calls", i64::from(p.calls));
        d.set("rate_limited", i64::from(p.rate_limited));
        d.set("rejected", i64::from(p.rejected));
        d.set("refusals_sent", i64::from(p.refusals_sent));
        d.set("refusals_dropped", i64::from(p.refusals_dropped));
        d
    }

    /// Returns the messages this room dropped, by reason: `rate_limited` (beyond
    /// [member max_calls_per_second]), `forged` (acting for another player, or a server's message
    /// from a client), `malformed`, `unexpected`, plus `peers_disconnected` (peers the server
    /// disconnected for abuse, see the project settings under `entwine/network/`) and
    /// `warnings_held_back`.
    #[func]
    pub fn get_dropped_calls(&self) -> VarDictionary {
        crate::inbox::counts_dictionary(&self.gate.dropped())
    }

    /// A client's call, handled on the server: one byte array, a request, accept, decline or
    /// cancel made by the sending peer's player. At most [member max_calls_per_second] per peer;
    /// the excess, malformed calls and calls acting for another player are dropped and counted.
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _submit)]
    fn submit(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, server) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        if !server || self.mode() != Mode::Server {
            let v = self.gate.drop(sender, Dropped::Forged, t, abuse);
            self.dropped_message(sender, v, "a room call");
            return;
        }
        let limit = self.call_limit();
        let bytes = crate::inbox::bytes(&message);
        let payload = bytes.as_ref().map(PackedByteArray::as_slice);
        let call = match self.gate.admit(sender, payload, t, limit, abuse) {
            Admission::Pass(call) => call,
            Admission::Dropped(v) => {
                self.dropped_message(sender, v, "a room call");
                return;
            }
        };
        let Err(e) = self.apply_op(call) else {
            return;
        };
        if !self.gate.answer_refusal(sender, t) {
            return;
        }
        let why = Message::of(truncated(&e.to_string(), MAX_REFUSAL_BYTES).as_bytes());
        if let Err(e) = self.rpcs().refused(why).call_id(sender) {
            if let Some(held) = self.gate.unreachable(sender, t) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!(
                    "{me}: cannot answer peer {sender}: {e:?}{}",
                    held_back(held)
                );
            }
        }
    }

    /// The server's refusal of this peer's call (UTF-8 text), shown as a warning (counted in
    /// [method get_stats] as `refusals_received`).
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _refused)]
    fn refused(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, _) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let bytes = crate::inbox::bytes(&message);
        let why = self.gate.server_sent(sender, t, abuse).and_then(|()| {
            let b = bytes.as_ref().map(PackedByteArray::as_slice);
            match b.filter(|b| b.len() <= MAX_REFUSAL_BYTES) {
                Some(b) => core::str::from_utf8(b)
                    .map_err(|_| self.gate.drop(sender, Dropped::Malformed, t, abuse)),
                None => Err(self.gate.drop(sender, Dropped::Malformed, t, abuse)),
            }
        });
        match why {
            Ok(why) => {
                self.gate.refusal_received();
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!("{me}: the server refused: {why}");
            }
            Err(v) => self.dropped_message(sender, v, "a refusal"),
        }
    }

    /// One event of the server's room, replayed here (one byte array, only from the server).
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _replay)]
    fn replay(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, _) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let bytes = crate::inbox::bytes(&message);
        let event = self.gate.server_sent(sender, t, abuse).and_then(|()| {
            let b = bytes.as_ref().map(PackedByteArray::as_slice);
            b.and_then(RoomEvent::decode)
                .ok_or_else(|| self.gate.drop(sender, Dropped::Malformed, t, abuse))
        });
        let event = match event {
            Ok(event) => event,
            Err(v) => {
                self.dropped_message(sender, v, "a room event");
                return;
            }
        };
        let before = self.events.len();
        self.room.apply(event);
        self.events.push(event);
        self.schedule_flush(before);
    }

    /// A peer connected (server side): send it the room as it is.
    #[func(rename = _on_peer_connected)]
    fn on_peer_connected(&mut self, peer: i64) {
        if self.mode() != Mode::Server {
            return;
        }
        if self.keep_enet_throttle_open {
            super::super::links::keep_throttle_open(&self.to_gd().upcast(), peer);
        }
        let mut snapshot = Vec::new();
        self.room.snapshot(&mut snapshot);
        for event in snapshot {
            let event = Message::of(&event.encode());
            if let Err(e) = self.rpcs().replay(event).call_id(peer) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!("{me}: cannot send the room to peer {peer}: {e:?}");
            }
        }
    }

    /// A peer disconnected (server side): its player leaves, ending its pair everywhere.
    #[func(rename = _on_peer_disconnected)]
    fn on_peer_disconnected(&mut self, peer: i64) {
        if self.mode() == Mode::Server {
            self.remove_player(peer);
        }
    }

    /// Returns the number of players in the room.
    #[func]
    pub fn get_player_count(&self) -> i64 {
        self.members.len() as i64
    }
}

/// Most bytes of a refusal's text.
const MAX_REFUSAL_BYTES: usize = 256;

/// Returns `text` cut to at most `max` bytes, at a character boundary.
fn truncated(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl HoldHandRoom {
    /// Acts on a dropped message's verdict (see `crate::inbox::act`).
    fn dropped_message(&mut self, sender: i64, v: Verdict, what: &str) {
        let node = self.to_gd();
        crate::inbox::act(&node, self.gate.inbox_mut(), sender, v, what);
    }
}
