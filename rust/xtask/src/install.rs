//! The install path, as a new user takes it (a step of `cargo xtask test`, selected by the filter
//! `install`): the addon (`addons/entwine/` with the built libraries) and the example characters
//! copied into an empty project in a temporary folder, with no `.godot` folder; its first
//! `godot --headless --import` (what CI runs before a headless export) must exit 0; then its main
//! scene (`tests/install/install_check.gd`) creates every Entwine node from GDScript and checks
//! each; then, when the export templates are installed, a headless debug export of that project
//! runs the same scene. Every log must be free of errors and warnings.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::godot::{template_dir_name, Godot};
use crate::harness::Tally;
use crate::package::{copy, tracked};
use crate::proc::{Ending, Guarded};
use crate::util::Result;
use crate::{demo, megabytes, target_dir, Slot};

/// The line the scene prints when every check passed.
const OK_LINE: &str = "INSTALL CHECK OK";

const PROJECT: &str = "; A new project: only the addon and the example characters.\n\
config_version=5\n\n\
[application]\n\n\
config/name=\"Entwine install check\"\n\
run/main_scene=\"res://install_check.tscn\"\n";

const SCENE: &str = "[gd_scene load_steps=2 format=3]\n\n\
[ext_resource type=\"Script\" path=\"res://install_check.gd\" id=\"1\"]\n\n\
[node name=\"InstallCheck\" type=\"Node\"]\n\
script = ExtResource(\"1\")\n";

const PRESETS: &str = "[preset.0]\n\n\
name=\"Linux\"\n\
platform=\"Linux\"\n\
runnable=true\n\
export_filter=\"all_resources\"\n\
include_filter=\"\"\n\
exclude_filter=\"\"\n\
export_path=\"\"\n\n\
[preset.0.options]\n\n\
binary_format/embed_pck=false\n\
binary_format/architecture=\"x86_64\"\n";

/// Runs the install check with the editor's and the debug export's libraries as built; returns
/// its counts (one per stage run).
pub fn check(godot: &Godot, repo: &Path, editor_lib: &Path, debug_lib: &Path) -> Result<Tally> {
    let started = Instant::now();
    let logs = target_dir(repo).join("install-check");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let scratch = env::temp_dir().join(format!("entwine-install-{}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    let project = scratch.join("project");
    lay_out(repo, &project, editor_lib, debug_lib)?;
    let godot = godot.sharing(&scratch);
    let mut tally = Tally::default();
    let mut verdict = |name: &str, result: std::result::Result<String, String>| match result {
        Ok(what) => {
            tally.passed += 1;
            println!("PASS install: {name} ({what})");
        }
        Err(why) => {
            tally.failed += 1;
            println!("FAIL install: {name}");
            for line in why.lines() {
                println!("    {line}");
            }
        }
    };
    let p = project.display().to_string();
    let imported = run(
        &godot,
        None,
        &["--headless", "--path", &p, "--import"],
        &project,
        &logs.join("import.log"),
        (180, None),
    );
    let import_ok = imported.is_ok();
    verdict(
        "the first headless import of a new project exits 0, cleanly",
        imported,
    );
    if import_ok {
        verdict(
            "every Entwine node made from GDScript works",
            run(
                &godot,
                None,
                &["--headless", "--path", &p],
                &project,
                &logs.join("scene.log"),
                (120, Some(OK_LINE)),
            ),
        );
        export(&godot, &project, &scratch, &logs, &mut verdict);
    }
    if tally.failed == 0 {
        let _ = fs::remove_dir_all(&scratch);
    } else {
        println!(
            "install: the project is kept in {}, logs in {}",
            project.display(),
            logs.display()
        );
    }
    println!(
        "install: {} passed, {} failed ({:.1} s)",
        tally.passed,
        tally.failed,
        started.elapsed().as_secs_f64()
    );
    Ok(tally)
}

/// The headless debug export of the project and a run of it, when the templates are installed.
fn export(
    godot: &Godot,
    project: &Path,
    scratch: &Path,
    logs: &Path,
    verdict: &mut impl FnMut(&str, std::result::Result<String, String>),
) {
    let version = match godot.version() {
        Ok(v) => v,
        Err(e) => return verdict("the debug export", Err(e)),
    };
    let templates = match godot.sid_root() {
        Some(root) => {
            if let Err(e) = crate::godot::place_sid_templates(root, &version) {
                return verdict("the debug export", Err(e));
            }
            root.join("root/.local/share/godot/export_templates")
        }
        None => env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_default()
            .join("godot/export_templates"),
    };
    let template = templates
        .join(template_dir_name(&version))
        .join("linux_debug.x86_64");
    if !template.exists() {
        println!(
            "install: the debug export skipped: no export template {}",
            template.display()
        );
        return;
    }
    let out = scratch.join("export");
    let _ = fs::create_dir_all(&out);
    let exe = out.join("install_check.x86_64");
    let exe_s = exe.display().to_string();
    let p = project.display().to_string();
    let exported = run(
        godot,
        None,
        &[
            "--headless",
            "--path",
            &p,
            "--export-debug",
            "Linux",
            &exe_s,
        ],
        project,
        &logs.join("export.log"),
        (180, None),
    )
    .and_then(|_| {
        let lib = out.join(Slot::Debug.file_name());
        if exe.exists() && lib.exists() {
            Ok(format!("library {}", megabytes(&lib)))
        } else {
            Err(format!(
                "the export lacks {} or {}",
                exe.display(),
                lib.display()
            ))
        }
    });
    let exported_ok = exported.is_ok();
    verdict("a headless debug export of it", exported);
    if exported_ok {
        verdict(
            "the exported game runs the scene, its log clean",
            run(
                godot,
                Some(&exe),
                &["--headless"],
                &out,
                &logs.join("exported.log"),
                (120, Some(OK_LINE)),
            ),
        );
    }
}

/// Runs Godot (or `game`, an exported game, where Godot runs) with `args` and judges its log: it
/// must exit 0 within `limit` seconds, print `wanted` when given, and have no error, warning or
/// crash. Returns what it took.
fn run(
    godot: &Godot,
    game: Option<&Path>,
    args: &[&str],
    cwd: &Path,
    log: &Path,
    (limit, wanted): (u64, Option<&str>),
) -> std::result::Result<String, String> {
    let started = Instant::now();
    let cmd = match game {
        Some(exe) => godot.command_with(&exe.display().to_string(), args, Some(cwd), &[]),
        None => godot.command(args, Some(cwd)),
    };
    let mut child = Guarded::spawn(cmd, log)?;
    let ending = child.wait(Duration::from_secs(limit));
    let text = fs::read_to_string(log).unwrap_or_default();
    let mut problems = Vec::new();
    if !matches!(ending, Ending::Exited(s) if s.success()) {
        problems.push(format!("Godot ended with {ending:?}"));
    }
    if text.contains("handle_crash") || text.contains("FATAL") {
        problems.push("Godot crashed".into());
    }
    if let Some(w) = wanted {
        if !text.lines().any(|l| l.starts_with(w)) {
            problems.push(format!("no `{w}` line"));
        }
    }
    let bad = demo::complaints(&text);
    if !bad.is_empty() {
        problems.push(format!("{} error/warning line(s)", bad.len()));
    }
    if problems.is_empty() {
        return Ok(format!("{:.1} s", started.elapsed().as_secs_f64()));
    }
    let shown: Vec<&str> = if bad.is_empty() {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].to_vec()
    } else {
        bad.into_iter().take(30).collect()
    };
    Err(format!(
        "{}; log {}:\n{}",
        problems.join(", "),
        log.display(),
        shown
            .iter()
            .map(|l| format!("| {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    ))
}

/// Lays out the new project: its `project.godot`, main scene and export preset, the addon as git
/// tracks it with the two libraries in `bin/`, and the example characters.
fn lay_out(repo: &Path, project: &Path, editor_lib: &Path, debug_lib: &Path) -> Result<()> {
    for file in tracked(repo, &["addons/entwine"])? {
        if file.starts_with("addons/entwine/bin/") {
            continue;
        }
        copy(&repo.join(&file), &project.join(&file))?;
    }
    let bin = project.join("addons/entwine/bin");
    for lib in [editor_lib, debug_lib] {
        let name = lib
            .file_name()
            .ok_or_else(|| format!("{} has no file name", lib.display()))?;
        copy(lib, &bin.join(name))?;
    }
    for file in tracked(repo, &["godot_project/characters"])? {
        let rel = file.trim_start_matches("godot_project/");
        copy(&repo.join(&file), &project.join(rel))?;
    }
    copy(
        &repo.join("tests/install/install_check.gd"),
        &project.join("install_check.gd"),
    )?;
    for (name, text) in [
        ("project.godot", PROJECT),
        ("install_check.tscn", SCENE),
        ("export_presets.cfg", PRESETS),
    ] {
        fs::write(project.join(name), text)
            .map_err(|e| format!("cannot write {name} in {}: {e}", project.display()))?;
    }
    if project.join(".godot").exists() {
        return Err(format!("{} already has a .godot folder", project.display()));
    }
    Ok(())
}
