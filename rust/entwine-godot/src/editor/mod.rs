//! Entwine in the Godot editor: the editor plugin (registered by gdext at the editor level only,
//! so exported games never see it) and its 3D gizmos with handles.
//!
//! The handle ↔ property geometry is `entwine_core::editor`; this module turns the mouse into a
//! ray, reads and writes properties, and records every drag as one undoable action.

mod formation;
mod gizmos;
mod targets;

use entwine_core::editor::{flag_value, place_of, Place};
use godot::classes::editor_file_dialog::{Access, FileMode};
use godot::classes::editor_plugin::{AfterGuiInput, CustomControlContainer};
use godot::classes::{
    Button, Camera3D, EditorFileDialog, EditorInterface, EditorPlugin, HBoxContainer,
    IEditorPlugin, InputEvent, InputEventMouseButton, Os, ResourceLoader, Script, SpinBox,
};
use godot::global::MouseButton;
use godot::prelude::*;

use crate::direct::Alive;
use crate::formation::FormationController;
use crate::rope::RopeSimulation;
pub use formation::FormationEditor;
pub use gizmos::EntwineGizmos;

/// User argument naming a script (extending [Node]) that the plugin adds to the editor once it is
/// ready: `godot --editor -- --entwine-editor-script res://path.gd`. The engine suite and
/// `cargo xtask demo editor` drive the editor this way.
const SCRIPT_ARG: &str = "--entwine-editor-script";

/// Entwine's editor plugin: the gizmos of every Entwine node, the rope's preview while it is
/// selected (see [member RopeSimulation.editor_preview]), and the formation editor
/// ([EntwineFormationEditor]) with its toolbar in the 3D viewport while a [FormationController] is
/// selected. Added to the editor automatically.
#[derive(GodotClass)]
#[class(tool, init, base = EditorPlugin)]
pub struct EntwineEditorPlugin {
    base: Base<EditorPlugin>,
    gizmos: Option<Gd<EntwineGizmos>>,
    formations: Option<Gd<FormationEditor>>,
    /// The formation editor's toolbar (3D viewport menu) and its edit toggle and grid box.
    toolbar: Option<Gd<HBoxContainer>>,
    edit_button: Option<Gd<Button>>,
    grid_box: Option<Gd<SpinBox>>,
    save_dialog: Option<Gd<EditorFileDialog>>,
    /// The FormationController selected (the one the toolbar acts on).
    squad: Option<Gd<FormationController>>,
    /// The ropes told they are selected, to tell them when they no longer are.
    selected_ropes: Vec<Gd<RopeSimulation>>,
    driver: Option<Gd<Node>>,
}

#[godot_api]
impl IEditorPlugin for EntwineEditorPlugin {
    fn enter_tree(&mut self) {
        let formations = FormationEditor::new_gd();
        let gizmos = EntwineGizmos::create(formations.clone());
        self.base_mut().add_node_3d_gizmo_plugin(&gizmos);
        self.gizmos = Some(gizmos);
        self.formations = Some(formations);
        self.build_toolbar();
        if let Some(mut selection) = EditorInterface::singleton().get_selection() {
            let callable = self.base().callable("_on_selection_changed");
            selection.connect("selection_changed", &callable);
        }
        self.start_driver();
        settle_help_in_headless_tools();
    }

    fn exit_tree(&mut self) {
        if let Some(mut selection) = EditorInterface::singleton().get_selection() {
            let callable = self.base().callable("_on_selection_changed");
            if selection.is_connected("selection_changed", &callable) {
                selection.disconnect("selection_changed", &callable);
            }
        }
        if let Some(gizmos) = self.gizmos.take() {
            self.base_mut().remove_node_3d_gizmo_plugin(&gizmos);
        }
        if let Some(mut toolbar) = self.toolbar.take() {
            self.base_mut().remove_control_from_container(
                CustomControlContainer::SPATIAL_EDITOR_MENU,
                &toolbar,
            );
            toolbar.queue_free();
        }
        if let Some(mut dialog) = self.save_dialog.take() {
            dialog.queue_free();
        }
        if let Some(mut f) = self.formations.take() {
            f.bind_mut().stop();
        }
        self.tell_ropes(&[]);
        if let Some(mut driver) = self.driver.take() {
            if driver.alive() {
                driver.queue_free();
            }
        }
    }

    fn handles(&self, object: Gd<Object>) -> bool {
        object.try_cast::<FormationController>().is_ok()
    }

    fn edit(&mut self, object: Option<Gd<Object>>) {
        self.squad = object.and_then(|o| o.try_cast::<FormationController>().ok());
        // Editing stops when another node is selected.
        if let Some(mut f) = self.formations.clone() {
            let editing = f.bind().get_controller();
            if editing.is_some() && editing != self.squad {
                f.bind_mut().stop();
            }
        }
        self.sync_toolbar();
    }

    fn make_visible(&mut self, visible: bool) {
        if let Some(mut toolbar) = self.toolbar.clone() {
            toolbar.set_visible(visible);
        }
    }

    fn forward_3d_gui_input(
        &mut self,
        camera: Option<Gd<Camera3D>>,
        event: Option<Gd<InputEvent>>,
    ) -> i32 {
        self.viewport_input(camera, event)
    }
}

#[godot_api]
impl EntwineEditorPlugin {
    /// Returns the plugin's gizmo plugin (for tools and tests: [method EntwineGizmos.get_handle_positions]).
    #[func]
    fn get_gizmo_plugin(&self) -> Option<Gd<EntwineGizmos>> {
        self.gizmos.clone()
    }

    /// Returns the formation editor ([EntwineFormationEditor]) the toolbar and the gizmos use.
    #[func]
    fn get_formation_editor(&self) -> Option<Gd<FormationEditor>> {
        self.formations.clone()
    }

    /// The toolbar's **Edit formation** toggle: starts or stops editing the selected
    /// FormationController's formation.
    #[func(rename = _on_edit_toggled)]
    fn on_edit_toggled(&mut self, on: bool) {
        let Some(mut f) = self.formations.clone() else {
            return;
        };
        if on {
            f.bind_mut().edit(self.squad.clone());
        } else {
            f.bind_mut().stop();
        }
        self.sync_toolbar();
    }

    /// The toolbar's **Mirror** button: [method EntwineFormationEditor.mirror].
    #[func(rename = _on_mirror)]
    fn on_mirror(&mut self) {
        if let Some(mut f) = self.formations.clone() {
            f.bind_mut().mirror();
        }
    }

    /// The toolbar's **Snap** button: [method EntwineFormationEditor.snap_points].
    #[func(rename = _on_snap)]
    fn on_snap(&mut self) {
        if let Some(mut f) = self.formations.clone() {
            f.bind_mut().snap_points();
        }
    }

    /// The toolbar's grid box: sets [member EntwineFormationEditor.grid].
    #[func(rename = _on_grid_changed)]
    fn on_grid_changed(&mut self, step: f64) {
        if let Some(mut f) = self.formations.clone() {
            f.bind_mut().set_grid(step as f32);
        }
    }

    /// The toolbar's **Save…** button: asks where to write the formation's `.ron` file (`custom.ron`
    /// in the controller's formations folder by default, `res://`, `user://` or elsewhere).
    #[func(rename = _on_save_pressed)]
    fn on_save_pressed(&mut self) {
        let Some(f) = self.formations.clone() else {
            return;
        };
        if !f.bind().is_editing() {
            return;
        }
        let mut dialog = match self.save_dialog.clone() {
            Some(d) => d,
            None => {
                let mut d = EditorFileDialog::new_alloc();
                d.set_name("EntwineSaveFormationDialog");
                d.set_file_mode(FileMode::SAVE_FILE);
                d.add_filter_ex("*.ron").description("Formation").done();
                d.set_title("Save formation");
                let callable = self.base().callable("_on_save_file");
                d.connect("file_selected", &callable);
                if let Some(mut base) = EditorInterface::singleton().get_base_control() {
                    base.add_child(&d);
                }
                self.save_dialog = Some(d.clone());
                d
            }
        };
        let path = f.bind().default_path("custom".into());
        // The dialog browses the place the folder is in (a `user://` formations folder too).
        dialog.set_access(match place_of(&path.to_string()) {
            Place::Resources => Access::RESOURCES,
            Place::UserData => Access::USERDATA,
            Place::FileSystem => Access::FILESYSTEM,
        });
        dialog.set_current_path(&path);
        dialog.popup_file_dialog();
    }

    /// The save dialog's choice: [method EntwineFormationEditor.save] to [param path].
    #[func(rename = _on_save_file)]
    fn on_save_file(&mut self, path: GString) {
        if let Some(mut f) = self.formations.clone() {
            f.bind_mut().save(path);
        }
    }

    /// What the 3D viewport's input does while a FormationController is selected (the editor calls
    /// it through `_forward_3d_gui_input`): while its formation is being edited, Shift+click on the
    /// ground adds a point there and Shift+right-click deletes the point under the mouse, each one
    /// undo step. Returns `AFTER_GUI_INPUT_STOP` when it took [param event], else
    /// `AFTER_GUI_INPUT_PASS`.
    #[func(rename = _viewport_input)]
    fn viewport_input(
        &mut self,
        camera: Option<Gd<Camera3D>>,
        event: Option<Gd<InputEvent>>,
    ) -> i32 {
        let pass = AfterGuiInput::PASS.ord();
        let (Some(camera), Some(event)) = (camera, event) else {
            return pass;
        };
        let Ok(click) = event.try_cast::<InputEventMouseButton>() else {
            return pass;
        };
        let (Some(squad), Some(mut f)) = (self.squad.clone(), self.formations.clone()) else {
            return pass;
        };
        if !click.is_pressed()
            || !click.is_shift_pressed()
            || f.bind().get_controller() != Some(squad.clone())
        {
            return pass;
        }
        let at = click.get_position();
        let origin = crate::convert::vec3(camera.project_ray_origin(at));
        let dir = crate::convert::vec3(camera.project_ray_normal(at));
        let frame = FormationEditor::frame_of(&squad);
        let Some(p) = entwine_core::formation::editor::point_from_ray(frame, origin, dir) else {
            return pass;
        };
        let button = click.get_button_index();
        if button == MouseButton::LEFT {
            f.bind_mut().add_point(Vector2::new(p.x, p.y));
        } else if button == MouseButton::RIGHT {
            let picked = f
                .bind()
                .pick(p, entwine_core::formation::editor::PICK_RADIUS);
            match picked {
                Some(i) => {
                    f.bind_mut().delete_point(i as i32);
                }
                None => return pass,
            }
        } else {
            return pass;
        }
        AfterGuiInput::STOP.ord()
    }

    /// Tells the ropes whether they are selected (a rope previews while selected).
    #[func(rename = _on_selection_changed)]
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
    /// Builds the formation editor's toolbar in the 3D viewport's menu (hidden until a
    /// FormationController is selected): `EntwineFormationToolbar`, holding the buttons
    /// `EditFormation` (a toggle), `Mirror`, `Snap`, the `GridStep` box and `Save` (whose dialog is
    /// `EntwineSaveFormationDialog`, under the editor's base control), named for tools and tests.
    fn build_toolbar(&mut self) {
        let mut toolbar = HBoxContainer::new_alloc();
        toolbar.set_name("EntwineFormationToolbar");
        let mut edit = Button::new_alloc();
        edit.set_name("EditFormation");
        edit.set_text("Edit formation");
        edit.set_toggle_mode(true);
        edit.set_tooltip_text(
            "Edit the formation's points: drag a point, Shift+click the ground to add one, \
             Shift+right-click a point to delete it",
        );
        edit.connect("toggled", &self.base().callable("_on_edit_toggled"));
        toolbar.add_child(&edit);
        for (name, text, tip, method) in [
            (
                "Mirror",
                "Mirror",
                "Add the mirror image of every point across the forward axis",
                "_on_mirror",
            ),
            ("Snap", "Snap", "Put every point on the grid", "_on_snap"),
        ] {
            let mut b = Button::new_alloc();
            b.set_name(name);
            b.set_text(text);
            b.set_tooltip_text(tip);
            b.connect("pressed", &self.base().callable(method));
            toolbar.add_child(&b);
        }
        let mut grid = SpinBox::new_alloc();
        grid.set_name("GridStep");
        grid.set_min(0.0);
        grid.set_max(10.0);
        grid.set_step(0.05);
        grid.set_suffix("m");
        grid.set_tooltip_text("Grid step for snapping (0: no snapping)");
        let step = self
            .formations
            .as_ref()
            .map_or(0.25, |f| f.bind().get_grid());
        grid.set_value(f64::from(step));
        grid.connect("value_changed", &self.base().callable("_on_grid_changed"));
        toolbar.add_child(&grid);
        let mut save = Button::new_alloc();
        save.set_name("Save");
        save.set_text("Save…");
        save.set_tooltip_text("Write the formation as a .ron file");
        save.connect("pressed", &self.base().callable("_on_save_pressed"));
        toolbar.add_child(&save);
        toolbar.set_visible(false);
        self.base_mut()
            .add_control_to_container(CustomControlContainer::SPATIAL_EDITOR_MENU, &toolbar);
        self.toolbar = Some(toolbar);
        self.edit_button = Some(edit);
        self.grid_box = Some(grid);
    }

    /// Shows the edit toggle pressed while the selected controller is being edited.
    fn sync_toolbar(&mut self) {
        let editing = self
            .formations
            .as_ref()
            .and_then(|f| f.bind().get_controller());
        let on = editing.is_some() && editing == self.squad;
        if let Some(mut b) = self.edit_button.clone() {
            b.set_pressed_no_signal(on);
        }
    }

    fn tell_ropes(&mut self, now: &[Gd<RopeSimulation>]) {
        for mut rope in std::mem::take(&mut self.selected_ropes) {
            if rope.alive() && !now.contains(&rope) {
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
        let path = match flag_value(&args, SCRIPT_ARG) {
            Ok(Some(path)) => path,
            Ok(None) => return,
            Err(why) => {
                godot_warn!("Entwine editor plugin: {why}");
                return;
            }
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

/// Works around a crash of Godot's headless command-line editor (`--import`, `--export-*`; Godot
/// issue #111048, 4.5 and 4.6): when an extension is found for the first time (a new project, no
/// `.godot/extension_list.cfg` yet), the editor regenerates its help on a worker thread, which
/// queues the extensions' part of the help as a deferred call; a short import quits before that
/// call runs, and it then runs after the help was freed (`FATAL: Index p_index = 1 is out of
/// bounds`, signal 11). Opening a help page waits for that thread, so the deferred call runs in
/// this frame, while the help still exists. Only in a headless editor, where no one sees the page.
fn settle_help_in_headless_tools() {
    if godot::classes::DisplayServer::singleton().get_name() != "headless" {
        return;
    }
    if let Some(mut editor) = EditorInterface::singleton().get_script_editor() {
        editor.goto_help("class_name:Node");
    }
}
