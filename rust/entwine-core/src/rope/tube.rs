//! Tube geometry around a rope's points: rings of vertices along the (optionally Catmull-Rom smoothed)
//! centre line, framed by parallel transport so the tube does not twist.
//!
//! The vertex count is fixed by the capacity (`rings × (sides + 1)`, the seam duplicated for UVs), so a
//! renderer can allocate its mesh once and update it in place; rings past the active rope collapse onto
//! its end and draw nothing.

use glam::Vec3;

use super::MAX_CAPACITY;

/// A tube builder with its buffers allocated once.
#[derive(Clone, Debug)]
pub struct Tube {
    sides: usize,
    subdivisions: usize,
    max_rings: usize,
    centres: Vec<Vec3>,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec3>,
    /// (cos, sin) of each vertex's angle around a ring, computed once.
    around: Vec<(f32, f32)>,
    active_rings: usize,
    written_rings: usize,
}

impl Tube {
    /// Returns a builder for ropes of up to `max_points` points (clamped to 2..=[`MAX_CAPACITY`], the
    /// most a rope holds), with `sides` vertices around
    /// (clamped to 3..=64) and `subdivisions` rings per segment (clamped to 1..=8; above 1 the centre
    /// line is a Catmull-Rom spline through the points).
    #[must_use]
    pub fn new(max_points: usize, sides: usize, subdivisions: usize) -> Self {
        let sides = sides.clamp(3, 64);
        let subdivisions = subdivisions.clamp(1, 8);
        let max_rings = (max_points.clamp(2, MAX_CAPACITY) - 1) * subdivisions + 1;
        let verts = max_rings * (sides + 1);
        Self {
            sides,
            subdivisions,
            max_rings,
            centres: vec![Vec3::ZERO; max_rings],
            positions: vec![Vec3::ZERO; verts],
            normals: vec![Vec3::Y; verts],
            tangents: vec![Vec3::NEG_Y; verts],
            around: (0..=sides)
                .map(|k| {
                    let angle = core::f32::consts::TAU * k as f32 / sides as f32;
                    (angle.cos(), angle.sin())
                })
                .collect(),
            active_rings: 0,
            written_rings: 0,
        }
    }

    /// Returns the vertices around the tube (the ring has one more, duplicating the seam).
    #[must_use]
    pub fn sides(&self) -> usize {
        self.sides
    }

    /// Returns the number of rings the buffers hold.
    #[must_use]
    pub fn max_rings(&self) -> usize {
        self.max_rings
    }

    /// Returns the rings per segment.
    #[must_use]
    pub fn subdivisions(&self) -> usize {
        self.subdivisions
    }

    /// Returns the number of vertices (fixed).
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Returns the vertex positions of the last [`Tube::build`].
    #[must_use]
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Returns the vertex normals (unit) of the last [`Tube::build`].
    #[must_use]
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }

    /// Returns the vertex tangents (unit, along the rope) of the last [`Tube::build`].
    #[must_use]
    pub fn tangents(&self) -> &[Vec3] {
        &self.tangents
    }

    /// Returns the rings used by the last build (the rest are collapsed).
    #[must_use]
    pub fn active_rings(&self) -> usize {
        self.active_rings
    }

    /// Returns the rings the last build wrote (see [`Tube::build_upto`]); the vertices of the rings
    /// past them were left as they were.
    #[must_use]
    pub fn written_rings(&self) -> usize {
        self.written_rings
    }

    /// Returns the triangle indices (counter-clockwise seen from outside) for every ring pair; call
    /// once when creating the mesh.
    #[must_use]
    pub fn indices(&self) -> Vec<i32> {
        let ring = self.sides + 1;
        let mut out = Vec::with_capacity((self.max_rings - 1) * self.sides * 6);
        for r in 0..self.max_rings - 1 {
            for k in 0..self.sides {
                let a = (r * ring + k) as i32;
                let b = a + 1;
                let c = a + ring as i32;
                let d = c + 1;
                out.extend_from_slice(&[a, b, c, b, d, c]);
            }
        }
        out
    }

    /// Returns the texture coordinates (u around, v along in segments); call once.
    #[must_use]
    pub fn uvs(&self) -> Vec<[f32; 2]> {
        let ring = self.sides + 1;
        (0..self.vertex_count())
            .map(|i| {
                [
                    (i % ring) as f32 / self.sides as f32,
                    (i / ring) as f32 / self.subdivisions as f32,
                ]
            })
            .collect()
    }

    /// Rebuilds the vertices around `points` (world or local metres) with `radius` metres; non-finite
    /// points are skipped. Returns the axis-aligned bounds `(min, max)` of the tube.
    pub fn build(&mut self, points: &[Vec3], radius: f32) -> (Vec3, Vec3) {
        self.build_upto(points, radius, usize::MAX)
    }

    /// Like [`Tube::build`], but writes only the active rings, one collapsed ring after them, and
    /// the rings up to `at_least` (clamped to the buffers); [`Tube::written_rings`] says how many.
    /// The rings past those keep their vertices, which is all a renderer needs when it uploads only
    /// the rings written: a ring pair whose rings are both collapsed (each onto one point) draws only
    /// degenerate triangles, wherever those points are. Pass the rings written last time as
    /// `at_least` so that rings the rope no longer reaches are collapsed.
    pub fn build_upto(&mut self, points: &[Vec3], radius: f32, at_least: usize) -> (Vec3, Vec3) {
        let radius = if radius.is_finite() {
            radius.max(0.0)
        } else {
            0.0
        };
        let max_points = (self.max_rings - 1) / self.subdivisions + 1;
        let n = points.len().min(max_points);
        if n == 0 || !points[..n].iter().all(|p| p.is_finite()) {
            self.positions.fill(Vec3::ZERO);
            self.active_rings = 0;
            self.written_rings = self.max_rings;
            return (Vec3::ZERO, Vec3::ZERO);
        }
        // Centre line.
        let s = self.subdivisions;
        let mut rings = 0;
        for i in 0..n {
            if i + 1 == n {
                self.centres[rings] = points[i];
                rings += 1;
                break;
            }
            let p0 = points[i.saturating_sub(1)];
            let p1 = points[i];
            let p2 = points[i + 1];
            let p3 = points[(i + 2).min(n - 1)];
            for k in 0..s {
                let t = k as f32 / s as f32;
                self.centres[rings] = catmull_rom(p0, p1, p2, p3, t);
                rings += 1;
            }
        }
        self.active_rings = rings;
        // Frames by parallel transport.
        let ring = self.sides + 1;
        let mut normal = Vec3::ZERO;
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        let written = (rings + 1).max(at_least).min(self.max_rings);
        self.written_rings = written;
        for r in 0..written {
            let rc = r.min(rings - 1);
            let c = self.centres[rc];
            let tangent = (self.centres[(rc + 1).min(rings - 1)]
                - self.centres[rc.saturating_sub(1)])
            .try_normalize()
            .unwrap_or(Vec3::NEG_Y);
            let projected = normal - tangent * normal.dot(tangent);
            normal = projected.try_normalize().unwrap_or_else(|| {
                let seed = if tangent.x.abs() < 0.9 {
                    Vec3::X
                } else {
                    Vec3::Z
                };
                (seed - tangent * seed.dot(tangent)).normalize_or(Vec3::Z)
            });
            let binormal = tangent.cross(normal);
            let r_used = if r < rings { radius } else { 0.0 };
            for (k, (cos, sin)) in self.around.iter().enumerate() {
                let dir = normal * *cos + binormal * *sin;
                let v = r * ring + k;
                self.positions[v] = c + dir * r_used;
                self.normals[v] = dir;
                self.tangents[v] = tangent;
            }
            if r < rings {
                lo = lo.min(c - Vec3::splat(radius));
                hi = hi.max(c + Vec3::splat(radius));
            }
        }
        (lo, hi)
    }
}

/// Returns the uniform Catmull-Rom spline through `p1` (t = 0) and `p2` (t = 1).
#[must_use]
pub fn catmull_rom(p0: Vec3, p1: Vec3, p2: Vec3, p3: Vec3, t: f32) -> Vec3 {
    let t2 = t * t;
    let t3 = t2 * t;
    0.5 * ((2.0 * p1)
        + (p2 - p0) * t
        + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2
        + (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catmull_rom_passes_through_the_points() {
        let (a, b, c, d) = (
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(2.0, 1.0, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        );
        assert!((catmull_rom(a, b, c, d, 0.0) - b).length() < 1e-6);
        assert!((catmull_rom(a, b, c, d, 1.0) - c).length() < 1e-6);
    }

    #[test]
    fn rings_sit_at_the_radius_around_the_centre_line() {
        let mut tube = Tube::new(8, 6, 3);
        let pts = [
            Vec3::ZERO,
            Vec3::new(0.0, -0.3, 0.0),
            Vec3::new(0.2, -0.5, 0.0),
        ];
        let (lo, hi) = tube.build(&pts, 0.05);
        assert_eq!(tube.active_rings(), 7);
        assert_eq!(tube.vertex_count(), tube.max_rings() * 7);
        // First ring: around the first point, radius 0.05, normals unit and radial.
        for k in 0..7 {
            let p = tube.positions()[k];
            assert!(((p - pts[0]).length() - 0.05).abs() < 1e-5);
            assert!((tube.normals()[k].length() - 1.0).abs() < 1e-5);
        }
        // Collapsed rings sit on the last point.
        let last = tube.positions()[tube.vertex_count() - 1];
        assert!((last - pts[2]).length() < 1e-5);
        assert!(lo.x <= -0.05 && hi.x >= 0.25 && lo.y <= -0.55);
        assert_eq!(tube.indices().len(), (tube.max_rings() - 1) * 6 * 6);
    }

    #[test]
    fn a_partial_build_matches_the_full_one_where_it_draws() {
        let pts: Vec<Vec3> = (0..10)
            .map(|i| {
                Vec3::new(
                    (i as f32 * 0.7).sin() * 0.2,
                    -0.3 * i as f32,
                    0.1 * i as f32,
                )
            })
            .collect();
        let mut full = Tube::new(32, 8, 3);
        let mut part = Tube::new(32, 8, 3);
        // The partial tube was longer before: its old rings must be collapsed again.
        part.build(&[Vec3::ZERO, Vec3::new(0.0, -9.0, 0.0)], 0.05);
        let before = part.written_rings();
        let a = full.build(&pts, 0.03);
        let b = part.build_upto(&pts, 0.03, 0);
        assert_eq!(a, b);
        assert_eq!(part.written_rings(), part.active_rings() + 1);
        assert!(before == part.max_rings() && part.written_rings() < before);
        let part_again = {
            let mut t = Tube::new(32, 8, 3);
            t.build(&[Vec3::ZERO, Vec3::new(0.0, -9.0, 0.0)], 0.05);
            let last = t.written_rings();
            t.build_upto(&pts, 0.03, last);
            t
        };
        let ring = full.sides() + 1;
        let n = part.written_rings() * ring;
        assert_eq!(&full.positions()[..n], &part.positions()[..n]);
        assert_eq!(&full.normals()[..n], &part.normals()[..n]);
        // With the previous extent passed, every ring is written and matches the full build.
        assert_eq!(full.positions(), part_again.positions());
        // Past the written rings every triangle is degenerate: each ring sits on one point.
        for r in part.written_rings() - 1..part.max_rings() {
            let first = part.positions()[r * ring];
            assert!(part.positions()[r * ring..(r + 1) * ring]
                .iter()
                .all(|p| *p == first));
        }
    }

    #[test]
    fn bad_points_build_an_empty_tube() {
        let mut tube = Tube::new(4, 4, 1);
        tube.build(&[Vec3::ZERO, Vec3::NAN], 0.1);
        assert_eq!(tube.active_rings(), 0);
        assert!(tube.positions().iter().all(|p| *p == Vec3::ZERO));
        tube.build(&[], 0.1);
        assert_eq!(tube.active_rings(), 0);
    }
}
