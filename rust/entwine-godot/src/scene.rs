//! Small scene-tree helpers the nodes share: finding a node below another, a node found by path
//! once and kept, and reading a character's collider size (the env-touch node and its editor gizmo
//! read it the same way).

use godot::classes::{BoxShape3D, CapsuleShape3D, CollisionShape3D, CylinderShape3D, Node3D};
use godot::prelude::*;

use crate::direct::{shares_data, Lent};

/// Returns the first node of class `T` below `root` (depth first, as [method Node.find_children]
/// finds them), or `None`. Not for per-frame use: it walks the subtree.
pub fn first_descendant<T: GodotClass + Inherits<Node>>(root: &Gd<Node>) -> Option<Gd<T>> {
    root.find_children_ex("*")
        .type_(&T::class_id().to_gstring())
        .owned(false)
        .done()
        .iter_shared()
        .find_map(|n| n.try_cast::<T>().ok())
}

/// Returns a character's first [`CollisionShape3D`] child and its shape's height when the shape is
/// a capsule, a cylinder or a box (`None` for another shape or none).
pub fn collider(character: &Gd<Node3D>) -> Option<(Gd<CollisionShape3D>, Option<f32>)> {
    let node = character
        .get_children()
        .iter_shared()
        .find_map(|n| n.try_cast::<CollisionShape3D>().ok())?;
    let height = node.get_shape().and_then(|shape| {
        if let Ok(c) = shape.clone().try_cast::<CapsuleShape3D>() {
            Some(c.get_height())
        } else if let Ok(c) = shape.clone().try_cast::<CylinderShape3D>() {
            Some(c.get_height())
        } else {
            shape.try_cast::<BoxShape3D>().ok().map(|b| b.get_size().y)
        }
    });
    Some((node, height))
}

/// A node a property's path leads to, looked up once and kept: looked up again when the path
/// changes, or when the node was freed or left the tree. For per-frame reads of a node named by a
/// property (a target, a pole), where looking the path up every frame walks the tree every frame.
pub struct NodeCache<T: GodotClass> {
    path: NodePath,
    node: Option<Gd<T>>,
}

impl<T: GodotClass + Inherits<Node>> Default for NodeCache<T> {
    fn default() -> Self {
        Self {
            path: NodePath::default(),
            node: None,
        }
    }
}

impl<T: GodotClass + Inherits<Node>> NodeCache<T> {
    /// Returns the node of class `T` that `path` leads to from `from`, or `None` (an empty path, no
    /// node there, or one of another class).
    pub fn get(&mut self, from: &Gd<Node>, path: &NodePath) -> Option<Gd<T>> {
        self.lend(from, path).map(|node| node.object().clone())
    }

    /// [`Self::get`], the kept handle moved out instead of cloned (a clone is an engine call through
    /// gdext's checks). Give it back with [`Self::put_back`], or the next call looks the path up
    /// again.
    pub fn take(&mut self, from: &Gd<Node>, path: &NodePath) -> Option<Gd<T>> {
        self.lend(from, path)?;
        self.node.take()
    }

    /// Keeps `node` again, as [`Self::take`] took it.
    pub fn put_back(&mut self, node: Gd<T>) {
        self.node = Some(node);
    }

    /// [`Self::get`], lent for this frame's engine calls (see `direct`): one look-up of the kept
    /// node instead of one per call, and no handle cloned.
    pub fn lend(&mut self, from: &Gd<Node>, path: &NodePath) -> Option<Lent<'_, T>> {
        // A kept node was found by a path that is not empty.
        let kept = (shares_data(path, &self.path) || *path == self.path)
            && self
                .node
                .as_ref()
                .and_then(Lent::new)
                .is_some_and(|node| node.is_inside_tree());
        if !kept {
            if path.is_empty() {
                self.node = None;
                return None;
            }
            self.path = path.clone();
            self.node = from.try_get_node_as::<T>(path);
        }
        // SAFETY: found alive just above (kept, or just looked up in the tree), and the caller
        // makes its calls before anything could free it.
        self.node
            .as_ref()
            .map(|node| unsafe { Lent::assume_alive(node) })
    }
}
