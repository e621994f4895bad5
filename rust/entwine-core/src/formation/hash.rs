//! A uniform-grid spatial hash over 2D points, rebuilt each tick in O(N) with a counting sort,
//! so neighbour queries within a radius cost O(1) per agent on average.
//!
//! Cells are twice the query radius, so the disc of radius r around a point always lies in the
//! 2×2 block of cells nearest to it: a query reads four buckets.
//!
//! A capped query ([`SpatialHash::for_each_point_near_capped`]) visits at most a fixed number of
//! the block's points, a window over them placed by a salt: points piled into one cell (a crowd
//! spawned at one point) then cost O(cap) per query instead of O(N).
//!
//! When the points' bounds hold few enough cells (at most four per point), the buckets are the
//! cells themselves, row by row (a dense grid: no hashing, no shared buckets), and a query reads
//! two runs of two neighbouring cells; farther-flung points are hashed.

use glam::Vec2;

/// Points bucketed by grid cell. Buffers are kept between rebuilds (no allocation once warm).
#[derive(Default, Debug, Clone)]
pub struct SpatialHash {
    cell: f32,
    mask: usize,
    bits: u32,
    start: Vec<u32>,
    items: Vec<u32>,
    /// Each item's point, in the items' order (a query reads them without looking them up).
    item_points: Vec<Vec2>,
    bucket_of: Vec<u32>,
    /// The dense grid's first cell (column, row) and its width and height in cells, when dense.
    grid: Option<Grid>,
}

/// A dense grid's extent, in cells.
#[derive(Clone, Copy, Debug)]
struct Grid {
    x0: i32,
    y0: i32,
    w: i32,
    h: i32,
}

const SKIP: u32 = u32::MAX;

impl SpatialHash {
    /// Rebuilds the hash over `points` for queries of radius `radius` metres; points for which
    /// `include(i)` is false, and non-finite points, are left out.
    pub fn rebuild(&mut self, points: &[Vec2], radius: f32, include: impl Fn(usize) -> bool) {
        let radius = if radius.is_finite() && radius > 1e-3 {
            radius
        } else {
            1.0
        };
        self.cell = 2.0 * radius;
        self.grid = self.dense_grid(points, &include);
        let buckets = match self.grid {
            Some(g) => (g.w * g.h) as usize,
            None => (points.len() * 2).next_power_of_two().max(16),
        };
        self.mask = buckets.next_power_of_two() - 1;
        self.bits = buckets.next_power_of_two().trailing_zeros();
        self.start.clear();
        // Room for the largest dense grid (which grows and shrinks as the points move) and for
        // the hash, so a rebuild allocates only when the point count grows.
        self.start.reserve(4 * points.len().max(16) + 1);
        self.start.resize(buckets + 1, 0);
        // Count each bucket's points into its own entry, sum the counts up (each entry is then
        // its bucket's end), and fill every bucket from its end backwards, walking the points
        // backwards: each entry ends at its bucket's start, with the points in index order.
        self.bucket_of.clear();
        self.bucket_of.resize(points.len(), SKIP);
        for (i, p) in points.iter().enumerate() {
            if include(i) && p.is_finite() {
                let c = *p / self.cell;
                let b = self.bucket(floor_i32(c.x), floor_i32(c.y));
                self.bucket_of[i] = b as u32;
                self.start[b] += 1;
            }
        }
        let mut total = 0;
        for s in &mut self.start[..buckets] {
            total += *s;
            *s = total;
        }
        self.start[buckets] = total;
        self.items.clear();
        self.items.resize(total as usize, 0);
        self.item_points.clear();
        self.item_points.resize(total as usize, Vec2::ZERO);
        for (i, b) in self.bucket_of.iter().enumerate().rev() {
            if *b != SKIP {
                let at = &mut self.start[*b as usize];
                *at -= 1;
                self.items[*at as usize] = i as u32;
                self.item_points[*at as usize] = points[i];
            }
        }
    }

    /// Returns the dense grid over the included points' cells when it has at most four cells per
    /// point (and at least one point), else `None` (hash).
    fn dense_grid(&self, points: &[Vec2], include: &impl Fn(usize) -> bool) -> Option<Grid> {
        let (mut lo, mut hi) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
        for (i, p) in points.iter().enumerate() {
            if include(i) && p.is_finite() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
        if lo.x > hi.x {
            return None;
        }
        let (a, b) = (lo / self.cell, hi / self.cell);
        let (x0, y0) = (floor_i32(a.x), floor_i32(a.y));
        let w = i64::from(floor_i32(b.x)) - i64::from(x0) + 1;
        let h = i64::from(floor_i32(b.y)) - i64::from(y0) + 1;
        let limit = 4 * points.len().max(16) as i64;
        // Far-out points would saturate floor_i32: those are hashed.
        let near = a.abs().max_element() < 1e8 && b.abs().max_element() < 1e8;
        (near && w * h <= limit).then_some(Grid {
            x0,
            y0,
            w: w as i32,
            h: h as i32,
        })
    }

    #[inline]
    fn bucket(&self, x: i32, y: i32) -> usize {
        if let Some(g) = self.grid {
            // Only cells inside the grid are asked for (see for_each_near).
            return ((y - g.y0) * g.w + (x - g.x0)) as usize;
        }
        // Multiplicative hashing; the top bits are the well-mixed ones.
        let h = (x as u32)
            .wrapping_mul(0x9E37_79B1)
            .wrapping_add((y as u32).wrapping_mul(0x85EB_CA77));
        let h = (h ^ (h >> 15)).wrapping_mul(0x2C1B_3C6D);
        ((h >> (32 - self.bits.clamp(1, 31))) as usize) & self.mask
    }

    /// Calls `visit(j)` once for every hashed point in the 2×2 cells around `p` (a superset of the
    /// points within the rebuild radius of `p`; callers check the distance).
    #[inline]
    pub fn for_each_near(&self, p: Vec2, mut visit: impl FnMut(usize)) {
        self.for_each_point_near(p, |j, _| visit(j));
    }

    /// Calls `visit(j, point)` as [`SpatialHash::for_each_near`] calls `visit(j)`, with point `j`
    /// as it was hashed.
    #[inline]
    pub fn for_each_point_near(&self, p: Vec2, mut visit: impl FnMut(usize, Vec2)) {
        let runs = self.runs_near(p);
        for &(s, e) in runs.as_slice() {
            let (s, e) = (s as usize, e as usize);
            for (&j, &q) in self.items[s..e].iter().zip(&self.item_points[s..e]) {
                visit(j as usize, q);
            }
        }
    }

    /// Calls `visit(j)` as [`SpatialHash::for_each_point_near_capped`] calls `visit(j, point)`.
    #[inline]
    pub fn for_each_near_capped(
        &self,
        p: Vec2,
        cap: usize,
        salt: u32,
        mut visit: impl FnMut(usize),
    ) -> (usize, usize) {
        self.for_each_point_near_capped(p, cap, salt, |j, _| visit(j))
    }

    /// Calls `visit(j, point)` for at most `cap` of the points [`SpatialHash::for_each_point_near`]
    /// visits around `p`, and returns how many it visited and how many there were.
    ///
    /// The rule: when the 2×2 block holds at most `cap` points, every one is visited, in the same
    /// order as [`SpatialHash::for_each_point_near`]. A fuller block of M points, taken as one
    /// list in that same order, is sampled by a window: the `cap` points from position
    /// `o = ⌊salt·M / 2³²⌋` on, wrapping from the list's end to its start. Within a cell the points
    /// are in index order, not in any spatial order, so a window is an arbitrary subset of where
    /// it falls; as `salt` runs over uniformly spread values every point is visited equally often
    /// (`cap` times in M consecutive starts). A window reads consecutive memory, and the cost is
    /// O(`cap`) whatever the block holds. `cap` 0 visits nothing.
    #[inline]
    pub fn for_each_point_near_capped(
        &self,
        p: Vec2,
        cap: usize,
        salt: u32,
        mut visit: impl FnMut(usize, Vec2),
    ) -> (usize, usize) {
        let runs = self.runs_near(p);
        let total = runs.count();
        if total <= cap {
            for &(s, e) in runs.as_slice() {
                let (s, e) = (s as usize, e as usize);
                for (&j, &q) in self.items[s..e].iter().zip(&self.item_points[s..e]) {
                    visit(j as usize, q);
                }
            }
            return (total, total);
        }
        // The window starts `offset` points in and runs on, wrapping from the last run to the
        // first; it is shorter than the block, so it visits no point twice.
        let runs = runs.as_slice();
        let mut skip = ((u64::from(salt) * total as u64) >> 32) as usize;
        let mut run = 0;
        while skip >= (runs[run].1 - runs[run].0) as usize {
            skip -= (runs[run].1 - runs[run].0) as usize;
            run += 1;
        }
        let mut left = cap;
        while left > 0 {
            let (s, e) = (runs[run].0 as usize + skip, runs[run].1 as usize);
            let e = e.min(s + left);
            for (&j, &q) in self.items[s..e].iter().zip(&self.item_points[s..e]) {
                visit(j as usize, q);
            }
            left -= e - s;
            skip = 0;
            run = (run + 1) % runs.len();
        }
        (cap, total)
    }

    /// Returns the runs of `items` that hold the points in the 2×2 cells around `p`, in the order
    /// a query visits them (none for a non-finite `p` or an empty hash).
    #[inline]
    fn runs_near(&self, p: Vec2) -> Runs {
        let mut runs = Runs::default();
        if !p.is_finite() || self.start.is_empty() {
            return runs;
        }
        // The block whose centre is the cell corner nearest to p.
        let c = p / self.cell - Vec2::splat(0.5);
        let (cx, cy) = (floor_i32(c.x), floor_i32(c.y));
        if let Some(g) = self.grid {
            // Rows cy and cy + 1, columns cx and cx + 1, clipped to the grid: in each row the
            // two cells' items are one run of `items`, in the order a hash visits them.
            let (xa, xb) = (cx.max(g.x0), cx.saturating_add(1).min(g.x0 + g.w - 1));
            if xa > xb {
                return runs;
            }
            for y in [cy, cy.saturating_add(1)] {
                if y < g.y0 || y >= g.y0 + g.h {
                    continue;
                }
                let (s, e) = (self.bucket(xa, y), self.bucket(xb, y) + 1);
                runs.push(self.start[s], self.start[e]);
            }
            return runs;
        }
        let mut seen = [usize::MAX; 4];
        let mut count = 0;
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let b = self.bucket(cx.saturating_add(dx), cy.saturating_add(dy));
            // Distinct cells can share a bucket: visit each bucket once.
            if seen[..count].contains(&b) {
                continue;
            }
            seen[count] = b;
            count += 1;
            runs.push(self.start[b], self.start[b + 1]);
        }
        runs
    }
}

/// Up to four runs `start..end` of a hash's `items`: the buckets one query reads.
#[derive(Clone, Copy, Debug, Default)]
struct Runs {
    at: [(u32, u32); 4],
    len: usize,
}

impl Runs {
    #[inline]
    fn push(&mut self, start: u32, end: u32) {
        if end > start {
            self.at[self.len] = (start, end);
            self.len += 1;
        }
    }

    #[inline]
    fn as_slice(&self) -> &[(u32, u32)] {
        &self.at[..self.len]
    }

    /// Returns how many items the runs hold.
    #[inline]
    fn count(&self) -> usize {
        self.as_slice().iter().map(|(s, e)| (e - s) as usize).sum()
    }
}

/// Returns ⌊x⌋ as an i32, saturating far outside the i32 range (no libm call).
#[inline]
fn floor_i32(x: f32) -> i32 {
    let x = x.clamp(-1e9, 1e9);
    let i = x as i32;
    if (i as f32) > x {
        i - 1
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::rng::Rng;

    #[test]
    fn finds_every_neighbour_within_a_cell_exactly_once() {
        let mut rng = Rng::new(9);
        let pts: Vec<Vec2> = (0..500).map(|_| rng.vec2() * 8.0).collect();
        let mut hash = SpatialHash::default();
        hash.rebuild(&pts, 0.7, |i| i != 3);
        for (i, p) in pts.iter().enumerate() {
            let mut got = Vec::new();
            hash.for_each_near(*p, |j| {
                if j != i && pts[j].distance(*p) < 0.7 {
                    got.push(j);
                }
            });
            let mut sorted = got.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), got.len(), "no duplicates");
            let want: Vec<usize> = (0..pts.len())
                .filter(|&j| j != i && j != 3 && pts[j].distance(*p) < 0.7)
                .collect();
            assert_eq!(sorted, want);
        }
    }

    /// Every point's neighbours within `r`, by the hash and by brute force, for `pts`.
    fn check_neighbours(pts: &[Vec2], r: f32, dense: bool) {
        let mut hash = SpatialHash::default();
        hash.rebuild(pts, r, |_| true);
        assert_eq!(hash.grid.is_some(), dense, "the grid is dense: {dense}");
        for (i, p) in pts.iter().enumerate() {
            let mut got = Vec::new();
            hash.for_each_near(*p, |j| {
                if j != i && pts[j].distance(*p) < r {
                    got.push(j);
                }
            });
            got.sort_unstable();
            let want: Vec<usize> = (0..pts.len())
                .filter(|&j| j != i && pts[j].distance(*p) < r)
                .collect();
            assert_eq!(got, want, "point {i} at {p}");
        }
    }

    #[test]
    fn dense_grids_and_hashes_find_the_same_neighbours() {
        let mut rng = Rng::new(4);
        // A squad's patch (dense), negative coordinates included.
        let patch: Vec<Vec2> = (0..800)
            .map(|_| rng.vec2() * 12.0 - Vec2::splat(3.0))
            .collect();
        check_neighbours(&patch, 0.4, true);
        // Two patches a kilometre apart: too many cells between them, so hashed.
        let far: Vec<Vec2> = (0..800)
            .map(|i| rng.vec2() * 10.0 + Vec2::splat(if i % 2 == 0 { 0.0 } else { 1000.0 }))
            .collect();
        check_neighbours(&far, 0.4, false);
        // A single row (one cell high) and a single point.
        let row: Vec<Vec2> = (0..50).map(|i| Vec2::new(i as f32 * 0.3, 2.0)).collect();
        check_neighbours(&row, 0.4, true);
        check_neighbours(&[Vec2::new(-7.0, 3.0)], 0.4, true);
    }

    #[test]
    fn a_query_outside_the_dense_grid_finds_only_points_in_reach() {
        let pts: Vec<Vec2> = (0..100)
            .map(|i| Vec2::new((i % 10) as f32, (i / 10) as f32))
            .collect();
        let mut hash = SpatialHash::default();
        hash.rebuild(&pts, 0.5, |_| true);
        assert!(hash.grid.is_some());
        let mut near = Vec::new();
        hash.for_each_near(Vec2::new(-0.3, -0.3), |j| near.push(j));
        assert!(near.contains(&0), "{near:?}");
        let mut n = 0;
        hash.for_each_near(Vec2::new(50.0, -40.0), |_| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn a_capped_query_visits_a_small_block_whole_and_in_order() {
        let mut rng = Rng::new(12);
        let pts: Vec<Vec2> = (0..400).map(|_| rng.vec2() * 10.0).collect();
        let mut hash = SpatialHash::default();
        hash.rebuild(&pts, 0.4, |_| true);
        for (i, p) in pts.iter().enumerate() {
            let (mut all, mut capped) = (Vec::new(), Vec::new());
            hash.for_each_point_near(*p, |j, q| all.push((j, q)));
            let got = hash.for_each_point_near_capped(*p, 64, i as u32, |j, q| capped.push((j, q)));
            assert!(all.len() <= 64, "a block this sparse holds few points");
            assert_eq!(got, (all.len(), all.len()));
            assert_eq!(capped, all, "point {i}");
        }
    }

    #[test]
    fn a_capped_query_samples_a_crowded_block_evenly() {
        // 1,000 points at one point: every query visits exactly `cap` distinct points, and over
        // salts that start the sample at each position once, every point is visited `cap` times.
        let (m, cap) = (1000usize, 32usize);
        let pts = vec![Vec2::new(3.0, -2.0); m];
        let mut hash = SpatialHash::default();
        hash.rebuild(&pts, 0.4, |_| true);
        let mut visits = vec![0usize; m];
        for t in 0..m as u64 {
            let salt = (t << 32).div_ceil(m as u64) as u32;
            let mut seen = Vec::new();
            let got = hash.for_each_point_near_capped(pts[0], cap, salt, |j, q| {
                assert_eq!(q, pts[j]);
                seen.push(j);
            });
            assert_eq!(got, (cap, m));
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), cap, "distinct points");
            for j in seen {
                visits[j] += 1;
            }
        }
        assert!(visits.iter().all(|&v| v == cap), "{visits:?}");
        let mut n = 0;
        hash.for_each_near_capped(pts[0], 0, 7, |_| n += 1);
        assert_eq!(n, 0, "cap 0 visits nothing");
    }

    #[test]
    fn survives_hostile_points() {
        let mut hash = SpatialHash::default();
        let pts = [Vec2::NAN, Vec2::splat(1e30), Vec2::splat(-1e30), Vec2::ZERO];
        hash.rebuild(&pts, f32::NAN, |_| true);
        let mut near = Vec::new();
        hash.for_each_near(Vec2::ZERO, |j| near.push(j));
        assert!(near.contains(&3) && !near.contains(&0), "{near:?}");
        let mut n = 0;
        hash.for_each_near(Vec2::NAN, |_| n += 1);
        assert_eq!(n, 0);
        hash.for_each_near(Vec2::splat(1e30), |_| n += 1);
        assert!(n >= 1);
    }
}
