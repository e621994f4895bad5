//! Frame-rate independent smoothing, angle wrapping and shortest-arc slerp.
//!
//! Non-finite input policy, shared by the smoothers here: a non-finite
//! `target` holds the value at `current`; a non-finite `current` (or a step
//! that overflows) snaps to `target`. No function here panics on any input.

use core::f32::consts::{PI, TAU};

use core::ops::{Add, Mul, Sub};

use glam::{Quat, Vec3};

use super::quat::unit_quat;

/// Smallest smooth time (seconds) accepted by [`smooth_damp`], as in Unity.
const MIN_SMOOTH_TIME: f32 = 1e-4;

/// Returns `x` clamped to [0, 1]; NaN gives 0.
#[must_use]
pub fn saturate(x: f32) -> f32 {
    if x > 0.0 {
        x.min(1.0)
    } else {
        0.0
    }
}

/// Returns `v` clamped to [`lo`, `hi`] when it is finite, else `default` (settings sanitising).
///
/// Never panics: a NaN bound is ignored, and with `lo > hi` the result is `hi`. A result that is
/// still not finite (an infinite bound) gives `default`.
#[must_use]
pub fn clamp_finite(v: f32, lo: f32, hi: f32, default: f32) -> f32 {
    if !v.is_finite() {
        return default;
    }
    let c = v.max(lo).min(hi);
    if c.is_finite() {
        c
    } else {
        default
    }
}

/// A value that can be checked for being finite (a number or a vector).
trait Finite: Copy {
    /// The value at rest (a velocity of zero).
    const ZERO: Self;
    fn finite(self) -> bool;
}

impl Finite for f32 {
    const ZERO: Self = 0.0;
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Finite for Vec3 {
    const ZERO: Self = Vec3::ZERO;
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// Returns `x` if it is finite, else `target` if that is finite, else `current`.
fn settle<T: Finite>(x: T, current: T, target: T) -> T {
    if x.finite() {
        x
    } else if target.finite() {
        target
    } else {
        current
    }
}

/// Returns SmoothDamp's factors for a step of `dt` s (Unity's): the spring's angular frequency,
/// the step's decay (a Padé approximation of `e^(−omega·dt)`) and the longest pull allowed, with
/// `smooth_time` raised to [`MIN_SMOOTH_TIME`] and a negative `max_speed` taken as 0.
fn smooth_damp_factors(smooth_time: f32, max_speed: f32, dt: f32) -> (f32, f32, f32) {
    let smooth_time = smooth_time.max(MIN_SMOOTH_TIME);
    let omega = 2.0 / smooth_time;
    let x = omega * dt;
    let decay = 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x);
    let max_change = max_speed.max(0.0) * smooth_time;
    (omega, decay, max_change)
}

/// Steps SmoothDamp's spring by `dt` s from `current`, pulled `change` back from it (the capped
/// offset from the target): returns the new position and velocity, before the overshoot guard.
fn step_spring<T>(current: T, change: T, velocity: T, omega: f32, decay: f32, dt: f32) -> (T, T)
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f32, Output = T>,
    f32: Mul<T, Output = T>,
{
    let capped_target = current - change;
    let temp = (velocity + omega * change) * dt;
    let new_velocity = (velocity - omega * temp) * decay;
    let output = capped_target + (change + temp) * decay;
    (output, new_velocity)
}

/// Keeps a SmoothDamp step: stores `new_velocity` and returns `output` when both are finite; else
/// rests the velocity and returns what the module policy ([`settle`]) gives.
fn keep_finite_step<T: Finite>(
    output: T,
    new_velocity: T,
    velocity: &mut T,
    current: T,
    target: T,
) -> T {
    if output.finite() && new_velocity.finite() {
        *velocity = new_velocity;
        output
    } else {
        *velocity = T::ZERO;
        settle(output, current, target)
    }
}

/// Returns the next value of a critically damped spring moving `current`
/// toward `target`, exactly as Unity's `Mathf.SmoothDamp` (Game Programming
/// Gems 4, §1.10), and updates `velocity` (units per second).
///
/// * `smooth_time` (s): roughly the time to reach the target; clamped to ≥ 0.0001
///   (NaN counts as 0.0001).
/// * `max_speed` (units/s): caps the distance the spring pulls from, at
///   `max_speed · smooth_time`; pass `f32::INFINITY` for no cap. Negative or
///   NaN counts as 0.
/// * `dt` (s): if it is not positive (or NaN), returns `current` and leaves
///   `velocity` alone.
///
/// Like Unity, the result never overshoots `target`: if it would, it lands on
/// `target` with zero velocity. Non-finite inputs follow the module policy
/// (and reset `velocity` to 0).
#[must_use]
pub fn smooth_damp(
    current: f32,
    target: f32,
    velocity: &mut f32,
    smooth_time: f32,
    max_speed: f32,
    dt: f32,
) -> f32 {
    if dt.is_nan() || dt <= 0.0 {
        return current;
    }
    let (omega, decay, max_change) = smooth_damp_factors(smooth_time, max_speed, dt);
    let change = (current - target).max(-max_change).min(max_change);
    let (mut output, mut new_velocity) = step_spring(current, change, *velocity, omega, decay, dt);
    if (target - current > 0.0) == (output > target) {
        output = target;
        new_velocity = 0.0;
    }
    keep_finite_step(output, new_velocity, velocity, current, target)
}

/// Returns the next position of a critically damped spring moving `current`
/// toward `target`, exactly as Unity's `Vector3.SmoothDamp`, and updates
/// `velocity` (m/s).
///
/// Parameters and non-finite handling are as for [`smooth_damp`]; here the
/// `max_speed` cap limits the length of the pulled-from offset and the
/// overshoot guard tests whether the step passed the target plane.
#[must_use]
pub fn smooth_damp_vec3(
    current: Vec3,
    target: Vec3,
    velocity: &mut Vec3,
    smooth_time: f32,
    max_speed: f32,
    dt: f32,
) -> Vec3 {
    if dt.is_nan() || dt <= 0.0 {
        return current;
    }
    let (omega, decay, max_change) = smooth_damp_factors(smooth_time, max_speed, dt);
    let mut change = current - target;
    let length_squared = change.length_squared();
    if length_squared > max_change * max_change {
        change = change / length_squared.sqrt() * max_change;
    }
    let (mut output, mut new_velocity) = step_spring(current, change, *velocity, omega, decay, dt);
    if (target - current).dot(output - target) > 0.0 {
        output = target;
        new_velocity = Vec3::ZERO;
    }
    keep_finite_step(output, new_velocity, velocity, current, target)
}

/// Longest sub-step (s) of [`smooth_damp_vec3_ramped`].
pub const RAMPED_MAX_STEP: f32 = 1.0 / 240.0;

/// Returns [`smooth_damp_vec3`] run in sub-steps of at most [`RAMPED_MAX_STEP`] toward a target that
/// moves linearly from `previous_target` (where it was last frame) to `target` over the frame.
///
/// Plain SmoothDamp sees a moving target only at frame boundaries, so its lag depends on the frame
/// rate (millimetres at walking speeds between 30 and 144 Hz). Spreading the target's motion over the
/// frame makes 30, 60 and 144 Hz agree to within a fraction of a millimetre while keeping Unity's
/// meaning of `smooth_time` and `max_speed`. At most 64 sub-steps are taken (a frame of 0.27 s).
#[must_use]
pub fn smooth_damp_vec3_ramped(
    current: Vec3,
    previous_target: Vec3,
    target: Vec3,
    velocity: &mut Vec3,
    smooth_time: f32,
    max_speed: f32,
    dt: f32,
) -> Vec3 {
    if dt.is_nan() || dt <= 0.0 {
        return current;
    }
    let from = if previous_target.is_finite() {
        previous_target
    } else {
        target
    };
    let steps = (dt / RAMPED_MAX_STEP).ceil().clamp(1.0, 64.0);
    let h = dt / steps;
    let mut x = current;
    for k in 1..=steps as u32 {
        let goal = from.lerp(target, k as f32 / steps);
        x = smooth_damp_vec3(x, goal, velocity, smooth_time, max_speed, h);
    }
    x
}

/// Returns the blend factor in [0, 1] for exponential smoothing over `dt`
/// seconds with time constant `tau` seconds: `1 − e^(−dt/tau)`.
///
/// Use it as `x += (target − x) · exp_alpha(dt, tau)`; the result after one
/// second does not depend on the frame rate. `tau ≤ 0` (or NaN) returns 1
/// (snap); otherwise `dt ≤ 0` (or NaN) returns 0, and an infinite `tau`
/// (never moves) returns 0 even for an infinite `dt`.
#[must_use]
pub fn exp_alpha(dt: f32, tau: f32) -> f32 {
    if tau.is_nan() || tau <= 0.0 {
        return 1.0;
    }
    if dt.is_nan() || dt <= 0.0 || tau == f32::INFINITY {
        return 0.0;
    }
    let alpha = -(-dt / tau).exp_m1();
    if alpha.is_nan() {
        return 0.0;
    }
    alpha.clamp(0.0, 1.0)
}

/// Returns `current` moved toward `target` by at most `max_delta` units,
/// never past it. Negative or NaN `max_delta` counts as 0; non-finite inputs
/// follow the module policy.
#[must_use]
pub fn move_towards(current: f32, target: f32, max_delta: f32) -> f32 {
    let step = max_delta.max(0.0);
    let delta = target - current;
    // Written so that a NaN gap picks `target`, which `settle` then vets.
    let moved = if delta.abs() > step {
        current + step.copysign(delta)
    } else {
        target
    };
    settle(moved, current, target)
}

/// Returns `current` moved toward `target` by at most `max_delta` metres
/// along the straight line, never past it. Negative or NaN `max_delta` counts
/// as 0; non-finite inputs follow the module policy.
#[must_use]
pub fn move_towards_vec3(current: Vec3, target: Vec3, max_delta: f32) -> Vec3 {
    let step = max_delta.max(0.0);
    let delta = target - current;
    let distance = delta.length();
    let moved = if distance > step {
        current + delta * (step / distance)
    } else {
        target
    };
    settle(moved, current, target)
}

/// Returns the rotation a fraction `t` of the way from `a` to `b` along the
/// shortest arc (`b` is negated when `a · b < 0`), as a unit quaternion.
///
/// `t` is clamped to [0, 1] (NaN counts as 0). Inputs are normalised first;
/// zero or non-finite inputs count as the identity. Nearly identical inputs
/// (within about 3.6°) use a normalised lerp, which is accurate there and
/// avoids dividing by a tiny sine. The result is always finite.
#[must_use]
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let t = saturate(t);
    let a = unit_quat(a);
    let mut b = unit_quat(b);
    let mut cos = a.dot(b);
    if cos < 0.0 {
        b = -b;
        cos = -cos;
    }
    let blended = if cos > 0.9995 {
        a + (b - a) * t
    } else {
        let angle = cos.acos();
        let sin = angle.sin();
        a * (((1.0 - t) * angle).sin() / sin) + b * ((t * angle).sin() / sin)
    };
    let q = unit_quat(blended);
    debug_assert!(q.is_finite());
    q
}

/// Returns `angle` (radians) wrapped into [−π, π]. Works for any finite
/// magnitude (the remainder is exact); NaN and ±∞ return 0.
#[must_use]
pub fn wrap_angle(angle: f32) -> f32 {
    if !angle.is_finite() {
        return 0.0;
    }
    // `%` is exact in IEEE arithmetic, and so are the corrections below
    // (Sterbenz), so the result stays inside [−π, π] for every input.
    let r = angle % TAU;
    let wrapped = if r > PI {
        r - TAU
    } else if r < -PI {
        r + TAU
    } else {
        r
    };
    debug_assert!((-PI..=PI).contains(&wrapped));
    wrapped
}

/// Returns the signed shortest turn (radians, in [−π, π]) from angle `a` to
/// angle `b`: `wrap_angle(b − a)`. Non-finite inputs return 0.
#[must_use]
pub fn angle_difference(a: f32, b: f32) -> f32 {
    wrap_angle(b - a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::{assert_vec_near, quat_angle, Lcg};
    use core::f32::consts::FRAC_PI_2;

    /// One 0.1 s step of a smooth time of 1 s from rest, pulling 1 unit:
    /// omega = 2, x = 0.2, decay = 1 / 1.22108 = 0.818947,
    /// output = 1 − 1.2 · decay, velocity = 0.4 · decay.
    const STEP_OUTPUT: f32 = 0.017_263_406;
    const STEP_VELOCITY: f32 = 0.327_578_86;

    #[test]
    fn saturate_clamps_and_maps_nan_to_zero() {
        assert_eq!(saturate(0.25), 0.25);
        assert_eq!(saturate(-1.0), 0.0);
        assert_eq!(saturate(2.0), 1.0);
        assert_eq!(saturate(f32::NAN), 0.0);
        assert_eq!(saturate(f32::INFINITY), 1.0);
    }

    #[test]
    fn smooth_damp_one_step_known_value() {
        let mut v = 0.0;
        let x = smooth_damp(0.0, 1.0, &mut v, 1.0, f32::INFINITY, 0.1);
        assert!((x - STEP_OUTPUT).abs() < 1e-6, "{x}");
        assert!((v - STEP_VELOCITY).abs() < 1e-6, "{v}");
    }

    #[test]
    fn smooth_damp_max_speed_caps_the_pull() {
        // A 10 unit gap with max speed 1 and smooth time 1 pulls like a 1 unit gap.
        let mut v = 0.0;
        let x = smooth_damp(0.0, 10.0, &mut v, 1.0, 1.0, 0.1);
        assert!((x - STEP_OUTPUT).abs() < 1e-6, "{x}");
        assert!((v - STEP_VELOCITY).abs() < 1e-6, "{v}");
    }

    #[test]
    fn smooth_damp_overshoot_guard_lands_on_target() {
        // Flying at 100 u/s toward a target 1 unit away would overshoot.
        let mut v = 100.0;
        let x = smooth_damp(0.0, 1.0, &mut v, 1.0, f32::INFINITY, 0.1);
        assert_eq!((x, v), (1.0, 0.0));
        let mut v3 = Vec3::new(100.0, 0.0, 0.0);
        let p = smooth_damp_vec3(Vec3::ZERO, Vec3::X, &mut v3, 1.0, f32::INFINITY, 0.1);
        assert_eq!((p, v3), (Vec3::X, Vec3::ZERO));
    }

    #[test]
    fn smooth_damp_vec3_known_values() {
        let mut v = Vec3::ZERO;
        let p = smooth_damp_vec3(Vec3::ZERO, Vec3::Y, &mut v, 1.0, f32::INFINITY, 0.1);
        assert_vec_near(p, Vec3::Y * STEP_OUTPUT, 1e-6);
        assert_vec_near(v, Vec3::Y * STEP_VELOCITY, 1e-6);
        // A 50 m gap capped to 1 m along (0.6, 0.8, 0).
        let mut v = Vec3::ZERO;
        let target = Vec3::new(30.0, 40.0, 0.0);
        let p = smooth_damp_vec3(Vec3::ZERO, target, &mut v, 1.0, 1.0, 0.1);
        assert_vec_near(p, Vec3::new(0.6, 0.8, 0.0) * STEP_OUTPUT, 1e-6);
        assert_vec_near(v, Vec3::new(0.6, 0.8, 0.0) * STEP_VELOCITY, 1e-6);
    }

    #[test]
    fn smooth_damp_is_frame_rate_independent() {
        let run = |hz: u32| {
            let dt = 1.0 / hz as f32;
            let (mut x, mut v) = (0.0, 0.0);
            let mut p = Vec3::ZERO;
            let mut pv = Vec3::ZERO;
            for _ in 0..hz / 2 {
                x = smooth_damp(x, 1.0, &mut v, 0.08, f32::INFINITY, dt);
                p = smooth_damp_vec3(p, Vec3::NEG_Z, &mut pv, 0.08, f32::INFINITY, dt);
            }
            assert!((p.z + x).abs() < 1e-5);
            x
        };
        let (a, b, c) = (run(30), run(60), run(144));
        assert!((a - b).abs() < 1e-3 && (b - c).abs() < 1e-3 && (a - c).abs() < 1e-3);
        assert!((c - 1.0).abs() < 1e-3, "{c}");
    }

    #[test]
    fn smooth_damp_degenerate_inputs() {
        let mut v = 2.0;
        assert_eq!(smooth_damp(0.5, 1.0, &mut v, 0.1, 10.0, 0.0), 0.5);
        assert_eq!(smooth_damp(0.5, 1.0, &mut v, 0.1, 10.0, -1.0), 0.5);
        assert_eq!(smooth_damp(0.5, 1.0, &mut v, 0.1, 10.0, f32::NAN), 0.5);
        assert_eq!(v, 2.0);
        // NaN target holds, NaN current snaps, NaN velocity recovers.
        assert_eq!(smooth_damp(0.5, f32::NAN, &mut v, 0.1, 10.0, 0.1), 0.5);
        assert_eq!(v, 0.0);
        assert_eq!(smooth_damp(f32::NAN, 1.0, &mut v, 0.1, 10.0, 0.1), 1.0);
        let mut nan_v = f32::NAN;
        assert_eq!(smooth_damp(0.0, 1.0, &mut nan_v, 0.1, 10.0, 0.1), 1.0);
        assert_eq!(nan_v, 0.0);
        // Infinite dt, NaN smooth time / max speed, and overflowing gaps.
        let mut v = 0.0;
        assert_eq!(smooth_damp(0.0, 1.0, &mut v, 0.1, 10.0, f32::INFINITY), 1.0);
        assert!(smooth_damp(0.0, 1.0, &mut v, f32::NAN, f32::NAN, 0.1).is_finite());
        let mut v = 0.0;
        assert_eq!(
            smooth_damp(-f32::MAX, f32::MAX, &mut v, 0.1, f32::INFINITY, 0.1),
            f32::MAX
        );
        let mut v3 = Vec3::ZERO;
        let far = Vec3::splat(f32::MAX);
        assert_eq!(
            smooth_damp_vec3(-far, far, &mut v3, 0.1, f32::INFINITY, 0.1),
            far
        );
        let nan = Vec3::NAN;
        assert_eq!(
            smooth_damp_vec3(Vec3::X, nan, &mut v3, 0.1, 1.0, 0.1),
            Vec3::X
        );
        assert_eq!(
            smooth_damp_vec3(nan, Vec3::X, &mut v3, 0.1, 1.0, 0.1),
            Vec3::X
        );
        assert_eq!(v3, Vec3::ZERO);
    }

    #[test]
    fn exp_alpha_known_values_and_frame_rate_independence() {
        assert!((exp_alpha(0.1, 0.1) - 0.632_120_6).abs() < 1e-6);
        assert_eq!(exp_alpha(0.1, 0.0), 1.0);
        assert_eq!(exp_alpha(0.1, -1.0), 1.0);
        assert_eq!(exp_alpha(0.1, f32::NAN), 1.0);
        assert_eq!(exp_alpha(0.0, 0.1), 0.0);
        assert_eq!(exp_alpha(f32::NAN, 0.1), 0.0);
        assert_eq!(exp_alpha(f32::INFINITY, 0.1), 1.0);

        // Approaching 1 with tau = 0.25 s for 1 s leaves e^-4 of the gap.
        let expected = 1.0 - (-4.0f32).exp();
        for hz in [30, 60, 144] {
            let dt = 1.0 / hz as f32;
            let mut x = 0.0;
            for _ in 0..hz {
                x += (1.0 - x) * exp_alpha(dt, 0.25);
            }
            assert!((x - expected).abs() < 1e-4, "{hz} Hz: {x} vs {expected}");
        }
    }

    #[test]
    fn move_towards_known_values() {
        assert_eq!(move_towards(0.0, 10.0, 3.0), 3.0);
        assert_eq!(move_towards(0.0, 2.0, 3.0), 2.0);
        assert_eq!(move_towards(5.0, 0.0, 2.0), 3.0);
        assert_eq!(move_towards(5.0, 0.0, -2.0), 5.0);
        assert_eq!(move_towards(5.0, 0.0, f32::NAN), 5.0);
        assert_eq!(move_towards(5.0, f32::NAN, 1.0), 5.0);
        assert_eq!(move_towards(f32::NAN, 2.0, 1.0), 2.0);
        let p = move_towards_vec3(Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0), 2.5);
        assert_vec_near(p, Vec3::new(1.5, 2.0, 0.0), 1e-6);
        assert_eq!(move_towards_vec3(Vec3::ZERO, Vec3::X, 2.0), Vec3::X);
        assert_eq!(move_towards_vec3(Vec3::ONE, Vec3::NAN, 2.0), Vec3::ONE);
        let far = Vec3::splat(f32::MAX);
        assert_eq!(move_towards_vec3(-far, far, 1.0), far);
    }

    #[test]
    fn slerp_shortest_known_values() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_y(FRAC_PI_2);
        assert!(
            quat_angle(
                slerp_shortest(a, b, 0.5),
                Quat::from_rotation_y(FRAC_PI_2 / 2.0)
            ) < 1e-6
        );
        // The same rotation given as -b still takes the short way.
        let half = slerp_shortest(a, -b, 0.5);
        assert!(quat_angle(half, Quat::from_rotation_y(FRAC_PI_2 / 2.0)) < 1e-6);
        assert!(quat_angle(slerp_shortest(a, b, 1.0), b) < 1e-6);
        assert_eq!(slerp_shortest(a, b, 0.0), a);
        assert_eq!(slerp_shortest(a, b, f32::NAN), a);
        // Going past 1 is clamped.
        assert!(quat_angle(slerp_shortest(a, b, 3.0), b) < 1e-6);
    }

    #[test]
    fn slerp_shortest_nearly_identical_and_degenerate() {
        let a = Quat::from_rotation_x(0.3);
        let b = Quat::from_rotation_x(0.300_01);
        let mid = slerp_shortest(a, b, 0.5);
        assert!((mid.length() - 1.0).abs() < 1e-6);
        assert!(quat_angle(mid, Quat::from_rotation_x(0.300_005)) < 1e-5);
        assert!(quat_angle(slerp_shortest(a, a, 0.7), a) < 1e-6);
        let nan = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
        assert_eq!(slerp_shortest(nan, nan, 0.5), Quat::IDENTITY);
        assert!(quat_angle(slerp_shortest(nan, a, 1.0), a) < 1e-6);
        // Non-unit inputs are normalised.
        let scaled = Quat::from_xyzw(0.0, 0.0, 0.0, 5.0);
        assert_eq!(slerp_shortest(scaled, scaled, 0.5), Quat::IDENTITY);
        let mut rng = Lcg(11);
        for _ in 0..200 {
            let q = slerp_shortest(rng.quat(), rng.quat(), rng.signed() * 0.5 + 0.5);
            assert!((q.length() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn wrap_angle_known_values() {
        assert!((wrap_angle(1.5 * PI) + FRAC_PI_2).abs() < 1e-6);
        assert!((wrap_angle(-1.5 * PI) - FRAC_PI_2).abs() < 1e-6);
        assert!((wrap_angle(7.0) - (7.0 - TAU)).abs() < 1e-6);
        assert!((wrap_angle(-20.0) - (-20.0 + 3.0 * TAU)).abs() < 1e-5);
        assert_eq!(wrap_angle(PI), PI);
        assert_eq!(wrap_angle(-PI), -PI);
        assert_eq!(wrap_angle(0.0), 0.0);
        for huge in [1e7, -3.3e9, 1e30, f32::MAX, -f32::MAX] {
            assert!((-PI..=PI).contains(&wrap_angle(huge)), "{huge}");
        }
        assert_eq!(wrap_angle(f32::NAN), 0.0);
        assert_eq!(wrap_angle(f32::INFINITY), 0.0);
        assert_eq!(wrap_angle(f32::NEG_INFINITY), 0.0);
    }

    #[test]
    fn angle_difference_takes_the_short_way() {
        let deg = |d: f32| d.to_radians();
        assert!((angle_difference(deg(350.0), deg(10.0)) - deg(20.0)).abs() < 1e-5);
        assert!((angle_difference(deg(10.0), deg(350.0)) + deg(20.0)).abs() < 1e-5);
        assert!((angle_difference(deg(-170.0), deg(170.0)) + deg(20.0)).abs() < 1e-5);
        assert_eq!(angle_difference(f32::NAN, 1.0), 0.0);
        assert_eq!(angle_difference(-f32::MAX, f32::MAX), 0.0);
    }

    #[test]
    fn ramped_smooth_damp_tracks_a_moving_target_alike_at_any_rate() {
        // A target moving at 1 m/s along x for 0.5 s: compare where each rate is at t = 0.5 s.
        let run = |hz: f32, ramped: bool| {
            let (mut x, mut v, mut prev) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO);
            for k in 1..=(hz * 0.5) as u32 {
                let target = Vec3::X * (k as f32 / hz);
                x = if ramped {
                    smooth_damp_vec3_ramped(x, prev, target, &mut v, 0.08, f32::INFINITY, 1.0 / hz)
                } else {
                    smooth_damp_vec3(x, target, &mut v, 0.08, f32::INFINITY, 1.0 / hz)
                };
                prev = target;
            }
            x.x
        };
        let plain = (run(30.0, false) - run(144.0, false)).abs();
        let ramped = (run(30.0, true) - run(144.0, true)).abs();
        assert!(plain > 5e-3, "plain SmoothDamp lags differently: {plain}");
        assert!(
            ramped < 5e-4 && ramped * 10.0 < plain,
            "ramped agrees: {ramped} vs {plain}"
        );
        // A still target gives plain SmoothDamp's result.
        let mut v1 = Vec3::ZERO;
        let mut v2 = Vec3::ZERO;
        let a = smooth_damp_vec3(Vec3::ZERO, Vec3::X, &mut v1, 0.1, f32::INFINITY, 0.004);
        let b = smooth_damp_vec3_ramped(
            Vec3::ZERO,
            Vec3::X,
            Vec3::X,
            &mut v2,
            0.1,
            f32::INFINITY,
            0.004,
        );
        assert_eq!(a, b);
    }
}
