//! A walking character's hand reaches for and rests on nearby walls.
//!
//! * [`machine`]: the Reset → Search → Approach → Rise → Touch state machine ([`EnvTouch`]), driven
//!   by a per-frame [`TouchInput`] and producing IK targets and weights for both hands.
//! * [`shapes`]: closest points on the colliders' shapes under a transform (Godot has no general
//!   query for it); the shapes are the kit's one [`Shape`] type ([`crate::kit::shape`]).
//! * [`config`]: the tunables ([`TouchConfig`], checked with typed [`ConfigIssue`]s), scaled with
//!   the character's size, and the setup's measurements ([`calibrate`]).
//! * [`detection_box`]: the detection volume sized from the character's height.
//! * [`node`]: what the node's glue asks besides: setup issues and their warnings, the arm bone
//!   lists, the debug drawing's lines and the cost profile.
//!
//! Godot's axes: +Y up, the character faces −Z, its right is +X. Metres, seconds, radians.

pub mod config;
pub mod machine;
pub mod node;
pub use crate::kit::shape as shapes;

pub use crate::kit::shape::{closest_point_on_shapes, Shape, Trimesh};
pub use config::{
    calibrate, character_size, hand_axes, Calibration, CalibrationIssue, ConfigIssue, Measurements,
    TouchConfig, TouchParam, ELBOW_POLES,
};
pub use machine::{
    candidate, ramp_alpha, Candidate, EnvTouch, HandTarget, ResetReason, Side, TouchEvent,
    TouchInput, TouchState, VelocityEstimate, MAX_EVENTS, REFERENCE_RATE_HZ,
};

use glam::Vec3;

/// The detection volume: a cube and where its centre sits in the character's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectionBox {
    /// Side of the cube (m): the wingspan, taken as the character's height.
    pub size: f32,
    /// Centre of the cube relative to the character's origin (m, character frame).
    pub centre: Vec3,
}

/// Returns the detection volume for a character of `height` metres whose collider centre is
/// at `collider_centre` (character frame): a cube of side = wingspan (= height), raised a quarter
/// wingspan and pushed half a wingspan forward (−Z). `None` for a height that is not finite and > 0.
#[must_use]
pub fn detection_box(height: f32, collider_centre: Vec3) -> Option<DetectionBox> {
    if !(height.is_finite() && height > 0.0 && collider_centre.is_finite()) {
        return None;
    }
    let wingspan = height;
    Some(DetectionBox {
        size: wingspan,
        centre: collider_centre + Vec3::new(0.0, 0.25 * wingspan, -0.5 * wingspan),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_box_follows_the_seed() {
        let b = detection_box(1.75, Vec3::new(0.0, 0.875, 0.0)).unwrap();
        assert_eq!(b.size, 1.75);
        assert!((b.centre - Vec3::new(0.0, 0.875 + 0.4375, -0.875)).length() < 1e-6);
        assert!(detection_box(0.0, Vec3::ZERO).is_none());
        assert!(detection_box(f32::NAN, Vec3::ZERO).is_none());
        assert!(detection_box(-1.0, Vec3::ZERO).is_none());
        assert!(detection_box(1.0, Vec3::NAN).is_none());
    }
}
