//! Rendering: internal agents drawn through one MultiMesh buffer, simulated child agents placed at
//! their interpolated pose, and the debug drawing (slots, baseline, radii, lines of sight).

use entwine_core::formation::AgentState;
use glam::Vec2;
use godot::classes::mesh::PrimitiveType;
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::node::InternalMode;
use godot::classes::{
    base_material_3d, CapsuleMesh, ImmediateMesh, Mesh, MeshInstance3D, MultiMesh,
    MultiMeshInstance3D, StandardMaterial3D,
};
use godot::prelude::*;

use super::{AgentSource, FormationController};
use crate::convert::from_ground;

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
                        capsule.set_radius(0.22);
                        capsule.set_height(1.7);
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
        self.mm_buffer.resize(n * 16);
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
        if self.mm_buffer.len() != n * 16 {
            self.mm_buffer.resize(n * 16);
        }
        let debug = self.debug_draw;
        let replay = self
            .replay_frame
            .and_then(|f| self.squad.recorder().and_then(|r| r.frame(f)))
            .map(|(_, s)| s);
        let buf = self.mm_buffer.as_mut_slice();
        for i in 0..n {
            let (p, h, state) = match replay {
                Some(samples) => (samples[i].pos, samples[i].heading, samples[i].state),
                None => {
                    let (p, h) = self.squad.interpolated(i);
                    (p, h, self.squad.state(i))
                }
            };
            let (s, c) = h.sin_cos();
            let o = &mut buf[i * 16..i * 16 + 16];
            o[..12].copy_from_slice(&[c, 0.0, s, p.x, 0.0, 1.0, 0.0, 0.85, -s, 0.0, c, p.y]);
            let col = if debug || replay.is_some() {
                state_color(state)
            } else if self.squad.is_active(i) {
                Color::from_rgb(0.25, 0.36, 0.62)
            } else {
                Color::from_rgb(0.4, 0.4, 0.4)
            };
            o[12..].copy_from_slice(&[col.r, col.g, col.b, 1.0]);
        }
        mm.set_buffer(&self.mm_buffer);
    }

    /// Simulated child agents: place them at their interpolated pose.
    pub(super) fn write_agents(&mut self) {
        if !self.squad.simulates() || self.agent_source == AgentSource::Internal {
            return;
        }
        for i in 0..self.agents.len().min(self.squad.len()) {
            if !self.agents[i].is_instance_valid() {
                continue;
            }
            let (p, h) = self.squad.interpolated(i);
            let mut node = self.agents[i].clone();
            let y = node.get_position().y;
            node.set_position(from_ground(p, y));
            let mut rot = node.get_rotation();
            rot.y = h;
            node.set_rotation(rot);
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
                let mesh = ImmediateMesh::new_gd();
                let mut inst = MeshInstance3D::new_alloc();
                inst.set_name("EntwineDebug");
                inst.set_mesh(&mesh);
                let mut mat = StandardMaterial3D::new_gd();
                mat.set_shading_mode(base_material_3d::ShadingMode::UNSHADED);
                mat.set_flag(base_material_3d::Flags::ALBEDO_FROM_VERTEX_COLOR, true);
                inst.set_material_override(&mat);
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
        let y = 0.03;
        let v3 = |p: Vec2| from_ground(p, y);
        mesh.surface_begin(PrimitiveType::LINES);
        // Slots (white crosses) and agent → slot lines (state colour).
        let cross = 0.12;
        for i in 0..n.min(4096) {
            let Some(s) = self.squad.slot_of(i) else {
                continue;
            };
            let sp = self.squad.slot_pos(s);
            mesh.surface_set_color(Color::from_rgb(0.95, 0.95, 0.95));
            for (a, b) in [
                (Vec2::new(-cross, 0.0), Vec2::new(cross, 0.0)),
                (Vec2::new(0.0, -cross), Vec2::new(0.0, cross)),
            ] {
                mesh.surface_add_vertex(v3(sp + a));
                mesh.surface_add_vertex(v3(sp + b));
            }
            let (p, _) = self.squad.interpolated(i);
            mesh.surface_set_color(state_color(self.squad.state(i)));
            mesh.surface_add_vertex(v3(p));
            mesh.surface_add_vertex(v3(sp));
            // Repulsion radius.
            if n <= 400 {
                let r = self.repulsion_radius.max(0.0);
                for k in 0..16 {
                    let a0 = k as f32 / 16.0 * std::f32::consts::TAU;
                    let a1 = (k + 1) as f32 / 16.0 * std::f32::consts::TAU;
                    mesh.surface_add_vertex(v3(p + Vec2::new(a0.cos(), a0.sin()) * r));
                    mesh.surface_add_vertex(v3(p + Vec2::new(a1.cos(), a1.sin()) * r));
                }
            }
        }
        // Baseline (yellow) through the weighted-median point.
        if let Some(b) = self.squad.baseline() {
            let half = b.major.sqrt() * 2.0 + 1.0;
            mesh.surface_set_color(Color::from_rgb(1.0, 0.85, 0.1));
            mesh.surface_add_vertex(v3(b.point - b.direction * half));
            mesh.surface_add_vertex(v3(b.point + b.direction * half));
        }
        // Eyes right (cyan): each soldier's head to the head it dresses on.
        if self.squad.is_eyes_right() {
            mesh.surface_set_color(Color::from_rgb(0.2, 0.9, 0.95));
            let to_local = self.base().get_global_transform().affine_inverse();
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

pub(super) fn state_color(s: AgentState) -> Color {
    match s {
        AgentState::Idle => Color::from_rgb(0.3, 0.8, 0.35),
        AgentState::Moving => Color::from_rgb(0.95, 0.35, 0.25),
        AgentState::Aligning => Color::from_rgb(0.95, 0.75, 0.2),
        AgentState::Stabilizing => Color::from_rgb(0.3, 0.6, 0.95),
    }
}
