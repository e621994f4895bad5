//! The debug lines a node draws: one `ImmediateMesh` in a `MeshInstance3D` with an unshaded
//! material that takes each vertex's colour, made once per node. What the lines are is the
//! core's (`kit::draw` and each node's own geometry); the node hands them to the mesh.

use godot::classes::base_material_3d::{Flags, ShadingMode};
use godot::classes::{ImmediateMesh, MeshInstance3D, StandardMaterial3D};
use godot::prelude::*;

/// Returns a new `MeshInstance3D` called `name` showing a new, empty `ImmediateMesh` through an
/// unshaded material coloured by its vertices (`surface_set_color`), drawn over everything when
/// `on_top` (no depth test). The caller adds it to the tree.
pub fn line_mesh(name: &str, on_top: bool) -> (Gd<MeshInstance3D>, Gd<ImmediateMesh>) {
    let mesh = ImmediateMesh::new_gd();
    let mut material = StandardMaterial3D::new_gd();
    material.set_shading_mode(ShadingMode::UNSHADED);
    material.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
    if on_top {
        material.set_flag(Flags::DISABLE_DEPTH_TEST, true);
    }
    let mut instance = MeshInstance3D::new_alloc();
    instance.set_name(name);
    instance.set_mesh(&mesh);
    instance.set_material_override(&material);
    (instance, mesh)
}
