//! The core share of `cargo xtask bench rope`'s `the seed's game` line, without Godot: 100 default
//! ropes (12 points of 0.3 m, 4 iterations: the seed's rope) hanging from runners' hands 1 m above a
//! 120 m floor (a static box, in each rope's world as the rope server's shared gather gives it), the
//! runners going round 15 m circles at 6 m/s so that each rope trails behind its hand and drags
//! along the floor, stepped in one batch per 1/60 s tick.
//!
//! `cargo run --release -p entwine-core --example rope_dragged [FRAMES]` prints the median and spread
//! of the step's time per tick for all the ropes over rounds of FRAMES ticks (default 120) after two
//! seconds of warm-up, as wall time and, on Linux, the thread's own CPU time, with a checksum of the
//! points (the same code gives the same checksum) and the share of the points lying on the floor;
//! under `perf record` it shows where a dragged rope's time goes.

mod common;

use common::{cpu_note, frames_arg, median_and_spread, points_checksum, timed_rounds, Ropes};

use entwine_core::kit::Pose;
use entwine_core::rope::batch::StepInput;
use entwine_core::rope::{Collider, EndAttachment, Rope, RopeParams, Shape};
use glam::{Quat, Vec3};

const ROPES: usize = 100;
const POINTS: usize = 12;
const CAPACITY: usize = 32;
const ROUNDS: usize = 7;
const DT: f32 = 1.0 / 60.0;

/// Where runner `i`'s hand is at tick `frame` (as `rope_bench.gd`'s `_seed_runner`).
fn hand(i: usize, frame: usize) -> Vec3 {
    let angle = frame as f32 * DT * 0.4 + i as f32 * 0.7;
    let home = Vec3::new((i % 10) as f32 * 4.0, 1.0, (i / 10) as f32 * 4.0);
    home + Vec3::new(15.0 * angle.cos(), 0.0, 15.0 * angle.sin())
}

/// The floor: 120 m square, 1 m thick, its top at y = 0.
fn floor() -> Collider {
    Collider::still(
        Pose::new(Vec3::new(18.0, -0.5, 18.0), Quat::IDENTITY),
        Shape::Box {
            half_extents: Vec3::new(60.0, 0.5, 60.0),
        },
        true,
        false,
    )
}

fn main() {
    let frames = frames_arg(120);
    let params = RopeParams::default();
    let mut ropes = Ropes::new(
        (0..ROPES)
            .map(|i| Rope::new(CAPACITY, POINTS, params, hand(i, 0), Vec3::NEG_Y))
            .collect(),
    );
    let mut frame = 0;
    let mut tick = || {
        let input = |i| StepInput {
            dt: DT,
            anchor: hand(i, frame),
            end: EndAttachment::Free,
        };
        ropes.tick(input, |_, world| {
            world.push(floor());
        });
        frame += 1;
    };
    for _ in 0..120 {
        tick();
    }
    let (rounds, cpu_rounds) = timed_rounds(ROUNDS, frames, tick);
    let checksum = points_checksum(&ropes.ropes);
    let points: Vec<Vec3> = ropes
        .ropes
        .iter()
        .flatten()
        .flat_map(|r| r.points().to_vec())
        .collect();
    let on_floor = points.iter().filter(|p| p.y < params.radius + 0.02).count();
    let (wall, lo, hi) = median_and_spread(rounds);
    let cpu = cpu_note(cpu_rounds, ROUNDS, "ms per tick", 3);
    println!(
        "rope_dragged: {ROPES} ropes x {POINTS} points dragged over a floor: wall {wall:.3} ms per tick for all (rounds {lo:.3}-{hi:.3}){cpu}, checksum {checksum:.6}, {:.0} % of the points on the floor",
        100.0 * on_floor as f64 / points.len() as f64
    );
}
