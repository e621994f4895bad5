//! The engine-level test harness: runs every suite under `tests/` in headless Godot.
//!
//! A suite is a GDScript file named `*_test.gd` that extends `EntwineTest` (see
//! `tests/lib/test_case.gd`). Header comments at the top of the file configure it:
//!
//! ```text
//! # processes: server client client   (one Godot per word, on a fresh 127.0.0.1 port; default: one "main")
//! # timeout: 120                        (seconds for the whole suite; default 120)
//! # relay: delay_ms=100 jitter_ms=20 loss=0.05 seed=7   (optional: a lossy UDP relay, see below)
//! # retries: 1                         (optional: run a failing suite again, at most this often)
//! # editor: res://demo/editor_tour.tscn (optional: run the script inside the Godot editor)
//! ```
//!
//! A suite with `# editor:` is not a `SceneTree` script but a `@tool` `Node` script: the harness
//! starts the editor (`--editor --headless --quit-after N`) on the demo project, and Entwine's
//! editor plugin adds the script to the editor (`-- --entwine-editor-script PATH`). It prints the
//! same `TEST PASS`/`TEST FAIL` lines and quits; its run also fails on any `WARNING:` line (the
//! editor must open Entwine's scenes without one).
//!
//! A suite with `# retries:` that fails is run again; every failure of every try is printed, with
//! `FLAKY suite NAME: try K of N failed …`, the failing try's logs are kept as `*.tryK.log`, and
//! only the last try counts. Use it only for a suite whose intermittent failure is understood to
//! lie outside what it measures, and say so in the suite.
//!
//! Every process gets `--role`, `--index`, `--port` (the suite's free 127.0.0.1 port), `--peers` and
//! `--relay-port` (0 without a relay).
//!
//! With a `# relay:` header (every key optional; defaults 0, 0, 0, 1), the harness runs a relay (see
//! [`crate::relay`]) in a thread for the life of the suite: it listens on a second free 127.0.0.1 UDP
//! port, passed as `--relay-port`, and forwards to `--port`. The server still listens on `--port`;
//! clients dial the relay port instead (`EntwineTest.dial_port()`), and every datagram in either
//! direction is dropped with probability `loss` or delivered after `delay_ms ± jitter_ms` (uniform,
//! so jitter reorders), from pseudo-random numbers fixed by `seed`. It relays UDP only: ENet suites
//! can use it, WebSocket (TCP) suites cannot. After the suite the harness prints
//! `relay <suite>: <forwarded> forwarded, <dropped> dropped, <reordered> reordered`.
//!
//! Each process prints `TEST PASS <name>` / `TEST FAIL <name> | <what> | expected: … | got: …` lines and
//! may announce errors and warnings it provokes on purpose with `EXPECT ERROR <text>` and
//! `EXPECT WARNING <text>` (`expect_error` / `expect_warning` in GDScript). A suite fails on a failed
//! test, a non-zero exit, a timeout, `SCRIPT ERROR`, an unexpected `ERROR:` or `WARNING:` (a warning
//! Godot prints whatever the scene does is tolerated by exact text in `TOLERATED_WARNINGS`), a library
//! that cannot be opened, leaked objects, or a run that reports no test at all.

use std::fs;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::godot::Godot;
use crate::proc::{free_port, Ending, Guarded};
use crate::relay::{Relay, RelayConfig, RelayStats};
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
    /// The lossy UDP relay the `# relay:` header asks for, if any.
    pub relay: Option<RelayConfig>,
    /// How often a failing run is repeated (`# retries:`, default 0).
    pub retries: u32,
    /// The script's text (a filter that appears nowhere in it cannot match a test).
    pub text: String,
    /// `# editor:`: the scene the suite opens in the editor (it runs inside the editor).
    pub editor: Option<String>,
}

/// Frames after which an editor suite's Godot quits even if the script never does (the suite's
/// timeout still applies).
const EDITOR_QUIT_AFTER: &str = "20000";

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

/// Warnings Godot itself prints that no scene can avoid, tolerated in every suite by exact text
/// (each with why). Everything else a suite does not declare with `EXPECT WARNING` fails it.
const TOLERATED_WARNINGS: &[&str] = &[];

/// Returns whether `line` is a `WARNING:` line that none of `expected` (substrings) covers.
fn is_unexpected_warning(line: &str, expected: &[&str]) -> bool {
    let is_warning = line.starts_with("WARNING:") || line.starts_with("USER WARNING:");
    is_warning && !expected.iter().any(|e| line.contains(e))
}

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
        let mut relay = None;
        let mut retries = 0;
        let mut editor = None;
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
            } else if let Some(rest) = line.strip_prefix("# retries:") {
                retries = rest
                    .trim()
                    .parse()
                    .map_err(|_| format!("{}: bad '# retries:' header '{rest}'", file.display()))?;
            } else if let Some(rest) = line.strip_prefix("# editor:") {
                editor = Some(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("# relay:") {
                let config = RelayConfig::parse(rest)
                    .map_err(|e| format!("{}: bad '# relay:' header: {e}", file.display()))?;
                relay = Some(config);
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
            relay,
            retries,
            text,
            editor,
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
        let mut attempt = 0;
        let (t, relayed) = loop {
            let (runs, relayed) = run_suite(godot, repo, suite, test_filter, &log_dir)?;
            let t = judge(suite, &runs, test_filter.is_some());
            if t.failed == 0 || attempt >= suite.retries {
                break (t, relayed);
            }
            attempt += 1;
            let kept = keep_logs(&log_dir, suite, attempt);
            println!(
                "FLAKY suite {}: try {attempt} of {} failed ({} failed; printed above, logs kept as {kept}); running it again",
                suite.name,
                suite.retries + 1,
                t.failed
            );
        };
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
        if let Some(r) = relayed {
            println!(
                "relay {}: {} forwarded, {} dropped, {} reordered",
                suite.name, r.forwarded, r.dropped, r.reordered
            );
        }
        tally.passed += t.passed;
        tally.failed += t.failed;
    }
    Ok(tally)
}

/// Renames the suite's logs of failed try `attempt` to `*.tryN.log`; returns the pattern.
fn keep_logs(log_dir: &Path, suite: &Suite, attempt: u32) -> String {
    let prefix = format!("{}.", suite.name.replace('/', "__"));
    if let Ok(entries) = fs::read_dir(log_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(&prefix) && name.ends_with(".log") && !name.contains(".try") {
                let kept = format!("{}.try{attempt}.log", name.trim_end_matches(".log"));
                let _ = fs::rename(e.path(), log_dir.join(kept));
            }
        }
    }
    format!("target/godot-tests/{prefix}*.try{attempt}.log")
}

/// Picks the server's port and, for a suite played through the lossy relay, starts the relay.
fn start_relay(suite: &Suite) -> Result<(u16, Option<Relay>)> {
    // Bind the relay's socket first, so the server's port cannot be the same one.
    let relay_socket = match suite.relay {
        Some(_) => Some(
            UdpSocket::bind(("127.0.0.1", 0))
                .map_err(|e| format!("{}: cannot bind the relay's port: {e}", suite.name))?,
        ),
        None => None,
    };
    let server_port = free_port()?;
    let relay = match (suite.relay, relay_socket) {
        (Some(config), Some(socket)) => Some(Relay::start(
            config,
            socket,
            SocketAddr::from(([127, 0, 0, 1], server_port)),
        )?),
        _ => None,
    };
    Ok((server_port, relay))
}

/// Starts each of the suite's Godot processes, then waits for them all and reads their logs.
fn run_suite(
    godot: &Godot,
    repo: &Path,
    suite: &Suite,
    filter: Option<&str>,
    log_dir: &Path,
) -> Result<(Vec<ProcessRun>, Option<RelayStats>)> {
    let (server_port, relay) = start_relay(suite)?;
    let port = server_port.to_string();
    let relay_port = relay.as_ref().map_or(0, Relay::port).to_string();
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
        let mut args = match &suite.editor {
            Some(_) => vec![
                "--editor",
                "--headless",
                "--path",
                "godot_project",
                "--quit-after",
                EDITOR_QUIT_AFTER,
                "--",
                "--entwine-editor-script",
                &suite.res_path,
            ],
            None => vec![
                "--headless",
                "--path",
                "godot_project",
                "-s",
                &suite.res_path,
                "--",
            ],
        };
        args.extend([
            "--role",
            role,
            "--index",
            &index,
            "--port",
            &port,
            "--peers",
            &peers,
            "--relay-port",
            &relay_port,
        ]);
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
    Ok((runs, relay.map(Relay::stop)))
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
        let expected_warnings: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("EXPECT WARNING "))
            .map(str::trim)
            .chain(TOLERATED_WARNINGS.iter().copied())
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
            if suite.editor.is_some() && line.contains("WARNING:") {
                problems.push((format!("a warning in the editor: {}", line.trim()), Some(i)));
            }
            let is_error = line.starts_with("ERROR:") || line.starts_with("USER ERROR:");
            if is_error && !expected_errors.iter().any(|e| line.contains(e)) {
                problems.push((format!("unexpected error: {}", line.trim()), Some(i)));
            }
            if is_unexpected_warning(line, &expected_warnings) {
                problems.push((format!("unexpected warning: {}", line.trim()), Some(i)));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns a fresh repository-like directory holding `tests/net/<name>` with `text`.
    fn repo_with(name: &str, text: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let repo = std::env::temp_dir().join(format!(
            "xtask-harness-{}-{nanos}-{}",
            std::process::id(),
            name.len()
        ));
        let dir = repo.join("tests/net");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(name), text).unwrap();
        repo
    }

    #[test]
    fn relay_header_configures_the_suite() {
        let repo = repo_with(
            "lag_test.gd",
            "# processes: server client\n# relay: delay_ms=100 jitter_ms=20 loss=0.05 seed=7\nextends EntwineTest\n",
        );
        let suites = discover(&repo).unwrap();
        fs::remove_dir_all(&repo).unwrap();
        assert_eq!(suites.len(), 1);
        assert_eq!(suites[0].name, "net/lag");
        assert_eq!(
            suites[0].relay,
            Some(RelayConfig {
                delay_ms: 100,
                jitter_ms: 20,
                loss: 0.05,
                seed: 7
            })
        );
    }

    #[test]
    fn suites_without_the_header_have_no_relay_and_an_empty_one_has_defaults() {
        let repo = repo_with(
            "plain_test.gd",
            "# processes: server client\nextends EntwineTest\n",
        );
        let plain = discover(&repo).unwrap();
        fs::remove_dir_all(&repo).unwrap();
        assert_eq!(plain[0].relay, None);
        let repo = repo_with("bare_test.gd", "# relay:\nextends EntwineTest\n");
        let bare = discover(&repo).unwrap();
        fs::remove_dir_all(&repo).unwrap();
        assert_eq!(bare[0].relay, Some(RelayConfig::default()));
    }

    #[test]
    fn a_bad_relay_header_is_an_error_naming_the_file() {
        let repo = repo_with(
            "broken_test.gd",
            "# relay: delay_ms=100 loss=2\nextends EntwineTest\n",
        );
        let err = discover(&repo).unwrap_err();
        fs::remove_dir_all(&repo).unwrap();
        assert!(err.contains("broken_test.gd"), "{err}");
        assert!(err.contains("'# relay:'"), "{err}");
        assert!(err.contains("loss=2"), "{err}");
    }

    #[test]
    fn the_retries_header_is_read_and_defaults_to_none() {
        let repo = repo_with(
            "flaky_test.gd",
            "# processes: server client\n# retries: 1\nextends EntwineTest\n",
        );
        let suites = discover(&repo).unwrap();
        fs::remove_dir_all(&repo).unwrap();
        assert_eq!(suites[0].retries, 1);
        let repo = repo_with("plain_test.gd", "extends EntwineTest\n");
        let plain = discover(&repo).unwrap();
        fs::remove_dir_all(&repo).unwrap();
        assert_eq!(plain[0].retries, 0);
        let repo = repo_with("bad_test.gd", "# retries: often\nextends EntwineTest\n");
        let err = discover(&repo).unwrap_err();
        fs::remove_dir_all(&repo).unwrap();
        assert!(
            err.contains("bad_test.gd") && err.contains("'# retries:'"),
            "{err}"
        );
    }
    /// Judges one process that printed `log` and exited 0.
    fn judge_log(log: &str) -> Tally {
        use std::os::unix::process::ExitStatusExt;
        let suite = Suite {
            name: "kit/sample".to_string(),
            res_path: "res://tests/kit/sample_test.gd".to_string(),
            processes: vec!["main".to_string()],
            timeout: Duration::from_secs(10),
            relay: None,
            retries: 0,
            editor: None,
            text: String::new(),
        };
        let run = ProcessRun {
            label: "main".to_string(),
            log: log.to_string(),
            ending: Ending::Exited(std::process::ExitStatus::from_raw(0)),
        };
        judge(&suite, &[run], false)
    }

    #[test]
    fn an_unexpected_warning_fails_the_suite_and_a_declared_one_does_not() {
        let clean = judge_log("TEST PASS test_a\n");
        assert_eq!((clean.passed, clean.failed), (1, 0));
        let warned = judge_log(
            "TEST PASS test_a\nWARNING: EntwineLimbIK '/root/Ik': no skeleton\n     at: push_warning\n",
        );
        assert_eq!((warned.passed, warned.failed), (1, 1));
        let user = judge_log("USER WARNING: something\nTEST PASS test_a\n");
        assert_eq!(user.failed, 1);
        let declared = judge_log(
            "EXPECT WARNING no skeleton\nTEST PASS test_a\nWARNING: EntwineLimbIK '/root/Ik': no skeleton\n",
        );
        assert_eq!((declared.passed, declared.failed), (1, 0));
        // A declaration covers only the warnings containing its text.
        let other = judge_log(
            "EXPECT WARNING no skeleton\nTEST PASS test_a\nWARNING: EntwineLimbIK '/root/Ik': bone missing\n",
        );
        assert_eq!(other.failed, 1);
        // An expected error is not an expected warning, nor the reverse.
        let crossed = judge_log(
            "EXPECT ERROR no skeleton\nTEST PASS test_a\nWARNING: EntwineLimbIK '/root/Ik': no skeleton\n",
        );
        assert_eq!(crossed.failed, 1);
        let crossed = judge_log(
            "EXPECT WARNING no skeleton\nTEST PASS test_a\nERROR: EntwineLimbIK '/root/Ik': no skeleton\n",
        );
        assert_eq!(crossed.failed, 1);
    }
}
