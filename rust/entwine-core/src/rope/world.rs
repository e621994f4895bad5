//! The rope's view of the physics world: a short list of analytic colliders.
//!
//! The glue gathers the bodies (and cutter areas) near the rope once per physics frame and describes
//! each of their shapes here as a sphere, capsule, box or plane with a [`Pose`]. The rope then keeps
//! its points out of the solid ones by signed distance (push-out after every constraint iteration) and
//! by sphere-tracing each point's path over the step (continuous collision, so a point cannot jump
//! through a thin wall however fast the anchor moves). Cutters are tested against the segments.

use glam::Vec3;

use crate::kit::pose::{ensure_unit, rotation_of_scaled_axis, unit_vec3};
use crate::kit::shape::{box_distance, capsule_distance, sphere_distance};
use crate::kit::Pose;

/// The shape of a collider, in its own frame (the kit's one shape type; see [`crate::kit::shape`]).
pub use crate::kit::Shape;

/// How a collider moved during the step that ends at its pose: a translation of `pivot` at
/// `velocity` plus a turn about `pivot` at `angular_velocity`. Cutters are swept back along it, so a
/// blade spinning several radians per tick or a bullet crossing the rope between two ticks still
/// cuts. It is the path the collider took from its pose at the start of the step to its pose at the
/// end ([`Motion::along`]), never a velocity it has only now: a body set spinning or launched this
/// tick has not moved yet. Two poses tell a turn only up to whole revolutions; a hint (a rigid
/// body's angular velocity when the step began, or the turn of its previous step) picks the winding.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Velocity of the pivot, m/s (world).
    pub velocity: Vec3,
    /// Angular velocity, rad/s (world axis × rate).
    pub angular_velocity: Vec3,
    /// The point the collider turns about at the end of the step (a body's centre of mass), world metres.
    pub pivot: Vec3,
}

impl Motion {
    /// A collider that does not move.
    pub const NONE: Self = Self {
        velocity: Vec3::ZERO,
        angular_velocity: Vec3::ZERO,
        pivot: Vec3::ZERO,
    };
    /// Fastest motion accepted: m/s for the velocity, rad/s for the turn (faster is clamped).
    pub const MAX_SPEED: f32 = 1000.0;

    /// Returns the motion that took a collider from `from` to `to` in `seconds` (the shortest turn,
    /// about `to`'s origin), or [`Motion::NONE`] when `seconds` is not positive or a pose is not finite.
    #[must_use]
    pub fn between(from: Pose, to: Pose, seconds: f32) -> Self {
        Self::along(from, to, to.position, Vec3::ZERO, seconds)
    }

    /// Returns the motion that took a collider from `from` to `to` in `seconds`: the point fixed to
    /// it that is at `pivot` (world metres) at `to` moves on a straight line, and the collider turns
    /// about that point by the turn from `from`'s rotation to `to`'s whose angle comes nearest to
    /// `spin × seconds` (`spin`: rad/s, world axis × rate; zero for the shortest turn, at most half
    /// a revolution). Rewound by `seconds` it is at `from` again (unless a speed was clamped to
    /// [`Motion::MAX_SPEED`]). [`Motion::NONE`] when `seconds` is not positive or an input is not
    /// finite.
    #[must_use]
    pub fn along(from: Pose, to: Pose, pivot: Vec3, spin: Vec3, seconds: f32) -> Self {
        let finite = from.is_finite() && to.is_finite() && pivot.is_finite() && spin.is_finite();
        if seconds.is_nan() || seconds <= 0.0 || !finite {
            return Self::NONE;
        }
        let (a, b) = (ensure_unit(from.rotation), ensure_unit(to.rotation));
        let mut shortest = b * a.conjugate();
        if shortest.w < 0.0 {
            shortest = -shortest;
        }
        let turn = unwound(shortest.to_scaled_axis(), spin * seconds);
        // Where the pivot was: the same point of the collider, placed by `from`.
        let start = from.position + a * (b.conjugate() * (pivot - to.position));
        Self {
            velocity: (pivot - start) / seconds,
            angular_velocity: turn / seconds,
            pivot,
        }
        .sanitized()
    }

    /// Returns the motion with non-finite parts dropped and speeds clamped to [`Motion::MAX_SPEED`].
    #[must_use]
    pub fn sanitized(self) -> Self {
        if !(self.velocity.is_finite()
            && self.angular_velocity.is_finite()
            && self.pivot.is_finite())
        {
            return Self::NONE;
        }
        Self {
            velocity: self.velocity.clamp_length_max(Self::MAX_SPEED),
            angular_velocity: self.angular_velocity.clamp_length_max(Self::MAX_SPEED),
            pivot: self.pivot,
        }
    }

    /// Returns `true` when the collider did not move.
    #[must_use]
    pub fn is_still(&self) -> bool {
        self.velocity == Vec3::ZERO && self.angular_velocity == Vec3::ZERO
    }
}

/// Returns the turn (world axis × radians) that is the same rotation as `shortest` (a turn of at
/// most half a revolution) and whose angle about that axis comes nearest to `hint` (a turn of any
/// size): `shortest` plus the whole revolutions that bring it nearest. Without a turn (`shortest`
/// zero) the axis is the hint's.
#[must_use]
pub fn unwound(shortest: Vec3, hint: Vec3) -> Vec3 {
    use core::f32::consts::TAU;
    let angle = shortest.length();
    let (axis, angle) = match unit_vec3(shortest) {
        Some(axis) if angle > 0.0 => (axis, angle),
        _ => match unit_vec3(hint) {
            Some(axis) => (axis, 0.0),
            None => return shortest,
        },
    };
    let revolutions = ((hint.dot(axis) - angle) / TAU).round();
    if !revolutions.is_finite() {
        return shortest;
    }
    axis * (angle + TAU * revolutions)
}

/// One collider: a shape placed in the world by a rigid pose.
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    /// Where the shape's frame sits in the world (metres; unit rotation).
    pub pose: Pose,
    /// The shape in that frame.
    pub shape: Shape,
    /// Whether rope points are kept out of it (on the rope's collision mask).
    pub solid: bool,
    /// Whether a rope segment touching it is cut (on the rope's cutter mask).
    pub cutter: bool,
    /// How it moved during the step that ends at `pose` (used for cutters).
    pub motion: Motion,
}

impl Collider {
    /// Returns a collider that does not move.
    #[must_use]
    pub fn still(pose: Pose, shape: Shape, solid: bool, cutter: bool) -> Self {
        Self {
            pose,
            shape,
            solid,
            cutter,
            motion: Motion::NONE,
        }
    }

    /// Returns the collider as it was `back` seconds before the end of its step, moved back along
    /// its motion.
    #[must_use]
    pub fn rewound(&self, back: f32) -> Self {
        let m = self.motion;
        if m.is_still() || back == 0.0 {
            return self.clone();
        }
        let turn = rotation_of_scaled_axis(-m.angular_velocity * back);
        let pivot = m.pivot - m.velocity * back;
        Self {
            pose: Pose::new(
                pivot + turn * (self.pose.position - m.pivot),
                (turn * ensure_unit(self.pose.rotation)).normalize(),
            ),
            ..self.clone()
        }
    }

    /// Returns an upper bound (metres) on how far any point of the shape travels in `seconds`.
    #[must_use]
    pub fn travel(&self, seconds: f32) -> f32 {
        let m = self.motion;
        let arm = self.shape.bounding_radius() + (self.pose.position - m.pivot).length();
        (m.velocity.length() + m.angular_velocity.length() * arm) * seconds
    }

    /// Returns the shape's thinnest half-size (metres): how far it may move between two samples of a
    /// sweep without stepping over something in its path.
    #[must_use]
    pub fn half_thickness(&self) -> f32 {
        self.shape.half_thickness()
    }

    /// Returns the signed distance (metres) from the world point `p` to the collider's surface.
    #[must_use]
    pub fn distance(&self, p: Vec3) -> f32 {
        self.shape.distance(self.pose.inverse_transform_point(p))
    }

    /// Returns the outward world-space normal of the surface nearest to the world point `p`.
    #[must_use]
    pub fn normal(&self, p: Vec3) -> Vec3 {
        self.normal_local(self.pose.inverse_transform_point(p))
    }

    /// [`Collider::normal`] of the point `local` in the collider's frame.
    fn normal_local(&self, local: Vec3) -> Vec3 {
        let n = self.shape.normal(local);
        self.pose.transform_point(n) - self.pose.position
    }

    /// Returns where to put a ball of `radius` at the world point `p` so that it no longer overlaps the
    /// collider, and the surface normal there; `None` when it does not overlap.
    ///
    /// A ball that came from `from` (where it was outside) leaves a box through the face on the side it
    /// came from, not through the nearest face: a rope point pulled deep into a thin wall must not pop
    /// out on the far side.
    #[must_use]
    pub fn resolve(&self, p: Vec3, from: Vec3, radius: f32) -> Option<(Vec3, Vec3)> {
        // The local point is worked out once for the distance, the box's faces and the normal.
        let lp = self.pose.inverse_transform_point(p);
        let d = self.shape.distance(lp) - radius;
        if d >= 0.0 || !d.is_finite() {
            return None;
        }
        if let Shape::Box { half_extents } = self.shape {
            let lf = self.pose.inverse_transform_point(from);
            let outside = lf.abs() - half_extents - Vec3::splat(radius);
            if outside.max_element() > -1e-3
                && lp.abs().cmplt(half_extents + Vec3::splat(radius)).all()
            {
                let axis = if outside.x >= outside.y && outside.x >= outside.z {
                    0
                } else if outside.y >= outside.z {
                    1
                } else {
                    2
                };
                let mut n = Vec3::ZERO;
                n[axis] = if lf[axis] >= 0.0 { 1.0 } else { -1.0 };
                let mut q = lp;
                q[axis] = n[axis] * (half_extents[axis] + radius);
                let world_n = self.pose.transform_point(n) - self.pose.position;
                return Some((self.pose.transform_point(q), world_n));
            }
        }
        let n = self.normal_local(lp);
        Some((p - n * d, n))
    }

    /// Returns how a capsule of `radius` metres around the world segment `a`–`b` overlaps the
    /// collider: the fraction `t` along the segment of its deepest point, the world direction `n` to
    /// move the segment out along, and the depth (metres) to move it; `None` when they do not
    /// overlap. Planes return `None` (a segment meets a half-space first at an end point, which the
    /// point push-out handles).
    ///
    /// The deepest point is the minimum of the shape's signed distance along the segment (a convex
    /// function for these convex shapes): solved exactly for a sphere, a capsule and a box the
    /// segment stays outside of ([`nearest_on_segment`]), found by golden-section search where the
    /// segment enters a box. Where the segment only
    /// grazes the shape, the way out is the surface normal there. Where its axis passes through the
    /// shape (a rope drawn tight over a wall's edge), it is the separating axis of least overlap:
    /// the face normals and the cross products of the segment with them for a box, the line between
    /// the closest points for a sphere or a capsule.
    #[must_use]
    pub fn segment_overlap(&self, a: Vec3, b: Vec3, radius: f32) -> Option<(f32, Vec3, f32)> {
        if matches!(self.shape, Shape::Plane) {
            return None;
        }
        let la = self.pose.inverse_transform_point(a);
        let lb = self.pose.inverse_transform_point(b);
        let (t, local_n, depth) = segment_overlap_local(&self.shape, la, lb, radius)?;
        let n = self.pose.transform_point(local_n) - self.pose.position;
        Some((t, n, depth))
    }

    /// Returns the fraction `t` in [0, 1] along the world segment `a`–`b` of its point nearest the
    /// collider, and that point's distance (metres) from the collider's surface (0 on or inside it):
    /// exact for a sphere, a capsule and a box (see [`nearest_on_segment`]); for a plane, the
    /// nearer end.
    #[must_use]
    pub fn segment_distance(&self, a: Vec3, b: Vec3) -> (f32, f32) {
        let la = self.pose.inverse_transform_point(a);
        let lb = self.pose.inverse_transform_point(b);
        let d = lb - la;
        let (t, distance) = match self.shape {
            Shape::Box { half_extents } => nearest_on_segment(half_extents, la, d),
            Shape::Sphere { radius } => {
                let (t, to_centre) = nearest_on_segment(Vec3::ZERO, la, d);
                (t, to_centre - radius)
            }
            Shape::Capsule {
                radius,
                half_height,
            } => {
                let (t, to_axis) = nearest_on_segment(Vec3::new(0.0, half_height, 0.0), la, d);
                (t, to_axis - radius)
            }
            _ => {
                let (da, db) = (self.shape.distance(la), self.shape.distance(lb));
                if da <= db {
                    (0.0, da)
                } else {
                    (1.0, db)
                }
            }
        };
        (t, distance.max(0.0))
    }

    /// Returns the fraction `t` in [0, 1] of the way from `a` to `b` (world, metres) at which a ball of
    /// `radius` metres first touches the collider, by sphere tracing; `None` when the path stays clear.
    ///
    /// A path that starts inside returns `Some(0.0)`.
    #[must_use]
    pub fn sweep(&self, a: Vec3, b: Vec3, radius: f32) -> Option<f32> {
        let la = self.pose.inverse_transform_point(a);
        let lb = self.pose.inverse_transform_point(b);
        sweep_local(&self.shape, la, lb, radius)
    }

    /// Returns [`Collider::distance`] of `a` and, unless `skip(distance)` holds, [`Collider::sweep`]
    /// from `a` to `b`: the start point is taken into the collider's frame once for both.
    pub(crate) fn distance_and_sweep(
        &self,
        a: Vec3,
        b: Vec3,
        radius: f32,
        skip: impl FnOnce(f32) -> bool,
    ) -> (f32, Option<f32>) {
        let la = self.pose.inverse_transform_point(a);
        let d = self.shape.distance(la);
        if skip(d) {
            return (d, None);
        }
        let lb = self.pose.inverse_transform_point(b);
        (d, sweep_local(&self.shape, la, lb, radius))
    }
}

/// [`Collider::segment_overlap`] in the shape's frame.
fn segment_overlap_local(shape: &Shape, a: Vec3, b: Vec3, radius: f32) -> Option<(f32, Vec3, f32)> {
    // The shape known outside the search: each distance is the shape's own arithmetic inlined. A
    // sphere is the points within `r` of its centre and a capsule those within `r` of its axis, so
    // the nearest point of the segment to that centre or axis (a box of no width) is the minimum of
    // their signed distance; a box's is exact while the segment stays outside it.
    match *shape {
        Shape::Box { half_extents } => overlap_search(
            shape,
            a,
            b,
            radius,
            |p| box_distance(half_extents, p),
            |a, d| {
                let (t, outside) = nearest_on_segment(half_extents, a, d);
                // On or inside the box the signed distance is not the outside one: searched.
                (outside > OUTSIDE).then_some((t, outside))
            },
        ),
        Shape::Sphere { radius: r } => overlap_search(
            shape,
            a,
            b,
            radius,
            |p| sphere_distance(r, p),
            |a, d| {
                let (t, to_centre) = nearest_on_segment(Vec3::ZERO, a, d);
                Some((t, to_centre - r))
            },
        ),
        Shape::Capsule {
            radius: r,
            half_height,
        } => overlap_search(
            shape,
            a,
            b,
            radius,
            |p| capsule_distance(r, half_height, p),
            |a, d| {
                let (t, to_axis) = nearest_on_segment(Vec3::new(0.0, half_height, 0.0), a, d);
                Some((t, to_axis - r))
            },
        ),
        _ => overlap_search(shape, a, b, radius, |p| shape.distance(p), |_, _| None),
    }
}

/// How far outside a box (metres) [`nearest_on_segment`]'s answer is taken as exact; nearer, the
/// segment may enter the box, where the signed distance is searched for.
const OUTSIDE: f32 = 1e-5;

/// Returns the fraction `t` in [0, 1] of the way along the segment from `a` by `d` at which it comes
/// nearest to the box of `half` extents at the origin, and that distance (metres, 0 on or inside the
/// box). Exact: the squared distance is a sum of one convex quadratic per axis, each with its own
/// pieces (`|a + t d| − half` below or above 0); between the values of `t` where a piece changes, it
/// is one quadratic, whose minimum is solved for. Zero half extents make it the distance to a point
/// (a sphere's centre) or to a segment along Y (a capsule's axis).
#[inline]
fn nearest_on_segment(half: Vec3, a: Vec3, d: Vec3) -> (f32, f32) {
    // Where some axis's piece changes, in (0, 1), between the ends.
    let mut cuts = [0.0f32; 8];
    let mut n = 1;
    for k in 0..3 {
        if d[k] != 0.0 {
            for side in [half[k], -half[k]] {
                let t = (side - a[k]) / d[k];
                if t > 0.0 && t < 1.0 {
                    cuts[n] = t;
                    n += 1;
                }
            }
        }
    }
    cuts[n] = 1.0;
    n += 1;
    cuts[1..n - 1].sort_unstable_by(f32::total_cmp);
    let outside_sq = |t: f32| ((a + d * t).abs() - half).max(Vec3::ZERO).length_squared();
    let mut best = (0.0, outside_sq(0.0));
    for w in cuts[..n].windows(2) {
        let (t0, t1) = (w[0], w[1]);
        if t1 <= t0 {
            continue;
        }
        // The axes outside their slab over this piece, and on which side: the squared distance is
        // the sum over them of (s (a + t d) − half)², least where its slope is zero.
        let mid = a + d * (0.5 * (t0 + t1));
        let (mut curve, mut slope) = (0.0, 0.0);
        for k in 0..3 {
            if mid[k].abs() > half[k] {
                let s = mid[k].signum();
                curve += d[k] * d[k];
                slope += d[k] * (a[k] - s * half[k]);
            }
        }
        let t = if curve > 0.0 {
            (-slope / curve).clamp(t0, t1)
        } else {
            t0
        };
        let g = outside_sq(t);
        if g < best.1 {
            best = (t, g);
        }
    }
    let end = outside_sq(1.0);
    if end < best.1 {
        best = (1.0, end);
    }
    (best.0, best.1.sqrt())
}

/// [`segment_overlap_local`] with `distance` the shape's signed distance and `nearest` its exact
/// minimum along the segment from `a` by `d` (fraction, distance), or `None` to search for it.
#[inline(always)]
fn overlap_search(
    shape: &Shape,
    a: Vec3,
    b: Vec3,
    radius: f32,
    distance: impl Fn(Vec3) -> f32,
    nearest: impl Fn(Vec3, Vec3) -> Option<(f32, f32)>,
) -> Option<(f32, Vec3, f32)> {
    let d = b - a;
    // The signed distance changes by at most the distance moved, so a shape farther from the
    // segment's midpoint than half its length plus the radius cannot touch it: one evaluation
    // spares the search for the common case (a floor body under the whole rope).
    if distance(a + d * 0.5) >= 0.5 * d.length() + radius {
        return None;
    }
    let (t, dist) = nearest(a, d).unwrap_or_else(|| golden_search(a, d, &distance));
    if !dist.is_finite() || dist >= radius {
        return None;
    }
    overlap_at(shape, (a, b), t, dist, radius)
}

/// Returns the fraction along the segment from `a` by `d` where `distance` (convex along it) is least,
/// and that value, by golden-section search (to about 10⁻⁵ of the segment) and a look at both ends.
#[inline(always)]
fn golden_search(a: Vec3, d: Vec3, distance: impl Fn(Vec3) -> f32) -> (f32, f32) {
    let at = |t: f32| distance(a + d * t);
    // Golden-section search for the minimum of the signed distance along the segment.
    const INV_PHI: f32 = 0.618_034;
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let (mut f1, mut f2) = (at(x1), at(x2));
    for _ in 0..24 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - INV_PHI * (hi - lo);
            f1 = at(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + INV_PHI * (hi - lo);
            f2 = at(x2);
        }
    }
    let mut t = 0.5 * (lo + hi);
    let mut dist = at(t);
    for (end, f) in [(0.0, at(0.0)), (1.0, at(1.0))] {
        if f < dist {
            (t, dist) = (end, f);
        }
    }
    (t, dist)
}

/// Returns the overlap of a capsule of `radius` around the segment `a`–`b` whose axis comes nearest
/// to `shape` at fraction `t`, `dist` from it (less than `radius`): see
/// [`Collider::segment_overlap`].
fn overlap_at(
    shape: &Shape,
    (a, b): (Vec3, Vec3),
    t: f32,
    dist: f32,
    radius: f32,
) -> Option<(f32, Vec3, f32)> {
    let d = b - a;
    let q = a + d * t;
    if dist > 1e-5 {
        return Some((t, shape.normal(q), radius - dist));
    }
    // The axis passes through the shape.
    let (n, depth) = match *shape {
        Shape::Sphere { radius: r } => {
            let n = q
                .try_normalize()
                .or_else(|| unit_vec3(d).map(Vec3::any_orthonormal_vector))
                .unwrap_or(Vec3::Y);
            (n, r + radius - q.length())
        }
        Shape::Capsule {
            radius: r,
            half_height,
        } => {
            let axis = Vec3::new(0.0, q.y.clamp(-half_height, half_height), 0.0);
            let n = (q - axis)
                .try_normalize()
                .or_else(|| d.cross(Vec3::Y).try_normalize())
                .unwrap_or(Vec3::X);
            (n, r + radius - (q - axis).length())
        }
        Shape::Box { half_extents } => box_separation(half_extents, a, b, radius)?,
        // A world holds only the four solids (see `World::push`).
        Shape::Plane | Shape::Cylinder { .. } | Shape::Convex(_) | Shape::Trimesh(_) => {
            return None
        }
    };
    (depth > 0.0 && depth.is_finite()).then_some((t, n, depth))
}

/// Returns the separating axis of least overlap between a box of `half` extents at the origin and a
/// capsule of `radius` around `a`–`b`, oriented to move the capsule out, and the overlap (metres).
fn box_separation(half: Vec3, a: Vec3, b: Vec3, radius: f32) -> Option<(Vec3, f32)> {
    let d = b - a;
    let mut best: Option<(Vec3, f32)> = None;
    let mut consider = |axis: Vec3| {
        let Some(axis) = axis.try_normalize() else {
            return;
        };
        let box_r = (axis * half).abs().element_sum();
        let (pa, pb) = (a.dot(axis), b.dot(axis));
        let (smin, smax) = (pa.min(pb) - radius, pa.max(pb) + radius);
        let up = box_r - smin; // move along +axis
        let down = smax + box_r; // move along −axis
        let (n, depth) = if up <= down {
            (axis, up)
        } else {
            (-axis, down)
        };
        if best.is_none_or(|(_, bd)| depth < bd) {
            best = Some((n, depth));
        }
    };
    for k in 0..3 {
        let mut e = Vec3::ZERO;
        e[k] = 1.0;
        consider(e);
        consider(d.cross(e));
    }
    best
}

/// Returns where a ball of `radius` moving from `a` to `b` (shape-local) first touches `shape`.
///
/// Sphere tracing with a minimum stride of half the ball's radius (at least 1 mm): the shape inflated by
/// the radius is at least one diameter thick, so the stride cannot step over it, and a path grazing a
/// face does not crawl.
fn sweep_local(shape: &Shape, a: Vec3, b: Vec3, radius: f32) -> Option<f32> {
    // As in the segment search: the shape known outside the loop, the same arithmetic inside.
    match *shape {
        Shape::Box { half_extents } => sweep_with(a, b, radius, |p| box_distance(half_extents, p)),
        Shape::Sphere { radius: r } => sweep_with(a, b, radius, |p| sphere_distance(r, p)),
        Shape::Capsule {
            radius: r,
            half_height,
        } => sweep_with(a, b, radius, |p| capsule_distance(r, half_height, p)),
        _ => sweep_with(a, b, radius, |p| shape.distance(p)),
    }
}

/// [`sweep_local`] with `distance` the shape's signed distance.
#[inline(always)]
fn sweep_with(a: Vec3, b: Vec3, radius: f32, distance: impl Fn(Vec3) -> f32) -> Option<f32> {
    const CONTACT: f32 = 1e-4;
    const MAX_STEPS: usize = 96;
    let delta = b - a;
    let length = delta.length();
    if !length.is_finite() {
        return None;
    }
    let min_stride = (0.5 * radius).max(1e-3);
    let mut travelled: f32 = 0.0;
    for _ in 0..MAX_STEPS {
        let p = if length > 0.0 {
            a + delta * (travelled.min(length) / length)
        } else {
            a
        };
        let d = distance(p) - radius;
        if !d.is_finite() {
            return None;
        }
        if d < CONTACT {
            return Some(if length > 0.0 {
                (travelled.min(length) / length).clamp(0.0, 1.0)
            } else {
                0.0
            });
        }
        if travelled >= length {
            return None;
        }
        travelled += d.max(min_stride).min(length - travelled).max(CONTACT);
    }
    None
}

/// Returns `h` with the word `x` mixed in (the multiply-rotate step of the Fx hash): for
/// fingerprints of inputs, not for anything an attacker chooses.
#[inline]
#[must_use]
pub(crate) fn mix(h: u64, x: u32) -> u64 {
    (h.rotate_left(5) ^ u64::from(x)).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// What [`World::near`] adds to a reach before it rules a box or a capsule out by its exact distance:
/// 1 mm, and a millionth of the point's largest coordinate (a few of `f32`'s steps there), so that
/// rounding in the two tests never rules out a collider the exact test would have found.
const NEAR_SLACK: (f32, f32) = (1e-3, 1e-6);

/// The colliders near a rope for one physics frame, in a buffer reused from frame to frame.
#[derive(Clone, Debug, Default)]
pub struct World {
    colliders: Vec<Collider>,
    /// Bounding radius of each collider (parallel to `colliders`).
    bounds: Vec<f32>,
}

impl World {
    /// Returns an empty world that can hold `capacity` colliders without allocating.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            colliders: Vec::with_capacity(capacity),
            bounds: Vec::with_capacity(capacity),
        }
    }

    /// Removes every collider, keeping the buffer.
    pub fn clear(&mut self) {
        self.colliders.clear();
        self.bounds.clear();
    }

    /// Adds a collider and returns `true`, or returns `false` and ignores it when its pose or shape is
    /// not finite, when it is a trimesh, or when the world is full (`capacity` colliders; the buffer
    /// never grows). A cylinder or a convex hull is replaced by its solid approximation (see
    /// [`Shape::solid_approximation`]).
    pub fn push(&mut self, mut collider: Collider) -> bool {
        if self.colliders.len() == self.colliders.capacity() || !collider.pose.is_finite() {
            return false;
        }
        let Some((shape, centre)) = collider
            .shape
            .sanitized()
            .and_then(|s| s.solid_approximation())
        else {
            return false;
        };
        collider.pose.rotation = crate::kit::pose::unit_quat(collider.pose.rotation);
        if centre != Vec3::ZERO {
            collider.pose = collider
                .pose
                .compose(Pose::new(centre, glam::Quat::IDENTITY));
        }
        collider.motion = collider.motion.sanitized();
        self.bounds.push(shape.bounding_radius());
        collider.shape = shape;
        self.colliders.push(collider);
        true
    }

    /// Returns the colliders.
    #[must_use]
    pub fn colliders(&self) -> &[Collider] {
        &self.colliders
    }

    /// Returns the number of colliders.
    #[must_use]
    pub fn len(&self) -> usize {
        self.colliders.len()
    }

    /// Returns `true` when there are no colliders.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.colliders.is_empty()
    }

    /// Returns a fingerprint of the colliders, in order: their poses, shapes, kinds and motions, bit
    /// for bit. The same colliders give the same fingerprint; any change gives another but for a
    /// chance of one in 2⁶⁴ (a sleeping rope wakes when its colliders' fingerprint changes).
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        let mut h = mix(0, self.colliders.len() as u32);
        for c in &self.colliders {
            let mut add = |v: Vec3| {
                for x in v.to_array() {
                    h = mix(h, x.to_bits());
                }
            };
            add(c.pose.position);
            add(c.pose.rotation.xyz());
            add(Vec3::new(c.pose.rotation.w, 0.0, 0.0));
            add(c.motion.velocity);
            add(c.motion.angular_velocity);
            add(c.motion.pivot);
            let (kind, size) = match &c.shape {
                Shape::Sphere { radius } => (0, Vec3::splat(*radius)),
                Shape::Capsule {
                    radius,
                    half_height,
                } => (1, Vec3::new(*radius, *half_height, 0.0)),
                Shape::Box { half_extents } => (2, *half_extents),
                Shape::Plane => (3, Vec3::ZERO),
                // `World::push` turns these into the shapes above: none is ever in a world.
                Shape::Cylinder { .. } | Shape::Convex(_) | Shape::Trimesh(_) => (4, Vec3::ZERO),
            };
            add(size);
            h = mix(h, kind | u32::from(c.solid) << 8 | u32::from(c.cutter) << 9);
        }
        h
    }

    /// Returns `true` when the collider `i` might be within `reach` metres of the world point `p`,
    /// and never `false` when it is. Outside the collider's bounding sphere by more than `reach` it
    /// is not. A box or a capsule is then measured exactly (with [`NEAR_SLACK`] to spare for
    /// rounding): their bounding spheres are loose (a floor's holds everything above it for as far
    /// as the floor is wide), and a rope dragged over a floor would otherwise test each of its
    /// segments against it on every iteration.
    #[inline(always)]
    pub(crate) fn near(&self, i: usize, p: Vec3, reach: f32) -> bool {
        let bound = self.bounds[i];
        if bound.is_infinite() {
            return true;
        }
        let c = &self.colliders[i];
        let within = bound + reach;
        if (p - c.pose.position).length_squared() > within * within {
            return false;
        }
        // The distance from outside (0 inside, which is near): no square root, no sign.
        let outside_sq = match c.shape {
            Shape::Box { half_extents } => {
                let local = c.pose.inverse_transform_point(p);
                (local.abs() - half_extents)
                    .max(Vec3::ZERO)
                    .length_squared()
            }
            Shape::Capsule {
                radius,
                half_height,
            } => {
                let local = c.pose.inverse_transform_point(p);
                let axis = Vec3::new(0.0, local.y.clamp(-half_height, half_height), 0.0);
                let from_surface = ((local - axis).length() - radius).max(0.0);
                from_surface * from_surface
            }
            _ => return true,
        };
        let reach = reach + NEAR_SLACK.0 + NEAR_SLACK.1 * p.abs().max_element();
        outside_sq <= reach * reach
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::Lcg;
    use glam::Quat;

    #[test]
    fn near_never_rules_out_a_collider_the_exact_tests_find() {
        // Boxes and capsules of all proportions, turned any way, far from the origin or not, and
        // segments and points all around them (many touching, many just clear): wherever the exact
        // segment overlap or point distance finds the collider within reach, `near` says so.
        let mut rng = Lcg(2024);
        let (mut found, mut ruled_out) = (0, 0);
        for k in 0..4000 {
            let size = Vec3::new(
                0.05 + 20.0 * rng.signed().abs(),
                0.05 + 2.0 * rng.signed().abs(),
                0.05 + 20.0 * rng.signed().abs(),
            );
            let shape = if k % 3 == 0 {
                Shape::Capsule {
                    radius: 0.5 * size.y,
                    half_height: 0.5 * size.x,
                }
            } else {
                Shape::Box {
                    half_extents: 0.5 * size,
                }
            };
            let far = if k % 4 == 0 { 1000.0 } else { 0.0 };
            let centre = rng.vec3() * 5.0 + Vec3::splat(far);
            let pose = Pose::new(centre, rng.quat());
            let mut world = World::with_capacity(1);
            assert!(world.push(Collider::still(pose, shape.clone(), true, false)));
            let collider = &world.colliders()[0];
            for _ in 0..20 {
                // A point in the collider's frame within 0.3 m of the box around it: inside, on
                // and just off its surface.
                let a = pose.transform_point(rng.vec3() * (0.5 * size + Vec3::splat(0.3)));
                let b = a + rng.vec3() * 0.4;
                let radius = 0.01 + 0.1 * rng.signed().abs();
                let mid = (a + b) * 0.5;
                let reach = 0.5 * (b - a).length() + radius;
                if collider.segment_overlap(a, b, radius).is_some() {
                    found += 1;
                    assert!(
                        world.near(0, mid, reach),
                        "{shape:?} at {centre}: {a} to {b}"
                    );
                }
                if collider.distance(a) <= radius {
                    assert!(world.near(0, a, radius), "{shape:?} at {centre}: {a}");
                }
                ruled_out += usize::from(!world.near(0, mid, reach));
            }
        }
        // Both kinds of case came up.
        assert!(
            found > 20_000 && ruled_out > 5000,
            "{found} found, {ruled_out} ruled out"
        );
    }

    #[test]
    fn a_wide_floor_is_near_only_the_segments_close_to_it() {
        // A 100 m floor, 1 m thick, top at y = 0: its bounding sphere holds everything within 70 m,
        // but a segment 0.5 m above it (0.15 m long, 3 cm thick) is ruled out, one on it is not.
        let mut world = World::with_capacity(1);
        assert!(world.push(at(
            Vec3::new(0.0, -0.5, 0.0),
            Shape::Box {
                half_extents: Vec3::new(50.0, 0.5, 50.0),
            },
        )));
        let reach = 0.075 + 0.03;
        assert!(!world.near(0, Vec3::new(10.0, 0.5, -20.0), reach));
        assert!(world.near(0, Vec3::new(10.0, 0.05, -20.0), reach));
        assert!(world.near(0, Vec3::new(49.9, -0.2, 0.0), reach));
        assert!(!world.near(0, Vec3::new(50.2, -0.2, 0.0), reach));
    }

    fn at(p: Vec3, shape: Shape) -> Collider {
        Collider {
            pose: Pose::new(p, Quat::IDENTITY),
            shape,
            solid: true,
            cutter: false,
            motion: Motion::NONE,
        }
    }

    /// The overlap as it was found before the exact minima: golden-section search on every shape,
    /// every evaluation through [`Shape::distance`]; kept to check the exact one against it.
    fn searched_segment_overlap_local(
        shape: &Shape,
        a: Vec3,
        b: Vec3,
        radius: f32,
    ) -> Option<(f32, Vec3, f32)> {
        overlap_search(shape, a, b, radius, |p| shape.distance(p), |_, _| None)
    }

    /// [`sweep_local`] as it was, every evaluation through [`Shape::distance`].
    fn old_sweep_local(shape: &Shape, a: Vec3, b: Vec3, radius: f32) -> Option<f32> {
        sweep_with(a, b, radius, |p| shape.distance(p))
    }

    /// The three shapes a world's solids are made of (see [`World::push`]).
    fn solids() -> [Shape; 3] {
        [
            Shape::Box {
                half_extents: Vec3::new(0.5, 0.2, 0.8),
            },
            Shape::Sphere { radius: 0.4 },
            Shape::Capsule {
                radius: 0.25,
                half_height: 0.6,
            },
        ]
    }

    /// Returns how deep a segment is when its axis passes through the middle of `shape`: a sphere's
    /// or a capsule's radius (a box's is not used).
    fn shape_core(shape: &Shape) -> f32 {
        match *shape {
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => radius,
            _ => f32::INFINITY,
        }
    }

    /// Returns random segments `(a, b)` around the origin, some starting on the Y axis (zeros and
    /// ties), some lying along an axis (parallel to faces) and some of no length.
    fn segments(count: usize) -> Vec<(Vec3, Vec3)> {
        let mut seed = 7_u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
        };
        (0..count)
            .map(|k| {
                let a = Vec3::new(next(), next(), next()) * 1.2;
                let a = if k % 5 == 0 {
                    Vec3::new(0.0, a.y, 0.0)
                } else {
                    a
                };
                let mut d = Vec3::new(next(), next(), next()) * 0.4;
                match k % 7 {
                    1 => d = Vec3::new(d.x, 0.0, 0.0),
                    2 => d = Vec3::new(0.0, d.y, 0.0),
                    3 if k % 3 == 0 => d = Vec3::ZERO,
                    _ => {}
                }
                (a, a + d)
            })
            .collect()
    }

    #[test]
    fn the_nearest_point_of_a_segment_to_a_point_an_axis_or_a_box_is_the_least_of_dense_samples() {
        let mut checked = 0;
        for half in [
            Vec3::ZERO,
            Vec3::new(0.0, 0.6, 0.0),
            Vec3::new(0.5, 0.2, 0.8),
        ] {
            for (a, b) in segments(3000) {
                let d = b - a;
                let (t, dist) = nearest_on_segment(half, a, d);
                assert!((0.0..=1.0).contains(&t), "{half} {a} {b}: t = {t}");
                let outside = |p: Vec3| (p.abs() - half).max(Vec3::ZERO).length();
                // Its own answer is where it says, and no sample of 4,001 comes nearer; one comes
                // within a sample's spacing of it (distance changes no faster than the point).
                assert!((outside(a + d * t) - dist).abs() < 1e-6, "{half} {a} {b}");
                let samples = 4000;
                let least = (0..=samples)
                    .map(|i| outside(a + d * (i as f32 / samples as f32)))
                    .fold(f32::INFINITY, f32::min);
                assert!(dist <= least + 1e-6, "{half} {a} {b}: {dist} > {least}");
                assert!(
                    dist >= least - d.length() / samples as f32 - 1e-6,
                    "{half} {a} {b}: {dist} < {least}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 9000);
    }

    #[test]
    fn exact_overlaps_agree_with_the_search_and_searched_sweeps_keep_their_bits() {
        let (mut hits, mut swept, mut worst_depth) = (0, 0, 0.0f32);
        for shape in &solids() {
            for (k, (a, b)) in segments(4000).into_iter().enumerate() {
                let r = 0.03 + 0.05 * ((k * 37 % 100) as f32 / 100.0);
                let new = segment_overlap_local(shape, a, b, r);
                let searched = searched_segment_overlap_local(shape, a, b, r);
                match (new, searched) {
                    (Some((t, n, depth)), Some((_, n_s, depth_s))) => {
                        // The search finds the least distance to about 10⁻⁵ of the segment; the
                        // exact one is never shallower.
                        assert!(
                            depth >= depth_s - 1e-6,
                            "{shape:?} {a} {b}: {depth} < {depth_s}"
                        );
                        assert!(
                            depth - depth_s < 1e-5,
                            "{shape:?} {a} {b}: {depth} vs {depth_s}"
                        );
                        worst_depth = worst_depth.max(depth - depth_s);
                        assert!((0.0..=1.0).contains(&t));
                        assert!((n.length() - 1.0).abs() < 1e-4, "{shape:?} {a} {b}: {n}");
                        // Both move the segment out the same way (where the minimum is a whole
                        // stretch, as along a face, they may pick different points of it), unless
                        // its axis passes through a sphere's centre or a capsule's axis, where
                        // every way across it is as short.
                        if depth < r + shape_core(shape) - 1e-3 {
                            assert!(n.dot(n_s) > 0.5, "{shape:?} {a} {b}: {n} vs {n_s}");
                        }
                    }
                    (None, None) => {}
                    // Only a graze the two place on either side of the radius.
                    (Some((_, _, depth)), None) | (None, Some((_, _, depth))) => {
                        assert!(depth.abs() < 1e-5, "{shape:?} {a} {b}: one sees {depth}");
                    }
                }
                hits += usize::from(new.is_some());
                let s = sweep_local(shape, a, b, r).map(f32::to_bits);
                assert_eq!(s, old_sweep_local(shape, a, b, r).map(f32::to_bits));
                swept += usize::from(s.is_some());
                let c = Collider::still(
                    Pose::new(
                        Vec3::new(0.1, -0.2, 0.3),
                        Quat::from_rotation_y(0.3 * k as f32),
                    ),
                    shape.clone(),
                    true,
                    false,
                );
                let (d, s) = c.distance_and_sweep(a, b, r, |_| false);
                assert_eq!(d.to_bits(), c.distance(a).to_bits());
                assert_eq!(s.map(f32::to_bits), c.sweep(a, b, r).map(f32::to_bits));
            }
        }
        assert!(
            hits > 500 && swept > 500,
            "{hits} overlaps, {swept} sweeps hit"
        );
        eprintln!(
            "overlaps {hits}, sweeps {swept}, deepest gain over the search {worst_depth:e} m"
        );
    }

    #[test]
    fn distances_known_values() {
        let s = Shape::Sphere { radius: 1.0 };
        assert!((s.distance(Vec3::new(3.0, 0.0, 0.0)) - 2.0).abs() < 1e-6);
        let c = Shape::Capsule {
            radius: 0.5,
            half_height: 1.0,
        };
        assert!((c.distance(Vec3::new(0.0, 2.0, 0.0)) - 0.5).abs() < 1e-6);
        assert!((c.distance(Vec3::new(1.0, 0.3, 0.0)) - 0.5).abs() < 1e-6);
        let b = Shape::Box {
            half_extents: Vec3::new(1.0, 2.0, 3.0),
        };
        assert!((b.distance(Vec3::new(2.0, 0.0, 0.0)) - 1.0).abs() < 1e-6);
        assert!((b.distance(Vec3::new(0.5, 0.0, 0.0)) + 0.5).abs() < 1e-6);
        assert!((b.distance(Vec3::new(2.0, 3.0, 0.0)) - 2f32.sqrt()).abs() < 1e-6);
        assert_eq!(Shape::Plane.distance(Vec3::new(5.0, -0.25, 1.0)), -0.25);
    }

    #[test]
    fn box_normal_points_out_of_the_nearest_face() {
        let b = Shape::Box {
            half_extents: Vec3::new(1.0, 1.0, 0.1),
        };
        assert_eq!(b.normal(Vec3::new(0.2, 0.1, -0.05)), Vec3::NEG_Z);
        assert_eq!(b.normal(Vec3::new(3.0, 0.0, 0.0)), Vec3::X);
    }

    #[test]
    fn rotated_collider_uses_its_frame() {
        // A thin wall in the XY plane rotated 90° about Y becomes a wall in the ZY plane.
        let wall = Collider {
            pose: Pose::new(
                Vec3::new(2.0, 0.0, 0.0),
                Quat::from_rotation_y(core::f32::consts::FRAC_PI_2),
            ),
            shape: Shape::Box {
                half_extents: Vec3::new(5.0, 5.0, 0.05),
            },
            solid: true,
            cutter: false,
            motion: Motion::NONE,
        };
        assert!((wall.distance(Vec3::new(1.0, 0.0, 0.0)) - 0.95).abs() < 1e-5);
        let n = wall.normal(Vec3::new(1.0, 0.0, 0.0));
        assert!((n - Vec3::NEG_X).length() < 1e-5, "{n}");
    }

    #[test]
    fn a_point_pulled_through_a_thin_wall_leaves_on_its_own_side() {
        let wall = at(
            Vec3::ZERO,
            Shape::Box {
                half_extents: Vec3::new(0.02, 1.0, 1.0),
            },
        );
        // Came from x < 0, now 1 cm past the midplane: nearest face is +X, but it goes back to −X.
        let (q, n) = wall
            .resolve(Vec3::new(0.01, 0.3, 0.0), Vec3::new(-0.2, 0.2, 0.0), 0.03)
            .expect("overlaps");
        assert!((q - Vec3::new(-0.05, 0.3, 0.0)).length() < 1e-5, "{q}");
        assert_eq!(n, Vec3::NEG_X);
        assert!(wall
            .resolve(Vec3::new(-0.2, 0.3, 0.0), Vec3::ZERO, 0.03)
            .is_none());
    }

    #[test]
    fn sweep_catches_a_thin_wall_crossed_in_one_step() {
        let wall = at(
            Vec3::ZERO,
            Shape::Box {
                half_extents: Vec3::new(0.02, 5.0, 5.0),
            },
        );
        // 0.4 m jump straight through a 4 cm wall: sampling the end points would miss it.
        let t = wall
            .sweep(Vec3::new(-0.2, 0.0, 0.0), Vec3::new(0.2, 0.0, 0.0), 0.03)
            .expect("hit");
        assert!((t - (0.2 - 0.05) / 0.4).abs() < 1e-3, "t = {t}");
        assert_eq!(
            wall.sweep(Vec3::new(-0.2, 0.0, 0.0), Vec3::new(-0.1, 0.0, 0.0), 0.03),
            None
        );
    }

    #[test]
    fn world_rejects_bad_colliders_and_never_grows() {
        let mut w = World::with_capacity(2);
        assert!(!w.push(at(Vec3::NAN, Shape::Plane)));
        assert!(!w.push(at(Vec3::ZERO, Shape::Sphere { radius: f32::NAN })));
        assert!(w.push(at(Vec3::ZERO, Shape::Sphere { radius: -1.0 })));
        assert!(w.push(at(Vec3::ZERO, Shape::Plane)));
        assert!(!w.push(at(Vec3::ZERO, Shape::Plane)));
        assert_eq!(w.len(), 2);
        assert_eq!(w.colliders()[0].shape, Shape::Sphere { radius: 0.0 });
        assert!(!w.colliders()[1].distance(Vec3::NAN).is_finite());
    }
}
