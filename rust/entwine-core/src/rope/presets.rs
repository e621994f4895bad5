//! Rope presets: the seed's speed table (anchor speed → iterations, segment length, camera smoothing).
//!
//! The table ships as RON (`addons/entwine/presets/rope_presets.ron`), embedded here as the default
//! so the core and the addon can never disagree; a game may load its own file with
//! [`PresetTable::from_ron`].

use serde::{Deserialize, Serialize};

/// The default table, embedded from the addon's RON file.
pub const DEFAULT_PRESETS_RON: &str =
    include_str!("../../../../addons/entwine/presets/rope_presets.ron");

/// One row of the speed table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RopePreset {
    /// Name used by `apply_preset` (`"low"`, `"mid"`, `"high"` by default).
    pub name: String,
    /// Lowest anchor speed (m/s, inclusive) the preset is meant for.
    pub min_speed: f32,
    /// Highest anchor speed (m/s, exclusive) the preset is meant for.
    pub max_speed: f32,
    /// Distance-constraint iterations per step.
    pub iterations: u32,
    /// Rest length of one segment, in metres.
    pub segment_length: f32,
    /// Follow-camera smoothing time for this speed, in seconds.
    pub camera_smooth_time: f32,
}

/// A list of presets, looked up by name or by speed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PresetTable {
    /// The presets, in order of increasing speed.
    pub presets: Vec<RopePreset>,
}

impl PresetTable {
    /// Returns the table parsed from RON text, or a message saying what is wrong with it (a parse
    /// error, an empty table, or a row with out-of-range values).
    pub fn from_ron(text: &str) -> Result<Self, String> {
        let table: Self = ron::from_str(text).map_err(|e| e.to_string())?;
        if table.presets.is_empty() {
            return Err("the table has no presets".into());
        }
        for p in &table.presets {
            let ok = p.iterations >= 1
                && p.iterations <= super::MAX_ITERATIONS
                && p.segment_length.is_finite()
                && p.segment_length >= super::MIN_SEGMENT_LENGTH
                && p.segment_length <= super::MAX_SEGMENT_LENGTH
                && p.min_speed.is_finite()
                && p.max_speed >= p.min_speed
                && p.camera_smooth_time.is_finite()
                && p.camera_smooth_time >= 0.0;
            if !ok {
                return Err(format!(
                    "preset '{}' is out of range (iterations 1..={}, segment_length {}..={} m, \
                     min_speed ≤ max_speed, camera_smooth_time ≥ 0)",
                    p.name,
                    super::MAX_ITERATIONS,
                    super::MIN_SEGMENT_LENGTH,
                    super::MAX_SEGMENT_LENGTH
                ));
            }
        }
        Ok(table)
    }

    /// Returns the built-in table (the seed's speed table).
    #[must_use]
    pub fn builtin() -> Self {
        // The embedded file is checked by a unit test; fall back to a hard row set only if someone
        // breaks it in a build that skipped the tests.
        Self::from_ron(DEFAULT_PRESETS_RON).unwrap_or_else(|_| Self {
            presets: vec![RopePreset {
                name: "mid".into(),
                min_speed: 0.0,
                max_speed: f32::MAX,
                iterations: 4,
                segment_length: 0.3,
                camera_smooth_time: 0.2,
            }],
        })
    }

    /// Returns the preset called `name` (case-insensitive), if any.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RopePreset> {
        self.presets
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
    }

    /// Returns the preset whose speed range holds `speed` (m/s): below the first range the first, above
    /// the last range (or NaN) the last. An empty table (only possible when built by hand, since
    /// [`PresetTable::from_ron`] rejects one) answers from the built-in table.
    #[must_use]
    pub fn for_speed(&self, speed: f32) -> &RopePreset {
        let Some(last) = self.presets.last() else {
            return Self::builtin_static().for_speed(speed);
        };
        if speed.is_nan() {
            return last;
        }
        self.presets
            .iter()
            .find(|p| speed < p.max_speed)
            .unwrap_or(last)
    }

    /// The built-in table, parsed once.
    fn builtin_static() -> &'static Self {
        static BUILTIN: std::sync::OnceLock<PresetTable> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(Self::builtin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_is_the_seed_speed_table() {
        let table = PresetTable::from_ron(DEFAULT_PRESETS_RON).expect("valid RON");
        let names: Vec<&str> = table.presets.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["low", "mid", "high"]);
        let low = table.get("low").unwrap();
        assert_eq!((low.iterations, low.segment_length), (3, 0.25));
        let mid = table.get("MID").unwrap();
        assert_eq!((mid.iterations, mid.segment_length), (4, 0.3));
        assert_eq!(mid.camera_smooth_time, 0.2);
        let high = table.get("high").unwrap();
        assert!((6..=8).contains(&high.iterations));
        assert!((0.35..=0.4).contains(&high.segment_length));
    }

    #[test]
    fn lookup_by_speed() {
        let t = PresetTable::builtin();
        assert_eq!(t.for_speed(4.0).name, "low");
        assert_eq!(t.for_speed(8.0).name, "mid");
        assert_eq!(t.for_speed(12.0).name, "high");
        assert_eq!(t.for_speed(f32::NAN).name, "high");
        assert_eq!(t.for_speed(-3.0).name, "low");
    }

    #[test]
    fn bad_tables_are_rejected_with_a_reason() {
        assert!(PresetTable::from_ron("(presets: [])").is_err());
        assert!(PresetTable::from_ron("not ron").is_err());
        let e = PresetTable::from_ron(
            "(presets: [(name: \"x\", min_speed: 0.0, max_speed: 1.0, iterations: 0, \
             segment_length: 0.3, camera_smooth_time: 0.2)])",
        )
        .unwrap_err();
        assert!(e.contains("'x'"), "{e}");
    }
}
