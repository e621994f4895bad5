//! Analytic two-bone limb IK (shoulder–elbow–hand, hip–knee–foot).
//!
//! [`solve_limb`] keeps the upper joint in place and both segment lengths
//! fixed, puts the end joint on the (weighted) target when it can, and places
//! the middle joint by the law of cosines inside a bend plane (evaluated with
//! Heron's formula, which stays exact at full stretch and full fold). The
//! bones' rotations are carried along with them so that each bone's own hinge
//! axis stays perpendicular to the bend plane (see [`solve_limb`]).

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

use super::param::{Param, Unit};
use super::pose::{mul_quat, rotate, unit_quat, Pose};
use super::smoothing::{saturate, slerp_shortest};

/// How far a limb's end moves from its animated position to the target (an `EntwineLimbIK`'s
/// `position_weight`).
#[rustfmt::skip]
pub const POSITION_WEIGHT: Param = Param::new("position_weight", Unit::Number, (0.0, 1.0), 1.0, "how far the end moves from its animated position to the target");
/// How far a limb's end bone turns from its animated rotation to the target's (an
/// `EntwineLimbIK`'s `rotation_weight`).
#[rustfmt::skip]
pub const ROTATION_WEIGHT: Param = Param::new("rotation_weight", Unit::Number, (0.0, 1.0), 0.0, "how far the end bone turns from its animated rotation to the target's");

/// Segments shorter than this, and targets closer than this to the upper
/// joint, make the limb degenerate (metres).
const MIN_LENGTH: f32 = 1e-6;

/// Model-space (global) poses of the upper (upper arm / thigh), lower
/// (forearm / shin) and end (hand / foot) bones. Each position is the bone's
/// joint origin, in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbPose {
    /// The upper bone; its position is the shoulder or hip.
    pub upper: Pose,
    /// The lower bone; its position is the elbow or knee.
    pub lower: Pose,
    /// The end bone; its position is the wrist or ankle.
    pub end: Pose,
}

impl LimbPose {
    /// Returns `true` if all three poses are finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.upper.is_finite() && self.lower.is_finite() && self.end.is_finite()
    }

    /// Returns each bone's rotation relative to the bone above it, as a skeleton stores a chain
    /// whose bones are each the previous one's child: the upper bone's relative to `parent` (its
    /// parent bone's model-space rotation; the identity for a root), the lower's relative to the
    /// upper's, the end's relative to the lower's. Unit quaternions.
    #[must_use]
    pub fn local_rotations(&self, parent: Quat) -> [Quat; 3] {
        let [u, l, e] = [self.upper.rotation, self.lower.rotation, self.end.rotation];
        [(parent, u), (u, l), (l, e)].map(|(above, q)| unit_quat(mul_quat(above.conjugate(), q)))
    }
}

/// Returns a chain's reach: the distance from its upper joint to its middle one plus the middle
/// one's to its end joint.
#[must_use]
pub fn chain_length(joints: [Vec3; 3]) -> f32 {
    joints[0].distance(joints[1]) + joints[1].distance(joints[2])
}

/// Returns where a bone that moves with the end bone (a palm bone of a hand split at the wrist)
/// goes when the end bone moves from `before` to `after`: `part` (its model-space transform, any
/// scale) turned by the end's turn about the end's joint and carried to its new place, so it
/// keeps its place on the hand. `None` when the result is not finite.
#[must_use]
pub fn carry(before: Pose, after: Pose, part: Affine3A) -> Option<Affine3A> {
    let turn = unit_quat(mul_quat(after.rotation, before.rotation.conjugate()));
    let m = part.matrix3;
    let basis = Mat3A::from_cols(
        rotate(turn, m.x_axis.into()).into(),
        rotate(turn, m.y_axis.into()).into(),
        rotate(turn, m.z_axis.into()).into(),
    );
    let origin = after.position + rotate(turn, Vec3::from(part.translation) - before.position);
    let carried = Affine3A {
        matrix3: basis,
        translation: origin.into(),
    };
    carried.is_finite().then_some(carried)
}

/// What a limb should reach for, in the same model space as [`LimbPose`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimbGoal {
    /// Where the end bone should be (metres) and how it should be oriented.
    pub target: Pose,
    /// A model-space point (metres) the middle joint should bend toward.
    pub pole: Option<Vec3>,
    /// How far to move the end toward `target.position`, in [0, 1].
    pub position_weight: f32,
    /// How far to turn the end toward `target.rotation`, in [0, 1].
    pub rotation_weight: f32,
}

/// Returns `pose` with the limb bent toward `goal`.
///
/// **Positions.** With segment lengths `a` = |lower − upper| and
/// `b` = |end − lower| taken from `pose`, the end aims at
/// `lerp(end, goal.target.position, position_weight)`. The upper joint stays
/// put. A target at distance ≥ `a + b` straightens the limb toward it; one
/// closer than |`a − b`| folds the limb as far as it goes, the end on the line
/// toward the target. The middle joint lies in the plane through the upper
/// joint, the target and a bend direction chosen from, in order:
///
/// 1. the pole: the middle joint ends up on the pole's side of the
///    upper→target line (below full weight, the bend direction is blended from
///    the current one toward the pole's by `position_weight`);
/// 2. the current bend: the middle joint's offset from the upper→end line;
/// 3. straight down (−Y), or forward (−Z) when the target line is vertical,
///    for a straight limb with no usable pole.
///
/// **Rotations.** The upper bone is turned by the rotation that takes its old
/// direction to the new one *and* the old bend-plane normal to the new normal
/// (a swing followed by a roll about the bone). The lower bone gets that same
/// rotation followed by the in-plane swing of its direction. So a hinge axis
/// that was perpendicular to the bend plane still is. If the input limb is
/// straight (no old bend plane), the upper rotation is the pure shortest arc.
/// The end bone is carried rigidly by the lower bone, then slerped toward
/// `goal.target.rotation` by `rotation_weight`.
///
/// **Degenerate input.** Weights are clamped to [0, 1] (NaN counts as 0) and
/// a zero weight leaves its part untouched. A non-finite pole counts as no
/// pole. If `pose` or `goal.target` is not finite, returns `pose` unchanged.
/// If a segment or the upper-joint-to-target distance is shorter than 1 µm,
/// or the arithmetic overflows, the positions and joint rotations are left as
/// they are and only the end rotation is applied. The result is always finite.
#[must_use]
pub fn solve_limb(pose: &LimbPose, goal: &LimbGoal) -> LimbPose {
    if !pose.is_finite() || !goal.target.is_finite() {
        return *pose;
    }
    let position_weight = saturate(goal.position_weight);
    let rotation_weight = saturate(goal.rotation_weight);
    let mut solved = if position_weight > 0.0 {
        place(pose, goal, position_weight).unwrap_or(*pose)
    } else {
        *pose
    };
    if rotation_weight > 0.0 {
        solved.end.rotation =
            slerp_shortest(solved.end.rotation, goal.target.rotation, rotation_weight);
    }
    debug_assert!(solved.is_finite());
    solved
}

/// Returns the limb bent toward the target position blended by `weight`
/// (in (0, 1]), or `None` when it is degenerate or the result is not finite.
fn place(pose: &LimbPose, goal: &LimbGoal, weight: f32) -> Option<LimbPose> {
    let shoulder = pose.upper.position;
    let (elbow, hand) = (pose.lower.position, pose.end.position);
    let upper_len = shoulder.distance(elbow);
    let lower_len = elbow.distance(hand);
    let to_target = hand.lerp(goal.target.position, weight) - shoulder;
    let distance = to_target.length();
    if upper_len < MIN_LENGTH || lower_len < MIN_LENGTH || distance < MIN_LENGTH {
        return None;
    }
    let dir = to_target / distance;

    // The current bend direction (unit, across the shoulder→hand line) and
    // the normal of the current bend plane, if the limb is bent.
    let old_bend = (hand - shoulder).try_normalize().and_then(|axis| {
        perpendicular(elbow - shoulder, axis).map(|bend| (bend, bend.cross(axis)))
    });
    // A pole nearly in line with the target direction says little about the bend plane, and its
    // perpendicular swings wildly as the target passes it: trust it in proportion to how far off
    // the line it is (full trust from 30° on), keeping the current bend otherwise. (For a bend that
    // must also hold across frames whatever the animation does, see [`PoleMemory`].)
    let pole = goal.pole.and_then(|pole| {
        let offset = pole - shoulder;
        let across = perpendicular(offset, dir)?;
        let sin = (offset - dir * offset.dot(dir)).length() / offset.length();
        let trust = weight * smoothstep(0.0, 0.5, sin);
        Some(old_bend.map_or(across, |(bend, _)| bend.lerp(across, trust)))
    });
    let hints = [
        pole,
        old_bend.map(|(bend, _)| bend),
        Some(Vec3::NEG_Y),
        Some(Vec3::NEG_Z),
    ];
    let bend = hints
        .into_iter()
        .flatten()
        .find_map(|hint| perpendicular(hint, dir))?;
    let normal = bend.cross(dir);

    // Place the elbow `along` the target line and `across` it toward `bend`,
    // from the triangle's sides via Heron's formula. With the reach clamped,
    // a vanishing factor is exactly zero, so a straight or fully folded limb
    // comes out exactly collinear.
    let (sum, diff) = (upper_len + lower_len, upper_len - lower_len);
    let reach = distance.max(diff.abs()).min(sum);
    let area_x4 = ((sum + reach) * (sum - reach) * (reach - diff) * (reach + diff))
        .max(0.0)
        .sqrt();
    let along = (diff * sum + reach * reach) / (2.0 * reach);
    let across = area_x4 / (2.0 * reach);
    let new_elbow = shoulder + dir * along + bend * across;
    let new_hand = shoulder + dir * reach;

    // Turn the upper bone so its direction and the bend-plane normal land on
    // the new ones ("look + roll"). A straight limb has no bend plane: it
    // gets the shortest swing, about the axis across both directions (or the
    // new normal if they are parallel).
    let old_upper_dir = (elbow - shoulder) / upper_len;
    let new_upper_dir = (new_elbow - shoulder).normalize_or(dir);
    let (old_normal, new_normal) = match old_bend {
        Some((_, old_normal)) => (old_normal, normal),
        None => {
            let axis = old_upper_dir.cross(new_upper_dir);
            let axis = if axis.length_squared() > 1e-12 {
                axis
            } else {
                normal
            };
            (axis, axis)
        }
    };
    let upper_delta = align([old_upper_dir, old_normal], [new_upper_dir, new_normal])?;
    // The lower bone follows, then swings about the normal within the plane.
    let carried_lower_dir = rotate(upper_delta, (hand - elbow) / lower_len);
    let new_lower_dir = (new_hand - new_elbow).normalize_or(dir);
    let lower_delta = turn_about(normal, carried_lower_dir, new_lower_dir) * upper_delta;

    let solved = LimbPose {
        upper: Pose::new(shoulder, unit_quat(upper_delta * pose.upper.rotation)),
        lower: Pose::new(new_elbow, unit_quat(lower_delta * pose.lower.rotation)),
        end: Pose::new(new_hand, unit_quat(lower_delta * pose.end.rotation)),
    };
    solved.is_finite().then_some(solved)
}

/// Remembers the side a limb bent to last frame, so the pole cannot flip it.
///
/// A fixed pole has directions where it is nearly in line with the limb; there its perpendicular —
/// the bend side it asks for — swings across in a single frame and the elbow flips. `PoleMemory`
/// turns the pole into an effective pole point for each frame: last frame's bend, turned toward the
/// pole's side at up to [`PoleMemory::TURN_RATE`], scaled by how well the pole is defined (fully
/// from 30° off the limb's line). A well-defined pole wins within a fraction of a second, at any
/// frame rate; an ill-defined one cannot make the elbow jump.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoleMemory {
    last_bend: Option<Vec3>,
}

impl PoleMemory {
    /// Fastest turn of the remembered bend toward the pole (rad/s): half a turn in about half a second.
    pub const TURN_RATE: f32 = 6.0;

    /// Returns the pole point to give [`solve_limb`] this frame (`dt` seconds after the last) for a
    /// limb from `shoulder` reaching toward `target`, given the configured `pole` point (or `None`).
    #[must_use]
    pub fn effective_pole(
        &self,
        shoulder: Vec3,
        target: Vec3,
        pole: Option<Vec3>,
        dt: f32,
    ) -> Option<Vec3> {
        let dir = (target - shoulder).try_normalize()?;
        let wanted = pole.and_then(|p| {
            let offset = p - shoulder;
            let across = perpendicular(offset, dir)?;
            let sin = (offset - dir * offset.dot(dir)).length() / offset.length();
            Some((across, smoothstep(0.0, 0.5, sin)))
        });
        let last = self.last_bend.and_then(|b| perpendicular(b, dir));
        let bend = match (last, wanted) {
            (None, None) => return pole,
            (None, Some((across, _))) => across,
            (Some(last), None) => last,
            (Some(last), Some((across, trust))) => {
                // Turn from last frame's side toward the pole's, at most TURN_RATE·trust·dt.
                let angle = last.dot(across).clamp(-1.0, 1.0).acos();
                let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
                let step = (Self::TURN_RATE * trust * dt).min(angle);
                if angle < 1e-6 {
                    last
                } else {
                    let axis = last.cross(across).try_normalize().unwrap_or(dir);
                    // Built by hand and normalised: glam's `from_axis_angle` asserts a unit axis,
                    // which `try_normalize` of a tiny (sub-normal) cross product need not give.
                    let (sin, cos) = (0.5 * step).sin_cos();
                    let q = unit_quat(Quat::from_xyzw(
                        axis.x * sin,
                        axis.y * sin,
                        axis.z * sin,
                        cos,
                    ));
                    rotate(q, last)
                }
            }
        };
        Some(shoulder + bend)
    }

    /// Records the bend side of a solved limb for the next frame. A straight limb has no side: the
    /// last one is kept.
    pub fn remember(&mut self, solved: &LimbPose) {
        let s = solved.upper.position;
        let bend = (solved.end.position - s)
            .try_normalize()
            .and_then(|axis| perpendicular(solved.lower.position - s, axis));
        if bend.is_some() {
            self.last_bend = bend;
        }
    }

    /// Forgets the remembered side (e.g. when the limb is released).
    pub fn reset(&mut self) {
        self.last_bend = None;
    }
}

/// Returns the smooth Hermite step of `x` between `edge0` and `edge1`, in [0, 1].
fn smoothstep(edge0: f32, edge1: f32, x: f32) -> f32 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Returns the unit component of `v` perpendicular to the unit vector `axis`,
/// or `None` if that component is shorter than 10⁻⁵ of `v` (or not finite).
fn perpendicular(v: Vec3, axis: Vec3) -> Option<Vec3> {
    let across = v - axis * v.dot(axis);
    let len = across.length();
    (len > 1e-5 * v.length()).then(|| across / len)
}

/// Returns the rotation taking unit `from[0]` to unit `to[0]` and the part of
/// `from[1]` across `from[0]` to the part of `to[1]` across `to[0]`, or `None`
/// if a second vector is parallel to its first.
fn align(from: [Vec3; 2], to: [Vec3; 2]) -> Option<Quat> {
    let from_frame = basis(from[0], perpendicular(from[1], from[0])?);
    let to_frame = basis(to[0], perpendicular(to[1], to[0])?);
    Some(to_frame * from_frame.conjugate())
}

/// Returns the rotation taking +X to `x` and +Y to `y` (orthogonal unit
/// vectors), by Shepperd's method: it divides by the largest of the four
/// candidate terms, so it is accurate for every rotation, half turns included.
fn basis(x: Vec3, y: Vec3) -> Quat {
    let z = x.cross(y);
    let trace = x.x + y.y + z.z;
    let q = if trace > 0.0 {
        Vec4::new(y.z - z.y, z.x - x.z, x.y - y.x, 1.0 + trace)
    } else if x.x >= y.y && x.x >= z.z {
        Vec4::new(1.0 + x.x - y.y - z.z, y.x + x.y, z.x + x.z, y.z - z.y)
    } else if y.y >= z.z {
        Vec4::new(y.x + x.y, 1.0 - x.x + y.y - z.z, z.y + y.z, z.x - x.z)
    } else {
        Vec4::new(z.x + x.z, z.y + y.z, 1.0 - x.x - y.y + z.z, x.y - y.x)
    };
    unit_quat(Quat::from_vec4(q))
}

/// Returns the rotation about unit `axis` that turns `from` toward `to`
/// (both taken across `axis`); exact for any angle up to a half turn.
fn turn_about(axis: Vec3, from: Vec3, to: Vec3) -> Quat {
    let angle = axis.dot(from.cross(to)).atan2(from.dot(to));
    let (sin, cos) = (0.5 * angle).sin_cos();
    Quat::from_vec4((axis * sin).extend(cos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::{assert_vec_near, quat_angle, vec_angle, Lcg};
    use core::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_4, SQRT_2, TAU};

    /// A straight arm along −Z from the origin: upper 0.3 m, lower 0.25 m.
    fn straight_arm() -> LimbPose {
        LimbPose {
            upper: Pose::IDENTITY,
            lower: Pose::new(Vec3::new(0.0, 0.0, -0.3), Quat::IDENTITY),
            end: Pose::new(Vec3::new(0.0, 0.0, -0.55), Quat::IDENTITY),
        }
    }

    /// A bent arm with arbitrary bone rotations, elbow out to +X.
    fn bent_arm() -> LimbPose {
        LimbPose {
            upper: Pose::new(Vec3::new(0.1, 1.4, 0.0), Quat::from_rotation_z(0.4)),
            lower: Pose::new(Vec3::new(0.35, 1.3, -0.15), Quat::from_rotation_x(-0.7)),
            end: Pose::new(Vec3::new(0.2, 1.2, -0.35), Quat::from_rotation_y(1.1)),
        }
    }

    fn goal(target: Vec3, pole: Option<Vec3>) -> LimbGoal {
        LimbGoal {
            target: Pose::new(target, Quat::IDENTITY),
            pole,
            position_weight: 1.0,
            rotation_weight: 0.0,
        }
    }

    fn lengths(p: &LimbPose) -> (f32, f32) {
        (
            p.upper.position.distance(p.lower.position),
            p.lower.position.distance(p.end.position),
        )
    }

    /// Returns the unit offset of the elbow from the line from the shoulder to `to`.
    fn elbow_side(p: &LimbPose, to: Vec3) -> Vec3 {
        let axis = (to - p.upper.position).normalize();
        perpendicular(p.lower.position - p.upper.position, axis).unwrap_or(Vec3::ZERO)
    }

    /// Returns the unit normal of the limb's bend plane, (elbow − shoulder) × (hand − shoulder).
    fn plane_normal(p: &LimbPose) -> Vec3 {
        let s = p.upper.position;
        (p.lower.position - s).cross(p.end.position - s).normalize()
    }

    /// Asserts that both bones still point along themselves in their own
    /// frames, and (when both poses are bent) that their bend-plane normal is
    /// fixed in each bone's frame.
    #[track_caller]
    fn assert_rotations_follow(before: &LimbPose, after: &LimbPose, tol: f32) {
        let bones = |p: &LimbPose| {
            [
                (p.upper, p.lower.position - p.upper.position),
                (p.lower, p.end.position - p.lower.position),
            ]
        };
        let bent = |p: &LimbPose| {
            let (s, e, h) = (p.upper.position, p.lower.position, p.end.position);
            (e - s).normalize().cross((h - s).normalize()).length() > 1e-2
        };
        let check_normal = bent(before) && bent(after);
        for ((old, old_dir), (new, new_dir)) in bones(before).into_iter().zip(bones(after)) {
            let local_dir = rotate(old.rotation.conjugate(), old_dir.normalize());
            assert_vec_near(rotate(new.rotation, local_dir), new_dir.normalize(), tol);
            if check_normal {
                let local_normal = rotate(old.rotation.conjugate(), plane_normal(before));
                assert_vec_near(rotate(new.rotation, local_normal), plane_normal(after), tol);
            }
        }
    }

    #[test]
    fn right_angle_elbow_known_values() {
        // a = b = 1 and |target| = √2: a 45° shoulder angle and a 90° elbow.
        let pose = LimbPose {
            upper: Pose::IDENTITY,
            lower: Pose::new(Vec3::NEG_Z, Quat::IDENTITY),
            end: Pose::new(Vec3::new(0.0, 0.0, -2.0), Quat::IDENTITY),
        };
        let out = solve_limb(&pose, &goal(Vec3::new(0.0, 0.0, -SQRT_2), Some(Vec3::Y)));
        assert_eq!(out.upper.position, Vec3::ZERO);
        assert_vec_near(
            out.lower.position,
            Vec3::new(0.0, FRAC_1_SQRT_2, -FRAC_1_SQRT_2),
            1e-6,
        );
        assert_vec_near(out.end.position, Vec3::new(0.0, 0.0, -SQRT_2), 1e-6);
        // Pitch up 45° about +X for the upper arm, down 45° for the forearm and hand.
        assert!(quat_angle(out.upper.rotation, Quat::from_rotation_x(FRAC_PI_4)) < 1e-6);
        assert!(quat_angle(out.lower.rotation, Quat::from_rotation_x(-FRAC_PI_4)) < 1e-6);
        assert!(quat_angle(out.end.rotation, Quat::from_rotation_x(-FRAC_PI_4)) < 1e-6);
    }

    #[test]
    fn reachable_targets_are_reached() {
        let mut rng = Lcg(42);
        for i in 0..2000 {
            let shoulder = rng.vec3();
            let elbow = shoulder + rng.vec3().normalize() * (0.2 + 0.3 * rng.signed().abs());
            let hand = elbow + rng.vec3().normalize() * (0.2 + 0.3 * rng.signed().abs());
            let pose = LimbPose {
                upper: Pose::new(shoulder, rng.quat()),
                lower: Pose::new(elbow, rng.quat()),
                end: Pose::new(hand, rng.quat()),
            };
            let (a, b) = lengths(&pose);
            let distance =
                (a - b).abs() * 1.01 + (a + b - (a - b).abs()) * 0.98 * (rng.signed() * 0.5 + 0.5);
            let target = shoulder + rng.vec3().normalize() * distance.max(0.01);
            let pole = (i % 2 == 0).then(|| shoulder + rng.vec3() * 2.0);
            let out = solve_limb(&pose, &goal(target, pole));
            assert_eq!(out.upper.position, shoulder);
            assert_vec_near(out.end.position, target, 1e-4);
            let (a2, b2) = lengths(&out);
            assert!(
                (a2 - a).abs() < 1e-5 && (b2 - b).abs() < 1e-5,
                "{a} {b} -> {a2} {b2}"
            );
            assert_rotations_follow(&pose, &out, 1e-5);
        }
    }

    #[test]
    fn unreachable_target_straightens_toward_it() {
        let pose = bent_arm();
        let (a, b) = lengths(&pose);
        let target = Vec3::new(2.0, 3.0, -1.0);
        let out = solve_limb(&pose, &goal(target, None));
        let to_target = target - pose.upper.position;
        for joint in [out.lower.position, out.end.position] {
            let angle = vec_angle(joint - out.upper.position, to_target);
            assert!(angle.to_degrees() < 0.01, "{}°", angle.to_degrees());
        }
        assert_vec_near(
            out.end.position,
            pose.upper.position + to_target.normalize() * (a + b),
            1e-5,
        );
        assert_rotations_follow(&pose, &out, 1e-5);
    }

    #[test]
    fn elbow_bends_toward_the_pole() {
        let pose = bent_arm();
        let shoulder = pose.upper.position;
        let target = shoulder + Vec3::new(0.1, -0.2, -0.35);
        for pole in [
            Vec3::Y,
            Vec3::NEG_Y,
            Vec3::X,
            Vec3::NEG_X,
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(-0.5, -1.0, 2.0),
            Vec3::new(0.0, 0.0, -100.0) + Vec3::Y,
        ] {
            let pole_point = shoulder + pole;
            let out = solve_limb(&pose, &goal(target, Some(pole_point)));
            assert_vec_near(out.end.position, target, 1e-4);
            let axis = (target - shoulder).normalize();
            let pole_side = perpendicular(pole_point - shoulder, axis).unwrap();
            let elbow_side = elbow_side(&out, target);
            assert!(
                elbow_side.dot(pole_side) > 0.999,
                "pole {pole}: {elbow_side}"
            );
            assert_rotations_follow(&pose, &out, 1e-5);
        }
    }

    #[test]
    fn pole_on_the_target_line_falls_back_to_the_current_bend() {
        let pose = bent_arm();
        let target = pose.upper.position + Vec3::new(0.0, -0.1, -0.4);
        let on_line = pose.upper.position + (target - pose.upper.position) * 3.0;
        let with_pole = solve_limb(&pose, &goal(target, Some(on_line)));
        let without = solve_limb(&pose, &goal(target, None));
        assert_vec_near(with_pole.lower.position, without.lower.position, 1e-6);
        let nan_pole = solve_limb(&pose, &goal(target, Some(Vec3::NAN)));
        assert_eq!(nan_pole, without);
        // Without a pole the elbow keeps bending out to +X, as in `bent_arm`.
        assert!(elbow_side(&without, target).x > 0.5);
    }

    #[test]
    fn weights() {
        let pose = bent_arm();
        let target = Pose::new(
            pose.upper.position + Vec3::new(-0.1, -0.3, -0.2),
            Quat::from_rotation_z(2.0),
        );
        let mut g = LimbGoal {
            target,
            pole: Some(Vec3::new(0.0, 3.0, 0.0)),
            position_weight: 0.0,
            rotation_weight: 0.0,
        };
        assert_eq!(solve_limb(&pose, &g), pose);
        g.position_weight = f32::NAN;
        g.rotation_weight = -2.0;
        assert_eq!(solve_limb(&pose, &g), pose);

        g.position_weight = 0.5;
        let half = solve_limb(&pose, &g);
        assert_vec_near(
            half.end.position,
            pose.end.position.lerp(target.position, 0.5),
            1e-4,
        );

        g.position_weight = 1.0;
        g.rotation_weight = 1.0;
        let full = solve_limb(&pose, &g);
        assert_vec_near(full.end.position, target.position, 1e-4);
        assert!(quat_angle(full.end.rotation, target.rotation) < 1e-6);

        g.rotation_weight = 0.5;
        let carried = solve_limb(
            &pose,
            &LimbGoal {
                rotation_weight: 0.0,
                ..g
            },
        )
        .end
        .rotation;
        let blended = solve_limb(&pose, &g).end.rotation;
        let total = quat_angle(carried, target.rotation);
        assert!((quat_angle(carried, blended) - total / 2.0).abs() < 1e-5);
        assert!((quat_angle(blended, target.rotation) - total / 2.0).abs() < 1e-5);

        // Rotation only: the joints stay put.
        g.position_weight = 0.0;
        g.rotation_weight = 1.0;
        let turned = solve_limb(&pose, &g);
        assert_eq!(
            (turned.upper, turned.lower, turned.end.position),
            (pose.upper, pose.lower, pose.end.position)
        );
        assert!(quat_angle(turned.end.rotation, target.rotation) < 1e-6);
    }

    #[test]
    fn straight_start_without_pole_uses_the_fallback_bend() {
        // Pointing forward: the elbow drops (−Y).
        let pose = straight_arm();
        let out = solve_limb(&pose, &goal(Vec3::new(0.0, 0.0, -0.4), None));
        assert_vec_near(out.end.position, Vec3::new(0.0, 0.0, -0.4), 1e-5);
        assert!(out.lower.position.y < -0.1 && out.lower.position.x.abs() < 1e-6);
        assert_rotations_follow(&pose, &out, 1e-5);

        // Hanging down: the elbow goes forward (−Z).
        let down = LimbPose {
            upper: Pose::IDENTITY,
            lower: Pose::new(Vec3::new(0.0, -0.3, 0.0), Quat::IDENTITY),
            end: Pose::new(Vec3::new(0.0, -0.55, 0.0), Quat::IDENTITY),
        };
        let out = solve_limb(&down, &goal(Vec3::new(0.0, -0.4, 0.0), None));
        assert_vec_near(out.end.position, Vec3::new(0.0, -0.4, 0.0), 1e-5);
        assert!(out.lower.position.z < -0.1 && out.lower.position.x.abs() < 1e-6);
        assert_rotations_follow(&down, &out, 1e-5);
    }

    #[test]
    fn too_close_folds_as_far_as_possible() {
        // The hand gets no closer to the shoulder than |a − b| ≈ 0.039 m.
        let (a, b) = lengths(&bent_arm());
        let s = bent_arm().upper.position;
        let out = solve_limb(&bent_arm(), &goal(s + Vec3::new(0.0, 0.0, -0.01), None));
        assert_vec_near(out.end.position, s + Vec3::NEG_Z * (a - b).abs(), 1e-5);
        let (a2, b2) = lengths(&out);
        assert!((a - a2).abs() < 1e-5 && (b - b2).abs() < 1e-5);

        // A short upper and a long lower segment fold the elbow behind the shoulder.
        let pose = LimbPose {
            upper: Pose::IDENTITY,
            lower: Pose::new(Vec3::new(0.0, 0.2, 0.0), Quat::IDENTITY),
            end: Pose::new(Vec3::new(0.3, 0.2, 0.0), Quat::IDENTITY),
        };
        let out = solve_limb(&pose, &goal(Vec3::new(0.0, 0.0, -0.02), None));
        assert_vec_near(out.end.position, Vec3::new(0.0, 0.0, -0.1), 1e-5);
        assert_vec_near(out.lower.position, Vec3::new(0.0, 0.0, 0.2), 1e-5);
        assert!(out.is_finite());
    }

    #[test]
    fn degenerate_limbs_are_left_alone() {
        let mut collapsed = straight_arm();
        collapsed.lower.position = collapsed.upper.position;
        let g = goal(Vec3::new(0.3, 0.0, -0.2), None);
        assert_eq!(solve_limb(&collapsed, &g), collapsed);
        let mut no_hand = straight_arm();
        no_hand.end.position = no_hand.lower.position;
        assert_eq!(solve_limb(&no_hand, &g), no_hand);

        // Target at the shoulder: joints stay, the end rotation still applies.
        let pose = straight_arm();
        let at_shoulder = LimbGoal {
            target: Pose::new(Vec3::ZERO, Quat::from_rotation_y(1.0)),
            rotation_weight: 1.0,
            ..goal(Vec3::ZERO, None)
        };
        let out = solve_limb(&pose, &at_shoulder);
        assert_eq!(
            (out.upper, out.lower, out.end.position),
            (pose.upper, pose.lower, pose.end.position)
        );
        assert!(quat_angle(out.end.rotation, at_shoulder.target.rotation) < 1e-6);
    }

    #[test]
    fn non_finite_input_returns_the_pose() {
        let pose = bent_arm();
        let nan_goals = [
            goal(Vec3::NAN, Some(Vec3::Y)),
            goal(Vec3::new(f32::INFINITY, 0.0, 0.0), None),
            LimbGoal {
                target: Pose::new(Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
                rotation_weight: 1.0,
                ..goal(Vec3::ZERO, None)
            },
        ];
        for g in nan_goals {
            assert_eq!(solve_limb(&pose, &g), pose);
        }
        let mut bad = pose;
        bad.lower.rotation = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
        let out = solve_limb(&bad, &goal(Vec3::Y, None));
        assert_eq!(out.lower.position, bad.lower.position);

        // Huge but finite coordinates overflow internally and are left alone.
        let far = Vec3::splat(f32::MAX);
        let huge = LimbPose {
            upper: Pose::new(-far, Quat::IDENTITY),
            lower: Pose::new(far, Quat::IDENTITY),
            end: Pose::new(Vec3::ZERO, Quat::IDENTITY),
        };
        assert_eq!(solve_limb(&huge, &goal(Vec3::ONE, None)), huge);
        // Non-unit bone rotations come out normalised.
        let mut scaled = pose;
        scaled.upper.rotation *= 4.0;
        let out = solve_limb(
            &scaled,
            &goal(pose.upper.position + Vec3::new(0.0, -0.2, -0.3), None),
        );
        assert!((out.upper.rotation.length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn tracking_a_circle_for_1000_frames_is_stable() {
        let start = bent_arm();
        let shoulder = start.upper.position;
        let (a, b) = lengths(&start);
        let pole = shoulder + Vec3::new(1.0, -0.5, 0.5);
        let centre = shoulder + Vec3::new(0.1, -0.1, -0.35);
        let mut pose = start;
        for frame in 0..1000 {
            let angle = frame as f32 / 200.0 * TAU;
            let target = centre + Vec3::new(angle.cos(), angle.sin(), 0.0) * 0.12;
            let next = solve_limb(&pose, &goal(target, Some(pole)));
            assert_vec_near(next.end.position, target, 1e-4);
            let (a2, b2) = lengths(&next);
            assert!(
                (a2 - a).abs() < 1e-5 && (b2 - b).abs() < 1e-5,
                "frame {frame}"
            );
            let axis = (target - shoulder).normalize();
            let pole_side = perpendicular(pole - shoulder, axis).unwrap();
            assert!(
                elbow_side(&next, target).dot(pole_side) > 0.999,
                "frame {frame} flipped"
            );
            assert_rotations_follow(&pose, &next, 1e-5);
            pose = next;
        }
        // Drift of the bones' own axes after 1000 frames stays tiny.
        assert_rotations_follow(&start, &pose, 1e-4);
    }

    #[test]
    fn a_target_sweeping_through_the_pole_direction_does_not_flip_the_elbow() {
        // The animated arm stays as it is each frame (as under an animation); the target sweeps
        // from one side of the pole's direction to the other, passing right through it.
        let pose = bent_arm();
        let shoulder = pose.upper.position;
        let pole = shoulder + Vec3::new(0.3, -0.4, 0.2);
        let mut last: Option<Vec3> = None;
        for k in 0..=200 {
            let t = k as f32 / 200.0;
            let dir = Vec3::new(0.3, -0.4, 0.2).normalize() + Vec3::new(0.0, 0.0, 0.6 * (t - 0.5));
            let target = shoulder + dir.normalize() * 0.45;
            let solved = solve_limb(&pose, &goal(target, Some(pole)));
            let side = elbow_side(&solved, target);
            if let Some(prev) = last {
                assert!(
                    side.dot(prev) > 0.5,
                    "elbow jumped at step {k}: {prev} -> {side}"
                );
            }
            last = Some(side);
        }
    }

    #[test]
    fn pole_memory_keeps_the_side_when_the_pole_turns_in_line() {
        // The pole moves to the far side of the current bend: plain solving flips the elbow at once;
        // with memory, at 60 Hz, it turns over by at most TURN_RATE/60 per frame and ends on the
        // pole's side within a second.
        let pose = bent_arm();
        let shoulder = pose.upper.position;
        let target = shoulder + Vec3::new(0.1, -0.3, -0.3);
        let mut memory = PoleMemory::default();
        let settled = solve_limb(&pose, &goal(target, None));
        memory.remember(&settled);
        let before = elbow_side(&settled, target);
        let pole = Some(shoulder + (target - shoulder).normalize() * 0.3 - before * 0.3);
        let plain = solve_limb(&pose, &goal(target, pole));
        assert!(
            elbow_side(&plain, target).dot(before) < 0.0,
            "plain solving flips"
        );
        let mut last = before;
        for _ in 0..60 {
            let effective = memory.effective_pole(shoulder, target, pole, 1.0 / 60.0);
            let solved = solve_limb(&pose, &goal(target, effective));
            let side = elbow_side(&solved, target);
            assert!(
                vec_angle(side, last) <= PoleMemory::TURN_RATE / 60.0 + 1e-3,
                "{last} -> {side}"
            );
            memory.remember(&solved);
            last = side;
        }
        assert!(last.dot(before) < -0.99, "ends on the pole's side: {last}");
    }

    #[test]
    fn local_rotations_rebuild_the_model_space_chain() {
        let parent = Quat::from_rotation_x(0.4);
        let solved = LimbPose {
            upper: Pose::new(Vec3::ZERO, Quat::from_rotation_y(0.3)),
            lower: Pose::new(Vec3::X, Quat::from_rotation_z(-1.1)),
            end: Pose::new(Vec3::X * 2.0, Quat::from_rotation_x(2.0)),
        };
        let [u, l, e] = solved.local_rotations(parent);
        let close = |a: Quat, b: Quat| a.dot(b).abs() > 1.0 - 1e-6;
        assert!(close(parent * u, solved.upper.rotation));
        assert!(close(parent * u * l, solved.lower.rotation));
        assert!(close(parent * u * l * e, solved.end.rotation));
        for q in [u, l, e] {
            assert!((q.length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn chain_length_adds_both_segments() {
        let joints = [
            Vec3::ZERO,
            Vec3::new(0.3, 0.0, 0.0),
            Vec3::new(0.3, 0.0, -0.25),
        ];
        assert!((chain_length(joints) - 0.55).abs() < 1e-6);
    }

    #[test]
    fn a_carried_part_keeps_its_place_on_the_turned_hand() {
        let before = Pose::new(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY);
        let after = Pose::new(
            Vec3::new(0.0, 2.0, 0.0),
            Quat::from_rotation_z(core::f32::consts::FRAC_PI_2),
        );
        // A palm bone 10 cm along +X from the wrist, scaled by 0.5.
        let part = Affine3A::from_scale_rotation_translation(
            Vec3::splat(0.5),
            Quat::IDENTITY,
            Vec3::new(1.1, 0.0, 0.0),
        );
        let carried = carry(before, after, part).unwrap();
        // The wrist turned a quarter about Z: the palm bone is now 10 cm along +Y from it.
        assert!((Vec3::from(carried.translation) - Vec3::new(0.0, 2.1, 0.0)).length() < 1e-6);
        // Its axes turned with it, its scale kept.
        assert!((Vec3::from(carried.matrix3.x_axis) - Vec3::new(0.0, 0.5, 0.0)).length() < 1e-6);
        assert!((Vec3::from(carried.matrix3.z_axis) - Vec3::new(0.0, 0.0, 0.5)).length() < 1e-6);
        let nan = Pose::new(Vec3::NAN, Quat::IDENTITY);
        assert_eq!(carry(before, nan, part), None);
    }
}
