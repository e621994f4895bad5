//! Ropes side by side: the constraint iterations of up to [`LANES`] ropes with the same number of
//! points run together, each rope in a lane of structure-of-arrays buffers (one row per point, one
//! value per rope in a row).
//!
//! Why: the direct chain projection ([`super::project_chain`]) is a tridiagonal solve whose
//! elimination is one long chain of dependent operations — each segment's row waits for the
//! division of the row before it, and the back substitution waits the same way — so one rope keeps
//! the processor waiting on latencies (about 40 cycles a segment) while its arithmetic units stand
//! idle. Eight ropes in lanes run eight such chains at once, in the same instructions, and the
//! time per rope falls by about the lane count (docs/perf-notes/2026-12-01-rope-step-in-lanes.md).
//!
//! Each lane does exactly the arithmetic of [`super::project_chain`] (with a pinned first point) and
//! of the ground push-out in [`super::collide`], in the same order, so a rope gives the same bits in
//! a lane as stepped alone. A rope with solid colliders runs in a lane too: after each iteration's
//! ground push-out its points leave the lanes for the colliders' push-out (stepped on the rope, as
//! alone) and come back.

use glam::Vec3;

use super::{contact_velocity, CHAIN_COMPLIANCE, CHAIN_RELAXATION};

/// Ropes stepped side by side.
pub(crate) const LANES: usize = 8;

/// One value per lane.
type Lane = [f32; LANES];

/// What a lane's rope brings to a block of iterations (see [`Lanes::iterate`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LaneParams {
    /// Inverse mass of the last point relative to a rope point (0: pinned).
    pub w_end: f32,
    /// Rest length of segment 0 and of every other segment.
    pub head_rest: f32,
    pub rest: f32,
    /// Friction per push-out pass.
    pub friction: f32,
    /// Whether the ground is on, and the height a point's centre is kept above.
    pub ground: bool,
    pub floor: f32,
    /// Points `1..free_end` are pushed out of the ground.
    pub free_end: usize,
    /// The end is pinned: the last constraint's correction is summed for the tension.
    pub pinned: bool,
}

/// What a lane's rope carries through a block of iterations and gets back.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LaneSums {
    /// Sum of the last constraint's corrections (pinned ends).
    pub pinned_correction: Vec3,
    /// Largest multiplier so far.
    pub max_lambda: f32,
}

/// The lanes' buffers, grown to the most points a block has held and then reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lanes {
    x: Vec<Lane>,
    y: Vec<Lane>,
    z: Vec<Lane>,
    px: Vec<Lane>,
    py: Vec<Lane>,
    pz: Vec<Lane>,
    dx: Vec<Lane>,
    dy: Vec<Lane>,
    dz: Vec<Lane>,
    lambda: Vec<Lane>,
    upper: Vec<Lane>,
}

/// Writes `points` into lane `l` of the coordinate columns `[x, y, z]`, point `i` in row `i` (the
/// columns hold at least as many rows).
#[inline]
fn put_lane([x, y, z]: [&mut [Lane]; 3], l: usize, points: &[Vec3]) {
    let n = points.len();
    let rows = x[..n]
        .iter_mut()
        .zip(&mut y[..n])
        .zip(&mut z[..n])
        .zip(points);
    for (((x, y), z), p) in rows {
        (x[l], y[l], z[l]) = (p.x, p.y, p.z);
    }
}

/// Reads lane `l` of the coordinate columns `[x, y, z]` into `points`, row `i` into point `i` (the
/// columns hold at least as many rows).
#[inline]
fn take_lane([x, y, z]: [&[Lane]; 3], l: usize, points: &mut [Vec3]) {
    let n = points.len();
    let rows = x[..n].iter().zip(&y[..n]).zip(&z[..n]);
    for (((x, y), z), p) in rows.zip(points) {
        *p = Vec3::new(x[l], y[l], z[l]);
    }
}

/// Segment `j`'s unit direction (`last`, carried along the chain: kept where the segment has no
/// length) and right-hand side `rest − length`, per lane, of the coordinate columns `[x, y, z]`.
#[inline(always)]
fn segment_direction(
    [x, y, z]: [&[Lane]; 3],
    j: usize,
    last: &mut [Lane; 3],
    rest: &Lane,
) -> ([Lane; 3], Lane) {
    let (x0, x1, y0, y1, z0, z1) = (x[j], x[j + 1], y[j], y[j + 1], z[j], z[j + 1]);
    let ex: Lane = core::array::from_fn(|l| x1[l] - x0[l]);
    let ey: Lane = core::array::from_fn(|l| y1[l] - y0[l]);
    let ez: Lane = core::array::from_fn(|l| z1[l] - z0[l]);
    let len: Lane =
        core::array::from_fn(|l| ((ex[l] * ex[l]) + (ey[l] * ey[l]) + (ez[l] * ez[l])).sqrt());
    let q: [Lane; 3] = [
        core::array::from_fn(|l| ex[l] / len[l]),
        core::array::from_fn(|l| ey[l] / len[l]),
        core::array::from_fn(|l| ez[l] / len[l]),
    ];
    for (d, q) in last.iter_mut().zip(q) {
        *d = core::array::from_fn(|l| if len[l] > 1e-7 { q[l] } else { d[l] });
    }
    (*last, core::array::from_fn(|l| rest[l] - len[l]))
}

/// Moves the chain's last point by its share of the last correction, per lane (pinned: kept).
#[inline(always)]
fn move_last_point([x, y, z]: [&mut Lane; 3], w_last: &Lane, a: &Lane, [ax, ay, az]: [&Lane; 3]) {
    let (px, py, pz) = (*x, *y, *z);
    let s: Lane = core::array::from_fn(|l| w_last[l] * CHAIN_RELAXATION);
    let keep: [bool; LANES] = core::array::from_fn(|l| w_last[l] <= 0.0);
    let nx: Lane = core::array::from_fn(|l| px[l] + (0.0 + a[l] * ax[l]) * s[l]);
    let ny: Lane = core::array::from_fn(|l| py[l] + (0.0 + a[l] * ay[l]) * s[l]);
    let nz: Lane = core::array::from_fn(|l| pz[l] + (0.0 + a[l] * az[l]) * s[l]);
    *x = core::array::from_fn(|l| if keep[l] { px[l] } else { nx[l] });
    *y = core::array::from_fn(|l| if keep[l] { py[l] } else { ny[l] });
    *z = core::array::from_fn(|l| if keep[l] { pz[l] } else { nz[l] });
}

/// The dot products of two rows of directions, per lane.
#[inline(always)]
fn dot(a: &[Lane; 3], b: &[Lane; 3]) -> Lane {
    core::array::from_fn(|l| (a[0][l] * b[0][l]) + (a[1][l] * b[1][l]) + (a[2][l] * b[2][l]))
}

impl Lanes {
    /// Makes room for `n` points (allocates only past the most so far).
    pub fn reserve(&mut self, n: usize) {
        if self.x.len() < n {
            for v in [
                &mut self.x,
                &mut self.y,
                &mut self.z,
                &mut self.px,
                &mut self.py,
                &mut self.pz,
                &mut self.dx,
                &mut self.dy,
                &mut self.dz,
                &mut self.lambda,
                &mut self.upper,
            ] {
                v.resize(n, [0.0; LANES]);
            }
        }
    }

    /// Copies a rope's positions and previous positions (`pos.len()` points, after
    /// [`Lanes::reserve`]) into lane `l`.
    #[inline(always)]
    pub fn load(&mut self, l: usize, pos: &[Vec3], prev: &[Vec3]) {
        let n = pos.len().min(prev.len());
        put_lane([&mut self.x, &mut self.y, &mut self.z], l, &pos[..n]);
        put_lane([&mut self.px, &mut self.py, &mut self.pz], l, &prev[..n]);
    }

    /// Copies lane `l` back into a rope's positions and previous positions (`pos.len()` points).
    #[inline(always)]
    pub fn store(&self, l: usize, pos: &mut [Vec3], prev: &mut [Vec3]) {
        let n = pos.len().min(prev.len());
        take_lane([&self.x, &self.y, &self.z], l, &mut pos[..n]);
        take_lane([&self.px, &self.py, &self.pz], l, &mut prev[..n]);
    }

    /// Runs `iterations` constraint iterations on every lane's chain of `n` points (≥ 3, loaded):
    /// each projects every distance constraint (point 0 pinned, the last point's inverse mass
    /// `w_end`) and pushes points `1..free_end` out of the ground; `sums` accumulate as
    /// [`super::Rope::step`] accumulates them. After each iteration's ground push-out it calls
    /// `after`: there the ropes with solid colliders take their points out of their lanes, push them
    /// out of the colliders and put them back ([`super::Rope::push_out`]).
    #[inline(always)]
    pub fn iterate(
        &mut self,
        n: usize,
        iterations: u32,
        params: &[LaneParams; LANES],
        sums: &mut [LaneSums; LANES],
        mut after: impl FnMut(&mut Self),
    ) {
        debug_assert!(n >= 3 && self.x.len() >= n);
        for _ in 0..iterations {
            let (c, lambda) = self.project(n, params);
            for l in 0..LANES {
                if params[l].pinned {
                    sums[l].pinned_correction += c[l];
                }
                sums[l].max_lambda = sums[l].max_lambda.max(lambda[l]);
            }
            self.ground(n, params);
            after(self);
        }
    }

    /// [`super::project_chain`] on every lane with `(w_first, w_last) = (0, w_end)` and
    /// `(head_rest, rest)`; returns each lane's correction of the last point and largest multiplier.
    ///
    /// Every loop over the lanes is straight-line code on whole rows (the branches of
    /// `project_chain` depend on the row only, and are taken outside them), so the compiler keeps
    /// the lanes in vector registers. The segment directions are computed one row ahead of the
    /// elimination, and each point is corrected as soon as the back substitution has its two
    /// multipliers, so the processor overlaps the division chain with the rest of the work. The
    /// arithmetic of each lane is that of `project_chain`, operation for operation (the largest
    /// multiplier is taken in the other order, which does not change a maximum).
    #[inline(always)]
    fn project(&mut self, n: usize, params: &[LaneParams; LANES]) -> ([Vec3; LANES], Lane) {
        let m = n - 1;
        let w_last: Lane = core::array::from_fn(|l| params[l].w_end);
        let head_rest: Lane = core::array::from_fn(|l| params[l].head_rest);
        let rest: Lane = core::array::from_fn(|l| params[l].rest);
        let (x, y, z) = (&mut self.x[..n], &mut self.y[..n], &mut self.z[..n]);
        let (dx, dy, dz) = (&mut self.dx[..m], &mut self.dy[..m], &mut self.dz[..m]);
        let (lambda, upper) = (&mut self.lambda[..m], &mut self.upper[..m]);
        // Unit direction and right-hand side of segment j (Vec3::NEG_Y until a segment has a
        // length: `last` carries the latest one along the chain).
        let mut last: [Lane; 3] = [[0.0; LANES], [-1.0; LANES], [0.0; LANES]];
        // Forward elimination, row by row as in `project_chain` (w_0 = 0, interior 1, w_m = w_end),
        // each row's next direction found just before it is needed.
        let (mut here, mut rhs) = segment_direction([&*x, &*y, &*z], 0, &mut last, &head_rest);
        let mut before = here;
        let mut prev_upper: Lane = [0.0; LANES];
        let mut prev_lambda: Lane = [0.0; LANES];
        for j in 0..m {
            let (next, next_rhs) = if j + 1 < m {
                segment_direction([&*x, &*y, &*z], j + 1, &mut last, &rest)
            } else {
                (here, [0.0; LANES])
            };
            dx[j] = here[0];
            dy[j] = here[1];
            dz[j] = here[2];
            let wj: f32 = if j == 0 { 0.0 } else { 1.0 };
            let wk: Lane = if j + 1 == m { w_last } else { [1.0; LANES] };
            let lower: Lane = if j > 0 {
                let d = dot(&before, &here);
                core::array::from_fn(|l| -wj * d[l])
            } else {
                [0.0; LANES]
            };
            let up: Lane = if j + 1 < m {
                let d = dot(&here, &next);
                core::array::from_fn(|l| -wk[l] * d[l])
            } else {
                [0.0; LANES]
            };
            let carried: Lane = if j > 0 {
                core::array::from_fn(|l| lower[l] * prev_lambda[l])
            } else {
                [0.0; LANES]
            };
            let denom: Lane =
                core::array::from_fn(|l| wj + wk[l] + CHAIN_COMPLIANCE - lower[l] * prev_upper[l]);
            let inv: Lane = core::array::from_fn(|l| 1.0 / denom[l]);
            prev_upper = core::array::from_fn(|l| up[l] * inv[l]);
            prev_lambda = core::array::from_fn(|l| (rhs[l] - carried[l]) * inv[l]);
            upper[j] = prev_upper;
            lambda[j] = prev_lambda;
            before = here;
            here = next;
            rhs = next_rhs;
        }
        // The last point: x_m += w_m·λ_{m−1}·d_{m−1} (λ_{m−1} is final already).
        let s = 1.0 * CHAIN_RELAXATION;
        let a = lambda[m - 1];
        let (ax, ay, az) = (dx[m - 1], dy[m - 1], dz[m - 1]);
        move_last_point(
            [&mut x[m], &mut y[m], &mut z[m]],
            &w_last,
            &a,
            [&ax, &ay, &az],
        );
        let c = core::array::from_fn(|l| -a[l] * Vec3::new(ax[l], ay[l], az[l]));
        let mut max_lambda: Lane = core::array::from_fn(|l| 0.0f32.max(a[l].abs()));
        // Back substitution; each interior point i = j + 1 moves as soon as λ_j is final:
        // x_i += λ_{i−1}·d_{i−1} − λ_i·d_i (interior points weigh 1).
        let (mut b, mut bx, mut by, mut bz) = (a, ax, ay, az);
        for j in (0..m - 1).rev() {
            let (row, u) = (lambda[j], upper[j]);
            let a: Lane = core::array::from_fn(|l| row[l] - u[l] * b[l]);
            lambda[j] = a;
            max_lambda = core::array::from_fn(|l| max_lambda[l].max(a[l].abs()));
            let (ax, ay, az) = (dx[j], dy[j], dz[j]);
            let i = j + 1;
            let (px, py, pz) = (x[i], y[i], z[i]);
            x[i] = core::array::from_fn(|l| px[l] + ((0.0 + a[l] * ax[l]) - b[l] * bx[l]) * s);
            y[i] = core::array::from_fn(|l| py[l] + ((0.0 + a[l] * ay[l]) - b[l] * by[l]) * s);
            z[i] = core::array::from_fn(|l| pz[l] + ((0.0 + a[l] * az[l]) - b[l] * bz[l]) * s);
            (b, bx, by, bz) = (a, ax, ay, az);
        }
        (c, max_lambda)
    }

    /// The ground push-out of [`super::collide`] on every lane's points `1..free_end`.
    #[inline(always)]
    fn ground(&mut self, n: usize, params: &[LaneParams; LANES]) {
        let floor: Lane = core::array::from_fn(|l| {
            if params[l].ground {
                params[l].floor
            } else {
                f32::NEG_INFINITY
            }
        });
        for i in 1..n {
            // Whether any lane's point is below its floor, as one mask (a compare of the whole row
            // and a test, where a search of an array of flags went lane by lane).
            let row = self.y[i];
            let below = (0..LANES).fold(0u32, |m, l| m | (u32::from(row[l] < floor[l]) << l));
            if below == 0 {
                continue;
            }
            for (l, p) in params.iter().enumerate() {
                if !(p.ground && i < p.free_end && self.y[i][l] < p.floor) {
                    continue;
                }
                self.y[i][l] = p.floor;
                let pos = Vec3::new(self.x[i][l], self.y[i][l], self.z[i][l]);
                let mut prev = Vec3::new(self.px[i][l], self.py[i][l], self.pz[i][l]);
                contact_velocity(pos, &mut prev, Vec3::Y, p.friction);
                self.px[i][l] = prev.x;
                self.py[i][l] = prev.y;
                self.pz[i][l] = prev.z;
            }
        }
    }
}
