//! Formations as data: the RON schema, its validation, and slot layout.
//!
//! A formation file holds one [`FormationDef`]:
//!
//! ```ron
//! (
//!     shape: Column(files: 5),
//!     spacing: 1.2,      // metres between neighbours
//!     direction: 0.0,    // degrees, turns the layout and the facing (counter-clockwise seen from above)
//!     offset: (0.0, 0.0),// metres (x right, z back) from the anchor, after `direction`
//!     facing: Forward,   // Forward | Outward | Inward
//! )
//! ```
//!
//! Slots are laid out in the formation's own frame (x right, z back, forward is −z) and centred on
//! their centroid, so the anchor is the formation's centre.
//!
//! A `Custom(points: [(x, z), …])` formation is laid out exactly as given for any agent count: it
//! is centred on the centroid of all its points (the formation editor saves that centroid as
//! `offset`, so the slots are where the points were drawn); fewer agents than points take the first
//! points, head first, without moving them; more agents than points keep every point, and the
//! extra agents stand in ranks behind, each rank a copy of the points moved back (+z) by their
//! depth (largest z less smallest) plus `spacing`. Slot 0 is the head (front, or the
//! wedge's tip) and the last slot the tail; the baseline's weights use that order.

use core::f32::consts::{PI, TAU};
use glam::Vec2;
use serde::Deserialize;

/// The most agents (and so slots) a formation may lay out.
pub const MAX_AGENTS: usize = 65_536;
/// The largest spacing accepted, in metres.
pub const MAX_SPACING: f32 = 100.0;
/// The smallest spacing accepted, in metres.
pub const MIN_SPACING: f32 = 0.05;
/// The largest coordinate accepted for custom points and offsets, in metres.
pub const MAX_COORD: f32 = 10_000.0;

/// Which way each agent faces in its slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum Facing {
    /// Every agent faces the formation's forward (−z of the layout).
    #[default]
    Forward,
    /// Each agent faces away from the formation's centre (a circle guarding outward).
    Outward,
    /// Each agent faces the formation's centre.
    Inward,
}

/// The geometric family of a formation. Counts follow the squad: a shape lays out as many slots as
/// there are agents.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub enum Shape {
    /// One rank, side by side along x.
    Line,
    /// Ranks × files: `files` agents per rank (or `ranks` ranks when given instead), ranks one
    /// behind the other.
    Column {
        /// Agents per rank (side by side). 0 derives it from `ranks`.
        #[serde(default)]
        files: u32,
        /// Number of ranks (used only when `files` is 0).
        #[serde(default)]
        ranks: u32,
    },
    /// An arc of the given radius bulging forward, neighbours `spacing` apart along it.
    Arc {
        /// Radius in metres.
        radius: f32,
    },
    /// A full circle whose radius makes neighbours `spacing` apart.
    Circle,
    /// An Archimedean spiral r = initial_radius + growth·θ, neighbours `spacing` apart along it.
    Spiral {
        /// Radius of the first slot, in metres.
        initial_radius: f32,
        /// Radius gained per radian, in metres.
        growth: f32,
    },
    /// A wedge (chevron): the head at the tip, arms alternating left and right behind it.
    Wedge {
        /// Opening angle between the two arms, in degrees (10..=170).
        #[serde(default = "default_wedge_angle")]
        angle: f32,
    },
    /// A square block: filled rows, or only its perimeter when `hollow`.
    Box {
        /// Agents per side of a filled box (0: the smallest square that fits).
        #[serde(default)]
        files: u32,
        /// Only the perimeter is occupied.
        #[serde(default)]
        hollow: bool,
    },
    /// Explicit slot positions in metres (x right, z back), laid out exactly as given for any
    /// number of agents: with fewer agents than points the agents take the first points, head
    /// first; with more, the extra agents stand in ranks behind, each rank a copy of the points
    /// moved back by their depth (the largest z less the smallest) plus `spacing` (see
    /// [`FormationDef::extra_agents`]). The anchor is the points' centroid, whatever the count.
    Custom {
        /// The points, head first.
        points: Vec<(f32, f32)>,
    },
}

fn default_wedge_angle() -> f32 {
    WEDGE_ANGLE.default.to_degrees().round()
}

use crate::kit::param::{Param, Unit as U};

/// One degree in radians.
const DEG: f32 = core::f32::consts::PI / 180.0;

/// The shape numbers' table (an `EntwineFormationShape`'s properties; a `.ron` file writes the
/// angles in degrees).
#[rustfmt::skip]
pub const SPACING: Param = Param::new("spacing", U::Metres, (MIN_SPACING, MAX_SPACING), 1.2, "distance between neighbouring slots");
/// See [`SPACING`].
#[rustfmt::skip]
pub const DIRECTION: Param = Param::new("direction", U::Radians, (-3600.0 * DEG, 3600.0 * DEG), 0.0, "turns the whole formation about its anchor");
/// See [`SPACING`].
#[rustfmt::skip]
pub const ARC_RADIUS: Param = Param::new("radius", U::Metres, (0.1, MAX_COORD), 8.0, "arc: its radius");
/// See [`SPACING`].
#[rustfmt::skip]
pub const INITIAL_RADIUS: Param = Param::new("initial_radius", U::Metres, (0.0, MAX_COORD), 1.5, "spiral: the radius it starts at");
/// See [`SPACING`].
#[rustfmt::skip]
pub const GROWTH: Param = Param::new("growth", U::Metres, (0.01, 100.0), 0.35, "spiral: how much the radius grows per radian");
/// See [`SPACING`].
#[rustfmt::skip]
pub const WEDGE_ANGLE: Param = Param::new("wedge_angle", U::Radians, (10.0 * DEG, 170.0 * DEG), 90.0 * DEG, "wedge: the opening angle between its arms (`angle` in a file)");

/// The shape's numbers, for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    vec![
        SPACING,
        DIRECTION,
        ARC_RADIUS,
        INITIAL_RADIUS,
        GROWTH,
        WEDGE_ANGLE,
    ]
}

fn default_spacing() -> f32 {
    SPACING.default
}

/// A formation as stored in a `.ron` file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormationDef {
    /// The layout family.
    pub shape: Shape,
    /// Distance between neighbouring agents in metres (default 1.2).
    #[serde(default = "default_spacing")]
    pub spacing: f32,
    /// Rotation of the layout and facing relative to the anchor, in degrees (counter-clockwise seen
    /// from above, like Godot's `rotation.y`).
    #[serde(default)]
    pub direction: f32,
    /// Offset of the layout's centre from the anchor in metres (x right, z back), applied after
    /// `direction`.
    #[serde(default)]
    pub offset: (f32, f32),
    /// Which way agents face in their slots.
    #[serde(default)]
    pub facing: Facing,
}

impl Default for FormationDef {
    fn default() -> Self {
        Self {
            shape: Shape::Line,
            spacing: default_spacing(),
            direction: 0.0,
            offset: (0.0, 0.0),
            facing: Facing::Forward,
        }
    }
}

/// Why a formation was rejected: a message and where in the text (1-based line and column; 0 when
/// the problem has no position, e.g. a squad too large for a custom point list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormationError {
    /// 1-based line of the offending text, or 0.
    pub line: u32,
    /// 1-based column of the offending text, or 0.
    pub column: u32,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl core::fmt::Display for FormationError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.line, self.column, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl FormationDef {
    /// Returns the formation parsed from RON text and validated, or the first problem with its
    /// line and column. Never panics, whatever the text.
    pub fn from_ron(text: &str) -> Result<Self, FormationError> {
        // Hostile input: refuse absurdly long files before parsing (a million custom points is
        // far past MAX_AGENTS anyway).
        if text.len() > 4 * 1024 * 1024 {
            return Err(FormationError {
                line: 0,
                column: 0,
                message: format!("file is {} bytes; the limit is 4 MiB", text.len()),
            });
        }
        let def: FormationDef = ron::from_str(text).map_err(|e| FormationError {
            line: u32::try_from(e.position.line).unwrap_or(u32::MAX),
            column: u32::try_from(e.position.col).unwrap_or(u32::MAX),
            message: e.code.to_string(),
        })?;
        def.validate().map_err(|(field, message)| {
            let (line, column) = locate(text, field);
            FormationError {
                line,
                column,
                message,
            }
        })?;
        Ok(def)
    }

    /// Returns `Ok` when every number is finite and in range, else the offending field's name and
    /// a message naming the accepted range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let finite_in = |field: &'static str, v: f32, lo: f32, hi: f32| {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err((field, format!("{field} must be in {lo}..={hi} (got {v})")))
            }
        };
        // Angles are in degrees in a file; the table stores radians.
        let degrees = |p: Param| (p.min.to_degrees().round(), p.max.to_degrees().round());
        finite_in("spacing", self.spacing, SPACING.min, SPACING.max)?;
        let (lo, hi) = degrees(DIRECTION);
        finite_in("direction", self.direction, lo, hi)?;
        finite_in("offset", self.offset.0, -MAX_COORD, MAX_COORD)?;
        finite_in("offset", self.offset.1, -MAX_COORD, MAX_COORD)?;
        let max = MAX_AGENTS as u32;
        match &self.shape {
            Shape::Line | Shape::Circle => {}
            Shape::Column { files, ranks } => {
                if *files > max || *ranks > max {
                    return Err((
                        "files",
                        format!("files and ranks must be in 0..={max} (got {files} × {ranks})"),
                    ));
                }
            }
            Shape::Arc { radius } => finite_in("radius", *radius, ARC_RADIUS.min, ARC_RADIUS.max)?,
            Shape::Spiral {
                initial_radius,
                growth,
            } => {
                let r = INITIAL_RADIUS;
                finite_in("initial_radius", *initial_radius, r.min, r.max)?;
                finite_in("growth", *growth, GROWTH.min, GROWTH.max)?;
            }
            Shape::Wedge { angle } => {
                let (lo, hi) = degrees(WEDGE_ANGLE);
                finite_in("angle", *angle, lo, hi)?;
            }
            Shape::Box { files, .. } => {
                if *files > 256 {
                    return Err(("files", format!("files must be in 0..=256 (got {files})")));
                }
            }
            Shape::Custom { points } => {
                if points.is_empty() || points.len() > MAX_AGENTS {
                    return Err((
                        "points",
                        format!(
                            "points must hold 1..={MAX_AGENTS} entries (got {})",
                            points.len()
                        ),
                    ));
                }
                for &(x, z) in points {
                    finite_in("points", x, -MAX_COORD, MAX_COORD)?;
                    finite_in("points", z, -MAX_COORD, MAX_COORD)?;
                }
            }
        }
        Ok(())
    }

    /// Returns the formation as RON text in the format of the `.ron` files, which
    /// [`FormationDef::from_ron`] reads back to an equal definition (every number is written with
    /// as many digits as it takes to read back the same `f32`).
    #[must_use]
    pub fn to_ron(&self) -> String {
        let shape = match &self.shape {
            Shape::Line => "Line".to_string(),
            Shape::Column { files, ranks } => format!("Column(files: {files}, ranks: {ranks})"),
            Shape::Arc { radius } => format!("Arc(radius: {radius:?})"),
            Shape::Circle => "Circle".to_string(),
            Shape::Spiral {
                initial_radius,
                growth,
            } => format!("Spiral(initial_radius: {initial_radius:?}, growth: {growth:?})"),
            Shape::Wedge { angle } => format!("Wedge(angle: {angle:?})"),
            Shape::Box { files, hollow } => format!("Box(files: {files}, hollow: {hollow})"),
            Shape::Custom { points } => {
                let mut text = String::from("Custom(points: [\n");
                for (x, z) in points {
                    text.push_str(&format!("        ({x:?}, {z:?}),\n"));
                }
                text.push_str("    ])");
                text
            }
        };
        let facing = match self.facing {
            Facing::Forward => "Forward",
            Facing::Outward => "Outward",
            Facing::Inward => "Inward",
        };
        format!(
            "(\n    shape: {shape},\n    spacing: {:?},\n    direction: {:?},\n    offset: ({:?}, {:?}),\n    facing: {facing},\n)\n",
            self.spacing, self.direction, self.offset.0, self.offset.1
        )
    }

    /// How many of `n` agents a `Custom` formation seats beyond its points (0 when the points
    /// are enough, and for every other shape): those agents stand in the ranks repeated behind
    /// the drawn points (see [`Shape::Custom`]).
    #[must_use]
    pub fn extra_agents(&self, n: usize) -> usize {
        match &self.shape {
            Shape::Custom { points } => n.saturating_sub(points.len()),
            _ => 0,
        }
    }

    /// Writes `n` slots (positions in metres in the anchor's frame, x right and z back, and each
    /// slot's heading offset in radians) into `pos` and `heading`, clearing them first. Returns an
    /// error when the formation is not valid (see [`FormationDef::validate`]) or `n` is more than
    /// [`MAX_AGENTS`]. Allocation happens only if the buffers are too small.
    ///
    /// A `Custom` formation's first `n` slots are its first `n` points exactly as given (turned by
    /// `direction`, centred on the centroid of all the points, then moved by `offset`), so a
    /// formation drawn in the editor lays out as drawn for any agent count; agents beyond the
    /// points stand in ranks repeated behind them (see [`Shape::Custom`]).
    pub fn layout(
        &self,
        n: usize,
        pos: &mut Vec<Vec2>,
        heading: &mut Vec<f32>,
    ) -> Result<(), FormationError> {
        pos.clear();
        heading.clear();
        if n > MAX_AGENTS {
            return Err(FormationError {
                line: 0,
                column: 0,
                message: format!("{n} agents is more than the maximum {MAX_AGENTS}"),
            });
        }
        if n == 0 {
            return Ok(());
        }
        // A formation built in code is checked as a file is: no NaN slot from a NaN spacing.
        self.validate().map_err(|(_, message)| FormationError {
            line: 0,
            column: 0,
            message,
        })?;
        self.place_slots(n, pos);
        self.centre_and_face(n, pos, heading);
        Ok(())
    }

    /// Places `n` slots in the shape's own frame, before centring, turning and offsetting.
    fn place_slots(&self, n: usize, pos: &mut Vec<Vec2>) {
        let s = self.spacing;
        match &self.shape {
            Shape::Line => {
                for i in 0..n {
                    pos.push(Vec2::new(i as f32 * s, 0.0));
                }
            }
            Shape::Column { files, ranks } => {
                let files = if *files > 0 {
                    *files as usize
                } else if *ranks > 0 {
                    n.div_ceil(*ranks as usize)
                } else {
                    (n as f32).sqrt().ceil() as usize
                }
                .clamp(1, n);
                for i in 0..n {
                    let (rank, file) = (i / files, i % files);
                    // A short last rank is centred behind the others.
                    let in_rank = (n - rank * files).min(files);
                    let x = (file as f32 - (in_rank as f32 - 1.0) * 0.5) * s;
                    pos.push(Vec2::new(x, rank as f32 * s));
                }
            }
            Shape::Arc { radius } => {
                let r = *radius;
                let step = (s / r).min(TAU / n as f32);
                let sweep = step * (n as f32 - 1.0);
                for i in 0..n {
                    let a = -sweep * 0.5 + step * i as f32;
                    // Bulging forward: the middle slot is the most forward (−z).
                    pos.push(Vec2::new(r * a.sin(), -r * a.cos()));
                }
            }
            Shape::Circle => {
                let r = if n > 1 {
                    s / (2.0 * (PI / n as f32).sin())
                } else {
                    0.0
                };
                for i in 0..n {
                    let a = TAU * i as f32 / n as f32;
                    pos.push(Vec2::new(r * a.sin(), -r * a.cos()));
                }
            }
            Shape::Spiral {
                initial_radius,
                growth,
            } => {
                let (mut theta, b) = (0.0f32, *growth);
                for _ in 0..n {
                    let r = initial_radius + b * theta;
                    pos.push(Vec2::new(r * theta.sin(), -r * theta.cos()));
                    // Arc length ds = sqrt(r² + b²) dθ: step so neighbours are `s` apart.
                    theta += s / (r * r + b * b).sqrt().max(1e-3);
                }
            }
            Shape::Wedge { angle } => {
                let half = (angle.to_radians() * 0.5).clamp(0.05, 1.5);
                for i in 0..n {
                    let row = i.div_ceil(2);
                    let side = if i % 2 == 1 { -1.0 } else { 1.0 };
                    let d = row as f32 * s;
                    pos.push(Vec2::new(side * d * half.sin(), d * half.cos()));
                }
            }
            Shape::Box { files, hollow } => place_box(*files, *hollow, n, s, pos),
            Shape::Custom { points } => self.place_custom(points, n, s, pos),
        }
    }

    /// Places a custom formation's points, then copies of them rank after rank behind.
    fn place_custom(&self, points: &[(f32, f32)], n: usize, s: f32, pos: &mut Vec<Vec2>) {
        for &(x, z) in points.iter().take(n) {
            pos.push(Vec2::new(x, z));
        }
        // More agents than points: the points again, rank after rank behind them, each
        // copy their depth plus the spacing further back, so no copy comes nearer the one
        // in front than the spacing.
        let (front, back) = points.iter().fold((f32::MAX, f32::MIN), |(lo, hi), p| {
            (lo.min(p.1), hi.max(p.1))
        });
        let step = back - front + s;
        for k in 0..self.extra_agents(n) {
            let (copy, (x, z)) = (k / points.len() + 1, points[k % points.len()]);
            pos.push(Vec2::new(x, z + copy as f32 * step));
        }
    }

    /// Centres, turns and offsets the slots, and gives each its heading (forward, out or in).
    fn centre_and_face(&self, n: usize, pos: &mut [Vec2], heading: &mut Vec<f32>) {
        // Centre on the centroid (a custom formation's: its points', so the drawn points stay put
        // whatever the agent count), then apply direction and offset.
        let centroid = match &self.shape {
            Shape::Custom { points } => {
                points.iter().map(|&(x, z)| Vec2::new(x, z)).sum::<Vec2>() / points.len() as f32
            }
            _ => pos.iter().copied().sum::<Vec2>() / n as f32,
        };
        let yaw = self.direction.to_radians();
        let offset = Vec2::new(self.offset.0, self.offset.1);
        for p in pos.iter_mut() {
            *p = rotate(*p - centroid, yaw) + offset;
        }
        for p in pos.iter() {
            let local = rotate(*p - offset, -yaw);
            let out = if local.length_squared() > 1e-8 {
                yaw_of(local)
            } else {
                0.0
            };
            heading.push(match self.facing {
                Facing::Forward => yaw,
                Facing::Outward => wrap(out + yaw),
                Facing::Inward => wrap(out + yaw + PI),
            });
        }
    }
}

/// Places `n` slots of a box: its perimeter when hollow, else rows of `files` (0: a square's).
fn place_box(files: u32, hollow: bool, n: usize, s: f32, pos: &mut Vec<Vec2>) {
    if hollow && n >= 4 {
        // Perimeter of a square with `side` slots per edge (corners shared).
        let side = (n.div_ceil(4) + 1).max(2);
        let edge = (side - 1) as f32 * s;
        let perimeter = 4.0 * edge;
        let step = perimeter / n as f32;
        for i in 0..n {
            let t = step * i as f32;
            let (e, u) = ((t / edge) as usize % 4, t % edge);
            let p = match e {
                0 => Vec2::new(u, 0.0),
                1 => Vec2::new(edge, u),
                2 => Vec2::new(edge - u, edge),
                _ => Vec2::new(0.0, edge - u),
            };
            pos.push(p);
        }
    } else {
        let files = if files > 0 {
            files as usize
        } else {
            (n as f32).sqrt().ceil() as usize
        };
        for i in 0..n {
            pos.push(Vec2::new((i % files) as f32 * s, (i / files) as f32 * s));
        }
    }
}

/// Returns `v` (x, z) turned by `yaw` radians about +Y (Godot's rotation.y convention).
#[inline]
#[must_use]
pub fn rotate(v: Vec2, yaw: f32) -> Vec2 {
    let (s, c) = yaw.sin_cos();
    Vec2::new(v.x * c + v.y * s, -v.x * s + v.y * c)
}

/// Returns the yaw (radians) whose forward (−z rotated) points along `dir` (x, z).
#[inline]
#[must_use]
pub fn yaw_of(dir: Vec2) -> f32 {
    (-dir.x).atan2(-dir.y)
}

/// Returns the forward direction (x, z) of a yaw in radians.
#[inline]
#[must_use]
pub fn forward_of(yaw: f32) -> Vec2 {
    Vec2::new(-yaw.sin(), -yaw.cos())
}

fn wrap(a: f32) -> f32 {
    crate::kit::wrap_angle(a)
}

/// Returns the 1-based line and column of the first `field:` in `text`, or (1, 1).
fn locate(text: &str, field: &str) -> (u32, u32) {
    let mut search = 0;
    while let Some(found) = text[search..].find(field) {
        let at = search + found;
        let rest = text[at + field.len()..].trim_start();
        let before_ok = at == 0
            || !text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if before_ok && rest.starts_with(':') {
            let line = text[..at].matches('\n').count() + 1;
            let col = at - text[..at].rfind('\n').map_or(0, |p| p + 1) + 1;
            return (
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(col).unwrap_or(u32::MAX),
            );
        }
        search = at + field.len();
    }
    (1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(text: &str, n: usize) -> (Vec<Vec2>, Vec<f32>) {
        let def = FormationDef::from_ron(text).expect("valid");
        let (mut p, mut h) = (Vec::new(), Vec::new());
        def.layout(n, &mut p, &mut h).expect("layout");
        (p, h)
    }

    fn min_neighbour(p: &[Vec2]) -> f32 {
        let mut m = f32::MAX;
        for i in 0..p.len() {
            for j in 0..i {
                m = m.min(p[i].distance(p[j]));
            }
        }
        m
    }

    #[test]
    fn every_shape_lays_out_centred_slots_spacing_apart() {
        for text in [
            "(shape: Line)",
            "(shape: Column(files: 5))",
            "(shape: Column(ranks: 4))",
            "(shape: Arc(radius: 6.0))",
            "(shape: Circle, facing: Outward)",
            "(shape: Spiral(initial_radius: 1.0, growth: 0.3))",
            "(shape: Wedge(angle: 90.0))",
            "(shape: Box(hollow: false))",
            "(shape: Box(hollow: true))",
        ] {
            let (p, h) = slots(text, 20);
            assert_eq!(p.len(), 20, "{text}");
            assert_eq!(h.len(), 20);
            let c = p.iter().copied().sum::<Vec2>() / 20.0;
            assert!(c.length() < 1e-3, "{text} centred: {c}");
            let m = min_neighbour(&p);
            assert!(m > 1.2 * 0.7 && m < 1.2 * 1.3, "{text}: min spacing {m}");
        }
    }

    #[test]
    fn line_direction_turns_layout_and_facing() {
        let (p, h) = slots("(shape: Line, spacing: 2.0, direction: 90.0)", 3);
        // Turned 90° counter-clockwise: the line runs along z.
        assert!((p[0] - Vec2::new(0.0, 2.0)).length() < 1e-5, "{:?}", p);
        assert!((h[0] - PI / 2.0).abs() < 1e-6);
    }

    #[test]
    fn outward_circle_faces_away_from_centre() {
        let (p, h) = slots("(shape: Circle, facing: Outward)", 8);
        for (pi, hi) in p.iter().zip(&h) {
            assert!(forward_of(*hi).dot(pi.normalize()) > 0.999);
        }
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = FormationDef::from_ron("(\n  shape: Line,\n  spacing: ,\n)").unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.column > 1);
        let err = FormationDef::from_ron("(shape: Triangle)").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("Triangle"), "{err}");
    }

    #[test]
    fn hostile_values_are_rejected_with_their_field() {
        for (text, field, line) in [
            ("(\n shape: Line,\n spacing: -1.0)", "spacing", 3),
            ("(shape: Line, spacing: NaN)", "spacing", 1),
            ("(shape: Line, spacing: inf)", "spacing", 1),
            ("(shape: Column(files: 4000000000))", "files", 1),
            ("(shape: Box(files: 100000))", "files", 1),
            ("(shape: Arc(radius: 0.0))", "radius", 1),
            ("(shape: Custom(points: []))", "points", 1),
            ("(shape: Custom(points: [(1.0, NaN)]))", "points", 1),
        ] {
            let err = FormationDef::from_ron(text).unwrap_err();
            assert!(err.message.contains(field), "{text}: {err}");
            assert_eq!(err.line, line, "{text}: {err}");
        }
        // Values past u32 are a parse error, not a wrap-around.
        assert!(FormationDef::from_ron("(shape: Column(files: 99999999999999))").is_err());
        assert!(FormationDef::from_ron("(shape: Line, colour: 3)").is_err());
        assert!(FormationDef::from_ron("").is_err());
        assert!(FormationDef::from_ron(&"[".repeat(100_000)).is_err());
    }

    /// The layout of `def` for `n` agents.
    fn laid(def: &FormationDef, n: usize) -> Vec<Vec2> {
        let (mut p, mut h) = (Vec::new(), Vec::new());
        def.layout(n, &mut p, &mut h).expect("layout");
        assert_eq!((p.len(), h.len()), (n, n));
        p
    }

    /// A drawn formation as the editor saves it: turned back by `direction`, offset by the
    /// points' centroid, so its layout for as many agents as points is `drawn`.
    fn drawn_def(drawn: &[Vec2], direction: f32) -> FormationDef {
        let c = drawn.iter().copied().sum::<Vec2>() / drawn.len() as f32;
        FormationDef {
            shape: Shape::Custom {
                points: drawn
                    .iter()
                    .map(|p| {
                        let q = rotate(*p, -direction.to_radians());
                        (q.x, q.y)
                    })
                    .collect(),
            },
            direction,
            offset: (c.x, c.y),
            ..FormationDef::default()
        }
    }

    const DRAWN: [Vec2; 5] = [
        Vec2::new(0.3, -1.8),
        Vec2::new(-1.2, 0.0),
        Vec2::new(1.5, 0.2),
        Vec2::new(-2.0, 1.1),
        Vec2::new(2.6, 1.5),
    ];

    #[test]
    fn fewer_agents_than_custom_points_take_the_first_points_where_drawn() {
        for direction in [0.0, 90.0, -37.0] {
            let def = drawn_def(&DRAWN, direction);
            for n in 1..=DRAWN.len() {
                let p = laid(&def, n);
                for i in 0..n {
                    assert!(
                        p[i].distance(DRAWN[i]) < 1e-4,
                        "{direction}°, {n} agents: slot {i} {} vs {}",
                        p[i],
                        DRAWN[i]
                    );
                }
                assert_eq!(def.extra_agents(n), 0);
            }
        }
    }

    #[test]
    fn more_agents_than_custom_points_repeat_them_in_ranks_behind() {
        for direction in [0.0, 90.0, -37.0] {
            let def = drawn_def(&DRAWN, direction);
            let n = 2 * DRAWN.len() + 2;
            let p = laid(&def, n);
            assert_eq!(def.extra_agents(n), DRAWN.len() + 2);
            // The drawn points are kept exactly.
            for i in 0..DRAWN.len() {
                assert!(p[i].distance(DRAWN[i]) < 1e-4, "{direction}°: slot {i}");
            }
            // Each copy is the pattern moved back (along the formation's own +z, turned by the
            // direction) by its depth there (1.8 + 1.5 m when not turned) plus the spacing, 1.2 m.
            let Shape::Custom { points } = &def.shape else {
                unreachable!()
            };
            let z = points.iter().map(|p| p.1);
            let depth = z.clone().fold(f32::MIN, f32::max) - z.fold(f32::MAX, f32::min);
            if direction == 0.0 {
                assert!((depth - 3.3).abs() < 1e-5, "{depth}");
            }
            let back = rotate(Vec2::new(0.0, depth + 1.2), direction.to_radians());
            for k in 0..n - DRAWN.len() {
                let copy = (k / DRAWN.len() + 1) as f32;
                let expected = DRAWN[k % DRAWN.len()] + back * copy;
                let got = p[DRAWN.len() + k];
                assert!(
                    got.distance(expected) < 1e-4,
                    "{direction}°: extra {k} {got} vs {expected}"
                );
            }
            // No two slots nearer than the closest drawn pair or the spacing.
            assert!(min_neighbour(&p) >= min_neighbour(&DRAWN).min(1.2) - 1e-4);
        }
        // One point seats any squad in a file behind it, the spacing apart.
        let one = FormationDef::from_ron("(shape: Custom(points: [(0.0, 0.0)]), spacing: 1.5)")
            .expect("valid");
        let p = laid(&one, 4);
        for (i, q) in p.iter().enumerate() {
            assert!(q.distance(Vec2::new(0.0, 1.5 * i as f32)) < 1e-5, "{q}");
        }
        // Other shapes have no extra agents.
        assert_eq!(FormationDef::default().extra_agents(1000), 0);
    }

    #[test]
    fn a_layout_refuses_an_invalid_formation_or_too_many_agents() {
        let def = FormationDef::from_ron("(shape: Custom(points: [(0.0, 0.0), (1.0, 0.0)]))")
            .expect("valid");
        let (mut p, mut h) = (Vec::new(), Vec::new());
        assert!(def.layout(3, &mut p, &mut h).is_ok());
        assert!(def.layout(MAX_AGENTS + 1, &mut p, &mut h).is_err());
        let nan = FormationDef {
            spacing: f32::NAN,
            ..FormationDef::default()
        };
        let err = nan.layout(3, &mut p, &mut h).unwrap_err();
        assert!(err.message.contains("spacing"), "{err}");
    }

    #[test]
    fn yaw_helpers_follow_godot() {
        assert!((forward_of(0.0) - Vec2::new(0.0, -1.0)).length() < 1e-6);
        assert!((yaw_of(Vec2::new(-1.0, 0.0)) - PI / 2.0).abs() < 1e-6);
        assert!((rotate(Vec2::new(0.0, -1.0), 0.7) - forward_of(0.7)).length() < 1e-6);
    }
}
