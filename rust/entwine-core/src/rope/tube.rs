//! Tube geometry around a rope's points: rings of vertices along the (optionally Catmull-Rom smoothed)
//! centre line, framed by parallel transport so the tube does not twist.
//!
//! The vertex count is fixed by the capacity (`rings × (sides + 1)`, the seam duplicated for UVs), so a
//! renderer can allocate its mesh once and update it in place; rings past the active rope collapse onto
//! its end and draw nothing.

use glam::Vec3;

use super::{MAX_CAPACITY, MIN_CAPACITY};

/// Fewest vertices around a tube.
pub const MIN_SIDES: usize = 3;
/// Most vertices around a tube.
pub const MAX_SIDES: usize = 64;
/// Fewest rings per rope segment (1: a ring at each point).
pub const MIN_SUBDIVISIONS: usize = 1;
/// Most rings per rope segment.
pub const MAX_SUBDIVISIONS: usize = 8;

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
    /// cos and sin of each vertex's angle around a ring, computed once.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// Each written ring's centre and tangent (along the rope) from the last [`Tube::frame`], and
    /// the radius of the active rings (0 past them).
    ring_centres: Vec<Vec3>,
    ring_tangents: Vec<Vec3>,
    radius: f32,
    active_rings: usize,
    written_rings: usize,
}

impl Tube {
    /// Returns a builder for ropes of up to `max_points` points (clamped to
    /// [`MIN_CAPACITY`]..=[`MAX_CAPACITY`], the most a rope holds), with `sides` vertices around
    /// (clamped to [`MIN_SIDES`]..=[`MAX_SIDES`]) and `subdivisions` rings per segment (clamped to
    /// [`MIN_SUBDIVISIONS`]..=[`MAX_SUBDIVISIONS`]; above 1 the centre
    /// line is a Catmull-Rom spline through the points).
    #[must_use]
    pub fn new(max_points: usize, sides: usize, subdivisions: usize) -> Self {
        let sides = sides.clamp(MIN_SIDES, MAX_SIDES);
        let subdivisions = subdivisions.clamp(MIN_SUBDIVISIONS, MAX_SUBDIVISIONS);
        let max_rings = (max_points.clamp(MIN_CAPACITY, MAX_CAPACITY) - 1) * subdivisions + 1;
        let verts = max_rings * (sides + 1);
        Self {
            sides,
            subdivisions,
            max_rings,
            centres: vec![Vec3::ZERO; max_rings],
            positions: vec![Vec3::ZERO; verts],
            normals: vec![Vec3::Y; verts],
            tangents: vec![Vec3::NEG_Y; verts],
            cos: ring_table(sides, f32::cos),
            sin: ring_table(sides, f32::sin),
            ring_centres: vec![Vec3::ZERO; max_rings],
            ring_tangents: vec![Vec3::NEG_Y; max_rings],
            radius: 0.0,
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
        let bounds = self.frame(points, radius, at_least);
        if self.active_rings == 0 {
            self.positions.fill(Vec3::ZERO);
            return bounds;
        }
        let ring = self.sides + 1;
        let mut normal = Vec3::ZERO;
        for r in 0..self.written_rings {
            let (c, tangent, next, binormal, r_used) = self.ring_frame(r, normal);
            normal = next;
            let vertices = r * ring..(r + 1) * ring;
            let out = self.positions[vertices.clone()]
                .iter_mut()
                .zip(&mut self.normals[vertices.clone()])
                .zip(&mut self.tangents[vertices]);
            for (((p, n), t), (cos, sin)) in out.zip(self.cos.iter().zip(&self.sin)) {
                let dir = normal * *cos + binormal * *sin;
                *p = c + dir * r_used;
                *n = dir;
                *t = tangent;
            }
        }
        bounds
    }

    /// Returns how many of `points` the tube frames (the first ones, as many as its rings hold), or
    /// `None` when that is none or any of them is not finite (the tube is then empty).
    fn framed_points(&self, points: &[Vec3]) -> Option<usize> {
        let max_points = (self.max_rings - 1) / self.subdivisions + 1;
        let n = points.len().min(max_points);
        if n == 0 || !points[..n].iter().all(|p| p.is_finite()) {
            None
        } else {
            Some(n)
        }
    }

    /// Frames the rings around `points` with `radius` metres, as [`Tube::build_upto`] does, without
    /// writing any vertex: the centre line (Catmull-Rom smoothed) and the centre and tangent of each
    /// ring to write (the normals, carried along by parallel transport, are worked out with the
    /// vertices: that chain then overlaps their work). Sets
    /// [`Tube::active_rings`] and [`Tube::written_rings`]; [`Tube::write_vertices`] then writes the
    /// vertices straight into a renderer's buffers. Returns the tube's bounds `(min, max)`. Non-finite
    /// points, or none, frame an empty tube: every ring collapsed onto the origin.
    pub fn frame(&mut self, points: &[Vec3], radius: f32, at_least: usize) -> (Vec3, Vec3) {
        let radius = tube_radius(radius);
        let Some(n) = self.framed_points(points) else {
            self.ring_centres.fill(Vec3::ZERO);
            self.radius = 0.0;
            self.active_rings = 0;
            self.written_rings = self.max_rings;
            return (Vec3::ZERO, Vec3::ZERO);
        };
        self.radius = radius;
        let rings = centre_line(&points[..n], self.subdivisions, &mut self.centres);
        self.active_rings = rings;
        let written = (rings + 1).max(at_least).min(self.max_rings);
        self.written_rings = written;
        // Centres and tangents first: they do not depend on one another, so their square roots and
        // divisions overlap; only the normals form a chain.
        let centres = &self.centres[..rings];
        for (r, (c, t)) in self.ring_centres[..written]
            .iter_mut()
            .zip(&mut self.ring_tangents[..written])
            .enumerate()
        {
            let rc = r.min(rings - 1);
            *c = centres[rc];
            *t = ring_tangent(centres, rc);
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for c in centres {
            lo = lo.min(*c - Vec3::splat(radius));
            hi = hi.max(*c + Vec3::splat(radius));
        }
        (lo, hi)
    }

    /// Returns ring `r`'s frame as the last [`Tube::frame`] framed it: (centre, tangent, normal,
    /// binormal, radius drawn), its normal carried along from the previous ring's `normal` (zero for
    /// the first ring); a ring past the rope's is drawn collapsed (radius 0).
    #[inline(always)]
    fn ring_frame(&self, r: usize, normal: Vec3) -> (Vec3, Vec3, Vec3, Vec3, f32) {
        let (c, tangent) = (self.ring_centres[r], self.ring_tangents[r]);
        let normal = transported(normal, tangent);
        let binormal = tangent.cross(normal);
        let r_used = if r < self.active_rings {
            self.radius
        } else {
            0.0
        };
        (c, tangent, normal, binormal, r_used)
    }

    /// Writes the vertices of the rings the last [`Tube::frame`] framed ([`Tube::written_rings`],
    /// from the first) into a renderer's two byte streams laid out as `layout` says: the same
    /// vertices [`Tube::build_upto`] builds, bit for bit, encoded in `layout`, without
    /// going through [`Tube::positions`] and [`Tube::normals`] (which this leaves as they were).
    /// `positions` and `normals` should hold that many vertices' strides: nothing is written past
    /// them, and nothing at all when `layout` does not [`VertexLayout::fits`]. Every vertex of a ring
    /// has the ring's tangent (the binormal's sign +1). Allocates nothing.
    pub fn write_vertices(&self, layout: &VertexLayout, positions: &mut [u8], normals: &mut [u8]) {
        if !layout.fits() {
            return;
        }
        let ring = self.sides + 1;
        let rings = self
            .written_rings
            .min(positions.len() / (layout.position_stride * ring))
            .min(normals.len() / (layout.normal_stride * ring));
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above), the only requirement of a
            // `target_feature(enable = "avx2")` function.
            #[allow(unsafe_code)]
            return unsafe { self.write_rings_avx2(layout, positions, normals, rings) };
        }
        self.write_rings(layout, positions, normals, rings);
    }

    /// [`Tube::write_rings`] compiled for AVX2: eight rings worked at once.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn write_rings_avx2(
        &self,
        layout: &VertexLayout,
        positions: &mut [u8],
        normals: &mut [u8],
        rings: usize,
    ) {
        self.write_rings(layout, positions, normals, rings);
    }

    /// Writes the first `rings` rings' vertices (see [`Tube::write_vertices`]; the buffers hold
    /// them), [`LANES`] rings at a time: one side at a time over the group's rings, worked side by
    /// side in vector registers (structure of arrays; past the last ring, lanes are worked out and
    /// never written). The ring frames' chain (parallel transport) runs a group ahead, one ring per
    /// side, so that its latency overlaps the sides' work.
    #[inline(always)]
    fn write_rings(
        &self,
        layout: &VertexLayout,
        positions: &mut [u8],
        normals: &mut [u8],
        rings: usize,
    ) {
        let ring = self.sides + 1;
        let (ps, ns) = (layout.position_stride, layout.normal_stride);
        let (no, to) = (layout.normal_offset, layout.tangent_offset);
        let mut frames = [RingFrames::default(), RingFrames::default()];
        let mut normal = Vec3::ZERO;
        let codes = to.is_some();
        for j in 0..rings.min(LANES) {
            self.frame_ring(&mut frames[0], j, j, &mut normal, codes);
        }
        let mut side = Side::default();
        for group in 0..rings.div_ceil(LANES) {
            let [now, ahead] = &mut frames;
            let (now, ahead) = if group % 2 == 0 {
                (&*now, ahead)
            } else {
                (&*ahead, now)
            };
            let first = group * LANES;
            let count = (rings - first).min(LANES);
            let next = first + LANES;
            let coming = rings.saturating_sub(next).min(LANES);
            for k in 0..ring {
                if k < coming {
                    self.frame_ring(ahead, k, next + k, &mut normal, codes);
                }
                side.work(now, self.cos[k], self.sin[k]);
                for j in 0..count {
                    let vertex = (first + j) * ring + k;
                    let p = &mut positions[vertex * ps..vertex * ps + 12];
                    p[0..4].copy_from_slice(&side.x[j].to_le_bytes());
                    p[4..8].copy_from_slice(&side.y[j].to_le_bytes());
                    p[8..12].copy_from_slice(&side.z[j].to_le_bytes());
                    let n = &mut normals[vertex * ns..(vertex + 1) * ns];
                    n[no..no + 2].copy_from_slice(&side.u[j].to_le_bytes());
                    n[no + 2..no + 4].copy_from_slice(&side.v[j].to_le_bytes());
                    if let Some(t) = to {
                        n[t..t + 4].copy_from_slice(&now.tangent[j]);
                    }
                }
            }
            for k in ring..coming {
                self.frame_ring(ahead, k, next + k, &mut normal, codes);
            }
        }
    }

    /// Frames ring `r` into lane `j` of `f` (with its tangent's code when `codes`), carrying
    /// `normal` along from the ring before.
    #[inline(always)]
    fn frame_ring(&self, f: &mut RingFrames, j: usize, r: usize, normal: &mut Vec3, codes: bool) {
        let (c, tangent, next, binormal, r_used) = self.ring_frame(r, *normal);
        *normal = next;
        f.set(j, c, next, binormal, r_used);
        if codes {
            let [u, v] = octahedron_tangent_encode(tangent, 1.0);
            let (u, v) = (unorm16(u).to_le_bytes(), unorm16(v).to_le_bytes());
            f.tangent[j] = [u[0], u[1], v[0], v[1]];
        }
    }
}

/// Rings [`Tube::write_vertices`] works side by side: eight `f32`s, an AVX2 register.
const LANES: usize = 8;

/// A group of [`LANES`] ring frames, one array per coordinate (see [`Tube::write_rings`]): each
/// ring's normal, binormal, centre and radius drawn, and its tangent's code.
#[derive(Default)]
struct RingFrames {
    n: [[f32; LANES]; 3],
    b: [[f32; LANES]; 3],
    c: [[f32; LANES]; 3],
    r: [f32; LANES],
    tangent: [[u8; 4]; LANES],
}

impl RingFrames {
    /// Puts a ring's frame in lane `j`.
    #[inline(always)]
    fn set(&mut self, j: usize, c: Vec3, normal: Vec3, binormal: Vec3, r: f32) {
        for (a, (n, (b, c))) in [normal.x, normal.y, normal.z]
            .into_iter()
            .zip(
                [binormal.x, binormal.y, binormal.z]
                    .into_iter()
                    .zip([c.x, c.y, c.z]),
            )
            .enumerate()
        {
            self.n[a][j] = n;
            self.b[a][j] = b;
            self.c[a][j] = c;
        }
        self.r[j] = r;
    }
}

/// One side's vertices of a group of rings: positions and the normal's 16-bit codes.
#[derive(Default)]
struct Side {
    x: [f32; LANES],
    y: [f32; LANES],
    z: [f32; LANES],
    u: [u16; LANES],
    v: [u16; LANES],
}

impl Side {
    /// Works out the vertex at angle (`cos`, `sin`) of the rings of `f`: its direction
    /// `normal * cos + binormal * sin`, component by component, encoded, and its position
    /// `centre + direction * radius`, in the same operations as [`Tube::build_upto`].
    #[inline(always)]
    fn work(&mut self, f: &RingFrames, cos: f32, sin: f32) {
        let ([nx, ny, nz], [bx, by, bz], [cx, cy, cz]) = (&f.n, &f.b, &f.c);
        for l in 0..LANES {
            let dx = nx[l] * cos + bx[l] * sin;
            let dy = ny[l] * cos + by[l] * sin;
            let dz = nz[l] * cos + bz[l] * sin;
            let [a, e] = octahedron_encode(Vec3::new(dx, dy, dz));
            self.u[l] = unorm16(a);
            self.v[l] = unorm16(e);
            self.x[l] = cx[l] + dx * f.r[l];
            self.y[l] = cy[l] + dy * f.r[l];
            self.z[l] = cz[l] + dz * f.r[l];
        }
    }
}

/// Returns a tube's radius: `radius` when it is finite and not negative, else 0.
fn tube_radius(radius: f32) -> f32 {
    if radius.is_finite() {
        radius.max(0.0)
    } else {
        0.0
    }
}

/// Returns the tangent at centre `rc` of a centre line: the unit direction from the centre before it
/// to the one after it (itself at either end), or −Y where those coincide.
fn ring_tangent(centres: &[Vec3], rc: usize) -> Vec3 {
    (centres[(rc + 1).min(centres.len() - 1)] - centres[rc.saturating_sub(1)])
        .try_normalize()
        .unwrap_or(Vec3::NEG_Y)
}

/// Returns the last ring's `normal` carried along to a ring with `tangent` (parallel transport: the
/// normal projected across the tangent), or for the first ring (`normal` zero) or a tangent along the
/// last normal, a normal across the tangent from a fixed axis.
fn transported(normal: Vec3, tangent: Vec3) -> Vec3 {
    let projected = normal - tangent * normal.dot(tangent);
    projected.try_normalize().unwrap_or_else(|| {
        let seed = if tangent.x.abs() < 0.9 {
            Vec3::X
        } else {
            Vec3::Z
        };
        (seed - tangent * seed.dot(tangent)).normalize_or(Vec3::Z)
    })
}

/// Where a renderer keeps a vertex's fields in its two byte streams (little-endian), Godot 4's layout
/// for a surface with compressed normals and tangents: the position, three `f32`, at the start of
/// every `position_stride` bytes of the first stream; the normal and the tangent, two `u16` each in
/// the octahedral encoding ([`octahedron_encode`], [`octahedron_tangent_encode`]), at `normal_offset`
/// and `tangent_offset` (none: the surface has no tangents) in every `normal_stride` bytes of the
/// second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexLayout {
    /// Bytes from one vertex's position to the next (at least 12).
    pub position_stride: usize,
    /// Bytes from one vertex's normal to the next.
    pub normal_stride: usize,
    /// Where the normal sits in its stride.
    pub normal_offset: usize,
    /// Where the tangent sits in its stride, if the surface has tangents.
    pub tangent_offset: Option<usize>,
}

impl VertexLayout {
    /// Returns whether every field fits in its stride.
    #[must_use]
    pub fn fits(&self) -> bool {
        self.position_stride >= 12
            && self.normal_offset + 4 <= self.normal_stride
            && self
                .tangent_offset
                .is_none_or(|t| t + 4 <= self.normal_stride)
    }
}

/// How far (metres, on any axis) a point may move before the tube is rebuilt: 10 µm, a
/// thousandth of the default radius. A rope at rest keeps moving by a few ulps each step (gravity
/// and the constraints never balance to the bit); its tube is then left as it is.
pub const STILL: f32 = 1e-5;

/// Says whether a tube must be redrawn: it remembers the points and radius of the last redraw
/// (room for `max_points`, allocated once) and whether there was one that they describe.
#[derive(Clone, Debug, Default)]
pub struct Redraw {
    last_points: Vec<Vec3>,
    last_radius: f32,
    built: bool,
}

impl Redraw {
    /// Returns a tracker for ropes of up to `max_points` points, with no redraw yet.
    #[must_use]
    pub fn with_capacity(max_points: usize) -> Self {
        Self {
            last_points: Vec::with_capacity(max_points),
            last_radius: 0.0,
            built: false,
        }
    }

    /// Returns whether the tube around `points` with `radius` must be redrawn, and if so remembers
    /// them as the last redraw. Not when there are as many points as at the last redraw, the radius
    /// is the same and no point has moved more than [`STILL`] on any axis since (a rope at rest).
    /// More points than the tracker holds are always redrawn.
    pub fn needed(&mut self, points: &[Vec3], radius: f32) -> bool {
        if self.built && self.still(points, radius) {
            return false;
        }
        self.last_points.clear();
        self.last_points
            .extend_from_slice(&points[..points.len().min(self.last_points.capacity())]);
        self.last_radius = radius;
        // Longer than the buffers can hold (never for a rope's own tube): always rebuilt.
        self.built = self.last_points.len() == points.len();
        true
    }

    /// Returns whether `points` and `radius` are those of the last redraw within [`STILL`] (the
    /// same count, the same radius bit for bit, every point within `STILL` on every axis; a NaN is
    /// never still).
    fn still(&self, points: &[Vec3], radius: f32) -> bool {
        radius.to_bits() == self.last_radius.to_bits()
            && points.len() == self.last_points.len()
            && points
                .iter()
                .zip(&self.last_points)
                .all(|(a, b)| (*a - *b).abs().cmple(Vec3::splat(STILL)).all())
    }
}

/// Returns Godot's octahedral encoding of a unit vector, in [0, 1]².
#[must_use]
pub fn octahedron_encode(n: Vec3) -> [f32; 2] {
    let n = n / (n.x.abs() + n.y.abs() + n.z.abs()).max(1e-12);
    let (x, y) = if n.z >= 0.0 {
        (n.x, n.y)
    } else {
        (
            (1.0 - n.y.abs()) * if n.x >= 0.0 { 1.0 } else { -1.0 },
            (1.0 - n.x.abs()) * if n.y >= 0.0 { 1.0 } else { -1.0 },
        )
    };
    [x * 0.5 + 0.5, y * 0.5 + 0.5]
}

/// Returns Godot's octahedral tangent encoding (the sign of the binormal folded into y).
#[must_use]
pub fn octahedron_tangent_encode(t: Vec3, sign: f32) -> [f32; 2] {
    let [x, y] = octahedron_encode(t);
    let y = y.max(1.0 / 32767.0) * 0.5 + 0.5;
    [x, if sign >= 0.0 { y } else { 1.0 - y }]
}

/// Returns `x` in [0, 1] as a 16-bit unsigned normalised value (truncated, as Godot does).
#[must_use]
pub fn unorm16(x: f32) -> u16 {
    // In plain float arithmetic, which the compiler runs four at a time in vector registers
    // (a float-to-integer cast with Rust's saturating meaning it ran one at a time, with branches):
    // `y` is clamped to 0..=65535 (NaN to 0, as `as` makes it); adding and taking away 2²³ rounds it
    // to the nearest integer (the sum has no fraction bits left), one less when that rounded up is
    // the truncation `as` gives; and the low 16 bits of `t + 2²³` are `t`.
    const SHIFT: f32 = 8_388_608.0;
    // Not `clamp`: it would keep a NaN, which the steps below would not make 0.
    #[allow(clippy::manual_clamp)]
    let y = (x * 65535.0).max(0.0).min(65535.0);
    let r = (y + SHIFT) - SHIFT;
    let t = if r > y { r - 1.0 } else { r };
    (t + SHIFT).to_bits() as u16
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

/// Returns `f` of each vertex's angle round a ring of `sides` sides (the last vertex repeats the
/// first).
fn ring_table(sides: usize, f: fn(f32) -> f32) -> Vec<f32> {
    (0..=sides)
        .map(|k| f(core::f32::consts::TAU * k as f32 / sides as f32))
        .collect()
}

/// Writes the centre line through `points` (at least one) into `centres`: `subdivisions`
/// Catmull-Rom samples per segment, then the last point. Returns how many it wrote.
fn centre_line(points: &[Vec3], subdivisions: usize, centres: &mut [Vec3]) -> usize {
    let n = points.len();
    let mut rings = 0;
    for i in 0..n {
        if i + 1 == n {
            centres[rings] = points[i];
            rings += 1;
            break;
        }
        let p0 = points[i.saturating_sub(1)];
        let p1 = points[i];
        let p2 = points[i + 1];
        let p3 = points[(i + 2).min(n - 1)];
        for k in 0..subdivisions {
            let t = k as f32 / subdivisions as f32;
            centres[rings] = catmull_rom(p0, p1, p2, p3, t);
            rings += 1;
        }
    }
    rings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unorm16_is_the_saturating_cast_of_the_clamped_value() {
        // The old form, the one Godot's truncation was checked against.
        let cast = |x: f32| (x * 65535.0).clamp(0.0, 65535.0) as i32 as u16;
        let mut checked = 0u64;
        let mut check = |x: f32| {
            assert_eq!(unorm16(x), cast(x), "x = {x:e} ({:#010x})", x.to_bits());
            checked += 1;
        };
        for x in [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1.0,
            2.0,
            -1.0,
        ] {
            check(x);
        }
        // Every code's exact value and its neighbours a few ulps either side.
        for k in 0..=65535u32 {
            let x = k as f32 / 65535.0;
            let bits = x.to_bits();
            for d in 0..=4u32 {
                check(f32::from_bits(bits.saturating_add(d)));
                check(f32::from_bits(bits.saturating_sub(d)));
            }
            check((k as f32 + 0.5) / 65535.0);
        }
        // A spread of every bit pattern (all signs and exponents).
        for i in 0..2_000_000u32 {
            check(f32::from_bits(i.wrapping_mul(2147)));
        }
        assert!(checked > 2_500_000);
    }

    #[test]
    fn redraw_skips_a_rope_at_rest_and_not_one_that_moved() {
        let mut r = Redraw::with_capacity(4);
        let pts = [Vec3::ZERO, Vec3::new(0.0, -1.0, 0.0)];
        assert!(r.needed(&pts, 0.1), "the first time");
        assert!(!r.needed(&pts, 0.1), "nothing moved");
        let jiggled = [Vec3::splat(STILL * 0.5), pts[1]];
        assert!(!r.needed(&jiggled, 0.1), "moved less than STILL");
        let moved = [Vec3::new(STILL * 2.0, 0.0, 0.0), pts[1]];
        assert!(r.needed(&moved, 0.1), "moved more than STILL");
        assert!(!r.needed(&moved, 0.1));
        assert!(r.needed(&moved, 0.2), "another radius");
        assert!(r.needed(&moved[..1], 0.2), "another count");
        assert!(r.needed(&[Vec3::NAN], 0.2), "a NaN");
        assert!(r.needed(&[Vec3::NAN], 0.2), "a NaN is never still");
    }

    #[test]
    fn redraw_compares_against_the_last_redraw_not_the_last_call() {
        let mut r = Redraw::with_capacity(1);
        assert!(r.needed(&[Vec3::ZERO], 0.1));
        // Creeping by less than STILL per call still redraws once the sum passes it.
        let step = STILL * 0.6;
        assert!(!r.needed(&[Vec3::new(step, 0.0, 0.0)], 0.1));
        assert!(r.needed(&[Vec3::new(2.0 * step, 0.0, 0.0)], 0.1));
    }

    #[test]
    fn redraw_always_redraws_more_points_than_it_holds() {
        let mut r = Redraw::with_capacity(1);
        let pts = [Vec3::ZERO, Vec3::Y];
        assert!(r.needed(&pts, 0.1));
        assert!(r.needed(&pts, 0.1));
    }

    /// `build_upto` as it was before the frames were split from the vertices (one loop per ring).
    fn old_build_upto(t: &mut Tube, points: &[Vec3], radius: f32, at_least: usize) -> (Vec3, Vec3) {
        let radius = tube_radius(radius);
        let Some(n) = t.framed_points(points) else {
            t.positions.fill(Vec3::ZERO);
            t.active_rings = 0;
            t.written_rings = t.max_rings;
            return (Vec3::ZERO, Vec3::ZERO);
        };
        // The centre line did not change.
        let rings = centre_line(&points[..n], t.subdivisions, &mut t.centres);
        t.active_rings = rings;
        let ring = t.sides + 1;
        let mut normal = Vec3::ZERO;
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        let written = (rings + 1).max(at_least).min(t.max_rings);
        t.written_rings = written;
        for r in 0..written {
            let rc = r.min(rings - 1);
            let c = t.centres[rc];
            let tangent = ring_tangent(&t.centres[..rings], rc);
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
            for k in 0..ring {
                let (cos, sin) = (t.cos[k], t.sin[k]);
                let dir = normal * cos + binormal * sin;
                let v = r * ring + k;
                t.positions[v] = c + dir * r_used;
                t.normals[v] = dir;
                t.tangents[v] = tangent;
            }
            if r < rings {
                lo = lo.min(c - Vec3::splat(radius));
                hi = hi.max(c + Vec3::splat(radius));
            }
        }
        (lo, hi)
    }

    /// The glue's encoding before `write_vertices`: writes the vertices of the rings the last build wrote ([`Tube::written_rings`]) into a
    /// renderer's two byte streams laid out as `layout` says, from their start: `positions` and
    /// `normals` must hold at least that many vertices' strides (nothing is written past them, and
    /// nothing at all when `layout` does not [`VertexLayout::fits`]). Every vertex of a ring has the
    /// ring's tangent, with the binormal's sign +1.
    fn encode(t: &Tube, layout: &VertexLayout, positions: &mut [u8], normals: &mut [u8]) {
        if !layout.fits() {
            return;
        }
        let ring = t.sides + 1;
        let n = t.written_rings * ring;
        let out = positions.chunks_exact_mut(layout.position_stride);
        for (v, p) in out.zip(&t.positions[..n]) {
            v[0..4].copy_from_slice(&p.x.to_le_bytes());
            v[4..8].copy_from_slice(&p.y.to_le_bytes());
            v[8..12].copy_from_slice(&p.z.to_le_bytes());
        }
        let (no, to, stride) = (
            layout.normal_offset,
            layout.tangent_offset,
            layout.normal_stride,
        );
        let rings = normals
            .chunks_exact_mut(stride * ring)
            .take(t.written_rings);
        for (r, out) in rings.enumerate() {
            let vertices = r * ring..(r + 1) * ring;
            // Every vertex of a ring has the ring's tangent: encoded once.
            let [u, v] = octahedron_tangent_encode(t.tangents[vertices.start], 1.0);
            let (u, v) = (unorm16(u).to_le_bytes(), unorm16(v).to_le_bytes());
            let tangent = [u[0], u[1], v[0], v[1]];
            for (vertex, normal) in out.chunks_exact_mut(stride).zip(&t.normals[vertices]) {
                let [u, v] = octahedron_encode(*normal);
                vertex[no..no + 2].copy_from_slice(&unorm16(u).to_le_bytes());
                vertex[no + 2..no + 4].copy_from_slice(&unorm16(v).to_le_bytes());
                if let Some(t) = to {
                    vertex[t..t + 4].copy_from_slice(&tangent);
                }
            }
        }
    }

    /// Three vertex layouts: with tangents after the normals, with padding, and without tangents.
    fn three_layouts() -> [VertexLayout; 3] {
        [
            VertexLayout {
                position_stride: 12,
                normal_stride: 8,
                normal_offset: 0,
                tangent_offset: Some(4),
            },
            VertexLayout {
                position_stride: 16,
                normal_stride: 12,
                normal_offset: 4,
                tangent_offset: Some(8),
            },
            VertexLayout {
                position_stride: 12,
                normal_stride: 4,
                normal_offset: 0,
                tangent_offset: None,
            },
        ]
    }

    /// A swinging rope's points at `frame`: growing, shrinking, now and then bad or straight.
    fn swinging_points(frame: usize) -> Vec<Vec3> {
        let t = frame as f32 / 60.0;
        let count = match frame % 40 {
            0..=9 => 12,
            10..=19 => 32,
            20..=24 => 2,
            _ => 12 + frame % 7,
        };
        let mut points: Vec<Vec3> = (0..count)
            .map(|i| {
                let i = i as f32;
                Vec3::new(
                    (t * 6.0).cos() + (i * 0.3 + t).sin() * 0.2,
                    12.0 - 0.25 * i,
                    (t * 6.0).sin() + 0.05 * i * (t * 3.0).cos(),
                )
            })
            .collect();
        if frame % 29 == 28 {
            points[count / 2] = Vec3::NAN;
        }
        if frame % 31 == 30 {
            // A straight rope along x (the seed changes axis) and repeated points.
            points.iter_mut().enumerate().for_each(|(i, p)| {
                *p = Vec3::new(i as f32 * 0.1, 1.0, 0.0);
            });
            points[1] = points[0];
        }
        points
    }

    /// The split build (frames, then vertices) gives the old build's rings bit for bit, and
    /// `write_vertices` the bytes the glue encoded from them: swinging, growing and shrinking
    /// ropes, the extent of the last build passed on, bad points, several ring sizes and layouts.
    #[test]
    fn the_split_build_and_the_direct_encoding_match_the_old_ones_bit_for_bit() {
        let layouts = three_layouts();
        let mut checked = 0;
        for (sides, subdivisions) in [(8, 3), (3, 1), (6, 1), (64, 8), (5, 2)] {
            for layout in &layouts {
                let mut old = Tube::new(32, sides, subdivisions);
                let mut new = Tube::new(32, sides, subdivisions);
                let mut direct = Tube::new(32, sides, subdivisions);
                let bytes = |t: &Tube| {
                    let n = t.written_rings() * (t.sides() + 1);
                    (
                        vec![0xAAu8; n * layout.position_stride],
                        vec![0xAAu8; n * layout.normal_stride],
                    )
                };
                let (mut old_at, mut new_at, mut direct_at) = (0, 0, 0);
                for frame in 0..120 {
                    let t = frame as f32 / 60.0;
                    let points = swinging_points(frame);
                    let radius = 0.03 + 0.01 * (t * 2.0).sin();
                    let a = old_build_upto(&mut old, &points, radius, old_at);
                    old_at = (old.active_rings() + 1).min(old.max_rings());
                    let b = new.build_upto(&points, radius, new_at);
                    new_at = (new.active_rings() + 1).min(new.max_rings());
                    assert_eq!(a, b, "bounds, frame {frame}");
                    assert_eq!(old.active_rings(), new.active_rings());
                    assert_eq!(old.written_rings(), new.written_rings());
                    let n = old.written_rings() * (sides + 1);
                    assert_eq!(old.positions()[..n], new.positions()[..n], "frame {frame}");
                    assert_eq!(old.normals()[..n], new.normals()[..n], "frame {frame}");
                    assert_eq!(old.tangents()[..n], new.tangents()[..n], "frame {frame}");
                    let c = direct.frame(&points, radius, direct_at);
                    direct_at = (direct.active_rings() + 1).min(direct.max_rings());
                    assert_eq!(a, c);
                    assert_eq!(old.written_rings(), direct.written_rings());
                    let (mut pos_old, mut nrm_old) = bytes(&old);
                    let (mut pos_new, mut nrm_new) = bytes(&direct);
                    encode(&old, layout, &mut pos_old, &mut nrm_old);
                    direct.write_vertices(layout, &mut pos_new, &mut nrm_new);
                    // The build for x86-64's baseline, which this machine may not be running
                    // (`write_vertices` takes the AVX2 one where there is AVX2): the same bytes.
                    let (mut pos_base, mut nrm_base) = bytes(&direct);
                    direct.write_rings(
                        layout,
                        &mut pos_base,
                        &mut nrm_base,
                        direct.written_rings(),
                    );
                    assert_eq!(pos_base, pos_new, "baseline positions, frame {frame}");
                    assert_eq!(nrm_base, nrm_new, "baseline normals, frame {frame}");
                    if old.active_rings() == 0 {
                        // An empty tube: every position at the origin (its normals draw nothing).
                        assert_eq!(pos_old, pos_new, "frame {frame}");
                        continue;
                    }
                    assert_eq!(pos_old, pos_new, "positions, frame {frame}");
                    assert_eq!(nrm_old, nrm_new, "normals, frame {frame}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn write_vertices_stays_in_its_buffers() {
        let mut tube = Tube::new(8, 6, 2);
        tube.frame(
            &[Vec3::ZERO, Vec3::NEG_Y, Vec3::new(0.0, -2.0, 1.0)],
            0.1,
            0,
        );
        let layout = VertexLayout {
            position_stride: 12,
            normal_stride: 8,
            normal_offset: 0,
            tangent_offset: Some(4),
        };
        // Room for two rings of the six written: only those are written, the rest untouched.
        let (mut pos, mut nrm) = (vec![0u8; 2 * 7 * 12 + 5], vec![0u8; 2 * 7 * 8 + 3]);
        tube.write_vertices(&layout, &mut pos, &mut nrm);
        assert!(pos[..2 * 7 * 12].iter().any(|b| *b != 0));
        assert!(pos[2 * 7 * 12..].iter().all(|b| *b == 0));
        assert!(nrm[2 * 7 * 8..].iter().all(|b| *b == 0));
        // A layout whose fields do not fit its strides writes nothing.
        let bad = VertexLayout {
            normal_offset: 6,
            ..layout
        };
        let (mut pos, mut nrm) = (vec![0u8; 64], vec![0u8; 64]);
        tube.write_vertices(&bad, &mut pos, &mut nrm);
        assert!(pos.iter().chain(&nrm).all(|b| *b == 0));
    }

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
