//! A `FormationController`'s parameter table: every tunable number's name, unit, range, default
//! and description, in one place. [`SquadConfig::sanitized`] clamps with it, the node's inspector
//! hints and defaults come from it, and the docs print it.

use super::agent::{Gains, Thresholds};
use super::squad::{SquadConfig, MAX_LATENCY_TICKS, TICK};
use crate::kit::param::{Correction, Param, Unit};

/// A [`SquadConfig`] parameter, named as the node's property by [`SquadParam::spec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SquadParam {
    K1,
    K2,
    K3,
    IntegralLimit,
    Align,
    Stable,
    Frames,
    Heading,
    MaxSpeed,
    MaxTurnRate,
    RepulsionRadius,
    RepulsionStrength,
    ArrivalTime,
    TransitionGainMax,
    AnchorAcceleration,
    ContractSpacing,
    ContractHeading,
    ContractSettle,
    Latency,
    StepNoise,
}

use Unit as U;

/// The table, in [`SquadParam`]'s order.
#[rustfmt::skip]
const SPECS: [Param; 20] = [
    Param::new("k1", U::PerSecond, (0.0, 20.0), 1.8, "position gain: speed per metre of error"),
    Param::new("k2", U::PerSecond, (0.0, 20.0), 1.5, "heading gain: turn rate per radian of error"),
    Param::new("k3", U::PerSecondSquared, (0.0, 10.0), 0.05, "integral gain on the accumulated position error"),
    Param::new("integral_limit", U::MetreSeconds, (0.0, 10.0), 0.5, "anti-windup: largest accumulated position error"),
    Param::new("align_threshold", U::Metres, (0.001, 10.0), 0.05, "distance from the slot above which an agent starts moving"),
    Param::new("stable_threshold", U::Metres, (0.0005, 10.0), 0.03, "distance an agent must stay under to stop (at most align_threshold)"),
    Param::new("debounce_frames", U::Count, (1.0, 120.0), 5.0, "ticks (60 Hz) a condition must hold before an agent changes state"),
    Param::new("heading_tolerance", U::Radians, (1e-4, 1.0), 2.0 * DEG, "heading error that counts as facing right"),
    Param::new("max_speed", U::MetresPerSecond, (0.01, 100.0), 3.0, "fastest an agent moves"),
    Param::new("max_turn_rate", U::RadiansPerSecond, (0.01, 100.0), 360.0 * DEG, "fastest an agent turns"),
    Param::new("repulsion_radius", U::Metres, (0.0, 10.0), 0.4, "soft walls: agents closer than this push apart (0: off)"),
    Param::new("repulsion_strength", U::SquareMetresPerSecond, (0.0, 100.0), 1.0, "soft walls: push speed k·(1/d − 1/r)"),
    Param::new("arrival_time", U::Seconds, (0.05, 60.0), 0.8, "shortest time to reach new slots after a command"),
    Param::new("transition_gain_max", U::PerSecond, (0.0, 30.0), 8.0, "highest gain near the end of a transition"),
    Param::new("march_acceleration", U::MetresPerSecondSquared, (0.1, 100.0), 3.0, "how fast marching starts and stops"),
    Param::new("contract_spacing", U::Metres, (0.0, 10.0), 0.05, "contract: largest neighbour-spacing error"),
    Param::new("contract_heading", U::Radians, (0.0, core::f32::consts::PI), 3.0 * DEG, "contract: largest standard deviation of heading errors"),
    Param::new("contract_settle", U::Seconds, (0.0, 600.0), 1.2, "contract: longest time from a command to settling"),
    Param::new("actuation_latency", U::Seconds, (0.0, MAX_LATENCY_TICKS as f32 * TICK), 0.0, "how late agents act on commands (compensated)"),
    Param::new("step_noise", U::Metres, (0.0, 1.0), 0.0, "internal agents: random displacement per tick, to test robustness"),
];

/// One degree in radians.
const DEG: f32 = core::f32::consts::PI / 180.0;

/// How long a salute lasts (0: until ended).
#[rustfmt::skip]
pub const SALUTE_DURATION: Param = Param::new("salute_duration", U::Seconds, (0.0, 600.0), 0.0, "how long a salute lasts (0: until end_salute)");
/// How fast a soldier's head turns.
#[rustfmt::skip]
pub const HEAD_TURN_SPEED: Param = Param::new("head_turn_speed", U::RadiansPerSecond, (DEG, 3600.0 * DEG), 180.0 * DEG, "fastest a soldier's head turns (eyes right and back)");
/// How often the server sends a keyframe of the squad (0: off).
#[rustfmt::skip]
pub const KEYFRAME_RATE: Param = Param::new("keyframe_rate", U::Hertz, (0.0, 60.0), 2.0, "networked: keyframes per second that correct the clients (0: off)");
/// How many frames a recording keeps.
#[rustfmt::skip]
pub const RECORD_FRAMES: Param = Param::new("record_frames", U::Count, (1.0, super::record::MAX_FRAMES as f32), super::record::DEFAULT_FRAMES as f32, "frames a recording keeps (the oldest are dropped)");
/// How many agents the controller simulates itself (agent_source Internal).
#[rustfmt::skip]
pub const INTERNAL_AGENT_COUNT: Param = Param::new("internal_agent_count", U::Count, (0.0, super::shape::MAX_AGENTS as f32), 20.0, "internal agents: how many the controller simulates and draws");

impl SquadParam {
    /// Every parameter, in declaration order (`ALL[p as usize] == p`).
    pub const ALL: [Self; 20] = [
        Self::K1,
        Self::K2,
        Self::K3,
        Self::IntegralLimit,
        Self::Align,
        Self::Stable,
        Self::Frames,
        Self::Heading,
        Self::MaxSpeed,
        Self::MaxTurnRate,
        Self::RepulsionRadius,
        Self::RepulsionStrength,
        Self::ArrivalTime,
        Self::TransitionGainMax,
        Self::AnchorAcceleration,
        Self::ContractSpacing,
        Self::ContractHeading,
        Self::ContractSettle,
        Self::Latency,
        Self::StepNoise,
    ];

    /// The parameter's table entry: property name, unit, range, default, description.
    #[must_use]
    pub const fn spec(self) -> Param {
        SPECS[self as usize]
    }

    /// Returns the `FormationController` property that sets the parameter.
    #[must_use]
    pub const fn property(self) -> &'static str {
        self.spec().name
    }

    /// Returns whether a correction of this parameter goes unreported while `corrected` says
    /// another is being corrected: `stable_threshold` is bounded by `align_threshold`, so while
    /// that one is wrong it alone warns.
    #[must_use]
    pub fn masked(self, corrected: impl Fn(SquadParam) -> bool) -> bool {
        self == Self::Stable && corrected(Self::Align)
    }
}

/// Every tunable number of a `FormationController`, in the inspector's order, for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    let mut all: Vec<Param> = SquadParam::ALL.iter().map(|p| p.spec()).collect();
    all.extend([
        INTERNAL_AGENT_COUNT,
        HEAD_TURN_SPEED,
        SALUTE_DURATION,
        KEYFRAME_RATE,
        RECORD_FRAMES,
    ]);
    all
}

impl Correction<SquadParam> {
    /// Returns the warning for the correction, in the inspector's units (degrees for angles).
    #[must_use]
    pub fn warning(&self) -> String {
        let mut spec = self.param.spec();
        (spec.min, spec.max) = (self.lo, self.hi);
        let w = spec.warning(self.got, self.used);
        if self.param == SquadParam::Stable {
            w.replacen(" (got", " (at most align_threshold) (got", 1)
        } else {
            w
        }
    }
}

impl Default for Gains {
    fn default() -> Self {
        use SquadParam as P;
        Self {
            k1: P::K1.spec().default,
            k2: P::K2.spec().default,
            k3: P::K3.spec().default,
            integral_limit: P::IntegralLimit.spec().default,
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        use SquadParam as P;
        Self {
            align: P::Align.spec().default,
            stable: P::Stable.spec().default,
            frames: P::Frames.spec().default as u8,
            heading: P::Heading.spec().default,
        }
    }
}

impl SquadConfig {
    /// Returns the config with every value finite and in its accepted range (the table's):
    /// out-of-range values are clamped, non-finite ones take the default. Calls `on_issue` once
    /// for every parameter it corrected. `latency_gains` is corrected silently.
    #[must_use]
    pub fn sanitized(mut self, mut on_issue: impl FnMut(Correction<SquadParam>)) -> Self {
        use SquadParam as P;
        let on = &mut on_issue;
        let g = &mut self.gains;
        for (p, v) in [
            (P::K1, &mut g.k1),
            (P::K2, &mut g.k2),
            (P::K3, &mut g.k3),
            (P::IntegralLimit, &mut g.integral_limit),
        ] {
            p.spec().check(v, p, on);
        }
        let t = &mut self.thresholds;
        P::Align.spec().check(&mut t.align, P::Align, on);
        // stable_threshold is bounded by align_threshold.
        let stable = P::Stable.spec();
        let fallback = stable.default.min(t.align);
        crate::kit::param::check(&mut t.stable, stable.min, t.align, fallback, P::Stable, on);
        let mut frames = f32::from(t.frames);
        P::Frames.spec().check(&mut frames, P::Frames, on);
        t.frames = frames as u8;
        P::Heading.spec().check(&mut t.heading, P::Heading, on);
        for (p, v) in [
            (P::MaxSpeed, &mut self.max_speed),
            (P::MaxTurnRate, &mut self.max_turn_rate),
            (P::RepulsionRadius, &mut self.repulsion_radius),
            (P::RepulsionStrength, &mut self.repulsion_strength),
            (P::ArrivalTime, &mut self.arrival_time),
            (P::TransitionGainMax, &mut self.transition_gain_max),
            (P::AnchorAcceleration, &mut self.anchor_acceleration),
            (P::ContractSpacing, &mut self.contract_spacing),
            (P::ContractHeading, &mut self.contract_heading),
            (P::ContractSettle, &mut self.contract_settle),
            (P::Latency, &mut self.latency),
            (P::StepNoise, &mut self.step_noise),
        ] {
            p.spec().check(v, p, on);
        }
        self.latency_gains = self.latency_gains.sanitized();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_enums_order_and_names_each_property_once() {
        for (i, p) in SquadParam::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i);
        }
        let names: Vec<&str> = table().iter().map(|p| p.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        let d = SquadConfig::default();
        assert_eq!(d.max_turn_rate.to_degrees().round(), 360.0);
        assert_eq!(d.thresholds.frames, 5);
        assert_eq!(d, d.sanitized(|c| panic!("a default was corrected: {c:?}")));
    }

    #[test]
    fn warnings_speak_the_inspectors_units() {
        let mut c = SquadConfig::default();
        c.thresholds.heading = 2.0;
        c.thresholds.stable = 1.0;
        let mut seen = Vec::new();
        let _ = c.sanitized(|i| seen.push(i));
        assert_eq!(seen.len(), 2, "{seen:?}");
        let w = seen[1].warning();
        assert!(
            w.starts_with("heading_tolerance must be in 0.00572958..=57.2958 °"),
            "{w}"
        );
        let w = seen[0].warning();
        assert!(w.contains("(at most align_threshold)"), "{w}");
    }
}
