//! The formation library: `.ron` files from `formations_dir` (re-read when they change) and
//! formations given as text, looked up by name when the squad forms.

use std::collections::HashMap;
use std::sync::OnceLock;

use entwine_core::formation::FormationDef;
use godot::classes::{DirAccess, FileAccess};
use godot::prelude::*;

use super::FormationController;

#[godot_api(secondary)]
impl FormationController {
    /// Parses `ron_text` as a formation and registers it under `name` (replacing one with that
    /// name). Returns false and reports line and column when the text is invalid.
    #[func]
    pub fn add_formation(&mut self, name: GString, ron_text: GString) -> bool {
        match FormationDef::from_ron(&ron_text.to_string()) {
            Ok(def) => {
                self.formations.insert(
                    name.to_string(),
                    FormationFile {
                        path: String::new(),
                        modified: 0,
                        def,
                    },
                );
                true
            }
            Err(e) => {
                let reason = format!("formation '{name}' at {e}");
                self.reject_formation(&name.to_string(), &reason);
                false
            }
        }
    }

    /// Returns the names of the known formations, sorted.
    #[func]
    pub fn get_formation_names(&self) -> PackedStringArray {
        let mut names: Vec<&String> = self.formations.keys().collect();
        names.sort();
        names.into_iter().map(GString::from).collect()
    }
}

impl FormationController {
    pub(super) fn apply_form(&mut self, name: &str) -> bool {
        let Some(file) = self.formations.get(name) else {
            let mut known: Vec<&String> = self.formations.keys().collect();
            known.sort();
            let reason = format!(
                "unknown formation '{name}' (known: {})",
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            self.reject_formation(name, &reason);
            return false;
        };
        let def = file.def.clone();
        match self.squad.form(&def) {
            Ok(()) => {
                self.current = name.to_string();
                self.formation = GString::from(name);
                self.signals().formation_changed().emit(name);
                true
            }
            Err(e) => {
                self.reject_formation(name, &format!("formation '{name}': {e}"));
                false
            }
        }
    }

    pub(super) fn reject_formation(&mut self, name: &str, reason: &str) {
        self.warn_plain(&format!("{reason}; keeping '{}'", self.current));
        self.signals().formation_rejected().emit(name, reason);
    }

    pub(super) fn load_formation_dir(&mut self) {
        // The shipped formations are built into the library (an exported game has them without the
        // files); files in formations_dir, and add_formation(), add to or replace them.
        for (name, def) in builtin_defs() {
            self.formations
                .entry(name.to_string())
                .or_insert_with(|| FormationFile::builtin(def));
        }
        let dir = self.formations_dir.to_string();
        if dir.is_empty() {
            return;
        }
        if DirAccess::open(&self.formations_dir).is_none() {
            // The addon's own folder is absent from exports that leave out `*.ron`: nothing lost.
            if dir.trim_end_matches('/') == DEFAULT_FORMATIONS_DIR {
                return;
            }
            self.warn_plain(&format!(
                "formations_dir '{dir}' cannot be opened; only formations added with add_formation() are available"
            ));
            return;
        }
        let files = DirAccess::get_files_at(&self.formations_dir);
        for f in files.as_slice() {
            let f = f.to_string();
            // Exported projects list remapped files with a suffix.
            let f = f.trim_end_matches(".remap").to_string();
            if let Some(stem) = f.strip_suffix(".ron") {
                let path = format!("{}/{}", dir.trim_end_matches('/'), f);
                self.load_file(stem, &path);
            }
        }
    }

    pub(super) fn load_file(&mut self, name: &str, path: &str) {
        let modified = FileAccess::get_modified_time(path);
        let text = FileAccess::get_file_as_string(path).to_string();
        match FormationDef::from_ron(&text) {
            Ok(def) => {
                self.formations.insert(
                    name.to_string(),
                    FormationFile {
                        path: path.to_string(),
                        modified,
                        def,
                    },
                );
            }
            Err(e) => {
                // Remember the time so a broken file is reported once per change.
                if let Some(old) = self.formations.get_mut(name) {
                    old.modified = modified;
                }
                self.new_files.insert(path.to_string(), modified);
                let reason = format!("{path}:{e}");
                self.reject_formation(name, &reason);
            }
        }
    }

    pub(super) fn hot_reload_tick(&mut self, delta: f64) {
        if !self.hot_reload {
            return;
        }
        self.reload_timer += delta;
        if self.reload_timer < 0.5 {
            return;
        }
        self.reload_timer = 0.0;
        let changed: Vec<(String, String)> = self
            .formations
            .iter()
            .filter(|(_, f)| {
                !f.path.is_empty() && FileAccess::get_modified_time(&f.path) != f.modified
            })
            .map(|(n, f)| (n.clone(), f.path.clone()))
            .collect();
        for (name, path) in changed {
            let before = self.formations.get(&name).map(|f| f.def.clone());
            self.load_file(&name, &path);
            let after = self.formations.get(&name).map(|f| f.def.clone());
            if name == self.current && before != after {
                self.commands.forget_last();
                let _ = self.apply_form(&name);
            }
        }
        self.load_new_files();
    }

    /// Reads the `.ron` files in `formations_dir` whose name is not a formation yet (one the
    /// formation editor just saved, say); a broken one is reported once per change.
    fn load_new_files(&mut self) {
        let dir = self.formations_dir.to_string();
        if dir.is_empty() || DirAccess::open(&self.formations_dir).is_none() {
            return;
        }
        for f in DirAccess::get_files_at(&self.formations_dir).as_slice() {
            let f = f.to_string();
            let f = f.trim_end_matches(".remap");
            let Some(stem) = f.strip_suffix(".ron") else {
                continue;
            };
            let path = format!("{}/{}", dir.trim_end_matches('/'), f);
            // A known name keeps its source (a file is re-read above when it changes; a formation
            // given to add_formation is not replaced by a file).
            if self.formations.contains_key(stem) {
                continue;
            }
            if self.new_files.get(&path) == Some(&FileAccess::get_modified_time(&path)) {
                continue;
            }
            self.load_file(stem, &path);
        }
    }
}

/// A formation by name: its definition and the file it came from (empty for text given to
/// `add_formation`) with the file's modification time.
/// Where the addon's formation files are.
pub(super) const DEFAULT_FORMATIONS_DIR: &str = "res://addons/entwine/formations";

pub(super) struct FormationFile {
    pub(super) path: String,
    pub(super) modified: u64,
    pub(super) def: FormationDef,
}

impl FormationFile {
    fn builtin(def: &FormationDef) -> Self {
        FormationFile {
            path: String::new(),
            modified: 0,
            def: def.clone(),
        }
    }
}

/// The formations built into the library, parsed once per process.
fn builtin_defs() -> &'static [(&'static str, FormationDef)] {
    static DEFS: OnceLock<Vec<(&'static str, FormationDef)>> = OnceLock::new();
    DEFS.get_or_init(|| entwine_core::formation::builtin::builtin_formations().collect())
}

/// A new controller's library: the built-in formations, known from its creation on, so that
/// `form()` works before the node is ready (right after `new()` or `add_child()`); the files in
/// `formations_dir` are read when it is ready.
pub(super) fn builtin_library() -> HashMap<String, FormationFile> {
    builtin_defs()
        .iter()
        .map(|(name, def)| (name.to_string(), FormationFile::builtin(def)))
        .collect()
}
