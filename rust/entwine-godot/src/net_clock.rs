//! `NetClock`: the server's clock, estimated on every client through Godot's MultiplayerAPI.
//! The glue sends and answers the ping RPCs; the estimate and the ping timer are `core::clock`.

use crate::inbox::Message;
use entwine_core::clock::{
    decode_ping, decode_pong, encode_pong, ClockSync, PingTimer, PING_BYTES, PING_INTERVAL,
    PING_LIMIT, PONG_BYTES,
};
use entwine_core::kit::inbox::{Dropped, Inbox, SERVER};
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
/// Only the server answers pings, at most 20 per second per client, and answers are only accepted
/// from the server; impossible answers (non-finite, from the future, older than 10 s) are dropped
/// and counted in [method get_rejected_answers], and every other dropped message in
/// [method get_dropped_calls].
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
    inbox: Inbox,
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

    /// Returns the messages this clock dropped, by reason: `rate_limited` (pings beyond 20 per
    /// second from one client), `forged` (a ping to a client, an answer not from the server),
    /// `malformed`, `unexpected`, plus `peers_disconnected` (peers the server disconnected for
    /// abuse, see the project settings under `entwine/network/`) and `warnings_held_back`.
    #[func]
    pub fn get_dropped_calls(&self) -> VarDictionary {
        crate::inbox::counts_dictionary(&self.inbox.counts())
    }

    /// Sends one ping to the server now (clients only; does nothing on the server).
    #[func]
    pub fn ping_server(&mut self) {
        if self.is_client() {
            let stamp = Message::of(&now().to_le_bytes());
            // The server has peer id 1 in Godot's high-level multiplayer.
            if let Err(e) = self.rpcs().ping(stamp).call_id(1) {
                godot_warn!("EntwineNetClock: cannot ping the server: {e:?}");
            }
        }
    }

    /// A client's ping, handled on the server: answers the sender with its stamp and the server
    /// time (one byte array; anything else is dropped and counted).
    #[rpc(any_peer, call_remote, unreliable_ordered, channel = 0)]
    #[func(rename = _ping)]
    fn ping(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, server) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let stamp = if server {
            self.inbox
                .admit(sender, t, PING_LIMIT, abuse)
                .and_then(|()| {
                    let bytes = crate::inbox::bytes(&message);
                    let b = bytes.as_ref().map(PackedByteArray::as_slice);
                    let b = self.inbox.bytes(sender, b, PING_BYTES, t, abuse)?;
                    decode_ping(b)
                        .ok_or_else(|| self.inbox.drop(sender, Dropped::Malformed, t, abuse))
                })
        } else {
            Err(self.inbox.drop(sender, Dropped::Forged, t, abuse))
        };
        let stamp = match stamp {
            Ok(stamp) => stamp,
            Err(v) => {
                let node = self.to_gd();
                crate::inbox::act(&node, &mut self.inbox, sender, v, "clock ping");
                return;
            }
        };
        let answer = Message::of(&encode_pong(stamp, now()));
        if let Err(e) = self.rpcs().pong(answer).call_id(sender) {
            godot_warn!("EntwineNetClock: cannot answer peer {sender}: {e:?}");
        }
    }

    /// The server's answer, handled on a client (only from the server; one byte array).
    #[rpc(any_peer, call_remote, unreliable_ordered, channel = 0)]
    #[func(rename = _pong)]
    fn pong(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, _) = crate::inbox::sender(&self.to_gd());
        let (t, abuse) = crate::inbox::clock();
        let answer = self
            .inbox
            .sender_is(sender, SERVER, t, abuse)
            .and_then(|()| {
                let bytes = crate::inbox::bytes(&message);
                let b = bytes.as_ref().map(PackedByteArray::as_slice);
                let b = self.inbox.bytes(sender, b, PONG_BYTES, t, abuse)?;
                decode_pong(b).ok_or_else(|| self.inbox.drop(sender, Dropped::Malformed, t, abuse))
            });
        match answer {
            Ok((client_stamp, server_time)) => {
                if let Some(rtt_ms) = self.sync.record_ms(client_stamp, server_time, now()) {
                    self.signals().synced().emit(rtt_ms);
                }
            }
            Err(v) => {
                let node = self.to_gd();
                crate::inbox::act(&node, &mut self.inbox, sender, v, "clock answer");
            }
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
