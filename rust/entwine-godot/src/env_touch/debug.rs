//! The debug drawing: the detection volume, the tracked contact, each active hand's target and
//! the shoulder → target line, as lines in one `ImmediateMesh` (when `debug_draw` is on).

use entwine_core::env_touch::Side;
use glam::Vec3;
use godot::classes::base_material_3d::{Flags, ShadingMode};
use godot::classes::mesh::PrimitiveType;
use godot::classes::{ImmediateMesh, MeshInstance3D, StandardMaterial3D};
use godot::prelude::*;

use super::EnvironmentInteractionStateMachine;
use crate::convert::vector3;

impl EnvironmentInteractionStateMachine {
    /// Draws the volume, contact, targets and side when `debug_draw` is on.
    pub(super) fn draw(&mut self, shoulders: [Vec3; 2]) {
        if !self.debug_draw {
            if let Some((mesh, _)) = &mut self.debug {
                mesh.set_visible(false);
            }
            return;
        }
        let Some(rig) = &self.rig else {
            return;
        };
        let area_xform = rig.character.get_global_transform() * rig.volume_local;
        let half = rig.volume_size * 0.5;
        if self.debug.is_none() {
            let mut instance = MeshInstance3D::new_alloc();
            instance.set_name("EnvTouchDebug");
            instance.set_as_top_level(true);
            let mesh = ImmediateMesh::new_gd();
            instance.set_mesh(&mesh);
            let mut material = StandardMaterial3D::new_gd();
            material.set_shading_mode(ShadingMode::UNSHADED);
            material.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
            material.set_flag(Flags::DISABLE_DEPTH_TEST, true);
            instance.set_material_override(&material);
            self.base_mut().add_child(&instance);
            self.debug = Some((instance, mesh));
        }
        let Some((instance, mesh)) = &mut self.debug else {
            return;
        };
        instance.set_visible(true);
        instance.set_global_transform(Transform3D::IDENTITY);
        mesh.clear_surfaces();
        mesh.surface_begin(PrimitiveType::LINES);
        // The detection volume.
        mesh.surface_set_color(Color::from_rgb(1.0, 0.85, 0.2));
        let corner = |i: usize| {
            Vector3::new(
                if i & 1 == 0 { -half } else { half },
                if i & 2 == 0 { -half } else { half },
                if i & 4 == 0 { -half } else { half },
            )
        };
        for i in 0..8usize {
            for bit in [1usize, 2, 4] {
                if i & bit == 0 {
                    mesh.surface_add_vertex(area_xform * corner(i));
                    mesh.surface_add_vertex(area_xform * corner(i | bit));
                }
            }
        }
        let cross = |mesh: &mut Gd<ImmediateMesh>, p: Vector3, r: f32| {
            for axis in [Vector3::RIGHT, Vector3::UP, Vector3::BACK] {
                mesh.surface_add_vertex(p - axis * r);
                mesh.surface_add_vertex(p + axis * r);
            }
        };
        if let Some(p) = self.core.closest_point() {
            mesh.surface_set_color(Color::from_rgb(1.0, 0.1, 0.1));
            cross(mesh, vector3(p), 0.06);
        }
        for side in [Side::Left, Side::Right] {
            let hand = self.core.hand(side);
            if hand.position_weight < 1e-3 {
                continue;
            }
            let colour = match side {
                Side::Left => Color::from_rgb(0.1, 1.0, 0.2),
                Side::Right => Color::from_rgb(0.2, 0.5, 1.0),
            };
            mesh.surface_set_color(colour);
            cross(mesh, vector3(hand.pose.position), 0.04);
            mesh.surface_add_vertex(vector3(shoulders[side.index()]));
            mesh.surface_add_vertex(vector3(hand.pose.position));
        }
        mesh.surface_end();
    }
}
