//! The shared contact point: where two hands of different arms meet.
//!
//! Each arm is approximated by a *reach sphere* (centre at the upper arm, corrected by the contact
//! offset; radius = upper + lower segment lengths). The preferred contact (midpoint of the two
//! current hand contacts) is constrained into the spheres' intersection by [`constrain_shared_contact`],
//! smoothed, and re-projected. Connection uses hysteresis on the roots' distance, and the IK weight
//! fades linearly in and out. [`palm_to_palm`] gives each hand its offset and rotation for a real
//! grip (palms against each other, the middle of each palm on the contact) in the pair's frame,
//! which [`ContactSolver::step_in_frame`] then uses as the contact's rotation.

use glam::{Quat, Vec3};

use crate::kit::pose::{rotation_of_axes, unit_quat};
use crate::kit::{clamp_finite, move_towards, slerp_shortest, smooth_damp_vec3_ramped, Pose};

/// A sphere an arm can reach: every point within `radius` of `center`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReachSphere {
    /// Centre (m), at the upper arm.
    pub center: Vec3,
    /// Reach (m): upper plus lower segment length.
    pub radius: f32,
}

impl ReachSphere {
    /// Returns whether `p` is within reach (with a 0.1 mm tolerance).
    #[must_use]
    pub fn contains(&self, p: Vec3) -> bool {
        p.distance(self.center) <= self.radius + 1e-4
    }

    /// Returns the point of the sphere's surface closest to `p` (the centre itself when `p` is there).
    #[must_use]
    pub fn project(&self, p: Vec3) -> Vec3 {
        let d = p - self.center;
        let len = d.length();
        if len > 1e-9 {
            self.center + d * (self.radius / len)
        } else {
            self.center
        }
    }
}

/// Returns how much of a full (0 → 1) linear fade of `duration` seconds passes in `dt` seconds:
/// `dt / duration`, or all of it (1) when the duration is 0 or less.
#[must_use]
pub fn fade_step(dt: f32, duration: f32) -> f32 {
    if duration > 0.0 {
        dt / duration
    } else {
        1.0
    }
}

/// Returns the contact point both arms can reach that is closest to `preferred`, and whether both
/// arms really reach it, tried in this order:
///
/// 1. `preferred` inside both spheres → itself, `true`.
/// 2. The spheres do not touch (`D > L_i + L_r`) → the point dividing the centre line in the ratio of
///    the reaches, `O_i + L_i/(L_i+L_r)·(O_r−O_i)`, `false`.
/// 3. `preferred` projected onto each sphere; a projection inside the other sphere is a candidate; the
///    candidate closest to `preferred` wins, `true`.
/// 4. Otherwise the intersection circle: `x = (D²+L_i²−L_r²)/2D` from `O_i`, radius
///    `ρ = √max(0, L_i²−x²)`; `preferred` is projected onto its plane and its radial distance
///    limited to ρ, `true`.
///
/// Non-finite input returns `preferred` unchanged and `false`.
#[must_use]
pub fn constrain_shared_contact(preferred: Vec3, a: ReachSphere, b: ReachSphere) -> (Vec3, bool) {
    let finite = preferred.is_finite()
        && a.center.is_finite()
        && b.center.is_finite()
        && a.radius.is_finite()
        && b.radius.is_finite();
    if !finite {
        return (preferred, false);
    }
    let (la, lb) = (a.radius.max(0.0), b.radius.max(0.0));
    let (a, b) = (
        ReachSphere { radius: la, ..a },
        ReachSphere { radius: lb, ..b },
    );
    // 1. Both reach the preferred point.
    if a.contains(preferred) && b.contains(preferred) {
        return (preferred, true);
    }
    let axis = b.center - a.center;
    let d = axis.length();
    // 2. Out of each other's reach: split the gap by the arms' reaches.
    if d > la + lb {
        let t = if la + lb > 0.0 { la / (la + lb) } else { 0.5 };
        return (a.center + axis * t, false);
    }
    // 3. A projection onto one sphere that the other arm reaches.
    let pa = a.project(preferred);
    let pb = b.project(preferred);
    let candidates = [(pa, b.contains(pa)), (pb, a.contains(pb))];
    let best = candidates
        .iter()
        .filter(|(_, ok)| *ok)
        .map(|(p, _)| *p)
        .min_by(|p, q| {
            p.distance_squared(preferred)
                .total_cmp(&q.distance_squared(preferred))
        });
    if let Some(p) = best {
        return (p, true);
    }
    // 4. The intersection circle (the centres are distinct here: coincident spheres nest, case 3).
    if d < 1e-9 {
        return (a.center, true);
    }
    let n = axis / d;
    let x = (d * d + la * la - lb * lb) / (2.0 * d);
    let rho = (la * la - x * x).max(0.0).sqrt();
    let c = a.center + n * x;
    let on_plane = preferred - n * (preferred - c).dot(n);
    let radial = on_plane - c;
    let r = radial.length();
    let p = if r > rho && r > 1e-9 {
        c + radial * (rho / r)
    } else {
        on_plane
    };
    (p, true)
}

/// Returns the preferred shared contact pose of two hand contacts: the midpoint and the half-way
/// rotation.
#[must_use]
pub fn shared_contact(initiator_hand: Pose, recipient_hand: Pose) -> Pose {
    Pose::new(
        (initiator_hand.position + recipient_hand.position) * 0.5,
        slerp_shortest(initiator_hand.rotation, recipient_hand.rotation, 0.5),
    )
}

/// Connection with hysteresis on the roots' distance: connect below one distance, let go only
/// above a larger one, so a pair at the edge does not flicker.
///
/// First decision: connected iff `d ≤ disconnect`. Connected: disconnects when `d > disconnect`.
/// Disconnected: reconnects when `d ≤ reconnect`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hysteresis {
    state: Option<bool>,
}

impl Hysteresis {
    /// Returns whether the pair is connected at root distance `d` (m).
    pub fn update(&mut self, d: f32, reconnect: f32, disconnect: f32) -> bool {
        let connected = match self.state {
            None => d <= disconnect,
            Some(true) => d <= disconnect,
            Some(false) => d <= reconnect,
        };
        self.state = Some(connected);
        connected
    }

    /// Returns the last decision (`false` before the first).
    #[must_use]
    pub fn connected(&self) -> bool {
        self.state == Some(true)
    }

    /// Forgets the state (the next update is a first decision).
    pub fn reset(&mut self) {
        self.state = None;
    }
}

/// Where along the hand, as a fraction of its length from the wrist, a grip holds it: the middle
/// of the palm.
pub const GRIP_ALONG: f32 = 0.3;

/// A hand as the grip sees it: its palm and finger directions in the hand bone's own space and its
/// outer size in world metres (see `rig::Humanoid::hand_size`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandShape {
    /// Out of the palm, in the hand bone's space (any length; made unit).
    pub palm: Vec3,
    /// From the wrist toward the finger tips, in the hand bone's space (made unit and perpendicular
    /// to the palm).
    pub finger: Vec3,
    /// Wrist to finger tips (m).
    pub length: f32,
    /// From the back of the hand to the palm (m).
    pub thickness: f32,
}

impl HandShape {
    /// The palm and finger directions as a unit, perpendicular pair, or `None` when they are
    /// degenerate (zero, non-finite or parallel).
    fn axes(&self) -> Option<(Vec3, Vec3)> {
        let palm = crate::kit::pose::unit_vec3(self.palm)?;
        let finger = crate::kit::pose::unit_vec3(self.finger - palm * palm.dot(self.finger))?;
        Some((palm, finger))
    }

    /// The grip point in the hand bone's space, in world metres from the wrist: the middle of the
    /// palm's surface, [`GRIP_ALONG`] of the length along the fingers and half the thickness out of
    /// the palm. `None` for degenerate axes or a non-finite size.
    #[must_use]
    pub fn grip_point(&self) -> Option<Vec3> {
        let (palm, finger) = self.axes()?;
        let (l, t) = (self.length.max(0.0), self.thickness.max(0.0));
        let p = finger * (GRIP_ALONG * l) + palm * (0.5 * t);
        p.is_finite().then_some(p)
    }
}

/// The palm-to-palm grip: the hand's offset from the shared contact and its rotation, both in the
/// pair's frame (x the initiator's right, y up, z back), for a [`HandInput`]. The hand hangs with
/// its fingers down (−y) and its palm facing back (`palm_back`, the initiator's hand, in front) or
/// forward (the recipient's, behind), and its grip point ([`HandShape::grip_point`]) on the contact.
/// Two such hands therefore meet palm to palm with their grip points on the contact, one hand's
/// thickness apart at the wrists, and their volumes only touch. `None` for a degenerate hand.
#[must_use]
pub fn palm_to_palm(hand: &HandShape, palm_back: bool) -> Option<(Vec3, Quat)> {
    let (palm, finger) = hand.axes()?;
    let grip = hand.grip_point()?;
    let target_palm = if palm_back { Vec3::Z } else { Vec3::NEG_Z };
    let target_finger = Vec3::NEG_Y;
    let to = rotation_of_axes(target_palm, target_finger, target_palm.cross(target_finger));
    let from = rotation_of_axes(palm, finger, palm.cross(finger));
    let rotation = unit_quat(to * from.conjugate());
    let offset = -crate::kit::pose::rotate(rotation, grip);
    offset.is_finite().then_some((offset, rotation))
}

/// Tuning of the contact solver and IK weights. Units: metres, seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContactTuning {
    /// SmoothDamp time of the contact point (s).
    pub contact_smooth_time: f32,
    /// Root distance under which a disconnected pair reconnects (m).
    pub reconnect_distance: f32,
    /// Root distance over which a connected pair disconnects (m).
    pub disconnect_distance: f32,
    /// Seconds for the weight to fade in from 0 to its maximum.
    pub fade_in_time: f32,
    /// Seconds for the weight to fade out from its maximum to 0.
    pub fade_out_time: f32,
    /// Maximum IK position weight.
    pub max_position_weight: f32,
    /// Maximum IK rotation weight.
    pub max_rotation_weight: f32,
}

impl ContactTuning {
    /// Returns the tuning for a character `k` times the reference human's size: the reconnect and
    /// disconnect distances times `k`, times and weights unchanged.
    #[must_use]
    pub fn proportioned(self, k: f32) -> Self {
        Self {
            reconnect_distance: self.reconnect_distance * k,
            disconnect_distance: self.disconnect_distance * k,
            ..self
        }
    }
}

impl Default for ContactTuning {
    /// The seed's values: 0.08 s, 1.1 / 1.51 m, 0.15 s in, 0.1 s out, weights 1.
    fn default() -> Self {
        Self {
            contact_smooth_time: super::params::PairParam::ContactSmoothTime.spec().default,
            reconnect_distance: super::params::PairParam::ReconnectDistance.spec().default,
            disconnect_distance: super::params::PairParam::DisconnectDistance.spec().default,
            fade_in_time: super::params::PairParam::FadeInTime.spec().default,
            fade_out_time: super::params::PairParam::FadeOutTime.spec().default,
            max_position_weight: super::params::PairParam::MaxPositionWeight.spec().default,
            max_rotation_weight: super::params::PairParam::MaxRotationWeight.spec().default,
        }
    }
}

/// One hand's side of the pair: where its contact point is and how the hand sits on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandInput {
    /// Current world pose of the hand's contact point (after the contact offset).
    pub contact: Pose,
    /// Upper-arm joint position (m).
    pub upper_arm: Vec3,
    /// Upper + lower segment length (m).
    pub reach: f32,
    /// Contact offset in the shared contact frame (m).
    pub offset: Vec3,
    /// Contact rotation in the shared contact frame (normalised by the solver; a zero or
    /// non-finite one counts as the identity).
    pub rotation: Quat,
}

/// What the pair's hands should do this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactOutput {
    /// IK target of the initiator's hand.
    pub initiator_target: Pose,
    /// IK target of the recipient's hand.
    pub recipient_target: Pose,
    /// The (smoothed) shared contact point.
    pub contact: Vec3,
    /// The shared contact's rotation (a hand's target is the contact pose composed with its offset).
    pub rotation: Quat,
    /// IK position weight (0..max).
    pub position_weight: f32,
    /// IK rotation weight (0..max).
    pub rotation_weight: f32,
    /// Whether the pair is connected (hysteresis on the roots' distance).
    pub connected: bool,
    /// Whether both arms reach the contact.
    pub has_shared_reach: bool,
    /// The preferred contact point before the reach constraint (for debug drawing).
    pub preferred: Vec3,
    /// The initiator's and the recipient's reach spheres (for debug drawing).
    pub spheres: [ReachSphere; 2],
}

/// The initiator's per-pair contact solver: preferred pose → constrained → smoothed → re-projected,
/// plus connection and weight fades.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactSolver {
    smoothed: Option<Vec3>,
    /// Last frame's constrained goal, so the smoothing sees the goal move across the frame.
    goal: Option<Vec3>,
    velocity: Vec3,
    hysteresis: Hysteresis,
    weight: f32,
}

impl ContactSolver {
    /// Returns this frame's hand targets and weights for the two hands, `root_distance` apart (m),
    /// after `dt` seconds. `ik_ok` false (invalid configuration, missing bones) fades the weight out.
    /// The shared contact's rotation is the half-way rotation of the two hands.
    pub fn step(
        &mut self,
        initiator: &HandInput,
        recipient: &HandInput,
        root_distance: f32,
        ik_ok: bool,
        tuning: &ContactTuning,
        dt: f32,
    ) -> ContactOutput {
        self.step_in_frame(initiator, recipient, root_distance, ik_ok, tuning, dt, None)
    }

    /// [`Self::step`], with the shared contact's rotation given: `frame` (the pair's frame, for
    /// offsets from [`palm_to_palm`]) instead of the hands' half-way rotation when it is `Some`.
    #[allow(clippy::too_many_arguments)]
    pub fn step_in_frame(
        &mut self,
        initiator: &HandInput,
        recipient: &HandInput,
        root_distance: f32,
        ik_ok: bool,
        tuning: &ContactTuning,
        dt: f32,
        frame: Option<Quat>,
    ) -> ContactOutput {
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        let preferred = shared_contact(initiator.contact, recipient.contact);
        let rot = frame
            .filter(|q| q.is_finite() && q.length_squared() > 1e-12)
            .map_or(preferred.rotation, unit_quat);
        // A hand's target is `P + q0·o`; so P is reachable when it is within `reach` of `upper − q0·o`.
        let sphere = |h: &HandInput| ReachSphere {
            center: h.upper_arm - crate::kit::pose::rotate(rot, h.offset),
            radius: h.reach,
        };
        let (si, sr) = (sphere(initiator), sphere(recipient));
        let (goal, _) = constrain_shared_contact(preferred.position, si, sr);
        let current = self.smoothed.filter(|p| p.is_finite()).unwrap_or(goal);
        let previous_goal = self.goal.replace(goal).unwrap_or(goal);
        let smoothed = smooth_damp_vec3_ramped(
            current,
            previous_goal,
            goal,
            &mut self.velocity,
            tuning.contact_smooth_time,
            f32::INFINITY,
            dt,
        );
        // Smoothing may carry the point out of reach: project it back when the arms share reach.
        let (contact, has_shared_reach) = constrain_shared_contact(smoothed, si, sr);
        let contact = if has_shared_reach { contact } else { smoothed };
        self.smoothed = Some(contact);

        let connected = self.hysteresis.update(
            root_distance,
            tuning.reconnect_distance,
            tuning.disconnect_distance,
        );
        let target_weight = if connected && ik_ok { 1.0 } else { 0.0 };
        let duration = if target_weight > self.weight {
            tuning.fade_in_time
        } else {
            tuning.fade_out_time
        };
        self.weight = move_towards(self.weight, target_weight, fade_step(dt, duration));

        let hand = |h: &HandInput| {
            Pose::new(
                contact + crate::kit::pose::rotate(rot, h.offset),
                unit_quat(rot * unit_quat(h.rotation)),
            )
        };
        // Weights are IK blend factors: the maximums are clamped to [0, 1] (NaN: 1).
        let max_weight = |w: f32| clamp_finite(w, 0.0, 1.0, 1.0);
        ContactOutput {
            initiator_target: hand(initiator),
            recipient_target: hand(recipient),
            contact,
            rotation: rot,
            position_weight: self.weight * max_weight(tuning.max_position_weight),
            rotation_weight: self.weight * max_weight(tuning.max_rotation_weight),
            connected,
            has_shared_reach,
            preferred: preferred.position,
            spheres: [si, sr],
        }
    }

    /// Returns the fade weight in [0, 1] (before the maximum weights are applied).
    #[must_use]
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// Fades the weight toward 0 over `dt` without solving (the partner is missing).
    pub fn release(&mut self, tuning: &ContactTuning, dt: f32) -> f32 {
        let rate = if tuning.fade_out_time > 0.0 {
            dt.max(0.0) / tuning.fade_out_time
        } else {
            1.0
        };
        self.weight = move_towards(self.weight, 0.0, rate);
        self.smoothed = None;
        self.goal = None;
        self.velocity = Vec3::ZERO;
        self.weight
    }

    /// Forgets everything (the interaction stopped).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fade_step_is_the_share_of_its_duration_and_all_of_it_without_one() {
        assert!((fade_step(0.025, 0.1) - 0.25).abs() < 1e-6);
        assert_eq!(fade_step(0.016, 0.0), 1.0);
        assert_eq!(fade_step(0.016, -1.0), 1.0);
    }

    fn s(x: f32, y: f32, z: f32, r: f32) -> ReachSphere {
        ReachSphere {
            center: Vec3::new(x, y, z),
            radius: r,
        }
    }

    fn near(a: Vec3, b: Vec3, tol: f32) -> bool {
        a.distance(b) <= tol
    }

    #[test]
    fn case1_preferred_inside_both() {
        let p = Vec3::new(0.5, 0.0, 0.0);
        assert_eq!(
            constrain_shared_contact(p, s(0.0, 0.0, 0.0, 0.6), s(1.0, 0.0, 0.0, 0.6)),
            (p, true)
        );
    }

    #[test]
    fn case2_apart_splits_by_reach() {
        // D = 2 > 0.6 + 0.4: the point is 0.6/(1.0) of the way.
        let (p, ok) = constrain_shared_contact(
            Vec3::new(1.0, 1.0, 0.0),
            s(0.0, 0.0, 0.0, 0.6),
            s(2.0, 0.0, 0.0, 0.4),
        );
        assert!(!ok);
        assert!(near(p, Vec3::new(1.2, 0.0, 0.0), 1e-6), "{p}");
        // Equal arms meet in the middle.
        let (p, _) =
            constrain_shared_contact(Vec3::ZERO, s(0.0, 0.0, 0.0, 0.5), s(3.0, 0.0, 0.0, 0.5));
        assert!(near(p, Vec3::new(1.5, 0.0, 0.0), 1e-6));
    }

    #[test]
    fn case3_projection_inside_the_other_sphere() {
        // Preferred point beyond sphere A along x, inside B: A's projection (0.6,0,0) is in B.
        let a = s(0.0, 0.0, 0.0, 0.6);
        let b = s(1.0, 0.0, 0.0, 0.6);
        let (p, ok) = constrain_shared_contact(Vec3::new(0.7, 0.0, 0.0), a, b);
        assert!(ok);
        assert!(near(p, Vec3::new(0.6, 0.0, 0.0), 1e-6), "{p}");
        // Unequal arms: a small sphere nested in a big one gives the small sphere's projection.
        let (p, ok) = constrain_shared_contact(
            Vec3::new(0.0, 2.0, 0.0),
            s(0.0, 0.0, 0.0, 3.0),
            s(0.0, 0.0, 0.0, 0.5),
        );
        assert!(ok);
        assert!(
            near(p, Vec3::new(0.0, 0.5, 0.0), 1e-6),
            "coincident centres: {p}"
        );
    }

    #[test]
    fn case4_intersection_circle() {
        // Spheres r = 0.6 at x = 0 and x = 1: circle at x = 0.5, ρ = √(0.36 − 0.25) = 0.3317.
        let a = s(0.0, 0.0, 0.0, 0.6);
        let b = s(1.0, 0.0, 0.0, 0.6);
        let (p, ok) = constrain_shared_contact(Vec3::new(0.5, 2.0, 0.0), a, b);
        assert!(ok);
        let rho = (0.36f32 - 0.25).sqrt();
        assert!(near(p, Vec3::new(0.5, rho, 0.0), 1e-5), "{p}");
        assert!(a.contains(p) && b.contains(p));
        // Unequal arms: x = (1 + 0.64 − 0.25)/2 = 0.695, ρ = √(0.64 − 0.483) = 0.3962.
        let a = s(0.0, 0.0, 0.0, 0.8);
        let b = s(1.0, 0.0, 0.0, 0.5);
        let (p, ok) = constrain_shared_contact(Vec3::new(0.695, 0.0, -3.0), a, b);
        assert!(ok);
        let rho = (0.64f32 - 0.695 * 0.695).sqrt();
        assert!(near(p, Vec3::new(0.695, 0.0, -rho), 1e-5), "{p}");
    }

    #[test]
    fn constrained_point_is_reachable_by_both_whenever_they_touch() {
        // A sweep of preferred points around two touching spheres.
        let a = s(0.0, 0.0, 0.0, 0.54);
        let b = s(0.9, 0.1, 0.2, 0.5);
        for i in 0..400 {
            let t = i as f32 * 0.37;
            let pref = Vec3::new(t.sin() * 2.0, (t * 1.3).cos() * 1.5, (t * 0.7).sin());
            let (p, ok) = constrain_shared_contact(pref, a, b);
            assert!(ok);
            assert!(a.contains(p) && b.contains(p), "{pref} -> {p}");
        }
    }

    #[test]
    fn zero_radii_and_nan() {
        let (p, ok) =
            constrain_shared_contact(Vec3::ONE, s(0.0, 0.0, 0.0, 0.0), s(0.0, 0.0, 0.0, 0.0));
        assert!(ok);
        assert_eq!(p, Vec3::ZERO);
        let (p, ok) =
            constrain_shared_contact(Vec3::ONE, s(0.0, 0.0, 0.0, 0.0), s(1.0, 0.0, 0.0, 0.0));
        assert!(!ok);
        assert!(near(p, Vec3::new(0.5, 0.0, 0.0), 1e-6));
        let (p, ok) =
            constrain_shared_contact(Vec3::NAN, s(0.0, 0.0, 0.0, 1.0), s(1.0, 0.0, 0.0, 1.0));
        assert!(!ok && p.is_nan());
    }

    #[test]
    fn hysteresis_does_not_flicker_between_thresholds() {
        let mut h = Hysteresis::default();
        assert!(
            h.update(1.4, 1.1, 1.51),
            "first decision uses the disconnect distance"
        );
        assert!(h.update(1.5, 1.1, 1.51));
        assert!(!h.update(1.52, 1.1, 1.51));
        for d in [1.5, 1.3, 1.2, 1.11, 1.5] {
            assert!(!h.update(d, 1.1, 1.51), "stays disconnected at {d}");
        }
        assert!(h.update(1.1, 1.1, 1.51));
        let mut h = Hysteresis::default();
        assert!(!h.update(1.6, 1.1, 1.51));
    }

    fn hand(x: f32) -> HandInput {
        HandInput {
            contact: Pose::new(Vec3::new(x, 1.0, -0.3), Quat::IDENTITY),
            upper_arm: Vec3::new(x, 1.45, 0.0),
            reach: 0.54,
            offset: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }

    #[test]
    fn weights_fade_linearly() {
        let t = ContactTuning::default();
        let mut c = ContactSolver::default();
        let (i, r) = (hand(-0.4), hand(0.4));
        let out = c.step(&i, &r, 0.8, true, &t, 0.075);
        assert!((out.position_weight - 0.5).abs() < 1e-6, "half of 0.15 s");
        c.step(&i, &r, 0.8, true, &t, 0.075);
        assert!((c.weight() - 1.0).abs() < 1e-6);
        let out = c.step(&i, &r, 0.8, false, &t, 0.05);
        assert!(
            (out.position_weight - 0.5).abs() < 1e-6,
            "half of 0.1 s out"
        );
        let out = c.step(&i, &r, 2.0, true, &t, 0.05);
        assert!(!out.connected);
        assert_eq!(out.position_weight, 0.0);
    }

    #[test]
    fn hands_meet_at_one_point_and_it_is_frame_rate_independent() {
        // The hands drift apart and back for 1.5 s while the pair walks, then hold still for 0.5 s.
        // Sampled every 0.5 s (a time every rate hits exactly): moving, the three rates agree within
        // 1 mm; settled, within 0.1 mm.
        let t = ContactTuning::default();
        let mut runs: Vec<Vec<Vec3>> = Vec::new();
        for hz in [30.0f32, 60.0, 144.0] {
            let mut c = ContactSolver::default();
            let mut samples = Vec::new();
            for k in 1..=(2.0 * hz) as usize {
                let time = k as f32 / hz;
                let s = (time.min(1.5) * 2.0).sin() * 0.08;
                let (i, r) = (hand(-0.45 - s), hand(0.45 + s));
                let out = c.step(&i, &r, 0.9, true, &t, 1.0 / hz);
                assert!(out.has_shared_reach);
                let gap = out
                    .initiator_target
                    .position
                    .distance(out.recipient_target.position);
                assert!(gap < 1e-6, "both hands target one point: {gap}");
                if k % (hz as usize / 2) == 0 {
                    samples.push(out.contact);
                }
            }
            runs.push(samples);
        }
        for run in &runs[1..] {
            for (k, (a, b)) in runs[0].iter().zip(run).enumerate() {
                let tol = if k == 3 { 1e-4 } else { 1e-3 };
                assert!(a.distance(*b) < tol, "sample {k}: {a} vs {b}");
            }
        }
    }

    /// Penetration depth of two boxes (centre, unit axes, half extents) by the separating axis
    /// test: 0 when some axis separates them.
    fn box_overlap(a: (Vec3, [Vec3; 3], Vec3), b: (Vec3, [Vec3; 3], Vec3)) -> f32 {
        let mut axes = Vec::new();
        axes.extend(a.1);
        axes.extend(b.1);
        for x in a.1 {
            for y in b.1 {
                if let Some(n) = x.cross(y).try_normalize() {
                    axes.push(n);
                }
            }
        }
        let radius = |bx: &(Vec3, [Vec3; 3], Vec3), n: Vec3| {
            (0..3)
                .map(|k| (bx.1[k].dot(n) * bx.2[k]).abs())
                .sum::<f32>()
        };
        axes.iter()
            .map(|&n| radius(&a, n) + radius(&b, n) - (b.0 - a.0).dot(n).abs())
            .fold(f32::INFINITY, f32::min)
            .max(0.0)
    }

    #[test]
    fn palm_to_palm_grip_puts_both_palms_on_the_contact_without_overlap() {
        // Hands whose bones have any rest rotation (so the palm and fingers lie on any local axes),
        // in a pair facing any way: the grip points land on the contact, the palms face each other
        // and the two hand boxes (wrist to finger tips, width, thickness) touch without overlap.
        let mut rng = crate::kit::test_util::Lcg(15);
        for case in 0..50 {
            let (bone_i, bone_r, frame) = (rng.quat(), rng.quat(), rng.quat());
            let scale = [0.01f32, 1.0, 100.0][case % 3];
            let shape = |bone: Quat| HandShape {
                palm: bone.inverse() * Vec3::X,
                finger: bone.inverse() * Vec3::NEG_Y,
                length: 0.16 * scale,
                thickness: 0.028 * scale,
            };
            let (si, sr) = (shape(bone_i), shape(bone_r));
            let (oi, qi) = palm_to_palm(&si, true).unwrap();
            let (or, qr) = palm_to_palm(&sr, false).unwrap();
            let input = |o: Vec3, q: Quat, x: f32| HandInput {
                contact: Pose::new(Vec3::new(x, 1.0, -0.3) * scale, Quat::IDENTITY),
                upper_arm: Vec3::new(x, 1.45, 0.0) * scale,
                reach: 0.6 * scale,
                offset: o,
                rotation: q,
            };
            let mut c = ContactSolver::default();
            let out = c.step_in_frame(
                &input(oi, qi, 0.1),
                &input(or, qr, -0.1),
                0.8 * scale,
                true,
                &ContactTuning::default(),
                1.0 / 60.0,
                Some(frame),
            );
            assert!(out.has_shared_reach);
            let world = |t: Pose, s: &HandShape| {
                let grip = t.position + t.rotation * s.grip_point().unwrap();
                let palm = t.rotation * s.palm.normalize();
                let finger = t.rotation * s.finger.normalize();
                let across = palm.cross(finger);
                let centre = t.position + finger * (s.length * 0.5);
                let half = Vec3::new(s.length * 0.5, 0.04 * scale, s.thickness * 0.5);
                (grip, palm, finger, (centre, [finger, across, palm], half))
            };
            let (gi, pi, fi, bi) = world(out.initiator_target, &si);
            let (gr, pr, fr, br) = world(out.recipient_target, &sr);
            let tol = 1e-5 * scale.max(1.0);
            assert!(
                gi.distance(out.contact) < tol,
                "{case}: {gi} vs {}",
                out.contact
            );
            assert!(
                gr.distance(out.contact) < tol,
                "{case}: {gr} vs {}",
                out.contact
            );
            assert!(pi.dot(pr) < -0.9999, "{case}: palms face each other");
            assert!(fi.dot(fr) > 0.9999, "{case}: fingers side by side");
            // The initiator's palm faces back in the pair's frame: toward the recipient's hand.
            assert!((frame * Vec3::Z).dot(pi) > 0.9999, "{case}");
            let overlap = box_overlap(bi, br);
            assert!(overlap < 1e-5 * scale.max(1.0), "{case}: overlap {overlap}");
            // The wrists are one hand's thickness apart.
            let wrists = out
                .initiator_target
                .position
                .distance(out.recipient_target.position);
            assert!((wrists - 0.028 * scale).abs() < tol, "{case}: {wrists}");
        }
        // Degenerate hands give no grip.
        let flat = HandShape {
            palm: Vec3::X,
            finger: Vec3::X,
            length: 0.1,
            thickness: 0.03,
        };
        assert_eq!(palm_to_palm(&flat, true), None);
        let zero = HandShape {
            palm: Vec3::ZERO,
            ..flat
        };
        assert_eq!(palm_to_palm(&zero, true), None);
    }
}
