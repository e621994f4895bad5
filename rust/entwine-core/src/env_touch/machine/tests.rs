//! Scenario tests: a small world of walls, a character stepped through it, outcomes asserted.

use super::*;
use crate::env_touch::detection_box;
use crate::env_touch::TouchConfig;
use glam::Affine3A;

const SHOULDER_X: f32 = 0.18;
const SHOULDER_Y: f32 = 1.45;

/// A wall: a box `thickness` thick along X whose inner face is at `face_x`, `length` long along Z
/// centred on `centre_z`, 3 m high.
fn wall(id: u64, face_x: f32, centre_z: f32, length: f32) -> (u64, Shape, Affine3A) {
    let thickness = 0.2;
    let centre_x = face_x + thickness * 0.5 * face_x.signum();
    (
        id,
        Shape::Box {
            half_extents: Vec3::new(thickness * 0.5, 1.5, length * 0.5),
        },
        Affine3A::from_translation(Vec3::new(centre_x, 1.5, centre_z)),
    )
}

struct World {
    walls: Vec<(u64, Shape, Affine3A)>,
    position: Vec3,
    yaw: f32,
    velocity: Vec3,
    move_input: Option<Vec3>,
    grounded: bool,
    /// When false, every wall is a candidate (to test thresholds beyond the detection volume).
    use_volume: bool,
    candidates: Vec<Candidate>,
}

impl World {
    fn new(walls: Vec<(u64, Shape, Affine3A)>) -> Self {
        Self {
            walls,
            position: Vec3::ZERO,
            yaw: 0.0,
            velocity: Vec3::new(0.0, 0.0, -1.4),
            move_input: Some(Vec3::NEG_Z),
            grounded: true,
            use_volume: true,
            candidates: Vec::new(),
        }
    }

    fn root(&self) -> Pose {
        Pose::new(self.position, Quat::from_rotation_y(self.yaw))
    }

    fn shoulders(&self) -> [Vec3; 2] {
        let root = self.root();
        [
            root.transform_point(Vec3::new(-SHOULDER_X, SHOULDER_Y, 0.0)),
            root.transform_point(Vec3::new(SHOULDER_X, SHOULDER_Y, 0.0)),
        ]
    }

    /// Steps the machine once: walls whose closest point lies in the detection box are candidates;
    /// the "ray" returns the box face normal when the machine asks for one and the wall is in reach.
    fn step(&mut self, m: &mut EnvTouch, dt: f32) -> [HandTarget; 2] {
        let root = self.root();
        let query = m.query_point(root);
        let volume = detection_box(1.75, Vec3::new(0.0, 0.875, 0.0)).unwrap();
        self.candidates.clear();
        for (id, shape, t) in &self.walls {
            let Some(p) = shape.closest_point(t, query) else {
                continue;
            };
            // Overlap with the volume, approximately: the wall's point nearest the volume's centre
            // lies inside the volume.
            let centre = root.transform_point(volume.centre);
            let near = shape.closest_point(t, centre).unwrap();
            let local = root.inverse_transform_point(near) - volume.centre;
            if !self.use_volume || local.abs().max_element() <= volume.size * 0.5 {
                self.candidates.push(Candidate {
                    id: *id,
                    closest_point: p,
                });
            }
        }
        let normal = if m.wants_surface_normal() {
            let shoulder = self.shoulders()[m.side().index()];
            m.closest_point().and_then(|c| {
                // The walls' faces are perpendicular to X.
                (c.distance(shoulder) <= m.config().normal_ray_length)
                    .then(|| Vec3::new(-c.x.signum(), 0.0, 0.0))
            })
        } else {
            None
        };
        let out = m.step(&TouchInput {
            dt,
            root,
            shoulders: self.shoulders(),
            velocity: self.velocity,
            move_input: self.move_input,
            grounded: self.grounded,
            candidates: &self.candidates,
            surface_normal: normal,
        });
        self.position += self.velocity * dt;
        out
    }

    /// Steps at `hz` for `seconds`, calling `each` after every step.
    fn run(
        &mut self,
        m: &mut EnvTouch,
        hz: f32,
        seconds: f32,
        mut each: impl FnMut(&World, &EnvTouch, [HandTarget; 2]),
    ) {
        let frames = (seconds * hz).round() as usize;
        for _ in 0..frames {
            let out = self.step(m, 1.0 / hz);
            each(self, m, out);
        }
    }
}

fn machine() -> EnvTouch {
    let rest = [
        Pose::new(Vec3::new(-0.25, 0.9, 0.0), Quat::IDENTITY),
        Pose::new(Vec3::new(0.25, 0.9, 0.0), Quat::IDENTITY),
    ];
    EnvTouch::new(TouchConfig::default(), rest)
}

fn transitions(m: &EnvTouch) -> Vec<(TouchState, TouchState)> {
    m.events()
        .iter()
        .filter_map(|e| match *e {
            TouchEvent::StateChanged { from, to } => Some((from, to)),
            _ => None,
        })
        .collect()
}

/// Runs until `state` is entered (or `seconds` pass); returns the time it was entered.
fn run_until(
    w: &mut World,
    m: &mut EnvTouch,
    hz: f32,
    seconds: f32,
    state: TouchState,
) -> Option<f32> {
    let frames = (seconds * hz).round() as usize;
    for f in 0..frames {
        w.step(m, 1.0 / hz);
        if m.state() == state {
            return Some((f + 1) as f32 / hz - m.state_time());
        }
    }
    None
}

#[test]
fn walking_past_a_left_wall_touches_with_the_left_hand() {
    let mut w = World::new(vec![wall(1, -0.45, -10.0, 20.0)]);
    let mut m = machine();
    let mut seen = Vec::new();
    let mut touch_frames = 0;
    w.run(&mut m, 60.0, 6.0, |w, m, out| {
        seen.extend(transitions(m));
        if m.state() == TouchState::Touch {
            touch_frames += 1;
            let left = out[Side::Left.index()];
            // 5 cm off the face at x = −0.45, toward the shoulder, at shoulder height.
            assert!((left.pose.position.x - (-0.40)).abs() < 0.002, "{left:?}");
            assert!((left.pose.position.y - SHOULDER_Y).abs() < 0.01, "{left:?}");
            assert!((left.pose.position.z - w.position.z).abs() < 0.05);
            assert!(left.position_weight > 0.99 && left.rotation_weight > 0.99);
            assert!(out[Side::Right.index()].position_weight < 1e-3);
            // The palm (+Z of the bone) faces the wall (−X).
            let palm = rotate(left.pose.rotation, Vec3::Z);
            assert!(
                palm.angle_between(Vec3::NEG_X) < 1f32.to_radians(),
                "{palm}"
            );
        }
    });
    assert_eq!(m.side(), Side::Left);
    assert!(touch_frames >= 29, "touched for {touch_frames} frames");
    use TouchState::*;
    assert_eq!(
        &seen[..5],
        &[
            (Reset, Search),
            (Search, Approach),
            (Approach, Rise),
            (Rise, Touch),
            (Touch, Reset)
        ]
    );
}

#[test]
fn walking_past_a_right_wall_touches_with_the_right_hand() {
    let mut w = World::new(vec![wall(1, 0.45, -10.0, 20.0)]);
    let mut m = machine();
    let mut touched = false;
    w.run(&mut m, 60.0, 4.0, |_, m, out| {
        if m.state() == TouchState::Touch {
            touched = true;
            let right = out[Side::Right.index()];
            assert!((right.pose.position.x - 0.40).abs() < 0.002);
            assert!(out[Side::Left.index()].position_weight < 1e-3);
            let palm = rotate(right.pose.rotation, Vec3::Z);
            assert!(palm.angle_between(Vec3::X) < 1f32.to_radians());
        }
    });
    assert!(touched);
    assert_eq!(m.side(), Side::Right);
}

#[test]
fn touch_events_carry_side_point_and_normal() {
    let mut w = World::new(vec![wall(7, 0.45, -10.0, 20.0)]);
    let mut m = machine();
    let mut started = None;
    let mut ended = None;
    w.run(&mut m, 60.0, 4.0, |_, m, _| {
        for e in m.events() {
            match *e {
                TouchEvent::TouchStarted {
                    side,
                    point,
                    normal,
                } => started = Some((side, point, normal)),
                TouchEvent::TouchEnded { side } => ended = Some(side),
                _ => {}
            }
        }
    });
    let (side, point, normal) = started.expect("touch started");
    assert_eq!(side, Side::Right);
    assert!((point.x - 0.45).abs() < 1e-4 && (point.y - SHOULDER_Y).abs() < 1e-4);
    assert!(normal.distance(Vec3::NEG_X) < 1e-4);
    assert_eq!(ended, Some(Side::Right));
}

#[test]
fn reset_waits_its_duration_and_for_movement() {
    let mut w = World::new(vec![wall(1, -0.45, -10.0, 20.0)]);
    w.move_input = Some(Vec3::ZERO);
    w.velocity = Vec3::ZERO;
    let mut m = machine();
    w.run(&mut m, 60.0, 5.0, |_, m, _| {
        assert_eq!(m.state(), TouchState::Reset)
    });
    // Moving again after more than the reset duration: Search at once.
    w.move_input = Some(Vec3::NEG_Z);
    w.step(&mut m, 1.0 / 60.0);
    assert_ne!(m.state(), TouchState::Reset);
    assert_eq!(transitions(&m)[0], (TouchState::Reset, TouchState::Search));
    // While moving, Reset lasts exactly the reset duration.
    let mut m = machine();
    let mut w = World::new(vec![]);
    let entered = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Search).unwrap();
    assert!((entered - 2.0).abs() < 1e-4, "{entered}");
}

#[test]
fn search_goes_to_approach_within_the_approach_distance() {
    // A wall 2.5 m from the root's line: tracked (every wall is a candidate here) but too far.
    let mut w = World::new(vec![wall(1, -2.5, -10.0, 40.0)]);
    w.use_volume = false;
    let mut m = machine();
    w.run(&mut m, 60.0, 3.0, |_, _, _| {});
    assert_eq!(m.state(), TouchState::Search);
    assert_eq!(m.tracked(), Some(1));
    // 1.8 m away from the root (a point at shoulder height) and on the way (the character walks
    // into it): Approach.
    w.walls = vec![wall(1, -1.0, -10.0, 40.0)];
    w.velocity = Vec3::new(-1.4, 0.0, 0.0);
    w.step(&mut m, 1.0 / 60.0);
    assert!(m.closest_point().unwrap().distance(w.position) < 2.0);
    assert_eq!(m.state(), TouchState::Approach);
}

#[test]
fn search_without_candidates_stays_in_search() {
    let mut w = World::new(vec![]);
    let mut m = machine();
    w.run(&mut m, 60.0, 4.0, |_, _, _| {});
    assert_eq!(m.state(), TouchState::Search);
    assert_eq!(m.tracked(), None);
}

#[test]
fn a_wall_beside_the_way_out_of_reach_is_not_approached() {
    // Face 0.72 m from the root: 0.54 m from the left shoulder, beyond the 0.5 m rise distance,
    // and the character walks along it: tracked, never approached (no Approach → timeout loop).
    let mut w = World::new(vec![wall(1, -0.72, -10.0, 40.0)]);
    let mut m = machine();
    let mut approached = false;
    w.run(&mut m, 60.0, 10.0, |_, m, _| {
        approached |= m.state() != TouchState::Search && m.state() != TouchState::Reset;
    });
    assert!(!approached, "a wall out of reach was approached");
    assert_eq!((m.state(), m.tracked()), (TouchState::Search, Some(1)));
    // Turning to walk into it brings it within reach on the way: Approach.
    w.velocity = Vec3::new(-1.4, 0.0, 0.0);
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.state(), TouchState::Approach);
}

/// A wall across the way to the left, `ahead` metres in front of the root (its face
/// perpendicular to Z, its end 0.4 m left of the root's line, so its closest point lies ahead of
/// the left hand; a wall squarely ahead is outside both hands' valid angle).
fn wall_ahead(id: u64, ahead: f32) -> (u64, Shape, Affine3A) {
    (
        id,
        Shape::Box {
            half_extents: Vec3::new(10.0, 1.5, 0.1),
        },
        Affine3A::from_translation(Vec3::new(-10.4, 1.5, -ahead - 0.1)),
    )
}

#[test]
fn approach_times_out_when_the_wall_stays_out_of_reach() {
    // A wall across the way, within reach at walking pace when Approach begins (1.2 m ahead at
    // 1.4 m/s); then the character slows to 0.2 m/s and is still 0.3 m short of the rise distance
    // when Approach's 2 s are up.
    let slow = |w: &mut World| w.velocity = Vec3::new(0.0, 0.0, -0.2);
    let mut w = World::new(vec![wall_ahead(1, 4.0)]);
    w.use_volume = false;
    let mut m = machine();
    let entered = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Approach).unwrap();
    assert!((entered - 2.0).abs() < 1e-4);
    slow(&mut w);
    let mut weights = (0.0, 0.0);
    let mut palm_down = false;
    let left = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Reset);
    // run_until times from its own start: Approach began at 2 s and lasts 2 s.
    assert!((left.unwrap() + entered - 4.0).abs() < 1e-3, "{left:?}");
    assert_eq!(m.reset_reason(), ResetReason::ApproachTimeout);
    // Re-run to look at Approach's blend: weight toward 0.5, rotation weight toward 0.75, palm down.
    let mut w = World::new(vec![wall_ahead(1, 4.0)]);
    w.use_volume = false;
    let mut m = machine();
    run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Approach);
    slow(&mut w);
    let side = m.side();
    w.run(&mut m, 60.0, 1.9, |_, m, out| {
        let h = out[side.index()];
        weights = (h.position_weight, h.rotation_weight);
        palm_down = rotate(h.pose.rotation, Vec3::Z).angle_between(Vec3::NEG_Y) < 0.02;
        assert_eq!(m.state(), TouchState::Approach);
    });
    assert!(
        (weights.0 - 0.5).abs() < 1e-3 && (weights.1 - 0.75).abs() < 1e-3,
        "{weights:?}"
    );
    assert!(palm_down);
    // The target sits at waist height in Approach.
    let target = m.hand(side).pose.position;
    assert!((target.y - 0.875).abs() < 0.01, "{target}");
}

#[test]
fn a_persistent_touch_lasts_along_the_wall_and_ends_past_it() {
    // A 6 m wall 0.45 m beside the way: the seed's touch ends after 0.5 s and starts over; a
    // persistent one lasts until the hand can no longer reach the wall, past its end.
    for persistent in [false, true] {
        let mut w = World::new(vec![wall(1, -0.45, -4.0, 6.0)]);
        w.position.z = 0.0;
        let mut m = EnvTouch::new(
            TouchConfig {
                persistent_touch: persistent,
                ..TouchConfig::default()
            },
            [Pose::IDENTITY; 2],
        );
        let (mut touching, mut longest, mut touches, mut end_z) = (0.0_f32, 0.0_f32, 0, 0.0);
        w.run(&mut m, 60.0, 8.0, |w, m, _| {
            if m.state() == TouchState::Touch {
                touches += usize::from(touching == 0.0);
                touching += 1.0 / 60.0;
                longest = longest.max(touching);
                end_z = w.position.z;
            } else {
                touching = 0.0;
            }
        });
        if persistent {
            assert_eq!(touches, 1, "one touch along the whole wall");
            // The wall ends at z = -7; the hand lets go within a stride of it.
            assert!(end_z < -6.5 && end_z > -7.6, "let go at z = {end_z}");
            assert!(longest > 2.0, "touched for {longest} s");
        } else {
            assert!(
                (longest - 0.5).abs() < 0.02,
                "the seed's touch: {longest} s"
            );
        }
        assert_ne!(m.state(), TouchState::Touch, "let go past the wall's end");
    }
}

#[test]
fn rise_goes_to_touch_only_after_its_minimum_time() {
    let mut w = World::new(vec![wall(1, -0.45, -10.0, 40.0)]);
    let mut m = machine();
    // run_until times from its own start, and each call starts where the last state was entered.
    let rise = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Rise).unwrap();
    assert!((rise - 2.0).abs() < 1e-3, "rise at {rise}");
    let touch = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Touch).unwrap();
    assert!((touch - 1.0).abs() < 1e-3, "touch {touch} s after rise");
    let reset = run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Reset).unwrap();
    assert!((reset - 0.5).abs() < 1e-3, "reset {reset} s after touch");
    assert_eq!(m.reset_reason(), ResetReason::TouchDone);
}

#[test]
fn rise_does_not_touch_while_the_target_is_far_from_the_surface() {
    // A rise blend so slow the target is still far below the contact after the minimum time.
    let config = TouchConfig {
        rise_blend_duration: 1000.0,
        ..TouchConfig::default()
    };
    let mut m = EnvTouch::new(config, [Pose::IDENTITY; 2]);
    let mut w = World::new(vec![wall(1, -0.45, -10.0, 40.0)]);
    run_until(&mut w, &mut m, 60.0, 3.0, TouchState::Rise).unwrap();
    w.run(&mut m, 60.0, 1.5, |_, m, _| {
        assert_eq!(m.state(), TouchState::Rise)
    });
}

#[test]
fn reset_restores_weights_and_targets() {
    let mut w = World::new(vec![wall(1, -0.45, -10.0, 40.0)]);
    let mut m = machine();
    run_until(&mut w, &mut m, 60.0, 5.0, TouchState::Touch).unwrap();
    run_until(&mut w, &mut m, 60.0, 5.0, TouchState::Reset).unwrap();
    // Still asking to move, but standing, so the root used by the last step is `w.root()`.
    w.velocity = Vec3::ZERO;
    w.run(&mut m, 60.0, 1.9, |_, _, _| {});
    assert_eq!(m.state(), TouchState::Reset);
    let hand = m.hand(Side::Left);
    assert!(
        hand.position_weight < 1e-3 && hand.rotation_weight < 1e-3,
        "{hand:?}"
    );
    let local = w.root().to_local(hand.pose);
    assert!(
        local.position.distance(Vec3::new(-0.25, 0.9, 0.0)) < 1e-3,
        "{local:?}"
    );
    assert!(local.rotation.angle_between(Quat::IDENTITY) < 1e-3);
}

/// Drives the machine into `state` (holding it there) and returns the world and machine.
fn in_state(state: TouchState) -> (World, EnvTouch) {
    let config = TouchConfig {
        // Long enough that nothing times out while the trigger is applied.
        approach_duration: 100.0,
        touch_duration: 100.0,
        touch_min_time: if state == TouchState::Rise {
            100.0
        } else {
            1.0
        },
        ..TouchConfig::default()
    };
    let mut m = EnvTouch::new(config, [Pose::IDENTITY; 2]);
    let face = match state {
        TouchState::Search => -2.5,
        TouchState::Approach => -2.9,
        _ => -0.45,
    };
    let mut w = World::new(vec![wall(1, face, -10.0, 60.0)]);
    w.use_volume = !matches!(state, TouchState::Search | TouchState::Approach);
    if state == TouchState::Approach {
        // Walking into the wall: after Reset's 2 s it is 1.1 m from the shoulder, on the way, so
        // approached, and still beyond the rise distance when the trigger is applied.
        w.move_input = Some(Vec3::NEG_X);
        w.velocity = Vec3::new(-0.7, 0.0, 0.0);
    }
    run_until(&mut w, &mut m, 60.0, 5.0, state).expect("reached the state");
    w.run(&mut m, 60.0, 0.2, |_, _, _| {});
    assert_eq!(m.state(), state);
    (w, m)
}

/// A reset trigger and how to provoke it.
type Trigger = (ResetReason, fn(&mut World));

#[test]
fn every_trigger_resets_every_tracking_state() {
    use TouchState::*;
    for state in [Search, Approach, Rise, Touch] {
        let triggers: [Trigger; 4] = [
            (ResetReason::Stopped, |w| w.move_input = Some(Vec3::ZERO)),
            (ResetReason::MovingAway, |w| w.position.x += 0.05),
            (ResetReason::InvalidAngle, |w| {
                w.yaw = std::f32::consts::PI;
                // Keep walking the same way (backwards, for the test).
            }),
            (ResetReason::Jumping, |w| w.velocity.y = 4.0),
        ];
        for (reason, apply) in triggers {
            let (mut w, mut m) = in_state(state);
            apply(&mut w);
            w.step(&mut m, 1.0 / 60.0);
            assert_eq!(m.state(), Reset, "{state:?} with {reason:?}");
            assert_eq!(m.reset_reason(), reason, "{state:?}");
            assert_eq!(transitions(&m), vec![(state, Reset)]);
            assert_eq!(m.tracked(), None);
        }
        // Airborne counts as jumping too.
        let (mut w, mut m) = in_state(state);
        w.grounded = false;
        w.step(&mut m, 1.0 / 60.0);
        assert_eq!(m.reset_reason(), ResetReason::Jumping);
    }
}

#[test]
fn stopped_falls_back_to_velocity_without_move_input() {
    let (mut w, mut m) = in_state(TouchState::Rise);
    w.move_input = None;
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.state(), TouchState::Rise, "moving by velocity");
    w.velocity = Vec3::ZERO;
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.reset_reason(), ResetReason::Stopped);
    // With an input, the input wins over a lagging velocity.
    let (mut w, mut m) = in_state(TouchState::Rise);
    w.velocity = Vec3::ZERO;
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.state(), TouchState::Rise, "input says moving");
}

#[test]
fn moving_away_tolerates_the_offset() {
    let (mut w, mut m) = in_state(TouchState::Rise);
    w.velocity = Vec3::ZERO;
    w.move_input = Some(Vec3::NEG_Z);
    // The root-to-contact distance includes the shoulder height: with the wall 0.45 m to the
    // side, 12 mm sideways adds about 3.6 mm.
    w.position.x += 0.012;
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.state(), TouchState::Rise, "within the 5 mm offset");
    w.position.x += 0.010;
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.reset_reason(), ResetReason::MovingAway);
}

#[test]
fn losing_the_collider_resets_but_not_in_search() {
    use TouchState::*;
    for state in [Approach, Rise, Touch] {
        let (mut w, mut m) = in_state(state);
        w.walls.clear();
        w.step(&mut m, 1.0 / 60.0);
        assert_eq!(m.reset_reason(), ResetReason::ColliderLost, "{state:?}");
    }
    let (mut w, mut m) = in_state(Search);
    w.walls.clear();
    w.step(&mut m, 1.0 / 60.0);
    assert_eq!(m.state(), Search);
    assert_eq!(m.tracked(), None);
}

#[test]
fn the_end_of_a_wall_lets_go() {
    // A 3 m wall: the character walks past its end and the moving-away trigger (or the loss of
    // the collider) releases the hand.
    let mut w = World::new(vec![wall(1, -0.45, -3.5, 3.0)]);
    w.position.z = 0.0;
    let mut m = machine();
    let mut touched = false;
    w.run(&mut m, 60.0, 8.0, |_, m, _| {
        touched |= m.state() == TouchState::Touch
    });
    assert!(touched);
    assert_eq!(m.state(), TouchState::Search);
    assert!(m.hand(Side::Left).position_weight < 0.01);
}

#[test]
fn a_narrow_corridor_does_not_flicker_between_sides() {
    let mut w = World::new(vec![
        wall(1, -0.42, -20.0, 60.0),
        wall(2, 0.42, -20.0, 60.0),
    ]);
    let mut m = machine();
    let mut time = 0.0f32;
    let mut sides = Vec::new();
    let mut touches = 0;
    w.run(&mut m, 60.0, 20.0, |_, m, out| {
        touches += m
            .events()
            .iter()
            .filter(|e| matches!(e, TouchEvent::TouchStarted { .. }))
            .count();
        let (l, r) = (out[0].position_weight, out[1].position_weight);
        assert!(l.min(r) < 0.02, "both hands reach at once: {l} {r}");
        if l.max(r) > 0.02 {
            sides.push(if l > r { Side::Left } else { Side::Right });
        }
    });
    // The character weaves ±3 cm around the middle: the tracked wall stays the same.
    let mut w2 = World::new(w.walls.clone());
    let mut m2 = machine();
    let mut sides2 = Vec::new();
    for f in 0..1200 {
        time = f as f32 / 60.0;
        w2.position.x = 0.03 * (time * 2.0).sin();
        w2.step(&mut m2, 1.0 / 60.0);
        if let Some(id) = m2.tracked() {
            sides2.push(id);
        }
    }
    assert!(touches >= 3, "{touches} touches in 20 s");
    assert!(sides.windows(2).all(|p| p[0] == p[1]), "one side all along");
    assert!(
        sides2.windows(2).all(|p| p[0] == p[1]),
        "one wall all along"
    );
    assert!(time > 19.0);
}

/// Samples (weights of both hands, target positions) every `1/6` s over `seconds` at `hz`.
fn timeline(hz: f32, face: f32, seconds: f32) -> Vec<[f32; 10]> {
    let mut w = World::new(vec![wall(1, face, -10.0, 40.0)]);
    // Walking in place next to the wall: every transition depends on time alone.
    w.velocity = Vec3::new(0.0, 0.0, -1e-9);
    w.move_input = Some(Vec3::NEG_Z);
    let mut m = machine();
    let per_sample = (hz / 6.0).round() as usize;
    let mut out = Vec::new();
    for f in 1..=(seconds * hz).round() as usize {
        let t = w.step(&mut m, 1.0 / hz);
        w.position = Vec3::ZERO;
        if f % per_sample == 0 {
            let (l, r) = (t[0], t[1]);
            out.push([
                l.position_weight,
                l.rotation_weight,
                r.position_weight,
                r.rotation_weight,
                l.pose.position.x,
                l.pose.position.y,
                l.pose.position.z,
                m.state().index() as f32,
                l.pose.rotation.angle_between(Quat::IDENTITY),
                r.pose.position.y,
            ]);
        }
    }
    out
}

#[test]
fn blending_is_frame_rate_independent() {
    for face in [-0.45, -0.72] {
        let reference = timeline(60.0, face, 9.0);
        for hz in [30.0, 144.0] {
            let other = timeline(hz, face, 9.0);
            assert_eq!(reference.len(), other.len());
            for (k, (a, b)) in reference.iter().zip(&other).enumerate() {
                assert_eq!(a[7], b[7], "state at sample {k} ({hz} Hz, face {face})");
                for i in 0..7 {
                    assert!(
                        (a[i] - b[i]).abs() < 1e-3,
                        "value {i} at {} s: {} (60 Hz) vs {} ({hz} Hz)",
                        (k + 1) as f32 / 6.0,
                        a[i],
                        b[i]
                    );
                }
            }
        }
    }
}

#[test]
fn ramp_alpha_composes_across_steps() {
    // Two half steps leave the same remainder as one whole step.
    let whole = 1.0 - ramp_alpha(0.2, 0.6, 5.0);
    let halves = (1.0 - ramp_alpha(0.2, 0.4, 5.0)) * (1.0 - ramp_alpha(0.4, 0.6, 5.0));
    assert!((whole - halves).abs() < 1e-6);
    // The seed at 60 Hz: after 1 s of Approach (duration 5), about e^-6 of the gap remains.
    let mut x = 0.0f32;
    let mut t = 0.0f32;
    for _ in 0..60 {
        t += 1.0 / 60.0;
        x += (0.5 - x) * (t / 5.0);
    }
    let ours = 0.5 * ramp_alpha(0.0, 1.0, 5.0);
    assert!((x - ours).abs() < 0.01, "seed {x} vs closed form {ours}");
    assert_eq!(ramp_alpha(4.0, 5.0, 5.0), 1.0);
    assert_eq!(ramp_alpha(0.0, 1.0, 0.0), 1.0);
    assert_eq!(ramp_alpha(0.0, 0.0, 5.0), 0.0);
    assert_eq!(ramp_alpha(f32::NAN, 0.5, 5.0), 0.0);
}

#[test]
fn config_check_names_the_bad_field() {
    assert_eq!(TouchConfig::default().check(), None);
    let bad = TouchConfig {
        touch_duration: -1.0,
        ..TouchConfig::default()
    };
    assert_eq!(bad.check().unwrap().param.name(), "touch_duration");
    assert_eq!(bad.sanitized(|_| {}).touch_duration, 0.5);
    let bad = TouchConfig {
        approach_weight: 1.5,
        ..TouchConfig::default()
    };
    assert_eq!(bad.check().unwrap().param.name(), "approach_weight");
    let bad = TouchConfig {
        shoulder_height: 0.0,
        ..TouchConfig::default()
    };
    assert_eq!(bad.check().unwrap().param.name(), "shoulder_height");
    let bad = TouchConfig {
        palm_axis: Vec3::Y,
        ..TouchConfig::default()
    };
    assert_eq!(bad.check().unwrap().param.name(), "palm_axis");
    assert_eq!(bad.sanitized(|_| {}).palm_axis, Vec3::Z);
    let bad = TouchConfig {
        right_palm_axis: Vec3::ZERO,
        ..TouchConfig::default()
    };
    assert_eq!(bad.check().unwrap().param.name(), "right_palm_axis");
    assert_eq!(bad.sanitized(|_| {}).right_palm_axis, Vec3::Z);
    // Mirrored hands: each keeps its own axes.
    let mirrored = TouchConfig {
        right_palm_axis: Vec3::NEG_Z,
        right_finger_axis: Vec3::NEG_Y,
        ..TouchConfig::default()
    };
    assert_eq!(mirrored.check(), None);
    assert_eq!(mirrored.sanitized(|_| {}), mirrored);
    let nan = TouchConfig {
        rise_distance: f32::NAN,
        ..TouchConfig::default()
    };
    assert_eq!(nan.sanitized(|_| {}).rise_distance, 0.5);
}

#[test]
fn bad_input_never_panics_and_outputs_stay_finite() {
    let mut m = machine();
    let walls = [wall(1, -0.45, -10.0, 40.0)];
    let mut w = World::new(walls.to_vec());
    w.run(&mut m, 60.0, 3.0, |_, _, _| {});
    let good = [
        Candidate {
            id: 1,
            closest_point: Vec3::new(-0.45, 1.45, 0.0),
        },
        Candidate {
            id: 2,
            closest_point: Vec3::NAN,
        },
    ];
    let inputs = [
        (f32::NAN, Vec3::ZERO, Vec3::ZERO),
        (f32::INFINITY, Vec3::ZERO, Vec3::ZERO),
        (-1.0, Vec3::ZERO, Vec3::ZERO),
        (1e9, Vec3::ZERO, Vec3::ZERO),
        (1.0 / 60.0, Vec3::NAN, Vec3::ZERO),
        (1.0 / 60.0, Vec3::ZERO, Vec3::splat(f32::INFINITY)),
        (1.0 / 60.0, Vec3::splat(1e30), Vec3::splat(1e30)),
    ];
    for (dt, position, velocity) in inputs {
        let out = m.step(&TouchInput {
            dt,
            root: Pose::new(position, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            shoulders: [position + Vec3::Y, position - Vec3::Y],
            velocity,
            move_input: Some(Vec3::NAN),
            grounded: true,
            candidates: &good,
            surface_normal: Some(Vec3::ZERO),
        });
        for hand in out {
            assert!(hand.pose.is_finite() || !position.is_finite() || position.x > 1e29);
            assert!(hand.position_weight.is_finite() && hand.rotation_weight.is_finite());
        }
    }
    let mut m = EnvTouch::new(
        TouchConfig {
            shoulder_height: f32::NAN,
            palm_axis: Vec3::ZERO,
            ..TouchConfig::default()
        },
        [Pose::new(Vec3::NAN, Quat::IDENTITY); 2],
    );
    let mut w = World::new(walls.to_vec());
    w.run(&mut m, 60.0, 5.0, |_, _, out| {
        assert!(out.iter().all(|h| h.pose.is_finite()));
    });
}

#[test]
fn names_and_indices() {
    assert_eq!(TouchState::ALL.map(TouchState::index), [0, 1, 2, 3, 4]);
    assert_eq!(TouchState::Rise.name(), "Rise");
    assert_eq!(Side::Left.other(), Side::Right);
    assert_eq!(Side::Right.name(), "right");
    assert_eq!(ResetReason::MovingAway.name(), "moving_away");
}

#[test]
fn a_forced_reset_lets_go_and_reports_it() {
    let (_, mut m) = in_state(TouchState::Touch);
    m.reset(ResetReason::Forced);
    assert_eq!(m.state(), TouchState::Reset);
    assert_eq!(m.reset_reason(), ResetReason::Forced);
    assert_eq!(
        m.events(),
        &[
            TouchEvent::TouchEnded { side: Side::Left },
            TouchEvent::StateChanged {
                from: TouchState::Touch,
                to: TouchState::Reset
            }
        ]
    );
    assert_eq!(ResetReason::Forced.name(), "forced");
}

#[test]
fn reset_skips_the_world_until_its_delay_is_nearly_over() {
    let mut m = EnvTouch::default();
    assert!(!m.needs_world(1.0 / 60.0));
    assert!(
        m.needs_world(2.5),
        "a step that reaches the delay needs the world"
    );
    assert_eq!(
        m.normal_ray([Vec3::ZERO; 2], &[]),
        None,
        "no contact, no ray"
    );
    m.reset(ResetReason::Forced);
    assert_eq!(m.state(), TouchState::Reset);
}

#[test]
fn velocity_estimate_and_active_hands() {
    let mut v = VelocityEstimate::default();
    assert_eq!(v.update(Vec3::ONE, 0.5), Vec3::ZERO);
    assert_eq!(
        v.update(Vec3::new(2.0, 1.0, 1.0), 0.5),
        Vec3::new(2.0, 0.0, 0.0)
    );
    assert_eq!(v.update(Vec3::ZERO, 0.0), Vec3::ZERO);
    let hand = HandTarget {
        pose: Pose::IDENTITY,
        position_weight: 0.0,
        rotation_weight: 2e-4,
    };
    assert!(hand.is_active());
    assert!(!HandTarget {
        rotation_weight: 0.0,
        ..hand
    }
    .is_active());
}

#[test]
fn candidate_is_the_nearest_shape_of_a_placed_body() {
    // A post (a capsule 0.2 m thick) and a wall panel 1 m to its right, on a body turned 90° and
    // moved 2 m forward: the point beside the post finds the post's surface.
    let post = Shape::capsule(0.1, 2.0);
    let panel = Shape::Box {
        half_extents: Vec3::new(0.5, 1.0, 0.05),
    };
    let shapes = [
        (post, Affine3A::IDENTITY),
        (panel, Affine3A::from_translation(Vec3::X)),
    ];
    let body = Affine3A::from_rotation_translation(
        glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 1.0, -2.0),
    );
    let c = candidate(3, &body, &shapes, Vec3::new(0.5, 1.0, -2.0)).unwrap();
    assert_eq!(c.id, 3);
    assert!(
        c.closest_point.distance(Vec3::new(0.1, 1.0, -2.0)) < 1e-5,
        "{c:?}"
    );
    assert!(candidate(3, &body, &[], Vec3::ZERO).is_none());
}
