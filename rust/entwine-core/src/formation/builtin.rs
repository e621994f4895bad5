//! The formations the addon ships (`addons/entwine/formations/*.ron`), embedded in the library like
//! the rope presets, so that an exported game has them without exporting the files.

use super::shape::FormationDef;

/// The shipped formations as `(name, RON text)`: the file name without `.ron`, and its text.
pub const BUILTIN_FORMATIONS: [(&str, &str); 8] = [
    (
        "arc",
        include_str!("../../../../addons/entwine/formations/arc.ron"),
    ),
    (
        "box",
        include_str!("../../../../addons/entwine/formations/box.ron"),
    ),
    (
        "circle",
        include_str!("../../../../addons/entwine/formations/circle.ron"),
    ),
    (
        "column",
        include_str!("../../../../addons/entwine/formations/column.ron"),
    ),
    (
        "hollow_box",
        include_str!("../../../../addons/entwine/formations/hollow_box.ron"),
    ),
    (
        "line",
        include_str!("../../../../addons/entwine/formations/line.ron"),
    ),
    (
        "spiral",
        include_str!("../../../../addons/entwine/formations/spiral.ron"),
    ),
    (
        "wedge",
        include_str!("../../../../addons/entwine/formations/wedge.ron"),
    ),
];

/// Returns the shipped formations, parsed, as `(name, definition)`.
///
/// Every embedded file parses (a unit test holds it), so none is ever left out.
pub fn builtin_formations() -> impl Iterator<Item = (&'static str, FormationDef)> {
    BUILTIN_FORMATIONS
        .iter()
        .filter_map(|(name, text)| FormationDef::from_ron(text).ok().map(|d| (*name, d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_is_embedded_and_parses() {
        for (name, text) in BUILTIN_FORMATIONS {
            assert!(
                FormationDef::from_ron(text).is_ok(),
                "{name}.ron does not parse"
            );
        }
        assert_eq!(builtin_formations().count(), BUILTIN_FORMATIONS.len());
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../addons/entwine/formations"
        );
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let f = e.file_name().to_string_lossy().to_string();
                f.strip_suffix(".ron").map(str::to_string)
            })
            .collect();
        files.sort();
        let embedded: Vec<&str> = BUILTIN_FORMATIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(files, embedded, "a formation file is not embedded");
    }
}
