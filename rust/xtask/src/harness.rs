//! The engine-level test harness: runs every suite under `tests/` in headless Godot.
//!
//! A suite is a GDScript file named `*_test.gd` that extends `EntwineTest` (see
//! `tests/lib/test_case.gd`). Header comments at the top of the file configure it:
//!
//! ```text
//! # processes: server client client   (one Godot per word, on a fresh 127.0.0.1 port; default: one "main")
//! # timeout: 120                        (seconds for the whole suite; default 120)
//! ```
//!
//! Each process prints `TEST PASS <name>` / `TEST FAIL <name> | <what> | expected: … | got: …` lines and
//! may announce errors it provokes on purpose with `EXPECT ERROR <text>`. A suite fails on a failed test,
//! a non-zero exit, a timeout, `SCRIPT ERROR`, an unexpected `ERROR:`, a library that cannot be opened,
//! leaked objects, or a run that reports no test at all.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::godot::Godot;
use crate::proc::{free_port, Ending, Guarded};
use crate::util::Result;

/// One suite file and its header settings.
#[derive(Debug)]
pub struct Suite {
    /// `tests/`-relative path without `_test.gd`, e.g. `kit/limb_ik`.
    pub name: String,
    /// `res://` path of the script.
    pub res_path: String,
    pub processes: Vec<String>,
    pub timeout: Duration,
    /// The script's text (a filter that appears nowhere in it cannot match a test).
    pub text: String,
}

/// Counts for a tier of tests.
#[derive(Default, Debug, Clone, Copy)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
}

/// Log patterns that fail a suite, with the reason shown.
const FATAL_PATTERNS: &[(&str, &str)] = &[
    ("SCRIPT ERROR", "a GDScript error"),
    ("Parse Error", "a GDScript parse error"),
    (
        "Can't open dynamic library",
        "the extension library did not load",
    ),
    ("ObjectDB instances leaked", "objects leaked at exit"),
    ("resources still in use at exit", "resources leaked at exit"),
    ("panicked at", "a Rust panic"),
];

/// Returns every suite under `tests/`, sorted by name.
pub fn discover(repo: &Path) -> Result<Vec<Suite>> {
    let root = repo.join("tests");
    let mut files = Vec::new();
    collect(&root, &mut files)?;
    files.sort();
    let mut suites = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(&root)
            .map_err(|_| "suite outside tests/".to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        let Some(stem) = rel.strip_suffix("_test.gd") else {
            continue;
        };
        let text = fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let mut processes = vec!["main".to_string()];
        let mut timeout = Duration::from_secs(120);
        for line in text
            .lines()
            .take_while(|l| l.starts_with('#') || l.is_empty())
        {
            if let Some(rest) = line.strip_prefix("# processes:") {
                processes = rest.split_whitespace().map(str::to_string).collect();
            } else if let Some(rest) = line.strip_prefix("# timeout:") {
                let secs: u64 = rest
                    .trim()
                    .parse()
                    .map_err(|_| format!("{}: bad '# timeout:' header '{rest}'", file.display()))?;
                timeout = Duration::from_secs(secs);
            }
        }
        if processes.is_empty() {
            return Err(format!(
                "{}: '# processes:' names no process",
                file.display()
            ));
        }
        suites.push(Suite {
            name: stem.to_string(),
            res_path: format!("res://tests/{rel}"),
            processes,
            timeout,
            text,
        });
    }
    Ok(suites)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.to_string_lossy().ends_with("_test.gd") {
            out.push(path);
        }
    }
    Ok(())
}

/// What one process of a suite did.
struct ProcessRun {
    label: String,
    log: String,
    ending: Ending,
}

/// Runs the suites matching `filter` and returns the tally of their tests.
pub fn run_suites(
    godot: &Godot,
    repo: &Path,
    suites: &[Suite],
    filter: Option<&str>,
) -> Result<Tally> {
    let log_dir = repo.join("target").join("godot-tests");
    fs::create_dir_all(&log_dir)
        .map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    let mut tally = Tally::default();
    for suite in suites {
        // A filter that names the suite runs all of it; otherwise it is passed on to pick tests.
        let test_filter = match filter {
            Some(f) if !suite.name.contains(f) => Some(f),
            _ => None,
        };
        if test_filter.is_some_and(|f| !suite.text.contains(f)) {
            continue;
        }
        let started = Instant::now();
        let runs = run_suite(godot, repo, suite, test_filter, &log_dir)?;
        let t = judge(suite, &runs, test_filter.is_some());
        if test_filter.is_some() && t.passed + t.failed == 0 {
            continue;
        }
        println!(
            "suite {}: {} passed, {} failed ({:.1} s)",
            suite.name,
            t.passed,
            t.failed,
            started.elapsed().as_secs_f32()
        );
        tally.passed += t.passed;
        tally.failed += t.failed;
    }
    Ok(tally)
}

fn run_suite(
    godot: &Godot,
    repo: &Path,
    suite: &Suite,
    filter: Option<&str>,
    log_dir: &Path,
) -> Result<Vec<ProcessRun>> {
    let port = free_port()?.to_string();
    let peers = suite.processes.len().to_string();
    let mut children = Vec::new();
    for (index, role) in suite.processes.iter().enumerate() {
        let label = if suite.processes.len() == 1 {
            role.clone()
        } else {
            format!("{role}#{index}")
        };
        let log = log_dir.join(format!(
            "{}.{}.log",
            suite.name.replace('/', "__"),
            label.replace('#', "")
        ));
        let index = index.to_string();
        let mut args = vec![
            "--headless",
            "--path",
            "godot_project",
            "-s",
            &suite.res_path,
            "--",
            "--role",
            role,
            "--index",
            &index,
            "--port",
            &port,
            "--peers",
            &peers,
        ];
        if let Some(f) = filter {
            args.extend(["--filter", f]);
        }
        let cmd = godot.command(&args, Some(repo));
        children.push((label, log.clone(), Guarded::spawn(cmd, &log)?));
        if index == "0" && suite.processes.len() > 1 {
            // Let the first process (the server) open its port before the clients dial it.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    let deadline = Instant::now() + suite.timeout;
    let mut runs = Vec::new();
    for (label, log_path, mut child) in children {
        let left = deadline.saturating_duration_since(Instant::now());
        let ending = child.wait(left.max(Duration::from_millis(1)));
        drop(child);
        let log = fs::read_to_string(&log_path).unwrap_or_default();
        runs.push(ProcessRun { label, log, ending });
    }
    Ok(runs)
}

/// Returns the tally of one suite after printing every failure with its context.
fn judge(suite: &Suite, runs: &[ProcessRun], filtered: bool) -> Tally {
    let mut tally = Tally::default();
    for run in runs {
        let lines: Vec<&str> = run.log.lines().collect();
        let expected_errors: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("EXPECT ERROR "))
            .map(str::trim)
            .collect();
        let where_ = format!("{} [{}]", suite.name, run.label);
        let mut reported = 0;
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("TEST PASS ") {
                tally.passed += 1;
                reported += 1;
            } else if let Some(rest) = line.strip_prefix("TEST FAIL ") {
                tally.failed += 1;
                reported += 1;
                let mut parts = rest.split(" | ");
                let name = parts.next().unwrap_or("?");
                println!("FAIL {where_} {name}");
                for part in parts {
                    println!("    {part}");
                }
                print_context(&lines, i);
            }
        }
        let mut problems = Vec::new();
        match run.ending {
            Ending::Exited(status) if status.success() => {}
            Ending::Exited(status) => problems.push((format!("Godot exited with {status}"), None)),
            Ending::TimedOut(d) => {
                problems.push((format!("timed out after {:.0} s", d.as_secs_f32()), None))
            }
        }
        for (i, line) in lines.iter().enumerate() {
            for (pattern, why) in FATAL_PATTERNS {
                if line.contains(pattern) {
                    problems.push((format!("{why}: {}", line.trim()), Some(i)));
                }
            }
            let is_error = line.starts_with("ERROR:") || line.starts_with("USER ERROR:");
            if is_error && !expected_errors.iter().any(|e| line.contains(e)) {
                problems.push((format!("unexpected error: {}", line.trim()), Some(i)));
            }
        }
        if reported == 0 && !filtered {
            problems.push(("the process reported no test".to_string(), None));
        }
        for (what, at) in problems.iter().take(5) {
            tally.failed += 1;
            println!("FAIL {where_} (suite-level): {what}");
            match at {
                Some(i) => print_context(&lines, *i),
                None => print_tail(&lines),
            }
        }
    }
    tally
}

fn print_context(lines: &[&str], at: usize) {
    let from = at.saturating_sub(12);
    let to = (at + 6).min(lines.len());
    println!("    --- Godot log, lines {}..{} ---", from + 1, to);
    for line in &lines[from..to] {
        println!("    | {line}");
    }
}

fn print_tail(lines: &[&str]) {
    let from = lines.len().saturating_sub(25);
    println!("    --- last lines of the Godot log ---");
    for line in &lines[from..] {
        println!("    | {line}");
    }
}
