//! Bearing: what a soldier's upper body does while the squad drills — "eyes right" during a dress
//! (the head, and a little of the neck and chest, turn toward the guide on the right) and the
//! salute (the right hand at the brow).
//!
//! A bearing is orthogonal to the agent state machine ([`super::AgentState`]): no position or
//! heading rule reads it, exactly as the seed adds "saluting" without touching motion control.
//! The squad decides *who* looks *where* ([`super::Squad::guide`], [`super::Squad::bearing`]);
//! this module holds the look and arm math a skeleton modifier runs per frame:
//!
//! * [`look_angles`]: the yaw and pitch that turn a head's forward toward a target;
//! * [`BearingSettings`]: the node's settings in degrees, checked with typed [`BearingIssue`]s,
//!   giving the [`BearingConfig`] the motion runs on;
//! * [`BearingMotion`]: the rate-limited current look (at most [`BearingConfig::turn_speed`]) and
//!   the salute's blend weight, frame-rate independent;
//! * [`chain_deltas`]: the look spread over chest, neck and head as model-space rotations whose
//!   product is exactly the look (the head ends where the look says);
//! * [`align_pair`]: the rotation that takes a hand from its rest orientation into the salute;
//! * [`right_neighbour_score`]: the rank test the squad uses to find each slot's file-mate on the
//!   right, whose chain ends at the rank's guide.
//!
//! Angles are radians; yaw is positive to the left (counter-clockwise seen from above, like Godot's
//! `rotation.y`), pitch positive upward.

use glam::{Mat3, Quat, Vec2, Vec3};

use crate::kit::pose::{mul_quat, rotate, unit_quat, Pose};
use crate::kit::{move_towards, move_towards_vec3};

mod settings;

pub use settings::{table, BearingIssue, BearingParam, BearingSettings};

/// Where an agent looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Eyes {
    /// Straight ahead (the animation's own head direction).
    #[default]
    Front = 0,
    /// Toward the guide on the right (during a dress).
    Right = 1,
}

/// What an agent's arms do on top of the animation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Gesture {
    /// Nothing: the animation's arms.
    #[default]
    None = 0,
    /// The right hand at the brow.
    Saluting = 1,
}

/// An agent's bearing: its eyes and its gesture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bearing {
    /// Where it looks.
    pub eyes: Eyes,
    /// What its arms do.
    pub gesture: Gesture,
}

impl Bearing {
    /// Returns the bearing as bit flags: 1 = eyes right, 2 = saluting.
    #[must_use]
    pub fn bits(self) -> u8 {
        self.eyes as u8 | (self.gesture as u8) << 1
    }
}

/// Tunables of the look and the salute. Defaults are ours (the seed gives none): a crisp drill
/// head turn of 90° in half a second, a salute raised in 0.4 s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BearingConfig {
    /// Fastest the look turns, rad/s (default 180°/s).
    pub turn_speed: f32,
    /// Largest look yaw either side of the animation's, rad (default 100°).
    pub yaw_limit: f32,
    /// Largest look pitch up or down, rad (default 40°).
    pub pitch_limit: f32,
    /// Share of the look taken by the chest bone, 0..=1 (default 0.15).
    pub chest_share: f32,
    /// Share of the look taken by the neck bone, 0..=1 (default 0.30); the head takes the rest.
    pub neck_share: f32,
    /// Time to raise (or lower) the salute, s (default 0.4).
    pub salute_time: f32,
}

impl Default for BearingConfig {
    fn default() -> Self {
        Self {
            turn_speed: 180f32.to_radians(),
            yaw_limit: 100f32.to_radians(),
            pitch_limit: 40f32.to_radians(),
            chest_share: 0.15,
            neck_share: 0.30,
            salute_time: 0.4,
        }
    }
}

impl BearingConfig {
    /// Returns the config with every value finite and within the range of its
    /// [`BearingParam`] (angles converted to radians; NaN → default); the chest and neck shares are
    /// scaled down together when they add up to more than 1. Silent: a node checks its properties
    /// with [`BearingSettings::sanitized`], which reports each correction.
    #[must_use]
    pub fn sanitized(mut self) -> Self {
        let d = Self::default();
        let fix = |v: f32, p: BearingParam, default: f32, radians: bool| {
            let (lo, hi) = p.range();
            let (lo, hi) = if radians {
                (lo.to_radians(), hi.to_radians())
            } else {
                (lo, hi)
            };
            crate::kit::clamp_finite(v, lo, hi, default)
        };
        use BearingParam as P;
        self.turn_speed = fix(self.turn_speed, P::TurnSpeed, d.turn_speed, true);
        self.yaw_limit = fix(self.yaw_limit, P::YawLimit, d.yaw_limit, true);
        self.pitch_limit = fix(self.pitch_limit, P::PitchLimit, d.pitch_limit, true);
        self.chest_share = fix(self.chest_share, P::ChestShare, d.chest_share, false);
        self.neck_share = fix(self.neck_share, P::NeckShare, d.neck_share, false);
        let sum = self.chest_share + self.neck_share;
        if sum > 1.0 {
            self.chest_share /= sum;
            self.neck_share /= sum;
        }
        self.salute_time = fix(self.salute_time, P::SaluteTime, d.salute_time, false);
        self
    }

    /// Returns `look` clamped to the yaw and pitch limits (non-finite components become 0).
    #[must_use]
    pub fn clamp_look(&self, look: Vec2) -> Vec2 {
        let c = |v: f32, lim: f32| {
            if v.is_finite() {
                v.clamp(-lim, lim)
            } else {
                0.0
            }
        };
        Vec2::new(c(look.x, self.yaw_limit), c(look.y, self.pitch_limit))
    }
}

/// A character's body axes in its skeleton's space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyFrame {
    /// The character's right, unit.
    pub right: Vec3,
    /// Up, unit.
    pub up: Vec3,
    /// Forward, unit, perpendicular to `up`.
    pub forward: Vec3,
}

impl BodyFrame {
    /// Returns the frame for a forward and an up direction (any length; forward is made
    /// perpendicular to up), or `None` when they are degenerate or parallel.
    #[must_use]
    pub fn new(forward: Vec3, up: Vec3) -> Option<Self> {
        let up = up.try_normalize()?;
        let forward = (forward - up * forward.dot(up)).try_normalize()?;
        let right = forward.cross(up).try_normalize()?;
        Some(Self { right, up, forward })
    }

    /// Returns a character-axes vector (x right, y up, z back, metres) in the skeleton's space.
    #[must_use]
    pub fn to_skeleton(&self, v: Vec3) -> Vec3 {
        self.right * v.x + self.up * v.y - self.forward * v.z
    }
}

impl Default for BodyFrame {
    /// Godot's: right +X, up +Y, forward −Z.
    fn default() -> Self {
        Self {
            right: Vec3::X,
            up: Vec3::Y,
            forward: Vec3::NEG_Z,
        }
    }
}

/// Returns the look `(yaw, pitch)` (radians; yaw positive to the left about `up`, pitch positive
/// upward) that turns the direction `forward` onto `to_target`: yaw between their horizontal
/// parts, pitch between their elevations. `None` when a direction is zero, non-finite or
/// vertical, or `up` is degenerate.
#[must_use]
pub fn look_angles(forward: Vec3, to_target: Vec3, up: Vec3) -> Option<Vec2> {
    let up = up.try_normalize()?;
    let f = forward.try_normalize()?;
    let t = to_target.try_normalize()?;
    let fh = f - up * f.dot(up);
    let th = t - up * t.dot(up);
    if fh.length_squared() < 1e-8 || th.length_squared() < 1e-8 {
        return None;
    }
    let yaw = up.dot(fh.cross(th)).atan2(fh.dot(th));
    let elevation = |v: Vec3, h: Vec3| v.dot(up).atan2(h.length());
    let pitch = elevation(t, th) - elevation(f, fh);
    let look = Vec2::new(yaw, pitch);
    look.is_finite().then_some(look)
}

/// Returns the rotation about the unit `axis` by `angle` radians (identity for a degenerate axis
/// or a non-finite angle). Never asserts.
#[must_use]
pub fn axis_rotation(axis: Vec3, angle: f32) -> Quat {
    match axis.try_normalize() {
        Some(a) if angle.is_finite() => {
            let (s, c) = (0.5 * angle).sin_cos();
            Quat::from_xyzw(a.x * s, a.y * s, a.z * s, c)
        }
        _ => Quat::IDENTITY,
    }
}

/// Returns the rotation that pitches `forward` by `look.y` about its horizontal right axis and then
/// yaws it by `look.x` about `up`: the direction it gives `forward` has the heading and elevation
/// [`look_angles`] measured. Identity for degenerate input.
#[must_use]
pub fn look_rotation(forward: Vec3, up: Vec3, look: Vec2) -> Quat {
    let Some(up_n) = up.try_normalize() else {
        return Quat::IDENTITY;
    };
    let yaw = axis_rotation(up_n, look.x);
    let pitch = match forward.cross(up_n).try_normalize() {
        Some(right) => axis_rotation(right, look.y),
        None => Quat::IDENTITY,
    };
    unit_quat(yaw * pitch)
}

/// Returns the model-space rotations `[chest, neck, head]` that spread `look` over a chain: each
/// is applied (pre-multiplied) to its bone's global pose after the ones before it moved it, so the
/// head's total rotation is exactly [`look_rotation`]`(forward, up, look)` while the chest turns
/// by `shares[0]` of the look and the neck by `shares[1]` more. `forward` is the head's
/// (animated) forward in the same space. Shares are clamped to 0..=1 and scaled to add up to at
/// most 1.
#[must_use]
pub fn chain_deltas(forward: Vec3, up: Vec3, look: Vec2, shares: [f32; 2]) -> [Quat; 3] {
    let s = |v: f32| {
        if v.is_finite() {
            v.clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let (mut a, mut b) = (s(shares[0]), s(shares[1]));
    if a + b > 1.0 {
        let sum = a + b;
        a /= sum;
        b /= sum;
    }
    let c0 = look_rotation(forward, up, look * a);
    let c1 = look_rotation(forward, up, look * (a + b));
    let c2 = look_rotation(forward, up, look);
    [
        c0,
        unit_quat(c1 * c0.conjugate()),
        unit_quat(c2 * c1.conjugate()),
    ]
}

/// Returns the new *local* rotations of three bones `[chest, neck, head]`, each an ancestor of the
/// next, that put the [`chain_deltas`] on them: bone k's global rotation becomes
/// `deltas[k] · … · deltas[0] · globals[k]`. `parents[k]` is bone k's parent's global rotation and
/// `globals[k]` its own, both before any change (one read of the animated pose, no write-read
/// round trips). Writing local rotations lets the skeleton recompute its global poses once.
#[must_use]
pub fn chain_local_rotations(
    parents: [Quat; 3],
    globals: [Quat; 3],
    deltas: [Quat; 3],
) -> [Quat; 3] {
    let mut applied = Quat::IDENTITY;
    let mut out = [Quat::IDENTITY; 3];
    for k in 0..3 {
        let cumulative = unit_quat(deltas[k] * applied);
        let parent_now = unit_quat(applied * parents[k]);
        out[k] = unit_quat(parent_now.conjugate() * cumulative * globals[k]);
        applied = cumulative;
    }
    out
}

/// Returns `v` rotated by `q` (unit). Never asserts; NaN propagates.
#[must_use]
pub fn rotate_vec(q: Quat, v: Vec3) -> Vec3 {
    rotate(q, v)
}

/// Returns the rotation that takes the direction `from_dir` onto `to_dir` and, about it, the side
/// direction `from_side` onto `to_side` (both pairs orthonormalised first; e.g. a hand's finger
/// direction and palm normal). Identity when a pair is degenerate.
#[must_use]
pub fn align_pair(from_dir: Vec3, from_side: Vec3, to_dir: Vec3, to_side: Vec3) -> Quat {
    let basis = |d: Vec3, s: Vec3| -> Option<Mat3> {
        let d = d.try_normalize()?;
        let s = (s - d * s.dot(d)).try_normalize()?;
        Some(Mat3::from_cols(d, s, d.cross(s)))
    };
    match (basis(from_dir, from_side), basis(to_dir, to_side)) {
        (Some(from), Some(to)) => {
            let m = to * from.transpose();
            if m.is_finite() {
                unit_quat(quat_from_rotation(m))
            } else {
                Quat::IDENTITY
            }
        }
        _ => Quat::IDENTITY,
    }
}

/// Returns the quaternion of a rotation matrix (Shepperd's method), without glam's asserts.
fn quat_from_rotation(m: Mat3) -> Quat {
    let (m00, m01, m02) = (m.x_axis.x, m.y_axis.x, m.z_axis.x);
    let (m10, m11, m12) = (m.x_axis.y, m.y_axis.y, m.z_axis.y);
    let (m20, m21, m22) = (m.x_axis.z, m.y_axis.z, m.z_axis.z);
    let trace = m00 + m11 + m22;
    if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        Quat::from_xyzw((m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25 * s)
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).max(0.0).sqrt() * 2.0;
        Quat::from_xyzw(0.25 * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s)
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).max(0.0).sqrt() * 2.0;
        Quat::from_xyzw((m01 + m10) / s, 0.25 * s, (m12 + m21) / s, (m02 - m20) / s)
    } else {
        let s = (1.0 + m22 - m00 - m11).max(0.0).sqrt() * 2.0;
        Quat::from_xyzw((m02 + m20) / s, (m12 + m21) / s, 0.25 * s, (m10 - m01) / s)
    }
}

/// One soldier's rate-limited bearing: the current look and the salute's raise, stepped per
/// rendered frame by the skeleton modifier.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BearingMotion {
    look: Vec2,
    salute: f32,
}

impl BearingMotion {
    /// Advances by `dt` seconds: the look moves toward `desired` (clamped to the limits) along a
    /// straight line in (yaw, pitch) at most `turn_speed · dt` radians, so the head's direction
    /// never turns faster than `turn_speed`; the salute's raise moves toward 1 (`saluting`) or 0 by
    /// `dt / salute_time`. A negative or non-finite `dt` or `desired` changes nothing.
    pub fn step(&mut self, desired: Vec2, saluting: bool, cfg: &BearingConfig, dt: f32) {
        if !dt.is_finite() || dt <= 0.0 {
            return;
        }
        if desired.is_finite() {
            let goal = cfg.clamp_look(desired);
            let moved =
                move_towards_vec3(self.look.extend(0.0), goal.extend(0.0), cfg.turn_speed * dt);
            self.look = moved.truncate();
        }
        let target = if saluting { 1.0 } else { 0.0 };
        self.salute = move_towards(self.salute, target, dt / cfg.salute_time.max(1e-3));
    }

    /// Returns the current look `(yaw, pitch)`, radians.
    #[must_use]
    pub fn look(&self) -> Vec2 {
        self.look
    }

    /// Returns how far the salute is raised, 0..=1, linear in time.
    #[must_use]
    pub fn salute_raise(&self) -> f32 {
        self.salute
    }

    /// Returns the salute's blend weight, 0..=1: the raise eased in and out (smoothstep).
    #[must_use]
    pub fn salute_weight(&self) -> f32 {
        let u = self.salute.clamp(0.0, 1.0);
        u * u * (3.0 - 2.0 * u)
    }

    /// Returns true when the look is straight ahead and the arm is down (nothing to apply).
    #[must_use]
    pub fn is_at_rest(&self) -> bool {
        self.look == Vec2::ZERO && self.salute == 0.0
    }

    /// Snaps back to looking ahead with the arm down.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Returns how good a right-hand file-mate the slot at `offset` (other − this, metres, ground
/// plane) is for a slot whose right is the unit `right`: `Some(lateral distance)` when it stands
/// in the same rank (at most 0.35 `spacing` ahead or behind) between 0.3 and 1.75 `spacing` to the
/// right, else `None`. Smaller is better.
#[must_use]
pub fn right_neighbour_score(offset: Vec2, right: Vec2, spacing: f32) -> Option<f32> {
    if !offset.is_finite() || !right.is_finite() || !spacing.is_finite() || spacing <= 0.0 {
        return None;
    }
    let lateral = offset.dot(right);
    let depth = offset.perp_dot(right);
    (lateral > 0.3 * spacing && lateral <= 1.75 * spacing && depth.abs() <= 0.35 * spacing)
        .then_some(lateral)
}

/// Height of the eyes over an agent's origin when its own head is not known, m: where a soldier
/// without a skeleton is looked at.
pub const EYE_HEIGHT: f32 = 1.6;

/// Returns where a guide's eyes are (world) for a looker to dress on: the guide's head when
/// known; else the guide's position (`None`: no guide, and no target) raised by the looker's head
/// height, the looker's head's y over its own position's y when `looker` gives both (head, then
/// position), else [`EYE_HEIGHT`]. The positions are asked for only when needed.
pub fn eye_target(
    guide_head: Option<Vec3>,
    guide_position: impl FnOnce() -> Option<Vec3>,
    looker: impl FnOnce() -> Option<(Vec3, Vec3)>,
) -> Option<Vec3> {
    if let Some(h) = guide_head {
        return Some(h);
    }
    let position = guide_position()?;
    let height = match looker() {
        Some((head, own)) => head.y - own.y,
        None => EYE_HEIGHT,
    };
    Some(position + Vec3::Y * height)
}

/// The salute's hand offset from the head, in the character's axes (x right, y up, z back), for a
/// 1.75 m human: the fingers reach the right brow.
pub const SALUTE_HAND_OFFSET: Vec3 = Vec3::new(0.14, 0.06, -0.08);

/// The salute's pole in the character's axes: out to the right and a little forward.
pub const SALUTE_POLE: Vec3 = Vec3::new(1.0, 0.0, -0.3);

/// Returns the saluting hand's pose in the head's rest frame: its rotation and its position
/// relative to the head. The hand (rest rotation `hand_rest`, its fingers along `fingers` in the
/// skeleton's space, or along the body's down without a forearm) is turned so the fingers point
/// left, up and forward to the brow with the palm down and forward; it sits `offset` (character
/// axes, for a 1.75 m human; [`SALUTE_HAND_OFFSET`] when not finite or beyond ±10⁶) times `scale`
/// (the rig's height over 1.75 m) from the head, whose rest rotation is `head_rest`.
#[must_use]
pub fn salute_hand(
    frame: &BodyFrame,
    head_rest: Quat,
    hand_rest: Quat,
    fingers: Option<Vec3>,
    offset: Vec3,
    scale: f32,
) -> (Quat, Vec3) {
    let fingers = fingers.unwrap_or(-frame.up);
    let salute_fingers = frame.to_skeleton(Vec3::new(-0.95, 0.3, -0.2));
    let salute_palm = frame.to_skeleton(Vec3::new(0.0, -0.7, -0.7));
    let turn = align_pair(fingers, -frame.right, salute_fingers, salute_palm);
    let hand = mul_quat(turn, hand_rest);
    let offset = if offset.is_finite() && offset.abs().max_element() <= 1e6 {
        offset
    } else {
        SALUTE_HAND_OFFSET
    };
    let offset = frame.to_skeleton(offset * scale);
    let to_head = head_rest.conjugate();
    (mul_quat(to_head, hand), rotate(to_head, offset))
}

/// Returns the salute's target in the skeleton's space: the hand pose `hand_in_head` (rotation,
/// offset; from [`salute_hand`]) carried by the head's current pose.
#[must_use]
pub fn salute_target(head: Pose, hand_in_head: (Quat, Vec3)) -> Pose {
    let (rotation, offset) = hand_in_head;
    Pose::new(
        head.position + rotate(head.rotation, offset),
        mul_quat(head.rotation, rotation),
    )
}

/// Returns the direction the saluting elbow bends toward in the skeleton's space: `pole`
/// (character axes; [`SALUTE_POLE`] when not finite) turned with the chest by `chest_turn`.
#[must_use]
pub fn salute_pole(frame: &BodyFrame, chest_turn: Quat, pole: Vec3) -> Vec3 {
    let pole = if pole.is_finite() { pole } else { SALUTE_POLE };
    rotate(chest_turn, frame.to_skeleton(pole))
}

/// What changed in a squad's bearing since it was last looked at, for its signals: the squad's
/// eyes right and salute, and each agent's bearing bits ([`Bearing::bits`]).
#[derive(Clone, Debug, Default)]
pub struct BearingWatch {
    eyes_right: bool,
    saluting: bool,
    bits: Vec<u8>,
}

impl BearingWatch {
    /// Starts watching from the squad's current eyes and salute, with `agents` agents whose
    /// bearings are taken as 0 (so a bearing already held is reported on the first look).
    pub fn restart(&mut self, eyes_right: bool, saluting: bool, agents: usize) {
        self.eyes_right = eyes_right;
        self.saluting = saluting;
        self.bits.clear();
        self.bits.resize(agents, 0);
    }

    /// Returns the squad's eyes right and salute where they changed since the last call.
    pub fn squad(&mut self, eyes_right: bool, saluting: bool) -> (Option<bool>, Option<bool>) {
        let eyes = (eyes_right != self.eyes_right).then_some(eyes_right);
        let salute = (saluting != self.saluting).then_some(saluting);
        self.eyes_right = eyes_right;
        self.saluting = saluting;
        (eyes, salute)
    }

    /// Returns whether agent `i`'s bearing bits changed since it was last looked at (an agent
    /// not seen before starts at 0). `agents` is the squad's size: a changed size keeps the
    /// agents both have.
    pub fn agent(&mut self, i: usize, bits: u8, agents: usize) -> bool {
        if self.bits.len() != agents {
            self.bits.resize(agents, 0);
        }
        match self.bits.get_mut(i) {
            Some(last) if *last != bits => {
                *last = bits;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::f32::consts::{FRAC_PI_2, FRAC_PI_4};

    fn angle_between(a: Vec3, b: Vec3) -> f32 {
        a.normalize().dot(b.normalize()).clamp(-1.0, 1.0).acos()
    }

    #[test]
    fn eye_target_is_the_guides_head_else_its_position_at_the_lookers_head_height() {
        let head = Vec3::new(1.0, 1.7, 2.0);
        let at = Vec3::new(3.0, 0.5, -1.0);
        let unasked = || -> Option<Vec3> { panic!("not asked when the head is known") };
        assert_eq!(eye_target(Some(head), unasked, || None), Some(head));
        // The looker's head is 1.4 m over its own position.
        let looker = || Some((Vec3::new(0.0, 1.9, 0.0), Vec3::new(0.0, 0.5, 0.0)));
        let raised = eye_target(None, || Some(at), looker).expect("a guide");
        assert_eq!(raised, at + Vec3::Y * (1.9 - 0.5));
        // Without the looker's head, the default eye height.
        let plain = eye_target(None, || Some(at), || None).expect("a guide");
        assert_eq!(plain, Vec3::new(3.0, 0.5 + EYE_HEIGHT, -1.0));
        // No guide node: no target, and the looker is not asked.
        let unasked = || -> Option<(Vec3, Vec3)> { panic!("not asked without a guide") };
        assert_eq!(eye_target(None, || None, unasked), None);
    }

    #[test]
    fn look_angles_known_values() {
        let f = Vec3::NEG_Z;
        // Straight to the right: yaw −90° (right is negative), no pitch.
        let l = look_angles(f, Vec3::X, Vec3::Y).unwrap();
        assert!((l.x + FRAC_PI_2).abs() < 1e-6 && l.y.abs() < 1e-6, "{l}");
        // Left and 45° up.
        let l = look_angles(f, Vec3::new(-1.0, 1.0, 0.0), Vec3::Y).unwrap();
        assert!(
            (l.x - FRAC_PI_2).abs() < 1e-6 && (l.y - FRAC_PI_4).abs() < 1e-6,
            "{l}"
        );
        // Behind: ±180°.
        let l = look_angles(f, Vec3::Z, Vec3::Y).unwrap();
        assert!((l.x.abs() - core::f32::consts::PI).abs() < 1e-5);
        // Degenerate input.
        assert!(look_angles(Vec3::ZERO, Vec3::X, Vec3::Y).is_none());
        assert!(look_angles(f, Vec3::Y, Vec3::Y).is_none());
        assert!(look_angles(f, Vec3::NAN, Vec3::Y).is_none());
        assert!(look_angles(f, Vec3::X, Vec3::ZERO).is_none());
    }

    #[test]
    fn look_rotation_turns_forward_onto_the_target() {
        let ups = [Vec3::Y, Vec3::new(0.1, 1.0, -0.05)];
        let forwards = [
            Vec3::NEG_Z,
            Vec3::new(0.3, -0.2, -1.0),
            Vec3::Z,
            Vec3::new(1.0, 0.4, 0.0),
        ];
        let targets = [
            Vec3::X,
            Vec3::new(1.0, 0.3, 0.2),
            Vec3::new(-2.0, -0.5, 1.0),
            Vec3::new(0.0, 0.2, -1.0),
        ];
        for up in ups {
            for f in forwards {
                for t in targets {
                    let look = look_angles(f, t, up).unwrap();
                    let q = look_rotation(f, up, look);
                    let got = rotate_vec(q, f.normalize());
                    assert!(angle_between(got, t) < 1e-3, "f {f} t {t} up {up}: {got}");
                }
            }
        }
    }

    #[test]
    fn chain_deltas_compose_to_the_full_look_and_share_it() {
        let f = Vec3::new(0.05, -0.03, -1.0);
        let look = Vec2::new(-1.5, 0.2);
        let [c, n, h] = chain_deltas(f, Vec3::Y, look, [0.15, 0.30]);
        let total = h * n * c;
        let want = look_rotation(f, Vec3::Y, look);
        assert!(total.dot(want).abs() > 1.0 - 1e-6);
        // The chest alone turns 15 % of the yaw; chest + neck 45 %.
        let chest_fwd = rotate_vec(c, f);
        let chest_look = look_angles(f, chest_fwd, Vec3::Y).unwrap();
        assert!((chest_look.x - 0.15 * look.x).abs() < 1e-4, "{chest_look}");
        let neck_fwd = rotate_vec(n * c, f);
        let neck_look = look_angles(f, neck_fwd, Vec3::Y).unwrap();
        assert!((neck_look.x - 0.45 * look.x).abs() < 1e-4, "{neck_look}");
        // Over-full shares are scaled; NaN shares count as 0 (the head takes everything).
        let [c2, n2, h2] = chain_deltas(f, Vec3::Y, look, [f32::NAN, f32::NAN]);
        assert!(c2.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6);
        assert!(n2.dot(Quat::IDENTITY).abs() > 1.0 - 1e-6);
        assert!(h2.dot(want).abs() > 1.0 - 1e-6);
        let all = chain_deltas(f, Vec3::Y, look, [2.0, 2.0]);
        assert!(all.iter().all(|q| q.is_finite()));
        // Degenerate input never panics and stays finite.
        for q in chain_deltas(Vec3::NAN, Vec3::ZERO, Vec2::NAN, [0.2, 0.3]) {
            assert!(q.is_finite());
        }
    }

    #[test]
    fn local_rotations_reproduce_the_global_deltas_down_a_chain() {
        // chest → upper chest → neck → head, with made-up local rotations.
        let q = |x: f32, y: f32, z: f32| axis_rotation(Vec3::new(x, y, z), 0.1 + x + 0.5 * y);
        let spine = q(0.2, 1.0, 0.1);
        let (l_chest, l_upper, l_neck, l_head) = (
            q(1.0, 0.2, 0.0),
            q(0.1, 0.9, 0.3),
            q(0.5, 0.5, 0.1),
            q(0.0, 1.0, 0.4),
        );
        let chest = spine * l_chest;
        let upper = chest * l_upper;
        let neck = upper * l_neck;
        let head = neck * l_head;
        let f = rotate_vec(head, Vec3::NEG_Z);
        let d = chain_deltas(f, Vec3::Y, Vec2::new(-1.4, 0.3), [0.15, 0.3]);
        let [lc, ln, lh] = chain_local_rotations([spine, upper, neck], [chest, neck, head], d);
        // Rebuild the chain with the new local rotations (the upper chest keeps its own).
        let chest2 = spine * lc;
        let neck2 = chest2 * l_upper * ln;
        let head2 = neck2 * lh;
        let same = |a: Quat, b: Quat| a.dot(b).abs() > 1.0 - 1e-5;
        assert!(same(chest2, d[0] * chest));
        assert!(same(neck2, d[1] * d[0] * neck));
        assert!(same(head2, d[2] * d[1] * d[0] * head));
        // The head's forward lands on the look.
        let want = rotate_vec(look_rotation(f, Vec3::Y, Vec2::new(-1.4, 0.3)), f);
        assert!(angle_between(rotate_vec(head2, Vec3::NEG_Z), want) < 1e-3);
        for r in chain_local_rotations([Quat::NAN; 3], [Quat::IDENTITY; 3], d) {
            assert!(r.is_finite());
        }
    }

    #[test]
    fn motion_never_turns_faster_than_the_limit_at_any_frame_rate() {
        let cfg = BearingConfig::default();
        let goal = Vec2::new(-FRAC_PI_2, 0.1);
        for hz in [30.0f32, 60.0, 144.0, 17.3] {
            let dt = 1.0 / hz;
            let mut m = BearingMotion::default();
            let mut t = 0.0;
            while m.look() != cfg.clamp_look(goal) {
                let before = m.look();
                m.step(goal, false, &cfg, dt);
                let moved = (m.look() - before).length();
                assert!(
                    moved <= cfg.turn_speed * dt * (1.0 + 1e-5),
                    "{hz} Hz: {moved}"
                );
                t += dt;
                assert!(t < 5.0);
            }
            // 90.3° at 180°/s: about half a second, whatever the rate.
            let want = goal.length() / cfg.turn_speed;
            assert!((t - want).abs() <= dt + 1e-4, "{hz} Hz: {t} vs {want}");
        }
    }

    #[test]
    fn motion_clamps_and_ignores_bad_input() {
        let cfg = BearingConfig::default();
        let mut m = BearingMotion::default();
        for _ in 0..200 {
            m.step(Vec2::new(-3.0, 2.0), false, &cfg, 1.0 / 60.0);
        }
        assert!((m.look().x + cfg.yaw_limit).abs() < 1e-6);
        assert!((m.look().y - cfg.pitch_limit).abs() < 1e-6);
        let before = m;
        m.step(Vec2::NAN, false, &cfg, 1.0 / 60.0);
        assert_eq!(m.look(), before.look());
        m.step(Vec2::ZERO, true, &cfg, f32::NAN);
        m.step(Vec2::ZERO, true, &cfg, -1.0);
        assert_eq!(m, before);
        m.reset();
        assert!(m.is_at_rest());
    }

    #[test]
    fn salute_raises_in_its_time_and_eases() {
        let cfg = BearingConfig::default();
        let mut m = BearingMotion::default();
        let dt = 1.0 / 60.0;
        let mut frames = 0;
        while m.salute_raise() < 1.0 {
            m.step(Vec2::ZERO, true, &cfg, dt);
            frames += 1;
            assert!(frames < 1000);
        }
        assert_eq!(frames, (cfg.salute_time / dt).ceil() as i32);
        assert_eq!(m.salute_weight(), 1.0);
        m.step(Vec2::ZERO, false, &cfg, cfg.salute_time / 2.0);
        assert!((m.salute_raise() - 0.5).abs() < 1e-5);
        assert!((m.salute_weight() - 0.5).abs() < 1e-5);
        m.step(Vec2::ZERO, false, &cfg, 10.0);
        assert!(m.is_at_rest());
    }

    #[test]
    fn config_sanitizes() {
        let c = BearingConfig {
            turn_speed: f32::NAN,
            yaw_limit: -1.0,
            pitch_limit: f32::INFINITY,
            chest_share: 0.8,
            neck_share: 0.8,
            salute_time: 0.0,
        }
        .sanitized();
        assert_eq!(c.turn_speed, BearingConfig::default().turn_speed);
        assert_eq!(c.yaw_limit, 0.0);
        assert_eq!(c.pitch_limit, BearingConfig::default().pitch_limit);
        assert!((c.chest_share - 0.5).abs() < 1e-6 && (c.neck_share - 0.5).abs() < 1e-6);
        assert_eq!(c.salute_time, 0.01);
        assert_eq!(
            c.clamp_look(Vec2::new(f32::NAN, 0.5)),
            Vec2::new(0.0, c.pitch_limit.min(0.5))
        );
    }

    #[test]
    fn align_pair_maps_both_directions() {
        let (d0, s0) = (Vec3::NEG_Y, Vec3::NEG_X);
        let (d1, s1) = (Vec3::new(-0.95, 0.3, -0.2), Vec3::new(0.0, -0.7, -0.7));
        let q = align_pair(d0, s0, d1, s1);
        assert!(angle_between(rotate_vec(q, d0), d1) < 1e-4);
        let side = rotate_vec(q, s0);
        assert!(side.dot(d1).abs() < 1e-4);
        let s1o = (s1 - d1.normalize() * s1.dot(d1.normalize())).normalize();
        assert!(angle_between(side, s1o) < 1e-4);
        // Every branch of the matrix → quaternion conversion.
        for (a, b) in [
            (Vec3::X, Vec3::Y),
            (Vec3::NEG_X, Vec3::Y),
            (Vec3::Y, Vec3::NEG_Z),
            (Vec3::Z, Vec3::NEG_X),
            (Vec3::NEG_Z, Vec3::NEG_Y),
        ] {
            let q = align_pair(Vec3::X, Vec3::Y, a, b);
            assert!(angle_between(rotate_vec(q, Vec3::X), a) < 1e-4, "{a}");
            assert!(angle_between(rotate_vec(q, Vec3::Y), b) < 1e-4, "{b}");
        }
        assert_eq!(align_pair(Vec3::ZERO, Vec3::X, d1, s1), Quat::IDENTITY);
        assert_eq!(align_pair(Vec3::X, Vec3::X, d1, s1), Quat::IDENTITY);
        assert_eq!(align_pair(Vec3::NAN, Vec3::X, d1, s1), Quat::IDENTITY);
    }

    #[test]
    fn body_frame() {
        let f = BodyFrame::new(Vec3::new(0.0, 0.2, -2.0), Vec3::Y).unwrap();
        assert!((f.right - Vec3::X).length() < 1e-6);
        assert!((f.forward - Vec3::NEG_Z).length() < 1e-6);
        assert_eq!(f, BodyFrame::default());
        // A model that faces +Z (as imported glTF humanoids do): its right is −X.
        let g = BodyFrame::new(Vec3::Z, Vec3::Y).unwrap();
        assert!((g.right - Vec3::NEG_X).length() < 1e-6);
        assert!(
            (g.to_skeleton(Vec3::new(0.1, 0.2, -0.3)) - Vec3::new(-0.1, 0.2, 0.3)).length() < 1e-6
        );
        assert!(BodyFrame::new(Vec3::Y, Vec3::Y).is_none());
        assert!(BodyFrame::new(Vec3::NAN, Vec3::Y).is_none());
    }

    #[test]
    fn right_neighbour_rank_test() {
        let right = Vec2::X;
        assert_eq!(
            right_neighbour_score(Vec2::new(1.2, 0.0), right, 1.2),
            Some(1.2)
        );
        assert_eq!(
            right_neighbour_score(Vec2::new(1.2, 0.3), right, 1.2),
            Some(1.2)
        );
        // Behind, to the left, too far, too close, or bad input: not a file-mate on the right.
        assert_eq!(right_neighbour_score(Vec2::new(1.2, 1.2), right, 1.2), None);
        assert_eq!(
            right_neighbour_score(Vec2::new(-1.2, 0.0), right, 1.2),
            None
        );
        assert_eq!(right_neighbour_score(Vec2::new(2.5, 0.0), right, 1.2), None);
        assert_eq!(right_neighbour_score(Vec2::new(0.1, 0.0), right, 1.2), None);
        assert_eq!(right_neighbour_score(Vec2::NAN, right, 1.2), None);
        assert_eq!(right_neighbour_score(Vec2::X, right, 0.0), None);
    }

    #[test]
    fn bearing_bits() {
        assert_eq!(Bearing::default().bits(), 0);
        let b = Bearing {
            eyes: Eyes::Right,
            gesture: Gesture::Saluting,
        };
        assert_eq!(b.bits(), 3);
    }

    #[test]
    fn the_watch_reports_each_change_once() {
        let mut w = BearingWatch::default();
        w.restart(false, false, 3);
        assert_eq!(w.squad(false, false), (None, None));
        assert_eq!(w.squad(true, false), (Some(true), None));
        assert_eq!(w.squad(true, false), (None, None), "once");
        assert_eq!(w.squad(false, true), (Some(false), Some(true)));
        assert!(!w.agent(0, 0, 3), "0 is where an agent starts");
        assert!(w.agent(1, 1, 3));
        assert!(!w.agent(1, 1, 3));
        assert!(w.agent(1, 3, 3));
        // The squad grew: the new agent starts at 0, the old ones keep theirs.
        assert!(w.agent(3, 2, 4));
        assert!(!w.agent(1, 3, 4));
        assert!(!w.agent(9, 1, 4), "past the squad");
        w.restart(true, true, 4);
        assert_eq!(w.squad(true, true), (None, None));
        assert!(w.agent(1, 3, 4), "a restart forgets the agents");
    }

    #[test]
    fn the_saluting_hand_points_at_the_brow_with_the_palm_down() {
        let frame = BodyFrame::new(Vec3::NEG_Z, Vec3::Y).unwrap();
        // A right hand at rest along −Y (the arm hanging), head and hand unrotated.
        let (rot, offset) = salute_hand(
            &frame,
            Quat::IDENTITY,
            Quat::IDENTITY,
            None,
            SALUTE_HAND_OFFSET,
            2.0,
        );
        let fingers = rotate(rot, Vec3::NEG_Y);
        let want = Vec3::new(-0.95, 0.3, -0.2).normalize();
        assert!(angle_between(fingers, want) < 1e-3, "fingers {fingers}");
        // The offset is in the character's axes (z back: −0.08 is forward), twice as far.
        assert!(
            (offset - Vec3::new(0.28, 0.12, -0.16)).length() < 1e-5,
            "{offset}"
        );
        // A bad offset is the default; a turned head carries the offset into its own frame.
        let turned = Quat::from_rotation_y(FRAC_PI_2);
        let (_, o) = salute_hand(&frame, turned, Quat::IDENTITY, None, Vec3::NAN, 1.0);
        assert!(
            (rotate(turned, o) - Vec3::new(0.14, 0.06, -0.08)).length() < 1e-5,
            "{o}"
        );
    }

    #[test]
    fn the_salute_target_follows_the_head_and_the_pole_the_chest() {
        let frame = BodyFrame::new(Vec3::NEG_Z, Vec3::Y).unwrap();
        let hand = (Quat::from_rotation_x(0.3), Vec3::new(0.1, 0.0, 0.0));
        let head = Pose::new(Vec3::new(0.0, 1.6, 0.0), Quat::from_rotation_y(FRAC_PI_2));
        let t = salute_target(head, hand);
        // The head turned a quarter left: its +X offset now points to −Z.
        assert!(
            (t.position - Vec3::new(0.0, 1.6, -0.1)).length() < 1e-6,
            "{}",
            t.position
        );
        assert!(t.rotation.dot(head.rotation * hand.0).abs() > 1.0 - 1e-6);
        let turn = Quat::from_rotation_y(FRAC_PI_2);
        let pole = salute_pole(&frame, turn, SALUTE_POLE);
        assert!((pole - rotate(turn, SALUTE_POLE)).length() < 1e-6);
        assert_eq!(salute_pole(&frame, Quat::IDENTITY, Vec3::NAN), SALUTE_POLE);
    }
}
