//! Configuration: the tuning properties gathered into a `SquadConfig` that the core sanitizes,
//! and each corrected `SquadParam` named by its property in a warning given once.

use entwine_core::formation::record::MAX_FRAMES;
use entwine_core::formation::{Gains, SquadConfig, SquadParam, Thresholds};

use godot::obj::WithBaseField;

use super::FormationController;

impl FormationController {
    /// Returns the squad's configuration from the properties, sanitized by the core; each
    /// corrected property is warned about once (again only after it was set right).
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
                heading: self.heading_tolerance,
            },
            max_speed: self.max_speed,
            max_turn_rate: self.max_turn_rate,
            repulsion_radius: self.repulsion_radius,
            repulsion_strength: self.repulsion_strength,
            arrival_time: self.arrival_time,
            transition_gain_max: self.transition_gain_max,
            anchor_acceleration: self.march_acceleration,
            contract_spacing: self.contract_spacing,
            contract_heading: self.contract_heading,
            contract_settle: self.contract_settle,
            latency: self.actuation_latency,
            measure_latency: self.measure_latency,
            latency_gains: d.latency_gains,
            step_noise: self.step_noise,
        };
        let mut new = [None; SquadParam::ALL.len()];
        let cfg = raw.sanitized(|c| new[c.param as usize] = Some(c));
        // A property set right again may warn again later.
        for param in SquadParam::ALL {
            if new[param as usize].is_none() {
                self.warnings.clear(param as u32);
            }
        }
        // stable_threshold is bounded by align_threshold: while that one is wrong, it alone warns.
        for c in new.into_iter().flatten() {
            let masked = c.param.masked(|p| new[p as usize].is_some());
            if self.warnings.printed(c.param as u32) || masked {
                continue;
            }
            let msg = c.warning(property_value(self, c.param));
            self.warn_once(c.param as u32, &msg);
        }
        cfg
    }
}

/// The value the property setting `param` holds, in the inspector's units (degrees for angles).
fn property_value(c: &FormationController, param: SquadParam) -> f32 {
    use SquadParam as P;
    let v = match param {
        P::K1 => c.k1,
        P::K2 => c.k2,
        P::K3 => c.k3,
        P::IntegralLimit => c.integral_limit,
        P::Align => c.align_threshold,
        P::Stable => c.stable_threshold,
        P::Frames => c.debounce_frames as f32,
        P::Heading => c.heading_tolerance,
        P::MaxSpeed => c.max_speed,
        P::MaxTurnRate => c.max_turn_rate,
        P::RepulsionRadius => c.repulsion_radius,
        P::RepulsionStrength => c.repulsion_strength,
        P::ArrivalTime => c.arrival_time,
        P::TransitionGainMax => c.transition_gain_max,
        P::AnchorAcceleration => c.march_acceleration,
        P::ContractSpacing => c.contract_spacing,
        P::ContractHeading => c.contract_heading,
        P::ContractSettle => c.contract_settle,
        P::Latency => c.actuation_latency,
        P::StepNoise => c.step_noise,
    };
    if param.is_angle() {
        v.to_degrees()
    } else {
        v
    }
}

impl FormationController {
    /// Checks the settings read outside the squad's configuration, once per physics frame: each
    /// one out of its range warns once, naming it (again only after it was set right).
    pub(super) fn check_settings(&mut self) {
        let _ = self.salute_seconds();
        let _ = self.keyframe_hz();
        let _ = self.record_frame_count();
        let _ = self.head_turn_speed();
    }

    /// Returns [member salute_duration] (s) within 0..=600 (NaN: 0), checked.
    pub(super) fn salute_seconds(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.salute_duration;
        self.warnings
            .f32_within(&node, "salute_duration", v, 0.0, 600.0, 0.0)
    }

    /// Returns [member keyframe_rate] (Hz) within 0..=60 (NaN: 0, off), checked.
    pub(super) fn keyframe_hz(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.keyframe_rate;
        self.warnings
            .f32_within(&node, "keyframe_rate", v, 0.0, 60.0, 0.0)
    }

    /// Returns [member record_frames] within 1..=100000, checked.
    pub(super) fn record_frame_count(&mut self) -> usize {
        let node = self.to_gd();
        let v = self.record_frames;
        self.warnings
            .i32_within(&node, "record_frames", v, 1, MAX_FRAMES as i32) as usize
    }

    /// Returns [member head_turn_speed] (rad/s) within 1..=3600 °/s (NaN: 180 °/s), checked; the
    /// warning speaks in degrees, as the inspector shows it.
    pub(super) fn head_turn_speed(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.head_turn_speed.to_degrees();
        self.warnings
            .f32_within(&node, "head_turn_speed", v, 1.0, 3600.0, 180.0)
            .to_radians()
    }
}
