//! What a squad looks like: each internal agent's MultiMesh transform and colour, and the debug
//! drawing's geometry on the ground plane (slot crosses, repulsion rings, the baseline). The glue
//! copies these into the engine's buffers and meshes.

use glam::Vec2;

use super::shape::forward_of;
use super::{AgentState, Baseline, Sample, Squad};

/// Height of an internal agent's centre over the ground (half the default capsule's height), m.
pub const AGENT_CENTRE: f32 = 0.85;
/// The default agent capsule's radius and height, m.
pub const AGENT_CAPSULE: (f32, f32) = (0.22, 1.7);
/// An active agent's colour when states are not shown (RGB).
pub const ACTIVE_RGB: [f32; 3] = [0.25, 0.36, 0.62];
/// An inactive agent's colour (RGB).
pub const INACTIVE_RGB: [f32; 3] = [0.4, 0.4, 0.4];
/// The debug drawing's slot crosses (RGB).
pub const SLOT_RGB: [f32; 3] = [0.95, 0.95, 0.95];
/// The debug drawing's baseline (RGB).
pub const BASELINE_RGB: [f32; 3] = [1.0, 0.85, 0.1];
/// The debug drawing's lines of sight while eyes are right (RGB).
pub const EYES_RGB: [f32; 3] = [0.2, 0.9, 0.95];
/// Height of the debug drawing over the ground, m.
pub const DEBUG_LIFT: f32 = 0.03;
/// Half the arm of a slot's cross, m.
pub const SLOT_CROSS: f32 = 0.12;
/// Segments of an agent's repulsion ring.
pub const RING_SEGMENTS: usize = 16;
/// Agents the debug drawing shows slots for, at most.
pub const DEBUG_AGENTS: usize = 4096;
/// Squads up to this size also show each agent's repulsion ring.
pub const RING_AGENTS: usize = 400;

/// Height of the editor's slot preview over the controller's ground, m.
pub const PREVIEW_LIFT: f32 = 0.02;
/// Half the arm of a slot's cross in the editor's preview, m.
pub const PREVIEW_CROSS: f32 = 0.15;
/// Length of a slot's facing tick in the editor's preview, m.
pub const PREVIEW_FACING: f32 = 0.45;
/// The preview's lines between neighbouring slots (the contract's spacing pairs) (RGB).
pub const NEIGHBOUR_RGB: [f32; 3] = [0.35, 0.6, 1.0];
/// The preview's slot crosses (RGB).
pub const PREVIEW_SLOT_RGB: [f32; 3] = [1.0, 1.0, 1.0];
/// The preview's facing ticks (RGB).
pub const FACING_RGB: [f32; 3] = [1.0, 0.8, 0.1];

/// Returns a slot's facing tick in the editor's preview: from ground point `p` along the slot's
/// heading `yaw` (forward is −Z at 0), [`PREVIEW_FACING`] long.
pub fn facing_tick(p: Vec2, yaw: f32) -> (Vec2, Vec2) {
    (p, p + forward_of(yaw) * PREVIEW_FACING)
}

/// Returns the colour (RGB) showing an agent's state: idle green, moving red, aligning amber,
/// stabilizing blue.
pub fn state_rgb(s: AgentState) -> [f32; 3] {
    match s {
        AgentState::Idle => [0.3, 0.8, 0.35],
        AgentState::Moving => [0.95, 0.35, 0.25],
        AgentState::Aligning => [0.95, 0.75, 0.2],
        AgentState::Stabilizing => [0.3, 0.6, 0.95],
    }
}

/// Returns an internal agent's colour (RGB): its state's when states are shown (debug drawing or a
/// replay), else [`ACTIVE_RGB`] or [`INACTIVE_RGB`].
pub fn agent_rgb(state: AgentState, show_state: bool, active: bool) -> [f32; 3] {
    if show_state {
        state_rgb(state)
    } else if active {
        ACTIVE_RGB
    } else {
        INACTIVE_RGB
    }
}

/// Returns an internal agent's transform as a MultiMesh stores it (a 3×4 matrix, row by row):
/// turned by `heading` about +Y, its centre
/// [`AGENT_CENTRE`] over ground point `p` (x, z).
pub fn agent_transform(p: Vec2, heading: f32) -> [f32; 12] {
    let (s, c) = heading.sin_cos();
    [c, 0.0, s, p.x, 0.0, 1.0, 0.0, AGENT_CENTRE, -s, 0.0, c, p.y]
}

/// Floats per agent in the MultiMesh buffer: a 3×4 transform and an RGBA colour.
pub const AGENT_FLOATS: usize = 16;

/// Writes every agent's MultiMesh row into `out` ([`AGENT_FLOATS`] per agent, as many agents as
/// both hold): [`agent_transform`] at its interpolated pose (or at `replay`'s sample) and
/// [`agent_rgb`] with alpha 1, in one pass.
pub fn write_agent_rows(
    squad: &Squad,
    replay: Option<&[Sample]>,
    show_state: bool,
    out: &mut [f32],
) {
    let mut row = |i: usize, p: Vec2, h: f32, state: AgentState| {
        if let Some(o) = out.get_mut(i * AGENT_FLOATS..(i + 1) * AGENT_FLOATS) {
            o[..12].copy_from_slice(&agent_transform(p, h));
            let [r, g, b] = agent_rgb(state, show_state, squad.is_active(i));
            o[12..].copy_from_slice(&[r, g, b, 1.0]);
        }
    };
    match replay {
        Some(samples) => {
            for (i, s) in samples.iter().enumerate().take(squad.len()) {
                row(i, s.pos, s.heading, s.state);
            }
        }
        None => squad.for_each_interpolated(|i, p, h| row(i, p, h, squad.state(i))),
    }
}

/// Returns the baseline's segment as drawn: through its point along its direction, twice the
/// spread's standard deviation plus a metre either side.
pub fn baseline_segment(b: &Baseline) -> (Vec2, Vec2) {
    let half = b.major.sqrt() * 2.0 + 1.0;
    (b.point - b.direction * half, b.point + b.direction * half)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat3, Vec3};

    #[test]
    fn an_agent_transform_is_its_heading_about_y_at_its_ground_point() {
        let h = 0.6f32;
        let t = agent_transform(Vec2::new(3.0, -2.0), h);
        // Rows of the basis times a vector: the same as Godot's rotation about +Y by `h`.
        let basis = Mat3::from_cols(
            Vec3::new(t[0], t[4], t[8]),
            Vec3::new(t[1], t[5], t[9]),
            Vec3::new(t[2], t[6], t[10]),
        );
        let want = Mat3::from_rotation_y(h);
        for (a, b) in [(basis.x_axis, want.x_axis), (basis.z_axis, want.z_axis)] {
            assert!((a - b).length() < 1e-6, "{a} vs {b}");
        }
        assert_eq!([t[3], t[7], t[11]], [3.0, AGENT_CENTRE, -2.0]);
    }

    #[test]
    fn the_rows_are_each_agents_transform_and_colour_as_drawn_one_by_one() {
        use crate::formation::{FormationDef, SquadConfig};
        let mut squad = Squad::new(40, true, SquadConfig::default());
        let def = FormationDef::from_ron("(shape: Column(files: 5), spacing: 1.2)").unwrap();
        squad.form(&def).unwrap();
        for i in 0..squad.len() {
            squad.place(
                i,
                Vec2::new(i as f32 * 0.3, -(i as f32)),
                i as f32 * 0.7 - 3.0,
            );
        }
        squad.set_active(7, false);
        squad.set_recording(8);
        squad.dress();
        // Half-way between ticks, so the poses are blended.
        for _ in 0..10 {
            squad.advance(1.0 / 60.0);
        }
        squad.advance(0.5 / 60.0);
        let n = squad.len();
        for show_state in [false, true] {
            let mut rows = vec![f32::NAN; n * AGENT_FLOATS];
            write_agent_rows(&squad, None, show_state, &mut rows);
            let replay = squad
                .recorder()
                .and_then(|r| r.frame(3))
                .map(|(_, s)| s.to_vec());
            let mut replayed = vec![f32::NAN; n * AGENT_FLOATS];
            write_agent_rows(&squad, replay.as_deref(), show_state, &mut replayed);
            for i in 0..n {
                let (p, h) = squad.interpolated(i);
                let [r, g, b] = agent_rgb(squad.state(i), show_state, squad.is_active(i));
                let mut want = agent_transform(p, h).to_vec();
                want.extend([r, g, b, 1.0]);
                let got = &rows[i * AGENT_FLOATS..(i + 1) * AGENT_FLOATS];
                assert_eq!(
                    got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    "agent {i}"
                );
                let s = replay.as_ref().unwrap()[i];
                let [r, g, b] = agent_rgb(s.state, show_state, squad.is_active(i));
                let mut want = agent_transform(s.pos, s.heading).to_vec();
                want.extend([r, g, b, 1.0]);
                assert_eq!(
                    &replayed[i * AGENT_FLOATS..(i + 1) * AGENT_FLOATS],
                    &want[..],
                    "replayed agent {i}"
                );
            }
        }
        // A buffer too short for the squad takes the agents it holds.
        let mut short = vec![0.0; 3 * AGENT_FLOATS];
        write_agent_rows(&squad, None, false, &mut short);
        assert_eq!(short[2 * AGENT_FLOATS + 3], squad.interpolated(2).0.x);
    }

    #[test]
    fn colours_show_the_state_only_when_asked() {
        let states = [
            AgentState::Idle,
            AgentState::Moving,
            AgentState::Aligning,
            AgentState::Stabilizing,
        ];
        for (i, a) in states.iter().enumerate() {
            for b in &states[i + 1..] {
                assert_ne!(state_rgb(*a), state_rgb(*b), "{a:?} and {b:?} look alike");
            }
            assert_eq!(agent_rgb(*a, true, false), state_rgb(*a));
            assert_eq!(agent_rgb(*a, false, true), ACTIVE_RGB);
            assert_eq!(agent_rgb(*a, false, false), INACTIVE_RGB);
        }
    }

    #[test]
    fn the_baseline_is_drawn_two_deviations_and_a_metre_either_side() {
        let b = Baseline {
            direction: Vec2::X,
            point: Vec2::new(1.0, 2.0),
            major: 4.0,
            minor: 0.1,
        };
        assert_eq!(
            baseline_segment(&b),
            (Vec2::new(-4.0, 2.0), Vec2::new(6.0, 2.0))
        );
    }

    #[test]
    fn a_facing_tick_points_along_the_heading() {
        let (a, b) = facing_tick(Vec2::new(1.0, 1.0), 0.0);
        assert_eq!(a, Vec2::new(1.0, 1.0));
        assert!(
            (b - Vec2::new(1.0, 1.0 - PREVIEW_FACING)).length() < 1e-6,
            "0 faces −Z"
        );
        let (_, b) = facing_tick(Vec2::ZERO, core::f32::consts::FRAC_PI_2);
        assert!(
            (b - Vec2::new(-PREVIEW_FACING, 0.0)).length() < 1e-6,
            "a quarter turn left faces −X"
        );
    }
}
