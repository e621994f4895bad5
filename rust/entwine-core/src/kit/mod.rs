//! Shared kinematics kit: small, allocation-free, panic-free building blocks.
//!
//! * [`pose`]: rigid transforms ([`Pose`]) and frame changes.
//! * [`smoothing`]: frame-rate independent smoothing, angle wrapping, slerp.
//! * [`seq`]: wrap-around 16-bit sequence numbers and a stale-packet gate.
//! * [`quant`]: quantised network encodings and a byte writer/reader.
//! * [`ik`]: the analytic two-bone limb solver.
//! * [`draw`]: line geometry for debug drawing and gizmos (circles, spheres, boxes, crosses).
//! * [`inbox`]: the gate in front of every network message: size cap, rate limit, sender check,
//!   counters, throttled warnings and the abuse score.
//! * [`limit`]: flood protection: per-key token buckets and throttled warnings in fixed tables.
//! * [`shape`]: the one collision shape type (box, sphere, capsule, cylinder, plane, convex hull,
//!   trimesh) with closest points and signed distances, shared by the rope and the wall touch.
//! * [`param`]: typed reports of the parameters a `sanitized(on_issue)` corrected.
//! * [`warn`]: warn-once bookkeeping (which warnings a node printed, which settings are bad now).
//!
//! Every item is re-exported here, so `entwine_core::kit::Pose` works.

pub mod draw;
pub mod ik;
pub mod inbox;
pub mod limit;
pub mod param;
pub mod pose;
pub mod quant;
pub mod quat;
pub mod seq;
pub mod shape;
pub mod smoothing;
pub mod warn;

#[cfg(test)]
pub(crate) mod test_util;

pub use ik::{carry, chain_length, solve_limb, LimbGoal, LimbPose, PoleMemory};
pub use inbox::{Dropped, Inbox, Verdict};
pub use limit::{KeyedTable, RateLimit, RateLimiter, TokenBucket, WarnThrottle};
pub use param::Correction;
pub use pose::{
    affine_inverse, ensure_unit, rotation_arc, rotation_of_axes, rotation_of_scaled_axis,
    unit_quat, unit_vec3, Pose,
};
pub use quant::{
    decode_half, decode_position, decode_rotation, decode_unit, decode_wrapped, decode_yaw,
    encode_half, encode_position, encode_rotation, encode_unit, encode_wrapped, encode_yaw,
    is_upright, ByteReader, ByteWriter, ShortBuffer, POSITION_BYTES, ROTATION_BYTES, WRAP_STEP,
};
pub use seq::{Seq16, SequenceGate};
pub use shape::{closest_point_on_shapes, Shape, Trimesh};
pub use smoothing::{
    angle_difference, clamp_finite, exp_alpha, move_towards, move_towards_vec3, saturate,
    slerp_shortest, smooth_damp, smooth_damp_vec3, smooth_damp_vec3_ramped, wrap_angle,
};
pub use warn::WarnOnce;

use glam::Vec3;

/// Where a ray (`origin`, `direction`) meets the plane through `point` with normal `normal`, if it
/// meets it in front of the origin (a drag plane facing the camera, or an axis' plane).
pub fn ray_plane(origin: Vec3, direction: Vec3, point: Vec3, normal: Vec3) -> Option<Vec3> {
    let denom = direction.dot(normal);
    if !denom.is_finite() || denom.abs() < 1e-6 {
        return None;
    }
    let t = (point - origin).dot(normal) / denom;
    if !t.is_finite() || t < 0.0 {
        return None;
    }
    let hit = origin + direction * t;
    hit.is_finite().then_some(hit)
}
