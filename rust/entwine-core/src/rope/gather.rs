//! Sharing one collider query among many ropes: where a shape may be ([`Bounds`]), which ropes
//! share a query ([`Clusters`]: boxes within [`CLUSTER_GAP`] of each other, split along their
//! longest side when a query comes back full), which shapes a rope keeps ([`keep_nearest`]) and
//! where each cutter shape was in the previous tick and the path it took since ([`CutterMemory`]). The engine's query and the
//! reading of its results stay in the glue.

use glam::{Mat3, Vec3};

use super::{Motion, Rope, Shape};
use crate::kit::Pose;

/// Most shapes a rope's world holds (the nearest ones win when a rope lies in a crowd).
pub const MAX_COLLIDERS: usize = 32;

/// Ropes whose boxes come within this distance (metres) of each other share a query.
pub const CLUSTER_GAP: f32 = 2.0;

/// Room (metres) added around a shape's bounds when they are tested against a rope's box, so that
/// the bounds never miss a shape the physics engine's own overlap test would find.
pub const BOUNDS_PAD: f32 = 0.01;

/// Extra room around the rope's bounds for the collider query, metres (covers a step of motion).
pub const QUERY_MARGIN: f32 = 0.5;

/// Longest step (seconds) whose cutters' reach grows the cutter query: a longer step (a rope
/// advanced by hand) reaches no farther.
pub const MAX_CUTTER_STEP: f32 = 1.0 / 30.0;

/// Returns the box `(lo, hi)` (world metres) whose colliders `rope` needs for a step from
/// `anchor`: the box of `anchor`, the rope's points and its loose piece's points, grown on each
/// axis by the anchor's travel since the last step plus [`QUERY_MARGIN`] plus `radius`; `None`
/// when the box is not finite.
#[must_use]
pub fn query_box(rope: &Rope, anchor: Vec3, radius: f32) -> Option<(Vec3, Vec3)> {
    let mut lo = anchor;
    let mut hi = anchor;
    for p in rope.points().iter().chain(rope.loose_points()) {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    // Room for this step's motion: the last step's travel of the anchor, plus a margin.
    let travel = (anchor - rope.anchor()).abs() + Vec3::splat(QUERY_MARGIN + radius);
    lo -= travel;
    hi += travel;
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// Returns the box `lo..hi` (a rope's [`query_box`]) grown by how far a cutter can move in two
/// steps of `dt` seconds (2 × [`Motion::MAX_SPEED`] × `dt`, `dt` at most [`MAX_CUTTER_STEP`]): every
/// cutter in it is remembered for the next step, so one that crosses the rope's box before the next
/// is known where it came from, however fast (up to that speed). Two steps, because the physics
/// server's queries find a body or an area a script moved where it was in the previous step (the
/// server takes the new pose at its next step) while its node is already at the new one.
#[must_use]
pub fn cutter_box((lo, hi): (Vec3, Vec3), dt: f32) -> (Vec3, Vec3) {
    let step = if dt.is_finite() {
        dt.clamp(0.0, MAX_CUTTER_STEP)
    } else {
        0.0
    };
    let reach = Vec3::splat(2.0 * Motion::MAX_SPEED * step);
    (lo - reach, hi + reach)
}

/// Where a shape may be, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounds {
    /// Inside the box `lo..hi`.
    Aabb(Vec3, Vec3),
    /// In the half-space `normal · p ≤ d` (a world boundary).
    Below(Vec3, f32),
    /// Anywhere (bounds not known).
    Everywhere,
}

impl Bounds {
    /// Returns the bounds of `shape` at `pose`, padded by [`BOUNDS_PAD`]; a shape with non-finite
    /// extents is [`Bounds::Everywhere`].
    #[must_use]
    pub fn of(shape: &Shape, pose: Pose) -> Self {
        let m = Mat3::from_quat(crate::kit::pose::unit_quat(pose.rotation));
        let a = Mat3::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs());
        let c = pose.position;
        let extent = match shape {
            Shape::Sphere { radius } => Vec3::splat(*radius),
            Shape::Box { half_extents } => a * *half_extents,
            Shape::Capsule {
                radius,
                half_height,
            } => m.y_axis.abs() * *half_height + Vec3::splat(*radius),
            Shape::Cylinder {
                radius,
                half_height,
            } => a * Vec3::new(*radius, *half_height, *radius),
            Shape::Plane => {
                let n = m.y_axis;
                let d = n.dot(c) + BOUNDS_PAD;
                return if n.is_finite() && d.is_finite() {
                    Self::Below(n, d)
                } else {
                    Self::Everywhere
                };
            }
            Shape::Convex(points) => {
                let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
                for p in points.iter().filter(|p| p.is_finite()) {
                    let w = m * *p + c;
                    lo = lo.min(w);
                    hi = hi.max(w);
                }
                return if lo.is_finite() && hi.is_finite() {
                    Self::Aabb(lo - BOUNDS_PAD, hi + BOUNDS_PAD)
                } else {
                    Self::Everywhere
                };
            }
            Shape::Trimesh(_) => Vec3::splat(shape.bounding_radius()),
        };
        let extent = extent + BOUNDS_PAD;
        if extent.is_finite() && c.is_finite() {
            Self::Aabb(c - extent, c + extent)
        } else {
            Self::Everywhere
        }
    }

    /// Returns the bounds of `shape` over the path `motion` took to `pose` in the last `seconds`
    /// (see [`Motion`]): the box that holds the shape wherever it is along that path (its point at
    /// the pivot moves on a straight line and the rest turns about it), padded by [`BOUNDS_PAD`].
    #[must_use]
    pub fn swept(shape: &Shape, pose: Pose, motion: Motion, seconds: f32) -> Self {
        let now = Self::of(shape, pose);
        if motion.is_still() || seconds.is_nan() || seconds <= 0.0 {
            return now;
        }
        let Self::Aabb(lo, hi) = now else {
            return now;
        };
        let arm = (pose.position - motion.pivot).length() + shape.bounding_radius() + BOUNDS_PAD;
        let start = motion.pivot - motion.velocity * seconds;
        let (plo, phi) = (start.min(motion.pivot), start.max(motion.pivot));
        let (lo, hi) = (lo.min(plo - arm), hi.max(phi + arm));
        if lo.is_finite() && hi.is_finite() {
            Self::Aabb(lo, hi)
        } else {
            Self::Everywhere
        }
    }

    /// Returns whether the bounds meet the box `lo..hi`.
    #[must_use]
    pub fn meets(&self, lo: Vec3, hi: Vec3) -> bool {
        match *self {
            Self::Aabb(a, b) => a.cmple(hi).all() && lo.cmple(b).all(),
            Self::Below(n, d) => {
                let (centre, half) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
                n.dot(centre) - n.abs().dot(half) <= d
            }
            Self::Everywhere => true,
        }
    }

    /// Returns the distance (m) from `p` to the bounds (0 inside).
    #[must_use]
    pub fn distance(&self, p: Vec3) -> f32 {
        match *self {
            Self::Aabb(a, b) => (p.max(a).min(b) - p).length(),
            Self::Below(n, d) => (n.dot(p) - d).max(0.0),
            Self::Everywhere => 0.0,
        }
    }
}

/// Returns whether the boxes `alo..ahi` and `blo..bhi` come within [`CLUSTER_GAP`] of each other.
#[must_use]
pub fn near(alo: Vec3, ahi: Vec3, blo: Vec3, bhi: Vec3) -> bool {
    let gap = Vec3::splat(CLUSTER_GAP);
    alo.cmple(bhi + gap).all() && blo.cmple(ahi + gap).all()
}

/// The ropes' boxes of one tick grouped into clusters that share a query, and the runs of ropes
/// still to query. Buffers are kept between ticks (no allocation once they have held the most
/// ropes a tick brings).
#[derive(Default, Debug)]
pub struct Clusters {
    /// Per box: its cluster (`u32::MAX`: not gathered now).
    cluster_of: Vec<u32>,
    /// Each cluster's box.
    boxes: Vec<(Vec3, Vec3)>,
    /// The boxes gathered, by cluster; runs of it are queried.
    order: Vec<u32>,
    /// Runs of `order` left to query.
    runs: Vec<(usize, usize)>,
}

impl Clusters {
    /// Groups `boxes` (`None`: left out, e.g. a rope of another space) into clusters: boxes within
    /// [`CLUSTER_GAP`] of a cluster's box join it, and clusters that grow into each other merge.
    /// Then every cluster is a run to query ([`Clusters::next_run`]).
    pub fn build(&mut self, boxes: impl ExactSizeIterator<Item = Option<(Vec3, Vec3)>>) {
        self.cluster_of.clear();
        self.cluster_of.resize(boxes.len(), u32::MAX);
        self.boxes.clear();
        for (i, b) in boxes.enumerate() {
            let Some((lo, hi)) = b else {
                continue;
            };
            let found = self
                .boxes
                .iter()
                .position(|(clo, chi)| near(*clo, *chi, lo, hi));
            let c = match found {
                Some(c) => {
                    let (clo, chi) = &mut self.boxes[c];
                    *clo = clo.min(lo);
                    *chi = chi.max(hi);
                    c
                }
                None => {
                    self.boxes.push((lo, hi));
                    self.boxes.len() - 1
                }
            };
            self.cluster_of[i] = c as u32;
        }
        // Clusters that grew into each other merge.
        'merge: loop {
            let k = self.boxes.len();
            for a in 0..k {
                for b in a + 1..k {
                    let ((alo, ahi), (blo, bhi)) = (self.boxes[a], self.boxes[b]);
                    if near(alo, ahi, blo, bhi) {
                        self.boxes[a] = (alo.min(blo), ahi.max(bhi));
                        let last = (k - 1) as u32;
                        for c in &mut self.cluster_of {
                            if *c == b as u32 {
                                *c = a as u32;
                            } else if *c == last {
                                *c = b as u32;
                            }
                        }
                        self.boxes.swap_remove(b);
                        continue 'merge;
                    }
                }
            }
            break;
        }
        let cluster_of = &self.cluster_of;
        self.order.clear();
        self.order
            .extend((0..cluster_of.len() as u32).filter(|i| cluster_of[*i as usize] != u32::MAX));
        self.order
            .sort_unstable_by_key(|i| (cluster_of[*i as usize], *i));
        self.runs.clear();
        let mut start = 0;
        for end in 1..=self.order.len() {
            if end == self.order.len()
                || cluster_of[self.order[end] as usize] != cluster_of[self.order[start] as usize]
            {
                self.runs.push((start, end));
                start = end;
            }
        }
    }

    /// Returns the next run of boxes to query, as a range of [`Clusters::members`], or `None` when
    /// every run was queried.
    pub fn next_run(&mut self) -> Option<(usize, usize)> {
        self.runs.pop()
    }

    /// Returns the boxes (their indices in [`Clusters::build`]'s order) of `run`.
    #[must_use]
    pub fn members(&self, (start, end): (usize, usize)) -> &[u32] {
        &self.order[start..end]
    }

    /// Splits `run` (whose union box is `lo..hi`) in two along that box's longest side, ordering
    /// its boxes by their centres (`box_of` gives each box), and queues both halves: for a query
    /// that came back full. A run of one box is not split.
    pub fn split(
        &mut self,
        (start, end): (usize, usize),
        (lo, hi): (Vec3, Vec3),
        box_of: impl Fn(u32) -> (Vec3, Vec3),
    ) {
        if end - start < 2 {
            return;
        }
        let size = hi - lo;
        let axis = if size.x >= size.y && size.x >= size.z {
            0
        } else if size.y >= size.z {
            1
        } else {
            2
        };
        let centre = |i: &u32| {
            let (lo, hi) = box_of(*i);
            (lo[axis] + hi[axis]) * 0.5
        };
        self.order[start..end].sort_unstable_by(|a, b| centre(a).total_cmp(&centre(b)));
        let mid = (start + end) / 2;
        self.runs.push((start, mid));
        self.runs.push((mid, end));
    }
}

/// Keeps the [`MAX_COLLIDERS`] nearest of `picked` ((distance, shape) pairs, in the query's
/// order), still in the query's order, when there are more.
pub fn keep_nearest(picked: &mut Vec<(f32, u32)>) {
    if picked.len() > MAX_COLLIDERS {
        picked.select_nth_unstable_by(MAX_COLLIDERS - 1, |a, b| a.0.total_cmp(&b.0));
        picked.truncate(MAX_COLLIDERS);
        picked.sort_unstable_by_key(|p| p.1);
    }
}

/// Where each cutter shape (keyed by its object's id and shape index) was in the previous tick and
/// how fast it was spinning then, for its path since; and where it is in this one.
#[derive(Default, Debug)]
pub struct CutterMemory {
    last: Vec<(i64, i32, Pose, Vec3)>,
    now: Vec<(i64, i32, Pose, Vec3)>,
}

impl CutterMemory {
    /// Returns a memory with room for `shapes` cutter shapes a tick.
    #[must_use]
    pub fn with_capacity(shapes: usize) -> Self {
        Self {
            last: Vec::with_capacity(shapes),
            now: Vec::with_capacity(shapes),
        }
    }

    /// Starts a tick: this tick's poses will be compared with the last tick's.
    pub fn begin(&mut self) {
        core::mem::swap(&mut self.last, &mut self.now);
        self.now.clear();
    }

    /// Returns where the cutter shape `(id, index)` was in the last tick and the spin (rad/s) kept
    /// for it then, if it was seen then.
    #[must_use]
    pub fn last(&self, id: i64, index: i32) -> Option<(Pose, Vec3)> {
        self.last
            .binary_search_by_key(&(id, index), |(i, k, _, _)| (*i, *k))
            .ok()
            .map(|j| (self.last[j].2, self.last[j].3))
    }

    /// Records that the cutter shape `(id, index)` is at `at` now and returns the path it took
    /// since the last tick, `dt` seconds ago ([`Motion::along`]; [`Motion::NONE`] when it was not
    /// seen then): its point at `pivot` (world metres; a rigid body's centre of mass, else its
    /// origin) on a straight line, and the turn between its two rotations whose winding comes
    /// nearest to the spin kept for it in the last tick.
    ///
    /// The spin kept for the next tick is `spin` when the body has one of its own (a rigid body's
    /// angular velocity now, which its coming physics step turns it by), else the turn of this path
    /// (a body moved by a script or an animation, or an area, keeps turning as it did). Two poses
    /// tell a turn only up to whole revolutions: a body turned by a script by more than half a
    /// revolution in its first step, or whose rate changes by that much from one step to the next,
    /// is taken to have turned the shortest way.
    pub fn path(
        &mut self,
        (id, index): (i64, i32),
        at: Pose,
        pivot: Vec3,
        spin: Option<Vec3>,
        dt: f32,
    ) -> Motion {
        let motion = self.last(id, index).map_or(Motion::NONE, |(from, hint)| {
            Motion::along(from, at, pivot, hint, dt)
        });
        let keep = spin
            .filter(|s| s.is_finite())
            .unwrap_or(motion.angular_velocity);
        self.now.push((id, index, at, keep));
        motion
    }

    /// Ends a tick: keeps one pose per shape, sorted for the next tick's look-ups.
    pub fn finish(&mut self) {
        self.now
            .sort_unstable_by_key(|(id, index, _, _)| (*id, *index));
        self.now.dedup_by_key(|(id, index, _, _)| (*id, *index));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn hanging_rope() -> Rope {
        let params = super::super::RopeParams::default();
        Rope::new(32, 5, params, Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y)
    }

    #[test]
    fn query_box_holds_the_rope_grown_by_the_margin_and_radius() {
        let rope = hanging_rope();
        let anchor = rope.anchor();
        let (mut lo, mut hi) = (anchor, anchor);
        for p in rope.points() {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        let (qlo, qhi) = query_box(&rope, anchor, 0.1).expect("finite");
        let grow = Vec3::splat(QUERY_MARGIN + 0.1);
        assert_eq!((qlo, qhi), (lo - grow, hi + grow));
        // The cutters' box reaches as far as the fastest cutter moves in two steps.
        let (clo, chi) = cutter_box((qlo, qhi), 1.0 / 60.0);
        let reach = Vec3::splat(2.0 * Motion::MAX_SPEED / 60.0);
        assert!((clo - (qlo - reach)).abs().max_element() < 1e-4);
        assert!((chi - (qhi + reach)).abs().max_element() < 1e-4);
        assert_eq!(
            cutter_box((qlo, qhi), 10.0),
            cutter_box((qlo, qhi), MAX_CUTTER_STEP)
        );
        assert_eq!(cutter_box((qlo, qhi), f32::NAN), (qlo, qhi));
    }

    #[test]
    fn swept_bounds_hold_the_shape_all_along_its_path() {
        // A blade turning 5 rad about an axle at one end while the axle moves 1 m.
        let shape = Shape::Box {
            half_extents: Vec3::new(0.3, 0.05, 0.01),
        };
        let dt = 1.0 / 60.0;
        let place = |angle: f32, axle: Vec3| {
            let turn = Quat::from_rotation_y(angle);
            Pose::new(axle + turn * Vec3::new(0.3, 0.0, 0.0), turn)
        };
        let (a0, a1) = (Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0));
        let (from, to) = (place(0.0, a0), place(5.0, a1));
        let motion = Motion::along(from, to, a1, Vec3::new(0.0, 5.0 / dt, 0.0), dt);
        let Bounds::Aabb(lo, hi) = Bounds::swept(&shape, to, motion, dt) else {
            panic!("a box");
        };
        for k in 0..=100 {
            let f = k as f32 / 100.0;
            let at = place(5.0 * f, a0.lerp(a1, f));
            for corner in [Vec3::new(0.3, 0.05, 0.01), Vec3::new(-0.3, -0.05, -0.01)] {
                let p = at.transform_point(corner);
                assert!(p.cmpge(lo).all() && p.cmple(hi).all(), "{p} in {lo}..{hi}");
            }
        }
        assert_eq!(
            Bounds::swept(&shape, to, Motion::NONE, dt),
            Bounds::of(&shape, to)
        );
    }

    #[test]
    fn query_box_takes_in_the_anchor_and_its_travel() {
        let rope = hanging_rope();
        let moved = rope.anchor() + Vec3::new(3.0, 0.0, -1.0);
        let (lo, hi) = query_box(&rope, moved, 0.0).expect("finite");
        // The travel (3, 0, 1) plus the margin grows both sides; the new anchor is inside.
        let travel = Vec3::new(3.0, 0.0, 1.0) + Vec3::splat(QUERY_MARGIN);
        assert!(lo.cmple(moved - travel).all() && hi.cmpge(moved + travel).all());
        assert_eq!(hi.x, moved.x + travel.x);
        assert_eq!(lo.z, moved.z - travel.z);
    }

    #[test]
    fn query_box_is_none_when_not_finite() {
        let rope = hanging_rope();
        assert!(query_box(&rope, Vec3::new(f32::NAN, 0.0, 0.0), 0.1).is_none());
        assert!(query_box(&rope, rope.anchor(), f32::INFINITY).is_none());
    }

    fn boxed(x: f32) -> Option<(Vec3, Vec3)> {
        Some((Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0)))
    }

    #[test]
    fn near_boxes_share_a_cluster_and_far_ones_do_not() {
        let mut c = Clusters::default();
        // 0 and 2 are 1 m apart, 50 is far, 4 bridges nothing; None is left out.
        let boxes = [boxed(0.0), boxed(50.0), None, boxed(2.0), boxed(51.5)];
        c.build(boxes.into_iter());
        let mut runs = Vec::new();
        while let Some(run) = c.next_run() {
            let mut m = c.members(run).to_vec();
            m.sort_unstable();
            runs.push(m);
        }
        runs.sort();
        assert_eq!(runs, [vec![0, 3], vec![1, 4]]);
    }

    #[test]
    fn clusters_that_grow_into_each_other_merge() {
        let mut c = Clusters::default();
        // 0 and 6 start apart; 3 joins 0 and then reaches 6.
        c.build([boxed(0.0), boxed(6.0), boxed(3.0)].into_iter());
        let run = c.next_run().expect("one run");
        assert_eq!(c.members(run).len(), 3);
        assert!(c.next_run().is_none());
    }

    #[test]
    fn a_full_run_splits_along_its_longest_side_into_halves() {
        let mut c = Clusters::default();
        let boxes: Vec<_> = (0..6).map(|i| boxed(i as f32 * 1.5)).collect();
        c.build(boxes.clone().into_iter());
        let run = c.next_run().expect("one cluster");
        c.split(run, (Vec3::ZERO, Vec3::new(8.5, 1.0, 1.0)), |i| {
            boxes[i as usize].expect("a box")
        });
        let (b, a) = (c.next_run().expect("half"), c.next_run().expect("half"));
        let (mut lo, mut hi) = (c.members(a).to_vec(), c.members(b).to_vec());
        lo.sort_unstable();
        hi.sort_unstable();
        assert_eq!((lo, hi), (vec![0, 1, 2], vec![3, 4, 5]));
        // One box is never split.
        c.split((0, 1), (Vec3::ZERO, Vec3::ONE), |i| {
            boxes[i as usize].expect("a box")
        });
        assert!(c.next_run().is_none());
    }

    #[test]
    fn bounds_contain_their_shape_and_planes_bound_a_half_space() {
        let at = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_z(0.7));
        let b = Bounds::of(
            &Shape::Box {
                half_extents: Vec3::new(1.0, 0.5, 0.25),
            },
            at,
        );
        let Bounds::Aabb(lo, hi) = b else {
            panic!("a box has a box: {b:?}");
        };
        for corner in [Vec3::new(1.0, 0.5, 0.25), Vec3::new(-1.0, 0.5, -0.25)] {
            let p = at.transform_point(corner);
            assert!(p.cmpge(lo).all() && p.cmple(hi).all(), "{p} in {lo}..{hi}");
        }
        assert!(b.meets(hi - Vec3::splat(0.1), hi + Vec3::ONE));
        assert!(!b.meets(hi + Vec3::splat(0.1), hi + Vec3::ONE));
        assert_eq!(b.distance(at.position), 0.0);
        let ground = Bounds::of(&Shape::Plane, Pose::IDENTITY);
        assert!(ground.meets(Vec3::new(0.0, -1.0, 0.0), Vec3::new(1.0, 0.005, 1.0)));
        assert!(!ground.meets(Vec3::new(0.0, 0.5, 0.0), Vec3::new(1.0, 1.0, 1.0)));
        assert!((ground.distance(Vec3::new(0.0, 3.0, 0.0)) - (3.0 - BOUNDS_PAD)).abs() < 1e-6);
        let nan = Bounds::of(&Shape::Sphere { radius: f32::NAN }, Pose::IDENTITY);
        assert_eq!(nan, Bounds::Everywhere);
        assert!(nan.meets(Vec3::splat(1e6), Vec3::splat(1e6 + 1.0)));
    }

    #[test]
    fn a_crowd_keeps_its_nearest_shapes_in_the_querys_order() {
        let mut picked: Vec<(f32, u32)> = (0..40).map(|k| ((40 - k) as f32, k)).collect();
        keep_nearest(&mut picked);
        assert_eq!(picked.len(), MAX_COLLIDERS);
        let kept: Vec<u32> = picked.iter().map(|p| p.1).collect();
        assert_eq!(kept, (8..40).collect::<Vec<u32>>());
        let mut few = vec![(3.0, 2), (1.0, 5)];
        keep_nearest(&mut few);
        assert_eq!(few, [(3.0, 2), (1.0, 5)]);
    }

    #[test]
    fn a_cutter_remembers_where_it_was_in_the_last_tick() {
        let mut m = CutterMemory::default();
        m.begin();
        let a = Pose::new(Vec3::X, Quat::IDENTITY);
        assert_eq!(m.path((7, 0), a, a.position, None, 0.1), Motion::NONE);
        m.finish();
        m.begin();
        let b = Pose::new(Vec3::Y, Quat::IDENTITY);
        assert_eq!(m.last(7, 0), Some((a, Vec3::ZERO)));
        let moved = m.path((7, 0), b, b.position, None, 0.1);
        assert!((moved.velocity - (Vec3::Y - Vec3::X) / 0.1).length() < 1e-4);
        assert_eq!(
            m.path((7, 1), b, b.position, None, 0.1),
            Motion::NONE,
            "another shape"
        );
        m.finish();
        m.begin();
        m.finish();
        m.begin();
        assert_eq!(m.last(7, 0), None, "not seen in the last tick");
    }

    #[test]
    fn a_rigid_body_spun_up_now_has_not_turned_yet() {
        // At rest in the last tick, spinning at 200 rad/s now: it has not moved, so no turn; its
        // next step turns it by 3.33 rad, which the spin kept now tells from the shortest 2.95
        // the other way.
        let dt = 1.0 / 60.0;
        let mut m = CutterMemory::default();
        let rest = Pose::IDENTITY;
        let spin = Vec3::new(0.0, 200.0, 0.0);
        m.begin();
        m.path((1, 0), rest, Vec3::ZERO, Some(Vec3::ZERO), dt);
        m.finish();
        m.begin();
        let now = m.path((1, 0), rest, Vec3::ZERO, Some(spin), dt);
        assert!(now.is_still(), "{now:?}");
        m.finish();
        m.begin();
        let turned = Pose::new(Vec3::ZERO, Quat::from_rotation_y(200.0 * dt));
        let next = m.path((1, 0), turned, Vec3::ZERO, Some(spin), dt);
        assert!((next.angular_velocity - spin).length() < 0.05, "{next:?}");
    }

    #[test]
    fn a_script_turned_body_keeps_its_winding_once_it_has_one() {
        // Turned 2 rad, then 3 rad, then 3.4 rad a tick (past half a revolution): each step's turn
        // is the winding nearest the last one's, so the turn stays forward.
        let dt = 1.0 / 60.0;
        let mut m = CutterMemory::default();
        let mut angle = 0.0f32;
        m.begin();
        m.path((1, 0), Pose::IDENTITY, Vec3::ZERO, None, dt);
        m.finish();
        for step in [2.0f32, 3.0, 3.4, 3.9, 3.9] {
            angle += step;
            m.begin();
            let at = Pose::new(Vec3::ZERO, Quat::from_rotation_y(angle));
            let motion = m.path((1, 0), at, Vec3::ZERO, None, dt);
            assert!(
                (motion.angular_velocity.y * dt - step).abs() < 1e-3,
                "{step}: {motion:?}"
            );
            m.finish();
        }
    }
}
