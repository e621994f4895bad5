//! Property suite: every wire decoder and public core API under sane, degenerate and hostile
//! input (NaN, ±inf, 0, negative, ±1e30, `usize::MAX` counts, random bytes).
//!
//! The rules: nothing panics; finite input never gives NaN or infinity; decoders accept or reject
//! any bytes; counts never size an allocation unchecked. See `prop/harness.rs` for the budget and
//! the environment variables (`ENTWINE_PROP_SEED` reproduces a failure; `cargo xtask fuzz SECONDS`
//! runs the suite longer). Every test here is named `prop_*`.

#[macro_use]
#[path = "prop/harness.rs"]
mod harness;

use glam::{Affine3A, Quat, Vec2, Vec3};

use entwine_core::clock::ClockSync;
use entwine_core::env_touch::shapes::{closest_on_hull, closest_on_segment, closest_on_triangle};
use entwine_core::env_touch::{self, Candidate, EnvTouch, Shape as TouchShape, TouchConfig};
use entwine_core::formation::agent::{next_state, position_command, turn_command};
use entwine_core::formation::assign::total_travel;
use entwine_core::formation::bearing::{
    align_pair, axis_rotation, chain_deltas, chain_local_rotations, look_angles, look_rotation,
    right_neighbour_score,
};
use entwine_core::formation::hash::SpatialHash;
use entwine_core::formation::net::{AckTracker, SeenIds};
use entwine_core::formation::{
    Assigner, BaselineFit, BearingConfig, BearingMotion, BodyFrame, FormationDef, Gains, Recorder,
    Sample, Squad, SquadConfig, Thresholds,
};
use entwine_core::hold_hand::anim::{
    AnimSnapshot, MachineState, PlayerState, MAX_ANIM_BYTES, MAX_ANIM_MACHINES, MAX_ANIM_SHOTS,
    MAX_ANIM_VALUES,
};
use entwine_core::hold_hand::contact::{
    constrain_shared_contact, shared_contact, ContactSolver, ContactTuning, HandInput, Hysteresis,
    ReachSphere,
};
use entwine_core::hold_hand::stream::{
    Frame, HandOffsets, HandSample, PairSample, PairSender, StreamRates, MAX_FRAME_BYTES,
};
use entwine_core::hold_hand::{FollowDriver, FollowTuning, Room, RoomEvent};
use entwine_core::hold_hand::{PairReplay, ReplayTuning};
use entwine_core::kit::{
    self, ByteReader, ByteWriter, LimbGoal, LimbPose, PoleMemory, Pose, Seq16, SequenceGate,
};
use entwine_core::rope::{
    self, chain::arc_rotation, AnchorSample, BoneChain, ChainFit, Collider, EndAttachment,
    PresetTable, Rope, RopeParams, Tube, World,
};

use harness::{always_finite, finite_out, run, Gen, Mode};

// ----- kit ------------------------------------------------------------------------------------

#[test]
fn prop_kit_smoothing() {
    run("prop_kit_smoothing", |g| {
        let (a, b, c, d) = (g.f32(), g.f32(), g.f32(), g.dt());
        always_finite("saturate", &kit::saturate(a))?;
        let lo = g.f32();
        let hi = g.f32();
        always_finite("clamp_finite", &kit::clamp_finite(a, lo, hi, 0.5))?;
        let alpha = kit::exp_alpha(a, b);
        ensure!(
            (0.0..=1.0).contains(&alpha),
            "exp_alpha({a}, {b}) = {alpha}"
        );
        let mut v = g.f32();
        let x = kit::smooth_damp(a, b, &mut v, g.positive(1.0), g.positive(100.0), d);
        finite_out(g, "smooth_damp", &[x, v])?;
        let mut v3 = g.vec3();
        let (p, q, r) = (g.vec3(), g.vec3(), g.vec3());
        let y = kit::smooth_damp_vec3(p, q, &mut v3, g.positive(1.0), g.positive(100.0), d);
        finite_out(g, "smooth_damp_vec3", &[y, v3])?;
        let z = kit::smooth_damp_vec3_ramped(p, q, r, &mut v3, g.positive(1.0), c, d);
        finite_out(g, "smooth_damp_vec3_ramped", &[z, v3])?;
        finite_out(g, "move_towards", &kit::move_towards(a, b, c))?;
        finite_out(g, "move_towards_vec3", &kit::move_towards_vec3(p, q, c))?;
        let s = kit::slerp_shortest(g.quat(), g.quat(), a);
        always_finite("slerp_shortest", &s)?;
        ensure!(
            (s.length() - 1.0).abs() < 1e-3,
            "slerp_shortest not unit: {s:?}"
        );
        finite_out(g, "wrap_angle", &kit::wrap_angle(a))?;
        finite_out(g, "angle_difference", &kit::angle_difference(a, b))?;
        Ok(())
    });
}

#[test]
fn prop_kit_pose_ik() {
    run("prop_kit_pose_ik", |g| {
        let (a, b) = (g.pose(), g.pose());
        let p = g.vec3();
        let t = g.f32();
        for (what, v) in [
            ("compose", a.compose(b)),
            ("inverse", a.inverse()),
            ("to_local", a.to_local(b)),
            ("from_local", a.from_local(b)),
            ("lerp_slerp", Pose::lerp_slerp(a, b, t)),
        ] {
            finite_out(g, what, &v)?;
        }
        finite_out(g, "transform_point", &a.transform_point(p))?;
        finite_out(g, "inverse_transform_point", &a.inverse_transform_point(p))?;
        finite_out(g, "forward", &a.forward())?;
        let pose = LimbPose {
            upper: g.pose(),
            lower: g.pose(),
            end: g.pose(),
        };
        let goal = LimbGoal {
            target: g.pose(),
            pole: g.chance(0.5).then(|| g.vec3()),
            position_weight: g.f32(),
            rotation_weight: g.f32(),
        };
        let solved = kit::solve_limb(&pose, &goal);
        finite_out(g, "solve_limb", &[solved.upper, solved.lower, solved.end])?;
        let mut memory = PoleMemory::default();
        for _ in 0..3 {
            let (shoulder, target, pole, dt) = (g.vec3(), g.vec3(), g.vec3(), g.dt());
            if std::env::var("ENTWINE_PROP_DEBUG").is_ok() {
                eprintln!("memory {memory:?} effective_pole({shoulder:?}, {target:?}, Some({pole:?}), {dt:?})");
            }
            let pole = memory.effective_pole(shoulder, target, Some(pole), dt);
            finite_out(g, "effective_pole", &pole)?;
            memory.remember(&solved);
        }
        Ok(())
    });
}

#[test]
fn prop_kit_quant_decoders() {
    run("prop_kit_quant_decoders", |g| {
        let bytes = g.bytes(32);
        let mut r = ByteReader::new(&bytes);
        while r.remaining() > 0 {
            let got = match g.below(6) {
                0 => r.get_u8().map(f32::from),
                1 => r.get_u16().map(f32::from),
                2 => r.get_f32(),
                3 => r.get_position(g.f32()).map(|v| v.x),
                4 => r.get_rotation().map(|q| q.w),
                _ => r.get_unit(),
            };
            if got.is_err() {
                break;
            }
        }
        let range = g.positive(50.0);
        let v = g.vec3();
        let back = kit::decode_position(kit::encode_position(v, range), range);
        finite_out(g, "position round trip", &back)?;
        let q = kit::decode_rotation(kit::encode_rotation(g.quat()));
        always_finite("decode_rotation", &q)?;
        always_finite("decode_unit", &kit::decode_unit(kit::encode_unit(g.f32())))?;
        let mut gate = SequenceGate::new();
        for _ in 0..8 {
            let _ = gate.accept(Seq16(g.u64() as u16));
        }
        Ok(())
    });
}

/// Flips one random bit of `bytes` or cuts or lengthens it by one byte, now and then.
fn damaged(g: &Gen, mut bytes: Vec<u8>) -> Vec<u8> {
    match g.below(4) {
        0 if !bytes.is_empty() => {
            let i = g.below(bytes.len());
            bytes[i] ^= 1 << g.below(8);
        }
        1 => {
            bytes.pop();
        }
        2 => bytes.push(g.u64() as u8),
        _ => {}
    }
    bytes
}

#[test]
fn prop_network_messages() {
    run("prop_network_messages", |g| {
        let call = network_decoders(g)?;
        network_gates(g, call)
    });
}

/// Every decoder takes any bytes; a message read back is the one written. Returns a valid call.
fn network_decoders(g: &Gen) -> Result<entwine_core::hold_hand::RoomCall, String> {
    use entwine_core::clock::{decode_ping, decode_pong, encode_pong};
    use entwine_core::formation::command::{self, Command, MAX_COMMAND_BYTES};
    use entwine_core::hold_hand::RoomCall;

    let junk = g.bytes(96);
    let _ = RoomCall::decode(&junk);
    let _ = RoomEvent::decode(&junk);
    let _ = command::decode_message(&junk);
    let _ = command::decode_ack(&junk);
    let _ = decode_ping(&junk);
    let _ = decode_pong(&junk);
    let call = match g.below(4) {
        0 => RoomCall::Request {
            from: g.u64() as i64,
            to: g.u64() as i64,
        },
        1 => RoomCall::Accept { by: g.u64() as i64 },
        2 => RoomCall::Decline { by: g.u64() as i64 },
        _ => RoomCall::Cancel { by: g.u64() as i64 },
    };
    ensure!(
        RoomCall::decode(&call.encode()) == Some(call),
        "{call:?} does not read back"
    );
    let _ = RoomCall::decode(&damaged(g, call.encode().to_vec()));
    let event = RoomEvent::Requested {
        from: g.u64() as i64,
        to: g.u64() as i64,
        expires_at: g.f64(),
    };
    let back = RoomEvent::decode(&event.encode());
    ensure!(
        back.map(|e| e.encode()) == Some(event.encode()),
        "{event:?} does not read back bit for bit"
    );
    let _ = RoomEvent::decode(&damaged(g, event.encode().to_vec()));
    let name: String = (0..g.below(40))
        .map(|_| g.pick(&['a', 'é', '7', ' ']))
        .collect();
    let cmd = match g.below(3) {
        0 => Command::form(name),
        1 => Command::march_to(g.vec3(), g.f32()),
        _ => Command::face(g.f32()),
    };
    let mut buf = [0u8; MAX_COMMAND_BYTES];
    let (id, stamp) = (g.u64() as i64, g.f64());
    if let Ok(n) = command::encode_message(id, stamp, &cmd, &mut buf) {
        let back = command::decode_message(&buf[..n]);
        ensure!(back.is_some(), "{cmd:?} does not read back");
        let _ = command::decode_message(&damaged(g, buf[..n].to_vec()));
    }
    let (a, b) = (g.f64(), g.f64());
    let pong = decode_pong(&encode_pong(a, b));
    ensure!(
        pong.map(|(x, y)| (x.to_bits(), y.to_bits())) == Some((a.to_bits(), b.to_bits())),
        "the answer does not read back"
    );
    Ok(call)
}

/// The inbox and the room's gate under any sequence of senders, times and payloads (`call` now and
/// then): the counters add up, and no peer gets more calls through than its limit allows.
fn network_gates(g: &Gen, call: entwine_core::hold_hand::RoomCall) -> harness::Outcome {
    use entwine_core::hold_hand::CallGate;
    use entwine_core::kit::inbox::{abuse_limit, Dropped, Inbox};
    use entwine_core::kit::RateLimit;

    let mut inbox = Inbox::default();
    let mut gate = CallGate::default();
    let limit = RateLimit {
        capacity: g.range(0.0, 20.0),
        per_second: g.range(0.0, 50.0),
    };
    let abuse = abuse_limit(g.f32());
    let mut now = 0.0f64;
    let (mut passed, mut dropped) = ([0u32; 3], 0i64);
    for _ in 0..64 {
        let peer = g.below(3) as i64;
        now += if g.mode == Mode::Hostile {
            g.f64()
        } else {
            f64::from(g.range(0.0, 0.05))
        };
        match inbox.admit(peer, now, limit, abuse) {
            Ok(()) => passed[peer as usize] += 1,
            Err(v) => {
                ensure!(
                    v.why == Dropped::RateLimited,
                    "admit dropped for {:?}",
                    v.why
                );
                dropped += 1;
            }
        }
        if g.chance(0.3) {
            let _ = inbox.drop(
                peer,
                g.pick(&[Dropped::Forged, Dropped::Malformed, Dropped::Unexpected]),
                now,
                abuse,
            );
            dropped += 1;
        }
        let payload = if g.chance(0.5) {
            call.encode().to_vec()
        } else {
            g.bytes(24)
        };
        let _ = gate.admit(peer, Some(&payload), now, limit, abuse);
    }
    let c = inbox.counts();
    ensure!(
        c.rate_limited + c.forged + c.malformed + c.unexpected == dropped,
        "counters {c:?} do not add up to {dropped} drops"
    );
    if g.mode != Mode::Hostile && limit.capacity.is_finite() && limit.per_second.is_finite() {
        let allowed = limit.capacity.max(0.0) as f64 + limit.per_second.max(0.0) as f64 * now + 1.0;
        for (peer, &n) in passed.iter().enumerate() {
            ensure!(
                f64::from(n) <= allowed,
                "peer {peer} got {n} calls through, allowed {allowed}"
            );
        }
    }
    let s = gate.stats();
    ensure!(s.calls + s.rate_limited == 64, "the gate lost calls: {s:?}");
    Ok(())
}

#[test]
fn prop_clock() {
    run("prop_clock", |g| {
        let mut c = ClockSync::default();
        for _ in 0..6 {
            let sent = g.f64();
            c.record(sent, g.f64(), g.f64());
        }
        let t = c.server_time(g.f64());
        if !g.tainted() {
            ensure!(!t.is_nan(), "server_time NaN");
        }
        ensure!(c.offset().is_finite(), "offset {}", c.offset());
        Ok(())
    });
}

// ----- hold hand ------------------------------------------------------------------------------

fn follow_tuning(g: &Gen) -> FollowTuning {
    FollowTuning {
        follow_offset: g.vec3_scaled(1.0),
        preparation_offset: g.vec3_scaled(1.0),
        spring_coefficient: g.positive(30.0),
        min_follow_speed: g.positive(20.0),
        max_follow_speed: g.positive(30.0),
        stop_radius: g.positive(0.1),
    }
}

#[test]
fn prop_hold_hand_follow_contact() {
    run("prop_hold_hand_follow_contact", |g| {
        let tuning = follow_tuning(g);
        let s = tuning.speed(g.f32());
        ensure!(s.is_finite() && s >= 0.0, "speed {s}");
        let mut driver = FollowDriver::default();
        driver.prepare(g.pose(), &tuning);
        for _ in 0..4 {
            let p = driver.step(g.pose(), g.dt(), &tuning);
            finite_out(g, "FollowDriver::step", &p)?;
        }
        let contact = ContactTuning {
            contact_smooth_time: g.positive(0.2),
            reconnect_distance: g.positive(2.0),
            disconnect_distance: g.positive(2.0),
            fade_in_time: g.positive(0.3),
            fade_out_time: g.positive(0.3),
            max_position_weight: g.f32_scaled(1.0),
            max_rotation_weight: g.f32_scaled(1.0),
        };
        let hand = |g: &Gen| HandInput {
            contact: g.pose(),
            upper_arm: g.vec3_scaled(2.0),
            reach: g.positive(1.0),
            offset: g.vec3_scaled(0.1),
            rotation: g.quat(),
        };
        let mut solver = ContactSolver::default();
        for _ in 0..4 {
            let (i, r) = (hand(g), hand(g));
            let out = solver.step(&i, &r, g.f32(), g.chance(0.8), &contact, g.dt());
            for w in [out.position_weight, out.rotation_weight] {
                ensure!((0.0..=1.0).contains(&w), "weight {w} outside [0, 1]");
            }
            for t in [out.initiator_target, out.recipient_target] {
                if t.rotation.is_finite() {
                    ensure!(
                        (t.rotation.length() - 1.0).abs() < 1e-3,
                        "non-unit hand rotation {:?}",
                        t.rotation
                    );
                }
            }
            finite_out(
                g,
                "ContactSolver::step",
                &[out.initiator_target, out.recipient_target],
            )?;
        }
        solver.release(&contact, g.dt());
        let sphere = |g: &Gen| ReachSphere {
            center: g.vec3(),
            radius: g.positive(2.0),
        };
        let (a, b) = (sphere(g), sphere(g));
        let (q, _) = constrain_shared_contact(g.vec3(), a, b);
        finite_out(g, "constrain_shared_contact", &q)?;
        finite_out(g, "shared_contact", &shared_contact(g.pose(), g.pose()))?;
        let mut h = Hysteresis::default();
        h.update(g.f32(), g.f32(), g.f32());
        Ok(())
    });
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one property read top to bottom (each decoder in turn)
fn prop_hold_hand_decoders() {
    run("prop_hold_hand_decoders", |g| {
        // Random bytes, and valid encodings with some bytes flipped or cut.
        let mut bytes = g.bytes(MAX_FRAME_BYTES + 8);
        let mut sender = PairSender::default();
        sender.restart();
        let rates = StreamRates {
            pose_interval: g.positive(0.2),
            ik_interval: g.positive(0.1),
            animation_interval: g.positive(0.2),
        };
        let pair = || PairSample {
            initiator: g.pose(),
            recipient_local: g.pose(),
            contact_rotation: g.pose().rotation,
        };
        let offsets = HandOffsets {
            initiator: g.pose(),
            recipient: g.pose(),
        };
        let now = g.f64();
        if g.chance(0.5) {
            let due = sender.tick(g.dt(), &rates);
            if due.hands || g.chance(0.5) {
                sender.push_hands(HandSample {
                    time: now - f64::from(g.positive(0.3)),
                    contact: g.pose().position,
                    weight: g.f32(),
                    connected: g.chance(0.5),
                    arm_override: g.chance(0.5),
                    has_shared_reach: g.chance(0.5),
                });
            }
            let anim = random_snapshot(g);
            let mut out = [0u8; MAX_FRAME_BYTES];
            let anim = g.chance(0.5).then_some(&anim);
            if g.chance(0.5) {
                // Earlier offsets, so this frame's are compared with them.
                let earlier = HandOffsets {
                    initiator: g.pose(),
                    recipient: g.pose(),
                };
                let _ = sender.write(now, g.chance(0.5), pair(), earlier, None, &mut out);
            }
            if let Ok(n) = sender.write(now, g.chance(0.5), pair(), offsets, anim, &mut out) {
                bytes = out[..n].to_vec();
                for _ in 0..g.below(3) {
                    if !bytes.is_empty() {
                        let k = g.below(bytes.len());
                        bytes[k] ^= 1 << g.below(8);
                    }
                }
                if g.chance(0.3) {
                    bytes.truncate(g.below(bytes.len() + 1));
                }
            }
        }
        let reference = g.chance(0.5).then(|| g.pose().position);
        let scale = [1.0, 0.01, 100.0, 245.0, f32::NAN, 0.0, -1.0, 1e30][g.below(8)];
        if let Ok(frame) = Frame::decode(&bytes, reference, scale) {
            always_finite(
                "decoded pair",
                &[frame.pair.initiator, frame.pair.recipient_local],
            )?;
            for h in frame.hands() {
                always_finite(
                    "decoded hand",
                    &[h.contact.x, h.contact.y, h.contact.z, h.weight],
                )?;
            }
            if let Some(a) = frame.anim() {
                check_snapshot("decoded animation", a)?;
            }
        }
        // The replay fed the same bytes, then asked for views.
        let mut rx = PairReplay::default();
        let tuning = ReplayTuning {
            rates,
            max_root_speed: g.positive(20.0),
            blend_speed: g.positive(10.0),
            ik_timeout: g.positive(1.0),
            ik_fade_time: g.positive(0.3),
        };
        let _ = rx.receive(&bytes, g.f64(), g.chance(0.5), &tuning);
        for _ in 0..3 {
            let seen = [
                g.chance(0.5).then(|| g.pose()),
                g.chance(0.5).then(|| g.pose()),
            ];
            if let Some(v) = rx.render(g.f64(), g.dt(), seen, &tuning) {
                finite_out(g, "replay roots", &[v.initiator, v.recipient])?;
                if let Some(h) = v.hands {
                    finite_out(g, "replay hands", &[h.initiator_hand, h.recipient_hand])?;
                    finite_out(g, "replay weight", &h.weight)?;
                }
            }
            if let Some(a) = rx.animation(g.u64() as u32) {
                check_snapshot("replayed animation", a)?;
            }
        }
        Ok(())
    });
}

/// A snapshot with random counts and values (junk included: NaN, huge, negative positions).
fn random_snapshot(g: &Gen) -> AnimSnapshot {
    let mut a = AnimSnapshot::default();
    for _ in 0..g.below(20) {
        a.push_value(g.f32());
    }
    for _ in 0..g.below(5) {
        a.push_machine(MachineState {
            node: g.u64() as u8,
            travel: g.u64() as u8,
            position: g.f32(),
        });
    }
    for _ in 0..g.below(10) {
        a.push_shot(g.chance(0.5));
    }
    if g.chance(0.3) {
        a.player = Some(PlayerState {
            animation: g.u64() as u8,
            position: g.f32(),
        });
    }
    a
}

/// Fails unless every value and position in `a` is finite and every count in range.
fn check_snapshot(what: &str, a: &AnimSnapshot) -> harness::Outcome {
    always_finite(what, a.values())?;
    ensure!(
        usize::from(a.value_count) <= MAX_ANIM_VALUES
            && usize::from(a.machine_count) <= MAX_ANIM_MACHINES
            && usize::from(a.shot_count) <= MAX_ANIM_SHOTS,
        "{what}: counts out of range {a:?}"
    );
    for m in a.machines() {
        ensure!(m.position.is_finite(), "{what}: position {m:?}");
    }
    if let Some(p) = a.player {
        ensure!(p.position.is_finite(), "{what}: player {p:?}");
    }
    Ok(())
}

#[test]
fn prop_hold_hand_anim_section() {
    run("prop_hold_hand_anim_section", |g| {
        // A valid section decodes back within its quantisation…
        let a = random_snapshot(g);
        let mut buf = [0u8; MAX_ANIM_BYTES + 8];
        let mut w = ByteWriter::new(&mut buf);
        a.encode(&mut w)
            .map_err(|_| "a section overflowed".to_string())?;
        let n = w.written().len();
        ensure!(n <= MAX_ANIM_BYTES, "section of {n} bytes");
        let mut r = ByteReader::new(&buf[..n]);
        let back = AnimSnapshot::decode(&mut r).map_err(|e| format!("{e:?} for {a:?}"))?;
        ensure!(r.remaining() == 0, "trailing bytes");
        check_snapshot("round trip", &back)?;
        ensure!(
            back.value_count == a.value_count
                && back.machine_count == a.machine_count
                && back.shot_count == a.shot_count
                && back.shots == a.shots
                && back.player.is_some() == a.player.is_some(),
            "shape changed: {a:?} -> {back:?}"
        );
        for (x, y) in a.values().iter().zip(back.values()) {
            let x = x.clamp(-65504.0, 65504.0);
            ensure!((x - y).abs() <= x.abs() / 1024.0 + 1e-6, "value {x} -> {y}");
        }
        for (x, y) in a.machines().iter().zip(back.machines()) {
            let p = if x.position.is_finite() {
                x.position.clamp(0.0, 65.535)
            } else {
                0.0
            };
            ensure!(
                x.node == y.node && x.travel == y.travel && (p - y.position).abs() <= 5.1e-4,
                "machine {x:?} -> {y:?}"
            );
        }
        // …and junk, or a valid section flipped or cut, is refused or decodes to finite values.
        let mut junk = if g.chance(0.5) {
            g.bytes(MAX_ANIM_BYTES + 8)
        } else {
            buf[..n].to_vec()
        };
        if !junk.is_empty() && g.chance(0.7) {
            let k = g.below(junk.len());
            junk[k] ^= 1 << g.below(8);
        }
        if g.chance(0.3) {
            junk.truncate(g.below(junk.len() + 1));
        }
        if let Ok(d) = AnimSnapshot::decode(&mut ByteReader::new(&junk)) {
            check_snapshot("decoded junk", &d)?;
        }
        // Interpolation between any two snapshots at any fraction stays finite.
        let b = random_snapshot(g);
        let at = back.at(Some(&b), g.f32(), g.f32(), g.u64() as u32);
        check_snapshot("interpolated", &at)?;
        Ok(())
    });
}

#[test]
fn prop_hold_hand_room() {
    run("prop_hold_hand_room", |g| {
        let mut room = Room::default();
        let mut replica = Room::default();
        let mut events: Vec<RoomEvent> = Vec::new();
        let ids: Vec<i64> = (0..4).map(|_| g.u64() as i64 % 6).collect();
        let mut now = 0.0f64;
        for _ in 0..24 {
            let (a, b) = (g.pick(&ids), g.pick(&ids));
            match g.below(7) {
                0 => room.join(a),
                1 => room.leave(a, &mut events),
                2 => {
                    let t = if g.mode == Mode::Hostile {
                        g.f64()
                    } else {
                        now
                    };
                    if let Ok(e) = room.request(a, b, t, g.f64()) {
                        if let RoomEvent::Requested { expires_at, .. } = e {
                            ensure!(!expires_at.is_nan(), "request expires at NaN (now {t})");
                        }
                        events.push(e);
                    }
                }
                3 => events.extend(room.accept(a).ok()),
                4 => events.extend(room.decline(a).ok()),
                5 => {
                    let _ = room.cancel(a, &mut events);
                }
                _ => {
                    now += f64::from(g.range(0.0, 20.0));
                    room.expire(now, &mut events);
                }
            }
            for e in events.drain(..) {
                replica.apply(e);
            }
            for &id in &ids {
                ensure!(
                    room.interaction(id) == replica.interaction(id)
                        && room.pending_request_from(id) == replica.pending_request_from(id),
                    "replica differs for player {id}"
                );
            }
        }
        // Every request expires within its timeout.
        room.expire(f64::MAX, &mut events);
        for &id in &ids {
            ensure!(
                room.pending_request_from(id).is_none(),
                "request of {id} never expires"
            );
        }
        let mut snap: Vec<RoomEvent> = Vec::new();
        room.snapshot(&mut snap);
        Ok(())
    });
}

// ----- env touch ------------------------------------------------------------------------------

fn touch_shape(g: &Gen) -> TouchShape {
    match g.below(7) {
        0 => TouchShape::Box {
            half_extents: g.vec3_scaled(3.0),
        },
        1 => TouchShape::Sphere {
            radius: g.positive(3.0),
        },
        2 => TouchShape::capsule(g.positive(1.0), g.positive(3.0)),
        3 => TouchShape::cylinder(g.positive(1.0), g.positive(3.0)),
        4 => TouchShape::convex(
            &(0..g.below(12))
                .map(|_| g.vec3_scaled(3.0))
                .collect::<Vec<_>>(),
        ),
        5 => TouchShape::trimesh(
            &(0..g.below(13))
                .map(|_| g.vec3_scaled(3.0))
                .collect::<Vec<_>>(),
        ),
        _ => TouchShape::world_boundary(g.vec3_scaled(1.0), g.f32())
            .map_or(TouchShape::Plane, |(plane, _)| plane),
    }
}

#[test]
fn prop_env_touch_shapes() {
    run("prop_env_touch_shapes", |g| {
        let shape = touch_shape(g);
        let p = g.vec3();
        let q = shape.closest_point_local(p);
        finite_out(g, "closest_point_local", &q)?;
        let t = Affine3A::from_scale_rotation_translation(
            Vec3::splat(g.positive(2.0)),
            {
                glam::Vec4::from(g.quat())
                    .try_normalize()
                    .map(Quat::from_vec4)
                    .filter(|n| n.is_normalized())
                    .unwrap_or(Quat::IDENTITY)
            },
            g.vec3(),
        );
        let _ = shape.closest_point(&t, p);
        let _ = (shape.distance(p), shape.normal(p), shape.bounding_radius());
        finite_out(
            g,
            "closest_on_triangle",
            &closest_on_triangle(p, g.vec3(), g.vec3(), g.vec3()),
        )?;
        finite_out(
            g,
            "closest_on_segment",
            &closest_on_segment(p, g.vec3(), g.vec3()),
        )?;
        let _ = env_touch::detection_box(g.f32(), g.vec3());
        Ok(())
    });
}

/// Brute-force distance from `p` to the hull of `pts` (f64): 0 inside (some tetrahedron of the
/// points holds it), else the nearest triangle of any three points.
fn hull_distance(pts: &[Vec3], p: Vec3) -> f64 {
    use glam::DVec3;
    let d: Vec<DVec3> = pts.iter().map(|v| v.as_dvec3() - p.as_dvec3()).collect();
    let n = d.len();
    let tri = |a: DVec3, b: DVec3, c: DVec3| -> f64 {
        // Closest point of triangle abc to the origin by projection and edge fallbacks.
        let seg = |x: DVec3, y: DVec3| {
            let xy = y - x;
            let l = xy.length_squared();
            let t = if l > 0.0 {
                (-x.dot(xy) / l).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (x + xy * t).length()
        };
        let nrm = (b - a).cross(c - a);
        let nn = nrm.length_squared();
        let mut best = seg(a, b).min(seg(b, c)).min(seg(a, c));
        if nn > 0.0 {
            let q = nrm * (a.dot(nrm) / nn);
            // Inside the triangle when the three sub-areas share the normal's sign.
            let inside = [(a, b), (b, c), (c, a)]
                .iter()
                .all(|(x, y)| (*y - *x).cross(q - *x).dot(nrm) >= 0.0);
            if inside {
                best = best.min(q.length());
            }
        }
        best
    };
    let mut best = d.iter().map(|v| v.length()).fold(f64::INFINITY, f64::min);
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                best = best.min(tri(d[i], d[j], d[k]));
                for l in k + 1..n {
                    // Origin inside tetrahedron ijkl?
                    let (a, b, c, e) = (d[i], d[j], d[k], d[l]);
                    let vol = (b - a).cross(c - a).dot(e - a);
                    if vol.abs() < 1e-300 {
                        continue;
                    }
                    let s = [
                        (b - a).cross(c - a).dot(-a),
                        (c - a).cross(e - a).dot(-a),
                        (e - a).cross(b - a).dot(-a),
                        (c - b).cross(e - b).dot(-b),
                    ];
                    let sign = vol.signum();
                    if s[0] * sign >= 0.0
                        && s[1] * sign >= 0.0
                        && s[2] * sign >= 0.0
                        && s[3] * -sign >= 0.0
                    {
                        return 0.0;
                    }
                }
            }
        }
    }
    best
}

#[test]
fn prop_env_touch_hull_accuracy() {
    run("prop_env_touch_hull_accuracy", |g| {
        // A small hull with one far vertex: aspect ratios up to 1e6.
        let far = match g.mode {
            Mode::Sane => 10f32.powf(g.range(0.0, 4.0)),
            Mode::Degenerate => 1e4,
            Mode::Hostile => 1e6,
        };
        let mut pts: Vec<Vec3> = (0..g.below(6) + 2)
            .map(|_| Vec3::new(g.range(-1.0, 1.0), g.range(-1.0, 1.0), g.range(-1.0, 1.0)))
            .collect();
        let dir = Vec3::new(g.range(-1.0, 1.0), g.range(-1.0, 1.0), g.range(-1.0, 1.0))
            .try_normalize()
            .unwrap_or(Vec3::X);
        pts.push(dir * far);
        let p = Vec3::new(g.range(-3.0, 3.0), g.range(-3.0, 3.0), g.range(-3.0, 3.0))
            + dir * g.range(-0.1, 1.1) * far;
        let q = closest_on_hull(&pts, p).ok_or("no closest point")?;
        if std::env::var("ENTWINE_PROP_DEBUG").is_ok() {
            eprintln!("pts {pts:?}\np {p:?}\nq {q:?}");
        }
        let exact = hull_distance(&pts, p);
        let got = f64::from(p.distance(q));
        // The returned point must be on (or in) the hull and as near as the exact distance.
        let tol = 1e-4 * exact.max(1.0) + 1e-6 * f64::from(far);
        ensure!(
            got <= exact + tol,
            "hull point {got} away, exact {exact} (far vertex {far})"
        );
        let q_off = hull_distance(&pts, q);
        ensure!(q_off <= tol, "returned point {q} is {q_off} off the hull");
        Ok(())
    });
}

fn touch_config(g: &Gen) -> TouchConfig {
    let mut c = TouchConfig::default();
    let fields: [&mut f32; 8] = [
        &mut c.shoulder_height,
        &mut c.waist_height,
        &mut c.surface_offset,
        &mut c.reset_duration,
        &mut c.approach_distance,
        &mut c.approach_duration,
        &mut c.touch_distance,
        &mut c.jump_speed,
    ];
    for f in fields {
        if g.mode != Mode::Sane && g.chance(0.3) {
            *f = g.f32();
        }
    }
    let axes: [&mut Vec3; 4] = [
        &mut c.palm_axis,
        &mut c.finger_axis,
        &mut c.right_palm_axis,
        &mut c.right_finger_axis,
    ];
    for axis in axes {
        if g.mode != Mode::Sane && g.chance(0.3) {
            *axis = g.vec3_scaled(1.0);
        }
    }
    c
}

#[test]
fn prop_env_touch_machine() {
    run("prop_env_touch_machine", |g| {
        let config = touch_config(g);
        if config.check().is_some() {
            // The node sanitises; the core must still not panic on the raw one.
            let _ = config.sanitized(|_| {});
        }
        let mut m = EnvTouch::new(config, [g.pose(), g.pose()]);
        let candidates: Vec<Candidate> = (0..g.below(3))
            .map(|k| Candidate {
                id: k as u64,
                closest_point: g.vec3_scaled(2.0),
            })
            .collect();
        let mut t = 0.0;
        for _ in 0..20 {
            let root = g.pose();
            let input = entwine_core::env_touch::TouchInput {
                dt: g.dt(),
                root,
                shoulders: [g.vec3_scaled(2.0), g.vec3_scaled(2.0)],
                velocity: g.vec3_scaled(3.0),
                move_input: g.chance(0.5).then(|| g.vec3_scaled(1.0)),
                grounded: g.chance(0.9),
                candidates: &candidates,
                surface_normal: g.chance(0.5).then(|| g.vec3_scaled(1.0)),
            };
            let hands = m.step(&input);
            for h in &hands {
                finite_out(g, "EnvTouch hand", &h.pose)?;
                finite_out(
                    g,
                    "EnvTouch weights",
                    &[h.position_weight, h.rotation_weight],
                )?;
            }
            finite_out(g, "query_point", &m.query_point(root))?;
            let _ = m.surface_target(g.vec3());
            t += 0.1;
        }
        let a = entwine_core::env_touch::ramp_alpha(g.f32(), g.f32(), g.f32());
        ensure!(a.is_finite(), "ramp_alpha {a} (t {t})");
        Ok(())
    });
}

// ----- rope -----------------------------------------------------------------------------------

fn rope_params(g: &Gen) -> RopeParams {
    let mut p = RopeParams::default();
    if g.mode != Mode::Sane || g.chance(0.5) {
        p.segment_length = g.positive(1.0);
        p.damping = g.f32_scaled(1.0);
        p.iterations = g.count() as u32;
        p.substeps = g.count() as u32;
        p.gravity = g.vec3();
        p.radius = g.positive(0.1);
        p.ground_enabled = g.chance(0.5);
        p.ground_height = g.f32();
        p.friction = g.f32_scaled(1.0);
        p.tear_ratio = g.f32();
        p.stretch_limit = g.f32();
        p.length_speed = g.f32();
        p.point_mass = g.positive(2.0);
        p.fade_time = g.positive(2.0);
    }
    p
}

fn rope_world(g: &Gen) -> World {
    let mut w = World::with_capacity(4);
    for _ in 0..g.below(4) {
        let shape = match g.below(4) {
            0 => rope::Shape::Sphere {
                radius: g.positive(1.0),
            },
            1 => rope::Shape::Capsule {
                radius: g.positive(0.5),
                half_height: g.positive(1.0),
            },
            2 => rope::Shape::Box {
                half_extents: g.vec3_scaled(1.0),
            },
            _ => rope::Shape::Plane,
        };
        w.push(Collider {
            pose: g.pose(),
            shape,
            solid: g.chance(0.5),
            cutter: g.chance(0.2),
            motion: rope::Motion {
                velocity: g.vec3(),
                angular_velocity: g.vec3(),
                pivot: g.vec3(),
            },
        });
    }
    w
}

#[test]
fn prop_rope_simulation() {
    run("prop_rope_simulation", |g| {
        let params = rope_params(g);
        let mut rope = Rope::new(g.count(), g.count(), params, g.vec3(), g.vec3());
        let world = rope_world(g);
        let anchor0 = g.vec3();
        for k in 0..12 {
            let end = match g.below(3) {
                0 => EndAttachment::Free,
                1 => EndAttachment::Pinned(g.vec3()),
                _ => EndAttachment::Body {
                    position: g.vec3(),
                    velocity: g.vec3(),
                    mass: g.positive(10.0),
                },
            };
            let anchor = anchor0 + Vec3::new(k as f32 * 0.01, 0.0, 0.0);
            rope.step(g.dt(), anchor, end, &world);
            if g.chance(0.2) {
                rope.set_target_length(g.f32());
            }
            if g.chance(0.1) {
                rope.cut_at(g.count());
            }
            finite_out(g, "rope points", rope.points())?;
            finite_out(g, "rope tension", &rope.tension())?;
        }
        let mut out = vec![Vec3::ZERO; g.below(40)];
        rope.interpolated(g.f32(), &mut out);
        rope.loose_interpolated(g.f32(), &mut out);
        finite_out(g, "interpolated", &out[..])?;
        let _ = rope.rest_length(g.count());
        rope.reset(g.vec3(), g.vec3(), g.f32());
        finite_out(g, "reset points", rope.points())?;
        Ok(())
    });
}

#[test]
fn prop_rope_presets_record_tube() {
    run("prop_rope_presets_record_tube", |g| {
        let table = if g.chance(0.3) {
            PresetTable { presets: vec![] }
        } else {
            PresetTable::builtin()
        };
        let preset = table.for_speed(g.f32());
        ensure!(preset.iterations >= 1, "preset {preset:?}");
        let _ = table.get("mid");
        let ron = match g.below(3) {
            0 => String::from_utf8_lossy(&g.bytes(64)).into_owned(),
            1 => "(presets: [])".into(),
            _ => format!(
                "(presets: [(name: \"a\", min_speed: {}, max_speed: {}, iterations: {}, segment_length: {}, camera_smooth_time: {})])",
                g.f32(), g.f32(), g.count() as u32, g.f32(), g.f32()
            ),
        };
        let _ = PresetTable::from_ron(&ron);
        let rope = Rope::new(8, 4, RopeParams::default(), Vec3::ZERO, Vec3::NEG_Y);
        let mut rec = rope::Recorder::default();
        let room = rec.start(&rope, g.count());
        ensure!(room <= rope::MAX_RECORD_STEPS, "recorder room {room}");
        for _ in 0..4 {
            rec.push(AnchorSample {
                dt: g.dt(),
                anchor: g.vec3(),
                end: EndAttachment::Free,
                target_length: g.f32(),
            });
        }
        if let Some(recording) = rec.stop() {
            let mut replayer = rope::Replayer::default();
            let mut r = rope.clone();
            replayer.begin(&recording, &mut r);
            let world = World::with_capacity(0);
            while let Some(s) = replayer.next(&recording) {
                r.set_target_length(s.target_length);
                r.step(s.dt, s.anchor, s.end, &world);
            }
            finite_out(g, "replayed rope", r.points())?;
        }
        let mut tube = Tube::new(g.count(), g.count(), g.count());
        ensure!(
            tube.max_rings() <= 8 * rope::MAX_CAPACITY,
            "tube rings {}",
            tube.max_rings()
        );
        let points: Vec<Vec3> = (0..g.below(10)).map(|_| g.vec3()).collect();
        tube.build(&points, g.positive(0.1));
        finite_out(g, "tube positions", tube.positions())?;
        finite_out(g, "tube normals", tube.normals())?;
        Ok(())
    });
}

#[test]
fn prop_rope_bone_chain() {
    run("prop_rope_bone_chain", |g| {
        let rest: Vec<Pose> = (0..g.below(8)).map(|_| g.pose()).collect();
        let mut chain = BoneChain::new(&rest);
        chain.reserve_points(g.count().min(1 << 16));
        for _ in 0..4 {
            let points: Vec<Vec3> = (0..g.below(12)).map(|_| g.vec3()).collect();
            let fit = if g.chance(0.5) {
                ChainFit::Stretch
            } else {
                ChainFit::RestLength
            };
            if let Ok(poses) = chain.solve(&points, g.pose(), g.chance(0.5), fit) {
                finite_out(g, "chain poses", poses)?;
            }
        }
        finite_out(g, "arc_rotation", &arc_rotation(g.vec3(), g.vec3()))?;
        Ok(())
    });
}

// ----- formation ------------------------------------------------------------------------------

fn formation_ron(g: &Gen) -> String {
    let shape = match g.below(9) {
        0 => "Line".to_string(),
        1 => format!(
            "Column(files: {}, ranks: {})",
            g.count() as u32,
            g.count() as u32
        ),
        2 => format!("Arc(radius: {:?})", g.f32()),
        3 => "Circle".to_string(),
        4 => format!(
            "Spiral(initial_radius: {:?}, growth: {:?})",
            g.f32(),
            g.f32()
        ),
        5 => format!("Wedge(angle: {:?})", g.f32() * 20.0),
        6 => format!(
            "Box(files: {}, hollow: {})",
            g.count() as u32,
            g.chance(0.5)
        ),
        7 => format!(
            "Custom(points: [{}])",
            (0..g.below(6))
                .map(|_| format!("({:?}, {:?})", g.f32(), g.f32()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => String::from_utf8_lossy(&g.bytes(24)).into_owned(),
    };
    format!(
        "(shape: {shape}, spacing: {:?}, direction: {:?}, offset: ({:?}, {:?}))",
        g.positive(3.0),
        g.f32(),
        g.f32(),
        g.f32()
    )
}

#[test]
fn prop_formation_shapes_assign() {
    run("prop_formation_shapes_assign", |g| {
        let text = formation_ron(g);
        if let Ok(def) = FormationDef::from_ron(&text) {
            let mut pos = Vec::new();
            let mut heading = Vec::new();
            let n = g.count();
            if def.layout(n, &mut pos, &mut heading).is_ok() {
                always_finite("layout positions", &pos[..])?;
                always_finite("layout headings", &heading[..])?;
            }
        }
        // The assigner always returns a permutation (also above the exact size, at huge coordinates).
        let n = match g.mode {
            Mode::Hostile => g.below(300),
            _ => g.below(60),
        };
        let scale = if g.mode == Mode::Hostile {
            g.pick(&[5e19, 1e30, 1.0, 1e6])
        } else {
            10.0
        };
        let agents: Vec<Vec2> = (0..n)
            .map(|_| Vec2::new(g.range(-1.0, 1.0), g.range(-1.0, 1.0)) * scale)
            .collect();
        let slots: Vec<Vec2> = (0..n)
            .map(|_| Vec2::new(g.range(-1.0, 1.0), g.range(-1.0, 1.0)) * scale)
            .collect();
        let mut slot_of = Vec::new();
        Assigner::default().assign(&agents, &slots, &mut slot_of);
        let mut seen = vec![false; n];
        for &s in &slot_of {
            ensure!(
                (s as usize) < n && !seen[s as usize],
                "not a permutation ({n} agents, scale {scale})"
            );
            seen[s as usize] = true;
        }
        ensure!(slot_of.len() == n, "{} slots for {n} agents", slot_of.len());
        always_finite("total_travel", &total_travel(&agents, &slots, &slot_of))?;
        Ok(())
    });
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one property read top to bottom (a random squad driven)
fn prop_formation_squad() {
    run("prop_formation_squad", |g| {
        let mut cfg = SquadConfig::default();
        if g.mode != Mode::Sane {
            cfg.max_speed = g.f32();
            cfg.max_turn_rate = g.f32();
            cfg.repulsion_radius = g.f32();
            cfg.arrival_time = g.f32();
            cfg.latency = g.f32();
            cfg.step_noise = g.f32();
        }
        let n = g
            .count()
            .min(if g.mode == Mode::Hostile { 200 } else { 40 });
        let mut reported = Vec::new();
        let fixed = cfg.sanitized(|c| reported.push(c));
        for c in &reported {
            if !(c.used.is_finite() && c.used >= c.lo && c.used <= c.hi) {
                return Err(format!(
                    "{c:?}: the value used is outside the accepted range"
                ));
            }
        }
        let first = reported.len();
        if fixed.sanitized(|c| reported.push(c)) != fixed || reported.len() != first {
            return Err(format!("sanitizing twice reported again: {reported:?}"));
        }
        let mut squad = Squad::new(n, g.chance(0.7), fixed);
        let def =
            FormationDef::from_ron("(shape: Line, spacing: 1.2)").map_err(|e| format!("{e:?}"))?;
        let _ = squad.form(&def);
        if let Ok(other) = FormationDef::from_ron(&formation_ron(g)) {
            let _ = squad.form(&other);
        }
        squad.set_recording(g.count());
        for _ in 0..10 {
            match g.below(8) {
                0 => squad.march(g.vec2(), g.f32()),
                1 => squad.march_to(g.vec2(), g.f32()),
                2 => squad.face(g.f32()),
                3 => squad.salute(g.f32()),
                4 => squad.set_anchor(g.vec2(), g.f32(), g.f32()),
                5 => squad.place(g.below(n + 1), g.vec2(), g.f32()),
                6 => squad.age_command(g.f32()),
                _ => squad.dress(),
            }
            for i in 0..n {
                if g.chance(0.3) {
                    squad.sense(i, g.vec2() * g.pick(&[1.0, 1.0, 1e20]));
                }
            }
            squad.advance(g.dt());
            let m = *squad.metrics();
            if std::env::var("ENTWINE_PROP_DEBUG").is_ok() {
                eprintln!("metrics {m:?} anchor {:?}", squad.anchor());
                for i in 0..n {
                    eprintln!(
                        "agent {i} pos {:?} slot {:?} slot_pos {:?}",
                        squad.position(i),
                        squad.slot_of(i),
                        squad.slot_of(i).map(|s| squad.slot_pos(s))
                    );
                }
            }
            always_finite(
                "metrics",
                &[
                    m.mean_slot_error,
                    m.max_slot_error,
                    m.heading_std,
                    m.spacing_error,
                ],
            )?;
            for i in 0..n {
                always_finite("agent position", &squad.position(i))?;
                always_finite("agent heading", &squad.heading(i))?;
            }
        }
        if let Some(rec) = squad.recorder() {
            let mut sink = std::io::sink();
            rec.export_csv(&mut sink).map_err(|e| e.to_string())?;
        }
        let _ = squad.baseline();
        Ok(())
    });
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one property read top to bottom (each part in turn)
fn prop_formation_parts() {
    run("prop_formation_parts", |g| {
        let rec = Recorder::new(g.count(), g.count());
        ensure!(
            rec.capacity().saturating_mul(rec.agents()) <= (64 << 20) / 8,
            "recording ring {} × {}",
            rec.capacity(),
            rec.agents()
        );
        let mut rec = rec;
        rec.push(1, |_| Sample::default());
        let mut acks = AckTracker::default();
        let mut seen = SeenIds::default();
        for _ in 0..10 {
            let id = acks.next_id();
            acks.sent(id, g.below(4) as i32, g.f64());
            acks.ack(g.u64() as u32 % 8, g.below(4) as i32);
            let _ = acks.poll(g.f64());
            seen.first_time(g.u64() as u32 % 80);
        }
        let th = Thresholds::default();
        let gains = Gains::default();
        let mut counter = g.u64() as u8;
        let state = next_state(
            Default::default(),
            &mut counter,
            g.f32(),
            g.f32(),
            g.chance(0.5),
            &th,
        );
        let mut integral = g.vec2();
        let v = position_command(
            state,
            g.vec2(),
            g.vec2(),
            &mut integral,
            &gains,
            g.dt(),
            g.f32(),
            g.f32(),
        );
        finite_out(g, "position_command", &v)?;
        finite_out(
            g,
            "turn_command",
            &turn_command(g.f32(), g.f32(), &gains, g.f32()),
        )?;
        let mut fit = BaselineFit::default();
        let pts: Vec<Vec2> = (0..g.below(10)).map(|_| g.vec2()).collect();
        let w: Vec<f32> = pts.iter().map(|_| g.f32()).collect();
        let _ = fit.fit(&pts, &w);
        let mut hash = SpatialHash::default();
        hash.rebuild(&pts, g.f32(), |_| true);
        hash.for_each_near(g.vec2(), |_| {});
        // Bearing: look angles, chains, motion.
        let cfg = BearingConfig::default().sanitized();
        let mut motion = BearingMotion::default();
        for _ in 0..4 {
            motion.step(g.vec2(), g.chance(0.5), &cfg, g.dt());
            finite_out(g, "bearing look", &motion.look())?;
        }
        finite_out(g, "clamp_look", &cfg.clamp_look(g.vec2()))?;
        if let Some(frame) = BodyFrame::new(g.vec3(), g.vec3()) {
            finite_out(g, "to_skeleton", &frame.to_skeleton(g.vec3()))?;
        }
        let _ = look_angles(g.vec3(), g.vec3(), g.vec3());
        finite_out(g, "axis_rotation", &axis_rotation(g.vec3(), g.f32()))?;
        finite_out(
            g,
            "look_rotation",
            &look_rotation(g.vec3(), g.vec3(), g.vec2()),
        )?;
        let deltas = chain_deltas(g.vec3(), g.vec3(), g.vec2(), [g.f32(), g.f32()]);
        finite_out(g, "chain_deltas", &deltas)?;
        let locals = chain_local_rotations(
            [g.quat(), g.quat(), g.quat()],
            [g.quat(), g.quat(), g.quat()],
            deltas,
        );
        finite_out(g, "chain_local_rotations", &locals)?;
        finite_out(
            g,
            "align_pair",
            &align_pair(g.vec3(), g.vec3(), g.vec3(), g.vec3()),
        )?;
        let _ = right_neighbour_score(g.vec2(), g.vec2(), g.f32());
        let _ = Quat::IDENTITY;
        Ok(())
    });
}
