//! The core share of a moving rope's tube in `cargo xtask bench rope`'s `moving` line, without
//! Godot: 200 default ropes (12 of 32 points, 4 iterations, 8 sides, smoothing 3) carried around
//! 1 m circles, each tick's tube built around the points and encoded into the renderer's vertex
//! bytes (Godot's layout: 12-byte positions, then octahedral normals and tangents, 8 bytes a
//! vertex). Only the tube is timed, not the rope's step.
//!
//! `cargo run --release -p entwine-core --example tube_build [FRAMES]` prints the median and spread
//! of the tube's time per rope over rounds of FRAMES ticks (default 120), as wall time and, on Linux,
//! as the thread's own CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), for the renderer's path
//! (`Tube::frame` then `Tube::write_vertices` into the bytes) and, in alternate rounds, for the
//! path through the tube's vertex arrays (`Tube::build_upto`, then the bytes encoded from them, as
//! the glue did before).

mod common;

use std::time::Instant;

use common::{cpu_ns, frames_arg, median_and_spread, swung_anchor};

use entwine_core::rope::tube::{
    octahedron_encode, octahedron_tangent_encode, unorm16, VertexLayout,
};
use entwine_core::rope::{EndAttachment, Rope, RopeParams, Tube, World};
use glam::Vec3;

const ROPES: usize = 200;
const ROUNDS: usize = 9;
const DT: f32 = 1.0 / 60.0;
const LAYOUT: VertexLayout = VertexLayout {
    position_stride: 12,
    normal_stride: 8,
    normal_offset: 0,
    tangent_offset: Some(4),
};

/// The glue's encoding before `Tube::write_vertices`: from the tube's vertex arrays.
fn encode_arrays(t: &Tube, positions: &mut [u8], normals: &mut [u8]) {
    let ring = t.sides() + 1;
    let n = t.written_rings() * ring;
    for (v, p) in positions.chunks_exact_mut(12).zip(&t.positions()[..n]) {
        v[0..4].copy_from_slice(&p.x.to_le_bytes());
        v[4..8].copy_from_slice(&p.y.to_le_bytes());
        v[8..12].copy_from_slice(&p.z.to_le_bytes());
    }
    for (r, out) in normals
        .chunks_exact_mut(8 * ring)
        .take(t.written_rings())
        .enumerate()
    {
        let vertices = r * ring..(r + 1) * ring;
        let [u, v] = octahedron_tangent_encode(t.tangents()[vertices.start], 1.0);
        let (u, v) = (unorm16(u).to_le_bytes(), unorm16(v).to_le_bytes());
        let tangent = [u[0], u[1], v[0], v[1]];
        for (vertex, normal) in out.chunks_exact_mut(8).zip(&t.normals()[vertices]) {
            let [u, v] = octahedron_encode(*normal);
            vertex[0..2].copy_from_slice(&unorm16(u).to_le_bytes());
            vertex[2..4].copy_from_slice(&unorm16(v).to_le_bytes());
            vertex[4..8].copy_from_slice(&tangent);
        }
    }
}

struct Shown {
    rope: Rope,
    tube: Tube,
    positions: Vec<u8>,
    normals: Vec<u8>,
    live: usize,
}

/// Returns rope `i`'s anchor at tick `frame` (see [`swung_anchor`]).
fn anchor(i: usize, frame: usize) -> Vec3 {
    swung_anchor(i, frame, DT)
}

fn main() {
    let frames = frames_arg(120);
    let params = RopeParams::default();
    let world = World::with_capacity(0);
    let mut ropes: Vec<Shown> = (0..ROPES)
        .map(|i| {
            let tube = Tube::new(32, 8, 3);
            let n = tube.vertex_count();
            Shown {
                rope: Rope::new(32, 12, params, anchor(i, 0), Vec3::NEG_Y),
                tube,
                positions: vec![0; n * LAYOUT.position_stride],
                normals: vec![0; n * LAYOUT.normal_stride],
                live: 0,
            }
        })
        .collect();
    let mut points = vec![Vec3::ZERO; 32];
    let mut frame = 0;
    let mut checksum = 0u64;
    let mut rounds = [Vec::new(), Vec::new()];
    let mut cpu_rounds = [Vec::new(), Vec::new()];
    for round in 0..=2 * ROUNDS {
        let direct = round % 2 == 0;
        let mut wall = 0.0;
        let mut cpu = 0u64;
        for _ in 0..frames {
            frame += 1;
            for (i, s) in ropes.iter_mut().enumerate() {
                s.rope
                    .step(DT, anchor(i, frame), EndAttachment::Free, &world);
            }
            let (t0, c0) = (Instant::now(), cpu_ns());
            for s in &mut ropes {
                let n = s.rope.interpolated(0.5, &mut points);
                if direct {
                    s.tube.frame(&points[..n], 0.03, s.live);
                    s.tube
                        .write_vertices(&LAYOUT, &mut s.positions, &mut s.normals);
                } else {
                    s.tube.build_upto(&points[..n], 0.03, s.live);
                    encode_arrays(&s.tube, &mut s.positions, &mut s.normals);
                }
                s.live = (s.tube.active_rings() + 1).min(s.tube.max_rings());
            }
            wall += t0.elapsed().as_secs_f64();
            if let (Some(c0), Some(c1)) = (c0, cpu_ns()) {
                cpu += c1 - c0;
            }
        }
        // The first round warms up.
        if round > 0 {
            rounds[usize::from(direct)].push(wall * 1e6 / (frames * ROPES) as f64);
            cpu_rounds[usize::from(direct)].push(cpu as f64 / 1e3 / (frames * ROPES) as f64);
        }
        for s in &ropes {
            checksum = s.normals.iter().chain(&s.positions).fold(checksum, |c, b| {
                c.wrapping_mul(31).wrapping_add(u64::from(*b))
            });
        }
    }
    let line = |i: usize| {
        let (w, wlo, whi) = median_and_spread(rounds[i].clone());
        let (c, clo, chi) = median_and_spread(cpu_rounds[i].clone());
        format!("wall {w:.2} us/rope per tick (rounds {wlo:.2}-{whi:.2}), cpu {c:.2} (rounds {clo:.2}-{chi:.2})")
    };
    println!(
        "tube_build: {ROPES} default ropes carried around: frame + write_vertices {}; build_upto + encoding the arrays {}; checksum {checksum:016x}",
        line(1),
        line(0)
    );
}
