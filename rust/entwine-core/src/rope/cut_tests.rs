//! Swept cuts against geometry worked out here: a cutter cuts where the path it took between two
//! ticks crosses the rope, a turn swept as a turn however large, and never where it did not go.

use super::gather::CutterMemory;
use super::*;
use crate::kit::Pose;
use glam::{Quat, Vec2};

const DT: f32 = 1.0 / 60.0;

/// A rope of 12 points hung plumb from `anchor` and left to settle.
fn hanging(anchor: Vec3) -> Rope {
    let mut rope = Rope::new(32, 12, RopeParams::default(), anchor, Vec3::NEG_Y);
    let empty = World::with_capacity(1);
    for _ in 0..60 {
        let _ = rope.step(DT, anchor, EndAttachment::Free, &empty);
    }
    rope
}

/// A one-sided blade 0.6 m long, 2 cm thick and 10 cm tall on the vertical axle through `pivot`, at
/// `angle` about +Y (from +X toward −Z).
fn blade_pose(pivot: Vec3, angle: f32) -> Pose {
    let turn = Quat::from_rotation_y(angle);
    Pose::new(pivot + turn * Vec3::new(0.3, 0.0, 0.0), turn)
}

fn blade_shape() -> Shape {
    Shape::Box {
        half_extents: Vec3::new(0.3, 0.05, 0.01),
    }
}

fn cutter(pose: Pose, shape: Shape, motion: Motion) -> World {
    let mut world = World::with_capacity(1);
    assert!(world.push(Collider {
        motion,
        ..Collider::still(pose, shape, false, true)
    }));
    world
}

/// The horizontal distance (m) from `p` to the vertical line through `line`.
fn off_line(p: Vec3, line: Vec3) -> f32 {
    Vec2::new(p.x - line.x, p.z - line.z).length()
}

#[test]
fn a_turn_of_more_than_three_radians_in_one_step_cuts_where_it_crosses() {
    // The rope hangs 0.4 m from the axle at angle 0. The blade turns from −1.6 rad by `step`
    // (3.3 to 5.5 rad, past half a revolution): through the rope. The shortest turn between the
    // same two poses goes the other way and misses it; the spin picks the winding.
    let pivot = Vec3::new(0.0, 3.0, 0.0);
    let anchor = Vec3::new(0.4, 5.0, 0.0);
    for step in [3.3f32, 4.2, 5.5] {
        let (from, to) = (blade_pose(pivot, -1.6), blade_pose(pivot, -1.6 + step));
        let spin = Vec3::new(0.0, step / DT, 0.0);
        let mut rope = hanging(anchor);
        let shortest = cutter(
            to,
            blade_shape(),
            Motion::along(from, to, pivot, Vec3::ZERO, DT),
        );
        let missed = rope
            .clone()
            .step(DT, anchor, EndAttachment::Free, &shortest)
            .cut;
        assert!(missed.is_none(), "{step} rad the shortest way: {missed:?}");
        let world = cutter(to, blade_shape(), Motion::along(from, to, pivot, spin, DT));
        let cut = rope.step(DT, anchor, EndAttachment::Free, &world).cut;
        let cut = cut.unwrap_or_else(|| panic!("{step} rad: no cut"));
        assert_eq!(cut.reason, CutReason::Cutter);
        let radius = RopeParams::default().radius;
        assert!(
            off_line(cut.position, anchor) <= radius + 0.01,
            "{step}: {cut:?}"
        );
        assert!(
            (cut.position.y - 3.0).abs() <= 0.05 + radius + 0.01,
            "{step}: {cut:?}"
        );
    }
}

#[test]
fn a_blade_turning_away_never_cuts() {
    // At rest 0.6 rad past the rope (0.23 m clear of it), then spun away at 30 to 1000 rad/s and
    // stopped once it has turned 5 rad (short of coming round to the rope). Each tick the memory
    // gives the path since the last: the tick it is set spinning it has not moved yet.
    let pivot = Vec3::new(0.0, 3.0, 0.0);
    let anchor = Vec3::new(0.4, 5.0, 0.0);
    for rate in [30.0f32, 120.0, 200.0, 290.0] {
        let mut rope = hanging(anchor);
        let mut memory = CutterMemory::default();
        let mut angle = 0.6f32;
        let mut spin = 0.0f32;
        for tick in 0..12 {
            // The script sets the spin in tick 2 and stops the blade once it turned 5 rad;
            // the physics step after each tick turns it by the spin it had then.
            if tick == 2 {
                spin = rate;
            }
            if angle + spin * DT > 0.6 + 5.0 {
                spin = 0.0;
            }
            memory.begin();
            let at = blade_pose(pivot, angle);
            let motion = memory.path((1, 0), at, pivot, Some(Vec3::new(0.0, spin, 0.0)), DT);
            memory.finish();
            let cut = rope
                .step(
                    DT,
                    anchor,
                    EndAttachment::Free,
                    &cutter(at, blade_shape(), motion),
                )
                .cut;
            assert!(cut.is_none(), "{rate} rad/s, tick {tick}: {cut:?}");
            angle += spin * DT;
        }
        assert!(angle >= 0.6 + 3.3, "{rate} rad/s turned {angle}");
    }
}

#[test]
fn a_box_launched_away_never_cuts() {
    // A 10 cm box at rest 10 cm beside the rope, launched away at 20 to 1000 m/s.
    let anchor = Vec3::new(0.0, 5.0, 0.0);
    let shape = Shape::Box {
        half_extents: Vec3::splat(0.05),
    };
    for speed in [20.0f32, 60.0, 1000.0] {
        let mut rope = hanging(anchor);
        let mut memory = CutterMemory::default();
        let mut x = 0.03 + 0.1 + 0.05;
        let mut v = 0.0;
        for tick in 0..6 {
            if tick == 2 {
                v = speed;
            }
            memory.begin();
            let at = Pose::new(Vec3::new(x, 3.5, 0.0), Quat::IDENTITY);
            let motion = memory.path((1, 0), at, at.position, Some(Vec3::ZERO), DT);
            memory.finish();
            let cut = rope
                .step(
                    DT,
                    anchor,
                    EndAttachment::Free,
                    &cutter(at, shape.clone(), motion),
                )
                .cut;
            assert!(cut.is_none(), "{speed} m/s, tick {tick}: {cut:?}");
            x += v * DT;
        }
    }
}

/// Steps a settled rope hanging at the origin while a 1 cm ball flies along +X at `speed` at height
/// 3.5 m and `z` off the rope's line, starting `phase` of a tick's flight past a tick boundary
/// before the rope; returns the tick whose path first touches the rope (`usize::MAX` when it passes
/// clear) and the cut (tick, cut), if any.
fn bullet_run(speed: f32, phase: f32, z: f32) -> (usize, Option<(usize, Cut)>) {
    let anchor = Vec3::new(0.0, 5.0, 0.0);
    let mut rope = hanging(anchor);
    let mut memory = CutterMemory::default();
    let flight = speed * DT;
    let x0 = -(3.0 + phase) * flight;
    let mut crossed = usize::MAX;
    // The ball touches the rope once its centre is within their radii of the rope's line.
    let touch = RopeParams::default().radius + 0.01;
    for tick in 0..8 {
        let x = x0 + flight * tick as f32;
        if crossed == usize::MAX && x > -touch && z.abs() < touch {
            crossed = tick;
        }
        memory.begin();
        let at = Pose::new(Vec3::new(x, 3.5, z), Quat::IDENTITY);
        let motion = memory.path((9, 0), at, at.position, Some(Vec3::ZERO), DT);
        memory.finish();
        let world = cutter(at, Shape::Sphere { radius: 0.01 }, motion);
        if let Some(cut) = rope.step(DT, anchor, EndAttachment::Free, &world).cut {
            return (crossed, Some((tick, cut)));
        }
    }
    (crossed, None)
}

#[test]
fn a_fast_bullet_cuts_at_the_crossing_in_the_step_it_crosses() {
    let radius = RopeParams::default().radius;
    for speed in [10.0f32, 90.0, 150.0, 400.0, 1000.0] {
        for k in 0..10 {
            let phase = (k as f32 + 0.5) / 10.0;
            let (crossed, cut) = bullet_run(speed, phase, 0.0);
            let (tick, cut) = cut.unwrap_or_else(|| panic!("{speed} m/s, phase {phase}: no cut"));
            assert_eq!(tick, crossed, "{speed} m/s, phase {phase}");
            let crossing = Vec3::new(0.0, 3.5, 0.0);
            assert!(
                (cut.position - crossing).length() <= radius + 0.01,
                "{speed} m/s, phase {phase}: {cut:?}"
            );
        }
    }
}

#[test]
fn a_cutter_passing_a_centimetre_beside_the_rope_never_cuts() {
    let radius = RopeParams::default().radius;
    // A ball whose surface passes 1 cm from the rope's.
    for speed in [10.0f32, 150.0, 1000.0] {
        for k in 0..10 {
            let phase = (k as f32 + 0.5) / 10.0;
            let (_, cut) = bullet_run(speed, phase, radius + 0.01 + 0.01);
            assert!(cut.is_none(), "{speed} m/s, phase {phase}: {cut:?}");
        }
    }
    // A blade whose far corner passes 1 cm outside the rope, turning 3.3 rad a step.
    let pivot = Vec3::new(0.0, 3.0, 0.0);
    let corner = Vec2::new(0.6, 0.01).length();
    let anchor = Vec3::new(corner + radius + 0.01, 5.0, 0.0);
    let mut rope = hanging(anchor);
    let mut memory = CutterMemory::default();
    let spin = Vec3::new(0.0, 3.3 / DT, 0.0);
    for tick in 0..12 {
        memory.begin();
        let at = blade_pose(pivot, 0.2 + 3.3 * tick as f32);
        let motion = memory.path((1, 0), at, pivot, Some(spin), DT);
        memory.finish();
        let cut = rope
            .step(
                DT,
                anchor,
                EndAttachment::Free,
                &cutter(at, blade_shape(), motion),
            )
            .cut;
        assert!(cut.is_none(), "tick {tick}: {cut:?}");
    }
}

#[test]
fn cut_along_cuts_where_the_path_first_meets_the_rope() {
    // A line pinned at both ends, sagging between x = 0 and x = 3 at height 3.
    let (a, b) = (Vec3::new(0.0, 3.0, 0.0), Vec3::new(3.0, 3.0, 0.0));
    let params = RopeParams {
        segment_length: 0.35,
        ..RopeParams::default()
    };
    let mut settled = Rope::new(32, 12, params, a, Vec3::X);
    let empty = World::with_capacity(1);
    for _ in 0..240 {
        let _ = settled.step(DT, a, EndAttachment::Pinned(b), &empty);
    }
    let lowest = settled
        .points()
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    assert!(lowest < 2.8, "the rope sags: lowest {lowest}");
    // A shot straight down at x = 1.5 cuts at the middle, on the rope.
    let mut rope = settled.clone();
    let cut = rope
        .cut_along(Vec3::new(1.5, 5.0, 0.0), Vec3::new(1.5, 0.0, 0.0), 0.0)
        .expect("cut");
    assert!((cut.position.x - 1.5).abs() < 0.01, "{cut:?}");
    assert!((cut.position.y - lowest).abs() < 0.05, "{cut:?}");
    assert_eq!(rope.point_count(), cut.index + 1);
    // A level shot just under the anchors crosses the rope twice: the first crossing from where it
    // starts is cut, from either side.
    let y = 2.95;
    let mut left = settled.clone();
    let cut = left
        .cut_along(Vec3::new(-1.0, y, 0.0), Vec3::new(4.0, y, 0.0), 0.0)
        .expect("cut from the left");
    assert!(cut.position.x < 1.0, "{cut:?}");
    let mut right = settled.clone();
    let cut = right
        .cut_along(Vec3::new(4.0, y, 0.0), Vec3::new(-1.0, y, 0.0), 0.0)
        .expect("cut from the right");
    assert!(cut.position.x > 2.0, "{cut:?}");
    // A shot whose capsule passes 1 cm beside the rope, or stops 1 cm short of it, does not cut.
    let mut rope = settled.clone();
    let beside = params.radius + 0.05 + 0.01;
    let missed = rope.cut_along(
        Vec3::new(1.5, 5.0, beside),
        Vec3::new(1.5, 0.0, beside),
        0.05,
    );
    assert!(missed.is_none(), "{missed:?}");
    let short = lowest - params.radius - 0.01;
    let missed = rope.cut_along(Vec3::new(1.5, 0.0, 0.0), Vec3::new(1.5, short, 0.0), 0.0);
    assert!(missed.is_none(), "{missed:?}");
    assert_eq!(rope.point_count(), settled.point_count());
    // Bad input cuts nothing.
    assert!(rope.cut_along(Vec3::NAN, Vec3::ZERO, 0.1).is_none());
    assert!(rope.cut_along(Vec3::ZERO, Vec3::X, f32::NAN).is_none());
}
