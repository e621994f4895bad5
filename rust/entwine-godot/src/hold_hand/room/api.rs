//! `HoldHandRoom`'s script API: its signals, queries and counters, and the RPCs between a client's
//! room and the server's (calls judged by the core's `CallGate`, events replayed).

use entwine_core::hold_hand::gate::held_back;
use entwine_core::hold_hand::Admission;

use super::*;
use crate::direct::Alive;

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

    /// A client's call, handled on the server: `op` 0 request, 1 accept, 2 decline, 3 cancel, made by
    /// `actor` (who must be the sending peer) toward `target` (for a request). At most
    /// [member max_calls_per_second] per peer; the excess is dropped and counted.
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _submit)]
    fn submit(&mut self, op: i32, actor: i64, target: i64) {
        if self.mode() != Mode::Server {
            return;
        }
        let sender = self
            .base()
            .get_multiplayer()
            .map_or(0, |mp| i64::from(mp.get_remote_sender_id()));
        let t = now();
        let limit = self.call_limit();
        let call = match self.gate.admit(sender, (op, actor, target), t, limit) {
            Admission::Pass(call) => call,
            Admission::RateLimited { warn } => {
                if let Some(held) = warn {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!(
                        "{me}: peer {sender} sends more than {} calls per second; the excess is \
                         dropped ({} dropped so far{})",
                        limit.per_second,
                        self.gate.stats().rate_limited,
                        held_back(held)
                    );
                }
                return;
            }
            Admission::Unknown { warn } => {
                if let Some(held) = warn {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!(
                        "{me}: peer {sender} sent an unknown call {op}; dropped{}",
                        held_back(held)
                    );
                }
                return;
            }
            Admission::Forged { warn } => {
                if let Some(held) = warn {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!(
                        "{me}: peer {sender} tried to act for player {actor}; dropped ({} so \
                         far{})",
                        self.gate.stats().rejected,
                        held_back(held)
                    );
                }
                return;
            }
        };
        let Err(e) = self.apply_op(call) else {
            return;
        };
        if !self.gate.answer_refusal(sender, t) {
            return;
        }
        let why = GString::from(&e.to_string());
        if let Err(e) = self.rpcs().refused(&why).call_id(sender) {
            if let Some(held) = self.gate.unreachable(sender, t) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!(
                    "{me}: cannot answer peer {sender}: {e:?}{}",
                    held_back(held)
                );
            }
        }
    }

    /// The server's refusal of this peer's call, shown as a warning (counted in
    /// [method get_stats] as `refusals_received`).
    #[rpc(authority, call_remote, reliable)]
    #[func(rename = _refused)]
    fn refused(&mut self, why: GString) {
        self.gate.refusal_received();
        let me = crate::warnings::label(&self.to_gd());
        godot_warn!("{me}: the server refused: {why}");
    }

    /// One event of the server's room, replayed here: `kind` 0 requested, 1 accepted, 2 declined,
    /// 3 expired, 4 withdrawn, 5 ended.
    #[rpc(authority, call_remote, reliable)]
    #[func(rename = _replay)]
    fn replay(&mut self, kind: i32, a: i64, b: i64, c: i64, expires_at: f64) {
        let Some(event) = RoomEvent::decode((kind, a, b, c, expires_at)) else {
            return;
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
            let (kind, a, b, c, t) = event.encode();
            if let Err(e) = self.rpcs().replay(kind, a, b, c, t).call_id(peer) {
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
