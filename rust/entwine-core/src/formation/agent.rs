//! The per-agent feedback layer: the PID law and the debounced four-state machine (Idle,
//! Aligning, Stabilizing, Moving), each state entered only after its condition has held for a
//! debounce time.

use glam::Vec2;

/// What an agent is doing about its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum AgentState {
    /// In its slot, facing right, and the slot is not moving: holding still.
    #[default]
    Idle = 0,
    /// Farther than the align threshold from its slot: walking to it (position and heading).
    Moving = 1,
    /// Within the stable threshold for the debounce frames: turning to face the slot's heading,
    /// position feedback paused.
    Aligning = 2,
    /// Facing right: full PID with the integral term removing the last static offset.
    Stabilizing = 3,
}

impl AgentState {
    /// Returns the state for its `u8` value (anything unknown is `Idle`).
    #[must_use]
    pub fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::Moving,
            2 => Self::Aligning,
            3 => Self::Stabilizing,
            _ => Self::Idle,
        }
    }

    /// Returns the state's name in lower case.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Moving => "moving",
            Self::Aligning => "aligning",
            Self::Stabilizing => "stabilizing",
        }
    }
}

/// Thresholds of the state machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Distance to the slot (m) above which an agent starts moving (seed: 0.05).
    pub align: f32,
    /// Distance (m) under which it must stay for `frames` ticks to stop moving (seed: 0.03).
    pub stable: f32,
    /// Consecutive ticks a condition must hold before leaving a state (seed: 5, ≈ 83 ms at 60 Hz).
    pub frames: u8,
    /// Heading error (radians) under which an agent counts as facing right (default 2°).
    pub heading: f32,
}

/// Returns the next state from the current one, updating the debounce `counter`.
///
/// `dist` is the distance to the slot (m), `heading_err` the heading error (radians) and
/// `slot_moving` whether the slot itself moves (a marching squad never goes idle).
#[must_use]
pub fn next_state(
    state: AgentState,
    counter: &mut u8,
    dist: f32,
    heading_err: f32,
    slot_moving: bool,
    th: &Thresholds,
) -> AgentState {
    let dist = if dist.is_finite() { dist } else { f32::MAX };
    let facing = heading_err.abs() < th.heading;
    if dist > th.align && state != AgentState::Moving {
        *counter = 0;
        return AgentState::Moving;
    }
    let mut hold = |ok: bool, next: AgentState| {
        if ok {
            *counter = counter.saturating_add(1);
            if *counter >= th.frames {
                *counter = 0;
                return next;
            }
        } else {
            *counter = 0;
        }
        state
    };
    match state {
        // An agent that already faces right skips aligning.
        AgentState::Moving => hold(
            dist < th.stable,
            if facing {
                AgentState::Stabilizing
            } else {
                AgentState::Aligning
            },
        ),
        AgentState::Aligning => hold(facing, AgentState::Stabilizing),
        AgentState::Stabilizing => {
            hold(dist < th.stable && facing && !slot_moving, AgentState::Idle)
        }
        AgentState::Idle => {
            if slot_moving || heading_err.abs() > 2.0 * th.heading {
                *counter = 0;
                AgentState::Stabilizing
            } else {
                AgentState::Idle
            }
        }
    }
}

/// PID gains and limits. The defaults are start values from Ziegler–Nichols tuning, for a
/// 0.7 m stride and about 120 ms of actuation latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// Position gain k₁ (1/s): velocity per metre of error.
    pub k1: f32,
    /// Heading gain k₂ (1/s): turn rate per radian of error.
    pub k2: f32,
    /// Integral gain k₃ (1/s²) on the accumulated position error.
    pub k3: f32,
    /// Largest magnitude of the accumulated error (m·s): anti-windup clamp.
    pub integral_limit: f32,
}

/// How an agent's position gain k₁ shrinks with its actuation latency: agents with a high latency
/// get a lower k₁ so they do not overshoot (an agent measured at 210 ms goes from k₁ 1.8 to 1.2).
/// k₁ 1.8 is tuned for a typical 120 ms, so up to `nominal` the
/// gain is kept; beyond it the gain falls linearly, reaching `factor` × k₁ at `reference` (by
/// default 1.8 → 1.2 at 210 ms), and never below `floor` × k₁.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyGains {
    /// Latency (s) up to which k₁ is kept (the seed's typical configuration: 0.12).
    pub nominal: f32,
    /// Latency (s) at which k₁ is scaled by `factor` (seed: 0.21).
    pub reference: f32,
    /// Scale of k₁ at `reference` (seed: 1.2 / 1.8).
    pub factor: f32,
    /// Smallest scale of k₁ at any latency (default 0.5).
    pub floor: f32,
}

impl Default for LatencyGains {
    fn default() -> Self {
        Self {
            nominal: 0.12,
            reference: 0.21,
            factor: 1.2 / 1.8,
            floor: 0.5,
        }
    }
}

impl LatencyGains {
    /// Returns the scale (0..=1) of k₁ for an agent with `latency` seconds of actuation latency.
    #[must_use]
    pub fn k1_scale(&self, latency: f32) -> f32 {
        if !latency.is_finite() || latency <= self.nominal {
            return 1.0;
        }
        let span = (self.reference - self.nominal).max(1e-3);
        let s = 1.0 - (1.0 - self.factor) * (latency - self.nominal) / span;
        let s = s.clamp(self.floor.clamp(0.0, 1.0), 1.0);
        if s.is_finite() {
            s
        } else {
            1.0
        }
    }

    /// Returns the rule with every value finite and in range (NaN → default).
    #[must_use]
    pub fn sanitized(self) -> Self {
        let d = Self::default();
        let fix = crate::kit::clamp_finite;
        let nominal = fix(self.nominal, 0.0, 1.0, d.nominal);
        Self {
            nominal,
            reference: fix(
                self.reference,
                nominal + 1e-3,
                2.0,
                d.reference.max(nominal + 1e-3),
            ),
            factor: fix(self.factor, 0.0, 1.0, d.factor),
            floor: fix(self.floor, 0.0, 1.0, d.floor),
        }
    }
}

/// Returns the commanded velocity (m/s): feed-forward `v_ff` plus k₁·error plus k₃·∫error, limited
/// to `v_max`, updating `integral` with conditional integration (only while integrating states are
/// active and the output is not saturated, or when the error unwinds it) and clamping it.
///
/// `Aligning` pauses position feedback (k₁ = 0) while the error is within `hold` (the
/// stable threshold), so the agent turns in place without walking but cannot drift away;
/// `Stabilizing` and `Idle` integrate.
#[must_use]
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn position_command(
    state: AgentState,
    error: Vec2,
    v_ff: Vec2,
    integral: &mut Vec2,
    g: &Gains,
    dt: f32,
    v_max: f32,
    hold: f32,
) -> Vec2 {
    if !error.is_finite() || !v_ff.is_finite() || !integral.is_finite() {
        *integral = Vec2::ZERO;
        return Vec2::ZERO;
    }
    let kp = if state == AgentState::Aligning && error.length() <= hold {
        0.0
    } else {
        g.k1
    };
    let integrating = matches!(state, AgentState::Stabilizing | AgentState::Idle);
    if !integrating {
        *integral = Vec2::ZERO;
    }
    let unsaturated = v_ff + error * kp + *integral * g.k3;
    if integrating {
        let saturated = unsaturated.length() > v_max;
        if !saturated || error.dot(*integral) < 0.0 {
            *integral = (*integral + error * dt).clamp_length_max(non_negative(g.integral_limit));
        }
    }
    let out = v_ff + error * kp + *integral * g.k3;
    let out = out.clamp_length_max(non_negative(v_max));
    if out.is_finite() {
        out
    } else {
        Vec2::ZERO
    }
}

/// Returns `x` when it is ≥ 0 (infinity included), else 0 (negative or NaN limits stop motion).
fn non_negative(x: f32) -> f32 {
    if x >= 0.0 {
        x
    } else {
        0.0
    }
}

/// Returns the commanded turn rate (rad/s): feed-forward plus k₂·(normalised heading error),
/// limited to `turn_max`.
#[must_use]
pub fn turn_command(heading_err: f32, omega_ff: f32, g: &Gains, turn_max: f32) -> f32 {
    // An error already in [−π, π] (the squad's are) is what the kit's wrap returns for it.
    let e = if (-core::f32::consts::PI..=core::f32::consts::PI).contains(&heading_err) {
        heading_err
    } else {
        crate::kit::wrap_angle(heading_err)
    };
    let w = omega_ff + g.k2 * e;
    if w.is_finite() {
        let turn_max = non_negative(turn_max);
        w.clamp(-turn_max, turn_max)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::angle_difference;

    #[test]
    fn the_turn_command_skips_the_wrap_only_where_the_wrap_changes_nothing() {
        // The turn command as it was: the kit's wrap on every error.
        let reference = |e: f32, ff: f32, g: &Gains, max: f32| {
            let w = ff + g.k2 * crate::kit::wrap_angle(e);
            if w.is_finite() {
                w.clamp(-non_negative(max), non_negative(max))
            } else {
                0.0
            }
        };
        let g = Gains::default();
        let pi = core::f32::consts::PI;
        let mut errors = vec![
            0.0,
            -0.0,
            pi,
            -pi,
            pi.next_up(),
            (-pi).next_down(),
            7.0,
            -20.0,
            f32::NAN,
            f32::INFINITY,
        ];
        errors.extend((0..2000).map(|k| (k as f32 / 1000.0 - 1.0) * 1.2 * pi));
        for e in errors {
            for ff in [0.0, 0.3, -2.0] {
                let (a, b) = (turn_command(e, ff, &g, 6.0), reference(e, ff, &g, 6.0));
                assert_eq!(a.to_bits(), b.to_bits(), "error {e}, feed-forward {ff}");
            }
        }
    }

    #[test]
    fn angle_wraps_across_180() {
        let from = 179f32.to_radians();
        let to = (-179f32).to_radians();
        let d = angle_difference(from, to);
        assert!((d - 2f32.to_radians()).abs() < 1e-5, "{}", d.to_degrees());
        // The turn command goes the short way (positive), not 358° the other way.
        let w = turn_command(d, 0.0, &Gains::default(), 10.0);
        assert!(w > 0.0 && w < 0.1, "{w}");
    }

    #[test]
    fn pid_settles_a_step_without_overshoot_and_removes_offset() {
        // One agent, 0.5 m step, a constant 2 cm/s disturbance that pure P cannot cancel.
        let g = Gains::default();
        let (mut x, mut integral, dt) = (Vec2::ZERO, Vec2::ZERO, 1.0 / 60.0);
        let target = Vec2::new(0.5, 0.0);
        let disturbance = Vec2::new(-0.02, 0.0);
        let (mut state, mut counter) = (AgentState::Moving, 0u8);
        let th = Thresholds::default();
        let mut max_x = 0.0f32;
        for _ in 0..(60 * 60) {
            let e = target - x;
            state = next_state(state, &mut counter, e.length(), 0.0, false, &th);
            let v = position_command(state, e, Vec2::ZERO, &mut integral, &g, dt, 3.0, 0.03);
            x += (v + disturbance) * dt;
            max_x = max_x.max(x.x);
        }
        assert!(max_x < 0.5 + 0.01, "overshoot {max_x}");
        // P alone would leave 0.02 / 1.8 = 11 mm; the integral removes it.
        assert!(
            (x - target).length() < 0.003,
            "residual {}",
            (x - target).length()
        );
        assert_eq!(state, AgentState::Idle);
        assert!(integral.length() <= g.integral_limit);
    }

    #[test]
    fn anti_windup_bounds_the_integral() {
        let g = Gains::default();
        // A stabilising agent at rest `error` from its slot, one 60 Hz tick at up to 3 m/s.
        let stabilise = |error: Vec2, integral: &mut Vec2| {
            position_command(
                AgentState::Stabilizing,
                error,
                Vec2::ZERO,
                integral,
                &g,
                1.0 / 60.0,
                3.0,
                0.03,
            )
        };
        let mut integral = Vec2::ZERO;
        for _ in 0..10_000 {
            let _ = stabilise(Vec2::new(100.0, 0.0), &mut integral);
        }
        // Saturated all along: nothing integrated.
        assert_eq!(integral, Vec2::ZERO);
        let v = stabilise(Vec2::new(f32::NAN, 0.0), &mut integral);
        assert_eq!(v, Vec2::ZERO);
    }

    #[test]
    fn debounce_needs_five_consecutive_frames() {
        let th = Thresholds::default();
        let mut c = 0;
        let mut s = AgentState::Moving;
        // Noise around the thresholds: 0.029 / 0.031 alternating never leaves Moving.
        for k in 0..100 {
            let d = if k % 2 == 0 { 0.029 } else { 0.031 };
            s = next_state(s, &mut c, d, 0.0, false, &th);
            assert_eq!(s, AgentState::Moving);
        }
        // Close for five ticks while turned away: aligning (facing right would skip it).
        for k in 0..5 {
            s = next_state(s, &mut c, 0.02, 0.5, false, &th);
            let want = if k < 4 {
                AgentState::Moving
            } else {
                AgentState::Aligning
            };
            assert_eq!(s, want, "frame {k}");
        }
        let mut c2 = 0;
        let mut t = AgentState::Moving;
        for _ in 0..5 {
            t = next_state(t, &mut c2, 0.02, 0.0, false, &th);
        }
        assert_eq!(t, AgentState::Stabilizing);
        // Between the thresholds (0.03..0.05) an aligning agent stays put: hysteresis.
        for _ in 0..20 {
            s = next_state(s, &mut c, 0.045, 0.5, false, &th);
            assert_eq!(s, AgentState::Aligning);
        }
        s = next_state(s, &mut c, 0.06, 0.0, false, &th);
        assert_eq!(s, AgentState::Moving);
        s = next_state(s, &mut c, f32::NAN, 0.0, false, &th);
        assert_eq!(s, AgentState::Moving);
    }

    #[test]
    fn latency_lowers_k1_as_the_seed_says() {
        let rule = LatencyGains::default();
        let k1 = Gains::default().k1;
        // An agent measured at 210 ms: k1 1.8 → 1.2.
        assert!((k1 * rule.k1_scale(0.21) - 1.2).abs() < 1e-5);
        // The typical 120 ms keeps the tuned gain, and so does anything faster.
        assert_eq!(rule.k1_scale(0.12), 1.0);
        assert_eq!(rule.k1_scale(0.0), 1.0);
        // Linear in between, monotone, floored.
        assert!((k1 * rule.k1_scale(0.165) - 1.5).abs() < 1e-5);
        assert!(rule.k1_scale(0.25) < rule.k1_scale(0.21));
        assert_eq!(rule.k1_scale(5.0), rule.floor);
        assert_eq!(rule.k1_scale(f32::NAN), 1.0);
        let bad = LatencyGains {
            nominal: f32::NAN,
            reference: -1.0,
            factor: 7.0,
            floor: f32::INFINITY,
        }
        .sanitized();
        assert!(bad.k1_scale(0.3).is_finite() && bad.reference > bad.nominal);
    }

    #[test]
    fn aligning_pauses_position_feedback() {
        let mut i = Vec2::ZERO;
        let v = position_command(
            AgentState::Aligning,
            Vec2::new(0.02, 0.0),
            Vec2::new(1.0, 0.0),
            &mut i,
            &Gains::default(),
            1.0 / 60.0,
            3.0,
            0.03,
        );
        assert_eq!(v, Vec2::new(1.0, 0.0));
    }
}
