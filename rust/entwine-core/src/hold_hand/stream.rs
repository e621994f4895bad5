//! The pair's stream on the wire: what the initiator sends and when, and everything a remote peer
//! keeps to show the pair (seed §4.5, §5, §6.7, §7.1).
//!
//! The initiator sends one **frame** per due tick: a concatenation of the sections that are due,
//! each a packet that starts with its kind byte ([`PairPose`] 29 bytes, [`IkTargets`] 25 bytes and
//! [`AnimSnapshot`] 4 + 4·n bytes). One frame per tick instead of one message per stream saves the
//! transport's per-message header: at the default rates (pose 10 Hz, IK 20 Hz, animation 10 Hz)
//! the pose and the animation ride along with every other IK packet, so there are 20 frames a second.
//! Each section keeps its own sequence number, so the streams stay independent on the receiver.
//!
//! **Animation snapshot** (kind [`ANIM_KIND`]): the initiator's non-arm animation parameters.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 1 | kind = [`ANIM_KIND`] |
//! | 1 | 2 | sequence (u16, wraps) |
//! | 3 | 1 | count n (≤ [`MAX_ANIM_VALUES`]) |
//! | 4 | 4·n | values (f32, finite, \|v\| ≤ [`MAX_WORLD`]) |

use glam::Vec3;

use crate::kit::{ByteReader, ByteWriter, Pose, Seq16, SequenceGate, ShortBuffer};

use super::net::{
    IkTargets, Malformed, PairPose, RemoteHands, RemoteIk, RootFollower, IK_BYTES, IK_KIND,
    MAX_WORLD, PAIR_POSE_BYTES, PAIR_POSE_KIND,
};

/// First byte of an animation snapshot.
pub const ANIM_KIND: u8 = 3;
/// How far past the newest pose (in pose intervals) a remote peer carries the roots on at their last
/// velocity while the next pose is late or lost.
pub const EXTRAPOLATION_INTERVALS: f32 = 3.0;
/// A remote root catches up at most this many times faster than it was last seen moving…
pub const CATCH_UP_FACTOR: f32 = 2.0;
/// …and never slower than this (m/s).
pub const MIN_CATCH_UP_SPEED: f32 = 2.0;
/// Poses further apart than this many sequence steps give no velocity (a long gap).
const MAX_VELOCITY_GAP: u16 = 8;
/// An animation snapshot whose values have not changed is skipped, but one is sent at least this
/// often (seconds), so a late joiner or a lost packet is repaired.
pub const ANIM_KEEPALIVE: f32 = 1.0;
/// Animation values that moved less than this since the last snapshot count as unchanged.
pub const ANIM_DEADBAND: f32 = 1.0e-3;
/// Most animation values one snapshot carries.
pub const MAX_ANIM_VALUES: usize = 16;
/// Largest frame in bytes (all three sections, a full snapshot).
pub const MAX_FRAME_BYTES: usize = PAIR_POSE_BYTES + IK_BYTES + 4 + 4 * MAX_ANIM_VALUES;

/// The initiator's non-arm animation parameters at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimSnapshot {
    /// Wrap-around sequence number.
    pub seq: Seq16,
    len: u8,
    values: [f32; MAX_ANIM_VALUES],
}

impl AnimSnapshot {
    /// Returns a snapshot of the first [`MAX_ANIM_VALUES`] of `values`.
    #[must_use]
    pub fn new(seq: Seq16, values: &[f32]) -> Self {
        let n = values.len().min(MAX_ANIM_VALUES);
        let mut v = [0.0; MAX_ANIM_VALUES];
        v[..n].copy_from_slice(&values[..n]);
        Self {
            seq,
            len: n as u8,
            values: v,
        }
    }

    /// Returns the values, in the order of the initiator's parameter list.
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.values[..usize::from(self.len)]
    }

    /// Returns the encoded size in bytes.
    #[must_use]
    pub fn size(&self) -> usize {
        4 + 4 * usize::from(self.len)
    }

    /// Writes the snapshot into `out` and returns its length.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ShortBuffer> {
        let mut w = ByteWriter::new(out);
        w.put_u8(ANIM_KIND)?;
        w.put_u16(self.seq.0)?;
        w.put_u8(self.len)?;
        for v in self.values() {
            w.put_f32(*v)?;
        }
        Ok(w.written().len())
    }

    /// Returns the snapshot at the start of `bytes` and its length, or why it is malformed.
    pub fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), Malformed> {
        let mut r = ByteReader::new(bytes);
        let short = |_| Malformed::Size;
        if r.get_u8().map_err(short)? != ANIM_KIND {
            return Err(Malformed::Kind);
        }
        let seq = Seq16(r.get_u16().map_err(short)?);
        let n = usize::from(r.get_u8().map_err(short)?);
        if n > MAX_ANIM_VALUES {
            return Err(Malformed::Value);
        }
        let mut values = [0.0; MAX_ANIM_VALUES];
        for v in &mut values[..n] {
            *v = r.get_f32().map_err(short)?;
            if !v.is_finite() || v.abs() > MAX_WORLD {
                return Err(Malformed::Value);
            }
        }
        Ok((
            Self {
                seq,
                len: n as u8,
                values,
            },
            4 + 4 * n,
        ))
    }
}

/// The sections of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frame {
    /// Both roots, when due.
    pub pose: Option<PairPose>,
    /// Both hands' IK, when due.
    pub ik: Option<IkTargets>,
    /// The animation parameters, when due.
    pub anim: Option<AnimSnapshot>,
}

impl Frame {
    /// Returns the frame in `bytes`, or why it is malformed: an empty frame, an unknown kind, a
    /// section twice, a short section or trailing bytes, or a bad value in any section.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        if bytes.is_empty() || bytes.len() > MAX_FRAME_BYTES {
            return Err(Malformed::Size);
        }
        let mut frame = Self::default();
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match rest[0] {
                PAIR_POSE_KIND if frame.pose.is_none() => {
                    let end = PAIR_POSE_BYTES.min(rest.len());
                    frame.pose = Some(PairPose::decode(&rest[..end])?);
                    at += PAIR_POSE_BYTES;
                }
                IK_KIND if frame.ik.is_none() => {
                    let end = IK_BYTES.min(rest.len());
                    frame.ik = Some(IkTargets::decode(&rest[..end])?);
                    at += IK_BYTES;
                }
                ANIM_KIND if frame.anim.is_none() => {
                    let (anim, n) = AnimSnapshot::decode_prefix(rest)?;
                    frame.anim = Some(anim);
                    at += n;
                }
                _ => return Err(Malformed::Kind),
            }
        }
        Ok(frame)
    }
}

/// How often each stream is sent (seconds; an interval ≤ 0 turns the animation stream off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamRates {
    /// Seconds between pair poses (seed: 0.1).
    pub pose_interval: f32,
    /// Seconds between IK packets (seed: 0.05).
    pub ik_interval: f32,
    /// Seconds between animation snapshots (0: off).
    pub animation_interval: f32,
}

impl Default for StreamRates {
    fn default() -> Self {
        Self {
            pose_interval: 0.1,
            ik_interval: 0.05,
            animation_interval: 0.1,
        }
    }
}

/// Which sections are due this tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Due {
    /// Send the pair pose.
    pub pose: bool,
    /// Send the IK targets.
    pub ik: bool,
    /// Send the animation snapshot.
    pub anim: bool,
}

impl Due {
    /// Returns whether anything is due.
    #[must_use]
    pub fn any(self) -> bool {
        self.pose || self.ik || self.anim
    }
}

/// The initiator's send schedule and sequence numbers.
#[derive(Clone, Copy, Debug, Default)]
pub struct PairSender {
    clocks: [f32; 3],
    seqs: [Seq16; 3],
    started: bool,
    /// The last animation snapshot sent, and the seconds since.
    last_anim: Option<AnimSnapshot>,
    anim_age: f32,
}

impl PairSender {
    /// Starts a new pair: every stream's next sequence is `first` and everything is due at once.
    pub fn restart(&mut self, first: Seq16) {
        *self = Self {
            clocks: [f32::INFINITY; 3],
            seqs: [first; 3],
            started: true,
            last_anim: None,
            anim_age: 0.0,
        };
    }

    /// Returns whether [`PairSender::restart`] ran since the last [`PairSender::stop`].
    #[must_use]
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Stops sending until the next restart.
    pub fn stop(&mut self) {
        self.started = false;
    }

    /// Advances `dt` seconds and returns the sections due now.
    pub fn tick(&mut self, dt: f32, rates: &StreamRates) -> Due {
        if !self.started {
            return Due::default();
        }
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        self.anim_age += dt;
        let intervals = [
            rates.pose_interval,
            rates.ik_interval,
            rates.animation_interval,
        ];
        let mut due = [false; 3];
        for ((clock, interval), due) in self.clocks.iter_mut().zip(intervals).zip(&mut due) {
            if !(interval > 0.0 && interval.is_finite()) {
                continue;
            }
            *clock += dt;
            // Half a frame of slack, so that an interval that is a whole number of frames is kept.
            if *clock >= interval - dt * 0.5 {
                *due = true;
                *clock = if clock.is_finite() {
                    (*clock - interval).clamp(0.0, interval)
                } else {
                    0.0
                };
            }
        }
        Due {
            pose: due[0],
            ik: due[1],
            anim: due[2],
        }
    }

    /// Writes the due sections into `out` with their next sequence numbers (the ones in `pose` and
    /// `ik` are replaced) and returns the frame's length (0: nothing to send). A due animation
    /// snapshot equal to the last one sent (within [`ANIM_DEADBAND`]) is left out unless [`ANIM_KEEPALIVE`] has passed.
    pub fn write(
        &mut self,
        due: Due,
        pose: PairPose,
        ik: IkTargets,
        anim: &[f32],
        out: &mut [u8],
    ) -> Result<usize, ShortBuffer> {
        let mut n = 0;
        if due.pose {
            let p = PairPose {
                seq: self.take(0),
                ..pose
            };
            n += p.encode(out.get_mut(n..).ok_or(ShortBuffer)?)?;
        }
        if due.ik {
            let k = IkTargets {
                seq: self.take(1),
                ..ik
            };
            n += k.encode(out.get_mut(n..).ok_or(ShortBuffer)?)?;
        }
        let now = &anim[..anim.len().min(MAX_ANIM_VALUES)];
        let unchanged = self.last_anim.is_some_and(|last| {
            last.values().len() == now.len()
                && last
                    .values()
                    .iter()
                    .zip(now)
                    .all(|(a, b)| (a - b).abs() <= ANIM_DEADBAND)
        });
        if due.anim && (!unchanged || self.anim_age >= ANIM_KEEPALIVE) {
            let a = AnimSnapshot::new(self.seqs[2], anim);
            n += a.encode(out.get_mut(n..).ok_or(ShortBuffer)?)?;
            self.take(2);
            self.last_anim = Some(a);
            self.anim_age = 0.0;
        }
        Ok(n)
    }

    fn take(&mut self, stream: usize) -> Seq16 {
        let s = self.seqs[stream];
        self.seqs[stream] = s.next();
        s
    }
}

/// Whose eyes a remote peer shows the pair with (seed §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewpoint {
    /// The recipient's own peer: the recipient consumes its own target; the initiator is smoothed
    /// relative to the recipient's root, so the pair's relative stance is what stays steady.
    Recipient,
    /// Anyone else: both roots are smoothed toward their absolute targets.
    Onlooker,
}

/// The two roots a remote peer shows this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairRoots {
    /// The initiator's root, world space.
    pub initiator: Pose,
    /// The recipient's root, world space.
    pub recipient: Pose,
}

/// Tuning of a remote peer's consumption.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewTuning {
    /// The send rates the initiator uses (they set the smoothing times).
    pub rates: StreamRates,
    /// Roots closer than this to their target snap onto it (m).
    pub snap_distance: f32,
    /// Seconds without IK packets before the hands fade out.
    pub ik_timeout: f32,
    /// Seconds the hands take to fade out or back in.
    pub ik_fade_time: f32,
}

impl Default for ViewTuning {
    fn default() -> Self {
        Self {
            rates: StreamRates::default(),
            snap_distance: 0.005,
            ik_timeout: 0.5,
            ik_fade_time: 0.2,
        }
    }
}

/// What arrived in a frame that passed [`PairReceiver::receive`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// A newer pair pose was kept.
    pub pose: bool,
    /// A newer IK packet was kept.
    pub ik: bool,
    /// A newer animation snapshot was kept.
    pub anim: bool,
}

/// Everything a remote peer keeps of one pair's stream: the newest pose, IK and animation (each
/// behind its own wrap-around sequence gate), the smoothing state, and counters.
#[derive(Clone, Debug, Default)]
pub struct PairReceiver {
    pose_gate: SequenceGate,
    latest_pose: Option<PairPose>,
    /// World velocities of both roots (m/s), from the last two poses.
    velocity: [Vec3; 2],
    initiator: RootFollower,
    recipient: RootFollower,
    initiator_relative: RootFollower,
    ik: RemoteIk,
    anim_gate: SequenceGate,
    anim: Option<AnimSnapshot>,
    anim_fresh: bool,
    pose_silence: f32,
    /// The pose interval the velocities were measured with (set by [`PairReceiver::roots`]).
    pose_interval: f32,
    frames: u32,
    stale: u32,
    malformed: u32,
}

impl PairReceiver {
    /// Offers a frame's bytes; returns what was new, or why the frame was dropped (then counted).
    pub fn receive(&mut self, bytes: &[u8]) -> Result<Received, Malformed> {
        let frame = Frame::decode(bytes).inspect_err(|_| self.malformed += 1)?;
        self.frames += 1;
        let mut got = Received::default();
        if let Some(pose) = frame.pose {
            let previous = self.pose_gate.last();
            if self.pose_gate.accept(pose.seq) {
                self.velocity = match (self.latest_pose, previous) {
                    (Some(old), Some(old_seq)) => {
                        let steps = pose.seq.0.wrapping_sub(old_seq.0);
                        velocities(old, pose, steps, self.pose_interval)
                    }
                    _ => [Vec3::ZERO; 2],
                };
                self.latest_pose = Some(pose);
                self.pose_silence = 0.0;
                got.pose = true;
            } else {
                self.stale += 1;
            }
        }
        if let Some(ik) = frame.ik {
            if self.ik.receive(ik) {
                got.ik = true;
            } else {
                self.stale += 1;
            }
        }
        if let Some(anim) = frame.anim {
            if self.anim_gate.accept(anim.seq) {
                self.anim = Some(anim);
                self.anim_fresh = true;
                got.anim = true;
            } else {
                self.stale += 1;
            }
        }
        Ok(got)
    }

    /// Returns the roots to show after `dt` seconds, or `None` before the first pose.
    pub fn roots(&mut self, view: Viewpoint, dt: f32, tuning: &ViewTuning) -> Option<PairRoots> {
        let latest = self.latest_pose?;
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        self.pose_silence += dt;
        // A pose interval that is not a positive finite number counts as the default's.
        let interval = tuning.rates.pose_interval;
        let interval = if interval.is_finite() && interval > 0.0 {
            interval
        } else {
            StreamRates::default().pose_interval
        };
        self.pose_interval = interval;
        let snap = tuning.snap_distance;
        // Between poses (and over a lost one) both roots carry on at their last velocity, so the
        // smoothing follows a moving target instead of catching up in bursts.
        let ahead = self.pose_silence.min(interval * EXTRAPOLATION_INTERVALS);
        let mut initiator_target = latest.initiator;
        initiator_target.position += self.velocity[0] * ahead;
        let mut recipient_target = latest.initiator.from_local(latest.recipient_local);
        recipient_target.position += self.velocity[1] * ahead;
        // Catching up after a late or lost pose never runs much faster than the pair walks.
        let limit = |v: Vec3| (v.length() * CATCH_UP_FACTOR).max(MIN_CATCH_UP_SPEED);
        let (limit_i, limit_r) = (limit(self.velocity[0]), limit(self.velocity[1]));
        let recipient = self
            .recipient
            .step_limited(recipient_target, dt, interval, snap, limit_r);
        let initiator = match view {
            Viewpoint::Onlooker => {
                self.initiator
                    .step_limited(initiator_target, dt, interval, snap, limit_i)
            }
            Viewpoint::Recipient => {
                // The initiator in the recipient's frame, smoothed there, placed on our root.
                let relative = latest.recipient_local.inverse();
                let smoothed = self.initiator_relative.step(relative, dt, interval, snap);
                recipient.from_local(smoothed)
            }
        };
        Some(PairRoots {
            initiator,
            recipient,
        })
    }

    /// Returns both hands for the initiator's shown root after `dt` seconds, or `None` before the
    /// first IK packet; the weight fades out after `ik_timeout` of silence.
    pub fn hands(
        &mut self,
        initiator_root: Pose,
        dt: f32,
        tuning: &ViewTuning,
    ) -> Option<RemoteHands> {
        self.ik.update(
            initiator_root,
            dt,
            tuning.rates.ik_interval,
            tuning.ik_timeout,
            tuning.ik_fade_time,
        )
    }

    /// Returns the newest animation values once after each new snapshot (then `None`).
    pub fn take_animation(&mut self) -> Option<&[f32]> {
        if !std::mem::take(&mut self.anim_fresh) {
            return None;
        }
        self.anim.as_ref().map(AnimSnapshot::values)
    }

    /// Returns the seconds since the last new pair pose (0 before the first).
    #[must_use]
    pub fn pose_silence(&self) -> f32 {
        self.pose_silence
    }

    /// Returns whether a pair pose has arrived.
    #[must_use]
    pub fn has_pose(&self) -> bool {
        self.latest_pose.is_some()
    }

    /// Returns the last accepted IK sequence number.
    #[must_use]
    pub fn last_ik_sequence(&self) -> Option<Seq16> {
        self.ik.last_sequence()
    }

    /// Returns how many frames were accepted (well formed, from the initiator).
    #[must_use]
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Returns how many sections were dropped as stale, duplicate or out of order.
    #[must_use]
    pub fn stale(&self) -> u32 {
        self.stale
    }

    /// Returns how many frames were dropped as malformed.
    #[must_use]
    pub fn malformed(&self) -> u32 {
        self.malformed
    }

    /// Forgets the pair (counters too): the next frame starts afresh.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Returns both roots' world velocities between two poses `steps` sequence numbers apart.
fn velocities(old: PairPose, new: PairPose, steps: u16, interval: f32) -> [Vec3; 2] {
    if steps == 0 || steps > MAX_VELOCITY_GAP || interval.is_nan() || interval <= 0.0 {
        return [Vec3::ZERO; 2];
    }
    let dt = f32::from(steps) * interval;
    let old_r = old.initiator.from_local(old.recipient_local).position;
    let new_r = new.initiator.from_local(new.recipient_local).position;
    let v = [
        (new.initiator.position - old.initiator.position) / dt,
        (new_r - old_r) / dt,
    ];
    if v.iter().all(|v| v.is_finite()) {
        v
    } else {
        [Vec3::ZERO; 2]
    }
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;

    fn pose_at(x: f32) -> PairPose {
        PairPose {
            seq: Seq16(0),
            initiator: Pose::new(Vec3::new(x, 0.0, 0.0), Quat::from_rotation_y(0.5)),
            recipient_local: Pose::new(Vec3::new(-0.82, 0.0, 0.17), Quat::IDENTITY),
        }
    }

    fn ik() -> IkTargets {
        IkTargets {
            seq: Seq16(0),
            initiator_hand: Pose::new(Vec3::new(-0.3, 1.0, -0.1), Quat::IDENTITY),
            recipient_hand: Pose::new(Vec3::new(-0.5, 1.0, -0.05), Quat::IDENTITY),
            weight: 1.0,
            connected: true,
            arm_override: true,
            has_shared_reach: true,
        }
    }

    #[test]
    fn the_default_schedule_sends_twenty_frames_a_second_with_every_section() {
        let mut s = PairSender::default();
        assert_eq!(s.tick(0.016, &StreamRates::default()), Due::default());
        s.restart(Seq16(65530));
        let rates = StreamRates::default();
        let (mut frames, mut poses, mut iks, mut anims) = (0, 0, 0, 0);
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let mut bytes = 0;
        for _ in 0..600 {
            let due = s.tick(1.0 / 60.0, &rates);
            if due.any() {
                frames += 1;
                bytes += s
                    .write(due, pose_at(1.0), ik(), &[0.5, frames as f32], &mut buf)
                    .unwrap();
            }
            poses += usize::from(due.pose);
            iks += usize::from(due.ik);
            anims += usize::from(due.anim);
        }
        // Ten seconds at 60 Hz.
        assert_eq!((poses, iks, anims, frames), (100, 200, 100, 200));
        assert_eq!(bytes, 100 * 29 + 200 * 25 + 100 * 12);
        // The sequences wrapped: 200 IK packets from 65530.
        let due = Due {
            ik: true,
            ..Due::default()
        };
        let n = s.write(due, pose_at(0.0), ik(), &[], &mut buf).unwrap();
        let f = Frame::decode(&buf[..n]).unwrap();
        assert_eq!(f.ik.unwrap().seq, Seq16(65530u16.wrapping_add(200)));
    }

    #[test]
    fn unchanged_animation_is_sent_once_a_second() {
        let mut s = PairSender::default();
        s.restart(Seq16(0));
        let rates = StreamRates::default();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let mut anims = Vec::new();
        for frame in 0..600 {
            let due = s.tick(1.0 / 60.0, &rates);
            let values = if frame < 300 { [1.0, 1.0] } else { [0.5, 1.0] };
            let n = s.write(due, pose_at(0.0), ik(), &values, &mut buf).unwrap();
            if let Ok(f) = Frame::decode(&buf[..n]) {
                if let Some(a) = f.anim {
                    anims.push((frame, a.seq.0, a.values()[0]));
                }
            }
        }
        // 5 s unchanged: the first and one a second; then the change at once, then one a second.
        assert_eq!(anims.len(), 10, "{anims:?}");
        assert!(anims
            .iter()
            .any(|&(f, _, v)| (300..306).contains(&f) && v == 0.5));
        let seqs: Vec<u16> = anims.iter().map(|a| a.1).collect();
        assert_eq!(
            seqs,
            (0..10).collect::<Vec<u16>>(),
            "no sequence gaps for skipped snapshots"
        );
    }

    #[test]
    fn frames_round_trip_and_reject_junk() {
        let mut s = PairSender::default();
        s.restart(Seq16(7));
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let all = Due {
            pose: true,
            ik: true,
            anim: true,
        };
        let n = s
            .write(all, pose_at(3.0), ik(), &[0.25, -2.0, 9.0], &mut buf)
            .unwrap();
        assert_eq!(n, 29 + 25 + 16);
        let f = Frame::decode(&buf[..n]).unwrap();
        assert_eq!(f.pose.unwrap().seq, Seq16(7));
        assert_eq!(f.anim.unwrap().values(), &[0.25, -2.0, 9.0]);
        assert_eq!(Frame::decode(&[]), Err(Malformed::Size));
        assert_eq!(Frame::decode(&buf[..n - 1]), Err(Malformed::Size));
        assert_eq!(Frame::decode(&buf[..28]), Err(Malformed::Size));
        let mut twice = [0u8; 58];
        twice[..29].copy_from_slice(&buf[..29]);
        twice[29..].copy_from_slice(&buf[..29]);
        assert_eq!(Frame::decode(&twice), Err(Malformed::Kind));
        let mut nan = buf;
        nan[29 + 25 + 4..29 + 25 + 8].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(Frame::decode(&nan[..n]), Err(Malformed::Value));
        let mut many = buf;
        many[29 + 25 + 3] = 200;
        assert_eq!(Frame::decode(&many[..n]), Err(Malformed::Value));
        // Arbitrary bytes never panic.
        let mut x = 12345u32;
        for len in 0..MAX_FRAME_BYTES + 4 {
            let mut junk = [0u8; MAX_FRAME_BYTES + 4];
            for b in &mut junk[..len] {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *b = (x >> 24) as u8 % 4;
            }
            let _ = Frame::decode(&junk[..len]);
        }
    }

    fn frame(seq: u16, x: f32) -> Vec<u8> {
        let mut s = PairSender::default();
        s.restart(Seq16(seq));
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let all = Due {
            pose: true,
            ik: true,
            anim: true,
        };
        let n = s.write(all, pose_at(x), ik(), &[x], &mut buf).unwrap();
        buf[..n].to_vec()
    }

    #[test]
    fn the_receiver_drops_stale_frames_and_counts_junk() {
        let mut r = PairReceiver::default();
        let t = ViewTuning::default();
        assert!(
            r.roots(Viewpoint::Onlooker, 0.016, &t).is_none(),
            "nothing before the first pose"
        );
        assert!(r.receive(&frame(65535, 1.0)).unwrap().pose);
        assert_eq!(r.take_animation(), Some(&[1.0][..]));
        assert_eq!(r.take_animation(), None, "once per snapshot");
        assert!(
            r.receive(&frame(0, 2.0)).unwrap().pose,
            "newer across the wrap"
        );
        let old = r.receive(&frame(65534, 9.0)).unwrap();
        assert_eq!(old, Received::default(), "stale across the wrap");
        assert_eq!(r.stale(), 3);
        assert_eq!(r.receive(&[1, 2, 3]), Err(Malformed::Size));
        assert_eq!(r.malformed(), 1);
        assert_eq!(r.frames(), 3);
        assert_eq!(r.last_ik_sequence(), Some(Seq16(0)));
    }

    #[test]
    fn onlookers_converge_on_both_absolute_targets() {
        let mut r = PairReceiver::default();
        let t = ViewTuning::default();
        r.receive(&frame(1, 4.0)).unwrap();
        let mut roots = None;
        for _ in 0..60 {
            roots = r.roots(Viewpoint::Onlooker, 1.0 / 60.0, &t);
        }
        let roots = roots.unwrap();
        let p = pose_at(4.0);
        assert!(
            roots.initiator.position.distance(p.initiator.position) < 1e-5,
            "exact f32 world"
        );
        let expected = p.initiator.from_local(p.recipient_local).position;
        let d = roots.recipient.position.distance(expected);
        // Quantised rotation (≤ 0.28°) over the 0.84 m offset, plus 0.12 mm position steps.
        assert!(d < 2e-3, "{d} {roots:?} {expected}");
        assert!((r.pose_silence() - 1.0).abs() < 1e-3);
    }

    #[test]
    fn the_recipient_keeps_the_pair_stance_while_its_own_root_catches_up() {
        let mut r = PairReceiver::default();
        let t = ViewTuning::default();
        r.receive(&frame(1, 0.0)).unwrap();
        r.roots(Viewpoint::Recipient, 1.0 / 60.0, &t);
        // The initiator walked 0.3 m: the recipient lags, but the initiator is always shown at the
        // pair's offset from the recipient as shown.
        r.receive(&frame(2, 0.3)).unwrap();
        let roots = r.roots(Viewpoint::Recipient, 1.0 / 60.0, &t).unwrap();
        let local = roots.recipient.to_local(roots.initiator);
        let expected = pose_at(0.3).recipient_local.inverse();
        assert!(
            local.position.distance(expected.position) < 1e-4,
            "{local:?}"
        );
        let target = pose_at(0.3);
        let target = target.initiator.from_local(target.recipient_local).position;
        let lag = roots.recipient.position.distance(target);
        assert!(lag > 0.05 && lag < 0.3, "smoothed, not snapped: {lag}");
    }

    #[test]
    fn late_and_lost_poses_do_not_make_the_roots_jump() {
        // The initiator walks at 1.4 m/s and sends 10 poses a second; the peer receives them with
        // ±20 ms jitter and loses every seventh. Shown roots must move at most a little faster than
        // the walk in any 60 Hz frame.
        let t = ViewTuning::default();
        let speed = 1.4;
        for view in [Viewpoint::Onlooker, Viewpoint::Recipient] {
            let mut r = PairReceiver::default();
            let mut next_send = 0.0f32;
            let mut seq = 0u16;
            let mut inbox: Vec<(f32, Vec<u8>)> = Vec::new();
            let mut last: Option<PairRoots> = None;
            let mut worst = 0.0f32;
            let dt = 1.0 / 60.0;
            for frame in 0..600 {
                let now = frame as f32 * dt;
                if now >= next_send {
                    let jitter = [0.02, -0.015, 0.005, -0.02, 0.01][usize::from(seq) % 5];
                    if seq % 7 != 3 {
                        inbox.push((now + 0.1 + jitter, frame_at(seq, now * speed)));
                    }
                    seq += 1;
                    next_send += 0.1;
                }
                inbox.sort_by(|a, b| a.0.total_cmp(&b.0));
                while inbox.first().is_some_and(|m| m.0 <= now) {
                    let (_, bytes) = inbox.remove(0);
                    r.receive(&bytes).unwrap();
                }
                let Some(roots) = r.roots(view, dt, &t) else {
                    continue;
                };
                if let (Some(prev), true) = (last, frame > 60) {
                    worst = worst.max(roots.recipient.position.distance(prev.recipient.position));
                    worst = worst.max(roots.initiator.position.distance(prev.initiator.position));
                }
                last = Some(roots);
            }
            let walk_step = speed * dt;
            assert!(
                worst < walk_step * 2.0,
                "{view:?}: {worst} vs {walk_step} per frame"
            );
        }
    }

    fn frame_at(seq: u16, x: f32) -> Vec<u8> {
        let mut s = PairSender::default();
        s.restart(Seq16(seq));
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let due = Due {
            pose: true,
            ..Due::default()
        };
        let n = s.write(due, pose_at(x), ik(), &[], &mut buf).unwrap();
        buf[..n].to_vec()
    }

    #[test]
    fn hands_arrive_in_world_space_and_fade_on_silence() {
        let mut r = PairReceiver::default();
        let t = ViewTuning::default();
        let root = pose_at(2.0).initiator;
        assert!(r.hands(root, 0.016, &t).is_none());
        r.receive(&frame(1, 2.0)).unwrap();
        let mut w = 0.0;
        for _ in 0..20 {
            w = r.hands(root, 1.0 / 60.0, &t).unwrap().weight;
        }
        assert!((w - 1.0).abs() < 1e-3, "{w}");
        for _ in 0..60 {
            w = r.hands(root, 1.0 / 60.0, &t).unwrap().weight;
        }
        assert_eq!(w, 0.0, "faded after 0.5 s + 0.2 s of silence");
    }
}
