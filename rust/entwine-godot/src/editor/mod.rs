//! Entwine in the Godot editor: the editor plugin (registered by gdext at the editor level only,
//! so exported games never see it) and its 3D gizmos with handles.
//!
//! The handle ↔ property geometry is `entwine_core::editor`; this module turns the mouse into a
//! ray, reads and writes properties, and records every drag as one undoable action.

mod gizmos;

use godot::classes::{EditorInterface, EditorPlugin, IEditorPlugin, Os, ResourceLoader, Script};
use godot::prelude::*;

use crate::rope::RopeSimulation;
pub use gizmos::EntwineGizmos;

/// User argument naming a script (extending [Node]) that the plugin adds to the editor once it is
/// ready: `godot --editor -- --entwine-editor-script res://path.gd`. The engine suite and
/// `cargo xtask demo editor` drive the editor this way.
const SCRIPT_ARG: &str = "--entwine-editor-script";

/// Entwine's editor plugin: the gizmos of every Entwine node, and the rope's preview while it is
/// selected (see [member RopeSimulation.editor_preview]). Added to the editor automatically.
#[derive(GodotClass)]
#[class(tool, init, base = EditorPlugin)]
pub struct EntwineEditorPlugin {
    base: Base<EditorPlugin>,
    gizmos: Option<Gd<EntwineGizmos>>,
    /// The ropes told they are selected, to tell them when they no longer are.
    selected_ropes: Vec<Gd<RopeSimulation>>,
    driver: Option<Gd<Node>>,
}

#[godot_api]
impl IEditorPlugin for EntwineEditorPlugin {
    fn enter_tree(&mut self) {
        let gizmos = EntwineGizmos::create();
        self.base_mut().add_node_3d_gizmo_plugin(&gizmos);
        self.gizmos = Some(gizmos);
        if let Some(mut selection) = EditorInterface::singleton().get_selection() {
            let callable = self.base().callable("on_selection_changed");
            selection.connect("selection_changed", &callable);
        }
        self.start_driver();
    }

    fn exit_tree(&mut self) {
        if let Some(mut selection) = EditorInterface::singleton().get_selection() {
            let callable = self.base().callable("on_selection_changed");
            if selection.is_connected("selection_changed", &callable) {
                selection.disconnect("selection_changed", &callable);
            }
        }
        if let Some(gizmos) = self.gizmos.take() {
            self.base_mut().remove_node_3d_gizmo_plugin(&gizmos);
        }
        self.tell_ropes(&[]);
        if let Some(mut driver) = self.driver.take() {
            if driver.is_instance_valid() {
                driver.queue_free();
            }
        }
    }
}

#[godot_api]
impl EntwineEditorPlugin {
    /// Returns the plugin's gizmo plugin (for tools and tests: [method EntwineGizmos.get_handle_positions]).
    #[func]
    fn get_gizmo_plugin(&self) -> Option<Gd<EntwineGizmos>> {
        self.gizmos.clone()
    }

    /// Tells the ropes whether they are selected (a rope previews while selected).
    #[func]
    fn on_selection_changed(&mut self) {
        let Some(selection) = EditorInterface::singleton().get_selection() else {
            return;
        };
        let now: Vec<Gd<RopeSimulation>> = selection
            .get_selected_nodes()
            .iter_shared()
            .filter_map(|n| n.try_cast::<RopeSimulation>().ok())
            .collect();
        self.tell_ropes(&now);
    }
}

impl EntwineEditorPlugin {
    fn tell_ropes(&mut self, now: &[Gd<RopeSimulation>]) {
        for mut rope in std::mem::take(&mut self.selected_ropes) {
            if rope.is_instance_valid() && !now.contains(&rope) {
                rope.bind_mut().set_editor_selected(false);
            }
        }
        for rope in now {
            rope.clone().bind_mut().set_editor_selected(true);
        }
        self.selected_ropes = now.to_vec();
    }

    /// Adds the script named by `--entwine-editor-script` (a user argument) to the editor.
    fn start_driver(&mut self) {
        let args = Os::singleton().get_cmdline_user_args();
        let args: Vec<String> = args.as_slice().iter().map(|a| a.to_string()).collect();
        let Some(i) = args.iter().position(|a| a == SCRIPT_ARG) else {
            return;
        };
        let Some(path) = args.get(i + 1) else {
            godot_warn!("Entwine editor plugin: {SCRIPT_ARG} needs a res:// path after it");
            return;
        };
        let script = ResourceLoader::singleton()
            .load(path)
            .and_then(|r| r.try_cast::<Script>().ok());
        let Some(script) = script else {
            godot_warn!("Entwine editor plugin: {SCRIPT_ARG} '{path}' is not a script");
            return;
        };
        let mut node = Node::new_alloc();
        node.set_name("EntwineEditorDriver");
        node.set_script(&script);
        self.base_mut().add_child(&node);
        self.driver = Some(node);
    }
}
