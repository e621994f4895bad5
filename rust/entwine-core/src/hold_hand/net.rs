//! The initiator's broadcasts on the wire, and how a remote peer consumes them (seed §4.5, §6.7).
//!
//! Two packets, both written by the pair's initiator (the single authority) and both quantised with
//! the kit. Every multi-byte value is little endian.
//!
//! **Pair pose** (10 Hz, [`PAIR_POSE_BYTES`] = 29 bytes): both roots in one snapshot, so nobody ever
//! sees half a pair.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 1 | kind = [`PAIR_POSE_KIND`] |
//! | 1 | 2 | sequence (u16, wraps) |
//! | 3 | 12 | initiator root position, world (3 × f32, m) |
//! | 15 | 4 | initiator root rotation (smallest three) |
//! | 19 | 6 | recipient root position in the initiator's frame (3 × i16 over ±[`LOCAL_RANGE`] m) |
//! | 25 | 4 | recipient root rotation in the initiator's frame (smallest three) |
//!
//! **IK targets** (20 Hz, [`IK_BYTES`] = 25 bytes): both hands' targets in the initiator's frame, so
//! they move with the initiator between packets and quantisation error does not grow with distance
//! from the world origin.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 1 | kind = [`IK_KIND`] |
//! | 1 | 2 | sequence (u16, wraps) |
//! | 3 | 6 + 4 | initiator hand target, initiator-local (position ±[`LOCAL_RANGE`] m, rotation) |
//! | 13 | 6 + 4 | recipient hand target, initiator-local |
//! | 23 | 1 | blend weight (u8 over [0, 1]) |
//! | 24 | 1 | flags: bit 0 connected, bit 1 arm override, bit 2 has shared reach |
//!
//! At the default rates that is 29 × 10 + 25 × 20 = 790 bytes/s per pair before transport headers.
//! Decoding checks the kind, the exact size and that every value is finite and in range; anything
//! else is [`Malformed`] and must be dropped (and counted) by the caller.

use glam::{Quat, Vec3};

use crate::kit::{exp_alpha, move_towards, slerp_shortest, ByteReader, ByteWriter, Pose, Seq16};
use crate::kit::{SequenceGate, ShortBuffer};

/// First byte of a pair-pose packet.
pub const PAIR_POSE_KIND: u8 = 1;
/// First byte of an IK-target packet.
pub const IK_KIND: u8 = 2;
/// Size of a pair-pose packet in bytes.
pub const PAIR_POSE_BYTES: usize = 29;
/// Size of an IK-target packet in bytes.
pub const IK_BYTES: usize = 25;
/// Range (m) of positions in the initiator's frame: ±4 m, so 0.12 mm steps.
pub const LOCAL_RANGE: f32 = 4.0;
/// Largest accepted world coordinate (m); farther is treated as corrupt.
pub const MAX_WORLD: f32 = 1.0e6;

/// Why a packet was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Not the expected number of bytes.
    Size,
    /// The first byte names another packet.
    Kind,
    /// A value is NaN, infinite or out of range.
    Value,
}

/// Both roots of a pair, as the initiator sends them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairPose {
    /// Wrap-around sequence number.
    pub seq: Seq16,
    /// The initiator's root, world space.
    pub initiator: Pose,
    /// The recipient's root, in the initiator's frame.
    pub recipient_local: Pose,
}

/// Both hands' IK targets and the pair's IK state, as the initiator sends them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkTargets {
    /// Wrap-around sequence number.
    pub seq: Seq16,
    /// The initiator's hand target, in the initiator's frame.
    pub initiator_hand: Pose,
    /// The recipient's hand target, in the initiator's frame.
    pub recipient_hand: Pose,
    /// The IK blend weight in [0, 1].
    pub weight: f32,
    /// Whether the hands are connected (distance hysteresis).
    pub connected: bool,
    /// Whether the arm animation layers are overridden.
    pub arm_override: bool,
    /// Whether both arms reach the contact.
    pub has_shared_reach: bool,
}

impl PairPose {
    /// Writes the packet into `out` and returns its length ([`PAIR_POSE_BYTES`]).
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ShortBuffer> {
        let mut w = ByteWriter::new(out);
        w.put_u8(PAIR_POSE_KIND)?;
        w.put_u16(self.seq.0)?;
        for c in self.initiator.position.to_array() {
            w.put_f32(c)?;
        }
        w.put_rotation(self.initiator.rotation)?;
        w.put_position(self.recipient_local.position, LOCAL_RANGE)?;
        w.put_rotation(self.recipient_local.rotation)?;
        Ok(w.written().len())
    }

    /// Returns the packet in `bytes`, or why it is malformed.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        if bytes.len() != PAIR_POSE_BYTES {
            return Err(Malformed::Size);
        }
        let mut r = ByteReader::new(bytes);
        let short = |_| Malformed::Size;
        if r.get_u8().map_err(short)? != PAIR_POSE_KIND {
            return Err(Malformed::Kind);
        }
        let seq = Seq16(r.get_u16().map_err(short)?);
        let mut p = [0.0f32; 3];
        for c in &mut p {
            *c = r.get_f32().map_err(short)?;
            if !c.is_finite() || c.abs() > MAX_WORLD {
                return Err(Malformed::Value);
            }
        }
        let initiator = Pose::new(Vec3::from_array(p), r.get_rotation().map_err(short)?);
        let recipient_local = Pose::new(
            r.get_position(LOCAL_RANGE).map_err(short)?,
            r.get_rotation().map_err(short)?,
        );
        Ok(Self {
            seq,
            initiator,
            recipient_local,
        })
    }
}

impl IkTargets {
    /// Writes the packet into `out` and returns its length ([`IK_BYTES`]).
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, ShortBuffer> {
        let mut w = ByteWriter::new(out);
        w.put_u8(IK_KIND)?;
        w.put_u16(self.seq.0)?;
        for hand in [self.initiator_hand, self.recipient_hand] {
            w.put_position(hand.position, LOCAL_RANGE)?;
            w.put_rotation(hand.rotation)?;
        }
        w.put_unit(self.weight)?;
        let flags = u8::from(self.connected)
            | u8::from(self.arm_override) << 1
            | u8::from(self.has_shared_reach) << 2;
        w.put_u8(flags)?;
        Ok(w.written().len())
    }

    /// Returns the packet in `bytes`, or why it is malformed.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        if bytes.len() != IK_BYTES {
            return Err(Malformed::Size);
        }
        let mut r = ByteReader::new(bytes);
        let short = |_| Malformed::Size;
        if r.get_u8().map_err(short)? != IK_KIND {
            return Err(Malformed::Kind);
        }
        let seq = Seq16(r.get_u16().map_err(short)?);
        let mut hands = [Pose::IDENTITY; 2];
        for hand in &mut hands {
            *hand = Pose::new(
                r.get_position(LOCAL_RANGE).map_err(short)?,
                r.get_rotation().map_err(short)?,
            );
        }
        let weight = r.get_unit().map_err(short)?;
        let flags = r.get_u8().map_err(short)?;
        if flags & !0b111 != 0 {
            return Err(Malformed::Value);
        }
        Ok(Self {
            seq,
            initiator_hand: hands[0],
            recipient_hand: hands[1],
            weight,
            connected: flags & 1 != 0,
            arm_override: flags & 2 != 0,
            has_shared_reach: flags & 4 != 0,
        })
    }
}

/// What a remote peer applies to the pair's hands this frame, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteHands {
    /// The initiator's hand target.
    pub initiator_hand: Pose,
    /// The recipient's hand target.
    pub recipient_hand: Pose,
    /// The IK weight to apply (already faded for silence).
    pub weight: f32,
}

/// A remote peer's view of the pair's IK (seed §6.7), with the seed's open gap closed: targets fade
/// out after a silence and back in when packets resume.
///
/// Packets pass a wrap-around [`SequenceGate`] (stale and out-of-order ones are dropped). The state is
/// interpolated exponentially in the initiator's frame with `τ = max(0.01, interval / 2)` and turned
/// into world space with the initiator's *current* root. Nothing is produced before the first packet.
#[derive(Clone, Debug, Default)]
pub struct RemoteIk {
    gate: SequenceGate,
    latest: Option<IkTargets>,
    shown: Option<IkTargets>,
    silence: f32,
    fade: f32,
    dropped: u32,
}

impl RemoteIk {
    /// Offers a received packet; returns whether it was newer than the last one and kept.
    pub fn receive(&mut self, packet: IkTargets) -> bool {
        if !self.gate.accept(packet.seq) {
            self.dropped += 1;
            return false;
        }
        self.latest = Some(packet);
        self.silence = 0.0;
        true
    }

    /// Returns how many packets were dropped as stale or out of order.
    #[must_use]
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// Returns the last accepted sequence number.
    #[must_use]
    pub fn last_sequence(&self) -> Option<Seq16> {
        self.gate.last()
    }

    /// Returns the seconds since the last accepted packet.
    #[must_use]
    pub fn silence(&self) -> f32 {
        self.silence
    }

    /// Advances `dt` seconds and returns the hands for the initiator's current root, or `None` before
    /// the first packet. `interval` is the send interval (s); after `timeout` seconds of silence the
    /// weight fades to 0 over `fade_time`, and back up when packets resume.
    pub fn update(
        &mut self,
        initiator_root: Pose,
        dt: f32,
        interval: f32,
        timeout: f32,
        fade_time: f32,
    ) -> Option<RemoteHands> {
        let latest = self.latest?;
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        self.silence += dt;
        let alpha = exp_alpha(dt, (interval * 0.5).max(0.01));
        let shown = match self.shown {
            None => latest,
            Some(s) => IkTargets {
                initiator_hand: Pose::lerp_slerp(s.initiator_hand, latest.initiator_hand, alpha),
                recipient_hand: Pose::lerp_slerp(s.recipient_hand, latest.recipient_hand, alpha),
                weight: s.weight + (latest.weight - s.weight) * alpha,
                ..latest
            },
        };
        self.shown = Some(shown);
        let live = if self.silence > timeout { 0.0 } else { 1.0 };
        let rate = if fade_time > 0.0 { dt / fade_time } else { 1.0 };
        self.fade = move_towards(self.fade, live, rate);
        Some(RemoteHands {
            initiator_hand: initiator_root.from_local(shown.initiator_hand),
            recipient_hand: initiator_root.from_local(shown.recipient_hand),
            weight: shown.weight * self.fade,
        })
    }

    /// Forgets everything (the pair ended): the next packet starts afresh.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// A remote root farther than this from its target (m) jumps there instead of gliding.
pub const TELEPORT_DISTANCE: f32 = 3.0;

/// Smooths a remote root toward its latest authoritative pose (seed §4.4): SmoothDamp-like position
/// with `max(0.01, interval/2)`, exponential slerp of the rotation, and a snap when within
/// `snap_distance`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RootFollower {
    velocity: Vec3,
    current: Option<Pose>,
}

impl RootFollower {
    /// Returns the smoothed pose after `dt` seconds toward `target`.
    pub fn step(&mut self, target: Pose, dt: f32, interval: f32, snap_distance: f32) -> Pose {
        self.step_limited(target, dt, interval, snap_distance, f32::INFINITY)
    }

    /// Returns the smoothed pose after `dt` seconds toward `target`, moving at most `max_speed`
    /// (m/s) while catching up — except that a target farther than [`TELEPORT_DISTANCE`] (a
    /// respawn, a teleport) is taken at once.
    ///
    /// A `dt` that is negative or not finite counts as 0 and one above a second as a second; a
    /// non-finite `target` holds the current pose (the identity before any finite one).
    pub fn step_limited(
        &mut self,
        target: Pose,
        dt: f32,
        interval: f32,
        snap_distance: f32,
        max_speed: f32,
    ) -> Pose {
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if !target.is_finite() {
            return self.current.filter(|c| c.is_finite()).unwrap_or_default();
        }
        let tau = (interval * 0.5).max(0.01);
        let current = self
            .current
            .filter(|c| c.is_finite() && c.position.distance(target.position) <= TELEPORT_DISTANCE)
            .unwrap_or(target);
        let max_speed = if max_speed > 0.0 {
            max_speed
        } else {
            f32::INFINITY
        };
        let position = crate::kit::smooth_damp_vec3(
            current.position,
            target.position,
            &mut self.velocity,
            tau,
            max_speed,
            dt,
        );
        let rotation = slerp_shortest(current.rotation, target.rotation, exp_alpha(dt, tau));
        let next = if position.distance(target.position) <= snap_distance {
            self.velocity = Vec3::ZERO;
            Pose::new(target.position, rotation)
        } else {
            Pose::new(position, rotation)
        };
        self.current = Some(next);
        next
    }

    /// Forgets the smoothed state.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Returns the quaternion angle between two rotations in radians (test helper and diagnostics).
#[must_use]
pub fn rotation_error(a: Quat, b: Quat) -> f32 {
    let d = a.dot(b).abs().min(1.0);
    2.0 * d.acos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_ik(seq: u16) -> IkTargets {
        IkTargets {
            seq: Seq16(seq),
            initiator_hand: Pose::new(Vec3::new(-0.4, 1.0, -0.2), Quat::from_rotation_y(0.3)),
            recipient_hand: Pose::new(Vec3::new(-0.42, 1.01, -0.18), Quat::from_rotation_x(-0.2)),
            weight: 0.75,
            connected: true,
            arm_override: false,
            has_shared_reach: true,
        }
    }

    #[test]
    fn packets_have_the_documented_sizes_and_round_trip() {
        let mut buf = [0u8; 64];
        let pose = PairPose {
            seq: Seq16(65535),
            initiator: Pose::new(Vec3::new(1234.5, 2.0, -77.25), Quat::from_rotation_y(2.0)),
            recipient_local: Pose::new(Vec3::new(-0.82, 0.0, 0.17), Quat::from_rotation_y(0.1)),
        };
        let n = pose.encode(&mut buf).unwrap();
        assert_eq!(n, PAIR_POSE_BYTES);
        let back = PairPose::decode(&buf[..n]).unwrap();
        assert_eq!(back.seq, Seq16(65535));
        assert_eq!(
            back.initiator.position, pose.initiator.position,
            "world position is exact"
        );
        assert!(
            back.recipient_local
                .position
                .distance(pose.recipient_local.position)
                < 1e-4
        );
        assert!(rotation_error(back.initiator.rotation, pose.initiator.rotation) < 0.005);

        let ik = sample_ik(7);
        let n = ik.encode(&mut buf).unwrap();
        assert_eq!(n, IK_BYTES);
        let back = IkTargets::decode(&buf[..n]).unwrap();
        assert!(
            back.initiator_hand
                .position
                .distance(ik.initiator_hand.position)
                < 1e-4
        );
        assert!(rotation_error(back.recipient_hand.rotation, ik.recipient_hand.rotation) < 0.005);
        assert!((back.weight - 0.75).abs() < 0.002);
        assert!(back.connected && !back.arm_override && back.has_shared_reach);
        assert_eq!(
            PAIR_POSE_BYTES * 10 + IK_BYTES * 20,
            790,
            "bytes per second per pair"
        );
    }

    #[test]
    fn malformed_packets_are_rejected() {
        let mut buf = [0u8; 64];
        let n = sample_ik(1).encode(&mut buf).unwrap();
        assert_eq!(IkTargets::decode(&buf[..n - 1]), Err(Malformed::Size));
        assert_eq!(IkTargets::decode(&buf[..0]), Err(Malformed::Size));
        let mut wrong = buf;
        wrong[0] = PAIR_POSE_KIND;
        assert_eq!(IkTargets::decode(&wrong[..n]), Err(Malformed::Kind));
        let mut flags = buf;
        flags[24] = 0xF0;
        assert_eq!(IkTargets::decode(&flags[..n]), Err(Malformed::Value));
        let pose = PairPose {
            seq: Seq16(0),
            initiator: Pose::new(Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY),
            recipient_local: Pose::IDENTITY,
        };
        let n = pose.encode(&mut buf).unwrap();
        assert_eq!(PairPose::decode(&buf[..n]), Err(Malformed::Value));
        buf[3..7].copy_from_slice(&2.0e7f32.to_le_bytes());
        assert_eq!(PairPose::decode(&buf[..n]), Err(Malformed::Value));
        // Arbitrary bytes of the right size never panic.
        for k in 0..=255u8 {
            let junk = [k; IK_BYTES];
            let _ = IkTargets::decode(&junk);
            let junk = [k; PAIR_POSE_BYTES];
            let _ = PairPose::decode(&junk);
        }
    }

    #[test]
    fn remote_ik_holds_nothing_before_the_first_packet_and_drops_stale_ones() {
        let mut r = RemoteIk::default();
        assert_eq!(r.update(Pose::IDENTITY, 0.016, 0.05, 0.5, 0.1), None);
        assert!(r.receive(sample_ik(65534)));
        assert!(r.receive(sample_ik(1)), "newer across the wrap");
        assert!(!r.receive(sample_ik(65535)), "older across the wrap");
        assert!(!r.receive(sample_ik(1)), "duplicate");
        assert_eq!(r.dropped(), 2);
        assert!(r.update(Pose::IDENTITY, 0.016, 0.05, 0.5, 0.1).is_some());
    }

    #[test]
    fn remote_ik_follows_the_initiator_root_and_fades_on_silence() {
        let mut r = RemoteIk::default();
        r.receive(sample_ik(1));
        let root = Pose::new(Vec3::new(10.0, 0.0, 5.0), Quat::from_rotation_y(1.0));
        let mut out = None;
        for _ in 0..10 {
            out = r.update(root, 0.016, 0.05, 0.5, 0.1);
        }
        let out = out.unwrap();
        let expected = root.from_local(sample_ik(1).initiator_hand).position;
        assert!(
            out.initiator_hand.position.distance(expected) < 1e-4,
            "converted with the current root"
        );
        // Weight fades in over 0.1 s from the first packet, then holds.
        assert!((out.weight - 0.75).abs() < 0.01, "{}", out.weight);
        // Silence past 0.5 s fades it out within 0.1 s more.
        let mut w = 1.0;
        for _ in 0..45 {
            w = r.update(root, 0.016, 0.05, 0.5, 0.1).unwrap().weight;
        }
        assert_eq!(w, 0.0);
        // Packets resume: it fades back in.
        r.receive(sample_ik(2));
        for _ in 0..10 {
            w = r.update(root, 0.016, 0.05, 0.5, 0.1).unwrap().weight;
        }
        assert!((w - 0.75).abs() < 0.01, "{w}");
    }

    #[test]
    fn root_follower_caps_its_catch_up_but_takes_teleports_at_once() {
        let mut f = RootFollower::default();
        f.step(Pose::IDENTITY, 0.016, 0.1, 0.005);
        let near = Pose::new(Vec3::new(0.5, 0.0, 0.0), Quat::IDENTITY);
        let mut last = Vec3::ZERO;
        for _ in 0..30 {
            let p = f.step_limited(near, 1.0 / 60.0, 0.1, 0.005, 2.0).position;
            assert!(
                p.distance(last) <= 2.0 / 60.0 + 1e-4,
                "{}",
                p.distance(last)
            );
            last = p;
        }
        let far = Pose::new(Vec3::new(10.0, 0.0, 0.0), Quat::IDENTITY);
        let p = f.step_limited(far, 1.0 / 60.0, 0.1, 0.005, 2.0).position;
        assert_eq!(p, far.position, "a teleport is taken at once");
    }

    #[test]
    fn root_follower_smooths_then_snaps() {
        let mut f = RootFollower::default();
        let start = Pose::new(Vec3::ZERO, Quat::IDENTITY);
        f.step(start, 0.016, 0.1, 0.005);
        let target = Pose::new(Vec3::new(1.0, 0.0, 0.0), Quat::from_rotation_y(0.5));
        let first = f.step(target, 0.016, 0.1, 0.005);
        assert!(
            first.position.x > 0.0 && first.position.x < 1.0,
            "smoothed, not teleported"
        );
        let mut last = first;
        for _ in 0..120 {
            last = f.step(target, 0.016, 0.1, 0.005);
        }
        assert_eq!(last.position, target.position, "snapped at the end");
        assert!(rotation_error(last.rotation, target.rotation) < 1e-3);
    }
}
