//! The formation editor's model and geometry: a formation drawn as points on the controller's
//! ground, edited (add, move, delete, mirror, grid snap) and written back as a `Custom` formation
//! whose slots are the drawn points.
//!
//! Points are in the controller's frame on its ground plane: x right, z back (forward is −z), in
//! metres, head first. [`Draft::to_def`] stores them so that [`FormationDef::layout`] gives the
//! points back for any agent count (the first points for fewer agents; for more, the points and
//! ranks repeated behind them): the custom list is turned back by `direction` and the offset is the
//! points' centroid (the layout takes their centroid off and adds the offset back).

use glam::{Affine3A, Vec2, Vec3};

use super::shape::{rotate, Facing, FormationDef, FormationError, Shape, MAX_AGENTS, MAX_COORD};

/// Points closer than this are one point, metres: a mirror image onto a point is not added.
pub const SAME_POINT: f32 = 0.01;

/// Height of the editor's point handles over the controller's ground, metres (just above it, so
/// the floor does not hide them).
pub const HANDLE_LIFT: f32 = 0.03;

/// Radius of the ring drawn round each point in the editor, metres (half again for a crowded one).
pub const POINT_RING: f32 = 0.2;

/// How near a Shift+right-click must be to a point to delete it, metres.
pub const PICK_RADIUS: f32 = 0.35;

/// Returns the file a formation called `name` is saved to by default: `name.ron` in `folder`
/// (a trailing `/` on the folder is not doubled).
pub fn default_path(folder: &str, name: &str) -> String {
    format!("{}/{name}.ron", folder.trim_end_matches('/'))
}

/// A formation being edited as points (see the module's description).
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    /// The points, head first, in the controller's frame (x right, z back), metres.
    pub points: Vec<Vec2>,
    /// The formation's spacing (the distance the contract lays neighbours at), metres.
    pub spacing: f32,
    /// The formation's direction, degrees (turns the agents' facing; the points are as drawn).
    pub direction: f32,
    /// Which way agents face in their slots.
    pub facing: Facing,
}

/// Returns `p` on the nearest corner of a square grid of step `grid` (metres); `p` itself when
/// `grid` is not a positive finite number.
#[must_use]
pub fn snap(p: Vec2, grid: f32) -> Vec2 {
    if !(grid.is_finite() && grid > 0.0) {
        return p;
    }
    let s = (p / grid).round() * grid;
    if s.is_finite() {
        s
    } else {
        p
    }
}

/// The world position of a point's handle: the point on the ground of `frame` (the controller's
/// global transform), `lift` metres above it.
#[must_use]
pub fn point_handle(frame: Affine3A, p: Vec2, lift: f32) -> Vec3 {
    frame.transform_point3(Vec3::new(p.x, lift, p.y))
}

/// The point (controller frame) of a handle at the world position `handle`: the inverse of
/// [`point_handle`], dropping the height. `None` for a degenerate frame or input.
#[must_use]
pub fn point_from_handle(frame: Affine3A, handle: Vec3) -> Option<Vec2> {
    let local = crate::kit::affine_inverse(frame).transform_point3(handle);
    let p = Vec2::new(local.x, local.z);
    p.is_finite().then_some(p)
}

/// The point (controller frame) where a mouse ray (`origin`, `direction`, world) meets the
/// controller's ground plane, if it meets it in front of the camera.
#[must_use]
pub fn point_from_ray(frame: Affine3A, origin: Vec3, direction: Vec3) -> Option<Vec2> {
    let up = frame.transform_vector3(Vec3::Y);
    let hit = crate::kit::ray_plane(origin, direction, frame.translation.into(), up)?;
    point_from_handle(frame, hit)
}

fn usable(p: Vec2) -> bool {
    p.is_finite() && p.x.abs() <= MAX_COORD && p.y.abs() <= MAX_COORD
}

impl Draft {
    /// The points of `def` laid out for `agents` agents (all of a custom formation's points,
    /// whatever the count; at least one point), with its spacing, direction and facing.
    pub fn from_formation(def: &FormationDef, agents: usize) -> Result<Self, FormationError> {
        let n = match &def.shape {
            Shape::Custom { points } => points.len(),
            _ => agents.max(1),
        };
        let (mut points, mut heading) = (Vec::new(), Vec::new());
        def.layout(n, &mut points, &mut heading)?;
        Ok(Self {
            points,
            spacing: def.spacing,
            direction: def.direction,
            facing: def.facing,
        })
    }

    /// The formation whose layout is the points (the first of them for fewer agents, the points
    /// and ranks repeated behind them for more): a `Custom` list turned back by `direction`,
    /// offset by the points' centroid. An error names what is out of
    /// range (no point, too many, a spacing outside 0.05..=100 m).
    pub fn to_def(&self) -> Result<FormationDef, FormationError> {
        let n = self.points.len().max(1) as f32;
        let centroid = self.points.iter().copied().sum::<Vec2>() / n;
        let yaw = self.direction.to_radians();
        let def = FormationDef {
            shape: Shape::Custom {
                points: self
                    .points
                    .iter()
                    .map(|p| {
                        let q = rotate(*p, -yaw);
                        (q.x, q.y)
                    })
                    .collect(),
            },
            spacing: self.spacing,
            direction: self.direction,
            offset: (centroid.x, centroid.y),
            facing: self.facing,
        };
        def.validate().map_err(|(_, message)| FormationError {
            line: 0,
            column: 0,
            message,
        })?;
        Ok(def)
    }

    /// The formation as the text of a `.ron` file (see [`Draft::to_def`]).
    pub fn to_ron(&self) -> Result<String, FormationError> {
        Ok(self.to_def()?.to_ron())
    }

    /// Adds a point at `p` snapped to `grid` (0: no snapping) after the last one and returns its
    /// index; `None` (nothing added) for a point out of range or past [`MAX_AGENTS`] points.
    pub fn add(&mut self, p: Vec2, grid: f32) -> Option<usize> {
        let p = snap(p, grid);
        if !usable(p) || self.points.len() >= MAX_AGENTS {
            return None;
        }
        self.points.push(p);
        Some(self.points.len() - 1)
    }

    /// Moves point `i` to `p` snapped to `grid`; false (nothing changed) for no such point or a
    /// point out of range.
    pub fn move_point(&mut self, i: usize, p: Vec2, grid: f32) -> bool {
        let p = snap(p, grid);
        match self.points.get_mut(i) {
            Some(q) if usable(p) => {
                *q = p;
                true
            }
            _ => false,
        }
    }

    /// Deletes point `i` (the later ones move up one index); false for no such point or the last
    /// remaining one (a formation keeps at least one point).
    pub fn delete(&mut self, i: usize) -> bool {
        if i >= self.points.len() || self.points.len() <= 1 {
            return false;
        }
        self.points.remove(i);
        true
    }

    /// Makes the formation symmetric about the controller's forward axis (x = 0): adds the mirror
    /// image (x → −x) of every point that has none, after the last point, in order. Points on the
    /// axis and points whose image is already there (within [`SAME_POINT`]) add nothing. Returns
    /// how many points were added.
    pub fn mirror(&mut self) -> usize {
        let original = self.points.len();
        for i in 0..original {
            let image = Vec2::new(-self.points[i].x, self.points[i].y);
            let taken = self.points.iter().any(|q| q.distance(image) < SAME_POINT);
            if !taken && self.points.len() < MAX_AGENTS {
                self.points.push(image);
            }
        }
        self.points.len() - original
    }

    /// Snaps every point to `grid`; returns whether any point moved.
    pub fn snap_all(&mut self, grid: f32) -> bool {
        let mut moved = false;
        for p in &mut self.points {
            let s = snap(*p, grid);
            moved |= s != *p;
            *p = s;
        }
        moved
    }

    /// The index of the point nearest `p` within `radius`, if any.
    #[must_use]
    pub fn nearest(&self, p: Vec2, radius: f32) -> Option<usize> {
        self.points
            .iter()
            .enumerate()
            .map(|(i, q)| (i, q.distance(p)))
            .filter(|(_, d)| *d <= radius)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// Every pair of points (i < j) at most `limit` apart, with its distance, in index order
    /// (a sweep along x: fast for thousands of points).
    #[must_use]
    pub fn pairs_within(&self, limit: f32) -> Vec<(usize, usize, f32)> {
        let mut order: Vec<usize> = (0..self.points.len()).collect();
        order.sort_by(|a, b| self.points[*a].x.total_cmp(&self.points[*b].x));
        let mut out = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            let p = self.points[i];
            for &j in &order[k + 1..] {
                let q = self.points[j];
                if q.x - p.x > limit {
                    break;
                }
                let d = p.distance(q);
                if d <= limit {
                    out.push((i.min(j), i.max(j), d));
                }
            }
        }
        out.sort_by_key(|&(i, j, _)| (i, j));
        out
    }

    /// The pairs the editor draws: every pair at most 1.5 spacings apart (the squad's neighbouring
    /// pairs), each with whether it is crowded, closer than the spacing less `tolerance` (the
    /// contract's spacing error): agents there cannot hold the formation's spacing.
    #[must_use]
    pub fn spacing_pairs(&self, tolerance: f32) -> Vec<(usize, usize, bool)> {
        let crowded = self.spacing - tolerance.max(0.0);
        self.pairs_within(self.spacing * 1.5)
            .into_iter()
            .map(|(i, j, d)| (i, j, d < crowded))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn near(a: Vec2, b: Vec2, what: &str) {
        assert!((a - b).length() < 1e-4, "{what}: {a} vs {b}");
    }

    fn draft(points: &[(f32, f32)]) -> Draft {
        Draft {
            points: points.iter().map(|&(x, z)| Vec2::new(x, z)).collect(),
            spacing: 1.2,
            direction: 0.0,
            facing: Facing::Forward,
        }
    }

    /// The slots the game lays out for `text` and `n` agents.
    fn slots(text: &str, n: usize) -> Vec<Vec2> {
        let def = FormationDef::from_ron(text).expect("the written text parses");
        let (mut p, mut h) = (Vec::new(), Vec::new());
        def.layout(n, &mut p, &mut h).expect("layout");
        p
    }

    #[test]
    fn every_shipped_formation_round_trips_through_the_ron_writer() {
        for (name, def) in super::super::builtin::builtin_formations() {
            let text = def.to_ron();
            assert_eq!(FormationDef::from_ron(&text), Ok(def), "{name}: {text}");
        }
        let custom = FormationDef {
            shape: Shape::Custom {
                points: vec![(0.1, -2.5), (1.0e-7, 3.3333333)],
            },
            spacing: 0.75,
            direction: -33.3,
            offset: (0.5, -0.25),
            facing: Facing::Inward,
        };
        assert_eq!(FormationDef::from_ron(&custom.to_ron()), Ok(custom));
    }

    #[test]
    fn a_saved_draft_lays_out_exactly_as_drawn() {
        let mut d = draft(&[(0.0, -1.0), (1.3, 0.4), (-0.7, 0.9), (2.0, 2.0)]);
        for direction in [0.0, 90.0, -37.5] {
            d.direction = direction;
            d.facing = Facing::Outward;
            let text = d.to_ron().unwrap();
            let got = slots(&text, d.points.len());
            for (g, p) in got.iter().zip(&d.points) {
                near(*g, *p, &format!("direction {direction}"));
            }
            let back = FormationDef::from_ron(&text).unwrap();
            assert_eq!(back.facing, Facing::Outward);
            assert_eq!(back.direction, direction);
        }
        // A draft from that file has the same points again.
        let def = FormationDef::from_ron(&d.to_ron().unwrap()).unwrap();
        let again = Draft::from_formation(&def, 2).unwrap();
        assert_eq!(
            again.points.len(),
            4,
            "a custom formation keeps all its points"
        );
        for (a, p) in again.points.iter().zip(&d.points) {
            near(*a, *p, "reloaded");
        }
    }

    #[test]
    fn a_draft_from_a_shaped_formation_has_its_slots() {
        let def = FormationDef::from_ron("(shape: Wedge(angle: 90.0), spacing: 1.2)").unwrap();
        let d = Draft::from_formation(&def, 5).unwrap();
        assert_eq!(
            d.points,
            slots("(shape: Wedge(angle: 90.0), spacing: 1.2)", 5)
        );
        assert_eq!(d.spacing, 1.2);
        // No agents: one point to start from.
        assert_eq!(Draft::from_formation(&def, 0).unwrap().points.len(), 1);
    }

    #[test]
    fn an_invalid_draft_is_refused_with_its_reason() {
        let mut d = draft(&[]);
        assert!(d.to_ron().unwrap_err().message.contains("points"));
        d.points.push(Vec2::ZERO);
        d.spacing = 0.0;
        assert!(d.to_ron().unwrap_err().message.contains("spacing"));
    }

    #[test]
    fn grid_snap_goes_to_the_nearest_corner() {
        near(
            snap(Vec2::new(0.74, -0.26), 0.5),
            Vec2::new(0.5, -0.5),
            "0.5 m grid",
        );
        near(
            snap(Vec2::new(1.26, 0.24), 0.25),
            Vec2::new(1.25, 0.25),
            "0.25 m grid",
        );
        near(
            snap(Vec2::new(-0.6, 0.6), 1.0),
            Vec2::new(-1.0, 1.0),
            "halves round away",
        );
        assert_eq!(snap(Vec2::new(0.74, 0.1), 0.0), Vec2::new(0.74, 0.1));
        assert_eq!(snap(Vec2::new(0.74, 0.1), f32::NAN), Vec2::new(0.74, 0.1));
        let mut d = draft(&[(0.1, 0.2), (1.0, 2.0)]);
        assert!(d.snap_all(0.5));
        assert_eq!(d.points, vec![Vec2::new(0.0, 0.0), Vec2::new(1.0, 2.0)]);
        assert!(!d.snap_all(0.5), "snapped points stay");
    }

    #[test]
    fn add_move_and_delete_edit_the_list() {
        let mut d = draft(&[(0.0, 0.0)]);
        assert_eq!(d.add(Vec2::new(1.1, 0.9), 0.5), Some(1));
        assert_eq!(d.points[1], Vec2::new(1.0, 1.0), "added on the grid");
        assert_eq!(d.add(Vec2::new(f32::NAN, 0.0), 0.0), None);
        assert_eq!(d.add(Vec2::new(2.0 * MAX_COORD, 0.0), 0.0), None);
        assert!(d.move_point(0, Vec2::new(-0.3, 0.2), 0.0));
        assert_eq!(d.points[0], Vec2::new(-0.3, 0.2));
        assert!(!d.move_point(5, Vec2::ZERO, 0.0));
        assert!(!d.move_point(0, Vec2::INFINITY, 0.0));
        assert!(d.delete(0));
        assert_eq!(d.points, vec![Vec2::new(1.0, 1.0)]);
        assert!(!d.delete(0), "the last point stays");
        assert!(!d.delete(3));
    }

    #[test]
    fn mirror_completes_the_symmetric_half_once() {
        // A wedge's head and left arm: mirroring adds the right arm, not the head on the axis.
        let mut d = draft(&[(0.0, -1.0), (-0.85, -0.15), (-1.7, 0.7)]);
        assert_eq!(d.mirror(), 2);
        assert_eq!(
            &d.points[3..],
            &[Vec2::new(0.85, -0.15), Vec2::new(1.7, 0.7)]
        );
        assert_eq!(d.mirror(), 0, "a symmetric formation gains nothing");
        // A point whose image is already there (within a centimetre) adds nothing.
        let mut d = draft(&[(-1.0, 0.0), (1.005, 0.0), (2.0, 1.0)]);
        assert_eq!(d.mirror(), 1);
        assert_eq!(d.points[3], Vec2::new(-2.0, 1.0));
    }

    #[test]
    fn crowded_pairs_are_the_ones_closer_than_the_spacing() {
        // Spacing 1.2, tolerance 0.05: 1.0 m apart is crowded, 1.2 m is not, 2.0 m is no pair.
        let d = draft(&[(0.0, 0.0), (1.0, 0.0), (0.0, 1.2), (5.0, 0.0), (7.0, 0.0)]);
        let pairs = d.spacing_pairs(0.05);
        assert_eq!(pairs, vec![(0, 1, true), (0, 2, false), (1, 2, false)]);
        // The sweep finds the same pairs as comparing every two points.
        let many: Vec<(f32, f32)> = (0..200)
            .map(|i| ((i * 37 % 101) as f32 * 0.13, (i * 53 % 97) as f32 * 0.11))
            .collect();
        let d = draft(&many);
        let mut brute = Vec::new();
        for j in 0..d.points.len() {
            for i in 0..j {
                let dist = d.points[i].distance(d.points[j]);
                if dist <= 1.8 {
                    brute.push((i, j));
                }
            }
        }
        brute.sort();
        let swept: Vec<(usize, usize)> = d
            .pairs_within(1.8)
            .iter()
            .map(|&(i, j, _)| (i, j))
            .collect();
        assert_eq!(swept, brute);
    }

    #[test]
    fn a_point_handle_round_trips_through_a_moved_turned_frame() {
        let frame = Affine3A::from_rotation_translation(
            Quat::from_rotation_y(0.8),
            Vec3::new(2.0, 0.5, -1.0),
        );
        let p = Vec2::new(-1.5, 0.75);
        let h = point_handle(frame, p, 0.02);
        near(point_from_handle(frame, h).unwrap(), p, "handle");
        // A handle dragged up or down stays on its point.
        near(
            point_from_handle(frame, h + Vec3::Y * 0.4).unwrap(),
            p,
            "height ignored",
        );
        // A ray straight down onto the point's ground finds the point.
        let ground = point_handle(frame, p, 0.0);
        let hit = point_from_ray(frame, ground + Vec3::new(0.0, 3.0, 0.0), Vec3::NEG_Y);
        near(hit.unwrap(), p, "ray");
        assert!(point_from_ray(frame, ground + Vec3::Y, Vec3::Y).is_none());
    }

    #[test]
    fn the_nearest_point_within_the_radius_is_picked() {
        let d = draft(&[(0.0, 0.0), (1.0, 0.0), (3.0, 0.0)]);
        assert_eq!(d.nearest(Vec2::new(1.2, 0.1), 0.5), Some(1));
        assert_eq!(d.nearest(Vec2::new(0.4, 0.0), 0.5), Some(0));
        assert_eq!(d.nearest(Vec2::new(2.0, 0.0), 0.5), None);
    }

    #[test]
    fn the_default_path_is_the_name_in_the_folder() {
        assert_eq!(
            default_path("res://formations", "wedge"),
            "res://formations/wedge.ron"
        );
        assert_eq!(
            default_path("res://formations//", "a b"),
            "res://formations/a b.ron"
        );
    }
}
