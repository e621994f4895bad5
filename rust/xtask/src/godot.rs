//! Finding, provisioning and running a Godot 4 executable.
//!
//! Order of preference: `$GODOT`, then a `godot` ≥ 4.5 on `PATH`, then a private Debian sid root
//! (Debian sid packages Godot 4.6 with GDExtension support) kept in a cache folder outside the repo.
//! The sid root is made with `debootstrap` on first use and reused afterwards.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{run_checked, Result};

/// The oldest Godot the extension supports (`compatibility_minimum` in the `.gdextension`).
pub const MIN_VERSION: (u32, u32) = (4, 5);

/// Packages installed into the sid root: the editor/runtime, the debug export template, what a
/// software-rendered screenshot needs, and CA certificates (Godot reads them at start).
const SID_PACKAGES: &[&str] = &[
    "godot",
    "godot-template-debug",
    "godot-template-release",
    "xvfb",
    "xauth",
    "libgl1-mesa-dri",
    "libgl1",
    "libegl1",
    "libglx-mesa0",
    "ca-certificates",
];

/// A runnable Godot.
#[derive(Clone, Debug)]
pub enum Godot {
    /// An executable on this system.
    Native(PathBuf),
    /// Godot installed inside a Debian sid root, run through `chroot` with the repo (and each of
    /// `shared`) bind-mounted at the same path.
    SidRoot {
        root: PathBuf,
        repo: PathBuf,
        shared: Vec<PathBuf>,
    },
}

impl Godot {
    /// Returns a usable Godot, provisioning one when none is installed.
    pub fn locate_or_provision(repo: &Path) -> Result<Godot> {
        if let Some(path) = env::var_os("GODOT").filter(|p| !p.is_empty()) {
            let godot = Godot::Native(PathBuf::from(path));
            let version = godot.version()?;
            check_version(&version, "$GODOT")?;
            return Ok(godot);
        }
        if let Some(path) = find_on_path("godot") {
            let godot = Godot::Native(path.clone());
            match godot.version() {
                Ok(v) if check_version(&v, &path.display().to_string()).is_ok() => {
                    return Ok(godot)
                }
                Ok(v) => eprintln!(
                    "xtask: ignoring {} (version {v}, need ≥ 4.5)",
                    path.display()
                ),
                Err(e) => eprintln!("xtask: ignoring {}: {e}", path.display()),
            }
        }
        let root = cache_dir().join("sid-root");
        if !root.join(".entwine-ready").exists() {
            provision_sid_root(&root)?;
        }
        // A target folder outside the repo (`CARGO_TARGET_DIR`) holds exports Godot writes and runs.
        let target = crate::target_dir(repo);
        let shared = if target.starts_with(repo) {
            Vec::new()
        } else {
            let _ = fs::create_dir_all(&target);
            vec![target]
        };
        let godot = Godot::SidRoot {
            root,
            repo: repo.to_path_buf(),
            shared,
        };
        let version = godot.version()?;
        check_version(&version, "the provisioned Godot")?;
        Ok(godot)
    }

    /// Returns `godot --version`'s output, trimmed.
    pub fn version(&self) -> Result<String> {
        let out = self
            .command(&["--headless", "--version"], None)
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run Godot ({}): {e}", self.describe()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().last().unwrap_or("").trim().to_string();
        if line.is_empty() {
            return Err(format!("{} printed no version", self.describe()));
        }
        Ok(line)
    }

    /// Returns a human-readable description of where this Godot lives.
    pub fn describe(&self) -> String {
        match self {
            Godot::Native(p) => p.display().to_string(),
            Godot::SidRoot { root, .. } => format!("{} (in {})", "/usr/bin/godot", root.display()),
        }
    }

    /// Returns the sid root when this Godot runs inside one.
    pub fn sid_root(&self) -> Option<&Path> {
        match self {
            Godot::Native(_) => None,
            Godot::SidRoot { root, .. } => Some(root),
        }
    }

    /// Returns this Godot able to read and write `dir` (an existing folder outside the repo) at
    /// the same path.
    pub fn sharing(&self, dir: &Path) -> Godot {
        let mut godot = self.clone();
        if let Godot::SidRoot { shared, .. } = &mut godot {
            shared.push(dir.to_path_buf());
        }
        godot
    }

    /// Returns a command that runs Godot with `args`, in `cwd` (the repo when `None`).
    ///
    /// The returned process *is* Godot (every wrapper `exec`s), so killing its process group ends it.
    pub fn command(&self, args: &[&str], cwd: Option<&Path>) -> Command {
        self.command_with("godot", args, cwd, &[])
    }

    /// Returns a command that runs `program` (inside the sid root when there is one) with `args`,
    /// in `cwd`, with extra environment `envs`.
    pub fn command_with(
        &self,
        program: &str,
        args: &[&str],
        cwd: Option<&Path>,
        envs: &[(&str, &str)],
    ) -> Command {
        match self {
            Godot::Native(path) => {
                let mut cmd = if program == "godot" {
                    Command::new(path)
                } else {
                    Command::new(program)
                };
                cmd.args(args);
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                cmd.envs(envs.iter().copied());
                cmd
            }
            Godot::SidRoot { root, repo, shared } => {
                let cwd = cwd.unwrap_or(repo);
                let mut binds = String::new();
                for dir in std::iter::once(repo).chain(shared) {
                    let inner = root.join(dir.strip_prefix("/").unwrap_or(dir));
                    let _ = fs::create_dir_all(&inner);
                    binds += &format!(
                        "mount --bind {} {}; ",
                        shell_quote(&dir.display().to_string()),
                        shell_quote(&inner.display().to_string())
                    );
                }
                let _ = fs::create_dir_all(root.join("proc"));
                // Inside the root, Godot's home is the root's own home folder, whatever HOME the caller
                // has: its settings and export templates live there.
                let home = [
                    ("HOME", "/root"),
                    ("XDG_DATA_HOME", "/root/.local/share"),
                    ("XDG_CONFIG_HOME", "/root/.config"),
                    ("XDG_CACHE_HOME", "/root/.cache"),
                ];
                let env_words: String = home
                    .iter()
                    .filter(|(k, _)| !envs.iter().any(|(e, _)| e == k))
                    .chain(envs.iter())
                    .map(|(k, v)| format!("{k}={} ", shell_quote(v)))
                    .collect();
                let inner = format!(
                    "cd {} && exec env {}{} \"$@\"",
                    shell_quote(&cwd.display().to_string()),
                    env_words,
                    program
                );
                let script = format!(
                    "set -e; {binds}mount -t proc proc {root}/proc; \
                     mount --bind /dev {root}/dev; mount --bind /dev/shm {root}/dev/shm 2>/dev/null || true; \
                     exec chroot {root} sh -c {inner} godot \"$@\"",
                    root = shell_quote(&root.display().to_string()),
                    inner = shell_quote(&inner),
                );
                let mut cmd = Command::new("unshare");
                cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
                    .arg(script)
                    .arg("sh")
                    .args(args);
                cmd
            }
        }
    }
}

/// Places the sid root's export templates where its Godot looks for them (`~/.local/share/godot/
/// export_templates/VERSION/` in its own home folder, its `HOME` whatever the caller's is),
/// installing the release template first into a root made before it was part of [`SID_PACKAGES`].
pub fn place_sid_templates(root: &Path, version: &str) -> Result<()> {
    if !root.join("usr/bin/godot-template-release").exists() {
        eprintln!("xtask: adding godot-template-release to {}", root.display());
        let apt = "-o Acquire::Check-Valid-Until=false";
        let install = format!(
            "apt-get {apt} update -q && DEBIAN_FRONTEND=noninteractive apt-get {apt} install -y -q --no-install-recommends godot-template-release"
        );
        run_checked(
            Command::new("chroot")
                .arg(root)
                .args(["sh", "-c", &install]),
        )?;
    }
    let dir = root
        .join("root/.local/share/godot/export_templates")
        .join(template_dir_name(version));
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (binary, template) in [
        ("godot-template-debug", "linux_debug.x86_64"),
        ("godot-template-release", "linux_release.x86_64"),
    ] {
        let dest = dir.join(template);
        if !dest.exists() {
            fs::copy(root.join("usr/bin").join(binary), &dest)
                .map_err(|e| format!("cannot place the export template {template}: {e}"))?;
        }
    }
    Ok(())
}

/// Returns the cache folder for provisioned tools: `$ENTWINE_CACHE`, else `$XDG_CACHE_HOME/entwine`,
/// else `~/.cache/entwine`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = env::var_os("ENTWINE_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(dir).join("entwine");
    }
    let home = env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".cache").join("entwine")
}

/// Returns `(major, minor)` parsed from a Godot version string such as `4.6.3.stable.debian`.
pub fn parse_version(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts.next()?.trim().parse().ok()?;
    Some((major, minor))
}

/// Returns the export-template folder name for a version string (`4.6.3.stable.debian…` → `4.6.3.stable`).
pub fn template_dir_name(version: &str) -> String {
    let parts: Vec<&str> = version.split('.').collect();
    let numeric: Vec<&str> = parts
        .iter()
        .take_while(|p| p.chars().all(|c| c.is_ascii_digit()))
        .copied()
        .collect();
    let status = parts.get(numeric.len()).copied().unwrap_or("stable");
    format!("{}.{}", numeric.join("."), status)
}

fn check_version(version: &str, source: &str) -> Result<()> {
    match parse_version(version) {
        Some(v) if v >= MIN_VERSION => Ok(()),
        _ => Err(format!(
            "{source} is Godot {version}; Entwine needs Godot ≥ {}.{}",
            MIN_VERSION.0, MIN_VERSION.1
        )),
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Returns the Debian mirror this machine's apt uses (never hard-coded in the repo).
fn debian_mirror() -> Result<String> {
    let mut texts = Vec::new();
    if let Ok(dir) = fs::read_dir("/etc/apt/sources.list.d") {
        for entry in dir.flatten() {
            if let Ok(t) = fs::read_to_string(entry.path()) {
                texts.push(t);
            }
        }
    }
    if let Ok(t) = fs::read_to_string("/etc/apt/sources.list") {
        texts.push(t);
    }
    for text in &texts {
        for line in text.lines() {
            let line = line.trim();
            let uris: Vec<&str> = if let Some(rest) = line.strip_prefix("URIs:") {
                rest.split_whitespace().collect()
            } else if let Some(rest) = line.strip_prefix("deb ") {
                rest.split_whitespace()
                    .filter(|w| w.contains("://"))
                    .take(1)
                    .collect()
            } else {
                continue;
            };
            if let Some(uri) = uris
                .into_iter()
                .find(|u| u.contains("debian") && !u.contains("security"))
            {
                return Ok(uri.trim_end_matches('/').to_string());
            }
        }
    }
    Err("no Debian mirror found in /etc/apt sources; set $GODOT to a Godot ≥ 4.5 instead".into())
}

/// Creates a Debian sid root with Godot 4.6 in it at `root`.
fn provision_sid_root(root: &Path) -> Result<()> {
    eprintln!(
        "xtask: no Godot ≥ 4.5 found ($GODOT unset, none on PATH); provisioning Debian sid's Godot into {}",
        root.display()
    );
    if !is_root() {
        return Err("provisioning Godot needs root (debootstrap + chroot). Install Godot ≥ 4.5 and put it on PATH, or set $GODOT".into());
    }
    if find_on_path("debootstrap").is_none() && !Path::new("/usr/sbin/debootstrap").exists() {
        run_checked(Command::new("apt-get").args(["update", "-q"]))?;
        run_checked(
            Command::new("apt-get")
                .args(["install", "-y", "-q", "debootstrap"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
    }
    let mirror = debian_mirror()?;
    let staging = root.with_extension("partial");
    let _ = fs::remove_dir_all(&staging);
    fs::create_dir_all(staging.parent().unwrap_or(Path::new("/")))
        .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    run_checked(Command::new("debootstrap").args([
        "--variant=minbase",
        "sid",
        &staging.display().to_string(),
        &mirror,
    ]))?;
    fs::copy("/etc/resolv.conf", staging.join("etc/resolv.conf"))
        .map_err(|e| format!("cannot copy resolv.conf: {e}"))?;
    let apt = "-o Acquire::Check-Valid-Until=false";
    let install = format!(
        "apt-get {apt} update -q && DEBIAN_FRONTEND=noninteractive apt-get {apt} install -y -q --no-install-recommends {}",
        SID_PACKAGES.join(" ")
    );
    run_checked(
        Command::new("chroot")
            .arg(&staging)
            .args(["sh", "-c", &install]),
    )?;
    let _ = fs::remove_dir_all(root);
    fs::rename(&staging, root).map_err(|e| format!("cannot move the sid root in place: {e}"))?;
    fs::write(root.join(".entwine-ready"), SID_PACKAGES.join("\n"))
        .map_err(|e| format!("cannot mark the sid root ready: {e}"))?;
    Ok(())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!(parse_version("4.6.3.stable.debian4.6.3+ds-3"), Some((4, 6)));
        assert_eq!(parse_version("4.5.stable.official.876b29033"), Some((4, 5)));
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn template_folder_names() {
        assert_eq!(
            template_dir_name("4.6.3.stable.debian4.6.3+ds-3"),
            "4.6.3.stable"
        );
        assert_eq!(
            template_dir_name("4.5.stable.official.876b29033"),
            "4.5.stable"
        );
    }
}
