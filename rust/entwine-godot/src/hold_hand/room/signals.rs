//! `HoldHandRoom`'s signals: the room's pending events emitted, deferred, as the room's and the
//! involved components' signals, with nothing borrowed so handlers may call back in.

use entwine_core::hold_hand::RoomEvent;
use godot::prelude::*;

use super::super::HoldHandComponent;
use super::HoldHandRoom;
use crate::direct::Alive;

#[godot_api(secondary)]
impl HoldHandRoom {
    /// Emits the signals of the room's pending events (called deferred; you never need to call it).
    #[func(rename = _flush_events)]
    fn flush_events(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        let emit: Vec<(RoomEvent, [Option<Gd<HoldHandComponent>>; 2])> = events
            .drain(..)
            .map(|e| {
                let [a, b] = e.notified();
                let who = [
                    a.and_then(|id| self.get_component(id)),
                    b.and_then(|id| self.get_component(id)),
                ];
                (e, who)
            })
            .collect();
        self.events = events;
        self.members
            .retain(|(id, c)| c.alive() && self.room.contains(*id));
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
