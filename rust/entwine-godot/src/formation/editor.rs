//! The editor's preview of a `FormationController`: its current formation's slots, facings and
//! neighbour spacing drawn for its agent count, and "Lay out agents" (undoable).

use godot::classes::mesh::PrimitiveType;
use godot::classes::node::InternalMode;
use godot::classes::{EditorInterface, Engine, ImmediateMesh};
use godot::prelude::*;

use entwine_core::formation::render::{
    facing_tick, FACING_RGB, NEIGHBOUR_RGB, PREVIEW_CROSS, PREVIEW_LIFT, PREVIEW_SLOT_RGB,
};
use entwine_core::formation::FormationDef;
use entwine_core::kit::draw;

use super::FormationController;
use crate::convert::{color, from_ground};
use crate::direct::Alive;

#[godot_api(secondary)]
impl FormationController {
    /// Moves every child agent onto its slot in the current formation, facing the slot's heading
    /// (the inspector's "Lay out agents" button). In the editor it is one undoable action that sets
    /// each child's `position` and `rotation`; in the game it is [method snap_to_slots].
    #[func]
    pub fn lay_out_agents(&mut self) {
        if !self.in_editor {
            self.snap_to_slots();
            return;
        }
        self.rebuild_agents(true);
        let n = self.agents.len().min(self.squad.len());
        let mut undo = EditorInterface::singleton().get_editor_undo_redo();
        let Some(mut undo) = undo.take() else {
            return;
        };
        undo.create_action("Lay out agents");
        for i in 0..n {
            let Some(s) = self.squad.slot_of(i) else {
                continue;
            };
            let node = self.agents[i].clone();
            if !node.alive() {
                continue;
            }
            let old_position = node.get_position();
            let old_rotation = node.get_rotation();
            let position = from_ground(self.squad.slot_pos(s), old_position.y);
            let mut rotation = old_rotation;
            rotation.y = self.squad.slot_yaw(s);
            undo.add_do_property(&node, "position", &position.to_variant());
            undo.add_do_property(&node, "rotation", &rotation.to_variant());
            undo.add_undo_property(&node, "position", &old_position.to_variant());
            undo.add_undo_property(&node, "rotation", &old_rotation.to_variant());
        }
        undo.commit_action();
        self.rebuild_agents(true);
    }

    /// Returns whether the editor's slot drawing is shown (true only in the editor, once the
    /// formation could be laid out).
    #[func(rename = _has_editor_preview)]
    pub fn has_editor_preview(&self) -> bool {
        self.in_editor
            && self
                .editor_slots
                .as_ref()
                .is_some_and(|(node, _)| node.is_visible())
    }
}

impl FormationController {
    /// Redraws the slots when the children, the agent count or the formation changed.
    pub(super) fn editor_preview(&mut self) {
        if !Engine::singleton().is_editor_hint() {
            return;
        }
        self.rebuild_agents(false);
        if !self.editor_dirty {
            return;
        }
        self.editor_dirty = false;
        let (mut node, mut mesh) = match self.editor_slots.clone() {
            Some(pair) => pair,
            None => {
                let (node, mesh) = crate::debug_draw::line_mesh("EntwineEditorSlots", true);
                self.base_mut()
                    .add_child_ex(&node)
                    .internal(InternalMode::BACK)
                    .done();
                self.editor_slots = Some((node.clone(), mesh.clone()));
                (node, mesh)
            }
        };
        mesh.clear_surfaces();
        let slots = self.squad.slot_count();
        node.set_visible(slots > 0);
        if slots == 0 {
            return;
        }
        let line = |mesh: &mut Gd<ImmediateMesh>, (a, b): (glam::Vec2, glam::Vec2)| {
            mesh.surface_add_vertex(from_ground(a, PREVIEW_LIFT));
            mesh.surface_add_vertex(from_ground(b, PREVIEW_LIFT));
        };
        mesh.surface_begin(PrimitiveType::LINES);
        // Neighbouring pairs (the contract's spacing clause): thin blue lines between slots.
        mesh.surface_set_color(color(NEIGHBOUR_RGB));
        for &(a, b) in self.squad.neighbour_pairs() {
            let (a, b) = (a as usize, b as usize);
            line(&mut mesh, (self.squad.slot_pos(a), self.squad.slot_pos(b)));
        }
        for s in 0..slots {
            let p = self.squad.slot_pos(s);
            mesh.surface_set_color(color(PREVIEW_SLOT_RGB));
            for segment in draw::cross(p, PREVIEW_CROSS) {
                line(&mut mesh, segment);
            }
            // Facing: the slot's heading (yaw about +Y; forward is −Z).
            mesh.surface_set_color(color(FACING_RGB));
            line(&mut mesh, facing_tick(p, self.squad.slot_yaw(s)));
        }
        mesh.surface_end();
    }
}

#[godot_api(secondary)]
impl FormationController {
    /// Re-reads [member formations_dir] now, new files included, and lays the formation in use out
    /// again when its file changed. The formation editor calls it after saving a file; while the
    /// game runs, [member hot_reload] re-reads changed files by itself.
    #[func]
    pub fn reload_formations(&mut self) {
        let before = self.formations.get(&self.current).map(|f| f.def.clone());
        self.load_formation_dir();
        let after = self.formations.get(&self.current).map(|f| f.def.clone());
        if before != after {
            self.commands.forget_last();
            let name = self.current.clone();
            let _ = self.apply_form(&name);
        }
        self.editor_dirty = true;
    }
}

impl FormationController {
    /// What the formation editor starts from: the formation in use, the number of slots laid out,
    /// the contract's spacing tolerance and the formations folder.
    pub(crate) fn editor_source(&self) -> (FormationDef, usize, f32, String) {
        (
            self.squad.formation().clone(),
            self.squad.slot_count(),
            self.contract_spacing,
            self.formations_dir.to_string(),
        )
    }
}
