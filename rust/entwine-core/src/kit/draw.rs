//! Line geometry for debug drawing and the editor's gizmos: circles and rings as segments, a
//! box's corners and edges. Each returns the segments' end points; the glue only hands them to
//! the engine's line drawing.

use glam::{Affine3A, Vec2, Vec3};

/// Returns the segments of the unit circle cut into `segments` pieces (at least 3), each as its
/// two end points, counter-clockwise from `(1, 0)`; point `i` is at the angle `i / segments · τ`.
pub fn circle(segments: usize) -> impl Iterator<Item = (Vec2, Vec2)> {
    let n = segments.max(3);
    let at = move |i: usize| {
        let t = i as f32 / n as f32 * std::f32::consts::TAU;
        Vec2::new(t.cos(), t.sin())
    };
    (0..n).map(move |i| (at(i), at(i + 1)))
}

/// Returns the segments of a circle of `radius` round `centre` in a plane (a ground ring).
pub fn ring(centre: Vec2, radius: f32, segments: usize) -> impl Iterator<Item = (Vec2, Vec2)> {
    circle(segments).map(move |(a, b)| (centre + a * radius, centre + b * radius))
}

/// Returns the segments of a circle of `radius` round `centre` in the plane spanned by `a` (where
/// it starts) and `b` (a quarter turn on).
pub fn circle_in(
    centre: Vec3,
    a: Vec3,
    b: Vec3,
    radius: f32,
    segments: usize,
) -> impl Iterator<Item = (Vec3, Vec3)> {
    let at = move |u: Vec2| centre + (a * u.x + b * u.y) * radius;
    circle(segments).map(move |(p, q)| (at(p), at(q)))
}

/// Returns the segments of three great circles of a sphere (in the XY, YZ and ZX planes): how a
/// sphere is drawn with lines.
pub fn sphere(centre: Vec3, radius: f32, segments: usize) -> impl Iterator<Item = (Vec3, Vec3)> {
    [(Vec3::X, Vec3::Y), (Vec3::Y, Vec3::Z), (Vec3::Z, Vec3::X)]
        .into_iter()
        .flat_map(move |(a, b)| circle_in(centre, a, b, radius, segments))
}

/// Returns the eight corners of the box from `min` spanning `size`; corner `k`'s bits 1, 2 and 4
/// choose the far side along x, y and z.
pub fn box_corners(min: Vec3, size: Vec3) -> [Vec3; 8] {
    std::array::from_fn(|k| {
        let pick = |bit: usize, s: f32| if k & bit == 0 { 0.0 } else { s };
        min + Vec3::new(pick(1, size.x), pick(2, size.y), pick(4, size.z))
    })
}

/// Returns the twelve edges of a cube with side `side` centred in `frame` (its axes, scale and
/// position), in the world.
pub fn cube_edges(frame: Affine3A, side: f32) -> [(Vec3, Vec3); 12] {
    let corners =
        box_corners(Vec3::splat(-side * 0.5), Vec3::splat(side)).map(|c| frame.transform_point3(c));
    let mut edges = [(Vec3::ZERO, Vec3::ZERO); 12];
    let mut n = 0;
    for (k, &c) in corners.iter().enumerate() {
        for bit in [1, 2, 4] {
            if k & bit == 0 {
                edges[n] = (c, corners[k | bit]);
                n += 1;
            }
        }
    }
    edges
}

/// Returns a cross of two segments `half` either side of `centre`, along x and along y.
pub fn cross(centre: Vec2, half: f32) -> [(Vec2, Vec2); 2] {
    [
        (centre - Vec2::X * half, centre + Vec2::X * half),
        (centre - Vec2::Y * half, centre + Vec2::Y * half),
    ]
}

/// Returns a three-axis cross (a star) of segments `half` either side of `centre`, along x, y
/// and z: a point marked in space.
pub fn star(centre: Vec3, half: f32) -> [(Vec3, Vec3); 3] {
    [Vec3::X, Vec3::Y, Vec3::Z].map(|axis| (centre - axis * half, centre + axis * half))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close2(a: Vec2, b: Vec2) -> bool {
        (a - b).length() < 1e-5
    }

    #[test]
    fn a_circle_is_closed_and_on_its_radius() {
        let segs: Vec<_> = ring(Vec2::new(2.0, -1.0), 0.5, 16).collect();
        assert_eq!(segs.len(), 16);
        assert!(close2(segs[0].0, Vec2::new(2.5, -1.0)));
        assert!(
            close2(segs[15].1, segs[0].0),
            "the last segment ends where the first starts"
        );
        for w in segs.windows(2) {
            assert_eq!(w[0].1, w[1].0, "segments join");
        }
        for (a, _) in &segs {
            assert!(((*a - Vec2::new(2.0, -1.0)).length() - 0.5).abs() < 1e-5);
        }
        // A quarter of the way round is a quarter turn counter-clockwise.
        assert!(close2(segs[4].0, Vec2::new(2.0, -0.5)));
        assert_eq!(circle(1).count(), 3, "at least a triangle");
    }

    #[test]
    fn a_sphere_is_three_great_circles_in_the_axis_planes() {
        let c = Vec3::new(1.0, 2.0, 3.0);
        let segs: Vec<_> = sphere(c, 2.0, 32).collect();
        assert_eq!(segs.len(), 96);
        for (i, axis) in [Vec3::Z, Vec3::X, Vec3::Y].into_iter().enumerate() {
            for (a, b) in &segs[i * 32..(i + 1) * 32] {
                assert!(((*a - c).length() - 2.0).abs() < 1e-5);
                assert!(
                    (*a - c).dot(axis).abs() < 1e-5,
                    "circle {i} lies across {axis}"
                );
                assert!((*b - c).dot(axis).abs() < 1e-5);
            }
        }
        // The plane's first axis is where each circle starts.
        assert!((segs[0].0 - (c + Vec3::X * 2.0)).length() < 1e-5);
        assert!((segs[32].0 - (c + Vec3::Y * 2.0)).length() < 1e-5);
    }

    #[test]
    fn a_cube_has_twelve_edges_of_its_side_round_its_centre() {
        let frame = Affine3A::from_scale_rotation_translation(
            Vec3::splat(2.0),
            glam::Quat::from_rotation_y(0.7),
            Vec3::new(5.0, 1.0, -2.0),
        );
        let edges = cube_edges(frame, 0.5);
        let mut sum = Vec3::ZERO;
        for (a, b) in edges {
            // Each edge is the side times the frame's scale long.
            assert!(((a - b).length() - 1.0).abs() < 1e-5, "{a} → {b}");
            sum += a + b;
        }
        assert!((sum / 24.0 - Vec3::new(5.0, 1.0, -2.0)).length() < 1e-5);
        let distinct = edges
            .iter()
            .enumerate()
            .all(|(i, e)| edges[..i].iter().all(|f| f != e));
        assert!(distinct, "no edge twice");
    }

    #[test]
    fn box_corners_span_the_box_bit_by_axis() {
        let c = box_corners(Vec3::new(-1.0, 0.0, 2.0), Vec3::new(2.0, 3.0, 4.0));
        assert_eq!(c[0], Vec3::new(-1.0, 0.0, 2.0));
        assert_eq!(c[1], Vec3::new(1.0, 0.0, 2.0));
        assert_eq!(c[2], Vec3::new(-1.0, 3.0, 2.0));
        assert_eq!(c[4], Vec3::new(-1.0, 0.0, 6.0));
        assert_eq!(c[7], Vec3::new(1.0, 3.0, 6.0));
    }

    #[test]
    fn a_cross_is_two_segments_along_the_axes() {
        let [x, y] = cross(Vec2::new(1.0, 1.0), 0.12);
        assert!(close2(x.0, Vec2::new(0.88, 1.0)) && close2(x.1, Vec2::new(1.12, 1.0)));
        assert!(close2(y.0, Vec2::new(1.0, 0.88)) && close2(y.1, Vec2::new(1.0, 1.12)));
    }

    #[test]
    fn a_star_marks_a_point_along_each_axis() {
        let c = Vec3::new(1.0, 2.0, 3.0);
        let s = star(c, 0.5);
        for ((a, b), axis) in s.into_iter().zip([Vec3::X, Vec3::Y, Vec3::Z]) {
            assert_eq!((a + b) * 0.5, c);
            assert_eq!(b - a, axis);
        }
    }
}
