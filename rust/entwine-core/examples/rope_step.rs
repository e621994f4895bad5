//! The core share of `cargo xtask bench rope`, without Godot: 1,000 ropes × 32 points × 8 iterations
//! swung around 1 m circles at about 6 m/s, stepped in one batch per 1/60 s tick, no colliders.
//!
//! `cargo run --release -p entwine-core --example rope_step [FRAMES] [IDLE_MS]` prints the median and
//! spread of the simulation time per tick over rounds of FRAMES ticks (default 60) after a second of
//! warm-up, with IDLE_MS milliseconds of sleep before each tick (default 0; a game's frame leaves
//! the processors idle between ticks, and a thread asleep takes time to wake),
//! as wall time and, on Linux, as the thread's own CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`: what a
//! machine shared with other work does not inflate); under `perf record` it shows where a rope's
//! time goes.

mod common;

use common::{
    cpu_note, frames_arg, median_and_spread, paced_rounds, points_checksum, swung_anchor, Ropes,
};

use entwine_core::rope::batch::StepInput;
use entwine_core::rope::{EndAttachment, Rope, RopeParams};
use glam::Vec3;

const ROPES: usize = 1000;
const POINTS: usize = 32;
const ITERATIONS: u32 = 8;
const ROUNDS: usize = 7;
const DT: f32 = 1.0 / 60.0;

/// Returns rope `i`'s anchor at tick `frame` (see [`swung_anchor`]).
fn anchor(i: usize, frame: usize) -> Vec3 {
    swung_anchor(i, frame, DT)
}

fn main() {
    let frames = frames_arg(60);
    let params = RopeParams {
        iterations: ITERATIONS,
        ..RopeParams::default()
    };
    let mut ropes = Ropes::new(
        (0..ROPES)
            .map(|i| Rope::new(POINTS, POINTS, params, anchor(i, 0), Vec3::NEG_Y))
            .collect(),
    );
    let mut frame = 0;
    let mut tick = || {
        frame += 1;
        let input = |i| StepInput {
            dt: DT,
            anchor: anchor(i, frame),
            end: EndAttachment::Free,
        };
        ropes.tick(input, |_, _| {});
    };
    for _ in 0..60 {
        tick();
    }
    let idle_ms: f64 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.0);
    let idle = std::time::Duration::from_secs_f64(idle_ms.max(0.0) / 1e3);
    let (rounds, cpu_rounds) = paced_rounds(ROUNDS, frames, idle, tick);
    let substeps: f32 = ropes
        .ropes
        .iter()
        .map(|r| r.as_ref().map_or(0, |r| r.substeps_in_use()) as f32)
        .sum::<f32>()
        / ROPES as f32;
    let checksum = points_checksum(&ropes.ropes);
    let (wall, lo, hi) = median_and_spread(rounds);
    let cpu = cpu_note(cpu_rounds, ROUNDS, "ms/tick", 3);
    println!(
        "rope_step: {ROPES} ropes x {POINTS} points x {ITERATIONS} iterations, {idle_ms} ms idle before each tick: wall {wall:.3} ms/tick (rounds {lo:.3}-{hi:.3}){cpu}, {substeps:.2} substeps in use on average, checksum {checksum:.6}"
    );
}
