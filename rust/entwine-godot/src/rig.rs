//! The one place where a skeleton becomes a core [`Humanoid`]: every node that needs bones, body
//! axes or proportions asks here.

use entwine_core::rig::{Humanoid, Role};
use godot::classes::Skeleton3D;
use godot::prelude::*;

use crate::convert::{rotation, vec3};

/// Describes the humanoid in `skeleton` from its bone names and rest pose (allocates: call it when a
/// node resolves its bones, never per frame).
pub fn humanoid(skeleton: &Gd<Skeleton3D>) -> Humanoid {
    let n = skeleton.get_bone_count().max(0);
    let mut names = Vec::with_capacity(n as usize);
    let mut parents = Vec::with_capacity(n as usize);
    let mut rest = Vec::with_capacity(n as usize);
    for i in 0..n {
        names.push(skeleton.get_bone_name(i).to_string());
        parents.push(skeleton.get_bone_parent(i));
        let t = skeleton.get_bone_global_rest(i);
        rest.push((vec3(t.origin), rotation(t.basis)));
    }
    Humanoid::derive(&names, &parents, &rest)
}

/// A node's name for a skeleton in warnings: its path in the tree, else its name.
pub fn label(node: &Gd<impl Inherits<Node>>) -> String {
    let node = node.clone().upcast::<Node>();
    if node.is_inside_tree() {
        node.get_path().to_string()
    } else {
        node.get_name().to_string()
    }
}

/// Returns the bone for a node's bone property: the bone called `name` when the name is set (an
/// explicit setting always wins), else the bone `humanoid` found for `role`. `Err` says what was
/// tried, naming `property` and the skeleton.
pub fn pick(
    skeleton: &Gd<Skeleton3D>,
    property: &str,
    name: &GString,
    role: Role,
    humanoid: &Humanoid,
) -> Result<i32, String> {
    if !name.is_empty() {
        let i = skeleton.find_bone(name);
        return if i >= 0 {
            Ok(i)
        } else {
            Err(format!(
                "{property} '{name}' not found in skeleton '{}'",
                label(skeleton)
            ))
        };
    }
    match humanoid.bone(role) {
        Some(i) if (i as i32) < skeleton.get_bone_count() => Ok(i as i32),
        _ => Err(format!(
            "{property} is empty and no {} bone was found in skeleton '{}' (tried: {}); set {property}",
            role.godot_name(),
            label(skeleton),
            role.tried()
        )),
    }
}
