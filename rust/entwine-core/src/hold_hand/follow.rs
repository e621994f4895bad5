//! Root follow: the recipient is carried to a point fixed in the initiator's frame.
//!
//! The initiator keeps a *driven position* of its own. Each frame it moves toward the follow target
//! `P_i + R_i·O_follow` at a speed proportional to the distance, clamped to `[min, max]`, and snaps
//! inside the stop radius. The driven position is never read back from a remote replay of the
//! recipient (smoothed, possibly late): doing so would feed network jitter back into the authority.
//! It *is* re-seeded from the recipient's body on the initiator's own machine when the sweep left
//! that body somewhere else ([`FollowDriver::settle`]): a recipient held back by a wall then
//! catches up from where it really is, at no more than the maximum follow speed.

use glam::Vec3;

use crate::kit::{move_towards_vec3, Pose};

/// Tuning of the follow spring. Units: metres, seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FollowTuning {
    /// Where the recipient stands, in the initiator's frame (Godot axes: −Z forward, +X right).
    pub follow_offset: Vec3,
    /// Where the recipient is placed once when the interaction starts, in the initiator's frame.
    pub preparation_offset: Vec3,
    /// Speed per metre of distance (1/s).
    pub spring_coefficient: f32,
    /// Lowest speed outside the stop radius (m/s).
    pub min_follow_speed: f32,
    /// Highest speed (m/s).
    pub max_follow_speed: f32,
    /// Distance under which the driven position snaps onto the target (m).
    pub stop_radius: f32,
}

impl Default for FollowTuning {
    /// The seed's values: 0.82 m left and 0.17 m behind; prepared 1 m behind; k = 16; 12–24 m/s; 2 cm.
    fn default() -> Self {
        Self {
            follow_offset: Vec3::new(-0.82, 0.0, 0.17),
            preparation_offset: Vec3::new(0.0, 0.0, 1.0),
            spring_coefficient: super::params::PairParam::SpringCoefficient.spec().default,
            min_follow_speed: super::params::PairParam::MinFollowSpeed.spec().default,
            max_follow_speed: super::params::PairParam::MaxFollowSpeed.spec().default,
            stop_radius: super::params::PairParam::StopRadius.spec().default,
        }
    }
}

impl FollowTuning {
    /// Returns the tuning for a character `k` times the reference human's size (see
    /// [`crate::rig::world_proportion`]): offsets, stop radius and speeds times `k`, the spring
    /// coefficient (1/s) unchanged.
    #[must_use]
    pub fn proportioned(self, k: f32) -> Self {
        Self {
            follow_offset: self.follow_offset * k,
            preparation_offset: self.preparation_offset * k,
            stop_radius: self.stop_radius * k,
            min_follow_speed: self.min_follow_speed * k,
            max_follow_speed: self.max_follow_speed * k,
            ..self
        }
    }

    /// Returns the follow speed (m/s) at distance `d` (m): 0 inside the stop radius, else
    /// `clamp(k·d, min, max)`. Never panics and never returns NaN or a negative speed: with
    /// `min > max` the maximum wins, NaN or infinite tuning values are ignored (an unusable
    /// result is 0, no motion).
    #[must_use]
    pub fn speed(&self, d: f32) -> f32 {
        if d.is_nan() || d <= self.stop_radius {
            return 0.0;
        }
        let v = (self.spring_coefficient * d)
            .max(self.min_follow_speed)
            .min(self.max_follow_speed);
        if v.is_finite() && v > 0.0 {
            v
        } else {
            0.0
        }
    }
}

/// How far (m) the recipient's body may end up from the driven position before
/// [`FollowDriver::settle`] re-seeds it (a collision sweep's own margin stays below this).
pub const SETTLE_TOLERANCE: f32 = 0.001;

/// The initiator-side driver of the recipient's root.
#[derive(Clone, Copy, Debug, Default)]
pub struct FollowDriver {
    driven: Option<Vec3>,
}

impl FollowDriver {
    /// Returns the preparation pose `P_i + R_i·O_prepare` (facing as the initiator) and starts driving
    /// from it.
    pub fn prepare(&mut self, initiator: Pose, tuning: &FollowTuning) -> Pose {
        let p = initiator.transform_point(tuning.preparation_offset);
        self.driven = Some(p);
        Pose::new(p, initiator.rotation)
    }

    /// Returns the recipient's pose for this frame: the driven position moved toward
    /// `P_i + R_i·O_follow` by the clamped spring speed, facing as the initiator.
    pub fn step(&mut self, initiator: Pose, dt: f32, tuning: &FollowTuning) -> Pose {
        let target = initiator.transform_point(tuning.follow_offset);
        let driven = self.driven.filter(|d| d.is_finite()).unwrap_or(target);
        let d = driven.distance(target);
        let next = if d <= tuning.stop_radius || !d.is_finite() {
            target
        } else {
            let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
            move_towards_vec3(driven, target, tuning.speed(d) * dt)
        };
        self.driven = Some(next);
        Pose::new(next, initiator.rotation)
    }

    /// As [`step`](Self::step), over uneven ground: the spring moves the driven position on the
    /// ground plane only (distance and speed measured horizontally, so a slope does not speed it
    /// up), and its height is `ground(spot)`, the recipient's root height where it will stand
    /// (`spot` has the new horizontal position and the target's height), found by the caller: the
    /// recipient finds its own footing on a ramp or a step instead of copying the initiator's
    /// height. Where `ground` finds none (or gives a non-finite height), the target's height.
    pub fn step_on_ground(
        &mut self,
        initiator: Pose,
        dt: f32,
        tuning: &FollowTuning,
        ground: impl FnOnce(Vec3) -> Option<f32>,
    ) -> Pose {
        let target = initiator.transform_point(tuning.follow_offset);
        let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
        let driven = self.driven.filter(|d| d.is_finite()).unwrap_or(target);
        let d = flat(driven).distance(flat(target));
        let next = if d <= tuning.stop_radius || !d.is_finite() {
            flat(target)
        } else {
            let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
            move_towards_vec3(flat(driven), flat(target), tuning.speed(d) * dt)
        };
        let spot = Vec3::new(next.x, target.y, next.z);
        let y = ground(spot).filter(|y| y.is_finite()).unwrap_or(target.y);
        let next = Vec3::new(next.x, y, next.z);
        self.driven = Some(next);
        Pose::new(next, initiator.rotation)
    }

    /// Corrects the driven position (e.g. after the recipient was blocked by a wall).
    pub fn set_driven(&mut self, position: Vec3) {
        if position.is_finite() {
            self.driven = Some(position);
        }
    }

    /// Re-seeds the driven position from where the recipient's body really ended up this frame
    /// (after its collision sweep, on the initiator's machine): when that is farther than
    /// [`SETTLE_TOLERANCE`] from the driven position (a wall held it back, or slid it along), the
    /// body's position becomes the driven one, so the next [`step`](Self::step)s move it on from
    /// there at no more than `max_follow_speed`. Returns whether it re-seeded. Ignores a non-finite
    /// position and does nothing when not driving.
    pub fn settle(&mut self, actual: Vec3) -> bool {
        match self.driven {
            Some(driven) if actual.is_finite() && driven.distance(actual) > SETTLE_TOLERANCE => {
                self.driven = Some(actual);
                true
            }
            _ => false,
        }
    }

    /// Returns the driven position, if driving.
    #[must_use]
    pub fn driven(&self) -> Option<Vec3> {
        self.driven
    }

    /// Forgets the driven position (the interaction stopped).
    pub fn reset(&mut self) {
        self.driven = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn proportioned_scales_lengths_and_speeds_but_not_the_spring() {
        let d = FollowTuning::default();
        let t = d.proportioned(2.0);
        assert_eq!(t.follow_offset, d.follow_offset * 2.0);
        assert_eq!(t.preparation_offset, d.preparation_offset * 2.0);
        assert_eq!(t.stop_radius, d.stop_radius * 2.0);
        assert_eq!(
            (t.min_follow_speed, t.max_follow_speed),
            (d.min_follow_speed * 2.0, d.max_follow_speed * 2.0)
        );
        assert_eq!(t.spring_coefficient, d.spring_coefficient);
        assert_eq!(d.proportioned(1.0), d);
    }

    #[test]
    fn speed_curve_is_clamped_and_proportional() {
        let t = FollowTuning::default();
        assert_eq!(t.speed(0.0), 0.0);
        assert_eq!(t.speed(0.02), 0.0, "inside the stop radius");
        assert_eq!(
            t.speed(0.1),
            12.0,
            "16 × 0.1 = 1.6 is raised to the minimum"
        );
        assert_eq!(t.speed(1.0), 16.0);
        assert_eq!(t.speed(1.25), 20.0);
        assert_eq!(t.speed(5.0), 24.0, "capped at the maximum");
        assert_eq!(t.speed(f32::NAN), 0.0);
    }

    #[test]
    fn offsets_follow_the_initiator_frame() {
        let t = FollowTuning::default();
        let mut f = FollowDriver::default();
        // Initiator at (10,0,0) facing +X (turned −90° about Y from −Z): its left is −Z.
        let i = Pose::new(
            Vec3::new(10.0, 0.0, 0.0),
            Quat::from_rotation_y(-core::f32::consts::FRAC_PI_2),
        );
        let prep = f.prepare(i, &t);
        assert!(
            prep.position.distance(Vec3::new(9.0, 0.0, 0.0)) < 1e-5,
            "1 m behind"
        );
        for _ in 0..120 {
            f.step(i, 1.0 / 60.0, &t);
        }
        let p = f.driven().unwrap();
        assert!(
            p.distance(Vec3::new(9.83, 0.0, -0.82)) < 1e-4,
            "0.82 left and 0.17 behind: {p}"
        );
    }

    #[test]
    fn moves_at_the_clamped_speed_then_snaps() {
        let t = FollowTuning::default();
        let mut f = FollowDriver::default();
        f.set_driven(Vec3::new(-0.82, 0.0, 3.17)); // 3 m behind the target
        let p = f.step(Pose::IDENTITY, 0.01, &t).position;
        assert!((p.z - (3.17 - 0.24)).abs() < 1e-5, "24 m/s × 10 ms: {p}");
        f.set_driven(Vec3::new(-0.82, 0.0, 0.185)); // 1.5 cm away: inside the stop radius
        assert_eq!(
            f.step(Pose::IDENTITY, 0.01, &t).position,
            Vec3::new(-0.82, 0.0, 0.17)
        );
    }

    /// A body that stops where a wall is (z ≥ wall) whatever it is asked to do, as a sweep would.
    fn blocked(p: Vec3, wall: Option<f32>) -> Vec3 {
        match wall {
            Some(z) if p.z < z => Vec3::new(p.x, p.y, z),
            _ => p,
        }
    }

    #[test]
    fn a_blocked_then_freed_recipient_catches_up_at_the_maximum_speed() {
        let t = FollowTuning {
            min_follow_speed: 1.0,
            max_follow_speed: 3.0,
            ..FollowTuning::default()
        };
        let dt = 1.0 / 60.0;
        for settle in [true, false] {
            let mut f = FollowDriver::default();
            let mut initiator = Pose::IDENTITY;
            let mut body = f.prepare(initiator, &t).position;
            let mut largest = 0.0f32;
            let mut freed_step = 0.0f32;
            // The initiator walks 1.5 m/s toward −Z for 2 s; a wall at z = −0.5 holds the recipient
            // back for the first 1.5 s, then it is gone.
            for frame in 0..240 {
                if frame < 120 {
                    initiator.position.z -= 1.5 * dt;
                }
                let wall = (frame < 90).then_some(-0.5);
                let target = f.step(initiator, dt, &t).position;
                let next = blocked(target, wall);
                let step = next.distance(body);
                if frame >= 90 {
                    largest = largest.max(step);
                }
                if frame == 90 {
                    freed_step = step;
                }
                body = next;
                if settle {
                    f.settle(body);
                }
            }
            let goal = initiator.transform_point(t.follow_offset);
            if settle {
                assert!(
                    largest <= t.max_follow_speed * dt + 1e-5,
                    "never faster than max_follow_speed: {largest} m in one frame"
                );
                assert!(body.distance(goal) < 1e-4, "caught up: {body} vs {goal}");
            } else {
                // Without re-seeding the driven point runs on through the wall and the body jumps
                // onto it when freed: the failure this guards against.
                assert!(freed_step > 1.0, "the old behaviour jumps {freed_step} m");
            }
        }
    }

    #[test]
    fn settle_ignores_small_margins_nan_and_idle_drivers() {
        let mut f = FollowDriver::default();
        assert!(!f.settle(Vec3::ONE), "not driving");
        assert_eq!(f.driven(), None);
        f.set_driven(Vec3::ZERO);
        assert!(
            !f.settle(Vec3::new(0.0005, 0.0, 0.0)),
            "inside the sweep's margin"
        );
        assert_eq!(f.driven(), Some(Vec3::ZERO));
        assert!(!f.settle(Vec3::NAN));
        assert!(f.settle(Vec3::new(0.0, 0.0, 0.3)));
        assert_eq!(f.driven(), Some(Vec3::new(0.0, 0.0, 0.3)));
    }

    #[test]
    fn never_overshoots_and_ignores_nan() {
        let t = FollowTuning::default();
        let mut f = FollowDriver::default();
        f.set_driven(Vec3::new(-0.82, 0.0, 0.5));
        let p = f.step(Pose::IDENTITY, 1.0, &t).position;
        assert_eq!(p, Vec3::new(-0.82, 0.0, 0.17));
        f.set_driven(Vec3::NAN);
        assert_eq!(f.driven(), Some(Vec3::new(-0.82, 0.0, 0.17)));
    }

    #[test]
    fn on_ground_the_spring_runs_level_and_the_height_is_the_grounds() {
        let tuning = FollowTuning::default();
        let me = Pose::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY);
        // A 30° ramp rising toward -Z: height = -z·tan 30°.
        let ramp = |p: Vec3| Some(-p.z * 30f32.to_radians().tan());
        let mut on_ground = FollowDriver::default();
        let mut level = FollowDriver::default();
        on_ground.prepare(me, &tuning);
        level.prepare(me, &tuning);
        for _ in 0..120 {
            let a = on_ground.step_on_ground(me, 1.0 / 60.0, &tuning, ramp);
            let b = level.step(me, 1.0 / 60.0, &tuning);
            // The same path on the ground plane as on flat ground (the target is level with the
            // initiator), the height from the ramp wherever it stands.
            assert!((a.position.x - b.position.x).abs() < 1e-5);
            assert!((a.position.z - b.position.z).abs() < 1e-5);
            assert!((a.position.y - ramp(a.position).unwrap()).abs() < 1e-5);
        }
        let target = me.transform_point(tuning.follow_offset);
        let end = on_ground.driven().unwrap();
        assert!((end.x - target.x).abs() < 1e-4 && (end.z - target.z).abs() < 1e-4);
        // No ground found, or a non-finite one: the target's height.
        let mut d = FollowDriver::default();
        let p = d.step_on_ground(me, 1.0 / 60.0, &tuning, |_| None);
        assert_eq!(p.position.y, target.y);
        let p = d.step_on_ground(me, 1.0 / 60.0, &tuning, |_| Some(f32::NAN));
        assert_eq!(p.position.y, target.y);
        // A target far above (the initiator on a balcony) does not speed the walk up: the spring
        // sees only the horizontal distance.
        let high = Pose::new(Vec3::new(0.0, 50.0, 0.0), Quat::IDENTITY);
        let mut d = FollowDriver::default();
        d.set_driven(target + Vec3::new(0.0, -49.0, 0.0));
        let p = d.step_on_ground(high, 1.0 / 60.0, &tuning, |_| Some(0.0));
        assert!(
            p.position.distance(Vec3::new(target.x, 0.0, target.z)) < 1e-5,
            "{p:?}"
        );
    }
}
