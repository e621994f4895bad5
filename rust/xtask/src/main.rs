//! `cargo xtask` — everything the project does besides compiling: provision Godot, build the
//! extension into the addon, run every test tier, the demo, benchmarks and exports.
//!
//! ```text
//! cargo xtask godot [-- ARGS...]   find or provision Godot ≥ 4.5; print it; or run it with ARGS
//! cargo xtask build [--release]    build the extension into addons/entwine/bin/
//! cargo xtask test [FILTER]        fmt, clippy, mobile checks, cargo test, the property suite on a
//!                  [--godot-only]   new seed (~25 s), then every engine suite (skip fmt, clippy and
//!                                   cargo test: for iterating on engine suites)
//! cargo xtask demo editor          the editor on the editor tour, a screenshot per selected node
//! cargo xtask demo [NAME]          run the demo (a window, or each scene's screenshots to target/demo/
//!                                  when headless, one Godot and one time limit per scene)
//! cargo xtask docs                print the nodes' parameter tables into their guides in docs/
//! cargo xtask bench [NAME]         benchmarks in headless Godot on a release build, and the core's
//!                                  own (squad_colocated: a crowd spawned at one point; a NAME that
//!                                  matches only core benchmarks needs no Godot)
//! cargo xtask fuzz [SECONDS]       the core's property suite for SECONDS (default 60), new seeds
//!                  [--base SEED]    (or the seeds of a printed base, to repeat a run)
//! cargo xtask export linux         export release and debug builds of the demo, run each, check
//!                                  the extension and its data loaded
//! cargo xtask export android       build the Android library with cargo-ndk and export a debug APK
//!                                  (stops at once, naming what to install, without NDK/SDK)
//! cargo xtask package              target/package/entwine-VERSION.zip for the Asset Library
//! ```

mod android;
#[cfg(test)]
mod class_docs;
mod demo;
mod godot;
mod harness;
mod install;
mod package;
mod param_docs;
#[cfg(test)]
mod portable;
mod proc;
mod relay;
mod util;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use godot::Godot;
use proc::{Ending, Guarded};
use util::{cargo, repo_root, run_checked, Result};

const USAGE: &str = "usage: cargo xtask <godot [-- ARGS] | build [--release] | test [FILTER] [--godot-only] | demo [NAME] | bench [NAME] | fuzz [SECONDS] [--base SEED] | export linux|android | package | docs>";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let repo = repo_root();
    let result = match args.first().map(String::as_str) {
        Some("godot") => cmd_godot(&repo, &args[1..]),
        Some("build") => build_extension(&repo, args.iter().any(|a| a == "--release")),
        Some("test") => {
            let godot_only = args.iter().any(|a| a == "--godot-only");
            let filter = args[1..].iter().find(|a| !a.starts_with("--"));
            cmd_test(&repo, filter.map(String::as_str), godot_only)
        }
        Some("demo") => cmd_demo(&repo, args.get(1).map(String::as_str)),
        Some("bench") => cmd_bench(&repo, args.get(1).map(String::as_str)),
        Some("fuzz") => cmd_fuzz(&repo, &args[1..]),
        Some("export") => cmd_export(&repo, args.get(1).map(String::as_str)),
        Some("package") => cmd_package(&repo),
        Some("docs") => param_docs::update(&repo),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn locate_godot(repo: &Path) -> Result<Godot> {
    let godot = Godot::locate_or_provision(repo)?;
    println!("godot: {} — {}", godot.describe(), godot.version()?);
    Ok(godot)
}

fn cmd_godot(repo: &Path, args: &[String]) -> Result<()> {
    let godot = locate_godot(repo)?;
    let rest: Vec<&str> = args
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .map(String::as_str)
        .collect();
    if rest.is_empty() {
        return Ok(());
    }
    run_checked(&mut godot.command(&rest, Some(repo)))
}

/// Where a Linux x86_64 library goes: the three slots of the `.gdextension`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// `linux.editor.x86_64`: loaded by the editor binary (the editor itself, tests, the demo,
    /// benchmarks); with class docs.
    Editor,
    /// `linux.debug.x86_64`: debug exports; no class docs (export templates warn about them).
    Debug,
    /// `linux.release.x86_64`: release exports; optimised, stripped, no class docs.
    Release,
}

impl Slot {
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Slot::Editor => "libentwine.linux.editor.x86_64.so",
            Slot::Debug => "libentwine.linux.template_debug.x86_64.so",
            Slot::Release => "libentwine.linux.template_release.x86_64.so",
        }
    }
}

/// Builds the editor's library (with class docs; optimised with `release`) into
/// `addons/entwine/bin/`.
fn build_extension(repo: &Path, release: bool) -> Result<()> {
    build_slot(repo, Slot::Editor, release).map(|_| ())
}

/// Builds the library for `slot` (optimised with `release`) and places it in `addons/entwine/bin/`;
/// returns where it was placed.
pub(crate) fn build_slot(repo: &Path, slot: Slot, release: bool) -> Result<PathBuf> {
    let release = release || slot == Slot::Release;
    let mut cmd = cargo();
    cmd.current_dir(repo).args(["build", "-p", "entwine-godot"]);
    if release {
        cmd.arg("--release");
    }
    if slot != Slot::Editor {
        cmd.arg("--no-default-features");
    }
    run_checked(&mut cmd)?;
    let profile = if release { "release" } else { "debug" };
    let built = target_dir(repo).join(profile).join("libentwine.so");
    let bin = repo.join("addons/entwine/bin");
    fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let name = slot.file_name();
    let dest = bin.join(name);
    // Replace rather than overwrite in place: a running Godot may have the old file mapped.
    let tmp = bin.join(format!(".{name}.{}.tmp", std::process::id()));
    fs::copy(&built, &tmp)
        .map_err(|e| format!("cannot copy {} to {}: {e}", built.display(), tmp.display()))?;
    if slot == Slot::Release {
        run_checked(
            std::process::Command::new("strip")
                .arg("--strip-unneeded")
                .arg(&tmp),
        )
        .map_err(|e| format!("cannot strip the release library (is binutils installed?): {e}"))?;
    }
    if slot == Slot::Debug {
        split_debug_info(
            &tmp,
            &target_dir(repo).join(profile).join(format!("{name}.debug")),
        )?;
    }
    fs::rename(&tmp, &dest).map_err(|e| format!("cannot place {}: {e}", dest.display()))?;
    println!(
        "build: {profile} library for the {slot:?} slot placed in {} ({})",
        dest.display(),
        megabytes(&dest)
    );
    Ok(dest)
}

/// Moves the DWARF debug info of the library `lib` into `debug_file` (linked from the library by
/// name, for a debugger pointed at it), keeping the symbols: a debug export goes to devices, a
/// phone too, and 216 of its 230 MB are debug info no device reads (13.5 MB left).
fn split_debug_info(lib: &Path, debug_file: &Path) -> Result<()> {
    let tools = "(is binutils installed?)";
    run_checked(
        std::process::Command::new("objcopy")
            .arg("--only-keep-debug")
            .arg(lib)
            .arg(debug_file),
    )
    .map_err(|e| format!("cannot keep the debug library's debug info {tools}: {e}"))?;
    run_checked(
        std::process::Command::new("strip")
            .arg("--strip-debug")
            .arg(lib),
    )
    .map_err(|e| format!("cannot strip the debug library {tools}: {e}"))?;
    run_checked(
        std::process::Command::new("objcopy")
            .arg(format!("--add-gnu-debuglink={}", debug_file.display()))
            .arg(lib),
    )
    .map_err(|e| format!("cannot link the debug library to its debug info {tools}: {e}"))
}

/// Returns a file's size in MB for people (`12.3 MB`), or `?` when it cannot be read.
pub(crate) fn megabytes(path: &Path) -> String {
    fs::metadata(path).map_or("?".into(), |m| {
        format!("{:.1} MB", m.len() as f64 / 1_000_000.0)
    })
}

pub(crate) fn target_dir(repo: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"))
}

/// Imports the demo project once so class names and the extension are registered.
pub(crate) fn import_project(godot: &Godot, repo: &Path) -> Result<()> {
    let log = target_dir(repo).join("godot-import.log");
    let cmd = godot.command(
        &["--headless", "--path", "godot_project", "--import"],
        Some(repo),
    );
    let mut child = Guarded::spawn(cmd, &log)?;
    match child.wait(Duration::from_secs(300)) {
        Ending::Exited(s) if s.success() => Ok(()),
        other => {
            let text = fs::read_to_string(&log).unwrap_or_default();
            Err(format!(
                "importing godot_project failed ({other:?}); log:\n{text}"
            ))
        }
    }
}

fn cmd_test(repo: &Path, filter: Option<&str>, godot_only: bool) -> Result<()> {
    let rust = if godot_only {
        harness::Tally::default()
    } else {
        rust_checks(repo, filter)?
    };
    println!("== build the extension");
    let editor_lib = build_slot(repo, Slot::Editor, false)?;
    // The install path's check also exports a game: it needs the debug export's library.
    let debug_lib = if filter.is_none_or(|f| "install".contains(f)) {
        Some(build_slot(repo, Slot::Debug, false)?)
    } else {
        None
    };
    let godot = locate_godot(repo)?;
    import_project(&godot, repo)?;
    println!("== engine suites in headless Godot");
    let suites = harness::discover(repo)?;
    let engine = harness::run_suites(&godot, repo, &suites, filter)?;
    let installed = match &debug_lib {
        Some(debug_lib) => {
            println!("== the install path: the addon in a new project, imported, run, exported");
            install::check(&godot, repo, &editor_lib, debug_lib)?
        }
        None => harness::Tally::default(),
    };
    println!("rust: {} passed, {} failed", rust.passed, rust.failed);
    println!("godot: {} passed, {} failed", engine.passed, engine.failed);
    println!(
        "install path: {} passed, {} failed",
        installed.passed, installed.failed
    );
    let passed = rust.passed + engine.passed + installed.passed;
    let failed = rust.failed + engine.failed + installed.failed;
    println!("total: {passed} passed, {failed} failed");
    if failed > 0 || passed == 0 {
        return Err(format!("{failed} test(s) failed"));
    }
    Ok(())
}

/// Runs fmt, clippy and `cargo test`; returns the `cargo test` counts.
fn rust_checks(repo: &Path, filter: Option<&str>) -> Result<harness::Tally> {
    println!("== cargo fmt --check");
    run_checked(
        cargo()
            .current_dir(repo)
            .args(["fmt", "--all", "--", "--check"]),
    )?;
    println!("== cargo clippy --all-targets -- -D warnings");
    run_checked(cargo().current_dir(repo).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    mobile_checks(repo)?;
    println!("== cargo test --workspace");
    let mut tally = cargo_tests(repo, filter)?;
    let fresh = fresh_seed_run(repo, filter)?;
    tally.passed += fresh.passed;
    tally.failed += fresh.failed;
    Ok(tally)
}

/// Seconds the fresh-seed run of the property suite in `cargo xtask test` takes in all (about).
const FRESH_SECONDS: f64 = 25.0;

/// Returns a base seed no earlier run drew (the clock's nanoseconds, mixed).
fn new_base_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut z = nanos ^ u64::from(std::process::id()).rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Parses a seed written as `0x…` hex or decimal.
fn parse_seed(text: &str) -> Option<u64> {
    let text = text.trim();
    text.strip_prefix("0x")
        .map_or_else(|| text.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
}

/// The property suite's categories (`fn prop_…` in `rust/entwine-core/tests/prop.rs`).
fn prop_categories(repo: &Path) -> Result<Vec<String>> {
    let suite = repo.join("rust/entwine-core/tests/prop.rs");
    let text =
        fs::read_to_string(&suite).map_err(|e| format!("cannot read {}: {e}", suite.display()))?;
    Ok(text
        .split("\nfn ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .filter(|name| name.starts_with("prop_"))
        .map(str::to_string)
        .collect())
}

/// Runs the property suite once more after the fixed-seed `cargo test`, on a new base seed it
/// prints, for about [`FRESH_SECONDS`] in all (the test profile `cargo test` built: debug
/// assertions on). A failure prints the failing case's seed and the command that reproduces it.
/// Skipped when `filter` names no category. Returns the counts of its `cargo test` run.
fn fresh_seed_run(repo: &Path, filter: Option<&str>) -> Result<harness::Tally> {
    let categories = prop_categories(repo)?;
    let chosen = categories
        .iter()
        .filter(|c| filter.is_none_or(|f| c.contains(f)))
        .count();
    if chosen == 0 {
        println!("== property suite on a new seed: skipped (the filter names no prop_ test)");
        return Ok(harness::Tally::default());
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let per_category = (FRESH_SECONDS * threads as f64 / chosen as f64).clamp(0.5, FRESH_SECONDS);
    let base = new_base_seed();
    println!(
        "== property suite on a new seed: base {base:#x}, {chosen} categories × {per_category:.1} s on {threads} threads"
    );
    let mut cmd = cargo();
    cmd.current_dir(repo)
        .args([
            "test",
            "-p",
            "entwine-core",
            "--test",
            "prop",
            "--color",
            "never",
        ])
        .env("ENTWINE_PROP_SECONDS", format!("{per_category}"))
        .env("ENTWINE_PROP_CASES", u64::MAX.to_string())
        .env("ENTWINE_PROP_BASE", format!("{base:#x}"))
        .env_remove("ENTWINE_PROP_SEED")
        .args(["--", "--test-threads", &threads.to_string()])
        .arg(filter.unwrap_or("prop_"));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    let mut tally = count_results(&stdout);
    if out.status.success() {
        println!("property suite on base {base:#x}: clean");
        return Ok(tally);
    }
    eprint!("{stderr}");
    if tally.failed == 0 {
        tally.failed += 1;
    }
    println!("FAIL property suite on the new base seed {base:#x}:");
    let mut named = false;
    for line in stdout.lines().chain(stderr.lines()) {
        if line.contains(" failed (") || line.trim_start().starts_with("reproduce:") {
            println!("  {}", line.trim());
            named |= line.contains("reproduce:");
        }
    }
    if !named {
        println!("  (no case named its seed: the suite itself failed; see its output above)");
    }
    println!(
        "  the whole run again: cargo xtask fuzz {FRESH_SECONDS} --base {base:#x}; make each finding a regression test (tests/regressions.rs, and its seed in FOUND in tests/prop/harness.rs)"
    );
    Ok(tally)
}

/// Sums the `test result:` lines of `cargo test` output.
fn count_results(stdout: &str) -> harness::Tally {
    let mut tally = harness::Tally::default();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("test result: ") {
            for part in rest.split([';', '.']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(kind)) = (words.next(), words.next()) {
                    match (n.parse::<usize>(), kind) {
                        (Ok(n), "passed") => tally.passed += n,
                        (Ok(n), "failed") => tally.failed += n,
                        _ => {}
                    }
                }
            }
        }
    }
    tally
}

/// Mobile targets `cargo check`ed by `cargo xtask test` when their standard library is installed
/// (`rustup target add …`; CI installs them).
const MOBILE_TARGETS: [&str; 2] = ["aarch64-linux-android", "aarch64-apple-ios"];

/// Runs `cargo check` of the glue (as exported: without class docs) for each installed mobile target.
fn mobile_checks(repo: &Path) -> Result<()> {
    let installed = std::process::Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    for target in MOBILE_TARGETS {
        if !installed.lines().any(|l| l.trim() == target) {
            println!("== cargo check --target {target}: skipped (rustup target add {target})");
            continue;
        }
        println!("== cargo check -p entwine-godot --no-default-features --target {target}");
        run_checked(cargo().current_dir(repo).args([
            "check",
            "-p",
            "entwine-godot",
            "--no-default-features",
            "--target",
            target,
        ]))?;
    }
    Ok(())
}

/// Runs `cargo test --workspace`, echoing its output, and returns the summed counts.
fn cargo_tests(repo: &Path, filter: Option<&str>) -> Result<harness::Tally> {
    let mut cmd = cargo();
    cmd.current_dir(repo)
        .args(["test", "--workspace", "--color", "never"]);
    if let Some(f) = filter {
        cmd.args(["--", f]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    let mut tally = count_results(&stdout);
    if !out.status.success() && tally.failed == 0 {
        tally.failed += 1;
        println!("FAIL cargo test exited with {}", out.status);
    }
    Ok(tally)
}

/// Runs the core's property suite (`rust/entwine-core/tests/prop.rs`) for about `seconds` in
/// total: an optimised build with debug assertions and overflow checks on (its own target
/// directory), new seeds each run (or the seeds of `--base SEED`, a base an earlier run printed),
/// every category given an equal share of the time.
fn cmd_fuzz(repo: &Path, args: &[String]) -> Result<()> {
    let (seconds, base) = fuzz_args(args)?;
    let categories = prop_categories(repo)?.len().max(1);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let per_category = (seconds * threads as f64 / categories as f64).max(0.5);
    let base = base.unwrap_or_else(new_base_seed);
    // Builds `cargo test` of the property suite with the fuzz run's profile, directory and seeds.
    let prop_suite = || {
        let mut cmd = cargo();
        cmd.args(["test", "-p", "entwine-core", "--release", "--test", "prop"])
            .current_dir(repo)
            .env("CARGO_TARGET_DIR", target_dir(repo).join("fuzz"))
            .env("CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS", "true")
            .env("CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS", "true")
            .env("ENTWINE_PROP_SECONDS", format!("{per_category}"))
            .env("ENTWINE_PROP_CASES", u64::MAX.to_string())
            .env("ENTWINE_PROP_BASE", format!("{base:#x}"));
        cmd
    };
    println!("== build the property suite (release, debug assertions and overflow checks on)");
    run_checked(prop_suite().arg("--no-run"))?;
    println!(
        "== fuzz: {categories} categories × {per_category:.1} s on {threads} threads (base seed {base:#x})"
    );
    let mut run = prop_suite();
    run.args(["--color", "never", "--"]).args([
        "--nocapture",
        "--test-threads",
        &threads.to_string(),
        "prop_",
    ]);
    let start = std::time::Instant::now();
    let out = run
        .output()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let total = fuzz_report(&out);
    println!(
        "fuzz: {total} cases in {:.1} s, {}",
        start.elapsed().as_secs_f64(),
        if out.status.success() {
            "clean"
        } else {
            "FAILED"
        }
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "the property suite found a failure (the case's seed and the command that reproduces it are printed above; the whole run again: cargo xtask fuzz {seconds} --base {base:#x})"
        ))
    }
}

/// Reads `cargo xtask fuzz`'s arguments: the seconds to run (60 by default) and `--base SEED`.
fn fuzz_args(args: &[String]) -> Result<(f64, Option<u64>)> {
    let mut seconds: f64 = 60.0;
    let mut base = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--base" {
            let text = rest
                .next()
                .ok_or("fuzz: --base needs a seed (0x… or decimal)")?;
            base = Some(parse_seed(text).ok_or_else(|| {
                format!("fuzz: --base takes a seed (0x… or decimal), not '{text}'")
            })?);
        } else {
            seconds = arg
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .ok_or_else(|| format!("fuzz: SECONDS must be a positive number, not '{arg}'"))?;
        }
    }
    Ok((seconds, base))
}

/// Prints the fuzz run's per-category lines and failures; returns how many cases it ran.
fn fuzz_report(out: &std::process::Output) -> u64 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut total: u64 = 0;
    for line in stdout.lines() {
        if line.starts_with("prop ") || line.contains("FAILED") || line.starts_with("test result") {
            println!("{line}");
        }
        if let Some(n) = line
            .strip_prefix("prop ")
            .and_then(|l| l.split(": ").nth(1))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
        {
            total += n;
        }
    }
    for line in stderr.lines() {
        if line.contains("failed (") || line.contains("reproduce:") {
            eprintln!("{line}");
        }
    }
    total
}

fn cmd_demo(repo: &Path, only: Option<&str>) -> Result<()> {
    if only == Some("editor") {
        return cmd_demo_editor(repo);
    }
    build_extension(repo, true)?;
    let godot = locate_godot(repo)?;
    import_project(&godot, repo)?;
    if env::var_os("DISPLAY").is_some() || env::var_os("WAYLAND_DISPLAY").is_some() {
        println!("demo: opening the showcase window");
        return run_checked(&mut godot.command(&["--path", "godot_project"], Some(repo)));
    }
    if godot.sid_root().is_none() && !Path::new("/usr/bin/xvfb-run").exists() {
        return Err(
            "no display and no xvfb-run: install Xvfb (apt-get install xvfb) or run with a display"
                .into(),
        );
    }
    let out = target_dir(repo).join("demo");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    println!("demo: no display; each scene renders through Xvfb in its own Godot");
    demo::run_scenes(&godot, repo, &out, only)
}

/// `cargo xtask demo editor`: the editor under Xvfb on the editor tour, one screenshot of the 3D
/// viewport per selected node, into `target/demo/editor_*.png`.
fn cmd_demo_editor(repo: &Path) -> Result<()> {
    build_extension(repo, false)?;
    let godot = locate_godot(repo)?;
    import_project(&godot, repo)?;
    if godot.sid_root().is_none() && !Path::new("/usr/bin/xvfb-run").exists() {
        return Err("no xvfb-run: install Xvfb (apt-get install xvfb)".into());
    }
    let out = target_dir(repo).join("demo");
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    demo::run_editor_tour(&godot, repo, &out)
}

/// Benchmarks of the core alone: each a release example printing `bench ` lines, no Godot needed.
const CORE_BENCHES: [&str; 1] = ["squad_colocated"];

fn cmd_bench(repo: &Path, name: Option<&str>) -> Result<()> {
    let core: Vec<&str> = CORE_BENCHES
        .into_iter()
        .filter(|b| name.is_none_or(|n| b.contains(n)))
        .collect();
    for bench in &core {
        core_bench(repo, bench)?;
    }
    if !core.is_empty() && name.is_some() {
        return Ok(());
    }
    build_extension(repo, true)?;
    let godot = locate_godot(repo)?;
    import_project(&godot, repo)?;
    let dir = repo.join("tests/bench");
    let mut benches: Vec<String> = fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().to_string();
            file.strip_suffix("_bench.gd").map(str::to_string)
        })
        .filter(|b| name.is_none_or(|n| b.contains(n)))
        .collect();
    benches.sort();
    if benches.is_empty() {
        return Err(format!("no benchmark matches {name:?}"));
    }
    let log_dir = target_dir(repo).join("bench");
    fs::create_dir_all(&log_dir)
        .map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    let mut failed = Vec::new();
    for bench in benches {
        let script = format!("res://tests/bench/{bench}_bench.gd");
        let log = log_dir.join(format!("{bench}.log"));
        let cmd = godot.command(
            &["--headless", "--path", "godot_project", "-s", &script],
            Some(repo),
        );
        let mut child = Guarded::spawn(cmd, &log)?;
        let ending = child.wait(Duration::from_secs(900));
        let text = fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("bench ")).collect();
        for line in &lines {
            println!("{line}");
        }
        let clean = matches!(ending, Ending::Exited(s) if s.success());
        if !clean || lines.is_empty() || text.contains("SCRIPT ERROR") {
            println!(
                "bench {bench}: FAILED ({ending:?}); log in {}",
                log.display()
            );
            failed.push(bench);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("benchmarks failed: {}", failed.join(", ")))
    }
}

/// Runs the core's example `bench` in release and prints its `bench ` lines.
fn core_bench(repo: &Path, bench: &str) -> Result<()> {
    let out = cargo()
        .current_dir(repo)
        .args(["run", "--release", "-p", "entwine-core", "--example", bench])
        .output()
        .map_err(|e| format!("cannot run the {bench} example: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("bench ")).collect();
    for line in &lines {
        println!("{line}");
    }
    if out.status.success() && !lines.is_empty() {
        Ok(())
    } else {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        Err(format!("benchmark {bench} failed ({})", out.status))
    }
}

fn cmd_export(repo: &Path, platform: Option<&str>) -> Result<()> {
    if platform == Some("android") {
        return android::export(repo);
    }
    if platform != Some("linux") {
        return Err("usage: cargo xtask export <linux | android> (iOS: see the README)".into());
    }
    build_extension(repo, false)?;
    let debug_lib = build_slot(repo, Slot::Debug, false)?;
    let release_lib = build_slot(repo, Slot::Release, true)?;
    let godot = locate_godot(repo)?;
    let version = godot.version()?;
    if let Some(root) = godot.sid_root() {
        godot::place_sid_templates(root, &version)?;
    }
    import_project(&godot, repo)?;
    let models = real_models(repo)?;
    let mut summary = Vec::new();
    for (kind, lib) in [("release", &release_lib), ("debug", &debug_lib)] {
        let (out_dir, exe_s, shipped) = export_build(&godot, repo, kind, lib, &models)?;
        summary.push(check_export(
            &godot, repo, kind, &out_dir, &exe_s, &models, &shipped,
        )?);
    }
    println!("export: passed ({})", summary.join("; "));
    Ok(())
}

/// Exports the demo game as one `kind` (release or debug) and checks the library and models it ships.
fn export_build(
    godot: &Godot,
    repo: &Path,
    kind: &str,
    lib: &Path,
    models: &[(String, String, u64)],
) -> Result<(PathBuf, String, PathBuf)> {
    let out_dir = target_dir(repo).join("export/linux").join(kind);
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let exe = out_dir.join("entwine_demo.x86_64");
    let exe_s = exe.display().to_string();
    let log = target_dir(repo).join(format!("export-{kind}.log"));
    let flag = format!("--export-{kind}");
    let cmd = godot.command(
        &[
            "--headless",
            "--path",
            "godot_project",
            &flag,
            "Linux",
            &exe_s,
        ],
        Some(repo),
    );
    let mut child = Guarded::spawn(cmd, &log)?;
    let ending = child.wait(Duration::from_secs(300));
    let text = fs::read_to_string(&log).unwrap_or_default();
    if !matches!(ending, Ending::Exited(s) if s.success()) || !exe.exists() {
        return Err(format!("{kind} export failed ({ending:?}); log:\n{text}"));
    }
    let shipped = out_dir.join(
        lib.file_name()
            .ok_or_else(|| "library path has no file name".to_string())?,
    );
    if !shipped.exists() {
        return Err(format!(
            "the {kind} export does not contain {} (log: {})",
            shipped.display(),
            log.display()
        ));
    }
    println!(
        "export: {kind} build written to {} (library {}, {})",
        exe_s,
        shipped.display(),
        megabytes(&shipped)
    );
    let pck = out_dir.join("entwine_demo.pck");
    let carried = pck_models(&pck, models)?;
    println!(
        "export: the {kind} build's {} carries {carried}",
        pck.display()
    );
    Ok((out_dir, exe_s, shipped))
}

/// Runs the exported game's extension check: it must load, read every humanoid and log no complaint.
fn check_export(
    godot: &Godot,
    repo: &Path,
    kind: &str,
    out_dir: &Path,
    exe_s: &str,
    models: &[(String, String, u64)],
    shipped: &Path,
) -> Result<String> {
    let run_log = target_dir(repo).join(format!("export-run-{kind}.log"));
    let cmd = godot.command_with(
        exe_s,
        &["--headless", "--", "--check-extension"],
        Some(out_dir),
        &[],
    );
    let mut child = Guarded::spawn(cmd, &run_log)?;
    let ending = child.wait(Duration::from_secs(180));
    let text = fs::read_to_string(&run_log).unwrap_or_default();
    let loaded = text.lines().find(|l| l.starts_with("ENTWINE_EXTENSION_OK"));
    // An exported game's log holds only what the game itself says: any error or warning line
    // of the engine's or the extension's fails the check (the game's own `push_error` and
    // `push_warning` lines excepted).
    let bad: Vec<&str> = demo::complaints(&text)
        .into_iter()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with("USER ERROR") && !l.starts_with("USER WARNING")
        })
        .collect();
    // The check names each real humanoid it read ("models=cesium_man:19,…").
    let unread: Vec<&str> = models
        .iter()
        .filter_map(|(name, _, _)| {
            let listed = loaded.is_some_and(|l| {
                l.split_whitespace()
                    .filter_map(|w| w.strip_prefix("models="))
                    .any(|list| list.split(',').any(|m| m.split(':').next() == Some(name)))
            });
            (!listed).then_some(name.as_str())
        })
        .collect();
    if loaded.is_some() && !unread.is_empty() {
        return Err(format!(
            "the exported {kind} build did not read the humanoid(s) {}; log {}",
            unread.join(", "),
            run_log.display()
        ));
    }
    match (ending, loaded) {
        (Ending::Exited(s), Some(line)) if s.success() && bad.is_empty() => {
            println!("export: the {kind} build ran: {line}");
            Ok(format!("{kind}: library {}", megabytes(shipped)))
        }
        (ending, _) => Err(format!(
            "the exported {kind} build did not pass its check ({ending:?}, {} error/warning line(s)); log {}:\n{text}",
            bad.len(),
            run_log.display()
        )),
    }
}

/// The real humanoids the demo project ships (`godot_project/assets/characters/NAME/*.glb`): each
/// folder's name, the file's `res://` path and its size.
fn real_models(repo: &Path) -> Result<Vec<(String, String, u64)>> {
    let dir = repo.join("godot_project/assets/characters");
    let mut out = Vec::new();
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(files) = fs::read_dir(entry.path()) else {
            continue;
        };
        for file in files.flatten() {
            let file_name = file.file_name().to_string_lossy().to_string();
            if file_name.ends_with(".glb") {
                let size = file.metadata().map(|m| m.len()).unwrap_or(0);
                out.push((
                    name.clone(),
                    format!("res://assets/characters/{name}/{file_name}"),
                    size,
                ));
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(format!("no .glb humanoid under {}", dir.display()));
    }
    Ok(out)
}

/// Checks that the exported `.pck` lists every model's path and is big enough to hold them all
/// (a pack stores each file's path in its directory and the bytes as they are); returns a line
/// naming them.
fn pck_models(pck: &Path, models: &[(String, String, u64)]) -> Result<String> {
    let bytes = fs::read(pck).map_err(|e| format!("cannot read {}: {e}", pck.display()))?;
    let mut named = Vec::new();
    for (name, path, size) in models {
        let inner = path.trim_start_matches("res://");
        let found = bytes.windows(inner.len()).any(|w| w == inner.as_bytes());
        if !found {
            return Err(format!(
                "{} does not carry {path}: the demo's real humanoids would be missing",
                pck.display()
            ));
        }
        named.push(format!("{name} ({size} bytes)"));
    }
    let total: u64 = models.iter().map(|m| m.2).sum();
    if (bytes.len() as u64) < total {
        return Err(format!(
            "{} is {} bytes, smaller than the models it should carry ({total} bytes)",
            pck.display(),
            bytes.len()
        ));
    }
    Ok(named.join(", "))
}

/// Builds the optimised libraries and zips the addon, the example scenes and the docs.
fn cmd_package(repo: &Path) -> Result<()> {
    let editor = build_slot(repo, Slot::Editor, true)?;
    let release = build_slot(repo, Slot::Release, true)?;
    let version = env!("CARGO_PKG_VERSION");
    let zip = package::make(repo, &target_dir(repo), version, &editor, &release)?;
    let bin = target_dir(repo)
        .join("package")
        .join(format!("entwine-{version}/addons/entwine/bin"));
    println!(
        "package: {} ({}); libraries: {} {}, {} {}",
        zip.display(),
        megabytes(&zip),
        Slot::Editor.file_name(),
        megabytes(&bin.join(Slot::Editor.file_name())),
        Slot::Release.file_name(),
        megabytes(&bin.join(Slot::Release.file_name())),
    );
    Ok(())
}
