//! Network: the server sends commands to every client (acknowledged, resent, silent peers
//! dropped) and state keyframes; clients apply them. The bookkeeping is the core's `CommandLog`.

use entwine_core::formation::command::{self, flight_age, Command, NetAction, Rejection};
use entwine_core::formation::keyframe::{decode_chunk, encode_chunk, MAX_CHUNK_AGENTS};
use entwine_core::kit::Seq16;
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::prelude::*;

use super::warn;
use super::FormationController;
use crate::convert::{vec3, vector3};
use crate::net_clock::NetClock;
use crate::time::now;

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
    /// A command from the server, handled on a client: applied once per id (resends are only
    /// acknowledged), aged by its time in flight when a [EntwineNetClock] is set, then acknowledged.
    pub(super) fn receive_command(
        &mut self,
        id: i64,
        stamp: f64,
        kind: i64,
        name: GString,
        v: Vector3,
        s: f32,
    ) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        let sender = mp.get_remote_sender_id();
        match self.commands.receive(id, sender, mp.is_server()) {
            Err(r) => {
                self.refuse(command::wire_name(kind), &r);
                return;
            }
            Ok(true) => {
                match Command::from_wire(kind, name.to_string(), vec3(v), s) {
                    Some(cmd) => {
                        // With a shared clock, catch up with the time the command spent in flight.
                        let age = flight_age(self.server_time(), stamp);
                        if self.apply(cmd) {
                            self.squad.age_command(age);
                        }
                    }
                    None => self.refuse("unknown", &Rejection::UnknownKind(kind)),
                }
                self.signals()
                    .command_received()
                    .emit(id, command::wire_name(kind));
            }
            Ok(false) => {}
        }
        if self.acknowledge_commands {
            if let Err(e) = self.rpcs().net_ack(id).call_id(1) {
                self.warn_plain(&format!("cannot acknowledge command {id}: {e:?}"));
            }
        }
    }

    /// A client's acknowledgement, handled on the server.
    pub(super) fn receive_ack(&mut self, id: i64) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !mp.is_server() {
            return;
        }
        let sender = mp.get_remote_sender_id();
        let _ = self.commands.ack(id, sender);
    }

    /// A state keyframe chunk from the server, handled on a client (see [member keyframe_rate]):
    /// malformed, stale or foreign chunks are dropped and counted, with one warning.
    pub(super) fn receive_keyframe(&mut self, chunk: PackedByteArray) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        let sender = mp.get_remote_sender_id();
        if sender != 1 || mp.is_server() {
            self.keyframes.stats[2] += 1;
            self.warn_once(
                warn::KEYFRAME_FOREIGN,
                &format!("state keyframe from peer {sender}, who is not the server; dropped (further ones are counted, not reported)"),
            );
            return;
        }
        let mut header = core::mem::take(&mut self.keyframes.header);
        let mut agents = core::mem::take(&mut self.keyframes.agents);
        match decode_chunk(chunk.as_slice(), &mut header, &mut agents) {
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
        let c = &sent.command;
        let name = GString::from(c.name.as_str());
        let (id, kind, v) = (i64::from(sent.id), c.kind.wire(), vector3(c.vector));
        if let Err(e) = self
            .rpcs()
            .net_command(id, sent.stamp, kind, &name, v, c.scalar)
            .call_id(i64::from(peer))
        {
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
            let bytes = PackedByteArray::from(self.keyframes.buf.as_slice());
            if self.rpcs().net_keyframe(&bytes).call().is_ok() {
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
