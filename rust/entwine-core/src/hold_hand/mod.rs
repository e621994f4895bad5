//! Two players holding hands (seed 000): the decisions behind `HoldHandComponent`.
//!
//! * [`room`]: the interaction state a room (a local node, or the server) holds for every player:
//!   request, accept, decline, cancel, expiry, leaving.
//! * [`lifecycle`]: a component's phase, None → Preparing → Active, with the one-frame preparation.
//! * [`follow`]: the initiator-side follow spring that carries the recipient's root.
//! * [`contact`]: the shared contact point from two reach spheres, its smoothing, the connection
//!   hysteresis and the IK weight fades.
//! * [`net`]: the initiator's pair-pose and IK packets (byte layouts, validation) and how remote
//!   peers consume them (stale-packet gate, interpolation in the initiator's frame, silence fade).
//! * [`stream`]: the frames the initiator sends (pose, IK and animation sections on their own
//!   schedules) and the receiver a remote peer keeps: the recipient's and onlookers' viewpoints.
//!
//! The initiator is the single authority: it runs [`follow::FollowDriver`] and
//! [`contact::ContactSolver`] for the pair; the recipient and onlookers only consume the results.

pub mod contact;
pub mod follow;
pub mod lifecycle;
pub mod net;
pub mod room;
pub mod stream;

pub use contact::{
    constrain_shared_contact, shared_contact, ContactOutput, ContactSolver, ContactTuning,
    HandInput, Hysteresis, ReachSphere,
};
pub use follow::{FollowDriver, FollowTuning};
pub use lifecycle::{Lifecycle, Phase, PhaseChange};
pub use room::{Interaction, PlayerId, Role, Room, RoomError, RoomEvent, HOLD_HAND};
pub use stream::{
    AnimSnapshot, Due, Frame, PairReceiver, PairRoots, PairSender, Received, StreamRates,
    ViewTuning, Viewpoint,
};
