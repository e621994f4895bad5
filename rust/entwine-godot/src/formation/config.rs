//! The controller's tuning properties as the core's `SquadParam`s: which property each one is and
//! its value as the user set it, for the warnings about corrected values.

use entwine_core::formation::SquadParam;

use super::FormationController;

/// Returns the property that sets `param` and its value as set (degrees for angles, as shown).
pub(super) fn property(c: &FormationController, param: SquadParam) -> (&'static str, f32) {
    use SquadParam as P;
    match param {
        P::K1 => ("k1", c.k1),
        P::K2 => ("k2", c.k2),
        P::K3 => ("k3", c.k3),
        P::IntegralLimit => ("integral_limit", c.integral_limit),
        P::Align => ("align_threshold", c.align_threshold),
        P::Stable => ("stable_threshold", c.stable_threshold),
        P::Frames => ("debounce_frames", c.debounce_frames as f32),
        P::Heading => ("heading_tolerance", c.heading_tolerance),
        P::MaxSpeed => ("max_speed", c.max_speed),
        P::MaxTurnRate => ("max_turn_rate", c.max_turn_rate),
        P::RepulsionRadius => ("repulsion_radius", c.repulsion_radius),
        P::RepulsionStrength => ("repulsion_strength", c.repulsion_strength),
        P::ArrivalTime => ("arrival_time", c.arrival_time),
        P::TransitionGainMax => ("transition_gain_max", c.transition_gain_max),
        P::AnchorAcceleration => ("march_acceleration", c.march_acceleration),
        P::ContractSpacing => ("contract_spacing", c.contract_spacing),
        P::ContractHeading => ("contract_heading", c.contract_heading),
        P::ContractSettle => ("contract_settle", c.contract_settle),
        P::Latency => ("actuation_latency", c.actuation_latency),
        P::StepNoise => ("step_noise", c.step_noise),
    }
}
