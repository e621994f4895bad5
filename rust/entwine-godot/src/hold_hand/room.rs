//! `HoldHandRoom`: the room that holds every player's interaction state, on one machine or on the
//! multiplayer server.

use entwine_core::hold_hand::{Interaction, PlayerId, Room, RoomError, RoomEvent};
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::{INode, Node, OfflineMultiplayerPeer, Time};
use godot::prelude::*;

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
#[derive(GodotClass)]
#[class(init, base = Node)]
pub struct HoldHandRoom {
    base: Base<Node>,

    /// Seconds a request waits for an answer before it expires.
    #[export(range = (0.5, 120.0, 0.5, suffix = "s"))]
    #[init(val = 10.0)]
    request_timeout: f64,

    /// Use the MultiplayerAPI when a peer is connected: the server decides, clients follow.
    #[export]
    #[init(val = true)]
    networked: bool,

    room: Room,
    members: Vec<(PlayerId, Gd<HoldHandComponent>)>,
    events: Vec<RoomEvent>,
    /// Calls from peers that tried to act for another player (server side).
    rejected: i64,
    watching: bool,
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

    /// A client's call, handled on the server: `op` 0 request, 1 accept, 2 decline, 3 cancel, made by
    /// `actor` (who must be the sending peer) toward `target` (for a request).
    #[rpc(any_peer, call_remote, reliable)]
    fn submit(&mut self, op: i32, actor: i64, target: i64) {
        if self.mode() != Mode::Server {
            return;
        }
        let sender = self
            .base()
            .get_multiplayer()
            .map_or(0, |mp| i64::from(mp.get_remote_sender_id()));
        let call = match op {
            0 => RoomOp::Request {
                from: actor,
                to: target,
            },
            1 => RoomOp::Accept { by: actor },
            2 => RoomOp::Decline { by: actor },
            3 => RoomOp::Cancel { by: actor },
            _ => {
                self.rejected += 1;
                godot_warn!("HoldHandRoom: peer {sender} sent an unknown call {op}; dropped");
                return;
            }
        };
        if actor != sender {
            self.rejected += 1;
            godot_warn!(
                "HoldHandRoom: peer {sender} tried to act for player {actor}; dropped ({} so far)",
                self.rejected
            );
            return;
        }
        if let Err(e) = self.apply_op(call) {
            let why = GString::from(&e.to_string());
            if let Err(e) = self.rpcs().refused(&why).call_id(sender) {
                godot_warn!("HoldHandRoom: cannot answer peer {sender}: {e:?}");
            }
        }
    }

    /// The server's refusal of this peer's call, shown as a warning.
    #[rpc(authority, call_remote, reliable)]
    fn refused(&mut self, why: GString) {
        godot_warn!("HoldHandRoom: the server refused: {why}");
    }

    /// One event of the server's room, replayed here: `kind` 0 requested, 1 accepted, 2 declined,
    /// 3 expired, 4 withdrawn, 5 ended.
    #[rpc(authority, call_remote, reliable)]
    fn replay(&mut self, kind: i32, a: i64, b: i64, c: i64, expires_at: f64) {
        let event = match kind {
            0 => RoomEvent::Requested {
                from: a,
                to: b,
                expires_at,
            },
            1 => RoomEvent::Accepted {
                initiator: a,
                recipient: b,
            },
            2 => RoomEvent::Declined { from: a, by: b },
            3 => RoomEvent::Expired { from: a, to: b },
            4 => RoomEvent::Withdrawn { from: a, to: b },
            5 => RoomEvent::Ended {
                initiator: a,
                recipient: b,
                by: c,
            },
            _ => return,
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
        let mut snapshot = Vec::new();
        self.room.snapshot(&mut snapshot);
        for event in snapshot {
            let (kind, a, b, c, t) = encode(event);
            if let Err(e) = self.rpcs().replay(kind, a, b, c, t).call_id(peer) {
                godot_warn!("HoldHandRoom: cannot send the room to peer {peer}: {e:?}");
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
    pub(crate) fn call(&mut self, op: RoomOp) -> Result<(), RoomError> {
        let Mode::Client(me) = self.mode() else {
            return self.apply_op(op);
        };
        let (code, actor, target) = match op {
            RoomOp::Request { from, to } => (0, from, to),
            RoomOp::Accept { by } => (1, by, 0),
            RoomOp::Decline { by } => (2, by, 0),
            RoomOp::Cancel { by } => (3, by, 0),
        };
        if actor != me {
            // The server would drop it: say so here, where the mistake is.
            return Err(RoomError::NotYours(actor));
        }
        if let Err(e) = self.rpcs().submit(code, actor, target).call_id(1) {
            godot_warn!("HoldHandRoom: cannot reach the server: {e:?}");
        }
        Ok(())
    }

    /// Applies a call to this (deciding) room.
    fn apply_op(&mut self, op: RoomOp) -> Result<(), RoomError> {
        let before = self.events.len();
        let timeout = self.request_timeout;
        let events = &mut self.events;
        let result = match op {
            RoomOp::Request { from, to } => self
                .room
                .request(from, to, now(), timeout)
                .map(|e| events.push(e)),
            RoomOp::Accept { by } => self.room.accept(by).map(|e| events.push(e)),
            RoomOp::Decline { by } => self.room.decline(by).map(|e| events.push(e)),
            RoomOp::Cancel { by } => self.room.cancel(by, events),
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
                let (kind, a, b, c, t) = encode(self.events[i]);
                if let Err(e) = self.rpcs().replay(kind, a, b, c, t).call() {
                    godot_warn!("HoldHandRoom: cannot replay an event: {e:?}");
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

/// A call a component makes on its room.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RoomOp {
    Request { from: PlayerId, to: PlayerId },
    Accept { by: PlayerId },
    Decline { by: PlayerId },
    Cancel { by: PlayerId },
}

/// Returns an event as the `replay` RPC's arguments.
fn encode(event: RoomEvent) -> (i32, i64, i64, i64, f64) {
    match event {
        RoomEvent::Requested {
            from,
            to,
            expires_at,
        } => (0, from, to, 0, expires_at),
        RoomEvent::Accepted {
            initiator,
            recipient,
        } => (1, initiator, recipient, 0, 0.0),
        RoomEvent::Declined { from, by } => (2, from, by, 0, 0.0),
        RoomEvent::Expired { from, to } => (3, from, to, 0, 0.0),
        RoomEvent::Withdrawn { from, to } => (4, from, to, 0, 0.0),
        RoomEvent::Ended {
            initiator,
            recipient,
            by,
        } => (5, initiator, recipient, by, 0.0),
    }
}

fn now() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}
