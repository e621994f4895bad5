//! `cargo xtask package`: the release zip, laid out for Godot's Asset Library.
//!
//! ```text
//! entwine-VERSION/
//!   addons/entwine/     entwine.gdextension, bin/ (Linux x86_64: editor + export library), icons/,
//!                       formations/, presets/, README.md, LICENSE, CHANGELOG.md
//!   demo/, characters/  the example scenes, at the paths they have in the demo project
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{run_checked, Result};

/// Rewrites the `.gdextension` text for the package: debug exports use the release library (the
/// package ships no unoptimised build).
pub fn packaged_gdextension(text: &str, release_file: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("linux.debug.x86_64") {
                format!("linux.debug.x86_64 = \"res://addons/entwine/bin/{release_file}\"")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Returns the files git tracks under `dirs` (repo-relative).
pub(crate) fn tracked(repo: &Path, dirs: &[&str]) -> Result<Vec<String>> {
    let out = Command::new("git")
        .current_dir(repo)
        .arg("ls-files")
        .arg("--")
        .args(dirs)
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !out.status.success() {
        return Err("git ls-files failed (package needs a git checkout)".into());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

pub(crate) fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Stages and zips the package; `editor_lib` and `release_lib` are the built libraries. Returns the
/// zip's path.
pub fn make(
    repo: &Path,
    target: &Path,
    version: &str,
    editor_lib: &Path,
    release_lib: &Path,
) -> Result<PathBuf> {
    let name = format!("entwine-{version}");
    let out = target.join("package");
    let stage = out.join(&name);
    let _ = fs::remove_dir_all(&stage);
    let zip = out.join(format!("{name}.zip"));
    let _ = fs::remove_file(&zip);
    // The addon, as tracked (bin/ is filled below).
    for file in tracked(repo, &["addons/entwine"])? {
        if file.starts_with("addons/entwine/bin/") || file.ends_with("entwine.gdextension") {
            continue;
        }
        copy(&repo.join(&file), &stage.join(&file))?;
    }
    let addon = stage.join("addons/entwine");
    for doc in ["LICENSE", "CHANGELOG.md"] {
        copy(&repo.join(doc), &addon.join(doc))?;
    }
    let bin = addon.join("bin");
    for lib in [editor_lib, release_lib] {
        let file = lib
            .file_name()
            .ok_or_else(|| format!("{} has no file name", lib.display()))?;
        let dest = bin.join(file);
        copy(lib, &dest)?;
        run_checked(Command::new("strip").arg("--strip-unneeded").arg(&dest))?;
    }
    let release_file = release_lib
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let ext = repo.join("addons/entwine/entwine.gdextension");
    let text =
        fs::read_to_string(&ext).map_err(|e| format!("cannot read {}: {e}", ext.display()))?;
    fs::write(
        addon.join("entwine.gdextension"),
        packaged_gdextension(&text, &release_file),
    )
    .map_err(|e| format!("cannot write the packaged .gdextension: {e}"))?;
    // The example scenes, at their demo-project paths (res://demo/, res://characters/).
    for file in tracked(repo, &["godot_project/demo", "godot_project/characters"])? {
        let rel = file.trim_start_matches("godot_project/");
        copy(&repo.join(&file), &stage.join(rel))?;
    }
    run_checked(
        Command::new("zip")
            .current_dir(&out)
            .args(["-q", "-r", "-X"])
            .arg(&zip)
            .arg(&name),
    )
    .map_err(|e| format!("{e} (is zip installed? apt-get install zip)"))?;
    Ok(zip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_exports_use_the_release_library_in_the_package() {
        let text = "[libraries]\nlinux.editor.x86_64 = \"res://addons/entwine/bin/e.so\"\nlinux.debug.x86_64 = \"res://addons/entwine/bin/d.so\"\nlinux.release.x86_64 = \"res://addons/entwine/bin/r.so\"\n";
        let out = packaged_gdextension(text, "r.so");
        assert!(out.contains("linux.debug.x86_64 = \"res://addons/entwine/bin/r.so\""));
        assert!(out.contains("linux.editor.x86_64 = \"res://addons/entwine/bin/e.so\""));
        assert!(!out.contains("d.so"));
    }
}
