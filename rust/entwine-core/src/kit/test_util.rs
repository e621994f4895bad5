//! Helpers shared by the kit's unit tests.

use glam::{Quat, Vec3, Vec4};

/// A tiny deterministic linear congruential generator (Knuth's MMIX constants).
pub struct Lcg(pub u64);

impl Lcg {
    /// Returns the next 32 pseudo-random bits (the high half of the state).
    pub fn bits(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 32) as u32
    }

    /// Returns a pseudo-random number in [-1, 1).
    pub fn signed(&mut self) -> f32 {
        (self.bits() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }

    /// Returns a pseudo-random vector in the cube [-1, 1)³.
    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.signed(), self.signed(), self.signed())
    }

    /// Returns a pseudo-random unit quaternion (rejection-sampled from the 4-ball).
    pub fn quat(&mut self) -> Quat {
        loop {
            let v = Vec4::new(self.signed(), self.signed(), self.signed(), self.signed());
            let len = v.length();
            if len > 0.1 && len <= 1.0 {
                return Quat::from_vec4(v / len);
            }
        }
    }
}

/// Returns the angle in radians between two rotations, computed in f64 from
/// the relative rotation `conj(a)·b` (well conditioned for tiny angles).
pub fn quat_angle(a: Quat, b: Quat) -> f64 {
    let [ax, ay, az, aw] = a.to_array().map(f64::from);
    let [bx, by, bz, bw] = b.to_array().map(f64::from);
    let w = aw * bw + ax * bx + ay * by + az * bz;
    let x = aw * bx - ax * bw - ay * bz + az * by;
    let y = aw * by - ay * bw - az * bx + ax * bz;
    let z = aw * bz - az * bw - ax * by + ay * bx;
    2.0 * (x * x + y * y + z * z).sqrt().atan2(w.abs())
}

/// Returns the angle in radians between two vectors, `atan2(|a × b|, a · b)`
/// (well conditioned for tiny angles, unlike an arccosine).
pub fn vec_angle(a: Vec3, b: Vec3) -> f32 {
    a.cross(b).length().atan2(a.dot(b))
}

/// Asserts that two vectors are within `tol` of each other.
#[track_caller]
pub fn assert_vec_near(actual: Vec3, expected: Vec3, tol: f32) {
    assert!(
        actual.distance(expected) <= tol,
        "{actual} is not within {tol} of {expected}"
    );
}
