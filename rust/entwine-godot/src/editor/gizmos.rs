//! The 3D gizmos: what each Entwine node draws in the editor's viewport, its handles, and the
//! property each handle edits (one undoable action per drag).
//!
//! | node | drawn | handle → property |
//! |---|---|---|
//! | `LimbIK` | shoulder → target, shoulder → pole | target → `target_transform` (or the `target_node`'s position); pole → `pole_direction` (or the `pole_node`'s position) |
//! | `RopeSimulation` | the rope's points | anchor → `anchor_offset`; end → `point_count` (the length); a pinned rope's end anchor → `end_offset` |
//! | `EnvironmentInteractionStateMachine` | the detection box, the surface offset | top, left and front faces → `character_height` (the box's side); offset → `surface_offset` |
//! | a character with a `HoldHandComponent` | follow and preparation points, each arm's reach sphere | follow → `follow_offset`; preparation → `preparation_offset`; each sphere's outer side → `reach_margin` |
//! | `FormationController` being edited by the formation editor | its points, the spacing pairs (red when crowded) | each point → the point (`FormationEditor`) |
//!
//! Env-touch and hold-hands nodes do not run in the editor, so their gizmos read and write their
//! properties through Godot's property interface.

use entwine_core::editor::{self as geo, CIRCLE_SEGMENTS as CIRCLE};
use entwine_core::kit::draw;
use glam::Vec3;
use godot::classes::{
    Camera3D, EditorInterface, EditorNode3DGizmo, EditorNode3DGizmoPlugin,
    IEditorNode3DGizmoPlugin, Node3D,
};
use godot::prelude::*;

use super::formation::{handle_at, FormationEditor};
use super::targets::*;
use crate::convert::{affine, affine_inverse, vec3, vector3};
use crate::formation::FormationController;
use crate::limb_ik::LimbIK;
use entwine_core::formation::editor as fe;

/// Draws Entwine's nodes in the editor's 3D viewport, with handles that edit their properties (each
/// drag is one undoable action):
///
/// - [EntwineLimbIK]: lines from the shoulder; the target handle edits [member EntwineLimbIK.target_transform]
///   (or moves the [member EntwineLimbIK.target_node]), the pole handle [member EntwineLimbIK.pole_direction]
///   (or moves the [member EntwineLimbIK.pole_node]).
/// - [RopeSimulation]: the rope's points; the anchor handle edits
///   [member RopeSimulation.anchor_offset], the end handle the length (as
///   [member RopeSimulation.point_count]), and on a rope pinned to an
///   [member RopeSimulation.end_node] a third handle [member RopeSimulation.end_offset].
/// - [EnvironmentInteractionStateMachine]: the detection box; the handles on its top, left and
///   front faces edit [member EnvironmentInteractionStateMachine.character_height] (the box's side,
///   so that the dragged face stays under the mouse),
///   the offset handle inside its right face
///   [member EnvironmentInteractionStateMachine.surface_offset].
/// - A character with a [HoldHandComponent]: its follow and preparation points, whose handles edit
///   [member HoldHandComponent.follow_offset] and [member HoldHandComponent.preparation_offset]
///   (shown at the character's size when [member HoldHandComponent.auto_proportions] is on), and,
///   with a humanoid skeleton, each arm's reach sphere (centred on the shoulder, the arm's length
///   less the margin), whose handle on the outer side edits [member HoldHandComponent.reach_margin].
/// - A [FormationController] being edited by the [EntwineFormationEditor]: its points, one handle each
///   (a drag slides the point on the controller's ground), and the pairs the contract's spacing is
///   measured over (red when crowded).
#[derive(GodotClass)]
#[class(tool, init, base = EditorNode3DGizmoPlugin)]
pub struct EntwineGizmos {
    base: Base<EditorNode3DGizmoPlugin>,
    /// Scratch for the rope's points (editor only).
    points: Vec<Vector3>,
    /// The formation editor whose points a FormationController's handles are.
    formations: Option<Gd<FormationEditor>>,
}

impl EntwineGizmos {
    /// Creates the plugin with its materials.
    pub fn create(formations: Gd<FormationEditor>) -> Gd<Self> {
        let mut gizmos = Self::new_gd();
        gizmos.bind_mut().formations = Some(formations);
        let mut base = gizmos.clone().upcast::<EditorNode3DGizmoPlugin>();
        base.create_material("limb", Color::from_rgb(0.3, 0.85, 1.0));
        base.create_material("rope", Color::from_rgb(1.0, 0.55, 0.2));
        base.create_material("touch", Color::from_rgb(0.45, 1.0, 0.45));
        base.create_material("hold", Color::from_rgb(1.0, 0.4, 0.8));
        base.create_material("formation", Color::from_rgb(0.35, 0.6, 1.0));
        base.create_material("crowded", Color::from_rgb(1.0, 0.15, 0.1));
        base.create_handle_material("handles");
        gizmos
    }
}

impl EntwineGizmos {
    /// The value of `edit.property` for its handle dragged to `p` (world), if any.
    fn value_for(&mut self, kind: &Kind, id: usize, p: Vec3) -> Option<Variant> {
        match kind {
            Kind::Limb(limb) => {
                let edit = handle(&mut self.points, &self.formations, kind, id as i32)?.1;
                match edit.property {
                    "target_transform" => {
                        let mut t = limb.get("target_transform").to::<Transform3D>();
                        t.origin = vector3(p);
                        Some(t.to_variant())
                    }
                    "pole_direction" => {
                        let (frame, root, _) = limb.clone().bind_mut().editor_geometry()?;
                        geo::pole_from_handle(affine(frame), vec3(root), p)
                            .map(|d| vector3(d).to_variant())
                    }
                    _ => Some(vector3(p).to_variant()),
                }
            }
            Kind::Rope(rope) => {
                let mut rope = rope.clone();
                if id == 2 {
                    let local = affine_inverse(end_frame(&rope)?) * vector3(p);
                    return local.is_finite().then(|| local.to_variant());
                }
                let frame = rope.bind_mut().anchor_frame();
                if id == 0 {
                    let local = affine_inverse(frame) * vector3(p);
                    return local.is_finite().then(|| local.to_variant());
                }
                let anchor = vec3(frame * rope.get("anchor_offset").to::<Vector3>());
                let dir = geo::rope_direction(anchor, self.points.last().map(|q| vec3(*q)));
                let seg = rope.get("segment_length").to::<f32>();
                let capacity = rope.get("capacity").to::<i32>();
                geo::rope_point_count(anchor, dir, p, seg, capacity).map(|n| n.to_variant())
            }
            Kind::Touch(node) => {
                let b = touch_box(node)?;
                if let Some((per_side, normal, _)) = geo::touch_face(id) {
                    // A face (top, left or front): the box whose face plane passes through the
                    // handle, so the face follows the mouse.
                    let per_side = b.body.transform_vector3(per_side);
                    let normal = b.body.transform_vector3(normal);
                    return geo::height_from_face(b.fixed, per_side, normal, p)
                        .map(|h| h.to_variant());
                }
                let [right, _, _] = geo::box_handles(b.frame, Vec3::splat(b.size));
                let inward = b.frame.transform_vector3(Vec3::NEG_X);
                geo::surface_offset_from_handle(right, inward, p, b.k).map(|d| d.to_variant())
            }
            Kind::Hold { body, component } => {
                if id >= 2 {
                    let reach = reach_spheres(body, component).into_iter().nth(id - 2)?;
                    return reach.margin_from_handle(p).map(|m| m.to_variant());
                }
                let (frame, k) = hold_frame(body, component);
                geo::offset_from_handle(frame, p, k).map(|o| vector3(o).to_variant())
            }
            Kind::Squad(squad) => {
                let frame = FormationEditor::frame_of(squad);
                fe::point_from_handle(frame, p).map(|q| Vector2::new(q.x, q.y).to_variant())
            }
        }
    }
}

fn node_of(gizmo: &Option<Gd<EditorNode3DGizmo>>) -> Option<Gd<Node3D>> {
    gizmo.as_ref()?.get_node_3d()
}

/// A limb's lines: from the shoulder to each handle; returns its material's name.
fn limb_lines(
    limb: &Gd<LimbIK>,
    handles: &[(Vec3, Edit)],
    to_local: Transform3D,
    lines: &mut PackedVector3Array,
) -> &'static str {
    let local = |p: Vec3| to_local * vector3(p);
    if let Some((_, root, _)) = limb.clone().bind_mut().editor_geometry() {
        for (h, _) in handles {
            lines.push(to_local * root);
            lines.push(local(*h));
        }
    }
    "limb"
}

/// A rope's lines: one between each pair of neighbouring points; returns its material's name.
fn rope_lines(
    points: &[Vector3],
    to_local: Transform3D,
    lines: &mut PackedVector3Array,
) -> &'static str {
    for w in points.windows(2) {
        lines.push(to_local * w[0]);
        lines.push(to_local * w[1]);
    }
    "rope"
}

/// A wall touch's lines: the detection box and its surface offset; returns its material's name.
fn touch_lines(
    node: &Gd<Node3D>,
    handles: &[(Vec3, Edit)],
    to_local: Transform3D,
    lines: &mut PackedVector3Array,
) -> &'static str {
    let local = |p: Vec3| to_local * vector3(p);
    if let Some(b) = touch_box(node) {
        for (p, q) in draw::cube_edges(b.frame, b.size) {
            lines.push(local(p));
            lines.push(local(q));
        }
        // The surface offset: from the box's side face inward.
        if let Some((offset, _)) = handles.get(1) {
            let [right, _, _] = geo::box_handles(b.frame, Vec3::splat(b.size));
            lines.push(local(right));
            lines.push(local(*offset));
        }
    }
    "touch"
}

/// A hold-hands character's lines: to its offsets and each arm's reach sphere; returns its material.
fn hold_lines(
    body: &Gd<Node3D>,
    component: &Gd<Node>,
    handles: &[(Vec3, Edit)],
    to_local: Transform3D,
    lines: &mut PackedVector3Array,
) -> &'static str {
    let local = |p: Vec3| to_local * vector3(p);
    let origin = vec3(body.get_global_position());
    for (h, _) in handles.iter().take(2) {
        lines.push(local(origin));
        lines.push(local(*h));
    }
    // The reach spheres: three great circles each.
    let margin = reach_margin(component);
    for reach in reach_spheres(body, component) {
        for (p, q) in draw::sphere(reach.centre, reach.radius(margin), CIRCLE) {
            lines.push(local(p));
            lines.push(local(q));
        }
    }
    "hold"
}

/// A squad's lines while the formation editor edits it: its points' spacing pairs, crowded ones
/// apart; returns its material's name.
fn formation_lines(
    formations: &Option<Gd<FormationEditor>>,
    squad: &Gd<FormationController>,
    to_local: Transform3D,
    lines: &mut PackedVector3Array,
    crowded_lines: &mut PackedVector3Array,
) -> &'static str {
    let local = |p: Vec3| to_local * vector3(p);
    // The formation editor's points: a ring each, and the pairs the contract's spacing
    // is measured over (red where two points are closer than the spacing allows).
    let editor = formations.clone();
    let draft = editor
        .as_ref()
        .and_then(|f| f.bind().draft_of(squad).cloned());
    let tolerance = squad
        .get("contract_spacing")
        .try_to::<f32>()
        .unwrap_or(0.05);
    if let Some(draft) = draft {
        let at = |p: glam::Vec2| local(handle_at(squad, p, fe::HANDLE_LIFT));
        geo::draft_lines(&draft, tolerance, |crowded, a, b| {
            let out = if crowded {
                &mut *crowded_lines
            } else {
                &mut *lines
            };
            out.push(at(a));
            out.push(at(b));
        });
    }
    "formation"
}

#[godot_api]
impl IEditorNode3DGizmoPlugin for EntwineGizmos {
    fn get_gizmo_name(&self) -> GString {
        "Entwine".into()
    }

    fn has_gizmo(&self, for_node_3d: Option<Gd<Node3D>>) -> bool {
        for_node_3d.as_ref().and_then(kind_of).is_some()
    }

    fn redraw(&mut self, gizmo: Option<Gd<EditorNode3DGizmo>>) {
        let Some(mut g) = gizmo.clone() else {
            return;
        };
        g.clear();
        let Some(node) = node_of(&gizmo) else {
            return;
        };
        let Some(kind) = kind_of(&node) else {
            return;
        };
        let to_local = affine_inverse(node.get_global_transform());
        let local = |p: Vec3| to_local * vector3(p);
        let handles = handles(&mut self.points, &self.formations, &kind);
        let mut lines = PackedVector3Array::new();
        let mut crowded_lines = PackedVector3Array::new();
        let material = match &kind {
            Kind::Limb(limb) => limb_lines(limb, &handles, to_local, &mut lines),
            Kind::Rope(_) => rope_lines(&self.points, to_local, &mut lines),
            Kind::Touch(node) => touch_lines(node, &handles, to_local, &mut lines),
            Kind::Hold { body, component } => {
                hold_lines(body, component, &handles, to_local, &mut lines)
            }
            Kind::Squad(squad) => formation_lines(
                &self.formations,
                squad,
                to_local,
                &mut lines,
                &mut crowded_lines,
            ),
        };
        if !crowded_lines.is_empty() {
            if let Some(m) = self.base().get_material_ex("crowded").gizmo(&g).done() {
                g.add_lines(&crowded_lines, &m);
            }
        }
        if let Some(m) = self.base().get_material_ex(material).gizmo(&g).done() {
            if !lines.is_empty() {
                g.add_lines(&lines, &m);
            }
        }
        let points: PackedVector3Array = handles.iter().map(|(h, _)| local(*h)).collect();
        let ids: PackedInt32Array = (0..handles.len() as i32).collect();
        if let Some(m) = self.base().get_material_ex("handles").gizmo(&g).done() {
            if !points.is_empty() {
                g.add_handles_ex(&points, &m, &ids).done();
            }
        }
    }

    fn get_handle_name(
        &self,
        gizmo: Option<Gd<EditorNode3DGizmo>>,
        handle_id: i32,
        _secondary: bool,
    ) -> GString {
        let name = self.edit_of(&gizmo, handle_id).map_or("", |e| e.name);
        name.into()
    }

    fn get_handle_value(
        &self,
        gizmo: Option<Gd<EditorNode3DGizmo>>,
        handle_id: i32,
        _secondary: bool,
    ) -> Variant {
        if let Some(f) = self.squad_editor(&gizmo) {
            return f.bind().get_points().to_variant();
        }
        self.edit_of(&gizmo, handle_id)
            .map_or(Variant::nil(), |e| e.object.get(e.property))
    }

    fn set_handle(
        &mut self,
        gizmo: Option<Gd<EditorNode3DGizmo>>,
        handle_id: i32,
        _secondary: bool,
        camera: Option<Gd<Camera3D>>,
        screen_pos: Vector2,
    ) {
        let (Some(node), Some(camera)) = (node_of(&gizmo), camera) else {
            return;
        };
        let Some(kind) = kind_of(&node) else {
            return;
        };
        let id = handle_id.max(0) as usize;
        let Some((at, mut edit)) = handle(&mut self.points, &self.formations, &kind, handle_id)
        else {
            return;
        };
        let origin = vec3(camera.project_ray_origin(screen_pos));
        let dir = vec3(camera.project_ray_normal(screen_pos));
        if let (Kind::Squad(squad), Some(mut f)) = (&kind, self.formations.clone()) {
            // A formation point slides on the controller's ground under the mouse.
            let frame = FormationEditor::frame_of(squad);
            if let Some(p) = fe::point_from_ray(frame, origin, dir) {
                f.bind_mut().drag_to(id, p);
            }
            return;
        }
        // Drag on the plane through the handle that faces the camera.
        let facing = vec3(-camera.get_global_transform().basis.col_c());
        let Some(p) = geo::ray_plane(origin, dir, at, facing) else {
            return;
        };
        if let Some(value) = self.value_for(&kind, id, p) {
            edit.object.set(edit.property, &value);
            let mut node = node;
            node.update_gizmos();
        }
    }

    fn commit_handle(
        &mut self,
        gizmo: Option<Gd<EditorNode3DGizmo>>,
        handle_id: i32,
        _secondary: bool,
        restore: Variant,
        cancel: bool,
    ) {
        if let Some(mut f) = self.squad_editor(&gizmo) {
            let squad = f.bind().get_controller();
            let (Some(squad), Ok(before)) = (squad, restore.try_to::<PackedVector2Array>()) else {
                return;
            };
            if cancel {
                f.bind_mut().set_points(Some(squad), before);
            } else {
                let now = f.bind().get_points();
                f.bind_mut()
                    .record("Move formation point", &squad, &before, &now);
            }
            return;
        }
        let Some(mut edit) = self.edit_of(&gizmo, handle_id) else {
            return;
        };
        if cancel {
            edit.object.set(edit.property, &restore);
            return;
        }
        let Some(mut undo) = EditorInterface::singleton().get_editor_undo_redo() else {
            return;
        };
        let now = edit.object.get(edit.property);
        undo.create_action(&format!("Entwine: {}", edit.name));
        undo.add_do_property(&edit.object, edit.property, &now);
        undo.add_undo_property(&edit.object, edit.property, &restore);
        undo.commit_action_ex().execute(false).done();
    }
}

#[godot_api]
impl EntwineGizmos {
    /// Returns the handles this plugin gives [param node] (world positions, in handle order; see
    /// the class description), or an empty array for a node it does not draw.
    #[func(rename = _get_handle_positions)]
    pub fn get_handle_positions(&mut self, node: Option<Gd<Node3D>>) -> PackedVector3Array {
        let Some(kind) = node.as_ref().and_then(kind_of) else {
            return PackedVector3Array::new();
        };
        handles(&mut self.points, &self.formations, &kind)
            .iter()
            .map(|(p, _)| vector3(*p))
            .collect()
    }

    /// Returns the property handle [param handle_id] of [param node] edits (`target_transform`,
    /// `follow_offset`…), or an empty string.
    #[func(rename = _get_handle_property)]
    pub fn get_handle_property(&mut self, node: Option<Gd<Node3D>>, handle_id: i32) -> GString {
        node.as_ref()
            .and_then(kind_of)
            .and_then(|k| handle(&mut self.points, &self.formations, &k, handle_id))
            .map_or(GString::new(), |(_, e)| e.property.into())
    }

    /// Returns the object whose property handle [param handle_id] of [param node] edits (the node
    /// itself, its [HoldHandComponent], a [member EntwineLimbIK.target_node] or [member EntwineLimbIK.pole_node],
    /// or the [FormationController] being edited), or null.
    #[func(rename = _get_handle_object)]
    pub fn get_handle_object(
        &mut self,
        node: Option<Gd<Node3D>>,
        handle_id: i32,
    ) -> Option<Gd<Object>> {
        let kind = node.as_ref().and_then(kind_of)?;
        handle(&mut self.points, &self.formations, &kind, handle_id).map(|(_, e)| e.object)
    }

    /// Moves handle [param handle_id] of [param node] to the world point [param to] as a drag in
    /// the viewport would end there, as one undoable action. Returns false when the node has no
    /// such handle or the point gives no value.
    #[func(rename = _drag_handle)]
    pub fn drag_handle(&mut self, node: Option<Gd<Node3D>>, handle_id: i32, to: Vector3) -> bool {
        let Some(mut node) = node else {
            return false;
        };
        let Some(kind) = kind_of(&node) else {
            return false;
        };
        let id = handle_id.max(0) as usize;
        let Some((_, edit)) = handle(&mut self.points, &self.formations, &kind, handle_id) else {
            return false;
        };
        let Some(value) = self.value_for(&kind, id, vec3(to)) else {
            return false;
        };
        if let (Kind::Squad(_), Some(mut f)) = (&kind, self.formations.clone()) {
            let moved = f.bind_mut().move_point(id as i32, value.to::<Vector2>());
            node.update_gizmos();
            return moved;
        }
        let Some(mut undo) = EditorInterface::singleton().get_editor_undo_redo() else {
            return false;
        };
        let before = edit.object.get(edit.property);
        undo.create_action(&format!("Entwine: {}", edit.name));
        undo.add_do_property(&edit.object, edit.property, &value);
        undo.add_undo_property(&edit.object, edit.property, &before);
        undo.commit_action();
        node.update_gizmos();
        true
    }
}

impl EntwineGizmos {
    /// The formation editor, when it is editing the gizmo's FormationController.
    fn squad_editor(&self, gizmo: &Option<Gd<EditorNode3DGizmo>>) -> Option<Gd<FormationEditor>> {
        let squad = node_of(gizmo)?.try_cast::<FormationController>().ok()?;
        let f = self.formations.clone()?;
        let editing = f.bind().draft_of(&squad).is_some();
        editing.then_some(f)
    }

    fn edit_of(&self, gizmo: &Option<Gd<EditorNode3DGizmo>>, handle_id: i32) -> Option<Edit> {
        let node = node_of(gizmo)?;
        let kind = kind_of(&node)?;
        handle(&mut Vec::new(), &self.formations, &kind, handle_id).map(|(_, e)| e)
    }
}
