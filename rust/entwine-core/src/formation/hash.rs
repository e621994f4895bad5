//! A uniform-grid spatial hash over 2D points, rebuilt each tick in O(N) with a counting sort,
//! so neighbour queries within a radius cost O(1) per agent on average.
//!
//! Cells are twice the query radius, so the disc of radius r around a point always lies in the
//! 2×2 block of cells nearest to it: a query reads four buckets.

use glam::Vec2;

/// Points bucketed by grid cell. Buffers are kept between rebuilds (no allocation once warm).
#[derive(Default, Debug, Clone)]
pub struct SpatialHash {
    cell: f32,
    mask: usize,
    bits: u32,
    start: Vec<u32>,
    items: Vec<u32>,
    bucket_of: Vec<u32>,
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
        let buckets = (points.len() * 2).next_power_of_two().max(16);
        self.mask = buckets - 1;
        self.bits = buckets.trailing_zeros();
        self.start.clear();
        self.start.resize(buckets + 1, 0);
        self.bucket_of.clear();
        for (i, p) in points.iter().enumerate() {
            if include(i) && p.is_finite() {
                let c = *p / self.cell;
                let b = self.bucket(floor_i32(c.x), floor_i32(c.y));
                self.bucket_of.push(b as u32);
                self.start[b + 1] += 1;
            } else {
                self.bucket_of.push(SKIP);
            }
        }
        for b in 0..buckets {
            self.start[b + 1] += self.start[b];
        }
        self.items.clear();
        self.items.resize(self.start[buckets] as usize, 0);
        // Fill using `start` as cursors, then shift back.
        for (i, b) in self.bucket_of.iter().enumerate() {
            if *b != SKIP {
                let at = &mut self.start[*b as usize];
                self.items[*at as usize] = i as u32;
                *at += 1;
            }
        }
        for b in (1..=buckets).rev() {
            self.start[b] = self.start[b - 1];
        }
        self.start[0] = 0;
    }

    #[inline]
    fn bucket(&self, x: i32, y: i32) -> usize {
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
        if !p.is_finite() || self.start.is_empty() {
            return;
        }
        // The block whose centre is the cell corner nearest to p.
        let c = p / self.cell - Vec2::splat(0.5);
        let (cx, cy) = (floor_i32(c.x), floor_i32(c.y));
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
            let (s, e) = (self.start[b] as usize, self.start[b + 1] as usize);
            for &j in &self.items[s..e] {
                visit(j as usize);
            }
        }
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
