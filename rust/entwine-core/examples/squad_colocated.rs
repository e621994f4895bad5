//! A crowd spawned at one point: squads of 4,096 and 65,536 agents all standing on the anchor are
//! told to form a square column, and step at 60 Hz until they have formed up.
//!
//! Every agent starts in one cell of the soft walls' spatial hash, so a tick is linear in the
//! squad's size only because each agent examines at most `WALL_NEIGHBOURS` of its neighbours.
//!
//! `cargo run --release -p entwine-core --example squad_colocated [SECONDS] [AGENTS]` (AGENTS:
//! 4096 or 65536 runs that squad only) prints, per squad, one line beginning `bench `: the time per
//! tick (median and max) over the first SECONDS (default 3) of forming up next to its bound (2 ms
//! for 4,096 agents, 40 ms for 65,536), judged on the thread's own CPU time (wall time, also
//! printed, counts what other work on a shared machine takes); the time `form` took; the soft
//! walls' pairs examined in the first tick; and whether the squad formed up (settled: every
//! neighbour spacing within 5 cm, headings within 3°, every agent within its align threshold)
//! within its planned travel time plus the contract's settle time.

mod common;

use std::time::Instant;

use common::{cpu_ns, frames_arg, median_and_spread};

use entwine_core::formation::{FormationDef, Squad, SquadConfig, TICK, WALL_NEIGHBOURS};
use glam::Vec2;

/// The squads: agents, the column's files, the bound on a tick's median and max (ms).
const SQUADS: [(usize, usize, f64); 2] = [(4096, 64, 2.0), (65_536, 256, 40.0)];

/// What one squad's run measured.
struct Run {
    form_ms: f64,
    wall: Vec<f64>,
    cpu: Vec<f64>,
    first_pairs: u64,
    settle: Option<f32>,
    travel: f32,
    allowed: f32,
}

/// Spawns `n` agents at the origin, forms a column of `files` and steps until it settles (or its
/// travel time, the contract's settle time and 5 s more have passed), timing the first `timed`
/// ticks.
fn run(n: usize, files: usize, timed: usize) -> Run {
    let mut squad = Squad::new(n, true, SquadConfig::default());
    for i in 0..n {
        squad.place(i, Vec2::ZERO, 0.0);
    }
    let column = FormationDef::from_ron(&format!("(shape: Column(files: {files}))"))
        .expect("the column parses");
    let t0 = Instant::now();
    squad.form(&column).expect("the column seats every agent");
    let form_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (mut wall, mut cpu, mut first_pairs) = (Vec::new(), Vec::new(), 0);
    let (mut settle, mut travel, mut allowed) = (None, 0.0, 0.0);
    let mut tick = 0;
    loop {
        let (t0, c0) = (Instant::now(), cpu_ns());
        squad.step();
        if tick < timed {
            wall.push(t0.elapsed().as_secs_f64() * 1e3);
            if let (Some(a), Some(b)) = (c0, cpu_ns()) {
                cpu.push((b - a) as f64 / 1e6);
            }
        }
        let m = squad.metrics();
        if tick == 0 {
            first_pairs = squad.wall_pairs();
            travel = m.travel_time;
            allowed = travel + squad.config().contract_settle;
        }
        if m.settle_time >= 0.0 && settle.is_none() {
            settle = Some(m.settle_time);
        }
        tick += 1;
        let done = settle.is_some() || m.since_command > allowed + 5.0;
        if done && tick >= timed {
            break;
        }
    }
    Run {
        form_ms,
        wall,
        cpu,
        first_pairs,
        settle,
        travel,
        allowed,
    }
}

fn main() {
    let seconds = frames_arg(3);
    let timed = (seconds as f32 / TICK).round() as usize;
    let only: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    for (n, files, bound) in SQUADS {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let r = run(n, files, timed.max(1));
        let (median, _, max) = median_and_spread(r.wall.clone());
        // The verdict is on the thread's CPU time where there is one: wall time also counts the
        // moments other work on a shared machine takes the processor.
        let (judged, cpu) = if r.cpu.len() == r.wall.len() {
            let (m, _, hi) = median_and_spread(r.cpu.clone());
            (
                (m, hi),
                format!("thread CPU {m:.3} ms/tick median, {hi:.3} max"),
            )
        } else {
            ((median, max), "no thread CPU clock".to_string())
        };
        let within = if judged.0 <= bound && judged.1 <= bound {
            "within"
        } else {
            "OVER"
        };
        let formed = match r.settle {
            Some(t) if t <= r.allowed => format!("formed up: yes, settled at {t:.2} s"),
            Some(t) => format!("formed up: LATE, settled at {t:.2} s"),
            None => "formed up: NO".to_string(),
        };
        println!(
            "bench squad_colocated {n} agents at one point, first {seconds} s: {cpu} (bound \
             {bound} ms: {within}); wall {median:.3} ms/tick median, {max:.3} max; form {:.1} ms; \
             first tick examined {} wall pairs (cap {}); {formed} (travel {:.2} s, allowed {:.2} s)",
            r.form_ms,
            r.first_pairs,
            WALL_NEIGHBOURS * n,
            r.travel,
            r.allowed,
        );
    }
}
