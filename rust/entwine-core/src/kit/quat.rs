//! Quaternion helpers that poses, smoothing and quantisation all build on.

use glam::{Quat, Vec4};

/// Returns `q` scaled to unit length, or the identity if `q` is zero or non-finite. Any finite
/// length normalises exactly (within glam's unit tolerance): `q` is first divided by its largest
/// component, so neither a huge nor a subnormal length loses the result's precision.
pub fn unit_quat(q: Quat) -> Quat {
    let v = Vec4::from(q);
    let m = v.abs().max_element();
    if !m.is_finite() || m <= 0.0 {
        return Quat::IDENTITY;
    }
    (v / m)
        .try_normalize()
        .map_or(Quat::IDENTITY, Quat::from_vec4)
}
