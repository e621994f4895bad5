//! What every Entwine RPC does before it reads a message: find the sender, take the one argument
//! as bytes, and act on the core inbox's verdict (a throttled warning, and on the server the
//! project's disconnect policy). The decisions are the core's `kit::inbox`.
//!
//! Every Entwine RPC takes one [`Message`]: any value, or none at all (Godot sends an empty byte
//! array as a call with no argument), so no call with zero or one argument is turned away, with an
//! engine error, before Entwine has judged it.

use std::cell::Cell;

use entwine_core::kit::inbox::{self, held_back, DropCounts, Dropped, Inbox, PeerId, Verdict};
use entwine_core::kit::RateLimit;
use godot::classes::{Engine, MultiplayerApi, ProjectSettings};
use godot::prelude::*;

/// The inbox's clock (seconds, monotonic): the process's own, with no engine call, as every
/// message is timed.
pub fn now() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// Project setting: whether the server disconnects a peer that keeps sending calls Entwine drops.
pub const SETTING_DISCONNECT: &str = "entwine/network/disconnect_abusive_peers";
/// Project setting: how many dropped calls per second a peer may cause (with a burst of
/// [`inbox::ABUSE_BURST_SECONDS`] worth) before it counts as abusive.
pub const SETTING_ABUSE_LIMIT: &str = "entwine/network/abuse_limit";

/// Registers the two project settings (once, when the library loads into a project).
pub fn register_settings() {
    let mut ps = ProjectSettings::singleton();
    let mut add = |name: &str, value: Variant, info: VarDictionary| {
        if !ps.has_setting(name) {
            ps.set_setting(name, &value);
        }
        ps.set_initial_value(name, &value);
        ps.set_as_basic(name, true);
        ps.add_property_info(&info);
    };
    let mut info = VarDictionary::new();
    info.set("name", SETTING_DISCONNECT);
    info.set("type", VariantType::BOOL.ord());
    add(SETTING_DISCONNECT, true.to_variant(), info);
    let mut info = VarDictionary::new();
    info.set("name", SETTING_ABUSE_LIMIT);
    info.set("type", VariantType::FLOAT.ord());
    info.set("hint", 1); // PROPERTY_HINT_RANGE
    info.set("hint_string", "0,1000,1,or_greater,suffix:calls/s");
    let limit = f64::from(inbox::ABUSE_PER_SECOND).to_variant();
    add(SETTING_ABUSE_LIMIT, limit, info);
}

thread_local! {
    /// The abuse limit as last read (at most once per second): when read, and the limit.
    static ABUSE_LIMIT: Cell<(f64, Option<RateLimit>)> = const { Cell::new((f64::NEG_INFINITY, None)) };
}

/// The project's abuse limit (see [`SETTING_ABUSE_LIMIT`]), read at most once per second.
fn abuse_limit() -> Option<RateLimit> {
    let t = now();
    let (read, limit) = ABUSE_LIMIT.get();
    if t - read < 1.0 {
        return limit;
    }
    let per_second = ProjectSettings::singleton()
        .get_setting_ex(SETTING_ABUSE_LIMIT)
        .default_value(&f64::from(inbox::ABUSE_PER_SECOND).to_variant())
        .done()
        .try_to::<f64>()
        .unwrap_or(f64::from(inbox::ABUSE_PER_SECOND)) as f32;
    let limit = inbox::abuse_limit(per_second);
    ABUSE_LIMIT.set((t, limit));
    limit
}

/// Whether the project disconnects abusive peers ([`SETTING_DISCONNECT`]), read now: a game may
/// turn it on or off at any moment.
fn disconnect_setting() -> bool {
    ProjectSettings::singleton()
        .get_setting_ex(SETTING_DISCONNECT)
        .default_value(&true.to_variant())
        .done()
        .try_to::<bool>()
        .unwrap_or(true)
}

/// The inbox's time now and the project's abuse limit, to judge messages with.
pub fn clock() -> (f64, Option<RateLimit>) {
    (now(), abuse_limit())
}

/// How long a node's MultiplayerAPI is remembered (s): `Node.get_multiplayer()` builds the node's
/// path on every call, too slow for every message of a flood.
const API_FOR: f64 = 0.5;
/// How many nodes' MultiplayerAPIs are remembered.
const API_SLOTS: usize = 16;

thread_local! {
    /// Recently read MultiplayerAPIs: the node, when read, the API.
    static APIS: std::cell::RefCell<Vec<(InstanceId, f64, Gd<MultiplayerApi>)>> =
        std::cell::RefCell::new(Vec::with_capacity(API_SLOTS));
}

/// Forgets the remembered MultiplayerAPIs (when the library unloads).
pub fn release() {
    APIS.with_borrow_mut(Vec::clear);
}

/// `node`'s MultiplayerAPI, read at most every [`API_FOR`] seconds.
fn api_of(node: &Gd<Node>) -> Option<Gd<MultiplayerApi>> {
    let (id, t) = (node.instance_id(), now());
    APIS.with_borrow_mut(|apis| {
        if let Some((_, _, api)) = apis.iter().find(|(n, at, _)| *n == id && t - at < API_FOR) {
            return Some(api.clone());
        }
        let api = node.get_multiplayer()?;
        apis.retain(|(n, _, _)| *n != id);
        if apis.len() >= API_SLOTS {
            apis.remove(0);
        }
        apis.push((id, t, api.clone()));
        Some(api)
    })
}

/// The peer that sent the RPC being handled, and whether this peer is the server.
pub fn sender(node: &Gd<impl Inherits<Node>>) -> (PeerId, bool) {
    api_of(&node.clone().upcast::<Node>()).map_or((0, false), |mp| {
        (i64::from(mp.get_remote_sender_id()), mp.is_server())
    })
}

/// The one argument of an Entwine RPC: any value, or nothing (a call with no argument).
#[derive(Debug, Default, Clone)]
pub struct Message(pub Variant);

impl Message {
    /// No argument: the default when a call carries none.
    #[must_use]
    pub fn none() -> Self {
        Self(Variant::nil())
    }

    /// A message of `bytes`.
    #[must_use]
    pub fn of(bytes: &[u8]) -> Self {
        Self(PackedByteArray::from(bytes).to_variant())
    }
}

impl GodotConvert for Message {
    type Via = Variant;

    fn godot_shape() -> godot::meta::shape::GodotShape {
        godot::meta::shape::GodotShape::Variant
    }
}

impl ToGodot for Message {
    type Pass = godot::meta::conv::ByValue;

    fn to_godot(&self) -> Self::Via {
        self.0.clone()
    }
}

impl FromGodot for Message {
    fn try_from_godot(via: Variant) -> Result<Self, godot::meta::error::ConvertError> {
        Ok(Self(via))
    }
}

// SAFETY: a `Message` is only ever a default parameter as `Message::none()`, a nil Variant, which
// holds nothing that could be shared or mutated between calls.
unsafe impl godot::meta::GodotImmutable for Message {}

/// The one argument as bytes: a byte array, or an empty one for a call with no argument (how
/// Godot sends an empty byte array); `None` for any other value.
pub fn bytes(message: &Message) -> Option<PackedByteArray> {
    match message.0.get_type() {
        VariantType::NIL => Some(PackedByteArray::new()),
        VariantType::PACKED_BYTE_ARRAY => message.0.try_to::<PackedByteArray>().ok(),
        _ => None,
    }
}

/// Acts on a verdict about a message from `sender` to `node`: warns when a warning is due
/// (`what` says what was dropped), and on the server, when the peer is abusive, disconnects it if
/// the project's policy says so (once, through the MultiplayerAPI, so every node hears
/// `peer_disconnected`), else warns at most once per 10 s that it is kept.
pub fn act(
    node: &Gd<impl Inherits<Node>>,
    inbox: &mut Inbox,
    sender: PeerId,
    v: Verdict,
    what: &str,
) {
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
    if !v.abusive || sender == inbox::SERVER || sender == 0 {
        return;
    }
    let Some(mut mp) = node.get_multiplayer() else {
        return;
    };
    if !mp.is_server() {
        return;
    }
    let Ok(id) = i32::try_from(sender) else {
        return;
    };
    let disconnect = disconnect_setting();
    if disconnect && !Engine::singleton().is_editor_hint() {
        if !inbox.cut(sender) {
            return; // already being disconnected
        }
        crate::warnings::warn(
            &node,
            &format!(
                "peer {sender} keeps sending calls that are dropped (more than the project \
                 setting {SETTING_ABUSE_LIMIT} per second); disconnected (set \
                 {SETTING_DISCONNECT} to false to keep such peers)"
            ),
        );
        // Through the MultiplayerAPI, so it forgets the peer at once (nothing more is sent to
        // it); then its peer_disconnected, which Godot holds back on a kick, so that the game and
        // every node forget the player as if it had left. Deferred: those handlers run outside
        // this RPC.
        if mp.has_method("disconnect_peer") {
            mp.call_deferred("disconnect_peer", &[id.to_variant()]);
            mp.call_deferred(
                "emit_signal",
                &["peer_disconnected".to_variant(), i64::from(id).to_variant()],
            );
        } else if let Some(mut peer) = mp.get_multiplayer_peer() {
            peer.call_deferred("disconnect_peer", &[id.to_variant()]);
        }
    } else if let Some(held) = inbox.kept_warning(sender, now()) {
        crate::warnings::warn(
            &node,
            &format!(
                "peer {sender} keeps sending calls that are dropped (more than the project \
                 setting {SETTING_ABUSE_LIMIT} per second); kept, as {SETTING_DISCONNECT} is \
                 false{}",
                held_back(held)
            ),
        );
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
