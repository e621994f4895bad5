//! `HoldHandRoom`: the local room that holds every player's interaction state.

use entwine_core::hold_hand::{Interaction, PlayerId, Room, RoomError, RoomEvent};
use godot::classes::{INode, Node, Time};
use godot::prelude::*;

use super::HoldHandComponent;

/// The room that decides who holds whose hand, on one machine.
///
/// Every [HoldHandComponent] joins a room (its [member HoldHandComponent.room], or the nearest
/// ancestor room, or the first node in the group `entwine_hold_hand_rooms`). Requests, answers and
/// cancels go through the room, which validates them (the target exists, is not the asker, nobody
/// involved is busy) and expires unanswered requests after [member request_timeout] seconds. The
/// components only follow the state the room holds, so a networked game can put the same decisions
/// on its server.
#[derive(GodotClass)]
#[class(init, base = Node)]
pub struct HoldHandRoom {
    base: Base<Node>,

    /// Seconds a request waits for an answer before it expires.
    #[export(range = (0.5, 120.0, 0.5, suffix = "s"))]
    #[init(val = 10.0)]
    request_timeout: f64,

    room: Room,
    members: Vec<(PlayerId, Gd<HoldHandComponent>)>,
    events: Vec<RoomEvent>,
}

#[godot_api]
impl INode for HoldHandRoom {
    fn enter_tree(&mut self) {
        self.base_mut().add_to_group("entwine_hold_hand_rooms");
    }

    fn physics_process(&mut self, _delta: f64) {
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

    /// Runs a room call; its signals follow at the end of the frame. Returns the refusal, if any.
    pub(crate) fn call(&mut self, op: RoomOp) -> Result<(), RoomError> {
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
    fn schedule_flush(&mut self, before: usize) {
        if before == 0 && !self.events.is_empty() {
            self.base_mut().call_deferred("flush_events", &[]);
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

/// A call a component makes on its room.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RoomOp {
    Request { from: PlayerId, to: PlayerId },
    Accept { by: PlayerId },
    Decline { by: PlayerId },
    Cancel { by: PlayerId },
}

fn now() -> f64 {
    Time::singleton().get_ticks_usec() as f64 * 1e-6
}
