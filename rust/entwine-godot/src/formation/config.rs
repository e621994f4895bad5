//! Configuration: the tuning properties gathered into a `SquadConfig` that the core sanitizes,
//! and each corrected `SquadParam` named by its property in a warning given once.

use entwine_core::formation::params;
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
            let msg = c.warning();
            self.warn_once(c.param as u32, &msg);
        }
        cfg
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

    /// Returns [member salute_duration] (s) within its range, checked.
    pub(super) fn salute_seconds(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.salute_duration;
        self.warnings.param(&node, &params::SALUTE_DURATION, v)
    }

    /// Returns [member keyframe_rate] (Hz) within its range (0: off), checked.
    pub(super) fn keyframe_hz(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.keyframe_rate;
        self.warnings.param(&node, &params::KEYFRAME_RATE, v)
    }

    /// Returns [member record_frames] within its range, checked.
    pub(super) fn record_frame_count(&mut self) -> usize {
        let node = self.to_gd();
        let v = self.record_frames;
        self.warnings.count_param(&node, &params::RECORD_FRAMES, v) as usize
    }

    /// Returns [member head_turn_speed] (rad/s) within its range, checked; the warning speaks in
    /// degrees, as the inspector shows it.
    pub(super) fn head_turn_speed(&mut self) -> f32 {
        let node = self.to_gd();
        let v = self.head_turn_speed;
        self.warnings.param(&node, &params::HEAD_TURN_SPEED, v)
    }
}
