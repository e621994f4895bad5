//! One regression test per finding of the hostile-input fuzz run (issue 19). Each one reproduces
//! the input that panicked, overflowed, allocated without bound or returned NaN before the fix.

use glam::{Quat, Vec2, Vec3};

use entwine_core::env_touch::shapes::closest_on_hull;
use entwine_core::env_touch::{Candidate, EnvTouch, Shape, TouchConfig, TouchInput};
use entwine_core::formation::assign::total_travel;
use entwine_core::formation::{
    frames_within_budget, Assigner, FormationDef, Recorder as FormationRecorder, Squad,
    SquadConfig, MAX_RECORD_BYTES,
};
use entwine_core::hold_hand::contact::{ContactSolver, ContactTuning, HandInput};
use entwine_core::hold_hand::stream::MAX_FRAME_BYTES;
use entwine_core::hold_hand::{FollowDriver, FollowTuning, Room, RoomError};
use entwine_core::hold_hand::{
    HandOffsets, PairReplay, PairSample, PairSender, ReplayTuning, StreamRates,
};
use entwine_core::kit::{exp_alpha, Pose};
use entwine_core::rope::{
    BoneChain, ChainFit, EndAttachment, PresetTable, Recorder, Rope, RopeParams, Tube, World,
    MAX_CAPACITY, MAX_RECORD_STEPS,
};

#[test]
fn regression_cylinder_nan_height_does_not_panic() {
    for height in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let shape = Shape::cylinder(1.0, height);
        assert_eq!(shape.closest_point_local(Vec3::new(3.0, 0.5, 0.0)), None);
    }
    let capsule = Shape::capsule(f32::NAN, 2.0);
    assert_eq!(capsule.closest_point_local(Vec3::X), None);
}

#[test]
fn regression_follow_driver_min_above_max_speed() {
    let tuning = FollowTuning {
        min_follow_speed: 30.0,
        max_follow_speed: 5.0,
        ..FollowTuning::default()
    };
    assert_eq!(tuning.speed(1.0), 5.0, "the maximum wins");
    let mut driver = FollowDriver::default();
    driver.prepare(Pose::IDENTITY, &tuning);
    let p = driver.step(Pose::IDENTITY, 1.0 / 60.0, &tuning);
    assert!(p.is_finite());
}

#[test]
fn regression_exp_alpha_infinite_dt_and_tau() {
    assert_eq!(exp_alpha(f32::INFINITY, f32::INFINITY), 0.0);
    assert_eq!(exp_alpha(f32::INFINITY, 0.1), 1.0);
    assert_eq!(exp_alpha(1.0, f32::INFINITY), 0.0);
}

#[test]
fn regression_replay_unchecked_dt_and_clock() {
    // The replay (which replaced the old root follower) with impossible frame times and clocks.
    let mut sender = PairSender::default();
    sender.restart();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let pair = PairSample {
        initiator: Pose::new(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
        recipient_local: Pose::IDENTITY,
        contact_rotation: Quat::IDENTITY,
    };
    let n = sender
        .write(1.0, true, pair, HandOffsets::default(), None, &mut buf)
        .unwrap();
    let tuning = ReplayTuning::default();
    for dt in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -1.0, 1e30] {
        for now in [f64::NAN, f64::INFINITY, -1e300, 1.0] {
            let mut rx = PairReplay::default();
            let _ = rx.receive(&buf[..n], now, true, &tuning);
            if let Some(v) = rx.render(
                now,
                dt,
                [Some(Pose::new(Vec3::NAN, Quat::IDENTITY)), None],
                &tuning,
            ) {
                assert!(
                    v.initiator.is_finite() && v.recipient.is_finite(),
                    "dt {dt} now {now}: {v:?}"
                );
            }
        }
    }
}

#[test]
fn regression_rope_cut_at_usize_max() {
    let mut rope = Rope::new(16, 8, RopeParams::default(), Vec3::ZERO, Vec3::NEG_Y);
    assert!(rope.cut_at(usize::MAX).is_none());
    assert!(rope.cut_at(usize::MAX - 1).is_none());
    assert_eq!(rope.rest_length(usize::MAX), 0.0);
}

#[test]
fn regression_empty_preset_table_for_speed() {
    let table = PresetTable { presets: vec![] };
    let builtin = PresetTable::builtin();
    for speed in [0.0, 5.0, f32::NAN, f32::INFINITY] {
        assert_eq!(table.for_speed(speed), builtin.for_speed(speed));
    }
}

#[test]
fn regression_rope_recorder_usize_max_steps() {
    let rope = Rope::new(8, 4, RopeParams::default(), Vec3::ZERO, Vec3::NEG_Y);
    let mut rec = Recorder::default();
    assert_eq!(rec.start(&rope, usize::MAX), MAX_RECORD_STEPS);
    assert!(rec.is_recording());
}

#[test]
fn regression_tube_usize_max_points() {
    let tube = Tube::new(usize::MAX, usize::MAX, usize::MAX);
    assert_eq!(
        tube.max_rings(),
        (MAX_CAPACITY - 1) * tube.subdivisions() + 1
    );
}

/// Asserts `slot_of` is a permutation of `0..n`.
fn assert_permutation(slot_of: &[u32], n: usize) {
    assert_eq!(slot_of.len(), n);
    let mut seen = vec![false; n];
    for &s in slot_of {
        assert!(!seen[s as usize], "slot {s} taken twice");
        seen[s as usize] = true;
    }
}

#[test]
fn regression_assigner_permutation_at_huge_coordinates() {
    // Above the exact size (banded blocks) and below it, at ±5e19 m: f32 distances overflow.
    for n in [40, 161, 400] {
        let mut x = 0x1234_5678u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let agents: Vec<Vec2> = (0..n).map(|_| Vec2::new(next(), next()) * 5e19).collect();
        let slots: Vec<Vec2> = (0..n).map(|_| Vec2::new(next(), next()) * 5e19).collect();
        let mut slot_of = Vec::new();
        Assigner::default().assign(&agents, &slots, &mut slot_of);
        assert_permutation(&slot_of, n);
        assert!(total_travel(&agents, &slots, &slot_of).is_finite());
    }
}

#[test]
fn regression_convex_hull_long_thin_is_exact() {
    // A unit tetrahedron with one vertex pulled out to 1e4 and 1e6: the closest point of a query
    // beside the spike must be on the spike's side, as near as the exact distance (1e-4 relative).
    for far in [1e4f32, 1e6] {
        let pts = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(far, 0.3, 0.3),
        ];
        for k in 1..=9 {
            let x = far * k as f32 / 10.0;
            let p = Vec3::new(x, 0.2, -2.0);
            let q = closest_on_hull(&pts, p).expect("a point");
            // Exact: the hull's z ≥ 0 face (z = 0 plane edge region): the nearest hull point lies
            // on the triangle (0,0,0), (1,0,0), (far, .3, .3) or its neighbours; compare with a
            // fine sampling of the hull's edges from the spike.
            let mut best = f64::INFINITY;
            for a in &pts[..3] {
                for i in 0..=200_000 {
                    let t = f64::from(i) / 200_000.0;
                    let e = a.as_dvec3().lerp(pts[3].as_dvec3(), t);
                    best = best.min(e.distance(p.as_dvec3()));
                }
            }
            let got = f64::from(q.distance(p));
            assert!(
                got <= best * (1.0 + 1e-4) + 1e-3,
                "far {far}, x {x}: {got} vs sampled edge distance {best}"
            );
        }
    }
}

#[test]
fn regression_pose_interval_negative_infinity() {
    let mut sender = PairSender::default();
    sender.restart();
    let mut rx = PairReplay::default();
    let tuning = ReplayTuning {
        rates: StreamRates {
            pose_interval: f32::NEG_INFINITY,
            ..StreamRates::default()
        },
        ..ReplayTuning::default()
    };
    let mut buf = [0u8; MAX_FRAME_BYTES];
    for k in 0..5 {
        let due = sender.tick(0.2, &tuning.rates);
        assert!(due.frame, "the default interval stands in");
        let pair = PairSample {
            initiator: Pose::new(Vec3::new(k as f32, 0.0, 0.0), Quat::IDENTITY),
            recipient_local: Pose::new(Vec3::X, Quat::IDENTITY),
            contact_rotation: Quat::IDENTITY,
        };
        let now = f64::from(k) * 0.2;
        let n = sender
            .write(now, true, pair, HandOffsets::default(), None, &mut buf)
            .unwrap();
        rx.receive(&buf[..n], now, true, &tuning).unwrap();
        let v = rx.render(now, 0.016, [None, None], &tuning).unwrap();
        assert!(v.initiator.is_finite() && v.recipient.is_finite());
    }
}

#[test]
fn regression_room_request_at_nan_time() {
    let mut room = Room::default();
    room.join(1);
    room.join(2);
    assert_eq!(room.request(1, 2, f64::NAN, 10.0), Err(RoomError::BadTime));
    assert!(
        room.pending_request_from(1).is_none(),
        "the target is not busy"
    );
    // A replayed request with a NaN expiry still ends.
    room.apply(entwine_core::hold_hand::RoomEvent::Requested {
        from: 1,
        to: 2,
        expires_at: f64::NAN,
    });
    let mut events = Vec::new();
    room.expire(0.0, &mut events);
    assert!(room.pending_request_from(1).is_none());
}

#[test]
fn regression_squad_sensed_at_1e20() {
    let mut squad = Squad::new(8, false, SquadConfig::default());
    squad
        .form(&FormationDef::from_ron("(shape: Line, spacing: 1.2)").unwrap())
        .unwrap();
    for i in 0..8 {
        squad.sense(i, Vec2::new(1e20, -1e20));
    }
    squad.advance(0.1);
    let m = squad.metrics();
    for v in [
        m.mean_slot_error,
        m.max_slot_error,
        m.heading_std,
        m.spacing_error,
    ] {
        assert!(v.is_finite(), "{m:?}");
    }
}

#[test]
fn regression_rope_ground_height_1e30() {
    let params = RopeParams {
        ground_enabled: true,
        ground_height: 1e30,
        ..RopeParams::default()
    };
    let mut issues = Vec::new();
    let fixed = params.sanitized(|i| issues.push(i));
    assert_eq!(issues.len(), 1, "one issue: ground_height");
    let mut rope = Rope::new(16, 8, fixed, Vec3::ZERO, Vec3::NEG_Y);
    let world = World::with_capacity(0);
    for _ in 0..30 {
        rope.step(1.0 / 60.0, Vec3::ZERO, EndAttachment::Free, &world);
    }
    assert!(rope.points().iter().all(|p| p.is_finite()));
}

#[test]
fn regression_bone_chain_1e30() {
    let rest: Vec<Pose> = (0..4)
        .map(|i| Pose::new(Vec3::new(0.0, i as f32 * 1e30, 0.0), Quat::IDENTITY))
        .collect();
    let mut chain = BoneChain::new(&rest);
    let points: Vec<Vec3> = (0..6).map(|i| Vec3::new(0.0, -(i as f32), 0.0)).collect();
    for fit in [ChainFit::Stretch, ChainFit::RestLength] {
        let poses = chain
            .solve(&points, Pose::IDENTITY, true, fit)
            .expect("solves");
        assert!(poses.iter().all(|p| p.is_finite()), "{poses:?}");
    }
    let far: Vec<Vec3> = (0..6)
        .map(|i| Vec3::new(0.0, i as f32 * 1e30, 0.0))
        .collect();
    assert!(chain
        .solve(&far, Pose::IDENTITY, true, ChainFit::Stretch)
        .is_err());
}

#[test]
fn regression_env_touch_1e30() {
    let rest = [Pose::IDENTITY, Pose::IDENTITY];
    let mut m = EnvTouch::new(TouchConfig::default(), rest);
    let candidates = [Candidate {
        id: 1,
        closest_point: Vec3::new(1e30, 1.4, 0.0),
    }];
    for k in 0..120 {
        let root = Pose::new(Vec3::new(1e30 * (k % 2) as f32, 0.0, 0.0), Quat::IDENTITY);
        let hands = m.step(&TouchInput {
            dt: 1.0 / 60.0,
            root,
            shoulders: [Vec3::new(-0.2, 1.4, 0.0), Vec3::new(0.2, 1.4, 0.0)],
            velocity: Vec3::new(0.0, 0.0, -1e30),
            move_input: Some(Vec3::NEG_Z),
            grounded: true,
            candidates: &candidates,
            surface_normal: Some(Vec3::new(1e30, 0.0, 0.0)),
        });
        for h in hands {
            assert!(
                !h.pose.position.is_nan() && !h.pose.rotation.is_nan(),
                "{h:?}"
            );
            assert!(h.position_weight.is_finite() && h.rotation_weight.is_finite());
        }
    }
    let shape = Shape::Sphere { radius: 1.0 };
    let q = shape
        .closest_point_local(Vec3::new(1e30, 1e30, 0.0))
        .unwrap();
    assert!(q.is_finite() && (q.length() - 1.0).abs() < 1e-3, "{q}");
}

#[test]
fn regression_contact_solver_normalises_rotations_and_clamps_weights() {
    let hand = |x: f32| HandInput {
        contact: Pose::new(Vec3::new(x, 1.0, 0.0), Quat::IDENTITY),
        upper_arm: Vec3::new(x, 1.4, 0.0),
        reach: 0.6,
        offset: Vec3::ZERO,
        rotation: Quat::from_xyzw(0.0, 3.0, 0.0, 4.0),
    };
    let tuning = ContactTuning {
        max_position_weight: 7.0,
        max_rotation_weight: -2.0,
        ..ContactTuning::default()
    };
    let mut solver = ContactSolver::default();
    let mut out = None;
    for _ in 0..60 {
        out = Some(solver.step(&hand(0.0), &hand(0.4), 0.5, true, &tuning, 1.0 / 60.0));
    }
    let out = out.unwrap();
    for t in [out.initiator_target, out.recipient_target] {
        assert!((t.rotation.length() - 1.0).abs() < 1e-5, "{:?}", t.rotation);
    }
    assert!((0.0..=1.0).contains(&out.position_weight));
    assert_eq!(out.rotation_weight, 0.0);
}

#[test]
fn regression_formation_recording_byte_budget_and_streaming() {
    // The maximum settings: 100 000 frames of 10 000 agents would be 20 GB.
    let frames = frames_within_budget(10_000, 100_000);
    assert!(frames >= 1);
    let rec = FormationRecorder::new(10_000, 100_000);
    assert_eq!(rec.capacity(), frames);
    assert!(rec.capacity() * rec.agents() * 20 <= MAX_RECORD_BYTES);
    assert_eq!(frames_within_budget(usize::MAX, usize::MAX), 0);
    // Export streams into any writer (here one that counts bytes).
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut squad = Squad::new(50, true, SquadConfig::default());
    squad
        .form(&FormationDef::from_ron("(shape: Line, spacing: 1.2)").unwrap())
        .unwrap();
    assert_eq!(squad.set_recording(100), 100);
    for _ in 0..10 {
        squad.advance(1.0 / 60.0);
    }
    let mut out = Count(0);
    squad.recorder().unwrap().export_csv(&mut out).unwrap();
    assert!(out.0 > 50 * 10 * 10);
}

#[test]
fn regression_pole_memory_tiny_vectors_do_not_assert() {
    // Found by `cargo xtask fuzz` (degenerate mode, seed 0xebb170bd01359863): the remembered bend
    // and the pole's side are opposite, their cross product is ~1e-21 (squared: sub-normal), so
    // `try_normalize` returns a vector glam does not count as unit and `Quat::from_axis_angle`
    // asserted.
    use entwine_core::kit::{LimbPose, PoleMemory};
    let mut memory = PoleMemory::default();
    memory.remember(&LimbPose {
        upper: Pose::IDENTITY,
        lower: Pose::new(
            Vec3::new(-6.373024e-22, 0.42292738, -0.90616363),
            Quat::IDENTITY,
        ),
        end: Pose::new(Vec3::new(0.0, 0.90616363, 0.42292738), Quat::IDENTITY),
    });
    let pole = memory.effective_pole(
        Vec3::new(-1e-30, 0.0, -1.446887),
        Vec3::ZERO,
        Some(Vec3::new(-0.0, -1.0, 1e-30)),
        1e-7,
    );
    assert!(pole.is_some_and(|p| p.is_finite()), "{pole:?}");
}

/// `cargo xtask fuzz 600` found: beside the middle of a 9e5 m sliver (four vertices within 2 m,
/// one far away) the hull point came back as the query itself, 3.4 m off the hull. One face's
/// normal carried a rounding error larger than the tetrahedron's volume and flipped the inside
/// test; the volume is now taken from the best-conditioned face.
#[test]
fn regression_convex_hull_sliver_inside_test() {
    let pts = [
        Vec3::new(0.171_808_24, -0.860_136_4, 0.023_118_496),
        Vec3::new(-0.937_344_55, 0.120_357_99, 0.036_987_662),
        Vec3::new(-0.517_129_9, 0.675_767_2, -0.255_376_94),
        Vec3::new(0.048_918_962, -0.802_099_8, -0.778_083_44),
        Vec3::new(400_222.78, -822_652.06, 403_813.4),
    ];
    let p = Vec3::new(195_495.34, -401_830.16, 197_245.8);
    let q = closest_on_hull(&pts, p).expect("a point");
    // The property suite's f64 brute force puts p 3.463 m from the hull (f32 coordinates near 4e5
    // are 3 cm apart, hence the tolerance).
    let gap = p.distance(q);
    assert!(
        (gap - 3.463).abs() < 0.05,
        "hull point {q} is {gap} m from {p}"
    );
}

/// `cargo xtask fuzz 600` (seed 0x7f06818d8433620e): a snapshot whose play position and elapsed
/// time are both huge interpolated to an infinite position.
#[test]
fn regression_anim_position_stays_finite_when_run_on_with_huge_times() {
    use entwine_core::hold_hand::{AnimSnapshot, MachineState};
    let mut s = AnimSnapshot::default();
    assert!(s.push_machine(MachineState {
        node: 1,
        travel: 1,
        position: f32::MAX,
    }));
    for (s_of_the_way, elapsed) in [(0.5, f32::MAX), (1.0, 3.0e38), (f32::NAN, f32::INFINITY)] {
        let out = s.at(None, s_of_the_way, elapsed, 0);
        assert!(out.machines()[0].position.is_finite(), "{out:?}");
    }
}

/// `cargo xtask fuzz 600` (seed 0x998f3b3966df2d0c): a pair sample with a rotation whose squared
/// length underflows normalised to a quaternion of length 0.99, which glam refuses to rotate by (a
/// debug assertion in the sender's upright test).
#[test]
fn regression_tiny_rotations_normalise_before_they_rotate() {
    // x ≈ 1.6e-22, y = w = the smallest subnormal: its squared length underflows.
    let tiny = Quat::from_array([
        f32::from_bits(458_704_768),
        f32::from_bits(1),
        0.0,
        f32::from_bits(1),
    ]);
    let pair = PairSample {
        initiator: Pose::new(Vec3::ZERO, tiny),
        recipient_local: Pose::new(Vec3::X, tiny),
        contact_rotation: tiny,
    };
    let mut s = PairSender::default();
    s.restart();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let n = s
        .write(0.0, true, pair, HandOffsets::default(), None, &mut buf)
        .unwrap();
    let mut rx = PairReplay::default();
    assert!(rx
        .receive(&buf[..n], 0.0, true, &ReplayTuning::default())
        .is_ok());
}

/// `cargo xtask fuzz` (seeds 0xe4f58b2d0f735e3f and 0x9ec8b2c963d4bd73, twice in two tries): a
/// world boundary's normal so short that its squared length is subnormal (1.9e-22, or 6.8e-23)
/// normalised to a vector glam does not count as unit, and `from_rotation_arc` asserted
/// `to.is_normalized()`. Any finite non-zero normal now names its plane.
#[test]
fn regression_world_boundary_tiny_normal() {
    let normals = [
        // The two seeds' normals, bit for bit.
        Vec3::new(0.0, f32::from_bits(0x1b60_9d54), f32::from_bits(1)),
        Vec3::new(f32::from_bits(0x1aa5_0fd6), f32::from_bits(1), 0.0),
        Vec3::new(1e-22, 0.0, 0.0),
        Vec3::new(-1e-38, 0.0, 0.0),
        Vec3::new(f32::MAX, f32::MAX, 0.0),
    ];
    for normal in normals {
        for d in [0.0, 1.0, 1e30, f32::MAX] {
            let (shape, placed) = Shape::world_boundary(normal, d).expect("a plane");
            assert_eq!(shape, Shape::Plane);
            assert!(placed.is_finite(), "{normal} {d}: {placed:?}");
            let up = placed.transform_vector3(Vec3::Y);
            let expected = normal / normal.abs().max_element();
            assert!(
                up.dot(expected.normalize()) > 0.999_99,
                "{normal}: the plane's normal is {up}"
            );
        }
    }
    for normal in [Vec3::ZERO, Vec3::new(f32::NAN, 1.0, 0.0), Vec3::INFINITY] {
        assert!(Shape::world_boundary(normal, 0.0).is_none(), "{normal}");
    }
}

/// Issue "A server no client can flood, bloat or crash": a hand offset whose rotation is not unit
/// length (zero, scaled, subnormal, NaN) reached glam's `angle_between` in the pair stream writer
/// on the frame after the first, which asserted. The writer sends the offsets sanitised: unit
/// rotations (the identity for zero or NaN), a non-finite position at the contact.
#[test]
fn regression_pair_writer_non_unit_hand_offsets() {
    use entwine_core::hold_hand::stream::Frame;
    let rotations = [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::from_xyzw(0.0, 2.0, 0.0, 0.0),
        Quat::from_xyzw(1e-22, 0.0, 0.0, f32::from_bits(1)),
        Quat::from_xyzw(1e30, 1e30, 0.0, 0.0),
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        Quat::from_xyzw(0.0, 0.0, f32::INFINITY, 1.0),
    ];
    let pair = PairSample {
        initiator: Pose::IDENTITY,
        recipient_local: Pose::new(Vec3::X, Quat::IDENTITY),
        contact_rotation: Quat::IDENTITY,
    };
    let mut sender = PairSender::default();
    sender.restart();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let mut now = 0.0;
    for (i, a) in rotations.iter().enumerate() {
        for b in rotations {
            let position = if i % 2 == 0 { Vec3::NAN } else { Vec3::Y * 0.1 };
            let offsets = HandOffsets {
                initiator: Pose::new(position, *a),
                recipient: Pose::new(Vec3::ZERO, b),
            };
            now += 0.05;
            let n = sender
                .write(now, true, pair, offsets, None, &mut buf)
                .unwrap();
            let frame = Frame::decode(&buf[..n], Some(Vec3::ZERO), 1.0).unwrap();
            if let Some(sent) = frame.offsets {
                for hand in [sent.initiator, sent.recipient] {
                    assert!(hand.is_finite(), "{a:?} {b:?}: {hand:?}");
                    assert!((hand.rotation.length() - 1.0).abs() < 1e-3, "{hand:?}");
                }
            }
        }
    }
    let sane = HandOffsets {
        initiator: Pose::new(Vec3::ZERO, Quat::from_rotation_y(0.5)),
        recipient: Pose::IDENTITY,
    };
    let tiny = HandOffsets {
        initiator: Pose::new(Vec3::ZERO, Quat::from_rotation_y(0.5) * 1e-20),
        recipient: Pose::IDENTITY,
    };
    assert_eq!(tiny.sanitized().initiator.position, Vec3::ZERO);
    let turned = tiny.sanitized().initiator.rotation;
    assert!(
        turned.angle_between(sane.initiator.rotation) < 1e-3,
        "{turned:?}"
    );
}

/// Issue "A server no client can flood, bloat or crash": a surface normal of 10⁻²² (a ray hit on a
/// degenerate face) normalised to a vector glam does not count as unit, and the hand frame built
/// from it asserted in `Quat::from_mat3`. The normal is normalised exactly and the frame taken by
/// the total `rotation_of_axes`; hand axes as short are accepted the same way.
#[test]
fn regression_env_touch_tiny_surface_normal_and_hand_axes() {
    use entwine_core::env_touch::TouchState;
    let tiny_axes = TouchConfig {
        palm_axis: Vec3::new(0.0, 0.0, 1e-22),
        finger_axis: Vec3::new(0.0, -1e-22, f32::from_bits(1)),
        right_palm_axis: Vec3::new(0.0, 0.0, -1e-22),
        right_finger_axis: Vec3::new(0.0, -3e-23, 0.0),
        ..TouchConfig::default()
    };
    assert_eq!(tiny_axes.check(), None, "short axes are axes");
    for config in [TouchConfig::default(), tiny_axes] {
        // Walking at 1.4 m/s beside a wall 0.45 m to the right (its face's normal −X).
        let rest = [
            Pose::new(Vec3::new(-0.25, 0.9, 0.0), Quat::IDENTITY),
            Pose::new(Vec3::new(0.25, 0.9, 0.0), Quat::IDENTITY),
        ];
        let mut m = EnvTouch::new(config, rest);
        let mut touched = false;
        for k in 0..360 {
            let z = -1.4 * k as f32 / 60.0;
            let root = Pose::new(Vec3::new(0.0, 0.0, z), Quat::IDENTITY);
            let wall = [Candidate {
                id: 7,
                closest_point: Vec3::new(0.45, 1.45, z),
            }];
            let normal = [
                Vec3::new(-1e-22, 0.0, 0.0),
                Vec3::new(-1.8e-22, f32::from_bits(1), 0.0),
                Vec3::new(-f32::MAX, 0.0, 0.0),
            ][k % 3];
            let hands = m.step(&TouchInput {
                dt: 1.0 / 60.0,
                root,
                shoulders: [Vec3::new(-0.18, 1.45, z), Vec3::new(0.18, 1.45, z)],
                velocity: Vec3::new(0.0, 0.0, -1.4),
                move_input: Some(Vec3::NEG_Z),
                grounded: true,
                candidates: &wall,
                surface_normal: m.wants_surface_normal().then_some(normal),
            });
            for h in hands {
                assert!(h.pose.is_finite(), "{h:?}");
                assert!((h.pose.rotation.length() - 1.0).abs() < 1e-3, "{h:?}");
            }
            if let Some(n) = m.surface_normal() {
                assert!((n - Vec3::NEG_X).length() < 1e-5, "{n}");
            }
            touched |= m.state() == TouchState::Touch;
        }
        assert!(touched, "the hand reached the wall");
    }
}

/// Issue "A server no client can flood, bloat or crash": `FormationController.march()` under a
/// parent scaled to zero inverted the node's basis, and glam asserted on the zero determinant.
/// The node's frame is now the core's `PlacedFrame`, whose inverse falls back to the rotation.
#[test]
fn regression_march_under_a_parent_scaled_to_zero() {
    use entwine_core::formation::command::{Command, Order, PlacedFrame};
    use entwine_core::kit::affine_inverse;
    use glam::Affine3A;
    let turned = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    let origin = Vec3::new(3.0, 0.0, -2.0);
    // Marching along world −X is marching along the node's own −Z (turned 90° left), whatever its
    // scale; scaled to zero along every axis it has no rotation left, and marches in the parent's.
    let own = glam::Vec2::new(0.0, -1.0);
    let placements = [
        (Vec3::ZERO, origin, glam::Vec2::new(-1.0, 0.0)),
        (Vec3::new(0.0, 1.0, 1.0), origin, own),
        (Vec3::new(1.0, 0.0, 1.0), origin, own),
        (Vec3::splat(1e-30), origin, own),
        (Vec3::splat(1e30), origin, own),
        (Vec3::ONE, Vec3::NAN, own),
    ];
    for (scale, at, expected) in placements {
        let to_parent = Affine3A::from_scale_rotation_translation(scale, turned, at);
        let inverse = affine_inverse(to_parent);
        assert!(inverse.is_finite(), "{to_parent:?}: {inverse:?}");
        let frame = PlacedFrame::new(to_parent, std::f32::consts::FRAC_PI_2);
        match Command::march(Vec3::NEG_X, 1.5).localize(&frame) {
            Ok(Order::March { direction, speed }) => {
                assert_eq!(speed, 1.5);
                let d = direction.normalize();
                assert!((d - expected).length() < 1e-4, "{scale}: {d}");
            }
            other => panic!("{to_parent:?}: {other:?}"),
        }
        match Command::march_to(Vec3::new(3.0, 0.0, -7.0), 1.0).localize(&frame) {
            Ok(Order::MarchTo { target, .. }) => assert!(target.is_finite(), "{target}"),
            other => panic!("{to_parent:?}: {other:?}"),
        }
    }
    // An invertible frame is inverted exactly.
    let scaled = Affine3A::from_scale_rotation_translation(Vec3::splat(2.0), turned, origin);
    let p = Vec3::new(1.0, 2.0, 3.0);
    let back = affine_inverse(scaled).transform_point3(scaled.transform_point3(p));
    assert!((back - p).length() < 1e-5, "{back}");
}

/// The audit of glam's asserting calls (issue "A server no client can flood, bloat or crash"):
/// each input here reached one before it was guarded — a cutter turning at 10⁻²² rad/s
/// (`from_scaled_axis`), a collider's non-unit rotation (`Quat::inverse`, `Mat3::from_quat`), a
/// hand's palm axis of 10⁻²² (`from_mat3`), a root's non-unit rotation in the pair's hand sample
/// (`Quat::inverse`), and a character scaled to zero (`Affine3A::inverse`).
#[test]
#[allow(clippy::too_many_lines)] // reason: one audited call after another, read top to bottom
fn regression_audited_glam_assertions() {
    use entwine_core::env_touch::node::ShoulderMemory;
    use entwine_core::hold_hand::{palm_to_palm, HandShape};
    use entwine_core::rope::{Collider, Motion};
    use glam::Affine3A;
    let tiny = Vec3::new(1e-22, f32::from_bits(1), 0.0);
    let odd = [
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        Quat::from_xyzw(0.0, 3.0, 0.0, 0.0),
        Quat::from_xyzw(1e-22, 0.0, 0.0, f32::from_bits(1)),
    ];
    for rotation in odd {
        let motion = Motion::between(
            Pose::new(Vec3::ZERO, rotation),
            Pose::new(Vec3::X, Quat::IDENTITY),
            0.1,
        );
        assert!(motion.velocity.is_finite() && motion.angular_velocity.is_finite());
        for angular_velocity in [tiny, Vec3::new(0.0, 1000.0, 0.0), Vec3::Y * 1e-30] {
            let collider = Collider {
                motion: Motion {
                    velocity: Vec3::X,
                    angular_velocity,
                    pivot: Vec3::ZERO,
                },
                ..Collider::still(
                    Pose::new(Vec3::Z, rotation),
                    Shape::Sphere { radius: 0.5 },
                    true,
                    true,
                )
            };
            let back = collider.rewound(0.01);
            assert!(back.pose.is_finite(), "{back:?}");
            assert!((back.pose.rotation.length() - 1.0).abs() < 1e-3, "{back:?}");
        }
        let mut world = World::with_capacity(1);
        world.push(Collider::still(
            Pose::new(Vec3::ZERO, rotation),
            Shape::Box {
                half_extents: Vec3::ONE,
            },
            true,
            false,
        ));
        let mut rope = Rope::new(
            16,
            8,
            RopeParams::default(),
            Vec3::new(0.0, 3.0, 0.0),
            Vec3::NEG_Y,
        );
        for _ in 0..5 {
            let _ = rope.step(
                1.0 / 60.0,
                Vec3::new(0.0, 3.0, 0.0),
                EndAttachment::Free,
                &world,
            );
        }
        assert!(rope.points().iter().all(|p| p.is_finite()));
    }
    let hand = HandShape {
        palm: Vec3::new(0.0, 0.0, 1e-22),
        finger: Vec3::new(0.0, -1e-22, f32::from_bits(1)),
        length: 0.16,
        thickness: 0.03,
    };
    for palm_back in [true, false] {
        let (offset, rotation) = palm_to_palm(&hand, palm_back).expect("a grip");
        assert!(offset.is_finite() && (rotation.length() - 1.0).abs() < 1e-3);
    }
    let mut shoulders = ShoulderMemory::new([Vec3::X, -Vec3::X]);
    for character in [
        Affine3A::from_scale(Vec3::ZERO),
        Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0)),
        Affine3A::from_scale(Vec3::splat(1e-30)),
    ] {
        let _ = shoulders.read(character, [Vec3::Y, -Vec3::Y]);
        assert!(shoulders
            .carried(Affine3A::IDENTITY)
            .iter()
            .all(|s| s.is_finite()));
    }
}
