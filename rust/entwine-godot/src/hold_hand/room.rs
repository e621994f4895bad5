//! `HoldHandRoom`: the room that holds every player's interaction state, on one machine or on the
//! multiplayer server.

use entwine_core::hold_hand::{Interaction, PlayerId, Room, RoomCall, RoomError, RoomEvent};
use entwine_core::kit::{KeyedTable, RateLimit, TokenBucket, WarnThrottle};
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::{INode, Node, OfflineMultiplayerPeer};
use godot::prelude::*;

use crate::time::now;
use crate::warnings::Warnings;

use super::HoldHandComponent;

/// The room that decides who holds whose hand.
///
/// Every [HoldHandComponent] joins a room (its [member HoldHandComponent.room], or the nearest
/// ancestor room, or the first node in the group `entwine_hold_hand_rooms`). Requests, answers and
/// cancels go through the room, which validates them (the target exists, is not the asker, nobody
/// involved is busy) and expires unanswered requests after [member request_timeout] seconds. The
/// components only follow the state the room holds.
///
/// **In multiplayer** (when [member networked] is on and the scene's [MultiplayerAPI] has a connected
/// peer — ENet, WebSocket, WebRTC…), the server's room is the only one that decides. Put the room at
/// the same node path on every peer and give each component the peer id of the player it belongs to
/// as [member HoldHandComponent.player_id]. A client's request, accept, decline or cancel is sent to
/// the server, which checks that the sending peer acts only for its own player, applies it, and
/// replays the resulting events on every peer (late joiners get a snapshot); a refusal comes back to
/// the sender as a warning. A peer that disconnects leaves: its pair ends everywhere. Forged calls are
/// dropped and counted in [method get_rejected_calls].
///
/// **Flooding** does not get through: the server takes at most [member max_calls_per_second] calls
/// from each peer (a burst of one second's worth, then that rate); the excess is dropped and counted
/// ([method get_rate_limited_calls], [method get_stats], [method get_peer_stats]). Refusals are
/// answered at most 2 per second per peer (a burst of 5), and every kind of warning about a peer
/// (too many calls, acting for another player, an unknown call) is printed at most once per peer
/// per 10 seconds, saying how many like it were held back. Per-peer bookkeeping lives in fixed
/// tables (the 64 most recently heard peers), so memory stays bounded whatever the traffic.
#[derive(GodotClass)]
#[class(init, base = Node)]
pub struct HoldHandRoom {
    base: Base<Node>,

    /// Seconds a request waits for an answer before it expires (0.5–120; outside, clamped with
    /// one warning).
    #[export(range = (0.5, 120.0, 0.5, suffix = "s"))]
    #[init(val = 10.0)]
    request_timeout: f64,

    /// Use the MultiplayerAPI when a peer is connected: the server decides, clients follow.
    #[export]
    #[init(val = true)]
    networked: bool,

    /// Calls the server takes from one peer per second (and at once, as a burst); the excess is
    /// dropped and counted. Values below 1 (or not a number) count as 1, with one warning.
    #[export(range = (1.0, 1000.0, 1.0, or_greater, suffix = "calls/s"))]
    #[init(val = 20.0)]
    max_calls_per_second: f32,

    /// On an ENet server: keep ENet from dropping the pairs' frames after a hitch. ENet lets
    /// through only a share of unreliable datagrams (its packet throttle) and lowers that share
    /// for seconds whenever a round trip takes longer than usual, as it does after either end
    /// stalls for a moment; a pair's stream is unreliable and small (a few hundred bytes per
    /// second), and each frame it loses shows on the other screens. When on, the server sets
    /// every client's link so that the throttle never falls (`ENetPacketPeer.throttle_configure`
    /// with deceleration 0; ENet applies it at both ends). Turn it off if the game relies on the
    /// throttle to shed other unreliable traffic on congested links.
    #[export]
    #[init(val = true)]
    keep_enet_throttle_open: bool,

    room: Room,
    members: Vec<(PlayerId, Gd<HoldHandComponent>)>,
    events: Vec<RoomEvent>,
    /// Calls from peers that tried to act for another player (server side).
    rejected: i64,
    watching: bool,
    /// Server side: per-peer rate limits and counters.
    peers: KeyedTable<PlayerId, PeerCalls, PEER_SLOTS>,
    /// Server side: one warning per (peer, kind) per [`WARN_INTERVAL`].
    #[init(val = WarnThrottle::new(WARN_INTERVAL))]
    warns: WarnThrottle<(PlayerId, WarnKind), PEER_SLOTS>,
    /// One warning per bad setting (by property name).
    settings: Warnings,
    stats: RoomStats,
}

/// Peers whose rate limits and counters the server keeps (the most recently heard ones).
const PEER_SLOTS: usize = 64;
/// Seconds between two warnings of one kind about one peer.
const WARN_INTERVAL: f64 = 10.0;
/// Refusals the server sends one peer: a burst of 5, then 2 per second.
const REFUSALS: RateLimit = RateLimit {
    capacity: 5.0,
    per_second: 2.0,
};

/// What the server warns about a peer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum WarnKind {
    Flood,
    Forged,
    Unknown,
    Unreachable,
}

/// One peer's rate limits and counters (server side).
#[derive(Clone, Copy, Default)]
struct PeerCalls {
    calls: TokenBucket,
    replies: TokenBucket,
    handled: u32,
    rate_limited: u32,
    rejected: u32,
    refusals_sent: u32,
    refusals_dropped: u32,
}

/// Totals over every peer.
#[derive(Clone, Copy, Default)]
struct RoomStats {
    calls: i64,
    rate_limited: i64,
    refusals_sent: i64,
    refusals_dropped: i64,
    refusals_received: i64,
}

/// How this room runs right now.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No network: this room decides.
    Local,
    /// The multiplayer server: this room decides and replays its events to every peer.
    Server,
    /// A multiplayer client with this peer id: the server decides; this room replays.
    Client(i64),
}

#[godot_api]
impl INode for HoldHandRoom {
    fn enter_tree(&mut self) {
        self.base_mut().add_to_group("entwine_hold_hand_rooms");
    }

    fn physics_process(&mut self, _delta: f64) {
        self.request_timeout();
        self.call_limit();
        self.watch_peers();
        if matches!(self.mode(), Mode::Client(_)) {
            return; // the server expires requests and removes players
        }
        let before = self.events.len();
        self.room.expire(now(), &mut self.events);
        // A freed component's player leaves: its pair and requests end.
        while let Some(gone) = self
            .members
            .iter()
            .position(|(_, c)| !c.is_instance_valid())
        {
            let (id, _) = self.members.swap_remove(gone);
            self.room.leave(id, &mut self.events);
        }
        self.schedule_flush(before);
    }
}

#[godot_api]
impl HoldHandRoom {
    /// Emitted when `from` asks `to` to hold hands.
    #[signal]
    fn requested(from: i64, to: i64);
    /// Emitted when `recipient` accepts `initiator`'s request.
    #[signal]
    fn accepted(initiator: i64, recipient: i64);
    /// Emitted when `by` declines `from`'s request.
    #[signal]
    fn declined(from: i64, by: i64);
    /// Emitted when `from`'s request to `to` expires unanswered.
    #[signal]
    fn expired(from: i64, to: i64);
    /// Emitted when `from` withdraws the request to `to` (or one of them leaves).
    #[signal]
    fn withdrawn(from: i64, to: i64);
    /// Emitted when a pair ends because `by` cancelled or left.
    #[signal]
    fn ended(initiator: i64, recipient: i64, by: i64);

    /// Returns the component registered for `player_id`, or null.
    #[func]
    pub fn get_component(&self, player_id: i64) -> Option<Gd<HoldHandComponent>> {
        self.members
            .iter()
            .find(|(id, c)| *id == player_id && c.is_instance_valid())
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
        self.rejected
    }

    /// Returns how many calls from peers were dropped because their peer exceeded
    /// [member max_calls_per_second] (server side).
    #[func]
    pub fn get_rate_limited_calls(&self) -> i64 {
        self.stats.rate_limited
    }

    /// Returns this room's counters: `calls` (calls from peers that passed the rate limit),
    /// `rate_limited`, `rejected` (acting for another player, or unknown), `refusals_sent`,
    /// `refusals_dropped` (refusals not sent because the peer was answered too often), and
    /// `warnings_suppressed` (server side); `refusals_received` (client side).
    #[func]
    pub fn get_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("calls", self.stats.calls);
        d.set("rate_limited", self.stats.rate_limited);
        d.set("rejected", self.rejected);
        d.set("refusals_sent", self.stats.refusals_sent);
        d.set("refusals_dropped", self.stats.refusals_dropped);
        d.set("refusals_received", self.stats.refusals_received);
        d.set("warnings_suppressed", self.warns.suppressed() as i64);
        d
    }

    /// Returns the server's counters for one peer: `calls` (passed the rate limit), `rate_limited`,
    /// `rejected`, `refusals_sent` and `refusals_dropped`; all 0 for a peer it has not heard from
    /// (or forgot: it keeps the 64 most recently heard peers).
    #[func]
    pub fn get_peer_stats(&self, peer: i64) -> VarDictionary {
        let p = self.peers.get(peer).copied().unwrap_or_default();
        let mut d = VarDictionary::new();
        d.set("calls", i64::from(p.handled));
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
        let passed = self.peers.entry(sender).is_none_or(|p| {
            let ok = p.calls.try_take(t, limit);
            if ok {
                p.handled = p.handled.saturating_add(1);
            } else {
                p.rate_limited = p.rate_limited.saturating_add(1);
            }
            ok
        });
        if !passed {
            self.stats.rate_limited += 1;
            if let Some(held) = self.warns.check((sender, WarnKind::Flood), t) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!(
                    "{me}: peer {sender} sends more than {} calls per second; the excess is \
                     dropped ({} dropped so far{})",
                    limit.per_second,
                    self.stats.rate_limited,
                    held_back(held)
                );
            }
            return;
        }
        self.stats.calls += 1;
        let Some(call) = RoomCall::decode((op, actor, target)) else {
            self.reject(sender);
            if let Some(held) = self.warns.check((sender, WarnKind::Unknown), t) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!(
                    "{me}: peer {sender} sent an unknown call {op}; dropped{}",
                    held_back(held)
                );
            }
            return;
        };
        if actor != sender {
            self.reject(sender);
            if let Some(held) = self.warns.check((sender, WarnKind::Forged), t) {
                let me = crate::warnings::label(&self.to_gd());
                godot_warn!(
                    "{me}: peer {sender} tried to act for player {actor}; dropped ({} so \
                     far{})",
                    self.rejected,
                    held_back(held)
                );
            }
            return;
        }
        if let Err(e) = self.apply_op(call) {
            let answer = self
                .peers
                .entry(sender)
                .is_none_or(|p| p.replies.try_take(t, REFUSALS));
            if let Some(p) = self.peers.entry(sender) {
                if answer {
                    p.refusals_sent = p.refusals_sent.saturating_add(1);
                } else {
                    p.refusals_dropped = p.refusals_dropped.saturating_add(1);
                }
            }
            if !answer {
                self.stats.refusals_dropped += 1;
                return;
            }
            self.stats.refusals_sent += 1;
            let why = GString::from(&e.to_string());
            if let Err(e) = self.rpcs().refused(&why).call_id(sender) {
                if let Some(held) = self.warns.check((sender, WarnKind::Unreachable), t) {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!(
                        "{me}: cannot answer peer {sender}: {e:?}{}",
                        held_back(held)
                    );
                }
            }
        }
    }

    /// The server's refusal of this peer's call, shown as a warning (counted in
    /// [method get_stats] as `refusals_received`).
    #[rpc(authority, call_remote, reliable)]
    fn refused(&mut self, why: GString) {
        self.stats.refusals_received += 1;
        let me = crate::warnings::label(&self.to_gd());
        godot_warn!("{me}: the server refused: {why}");
    }

    /// One event of the server's room, replayed here: `kind` 0 requested, 1 accepted, 2 declined,
    /// 3 expired, 4 withdrawn, 5 ended.
    #[rpc(authority, call_remote, reliable)]
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
    #[func]
    fn on_peer_connected(&mut self, peer: i64) {
        if self.mode() != Mode::Server {
            return;
        }
        if self.keep_enet_throttle_open {
            super::links::keep_throttle_open(&self.to_gd().upcast(), peer);
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
    #[func]
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

impl HoldHandRoom {
    /// Counts a call from `peer` that tried to act for another player or was unknown.
    fn reject(&mut self, peer: PlayerId) {
        self.rejected += 1;
        if let Some(p) = self.peers.entry(peer) {
            p.rejected = p.rejected.saturating_add(1);
        }
    }

    /// Returns the per-peer call limit from [member max_calls_per_second].
    /// Warns once (naming the property) while it is not a number or below 1.
    fn call_limit(&mut self) -> RateLimit {
        let node = self.to_gd();
        let rate = self.max_calls_per_second;
        let rate = self
            .settings
            .f32_within(&node, "max_calls_per_second", rate, 1.0, 1e6, 1.0);
        RateLimit::per_second(rate)
    }

    /// Returns [member request_timeout] (s), clamped to 0.5–120 (NaN: 10) with one warning naming
    /// the property while it is outside.
    fn request_timeout(&mut self) -> f64 {
        let node = self.to_gd();
        let t = self.request_timeout;
        let valid = (0.5..=120.0).contains(&t);
        let fallback = if t.is_nan() {
            10.0
        } else {
            t.clamp(0.5, 120.0)
        };
        self.settings.property(
            &node,
            "request_timeout",
            t,
            valid,
            fallback,
            "must be in 0.5..=120 s",
        )
    }

    /// Adds a component under `id`; returns false (and changes nothing) when the id is taken.
    pub(crate) fn join(&mut self, id: PlayerId, component: Gd<HoldHandComponent>) -> bool {
        if let Some(existing) = self.get_component(id) {
            return existing == component;
        }
        self.members.retain(|(_, c)| c.is_instance_valid());
        self.room.join(id);
        self.members.push((id, component));
        true
    }

    /// Returns the interaction the room holds for `id`.
    pub(crate) fn interaction(&self, id: PlayerId) -> Option<Interaction> {
        self.room.interaction(id)
    }

    /// Returns who has a pending request to `id`.
    pub(crate) fn pending_request_to(&self, id: PlayerId) -> Option<PlayerId> {
        self.room.pending_request_to(id)
    }

    /// Runs a room call, or sends it to the server on a client; its signals follow at the end of the
    /// frame. Returns the (local) refusal, if any.
    pub(crate) fn call(&mut self, op: RoomCall) -> Result<(), RoomError> {
        let Mode::Client(me) = self.mode() else {
            return self.apply_op(op);
        };
        let (code, actor, target) = op.encode();
        if actor != me {
            // The server would drop it: say so here, where the mistake is.
            return Err(RoomError::NotYours(actor));
        }
        if let Err(e) = self.rpcs().submit(code, actor, target).call_id(1) {
            crate::warnings::warn(&self.to_gd(), &format!("cannot reach the server: {e:?}"));
        }
        Ok(())
    }

    /// Applies a call to this (deciding) room.
    fn apply_op(&mut self, op: RoomCall) -> Result<(), RoomError> {
        let before = self.events.len();
        let timeout = self.request_timeout();
        let events = &mut self.events;
        let result = match op {
            RoomCall::Request { from, to } => self
                .room
                .request(from, to, now(), timeout)
                .map(|e| events.push(e)),
            RoomCall::Accept { by } => self.room.accept(by).map(|e| events.push(e)),
            RoomCall::Decline { by } => self.room.decline(by).map(|e| events.push(e)),
            RoomCall::Cancel { by } => self.room.cancel(by, events),
        };
        self.schedule_flush(before);
        result
    }

    /// Schedules [method flush_events] when events were added after index `before`.
    ///
    /// Signals are emitted deferred, from the main loop, so that handlers may call back into the room
    /// and the components (e.g. accept from `request_received`) without re-entering a call in progress.
    ///
    /// On the server, every event added here is also replayed on every peer.
    fn schedule_flush(&mut self, before: usize) {
        if self.mode() == Mode::Server {
            for i in before..self.events.len() {
                let (kind, a, b, c, t) = self.events[i].encode();
                if let Err(e) = self.rpcs().replay(kind, a, b, c, t).call() {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!("{me}: cannot replay an event: {e:?}");
                }
            }
        }
        if before == 0 && !self.events.is_empty() {
            self.base_mut().call_deferred("flush_events", &[]);
        }
    }

    /// Returns this peer's multiplayer id when the room runs networked (server or client), else
    /// `None` (every player is local).
    pub(crate) fn local_peer(&self) -> Option<PlayerId> {
        match self.mode() {
            Mode::Local => None,
            Mode::Server => Some(1),
            Mode::Client(me) => Some(me),
        }
    }

    /// Returns how this room runs now.
    fn mode(&self) -> Mode {
        if !self.networked {
            return Mode::Local;
        }
        let Some(mp) = self.base().get_multiplayer() else {
            return Mode::Local;
        };
        match mp.get_multiplayer_peer() {
            Some(peer)
                if peer.clone().try_cast::<OfflineMultiplayerPeer>().is_err()
                    && peer.get_connection_status() == ConnectionStatus::CONNECTED =>
            {
                if mp.is_server() {
                    Mode::Server
                } else {
                    Mode::Client(i64::from(mp.get_unique_id()))
                }
            }
            _ => Mode::Local,
        }
    }

    /// Connects to the MultiplayerAPI's peer signals once it exists.
    fn watch_peers(&mut self) {
        if self.watching || !self.networked {
            return;
        }
        let Some(mut mp) = self.base().get_multiplayer() else {
            return;
        };
        let this = self.to_gd();
        mp.connect("peer_connected", &this.callable("on_peer_connected"));
        mp.connect("peer_disconnected", &this.callable("on_peer_disconnected"));
        self.watching = true;
        if self.keep_enet_throttle_open && self.mode() == Mode::Server {
            for peer in mp.get_peers().as_slice() {
                super::links::keep_throttle_open(&this.clone().upcast(), i64::from(*peer));
            }
        }
    }
}

#[godot_api(secondary)]
impl HoldHandRoom {
    /// Emits the signals of the room's pending events (called deferred; you never need to call it).
    #[func]
    fn flush_events(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        let emit: Vec<(RoomEvent, [Option<Gd<HoldHandComponent>>; 2])> = events
            .drain(..)
            .map(|e| {
                let who = match e {
                    RoomEvent::Requested { to, .. } => [self.get_component(to), None],
                    RoomEvent::Accepted { initiator, .. } => [self.get_component(initiator), None],
                    RoomEvent::Declined { from, .. } | RoomEvent::Expired { from, .. } => {
                        [self.get_component(from), None]
                    }
                    RoomEvent::Withdrawn { to, .. } => [self.get_component(to), None],
                    RoomEvent::Ended {
                        initiator,
                        recipient,
                        ..
                    } => [self.get_component(initiator), self.get_component(recipient)],
                };
                (e, who)
            })
            .collect();
        self.events = events;
        self.members
            .retain(|(id, c)| c.is_instance_valid() && self.room.contains(*id));
        let room = self.to_gd();
        // Handlers may call back into this room: let them, while nothing here is borrowed.
        let _reentrant = self.base_mut();
        for (event, who) in emit {
            Self::emit(&room, event, who);
        }
    }
}

impl HoldHandRoom {
    /// Emits one event's room signal and the involved components' signals.
    fn emit(room: &Gd<Self>, event: RoomEvent, who: [Option<Gd<HoldHandComponent>>; 2]) {
        let room = room.clone();
        let [first, second] = who;
        match event {
            RoomEvent::Requested { from, to, .. } => {
                room.signals().requested().emit(from, to);
                if let Some(c) = first {
                    c.signals().request_received().emit(from);
                }
            }
            RoomEvent::Accepted {
                initiator,
                recipient,
            } => {
                room.signals().accepted().emit(initiator, recipient);
                if let Some(c) = first {
                    c.signals().request_accepted().emit(recipient);
                }
            }
            RoomEvent::Declined { from, by } => {
                room.signals().declined().emit(from, by);
                if let Some(c) = first {
                    c.signals().request_declined().emit(by);
                }
            }
            RoomEvent::Expired { from, to } => {
                room.signals().expired().emit(from, to);
                if let Some(c) = first {
                    c.signals().request_expired().emit(to);
                }
            }
            RoomEvent::Withdrawn { from, to } => {
                room.signals().withdrawn().emit(from, to);
                if let Some(c) = first {
                    c.signals().request_withdrawn().emit(from);
                }
            }
            RoomEvent::Ended {
                initiator,
                recipient,
                by,
            } => {
                room.signals().ended().emit(initiator, recipient, by);
                for c in [first, second].into_iter().flatten() {
                    c.signals().cancelled().emit(by);
                }
            }
        }
    }
}

/// Returns the tail of a warning that says how many like it were held back.
fn held_back(held: u32) -> String {
    if held == 0 {
        String::new()
    } else {
        format!("; {held} more like it held back in the last {WARN_INTERVAL} s")
    }
}
