//! `RopePreset`: one row of the rope speed table as a Godot resource (`.tres`).

use entwine_core::rope::presets::RopePreset as CorePreset;
use entwine_core::rope::ParamIssue;
use godot::prelude::*;

/// A rope tuning for a range of runner speeds: constraint iterations, segment length and the matching
/// follow-camera smoothing (the speed table of the rope design: faster runners need more iterations and
/// slightly longer segments).
///
/// Assign one to [member RopeSimulation.preset], or call [method RopeSimulation.apply_preset] with a
/// name from the built-in table (`"low"`, `"mid"`, `"high"`) or from [member RopeSimulation.presets_file].
#[derive(GodotClass)]
#[class(init, base = Resource, rename = EntwineRopePreset)]
pub struct RopePreset {
    base: Base<Resource>,
    /// Name of the preset, e.g. `"mid"`.
    #[export]
    #[init(val = GString::from("mid"))]
    pub name: GString,
    /// Lowest runner speed the preset is meant for (inclusive).
    #[export(range = (0.0, 100.0, 0.1, suffix = "m/s"))]
    #[init(val = 6.0)]
    pub min_speed: f32,
    /// Highest runner speed the preset is meant for (exclusive).
    #[export(range = (0.0, 1000.0, 0.1, suffix = "m/s"))]
    #[init(val = 10.0)]
    pub max_speed: f32,
    /// Distance-constraint iterations per step.
    #[export(range = (ParamIssue::Iterations.spec().hint_min(), ParamIssue::Iterations.spec().hint_max(), 1.0, suffix = ParamIssue::Iterations.spec().suffix()))]
    #[init(val = ParamIssue::Iterations.spec().default as i32)]
    pub iterations: i32,
    /// Rest length of one rope segment.
    #[export(range = (ParamIssue::SegmentLength.spec().hint_min(), ParamIssue::SegmentLength.spec().hint_max(), 0.01, suffix = ParamIssue::SegmentLength.spec().suffix()))]
    #[init(val = ParamIssue::SegmentLength.spec().default)]
    pub segment_length: f32,
    /// Follow-camera smoothing time that suits this speed (the rope node does not use it; a camera
    /// script can).
    #[export(range = (0.0, 2.0, 0.01, suffix = "s"))]
    #[init(val = 0.2)]
    pub camera_smooth_time: f32,
}

impl RopePreset {
    /// Returns a new resource holding the core preset's values.
    pub fn from_core(p: &CorePreset) -> Gd<Self> {
        let mut r = Self::new_gd();
        {
            let mut b = r.bind_mut();
            b.name = GString::from(p.name.as_str());
            b.min_speed = p.min_speed;
            b.max_speed = p.max_speed;
            b.iterations = i32::try_from(p.iterations).unwrap_or(i32::MAX);
            b.segment_length = p.segment_length;
            b.camera_smooth_time = p.camera_smooth_time;
        }
        r
    }
}
