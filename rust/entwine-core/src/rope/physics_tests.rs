//! Ground-truth tests: the rope against physics computed here, not against itself.
//!
//! A rope pinned at both ends must hang as the analytic catenary through those ends for its length,
//! a rope pinned at one end must hang plumb, no segment may pass through a thin wall, and a cutter
//! must cut a rope it passes however fast it moves between two ticks.

use super::*;
use crate::kit::Pose;
use glam::Quat;

const DT: f32 = 1.0 / 60.0;

/// The catenary `y = a·cosh((x − x0)/a) + c` through `(0, 0)` and `(span, rise)` with arc length
/// `length` (all metres, computed in `f64`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Catenary {
    a: f64,
    x0: f64,
    c: f64,
    span: f64,
}

impl Catenary {
    /// Solves for the parameter `a` by bisection on `sqrt(L² − v²) = 2a·sinh(h / 2a)`.
    pub(super) fn through(span: f64, rise: f64, length: f64) -> Self {
        let chord = (length * length - rise * rise).sqrt();
        assert!(chord > span, "the rope must be longer than the chord");
        let f = |a: f64| 2.0 * a * (span / (2.0 * a)).sinh() - chord;
        // f decreases in a: tiny a → huge, huge a → span − chord < 0.
        let (mut lo, mut hi) = (1e-6 * span, 1e6 * span);
        for _ in 0..400 {
            let mid = (lo * hi).sqrt();
            if f(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let a = (lo * hi).sqrt();
        let x0 = 0.5 * span - a * (rise / length).atanh();
        let c = -a * (x0 / a).cosh();
        Self { a, x0, c, span }
    }

    fn y(&self, x: f64) -> f64 {
        self.a * ((x - self.x0) / self.a).cosh() + self.c
    }

    /// Returns the distance (m) from the point `(x, y)` of the curve's plane to the curve.
    pub(super) fn distance(&self, x: f64, y: f64) -> f64 {
        // Dense polyline, then a refinement around the nearest sample.
        const N: usize = 4000;
        let at = |k: f64| {
            let u = k / N as f64 * self.span;
            (u, self.y(u))
        };
        let d = |(u, v): (f64, f64)| ((u - x).powi(2) + (v - y).powi(2)).sqrt();
        let mut best = (f64::INFINITY, 0.0);
        for k in 0..=N {
            let e = d(at(k as f64));
            if e < best.0 {
                best = (e, k as f64);
            }
        }
        let (mut lo, mut hi) = ((best.1 - 1.0).max(0.0), (best.1 + 1.0).min(N as f64));
        for _ in 0..60 {
            let m1 = lo + (hi - lo) / 3.0;
            let m2 = hi - (hi - lo) / 3.0;
            if d(at(m1)) < d(at(m2)) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        d(at(0.5 * (lo + hi))).min(best.0)
    }
}

/// The exact rest shape of the rope's own model: `links` massless links of `link` metres between two
/// pins `span` apart at equal height, with equal weights at the joints. The horizontal tension is the
/// same in every link and each joint adds one weight to the vertical, so link `k` slopes with
/// `tan θ_k = μ·(k − (links − 1)/2)`; `μ` (weight / horizontal tension) is solved by bisection so
/// that the links span the gap. Returns the joints `(x, y)` with the first pin at the origin.
pub(super) fn discrete_chain(links: usize, link: f64, span: f64) -> Vec<(f64, f64)> {
    let reach = |mu: f64| -> f64 {
        (0..links)
            .map(|k| link / (1.0 + (mu * (k as f64 - (links as f64 - 1.0) / 2.0)).powi(2)).sqrt())
            .sum()
    };
    let (mut lo, mut hi) = (0.0f64, 1e9f64);
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if reach(mid) > span {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let mu = 0.5 * (lo + hi);
    let mut joints = vec![(0.0, 0.0)];
    let (mut x, mut y) = (0.0, 0.0);
    for k in 0..links {
        let t = mu * (k as f64 - (links as f64 - 1.0) / 2.0);
        let c = 1.0 / (1.0 + t * t).sqrt();
        x += link * c;
        y += link * t * c;
        joints.push((x, y));
    }
    joints
}

/// What a settled rope between two pins measured against its catenary.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hang {
    /// Largest distance of a point from the analytic catenary, metres.
    pub max_error: f32,
    /// Largest distance of a point from its joint in the exact rest shape of the same chain, metres.
    pub chain_error: f32,
    /// How far the exact chain's own joints lie from the catenary at most (the discretisation), metres.
    pub chain_gap: f32,
    pub mean_error: f32,
    pub length_error: f32,
    pub worst_segment: f32,
    pub speed: f32,
}

/// Hangs a rope of `length` metres and `points` points between pins `span` metres apart at equal
/// height (default settings otherwise), settles it for `seconds` and measures it.
pub(super) fn hang(
    length: f32,
    points: usize,
    span: f32,
    seconds: f32,
    params: RopeParams,
) -> Hang {
    let seg = length / (points - 1) as f32;
    let params = RopeParams {
        segment_length: seg,
        ..params
    };
    let h = length + 2.0;
    let a = Vec3::new(0.0, h, 0.0);
    let b = Vec3::new(span, h, 0.0);
    let mut rope = Rope::new(points, points, params, a, Vec3::X);
    let w = World::with_capacity(1);
    let frames = (seconds / DT).round() as usize;
    let mut before = rope.points().to_vec();
    for k in 0..frames {
        if k + 1 == frames {
            before.copy_from_slice(rope.points());
        }
        let _ = rope.step(DT, a, EndAttachment::Pinned(b), &w);
    }
    let cat = Catenary::through(f64::from(span), 0.0, f64::from(rope.length()));
    let pts = rope.points();
    let errors: Vec<f32> = pts
        .iter()
        .map(|p| {
            let off_plane = f64::from(p.z);
            let e = cat.distance(f64::from(p.x), f64::from(p.y - h));
            (e * e + off_plane * off_plane).sqrt() as f32
        })
        .collect();
    let links = pts.len() - 1;
    let exact = discrete_chain(
        links,
        f64::from(rope.length()) / links as f64,
        f64::from(span),
    );
    let chain_error = pts
        .iter()
        .zip(&exact)
        .map(|(p, (x, y))| {
            let dx = f64::from(p.x) - x;
            let dy = f64::from(p.y - h) - y;
            (dx * dx + dy * dy + f64::from(p.z).powi(2)).sqrt() as f32
        })
        .fold(0.0, f32::max);
    let chain_gap = exact
        .iter()
        .map(|(x, y)| cat.distance(*x, *y) as f32)
        .fold(0.0, f32::max);
    let measured: f32 = pts.windows(2).map(|s| (s[1] - s[0]).length()).sum();
    let worst_segment = (0..pts.len() - 1)
        .map(|j| (pts[j + 1] - pts[j]).length() / rope.rest_length(j) - 1.0)
        .fold(f32::MIN, f32::max);
    let speed = pts
        .iter()
        .zip(&before)
        .map(|(p, q)| (*p - *q).length() / DT)
        .fold(0.0, f32::max);
    Hang {
        max_error: errors.iter().copied().fold(0.0, f32::max),
        chain_error,
        chain_gap,
        mean_error: errors.iter().sum::<f32>() / errors.len() as f32,
        length_error: measured / rope.length() - 1.0,
        worst_segment,
        speed,
    }
}

#[test]
fn catenary_solver_matches_known_values() {
    // A 3 m rope between pins 2 m apart: 2a·sinh(1/a) = 3 gives a ≈ 0.61647 m and a sag of a·(cosh(1/a) − 1) ≈ 1.005 m.
    let c = Catenary::through(2.0, 0.0, 3.0);
    assert!((c.a - 0.61647).abs() < 1e-4, "a = {}", c.a);
    let sag = -c.y(1.0);
    assert!((sag - 1.0053).abs() < 1e-3, "sag {sag}");
    assert!(c.distance(1.0, -sag) < 1e-9);
    assert!((c.distance(1.0, -sag - 0.1) - 0.1).abs() < 1e-6);
    assert!(c.distance(1.0, 0.0) < sag);
    // Uneven ends: the curve passes through both.
    let u = Catenary::through(2.0, 0.5, 3.0);
    assert!(u.y(0.0).abs() < 1e-9 && (u.y(2.0) - 0.5).abs() < 1e-9);
    // The exact chain spans the gap, keeps its links, and approaches the curve with more links.
    let chain = discrete_chain(300, 0.01, 2.0);
    let last = chain[300];
    assert!((last.0 - 2.0).abs() < 1e-9 && last.1.abs() < 1e-9);
    let worst = chain
        .iter()
        .map(|(x, y)| c.distance(*x, *y))
        .fold(0.0, f64::max);
    assert!(worst < 1e-3, "300 links: {worst} m off the catenary");
}

/// The settling time of the ground-truth tests, seconds.
const SETTLE: f32 = 30.0;

#[test]
fn a_rope_pinned_at_both_ends_hangs_as_the_catenary() {
    let mut rows = Vec::new();
    for length in [1.0f32, 3.0, 6.0, 10.0] {
        for points in [8usize, 12, 24, 32, 64] {
            for frac in [0.3f32, 0.5, 0.75, 0.9, 0.97] {
                let r = hang(length, points, frac * length, SETTLE, RopeParams::default());
                eprintln!(
                    "catenary L={length} m n={points} span={:.0}%: max {:.2} mm mean {:.2} mm \
                     (exact chain: {:.2} mm off it, rope {:.2} mm from it) \
                     length {:+.3}% worst segment {:+.3}% speed {:.3} mm/s",
                    frac * 100.0,
                    r.max_error * 1e3,
                    r.mean_error * 1e3,
                    r.chain_gap * 1e3,
                    r.chain_error * 1e3,
                    r.length_error * 100.0,
                    r.worst_segment * 100.0,
                    r.speed * 1e3
                );
                rows.push((length, points, frac, r));
            }
        }
    }
    for (length, points, frac, r) in rows {
        let case = format!("L={length} n={points} span={frac}: {r:?}");
        // A chain of few points cannot lie on the continuous curve: where even its exact rest shape
        // is farther than 1 % of the length from it (8 points at tight spans), the rope is held to
        // that exact shape instead, and must not add more than 1 % of its length to the gap.
        let limit = 0.01 * length;
        assert!(r.chain_error <= limit, "off the exact chain: {case}");
        assert!(
            r.max_error <= limit + r.chain_gap,
            "off the catenary: {case}"
        );
        assert!(r.length_error.abs() <= 0.01, "length: {case}");
        assert!(r.worst_segment <= 0.05, "a segment over +5 %: {case}");
        assert!(r.speed <= 1e-3, "still moving: {case}");
    }
}

#[test]
fn a_rope_hanging_from_one_end_settles_plumb() {
    for (length, points) in [(1.0f32, 8usize), (3.0, 12), (3.0, 32), (10.0, 64)] {
        let params = RopeParams {
            segment_length: length / (points - 1) as f32,
            ..RopeParams::default()
        };
        let a = Vec3::new(1.0, length + 2.0, -2.0);
        // Laid out sideways and let go: it swings down and settles.
        let mut rope = Rope::new(points, points, params, a, Vec3::new(1.0, 0.0, 0.5));
        let w = World::with_capacity(1);
        for _ in 0..(SETTLE / DT) as usize {
            let _ = rope.step(DT, a, EndAttachment::Free, &w);
        }
        let tip = *rope.points().last().expect("points");
        let off = Vec3::new(tip.x - a.x, 0.0, tip.z - a.z).length();
        let below = a.y - tip.y;
        eprintln!(
            "plumb L={length} n={points}: tip {:.3} mm off the vertical, {:.2} mm short of its length",
            off * 1e3,
            (length - below) * 1e3
        );
        assert!(off <= 1e-3, "L={length} n={points}: tip {off} m off plumb");
        assert!(
            (below - length).abs() <= 0.01 * length,
            "L={length}: hangs {below} m"
        );
    }
}

/// A wall 5 cm thick and 1.4 m high across the x axis at `x`, 4 m wide.
fn thin_wall(x: f32) -> Collider {
    Collider {
        pose: Pose::new(Vec3::new(x, 0.7, 0.0), Quat::IDENTITY),
        shape: Shape::Box {
            half_extents: Vec3::new(0.025, 0.7, 2.0),
        },
        solid: true,
        cutter: false,
        motion: Motion::NONE,
    }
}

/// Returns how deep (metres, measured down from the top face) the segment `a`–`b` passes through
/// the box collider `wall` (no rope radius: the rope's axis itself), or `None` when it does not.
/// Slab test in the box's frame.
fn crossing_depth(wall: &Collider, a: Vec3, b: Vec3) -> Option<f32> {
    let Shape::Box { half_extents } = wall.shape else {
        return None;
    };
    let la = wall.pose.inverse_transform_point(a);
    let lb = wall.pose.inverse_transform_point(b);
    let d = lb - la;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for k in 0..3 {
        if d[k].abs() < 1e-9 {
            if la[k].abs() > half_extents[k] {
                return None;
            }
            continue;
        }
        let (mut u, mut v) = (
            (-half_extents[k] - la[k]) / d[k],
            (half_extents[k] - la[k]) / d[k],
        );
        if u > v {
            core::mem::swap(&mut u, &mut v);
        }
        t0 = t0.max(u);
        t1 = t1.min(v);
        if t0 > t1 {
            return None;
        }
    }
    let lowest = (la + d * t0).y.min((la + d * t1).y);
    Some(half_extents.y - lowest)
}

/// Steps `rope` for `frames` ticks with the anchor at `anchor(t)` among `world`, and returns the
/// number of ticks after which some segment passed through `wall`, the deepest such crossing
/// (metres below the top) and the largest stretch seen.
fn run_past_wall(
    rope: &mut Rope,
    world: &World,
    wall: &Collider,
    frames: usize,
    anchor: impl Fn(f32) -> Vec3,
) -> (usize, f32, f32) {
    let (mut bad, mut deepest, mut stretch) = (0, 0.0f32, 0.0f32);
    for k in 0..frames {
        let _ = rope.step(DT, anchor((k + 1) as f32 * DT), EndAttachment::Free, world);
        let crossings = rope
            .points()
            .windows(2)
            .filter_map(|s| crossing_depth(wall, s[0], s[1]))
            .fold(None, |acc: Option<f32>, d| {
                Some(acc.map_or(d, |a| a.max(d)))
            });
        if let Some(d) = crossings {
            bad += 1;
            deepest = deepest.max(d);
        }
        stretch = stretch.max(rope.max_stretch());
    }
    (bad, deepest, stretch)
}

#[test]
fn no_segment_passes_through_a_thin_wall() {
    let wall = thin_wall(2.0);
    let mut world = World::with_capacity(2);
    world.push(wall.clone());
    // The floor as a body too (as a level has it), on top of the ground plane.
    world.push(Collider::still(
        Pose::new(Vec3::new(0.0, -0.5, 0.0), Quat::IDENTITY),
        Shape::Box {
            half_extents: Vec3::new(40.0, 0.5, 40.0),
        },
        true,
        false,
    ));
    let mut report = Vec::new();
    for speed in [4.0f32, 8.0, 12.0, 15.0] {
        // Straight passes: the anchor runs over the wall at 2 m and drags the rope across it.
        let mut rope = Rope::new(
            32,
            12,
            RopeParams::default(),
            Vec3::new(-3.0, 2.0, 0.0),
            Vec3::NEG_Y,
        );
        let frames = (10.0 / speed / DT) as usize;
        let pass = run_past_wall(&mut rope, &world, &wall, frames, |t| {
            Vec3::new(-3.0 + speed * t, 2.0, 0.0)
        });
        // A pendulum: the anchor swings back and forth across the wall, peaking at `speed`.
        let mut rope = Rope::new(
            32,
            12,
            RopeParams::default(),
            Vec3::new(2.0, 2.2, 0.0),
            Vec3::NEG_X,
        );
        let omega = speed / 3.0;
        let swing = run_past_wall(&mut rope, &world, &wall, 360, |t| {
            Vec3::new(2.0 + 3.0 * (omega * t).sin(), 2.2, 0.0)
        });
        eprintln!(
            "wall {speed} m/s: pass {} bad frames (deepest {:.0} mm, stretch {:.1}%), \
             pendulum {} bad frames (deepest {:.0} mm, stretch {:.1}%)",
            pass.0,
            pass.1 * 1e3,
            pass.2 * 100.0,
            swing.0,
            swing.1 * 1e3,
            swing.2 * 100.0
        );
        report.push((speed, pass, swing));
    }
    for (speed, pass, swing) in report {
        assert_eq!(pass.0, 0, "{speed} m/s pass: {pass:?}");
        assert_eq!(swing.0, 0, "{speed} m/s pendulum: {swing:?}");
        assert!(
            pass.2 <= 0.10 && swing.2 <= 0.10,
            "{speed} m/s: snagged on the edge {pass:?} {swing:?}"
        );
    }
}

#[test]
fn a_rope_dragged_around_a_post_slides_instead_of_snagging() {
    // A square post 30 cm wide; the anchor walks past it at 2 m/s, then turns behind it, so the rope
    // trailing on the ground must slide around the post's corner.
    let post = Collider {
        pose: Pose::new(Vec3::new(2.0, 1.0, 0.0), Quat::IDENTITY),
        shape: Shape::Box {
            half_extents: Vec3::new(0.15, 1.0, 0.15),
        },
        solid: true,
        cutter: false,
        motion: Motion::NONE,
    };
    let mut world = World::with_capacity(2);
    world.push(post.clone());
    let path = |t: f32| -> Vec3 {
        let s = 2.0 * t;
        if s < 4.0 {
            Vec3::new(-1.0 + s, 0.5, 0.5)
        } else {
            Vec3::new(3.0, 0.5, 0.5 - (s - 4.0))
        }
    };
    let mut rope = Rope::new(32, 12, RopeParams::default(), path(0.0), Vec3::NEG_X);
    let (mut stretch, mut inside) = (0.0f32, 0);
    let mut touched = false;
    for k in 0..240 {
        let _ = rope.step(DT, path((k + 1) as f32 * DT), EndAttachment::Free, &world);
        stretch = stretch.max(rope.max_stretch());
        for p in rope.points() {
            let d = post.distance(*p);
            touched |= d < 0.05;
            if d < 0.0 {
                inside += 1;
            }
        }
        if rope
            .points()
            .windows(2)
            .any(|s| crossing_depth(&post, s[0], s[1]).is_some())
        {
            inside += 1;
        }
    }
    let tail = *rope.points().last().expect("points");
    eprintln!("post: max stretch {:.1}%, tail at {tail}", stretch * 100.0);
    assert!(touched, "the rope met the post");
    assert_eq!(inside, 0, "the rope passed through the post");
    assert!(stretch <= 0.10, "snagged: stretch {stretch}");
    assert!(
        tail.z < -0.15 && tail.x > 2.15,
        "the rope came round the post's corner: tail at {tail}"
    );
}

/// A one-sided blade 0.6 m long, 2 cm thick and 10 cm tall, turning about the vertical axis through
/// `pivot` at `rate` rad/s, at angle `angle` (from +X toward −Z) at the end of the current step.
fn blade(pivot: Vec3, angle: f32, rate: f32) -> Collider {
    let turn = Quat::from_rotation_y(angle);
    Collider {
        pose: Pose::new(pivot + turn * Vec3::new(0.3, 0.0, 0.0), turn),
        shape: Shape::Box {
            half_extents: Vec3::new(0.3, 0.05, 0.01),
        },
        solid: false,
        cutter: true,
        motion: Motion {
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::new(0.0, rate, 0.0),
            pivot,
        },
    }
}

#[test]
fn a_spinning_blade_cuts_on_its_first_pass() {
    // The rope hangs through the blade's plane 0.4 m from its axle, at angle 0. The blade starts
    // half a radian past it, so it comes back to the rope after most of a revolution; it touches the
    // rope within `w` of angle 2π (its half-thickness plus the rope's radius, seen from the axle),
    // and must cut in the first tick whose turn reaches that window.
    let pivot = Vec3::new(0.0, 3.0, 0.0);
    let anchor = Vec3::new(0.4, 5.0, 0.0);
    let w = ((0.01f32 + 0.03) / 0.4).asin();
    for rate in [10.0f32, 60.0, 125.0, 150.0, 200.0] {
        let mut rope = Rope::new(32, 12, RopeParams::default(), anchor, Vec3::NEG_Y);
        let per_tick = rate * DT;
        let start = 0.5;
        let mut cut_tick = None;
        let mut pass_tick = None;
        for k in 0..600 {
            let angle = start + per_tick * (k + 1) as f32;
            if pass_tick.is_none() && angle >= core::f32::consts::TAU - w {
                pass_tick = Some(k);
            }
            let mut world = World::with_capacity(2);
            world.push(blade(pivot, angle, rate));
            if rope
                .step(DT, anchor, EndAttachment::Free, &world)
                .cut
                .is_some()
            {
                cut_tick = Some(k);
                break;
            }
        }
        eprintln!("blade {rate} rad/s: first pass in tick {pass_tick:?}, cut in tick {cut_tick:?}");
        assert_eq!(cut_tick, pass_tick, "{rate} rad/s");
        assert!(cut_tick.is_some());
    }
}

#[test]
fn a_bullet_crossing_between_two_ticks_cuts() {
    let anchor = Vec3::new(0.0, 5.0, 0.0);
    for speed in [10.0f32, 50.0, 150.0] {
        let mut rope = Rope::new(32, 12, RopeParams::default(), anchor, Vec3::NEG_Y);
        let w0 = World::with_capacity(1);
        for _ in 0..30 {
            let _ = rope.step(DT, anchor, EndAttachment::Free, &w0);
        }
        // A 1 cm ball along +X at 3.5 m height, at least 37 % of a tick's flight from the rope at
        // every tick (6 cm at 10 m/s, 31 cm at 50 m/s): it crosses between two ticks.
        let x0 = -3.37 * speed * DT;
        let mut cut = None;
        let mut crossed = None;
        for k in 0..120 {
            let x = x0 + speed * DT * (k + 1) as f32;
            if crossed.is_none() && x > 0.0 {
                crossed = Some(k);
            }
            let mut world = World::with_capacity(1);
            world.push(Collider {
                pose: Pose::new(Vec3::new(x, 3.5, 0.0), Quat::IDENTITY),
                shape: Shape::Sphere { radius: 0.01 },
                solid: false,
                cutter: true,
                motion: Motion {
                    velocity: Vec3::new(speed, 0.0, 0.0),
                    angular_velocity: Vec3::ZERO,
                    pivot: Vec3::new(x, 3.5, 0.0),
                },
            });
            if let Some(c) = rope.step(DT, anchor, EndAttachment::Free, &world).cut {
                cut = Some((k, c));
                break;
            }
        }
        eprintln!("bullet {speed} m/s: crossed in tick {crossed:?}, cut {cut:?}");
        let (k, c) = cut.expect("cut");
        assert_eq!(Some(k), crossed, "{speed} m/s");
        assert!((c.position.y - 3.5).abs() < 0.3, "{c:?}");
    }
}

#[test]
fn motion_between_two_poses_rewinds_to_the_first() {
    let from = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.3));
    let to = Pose::new(Vec3::new(1.5, 2.0, 2.0), Quat::from_rotation_y(1.9));
    let c = Collider {
        motion: Motion::between(from, to, 0.1),
        ..Collider::still(to, Shape::Sphere { radius: 0.1 }, false, true)
    };
    let back = c.rewound(0.1).pose;
    assert!((back.position - from.position).length() < 1e-5, "{back:?}");
    assert!(back.rotation.angle_between(from.rotation) < 1e-4);
    assert_eq!(Motion::between(from, to, f32::NAN), Motion::NONE);
}

#[test]
fn a_cut_in_an_early_substep_frees_the_end_for_the_rest_of_the_step() {
    // A line pinned at both ends, stepped in 4 substeps; a still cutter across its middle.
    let params = RopeParams {
        substeps: 4,
        ..RopeParams::default()
    };
    let (a, b) = (Vec3::new(0.0, 3.0, 0.0), Vec3::new(3.0, 3.0, 0.0));
    let mut rope = Rope::new(32, 12, params, a, Vec3::X);
    let empty = World::with_capacity(1);
    for _ in 0..120 {
        let _ = rope.step(DT, a, EndAttachment::Pinned(b), &empty);
    }
    let mut world = World::with_capacity(1);
    world.push(Collider::still(
        Pose::new(Vec3::new(1.5, 2.0, 0.0), Quat::IDENTITY),
        Shape::Box {
            half_extents: Vec3::new(0.02, 2.0, 1.0),
        },
        false,
        true,
    ));
    let before = rope.points().to_vec();
    let cut = rope.step(DT, a, EndAttachment::Pinned(b), &world).cut;
    assert!(cut.is_some(), "cut");
    let jump = rope
        .points()
        .iter()
        .zip(&before)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f32::max);
    assert!(jump < 0.1, "a point jumped {jump} m when the end came free");
}
