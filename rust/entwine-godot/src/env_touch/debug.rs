//! The debug drawing: the detection volume, the tracked contact, each active hand's target and
//! the shoulder → target line, as lines in one `ImmediateMesh` (when `debug_draw` is on); the
//! lines and colours are the core's `env_touch::node::debug_lines`.

use entwine_core::env_touch::node::debug_lines;
use glam::Vec3;
use godot::classes::mesh::PrimitiveType;
use godot::prelude::*;

use super::EnvironmentInteractionStateMachine;
use crate::convert::{affine, vector3};
use crate::debug_draw::line_mesh;

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
        let side = rig.volume_size;
        if self.debug.is_none() {
            let (mut instance, mesh) = line_mesh("EnvTouchDebug", true);
            instance.set_as_top_level(true);
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
        let mut colour = None;
        debug_lines(
            &self.core,
            affine(area_xform),
            side,
            shoulders,
            |c, a, b| {
                if colour != Some(c) {
                    colour = Some(c);
                    mesh.surface_set_color(crate::convert::color(c));
                }
                mesh.surface_add_vertex(vector3(a));
                mesh.surface_add_vertex(vector3(b));
            },
        );
        mesh.surface_end();
    }
}
