//! Record and replay: a ring buffer of the last frames of every agent.

use glam::Vec2;

use super::agent::AgentState;

/// Frames kept by default (≈ 16.7 s at 60 Hz).
pub const DEFAULT_FRAMES: usize = 1000;
/// Most frames a recording keeps, whatever the budget.
pub const MAX_FRAMES: usize = 100_000;
/// Most bytes a recording's ring may take (64 MiB): the frame count is cut to fit.
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// Returns the frames a recording of `agents` agents keeps when `frames` are asked for: clamped to
/// 1..=[`MAX_FRAMES`], then cut so the ring fits in [`MAX_RECORD_BYTES`]; 0 when not even one frame
/// fits (then nothing is recorded).
#[must_use]
pub fn frames_within_budget(agents: usize, frames: usize) -> usize {
    let per_frame = agents
        .saturating_mul(core::mem::size_of::<Sample>())
        .saturating_add(core::mem::size_of::<u64>());
    frames
        .clamp(1, MAX_FRAMES)
        .min(MAX_RECORD_BYTES / per_frame)
}

/// One agent in one recorded frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Position (x, z) in metres.
    pub pos: Vec2,
    /// Heading (yaw) in radians.
    pub heading: f32,
    /// Speed in m/s.
    pub speed: f32,
    /// State of the agent.
    pub state: AgentState,
}

/// A ring buffer of `frames × agents` samples, allocated once when recording starts.
#[derive(Default, Debug, Clone)]
pub struct Recorder {
    agents: usize,
    capacity: usize,
    samples: Vec<Sample>,
    ticks: Vec<u64>,
    head: usize,
    len: usize,
}

impl Recorder {
    /// Returns a recorder for `agents` agents keeping `frames` frames, as many as
    /// [`frames_within_budget`] allows (see [`Recorder::capacity`]; 0 records nothing).
    #[must_use]
    pub fn new(agents: usize, frames: usize) -> Self {
        let frames = frames_within_budget(agents, frames);
        let agents = if frames == 0 { 0 } else { agents };
        Self {
            agents,
            capacity: frames,
            samples: vec![Sample::default(); agents * frames],
            ticks: vec![0; frames],
            head: 0,
            len: 0,
        }
    }

    /// Returns how many frames are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Returns true when nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Returns the number of agents per frame.
    #[must_use]
    pub fn agents(&self) -> usize {
        self.agents
    }

    /// Returns the ring's capacity in frames.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Stores one frame (overwriting the oldest when full); `fill(i)` gives agent `i`'s sample.
    pub fn push(&mut self, tick: u64, mut fill: impl FnMut(usize) -> Sample) {
        if self.capacity == 0 {
            return;
        }
        let base = self.head * self.agents;
        for (i, s) in self.samples[base..base + self.agents]
            .iter_mut()
            .enumerate()
        {
            *s = fill(i);
        }
        self.ticks[self.head] = tick;
        self.head = (self.head + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
    }

    /// Returns frame `k` (0 = oldest stored) as its tick number and samples, or `None` past the end.
    #[must_use]
    pub fn frame(&self, k: usize) -> Option<(u64, &[Sample])> {
        if k >= self.len {
            return None;
        }
        let slot = (self.head + self.capacity - self.len + k) % self.capacity;
        let base = slot * self.agents;
        Some((self.ticks[slot], &self.samples[base..base + self.agents]))
    }

    /// Streams every stored frame as CSV (`tick,agent,x,z,heading,speed,state`) into `out`, one
    /// line at a time (nothing is built in memory; give it a buffered writer).
    ///
    /// # Errors
    /// Returns the writer's error.
    pub fn export_csv(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        writeln!(out, "tick,agent,x,z,heading,speed,state")?;
        for k in 0..self.len {
            if let Some((tick, samples)) = self.frame(k) {
                for (i, s) in samples.iter().enumerate() {
                    writeln!(
                        out,
                        "{tick},{i},{:.4},{:.4},{:.4},{:.4},{}",
                        s.pos.x,
                        s.pos.y,
                        s.heading,
                        s.speed,
                        s.state.name()
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_newest_frames() {
        let mut r = Recorder::new(2, 3);
        for t in 0..5u64 {
            r.push(t, |i| Sample {
                pos: Vec2::new(t as f32, i as f32),
                ..Sample::default()
            });
        }
        assert_eq!(r.len(), 3);
        assert_eq!(r.frame(0).unwrap().0, 2);
        assert_eq!(r.frame(2).unwrap().1[1].pos, Vec2::new(4.0, 1.0));
        assert!(r.frame(3).is_none());
        let mut csv = Vec::new();
        r.export_csv(&mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert_eq!(csv.lines().count(), 1 + 3 * 2);
        assert!(csv.contains("4,1,4.0000,1.0000,0.0000,0.0000,idle"));
    }

    #[test]
    fn huge_requests_are_clamped() {
        let r = Recorder::new(1_000_000, 1_000_000);
        assert!(r.capacity() * r.agents() * core::mem::size_of::<Sample>() <= MAX_RECORD_BYTES);
        let r = Recorder::new(0, 0);
        assert_eq!(r.capacity(), 1);
        let r = Recorder::new(usize::MAX, usize::MAX);
        assert_eq!(r.capacity(), 0);
        assert!(r.frame(0).is_none());
    }
}
