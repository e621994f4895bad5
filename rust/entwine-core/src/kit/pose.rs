//! Rigid transforms: a position plus a unit-quaternion rotation.
//!
//! A [`Pose`] maps points from its local frame into its parent frame
//! (`world = position + rotation · local`). All operations are plain algebra:
//! non-finite components propagate to the result rather than panicking, so
//! check [`Pose::is_finite`] on data from untrusted sources.

use glam::{Affine3A, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

pub use super::quat::unit_quat;
use super::smoothing::{saturate, slerp_shortest};

/// A rigid transform: metres for `position`, a unit quaternion for `rotation`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Origin of the frame, in metres, expressed in the parent frame.
    pub position: Vec3,
    /// Orientation of the frame relative to the parent; expected to be unit length.
    pub rotation: Quat,
}

impl Pose {
    /// The identity pose: at the origin, not rotated.
    pub const IDENTITY: Self = Self::new(Vec3::ZERO, Quat::IDENTITY);

    /// Returns a pose at `position` (metres) with `rotation`.
    #[must_use]
    pub const fn new(position: Vec3, rotation: Quat) -> Self {
        Self { position, rotation }
    }

    /// Returns `self * child_local`: the pose of a child given in this frame,
    /// expressed in this pose's parent frame.
    #[must_use]
    pub fn compose(self, child_local: Self) -> Self {
        Self::new(
            self.transform_point(child_local.position),
            mul_quat(self.rotation, child_local.rotation),
        )
    }

    /// Returns the inverse transform, so that `p.compose(p.inverse())` is the identity.
    ///
    /// The rotation is assumed to be unit length (its conjugate is its inverse).
    #[must_use]
    pub fn inverse(self) -> Self {
        let rotation = self.rotation.conjugate();
        Self::new(-rotate(rotation, self.position), rotation)
    }

    /// Returns `world` (a pose in this pose's parent frame) expressed in this frame.
    #[must_use]
    pub fn to_local(self, world: Self) -> Self {
        let inverse_rotation = self.rotation.conjugate();
        Self::new(
            rotate(inverse_rotation, world.position - self.position),
            mul_quat(inverse_rotation, world.rotation),
        )
    }

    /// Returns `local` (a pose in this frame) expressed in this pose's parent frame.
    ///
    /// The same as [`Pose::compose`]; the name reads better next to [`Pose::to_local`].
    #[must_use]
    pub fn from_local(self, local: Self) -> Self {
        self.compose(local)
    }

    /// Returns the point `local` (metres, in this frame) in the parent frame.
    #[must_use]
    #[inline]
    pub fn transform_point(self, local: Vec3) -> Vec3 {
        self.position + rotate(self.rotation, local)
    }

    /// Returns the point `world` (metres, in the parent frame) in this frame.
    #[must_use]
    #[inline]
    pub fn inverse_transform_point(self, world: Vec3) -> Vec3 {
        rotate(self.rotation.conjugate(), world - self.position)
    }

    /// Returns this pose's forward direction, `rotation · (−Z)`, in the parent frame.
    #[must_use]
    pub fn forward(self) -> Vec3 {
        rotate(self.rotation, Vec3::NEG_Z)
    }

    /// Returns the blend from `a` (`t` = 0) to `b` (`t` = 1): positions are
    /// lerped, rotations slerped along the shortest arc.
    ///
    /// `t` is clamped to [0, 1] (NaN counts as 0). Non-finite rotations count as
    /// identity (see [`slerp_shortest`]); non-finite positions propagate.
    #[must_use]
    pub fn lerp_slerp(a: Self, b: Self, t: f32) -> Self {
        let t = saturate(t);
        Self::new(
            a.position.lerp(b.position, t),
            slerp_shortest(a.rotation, b.rotation, t),
        )
    }

    /// Returns `true` if every component of position and rotation is finite.
    #[must_use]
    pub fn is_finite(self) -> bool {
        self.position.is_finite() && self.rotation.is_finite()
    }
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// Returns `v` rotated by `q`, for unit `q`.
///
/// Unlike glam's `Quat * Vec3` this never asserts, so NaN simply propagates.
#[inline]
pub(crate) fn rotate(q: Quat, v: Vec3) -> Vec3 {
    let axis = Vec3::new(q.x, q.y, q.z);
    let t = 2.0 * axis.cross(v);
    let r = v + q.w * t + axis.cross(t);
    if r.is_finite() || !(q.is_finite() && v.is_finite()) {
        return r;
    }
    rotate_wide(q, v)
}

/// [`rotate`] for finite input that overflowed `f32` (a huge vector, or a rotation far from unit
/// length): `q` normalised, computed in `f64`; the result may be infinite but is never NaN.
#[cold]
fn rotate_wide(q: Quat, v: Vec3) -> Vec3 {
    let q = unit_quat(q);
    let axis = DVec3::new(f64::from(q.x), f64::from(q.y), f64::from(q.z));
    let v = v.as_dvec3();
    let t = 2.0 * axis.cross(v);
    (v + f64::from(q.w) * t + axis.cross(t)).as_vec3()
}

/// Returns `a · b`; when finite input overflows (rotations far from unit length) the product of
/// the normalised rotations instead, so the result is never NaN for finite input.
pub(crate) fn mul_quat(a: Quat, b: Quat) -> Quat {
    let r = a * b;
    if r.is_finite() || !(a.is_finite() && b.is_finite()) {
        r
    } else {
        unit_quat(a) * unit_quat(b)
    }
}

/// Returns `v` scaled to unit length, or `None` if it is zero or not finite. Like [`unit_quat`],
/// any finite length normalises exactly (within glam's unit tolerance, so the result may go to
/// glam's asserting helpers): `v` is first divided by its largest component, so a length whose
/// square underflows (10⁻²²) or overflows (10²⁰) does not lose the result's precision.
#[must_use]
pub fn unit_vec3(v: Vec3) -> Option<Vec3> {
    let m = v.abs().max_element();
    if !m.is_finite() || m <= 0.0 {
        return None;
    }
    (v / m).try_normalize()
}

/// Returns the shortest rotation that turns the direction `from` into the direction `to` (any
/// lengths): glam's `from_rotation_arc` of the two normalised by [`unit_vec3`], but total. A zero
/// or non-finite direction gives the identity.
#[must_use]
pub fn rotation_arc(from: Vec3, to: Vec3) -> Quat {
    match (unit_vec3(from), unit_vec3(to)) {
        (Some(from), Some(to)) => ensure_unit(Quat::from_rotation_arc(from, to)),
        _ => Quat::IDENTITY,
    }
}

/// Returns `q` itself when glam counts it as unit length (so it may go to glam's asserting
/// helpers unchanged, bit for bit), else [`unit_quat`]`(q)`.
#[must_use]
pub fn ensure_unit(q: Quat) -> Quat {
    if q.is_normalized() {
        q
    } else {
        unit_quat(q)
    }
}

/// Returns the rotation by the angle `v.length()` (radians) about `v`'s direction, never
/// asserting (glam's `from_scaled_axis` asserts on an axis whose squared length underflows): the
/// identity for a zero, non-finite or overflowing `v`.
#[must_use]
pub fn rotation_of_scaled_axis(v: Vec3) -> Quat {
    // glam's own arithmetic whenever it holds, so results match it to the bit.
    let length = v.length();
    if length.is_finite() && length > 0.0 {
        let axis = v / length;
        if axis.is_normalized() {
            return Quat::from_axis_angle(axis, length);
        }
    }
    let m = v.abs().max_element();
    let Some(axis) = unit_vec3(v) else {
        return Quat::IDENTITY;
    };
    let angle = (v / m).length() * m;
    if !angle.is_finite() {
        return Quat::IDENTITY;
    }
    unit_quat(Quat::from_axis_angle(axis, angle))
}

/// Returns the inverse of the affine map `a` (a node's transform with any scale), never
/// asserting: the exact inverse when `a` is finite and invertible with a finite inverse; else the
/// inverse of its rigid part (its rotation by [`rotation_of_axes`] and its origin, zero when not
/// finite), so a node scaled to zero still maps directions and points by its rotation.
#[must_use]
pub fn affine_inverse(a: Affine3A) -> Affine3A {
    let det = a.matrix3.determinant();
    if a.is_finite() && det.is_finite() && det != 0.0 {
        let inverse = a.inverse();
        if inverse.is_finite() {
            return inverse;
        }
    }
    let rotation = rotation_of_axes(
        a.matrix3.x_axis.into(),
        a.matrix3.y_axis.into(),
        a.matrix3.z_axis.into(),
    );
    let origin = Vec3::from(a.translation);
    let origin = if origin.is_finite() {
        origin
    } else {
        Vec3::ZERO
    };
    let back = rotation.conjugate();
    let inverse = Affine3A::from_rotation_translation(back, -rotate(back, origin));
    if inverse.is_finite() {
        inverse
    } else {
        Affine3A::from_quat(back)
    }
}

/// Returns the rotation of a linear map given by its three columns (the images of +X, +Y, +Z), with
/// any scale and shear dropped — Godot's `Basis::get_rotation_quaternion`, but total: it never
/// asserts and never returns NaN.
///
/// Columns are normalised one by one in `f64` before they are orthogonalised (Gram–Schmidt from +X,
/// then +Y), so a map scaled by 10⁻⁶ or 10⁶ gives the same rotation as an unscaled one (Godot's
/// `orthonormalized()` asserts when the determinant is below 10⁻⁵, i.e. at a uniform scale ≤ 0.02). A
/// mirrored map (negative determinant) is negated first, as Godot does. One zero or non-finite
/// column (a bone scaled to zero along one axis) is rebuilt from the other two; with fewer than two
/// usable, or parallel, columns there is no rotation to take and the identity is returned.
#[must_use]
pub fn rotation_of_axes(x: Vec3, y: Vec3, z: Vec3) -> Quat {
    rotation_of_scaled_rotation(x, y, z).unwrap_or_else(|| rotation_of_any_axes(x, y, z))
}

/// [`rotation_of_axes`] the long way, for any map (see there).
fn rotation_of_any_axes(x: Vec3, y: Vec3, z: Vec3) -> Quat {
    let unit = |c: Vec3| {
        if c.is_finite() {
            c.as_dvec3().try_normalize()
        } else {
            None
        }
    };
    let (x, y, z) = match (unit(x), unit(y), unit(z)) {
        (Some(x), Some(y), Some(z)) => {
            if x.dot(y.cross(z)) < -1e-9 {
                (-x, -y, -z)
            } else {
                (x, y, z)
            }
        }
        (None, Some(y), Some(z)) => (y.cross(z), y, z),
        (Some(x), None, Some(z)) => (x, z.cross(x), z),
        (Some(x), Some(y), None) => (x, y, x.cross(y)),
        _ => return Quat::IDENTITY,
    };
    let Some(x) = x.try_normalize() else {
        return Quat::IDENTITY;
    };
    // +Y made perpendicular to +X; when they are parallel, rebuilt from +Z.
    let perpendicular = |v: glam::DVec3| (v.length() > 1e-9).then(|| v.normalize());
    let y = perpendicular(y - x * x.dot(y)).or_else(|| perpendicular(z.cross(x)));
    let Some(y) = y else {
        return Quat::IDENTITY;
    };
    let z = x.cross(y);
    let q = glam::DQuat::from_mat3(&glam::DMat3::from_cols(x, y, z)).as_quat();
    unit_quat(q)
}

/// Returns the rotation of a linear map that is a rotation scaled by one factor between 10⁻³ and
/// 10³ — every column of that length and the three mutually perpendicular, to a relative 2 · 10⁻⁵
/// (what a chain of `f32` bone poses keeps) — worked out in `f32`; `None` for any other map
/// (mirrored, sheared, scaled per axis, degenerate or not finite), which [`rotation_of_axes`]
/// takes the long way. The short way differs from the long one by at most about 10⁻⁵ rad.
#[inline]
fn rotation_of_scaled_rotation(x: Vec3, y: Vec3, z: Vec3) -> Option<Quat> {
    const TOLERANCE: f32 = 2e-5;
    let lx = x.length_squared();
    // Also false for NaN and infinite columns.
    if !(1e-6..=1e6).contains(&lx) {
        return None;
    }
    let tolerance = TOLERANCE * lx;
    let fits = (y.length_squared() - lx).abs() <= tolerance
        && (z.length_squared() - lx).abs() <= tolerance
        && x.dot(y).abs() <= tolerance
        && y.dot(z).abs() <= tolerance
        && z.dot(x).abs() <= tolerance;
    if !fits {
        return None;
    }
    let k = lx.sqrt().recip();
    let (x, y, z) = (x * k, y * k, z * k);
    if x.dot(y.cross(z)) <= 0.0 {
        return None;
    }
    Some(unit_quat(Quat::from_mat3(&glam::Mat3::from_cols(x, y, z))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::{assert_vec_near, quat_angle, Lcg};
    use core::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, PI};

    const TOL: f32 = 1e-6;

    /// Standing at (1, 2, 3), turned 90° to the left (yaw +90° about +Y).
    fn turned_left() -> Pose {
        Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(FRAC_PI_2))
    }

    #[test]
    fn forward_is_negative_z_rotated() {
        assert_eq!(Pose::IDENTITY.forward(), Vec3::NEG_Z);
        // Yawing +90° about +Y turns -Z into -X.
        assert_vec_near(turned_left().forward(), Vec3::NEG_X, TOL);
        let pitched_up = Pose::new(Vec3::ZERO, Quat::from_rotation_x(FRAC_PI_2));
        assert_vec_near(pitched_up.forward(), Vec3::Y, TOL);
    }

    #[test]
    fn transform_point_known_values() {
        let p = turned_left();
        // One metre ahead of (1, 2, 3) facing -X.
        assert_vec_near(
            p.transform_point(Vec3::NEG_Z),
            Vec3::new(0.0, 2.0, 3.0),
            TOL,
        );
        // Local +X (right) becomes world -Z.
        assert_vec_near(p.transform_point(Vec3::X), Vec3::new(1.0, 2.0, 2.0), TOL);
        assert_vec_near(
            p.inverse_transform_point(Vec3::new(0.0, 2.0, 3.0)),
            Vec3::NEG_Z,
            TOL,
        );
    }

    #[test]
    fn compose_known_values() {
        let parent = turned_left();
        let child = Pose::new(Vec3::new(0.0, 1.0, -2.0), Quat::from_rotation_y(FRAC_PI_2));
        let world = parent.compose(child);
        // Child origin 2 m ahead (-X) and 1 m up of the parent.
        assert_vec_near(world.position, Vec3::new(-1.0, 3.0, 3.0), TOL);
        assert!(quat_angle(world.rotation, Quat::from_rotation_y(PI)) < 1e-6);
        assert_eq!(parent.from_local(child), world);
    }

    #[test]
    fn inverse_known_values() {
        let inv = turned_left().inverse();
        assert_vec_near(inv.position, Vec3::new(3.0, -2.0, -1.0), TOL);
        assert!(quat_angle(inv.rotation, Quat::from_rotation_y(-FRAC_PI_2)) < 1e-6);
        let identity = turned_left().compose(inv);
        assert_vec_near(identity.position, Vec3::ZERO, TOL);
        assert!(quat_angle(identity.rotation, Quat::IDENTITY) < 1e-6);
    }

    #[test]
    fn to_local_and_from_local_are_inverse() {
        let frame = turned_left();
        let world = Pose::new(Vec3::new(0.0, 2.0, 3.0), Quat::from_rotation_y(PI));
        let local = frame.to_local(world);
        assert_vec_near(local.position, Vec3::NEG_Z, TOL);
        assert!(quat_angle(local.rotation, Quat::from_rotation_y(FRAC_PI_2)) < 1e-6);

        let mut rng = Lcg(7);
        for _ in 0..100 {
            let frame = Pose::new(rng.vec3() * 10.0, rng.quat());
            let world = Pose::new(rng.vec3() * 10.0, rng.quat());
            let back = frame.from_local(frame.to_local(world));
            assert_vec_near(back.position, world.position, 1e-4);
            assert!(quat_angle(back.rotation, world.rotation) < 1e-5);
        }
    }

    #[test]
    fn lerp_slerp_halfway() {
        let a = Pose::IDENTITY;
        let b = Pose::new(Vec3::new(2.0, 0.0, -4.0), Quat::from_rotation_y(FRAC_PI_2));
        let mid = Pose::lerp_slerp(a, b, 0.5);
        assert_vec_near(mid.position, Vec3::new(1.0, 0.0, -2.0), TOL);
        assert!(quat_angle(mid.rotation, Quat::from_rotation_y(PI / 4.0)) < 1e-6);
        // t is clamped.
        assert_eq!(Pose::lerp_slerp(a, b, -3.0).position, a.position);
        assert_vec_near(Pose::lerp_slerp(a, b, 7.0).position, b.position, TOL);
        assert_eq!(Pose::lerp_slerp(a, b, f32::NAN).position, a.position);
    }

    #[test]
    fn rotate_matches_glam_for_unit_quaternions() {
        // 120° about (1, -1, 1)/√3: t = 2(u × X) = (0, 1, 1), X + w·t + u × t = Z.
        let q = Quat::from_xyzw(0.5, -0.5, 0.5, 0.5);
        assert_vec_near(rotate(q, Vec3::X), Vec3::Z, TOL);
        let mut rng = Lcg(3);
        for _ in 0..100 {
            let (q, v) = (rng.quat(), rng.vec3());
            assert_vec_near(rotate(q, v), q * v, 1e-5);
        }
    }

    #[test]
    fn non_finite_input_propagates_without_panicking() {
        let bad = Pose::new(Vec3::NAN, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0));
        assert!(!bad.is_finite());
        assert!(!bad.compose(turned_left()).is_finite());
        assert!(!turned_left().to_local(bad).is_finite());
        assert!(!bad.inverse().is_finite());
        assert!(!bad.forward().is_finite());
        // Non-unit but finite rotations do not panic either.
        let scaled = Pose::new(Vec3::ONE, Quat::from_xyzw(0.0, 0.0, 0.0, 3.0));
        assert!(scaled.compose(scaled).is_finite());
        assert!(Pose::lerp_slerp(bad, scaled, 0.5).rotation.is_finite());
    }

    #[test]
    fn unit_quat_fallbacks() {
        let q = unit_quat(Quat::from_xyzw(0.0, 0.0, 3.0, 4.0));
        assert_eq!(q, Quat::from_xyzw(0.0, 0.0, 0.6, 0.8));
        assert_eq!(
            unit_quat(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            Quat::IDENTITY
        );
        assert_eq!(
            unit_quat(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
            Quat::IDENTITY
        );
        let half = unit_quat(Quat::from_xyzw(FRAC_1_SQRT_2, 0.0, 0.0, FRAC_1_SQRT_2));
        assert!((half.length() - 1.0).abs() < TOL);
        // Subnormal and huge lengths normalise exactly (a fuzzed frame once decoded a tiny one,
        // which normalised to a length glam refuses to rotate by).
        for k in [1e-40f32, 3e-39, 1e-20, 1e20, 3e38] {
            let q = unit_quat(Quat::from_xyzw(0.3 * k, -0.5 * k, 0.1 * k, 0.8 * k));
            assert!(q.is_normalized(), "{k}: {q}");
            assert!((q.w - 0.8 / 0.99f32.sqrt()).abs() < 1e-5, "{k}: {q}");
        }
    }

    #[test]
    fn serde_round_trip_through_ron() {
        let p = turned_left();
        let text = ron::to_string(&p).expect("serialise");
        let back: Pose = ron::from_str(&text).expect("deserialise");
        assert_eq!(back, p);
        assert_eq!(Pose::default(), Pose::IDENTITY);
    }

    /// A rotation scaled uniformly or per axis by 10⁻⁶…10⁶ gives back the rotation (Godot's own
    /// `orthonormalized()` asserts below a determinant of 10⁻⁵); a mirrored one gives Godot's
    /// `get_rotation_quaternion` (negated columns).
    #[test]
    fn rotation_of_axes_ignores_any_scale() {
        let mut rng = Lcg(15);
        for _ in 0..200 {
            let q = rng.quat();
            let m = glam::Mat3::from_quat(q);
            for s in [1e-6, 1e-4, 0.01, 0.02, 1.0, 100.0, 1e6] {
                let k = Vec3::new(s, s * (1.0 + rng.signed().abs()), s * 0.5);
                for scale in [Vec3::splat(s), k] {
                    let got = rotation_of_axes(
                        m.x_axis * scale.x,
                        m.y_axis * scale.y,
                        m.z_axis * scale.z,
                    );
                    assert!(quat_angle(got, q) < 1e-5, "scale {scale}: {got} vs {q}");
                }
            }
            let mirrored = rotation_of_axes(-m.x_axis * 0.01, -m.y_axis * 0.01, -m.z_axis * 0.01);
            assert!(quat_angle(mirrored, q) < 1e-5);
        }
    }

    /// A bone scaled to zero along one axis keeps its rotation; along two or three, or with
    /// non-finite or parallel columns, the identity: never NaN, never a panic.
    #[test]
    fn rotation_of_axes_of_degenerate_maps() {
        let q = Quat::from_euler(glam::EulerRot::YXZ, 0.3, -1.1, 2.0);
        let m = glam::Mat3::from_quat(q);
        for zero in 0..3 {
            let mut cols = [m.x_axis, m.y_axis, m.z_axis];
            cols[zero] = Vec3::ZERO;
            let got = rotation_of_axes(cols[0], cols[1], cols[2]);
            assert!(quat_angle(got, q) < 1e-5, "column {zero} zeroed");
        }
        let nan = Vec3::splat(f32::NAN);
        for cols in [
            [Vec3::ZERO; 3],
            [m.x_axis, Vec3::ZERO, Vec3::ZERO],
            [nan, nan, m.z_axis],
            [m.x_axis, m.x_axis * 2.0, m.x_axis],
            [Vec3::splat(f32::INFINITY), m.y_axis, Vec3::ZERO],
        ] {
            assert_eq!(rotation_of_axes(cols[0], cols[1], cols[2]), Quat::IDENTITY);
        }
        // +X and +Y parallel, +Z usable: rebuilt from +Z.
        let got = rotation_of_axes(m.x_axis, m.x_axis, m.z_axis);
        assert!(quat_angle(got, q) < 1e-5);
    }

    /// The short way (a rotation scaled by one factor, worked out in `f32`) gives the long way's
    /// rotation within 2 · 10⁻⁵ rad, also with the columns off by the most it allows; mirrored,
    /// per-axis scaled, sheared and out-of-range maps take the long way.
    #[test]
    fn rotation_of_a_scaled_rotation_the_short_way_matches_the_long_way() {
        let mut rng = Lcg(16);
        let mut short = 0;
        for _ in 0..2000 {
            let q = rng.quat();
            let m = glam::Mat3::from_quat(q);
            let s = 10f32.powf(rng.signed() * 3.0);
            let wobble =
                |rng: &mut Lcg| Vec3::new(rng.signed(), rng.signed(), rng.signed()) * (4e-6 * s);
            let cols = [
                m.x_axis * s + wobble(&mut rng),
                m.y_axis * s + wobble(&mut rng),
                m.z_axis * s + wobble(&mut rng),
            ];
            let long = rotation_of_any_axes(cols[0], cols[1], cols[2]);
            let got = rotation_of_axes(cols[0], cols[1], cols[2]);
            assert!(quat_angle(got, long) < 2e-5, "scale {s}: {got} vs {long}");
            assert!(quat_angle(got, q) < 3e-5);
            assert!((got.length() - 1.0).abs() < 1e-6);
            short += usize::from(rotation_of_scaled_rotation(cols[0], cols[1], cols[2]).is_some());
            for other in [
                [-cols[0], -cols[1], -cols[2]],
                [cols[0], cols[1] * 1.01, cols[2]],
                [cols[0], cols[1] + cols[0] * 0.01, cols[2]],
                [m.x_axis * 1e-4, m.y_axis * 1e-4, m.z_axis * 1e-4],
            ] {
                assert!(rotation_of_scaled_rotation(other[0], other[1], other[2]).is_none());
            }
        }
        // Nearly all of them took the short way (the wobble stays within its tolerance).
        assert!(short > 1900, "{short} of 2000 the short way");
    }
}
