//! Small scene-tree helpers the nodes share.

use godot::prelude::*;

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
