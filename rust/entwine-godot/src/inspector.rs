//! The inspector shows only what applies: each node's `on_validate_property` hides the properties
//! its current mode does not use (they stay stored and scriptable), and the setter of the property
//! that decides calls `notify_property_list_changed()`.

use godot::register::info::{PropertyInfo, PropertyUsageFlags};

/// Hides `property` from the inspector when it is one of `names` and `hidden` holds.
pub fn hide(property: &mut PropertyInfo, names: &[&str], hidden: bool) {
    if hidden && names.iter().any(|n| property.property_name == *n) {
        property.usage = PropertyUsageFlags::NO_EDITOR;
    }
}
