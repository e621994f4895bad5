//! The core share of `cargo xtask bench formation`, without Godot: a squad of 10,000 agents in a
//! column of 100 files, scattered up to 0.5 m off their slots, forming up and then marching at
//! 1.4 m/s, one `Squad::advance` per 1/60 s tick.
//!
//! With `tree` after TICKS, the squad is the one `cargo xtask bench formation` times in the tree
//! instead: scattered the same way, it marches at once, without dressing first, and is timed after
//! 10 s of marching. With `line`, it is the bench's second squad in the tree: it forms up from where
//! new agents stand (the default line formation, 12 km long) straight into the march, and is timed
//! after 10 s of marching, still catching up with its slots (its soft walls use the spatial hash).
//!
//! `cargo run --release -p entwine-core --example squad_step [TICKS] [tree|line]` prints the median and spread
//! of the time per tick over rounds of TICKS ticks (default 120), as wall time and, on Linux, as the
//! thread's own CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`); under `perf record` it shows where a
//! squad's time goes.

mod common;

use std::time::Instant;

use common::{cpu_ns, frames_arg, median_and_spread};

use entwine_core::formation::{FormationDef, Squad, SquadConfig};
use glam::Vec2;

const AGENTS: usize = 10_000;
const ROUNDS: usize = 7;
const DT: f32 = 1.0 / 60.0;

/// A small deterministic generator for the scatter (xorshift).
fn next(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
}

fn main() {
    let ticks = frames_arg(120);
    let mut squad = Squad::new(AGENTS, true, SquadConfig::default());
    let column = FormationDef::from_ron("(shape: Column(files: 100), spacing: 1.2)")
        .expect("the column parses");
    squad.form(&column).expect("the column seats every agent");
    let mode = std::env::args().nth(2);
    let (tree, line) = (
        mode.as_deref() == Some("tree"),
        mode.as_deref() == Some("line"),
    );
    let mut rng = 3u64;
    for i in 0..if line { 0 } else { AGENTS } {
        let slot = squad.slot_of(i).expect("seated");
        let off = Vec2::new(next(&mut rng), next(&mut rng));
        let heading = if tree {
            0.0
        } else {
            next(&mut rng) * std::f32::consts::TAU
        };
        squad.place(i, squad.slot_pos(slot) + off, heading);
    }
    // Both squads of the bench's tree march from the start; advance()'s first dresses.
    let marching = tree || line;
    if marching {
        squad.march(Vec2::new(0.0, -1.0), 1.4);
        for _ in 0..600 {
            squad.advance(DT);
        }
    } else {
        squad.dress();
    }
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round == 1 && !marching {
            squad.march(Vec2::new(0.0, -1.0), 1.4);
        }
        let (t0, c0) = (Instant::now(), cpu_ns());
        for _ in 0..ticks {
            squad.advance(DT);
        }
        wall.push(t0.elapsed().as_secs_f64() * 1e3 / ticks as f64);
        if let (Some(a), Some(b)) = (c0, cpu_ns()) {
            cpu.push((b - a) as f64 / 1e6 / ticks as f64);
        }
    }
    let (m, lo, hi) = median_and_spread(wall);
    print!("squad_step: {AGENTS} agents, wall {m:.3} ms/tick (rounds {lo:.3}-{hi:.3})");
    if cpu.len() == ROUNDS {
        let (m, lo, hi) = median_and_spread(cpu);
        print!(", thread CPU {m:.3} ms/tick (rounds {lo:.3}-{hi:.3})");
    }
    println!();
}
