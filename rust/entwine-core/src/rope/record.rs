//! Record and replay of the anchor path (seed 5.3): the rope's state when recording starts plus every
//! step's inputs, so that a replay re-runs the same steps and reproduces the rope bit for bit.
//!
//! Recording allocates once, when it starts (a copy of the rope and a sample buffer of the requested
//! capacity); each recorded step only writes into that buffer. When the buffer is full the recorder
//! stops taking samples and says so.

use glam::Vec3;

use super::{EndAttachment, Rope};

/// One recorded step's inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnchorSample {
    /// Step length, seconds.
    pub dt: f32,
    /// The anchor sample the step ended on, world metres.
    pub anchor: Vec3,
    /// The end attachment for the step.
    pub end: EndAttachment,
    /// The target length (metres) in force for the step.
    pub target_length: f32,
}

/// A finished recording: the rope at the start and the steps that followed.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The rope as it was when recording started.
    pub initial: Rope,
    /// The steps, in order.
    pub samples: Vec<AnchorSample>,
}

/// Records the inputs of a rope's steps.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    recording: Option<Recording>,
    full: bool,
}

/// Most steps one recording holds: one hour at 240 steps per second (about 30 MB of samples). A
/// longer request is cut to this, so a hostile count can never size the allocation.
pub const MAX_RECORD_STEPS: usize = 240 * 3600;

impl Recorder {
    /// Starts recording `rope` from its current state, with room for `max_steps` steps (allocated now,
    /// at most [`MAX_RECORD_STEPS`]); returns the number of steps there is room for.
    pub fn start(&mut self, rope: &Rope, max_steps: usize) -> usize {
        let steps = max_steps.min(MAX_RECORD_STEPS);
        self.recording = Some(Recording {
            initial: rope.clone(),
            samples: Vec::with_capacity(steps),
        });
        self.full = false;
        steps
    }

    /// Returns `true` while recording (started and not full).
    #[must_use]
    pub fn is_recording(&self) -> bool {
        self.recording.is_some() && !self.full
    }

    /// Records one step's inputs; returns `false` when not recording or when the buffer is full (the
    /// sample is dropped and the recording ends there).
    pub fn push(&mut self, sample: AnchorSample) -> bool {
        let Some(rec) = self.recording.as_mut() else {
            return false;
        };
        if rec.samples.len() == rec.samples.capacity() {
            self.full = true;
            return false;
        }
        rec.samples.push(sample);
        true
    }

    /// Stops recording and returns what was recorded (or `None` when nothing was being recorded).
    pub fn stop(&mut self) -> Option<Recording> {
        self.full = false;
        self.recording.take()
    }
}

/// Plays a recording back into a rope.
#[derive(Clone, Debug, Default)]
pub struct Replayer {
    cursor: usize,
}

impl Replayer {
    /// Restores `rope` to the recording's starting state (reusing its buffers when the capacities
    /// match) and rewinds to the first step.
    pub fn begin(&mut self, recording: &Recording, rope: &mut Rope) {
        rope.clone_from(&recording.initial);
        self.cursor = 0;
    }

    /// Returns the next step's inputs and advances, or `None` when the replay is over.
    pub fn next(&mut self, recording: &Recording) -> Option<AnchorSample> {
        let s = recording.samples.get(self.cursor).copied();
        if s.is_some() {
            self.cursor += 1;
        }
        s
    }

    /// Returns how many steps have been replayed.
    #[must_use]
    pub fn position(&self) -> usize {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Collider, Motion, RopeParams, Shape, World};
    use super::*;
    use crate::kit::Pose;
    use glam::Quat;

    #[test]
    fn replay_reproduces_the_rope_bit_for_bit() {
        let params = RopeParams {
            tear_ratio: 3.0,
            ..RopeParams::default()
        };
        let mut world = World::with_capacity(4);
        world.push(Collider {
            pose: Pose::new(Vec3::new(1.5, 0.5, -2.0), Quat::IDENTITY),
            shape: Shape::Box {
                half_extents: Vec3::new(0.3, 0.5, 0.3),
            },
            solid: true,
            cutter: false,
            motion: Motion::NONE,
        });
        let mut rope = Rope::new(32, 12, params, Vec3::new(0.0, 1.4, 0.0), Vec3::NEG_Y);
        // Some history before recording starts.
        for k in 0..30 {
            let a = Vec3::new(0.05 * k as f32, 1.4, 0.0);
            let _ = rope.step(1.0 / 60.0, a, EndAttachment::Free, &world);
        }
        let mut recorder = Recorder::default();
        recorder.start(&rope, 600);
        for k in 0..600 {
            let t = k as f32 / 60.0;
            let anchor = Vec3::new(3.0 * (t * 1.3).sin(), 1.4 + 0.3 * (t * 4.0).sin(), -2.0 * t);
            if k == 200 {
                rope.set_target_length(6.0);
            }
            let dt = if k % 7 == 0 { 1.0 / 50.0 } else { 1.0 / 60.0 };
            assert!(recorder.push(AnchorSample {
                dt,
                anchor,
                end: EndAttachment::Free,
                target_length: rope.target_length(),
            }));
            let _ = rope.step(dt, anchor, EndAttachment::Free, &world);
        }
        let recording = recorder.stop().expect("recording");
        let original: Vec<Vec3> = rope.points().to_vec();

        // Replay into a rope that has since done something else entirely.
        let mut replayed = Rope::new(32, 5, RopeParams::default(), Vec3::ONE, Vec3::X);
        let mut replayer = Replayer::default();
        replayer.begin(&recording, &mut replayed);
        while let Some(s) = replayer.next(&recording) {
            replayed.set_target_length(s.target_length);
            let _ = replayed.step(s.dt, s.anchor, s.end, &world);
        }
        assert_eq!(replayer.position(), 600);
        assert_eq!(replayed.points().len(), original.len());
        for (a, b) in replayed.points().iter().zip(&original) {
            assert_eq!(
                a.to_array().map(f32::to_bits),
                b.to_array().map(f32::to_bits)
            );
        }
    }

    #[test]
    fn a_full_recorder_stops_instead_of_growing() {
        let rope = Rope::new(8, 4, RopeParams::default(), Vec3::ZERO, Vec3::NEG_Y);
        let mut r = Recorder::default();
        let s = AnchorSample {
            dt: 0.016,
            anchor: Vec3::ZERO,
            end: EndAttachment::Free,
            target_length: 1.0,
        };
        assert!(!r.push(s));
        r.start(&rope, 2);
        assert!(r.push(s) && r.push(s));
        assert!(!r.push(s));
        assert!(!r.is_recording());
        assert_eq!(r.stop().unwrap().samples.len(), 2);
    }
}
