//! What a gizmo is drawn for: which Entwine node a 3D node is, the geometry its gizmo reads from
//! it (the touch box, the reach spheres, a rope's end, a character's proportion), and its handles.

use entwine_core::editor::{self as geo, Reach};
use glam::{Affine3A, Vec3};
use godot::classes::{Node3D, Skeleton3D};
use godot::prelude::*;

use crate::bones::arm_chain;
use crate::convert::{affine, vec3};
use crate::formation::FormationController;
use crate::limb_ik::LimbIK;
use crate::rope::RopeSimulation;
use entwine_core::rig::Side;

use super::formation::{handle_at, FormationEditor};

/// Which node a gizmo belongs to.
pub(super) enum Kind {
    Limb(Gd<LimbIK>),
    Rope(Gd<RopeSimulation>),
    Touch(Gd<Node3D>),
    Hold {
        body: Gd<Node3D>,
        component: Gd<Node>,
    },
    Squad(Gd<FormationController>),
}

/// What one handle edits: an object's property.
pub(super) struct Edit {
    pub(super) object: Gd<Object>,
    pub(super) property: &'static str,
    pub(super) name: &'static str,
}

impl Edit {
    /// A handle at `at` (world) editing `object`'s `property`.
    pub(super) fn at(
        at: Vec3,
        object: &Gd<impl Inherits<Object>>,
        property: &'static str,
        name: &'static str,
    ) -> (Vec3, Edit) {
        let object = object.clone().upcast();
        (
            at,
            Edit {
                object,
                property,
                name,
            },
        )
    }
}

pub(super) fn kind_of(node: &Gd<Node3D>) -> Option<Kind> {
    if let Ok(limb) = node.clone().try_cast::<LimbIK>() {
        return Some(Kind::Limb(limb));
    }
    if let Ok(rope) = node.clone().try_cast::<RopeSimulation>() {
        return Some(Kind::Rope(rope));
    }
    if node.is_class("EnvironmentInteractionStateMachine") {
        return Some(Kind::Touch(node.clone()));
    }
    if let Ok(squad) = node.clone().try_cast::<FormationController>() {
        return Some(Kind::Squad(squad));
    }
    let component = node
        .get_children()
        .iter_shared()
        .find(|c| c.is_class("HoldHandComponent"))?;
    Some(Kind::Hold {
        body: node.clone(),
        component,
    })
}

/// The character a hold-hands component or an env-touch node belongs to: its parent.
pub(super) fn character_of(node: &Gd<Node3D>) -> Option<Gd<Node3D>> {
    node.get_parent()?.try_cast::<Node3D>().ok()
}

/// The first skeleton under `node`.
pub(super) fn skeleton_under(node: &Gd<Node>) -> Option<Gd<Skeleton3D>> {
    for child in node.get_children().iter_shared() {
        if let Ok(s) = child.clone().try_cast::<Skeleton3D>() {
            return Some(s);
        }
        if let Some(s) = skeleton_under(&child) {
            return Some(s);
        }
    }
    None
}

/// A pair's body frame (its rotation and position, without scale) and the factor its offsets are
/// shown at: the character's proportion when the component's `auto_proportions` is on, else 1.
pub(super) fn hold_frame(body: &Gd<Node3D>, component: &Gd<Node>) -> (Affine3A, f32) {
    let auto = component
        .get("auto_proportions")
        .try_to::<bool>()
        .unwrap_or(true);
    let frame = crate::convert::pose(body.get_global_transform());
    let frame = Affine3A::from_rotation_translation(frame.rotation, frame.position);
    (frame, proportion(body, auto))
}

/// `k` of `auto_proportions` for a character: its humanoid's height in the world over 1.75 m.
pub(super) fn proportion(body: &Gd<Node3D>, auto: bool) -> f32 {
    if !auto {
        return 1.0;
    }
    let Some(skeleton) = skeleton_under(&body.clone().upcast()) else {
        return 1.0;
    };
    // The game's own rule (HoldHandComponent's proportion), so the gizmo draws what the game uses.
    let height = crate::rig::humanoid(&skeleton).height;
    let scale = vec3(skeleton.get_global_transform().basis.get_scale());
    entwine_core::rig::character_proportion(height, scale)
}

/// The global transform of a rope's `end_node`, when it has one.
pub(super) fn end_frame(rope: &Gd<RopeSimulation>) -> Option<Transform3D> {
    let path = rope.get("end_node").try_to::<NodePath>().ok()?;
    if path.is_empty() {
        return None;
    }
    rope.try_get_node_as::<Node3D>(&path)
        .map(|n| n.get_global_transform())
}

/// An env-touch node's detection box in the world.
pub(super) struct TouchBox {
    /// At the box's centre, in the character's axes.
    pub(super) frame: Affine3A,
    /// The box's side (the character's height), metres.
    pub(super) size: f32,
    /// `auto_proportions`' factor for the node's lengths.
    pub(super) k: f32,
    /// The character's collider centre in the world, which the box grows from.
    pub(super) fixed: Vec3,
    /// The character's frame in the world.
    pub(super) body: Affine3A,
}

/// The detection box of an env-touch node in the world.
pub(super) fn touch_box(node: &Gd<Node3D>) -> Option<TouchBox> {
    let character = character_of(node)?;
    let set = node.get("character_height").try_to::<f32>().unwrap_or(0.0);
    let collider = crate::scene::collider(&character)
        .map(|(shape, height)| (vec3(shape.get_position()), height));
    let (height, centre) = geo::touch_size(set, collider);
    let b = entwine_core::env_touch::detection_box(height, centre)?;
    let body = affine(character.get_global_transform());
    let frame = body * Affine3A::from_translation(b.centre);
    let auto = node
        .get("auto_proportions")
        .try_to::<bool>()
        .unwrap_or(true);
    let k = geo::touch_scale(height, auto);
    Some(TouchBox {
        frame,
        size: b.size,
        k,
        fixed: body.transform_point3(centre),
        body,
    })
}

/// A hold-hands character's two reach spheres, as the component finds them when it runs: the left
/// arm's (the initiator's hand, or [member initiator_hand_bone]'s chain) and the right arm's (the
/// recipient's). Empty without a humanoid skeleton.
pub(super) fn reach_spheres(body: &Gd<Node3D>, component: &Gd<Node>) -> Vec<Reach> {
    let Some(skeleton) = skeleton_under(&body.clone().upcast()) else {
        return Vec::new();
    };
    let rig = crate::rig::humanoid(&skeleton);
    let to_world = affine(skeleton.get_global_transform());
    let mut out = Vec::new();
    for (side, property) in [
        (Side::Left, "initiator_hand_bone"),
        (Side::Right, "recipient_hand_bone"),
    ] {
        let named = component
            .get(property)
            .try_to::<GString>()
            .unwrap_or_default();
        let chain = arm_chain(&skeleton, &named, side, &rig);
        let Some(chain) = chain.filter(|c| c.iter().all(|&b| b < skeleton.get_bone_count())) else {
            continue;
        };
        let joints = chain.map(|b| vec3(skeleton.get_bone_global_rest(b).origin));
        let scale = vec3(skeleton.get_global_transform().basis.get_scale());
        let centre =
            to_world.transform_point3(vec3(skeleton.get_bone_global_pose(chain[0]).origin));
        let right = to_world.transform_vector3(rig.right);
        out.extend(Reach::new(joints, scale, centre, right, side == Side::Left));
    }
    out
}

/// A hold-hands component's reach margin (its default when unset).
pub(super) fn reach_margin(component: &Gd<Node>) -> f32 {
    component
        .get("reach_margin")
        .try_to::<f32>()
        .unwrap_or(0.02)
}

/// Handle `id` of a node (a negative id: the first), with what it edits (see [`handles`]).
pub(super) fn handle(
    points: &mut Vec<Vector3>,
    formations: &Option<Gd<FormationEditor>>,
    kind: &Kind,
    id: i32,
) -> Option<(Vec3, Edit)> {
    handles(points, formations, kind)
        .into_iter()
        .nth(id.max(0) as usize)
}

/// Every handle of a node, in the world, with what it edits (`points`: scratch for a rope's
/// points, left holding them).
pub(super) fn handles(
    points: &mut Vec<Vector3>,
    formations: &Option<Gd<FormationEditor>>,
    kind: &Kind,
) -> Vec<(Vec3, Edit)> {
    let mut out = Vec::new();
    match kind {
        Kind::Limb(limb) => limb_handles(limb, &mut out),
        Kind::Rope(rope) => rope_handles(points, rope, &mut out),
        Kind::Touch(node) => touch_handles(node, &mut out),
        Kind::Hold { body, component } => hold_handles(body, component, &mut out),
        Kind::Squad(squad) => squad_handles(formations, squad, &mut out),
    }
    out
}

/// A limb's handles: its target and its pole (a pole node, or the pole direction when it has none).
fn limb_handles(limb: &Gd<LimbIK>, out: &mut Vec<(Vec3, Edit)>) {
    let mut limb = limb.clone();
    let geometry = limb.bind_mut().editor_geometry();
    let (target_path, pole_path) = limb.bind().editor_paths();
    let target = if target_path.is_empty() {
        Some((
            limb.get("target_transform").to::<Transform3D>().origin,
            limb.clone().upcast::<Object>(),
            "target_transform",
        ))
    } else {
        limb.try_get_node_as::<Node3D>(&target_path).map(|n| {
            (
                n.get_global_position(),
                n.upcast::<Object>(),
                "global_position",
            )
        })
    };
    if let Some((p, object, property)) = target {
        out.push(Edit::at(vec3(p), &object, property, "Target"));
    }
    if pole_path.is_empty() {
        if let Some((frame, root, reach)) = geometry {
            let dir = vec3(limb.get("pole_direction").to::<Vector3>());
            let dir = geo::pole_handle_direction(dir);
            if let Some(h) = geo::pole_handle(affine(frame), vec3(root), dir, reach * 0.5) {
                out.push(Edit::at(h, &limb, "pole_direction", "Pole direction"));
            }
        }
    } else if let Some(n) = limb.try_get_node_as::<Node3D>(&pole_path) {
        out.push(Edit::at(
            vec3(n.get_global_position()),
            &n,
            "global_position",
            "Pole",
        ));
    }
}

/// A rope's handles: its anchor, its length and, when pinned, its second anchor.
fn rope_handles(points: &mut Vec<Vector3>, rope: &Gd<RopeSimulation>, out: &mut Vec<(Vec3, Edit)>) {
    let mut rope = rope.clone();
    let frame = rope.bind_mut().anchor_frame();
    let offset = rope.get("anchor_offset").to::<Vector3>();
    let anchor = vec3(frame * offset);
    rope.bind().editor_points(points);
    let dir = geo::rope_direction(anchor, points.last().map(|p| vec3(*p)));
    let length = geo::rope_length(
        rope.get("point_count").to::<i32>(),
        rope.get("segment_length").to::<f32>(),
    );
    out.push(Edit::at(anchor, &rope, "anchor_offset", "Anchor"));
    let length = geo::length_handle(anchor, dir, length);
    out.push(Edit::at(length, &rope, "point_count", "Length"));
    // A pinned rope's second anchor: the end node's frame plus `end_offset`.
    if let Some(end) = end_frame(&rope) {
        let offset = rope.get("end_offset").to::<Vector3>();
        out.push(Edit::at(
            vec3(end * offset),
            &rope,
            "end_offset",
            "End anchor",
        ));
    }
}

/// A wall touch's handles: the character-height faces of its box and the surface offset.
fn touch_handles(node: &Gd<Node3D>, out: &mut Vec<(Vec3, Edit)>) {
    if let Some(b) = touch_box(node) {
        let [right, _, _] = geo::box_handles(b.frame, Vec3::splat(b.size));
        let inward = b.frame.transform_vector3(Vec3::NEG_X);
        let offset = node.get("surface_offset").try_to::<f32>().unwrap_or(0.0);
        // Every face handle is the middle of its face (see `TOUCH_FACES`).
        let face = |id: usize| {
            let (per_side, _, name) = geo::touch_face(id)?;
            let per_side = b.body.transform_vector3(per_side);
            Some(Edit::at(
                geo::face_handle(b.fixed, per_side, b.size),
                node,
                "character_height",
                name,
            ))
        };
        out.extend(face(0));
        out.push(Edit::at(
            geo::distance_handle(right, inward, offset * b.k),
            node,
            "surface_offset",
            "Surface offset",
        ));
        out.extend((2..=3).filter_map(face));
    }
}

/// A hold-hands component's handles: its follow and preparation offsets and each arm's reach.
fn hold_handles(body: &Gd<Node3D>, component: &Gd<Node>, out: &mut Vec<(Vec3, Edit)>) {
    let (frame, k) = hold_frame(body, component);
    for (property, name) in [
        ("follow_offset", "Follow offset"),
        ("preparation_offset", "Preparation offset"),
    ] {
        let offset = vec3(
            component
                .get(property)
                .try_to::<Vector3>()
                .unwrap_or_default(),
        );
        let at = geo::offset_handle(frame, offset, k);
        out.push(Edit::at(at, component, property, name));
    }
    let margin = reach_margin(component);
    for (reach, name) in reach_spheres(body, component)
        .into_iter()
        .zip(["Reach (left arm)", "Reach (right arm)"])
    {
        let at = reach.handle(margin);
        out.push(Edit::at(at, component, "reach_margin", name));
    }
}

/// A squad's handles: each point of its formation's draft, while the formation editor edits it.
fn squad_handles(
    formations: &Option<Gd<FormationEditor>>,
    squad: &Gd<FormationController>,
    out: &mut Vec<(Vec3, Edit)>,
) {
    let draft = formations
        .as_ref()
        .and_then(|f| f.bind().draft_of(squad).map(|d| d.points.clone()));
    for p in draft.unwrap_or_default() {
        let at = handle_at(squad, p, entwine_core::formation::editor::HANDLE_LIFT);
        out.push(Edit::at(at, squad, "points", "Formation point"));
    }
}
