//! What every Entwine RPC does before it reads a message: find the sender, take the one argument
//! as bytes, and act on the core inbox's verdict (a throttled warning, and on the server the
//! project's disconnect policy). The decisions are the core's `kit::inbox`.
//!
//! Every Entwine RPC takes one `Variant` (zero arguments are accepted too), so no call is turned
//! away, with an engine error, before Entwine has judged it.

use std::cell::Cell;

use entwine_core::kit::inbox::{self, held_back, DropCounts, Dropped, PeerId, Verdict};
use entwine_core::kit::RateLimit;
use godot::classes::{Engine, ProjectSettings};
use godot::prelude::*;

use crate::time::now;

/// Project setting: whether the server disconnects a peer that keeps sending calls Entwine drops.
pub const SETTING_DISCONNECT: &str = "entwine/network/disconnect_abusive_peers";
/// Project setting: how many dropped calls per second a peer may cause (with a burst of
/// [`inbox::ABUSE_BURST_SECONDS`] worth) before it counts as abusive.
pub const SETTING_ABUSE_LIMIT: &str = "entwine/network/abuse_limit";

/// Registers the two project settings (once, when the library loads into a project).
pub fn register_settings() {
    let mut ps = ProjectSettings::singleton();
    let add = |ps: &mut Gd<ProjectSettings>, name: &str, value: Variant, hint: Variant| {
        if !ps.has_setting(name) {
            ps.set_setting(name, &value);
        }
        ps.set_initial_value(name, &value);
        ps.set_as_basic(name, true);
        ps.add_property_info(&hint.to::<VarDictionary>());
    };
    let mut d = VarDictionary::new();
    d.set("name", SETTING_DISCONNECT);
    d.set("type", VariantType::BOOL.ord());
    add(
        &mut ps,
        SETTING_DISCONNECT,
        true.to_variant(),
        d.to_variant(),
    );
    let mut d = VarDictionary::new();
    d.set("name", SETTING_ABUSE_LIMIT);
    d.set("type", VariantType::FLOAT.ord());
    d.set("hint", 1); // PROPERTY_HINT_RANGE
    d.set("hint_string", "0,1000,1,or_greater,suffix:calls/s");
    add(
        &mut ps,
        SETTING_ABUSE_LIMIT,
        f64::from(inbox::ABUSE_PER_SECOND).to_variant(),
        d.to_variant(),
    );
}

thread_local! {
    /// The disconnect policy as last read (at most once per second): when read, whether to
    /// disconnect, and the abuse limit.
    static POLICY: Cell<(f64, bool, Option<RateLimit>)> = const { Cell::new((f64::NEG_INFINITY, true, None)) };
}

/// The project's abuse policy: `(disconnect, abuse limit)`, read at most once per second.
pub fn policy() -> (bool, Option<RateLimit>) {
    let t = now();
    let (read, disconnect, limit) = POLICY.get();
    if t - read < 1.0 {
        return (disconnect, limit);
    }
    let ps = ProjectSettings::singleton();
    let disconnect = ps
        .get_setting_ex(SETTING_DISCONNECT)
        .default_value(&true.to_variant())
        .done()
        .try_to::<bool>()
        .unwrap_or(true);
    let per_second = ps
        .get_setting_ex(SETTING_ABUSE_LIMIT)
        .default_value(&f64::from(inbox::ABUSE_PER_SECOND).to_variant())
        .done()
        .try_to::<f64>()
        .unwrap_or(f64::from(inbox::ABUSE_PER_SECOND)) as f32;
    let limit = inbox::abuse_limit(per_second);
    POLICY.set((t, disconnect, limit));
    (disconnect, limit)
}

/// The abuse limit to judge drops with (the policy's, whether or not it disconnects).
pub fn abuse() -> Option<RateLimit> {
    policy().1
}

/// The peer that sent the RPC being handled, and whether this peer is the server.
pub fn sender(node: &Gd<impl Inherits<Node>>) -> (PeerId, bool) {
    node.clone()
        .upcast::<Node>()
        .get_multiplayer()
        .map_or((0, false), |mp| {
            (i64::from(mp.get_remote_sender_id()), mp.is_server())
        })
}

/// The one argument as bytes, if it is a byte array.
pub fn bytes(arg: &Variant) -> Option<PackedByteArray> {
    arg.try_to::<PackedByteArray>().ok()
}

/// Acts on a verdict about a message from `sender` to `node`: warns when a warning is due
/// (`what` says what was dropped), and on the server disconnects an abusive peer when the
/// project's policy says so. Returns whether the peer was disconnected (count it in the inbox).
#[must_use]
pub fn act(node: &Gd<impl Inherits<Node>>, sender: PeerId, v: Verdict, what: &str) -> bool {
    let node = node.clone().upcast::<Node>();
    // An unexpected message is an honest peer's race (early or late): counted, never reported.
    if let Some(held) = v.warn.filter(|_| v.why != Dropped::Unexpected) {
        let why = match v.why {
            Dropped::RateLimited => "more calls per second than allowed",
            Dropped::Forged => "a call only another peer may send",
            Dropped::Malformed => "a malformed call",
            Dropped::Unexpected => "a call not expected now",
        };
        crate::warnings::warn(
            &node,
            &format!(
                "peer {sender} sent {why} ({what}); dropped and counted in \
                 get_dropped_calls().{}{}",
                v.why.name(),
                held_back(held)
            ),
        );
    }
    if !v.abusive {
        return false;
    }
    let Some(mp) = node.get_multiplayer() else {
        return false;
    };
    if !mp.is_server() || sender == inbox::SERVER || sender == 0 {
        return false;
    }
    let (disconnect, _) = policy();
    let Some(mut peer) = mp.get_multiplayer_peer() else {
        return false;
    };
    let Ok(id) = i32::try_from(sender) else {
        return false;
    };
    if disconnect && !Engine::singleton().is_editor_hint() {
        crate::warnings::warn(
            &node,
            &format!(
                "peer {sender} keeps sending calls that are dropped (more than the project \
                 setting {SETTING_ABUSE_LIMIT} per second); disconnected (set \
                 {SETTING_DISCONNECT} to false to keep such peers)"
            ),
        );
        // Deferred, so the peer_disconnected handlers run outside this RPC; forced, so nothing more
        // is sent to a peer that is half gone.
        peer.call_deferred("disconnect_peer", &[id.to_variant(), true.to_variant()]);
        true
    } else {
        crate::warnings::warn(
            &node,
            &format!(
                "peer {sender} keeps sending calls that are dropped (more than the project \
                 setting {SETTING_ABUSE_LIMIT} per second); kept, as {SETTING_DISCONNECT} is \
                 false"
            ),
        );
        false
    }
}

/// The counters as a Dictionary (`get_dropped_calls()`).
pub fn counts_dictionary(c: &DropCounts) -> VarDictionary {
    let mut d = VarDictionary::new();
    for (name, value) in c.fields() {
        d.set(name, value);
    }
    d
}
