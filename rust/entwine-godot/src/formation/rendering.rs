//! Rendering: internal agents drawn through one MultiMesh buffer, simulated child agents placed at
//! their interpolated pose, and the debug drawing (slots, baseline, radii, lines of sight).

use entwine_core::formation::render::{self as look, AGENT_CAPSULE};
use entwine_core::kit::draw;
use glam::Vec2;
use godot::classes::mesh::PrimitiveType;
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::node::InternalMode;
use godot::classes::{
    base_material_3d, CapsuleMesh, ImmediateMesh, Mesh, MultiMesh, MultiMeshInstance3D,
    StandardMaterial3D,
};
use godot::prelude::*;

use super::{place_on_ground, AgentSource, FormationController};
use crate::convert::{affine_inverse, color, from_ground};
use crate::direct::Alive;

impl FormationController {
    pub(super) fn setup_multimesh(&mut self, internal: bool) {
        if !internal {
            if let Some(mm) = self.multimesh.take() {
                drop(mm);
            }
            for child in self
                .base()
                .get_children_ex()
                .include_internal(true)
                .done()
                .iter_shared()
            {
                if child.get_name() == "EntwineAgents" {
                    child.free();
                }
            }
            return;
        }
        let n = self.squad.len();
        let mut mm = match self.multimesh.clone() {
            Some(mm) => mm,
            None => {
                let mut mm = MultiMesh::new_gd();
                mm.set_transform_format(TransformFormat::TRANSFORM_3D);
                mm.set_use_colors(true);
                let mesh: Gd<Mesh> = match self.agent_mesh.clone() {
                    Some(m) => m,
                    None => {
                        let mut capsule = CapsuleMesh::new_gd();
                        capsule.set_radius(AGENT_CAPSULE.0);
                        capsule.set_height(AGENT_CAPSULE.1);
                        let mut mat = StandardMaterial3D::new_gd();
                        mat.set_flag(base_material_3d::Flags::ALBEDO_FROM_VERTEX_COLOR, true);
                        capsule.set_material(&mat);
                        capsule.upcast()
                    }
                };
                mm.set_mesh(&mesh);
                let mut inst = MultiMeshInstance3D::new_alloc();
                inst.set_name("EntwineAgents");
                inst.set_multimesh(&mm);
                self.base_mut()
                    .add_child_ex(&inst)
                    .internal(InternalMode::FRONT)
                    .done();
                self.multimesh = Some(mm.clone());
                mm
            }
        };
        mm.set_instance_count(n as i32);
        self.mm_buffer.resize(n * look::AGENT_FLOATS);
    }

    pub(super) fn draw_agents(&mut self) {
        if self.agent_source != AgentSource::Internal {
            if self.replay_frame.is_some() {
                self.write_replay_children();
            } else if self.squad.simulates() {
                self.write_agents();
            }
            return;
        }
        let Some(mut mm) = self.multimesh.clone() else {
            return;
        };
        let n = self.squad.len();
        if self.mm_buffer.len() != n * look::AGENT_FLOATS {
            self.mm_buffer.resize(n * look::AGENT_FLOATS);
        }
        let replay = self
            .replay_frame
            .and_then(|f| self.squad.recorder().and_then(|r| r.frame(f)))
            .map(|(_, s)| s);
        let show_state = self.debug_draw || replay.is_some();
        look::write_agent_rows(
            &self.squad,
            replay,
            show_state,
            self.mm_buffer.as_mut_slice(),
        );
        mm.set_buffer(&self.mm_buffer);
    }

    /// Simulated child agents: place them at their interpolated pose.
    pub(super) fn write_agents(&mut self) {
        if !self.squad.simulates() || self.agent_source == AgentSource::Internal {
            return;
        }
        for i in 0..self.agents.len().min(self.squad.len()) {
            if !self.agents[i].alive() {
                continue;
            }
            let (p, h) = self.squad.interpolated(i);
            place_on_ground(&mut self.agents[i].clone(), p, h);
        }
    }

    pub(super) fn draw_debug(&mut self) {
        if !self.debug_draw {
            if let Some(mut inst) = self.debug_instance.clone() {
                inst.set_visible(false);
            }
            return;
        }
        let mut mesh = match self.debug_mesh.clone() {
            Some(m) => m,
            None => {
                let (inst, mesh) = crate::debug_draw::line_mesh("EntwineDebug", false);
                self.base_mut()
                    .add_child_ex(&inst)
                    .internal(InternalMode::BACK)
                    .done();
                self.debug_instance = Some(inst);
                self.debug_mesh = Some(mesh.clone());
                mesh
            }
        };
        if let Some(mut inst) = self.debug_instance.clone() {
            inst.set_visible(true);
        }
        mesh.clear_surfaces();
        let n = self.squad.len();
        if n == 0 {
            return;
        }
        let v3 = |p: Vec2| from_ground(p, look::DEBUG_LIFT);
        let line = |mesh: &mut Gd<ImmediateMesh>, (a, b): (Vec2, Vec2)| {
            mesh.surface_add_vertex(v3(a));
            mesh.surface_add_vertex(v3(b));
        };
        mesh.surface_begin(PrimitiveType::LINES);
        // Slots (white crosses) and agent → slot lines (state colour).
        for i in 0..n.min(look::DEBUG_AGENTS) {
            let Some(s) = self.squad.slot_of(i) else {
                continue;
            };
            let sp = self.squad.slot_pos(s);
            mesh.surface_set_color(color(look::SLOT_RGB));
            for segment in draw::cross(sp, look::SLOT_CROSS) {
                line(&mut mesh, segment);
            }
            let (p, _) = self.squad.interpolated(i);
            mesh.surface_set_color(color(look::state_rgb(self.squad.state(i))));
            line(&mut mesh, (p, sp));
            // Repulsion radius.
            if n <= look::RING_AGENTS {
                let r = self.repulsion_radius.max(0.0);
                for segment in draw::ring(p, r, look::RING_SEGMENTS) {
                    line(&mut mesh, segment);
                }
            }
        }
        // Baseline (yellow) through the weighted-median point.
        if let Some(b) = self.squad.baseline() {
            mesh.surface_set_color(color(look::BASELINE_RGB));
            line(&mut mesh, look::baseline_segment(&b));
        }
        // Eyes right (cyan): each soldier's head to the head it dresses on.
        if self.squad.is_eyes_right() {
            mesh.surface_set_color(color(look::EYES_RGB));
            let to_local = affine_inverse(self.base().get_global_transform());
            for i in 0..self.heads.len().min(n) {
                let (Some(Some(from)), Some(g)) = (self.heads.get(i), self.squad.guide(i)) else {
                    continue;
                };
                if let Some(to) = self.head_of(g, i) {
                    mesh.surface_add_vertex(to_local * *from);
                    mesh.surface_add_vertex(to_local * to);
                }
            }
        }
        mesh.surface_end();
    }
}
