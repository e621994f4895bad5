//! Configuration: the tuning properties gathered into a `SquadConfig` that the core sanitizes,
//! and each corrected `SquadParam` named by its property in a warning given once.

use entwine_core::formation::{Gains, SquadConfig, SquadParam, Thresholds};

use super::FormationController;

impl FormationController {
    /// Returns the squad's configuration from the properties, sanitized by the core; each
    /// corrected property is warned about once.
    pub(super) fn config(&mut self) -> SquadConfig {
        let d = SquadConfig::default();
        let raw = SquadConfig {
            gains: Gains {
                k1: self.k1,
                k2: self.k2,
                k3: self.k3,
                integral_limit: self.integral_limit,
            },
            thresholds: Thresholds {
                align: self.align_threshold,
                stable: self.stable_threshold,
                frames: self.debounce_frames.clamp(0, 255) as u8,
                heading: self.heading_tolerance.to_radians(),
            },
            max_speed: self.max_speed,
            max_turn_rate: self.max_turn_rate.to_radians(),
            repulsion_radius: self.repulsion_radius,
            repulsion_strength: self.repulsion_strength,
            arrival_time: self.arrival_time,
            transition_gain_max: self.transition_gain_max,
            anchor_acceleration: self.march_acceleration,
            contract_spacing: self.contract_spacing,
            contract_heading: self.contract_heading.to_radians(),
            contract_settle: self.contract_settle,
            latency: self.actuation_latency,
            measure_latency: self.measure_latency,
            latency_gains: d.latency_gains,
            step_noise: self.step_noise,
        };
        let mut new = [None; SquadParam::ALL.len()];
        let cfg = raw.sanitized(|c| new[c.param as usize] = Some(c));
        for c in new.into_iter().flatten() {
            if self.warnings.printed(c.param as u32) {
                continue;
            }
            let (prop, got) = property(self, c.param);
            let unit = if c.param.is_angle() {
                f32::to_degrees
            } else {
                std::convert::identity
            };
            let msg = format!(
                "{prop} must be in {}..={} (got {got}); using {}",
                unit(c.lo),
                unit(c.hi),
                unit(c.used)
            );
            self.warn_once(c.param as u32, &msg);
        }
        cfg
    }
}

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
