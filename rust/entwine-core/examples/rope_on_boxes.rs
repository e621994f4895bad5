//! The core share of `cargo xtask bench rope`'s `resting on boxes` line, without Godot: 200 default
//! ropes (12 points, 4 iterations), each hanging onto a 1 m static box of its own whose top is 3 m
//! under its anchor, stepped in one batch per 1/60 s tick with the box in each rope's world (as the
//! rope server's shared gather gives it).
//!
//! `cargo run --release -p entwine-core --example rope_on_boxes [FRAMES]` prints the median and
//! spread of the step's time per tick and per rope over rounds of FRAMES ticks (default 120) after
//! two seconds of settling, as wall time and, on Linux, the thread's own CPU time, and a checksum of
//! the points (the same code gives the same checksum) and how many ropes sleep at the end (a rope
//! draped over its box creeps off its edge for a while before it is still enough to sleep); under
//! `perf record` it shows where a resting rope's time goes.

mod common;

use common::{cpu_note, frames_arg, home, median_and_spread, points_checksum, timed_rounds, Ropes};

use entwine_core::kit::Pose;
use entwine_core::rope::batch::StepInput;
use entwine_core::rope::{Collider, EndAttachment, Rope, RopeParams, Shape};
use glam::{Quat, Vec3};

const ROPES: usize = 200;
const POINTS: usize = 12;
const CAPACITY: usize = 32;
const ROUNDS: usize = 7;
const DT: f32 = 1.0 / 60.0;

/// The box under rope `i`, as the gather hands it over.
fn its_box(i: usize) -> Collider {
    Collider::still(
        Pose::new(home(i) + Vec3::new(0.0, -3.5, 0.0), Quat::IDENTITY),
        Shape::Box {
            half_extents: Vec3::splat(0.5),
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
            .map(|i| Rope::new(CAPACITY, POINTS, params, home(i), Vec3::NEG_Y))
            .collect(),
    );
    let mut tick = || {
        let input = |i| StepInput {
            dt: DT,
            anchor: home(i),
            end: EndAttachment::Free,
        };
        ropes.tick(input, |i, world| {
            world.push(its_box(i));
        });
    };
    for _ in 0..120 {
        tick();
    }
    let (rounds, cpu_rounds) = timed_rounds(ROUNDS, frames, tick);
    // Per rope, in µs.
    let per_rope =
        |v: Vec<f64>| -> Vec<f64> { v.iter().map(|ms| ms * 1e3 / ROPES as f64).collect() };
    let (rounds, cpu_rounds) = (per_rope(rounds), per_rope(cpu_rounds));
    let checksum = points_checksum(&ropes.ropes);
    let asleep = ropes
        .ropes
        .iter()
        .flatten()
        .filter(|r| r.is_sleeping())
        .count();
    let (wall, lo, hi) = median_and_spread(rounds);
    let cpu = cpu_note(cpu_rounds, ROUNDS, "us/rope", 2);
    println!(
        "rope_on_boxes: {ROPES} ropes x {POINTS} points resting on boxes: wall {wall:.2} us/rope per tick (rounds {lo:.2}-{hi:.2}){cpu}, checksum {checksum:.6}, {asleep} asleep at the end"
    );
}
