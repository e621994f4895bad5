//! `NetClock`: the server's clock, estimated on every client through Godot's MultiplayerAPI.
//! The glue sends and answers the ping RPCs; the estimate and the ping timer are `core::clock`.

use entwine_core::clock::{ClockSync, PingTimer, PING_INTERVAL};
use godot::classes::multiplayer_peer::ConnectionStatus;
use godot::classes::{INode, Node};
use godot::prelude::*;

use crate::time::now;

/// The multiplayer server's clock, shared with every client.
///
/// Put one `NetClock` at the same node path on the server and on every client. Clients ping the
/// server every [member ping_interval] seconds over the game's own [MultiplayerPeer] (ENet,
/// WebSocket, WebRTC…); the server answers, and each client keeps the estimate from the fastest recent
/// round trip. [method get_server_time] then gives the same clock on every peer, which timestamped
/// commands and snapshots rely on. On the server (or without a network) it is the local clock.
///
/// Only the server answers pings, and answers are only accepted from the server; impossible answers
/// (non-finite, from the future, older than 10 s) are dropped and counted in [member rejected_answers].
/// Every EntwineNetClock joins the group `entwine_net_clocks`, where [HoldHandComponent] finds it to stamp
/// its stream.
#[derive(GodotClass)]
#[class(init, base = Node, rename = EntwineNetClock)]
pub struct NetClock {
    base: Base<Node>,

    /// Seconds between pings sent by a client. 0 disables automatic pinging (call [method ping_server]).
    #[export(range = (PING_INTERVAL.hint_min(), PING_INTERVAL.hint_max(), 0.05, suffix = PING_INTERVAL.suffix()))]
    #[init(val = f64::from(PING_INTERVAL.default))]
    ping_interval: f64,

    sync: ClockSync,
    timer: PingTimer,
}

/// Group every `NetClock` joins, so other nodes find it without a path.
pub const GROUP: &str = "entwine_net_clocks";

#[godot_api]
impl INode for NetClock {
    fn enter_tree(&mut self) {
        self.base_mut().add_to_group(GROUP);
    }

    fn process(&mut self, delta: f64) {
        let client = self.is_client();
        if self.timer.due(delta, self.ping_interval, client) {
            self.ping_server();
        }
    }
}

#[godot_api]
impl NetClock {
    /// Emitted on a client each time a server answer arrives, with the round trip in milliseconds.
    #[signal]
    fn synced(rtt_ms: f64);

    /// Returns the estimated server time in seconds (the local clock on the server).
    #[func(rename = get_server_time)]
    pub fn server_time(&self) -> f64 {
        self.sync.server_time(now())
    }

    /// Returns whether [method get_server_time] is the server's clock: always on the server (and
    /// without a network, where it is the local clock), on a client once the first answer arrived.
    #[func]
    pub fn is_synced(&self) -> bool {
        self.sync.is_synced(self.is_client())
    }

    /// Returns the best recent round-trip time to the server in milliseconds, or -1 before the first answer.
    #[func]
    pub fn get_rtt_ms(&self) -> f64 {
        self.sync.rtt_ms()
    }

    /// Returns how many server answers were dropped as impossible.
    #[func]
    pub fn get_rejected_answers(&self) -> i64 {
        i64::from(self.sync.rejected())
    }

    /// Sends one ping to the server now (clients only; does nothing on the server).
    #[func]
    pub fn ping_server(&mut self) {
        if self.is_client() {
            let stamp = now();
            // The server has peer id 1 in Godot's high-level multiplayer.
            if let Err(e) = self.rpcs().ping(stamp).call_id(1) {
                godot_warn!("EntwineNetClock: cannot ping the server: {e:?}");
            }
        }
    }

    /// A client's ping, handled on the server: answers the sender with its stamp and the server time.
    #[rpc(any_peer, call_remote, unreliable_ordered, channel = 0)]
    #[func(rename = _ping)]
    fn ping(&mut self, client_stamp: f64) {
        let Some(mp) = self.base().get_multiplayer() else {
            return;
        };
        if !mp.is_server() {
            return;
        }
        let sender = mp.get_remote_sender_id();
        if let Err(e) = self
            .rpcs()
            .pong(client_stamp, now())
            .call_id(i64::from(sender))
        {
            godot_warn!("EntwineNetClock: cannot answer peer {sender}: {e:?}");
        }
    }

    /// The server's answer, handled on a client.
    #[rpc(authority, call_remote, unreliable_ordered, channel = 0)]
    #[func(rename = _pong)]
    fn pong(&mut self, client_stamp: f64, server_time: f64) {
        if let Some(rtt_ms) = self.sync.record_ms(client_stamp, server_time, now()) {
            self.signals().synced().emit(rtt_ms);
        }
    }
}

impl NetClock {
    fn is_client(&self) -> bool {
        let Some(mp) = self.base().get_multiplayer() else {
            return false;
        };
        let connected = mp
            .get_multiplayer_peer()
            .is_some_and(|p| p.get_connection_status() == ConnectionStatus::CONNECTED);
        connected && !mp.is_server()
    }
}
