//! ENet's packet throttle on the server's links: a pair's stream is unreliable, and ENet drops a
//! share of unreliable datagrams for seconds after round trips rise (after any hitch).

use godot::classes::{ENetMultiplayerPeer, Node};
use godot::prelude::*;

/// ENet's own interval for measuring round trips (ms) and its own throttle acceleration.
const INTERVAL_MS: i32 = 5000;
const ACCELERATION: i32 = 2;

/// Keeps ENet from lowering the packet throttle of the server's link to `peer`, both ways (ENet
/// sends the setting to the other end): the throttle is the share of unreliable datagrams ENet
/// lets through, and it falls whenever a round trip takes longer than usual. Does nothing when the
/// scene's multiplayer peer is not ENet. Returns whether a link was set.
pub(super) fn keep_throttle_open(node: &Gd<Node>, peer: i64) -> bool {
    let Some(mp) = node.get_multiplayer() else {
        return false;
    };
    let Some(enet) = mp
        .get_multiplayer_peer()
        .and_then(|p| p.try_cast::<ENetMultiplayerPeer>().ok())
    else {
        return false;
    };
    let Ok(id) = i32::try_from(peer) else {
        return false;
    };
    let Some(mut link) = enet.get_peer(id) else {
        return false;
    };
    // Deceleration 0: a slow round trip never lowers the throttle; acceleration brings back one
    // that was lowered before this ran.
    link.throttle_configure(INTERVAL_MS, ACCELERATION, 0);
    true
}
