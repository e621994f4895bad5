//! Network: the server sends commands to every client (acknowledged, resent, silent peers
//! dropped) and state keyframes; clients apply them. The bookkeeping is the core's `CommandLog`.

use crate::inbox::Message;
use entwine_core::formation::command::{self, flight_age, NetAction, ACK_BYTES, MAX_COMMAND_BYTES};
use entwine_core::formation::keyframe::{
    decode_chunk, encode_chunk, MAX_CHUNK_AGENTS, MAX_CHUNK_BYTES,
};
use entwine_core::kit::inbox::{Dropped, Verdict, SERVER};
use entwine_core::kit::RateLimit;
use entwine_core::kit::Seq16;
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::prelude::*;

use super::warn;
use super::FormationController;
use crate::net_clock::NetClock;
use crate::time::now;

/// Acknowledgements the server reads per client: a burst of 60, then 60 per second.
const ACK_LIMIT: RateLimit = RateLimit::per_second(60.0);

#[godot_api(secondary)]
impl FormationController {
    /// Returns how many acknowledgements the server still waits for.
    #[func]
    pub fn get_pending_acks(&self) -> i32 {
        self.commands.pending_acks() as i32
    }

    /// Returns the state keyframe counters: `bytes_sent` (server, payload summed over clients),
    /// `applied`, `malformed` and `stale` (client, chunks).
    #[func]
    pub fn get_keyframe_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("bytes_sent", self.keyframes.stats[0]);
        d.set("applied", self.keyframes.stats[1]);
        d.set("malformed", self.keyframes.stats[2]);
        d.set("stale", self.keyframes.stats[3]);
        d
    }

    /// A peer disconnected (connected for you to the MultiplayerAPI's `peer_disconnected` when
    /// [member networked] is on; you never need to call it). On the server, the peer is forgotten
    /// by the acknowledgement tracker and its agents ([method set_agent_peer]) leave the contract
    /// at once in one re-form, without waiting for acknowledgement timeouts; [signal peer_dropped]
    /// is emitted when it owned an agent still taking part.
    #[func(rename = _on_peer_disconnected)]
    pub fn on_peer_disconnected(&mut self, peer_id: i64) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !self.networked || !mp.is_server() {
            return;
        }
        let Ok(peer) = i32::try_from(peer_id) else {
            return;
        };
        self.commands.forget_peer(peer);
        if self.deactivate_peer(peer) > 0 {
            self.signals().peer_dropped().emit(peer_id);
        }
    }

    /// Takes every agent tied to [param peer_id] (see [method set_agent_peer]) out of the contract
    /// in one re-form and forgets the acknowledgements the peer owed — what the server does by
    /// itself when a peer is dropped; call it when a peer disconnects if its agents should leave
    /// the contract too. Returns how many agents left.
    #[func]
    pub fn drop_peer(&mut self, peer_id: i32) -> i32 {
        self.commands.forget_peer(peer_id);
        self.deactivate_peer(peer_id) as i32
    }

    /// Ties agent `index` to multiplayer peer `peer_id`: when that peer is dropped, so is the agent.
    #[func]
    pub fn set_agent_peer(&mut self, index: i32, peer_id: i32) {
        if let Some(i) = self.index(index, "set_agent_peer") {
            if self.peer_of_agent.len() < self.squad.len() {
                self.peer_of_agent.resize(self.squad.len(), 0);
            }
            self.peer_of_agent[i] = peer_id;
        }
    }
}

impl FormationController {
    /// The bytes of a message that only the server may send (`None` once dropped and counted).
    fn server_message<'a>(
        &mut self,
        message: &'a Option<PackedByteArray>,
        cap: usize,
        what: &str,
    ) -> Option<&'a [u8]> {
        let (sender, server) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let inbox = &mut self.inbox;
        let checked = if server {
            Err(inbox.drop(sender, Dropped::Forged, t, abuse))
        } else {
            inbox.sender_is(sender, SERVER, t, abuse).and_then(|()| {
                let b = message.as_ref().map(PackedByteArray::as_slice);
                inbox.bytes(sender, b, cap, t, abuse)
            })
        };
        checked
            .map_err(|v| self.dropped_message(sender, v, what))
            .ok()
    }

    /// Acts on a dropped message's verdict (see `crate::inbox::act`).
    pub(super) fn dropped_message(&mut self, sender: i64, v: Verdict, what: &str) {
        let node = self.to_gd();
        crate::inbox::act(&node, &mut self.inbox, sender, v, what);
    }

    /// A command from the server, handled on a client: applied once per id (resends are only
    /// acknowledged), aged by its time in flight when a [EntwineNetClock] is set, then
    /// acknowledged.
    pub(super) fn receive_command(&mut self, message: &Message) {
        let bytes = crate::inbox::bytes(message);
        let Some(b) = self.server_message(&bytes, MAX_COMMAND_BYTES, "a squad command") else {
            return;
        };
        let Some((id, stamp, cmd)) = command::decode_message(b) else {
            let (t, abuse) = crate::inbox::clock();
            let v = self.inbox.drop(SERVER, Dropped::Malformed, t, abuse);
            self.dropped_message(SERVER, v, "a squad command");
            return;
        };
        let kind = cmd.kind.wire();
        match self.commands.receive(id, 1, false) {
            Err(r) => {
                self.refuse(command::wire_name(kind), &r);
                return;
            }
            Ok(true) => {
                // With a shared clock, catch up with the time the command spent in flight.
                let age = flight_age(self.server_time(), stamp);
                if self.apply(cmd) {
                    self.squad.age_command(age);
                }
                self.signals()
                    .command_received()
                    .emit(id, command::wire_name(kind));
            }
            Ok(false) => {}
        }
        if self.acknowledge_commands {
            let ack = Message::of(&id.to_le_bytes());
            if let Err(e) = self.rpcs().net_ack(ack).call_id(1) {
                self.warn_plain(&format!("cannot acknowledge command {id}: {e:?}"));
            }
        }
    }

    /// A client's acknowledgement, handled on the server.
    pub(super) fn receive_ack(&mut self, message: &Message) {
        let (sender, server) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let bytes = crate::inbox::bytes(message);
        let inbox = &mut self.inbox;
        let id = if server {
            inbox.admit(sender, t, ACK_LIMIT, abuse).and_then(|()| {
                let b = bytes.as_ref().map(PackedByteArray::as_slice);
                let b = inbox.bytes(sender, b, ACK_BYTES, t, abuse)?;
                command::decode_ack(b)
                    .ok_or_else(|| inbox.drop(sender, Dropped::Malformed, t, abuse))
            })
        } else {
            Err(inbox.drop(sender, Dropped::Forged, t, abuse))
        };
        match (id, i32::try_from(sender)) {
            (Ok(id), Ok(peer)) => {
                let _ = self.commands.ack(id, peer);
            }
            (Err(v), _) => self.dropped_message(sender, v, "a command acknowledgement"),
            (Ok(_), Err(_)) => {}
        }
    }

    /// A state keyframe chunk from the server, handled on a client (see [member keyframe_rate]):
    /// malformed or stale chunks are dropped and counted, with one warning.
    pub(super) fn receive_keyframe(&mut self, message: &Message) {
        let bytes = crate::inbox::bytes(message);
        let Some(chunk) = self.server_message(&bytes, MAX_CHUNK_BYTES, "a state keyframe") else {
            self.keyframes.stats[2] += 1;
            return;
        };
        let mut header = core::mem::take(&mut self.keyframes.header);
        let mut agents = core::mem::take(&mut self.keyframes.agents);
        match decode_chunk(chunk, &mut header, &mut agents) {
            Err(e) => {
                self.keyframes.stats[2] += 1;
                self.warn_once(
                    warn::KEYFRAME_MALFORMED,
                    &format!("malformed state keyframe from the server ({e}); dropped (further ones are counted, not reported)"),
                );
            }
            Ok(()) => {
                // Chunks of one keyframe share its number: the same one is not stale.
                let seq = Seq16(header.seq);
                let stale = self
                    .keyframes
                    .last_seq
                    .is_some_and(|last| !seq.is_same_or_newer_than(last));
                if stale {
                    self.keyframes.stats[3] += 1;
                } else {
                    self.keyframes.last_seq = Some(seq);
                    if header.formation != self.formation.to_string()
                        && !header.formation.is_empty()
                    {
                        let name = header.formation.clone();
                        if self.apply_form(&name) {
                            self.formation = name.as_str().into();
                        }
                    }
                    let age = flight_age(self.server_time(), header.server_time);
                    if self.squad.apply_keyframe(&header, &agents, age) {
                        self.keyframes.stats[1] += 1;
                    } else {
                        self.keyframes.stats[2] += 1;
                        self.warn_once(
                            warn::KEYFRAME_SIZE,
                            &format!("state keyframe for {} agents does not fit this squad of {}; dropped", header.total, self.squad.len()),
                        );
                    }
                }
            }
        }
        self.keyframes.header = header;
        self.keyframes.agents = agents;
    }

    /// Returns the shared server time from the [EntwineNetClock] at [member net_clock], if there is one.
    pub(super) fn server_time(&self) -> Option<f64> {
        if self.net_clock_node.is_empty() {
            return None;
        }
        self.base()
            .try_get_node_as::<NetClock>(&self.net_clock_node)
            .map(|clock| clock.bind().server_time())
    }

    pub(super) fn is_online(&self) -> bool {
        self.base().get_multiplayer().is_some_and(|mp| {
            mp.get_multiplayer_peer()
                .is_some_and(|p| p.get_connection_status() == ConnectionStatus::CONNECTED)
        })
    }

    pub(super) fn send_command(&mut self, peer: i32, sent: &command::Sent) {
        let id = i64::from(sent.id);
        let mut buf = [0u8; MAX_COMMAND_BYTES];
        let Ok(n) = command::encode_message(id, sent.stamp, &sent.command, &mut buf) else {
            self.warn_plain(&format!(
                "cannot send command {id}: its formation name is longer than 255 bytes"
            ));
            return;
        };
        let message = Message::of(&buf[..n]);
        if let Err(e) = self.rpcs().net_command(message).call_id(i64::from(peer)) {
            self.warn_plain(&format!("cannot send command {id} to peer {peer}: {e:?}"));
        }
    }

    pub(super) fn network_tick(&mut self) {
        if !self.networked {
            return;
        }
        if !self.watching_peers {
            if let Some(mut mp) = self.base().get_multiplayer() {
                let this = self.to_gd();
                mp.connect("peer_disconnected", &this.callable("_on_peer_disconnected"));
                self.watching_peers = true;
            }
        }
        // Peers that disconnected owe nothing: forget them, so a disconnect with a command in
        // flight never turns into a drop.
        if self.commands.tracks_peers() && self.is_online() {
            if let Some(mp) = self.base().get_multiplayer() {
                if mp.is_server() {
                    let peers = mp.get_peers();
                    let peers = peers.as_slice();
                    self.commands.retain_connected(|p| peers.contains(&p));
                }
            }
        }
        let now = now();
        while let Some(action) = self.commands.poll(now) {
            match action {
                NetAction::Resend { peer, sent } => self.send_command(peer, &sent),
                NetAction::Drop { peer } => {
                    self.warn_plain(&format!(
                        "peer {peer} never acknowledged a command (3 resends); dropped from the contract"
                    ));
                    self.deactivate_peer(peer);
                    self.signals().peer_dropped().emit(i64::from(peer));
                }
            }
        }
    }

    /// On the server, every 1 / [member keyframe_rate] s: sends the squad's state to every client.
    pub(super) fn keyframe_tick(&mut self, delta: f32) {
        // NaN: off; negative: 0 (off); above 60 Hz: 60 Hz (with one warning).
        let rate = self.keyframe_hz();
        if !self.networked || rate <= 0.0 || !self.is_online() {
            return;
        }
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !mp.is_server() {
            return;
        }
        self.keyframes.since += delta.clamp(0.0, 1.0);
        if self.keyframes.since < 1.0 / rate {
            return;
        }
        self.keyframes.since = 0.0;
        let clients = mp.get_peers().len() as i64;
        if clients == 0 {
            return;
        }
        self.keyframes.seq = self.keyframes.seq.next();
        let mut header = core::mem::take(&mut self.keyframes.header);
        let mut agents = core::mem::take(&mut self.keyframes.agents);
        self.squad.keyframe_header(&mut header);
        header.seq = self.keyframes.seq.0;
        header.server_time = self.server_time().unwrap_or_else(now);
        header.formation.clear();
        header.formation.push_str(&self.formation.to_string());
        for first in (0..self.squad.len()).step_by(MAX_CHUNK_AGENTS) {
            self.squad
                .keyframe_agents(first, MAX_CHUNK_AGENTS, &mut agents);
            header.first = first as u32;
            header.count = agents.len() as u32;
            self.keyframes.buf.clear();
            if let Err(e) = encode_chunk(&header, &agents, &mut self.keyframes.buf) {
                self.warn_once(
                    warn::KEYFRAME_ENCODE,
                    &format!("cannot encode a state keyframe ({e}); not sent"),
                );
                break;
            }
            let bytes = Message::of(&self.keyframes.buf);
            if self.rpcs().net_keyframe(bytes.clone()).call().is_ok() {
                self.keyframes.stats[0] += self.keyframes.buf.len() as i64 * clients;
            }
        }
        self.keyframes.header = header;
        self.keyframes.agents = agents;
    }

    /// Takes every agent tied to `peer` out of the contract in one re-form. Returns how many.
    pub(super) fn deactivate_peer(&mut self, peer: i32) -> usize {
        let owner = &self.peer_of_agent;
        self.squad
            .set_active_where(|i| owner.get(i) == Some(&peer), false)
    }
}
