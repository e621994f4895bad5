//! Formation control: a squad forms up and marches in data-defined formations while holding a
//! measured contract (seed "state contract + local feedback").
//!
//! Two layers:
//!
//! * **Contract** — [`shape`] turns a [`FormationDef`] (RON) into slots around a moving anchor;
//!   [`assign`] gives each agent the slot that minimises total travel (so paths do not cross);
//!   [`baseline`] fits the squad's axis by weighted PCA with a weighted-median point; the metrics
//!   (spacing error ≤ 5 cm over every neighbouring slot pair — see [`Squad::neighbour_pairs`], heading standard deviation ≤ 3°, settle ≤ 1.2 s) say whether
//!   the contract holds.
//! * **Feedback** — [`agent`] holds the per-agent PID (k₁ 1.8, k₂ 1.5, k₃ 0.05, normalised angle
//!   error, anti-windup) and the debounced idle/moving/aligning/stabilizing machine (0.05/0.03 m,
//!   5 ticks); [`squad`] runs it at a fixed 60 Hz with soft-wall repulsion over a [`hash`] (O(N)).
//!   [`latency`] measures each external agent's actuation latency from its motion; the squad uses
//!   it per agent (predictor, lead, and k₁ lowered for slow agents by [`LatencyGains`]).
//!
//! [`bearing`] is the soldiers' upper body, orthogonal to the state machine: eyes right toward the
//! rank's guide during a dress, the salute, rate-limited look math for a skeleton modifier.
//!
//! [`editor`] is the formation editor's model: a formation drawn as points (add, move, delete,
//! mirror, grid snap), written back as a `Custom` formation that lays out as drawn.
//!
//! [`builtin`] embeds the formations the addon ships, so exported games have them without the files.
//!
//! [`command`] is the command model (kinds, validation into the squad's frame, duplicates,
//! routing, the resend ring); [`record`] keeps a 1,000-frame ring of every agent for replay and
//! export; [`net`] tracks the networked command pipeline's acknowledgements.
//! [`render`] is what the squad looks like: agent transforms and colours, the debug drawing.

pub mod agent;
pub mod assign;
pub mod baseline;
pub mod bearing;
pub mod builtin;
pub mod command;
pub mod editor;
pub mod hash;
pub mod keyframe;
pub mod latency;
pub mod net;
pub mod params;
pub mod record;
pub mod render;
pub mod rng;
pub mod shape;
pub mod squad;

#[cfg(test)]
mod scenario_tests;

pub use agent::{AgentState, Gains, LatencyGains, Thresholds};
pub use assign::Assigner;
pub use baseline::{Baseline, BaselineFit};
pub use bearing::{Bearing, BearingConfig, BearingMotion, BearingWatch, BodyFrame, Eyes, Gesture};
pub use params::SquadParam;
pub use record::{frames_within_budget, Recorder, Sample, MAX_RECORD_BYTES};
pub use shape::{Facing, FormationDef, FormationError, Shape, MAX_AGENTS};
pub use squad::{
    advance_steps, move_profile, smoothstep, Anchor, Metrics, Squad, SquadConfig, MOVE_RAMP, TICK,
    TICK_HZ, WALL_NEIGHBOURS,
};
