//! The formation editor: a [FormationController]'s formation as points on its ground, edited in
//! the viewport and saved as a `.ron` file. The model and its geometry are
//! `entwine_core::formation::editor`; this file keeps the points being edited, records every
//! change as one undo step and writes the file.

use entwine_core::formation::editor::{self as fe, Draft};
use glam::{Affine3A, Vec2};
use godot::classes::{EditorInterface, FileAccess};
use godot::global::Error;
use godot::prelude::*;

use crate::direct::Alive;
use crate::formation::FormationController;

/// Edits a [FormationController]'s formation as points in the 3D viewport and saves it as a
/// `.ron` formation file (`Custom` points) that lays out exactly as drawn.
///
/// Select a FormationController and press **Edit formation** in the 3D viewport's toolbar (or call
/// [method edit]): its formation's slots become points, one handle each. Drag a handle to move a
/// point; **Shift+click** the ground to add one, **Shift+right-click** a point to delete it;
/// **Mirror** completes the formation symmetric about the controller's forward axis, **Snap** puts
/// every point on the grid of [member grid] metres (new and dragged points snap too), **Save…**
/// writes the file. Lines join the pairs the contract's spacing is measured over: blue, or red
/// when the two points are closer than the formation's spacing less
/// [member FormationController.contract_spacing]. Every change is one undo step in the scene's
/// history. Nothing is written into the scene: the points live here until they are saved.
///
/// The saved file's points are the drawn ones and its offset their centroid, so the controller
/// lays its slots exactly on the drawn points whatever its agent count: with fewer agents than
/// points they take the first points (head first) where they were drawn; with more, the drawn
/// points are kept and the extra agents stand in ranks behind, each a copy of the points moved back
/// by their depth plus the spacing (the game warns once, naming the formation and the counts).
#[derive(GodotClass)]
#[class(tool, init, base = RefCounted, rename = EntwineFormationEditor)]
pub struct FormationEditor {
    base: Base<RefCounted>,
    /// Grid step for snapping, metres (0: no snapping).
    #[var(pub)]
    #[init(val = 0.25)]
    grid: f32,
    controller: Option<Gd<FormationController>>,
    draft: Option<Draft>,
    /// The controller's contract spacing tolerance and formations folder, when editing began.
    tolerance: f32,
    folder: String,
}

#[godot_api]
impl FormationEditor {
    /// Starts editing [param controller]'s formation in use, its slots for its agents as points.
    /// Returns false when there is no controller.
    #[func]
    pub fn edit(&mut self, controller: Option<Gd<FormationController>>) -> bool {
        let Some(controller) = controller.filter(|c| c.alive()) else {
            return false;
        };
        let (def, slots, tolerance, folder) = controller.bind().editor_source();
        let Ok(draft) = Draft::from_formation(&def, slots) else {
            return false;
        };
        self.draft = Some(draft);
        self.tolerance = tolerance;
        self.folder = folder;
        self.controller = Some(controller.clone());
        redraw(&controller);
        true
    }

    /// Stops editing (unsaved points are dropped; the controller is unchanged).
    #[func]
    pub fn stop(&mut self) {
        self.draft = None;
        if let Some(c) = self.controller.take().filter(|c| c.alive()) {
            redraw(&c);
        }
    }

    /// Returns whether a controller is being edited.
    #[func]
    pub fn is_editing(&self) -> bool {
        self.draft.is_some() && self.controller.as_ref().is_some_and(|c| c.alive())
    }

    /// Returns the controller being edited, or null.
    #[func]
    pub fn get_controller(&self) -> Option<Gd<FormationController>> {
        self.controller.clone().filter(|_| self.is_editing())
    }

    /// Returns the points, head first, in the controller's frame on its ground: x right, y = z
    /// back, metres.
    #[func]
    pub fn get_points(&self) -> PackedVector2Array {
        self.draft
            .as_ref()
            .map_or_else(PackedVector2Array::new, |d| {
                d.points.iter().map(|p| Vector2::new(p.x, p.y)).collect()
            })
    }

    /// Sets [param controller]'s points (starting to edit it if it is not the one being edited),
    /// with no undo step of its own: the undo and redo of every action call it.
    #[func]
    pub fn set_points(
        &mut self,
        controller: Option<Gd<FormationController>>,
        points: PackedVector2Array,
    ) {
        if controller != self.controller || self.draft.is_none() {
            self.edit(controller);
        }
        if let Some(d) = self.draft.as_mut() {
            d.points = points
                .as_slice()
                .iter()
                .map(|p| Vec2::new(p.x, p.y))
                .collect();
        }
        self.redraw_controller();
    }

    /// Adds a point at [param at] (controller frame, snapped to [member grid]) after the last one,
    /// as one undo step. Returns its index, or -1 when nothing is edited or the point is out of
    /// range.
    #[func]
    pub fn add_point(&mut self, at: Vector2) -> i32 {
        let grid = self.grid;
        let mut index = -1;
        self.act("Add formation point", |d| {
            index = d.add(Vec2::new(at.x, at.y), grid).map_or(-1, |i| i as i32);
            index >= 0
        });
        index
    }

    /// Moves point [param index] to [param to] (controller frame, snapped to [member grid]), as
    /// one undo step. Returns false for no such point.
    #[func]
    pub fn move_point(&mut self, index: i32, to: Vector2) -> bool {
        let grid = self.grid;
        let Ok(i) = usize::try_from(index) else {
            return false;
        };
        self.act("Move formation point", |d| {
            d.move_point(i, Vec2::new(to.x, to.y), grid)
        })
    }

    /// Deletes point [param index] (the later ones move up one index), as one undo step. Returns
    /// false for no such point or the last one.
    #[func]
    pub fn delete_point(&mut self, index: i32) -> bool {
        let Ok(i) = usize::try_from(index) else {
            return false;
        };
        self.act("Delete formation point", |d| d.delete(i))
    }

    /// Adds the mirror image (x → −x, across the controller's forward axis) of every point that
    /// has none, as one undo step. Returns how many points were added.
    #[func]
    pub fn mirror(&mut self) -> i32 {
        let mut added = 0;
        self.act("Mirror formation", |d| {
            added = d.mirror();
            added > 0
        });
        added as i32
    }

    /// Snaps every point to the grid of [member grid] metres, as one undo step. Returns whether
    /// a point moved.
    #[func]
    pub fn snap_points(&mut self) -> bool {
        let grid = self.grid;
        self.act("Snap formation to grid", |d| d.snap_all(grid))
    }

    /// Returns the pairs of points the contract's spacing is measured over (at most 1.5 spacings
    /// apart) as `Vector3i(i, j, crowded)`: `crowded` is 1 when the two are closer than the
    /// formation's spacing less the controller's [member FormationController.contract_spacing].
    #[func]
    pub fn get_spacing_pairs(&self) -> Array<Vector3i> {
        let Some(d) = self.draft.as_ref() else {
            return Array::new();
        };
        d.spacing_pairs(self.tolerance)
            .into_iter()
            .map(|(i, j, crowded)| Vector3i::new(i as i32, j as i32, i32::from(crowded)))
            .collect()
    }

    /// Returns the formation as the text of a `.ron` file, or an empty string when nothing is
    /// edited or the points do not make a formation.
    #[func]
    pub fn get_ron_text(&self) -> GString {
        self.draft
            .as_ref()
            .and_then(|d| d.to_ron().ok())
            .map_or_else(GString::new, |t| GString::from(&t))
    }

    /// Returns the file [method save] writes by default: `NAME.ron` in the controller's
    /// [member FormationController.formations_dir].
    #[func]
    pub fn default_path(&self, name: GString) -> GString {
        let path = entwine_core::formation::editor::default_path(&self.folder, &name.to_string());
        GString::from(&path)
    }

    /// Writes the formation to [param path] (a `.ron` file) and has the controller re-read its
    /// formations (it lays out again when the file is the formation in use). Returns false, with
    /// an error, when nothing is edited, the points make no formation or the file cannot be
    /// written.
    #[func]
    pub fn save(&mut self, path: GString) -> bool {
        let Some(draft) = self.draft.as_ref() else {
            godot_error!("EntwineFormationEditor.save: no formation is being edited");
            return false;
        };
        let text = match draft.to_ron() {
            Ok(t) => t,
            Err(e) => {
                godot_error!("EntwineFormationEditor.save: the points make no formation: {e}");
                return false;
            }
        };
        let Some(mut file) = FileAccess::open(&path, godot::classes::file_access::ModeFlags::WRITE)
        else {
            godot_error!(
                "EntwineFormationEditor.save: cannot write '{path}': {:?}",
                FileAccess::get_open_error()
            );
            return false;
        };
        file.store_string(&text);
        file.close();
        if file.get_error() != Error::OK {
            godot_error!("EntwineFormationEditor.save: writing '{path}' failed");
            return false;
        }
        if let Some(mut fs) = EditorInterface::singleton().get_resource_filesystem() {
            fs.update_file(&path);
        }
        if let Some(mut c) = self.controller.clone().filter(|c| c.alive()) {
            c.bind_mut().reload_formations();
        }
        true
    }
}

impl FormationEditor {
    /// Applies `change` to the points as one undo step named `name` in the controller's scene
    /// history; nothing is recorded when it changes nothing (returns false).
    fn act(&mut self, name: &str, change: impl FnOnce(&mut Draft) -> bool) -> bool {
        let Some(controller) = self.get_controller() else {
            return false;
        };
        let before = self.get_points();
        let Some(draft) = self.draft.as_mut() else {
            return false;
        };
        if !change(draft) {
            return false;
        }
        let after = self.get_points();
        self.record(name, &controller, &before, &after);
        true
    }

    /// Records the points, already changed, going from `before` to `after` as one undo step
    /// (undo and redo call [method set_points]; committing does not, as this object is busy).
    pub(super) fn record(
        &mut self,
        name: &str,
        controller: &Gd<FormationController>,
        before: &PackedVector2Array,
        after: &PackedVector2Array,
    ) {
        let Some(mut undo) = EditorInterface::singleton().get_editor_undo_redo() else {
            return;
        };
        let me = self.to_gd();
        undo.create_action_ex(name)
            .custom_context(controller)
            .done();
        let args = |p: &PackedVector2Array| [controller.to_variant(), p.to_variant()];
        undo.add_do_method(&me, "set_points", &args(after));
        undo.add_undo_method(&me, "set_points", &args(before));
        undo.commit_action_ex().execute(false).done();
        self.redraw_controller();
    }

    /// The point being edited `index` moves to the ground point under `p` (world), snapped, with no
    /// undo step (a handle being dragged).
    pub(super) fn drag_to(&mut self, index: usize, p: Vec2) -> bool {
        let grid = self.grid;
        let moved = self
            .draft
            .as_mut()
            .is_some_and(|d| d.move_point(index, p, grid));
        self.redraw_controller();
        moved
    }

    /// The draft being edited for `controller`, if it is the one.
    pub(super) fn draft_of(&self, controller: &Gd<FormationController>) -> Option<&Draft> {
        (self.controller.as_ref() == Some(controller))
            .then_some(self.draft.as_ref())
            .flatten()
    }

    /// The controller's ground frame in the world.
    pub(super) fn frame_of(controller: &Gd<FormationController>) -> Affine3A {
        crate::convert::affine(controller.get_global_transform())
    }

    /// The point nearest the ground point `p` within `radius`, for picking.
    pub(super) fn pick(&self, p: Vec2, radius: f32) -> Option<usize> {
        self.draft.as_ref()?.nearest(p, radius)
    }

    fn redraw_controller(&self) {
        if let Some(c) = self.controller.as_ref().filter(|c| c.alive()) {
            redraw(c);
        }
    }
}

fn redraw(controller: &Gd<FormationController>) {
    let mut c = controller.clone();
    c.update_gizmos();
}

/// The world position of point `p` of `controller`'s ground, `lift` metres up.
pub(super) fn handle_at(controller: &Gd<FormationController>, p: Vec2, lift: f32) -> glam::Vec3 {
    fe::point_handle(FormationEditor::frame_of(controller), p, lift)
}
