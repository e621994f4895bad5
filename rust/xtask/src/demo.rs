//! `cargo xtask demo` without a display: each showcase scene runs in its own Godot under Xvfb, with
//! its own time limit, and saves its screenshots into `target/demo/`.
//!
//! A line is printed as each scene starts and as each of its screenshots is saved; a failing scene
//! names itself, its log and the command that reruns it, and the other scenes still run; a summary
//! with each scene's time ends the run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::godot::Godot;
use crate::proc::{Ending, Guarded};
use crate::util::Result;

/// Each scene's time limit, seconds, on a 2-core machine rendering in software while other work
/// shares the CPU. Every scene normally finishes in well under half of it.
const BUDGETS: &[(&str, u64)] = &[
    ("limb_ik", 60),
    ("hold_hand", 60),
    ("hold_hand_net", 150),
    ("formation", 90),
    ("env_touch", 60),
    ("rope", 60),
    ("rope_bridge", 75),
];
/// The limit of a scene missing from [`BUDGETS`].
const DEFAULT_BUDGET: u64 = 90;

/// Returns the scene names listed in the showcase script's `DEMOS` table, in order.
pub fn scene_names(showcase: &str) -> Vec<String> {
    showcase
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("[\"")?;
            let (name, tail) = rest.split_once('"')?;
            tail.contains("res://demo/").then(|| name.to_string())
        })
        .collect()
}

/// Returns the scenes to run: the one named exactly `filter`, else every scene whose name contains
/// it, else all.
pub fn select<'a>(names: &'a [String], filter: Option<&str>) -> Vec<&'a str> {
    match filter {
        None => names.iter().map(String::as_str).collect(),
        Some(f) if names.iter().any(|n| n == f) => names
            .iter()
            .filter(|n| *n == f)
            .map(String::as_str)
            .collect(),
        Some(f) => names
            .iter()
            .filter(|n| n.contains(f))
            .map(String::as_str)
            .collect(),
    }
}

/// Returns the time limit of scene `name`.
pub fn budget(name: &str) -> Duration {
    let secs = BUDGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(DEFAULT_BUDGET, |(_, s)| *s);
    Duration::from_secs(secs)
}

/// Warnings of the environment rather than of the project: Mesa's software GL under Xvfb cannot
/// change the swap interval, whatever V-Sync mode is asked for.
const HARMLESS: &[&str] = &["Could not set V-Sync mode"];

/// Returns the log lines that a clean run must not have: Godot's errors and warnings (its own,
/// from scripts and from the extension), except the [`HARMLESS`] ones.
pub fn complaints(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            let l = l.trim_start();
            if HARMLESS.iter().any(|h| l.contains(h)) {
                return false;
            }
            l.starts_with("ERROR:")
                || l.starts_with("WARNING:")
                || l.starts_with("SCRIPT ERROR")
                || l.starts_with("USER ERROR")
                || l.starts_with("USER WARNING")
                || l.contains("Can't open dynamic library")
                || l.contains("ObjectDB instances leaked")
        })
        .collect()
}

/// How one scene went.
struct Outcome {
    name: String,
    seconds: f64,
    result: std::result::Result<Vec<String>, String>,
}

/// Runs every selected scene under Xvfb, one Godot each; screenshots go to `out`, logs beside them.
pub fn run_scenes(godot: &Godot, repo: &Path, out: &Path, filter: Option<&str>) -> Result<()> {
    let showcase = repo.join("godot_project/demo/showcase.gd");
    let text = fs::read_to_string(&showcase)
        .map_err(|e| format!("cannot read {}: {e}", showcase.display()))?;
    let names = scene_names(&text);
    let scenes = select(&names, filter);
    if scenes.is_empty() {
        return Err(format!(
            "no demo scene matches '{}' (scenes: {})",
            filter.unwrap_or(""),
            names.join(", ")
        ));
    }
    let logs = out.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let out_s = out.display().to_string();
    let total = Instant::now();
    let outcomes: Vec<Outcome> = scenes
        .iter()
        .enumerate()
        .map(|(i, name)| run_scene(godot, repo, &logs, &out_s, (i, scenes.len()), name))
        .collect();
    summarize(repo, out, &outcomes, total)
}

/// Runs one demo scene (number `at.0` of `at.1`) and reports how it ended and what it saved.
fn run_scene(
    godot: &Godot,
    repo: &Path,
    logs: &Path,
    out_s: &str,
    at: (usize, usize),
    name: &str,
) -> Outcome {
    let (i, count) = at;
    let limit = budget(name);
    println!(
        "demo [{}/{}] {name}: starting (limit {} s)",
        i + 1,
        count,
        limit.as_secs()
    );
    let log = logs.join(format!("{name}.log"));
    let who = format!("demo [{}/{}] {name}", i + 1, count);
    let started = Instant::now();
    let cmd = xvfb_godot(godot, repo, &[], &["--screenshots", out_s, "--scene", name]);
    let mut shown = 0;
    let report_saved = |shown: &mut usize| report_new_shots(repo, &log, &who, started, shown);
    let ending = match Guarded::spawn(cmd, &log) {
        Ok(mut child) => child.wait_watching(limit, || report_saved(&mut shown)),
        Err(e) => {
            return Outcome {
                name: name.to_string(),
                seconds: 0.0,
                result: Err(e),
            };
        }
    };
    report_saved(&mut shown);
    let seconds = started.elapsed().as_secs_f64();
    let text = fs::read_to_string(&log).unwrap_or_default();
    let saved = saved_paths(&text);
    let bad = complaints(&text);
    let log_shown = shown_path(repo, &log);
    let result = match ending {
        Ending::TimedOut(_) => Err(format!(
            "did not finish within its {} s limit",
            limit.as_secs()
        )),
        Ending::Exited(s) => match exit_failure(s, !saved.is_empty(), &bad) {
            Some(why) => Err(why),
            None => Ok(saved),
        },
    };
    match &result {
        Ok(_) => println!("{who}: done in {seconds:.1} s"),
        Err(why) => println!(
            "{who}: FAILED after {seconds:.1} s — {why}; log: {log_shown}; rerun: cargo xtask demo {name}"
        ),
    }
    Outcome {
        name: name.to_string(),
        seconds,
        result,
    }
}

/// Prints each scene's result and the totals; fails naming the scenes that failed.
fn summarize(repo: &Path, out: &Path, outcomes: &[Outcome], total: Instant) -> Result<()> {
    println!("demo summary:");
    for o in outcomes {
        let status = match &o.result {
            Ok(shots) => format!("ok, {} screenshot(s)", shots.len()),
            Err(why) => format!("FAILED ({why})"),
        };
        println!("  {:<14} {:>6.1} s  {status}", o.name, o.seconds);
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.result.is_err())
        .map(|o| o.name.as_str())
        .collect();
    println!(
        "  {:<14} {:>6.1} s  {} of {} scene(s) ok; screenshots in {}",
        "total",
        total.elapsed().as_secs_f64(),
        outcomes.len() - failed.len(),
        outcomes.len(),
        shown_path(repo, out)
    );
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("demo scene(s) failed: {}", failed.join(", ")))
    }
}

/// The editor tour's time limit (the editor starts in about 20 s here, each shot waits 90 frames).
const EDITOR_BUDGET: Duration = Duration::from_secs(240);

/// Opens the editor under Xvfb on `demo/editor_tour.tscn`; the driver script
/// (`demo/editor_tour_shots.gd`, added by Entwine's editor plugin) selects each node and saves
/// `editor_NN_name.png` into `out`. Fails on a timeout, a crash, no screenshot, or any error or
/// warning line in the log.
pub fn run_editor_tour(godot: &Godot, repo: &Path, out: &Path) -> Result<()> {
    if let Ok(entries) = fs::read_dir(out) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("editor_") && name.ends_with(".png") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    let logs = out.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let log = logs.join("editor.log");
    let out_s = out.display().to_string();
    println!(
        "demo editor: starting the editor (limit {} s)",
        EDITOR_BUDGET.as_secs()
    );
    let started = Instant::now();
    let cmd = xvfb_godot(
        godot,
        repo,
        &["--editor"],
        &[
            "--entwine-editor-script",
            "res://demo/editor_tour_shots.gd",
            "--screenshots",
            &out_s,
        ],
    );
    let mut shown = 0;
    let report = |shown: &mut usize| report_new_shots(repo, &log, "demo editor", started, shown);
    let mut child = Guarded::spawn(cmd, &log)?;
    let ending = child.wait_watching(EDITOR_BUDGET, || report(&mut shown));
    report(&mut shown);
    let text = fs::read_to_string(&log).unwrap_or_default();
    let bad = editor_complaints(&text);
    let log_shown = shown_path(repo, &log);
    let why = match ending {
        Ending::TimedOut(_) => Some(format!(
            "did not finish within {} s",
            EDITOR_BUDGET.as_secs()
        )),
        Ending::Exited(s) => exit_failure(s, !saved_paths(&text).is_empty(), &bad),
    };
    match why {
        None => {
            println!(
                "demo editor: done in {:.1} s, {} screenshot(s) in {}",
                started.elapsed().as_secs_f64(),
                saved_paths(&text).len(),
                shown_path(repo, out)
            );
            Ok(())
        }
        Some(why) => Err(format!("demo editor failed: {why}; log: {log_shown}")),
    }
}

/// Returns [`complaints`] of an editor's log, without the errors of the editor's Vulkan probe: the
/// editor tries to create a Vulkan device at start even when it renders with OpenGL, and Xvfb has
/// no Vulkan surface (each such error's `at:` line names the Vulkan rendering context).
pub fn editor_complaints(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log.lines().collect();
    let probe: Vec<&str> = lines
        .windows(2)
        .filter(|w| w[1].contains("rendering_context_driver_vulkan.cpp"))
        .map(|w| w[0])
        .collect();
    complaints(log)
        .into_iter()
        .filter(|l| !probe.iter().any(|p| std::ptr::eq(*p, *l)))
        .collect()
}

/// Returns the command that runs Godot under Xvfb on the project (a 1280×720 screen, OpenGL, no
/// audio, no V-Sync): `godot_args` go before the project's options, `user_args` after its `--`.
fn xvfb_godot(godot: &Godot, repo: &Path, godot_args: &[&str], user_args: &[&str]) -> Command {
    let exe = match godot {
        Godot::Native(path) => path.display().to_string(),
        Godot::SidRoot { .. } => "godot".to_string(),
    };
    let mut args = vec!["-a", "-s", "-screen 0 1280x720x24", exe.as_str()];
    args.extend_from_slice(godot_args);
    args.extend([
        "--rendering-driver",
        "opengl3",
        "--audio-driver",
        "Dummy",
        "--disable-vsync",
        "--path",
        "godot_project",
        "--",
    ]);
    args.extend_from_slice(user_args);
    godot.command_with("xvfb-run", &args, Some(repo), &[])
}

/// Prints `who: saved PATH (S s)` for each screenshot `log` names beyond the first `shown` (S:
/// seconds since `started`), and counts them into `shown`.
fn report_new_shots(repo: &Path, log: &Path, who: &str, started: Instant, shown: &mut usize) {
    let text = fs::read_to_string(log).unwrap_or_default();
    for path in saved_paths(&text).into_iter().skip(*shown) {
        println!(
            "{who}: saved {} ({:.1} s)",
            shown_path(repo, Path::new(&path)),
            started.elapsed().as_secs_f64()
        );
        *shown += 1;
    }
}

/// Returns why a Godot run that exited with `status` failed: a bad exit, no screenshot saved
/// (`saved_any` false) or a complaint line in its log (`bad`); `None` for a clean run.
fn exit_failure(status: ExitStatus, saved_any: bool, bad: &[&str]) -> Option<String> {
    if !status.success() {
        Some(format!("Godot exited with {status}"))
    } else if !saved_any {
        Some("saved no screenshot".to_string())
    } else if !bad.is_empty() {
        Some(format!(
            "{} error/warning line(s), first: {}",
            bad.len(),
            bad[0].trim()
        ))
    } else {
        None
    }
}

/// Returns the paths after `saved ` at the start of log lines, in order.
fn saved_paths(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("saved "))
        .map(|p| p.trim().to_string())
        .collect()
}

/// Returns `path` relative to the repo when it lies inside it.
fn shown_path(repo: &Path, path: &Path) -> String {
    path.strip_prefix(repo)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_showcase_table() {
        let text = "const DEMOS := [\n\t[\"limb_ik\", \"res://demo/limb_ik_demo.gd\"],\n\t[\"rope\", \"res://demo/rope_demo.gd\"],\n]\nconst X := [\"a\", \"b\"]\n";
        assert_eq!(scene_names(text), vec!["limb_ik", "rope"]);
    }

    #[test]
    fn an_exact_name_runs_one_scene() {
        let names: Vec<String> = ["hold_hand", "hold_hand_net", "rope", "rope_bridge"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(select(&names, Some("rope")), vec!["rope"]);
        assert_eq!(
            select(&names, Some("hand")),
            vec!["hold_hand", "hold_hand_net"]
        );
        assert_eq!(select(&names, None).len(), 4);
        assert!(select(&names, Some("nothing")).is_empty());
    }

    #[test]
    fn every_showcase_scene_has_a_budget() {
        let showcase = crate::util::repo_root().join("godot_project/demo/showcase.gd");
        let names = scene_names(&fs::read_to_string(showcase).unwrap());
        assert!(names.len() >= 7, "{names:?}");
        for n in &names {
            assert!(BUDGETS.iter().any(|(b, _)| b == n), "no budget for {n}");
        }
    }

    #[test]
    fn the_editors_vulkan_probe_is_not_a_complaint_but_other_errors_are() {
        let log = "ERROR: Required extension VK_KHR_surface not found.\n   at: _initialize_instance_extensions (drivers/vulkan/rendering_context_driver_vulkan.cpp:487)\nERROR: Condition \"err != OK\" is true. Returning: err\n   at: initialize (drivers/vulkan/rendering_context_driver_vulkan.cpp:928)\nERROR: Condition \"err != OK\" is true. Returning: err\n   at: other (scene/x.cpp:1)\nsaved /x/editor_01.png\n";
        let bad = editor_complaints(log);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(complaints(log).len(), 3);
    }

    #[test]
    fn flags_errors_and_warnings_only() {
        let log = "Godot Engine v4.6\nsaved /x/01_a.png\nWARNING: Could not set V-Sync mode, as changing V-Sync mode is not supported by the graphics driver.\nWARNING: something\n   at: f (x.cpp:1)\nERROR: bad\nSCRIPT ERROR: oops\nhold_hand_net demo: fine\n";
        assert_eq!(complaints(log).len(), 3);
        assert_eq!(saved_paths(log), vec!["/x/01_a.png"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_run_fails_on_a_bad_exit_then_on_no_screenshot_then_on_a_complaint() {
        use std::os::unix::process::ExitStatusExt;
        let (ok, bad) = (ExitStatus::from_raw(0), ExitStatus::from_raw(1 << 8));
        assert!(exit_failure(bad, false, &["ERROR: x"])
            .unwrap()
            .starts_with("Godot exited with"));
        assert_eq!(
            exit_failure(ok, false, &["ERROR: x"]).as_deref(),
            Some("saved no screenshot")
        );
        assert_eq!(
            exit_failure(ok, true, &["  ERROR: x ", "WARNING: y"]).as_deref(),
            Some("2 error/warning line(s), first: ERROR: x")
        );
        assert_eq!(exit_failure(ok, true, &[]), None);
    }
}
