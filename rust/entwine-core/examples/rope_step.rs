//! The core share of `cargo xtask bench rope`, without Godot: 1,000 ropes × 32 points × 8 iterations
//! swung around 1 m circles at about 6 m/s, stepped in one batch per 1/60 s tick, no colliders.
//!
//! `cargo run --release -p entwine-core --example rope_step [FRAMES]` prints the median and spread of
//! the simulation time per tick over rounds of FRAMES ticks (default 60) after a second of warm-up,
//! as wall time and, on Linux, as the thread's own CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`: what a
//! machine shared with other work does not inflate); under `perf record` it shows where a rope's
//! time goes.

mod common;

use std::time::Instant;

use common::{cpu_note, cpu_ns, frames_arg, home, median_and_spread, points_checksum};

use entwine_core::rope::batch::{RopeBatch, StepInput};
use entwine_core::rope::{EndAttachment, Rope, RopeParams, World};
use glam::Vec3;

const ROPES: usize = 1000;
const POINTS: usize = 32;
const ITERATIONS: u32 = 8;
const ROUNDS: usize = 7;
const DT: f32 = 1.0 / 60.0;

fn anchor(i: usize, frame: usize) -> Vec3 {
    let t = frame as f32 * DT;
    home(i) + Vec3::new((t * 6.0).cos(), 0.0, (t * 6.0).sin())
}

fn main() {
    let frames = frames_arg(60);
    let params = RopeParams {
        iterations: ITERATIONS,
        ..RopeParams::default()
    };
    let mut ropes: Vec<Option<Rope>> = (0..ROPES)
        .map(|i| Some(Rope::new(POINTS, POINTS, params, anchor(i, 0), Vec3::NEG_Y)))
        .collect();
    let mut worlds: Vec<World> = (0..ROPES).map(|_| World::with_capacity(32)).collect();
    let mut batch = RopeBatch::with_capacity(ROPES);
    let mut frame = 0;
    let mut tick = |frame: usize, ropes: &mut Vec<Option<Rope>>, worlds: &mut Vec<World>| {
        for (i, slot) in ropes.iter_mut().enumerate() {
            let input = StepInput {
                dt: DT,
                anchor: anchor(i, frame),
                end: EndAttachment::Free,
            };
            let rope = slot.take().expect("rope");
            batch.push(rope, core::mem::take(&mut worlds[i]), input, i);
        }
        batch.step();
        for e in batch.drain() {
            ropes[e.owner] = Some(e.rope);
            worlds[e.owner] = e.world;
        }
    };
    for _ in 0..60 {
        frame += 1;
        tick(frame, &mut ropes, &mut worlds);
    }
    let mut rounds = Vec::new();
    let mut cpu_rounds = Vec::new();
    for _ in 0..ROUNDS {
        let (t0, c0) = (Instant::now(), cpu_ns());
        for _ in 0..frames {
            frame += 1;
            tick(frame, &mut ropes, &mut worlds);
        }
        rounds.push(t0.elapsed().as_secs_f64() * 1000.0 / frames as f64);
        if let (Some(c0), Some(c1)) = (c0, cpu_ns()) {
            cpu_rounds.push((c1 - c0) as f64 / 1e6 / frames as f64);
        }
    }
    let substeps: f32 = ropes
        .iter()
        .map(|r| r.as_ref().map_or(0, Rope::substeps_in_use) as f32)
        .sum::<f32>()
        / ROPES as f32;
    let checksum = points_checksum(&ropes);
    let (wall, lo, hi) = median_and_spread(rounds);
    let cpu = cpu_note(cpu_rounds, ROUNDS, "ms/tick", 3);
    println!(
        "rope_step: {ROPES} ropes x {POINTS} points x {ITERATIONS} iterations: wall {wall:.3} ms/tick (rounds {lo:.3}-{hi:.3}){cpu}, {substeps:.2} substeps in use on average, checksum {checksum:.6}"
    );
}
