//! The geometry behind the editor's handles: where a handle is drawn for a property's value, and
//! which value a handle dragged to a point gives back. Engine-free, so every mapping is tested
//! here; the editor glue only turns the mouse into a ray and writes the property.
//!
//! Every `*_from_handle` function inverts its `*_handle` partner: putting a handle where the
//! forward mapping drew it gives the property's value back (up to rounding). Bad input (NaN, a
//! ray parallel to the drag plane, a zero direction) gives `None`, and the caller keeps the old
//! value.

use glam::{Affine3A, Vec2, Vec3};

use crate::formation::editor::{Draft, POINT_RING};

pub use crate::kit::ray_plane;

/// The parameter `s` of the point `line_origin + s · line_direction` nearest to the ray
/// (`origin`, `direction`): how far along an axis a handle dragged with the mouse lies. `None`
/// when the ray runs parallel to the axis or the input is not finite.
pub fn ray_axis(
    origin: Vec3,
    direction: Vec3,
    line_origin: Vec3,
    line_direction: Vec3,
) -> Option<f32> {
    let u = line_direction.normalize_or_zero();
    let v = direction.normalize_or_zero();
    if u == Vec3::ZERO || v == Vec3::ZERO {
        return None;
    }
    let w = line_origin - origin;
    let b = u.dot(v);
    let denom = 1.0 - b * b;
    if denom < 1e-6 {
        return None;
    }
    let d = u.dot(w);
    let e = v.dot(w);
    let s = (b * e - d) / denom;
    // In units of the line's own direction, so `line_origin + s · line_direction` is the point.
    let s = s / line_direction.length();
    s.is_finite().then_some(s)
}

/// The handle of a pole direction: `length` from `root` along `direction` (given in the space of
/// `frame`, e.g. a skeleton's), in the world. `None` for a zero direction.
pub fn pole_handle(frame: Affine3A, root: Vec3, direction: Vec3, length: f32) -> Option<Vec3> {
    let world = frame.transform_vector3(direction).normalize_or_zero();
    (world != Vec3::ZERO && length.is_finite()).then(|| root + world * length)
}

/// The pole direction (in `frame`'s space, unit length) for a handle dragged to `handle`; `None`
/// when the handle sits on the root.
pub fn pole_from_handle(frame: Affine3A, root: Vec3, handle: Vec3) -> Option<Vec3> {
    let local = crate::kit::affine_inverse(frame).transform_vector3(handle - root);
    let unit = local.normalize_or_zero();
    (unit != Vec3::ZERO && unit.is_finite()).then_some(unit)
}

/// The handle of an offset given in a body's frame and multiplied by the body's proportion `k`
/// (a follow or preparation offset tuned for a 1.75 m character): `body · (offset · k)`.
pub fn offset_handle(body: Affine3A, offset: Vec3, k: f32) -> Vec3 {
    body.transform_point3(offset * k)
}

/// The offset (for a 1.75 m character) whose handle is at `handle`: the inverse of
/// [`offset_handle`]. `None` for a non-positive or non-finite `k`.
pub fn offset_from_handle(body: Affine3A, handle: Vec3, k: f32) -> Option<Vec3> {
    if !(k.is_finite() && k > 0.0) {
        return None;
    }
    let local = crate::kit::affine_inverse(body).transform_point3(handle) / k;
    local.is_finite().then_some(local)
}

/// The handle of a sphere's radius: on the sphere, along `axis` from its centre.
pub fn radius_handle(centre: Vec3, radius: f32, axis: Vec3) -> Vec3 {
    centre + axis.normalize_or(Vec3::X) * radius.max(0.0)
}

/// The radius for a handle dragged to `handle`: its distance from the centre.
pub fn radius_from_handle(centre: Vec3, handle: Vec3) -> Option<f32> {
    let r = (handle - centre).length();
    r.is_finite().then_some(r)
}

/// The reach sphere's radius of an arm `arm` metres long (upper arm plus forearm, in the world)
/// with a reach margin `margin` given for an arm `reference` metres long: the margin scales with
/// the arm, `arm − margin · arm / reference`.
pub fn reach_radius(arm: f32, margin: f32, reference: f32) -> f32 {
    arm - margin * arm / reference
}

/// The reach margin (for an arm `reference` metres long) whose reach sphere on an arm `arm` metres
/// long has the radius `radius`: the inverse of [`reach_radius`]. `None` for a non-positive arm or
/// reference, or non-finite input.
pub fn margin_from_radius(arm: f32, radius: f32, reference: f32) -> Option<f32> {
    if !(arm.is_finite() && arm > 0.0 && reference.is_finite() && reference > 0.0) {
        return None;
    }
    let margin = (arm - radius) * reference / arm;
    margin.is_finite().then_some(margin)
}

/// The handles of a box centred in `frame` with `size` (full extents): the middles of its +X, +Y
/// and +Z faces, in the world.
pub fn box_handles(frame: Affine3A, size: Vec3) -> [Vec3; 3] {
    let h = size * 0.5;
    [
        frame.transform_point3(Vec3::new(h.x, 0.0, 0.0)),
        frame.transform_point3(Vec3::new(0.0, h.y, 0.0)),
        frame.transform_point3(Vec3::new(0.0, 0.0, h.z)),
    ]
}

/// The handle of a face of a box that grows from a fixed point (the env-touch detection box grows
/// from the character's collider centre): `fixed + per_side · side`, where `per_side` is where the
/// face's middle sits, relative to the fixed point, per metre of the box's side.
pub fn face_handle(fixed: Vec3, per_side: Vec3, side: f32) -> Vec3 {
    fixed + per_side * side
}

/// The box's side for its face handle (see [`face_handle`]) dragged to `handle`: the side whose
/// face plane (outward `normal`) passes through the handle, so the face follows the mouse. `None`
/// when the face does not move along its normal as the box grows, or for non-finite input.
pub fn side_from_face(fixed: Vec3, per_side: Vec3, normal: Vec3, handle: Vec3) -> Option<f32> {
    let n = normal.normalize_or_zero();
    let rate = per_side.dot(n);
    if !(rate.is_finite() && rate.abs() > 1e-6) {
        return None;
    }
    let side = (handle - fixed).dot(n) / rate;
    side.is_finite().then_some(side)
}

/// The handle of a rope's length: `length` from the anchor along the rope's hanging direction.
pub fn length_handle(anchor: Vec3, direction: Vec3, length: f32) -> Vec3 {
    anchor + direction.normalize_or(Vec3::NEG_Y) * length.max(0.0)
}

/// The length for a length handle dragged to `handle`: its distance from the anchor along
/// `direction`, at least `min` (a rope keeps at least one segment).
pub fn length_from_handle(anchor: Vec3, direction: Vec3, handle: Vec3, min: f32) -> Option<f32> {
    let d = direction.normalize_or(Vec3::NEG_Y);
    let l = (handle - anchor).dot(d);
    l.is_finite().then_some(l.max(min))
}

/// The handle of a distance kept in front of a surface (an offset from a wall): `distance` from
/// `surface` along the surface's outward `normal`.
pub fn distance_handle(surface: Vec3, normal: Vec3, distance: f32) -> Vec3 {
    surface + normal.normalize_or(Vec3::Z) * distance
}

/// The distance (at least 0) for a distance handle dragged to `handle`.
pub fn distance_from_handle(surface: Vec3, normal: Vec3, handle: Vec3) -> Option<f32> {
    let d = (handle - surface).dot(normal.normalize_or(Vec3::Z));
    d.is_finite().then_some(d.max(0.0))
}

/// Segments of a circle a gizmo draws (a reach sphere's great circles, a formation point's ring).
pub const CIRCLE_SEGMENTS: usize = 32;

/// The range the env-touch box's face handles set `character_height` in, metres.
pub const CHARACTER_HEIGHT_RANGE: (f32, f32) = (0.01, 10.0);
/// The range the env-touch offset handle sets `surface_offset` in, metres.
pub const SURFACE_OFFSET_RANGE: (f32, f32) = (0.0, 0.3);
/// The range a reach sphere's handle sets `reach_margin` in, metres.
pub const REACH_MARGIN_RANGE: (f32, f32) = (0.0, 0.2);

/// The env-touch detection box's faces with handles: the middle of each per metre of the box's
/// side, relative to the character's collider centre, and its outward normal, in the character's
/// axes (the box is centred a quarter side up and half a side forward of the collider centre), with
/// the handle's name. The top face is handle 0, the left and front faces handles 2 and 3 (handle 1
/// is the surface offset); see [`touch_face`].
pub const TOUCH_FACES: [(Vec3, Vec3, &str); 3] = [
    (
        Vec3::new(0.0, 0.75, -0.5),
        Vec3::Y,
        "Detection box top face (character height)",
    ),
    (
        Vec3::new(-0.5, 0.25, -0.5),
        Vec3::NEG_X,
        "Detection box left face (character height)",
    ),
    (
        Vec3::new(0.0, 0.25, -1.0),
        Vec3::NEG_Z,
        "Detection box front face (character height)",
    ),
];

/// The face of [`TOUCH_FACES`] an env-touch handle drags, if it is a face's: handle 0 the top,
/// 2 the left, 3 the front.
pub fn touch_face(handle: usize) -> Option<(Vec3, Vec3, &'static str)> {
    match handle {
        0 => Some(TOUCH_FACES[0]),
        1 => None,
        n => TOUCH_FACES.get(n - 1).copied(),
    }
}

/// The factor an env-touch node's lengths are shown at: its character's height over the reference
/// human's with `auto_proportions`, else 1.
pub fn touch_scale(height: f32, auto_proportions: bool) -> f32 {
    if auto_proportions {
        height / crate::rig::REFERENCE_HEIGHT
    } else {
        1.0
    }
}

/// The env-touch node's height and collider centre (character frame) the gizmo sizes its box
/// from: the set height (`set`), else (`set` ≤ 0) the collider's height when its shape has one
/// (0 otherwise: no box); centred on the collider (`collider`: its position and its shape's
/// height), else half the set height up.
pub fn touch_size(set: f32, collider: Option<(Vec3, Option<f32>)>) -> (f32, Vec3) {
    match collider {
        None => (set, Vec3::new(0.0, set * 0.5, 0.0)),
        Some((centre, height)) if set <= 0.0 => (height.unwrap_or(0.0), centre),
        Some((centre, _)) => (set, centre),
    }
}

/// The `character_height` for a face handle of the touch box dragged to `handle` (see
/// [`side_from_face`]; `per_side` and `normal` in the world), within
/// [`CHARACTER_HEIGHT_RANGE`].
pub fn height_from_face(fixed: Vec3, per_side: Vec3, normal: Vec3, handle: Vec3) -> Option<f32> {
    let (lo, hi) = CHARACTER_HEIGHT_RANGE;
    side_from_face(fixed, per_side, normal, handle).map(|side| side.clamp(lo, hi))
}

/// The `surface_offset` for its handle dragged to `handle`: the distance in from the box's side
/// face (`surface`, `inward`) over the node's proportion `k`, within [`SURFACE_OFFSET_RANGE`].
pub fn surface_offset_from_handle(
    surface: Vec3,
    inward: Vec3,
    handle: Vec3,
    k: f32,
) -> Option<f32> {
    let (lo, hi) = SURFACE_OFFSET_RANGE;
    let d = distance_from_handle(surface, inward, handle)? / k.max(1e-3);
    Some(d.clamp(lo, hi))
}

/// One arm's reach sphere in the world: centred on its shoulder joint, the arm's length in the
/// world, and the direction out of the body on its side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach {
    /// The shoulder joint (world).
    pub centre: Vec3,
    /// Upper arm plus forearm, metres in the world.
    pub arm: f32,
    /// Out of the body on the arm's side (unit).
    pub outward: Vec3,
}

impl Reach {
    /// The reach sphere of an arm whose rest `joints` (shoulder, elbow, wrist; skeleton space) the
    /// skeleton's world `scale` carries into the world (the mean of its axes), its shoulder at
    /// `centre` (world), the body's `right` (world) and `left` when it is the left arm. `None`
    /// for an arm of no length or non-finite input.
    pub fn new(
        joints: [Vec3; 3],
        scale: Vec3,
        centre: Vec3,
        right: Vec3,
        left: bool,
    ) -> Option<Self> {
        let arm = crate::kit::chain_length(joints) * crate::rig::mean_scale(scale);
        let right = right.normalize_or(Vec3::X);
        let outward = if left { -right } else { right };
        (arm > 0.0 && arm.is_finite() && centre.is_finite()).then_some(Self {
            centre,
            arm,
            outward,
        })
    }

    /// The sphere's radius with the reach margin `margin` (see [`reach_radius`]).
    pub fn radius(&self, margin: f32) -> f32 {
        reach_radius(self.arm, margin, crate::rig::REFERENCE_ARM)
    }

    /// The margin's handle: on the sphere, out of the body.
    pub fn handle(&self, margin: f32) -> Vec3 {
        radius_handle(self.centre, self.radius(margin), self.outward)
    }

    /// The `reach_margin` for the handle dragged to `handle`, within [`REACH_MARGIN_RANGE`].
    pub fn margin_from_handle(&self, handle: Vec3) -> Option<f32> {
        let r = radius_from_handle(self.centre, handle)?;
        let margin = margin_from_radius(self.arm, r, crate::rig::REFERENCE_ARM)?;
        let (lo, hi) = REACH_MARGIN_RANGE;
        Some(margin.clamp(lo, hi))
    }
}

/// Calls `line(crowded, a, b)` for every line a formation being edited is drawn with, on its
/// ground (the controller's frame): a ring round each point, then each pair the contract's
/// spacing is measured over (`tolerance`: the controller's `contract_spacing`); a crowded pair
/// (`crowded` true, drawn in red) with a ring half again as wide round each of its points.
pub fn draft_lines(draft: &Draft, tolerance: f32, mut line: impl FnMut(bool, Vec2, Vec2)) {
    fn ring(line: &mut impl FnMut(bool, Vec2, Vec2), crowded: bool, p: Vec2, radius: f32) {
        for (a, b) in crate::kit::draw::ring(p, radius, CIRCLE_SEGMENTS) {
            line(crowded, a, b);
        }
    }
    for &p in &draft.points {
        ring(&mut line, false, p, POINT_RING);
    }
    for (i, j, crowded) in draft.spacing_pairs(tolerance) {
        let (a, b) = (draft.points[i], draft.points[j]);
        line(crowded, a, b);
        if crowded {
            ring(&mut line, true, a, POINT_RING * 1.5);
            ring(&mut line, true, b, POINT_RING * 1.5);
        }
    }
}

/// Where a save dialog browses for a path: Godot's resources (`res://`), the user's data
/// (`user://`) or the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `res://…`
    Resources,
    /// `user://…`
    UserData,
    /// Anywhere else.
    FileSystem,
}

/// Returns the place `path` is in (see [`Place`]).
pub fn place_of(path: &str) -> Place {
    if path.starts_with("res://") {
        Place::Resources
    } else if path.starts_with("user://") {
        Place::UserData
    } else {
        Place::FileSystem
    }
}

/// Returns the script path that follows `flag` in the editor's user arguments: `Ok(None)` when
/// the flag is not given, `Err` (the warning) when nothing follows it.
pub fn flag_value<'a, S: AsRef<str>>(args: &'a [S], flag: &str) -> Result<Option<&'a str>, String> {
    let Some(i) = args.iter().position(|a| a.as_ref() == flag) else {
        return Ok(None);
    };
    match args.get(i + 1) {
        Some(path) => Ok(Some(path.as_ref())),
        None => Err(format!("{flag} needs a res:// path after it")),
    }
}

/// The direction an EntwineLimbIK's pole handle is drawn along: its `pole_direction`, or +Z (the skeleton's
/// back) while it is zero, so the handle can be grabbed to set one.
pub fn pole_handle_direction(direction: Vec3) -> Vec3 {
    if direction == Vec3::ZERO {
        Vec3::Z
    } else {
        direction
    }
}

/// The direction a rope hangs in for its length handle: from the anchor to its last point, or
/// straight down when it has none or the two (nearly) meet.
pub fn rope_direction(anchor: Vec3, last: Option<Vec3>) -> Vec3 {
    last.map(|q| q - anchor)
        .filter(|d| d.length() > 1e-4)
        .unwrap_or(Vec3::NEG_Y)
}

/// A rope's length at rest: `point_count − 1` segments (at least one) of `segment` metres.
pub fn rope_length(point_count: i32, segment: f32) -> f32 {
    (point_count - 1).max(1) as f32 * segment
}

/// The point count for a rope's length handle dragged to `handle` (see [`length_handle`]): the
/// length rounded to whole segments of `segment` metres (at least 0.01), plus one, within
/// `2..=capacity`. `None` for non-finite input.
pub fn rope_point_count(
    anchor: Vec3,
    direction: Vec3,
    handle: Vec3,
    segment: f32,
    capacity: i32,
) -> Option<i32> {
    let seg = segment.max(0.01);
    let length = length_from_handle(anchor, direction, handle, seg)?;
    Some(((length / seg).round() as i32 + 1).clamp(2, capacity.max(2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn frame() -> Affine3A {
        Affine3A::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3),
            Vec3::new(1.0, 2.0, -3.0),
        )
    }

    fn near(a: Vec3, b: Vec3) {
        assert!((a - b).length() < 1e-4, "{a} vs {b}");
    }

    #[test]
    fn a_ray_meets_a_plane_in_front_and_not_behind_or_parallel() {
        let hit = ray_plane(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, Vec3::ZERO, Vec3::Y);
        near(hit.unwrap(), Vec3::ZERO);
        let slanted = ray_plane(
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::ZERO,
            Vec3::Y,
        );
        near(slanted.unwrap(), Vec3::new(1.0, 0.0, 0.0));
        assert!(ray_plane(Vec3::new(0.0, 5.0, 0.0), Vec3::Y, Vec3::ZERO, Vec3::Y).is_none());
        assert!(ray_plane(Vec3::new(0.0, 5.0, 0.0), Vec3::X, Vec3::ZERO, Vec3::Y).is_none());
        assert!(ray_plane(Vec3::NAN, Vec3::X, Vec3::ZERO, Vec3::Y).is_none());
    }

    #[test]
    fn a_ray_picks_the_nearest_point_on_an_axis() {
        // A ray looking down −Z at x = 3 crosses the X axis (scaled by 2) at s = 1.5.
        let s = ray_axis(
            Vec3::new(3.0, 0.0, 10.0),
            Vec3::NEG_Z,
            Vec3::ZERO,
            Vec3::new(2.0, 0.0, 0.0),
        );
        assert!((s.unwrap() - 1.5).abs() < 1e-5, "{s:?}");
        // Skew: the ray passes 1 above the axis; the nearest point is still at x = −2.
        let s = ray_axis(Vec3::new(-2.0, 1.0, 4.0), Vec3::NEG_Z, Vec3::ZERO, Vec3::X);
        assert!((s.unwrap() + 2.0).abs() < 1e-5, "{s:?}");
        assert!(ray_axis(Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::X).is_none());
        assert!(ray_axis(Vec3::ZERO, Vec3::ZERO, Vec3::Y, Vec3::X).is_none());
    }

    #[test]
    fn a_pole_handle_round_trips_through_a_rotated_scaled_frame() {
        let f = frame();
        let root = Vec3::new(0.5, 1.4, 0.0);
        let dir = Vec3::new(1.0, -1.0, 0.5).normalize();
        let h = pole_handle(f, root, dir, 0.6).unwrap();
        // The handle is 0.6 m from the root whatever the frame's scale.
        assert!(((h - root).length() - 0.6).abs() < 1e-5);
        near(pole_from_handle(f, root, h).unwrap(), dir);
        assert!(pole_handle(f, root, Vec3::ZERO, 0.6).is_none());
        assert!(pole_from_handle(f, root, root).is_none());
    }

    #[test]
    fn an_offset_handle_round_trips_with_the_body_and_its_proportion() {
        let f = frame();
        let offset = Vec3::new(-0.55, 0.0, 0.1);
        for k in [0.01, 1.0, 100.0] {
            let h = offset_handle(f, offset, k);
            near(offset_from_handle(f, h, k).unwrap(), offset);
        }
        // At k = 1 and an identity body the handle is the offset itself.
        near(offset_handle(Affine3A::IDENTITY, offset, 1.0), offset);
        assert!(offset_from_handle(f, Vec3::ONE, 0.0).is_none());
        assert!(offset_from_handle(f, Vec3::ONE, f32::NAN).is_none());
    }

    #[test]
    fn a_radius_handle_sits_on_the_sphere_and_gives_its_radius_back() {
        let c = Vec3::new(1.0, 2.0, 3.0);
        let h = radius_handle(c, 0.54, Vec3::new(0.0, 0.0, -4.0));
        near(h, Vec3::new(1.0, 2.0, 3.0 - 0.54));
        assert!((radius_from_handle(c, h).unwrap() - 0.54).abs() < 1e-6);
        near(radius_handle(c, -1.0, Vec3::X), c);
    }

    #[test]
    fn a_reach_radius_round_trips_through_its_margin() {
        // The seed's 0.54 m arm with a 2 cm margin reaches 0.52 m; a twice as long arm twice that.
        assert!((reach_radius(0.54, 0.02, 0.54) - 0.52).abs() < 1e-6);
        assert!((reach_radius(1.08, 0.02, 0.54) - 1.04).abs() < 1e-6);
        for (arm, margin) in [(0.54, 0.0), (0.54, 0.2), (0.3, 0.05), (54.0, 0.1)] {
            let r = reach_radius(arm, margin, 0.54);
            let back = margin_from_radius(arm, r, 0.54).unwrap();
            assert!(
                (back - margin).abs() < 1e-5,
                "arm {arm}: {back} vs {margin}"
            );
        }
        // A radius handle on the sphere gives the radius, so the margin, back.
        let c = Vec3::new(0.2, 1.4, 0.0);
        let h = radius_handle(c, reach_radius(0.54, 0.05, 0.54), Vec3::NEG_X);
        let r = radius_from_handle(c, h).unwrap();
        assert!((margin_from_radius(0.54, r, 0.54).unwrap() - 0.05).abs() < 1e-5);
        assert!(margin_from_radius(0.0, 0.5, 0.54).is_none());
        assert!(margin_from_radius(0.54, f32::NAN, 0.54).is_none());
    }

    #[test]
    fn box_handles_are_the_face_middles() {
        let f = frame();
        let size = Vec3::new(1.75, 1.2, 0.8);
        let hs = box_handles(f, size);
        for (axis, h) in hs.iter().enumerate() {
            let mut middle = Vec3::ZERO;
            middle[axis] = size[axis] * 0.5;
            near(*h, f.transform_point3(middle));
        }
    }

    /// The seed's detection box for a 1.75 m character (centre a quarter side up and half a side
    /// forward of the collider centre): each face's middle per metre of side, and its normal.
    const SEED_FACES: [(Vec3, Vec3); 5] = [
        (Vec3::new(0.0, 0.75, -0.5), Vec3::Y),
        (Vec3::new(0.0, -0.25, -0.5), Vec3::NEG_Y),
        (Vec3::new(-0.5, 0.25, -0.5), Vec3::NEG_X),
        (Vec3::new(0.5, 0.25, -0.5), Vec3::X),
        (Vec3::new(0.0, 0.25, -1.0), Vec3::NEG_Z),
    ];

    #[test]
    fn a_face_handle_of_a_growing_box_round_trips() {
        let c = Vec3::new(0.0, 0.875, 0.0);
        let b = crate::env_touch::detection_box(1.75, c).unwrap();
        for (per_side, normal) in SEED_FACES {
            let h = face_handle(c, per_side, b.size);
            // Drawn on the middle of the box's face.
            let middle = b.centre + normal * b.size * 0.5;
            assert!((h - middle).length() < 1e-5, "{h} vs {middle}");
            assert!((side_from_face(c, per_side, normal, h).unwrap() - 1.75).abs() < 1e-5);
            // A sideways drag along the face changes nothing.
            let along = normal.cross(Vec3::new(0.3, 0.7, 0.1)).normalize() * 0.4;
            let same = side_from_face(c, per_side, normal, h + along).unwrap();
            assert!((same - 1.75).abs() < 1e-5);
        }
        // The back face stays through the collider centre whatever the side: it gives nothing.
        assert!(side_from_face(c, Vec3::new(0.0, 0.25, 0.0), Vec3::Z, c).is_none());
    }

    #[test]
    fn every_face_follows_the_mouse_by_what_it_is_dragged() {
        // Each face dragged 0.1 m out (and 0.1 m in): the box for the side it gives has that face
        // 0.1 m further out (in), on the plane through the dragged handle, in a turned frame too.
        let body = frame();
        let c = body.transform_point3(Vec3::new(0.0, 0.875, 0.0));
        for (per_side, normal) in SEED_FACES {
            let per_side = body.transform_vector3(per_side);
            let normal = body.transform_vector3(normal).normalize();
            let h = face_handle(c, per_side, 1.75);
            for d in [0.1f32, -0.1] {
                let side = side_from_face(c, per_side, normal, h + normal * d).unwrap();
                let moved = (face_handle(c, per_side, side) - h).dot(normal);
                assert!((moved - d).abs() < 1e-4, "{normal}: {d} m gave {moved} m");
            }
        }
        // In the character's own frame: the top face rises 0.1 m for a 0.1 / 0.75 m taller box,
        // each side face 0.1 m out for a 0.2 m wider one, the front 0.1 m out for 0.1 m more.
        let c = Vec3::new(0.0, 0.875, 0.0);
        for ((per_side, normal), grown) in
            SEED_FACES
                .iter()
                .zip([0.1 / 0.75, 0.1 / 0.25, 0.2, 0.2, 0.1])
        {
            let h = face_handle(c, *per_side, 1.75);
            let side = side_from_face(c, *per_side, *normal, h + *normal * 0.1).unwrap();
            assert!((side - 1.75 - grown).abs() < 1e-5, "{normal}: {side}");
        }
    }

    #[test]
    fn a_length_handle_round_trips_and_keeps_a_minimum() {
        let a = Vec3::new(0.0, 3.0, 0.0);
        let dir = Vec3::new(0.2, -1.0, 0.0);
        let h = length_handle(a, dir, 2.5);
        assert!((length_from_handle(a, dir, h, 0.05).unwrap() - 2.5).abs() < 1e-5);
        // Dragged above the anchor: the minimum.
        assert_eq!(length_from_handle(a, dir, a + Vec3::Y, 0.05), Some(0.05));
        // A sideways drag counts only along the rope.
        let side = h + dir.normalize().cross(Vec3::Z) * 0.7;
        assert!((length_from_handle(a, dir, side, 0.05).unwrap() - 2.5).abs() < 1e-5);
    }

    #[test]
    fn a_distance_handle_round_trips_and_never_goes_behind_the_surface() {
        let s = Vec3::new(0.0, 1.4, -0.5);
        let n = Vec3::new(0.0, 0.0, 3.0);
        let h = distance_handle(s, n, 0.08);
        near(h, Vec3::new(0.0, 1.4, -0.42));
        assert!((distance_from_handle(s, n, h).unwrap() - 0.08).abs() < 1e-6);
        assert_eq!(distance_from_handle(s, n, s - Vec3::Z), Some(0.0));
    }

    #[test]
    fn touch_faces_are_handles_0_2_and_3_and_scale_with_the_height() {
        assert_eq!(touch_face(0).map(|f| f.1), Some(Vec3::Y));
        assert_eq!(touch_face(1), None, "handle 1 is the surface offset");
        assert_eq!(touch_face(2).map(|f| f.1), Some(Vec3::NEG_X));
        assert_eq!(touch_face(3).map(|f| f.1), Some(Vec3::NEG_Z));
        assert_eq!(touch_face(4), None);
        // Each face's middle is half a side out of the box's centre along its normal.
        let centre = Vec3::new(0.0, 0.25, -0.5);
        for (per_side, normal, _) in TOUCH_FACES {
            assert!(((per_side - centre).dot(normal) - 0.5).abs() < 1e-6);
        }
        assert!((touch_scale(3.5, true) - 2.0).abs() < 1e-6);
        assert_eq!(touch_scale(3.5, false), 1.0);
    }

    #[test]
    fn a_rope_length_handle_round_trips_to_its_point_count() {
        let anchor = Vec3::new(0.0, 3.0, 0.0);
        assert_eq!(rope_direction(anchor, None), Vec3::NEG_Y);
        assert_eq!(
            rope_direction(anchor, Some(anchor + Vec3::X * 1e-5)),
            Vec3::NEG_Y
        );
        let dir = rope_direction(anchor, Some(Vec3::new(1.0, 3.0, 0.0)));
        assert_eq!(dir, Vec3::X);
        assert!((rope_length(11, 0.1) - 1.0).abs() < 1e-6);
        assert!(
            (rope_length(1, 0.1) - 0.1).abs() < 1e-6,
            "at least one segment"
        );
        let handle = length_handle(anchor, dir, rope_length(11, 0.1));
        assert_eq!(rope_point_count(anchor, dir, handle, 0.1, 64), Some(11));
        // Past the capacity, and behind the anchor.
        assert_eq!(
            rope_point_count(anchor, dir, anchor + dir * 50.0, 0.1, 64),
            Some(64)
        );
        assert_eq!(
            rope_point_count(anchor, dir, anchor - dir, 0.1, 64),
            Some(2)
        );
        // A zero segment counts as 1 cm; NaN gives nothing.
        assert_eq!(
            rope_point_count(anchor, dir, anchor + dir * 0.1, 0.0, 64),
            Some(11)
        );
        assert_eq!(rope_point_count(anchor, dir, Vec3::NAN, 0.1, 64), None);
    }

    #[test]
    fn a_zero_pole_direction_draws_its_handle_behind() {
        assert_eq!(pole_handle_direction(Vec3::ZERO), Vec3::Z);
        assert_eq!(pole_handle_direction(Vec3::X), Vec3::X);
    }

    #[test]
    fn the_touch_gizmo_sizes_its_box_like_the_node() {
        let c = Vec3::new(0.0, 0.9, 0.1);
        assert_eq!(touch_size(1.6, None), (1.6, Vec3::new(0.0, 0.8, 0.0)));
        assert_eq!(
            touch_size(1.6, Some((c, Some(1.8)))),
            (1.6, c),
            "a set height wins"
        );
        assert_eq!(touch_size(0.0, Some((c, Some(1.8)))), (1.8, c));
        assert_eq!(touch_size(-1.0, Some((c, Some(1.8)))), (1.8, c));
        assert_eq!(
            touch_size(0.0, Some((c, None))),
            (0.0, c),
            "no height: no box"
        );
        assert_eq!(touch_size(0.0, None).0, 0.0);
    }

    #[test]
    fn dragged_touch_handles_give_values_in_their_ranges() {
        let fixed = Vec3::new(0.0, 0.9, 0.0);
        let per_side = TOUCH_FACES[0].0;
        let top = face_handle(fixed, per_side, 1.5);
        assert!((height_from_face(fixed, per_side, Vec3::Y, top).unwrap() - 1.5).abs() < 1e-4);
        let far = face_handle(fixed, per_side, 50.0);
        assert_eq!(height_from_face(fixed, per_side, Vec3::Y, far), Some(10.0));
        let surface = Vec3::new(1.0, 1.0, 0.0);
        let h = distance_handle(surface, Vec3::NEG_X, 0.1 * 2.0);
        let d = surface_offset_from_handle(surface, Vec3::NEG_X, h, 2.0).unwrap();
        assert!((d - 0.1).abs() < 1e-5, "{d}");
        let deep = distance_handle(surface, Vec3::NEG_X, 5.0);
        assert_eq!(
            surface_offset_from_handle(surface, Vec3::NEG_X, deep, 1.0),
            Some(0.3)
        );
        assert_eq!(
            surface_offset_from_handle(surface, Vec3::NEG_X, Vec3::NAN, 1.0),
            None
        );
    }

    #[test]
    fn a_reach_sphere_round_trips_its_margin() {
        let joints = [
            Vec3::ZERO,
            Vec3::new(0.3, 0.0, 0.0),
            Vec3::new(0.55, 0.0, 0.0),
        ];
        let centre = Vec3::new(0.2, 1.4, 0.0);
        let left = Reach::new(
            joints,
            Vec3::splat(2.0),
            centre,
            Vec3::new(3.0, 0.0, 0.0),
            true,
        )
        .unwrap();
        assert!((left.arm - 1.1).abs() < 1e-5);
        assert_eq!(left.outward, Vec3::NEG_X);
        let right = Reach::new(joints, Vec3::ONE, centre, Vec3::ZERO, false).unwrap();
        assert_eq!(right.outward, Vec3::X, "a zero right falls back to +X");
        let h = left.handle(0.05);
        assert!((left.margin_from_handle(h).unwrap() - 0.05).abs() < 1e-4);
        assert_eq!(left.margin_from_handle(left.centre), Some(0.2), "clamped");
        assert!(Reach::new([Vec3::ZERO; 3], Vec3::ONE, centre, Vec3::X, true).is_none());
        assert!(Reach::new(joints, Vec3::ONE, Vec3::NAN, Vec3::X, true).is_none());
    }

    #[test]
    fn a_draft_is_drawn_as_rings_and_spacing_pairs_crowded_in_red() {
        let draft = Draft {
            points: vec![Vec2::ZERO, Vec2::new(1.2, 0.0), Vec2::new(1.5, 0.0)],
            spacing: 1.2,
            direction: 0.0,
            facing: crate::formation::shape::Facing::Forward,
        };
        let (mut plain, mut red) = (Vec::new(), Vec::new());
        draft_lines(&draft, 0.05, |crowded, a, b| {
            if crowded {
                red.push((a, b))
            } else {
                plain.push((a, b))
            }
        });
        let pairs = draft.spacing_pairs(0.05);
        let crowded = pairs.iter().filter(|p| p.2).count();
        assert_eq!(crowded, 1, "1.2 → 1.5 is 0.3 apart");
        assert_eq!(plain.len(), 3 * CIRCLE_SEGMENTS + pairs.len() - crowded);
        assert_eq!(red.len(), crowded * (1 + 2 * CIRCLE_SEGMENTS));
        assert!(red.contains(&(Vec2::new(1.2, 0.0), Vec2::new(1.5, 0.0))));
        let widest = red.iter().map(|(a, _)| (*a - Vec2::new(1.5, 0.0)).length());
        assert!(
            widest.fold(0.0f32, f32::max) > POINT_RING * 1.4,
            "the wider ring"
        );
    }

    #[test]
    fn save_places_and_the_driver_flag() {
        assert_eq!(place_of("res://formations/a.ron"), Place::Resources);
        assert_eq!(place_of("user://a.ron"), Place::UserData);
        assert_eq!(place_of("/tmp/a.ron"), Place::FileSystem);
        let args = ["--x", "--script", "res://d.gd"];
        assert_eq!(flag_value(&args, "--script"), Ok(Some("res://d.gd")));
        assert_eq!(flag_value(&args, "--other"), Ok(None));
        assert_eq!(
            flag_value(&args[..2], "--script"),
            Err("--script needs a res:// path after it".to_string())
        );
    }
}
