//! `cargo xtask export android`: the Android library through cargo-ndk, then a debug APK of the demo.
//!
//! Without the Android NDK, the Android SDK, cargo-ndk, the Rust target or Godot's Android export
//! template it stops at once with one line naming what to install.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::godot::{self, Godot};
use crate::proc::{Ending, Guarded};
use crate::util::{cargo, run_checked, Result};

/// The Rust target and the `.gdextension` slot of the one architecture built.
const RUST_TARGET: &str = "aarch64-linux-android";
const SLOT_FILE: &str = "libentwine.android.template_debug.arm64.so";

/// What the Android export needs, as found on this machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub ndk: bool,
    pub sdk: bool,
    pub cargo_ndk: bool,
    pub rust_target: bool,
    /// Godot's Android template; `None` until looked for (only once the tools are there, so that a
    /// machine without them is told at once, before any Godot is provisioned).
    pub template: Option<bool>,
}

/// Returns the one line saying what to install, or `None` when everything is there.
pub fn missing_line(found: &Found) -> Option<String> {
    let mut missing = Vec::new();
    if !found.ndk {
        missing.push("the Android NDK (set ANDROID_NDK_HOME)");
    }
    if !found.sdk {
        missing.push("the Android SDK (set ANDROID_HOME)");
    }
    if !found.cargo_ndk {
        missing.push("cargo-ndk (cargo install cargo-ndk)");
    }
    if !found.rust_target {
        missing.push("the Rust target (rustup target add aarch64-linux-android)");
    }
    if found.template == Some(false) {
        missing.push("Godot's Android export template (Editor > Manage Export Templates)");
    }
    (!missing.is_empty()).then(|| {
        format!(
            "export android needs {}; install them and run it again",
            missing.join(", ")
        )
    })
}

fn env_dir(names: &[&str]) -> Option<PathBuf> {
    names
        .iter()
        .filter_map(env::var_os)
        .map(PathBuf::from)
        .find(|p| p.is_dir())
}

fn on_path(name: &str) -> bool {
    env::var_os("PATH")
        .is_some_and(|paths| env::split_paths(&paths).any(|d| d.join(name).is_file()))
}

fn rust_target_installed() -> bool {
    std::process::Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == RUST_TARGET)
        })
}

/// Where Godot keeps export templates for `version` (the sid root's own home for a provisioned
/// Godot, else the user's data folder).
fn template_dir(godot: Option<&Godot>, version: &str) -> Option<PathBuf> {
    let tail = Path::new("godot/export_templates").join(godot::template_dir_name(version));
    if let Some(root) = godot.and_then(Godot::sid_root) {
        return Some(root.join("root/.local/share").join(tail));
    }
    let data = env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join(tail))
}

/// Checks the tools without building anything (not the template: see [`Found::template`]).
fn survey() -> Found {
    Found {
        ndk: env_dir(&["ANDROID_NDK_HOME", "ANDROID_NDK_ROOT", "ANDROID_NDK"]).is_some(),
        sdk: env_dir(&["ANDROID_HOME", "ANDROID_SDK_ROOT"]).is_some(),
        cargo_ndk: on_path("cargo-ndk"),
        rust_target: rust_target_installed(),
        template: None,
    }
}

pub fn export(repo: &Path) -> Result<()> {
    let mut found = survey();
    if let Some(line) = missing_line(&found) {
        return Err(line);
    }
    let godot = crate::locate_godot(repo)?;
    let version = godot.version()?;
    found.template = Some(
        template_dir(Some(&godot), &version).is_some_and(|d| d.join("android_debug.apk").is_file()),
    );
    if let Some(line) = missing_line(&found) {
        return Err(line);
    }
    // A debug build keeps its assertions and line tables but not its full debug info: the
    // library sent to a phone stays small.
    run_checked(
        cargo()
            .current_dir(repo)
            .env("CARGO_PROFILE_DEV_STRIP", "debuginfo")
            .args([
                "ndk",
                "-t",
                "arm64-v8a",
                "build",
                "-p",
                "entwine-godot",
                "--no-default-features",
            ]),
    )?;
    let built = crate::target_dir(repo)
        .join(RUST_TARGET)
        .join("debug/libentwine.so");
    let dest = repo.join("addons/entwine/bin").join(SLOT_FILE);
    fs::copy(&built, &dest)
        .map_err(|e| format!("cannot copy {} to {}: {e}", built.display(), dest.display()))?;
    let size = fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
    println!(
        "android: debug library {} ({:.1} MB, debug info stripped)",
        dest.display(),
        size as f64 / 1e6
    );
    crate::import_project(&godot, repo)?;
    let out = crate::target_dir(repo).join("export/android");
    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let apk = out.join("entwine_demo.apk");
    let apk_s = apk.display().to_string();
    let log = crate::target_dir(repo).join("export-android.log");
    let cmd = godot.command(
        &[
            "--headless",
            "--path",
            "godot_project",
            "--export-debug",
            "Android",
            &apk_s,
        ],
        Some(repo),
    );
    let mut child = Guarded::spawn(cmd, &log)?;
    let ending = child.wait(Duration::from_secs(600));
    if !matches!(ending, Ending::Exited(s) if s.success()) || !apk.exists() {
        let text = fs::read_to_string(&log).unwrap_or_default();
        return Err(format!("Android export failed ({ending:?}); log:\n{text}"));
    }
    println!("export: wrote {apk_s}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_everything_missing_in_one_line() {
        let line = missing_line(&Found {
            template: Some(false),
            ..Found::default()
        })
        .unwrap();
        assert!(!line.contains('\n'));
        for what in [
            "Android NDK",
            "ANDROID_NDK_HOME",
            "Android SDK",
            "ANDROID_HOME",
            "cargo install cargo-ndk",
            "rustup target add aarch64-linux-android",
            "Android export template",
        ] {
            assert!(line.contains(what), "{what} not in: {line}");
        }
    }

    #[test]
    fn names_only_what_is_missing() {
        let found = Found {
            ndk: true,
            sdk: true,
            cargo_ndk: false,
            rust_target: true,
            template: None,
        };
        let line = missing_line(&found).unwrap();
        assert!(line.contains("cargo-ndk") && !line.contains("NDK (") && !line.contains("SDK"));
        let all = Found {
            cargo_ndk: true,
            ..found.clone()
        };
        assert_eq!(missing_line(&all), None);
        let no_template = Found {
            template: Some(false),
            ..all
        };
        assert!(missing_line(&no_template)
            .unwrap()
            .contains("export template"));
    }
}
