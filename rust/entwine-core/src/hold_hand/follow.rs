//! Root follow (seed §4): the recipient is carried to a point fixed in the initiator's frame.
//!
//! The initiator keeps a *driven position* of its own. Each frame it moves toward the follow target
//! `P_i + R_i·O_follow` at a speed proportional to the distance, clamped to `[min, max]`, and snaps
//! inside the stop radius. The driven position is never read back from the recipient's (smoothed,
//! possibly late) position: doing so would feed network jitter back into the authority.

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
            spring_coefficient: 16.0,
            min_follow_speed: 12.0,
            max_follow_speed: 24.0,
            stop_radius: 0.02,
        }
    }
}

impl FollowTuning {
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

    /// Corrects the driven position (e.g. after the recipient was blocked by a wall).
    pub fn set_driven(&mut self, position: Vec3) {
        if position.is_finite() {
            self.driven = Some(position);
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
}
