//! No allocation per frame: every node's per-frame path through the core, run in steady state after
//! a warm-up, under a global allocator that counts the allocations made on the calling thread.
//!
//! Each test builds what a node builds once (buffers sized for the rope's capacity, the squad, the
//! stream's frame buffer…), warms the path up so that every lazily grown buffer has its size, then
//! counts the allocations of a run of frames and asserts that there are none. The allocator counts
//! per thread, so the test harness's own threads cannot add to a test's count, and a test that
//! allocates on purpose checks that the count is not vacuous.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use glam::{Affine3A, Quat, Vec2, Vec3};

use entwine_core::clock::{ClockSync, TickClock};
use entwine_core::env_touch::shapes::{closest_point_on_shapes, Shape as TouchShape};
use entwine_core::env_touch::{
    Candidate, EnvTouch, TouchConfig, TouchEvent, TouchInput, TouchState,
};
use entwine_core::formation::keyframe::{decode_chunk, encode_chunk, KeyAgent, KeyframeHeader};
use entwine_core::formation::rng::Rng;
use entwine_core::formation::{FormationDef, Squad, SquadConfig, WALL_NEIGHBOURS};
use entwine_core::hold_hand::anim::{AnimSnapshot, MachineState};
use entwine_core::hold_hand::contact::{ContactSolver, ContactTuning, HandInput};
use entwine_core::hold_hand::stream::{HandSample, PairSample, PairSender, TickFrames, TickInput};
use entwine_core::hold_hand::{FollowDriver, FollowTuning, HandOffsets, PairReplay, ReplayTuning};
use entwine_core::kit::{
    decode_position, decode_rotation, encode_position, encode_rotation, solve_limb, LimbGoal,
    LimbPose, PoleMemory, Pose,
};
use entwine_core::rope::{
    AnchorSample, BoneChain, ChainFit, Collider, EndAttachment, Motion, Recorder, Replayer, Rope,
    RopeParams, Shape as RopeShape, Tube, World,
};

/// The system allocator, counting every allocation (and reallocation) of the calling thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: a thread being torn down has no counter left, and must still allocate.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is passed on unchanged to the system allocator; counting touches only a
// thread-local cell, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Returns how many allocations `f` made on this thread.
fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Runs `frame(k)` for `warm_up` frames, then counts the allocations of the next `frames` frames and
/// asserts there are none, naming `what`.
fn assert_steady_state_allocates_nothing(
    what: &str,
    warm_up: usize,
    frames: usize,
    mut frame: impl FnMut(usize),
) {
    for k in 0..warm_up {
        frame(k);
    }
    let n = allocations_in(|| {
        for k in warm_up..warm_up + frames {
            frame(k);
        }
    });
    assert_eq!(
        n, 0,
        "{what}: {n} allocations in {frames} frames after {warm_up} frames of warm-up"
    );
    println!("{what}: 0 allocations in {frames} frames after {warm_up} of warm-up");
}

const DT: f32 = 1.0 / 60.0;

#[test]
fn the_counter_counts_allocations_made_on_purpose() {
    // If the allocator were not installed, or counted on another thread, every test below would
    // pass vacuously. A vector, a boxed value, a grown string and a formatted string are counted.
    let n = allocations_in(|| {
        black_box(vec![1u8; 64]);
    });
    assert_eq!(n, 1, "one vector is one allocation");
    let n = allocations_in(|| {
        let mut s = String::with_capacity(1);
        for _ in 0..100 {
            s.push('x');
        }
        black_box(Box::new(s));
    });
    assert!(n >= 3, "a string grown 100 times and a box: {n}");
    let n = allocations_in(|| {
        black_box(format!("{}", black_box(12345.678f64)));
    });
    assert!(n >= 1, "a formatted string: {n}");
    // And a path that does allocate is caught by the helper.
    let caught = std::panic::catch_unwind(|| {
        assert_steady_state_allocates_nothing("a leaking frame", 2, 3, |_| {
            black_box(vec![0u32; 4]);
        });
    });
    assert!(caught.is_err(), "an allocating frame must fail the check");
    // Nothing at all allocates nothing.
    assert_eq!(allocations_in(|| {}), 0);
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one frame's work read top to bottom, then measured
fn rope_step_tube_and_bone_chain_allocate_nothing_per_frame() {
    // The RopeSimulation node per physics frame: world gathered into a preallocated list, one step
    // (with length changes paying out and reeling in, colliders to slide on, an end pulled by a
    // body), its recording; per rendered frame the interpolated points, the tube and the bone chain.
    let capacity = 96;
    let params = RopeParams::default();
    let mut rope = Rope::new(capacity, 32, params, Vec3::new(0.0, 3.0, 0.0), Vec3::NEG_Y);
    let mut world = World::with_capacity(16);
    let mut tube = Tube::new(capacity, 8, 2);
    let mut scratch = vec![Vec3::ZERO; capacity];
    let rest: Vec<Pose> = (0..12)
        .map(|i| Pose::new(Vec3::new(0.0, -0.1 * i as f32, 0.0), Quat::IDENTITY))
        .collect();
    let mut chain = BoneChain::new(&rest);
    chain.reserve_points(capacity);
    let mut recorder = Recorder::default();
    recorder.start(&rope, 10_000);
    let box_pose = Pose::new(Vec3::new(0.4, 1.5, 0.0), Quat::from_rotation_z(0.3));
    let ball_pose = Pose::new(Vec3::new(-0.5, 1.0, 0.2), Quat::IDENTITY);
    let mut shortest = f32::INFINITY;
    let mut longest = 0.0f32;
    assert_steady_state_allocates_nothing("rope", 240, 600, |k| {
        let t = k as f32 * DT;
        let anchor = Vec3::new(0.6 * (1.3 * t).sin(), 3.0, 0.6 * (1.3 * t).cos());
        // Pay out and reel in: points are inserted at and removed from the hand.
        rope.set_target_length(2.0 + 1.5 * (0.4 * t).sin());
        world.clear();
        world.push(Collider::still(
            box_pose,
            RopeShape::Box {
                half_extents: Vec3::new(0.2, 0.3, 0.5),
            },
            true,
            false,
        ));
        world.push(Collider::still(
            ball_pose,
            RopeShape::Sphere { radius: 0.3 },
            true,
            false,
        ));
        world.push(Collider::still(
            Pose::IDENTITY,
            RopeShape::Plane,
            true,
            false,
        ));
        let end = if k % 600 < 300 {
            EndAttachment::Free
        } else {
            EndAttachment::Body {
                position: rope.points()[rope.point_count() - 1],
                velocity: Vec3::ZERO,
                mass: 2.0,
            }
        };
        recorder.push(AnchorSample {
            dt: DT,
            anchor,
            end,
            target_length: rope.target_length(),
        });
        let events = rope.step(DT, anchor, end, &world);
        black_box(events);
        shortest = shortest.min(rope.length());
        longest = longest.max(rope.length());
        let n = rope.interpolated(0.5, &mut scratch);
        black_box(tube.build(&scratch[..n], 0.02));
        let root = Pose::new(scratch[0], Quat::IDENTITY);
        black_box(
            chain
                .solve(&scratch[..n], root, true, ChainFit::Stretch)
                .is_ok(),
        );
        black_box(
            chain
                .solve(&scratch[..n], root, false, ChainFit::RestLength)
                .is_ok(),
        );
    });
    // The run did pay out and reel in (so insertions and removals were counted).
    assert!(longest - shortest > 2.0, "{shortest} .. {longest}");
    assert!(rope.points().iter().all(|p| p.is_finite()));
    // The replay of that recording re-runs the steps, also without allocating.
    let recording = recorder.stop().expect("recorded");
    let mut replayer = Replayer::default();
    replayer.begin(&recording, &mut rope);
    assert_steady_state_allocates_nothing("rope replay", 60, 600, |_| {
        let s = replayer.next(&recording).expect("a recorded step");
        rope.set_target_length(s.target_length);
        black_box(rope.step(s.dt, s.anchor, s.end, &world));
    });
}

#[test]
fn rope_cut_by_a_swept_blade_and_fading_piece_allocate_nothing() {
    // A blade spinning through the rope cuts it (swept between ticks); the far part moves into the
    // second preallocated buffer, falls and fades; the rope is laid out again and cut again.
    let capacity = 64;
    let top = Vec3::new(0.0, 4.0, 0.0);
    let mut rope = Rope::new(capacity, 40, RopeParams::default(), top, Vec3::NEG_Y);
    let mut world = World::with_capacity(4);
    let mut scratch = vec![Vec3::ZERO; capacity];
    let spin = 20.0f32;
    let pivot = Vec3::new(0.0, 3.0, 0.0);
    let mut cuts = 0;
    let mut faded = 0;
    assert_steady_state_allocates_nothing("rope cuts", 30, 1200, |k| {
        if k % 300 == 0 {
            rope.reset(top, Vec3::NEG_Y, 2.0);
        }
        let angle = spin * k as f32 * DT;
        let rotation = Quat::from_rotation_y(angle);
        // A thin blade 1 m long whose near end is on the pivot, beside the rope.
        let centre = pivot + rotation * Vec3::new(0.5, 0.0, 0.0);
        world.clear();
        world.push(Collider {
            pose: Pose::new(centre, rotation),
            shape: RopeShape::Box {
                half_extents: Vec3::new(0.5, 0.01, 0.05),
            },
            solid: false,
            cutter: k % 300 > 60,
            motion: Motion {
                velocity: Vec3::ZERO,
                angular_velocity: Vec3::Y * spin,
                pivot,
            },
        });
        let events = rope.step(DT, top, EndAttachment::Free, &world);
        cuts += usize::from(events.cut.is_some());
        faded += usize::from(events.loose_faded);
        black_box(rope.loose_interpolated(0.5, &mut scratch));
        black_box(rope.loose_opacity());
    });
    println!("rope cuts: {cuts} cuts, {faded} pieces faded");
    assert!(cuts >= 3, "the blade cut the rope {cuts} times");
    assert!(faded >= 2, "the cut pieces faded {faded} times");
}

#[test]
fn formation_squad_of_256_allocates_nothing_per_tick() {
    // The FormationController per physics frame: the squad's fixed ticks (slot control, the state
    // machine, metrics), marching, the recording ring; every keyframe (2 Hz) the server encodes
    // the squad and a client decodes and applies it, into buffers kept between keyframes.
    let n = 256;
    let mut squad = Squad::new(n, true, SquadConfig::default());
    squad.set_recording(600);
    let column = FormationDef::from_ron("(shape: Column(files: 16))").expect("a formation");
    squad.form(&column).expect("seats 256");
    let mut client = Squad::new(n, true, SquadConfig::default());
    client.form(&column).expect("seats 256");
    let mut agents: Vec<KeyAgent> = Vec::new();
    let mut decoded: Vec<KeyAgent> = Vec::new();
    let mut header = KeyframeHeader {
        formation: String::from("column"),
        ..KeyframeHeader::default()
    };
    let mut received = KeyframeHeader::default();
    let mut bytes: Vec<u8> = Vec::new();
    let mut keyframe = |squad: &Squad, client: &mut Squad, k: usize| {
        squad.keyframe_header(&mut header);
        header.seq = k as u16;
        header.server_time = k as f64 * f64::from(DT);
        let chunk = 64;
        for first in (0..n).step_by(chunk) {
            squad.keyframe_agents(first, chunk, &mut agents);
            header.first = first as u32;
            header.count = agents.len() as u32;
            bytes.clear();
            encode_chunk(&header, &agents, &mut bytes).expect("encodes");
            decode_chunk(&bytes, &mut received, &mut decoded).expect("decodes");
            assert!(client.apply_keyframe(&received, &decoded, 0.05));
        }
    };
    let mut ticks = 0;
    assert_steady_state_allocates_nothing("formation, 256 agents", 240, 600, |k| {
        if k == 120 {
            squad.march(Vec2::new(0.0, -1.0), 1.2);
        }
        ticks += squad.advance(DT);
        ticks += client.advance(DT);
        black_box(squad.metrics());
        for i in 0..n {
            black_box(squad.interpolated(i));
            black_box(squad.bearing(i));
        }
        if k % 30 == 0 {
            keyframe(&squad, &mut client, k);
        }
    });
    assert!(ticks >= 1600, "{ticks} ticks");
    assert_eq!(squad.metrics().active as usize, n);
}

#[test]
fn large_squads_tick_without_allocating() {
    // 2,000 agents scattered up to 1.5 m from their slots form a 40-file column: after the first
    // tick no tick allocates, and the squad still forms up (every slot error under 5 cm after 4 s)
    // and fits its baseline.
    let n = 2000;
    let mut squad = Squad::new(n, true, SquadConfig::default());
    let column = FormationDef::from_ron("(shape: Column(files: 40))").expect("a formation");
    squad.form(&column).expect("seats 2000");
    let mut rng = Rng::new(8);
    for i in 0..n {
        let s = squad.slot_of(i).expect("seated");
        let mut off = rng.vec2();
        while off.length() > 1.0 {
            off = rng.vec2();
        }
        let yaw = rng.signed() * std::f32::consts::PI;
        squad.place(i, squad.slot_pos(s) + off * 1.5, yaw);
    }
    squad.form(&column).expect("seats 2000");
    assert_steady_state_allocates_nothing("formation, 2000 agents", 1, 239, |_| squad.step());
    let m = squad.metrics();
    assert_eq!(m.active as usize, n);
    assert!(m.max_slot_error < 0.05, "{m:?}");
    assert!(squad.baseline().is_some());
}

#[test]
fn a_squad_spawned_at_one_point_ticks_without_allocating() {
    // 4,096 agents standing at one point form a 64-file column: the soft walls' capped queries
    // over the pile, and the spatial hash as the pile spreads out, allocate nothing after the first
    // tick.
    let n = 4096;
    let mut squad = Squad::new(n, true, SquadConfig::default());
    for i in 0..n {
        squad.place(i, Vec2::ZERO, 0.0);
    }
    let column = FormationDef::from_ron("(shape: Column(files: 64))").expect("a formation");
    squad.form(&column).expect("seats 4096");
    let mut most = 0;
    assert_steady_state_allocates_nothing("formation, 4096 agents from one point", 1, 179, |_| {
        squad.step();
        most = most.max(squad.wall_pairs());
    });
    assert!(
        most <= (WALL_NEIGHBOURS * n) as u64,
        "{most} pairs in a tick"
    );
    assert_eq!(squad.metrics().active as usize, n);
}

#[test]
fn formation_with_body_agents_allocates_nothing_per_tick() {
    // Bodies driven by velocity: each frame the glue senses where every body is and reads back its
    // velocity command.
    let n = 200;
    let mut squad = Squad::new(n, false, SquadConfig::default());
    let line = FormationDef::from_ron("(shape: Column(files: 20))").expect("a formation");
    squad.form(&line).expect("seats 200");
    let mut bodies: Vec<Vec2> = (0..n)
        .map(|i| Vec2::new((i % 20) as f32 * 1.3, (i / 20) as f32 * 1.1))
        .collect();
    assert_steady_state_allocates_nothing("formation, 200 bodies", 240, 600, |_| {
        for (i, p) in bodies.iter().enumerate() {
            squad.sense(i, *p);
        }
        squad.advance(DT);
        for (i, p) in bodies.iter_mut().enumerate() {
            *p += squad.frame_velocity(i) * DT;
        }
    });
    let m = squad.metrics();
    assert_eq!(m.active as usize, n);
}

fn anim_snapshot(t: f32) -> AnimSnapshot {
    let mut a = AnimSnapshot::default();
    a.push_value(0.5 + 0.5 * t.sin());
    a.push_value(0.5 * t.cos());
    a.push_machine(MachineState {
        node: u8::from(t.rem_euclid(2.0) > 1.0),
        travel: 0,
        position: t.rem_euclid(1.0),
    });
    a.push_shot(t.rem_euclid(3.0) < 0.5);
    a
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one frame's work read top to bottom, then measured
fn pair_stream_send_and_replay_allocate_nothing_per_frame() {
    // HoldHandComponent on the initiator: the follow spring, the contact solver, the stream's
    // ticks, hand samples and frames written into one fixed buffer. On the recipient: each frame
    // received (decoded), the view rendered, the animation replayed.
    let tuning = ReplayTuning::default();
    let follow = FollowTuning::default();
    let contact = ContactTuning::default();
    let mut sender = PairSender::default();
    sender.restart();
    let mut driver = FollowDriver::default();
    let mut solver = ContactSolver::default();
    let mut rx = PairReplay::default();
    let mut clock = TickClock::default();
    let mut sent = TickFrames::default();
    let offsets = HandOffsets::default();
    let mut frames = 0u32;
    let mut shown = 0u32;
    let mut bytes_sent = 0usize;
    let mut corners = 0u32;
    assert_steady_state_allocates_nothing("pair stream", 120, 900, |k| {
        let now = clock.tick(k as f64 * f64::from(DT), DT);
        let t = now as f32;
        // Walks 1.03 s, stands 0.97 s: starts and stops between samples send corners.
        let walked = (t / 2.0).floor() * 1.03 + (t % 2.0).min(1.03);
        let initiator = Pose::new(
            Vec3::new(walked.sin(), 0.0, -1.4 * walked),
            Quat::from_rotation_y(0.3 * walked.sin()),
        );
        let recipient = driver.step(initiator, DT, &follow);
        let hand = |root: Pose, side: f32| HandInput {
            contact: Pose::new(
                root.transform_point(Vec3::new(side * 0.3, 1.0, -0.1)),
                root.rotation,
            ),
            upper_arm: root.transform_point(Vec3::new(side * 0.2, 1.4, 0.0)),
            reach: 0.54,
            offset: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        };
        let out = solver.step(
            &hand(initiator, -1.0),
            &hand(recipient, 1.0),
            initiator.position.distance(recipient.position),
            true,
            &contact,
            DT,
        );
        let due = sender.tick(DT, &tuning.rates);
        let pair = PairSample {
            initiator,
            recipient_local: initiator.to_local(recipient),
            contact_rotation: out.rotation,
        };
        let hand = HandSample {
            time: now,
            contact: initiator
                .to_local(Pose::new(out.contact, out.rotation))
                .position,
            weight: out.position_weight,
            connected: out.connected,
            arm_override: true,
            has_shared_reach: out.has_shared_reach,
        };
        let anim = anim_snapshot(t);
        let input = TickInput {
            now,
            shared: true,
            pair: Some(pair),
            hand: Some(hand),
            offsets,
            anim: due.anim.then_some(&anim),
        };
        sender
            .send_tick(due, &input, &mut sent)
            .expect("the frames fit");
        let count = sent.iter().count();
        frames += u32::from(due.frame);
        corners += count as u32 - u32::from(due.frame);
        for bytes in sent.iter() {
            bytes_sent += bytes.len();
            let _ = black_box(rx.receive(bytes, now + 0.05, true, &tuning));
        }
        if let Some(view) = rx.render(now + 0.05, DT, [None, None], &tuning) {
            shown += 1;
            black_box(view);
        }
        black_box(rx.animation(1));
    });
    assert!(frames >= 80, "{frames} frames sent");
    assert!(corners > 0, "no corner sent");
    assert!(shown >= 800, "{shown} views shown");
    assert!(bytes_sent > 0);
    assert!(rx.frames() >= 80, "{} frames kept", rx.frames());
}

#[test]
fn env_touch_step_allocates_nothing_per_frame() {
    // EnvironmentInteractionStateMachine per physics frame: closest points on the shapes found
    // around the character, then one step of the machine (a walk along a wall, stops and starts,
    // so every state and its events are met).
    let mut machine = EnvTouch::new(
        TouchConfig::default(),
        [
            Pose::new(Vec3::new(-0.3, 0.9, 0.0), Quat::IDENTITY),
            Pose::new(Vec3::new(0.3, 0.9, 0.0), Quat::IDENTITY),
        ],
    );
    let wall = [(
        TouchShape::Box {
            half_extents: Vec3::new(0.1, 1.5, 20.0),
        },
        Affine3A::from_translation(Vec3::new(0.55, 1.5, 0.0)),
    )];
    let mut candidates = [Candidate {
        id: 7,
        closest_point: Vec3::ZERO,
    }];
    let mut z = 5.0f32;
    let mut events = 0usize;
    let mut touched = 0usize;
    let mut reached_touch = false;
    assert_steady_state_allocates_nothing("env touch", 120, 1200, |k| {
        let walking = (k / 200) % 3 != 2;
        let speed = if walking { 1.4 } else { 0.0 };
        z -= speed * DT;
        let root = Pose::new(Vec3::new(0.0, 0.0, z), Quat::IDENTITY);
        let shoulders = [
            root.transform_point(Vec3::new(-0.2, 1.4, 0.0)),
            root.transform_point(Vec3::new(0.2, 1.4, 0.0)),
        ];
        let query = machine.query_point(root);
        let found = closest_point_on_shapes(&wall, query);
        let candidates: &[Candidate] = match found {
            Some(p) => {
                candidates[0].closest_point = p;
                &candidates
            }
            None => &[],
        };
        let hands = machine.step(&TouchInput {
            dt: DT,
            root,
            shoulders,
            velocity: Vec3::new(0.0, 0.0, -speed),
            move_input: Some(Vec3::new(0.0, 0.0, -speed)),
            grounded: true,
            candidates,
            surface_normal: machine.wants_surface_normal().then_some(Vec3::NEG_X),
        });
        if hands[1].position_weight > 0.5 {
            touched += 1;
        }
        for e in machine.events() {
            events += 1;
            if let TouchEvent::StateChanged { to, .. } = e {
                reached_touch |= *to == TouchState::Touch;
            }
        }
    });
    assert!(events > 0, "the machine changed state");
    assert!(reached_touch, "the hand touched the wall");
    assert!(touched > 0, "the right hand reached the wall");
}

#[test]
fn limb_ik_kit_clock_and_quantisation_allocate_nothing() {
    // LimbIK per frame (the pole memory and the solve), NetClock's pong and server time, and the
    // kit's quantisation both ways.
    let mut pole = PoleMemory::default();
    let mut sync = ClockSync::default();
    let mut clock = TickClock::default();
    let pose = LimbPose {
        upper: Pose::new(Vec3::new(0.2, 1.4, 0.0), Quat::IDENTITY),
        lower: Pose::new(Vec3::new(0.2, 1.12, 0.02), Quat::IDENTITY),
        end: Pose::new(Vec3::new(0.2, 0.86, 0.0), Quat::IDENTITY),
    };
    let mut error = 0.0f32;
    assert_steady_state_allocates_nothing("limb IK, clock, quantisation", 60, 2000, |k| {
        let t = k as f32 * DT;
        let target = Vec3::new(0.2 + 0.2 * t.sin(), 1.2 + 0.1 * t.cos(), -0.25);
        let p = pole.effective_pole(
            pose.upper.position,
            target,
            Some(Vec3::new(0.6, 1.0, 0.4)),
            DT,
        );
        let solved = solve_limb(
            &pose,
            &LimbGoal {
                target: Pose::new(target, Quat::from_rotation_x(t)),
                pole: p,
                position_weight: 1.0,
                rotation_weight: 0.5,
            },
        );
        pole.remember(&solved);
        error = error.max(solved.end.position.distance(target));
        let now = f64::from(t);
        black_box(sync.record(now - 0.08, now + 3.0, now));
        black_box(sync.server_time(now));
        black_box(clock.tick(now, DT));
        let q = Quat::from_rotation_y(t);
        black_box(decode_rotation(encode_rotation(q)));
        black_box(decode_position(encode_position(target, 4.0), 4.0));
    });
    assert!(error < 1e-3, "the hand reached its target: {error}");
}
