//! The core and the glue run on every platform Godot exports to (Android and iOS included): no
//! file system, process, environment, network or thread API of the standard library outside tests
//! (files go through Godot's `FileAccess` with `res://` / `user://` paths). One file may start a
//! thread: the rope batch's helper ([`THREAD_USERS`]), which must skip the web, check that there is a
//! second processor, and carry on alone when the thread cannot be started.

use std::fs;
use std::path::Path;

/// Standard-library APIs that are desktop-only or need platform care.
const DESKTOP_ONLY: &[&str] = &[
    "std::fs",
    "std::process",
    "std::env",
    "std::net",
    "std::thread",
    "std::os::",
];

/// The files allowed `std::thread` (path ends), and what each must contain: the web skipped, a
/// second processor checked, and a failed start handled (the batch then steps alone).
pub const THREAD_USERS: &[(&str, &[&str])] = &[(
    "entwine-core/src/rope/batch.rs",
    &[
        "cfg!(target_family = \"wasm\")",
        "available_parallelism()",
        ".spawn(",
        ".ok()?",
    ],
)];

/// Returns `file: pattern` for each desktop-only API used in the non-test part of `text` (for a
/// file of [`THREAD_USERS`], `std::thread` when one of its guards is missing).
pub fn offences(file: &str, text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let guarded = |p: &str| {
        p == "std::thread"
            && THREAD_USERS.iter().any(|(path, guards)| {
                file.replace('\\', "/").ends_with(path) && guards.iter().all(|g| code.contains(g))
            })
    };
    DESKTOP_ONLY
        .iter()
        .filter(|p| code.contains(*p) && !guarded(p))
        .map(|p| format!("{file}: {p}"))
        .collect()
}

fn scan(dir: &Path, found: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, found);
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".rs") || name.ends_with("tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        found.extend(offences(&path.display().to_string(), &text));
    }
}

#[test]
fn core_and_glue_use_no_desktop_only_api() {
    let repo = crate::util::repo_root();
    let mut found = Vec::new();
    for krate in ["rust/entwine-core/src", "rust/entwine-godot/src"] {
        scan(&repo.join(krate), &mut found);
    }
    assert!(found.is_empty(), "desktop-only APIs: {found:?}");
}

#[test]
fn finds_an_offence_outside_tests_only() {
    assert_eq!(
        offences("a.rs", "use std::fs::read;\n"),
        vec!["a.rs: std::fs"]
    );
    assert!(offences("b.rs", "fn f() {}\n#[cfg(test)]\nmod t { use std::fs; }\n").is_empty());
}

#[test]
fn only_the_rope_batch_may_start_a_thread_and_only_guarded() {
    let guarded = "use std::thread::JoinHandle;\nif cfg!(target_family = \"wasm\") || available_parallelism() {}\nBuilder::new().spawn(f).ok()?;\n";
    assert!(offences("rust/entwine-core/src/rope/batch.rs", guarded).is_empty());
    // The same code elsewhere, or that file without one of its guards, is an offence.
    assert_eq!(
        offences("rust/entwine-core/src/rope/mod.rs", guarded),
        vec!["rust/entwine-core/src/rope/mod.rs: std::thread"]
    );
    let unguarded = guarded.replace("cfg!(target_family = \"wasm\") || ", "");
    assert_eq!(
        offences("rust/entwine-core/src/rope/batch.rs", &unguarded),
        vec!["rust/entwine-core/src/rope/batch.rs: std::thread"]
    );
}
