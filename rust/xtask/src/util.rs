//! Small helpers shared by the tasks.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Errors are messages for the person at the terminal.
pub type Result<T> = std::result::Result<T, String>;

/// Returns the repository root (the workspace that holds `rust/xtask`).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.to_path_buf())
}

/// Runs `cmd` with inherited output and fails with its command line when it does not succeed.
pub fn run_checked(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// Returns a `cargo` command (the one running this xtask when known).
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
