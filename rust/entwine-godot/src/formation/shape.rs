//! `FormationShape`: a formation as a Resource edited in the inspector, validated through the
//! same RON path as the `.ron` files, and the controller's `add_formation_resource`.

use entwine_core::formation::shape;
use entwine_core::formation::{Facing, FormationDef, Shape};
use godot::classes::IResource;
use godot::prelude::*;

use super::FormationController;

/// The layout family of a [EntwineFormationShape].
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum FormationKind {
    /// One rank, side by side.
    #[default]
    Line,
    /// Ranks × files.
    Column,
    /// An arc bulging forward.
    Arc,
    /// A full circle.
    Circle,
    /// An Archimedean spiral.
    Spiral,
    /// A wedge (chevron) led by the head.
    Wedge,
    /// A square block, filled or hollow.
    Box,
    /// Explicit points.
    Custom,
}

/// Which way agents face in a [EntwineFormationShape].
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum FormationFacing {
    /// Everyone faces the formation's forward.
    #[default]
    Forward,
    /// Away from the centre.
    Outward,
    /// Toward the centre.
    Inward,
}

/// A formation as a Resource (save it as `.tres`): the same fields as a `.ron` formation file, edited
/// in the inspector. Register it with [method FormationController.add_formation_resource]; it is
/// validated exactly like a file.
#[derive(GodotClass)]
#[class(init, base = Resource, rename = EntwineFormationShape)]
pub struct FormationShape {
    base: Base<Resource>,
    /// Layout family.
    #[export]
    #[var(set = set_kind)]
    kind: FormationKind,
    /// Distance between neighbours, m.
    #[export(range = (shape::SPACING.hint_min(), shape::SPACING.hint_max(), 0.01, suffix = shape::SPACING.suffix()))]
    #[init(val = shape::SPACING.default)]
    spacing: f32,
    /// Turn of the layout and facing relative to the anchor, in radians (the inspector shows
    /// degrees; the `.ron` files keep degrees).
    #[export(range = (shape::DIRECTION.hint_min(), shape::DIRECTION.hint_max(), 0.1, radians_as_degrees, suffix = shape::DIRECTION.suffix()))]
    direction: f32,
    /// Offset of the layout's centre from the anchor (x right, y = z back), m.
    #[export]
    offset: Vector2,
    /// Which way agents face.
    #[export]
    facing: FormationFacing,
    /// Column: agents per rank (0: from `ranks`). Box: agents per side (0: smallest square).
    #[export(range = (0.0, 65536.0, 1.0))]
    files: i32,
    /// Column: number of ranks, used when `files` is 0.
    #[export(range = (0.0, 65536.0, 1.0))]
    ranks: i32,
    /// Arc: radius, m.
    #[export(range = (shape::ARC_RADIUS.hint_min(), shape::ARC_RADIUS.hint_max(), 0.1, suffix = shape::ARC_RADIUS.suffix()))]
    #[init(val = shape::ARC_RADIUS.default)]
    radius: f32,
    /// Spiral: radius of the first slot, m.
    #[export(range = (shape::INITIAL_RADIUS.hint_min(), shape::INITIAL_RADIUS.hint_max(), 0.1, suffix = shape::INITIAL_RADIUS.suffix()))]
    #[init(val = shape::INITIAL_RADIUS.default)]
    initial_radius: f32,
    /// Spiral: radius gained per radian, m.
    #[export(range = (shape::GROWTH.hint_min(), shape::GROWTH.hint_max(), 0.01, suffix = shape::GROWTH.suffix()))]
    #[init(val = shape::GROWTH.default)]
    growth: f32,
    /// Wedge: opening angle between the arms, in radians.
    #[export(range = (shape::WEDGE_ANGLE.hint_min(), shape::WEDGE_ANGLE.hint_max(), 1.0, radians_as_degrees, suffix = shape::WEDGE_ANGLE.suffix()))]
    #[init(val = shape::WEDGE_ANGLE.default)]
    wedge_angle: f32,
    /// Box: only the perimeter is occupied.
    #[export]
    #[var(get = is_hollow)]
    hollow: bool,
    /// Custom: slot positions (x right, y = z back), m, head first.
    #[export]
    points: PackedVector2Array,
}

#[godot_api]
impl IResource for FormationShape {
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        use crate::inspector::hide;
        use FormationKind as K;
        let k = self.kind;
        hide(property, &["files"], !matches!(k, K::Column | K::Box));
        hide(property, &["ranks"], k != K::Column);
        hide(property, &["radius"], k != K::Arc);
        hide(property, &["initial_radius", "growth"], k != K::Spiral);
        hide(property, &["wedge_angle"], k != K::Wedge);
        hide(property, &["hollow"], k != K::Box);
        hide(property, &["points"], k != K::Custom);
    }
}

#[godot_api]
impl FormationShape {
    /// Sets [member kind]; the inspector then shows the settings of that kind only.
    #[func]
    pub fn set_kind(&mut self, kind: FormationKind) {
        self.kind = kind;
        self.base_mut().notify_property_list_changed();
    }

    /// Returns [member hollow].
    #[func]
    pub fn is_hollow(&self) -> bool {
        self.hollow
    }

    /// Returns the formation as RON text (the format of the `.ron` files).
    #[func]
    pub fn to_ron(&self) -> GString {
        let count = |n: i32| u32::try_from(n).unwrap_or(0);
        let shape = match self.kind {
            FormationKind::Line => Shape::Line,
            FormationKind::Column => Shape::Column {
                files: count(self.files),
                ranks: count(self.ranks),
            },
            FormationKind::Arc => Shape::Arc {
                radius: self.radius,
            },
            FormationKind::Circle => Shape::Circle,
            FormationKind::Spiral => Shape::Spiral {
                initial_radius: self.initial_radius,
                growth: self.growth,
            },
            FormationKind::Wedge => Shape::Wedge {
                angle: self.wedge_angle.to_degrees(),
            },
            FormationKind::Box => Shape::Box {
                files: count(self.files),
                hollow: self.hollow,
            },
            FormationKind::Custom => Shape::Custom {
                points: self.points.as_slice().iter().map(|p| (p.x, p.y)).collect(),
            },
        };
        let facing = match self.facing {
            FormationFacing::Forward => Facing::Forward,
            FormationFacing::Outward => Facing::Outward,
            FormationFacing::Inward => Facing::Inward,
        };
        let def = FormationDef {
            shape,
            spacing: self.spacing,
            direction: self.direction.to_degrees(),
            offset: (self.offset.x, self.offset.y),
            facing,
        };
        GString::from(&def.to_ron())
    }

    /// Returns an empty string when the formation is valid, else what is wrong (with line and
    /// column in [method to_ron]'s text).
    #[func]
    pub fn validate(&self) -> GString {
        match FormationDef::from_ron(&self.to_ron().to_string()) {
            Ok(_) => GString::new(),
            Err(e) => GString::from(&e.to_string()),
        }
    }
}

#[godot_api(secondary)]
impl FormationController {
    /// Registers `shape` under `name` (validated like a file). Returns false and warns when it is
    /// invalid.
    #[func]
    pub fn add_formation_resource(
        &mut self,
        name: GString,
        shape: Option<Gd<FormationShape>>,
    ) -> bool {
        let Some(shape) = shape else {
            self.warn_plain(&format!(
                "add_formation_resource: no EntwineFormationShape given for '{name}'"
            ));
            return false;
        };
        let text = shape.bind().to_ron();
        self.add_formation(name, text)
    }
}
