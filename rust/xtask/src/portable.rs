//! The core and the glue run on every platform Godot exports to (Android and iOS included): no
//! file system, process, environment, network or thread API of the standard library outside tests
//! (files go through Godot's `FileAccess` with `res://` / `user://` paths, threads not at all).

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

/// Returns `file: pattern` for each desktop-only API used in the non-test part of `text`.
pub fn offences(file: &str, text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    DESKTOP_ONLY
        .iter()
        .filter(|p| code.contains(*p))
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
