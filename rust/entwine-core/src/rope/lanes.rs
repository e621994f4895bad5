//! Ropes side by side: the constraint iterations of up to [`LANES`] ropes with the same number of
//! points run together, each rope in a lane of structure-of-arrays buffers (one row per point, one
//! value per rope in a row).
//!
//! Why: the direct chain projection ([`super::project_chain`]) is a tridiagonal solve whose
//! elimination is one long chain of dependent operations — each segment's row waits for the
//! division of the row before it, and the back substitution waits the same way — so one rope keeps
//! the processor waiting on latencies (about 40 cycles a segment) while its arithmetic units stand
//! idle. Eight ropes in lanes run eight such chains at once, in the same instructions, and the
//! time per rope falls by about the lane count (see PERFORMANCE.md at the repository's root).
//!
//! Each lane does exactly the arithmetic of [`super::project_chain`] (with a pinned first point) and
//! of the ground push-out in [`super::collide`], in the same order, so a rope gives the same bits in
//! a lane as stepped alone. Ropes with solid colliders are not put in lanes (their push-out is
//! stepped alone).

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
    pub fn load(&mut self, l: usize, pos: &[Vec3], prev: &[Vec3]) {
        for (i, (p, q)) in pos.iter().zip(prev).enumerate() {
            self.x[i][l] = p.x;
            self.y[i][l] = p.y;
            self.z[i][l] = p.z;
            self.px[i][l] = q.x;
            self.py[i][l] = q.y;
            self.pz[i][l] = q.z;
        }
    }

    /// Copies lane `l` back into a rope's positions and previous positions (`pos.len()` points).
    pub fn store(&self, l: usize, pos: &mut [Vec3], prev: &mut [Vec3]) {
        for (i, (p, q)) in pos.iter_mut().zip(prev.iter_mut()).enumerate() {
            *p = Vec3::new(self.x[i][l], self.y[i][l], self.z[i][l]);
            *q = Vec3::new(self.px[i][l], self.py[i][l], self.pz[i][l]);
        }
    }

    /// Runs `iterations` constraint iterations on every lane's chain of `n` points (≥ 3, loaded):
    /// each projects every distance constraint (point 0 pinned, the last point's inverse mass
    /// `w_end`) and pushes points `1..free_end` out of the ground; `sums` accumulate as
    /// [`super::Rope::step`] accumulates them.
    pub fn iterate(
        &mut self,
        n: usize,
        iterations: u32,
        params: &[LaneParams; LANES],
        sums: &mut [LaneSums; LANES],
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
        }
    }

    /// [`super::project_chain`] on every lane with `(w_first, w_last) = (0, w_end)` and
    /// `(head_rest, rest)`; returns each lane's correction of the last point and largest multiplier.
    ///
    /// Every loop over the lanes is straight-line code (the branches of `project_chain` depend on
    /// the row only, and are taken outside them), so the compiler runs the lanes in vector registers.
    fn project(&mut self, n: usize, params: &[LaneParams; LANES]) -> ([Vec3; LANES], Lane) {
        let m = n - 1;
        let w_last: Lane = core::array::from_fn(|l| params[l].w_end);
        let head_rest: Lane = core::array::from_fn(|l| params[l].head_rest);
        let rest: Lane = core::array::from_fn(|l| params[l].rest);
        let (x, y, z) = (&mut self.x[..n], &mut self.y[..n], &mut self.z[..n]);
        let (dx, dy, dz) = (&mut self.dx[..m], &mut self.dy[..m], &mut self.dz[..m]);
        let (lambda, upper) = (&mut self.lambda[..m], &mut self.upper[..m]);
        // Unit directions and right-hand sides (Vec3::NEG_Y until a segment has a length).
        let mut ldx: Lane = [0.0; LANES];
        let mut ldy: Lane = [-1.0; LANES];
        let mut ldz: Lane = [0.0; LANES];
        for j in 0..m {
            let r = if j == 0 { &head_rest } else { &rest };
            let (x0, x1) = (&x[j], &x[j + 1]);
            let (y0, y1) = (&y[j], &y[j + 1]);
            let (z0, z1) = (&z[j], &z[j + 1]);
            let mut len: Lane = [0.0; LANES];
            for l in 0..LANES {
                let ex = x1[l] - x0[l];
                let ey = y1[l] - y0[l];
                let ez = z1[l] - z0[l];
                len[l] = ((ex * ex) + (ey * ey) + (ez * ez)).sqrt();
                let long = len[l] > 1e-7;
                let (qx, qy, qz) = (ex / len[l], ey / len[l], ez / len[l]);
                ldx[l] = if long { qx } else { ldx[l] };
                ldy[l] = if long { qy } else { ldy[l] };
                ldz[l] = if long { qz } else { ldz[l] };
            }
            dx[j] = ldx;
            dy[j] = ldy;
            dz[j] = ldz;
            for l in 0..LANES {
                lambda[j][l] = r[l] - len[l];
            }
        }
        let dots = |j: usize, k: usize| -> Lane {
            let (ax, ay, az, bx, by, bz) = (&dx[j], &dy[j], &dz[j], &dx[k], &dy[k], &dz[k]);
            core::array::from_fn(|l| (ax[l] * bx[l]) + (ay[l] * by[l]) + (az[l] * bz[l]))
        };
        // Forward elimination, row by row as in `project_chain` (w_0 = 0, interior 1, w_m = w_end).
        let mut prev_upper: Lane = [0.0; LANES];
        for j in 0..m {
            let wj: f32 = if j == 0 { 0.0 } else { 1.0 };
            let wk: Lane = if j + 1 == m { w_last } else { [1.0; LANES] };
            let lower: Lane = if j > 0 {
                let d = dots(j - 1, j);
                core::array::from_fn(|l| -wj * d[l])
            } else {
                [0.0; LANES]
            };
            let up: Lane = if j + 1 < m {
                let d = dots(j, j + 1);
                core::array::from_fn(|l| -wk[l] * d[l])
            } else {
                [0.0; LANES]
            };
            let carried: Lane = if j > 0 {
                let before = &lambda[j - 1];
                core::array::from_fn(|l| lower[l] * before[l])
            } else {
                [0.0; LANES]
            };
            let (row_upper, row_lambda) = (&mut upper[j], &mut lambda[j]);
            for l in 0..LANES {
                let denom = wj + wk[l] + CHAIN_COMPLIANCE - lower[l] * prev_upper[l];
                let inv = 1.0 / denom;
                row_upper[l] = up[l] * inv;
                row_lambda[l] = (row_lambda[l] - carried[l]) * inv;
                prev_upper[l] = row_upper[l];
            }
        }
        for j in (0..m - 1).rev() {
            let next = lambda[j + 1];
            let (row_upper, row_lambda) = (&upper[j], &mut lambda[j]);
            for l in 0..LANES {
                row_lambda[l] -= row_upper[l] * next[l];
            }
        }
        let mut max_lambda: Lane = [0.0; LANES];
        for row in lambda.iter() {
            for l in 0..LANES {
                max_lambda[l] = max_lambda[l].max(row[l].abs());
            }
        }
        // x_i += w_i·(λ_{i−1}·d_{i−1} − λ_i·d_i); point 0 is pinned, interior points weigh 1.
        let s = 1.0 * CHAIN_RELAXATION;
        for i in 1..m {
            let (a, b) = (&lambda[i - 1], &lambda[i]);
            let (ax, ay, az) = (&dx[i - 1], &dy[i - 1], &dz[i - 1]);
            let (bx, by, bz) = (&dx[i], &dy[i], &dz[i]);
            let (px, py, pz) = (&mut x[i], &mut y[i], &mut z[i]);
            for l in 0..LANES {
                let ex = (0.0 + a[l] * ax[l]) - b[l] * bx[l];
                let ey = (0.0 + a[l] * ay[l]) - b[l] * by[l];
                let ez = (0.0 + a[l] * az[l]) - b[l] * bz[l];
                px[l] += ex * s;
                py[l] += ey * s;
                pz[l] += ez * s;
            }
        }
        {
            let a = &lambda[m - 1];
            let (ax, ay, az) = (&dx[m - 1], &dy[m - 1], &dz[m - 1]);
            let (px, py, pz) = (&mut x[m], &mut y[m], &mut z[m]);
            for l in 0..LANES {
                let wi = w_last[l];
                let s = wi * CHAIN_RELAXATION;
                let nx = px[l] + (0.0 + a[l] * ax[l]) * s;
                let ny = py[l] + (0.0 + a[l] * ay[l]) * s;
                let nz = pz[l] + (0.0 + a[l] * az[l]) * s;
                let keep = wi <= 0.0;
                px[l] = if keep { px[l] } else { nx };
                py[l] = if keep { py[l] } else { ny };
                pz[l] = if keep { pz[l] } else { nz };
            }
        }
        let c = core::array::from_fn(|l| {
            -lambda[m - 1][l] * Vec3::new(dx[m - 1][l], dy[m - 1][l], dz[m - 1][l])
        });
        (c, max_lambda)
    }

    /// The ground push-out of [`super::collide`] on every lane's points `1..free_end`.
    fn ground(&mut self, n: usize, params: &[LaneParams; LANES]) {
        for i in 1..n {
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
