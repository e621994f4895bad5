//! The replay against the truth: an initiator walks a known path with turns and stops, its frames
//! cross a simulated network (delay, jitter that reorders, loss), and every rendered frame is
//! compared with the initiator's own pose at the view time the replay declares.

use glam::{Quat, Vec3};

use super::*;
use crate::hold_hand::stream::{
    Due, PairSample, PairSender, TickFrames, TickInput, MAX_FRAME_BYTES,
};
use crate::kit::test_util::Lcg;

const DT: f32 = 1.0 / 60.0;
const FOLLOW: Vec3 = Vec3::new(-0.82, 0.0, 0.17);

/// The initiator's screen at time `t`: walks from 0.5 s at 1.4 m/s with a swinging heading,
/// stops at `stop` (decelerating over 0.2 s). Returns (initiator, recipient world, contact local).
fn truth(t: f64, stop: f64) -> (Pose, Pose, Vec3) {
    truth_walk(t, 0.5, stop, 0.2)
}

/// [`truth`] for a walk from `start` to `stop` that speeds up and slows down over `ramp` seconds
/// (0: at once, as a character whose velocity follows its input does).
fn truth_walk(t: f64, start: f64, stop: f64, ramp: f64) -> (Pose, Pose, Vec3) {
    // Distance walked: integral of a speed that ramps 0 → 1.4 → 0.
    let speed = |t: f64| -> f64 {
        let (up, down) = if ramp > 0.0 {
            (
                ((t - start) / ramp).clamp(0.0, 1.0),
                ((stop - t) / ramp).clamp(0.0, 1.0),
            )
        } else {
            (
                f64::from(u8::from(t >= start)),
                f64::from(u8::from(t < stop)),
            )
        };
        1.4 * up.min(down)
    };
    let mut p = Vec3::ZERO;
    let steps = (t / 0.002).ceil().max(1.0) as usize;
    let h = t / steps as f64;
    // The heading swings with the distance walked, so a standing initiator does not turn.
    let mut walked = 0.0f64;
    let mut heading = 0.0f32;
    for k in 0..steps {
        let s = (k as f64 + 0.5) * h;
        heading = (0.9 * (0.5 * walked).sin()) as f32;
        let dir = Quat::from_rotation_y(heading) * Vec3::NEG_Z;
        p += dir * (speed(s) * h) as f32;
        walked += speed(s) * h;
    }
    let initiator = Pose::new(p, Quat::from_rotation_y(heading));
    let recipient = Pose::new(initiator.transform_point(FOLLOW), initiator.rotation);
    let contact = Vec3::new(-0.41, 1.0 + 0.02 * (3.0 * t).sin() as f32, -0.1);
    (initiator, recipient, contact)
}

fn offsets() -> HandOffsets {
    HandOffsets {
        initiator: Pose::new(Vec3::new(0.0, 0.0, 0.02), Quat::IDENTITY),
        recipient: Pose::new(Vec3::new(0.0, 0.0, -0.02), Quat::IDENTITY),
    }
}

#[derive(Clone, Copy)]
struct Net {
    delay: f64,
    jitter: f64,
    loss: f64,
    /// No frame sent between these two times arrives (a dropped link, a burst of loss).
    gap: Option<(f64, f64)>,
}

struct Run {
    errors: Vec<f32>,
    hand_errors: Vec<f32>,
    steps: f32,
    truth_steps: f32,
    overshoot: f32,
    delays: Vec<f32>,
    bytes: usize,
    seconds: f64,
    too_fast: u32,
    scale: f32,
}

/// The initiator's side of one tick of the walk, as the glue does it: the last frame again when a
/// repeat is due, then [`PairSender::send_tick`]. Each frame's bytes go to `send`; `last` keeps the
/// last one for repeats.
fn send_walk(
    sender: &mut PairSender,
    due: Due,
    now: f64,
    (initiator, recipient, contact): (Pose, Pose, Vec3),
    offsets: HandOffsets,
    last: &mut Vec<u8>,
    send: &mut impl FnMut(&[u8]),
) {
    if due.repeat && !last.is_empty() {
        send(last);
    }
    let input = TickInput {
        now,
        shared: true,
        pair: Some(PairSample {
            initiator,
            recipient_local: initiator.to_local(recipient),
            contact_rotation: Quat::IDENTITY,
        }),
        hand: Some(HandSample {
            time: now,
            contact,
            weight: 1.0,
            connected: true,
            arm_override: true,
            has_shared_reach: true,
        }),
        offsets,
        anim: None,
    };
    let mut frames = TickFrames::default();
    sender.send_tick(due, &input, &mut frames).unwrap();
    for bytes in frames.iter() {
        *last = bytes.to_vec();
        send(bytes);
    }
}

impl Run {
    /// Returns the roots' p95 and maximum error and the hands' p95 error of a pair `scale` times
    /// the size of a 1.75 m human, divided by `scale`: what they are for the human.
    fn errors_at_unit_scale(&self, scale: f32) -> (f32, f32, f32) {
        (
            percentile(&self.errors, 0.95) / scale,
            percentile(&self.errors, 1.0) / scale,
            percentile(&self.hand_errors, 0.95) / scale,
        )
    }

    /// Asserts the replay's accuracy contract for a pair `scale` times the human size: the roots'
    /// p95 and maximum error and the hands' p95 within the limits (at the human size), the
    /// rendered steps at most 1.25 times the truth's, and an overshoot of at most 3 cm times `scale`.
    fn assert_accurate(&self, label: &str, scale: f32, p95_limit: f32, max_limit: f32) {
        let (p95, max, hand95) = self.errors_at_unit_scale(scale);
        assert!(
            p95 <= p95_limit && max <= max_limit,
            "{label}: p95 {p95} max {max}"
        );
        assert!(hand95 <= p95_limit, "{label}: hands p95 {hand95}");
        assert!(
            self.steps <= 1.25 * self.truth_steps,
            "{label}: step {} vs {}",
            self.steps,
            self.truth_steps
        );
        assert!(
            self.overshoot <= 0.03 * scale,
            "{label}: overshoot {}",
            self.overshoot
        );
    }
}

fn percentile(v: &[f32], p: f64) -> f32 {
    let mut s = v.to_vec();
    s.sort_by(f32::total_cmp);
    s[((s.len() - 1) as f64 * p).round() as usize]
}

/// Runs 9 s: the pair starts at 0, walks from 0.5 s, stops at 6 s. The receiver shares the clock.
fn run(net: &Net, seed: u64, seen: [Option<Pose>; 2]) -> Run {
    run_scaled(net, seed, seen, 1.0)
}

/// [`run`] with characters `scale` times the size of a 1.75 m human: every distance and speed of
/// the walk, the follow offset and the hands are that many times larger.
fn run_scaled(net: &Net, seed: u64, seen: [Option<Pose>; 2], scale: f32) -> Run {
    run_walk(net, seed, seen, scale, (0.5, 6.0, 0.2))
}

impl Run {
    /// A run of nine seconds with nothing measured yet.
    fn nine_seconds() -> Self {
        Run {
            errors: Vec::new(),
            hand_errors: Vec::new(),
            steps: 0.0,
            truth_steps: 0.0,
            overshoot: 0.0,
            delays: Vec::new(),
            bytes: 0,
            seconds: 9.0,
            too_fast: 0,
            scale: 1.0,
        }
    }
}

/// The walk's roots and contact for characters `scale` times the size of a 1.75 m human.
fn scaled((i, r, c): (Pose, Pose, Vec3), scale: f32) -> (Pose, Pose, Vec3) {
    (
        Pose::new(i.position * scale, i.rotation),
        Pose::new(r.position * scale, r.rotation),
        c * scale,
    )
}

/// The walk's hand offsets for characters `scale` times the size of a 1.75 m human.
fn scaled_offsets(scale: f32) -> HandOffsets {
    let o = offsets();
    HandOffsets {
        initiator: Pose::new(o.initiator.position * scale, o.initiator.rotation),
        recipient: Pose::new(o.recipient.position * scale, o.recipient.rotation),
    }
}

/// Hands the receiver the frames that have arrived by `now`, in order of arrival.
fn deliver(inbox: &mut Vec<(f64, Vec<u8>)>, rx: &mut PairReplay, now: f64, tuning: &ReplayTuning) {
    inbox.sort_by(|a, b| a.0.total_cmp(&b.0));
    while inbox.first().is_some_and(|m| m.0 <= now) {
        let (_, bytes) = inbox.remove(0);
        let _ = rx.receive(&bytes, now, true, tuning);
    }
}

/// [`run_scaled`] for a walk from `start` to `stop` with speed ramps of `ramp` s ([`truth_walk`]).
fn run_walk(
    net: &Net,
    seed: u64,
    seen: [Option<Pose>; 2],
    scale: f32,
    (start, stop, ramp): (f64, f64, f64),
) -> Run {
    let tuning = ReplayTuning::default();
    let truth = |t: f64, stop: f64| scaled(truth_walk(t, start, stop, ramp), scale);
    let offsets = || scaled_offsets(scale);
    let mut sender = PairSender::default();
    sender.set_scale(scale);
    sender.restart();
    let mut rx = PairReplay::default();
    let mut rng = Lcg(seed);
    let mut inbox: Vec<(f64, Vec<u8>)> = Vec::new();
    let mut out = Run::nine_seconds();
    let mut last_frame = Vec::new();
    let mut last_shown: Option<[Vec3; 2]> = None;
    let mut last_truth: Option<[Vec3; 2]> = None;
    let end_truth = truth(9.0, stop);
    let final_dir = end_truth.0.rotation * Vec3::NEG_Z;
    for k in 0..(9.0 / f64::from(DT)) as usize {
        let now = k as f64 * f64::from(DT);
        let (i, r, c) = truth(now, stop);
        let due = sender.tick(DT, &tuning.rates);
        let mut send = |bytes: &[u8]| {
            out.bytes += bytes.len();
            let gap = net.gap.is_some_and(|(a, b)| now >= a && now < b);
            if f64::from(rng.signed()) * 0.5 + 0.5 >= net.loss && !gap {
                let arrive = now + net.delay + f64::from(rng.signed()) * net.jitter;
                inbox.push((arrive, bytes.to_vec()));
            }
        };
        send_walk(
            &mut sender,
            due,
            now,
            (i, r, c),
            offsets(),
            &mut last_frame,
            &mut send,
        );
        deliver(&mut inbox, &mut rx, now, &tuning);
        let Some(view) = rx.render(now, DT, seen, &tuning) else {
            continue;
        };
        let (ti, tr, tc) = truth(view.time, stop);
        let shown = [view.initiator.position, view.recipient.position];
        let truth_now = [ti.position, tr.position];
        if let (Some(ls), Some(lt)) = (last_shown, last_truth) {
            for j in 0..2 {
                out.steps = out.steps.max(shown[j].distance(ls[j]));
                out.truth_steps = out.truth_steps.max(truth_now[j].distance(lt[j]));
            }
        }
        last_shown = Some(shown);
        last_truth = Some(truth_now);
        out.delays.push(rx.view_delay());
        // Measured from 1 s (after a start blend) to the end.
        if view.time > 1.0 {
            let e = shown[0]
                .distance(truth_now[0])
                .max(shown[1].distance(truth_now[1]));
            out.errors.push(e);
            if let Some(h) = view.hands {
                let expect = ti.transform_point(tc + Vec3::new(0.0, 0.0, 0.02) * scale);
                out.hand_errors
                    .push(h.initiator_hand.position.distance(expect));
            }
        }
        if view.time > stop {
            for j in 0..2 {
                let past =
                    (shown[j] - [end_truth.0.position, end_truth.1.position][j]).dot(final_dir);
                out.overshoot = out.overshoot.max(past);
            }
        }
    }
    out.too_fast = rx.too_fast();
    out.scale = rx.scale();
    out
}

#[test]
fn a_pair_a_hundred_times_larger_or_smaller_replays_to_the_same_accuracy_in_proportion() {
    // A rig imported in centimetres (scale 100) walks at 140 m/s with its partner 82 m beside it
    // and its hands 2 m from the contact; one at 0.01 is a 1.75 cm figurine. Both are sent over
    // ranges in proportion (the scale rides in key frames) and meet the 100/20/5 % contract in
    // proportion, with no frame refused as too fast.
    let (_, net, p95_limit, max_limit) = conditions().into_iter().nth(1).unwrap();
    for scale in [100.0f32, 0.01] {
        for seed in 1..=3 {
            let r = run_scaled(&net, seed, [None, None], scale);
            let (p95, max, hand95) = r.errors_at_unit_scale(scale);
            println!(
                "scale {scale} seed {seed}: roots p95 {:.1} max {:.1} mm, hands p95 {:.1} mm at scale 1; overshoot {:.1} mm; {} too fast; scale on the wire {}",
                p95 * 1e3,
                max * 1e3,
                hand95 * 1e3,
                r.overshoot / scale * 1e3,
                r.too_fast,
                r.scale
            );
            assert!((r.scale / scale - 1.0).abs() < 0.03, "{}", r.scale);
            assert_eq!(r.too_fast, 0, "scale {scale} seed {seed}");
            r.assert_accurate(
                &format!("scale {scale} seed {seed}"),
                scale,
                p95_limit,
                max_limit,
            );
        }
    }
}

#[test]
fn a_start_or_stop_between_two_samples_is_shown_when_it_happened() {
    // The initiator starts and stops at once (its velocity follows its input), at moments that
    // fall anywhere between two 10 Hz root samples. A receiver drawing straight lines between the
    // scheduled samples alone shows the start smeared over the interval (35 mm off at worst at
    // 1.4 m/s); the tick before the start and the stop goes out as a corner, so every rendered
    // frame on a clean link is within the interpolation of a smooth walk.
    let (_, net, _, _) = conditions().into_iter().next().unwrap();
    let mut bytes = 0.0;
    for j in 0..12u32 {
        let start = 0.5 + f64::from(j) * 0.0093;
        let stop = 6.0 + f64::from(j) * 0.0071;
        let r = run_walk(
            &net,
            u64::from(j) + 1,
            [None, None],
            1.0,
            (start, stop, 0.0),
        );
        let p95 = percentile(&r.errors, 0.95);
        let max = percentile(&r.errors, 1.0);
        bytes += r.bytes as f64 / r.seconds / 12.0;
        println!(
            "start {start:.4} stop {stop:.4}: roots p95 {:.1} max {:.1} mm, overshoot {:.1} mm, {:.0} B/s",
            p95 * 1e3,
            max * 1e3,
            r.overshoot * 1e3,
            r.bytes as f64 / r.seconds
        );
        assert!(max <= 0.01, "start {start} stop {stop}: max {max}");
        assert!(
            r.overshoot <= 0.005,
            "start {start}: overshoot {}",
            r.overshoot
        );
    }
    println!("{bytes:.0} B/s on average (without transport headers)");
}

fn conditions() -> [(&'static str, Net, f32, f32); 3] {
    [
        (
            "clean",
            Net {
                delay: 0.001,
                jitter: 0.0005,
                loss: 0.0,
                gap: None,
            },
            0.02,
            0.04,
        ),
        (
            "100/20/5%",
            Net {
                delay: 0.2,
                jitter: 0.04,
                loss: 0.0975,
                gap: None,
            },
            0.05,
            0.10,
        ),
        (
            "250/60/12%",
            Net {
                delay: 0.5,
                jitter: 0.12,
                loss: 0.226,
                gap: None,
            },
            0.08,
            0.20,
        ),
    ]
}

#[test]
fn every_rendered_frame_matches_the_initiator_at_the_declared_view_time() {
    // Relayed through the server, a frame crosses two links: delay, jitter and loss compound.
    for (name, net, p95_limit, max_limit) in conditions() {
        for seed in 1..=4 {
            let r = run(&net, seed, [None, None]);
            let p50 = percentile(&r.errors, 0.5);
            let (p95, max, hand95) = r.errors_at_unit_scale(1.0);
            println!(
                "{name} seed {seed}: roots p50 {:.1} p95 {:.1} max {:.1} mm, hands p95 {:.1} mm, \
                 step {:.1} mm (truth {:.1}), overshoot {:.1} mm, delay {:.0}-{:.0} ms, {:.0} B/s",
                p50 * 1e3,
                p95 * 1e3,
                max * 1e3,
                hand95 * 1e3,
                r.steps * 1e3,
                r.truth_steps * 1e3,
                r.overshoot * 1e3,
                percentile(&r.delays, 0.0) * 1e3,
                percentile(&r.delays, 1.0) * 1e3,
                r.bytes as f64 / r.seconds
            );
            r.assert_accurate(&format!("{name} seed {seed}"), 1.0, p95_limit, max_limit);
        }
    }
}

#[test]
fn a_pair_start_glides_from_where_this_peer_last_saw_the_recipient() {
    let seen = Pose::new(Vec3::new(3.0, 0.0, 0.0), Quat::IDENTITY);
    let r = run(
        &Net {
            delay: 0.001,
            jitter: 0.0,
            loss: 0.0,
            gap: None,
        },
        1,
        [None, Some(seen)],
    );
    // 3 m at 4 m/s: never a teleport, each frame at most blend_speed·dt on top of the walk.
    assert!(r.steps <= 4.0 * DT + r.truth_steps + 1e-3, "{}", r.steps);
    assert!(percentile(&r.errors, 1.0) <= 0.04, "settled by 1 s");
}

#[test]
fn frames_that_move_the_initiator_too_fast_are_refused_unless_marked_as_a_teleport() {
    let tuning = ReplayTuning::default();
    let mut s = PairSender::started();
    let mut rx = PairReplay::default();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let pair = |x: f32| PairSample {
        initiator: Pose::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY),
        recipient_local: Pose::new(FOLLOW, Quat::IDENTITY),
        contact_rotation: Quat::IDENTITY,
    };
    let mut send = |s: &mut PairSender, rx: &mut PairReplay, t: f64, x: f32| {
        let n = s
            .write(t, true, pair(x), offsets(), None, &mut buf)
            .unwrap();
        rx.receive(&buf[..n], t + 0.01, true, &tuning)
    };
    assert!(send(&mut s, &mut rx, 1.0, 0.0).is_ok());
    assert!(send(&mut s, &mut rx, 1.1, 1.0).is_ok(), "10 m/s");
    assert_eq!(send(&mut s, &mut rx, 1.2, 50.0), Err(Refused::TooFast));
    assert_eq!(send(&mut s, &mut rx, 1.2, 1.0e5), Err(Refused::TooFast));
    assert_eq!(rx.too_fast(), 2);
    s.teleport();
    assert!(send(&mut s, &mut rx, 1.3, 50.0).is_ok(), "a teleport");
    s.teleport();
    assert_eq!(
        send(&mut s, &mut rx, 1.9, 500.0),
        Err(Refused::TooFast),
        "one a second"
    );
    assert_eq!(
        send(&mut s, &mut rx, 1.3, 50.0),
        Err(Refused::Stale),
        "duplicate"
    );
    // The view jumps with the teleport instead of gliding 49 m.
    let mut v = None;
    for k in 0..120 {
        v = rx.render(
            1.3 + f64::from(k) * f64::from(DT),
            DT,
            [None, None],
            &tuning,
        );
    }
    assert_eq!(v.unwrap().initiator.position.x, 50.0);
}

#[test]
fn a_receiver_without_a_shared_clock_still_interpolates_in_order() {
    let tuning = ReplayTuning::default();
    let mut s = PairSender::started();
    let mut rx = PairReplay::default();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let skew = 1234.5; // the receiver's clock is this far ahead
    let mut last_x = f32::NEG_INFINITY;
    for k in 0..300 {
        let now = f64::from(k) * f64::from(DT);
        if s.tick(DT, &tuning.rates).frame {
            let p = PairSample {
                initiator: Pose::new(Vec3::new(now as f32, 0.0, 0.0), Quat::IDENTITY),
                recipient_local: Pose::new(FOLLOW, Quat::IDENTITY),
                contact_rotation: Quat::IDENTITY,
            };
            let n = s.write(now, true, p, offsets(), None, &mut buf).unwrap();
            rx.receive(&buf[..n], now + skew + 0.05, false, &tuning)
                .unwrap();
        }
        if let Some(v) = rx.render(now + skew, DT, [None, None], &tuning) {
            assert!(v.initiator.position.x >= last_x - 1e-6, "never backwards");
            last_x = v.initiator.position.x;
            if k > 60 {
                // Without a shared clock the 16-bit stamps fix time only modulo 65.536 s.
                let err = (f64::from(v.initiator.position.x) - v.time).rem_euclid(65.536);
                let err = err.min(65.536 - err);
                assert!(
                    err < 1e-3,
                    "shows the sample of its view time: {err} x {} t {}",
                    v.initiator.position.x,
                    v.time
                );
                assert!((rx.view_delay() - 0.11).abs() < 0.03, "{}", rx.view_delay());
            }
        }
    }
}

#[test]
fn junk_and_frames_before_a_key_frame_are_counted_not_shown() {
    let tuning = ReplayTuning::default();
    let mut rx = PairReplay::default();
    assert!(rx.render(0.0, DT, [None, None], &tuning).is_none());
    assert!(matches!(
        rx.receive(&[1, 2, 3], 0.0, true, &tuning),
        Err(Refused::Malformed(_))
    ));
    assert_eq!(
        rx.receive(&[0xA0, 0, 0, 0, 0, 0, 0], 0.0, true, &tuning),
        Err(Refused::NoKey)
    );
    assert_eq!(rx.malformed(), 1);
    assert!(rx.render(0.0, DT, [None, None], &tuning).is_none());
}

#[test]
fn a_falling_initiator_is_not_refused_but_a_sideways_jump_is() {
    let tuning = ReplayTuning::default();
    let mut s = PairSender::started();
    let mut rx = PairReplay::default();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let at = |y: f32, x: f32| PairSample {
        initiator: Pose::new(Vec3::new(x, y, 0.0), Quat::IDENTITY),
        recipient_local: Pose::new(FOLLOW, Quat::IDENTITY),
        contact_rotation: Quat::IDENTITY,
    };
    for k in 0..10 {
        // Falling at 40 m/s: a long fall, accepted.
        let t = 1.0 + f64::from(k) * 0.1;
        let n = s
            .write(
                t,
                true,
                at(100.0 - 4.0 * k as f32, 0.0),
                offsets(),
                None,
                &mut buf,
            )
            .unwrap();
        assert!(rx.receive(&buf[..n], t, true, &tuning).is_ok(), "frame {k}");
    }
    let n = s
        .write(2.0, true, at(64.0, 3.0), offsets(), None, &mut buf)
        .unwrap();
    assert_eq!(
        rx.receive(&buf[..n], 2.0, true, &tuning),
        Err(Refused::TooFast),
        "30 m/s sideways"
    );
}

/// The initiator's animation at time `t`: a blend position on a curve, a bool, a state machine in
/// node 2 playing a 1 s loop at rate 1 until 3 s, then travelling to node 4 and playing it at rate
/// 1.3 (a TimeScale), a one-shot active from 5 s to 5.6 s.
fn anim_truth(t: f64) -> AnimSnapshot {
    let mut a = AnimSnapshot::default();
    a.push_value((1.7 * t).sin() as f32 * 0.9);
    a.push_value(-(1.1 * t).cos() as f32 * 0.9);
    a.push_value(if t > 4.0 { 1.0 } else { 0.0 });
    let (node, position) = if t < 3.0 {
        (2, t.rem_euclid(1.0))
    } else {
        (4, (1.3 * (t - 3.0)).rem_euclid(1.0))
    };
    a.push_machine(crate::hold_hand::anim::MachineState {
        node,
        travel: crate::hold_hand::anim::NO_NODE,
        position: position as f32,
    });
    a.push_shot((5.0..5.6).contains(&t));
    a
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one lossy-network scenario read top to bottom
fn animation_follows_the_view_time_over_a_lossy_network() {
    let tuning = ReplayTuning::default();
    let interval = f64::from(tuning.rates.animation_interval);
    for seed in 1..=4 {
        let mut sender = PairSender::started();
        let mut rx = PairReplay::default();
        let mut rng = Lcg(seed);
        let mut inbox: Vec<(f64, Vec<u8>)> = Vec::new();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let (mut blend, mut position, mut late, mut sections) = (Vec::new(), Vec::new(), 0.0f64, 0);
        for k in 0..(8.0 / f64::from(DT)) as usize {
            let now = k as f64 * f64::from(DT);
            let due = sender.tick(DT, &tuning.rates);
            if due.frame {
                let i = Pose::new(Vec3::ZERO, Quat::IDENTITY);
                let pair = PairSample {
                    initiator: i,
                    recipient_local: Pose::new(FOLLOW, Quat::IDENTITY),
                    contact_rotation: Quat::IDENTITY,
                };
                let anim = anim_truth(now);
                let n = sender
                    .write(
                        now,
                        true,
                        pair,
                        offsets(),
                        due.anim.then_some(&anim),
                        &mut buf,
                    )
                    .unwrap();
                sections += usize::from(buf[0] & crate::hold_hand::stream::ANIM != 0);
                if f64::from(rng.signed()) * 0.5 + 0.5 >= 0.05 {
                    let arrive = now + 0.1 + f64::from(rng.signed()) * 0.02;
                    inbox.push((arrive, buf[..n].to_vec()));
                }
            }
            inbox.sort_by(|a, b| a.0.total_cmp(&b.0));
            while inbox.first().is_some_and(|m| m.0 <= now) {
                let (_, bytes) = inbox.remove(0);
                let _ = rx.receive(&bytes, now, true, &tuning);
            }
            let Some(view) = rx.render(now, DT, [None; 2], &tuning) else {
                continue;
            };
            // Values 0 and 1 (a blend position) interpolate; value 2 (a bool) is held.
            let Some(shown) = rx.animation(0b011).copied() else {
                continue;
            };
            let t = view.time;
            if t < 1.0 {
                continue;
            }
            let want = anim_truth(t);
            blend.push(
                (shown.values[0] - want.values[0])
                    .abs()
                    .max((shown.values[1] - want.values[1]).abs()),
            );
            // Discrete state: the initiator's at the view time, or at most one interval before.
            let before = anim_truth(t - interval);
            let m = shown.machines()[0];
            let same_node = m.node == want.machines()[0].node;
            assert!(
                same_node || m.node == before.machines()[0].node,
                "seed {seed} t {t:.3}: node {} against {}",
                m.node,
                want.machines()[0].node
            );
            assert!(
                shown.shot(0) == want.shot(0) || shown.shot(0) == before.shot(0),
                "seed {seed} t {t:.3}: one-shot"
            );
            if !same_node {
                late = late.max(t - 3.0);
                continue;
            }
            let d = (m.position - want.machines()[0].position).abs();
            position.push(d.min(1.0 - d));
        }
        let (b95, bmax) = (percentile(&blend, 0.95), percentile(&blend, 1.0));
        let (p95, pmax) = (percentile(&position, 0.95), percentile(&position, 1.0));
        println!(
            "animation replay seed {seed}: blend position error p95 {b95:.4} max {bmax:.4}, play \
             position error p95 {p95:.4} max {pmax:.4} s, node shown {late:.3} s late at most, \
             {sections} sections in 8 s"
        );
        // Past the newest snapshot (a lost frame) values run on along the last slope for at most
        // 0.25 s.
        assert!(
            b95 < 0.02 && bmax < 0.05,
            "blend position off by {b95} / {bmax}"
        );
        assert!(
            p95 < 0.03 && pmax < 0.07,
            "play position off by {p95} / {pmax} s"
        );
        assert!(late <= interval + 1e-6, "node change {late} s late");
        // The blend position moves all the time here: a section in every frame.
        assert!(sections >= 78, "{sections}");
    }
}

/// The initiator stands; the recipient is pulled in fast (6 m/s, 0.3–0.45 s) and stops beside it.
/// The frame sent during `lost` (s) is lost. Returns how far the view ran past the recipient's place
/// and its largest distance from that place from 2 s on.
fn glide_in_with_a_lost_frame(lost: (f64, f64)) -> (f32, f32) {
    let tuning = ReplayTuning::default();
    let mut s = PairSender::started();
    let mut rx = PairReplay::default();
    let mut buf = [0u8; MAX_FRAME_BYTES];
    let from = Vec3::new(-0.2, 0.0, 0.8);
    let recipient_at = |t: f64| from.lerp(FOLLOW, ((t - 0.3) / 0.15).clamp(0.0, 1.0) as f32);
    let mut inbox: Vec<(f64, Vec<u8>)> = Vec::new();
    let (mut past, mut late) = (0.0f32, 0.0f32);
    let dir = (FOLLOW - from).normalize();
    for k in 0..240 {
        let now = f64::from(k) * f64::from(DT);
        if s.tick(DT, &tuning.rates).frame {
            let p = PairSample {
                initiator: Pose::IDENTITY,
                recipient_local: Pose::new(recipient_at(now), Quat::IDENTITY),
                contact_rotation: Quat::IDENTITY,
            };
            let n = s.write(now, true, p, offsets(), None, &mut buf).unwrap();
            if !(now > lost.0 && now < lost.1) {
                inbox.push((now + 0.12, buf[..n].to_vec()));
            }
        }
        while inbox.first().is_some_and(|m| m.0 <= now) {
            let (_, bytes) = inbox.remove(0);
            let _ = rx.receive(&bytes, now, true, &tuning);
        }
        if let Some(v) = rx.render(now, DT, [None, None], &tuning) {
            past = past.max((v.recipient.position - FOLLOW).dot(dir));
            if v.time > 2.0 {
                late = late.max(v.recipient.position.distance(FOLLOW));
            }
        }
    }
    (past, late)
}

/// Asserts that a recipient gliding in ran at most 3 cm past its place (`past`, m).
fn assert_not_run_past(past: f32) {
    assert!(
        past <= 0.03,
        "the recipient ran {:.0} mm past its place",
        past * 1e3
    );
}

#[test]
fn a_recipient_that_glided_in_does_not_run_past_its_place_when_a_frame_is_lost() {
    // Lost: the first frame that shows the recipient at its place, so the view runs past the
    // newest sample (mid-glide) for a while.
    let (past, _) = glide_in_with_a_lost_frame((0.45, 0.55));
    assert_not_run_past(past);
}

#[test]
fn a_recipient_held_while_it_was_gliding_in_catches_up_within_two_seconds() {
    // Lost: the frame in the middle of the glide; the view holds the recipient where the sample
    // before left it, and the next sample shows it 0.3 m farther on.
    let (past, late) = glide_in_with_a_lost_frame((0.35, 0.45));
    assert_not_run_past(past);
    assert!(late <= 0.03, "still {:.0} mm off 1.5 s later", late * 1e3);
}

#[test]
fn the_delay_covers_the_frames_lost_in_a_row_at_the_measured_loss() {
    assert_eq!(loss_cover(0.0), 0);
    assert_eq!(loss_cover(0.005), 0);
    assert_eq!(loss_cover(0.05), 1);
    assert_eq!(loss_cover(0.09), 1);
    assert_eq!(loss_cover(0.23), 3);
    assert_eq!(loss_cover(1.0), 3);
    assert_eq!(loss_cover(f32::NAN), 0);
}

/// Sends the walk for `send_until` s and delivers each frame at the next multiple of `burst` s
/// after it was sent (0: at once); returns (view time, hand weight) per rendered frame.
fn hand_weights(burst: f64, send_until: f64) -> Vec<(f64, f32)> {
    let tuning = ReplayTuning::default();
    let mut sender = PairSender::started();
    let mut rx = PairReplay::default();
    let mut inbox: Vec<(f64, Vec<u8>)> = Vec::new();
    let mut last = Vec::new();
    let mut out = Vec::new();
    for k in 0..(10.0 / f64::from(DT)) as usize {
        let now = k as f64 * f64::from(DT);
        let (i, r, c) = truth(now, 8.0);
        let due = sender.tick(DT, &tuning.rates);
        if now < send_until {
            let arrive = if burst > 0.0 {
                ((now + 0.05) / burst).ceil() * burst
            } else {
                now + 0.05
            };
            let mut send = |bytes: &[u8]| inbox.push((arrive, bytes.to_vec()));
            send_walk(
                &mut sender,
                due,
                now,
                (i, r, c),
                offsets(),
                &mut last,
                &mut send,
            );
        }
        while inbox.first().is_some_and(|m| m.0 <= now) {
            let (_, bytes) = inbox.remove(0);
            rx.receive(&bytes, now, true, &tuning).unwrap();
        }
        if let Some(view) = rx.render(now, DT, [None, None], &tuning) {
            out.push((now, view.hands.map_or(0.0, |h| h.weight)));
        }
    }
    out
}

#[test]
fn hands_stay_held_while_the_view_has_samples_even_when_frames_arrive_in_bursts() {
    // Frames arrive 0.6 s apart in bursts (longer than ik_timeout, 0.5 s): a busy link, or a
    // receiver whose process stalled. The view's delay grows to cover the gaps, so it always has
    // hand samples: the hands stay held.
    let w = hand_weights(0.6, 10.0);
    let lowest = w
        .iter()
        .filter(|(t, _)| *t > 3.0)
        .map(|(_, w)| *w)
        .fold(1.0f32, f32::min);
    assert!(
        lowest > 0.99,
        "the hands faded to {lowest} while the view still had samples"
    );
}

#[test]
fn hands_fade_out_once_the_view_runs_past_the_last_hand_sample() {
    // The stream stops at 5 s: the view runs out of samples after its delay, and the hands fade
    // out over ik_fade_time once it has gone ik_timeout past the last one.
    let tuning = ReplayTuning::default();
    let w = hand_weights(0.0, 5.0);
    let held = w.iter().find(|(t, _)| *t > 4.9).map(|(_, w)| *w);
    assert!(
        held.is_some_and(|w| w > 0.99),
        "held before the stop: {held:?}"
    );
    let gone = w
        .iter()
        .find(|(_, w)| *w < 1e-3)
        .map(|(t, _)| *t)
        .expect("the hands fade out");
    let latest = 5.0 + 0.3 + f64::from(tuning.ik_timeout + tuning.ik_fade_time) + 0.1;
    assert!(
        gone > 5.0 + f64::from(tuning.ik_timeout) && gone < latest,
        "faded out at {gone:.2} s (expected within {:.2} s of the stop)",
        latest - 5.0
    );
}

/// Runs the walk over `net` with frames lost from `gap.0` for `gap.1` s; returns the largest and
/// the 95th-percentile root error.
fn walk_with_a_gap(net: &Net, seed: u64, gap: (f64, f64)) -> (f32, f32) {
    let net = Net {
        gap: Some((gap.0, gap.0 + gap.1)),
        ..*net
    };
    let r = run(&net, seed, [None, None]);
    (percentile(&r.errors, 1.0), percentile(&r.errors, 0.95))
}

#[test]
fn frames_lost_for_longer_than_the_delay_slow_the_view_down_instead_of_freezing_it() {
    // The initiator walks with a swinging heading; every frame sent in a stretch of 0.3-0.9 s
    // is lost, so the view runs past its newest sample. It slows down and stops a quarter of a
    // second past it (declaring that time) instead of running on while the roots stand. Measured
    // over these 12 gaps, largest root error: before (the view ran on) 869 mm on the clean link
    // and 688 mm at 250/60/12 %, taking seconds to fade; with the stretch 98 and 106 mm. What is
    // left is the straight line drawn across the lost stretch of a curving walk.
    let clean = &conditions()[0].1;
    let laggy = &conditions()[2].1;
    let mut worst = [0.0f32; 2];
    for seed in 1..=12u64 {
        let gap = (
            1.5 + (seed % 5) as f64 * 0.37,
            0.3 + (seed % 7) as f64 * 0.1,
        );
        for (k, net) in [clean, laggy].into_iter().enumerate() {
            let (max, p95) = walk_with_a_gap(net, seed, gap);
            println!(
                "gap {:.2}+{:.1} s, {}: worst {:.1} mm, p95 {:.1} mm",
                gap.0,
                gap.1,
                ["clean", "250/60/12%"][k],
                max * 1e3,
                p95 * 1e3
            );
            worst[k] = worst[k].max(max);
        }
    }
    assert!(worst[0] <= 0.10, "clean link: {:.1} mm", worst[0] * 1e3);
    assert!(worst[1] <= 0.15, "250/60/12%: {:.1} mm", worst[1] * 1e3);
}
