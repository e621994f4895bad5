//! `cargo xtask docs`: prints each node's parameter table (from the core, where every range and
//! default is written once) into its guide in `docs/`, between the markers
//! `<!-- params: NAME -->` and `<!-- /params -->`. A test fails while a guide is out of date.

use std::fs;
use std::path::Path;

use entwine_core::kit::param::Param;

/// Each table: its name in the markers, and its parameters in the inspector's order.
fn tables() -> Vec<(&'static str, Vec<Param>)> {
    vec![
        ("formation", entwine_core::formation::params::table()),
        ("formation-shape", entwine_core::formation::shape::table()),
        ("soldier-bearing", entwine_core::formation::bearing::table()),
        (
            "environment-touch",
            entwine_core::env_touch::config::table(),
        ),
        ("hold-hand", entwine_core::hold_hand::params::table()),
        ("rope", entwine_core::rope::table()),
    ]
}

/// A value as the docs show it: degrees for angles.
fn shown(p: &Param, v: f32) -> String {
    format!("{}", p.unit.shown(v))
}

/// The markdown table of `params`.
fn render(params: &[Param]) -> String {
    let mut out = String::from(
        "| property | unit | range | default | what it does |\n|---|---|---|---|---|\n",
    );
    for p in params {
        let range = if p.max.is_finite() {
            format!("{} – {}", shown(p, p.min), shown(p, p.max))
        } else {
            format!("≥ {}", shown(p, p.min))
        };
        out.push_str(&format!(
            "| `{}` | {} | {range} | {} | {} |\n",
            p.name,
            p.suffix(),
            shown(p, p.default),
            p.doc
        ));
    }
    out
}

/// Returns `text` with every marked table replaced by the current one, and the names of the
/// tables found.
fn fill(text: &str) -> (String, Vec<&'static str>) {
    let mut text = text.to_string();
    let mut found = Vec::new();
    for (name, params) in tables() {
        let open = format!("<!-- params: {name} -->\n");
        let Some(start) = text.find(&open).map(|i| i + open.len()) else {
            continue;
        };
        let Some(end) = text[start..].find("<!-- /params -->").map(|i| start + i) else {
            continue;
        };
        text.replace_range(start..end, &render(&params));
        found.push(name);
    }
    (text, found)
}

/// Every guide in `docs/`, with its text and the text it should have.
fn guides(repo: &Path) -> Vec<(std::path::PathBuf, String, String, Vec<&'static str>)> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(repo.join("docs")) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") {
            if let Ok(text) = fs::read_to_string(&path) {
                let (filled, found) = fill(&text);
                out.push((path, text, filled, found));
            }
        }
    }
    out
}

/// `cargo xtask docs`: rewrites the guides' parameter tables.
pub fn update(repo: &Path) -> Result<(), String> {
    for (path, text, filled, found) in guides(repo) {
        if filled != text {
            fs::write(&path, filled)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            let shown = path.strip_prefix(repo).unwrap_or(&path);
            println!("updated {} ({})", shown.display(), found.join(", "));
        }
    }
    Ok(())
}

#[test]
fn every_table_is_in_a_guide_and_up_to_date() {
    let repo = crate::util::repo_root();
    let guides = guides(&repo);
    for (name, _) in tables() {
        assert!(
            guides.iter().any(|g| g.3.contains(&name)),
            "no guide in docs/ has the table <!-- params: {name} -->"
        );
    }
    for (path, text, filled, _) in guides {
        assert!(
            text == filled,
            "{} lists parameters that differ from the core's table: run `cargo xtask docs`",
            path.display()
        );
    }
}

#[test]
fn a_table_shows_angles_in_degrees() {
    let (text, found) = fill("a\n<!-- params: formation -->\nSTALE\n<!-- /params -->\nb\n");
    assert_eq!(found, ["formation"]);
    assert!(
        text.contains("| `max_turn_rate` | °/s | 0.572958 – 5729.58 | 360 |"),
        "{text}"
    );
    assert!(text.ends_with("<!-- /params -->\nb\n") && !text.contains("STALE"));
}
