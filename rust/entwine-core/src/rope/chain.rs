//! Skinning a chain of bones to a rope: arc-length resampling and minimal-rotation bone frames.
//!
//! A [`BoneChain`] is built once from the rest poses of a chain of bones (root → tip, each bone the
//! parent of the next). Each frame [`BoneChain::solve`] takes the rope's points (any count ≥ 2, in the
//! skeleton's space) and returns one pose per bone:
//!
//! * **Positions** are the rope's polyline sampled at one arc length per bone: spread evenly over the
//!   whole rope ([`ChainFit::Stretch`]), or at the bones' rest distances from the root
//!   ([`ChainFit::RestLength`], continuing straight past the rope's end). Sampling by arc length of
//!   the actual polyline is continuous in the points: a point inserted or removed where two points
//!   coincide (how the rope grows and shrinks at its anchor) changes nothing, so the chain never pops
//!   when the rope's length changes. Optionally the root is pinned to where the animation put it and
//!   the offset fades out along the chain (the rope's anchor trails an animated bone by a physics
//!   frame).
//! * **Orientations**: each bone's *axis* (the direction from it to the next bone in the rest pose, in
//!   the bone's own frame; the tip uses the direction from its parent) is turned onto the chord to the
//!   next bone. The twist about that axis is carried down the chain as a discrete minimal-rotation
//!   (parallel-transport) frame: the root starts from a reference orientation (its animated pose), and
//!   each next bone starts from its parent's solved frame times the rest pose's relative rotation and
//!   is then turned by the *smallest* rotation that aligns its axis. No up vector is involved, so the
//!   frames never flip when the rope points straight up or down or loops. The smallest rotation is
//!   ill-defined only when a bone must turn (nearly) half a turn from where its parent would carry
//!   it (a rope folded back on itself, or swung up over the root): there, and only there (beyond
//!   [`FOLD_START_DEGREES`]), the bone keeps the twist it had in the previous frame, blended in
//!   smoothly, so it cannot spin; away from a fold the frames depend on the rope alone, so no twist
//!   accumulates from frame to frame.
//!
//! Everything is allocation-free per frame; [`BoneChain::solve`] only grows its arc-length buffer the
//! first time it sees more points than before (a node reserves the rope's capacity up front with
//! [`BoneChain::reserve_points`]). No input panics: unusable input returns a [`ChainError`].

use glam::{Quat, Vec3};

use crate::kit::pose::{rotate, unit_quat};
use crate::kit::{saturate, slerp_shortest, Pose};

/// Shortest chord treated as a direction, in metres; shorter chords borrow their neighbour's.
const MIN_CHORD: f32 = 1e-6;
/// Angle (degrees) between where a bone's parent carries its axis and the rope beyond which the
/// bone starts keeping the previous frame's twist.
pub const FOLD_START_DEGREES: f32 = 120.0;
/// Angle (degrees) beyond which the previous frame's twist is kept entirely.
pub const FOLD_FULL_DEGREES: f32 = 150.0;

/// How the bones are distributed along the rope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChainFit {
    /// The root sits on the rope's start, the tip on its end, the bones in between at equal arc
    /// length: the chain stretches and shrinks with the rope (a skinned rope mesh, a leash).
    #[default]
    Stretch,
    /// Each bone sits at its rest distance (along the chain) from the root: the chain keeps its
    /// length and covers the start of a longer rope; past a shorter rope's end the bones continue
    /// straight along its last segment (a braid or tail of fixed length).
    RestLength,
}

/// Why [`BoneChain::solve`] could not pose the chain (the caller leaves the bones alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainError {
    /// The chain has fewer than two bones.
    TooFewBones,
    /// The rope has fewer than two points.
    TooFewPoints,
    /// A rope point is NaN, infinite, or farther than [`super::MAX_COORDINATE`] from the origin.
    BadPoint,
    /// The root's reference pose or the pin is NaN or infinite.
    BadReference,
}

impl ChainError {
    /// Returns a short description for a warning.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::TooFewBones => "the chain needs at least two bones (root and tip)",
            Self::TooFewPoints => {
                "the rope has fewer than 2 points (it was cut at the anchor or is empty)"
            }
            Self::BadPoint => "a rope point is not finite (NaN, infinite or out of range)",
            Self::BadReference => "the root bone's pose or the skeleton's transform is not finite",
        }
    }
}

/// A chain of bones driven by a rope. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct BoneChain {
    /// Per bone: unit axis in the bone's own frame (toward the next bone in the rest pose).
    axis: Vec<Vec3>,
    /// Per bone: rotation relative to the previous bone in the rest pose (index 0: identity).
    rest_relative: Vec<Quat>,
    /// Per bone: arc length from the root along the rest chain, metres.
    rest_arc: Vec<f32>,
    /// Per rope point: arc length from the first point (scratch).
    cumulative: Vec<f32>,
    /// Per bone: target arc length on the rope (scratch).
    arc: Vec<f32>,
    /// Per bone: solved pose (output).
    out: Vec<Pose>,
    /// Per bone: last frame's rotation relative to where its parent carried it (fold fallback).
    history: Vec<Quat>,
    /// Whether `history` holds the previous frame.
    has_history: bool,
}

impl BoneChain {
    /// Returns a chain for bones whose rest poses (root first, each the parent of the next, all in
    /// one space, e.g. the skeleton's) are `rest`. Rotations are normalised; positions that are not
    /// finite or beyond [`super::MAX_COORDINATE`] count as the origin; a zero-length rest bone
    /// borrows its neighbour's direction (or +Y, Godot's bone convention). Allocates.
    #[must_use]
    pub fn new(rest: &[Pose]) -> Self {
        let n = rest.len();
        let rotations: Vec<Quat> = rest.iter().map(|p| unit_quat(p.rotation)).collect();
        let positions: Vec<Vec3> = rest
            .iter()
            .map(|p| {
                // Beyond `MAX_COORDINATE` (e.g. 1e30) lengths would overflow: treated as unset.
                if super::usable(p.position) {
                    p.position
                } else {
                    Vec3::ZERO
                }
            })
            .collect();
        // World directions of the chords (the tip repeats the last one); degenerate ones borrow.
        let mut dirs = vec![Vec3::ZERO; n];
        for i in 0..n.saturating_sub(1) {
            dirs[i] = (positions[i + 1] - positions[i])
                .try_normalize()
                .unwrap_or(Vec3::ZERO);
        }
        if n >= 2 {
            dirs[n - 1] = dirs[n - 2];
        }
        for i in 1..n {
            if dirs[i] == Vec3::ZERO {
                dirs[i] = dirs[i - 1];
            }
        }
        for i in (0..n.saturating_sub(1)).rev() {
            if dirs[i] == Vec3::ZERO {
                dirs[i] = dirs[i + 1];
            }
        }
        let mut axis = Vec::with_capacity(n);
        let mut rest_relative = Vec::with_capacity(n);
        let mut rest_arc = Vec::with_capacity(n);
        let mut arc = 0.0;
        for i in 0..n {
            let local = if dirs[i] == Vec3::ZERO {
                Vec3::Y
            } else {
                rotate(rotations[i].conjugate(), dirs[i])
                    .try_normalize()
                    .unwrap_or(Vec3::Y)
            };
            axis.push(local);
            rest_relative.push(if i == 0 {
                Quat::IDENTITY
            } else {
                unit_quat(rotations[i - 1].conjugate() * rotations[i])
            });
            if i > 0 {
                arc += positions[i].distance(positions[i - 1]);
            }
            rest_arc.push(arc);
        }
        Self {
            axis,
            rest_relative,
            rest_arc,
            cumulative: Vec::new(),
            arc: vec![0.0; n],
            out: vec![Pose::IDENTITY; n],
            history: vec![Quat::IDENTITY; n],
            has_history: false,
        }
    }

    /// Returns the number of bones.
    #[must_use]
    pub fn bone_count(&self) -> usize {
        self.axis.len()
    }

    /// Returns the chain's rest length (root to tip along the bones), in the rest poses' units.
    #[must_use]
    pub fn rest_length(&self) -> f32 {
        self.rest_arc.last().copied().unwrap_or(0.0)
    }

    /// Returns bone `i`'s axis in its own frame (unit; the direction to the next bone at rest).
    #[must_use]
    pub fn axis(&self, i: usize) -> Vec3 {
        self.axis.get(i).copied().unwrap_or(Vec3::Y)
    }

    /// Makes room for ropes of up to `points` points, so that [`BoneChain::solve`] never allocates.
    pub fn reserve_points(&mut self, points: usize) {
        if self.cumulative.len() < points {
            self.cumulative.resize(points, 0.0);
        }
    }

    /// Forgets the previous frame (call after a jump, e.g. a teleport or a skipped stretch of frames).
    pub fn reset_history(&mut self) {
        self.has_history = false;
    }

    /// Returns the last solved poses (one per bone, root first).
    #[must_use]
    pub fn poses(&self) -> &[Pose] {
        &self.out
    }

    /// Returns one pose per bone (root first) that puts the chain on the rope through `points`, or
    /// why it cannot. `root_reference` is the root bone's current pose (its rotation sets the twist
    /// of the whole chain); with `pin_root` the root stays at `root_reference.position` and the
    /// offset from the rope's start fades out linearly along the chain (none at the tip). All in one
    /// space (the skeleton's). Allocation-free once [`BoneChain::reserve_points`] covered the rope.
    pub fn solve(
        &mut self,
        points: &[Vec3],
        root_reference: Pose,
        pin_root: bool,
        fit: ChainFit,
    ) -> Result<&[Pose], ChainError> {
        let result = self.solve_inner(points, root_reference, pin_root, fit);
        self.has_history = result.is_ok();
        result.map(|()| self.out.as_slice())
    }

    fn solve_inner(
        &mut self,
        points: &[Vec3],
        root_reference: Pose,
        pin_root: bool,
        fit: ChainFit,
    ) -> Result<(), ChainError> {
        self.check_input(points, root_reference)?;
        self.place_bones(points, fit);
        if pin_root {
            self.pin_to_root(root_reference.position);
        }
        self.orient_bones(root_reference);
        Ok(())
    }

    /// Rejects a chain too short to bend, too few or unusable rope points and a bad root pose.
    fn check_input(&self, points: &[Vec3], root_reference: Pose) -> Result<(), ChainError> {
        let n = self.axis.len();
        if n < 2 {
            return Err(ChainError::TooFewBones);
        }
        if points.len() < 2 {
            return Err(ChainError::TooFewPoints);
        }
        if !points.iter().all(|p| super::usable(*p)) {
            return Err(ChainError::BadPoint);
        }
        if !root_reference.is_finite() || !super::usable(root_reference.position) {
            return Err(ChainError::BadReference);
        }
        Ok(())
    }

    /// Places each bone at its arc length along the rope's points.
    fn place_bones(&mut self, points: &[Vec3], fit: ChainFit) {
        let n = self.axis.len();
        self.reserve_points(points.len());
        let cumulative = &mut self.cumulative[..points.len()];
        cumulative[0] = 0.0;
        for i in 1..points.len() {
            cumulative[i] = cumulative[i - 1] + points[i].distance(points[i - 1]);
        }
        let total = cumulative[points.len() - 1];

        // Arc length of each bone on the rope.
        match fit {
            ChainFit::Stretch => {
                let last = (n - 1) as f32;
                for (i, s) in self.arc.iter_mut().enumerate() {
                    *s = total * (i as f32 / last);
                }
            }
            ChainFit::RestLength => self.arc.copy_from_slice(&self.rest_arc),
        }

        // Positions: walk the polyline once (the arc lengths increase along the chain).
        let end_dir = last_direction(points);
        let mut seg = 0;
        for (out, &s) in self.out.iter_mut().zip(&self.arc) {
            out.position = if s >= total {
                points[points.len() - 1] + end_dir * (s - total)
            } else {
                while seg + 2 < points.len() && cumulative[seg + 1] < s {
                    seg += 1;
                }
                let len = cumulative[seg + 1] - cumulative[seg];
                let t = if len > 0.0 {
                    ((s - cumulative[seg]) / len).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                points[seg].lerp(points[seg + 1], t)
            };
        }
    }

    /// Shifts the bones toward the root's reference: all the way at the root, none at the tip.
    fn pin_to_root(&mut self, root_position: Vec3) {
        let n = self.axis.len();
        let offset = root_position - self.out[0].position;
        let span = self.arc[n - 1];
        for (i, (out, &s)) in self.out.iter_mut().zip(&self.arc).enumerate() {
            let along = if span > MIN_CHORD {
                s / span
            } else {
                i as f32 / (n - 1) as f32
            };
            out.position += offset * (1.0 - along.clamp(0.0, 1.0));
        }
    }

    /// Turns each bone along its chord with minimal-rotation frames down the chain.
    fn orient_bones(&mut self, root_reference: Pose) {
        let n = self.axis.len();
        let fold_start = FOLD_START_DEGREES.to_radians().cos();
        let fold_full = FOLD_FULL_DEGREES.to_radians().cos();
        let reference = unit_quat(root_reference.rotation);
        let mut previous_dir = rotate(reference, self.axis[0]);
        let mut frame = reference;
        for i in 0..n {
            let start = if i == 0 {
                reference
            } else {
                unit_quat(frame * self.rest_relative[i])
            };
            let chord = if i + 1 < n {
                self.out[i + 1].position - self.out[i].position
            } else {
                Vec3::ZERO
            };
            let dir = if chord.length() > MIN_CHORD {
                chord / chord.length()
            } else if i == 0 {
                // A degenerate first chord: the first real one down the chain, else keep the root's.
                self.first_direction().unwrap_or(previous_dir)
            } else {
                previous_dir
            };
            let carried_axis = rotate(start, self.axis[i]);
            let mut solved = unit_quat(arc_rotation(carried_axis, dir) * start);
            let cos = carried_axis.dot(dir);
            if self.has_history && cos < fold_start {
                // Near half a turn the smallest rotation's axis is ill-defined: keep last frame's twist.
                let kept = unit_quat(start * self.history[i]);
                let kept = unit_quat(arc_rotation(rotate(kept, self.axis[i]), dir) * kept);
                let w = saturate((fold_start - cos) / (fold_start - fold_full));
                solved = slerp_shortest(solved, kept, w * w * (3.0 - 2.0 * w));
            }
            self.history[i] = unit_quat(start.conjugate() * solved);
            self.out[i].rotation = solved;
            frame = solved;
            previous_dir = dir;
        }
    }

    /// Returns the first non-degenerate chord direction of the current output.
    fn first_direction(&self) -> Option<Vec3> {
        self.out
            .windows(2)
            .map(|w| w[1].position - w[0].position)
            .find(|d| d.length() > MIN_CHORD)
            .map(|d| d / d.length())
    }
}

/// Returns the direction of the last segment of `points` longer than [`MIN_CHORD`] (−Y when none).
fn last_direction(points: &[Vec3]) -> Vec3 {
    points
        .windows(2)
        .rev()
        .map(|w| w[1] - w[0])
        .find(|d| d.length() > MIN_CHORD)
        .map_or(Vec3::NEG_Y, |d| d / d.length())
}

/// Returns the smallest rotation that turns unit vector `from` onto unit vector `to` (half a turn
/// about an axis perpendicular to `from` when they are opposite). Never panics; non-finite input
/// gives the identity.
#[must_use]
pub fn arc_rotation(from: Vec3, to: Vec3) -> Quat {
    let d = from.dot(to);
    if !d.is_finite() {
        return Quat::IDENTITY;
    }
    if d < -0.999_999 {
        let axis = from
            .cross(Vec3::X)
            .try_normalize()
            .or_else(|| from.cross(Vec3::Y).try_normalize())
            .unwrap_or(Vec3::Z);
        return Quat::from_xyzw(axis.x, axis.y, axis.z, 0.0);
    }
    let c = from.cross(to);
    unit_quat(Quat::from_xyzw(c.x, c.y, c.z, 1.0 + d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::{assert_vec_near, quat_angle, vec_angle, Lcg};
    use core::f32::consts::{FRAC_PI_2, PI};

    /// A straight rest chain of `n` bones `spacing` apart along −Y from `origin`, each bone's +Y
    /// pointing down the chain (Godot's bone convention), with a random twist per bone.
    fn hanging_rest(n: usize, spacing: f32, origin: Vec3, rng: &mut Lcg) -> Vec<Pose> {
        let down = arc_rotation(Vec3::Y, Vec3::NEG_Y);
        (0..n)
            .map(|i| {
                let twist = Quat::from_rotation_y(rng.signed() * PI);
                Pose::new(
                    origin + Vec3::NEG_Y * spacing * i as f32,
                    unit_quat(down * twist),
                )
            })
            .collect()
    }

    /// Returns `n` points evenly along the polyline `corners`.
    fn polyline(corners: &[Vec3], per_segment: usize) -> Vec<Vec3> {
        let mut out = vec![corners[0]];
        for w in corners.windows(2) {
            for k in 1..=per_segment {
                out.push(w[0].lerp(w[1], k as f32 / per_segment as f32));
            }
        }
        out
    }

    /// Returns the bones' poses of `chain` stretched along `points` from `root` (the root not
    /// pinned), as a list of its own; panics when the chain refuses them.
    fn stretched(chain: &mut BoneChain, points: &[Vec3], root: Pose) -> Vec<Pose> {
        chain
            .solve(points, root, false, ChainFit::Stretch)
            .expect("valid")
            .to_vec()
    }

    /// Returns the largest rotation (rad) of any bone from the `previous` frame's poses to `now`'s
    /// (0 for a first frame), and keeps `now` as the previous frame.
    fn largest_turn(previous: &mut Option<Vec<Pose>>, now: Vec<Pose>) -> f64 {
        let mut worst = 0.0f64;
        if let Some(prev) = previous {
            for (a, b) in prev.iter().zip(&now) {
                worst = worst.max(quat_angle(a.rotation, b.rotation));
            }
        }
        *previous = Some(now);
        worst
    }

    fn rest_chain(n: usize) -> (BoneChain, Vec<Pose>) {
        let rest = hanging_rest(n, 0.1, Vec3::new(0.0, 2.0, 0.0), &mut Lcg(5));
        (BoneChain::new(&rest), rest)
    }

    #[test]
    fn arc_rotation_known_values() {
        let q = arc_rotation(Vec3::X, Vec3::Y);
        assert!(quat_angle(q, Quat::from_rotation_z(FRAC_PI_2)) < 1e-6);
        assert_vec_near(
            rotate(arc_rotation(Vec3::Y, Vec3::Y), Vec3::Z),
            Vec3::Z,
            1e-6,
        );
        // Opposite vectors: half a turn about a perpendicular axis.
        for from in [
            Vec3::X,
            Vec3::Y,
            Vec3::Z,
            Vec3::new(1.0, 2.0, -3.0).normalize(),
        ] {
            let q = arc_rotation(from, -from);
            assert!((q.length() - 1.0).abs() < 1e-5);
            assert_vec_near(rotate(q, from), -from, 1e-5);
        }
        let mut rng = Lcg(11);
        for _ in 0..200 {
            let (a, b) = (rng.vec3().normalize(), rng.vec3().normalize());
            let q = arc_rotation(a, b);
            assert_vec_near(rotate(q, a), b, 1e-5);
            // Minimal: the rotation axis is perpendicular to both.
            assert!(quat_angle(q, Quat::IDENTITY) as f32 <= vec_angle(a, b) + 1e-4);
        }
        assert_eq!(arc_rotation(Vec3::NAN, Vec3::X), Quat::IDENTITY);
    }

    #[test]
    fn new_reads_axes_and_rest_lengths() {
        let (chain, rest) = rest_chain(5);
        assert_eq!(chain.bone_count(), 5);
        assert!((chain.rest_length() - 0.4).abs() < 1e-5);
        for (i, pose) in rest.iter().enumerate() {
            // Every bone's axis, turned by its rest rotation, points down the chain.
            assert_vec_near(rotate(pose.rotation, chain.axis(i)), Vec3::NEG_Y, 1e-5);
        }
        // Coincident rest bones borrow a neighbour's direction; a single point falls back to +Y.
        let same = [Pose::IDENTITY, Pose::IDENTITY];
        assert_eq!(BoneChain::new(&same).axis(0), Vec3::Y);
        let mut bent = rest.clone();
        bent[2].position = bent[1].position;
        let chain = BoneChain::new(&bent);
        assert_vec_near(rotate(bent[1].rotation, chain.axis(1)), Vec3::NEG_Y, 1e-5);
    }

    #[test]
    fn a_rope_along_the_rest_chain_gives_the_rest_pose() {
        for n in [2, 3, 8, 12] {
            let (mut chain, rest) = rest_chain(n);
            let tip = rest[n - 1].position;
            let points = polyline(&[rest[0].position, tip], 3 * n);
            let out = chain
                .solve(&points, rest[0], false, ChainFit::Stretch)
                .expect("valid");
            for (o, r) in out.iter().zip(&rest) {
                assert_vec_near(o.position, r.position, 1e-5);
                assert!(quat_angle(o.rotation, r.rotation) < 1e-4, "bone rotations");
            }
        }
    }

    #[test]
    fn bones_sit_on_the_rope_at_equal_arc_lengths() {
        let (mut chain, rest) = rest_chain(5);
        // An L: 1 m along +X, then 1 m down; 5 bones at 0, 0.5, 1, 1.5, 2 m of arc.
        let corners = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, -1.0, 0.0)];
        let expected = [
            Vec3::ZERO,
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::X,
            Vec3::new(1.0, -0.5, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
        ];
        // The same shape with 3, 7 and 41 points: bone count ≠ point count is resampled.
        for per in [1, 3, 20] {
            let points = polyline(&corners, per);
            let out = stretched(&mut chain, &points, rest[0]);
            for (o, e) in out.iter().zip(expected) {
                assert_vec_near(o.position, e, 1e-5);
            }
            // Each bone's axis points at the next bone; the tip continues its parent's direction.
            for i in 0..5 {
                let axis = rotate(out[i].rotation, chain.axis(i));
                let to = if i < 4 {
                    (out[i + 1].position - out[i].position).normalize()
                } else {
                    Vec3::NEG_Y
                };
                assert!(vec_angle(axis, to) < 1e-4, "bone {i} axis");
            }
        }
    }

    #[test]
    fn more_bones_than_points() {
        let rest = hanging_rest(16, 0.05, Vec3::ZERO, &mut Lcg(2));
        let mut chain = BoneChain::new(&rest);
        let points = [Vec3::ZERO, Vec3::new(0.0, 0.0, 1.5)];
        let out = stretched(&mut chain, &points, rest[0]);
        for (i, o) in out.iter().enumerate() {
            assert_vec_near(o.position, Vec3::new(0.0, 0.0, 0.1 * i as f32), 1e-5);
            assert!(vec_angle(rotate(o.rotation, chain.axis(i)), Vec3::Z) < 1e-4);
        }
    }

    #[test]
    fn rest_length_fit_keeps_spacing_and_extends_past_the_end() {
        let (mut chain, rest) = rest_chain(6); // 0.5 m long
                                               // A 2 m rope along +X: the bones cover its first 0.5 m.
        let long = polyline(&[Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)], 10);
        let out = chain
            .solve(&long, rest[0], false, ChainFit::RestLength)
            .expect("valid");
        for (i, o) in out.iter().enumerate() {
            assert_vec_near(o.position, Vec3::new(0.1 * i as f32, 0.0, 0.0), 1e-5);
        }
        // A 0.25 m rope that ends going down: the rest continues down from its end.
        let short = [
            Vec3::ZERO,
            Vec3::new(0.15, 0.0, 0.0),
            Vec3::new(0.15, -0.1, 0.0),
        ];
        let out = chain
            .solve(&short, rest[0], false, ChainFit::RestLength)
            .expect("valid");
        assert_vec_near(out[1].position, Vec3::new(0.1, 0.0, 0.0), 1e-5);
        assert_vec_near(out[2].position, Vec3::new(0.15, -0.05, 0.0), 1e-5);
        assert_vec_near(out[5].position, Vec3::new(0.15, -0.35, 0.0), 1e-5);
    }

    #[test]
    fn pinned_root_stays_and_the_offset_fades_to_the_tip() {
        let (mut chain, rest) = rest_chain(5);
        let points = polyline(&[Vec3::ZERO, Vec3::new(0.0, -0.4, 0.0)], 4);
        let mut reference = rest[0];
        reference.position = Vec3::new(0.08, 0.0, 0.0); // the rope trails the bone by 8 cm
        let out = chain
            .solve(&points, reference, true, ChainFit::Stretch)
            .expect("valid");
        assert_vec_near(out[0].position, reference.position, 1e-6);
        assert_vec_near(out[2].position, Vec3::new(0.04, -0.2, 0.0), 1e-6);
        assert_vec_near(out[4].position, Vec3::new(0.0, -0.4, 0.0), 1e-6);
    }

    #[test]
    fn a_planar_bend_adds_no_twist() {
        // A chain whose bones' +X is the hinge (+Z world at rest); the rope bends in the XY plane,
        // a full half circle: every bone's hinge axis must stay ±Z (no twist about the rope).
        let down = arc_rotation(Vec3::Y, Vec3::NEG_Y);
        let rest: Vec<Pose> = (0..10)
            .map(|i| Pose::new(Vec3::new(0.0, -0.1 * i as f32, 0.0), down))
            .collect();
        // Bending happens about world Z, which is each bone's local Z at rest (the hinge).
        let hinge = |p: &Pose| rotate(p.rotation, Vec3::Z);
        let rest_hinge = hinge(&rest[0]);
        let mut chain = BoneChain::new(&rest);
        let points: Vec<Vec3> = (0..=40)
            .map(|k| {
                let a = PI * k as f32 / 40.0;
                Vec3::new(a.sin(), -a.cos(), 0.0) * 0.3 - Vec3::new(0.0, -0.3, 0.0)
            })
            .collect();
        let out = chain
            .solve(&points, rest[0], false, ChainFit::Stretch)
            .expect("valid");
        for o in out {
            assert!(
                vec_angle(hinge(o), rest_hinge) < 1e-3,
                "hinge stays in place"
            );
        }
    }

    #[test]
    fn twist_is_stable_while_the_rope_swings_through_every_direction() {
        // A rope swung around a cone and then over the top (through straight up): no bone's frame may
        // jump between frames, and the frames must not depend on the history (same rope, same pose).
        let (mut chain, rest) = rest_chain(10);
        let mut previous: Option<Vec<Pose>> = None;
        let mut worst = 0.0f64;
        for frame in 0..2000 {
            let t = frame as f32 / 60.0;
            let tilt = (0.2 + 0.8 * (0.5 - 0.5 * (t * 0.7).cos())) * PI; // 0.2π … π (up)
            let spin = t * 2.3;
            let dir = Vec3::new(
                tilt.sin() * spin.cos(),
                -tilt.cos(),
                tilt.sin() * spin.sin(),
            );
            let bend = Vec3::new(spin.sin(), 0.0, -spin.cos()) * 0.3;
            let points: Vec<Vec3> = (0..12)
                .map(|k| {
                    let s = k as f32 / 11.0;
                    rest[0].position + dir * s + bend * s * s
                })
                .collect();
            let out = stretched(&mut chain, &points, rest[0]);
            worst = worst.max(largest_turn(&mut previous, out));
        }
        // The rope turns about 0.04 rad per frame (more while folded back); a flip would be ~π.
        assert!(worst < 0.2, "largest bone turn between frames: {worst} rad");
        // Back to hanging: the same pose as a chain that never swung (no twist was accumulated).
        let points = polyline(
            &[
                rest[0].position,
                rest[0].position + Vec3::new(0.3, -0.8, 0.1),
            ],
            11,
        );
        let swung = stretched(&mut chain, &points, rest[0]);
        let fresh = stretched(&mut BoneChain::new(&rest), &points, rest[0]);
        for (a, b) in swung.iter().zip(&fresh) {
            assert!(
                quat_angle(a.rotation, b.rotation) < 1e-4,
                "history-free away from folds"
            );
        }
    }

    /// Returns the largest rotation (radians) of any bone between frames while the rope swings in a
    /// full circle over the root, slightly off the vertical plane (through straight up), with or
    /// without the previous frame's twist.
    fn over_the_top(with_history: bool) -> f64 {
        let (mut chain, rest) = rest_chain(8);
        let mut previous: Option<Vec<Pose>> = None;
        let mut worst = 0.0f64;
        for frame in 0..=240 {
            let theta = 2.0 * PI * frame as f32 / 240.0;
            let dir = Vec3::new(theta.sin(), -theta.cos(), 0.05).normalize();
            let points = polyline(&[rest[0].position, rest[0].position + dir], 9);
            if !with_history {
                chain.reset_history();
            }
            let out = stretched(&mut chain, &points, rest[0]);
            worst = worst.max(largest_turn(&mut previous, out));
        }
        worst
    }

    #[test]
    fn swinging_over_the_root_does_not_flip() {
        // 1.5° (0.026 rad) of swing per frame. The smallest rotation alone snaps the twist round at
        // the top (measured: 0.96 rad in one frame); keeping the previous twist near the fold turns
        // it over smoothly instead (measured: 0.053 rad per frame at most).
        let flipping = over_the_top(false);
        let kept = over_the_top(true);
        assert!(
            flipping > 0.5,
            "the smallest rotation alone flips: {flipping} rad"
        );
        assert!(kept < 0.1, "largest turn between frames: {kept} rad");
    }

    #[test]
    fn growing_at_the_anchor_never_pops() {
        // The rope grows as it does in `Rope`: a point inserted at the anchor, coincident with it.
        let (mut chain, rest) = rest_chain(8);
        let shape = polyline(
            &[
                Vec3::new(0.0, 2.0, 0.0),
                Vec3::new(0.3, 1.6, 0.0),
                Vec3::new(0.3, 1.0, 0.5),
            ],
            5,
        );
        let before = stretched(&mut chain, &shape, rest[0]);
        let mut grown = shape.clone();
        grown.insert(1, shape[0]);
        let after = stretched(&mut chain, &grown, rest[0]);
        for (a, b) in before.iter().zip(&after) {
            assert_vec_near(a.position, b.position, 1e-6);
            assert!(quat_angle(a.rotation, b.rotation) < 1e-5);
        }
        // Paying out continuously: the head segment lengthens by 1 mm per frame; the bones move by
        // at most about that much per frame (no jump when a segment fills up).
        for fit in [ChainFit::Stretch, ChainFit::RestLength] {
            let mut previous: Option<Vec<Pose>> = None;
            for k in 0..600 {
                let head = 0.001 * k as f32;
                let anchor = Vec3::new(0.0, 2.0, 0.0);
                // Anchor, the head segment, the full segments paid out so far (all straight down),
                // then the old rope going off diagonally.
                let full = (head / 0.1).floor() as usize;
                let first = head - full as f32 * 0.1;
                let mut points = vec![anchor];
                let mut p = anchor + Vec3::new(0.0, -first, 0.0);
                points.push(p);
                for _ in 0..full {
                    p += Vec3::new(0.0, -0.1, 0.0);
                    points.push(p);
                }
                for _ in 0..3 {
                    p += Vec3::new(0.06, -0.08, 0.0);
                    points.push(p);
                }
                let out = chain
                    .solve(&points, rest[0], false, fit)
                    .expect("valid")
                    .to_vec();
                if let Some(prev) = &previous {
                    for (a, b) in prev.iter().zip(&out) {
                        assert!(a.position.distance(b.position) < 0.0035, "{fit:?} step {k}");
                        assert!(
                            quat_angle(a.rotation, b.rotation) < 0.05,
                            "{fit:?} step {k}"
                        );
                    }
                }
                previous = Some(out);
            }
        }
    }

    #[test]
    fn bad_input_is_refused_without_panicking() {
        let (mut chain, rest) = rest_chain(4);
        let good = [Vec3::ZERO, Vec3::NEG_Y];
        assert_eq!(
            chain.solve(&[Vec3::ZERO], rest[0], false, ChainFit::Stretch),
            Err(ChainError::TooFewPoints)
        );
        assert_eq!(
            chain.solve(&[], rest[0], false, ChainFit::Stretch),
            Err(ChainError::TooFewPoints)
        );
        for bad in [Vec3::NAN, Vec3::INFINITY, Vec3::splat(1e30)] {
            assert_eq!(
                chain.solve(&[Vec3::ZERO, bad], rest[0], true, ChainFit::Stretch),
                Err(ChainError::BadPoint)
            );
        }
        let nan_rotation = Pose::new(Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0));
        assert_eq!(
            chain.solve(&good, nan_rotation, false, ChainFit::Stretch),
            Err(ChainError::BadReference)
        );
        assert_eq!(
            BoneChain::new(&rest[..1]).solve(&good, rest[0], false, ChainFit::Stretch),
            Err(ChainError::TooFewBones)
        );
        assert!(!ChainError::BadPoint.describe().is_empty());
        // Degenerate but finite: every point in one place, a non-unit reference rotation.
        let odd = Pose::new(Vec3::ONE, Quat::from_xyzw(0.0, 0.0, 0.0, 3.0));
        let out = chain
            .solve(&[Vec3::ONE; 5], odd, true, ChainFit::RestLength)
            .expect("finite");
        assert!(out.iter().all(|p| p.is_finite()));
        // A rope that doubles back on itself (a 180° chord) is still finite.
        let back = [Vec3::ZERO, Vec3::NEG_Y, Vec3::ZERO, Vec3::NEG_Y];
        let out = chain
            .solve(&back, rest[0], false, ChainFit::Stretch)
            .expect("finite");
        assert!(out
            .iter()
            .all(|p| p.is_finite() && (p.rotation.length() - 1.0).abs() < 1e-4));
    }

    #[test]
    fn solving_does_not_allocate_after_reserving() {
        let (mut chain, rest) = rest_chain(10);
        chain.reserve_points(32);
        let buffers = (
            chain.cumulative.as_ptr(),
            chain.arc.as_ptr(),
            chain.out.as_ptr(),
            chain.history.as_ptr(),
        );
        let points = polyline(&[Vec3::ZERO, Vec3::X, Vec3::Y], 15);
        for fit in [ChainFit::Stretch, ChainFit::RestLength] {
            chain.solve(&points, rest[0], true, fit).expect("valid");
        }
        assert_eq!(
            buffers,
            (
                chain.cumulative.as_ptr(),
                chain.arc.as_ptr(),
                chain.out.as_ptr(),
                chain.history.as_ptr(),
            )
        );
        assert_eq!(chain.poses().len(), 10);
    }
}
