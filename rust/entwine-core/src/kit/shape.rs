//! One collision shape type for every feature (the rope's colliders, the wall touch's surfaces),
//! with the closest-point and signed-distance queries they need.
//!
//! Conventions (Godot's axes and sizes, metres, each shape in its own local space centred on the
//! origin):
//!
//! * a box by its half extents;
//! * a capsule and a cylinder along local +Y by `half_height`, half the length of their straight
//!   part: a capsule is the segment from `−half_height` to `+half_height` on Y swept by `radius`, so
//!   Godot's `CapsuleShape3D` of total height `h` (caps included) has `half_height = h / 2 − radius`
//!   ([`Shape::capsule`]); a cylinder's flat caps are at `±half_height`, so Godot's
//!   `CylinderShape3D` of height `h` has `half_height = h / 2` ([`Shape::cylinder`]);
//! * a plane through the origin with normal local +Y, solid below (a world boundary is this plane
//!   placed by a transform);
//! * a convex hull by its points; a trimesh (triangle soup) by its triangles.
//!
//! Like Unity's `Collider.ClosestPoint`, a point inside a solid shape (everything but a trimesh) is
//! its own closest point. A trimesh is a surface: the closest point always lies on one of its
//! triangles. Non-finite input, a shape with a NaN or infinite size, a degenerate transform or an
//! empty shape gives `None`; nothing here panics or allocates per query.

use std::sync::Arc;

use glam::{Affine3A, DVec3, Mat3A, Vec3, Vec3A};

/// One collision shape in its own local space (metres; see the module docs for the conventions).
///
/// Cloning is cheap: a hull's points and a trimesh's triangles are shared.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A ball of `radius` metres.
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A capsule along local Y: the segment from `−half_height` to `+half_height` swept by
    /// `radius`. Godot's capsule of total height `h` has `half_height = h / 2 − radius` (see
    /// [`Shape::capsule`]).
    Capsule {
        /// Radius of the cylinder and of the two caps (m).
        radius: f32,
        /// Half the length of the inner segment (m).
        half_height: f32,
    },
    /// An axis-aligned box, by half extents.
    Box {
        /// Half the box's size along X, Y and Z (m).
        half_extents: Vec3,
    },
    /// A solid cylinder along local Y with flat caps at `±half_height` (Godot's cylinder of height
    /// `h` has `half_height = h / 2`; see [`Shape::cylinder`]).
    Cylinder {
        /// Radius (m).
        radius: f32,
        /// Half the height (m).
        half_height: f32,
    },
    /// The half-space below the plane through the origin with normal local +Y (solid below).
    Plane,
    /// The convex hull of a set of points.
    Convex(Arc<[Vec3]>),
    /// A triangle soup (Godot's concave polygon / trimesh).
    Trimesh(Arc<Trimesh>),
}

/// Triangles plus a bounding sphere per triangle for early rejection.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Trimesh {
    triangles: Vec<[Vec3; 3]>,
    bounds: Vec<(Vec3, f32)>,
}

impl Trimesh {
    /// Returns a trimesh from a flat list of vertices, three per triangle (Godot's
    /// `ConcavePolygonShape3D.get_faces()` layout). A trailing partial triangle and triangles with
    /// non-finite vertices are dropped.
    #[must_use]
    pub fn from_faces(vertices: &[Vec3]) -> Self {
        let mut mesh = Self::default();
        for tri in vertices.chunks_exact(3) {
            let tri = [tri[0], tri[1], tri[2]];
            if tri.iter().all(|v| v.is_finite()) {
                let centre = (tri[0] + tri[1] + tri[2]) / 3.0;
                let radius = tri.iter().map(|v| v.distance(centre)).fold(0.0, f32::max);
                mesh.triangles.push(tri);
                mesh.bounds.push((centre, radius));
            }
        }
        mesh
    }

    /// Returns the number of triangles.
    #[must_use]
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    /// Returns `true` if there are no triangles.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Returns the closest point on any triangle to `p` (local space), or `None` when empty.
    #[must_use]
    pub fn closest_point(&self, p: Vec3) -> Option<Vec3> {
        let mut best: Option<(f32, Vec3)> = None;
        for (tri, &(centre, radius)) in self.triangles.iter().zip(&self.bounds) {
            if let Some((best_d2, _)) = best {
                // The triangle lies inside its bounding sphere: skip it if the sphere is farther.
                let gap = (p.distance(centre) - radius).max(0.0);
                if gap * gap > best_d2 {
                    continue;
                }
            }
            let q = closest_on_triangle(p, tri[0], tri[1], tri[2]);
            let d2 = p.distance_squared(q);
            if best.is_none_or(|(b, _)| d2 < b) {
                best = Some((d2, q));
            }
        }
        best.map(|(_, q)| q)
    }
}

impl Shape {
    /// Returns Godot's capsule of `radius` and total height `height` (caps included): a
    /// [`Shape::Capsule`] with `half_height = height / 2 − radius`, at least 0 (a NaN or infinite
    /// size is kept, so the shape stays unusable rather than turning into a sphere).
    #[must_use]
    pub fn capsule(radius: f32, height: f32) -> Self {
        let half = 0.5 * height.abs() - radius.abs();
        Self::Capsule {
            radius,
            half_height: if half < 0.0 { 0.0 } else { half },
        }
    }

    /// Returns Godot's cylinder of `radius` and full height `height`: a [`Shape::Cylinder`] with
    /// `half_height = height / 2`.
    #[must_use]
    pub fn cylinder(radius: f32, height: f32) -> Self {
        Self::Cylinder {
            radius,
            half_height: 0.5 * height,
        }
    }

    /// Returns the convex hull of `points`.
    #[must_use]
    pub fn convex(points: &[Vec3]) -> Self {
        Self::Convex(points.into())
    }

    /// Returns the trimesh of a flat vertex list, three per triangle (see [`Trimesh::from_faces`]).
    #[must_use]
    pub fn trimesh(faces: &[Vec3]) -> Self {
        Self::Trimesh(Arc::new(Trimesh::from_faces(faces)))
    }

    /// Returns Godot's world boundary (the half-space `normal · p ≤ d` is solid) as a
    /// [`Shape::Plane`] and the transform that places it in the boundary's space, or `None` for a
    /// zero or non-finite normal or a non-finite `d`. Any finite non-zero normal counts, however
    /// short (10⁻²² along X is the +X plane).
    #[must_use]
    pub fn world_boundary(normal: Vec3, d: f32) -> Option<(Self, Affine3A)> {
        let n = super::pose::unit_vec3(normal)?;
        if !d.is_finite() {
            return None;
        }
        let placed =
            Affine3A::from_rotation_translation(super::pose::rotation_arc(Vec3::Y, n), n * d);
        Some((Self::Plane, placed))
    }

    /// Returns the signed distance (m) from the local point `p` to the surface: negative inside,
    /// positive outside. A convex hull gives 0 inside (no depth) and a trimesh, a surface, the
    /// unsigned distance; an empty hull or trimesh gives infinity.
    #[must_use]
    pub fn distance(&self, p: Vec3) -> f32 {
        match self {
            Self::Sphere { radius } => sphere_distance(*radius, p),
            Self::Capsule {
                radius,
                half_height,
            } => capsule_distance(*radius, *half_height, p),
            Self::Box { half_extents } => box_distance(*half_extents, p),
            Self::Cylinder {
                radius,
                half_height,
            } => {
                let q = glam::Vec2::new(
                    Vec3::new(p.x, 0.0, p.z).length() - radius,
                    p.y.abs() - half_height,
                );
                q.max(glam::Vec2::ZERO).length() + q.max_element().min(0.0)
            }
            Self::Plane => p.y,
            Self::Convex(_) | Self::Trimesh(_) => self
                .closest_point_local(p)
                .map_or(f32::INFINITY, |q| p.distance(q)),
        }
    }

    /// Returns the outward surface normal nearest to the local point `p` (unit length; +Y when the
    /// point sits exactly on a centre line or on a hull's or trimesh's surface).
    #[must_use]
    pub fn normal(&self, p: Vec3) -> Vec3 {
        let n = match self {
            Self::Sphere { .. } => p,
            Self::Capsule { half_height, .. } => {
                let y = p.y.max(-half_height).min(*half_height);
                p - Vec3::new(0.0, y, 0.0)
            }
            Self::Box { half_extents } => {
                let q = p.abs() - *half_extents;
                if q.max_element() > 0.0 {
                    q.max(Vec3::ZERO) * p.signum()
                } else if q.x >= q.y && q.x >= q.z {
                    Vec3::new(p.x.signum(), 0.0, 0.0)
                } else if q.y >= q.z {
                    Vec3::new(0.0, p.y.signum(), 0.0)
                } else {
                    Vec3::new(0.0, 0.0, p.z.signum())
                }
            }
            Self::Cylinder {
                radius,
                half_height,
            } => {
                let radial = Vec3::new(p.x, 0.0, p.z);
                let side = radial.length() - radius;
                let cap = p.y.abs() - half_height;
                if side > 0.0 && cap > 0.0 {
                    radial.normalize_or_zero() * side + Vec3::new(0.0, cap * p.y.signum(), 0.0)
                } else if side >= cap {
                    radial
                } else {
                    Vec3::new(0.0, p.y.signum(), 0.0)
                }
            }
            Self::Plane => Vec3::Y,
            Self::Convex(_) | Self::Trimesh(_) => {
                self.closest_point_local(p).map_or(Vec3::Y, |q| p - q)
            }
        };
        n.try_normalize().unwrap_or(Vec3::Y)
    }

    /// Returns a radius (m) around the origin that contains the whole shape (infinity for a plane).
    #[must_use]
    pub fn bounding_radius(&self) -> f32 {
        match self {
            Self::Sphere { radius } => *radius,
            Self::Capsule {
                radius,
                half_height,
            } => radius + half_height,
            Self::Box { half_extents } => half_extents.length(),
            Self::Cylinder {
                radius,
                half_height,
            } => glam::Vec2::new(*radius, *half_height).length(),
            Self::Plane => f32::INFINITY,
            Self::Convex(points) => points
                .iter()
                .filter(|v| v.is_finite())
                .map(|v| v.length())
                .fold(0.0, f32::max),
            Self::Trimesh(mesh) => mesh
                .bounds
                .iter()
                .map(|(centre, r)| centre.length() + r)
                .fold(0.0, f32::max),
        }
    }

    /// Returns the shape's thinnest half-size (m): how far it may move between two samples of a
    /// sweep without stepping over something in its path (infinity for a plane, 0 for a trimesh).
    #[must_use]
    pub fn half_thickness(&self) -> f32 {
        match self {
            Self::Sphere { radius } | Self::Capsule { radius, .. } => *radius,
            Self::Box { half_extents } => half_extents.min_element(),
            Self::Cylinder {
                radius,
                half_height,
            } => radius.min(*half_height),
            Self::Plane => f32::INFINITY,
            Self::Convex(_) | Self::Trimesh(_) => 0.0,
        }
    }

    /// Returns the shape with every dimension made finite and non-negative, or `None` when that is
    /// not possible (NaN or infinite dimensions, a hull without a finite point, an empty trimesh).
    #[must_use]
    pub fn sanitized(&self) -> Option<Self> {
        let ok = |x: f32| x.is_finite();
        match self {
            Self::Sphere { radius } if ok(*radius) => Some(Self::Sphere {
                radius: radius.max(0.0),
            }),
            Self::Capsule {
                radius,
                half_height,
            } if ok(*radius) && ok(*half_height) => Some(Self::Capsule {
                radius: radius.max(0.0),
                half_height: half_height.max(0.0),
            }),
            Self::Cylinder {
                radius,
                half_height,
            } if ok(*radius) && ok(*half_height) => Some(Self::Cylinder {
                radius: radius.max(0.0),
                half_height: half_height.max(0.0),
            }),
            Self::Box { half_extents } if half_extents.is_finite() => Some(Self::Box {
                half_extents: half_extents.max(Vec3::ZERO),
            }),
            Self::Plane => Some(Self::Plane),
            Self::Convex(points) if points.iter().any(|v| v.is_finite()) => Some(self.clone()),
            Self::Trimesh(mesh) if !mesh.is_empty() => Some(self.clone()),
            _ => None,
        }
    }

    /// Returns the shape scaled by `scale` along its local axes: a box (and a hull's points) per
    /// axis, the round shapes by the mean of the axes' magnitudes, at least 10⁻⁶ (a physics
    /// engine keeps them round); a plane and a trimesh are returned as they are.
    #[must_use]
    pub fn scaled(&self, scale: Vec3) -> Self {
        let s = (scale.abs().element_sum() / 3.0).max(1e-6);
        match self {
            Self::Sphere { radius } => Self::Sphere { radius: radius * s },
            Self::Capsule {
                radius,
                half_height,
            } => Self::Capsule {
                radius: radius * s,
                half_height: half_height * s,
            },
            Self::Cylinder {
                radius,
                half_height,
            } => Self::Cylinder {
                radius: radius * s,
                half_height: half_height * s,
            },
            Self::Box { half_extents } => Self::Box {
                half_extents: *half_extents * scale.abs(),
            },
            Self::Convex(points) => Self::Convex(points.iter().map(|p| *p * scale).collect()),
            Self::Plane | Self::Trimesh(_) => self.clone(),
        }
    }

    /// Returns the nearest of the analytic solids (sphere, capsule, box, plane) that stands in for
    /// this shape, and where its centre sits in this shape's space: itself for those four, the
    /// inscribed capsule for a cylinder (rounded at the caps), the bounding box for a hull; `None`
    /// for a trimesh or an empty hull. For solvers that handle only those four, such as the rope's.
    #[must_use]
    pub fn solid_approximation(&self) -> Option<(Self, Vec3)> {
        match self {
            Self::Cylinder {
                radius,
                half_height,
            } => Some((
                Self::Capsule {
                    radius: *radius,
                    half_height: (half_height - radius).max(0.0),
                },
                Vec3::ZERO,
            )),
            Self::Convex(points) => {
                let mut lo = Vec3::splat(f32::INFINITY);
                let mut hi = Vec3::splat(f32::NEG_INFINITY);
                for p in points.iter() {
                    lo = lo.min(*p);
                    hi = hi.max(*p);
                }
                (lo.cmple(hi).all()).then(|| {
                    (
                        Self::Box {
                            half_extents: (hi - lo) * 0.5,
                        },
                        (lo + hi) * 0.5,
                    )
                })
            }
            Self::Trimesh(_) => None,
            _ => Some((self.clone(), Vec3::ZERO)),
        }
    }

    /// Returns the closest point of this shape (placed by `transform`, its local-to-world affine) to
    /// the world point `p` (m), or `None` when the input is not finite, the transform is not
    /// invertible, or the shape is empty. Points inside a solid shape return themselves.
    ///
    /// Under non-uniform scale the result is the closest point in the shape's local metric, mapped
    /// back to world space: exact for rotations, translations and uniform scale.
    #[must_use]
    pub fn closest_point(&self, transform: &Affine3A, p: Vec3) -> Option<Vec3> {
        if !p.is_finite() || !transform.is_finite() {
            return None;
        }
        let det = transform.matrix3.determinant();
        if !det.is_finite() || det.abs() < 1e-12 {
            return None;
        }
        let inverse = transform.inverse();
        let local = inverse.transform_point3(p);
        let q = self.closest_point_local(local)?;
        let world = transform.transform_point3(q);
        world.is_finite().then_some(world)
    }

    /// Returns the closest point to `p`, both in the shape's local space (see [`Shape::closest_point`]).
    #[must_use]
    pub fn closest_point_local(&self, p: Vec3) -> Option<Vec3> {
        if !p.is_finite() {
            return None;
        }
        let q = match self {
            Self::Box { half_extents } => {
                let h = size3(*half_extents)?;
                p.max(-h).min(h)
            }
            Self::Sphere { radius } => {
                let r = size(*radius)?;
                let len = robust_length(p);
                if len <= r {
                    p
                } else {
                    p * (r / len)
                }
            }
            Self::Capsule {
                radius,
                half_height,
            } => {
                let r = size(*radius)?;
                let half = size(*half_height)?;
                let axis = Vec3::new(0.0, p.y.clamp(-half, half), 0.0);
                let off = p - axis;
                let len = robust_length(off);
                if len <= r {
                    p
                } else {
                    axis + off * (r / len)
                }
            }
            Self::Cylinder {
                radius,
                half_height,
            } => {
                let r = size(*radius)?;
                let half = size(*half_height)?;
                let radial = Vec3::new(p.x, 0.0, p.z);
                let len = robust_length(radial);
                let radial = if len <= r { radial } else { radial * (r / len) };
                Vec3::new(radial.x, p.y.clamp(-half, half), radial.z)
            }
            Self::Convex(points) => closest_on_hull(points, p)?,
            Self::Trimesh(mesh) => mesh.closest_point(p)?,
            Self::Plane => Vec3::new(p.x, p.y.min(0.0), p.z),
        };
        q.is_finite().then_some(q)
    }
}

/// Returns `|x|` for a finite size, else `None` (a shape with a NaN or infinite size has no usable
/// surface).
fn size(x: f32) -> Option<f32> {
    x.is_finite().then(|| x.abs())
}

/// [`size`] for each component.
fn size3(v: Vec3) -> Option<Vec3> {
    v.is_finite().then(|| v.abs())
}

/// Returns `|v|` without overflowing for huge finite components (scaled by the largest one).
fn robust_length(v: Vec3) -> f32 {
    let m = v.abs().max_element();
    if m > 1e18 {
        m * (v / m).length()
    } else {
        v.length()
    }
}

/// Returns the closest point to world point `p` over several shapes, each with its local-to-world
/// transform, or `None` when no shape gives one.
#[must_use]
pub fn closest_point_on_shapes(shapes: &[(Shape, Affine3A)], p: Vec3) -> Option<Vec3> {
    let mut best: Option<(f32, Vec3)> = None;
    for (shape, transform) in shapes {
        if let Some(q) = shape.closest_point(transform, p) {
            let d2 = p.distance_squared(q);
            if best.is_none_or(|(b, _)| d2 < b) {
                best = Some((d2, q));
            }
        }
    }
    best.map(|(_, q)| q)
}

/// Returns the point of triangle `abc` closest to `p` (Ericson, *Real-Time Collision Detection* §5.1.5).
/// Degenerate triangles fall back to their closest edge.
#[must_use]
pub fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    closest_on_triangle_features(p, a, b, c).0
}

/// Like [`closest_on_triangle`], also returning which vertices (bit 0 = a, 1 = b, 2 = c) span the
/// feature the point lies on. Finite input whose arithmetic under- or overflows (tiny or huge
/// triangles) falls back to the closest edge, so it never gives NaN.
fn closest_on_triangle_features(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, u8) {
    // In f64 around `p`: the same region walk as the hull's, and well conditioned for thin triangles.
    let at = |v: Vec3| (v - p).as_dvec3();
    let (q, mask) = closest_on_triangle_origin(at(a), at(b), at(c));
    let q = p + q.as_vec3();
    if q.is_finite() || ![p, a, b, c].iter().all(|v| v.is_finite()) {
        return (q, mask);
    }
    let edges = [
        (closest_on_segment(p, a, b), 0b011),
        (closest_on_segment(p, a, c), 0b101),
        (closest_on_segment(p, b, c), 0b110),
    ];
    edges
        .into_iter()
        .filter(|e| e.0.is_finite())
        .min_by(|x, y| p.distance_squared(x.0).total_cmp(&p.distance_squared(y.0)))
        .unwrap_or((a, 0b001))
}

/// Returns the point of segment `ab` closest to `p`.
#[must_use]
pub fn closest_on_segment(p: Vec3, a: Vec3, b: Vec3) -> Vec3 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= f32::MIN_POSITIVE {
        return a;
    }
    let t = (p - a).dot(ab) / len2;
    if t.is_nan() {
        // Under- or overflow in the projection: the nearer end.
        return if p.distance_squared(a) <= p.distance_squared(b) {
            a
        } else {
            b
        };
    }
    a + ab * t.clamp(0.0, 1.0)
}

/// Most GJK iterations; a hull query converges in a handful (long thin hulls take a few dozen).
const GJK_MAX_ITERATIONS: usize = 128;

/// Returns the closest point of the convex hull of `points` to `p` (local space): `p` itself when it
/// is inside, else a point on the hull's surface. `None` for no finite points.
///
/// GJK distance between the hull and a point, in `f64` and relative to `p` (so long thin hulls —
/// aspect ratios up to 10⁶ — keep their accuracy): the simplex is reduced with the closest-feature
/// searches of Ericson §5.1.5–5.1.6, and the loop stops when the support point no longer improves
/// the distance (relative 10⁻¹²). Non-finite points are ignored.
#[must_use]
pub fn closest_on_hull(points: &[Vec3], p: Vec3) -> Option<Vec3> {
    if !p.is_finite() {
        return None;
    }
    let first = *points.iter().find(|v| v.is_finite())?;
    let origin = p.as_dvec3();
    // Work relative to p: find the hull point of minimum norm.
    let support = |dir: DVec3| -> DVec3 {
        let mut best = first.as_dvec3() - origin;
        let mut best_dot = best.dot(dir);
        for v in points.iter().filter(|v| v.is_finite()) {
            let w = v.as_dvec3() - origin;
            let d = w.dot(dir);
            if d > best_dot {
                best = w;
                best_dot = d;
            }
        }
        best
    };
    let mut simplex = [DVec3::ZERO; 4];
    simplex[0] = first.as_dvec3() - origin;
    let mut count = 1;
    let mut v = simplex[0];
    for _ in 0..GJK_MAX_ITERATIONS {
        let vv = v.length_squared();
        if vv <= 1e-30 {
            return Some(p);
        }
        let w = support(-v);
        // No support point is closer to the origin along v: v is the minimum.
        if vv - v.dot(w) <= 1e-12 * vv {
            break;
        }
        if simplex[..count].contains(&w) {
            break;
        }
        simplex[count] = w;
        count += 1;
        let (closest, kept) = closest_on_simplex(&simplex[..count]);
        if kept == 0 {
            // The origin is inside the tetrahedron: p is inside the hull.
            return Some(p);
        }
        let mut reduced = [DVec3::ZERO; 4];
        let mut n = 0;
        for (i, s) in simplex[..count].iter().enumerate() {
            if kept & (1 << i) != 0 {
                reduced[n] = *s;
                n += 1;
            }
        }
        simplex = reduced;
        count = n;
        if closest.length_squared() >= vv {
            // No progress (rounding): keep the better point and stop.
            break;
        }
        v = closest;
    }
    let q = (origin + v).as_vec3();
    q.is_finite().then_some(q)
}

/// Returns the point of the simplex (1–4 vertices) closest to the origin and the mask of vertices
/// spanning its feature; mask 0 means the origin is inside the tetrahedron.
fn closest_on_simplex(s: &[DVec3]) -> (DVec3, u8) {
    match s.len() {
        1 => (s[0], 0b1),
        2 => {
            let ab = s[1] - s[0];
            let len2 = ab.length_squared();
            let t = if len2 > f64::MIN_POSITIVE {
                (-s[0].dot(ab) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mask = if t <= 0.0 {
                0b01
            } else if t >= 1.0 {
                0b10
            } else {
                0b11
            };
            (s[0] + ab * t, mask)
        }
        3 => closest_on_triangle_origin(s[0], s[1], s[2]),
        _ => closest_on_tetrahedron(s[0], s[1], s[2], s[3]),
    }
}

/// Returns the point of triangle `abc` closest to the origin, in `f64`, with the mask of the vertices
/// spanning its feature (Ericson's Voronoi-region walk, §5.1.5).
fn closest_on_triangle_origin(a: DVec3, b: DVec3, c: DVec3) -> (DVec3, u8) {
    let ab = b - a;
    let ac = c - a;
    let ap = -a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, 0b001);
    }
    let bp = -b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, 0b010);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, 0b011);
    }
    let cp = -c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, 0b100);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, 0b101);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, 0b110);
    }
    let sum = va + vb + vc;
    // The face's normal projection, computed directly (better conditioned than the barycentric
    // sum on a long thin triangle).
    let n = ab.cross(ac);
    let nn = n.length_squared();
    if sum.abs() > 0.0 && nn > 0.0 {
        let q = n * (a.dot(n) / nn);
        if q.is_finite() {
            return (q, 0b111);
        }
    }
    // Degenerate (collinear) triangle: the closest of its three edges.
    let seg = |x: DVec3, y: DVec3| {
        let xy = y - x;
        let len2 = xy.length_squared();
        if len2 <= f64::MIN_POSITIVE {
            x
        } else {
            x + xy * (-x.dot(xy) / len2).clamp(0.0, 1.0)
        }
    };
    let edges = [(seg(a, b), 0b011), (seg(a, c), 0b101), (seg(b, c), 0b110)];
    edges
        .into_iter()
        .min_by(|x, y| x.0.length_squared().total_cmp(&y.0.length_squared()))
        .unwrap_or((a, 0b001))
}

/// Returns the point of tetrahedron `abcd` closest to the origin with its feature mask, or mask 0
/// when the origin is inside (Ericson §5.1.6).
fn closest_on_tetrahedron(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> (DVec3, u8) {
    let faces: [([DVec3; 3], DVec3, [u8; 3]); 4] = [
        ([a, b, c], d, [0, 1, 2]),
        ([a, c, d], b, [0, 2, 3]),
        ([a, d, b], c, [0, 3, 1]),
        ([b, d, c], a, [1, 3, 2]),
    ];
    // Six times the signed volume, the same for every face of this consistently wound table.
    // Taken from the face whose product of edge and height lengths is smallest: on a sliver (three
    // vertices close together, one far away) the other faces' normals carry a rounding error
    // larger than the volume itself and can give it the wrong sign.
    let (volume, scale) = faces
        .iter()
        .map(|(tri, opposite, _)| {
            let (e1, e2, h) = (tri[1] - tri[0], tri[2] - tri[0], *opposite - tri[0]);
            (e1.cross(e2).dot(h), e1.length() * e2.length() * h.length())
        })
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or((0.0, 0.0));
    // A flat tetrahedron has no inside, so every face is tested.
    let flat = volume.abs() <= 1e-12 * scale;
    let mut best: Option<(f64, DVec3, u8)> = None;
    for (tri, _, index) in faces {
        let n = (tri[1] - tri[0]).cross(tri[2] - tri[0]);
        let sign_origin = n.dot(-tri[0]);
        // The origin is outside this face when it lies on the other side from the fourth vertex.
        if !(flat || sign_origin * volume < 0.0) {
            continue;
        }
        let (q, local) = closest_on_triangle_origin(tri[0], tri[1], tri[2]);
        let d2 = q.length_squared();
        if best.is_none_or(|(bd, _, _)| d2 < bd) {
            let mut mask = 0;
            for (k, &vertex) in index.iter().enumerate() {
                if local & (1 << k) != 0 {
                    mask |= 1 << vertex;
                }
            }
            best = Some((d2, q, mask));
        }
    }
    best.map_or((DVec3::ZERO, 0), |(_, q, mask)| (q, mask))
}

/// Returns an affine transform from a basis given as three columns and an origin.
#[must_use]
pub fn affine(x: Vec3, y: Vec3, z: Vec3, origin: Vec3) -> Affine3A {
    Affine3A {
        matrix3: Mat3A::from_cols(Vec3A::from(x), Vec3A::from(y), Vec3A::from(z)),
        translation: Vec3A::from(origin),
    }
}

/// [`Shape::distance`] of a sphere of `radius` (the same arithmetic, for loops that know the shape).
#[inline]
#[must_use]
pub(crate) fn sphere_distance(radius: f32, p: Vec3) -> f32 {
    p.length() - radius
}

/// [`Shape::distance`] of a capsule along local Y (the same arithmetic, for loops that know the
/// shape).
#[inline]
#[must_use]
pub(crate) fn capsule_distance(radius: f32, half_height: f32, p: Vec3) -> f32 {
    let y = p.y.max(-half_height).min(half_height);
    (p - Vec3::new(0.0, y, 0.0)).length() - radius
}

/// [`Shape::distance`] of a box of `half_extents` (the same arithmetic, for loops that know the
/// shape).
#[inline]
#[must_use]
pub(crate) fn box_distance(half_extents: Vec3, p: Vec3) -> f32 {
    let q = p.abs() - half_extents;
    q.max(Vec3::ZERO).length() + q.max_element().min(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::Lcg;
    use glam::Quat;

    /// Returns the smallest distance from `p` to the surface points produced by `sample(u, v)` over an
    /// `n × n` grid of parameters in [0, 1]².
    fn sampled_distance(p: Vec3, n: usize, sample: impl Fn(f32, f32) -> Vec3) -> f32 {
        let mut best = f32::INFINITY;
        for i in 0..=n {
            for j in 0..=n {
                let q = sample(i as f32 / n as f32, j as f32 / n as f32);
                best = best.min(p.distance(q));
            }
        }
        best
    }

    fn some_transform(rng: &mut Lcg) -> Affine3A {
        Affine3A::from_rotation_translation(rng.quat(), rng.vec3() * 3.0)
    }

    /// Checks the closest point against a brute-force search of the world-space surface for random
    /// query points outside the shape; `tol` covers the sampling grid's resolution.
    fn check_against_surface(
        shape: &Shape,
        surface: impl Fn(f32, f32) -> Vec3,
        inside: impl Fn(Vec3) -> bool,
        n: usize,
        tol: f32,
    ) {
        let mut rng = Lcg(11);
        for _ in 0..40 {
            let t = some_transform(&mut rng);
            let p_local = rng.vec3() * 3.0;
            let p = t.transform_point3(p_local);
            let q = shape.closest_point(&t, p).expect("a closest point");
            if inside(p_local) {
                assert!(q.distance(p) < 1e-4, "inside point returns itself");
                continue;
            }
            let brute = sampled_distance(p, n, |u, v| t.transform_point3(surface(u, v)));
            let got = p.distance(q);
            assert!(got <= brute + 1e-4, "{shape:?}: {got} > brute {brute}");
            assert!(
                got >= brute - tol,
                "{shape:?}: {got} < brute {brute} - {tol}"
            );
        }
    }

    #[test]
    fn box_against_brute_force() {
        let h = Vec3::new(0.5, 1.0, 0.2);
        let shape = Shape::Box { half_extents: h };
        // Six faces unrolled into one parameter square: u picks the face band, v and the sub-u span it.
        let surface = |u: f32, v: f32| {
            let face = ((u * 6.0).floor() as usize).min(5);
            let s = (u * 6.0 - face as f32) * 2.0 - 1.0;
            let t = v * 2.0 - 1.0;
            let sign = if face.is_multiple_of(2) { 1.0 } else { -1.0 };
            match face / 2 {
                0 => Vec3::new(sign * h.x, s * h.y, t * h.z),
                1 => Vec3::new(s * h.x, sign * h.y, t * h.z),
                _ => Vec3::new(s * h.x, t * h.y, sign * h.z),
            }
        };
        let inside = |p: Vec3| p.abs().cmple(h).all();
        check_against_surface(&shape, surface, inside, 600, 0.02);
    }

    #[test]
    fn sphere_against_brute_force() {
        let shape = Shape::Sphere { radius: 0.7 };
        let surface = |u: f32, v: f32| {
            let (theta, phi) = (u * std::f32::consts::TAU, v * std::f32::consts::PI);
            Vec3::new(phi.sin() * theta.cos(), phi.cos(), phi.sin() * theta.sin()) * 0.7
        };
        check_against_surface(&shape, surface, |p| p.length() <= 0.7, 300, 0.01);
    }

    #[test]
    fn capsule_against_brute_force() {
        let (r, height) = (0.3, 1.6);
        let shape = Shape::capsule(r, height);
        let half = 0.5 * height - r;
        // The capsule is the set of points at distance r from the segment; sample it as a sphere swept
        // along the axis.
        let surface = |u: f32, v: f32| {
            let (theta, phi) = (u * std::f32::consts::TAU, v * std::f32::consts::PI);
            let dir = Vec3::new(phi.sin() * theta.cos(), phi.cos(), phi.sin() * theta.sin());
            let centre = Vec3::new(0.0, if dir.y >= 0.0 { half } else { -half }, 0.0);
            centre + dir * r
        };
        let inside = |p: Vec3| {
            let a = Vec3::new(0.0, p.y.clamp(-half, half), 0.0);
            p.distance(a) <= r
        };
        // The lateral surface is also covered: every lateral point lies on a hemisphere's equator band.
        let lateral = |u: f32, v: f32| {
            let theta = u * std::f32::consts::TAU;
            Vec3::new(r * theta.cos(), -half + 2.0 * half * v, r * theta.sin())
        };
        let mut rng = Lcg(5);
        for _ in 0..40 {
            let t = some_transform(&mut rng);
            let p_local = rng.vec3() * 3.0;
            let p = t.transform_point3(p_local);
            let q = shape.closest_point(&t, p).unwrap();
            if inside(p_local) {
                assert!(q.distance(p) < 1e-4);
                continue;
            }
            let brute = sampled_distance(p, 300, |u, v| t.transform_point3(surface(u, v))).min(
                sampled_distance(p, 300, |u, v| t.transform_point3(lateral(u, v))),
            );
            let got = p.distance(q);
            assert!(
                got <= brute + 1e-4 && got >= brute - 0.01,
                "{got} vs {brute}"
            );
        }
    }

    #[test]
    fn cylinder_against_brute_force() {
        let (r, height) = (0.4, 1.2);
        let shape = Shape::cylinder(r, height);
        let half = 0.5 * height;
        // Lateral surface for u < 0.5, the two caps (as discs) for u ≥ 0.5.
        let surface = |u: f32, v: f32| {
            if u < 0.5 {
                let theta = u * 2.0 * std::f32::consts::TAU;
                Vec3::new(r * theta.cos(), -half + 2.0 * half * v, r * theta.sin())
            } else {
                let k = (u - 0.5) * 2.0;
                let y = if k < 0.5 { half } else { -half };
                let rad = r * ((k * 2.0) % 1.0);
                let theta = v * std::f32::consts::TAU;
                Vec3::new(rad * theta.cos(), y, rad * theta.sin())
            }
        };
        let inside = |p: Vec3| p.y.abs() <= half && Vec3::new(p.x, 0.0, p.z).length() <= r;
        check_against_surface(&shape, surface, inside, 700, 0.02);
    }

    /// The hull faces of a small point set by brute force: every triangle with all points on one side.
    fn hull_faces(points: &[Vec3]) -> Vec<[Vec3; 3]> {
        let mut faces = Vec::new();
        let n = points.len();
        for i in 0..n {
            for j in i + 1..n {
                for k in j + 1..n {
                    let (a, b, c) = (points[i], points[j], points[k]);
                    let normal = (b - a).cross(c - a);
                    if normal.length_squared() < 1e-10 {
                        continue;
                    }
                    let side = points.iter().map(|p| normal.dot(*p - a));
                    let (mut pos, mut neg) = (false, false);
                    for s in side {
                        pos |= s > 1e-6;
                        neg |= s < -1e-6;
                    }
                    if !(pos && neg) {
                        faces.push([a, b, c]);
                    }
                }
            }
        }
        faces
    }

    #[test]
    fn convex_hull_against_brute_force() {
        let mut rng = Lcg(17);
        for round in 0..20 {
            let points: Vec<Vec3> = (0..12 + round).map(|_| rng.vec3() * 1.5).collect();
            let faces = hull_faces(&points);
            assert!(!faces.is_empty());
            let shape = Shape::convex(&points);
            let t = some_transform(&mut rng);
            for _ in 0..20 {
                let p_local = rng.vec3() * 4.0;
                let p = t.transform_point3(p_local);
                let q = shape.closest_point(&t, p).unwrap();
                let inside = faces.iter().all(|f| {
                    let n = (f[1] - f[0]).cross(f[2] - f[0]);
                    let centroid = points.iter().copied().sum::<Vec3>() / points.len() as f32;
                    let inward = n.dot(centroid - f[0]).signum();
                    n.dot(p_local - f[0]) * inward >= 0.0
                });
                if inside {
                    assert!(q.distance(p) < 1e-4, "inside point returns itself");
                    continue;
                }
                let brute = faces
                    .iter()
                    .map(|f| p_local.distance(closest_on_triangle(p_local, f[0], f[1], f[2])))
                    .fold(f32::INFINITY, f32::min);
                let got = p.distance(q);
                assert!(
                    (got - brute).abs() < 2e-4,
                    "round {round}: {got} vs {brute}"
                );
            }
        }
    }

    #[test]
    fn trimesh_against_brute_force() {
        let mut rng = Lcg(23);
        let mut verts = Vec::new();
        for _ in 0..30 {
            let c = rng.vec3() * 2.0;
            verts.extend([c, c + rng.vec3() * 0.5, c + rng.vec3() * 0.5]);
        }
        let shape = Shape::trimesh(&verts);
        let t = some_transform(&mut rng);
        for _ in 0..30 {
            let p_local = rng.vec3() * 3.0;
            let p = t.transform_point3(p_local);
            let q = shape.closest_point(&t, p).unwrap();
            // Brute force: densely sample every triangle with barycentric coordinates.
            let mut best = f32::INFINITY;
            for tri in verts.chunks_exact(3) {
                best = best.min(sampled_distance(p_local, 60, |u, v| {
                    let (u, v) = if u + v > 1.0 {
                        (1.0 - u, 1.0 - v)
                    } else {
                        (u, v)
                    };
                    tri[0] + (tri[1] - tri[0]) * u + (tri[2] - tri[0]) * v
                }));
            }
            let got = p.distance(q);
            assert!(got <= best + 1e-4 && got >= best - 0.01, "{got} vs {best}");
        }
    }

    #[test]
    fn world_boundary_against_brute_force() {
        let normal = Vec3::new(0.3, 1.0, -0.2).normalize();
        let (shape, placed) = Shape::world_boundary(normal, 0.4).unwrap();
        let mut rng = Lcg(29);
        let t = some_transform(&mut rng);
        let placed_t = t * placed;
        // An orthonormal frame on the plane for sampling a 20 m patch.
        let u_axis = normal.any_orthonormal_vector();
        let v_axis = normal.cross(u_axis);
        for _ in 0..30 {
            let p_local = rng.vec3() * 3.0;
            let p = t.transform_point3(p_local);
            let q = shape.closest_point(&placed_t, p).unwrap();
            if normal.dot(p_local) <= 0.4 {
                assert!(q.distance(p) < 1e-4, "below the boundary is inside");
                continue;
            }
            let brute = sampled_distance(p_local, 400, |u, v| {
                normal * 0.4 + u_axis * (u * 20.0 - 10.0) + v_axis * (v * 20.0 - 10.0)
            });
            let got = p.distance(q);
            assert!(
                got <= brute + 1e-4 && got >= brute - 0.04,
                "{got} vs {brute}"
            );
            // The result lies on the plane (in world space).
            let back = t.inverse().transform_point3(q);
            assert!((normal.dot(back) - 0.4).abs() < 1e-4);
        }
    }

    #[test]
    fn known_values_under_a_transform() {
        // A 2 m × 3 m × 0.2 m wall turned 90° about Y and moved to x = -1.
        let wall = Shape::Box {
            half_extents: Vec3::new(1.0, 1.5, 0.1),
        };
        let t = Affine3A::from_rotation_translation(
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            Vec3::new(-1.0, 1.5, 0.0),
        );
        let q = wall.closest_point(&t, Vec3::new(0.0, 1.4, 0.3)).unwrap();
        assert!(q.distance(Vec3::new(-0.9, 1.4, 0.3)) < 1e-5, "{q}");
        // Uniform scale 2 doubles the sphere.
        let s = Affine3A::from_scale(Vec3::splat(2.0));
        let q = Shape::Sphere { radius: 0.5 }
            .closest_point(&s, Vec3::new(3.0, 0.0, 0.0))
            .unwrap();
        assert!(q.distance(Vec3::new(1.0, 0.0, 0.0)) < 1e-5);
        // A capsule's height includes its caps: the top is at height / 2.
        let q = Shape::capsule(0.25, 1.75)
            .closest_point_local(Vec3::new(0.0, 5.0, 0.0))
            .unwrap();
        assert!(q.distance(Vec3::new(0.0, 0.875, 0.0)) < 1e-5);
    }

    #[test]
    fn several_shapes_pick_the_nearest() {
        let shapes = [
            (
                Shape::Sphere { radius: 0.5 },
                Affine3A::from_translation(Vec3::new(3.0, 0.0, 0.0)),
            ),
            (
                Shape::Box {
                    half_extents: Vec3::splat(0.5),
                },
                Affine3A::from_translation(Vec3::new(-2.0, 0.0, 0.0)),
            ),
        ];
        let q = closest_point_on_shapes(&shapes, Vec3::ZERO).unwrap();
        assert!(q.distance(Vec3::new(-1.5, 0.0, 0.0)) < 1e-5);
        assert!(closest_point_on_shapes(&[], Vec3::ZERO).is_none());
    }

    #[test]
    fn bad_input_gives_none_without_panicking() {
        let t = Affine3A::IDENTITY;
        let sphere = Shape::Sphere { radius: 1.0 };
        assert!(sphere.closest_point(&t, Vec3::NAN).is_none());
        assert!(sphere
            .closest_point(&Affine3A::from_scale(Vec3::ZERO), Vec3::ONE)
            .is_none());
        let nan_t = Affine3A::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
        assert!(sphere.closest_point(&nan_t, Vec3::ONE).is_none());
        assert!(Shape::convex(&[]).closest_point(&t, Vec3::ONE).is_none());
        assert!(Shape::trimesh(&[Vec3::ONE])
            .closest_point(&t, Vec3::ONE)
            .is_none());
        assert!(Shape::world_boundary(Vec3::ZERO, 0.0).is_none());
        // Degenerate convex inputs: one point, collinear points, coplanar points.
        let one = Shape::convex(&[Vec3::X]);
        assert!(one.closest_point(&t, Vec3::ZERO).unwrap().distance(Vec3::X) < 1e-6);
        let line = Shape::convex(&[Vec3::ZERO, Vec3::X, Vec3::X * 2.0]);
        let q = line.closest_point(&t, Vec3::new(1.5, 1.0, 0.0)).unwrap();
        assert!(q.distance(Vec3::new(1.5, 0.0, 0.0)) < 1e-5, "{q}");
        let flat = Shape::convex(&[Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::X + Vec3::Z]);
        let q = flat.closest_point(&t, Vec3::new(0.5, 2.0, 0.5)).unwrap();
        assert!(q.distance(Vec3::new(0.5, 0.0, 0.5)) < 1e-5, "{q}");
        // Huge values stay finite or give None.
        let big = Shape::Box {
            half_extents: Vec3::splat(f32::MAX),
        };
        let _ = big.closest_point(&t, Vec3::splat(1e30));
    }
}
