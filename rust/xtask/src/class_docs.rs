//! The editor's class reference (F1) is complete: every item the glue registers with Godot — a
//! class, a method, a signal, a constant, a property — carries a `///` comment, which gdext's
//! `register-docs` turns into its description. Methods whose Godot name starts with `_` (engine
//! steps, callbacks and test hooks) are hidden from the reference and need none.

use std::fs;
use std::path::Path;

/// The attributes that register an item with Godot.
const REGISTERING: &[&str] = &[
    "#[func",
    "#[signal",
    "#[constant",
    "#[export",
    "#[var",
    "#[derive(GodotClass",
];

/// Returns `file:line: item` for each registered item of `text` without a `///` comment.
pub fn undocumented(file: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if !REGISTERING.iter().any(|a| line.starts_with(a)) || line.starts_with("#[export_") {
            i += 1;
            continue;
        }
        // The item's attributes and comments run up to it; walk back over them and forward to it.
        let mut start = i;
        while start > 0 && is_attribute_or_doc(lines[start - 1]) {
            start -= 1;
        }
        let mut end = i;
        while end + 1 < lines.len() && is_attribute_or_doc(lines[end + 1]) {
            end += 1;
        }
        let block = &lines[start..=end];
        let hidden = block.iter().any(|l| l.contains("rename = _"));
        let documented = block.iter().any(|l| l.trim_start().starts_with("///"));
        if !hidden && !documented {
            let item = lines.get(end + 1).map_or("", |l| l.trim());
            found.push(format!("{file}:{}: {item}", i + 1));
        }
        i = end + 1;
    }
    found
}

fn is_attribute_or_doc(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("#[") || t.starts_with("///")
}

fn scan(dir: &Path, found: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).unwrap();
            let rel = path.strip_prefix(crate::util::repo_root()).unwrap_or(&path);
            found.extend(undocumented(&rel.display().to_string(), &text));
        }
    }
}

#[test]
fn every_registered_item_of_the_glue_is_documented() {
    let mut found = Vec::new();
    scan(
        &crate::util::repo_root().join("rust/entwine-godot/src"),
        &mut found,
    );
    assert!(
        found.is_empty(),
        "{} registered items without a /// comment (the class reference shows them blank):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn finds_an_undocumented_method_and_skips_hidden_ones() {
    let text = "    /// Does a.\n    #[func]\n    fn a() {}\n\n    #[func]\n    fn b() {}\n\n    #[func(rename = _c)]\n    fn c() {}\n\n    #[export]\n    /// Late doc.\n    d: f32,\n";
    assert_eq!(undocumented("x.rs", text), vec!["x.rs:5: fn b() {}"]);
}
