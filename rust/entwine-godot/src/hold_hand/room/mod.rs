//! `HoldHandRoom`: the node that holds every player's interaction state (the core's `Room`), on one
//! machine or on the multiplayer server; its script API, RPCs and signals are in the sibling files.

use crate::inbox::Message;
use entwine_core::hold_hand::room::{
    request_timeout_message, request_timeout_within, MAX_CALLS_PER_SECOND, REQUEST_TIMEOUT,
};
use entwine_core::hold_hand::{
    CallGate, Interaction, PlayerId, Room, RoomCall, RoomError, RoomEvent,
};
use entwine_core::kit::RateLimit;
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::{Engine, INode, Node, OfflineMultiplayerPeer};
use godot::prelude::*;
use std::cell::Cell;

use crate::direct::Alive;
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
/// dropped and counted in [method get_rejected_calls]. The components read whether the room runs
/// networked once per physics frame: a peer set during a frame counts for their ticks from the next
/// one (the room's own calls, such as a request, see it at once).
///
/// **Flooding** does not get through: the server takes at most [member max_calls_per_second] calls
/// from each peer (a burst of one second's worth, then that rate); the excess is dropped and counted
/// ([method get_rate_limited_calls], [method get_stats], [method get_peer_stats]). Refusals are
/// answered at most 2 per second per peer (a burst of 5), and every kind of warning about a peer
/// (too many calls, acting for another player, an unknown call) is printed at most once per peer
/// per 10 seconds, saying how many like it were held back. Per-peer bookkeeping lives in fixed
/// tables (the 64 most recently heard peers), so memory stays bounded whatever the traffic.
#[derive(GodotClass)]
#[class(init, base = Node, rename = EntwineHoldHandRoom)]
pub struct HoldHandRoom {
    base: Base<Node>,

    /// Seconds a request waits for an answer before it expires (outside its range, clamped with
    /// one warning).
    #[export(range = (REQUEST_TIMEOUT.hint_min(), REQUEST_TIMEOUT.hint_max(), 0.5, suffix = REQUEST_TIMEOUT.suffix()))]
    #[init(val = Room::DEFAULT_REQUEST_TIMEOUT)]
    request_timeout: f64,

    /// Use the MultiplayerAPI when a peer is connected: the server decides, clients follow.
    #[export]
    #[init(val = true)]
    #[var(get = is_networked)]
    networked: bool,

    /// Calls the server takes from one peer per second (and at once, as a burst); the excess is
    /// dropped and counted. Values below 1 count as 1 (not a number: the default), with one warning.
    #[export(range = (MAX_CALLS_PER_SECOND.hint_min(), MAX_CALLS_PER_SECOND.hint_max(), 1.0, or_greater, suffix = "calls/s"))]
    #[init(val = MAX_CALLS_PER_SECOND.default)]
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
    #[var(get = is_keeping_enet_throttle_open)]
    keep_enet_throttle_open: bool,

    room: Room,
    members: Vec<(PlayerId, Gd<HoldHandComponent>)>,
    events: Vec<RoomEvent>,
    watching: bool,
    /// Server side: per-peer rate limits, counters and throttled warnings.
    gate: CallGate,
    /// One warning per bad setting (by property name).
    settings: Warnings,
    /// The multiplayer peer [`Self::mode`] last read, and what it was.
    peer_seen: Cell<Option<(InstanceId, SeenAs)>>,
    /// The mode as read in a physics frame, for the components' per-tick questions (a fresh read
    /// that differs drops it).
    frame_mode: Cell<Option<(u64, Mode)>>,
    /// The engine, kept for its physics frame count.
    engine: Option<Gd<Engine>>,
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

impl Mode {
    /// This peer's id in the room's network, `None` without one.
    fn peer(self) -> Option<PlayerId> {
        match self {
            Mode::Local => None,
            Mode::Server => Some(1),
            Mode::Client(me) => Some(me),
        }
    }
}

/// What [`HoldHandRoom::mode`] last found a multiplayer peer to be.
#[derive(Clone, Copy)]
enum SeenAs {
    /// An `OfflineMultiplayerPeer`.
    Offline,
    /// Connected with this peer id, as this mode.
    Connected(i64, Mode),
}

// After the class, so the class's generated macros are in scope.
mod api;
mod signals;

#[godot_api]
impl INode for HoldHandRoom {
    fn enter_tree(&mut self) {
        self.base_mut().add_to_group("entwine_hold_hand_rooms");
    }

    fn physics_process(&mut self, _delta: f64) {
        self.request_timeout();
        self.call_limit();
        self.watch_peers();
        let frame = self
            .engine
            .get_or_insert_with(Engine::singleton)
            .get_physics_frames();
        let mode = self.mode();
        self.frame_mode.set(Some((frame, mode)));
        if matches!(mode, Mode::Client(_)) {
            return; // the server expires requests and removes players
        }
        let before = self.events.len();
        self.room.expire(now(), &mut self.events);
        // A freed component's player leaves: its pair and requests end.
        while let Some(gone) = self.members.iter().position(|(_, c)| !c.alive()) {
            let (id, _) = self.members.swap_remove(gone);
            self.room.leave(id, &mut self.events);
        }
        self.schedule_flush(before);
    }
}

impl HoldHandRoom {
    /// Returns the per-peer call limit from [member max_calls_per_second].
    /// Warns once (naming the property) while it is not a number or below 1.
    fn call_limit(&mut self) -> RateLimit {
        let node = self.to_gd();
        let rate = self.max_calls_per_second;
        let rate = self.settings.param(&node, &MAX_CALLS_PER_SECOND, rate);
        RateLimit::per_second(rate)
    }

    /// Returns [member request_timeout] (s), clamped to 0.5–120 (NaN: 10) with one warning naming
    /// the property while it is outside.
    fn request_timeout(&mut self) -> f64 {
        let node = self.to_gd();
        let t = self.request_timeout;
        let (used, valid) = request_timeout_within(t);
        self.settings.setting(&node, "request_timeout", valid, || {
            request_timeout_message(t, used)
        });
        used
    }

    /// Adds a component under `id`; returns false (and changes nothing) when the id is taken.
    pub(crate) fn join(&mut self, id: PlayerId, component: Gd<HoldHandComponent>) -> bool {
        if let Some(existing) = self.get_component(id) {
            return existing == component;
        }
        self.members.retain(|(_, c)| c.alive());
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
        let actor = op.actor();
        if actor != me {
            // The server would drop it: say so here, where the mistake is.
            return Err(RoomError::NotYours(actor));
        }
        let call = Message::of(&op.encode());
        if let Err(e) = self.rpcs().submit(call).call_id(1) {
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
                let event = Message::of(&self.events[i].encode());
                if let Err(e) = self.rpcs().replay(event).call() {
                    let me = crate::warnings::label(&self.to_gd());
                    godot_warn!("{me}: cannot replay an event: {e:?}");
                }
            }
        }
        if before == 0 && !self.events.is_empty() {
            self.base_mut().call_deferred("_flush_events", &[]);
        }
    }

    /// Returns this peer's multiplayer id when the room runs networked (server or client), else
    /// `None` (every player is local).
    pub(crate) fn local_peer(&self) -> Option<PlayerId> {
        self.mode().peer()
    }

    /// [`Self::local_peer`] for a component's tick in physics frame `frame`: the mode is read once
    /// per physics frame (by the room's own tick, which runs first, or by the first component to
    /// ask), as reading it takes several engine calls.
    pub(crate) fn local_peer_in_frame(&self, frame: u64) -> Option<PlayerId> {
        let mode = match self.frame_mode.get() {
            Some((f, mode)) if f == frame => mode,
            _ => {
                let mode = self.mode();
                self.frame_mode.set(Some((frame, mode)));
                mode
            }
        };
        mode.peer()
    }

    /// Returns how this room runs now (a change since the frame's read drops that read).
    fn mode(&self) -> Mode {
        let mode = self.read_mode();
        if self.frame_mode.get().is_some_and(|(_, m)| m != mode) {
            self.frame_mode.set(None);
        }
        mode
    }

    /// Reads how this room runs from its MultiplayerAPI.
    fn read_mode(&self) -> Mode {
        if !self.networked {
            return Mode::Local;
        }
        let Some(mp) = self.base().get_multiplayer() else {
            return Mode::Local;
        };
        let Some(peer) = mp.get_multiplayer_peer() else {
            return Mode::Local;
        };
        // Whether a peer is offline is read once per peer object; whether it is the server, once
        // per peer object and peer id (an ENet peer closed and connected again gets a new id).
        let id = peer.instance_id();
        let known = self.peer_seen.get().filter(|(seen, _)| *seen == id);
        if let Some((_, SeenAs::Offline)) = known {
            return Mode::Local;
        }
        if known.is_none() && peer.clone().try_cast::<OfflineMultiplayerPeer>().is_ok() {
            self.peer_seen.set(Some((id, SeenAs::Offline)));
            return Mode::Local;
        }
        if peer.get_connection_status() != ConnectionStatus::CONNECTED {
            return Mode::Local;
        }
        let unique = i64::from(peer.get_unique_id());
        if let Some((_, SeenAs::Connected(seen, mode))) = known {
            if seen == unique {
                return mode;
            }
        }
        let mode = if mp.is_server() {
            Mode::Server
        } else {
            Mode::Client(i64::from(mp.get_unique_id()))
        };
        self.peer_seen
            .set(Some((id, SeenAs::Connected(unique, mode))));
        mode
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
        mp.connect("peer_connected", &this.callable("_on_peer_connected"));
        mp.connect("peer_disconnected", &this.callable("_on_peer_disconnected"));
        self.watching = true;
        if self.keep_enet_throttle_open && self.mode() == Mode::Server {
            for peer in mp.get_peers().as_slice() {
                super::links::keep_throttle_open(&this.clone().upcast(), i64::from(*peer));
            }
        }
    }
}
