//! Two players holding hands (seed 000): the decisions behind `HoldHandComponent`.
//!
//! * [`room`]: the interaction state a room (a local node, or the server) holds for every player:
//!   request, accept, decline, cancel, expiry, leaving; its calls' and events' wire format.
//! * [`gate`]: the multiplayer server's gate for peers' room calls: rate limits, forged and
//!   unknown calls, refusal answers, counters and throttled warnings.
//! * [`lifecycle`]: a component's phase, None → Preparing → Active, with the one-frame preparation.
//! * [`follow`]: the initiator-side follow spring that carries the recipient's root.
//! * [`contact`]: the shared contact point from two reach spheres, its smoothing, the connection
//!   hysteresis and the IK weight fades.
//! * [`hand`]: one character's holding hand from its rig (elbow pole, grip, reach) and each
//!   frame's input for the contact solver; the contact offset's and rotation's check.
//! * [`stream`]: what the initiator samples and sends (roots, hands, animation) and the frame's
//!   byte layout.
//! * [`anim`]: the animation section of a frame: snapshot, layout, when to send, interpolation.
//! * [`phase`]: how a replica's animation catches up the initiator's play position.
//! * [`settings`]: every tunable of a pair as one [`settings::PairSettings`], checked by
//!   `sanitized(on_issue)`, which reports each corrected setting.
//! * [`replay`]: how a remote peer shows the pair: snapshot interpolation at an adaptive delay,
//!   start blends, corrections that never step, the speed limit on what it accepts.
//!
//! The initiator is the single authority: it runs [`follow::FollowDriver`] and
//! [`contact::ContactSolver`] for the pair; the recipient and onlookers only consume the results.

pub mod anim;
pub mod contact;
pub mod follow;
pub mod gate;
pub mod hand;
pub mod lifecycle;
pub mod params;
pub mod phase;
pub mod replay;
pub mod room;
pub mod settings;
pub mod stream;
pub mod watch;

pub use anim::{AnimSnapshot, MachineState, PlayerState};
pub use contact::{
    constrain_shared_contact, palm_to_palm, shared_contact, ContactOutput, ContactSolver,
    ContactTuning, HandInput, HandShape, Hysteresis, ReachSphere, GRIP_ALONG,
};
pub use follow::{FollowDriver, FollowTuning};
pub use gate::{Admission, CallGate, GateStats, PeerStats};
pub use lifecycle::{Lifecycle, Phase, PhaseChange};
pub use replay::{PairReplay, PairView, Received, Refused, RemoteHands, ReplayTuning};
pub use room::{
    Interaction, PlayerId, Role, Room, RoomCall, RoomError, RoomEvent, CALL_BYTES, EVENT_BYTES,
    HOLD_HAND,
};
pub use stream::{
    Due, Frame, HandOffsets, HandSample, Malformed, PairSample, PairSender, SentHands, StreamRates,
};
pub use watch::{root_driven, InitiatorWatch};
