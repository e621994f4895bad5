//! The pair's stream on the wire: what the initiator samples, when it sends, and the byte layout.
//!
//! The initiator samples the pair at two rates (defaults: both roots at 10 Hz, the hands at 20 Hz)
//! and sends **one frame per root sample**, carrying the hand samples taken since the previous frame
//! and, when due, an animation snapshot. Batching the hands costs remote peers no delay: they show
//! the pair a little in the past anyway ([`super::replay`]), and at least one root interval late, so a
//! hand sample is never needed before the frame that follows it arrives. It halves the transport's
//! per-message headers, which are most of the bytes at these sizes.
//!
//! Every frame is stamped with the sender's clock (the server's clock when the game has a
//! `NetClock`), read once per physics tick through [`crate::clock::TickClock`] so that ticks run
//! back to back stay a tick apart, and a receiver places each sample on one timeline and
//! interpolates between them.
//!
//! | bytes | field |
//! |---|---|
//! | 1 | [`FRAME_MARK`] or [`SHARED_MARK`] (the stamp is on the shared clock) in the high nibble, flags in the low one: [`KEY`], [`ANIM`], [`TELEPORT`], [`TILTED`] |
//! | 2 | stamp: the sender's clock in milliseconds, modulo 65 536 |
//! | 12 or 6 | initiator root position, world: `KEY`: 3 × f32; else 3 × u16 millimetres (times the pair's scale) modulo 65 536 of them, resolved near the receiver's last one |
//! | 1, `KEY` only | the pair's scale ([`scale_code`]: i8, 2^(code/16)); the ranges below are multiplied by it, and a receiver keeps it for the frames that follow |
//! | 2 or 4 | initiator root rotation, world: yaw (u16), or smallest three when `TILTED` |
//! | 6 | recipient root position in the initiator's frame (3 × i16 over ±[`LOCAL_RANGE`] m) |
//! | 2 or 4 | recipient root rotation in the initiator's frame, as above |
//! | 4 | the shared contact's rotation in the initiator's frame (smallest three) |
//! | 20, `KEY` only | both hands' offsets from the contact, in the contact's frame: position (±[`OFFSET_RANGE`] m) and rotation, initiator's then recipient's |
//! | 1 | hand sample count n ≤ [`MAX_HAND_SAMPLES`] in the low bits; [`CORNER`] in the high bit |
//! | 8·n | per hand sample: age before the stamp (u8 ms), weight and flags (u8: 5 bits weight, then connected, arm override, shared reach), contact position in the initiator's frame (±[`LOCAL_RANGE`] m) |
//! | `ANIM` only: 1 to [`MAX_ANIM_BYTES`] | the animation section, versioned: values (a Vector2 blend position is two), state machines' nodes, travel targets and play positions, one-shots, or an AnimationPlayer's animation and position; layout in [`super::anim`] |
//!
//! A key frame (the first [`KEY_REPEATS`] frames of a pair, then every [`KEY_INTERVAL`] seconds, and
//! after a teleport or a change of the hand offsets) lets a receiver that joined late or lost packets
//! start over. At the default rates that is 40 bytes ten times a second, about 620 bytes/s per pair
//! with ENet's headers, plus animation when it changes: a snapshot goes out at once when a node,
//! travel target or one-shot changed or a play position drifted from what a receiver predicts (the
//! last one plus the time since; a switch of node, travel target, one-shot or animation once more
//! in the next frame), every [`ANIM_VALUE_INTERVAL`]
//! seconds while values only move
//! (receivers interpolate them), and at least every [`ANIM_KEEPALIVE`] seconds.
//!
//! Receivers draw straight lines between root samples, so between two scheduled samples a start, a
//! stop or a sharp turn would be smeared over the whole interval: a character that starts walking
//! at 1.4 m/s halfway between two 10 Hz samples is shown 35 mm off at the moment it starts. The
//! sender watches every physics tick: when the tick before this one lies farther than
//! [`CORNER_TOLERANCE`] off the line from the last sample sent to this tick, that tick is a corner
//! of the motion and goes out at once as a frame of its own, one tick late and marked [`CORNER`]
//! (so its lateness does not count as the network's).

use glam::{Quat, Vec3};

use crate::kit::{is_upright, ByteReader, ByteWriter, Pose, ShortBuffer, WRAP_STEP};

pub use super::anim::{AnimSnapshot, MAX_ANIM_BYTES, MAX_ANIM_VALUES};

/// A root farther than this from its last sample (m) was teleported.
pub const TELEPORT_DISTANCE: f32 = 3.0;

/// High nibble of a frame's first byte when the stamp is on the sender's own clock…
pub const FRAME_MARK: u8 = 0xA0;
/// …and when it is on the clock every peer shares (a synchronised `NetClock`).
pub const SHARED_MARK: u8 = 0xB0;
/// Flag: the frame is a key frame (full position, hand offsets).
pub const KEY: u8 = 1;
/// Flag: the frame carries an animation snapshot.
pub const ANIM: u8 = 2;
/// Flag: the initiator jumped on purpose (a respawn): do not glide, do not apply the speed limit.
pub const TELEPORT: u8 = 4;
/// Flag: a root is not upright, so rotations are sent in full.
pub const TILTED: u8 = 8;
/// Range (m) of positions in the initiator's frame at scale 1: ±4 m, so 0.12 mm steps (times the
/// pair's scale, see [`scale_code`]).
pub const LOCAL_RANGE: f32 = 4.0;
/// Range (m) of the hands' offsets from the contact at scale 1 (times the pair's scale).
pub const OFFSET_RANGE: f32 = 2.0;
/// Largest accepted world coordinate (m); farther is treated as corrupt.
pub const MAX_WORLD: f32 = 1.0e6;
/// Most hand samples in one frame.
pub const MAX_HAND_SAMPLES: usize = 4;
/// High bit of the hand-count byte: the frame is a corner of the motion, sent one physics tick
/// after its stamp (see the module's docs).
pub const CORNER: u8 = 0x80;
/// How far (m, times the pair's scale) a root may lie off the straight line a receiver draws
/// between the samples on either side before its tick is sent as a corner.
pub const CORNER_TOLERANCE: f32 = 0.004;
/// Longest stretch (s) between the last sample sent and now over which corners are looked for.
const CORNER_SPAN: f64 = 0.5;
/// Most corner frames sent back to back (see [`PairSender`]'s corner budget).
const CORNER_BURST: f32 = 2.0;
/// Key frames at the start of a pair (or after a teleport or new offsets), one per frame.
pub const KEY_REPEATS: u8 = 3;
/// Seconds between key frames otherwise.
pub const KEY_INTERVAL: f32 = 1.0;
/// Hand offsets that moved less than this (m, times the pair's scale) and turned less than [`OFFSET_ANGLE_TOLERANCE`]
/// (rad) since the ones last announced in a key frame count as unchanged (a grip found from the
/// animated hands varies by fractions of a millimetre from frame to frame).
pub const OFFSET_TOLERANCE: f32 = 0.002;
/// See [`OFFSET_TOLERANCE`].
pub const OFFSET_ANGLE_TOLERANCE: f32 = 0.02;
/// A frame whose initiator velocity (horizontal, measured from the previous frame) differs from the
/// previous frame's by more than this (m/s, times the pair's scale) — a start, a stop, a sharp turn — is sent twice (again
/// on the next physics frame): a receiver that misses the frame where the motion changed carries
/// the old motion on, and at a stop that runs past it.
pub const REPEAT_SPEED_CHANGE: f32 = 0.5;
/// An animation snapshot whose values have not changed is skipped, but one is sent at least this
/// often (seconds), so a late joiner or a lost packet is repaired.
pub const ANIM_KEEPALIVE: f32 = 1.0;
/// Seconds between snapshots whose only change is moved values (blend positions, time scales):
/// at the default rates every frame. Sending them every second frame would save about 65 bytes/s
/// for a rig whose blend position always moves, but a lost frame then leaves a receiver 0.3–0.4 s
/// without values, which the core replay test measured as 0.11 of blend position and 0.12 s of play
/// position at worst (against 0.013 and 0.059 s every frame).
pub const ANIM_VALUE_INTERVAL: f32 = 0.1;
/// Animation values that moved less than this since the last snapshot count as unchanged.
pub const ANIM_DEADBAND: f32 = 1.0e-3;
/// Tilt (radians) under which a root counts as upright.
const UPRIGHT_TOLERANCE: f32 = 1.0e-3;
/// Largest frame in bytes: a tilted key frame (mark and stamp, full position, scale, both rotations
/// in full, the recipient's position, the contact's rotation, the hand offsets) with
/// [`MAX_HAND_SAMPLES`] hand samples and the largest animation section.
pub const MAX_FRAME_BYTES: usize =
    3 + 12 + 1 + 4 + 6 + 4 + 4 + 20 + 1 + 8 * MAX_HAND_SAMPLES + MAX_ANIM_BYTES;

/// Why a frame was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Too short, too long, or trailing bytes.
    Size,
    /// The first byte is not a frame's.
    Kind,
    /// A value is NaN, infinite or out of range.
    Value,
}

/// Both roots and the contact's rotation at one instant, as the initiator's screen shows them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairSample {
    /// The initiator's root, world space.
    pub initiator: Pose,
    /// The recipient's root, in the initiator's frame.
    pub recipient_local: Pose,
    /// The shared contact's rotation, in the initiator's frame.
    pub contact_rotation: Quat,
}

/// The hands at one instant: the shared contact and the IK state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HandSample {
    /// Sender-clock seconds when it was taken.
    pub time: f64,
    /// The shared contact point, in the initiator's frame.
    pub contact: Vec3,
    /// The IK blend weight in [0, 1].
    pub weight: f32,
    /// Whether the hands are connected (distance hysteresis).
    pub connected: bool,
    /// Whether the arm animation layers are overridden.
    pub arm_override: bool,
    /// Whether both arms reach the contact.
    pub has_shared_reach: bool,
}

/// Where each hand sits relative to the shared contact, in the contact's frame: a hand's target is
/// `contact · offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandOffsets {
    /// The initiator's hand.
    pub initiator: Pose,
    /// The recipient's hand.
    pub recipient: Pose,
}

/// The hands as the initiator last solved them, in its own frame: what its stream's pair and hand
/// samples carry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SentHands {
    /// The shared contact point, in the initiator's frame.
    pub contact: Vec3,
    /// The shared contact's rotation, in the initiator's frame.
    pub rotation: Quat,
    /// Where each hand sits on the contact.
    pub offsets: HandOffsets,
    /// The IK position weight.
    pub weight: f32,
    /// Whether the hands are connected.
    pub connected: bool,
    /// Whether the arm layers are overridden (a weight above 0).
    pub arm_override: bool,
    /// Whether both arms reach the contact.
    pub has_shared_reach: bool,
}

impl SentHands {
    /// The hands from the contact solver's output `out`, with the initiator's root `me` and the
    /// hands' inputs (their offsets and rotations on the contact).
    pub fn solved(
        me: Pose,
        out: &super::ContactOutput,
        initiator: &super::HandInput,
        recipient: &super::HandInput,
    ) -> Self {
        Self {
            contact: me.inverse_transform_point(out.contact),
            rotation: crate::kit::pose::unit_quat(
                crate::kit::pose::ensure_unit(me.rotation).conjugate() * out.rotation,
            ),
            offsets: HandOffsets {
                initiator: Pose::new(initiator.offset, initiator.rotation),
                recipient: Pose::new(recipient.offset, recipient.rotation),
            },
            weight: out.position_weight,
            connected: out.connected,
            arm_override: out.position_weight > 0.0,
            has_shared_reach: out.has_shared_reach,
        }
    }

    /// The hands let go (IK invalid or bones missing): weight 0, not connected.
    pub fn release(&mut self) {
        self.weight = 0.0;
        self.connected = false;
    }
}

/// What the initiator's tick at `now` samples: the pair (when both roots are known: `me` and the
/// partner's root `partner_root`, world space), the hands (once solved) and their offsets
/// (identity before).
pub fn tick_samples(
    now: f64,
    me: Option<Pose>,
    partner_root: Option<Pose>,
    hands: Option<&SentHands>,
) -> (Option<PairSample>, Option<HandSample>, HandOffsets) {
    let pair = me.zip(partner_root).map(|(me, partner_root)| PairSample {
        initiator: me,
        recipient_local: me.to_local(partner_root),
        contact_rotation: hands.map_or(Quat::IDENTITY, |h| h.rotation),
    });
    let hand = hands.map(|h| HandSample {
        time: now,
        contact: h.contact,
        weight: h.weight,
        connected: h.connected,
        arm_override: h.arm_override,
        has_shared_reach: h.has_shared_reach,
    });
    (pair, hand, hands.map(|h| h.offsets).unwrap_or_default())
}

impl HandOffsets {
    /// Returns the offsets as they can be sent: each rotation scaled to unit length (the identity
    /// when zero or not finite), each non-finite position at the contact itself.
    #[must_use]
    pub fn sanitized(self) -> Self {
        let hand = |p: Pose| {
            Pose::new(
                if p.position.is_finite() {
                    p.position
                } else {
                    Vec3::ZERO
                },
                crate::kit::pose::unit_quat(p.rotation),
            )
        };
        Self {
            initiator: hand(self.initiator),
            recipient: hand(self.recipient),
        }
    }
}

impl Default for HandOffsets {
    fn default() -> Self {
        Self {
            initiator: Pose::IDENTITY,
            recipient: Pose::IDENTITY,
        }
    }
}

/// Returns the wire code of a pair's scale (the characters' height over a 1.75 m human): the
/// nearest sixteenth of an octave, 2^(code/16), from 2^−8 (0.004) to 2^7.94 (245); anything else
/// (NaN, zero, negative) is scale 1.
#[must_use]
pub fn scale_code(scale: f32) -> i8 {
    if !scale.is_finite() || scale <= 0.0 {
        return 0;
    }
    (scale.log2() * 16.0).round().clamp(-128.0, 127.0) as i8
}

/// Returns the scale a [`scale_code`] stands for.
#[must_use]
pub fn scale_of_code(code: i8) -> f32 {
    (f32::from(code) / 16.0).exp2()
}

/// One decoded frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Whether the stamp is on the clock every peer shares.
    pub shared_clock: bool,
    /// The flags ([`KEY`], [`ANIM`], [`TELEPORT`], [`TILTED`]).
    pub flags: u8,
    /// The sender's clock in milliseconds, modulo 65 536.
    pub stamp: u16,
    /// The pair's scale: a key frame's own, else the one the receiver passed in.
    pub scale: f32,
    /// Both roots and the contact's rotation.
    pub pair: PairSample,
    /// Key frames: the hands' offsets.
    pub offsets: Option<HandOffsets>,
    /// Hand samples, oldest first; `time` holds the age before the stamp (seconds, ≥ 0).
    pub hands: [HandSample; MAX_HAND_SAMPLES],
    /// How many of `hands` are used.
    pub hand_count: usize,
    /// Whether the frame is a corner of the motion, sent a physics tick after its stamp.
    pub corner: bool,
    /// The animation snapshot, if the frame has one.
    pub anim: Option<AnimSnapshot>,
}

impl Frame {
    /// Returns whether this is a key frame.
    #[must_use]
    pub fn is_key(&self) -> bool {
        self.flags & KEY != 0
    }

    /// Returns the used hand samples.
    #[must_use]
    pub fn hands(&self) -> &[HandSample] {
        &self.hands[..self.hand_count]
    }

    /// Returns the animation snapshot, if the frame has one.
    #[must_use]
    pub fn anim(&self) -> Option<&AnimSnapshot> {
        self.anim.as_ref()
    }

    /// Returns the frame in `bytes`, or why it is malformed. A non-key frame's initiator position
    /// is resolved near `reference` (the receiver's last one); without a reference it cannot be
    /// read and is [`Malformed::Value`]. Its ranges are those of `scale` (the last key frame's; a
    /// key frame carries its own).
    pub fn decode(bytes: &[u8], reference: Option<Vec3>, scale: f32) -> Result<Self, Malformed> {
        if bytes.len() < 3 || bytes.len() > MAX_FRAME_BYTES {
            return Err(Malformed::Size);
        }
        let mut r = ByteReader::new(bytes);
        let short = |_| Malformed::Size;
        let head = r.get_u8().map_err(short)?;
        let shared_clock = match head & 0xF0 {
            FRAME_MARK => false,
            SHARED_MARK => true,
            _ => return Err(Malformed::Kind),
        };
        let flags = head & 0x0F;
        let stamp = r.get_u16().map_err(short)?;
        let key = flags & KEY != 0;
        let tilted = flags & TILTED != 0;
        let position = Self::decode_position(&mut r, key, reference, scale)?;
        let scale = if key {
            scale_of_code(r.get_u8().map_err(short)? as i8)
        } else {
            scale
        };
        let rotation = |r: &mut ByteReader| {
            if tilted {
                r.get_rotation().map_err(short)
            } else {
                r.get_yaw().map_err(short)
            }
        };
        let initiator = Pose::new(position, rotation(&mut r)?);
        let local_position = r.get_position(LOCAL_RANGE * scale).map_err(short)?;
        let recipient_local = Pose::new(local_position, rotation(&mut r)?);
        let contact_rotation = r.get_rotation().map_err(short)?;
        let offsets = if key {
            let mut hand = || -> Result<Pose, Malformed> {
                let p = r.get_position(OFFSET_RANGE * scale).map_err(short)?;
                Ok(Pose::new(p, r.get_rotation().map_err(short)?))
            };
            Some(HandOffsets {
                initiator: hand()?,
                recipient: hand()?,
            })
        } else {
            None
        };
        let (hands, hand_count, corner) = Self::decode_hands(&mut r, scale)?;
        let anim = if flags & ANIM != 0 {
            Some(AnimSnapshot::decode(&mut r).map_err(|e| match e {
                super::anim::BadSection::Size => Malformed::Size,
                super::anim::BadSection::Value => Malformed::Value,
            })?)
        } else {
            None
        };
        if r.remaining() != 0 {
            return Err(Malformed::Size);
        }
        Ok(Self {
            shared_clock,
            flags,
            stamp,
            scale,
            pair: PairSample {
                initiator,
                recipient_local,
                contact_rotation,
            },
            offsets,
            hands,
            hand_count,
            corner,
            anim,
        })
    }

    /// Reads the initiator's position: in full in a key frame, else near `reference`.
    fn decode_position(
        r: &mut ByteReader,
        key: bool,
        reference: Option<Vec3>,
        scale: f32,
    ) -> Result<Vec3, Malformed> {
        let short = |_| Malformed::Size;
        Ok(if key {
            let mut p = [0.0f32; 3];
            for c in &mut p {
                *c = r.get_f32().map_err(short)?;
                if !c.is_finite() || c.abs() > MAX_WORLD {
                    return Err(Malformed::Value);
                }
            }
            Vec3::from_array(p)
        } else {
            if !scale.is_finite() || scale <= 0.0 {
                return Err(Malformed::Value);
            }
            let reference = reference.ok_or(Malformed::Value)?;
            let p = r.get_wrapped(reference, WRAP_STEP * scale).map_err(short)?;
            if !p.is_finite() || p.abs().max_element() > MAX_WORLD {
                return Err(Malformed::Value);
            }
            p
        })
    }

    /// Reads the hand samples (oldest first) and whether the frame is a corner of the motion.
    fn decode_hands(
        r: &mut ByteReader,
        scale: f32,
    ) -> Result<([HandSample; MAX_HAND_SAMPLES], usize, bool), Malformed> {
        let short = |_| Malformed::Size;
        let count = r.get_u8().map_err(short)?;
        let corner = count & CORNER != 0;
        let hand_count = usize::from(count & !CORNER);
        if hand_count > MAX_HAND_SAMPLES {
            return Err(Malformed::Value);
        }
        let mut hands = [HandSample::default(); MAX_HAND_SAMPLES];
        let mut previous_age = f64::INFINITY;
        for h in &mut hands[..hand_count] {
            let age = f64::from(r.get_u8().map_err(short)?) / 1000.0;
            if age > previous_age {
                return Err(Malformed::Value); // samples are sent oldest first
            }
            previous_age = age;
            let packed = r.get_u8().map_err(short)?;
            *h = HandSample {
                time: age,
                contact: r.get_position(LOCAL_RANGE * scale).map_err(short)?,
                weight: f32::from(packed & 0x1F) / 31.0,
                connected: packed & 0x20 != 0,
                arm_override: packed & 0x40 != 0,
                has_shared_reach: packed & 0x80 != 0,
            };
        }
        Ok((hands, hand_count, corner))
    }
}

/// How often the initiator samples (seconds; an interval ≤ 0 turns the animation stream off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamRates {
    /// Seconds between root samples, which is also the frame interval (default 0.1).
    pub pose_interval: f32,
    /// Seconds between hand samples (default 0.05).
    pub ik_interval: f32,
    /// Seconds between animation snapshots (0: off).
    pub animation_interval: f32,
}

impl Default for StreamRates {
    fn default() -> Self {
        Self {
            pose_interval: super::params::PairParam::PoseInterval.spec().default,
            ik_interval: super::params::PairParam::IkInterval.spec().default,
            animation_interval: super::params::PairParam::AnimationInterval.spec().default,
        }
    }
}

impl StreamRates {
    /// Returns the rates with every interval usable: the pose and IK intervals positive and finite
    /// (else the defaults), the animation interval finite (else off).
    #[must_use]
    pub fn sanitized(self) -> Self {
        let d = Self::default();
        let positive = |v: f32, default: f32| {
            if v.is_finite() && v > 0.0 {
                v.clamp(0.01, 10.0)
            } else {
                default
            }
        };
        Self {
            pose_interval: positive(self.pose_interval, d.pose_interval),
            ik_interval: positive(self.ik_interval, d.ik_interval),
            animation_interval: if self.animation_interval.is_finite() {
                self.animation_interval.min(10.0)
            } else {
                0.0
            },
        }
    }
}

/// What the initiator has this physics tick, for [`PairSender::send_tick`].
#[derive(Clone, Copy, Debug)]
pub struct TickInput<'a> {
    /// The tick's stamp (sender-clock seconds).
    pub now: f64,
    /// Whether the stamp is on the clock every peer shares.
    pub shared: bool,
    /// Both roots and the contact, when both characters are known.
    pub pair: Option<PairSample>,
    /// The hands, when they are known.
    pub hand: Option<HandSample>,
    /// Where each hand sits relative to the contact.
    pub offsets: HandOffsets,
    /// The animation, read when [`Due::anim`] (else `None`).
    pub anim: Option<&'a AnimSnapshot>,
}

/// The frames one tick sends, in order (a corner, then the scheduled frame), in fixed buffers.
#[derive(Clone, Copy, Debug)]
pub struct TickFrames {
    bytes: [[u8; MAX_FRAME_BYTES]; 2],
    lens: [usize; 2],
    count: usize,
}

impl Default for TickFrames {
    fn default() -> Self {
        Self {
            bytes: [[0; MAX_FRAME_BYTES]; 2],
            lens: [0; 2],
            count: 0,
        }
    }
}

impl TickFrames {
    /// Returns the frames written, in the order to send them.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.bytes[..self.count]
            .iter()
            .zip(self.lens)
            .map(|(b, n)| &b[..n])
    }

    fn push(
        &mut self,
        write: impl FnOnce(&mut [u8]) -> Result<usize, ShortBuffer>,
    ) -> Result<(), ShortBuffer> {
        let n = write(&mut self.bytes[self.count])?;
        self.lens[self.count] = n;
        self.count += 1;
        Ok(())
    }
}

/// What the initiator must do this physics frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Due {
    /// Take a hand sample ([`PairSender::push_hands`]).
    pub hands: bool,
    /// Send a frame ([`PairSender::write`]).
    pub frame: bool,
    /// Read the animation parameters for the frame.
    pub anim: bool,
    /// Send the last frame again (its motion changed sharply, see [`REPEAT_SPEED_CHANGE`]).
    pub repeat: bool,
}

/// The initiator's schedule, pending hand samples and key-frame state.
#[derive(Clone, Copy, Debug, Default)]
pub struct PairSender {
    started: bool,
    /// Seconds since the last root sample, hand sample and animation snapshot.
    clocks: [f32; 3],
    hands: [HandSample; MAX_HAND_SAMPLES],
    hand_count: usize,
    keys_left: u8,
    key_age: f32,
    teleport: bool,
    offsets: Option<HandOffsets>,
    last_anim: Option<AnimSnapshot>,
    /// Whether the next frame repeats the last snapshot (it carried an event, which a lost frame
    /// would otherwise hold back until the next change).
    anim_repeat: bool,
    anim_age: f32,
    /// The last frame's stamp time, initiator position and horizontal velocity.
    last_motion: Option<(f64, Vec3, Vec3)>,
    repeat: bool,
    /// The pair's scale ([`scale_code`]).
    scale: i8,
    /// The last physics tick's pair, and the time and roots (world) of the last sample sent: what
    /// [`PairSender::corner`] looks for corners between.
    prev: Option<(f64, PairSample)>,
    last_sent: Option<(f64, [Vec3; 2])>,
    /// Corner frames that may go out now: one more per root interval, at most
    /// [`CORNER_BURST`] (a stop between two ticks takes two; a root that jitters cannot raise the
    /// frame rate more than twofold).
    corner_tokens: f32,
    /// The last physics tick's hand sample, and the last one kept for a frame.
    prev_hand: Option<HandSample>,
    last_hand: Option<HandSample>,
    /// The initiator's root at the last physics tick ([`PairSender::observe_root`]).
    last_root: Option<Pose>,
}

/// Both roots of a sample, world space.
fn roots(pair: &PairSample) -> [Vec3; 2] {
    [
        pair.initiator.position,
        pair.initiator.from_local(pair.recipient_local).position,
    ]
}

#[cfg(test)]
impl PairSender {
    /// Returns a sender at scale 1 that has started a pair ([`PairSender::restart`]): everything
    /// due at once, the first frames key frames.
    pub(crate) fn started() -> Self {
        let mut s = Self::default();
        s.restart();
        s
    }
}

impl PairSender {
    /// Starts a new pair: everything is due at once and the first frames are key frames.
    pub fn restart(&mut self) {
        *self = Self {
            started: true,
            clocks: [f32::INFINITY; 3],
            keys_left: KEY_REPEATS,
            scale: self.scale,
            corner_tokens: CORNER_BURST,
            ..Self::default()
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

    /// Sets the pair's scale (the characters' height over a 1.75 m human): positions are sent over
    /// ranges that many times [`LOCAL_RANGE`] and [`OFFSET_RANGE`]. A change starts key frames.
    pub fn set_scale(&mut self, scale: f32) {
        let code = scale_code(scale);
        if code != self.scale {
            self.scale = code;
            self.keys_left = KEY_REPEATS;
        }
    }

    /// Returns the scale frames are sent at (as receivers decode it).
    #[must_use]
    pub fn scale(&self) -> f32 {
        scale_of_code(self.scale)
    }

    /// Marks the next frames as a teleport: receivers jump instead of gliding.
    pub fn teleport(&mut self) {
        self.teleport = true;
        self.keys_left = KEY_REPEATS;
    }

    /// Takes the initiator's root at this physics tick (`None` while it has none) and marks a
    /// teleport ([`PairSender::teleport`]) when it jumped more than
    /// [`TELEPORT_DISTANCE`] times the pair's scale since the
    /// last tick. A restart forgets the last root.
    pub fn observe_root(&mut self, root: Option<Pose>) {
        if let (Some(now), Some(last)) = (root, self.last_root) {
            if now.position.distance(last.position) > TELEPORT_DISTANCE * self.scale() {
                self.teleport();
            }
        }
        self.last_root = root;
    }

    /// Advances `dt` seconds and returns what is due now.
    pub fn tick(&mut self, dt: f32, rates: &StreamRates) -> Due {
        if !self.started {
            return Due::default();
        }
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        let rates = rates.sanitized();
        self.anim_age += dt;
        self.key_age += dt;
        if rates.pose_interval > 0.0 {
            self.corner_tokens = (self.corner_tokens + dt / rates.pose_interval).min(CORNER_BURST);
        }
        let intervals = [
            rates.pose_interval,
            rates.ik_interval,
            rates.animation_interval,
        ];
        let mut due = [false; 3];
        for ((clock, interval), due) in self.clocks.iter_mut().zip(intervals).zip(&mut due) {
            if interval <= 0.0 {
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
            frame: due[0],
            hands: due[1],
            anim: due[0] && due[2],
            repeat: !due[0] && std::mem::take(&mut self.repeat),
        }
    }

    /// One physics tick of the stream, in the order it needs: the tick before when it was a corner
    /// ([`PairSender::corner`]), this tick's hand sample ([`PairSender::offer_hands`]), then the
    /// frame when [`Due::frame`] ([`PairSender::write`]). Sending [`Due::repeat`]'s copy of the
    /// last frame is the caller's (it holds the bytes it sent).
    pub fn send_tick(
        &mut self,
        due: Due,
        input: &TickInput<'_>,
        out: &mut TickFrames,
    ) -> Result<(), ShortBuffer> {
        out.count = 0;
        if let Some((time, corner)) = input.pair.and_then(|p| self.corner(input.now, p)) {
            out.push(|buf| self.write_corner(time, input.shared, corner, input.offsets, buf))?;
        }
        if let Some(hand) = input.hand {
            self.offer_hands(hand, due.hands);
        }
        if let (true, Some(pair)) = (due.frame, input.pair) {
            out.push(|buf| {
                self.write(
                    input.now,
                    input.shared,
                    pair,
                    input.offsets,
                    input.anim,
                    buf,
                )
            })?;
        }
        Ok(())
    }

    /// Watches the pair each physics tick (before this tick's hand sample and frame) and returns
    /// the previous tick's sample with its time when that tick was a corner of the motion: it lay
    /// more than [`CORNER_TOLERANCE`] off the line from the last sample sent to this one. Send it
    /// at once with [`PairSender::write_corner`].
    pub fn corner(&mut self, now: f64, pair: PairSample) -> Option<(f64, PairSample)> {
        if !self.started || !now.is_finite() {
            return None;
        }
        let (tp, before) = self.prev.replace((now, pair))?;
        let (ts, sent) = self.last_sent?;
        if self.teleport
            || tp <= ts
            || now <= tp
            || now - ts > CORNER_SPAN
            || self.corner_tokens < 1.0
        {
            return None;
        }
        let u = ((tp - ts) / (now - ts)) as f32;
        let (here, there) = (roots(&pair), roots(&before));
        let tolerance = CORNER_TOLERANCE * scale_of_code(self.scale);
        let off = (0..2).any(|k| there[k].distance(sent[k].lerp(here[k], u)) > tolerance);
        (off && here.iter().chain(&there).all(|p| p.is_finite())).then_some((tp, before))
    }

    /// Writes the corner [`PairSender::corner`] returned (stamped `time`, its own tick's) into
    /// `out` and returns its length: a frame like [`PairSender::write`]'s, without animation,
    /// marked [`CORNER`] and sent again on the next tick.
    pub fn write_corner(
        &mut self,
        time: f64,
        shared: bool,
        pair: PairSample,
        offsets: HandOffsets,
        out: &mut [u8],
    ) -> Result<usize, ShortBuffer> {
        self.write_frame(time, shared, pair, offsets, None, true, out)
    }

    /// Offers this physics tick's hand sample (every tick while the hands are known): it is kept
    /// for the next frame when `due` (every hand interval), and the tick before is kept too when it
    /// was a corner of the contact's motion in the initiator's frame (more than
    /// [`CORNER_TOLERANCE`] off the line from the last sample kept to this one: the recipient
    /// falling behind as the initiator sets off), while the frame has room for it.
    pub fn offer_hands(&mut self, sample: HandSample, due: bool) {
        let before = self.prev_hand.replace(sample);
        if let (Some(p), Some(last)) = (before, self.last_hand) {
            let span = sample.time - last.time;
            if p.time > last.time
                && sample.time > p.time
                && span <= CORNER_SPAN
                && self.hand_count + 1 < MAX_HAND_SAMPLES
            {
                let u = ((p.time - last.time) / span) as f32;
                let line = last.contact.lerp(sample.contact, u);
                if p.contact.distance(line) > CORNER_TOLERANCE * scale_of_code(self.scale) {
                    self.push_hands(p);
                }
            }
        }
        if due {
            self.push_hands(sample);
        }
    }

    /// Keeps a hand sample for the next frame (the oldest is dropped when more than
    /// [`MAX_HAND_SAMPLES`] wait).
    pub fn push_hands(&mut self, sample: HandSample) {
        if self.hand_count == MAX_HAND_SAMPLES {
            self.hands.copy_within(1.., 0);
            self.hand_count -= 1;
        }
        self.hands[self.hand_count] = sample;
        self.hand_count += 1;
        self.last_hand = Some(sample);
    }

    /// Writes a frame stamped `now` (sender-clock seconds; `shared`: the clock every peer shares)
    /// into `out` and returns its length: the
    /// pair, the hand samples taken since the last frame, and `anim` when a node, travel target or
    /// one-shot changed or a play position drifted ([`AnimSnapshot::events_differ`]), when values
    /// moved (beyond [`ANIM_DEADBAND`]) and [`ANIM_VALUE_INTERVAL`] passed, or when
    /// [`ANIM_KEEPALIVE`] passed. The hand offsets go out in key
    /// frames, and a change of them starts [`KEY_REPEATS`] key frames.
    pub fn write(
        &mut self,
        now: f64,
        shared: bool,
        pair: PairSample,
        offsets: HandOffsets,
        anim: Option<&AnimSnapshot>,
        out: &mut [u8],
    ) -> Result<usize, ShortBuffer> {
        self.write_frame(now, shared, pair, offsets, anim, false, out)
    }

    #[allow(clippy::too_many_arguments)]
    fn write_frame(
        &mut self,
        now: f64,
        shared: bool,
        pair: PairSample,
        offsets: HandOffsets,
        anim: Option<&AnimSnapshot>,
        corner: bool,
        out: &mut [u8],
    ) -> Result<usize, ShortBuffer> {
        let scale = scale_of_code(self.scale);
        let (offsets, key) = self.key_offsets(offsets, scale);
        let (send_anim, event) = self.anim_due(anim);
        let tilted = !is_upright(pair.initiator.rotation, UPRIGHT_TOLERANCE)
            || !is_upright(pair.recipient_local.rotation, UPRIGHT_TOLERANCE);
        let flags = (u8::from(key) * KEY)
            | (u8::from(send_anim) * ANIM)
            | (u8::from(self.teleport) * TELEPORT)
            | (u8::from(tilted) * TILTED);
        let stamp = stamp_of(now);
        let mut w = ByteWriter::new(out);
        w.put_u8(if shared { SHARED_MARK } else { FRAME_MARK } | flags)?;
        w.put_u16(stamp)?;
        let p = pair.initiator.position;
        if key {
            for c in p.to_array() {
                w.put_f32(if c.is_finite() {
                    c.clamp(-MAX_WORLD, MAX_WORLD)
                } else {
                    0.0
                })?;
            }
        } else {
            w.put_wrapped(p, WRAP_STEP * scale)?;
        }
        if key {
            w.put_u8(self.scale as u8)?;
        }
        let rotation = |w: &mut ByteWriter, q: Quat| {
            if tilted {
                w.put_rotation(q)
            } else {
                w.put_yaw(q)
            }
        };
        rotation(&mut w, pair.initiator.rotation)?;
        w.put_position(pair.recipient_local.position, LOCAL_RANGE * scale)?;
        rotation(&mut w, pair.recipient_local.rotation)?;
        w.put_rotation(pair.contact_rotation)?;
        if key {
            for hand in [offsets.initiator, offsets.recipient] {
                w.put_position(hand.position, OFFSET_RANGE * scale)?;
                w.put_rotation(hand.rotation)?;
            }
        }
        w.put_u8(self.hand_count as u8 | if corner { CORNER } else { 0 })?;
        self.write_hands(&mut w, now, scale)?;
        if let (true, Some(snapshot)) = (send_anim, anim) {
            snapshot.encode(&mut w)?;
            self.anim_repeat = event;
            self.last_anim = Some(*snapshot);
            self.anim_age = 0.0;
        }
        let n = w.written().len();
        self.frame_written(now, &pair, scale, corner, key);
        Ok(n)
    }

    /// Announces changed hand offsets in key frames and says whether this frame is a key frame.
    fn key_offsets(&mut self, offsets: HandOffsets, scale: f32) -> (HandOffsets, bool) {
        // Hand offsets travel in key frames: a change (beyond what a receiver would notice) starts
        // new ones; the offsets sent are the ones last announced, so a receiver holds exactly them.
        // Sanitised first: glam's `angle_between` asserts unit rotations.
        let offsets = offsets.sanitized();
        let changed = self.offsets.is_none_or(|sent| {
            [
                (sent.initiator, offsets.initiator),
                (sent.recipient, offsets.recipient),
            ]
            .iter()
            .any(|(a, b)| {
                a.position.distance(b.position) > OFFSET_TOLERANCE * scale
                    || a.rotation.angle_between(b.rotation) > OFFSET_ANGLE_TOLERANCE
                    || !b.is_finite()
            })
        });
        if changed {
            self.offsets = Some(offsets);
            self.keys_left = KEY_REPEATS;
        }
        let offsets = self.offsets.unwrap_or(offsets);
        if self.key_age >= KEY_INTERVAL {
            self.keys_left = self.keys_left.max(1);
        }
        let key = self.keys_left > 0;
        (offsets, key)
    }

    /// Says whether the animation goes out in this frame, and whether it switched something.
    fn anim_due(&self, anim: Option<&AnimSnapshot>) -> (bool, bool) {
        // Events (nodes, travels, one-shots, a jump of a play position) go out at once; values
        // that only moved go out every ANIM_VALUE_INTERVAL, as the receiver interpolates them.
        let age = self.anim_age;
        let mut event = false;
        let send_anim = anim.is_some_and(|now| match self.last_anim {
            None => true,
            Some(last) => {
                event = now.switched(&last);
                now.events_differ(&last, age)
                    || self.anim_repeat
                    || (now.values_differ(&last, ANIM_DEADBAND)
                        && age + 1e-3 >= ANIM_VALUE_INTERVAL)
                    || age >= ANIM_KEEPALIVE
            }
        });
        (send_anim, event)
    }

    /// Writes the hand samples taken since the last frame, with their ages at `now`.
    fn write_hands(&self, w: &mut ByteWriter, now: f64, scale: f32) -> Result<(), ShortBuffer> {
        for h in &self.hands[..self.hand_count] {
            let age = ((now - h.time) * 1000.0).round();
            let age = if age.is_finite() {
                age.clamp(0.0, 255.0) as u8
            } else {
                0
            };
            let weight = (crate::kit::saturate(h.weight) * 31.0).round() as u8;
            let packed = weight
                | u8::from(h.connected) << 5
                | u8::from(h.arm_override) << 6
                | u8::from(h.has_shared_reach) << 7;
            w.put_u8(age)?;
            w.put_u8(packed)?;
            w.put_position(h.contact, LOCAL_RANGE * scale)?;
        }
        Ok(())
    }

    /// Makes a written frame's side effects stick: the repeat, the motion sent, the key frames.
    fn frame_written(&mut self, now: f64, pair: &PairSample, scale: f32, corner: bool, key: bool) {
        let p = pair.initiator.position;
        // Written: the frame's side effects stick.
        let flat = Vec3::new(p.x, 0.0, p.z);
        let (velocity, sharp) = match self.last_motion {
            Some((t0, p0, v0)) if now > t0 && now - t0 <= 0.5 => {
                let v = (flat - p0) / (now - t0) as f32;
                (v, (v - v0).length() > REPEAT_SPEED_CHANGE * scale)
            }
            _ => (Vec3::ZERO, false),
        };
        self.repeat = corner || (sharp && velocity.is_finite());
        if corner {
            self.corner_tokens -= 1.0;
        }
        self.last_sent = Some((now, roots(pair)));
        self.last_motion = flat.is_finite().then_some((
            now,
            flat,
            if velocity.is_finite() {
                velocity
            } else {
                Vec3::ZERO
            },
        ));
        self.hand_count = 0;
        self.teleport = false;
        if key {
            self.keys_left = self.keys_left.saturating_sub(1);
            self.key_age = 0.0;
        }
    }
}

/// Returns the stamp of sender-clock time `now` (seconds): milliseconds modulo 65 536.
#[must_use]
pub fn stamp_of(now: f64) -> u16 {
    if !now.is_finite() {
        return 0;
    }
    ((now * 1000.0).round().rem_euclid(65536.0) as u32 % 65536) as u16
}

/// Returns the time (seconds) whose stamp is `stamp` nearest to, and at most one second after,
/// `now` on the same clock: a frame is never from the future by more than clock error.
#[must_use]
pub fn unwrap_stamp(stamp: u16, now: f64) -> f64 {
    let now_ms = if now.is_finite() {
        (now * 1000.0).round()
    } else {
        0.0
    };
    let now_code = now_ms.rem_euclid(65536.0);
    // Age in (−1000, 64536] ms.
    let mut age = (now_code - f64::from(stamp)).rem_euclid(65536.0);
    if age > 64536.0 {
        age -= 65536.0;
    }
    (now_ms - age) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tick_samples_the_solved_hands_in_the_initiators_frame() {
        let me = Pose::new(Vec3::new(1.0, 0.0, 2.0), Quat::from_rotation_y(1.0));
        // The partner 0.8 m to the initiator's right, facing the same way.
        let partner = Pose::new(me.transform_point(Vec3::X * 0.8), me.rotation);
        let hand = |offset: Vec3| super::super::HandInput {
            contact: Pose::IDENTITY,
            upper_arm: Vec3::ZERO,
            reach: 0.6,
            offset,
            rotation: Quat::from_rotation_z(0.2),
        };
        let contact = Vec3::new(1.4, 1.0, 2.1);
        let out = super::super::ContactOutput {
            initiator_target: Pose::IDENTITY,
            recipient_target: Pose::IDENTITY,
            contact,
            rotation: Quat::from_rotation_y(1.3),
            position_weight: 0.7,
            rotation_weight: 0.5,
            connected: true,
            has_shared_reach: true,
            preferred: contact,
            spheres: [super::super::ReachSphere {
                center: Vec3::ZERO,
                radius: 0.6,
            }; 2],
        };
        let mut hands = SentHands::solved(me, &out, &hand(Vec3::X * 0.05), &hand(Vec3::X * -0.05));
        // The contact and its rotation are in the initiator's frame.
        assert!(me.transform_point(hands.contact).distance(contact) < 1e-5);
        assert!(hands.rotation.angle_between(Quat::from_rotation_y(0.3)) < 1e-3);
        assert_eq!(hands.offsets.initiator.position, Vec3::X * 0.05);
        assert!(hands.arm_override && hands.connected && hands.weight == 0.7);

        let (pair, hand_sample, offsets) = tick_samples(4.5, Some(me), Some(partner), Some(&hands));
        let pair = pair.expect("both roots known");
        assert!(
            pair.recipient_local
                .position
                .distance(Vec3::new(0.8, 0.0, 0.0))
                < 1e-5
        );
        assert_eq!(pair.contact_rotation, hands.rotation);
        let hand_sample = hand_sample.expect("hands solved");
        assert_eq!((hand_sample.time, hand_sample.weight), (4.5, 0.7));
        assert_eq!(offsets, hands.offsets);

        // Let go: the next samples say so; before any solve, no hand sample and identity offsets.
        hands.release();
        let (_, hand_sample, _) = tick_samples(4.6, Some(me), Some(partner), Some(&hands));
        let hand_sample = hand_sample.unwrap();
        assert!(!hand_sample.connected && hand_sample.weight == 0.0);
        let (pair, hand_sample, offsets) = tick_samples(4.7, Some(me), None, None);
        assert!(pair.is_none() && hand_sample.is_none());
        assert_eq!(offsets, HandOffsets::default());
    }

    pub(crate) fn pair_at(x: f32) -> PairSample {
        PairSample {
            initiator: Pose::new(Vec3::new(x, 0.0, -2.0), Quat::from_rotation_y(0.5)),
            recipient_local: Pose::new(Vec3::new(-0.82, 0.0, 0.17), Quat::IDENTITY),
            contact_rotation: Quat::from_rotation_x(0.3),
        }
    }

    /// Runs `ticks` physics ticks of [`PairSender::send_tick`] with the pair `pair_of(k)` at tick
    /// k (no hands, no animation) and returns every frame sent: (the tick of its stamp, whether
    /// it is a corner).
    fn sent_frames(ticks: i32, pair_of: impl Fn(i32) -> PairSample) -> Vec<(i32, bool)> {
        let dt = 1.0 / 60.0;
        let rates = StreamRates::default();
        let mut s = PairSender::started();
        let mut frames = TickFrames::default();
        let mut sent = Vec::new();
        for k in 0..ticks {
            let now = f64::from(k) * f64::from(dt);
            let due = s.tick(dt, &rates);
            let input = TickInput {
                now,
                shared: false,
                pair: Some(pair_of(k)),
                hand: None,
                offsets: offsets(),
                anim: None,
            };
            s.send_tick(due, &input, &mut frames).unwrap();
            for bytes in frames.iter() {
                let frame = Frame::decode(bytes, Some(Vec3::ZERO), 1.0).unwrap();
                let t = unwrap_stamp(frame.stamp, now);
                sent.push(((t / f64::from(dt)).round() as i32, frame.corner));
            }
        }
        sent
    }

    #[test]
    fn the_tick_before_a_start_or_a_stop_is_sent_as_a_corner() {
        // Stands, starts at 1.4 m/s on a tick between two 10 Hz samples, walks, stops the same
        // way: the last standing tick and the last walking tick go out (a tick late, marked as
        // corners), nothing else beyond the schedule.
        let x = |k: i32| 1.4 / 60.0 * (k.clamp(20, 80) - 20) as f32;
        let sent = sent_frames(120, |k| pair_at(x(k)));
        let corners: Vec<i32> = sent.iter().filter(|f| f.1).map(|f| f.0).collect();
        assert_eq!(corners, [20, 80], "{sent:?}");
        assert_eq!(sent.iter().filter(|f| !f.1).count(), 20);
    }

    #[test]
    fn a_root_that_jitters_sends_at_most_one_corner_per_interval() {
        // A root shaking by 2 cm every tick would be a corner every tick: after a burst of two,
        // one corner frame per root interval goes out, so the frame rate at most doubles.
        let sent = sent_frames(600, |k| pair_at(if k % 2 == 0 { 0.0 } else { 0.02 }));
        let corners = sent.iter().filter(|f| f.1).count();
        assert!((99..=102).contains(&corners), "{corners} corners in 10 s");
    }

    #[test]
    fn the_hand_sample_before_a_jump_of_the_contact_is_kept() {
        // The contact steps 3 cm in the initiator's frame between two 20 Hz hand samples (the
        // recipient falls behind as the initiator sets off): the ticks on either side of the step
        // are kept as well, so a receiver does not smear the step over the interval.
        let dt = 1.0 / 60.0;
        let rates = StreamRates::default();
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let mut kept = Vec::new();
        for k in 0..30 {
            let now = f64::from(k) * f64::from(dt);
            let due = s.tick(dt, &rates);
            let contact = Vec3::new(0.0, 1.0, if k > 13 { -0.13 } else { -0.1 });
            let sample = HandSample {
                time: now,
                contact,
                ..HandSample::default()
            };
            s.offer_hands(sample, due.hands);
            if due.frame {
                let n = s
                    .write(now, false, pair_at(0.0), offsets(), None, &mut buf)
                    .unwrap();
                let frame = Frame::decode(&buf[..n], Some(Vec3::ZERO), 1.0).unwrap();
                for h in frame.hands() {
                    kept.push(((now - h.time) / f64::from(dt)).round() as i32);
                }
            }
        }
        // Every third tick on schedule (the frames up to tick 24), and ticks 13 and 14 (either
        // side of the step).
        assert_eq!(kept, [0, 3, 6, 9, 12, 13, 14, 15, 18, 21, 24], "{kept:?}");
    }

    #[test]
    fn a_smooth_walk_sends_no_corners() {
        // A swinging heading at walking pace: 2 mm off a 10 Hz chord at most.
        let sent = sent_frames(600, |k| {
            let t = k as f32 / 60.0;
            PairSample {
                initiator: Pose::new(
                    Vec3::new(0.9 * (1.3 * t).sin(), 0.0, -1.4 * t),
                    Quat::IDENTITY,
                ),
                ..pair_at(0.0)
            }
        });
        assert!(sent.iter().all(|f| !f.1), "{sent:?}");
        assert_eq!(sent.len(), 100);
    }

    pub(crate) fn offsets() -> HandOffsets {
        HandOffsets {
            initiator: Pose::new(Vec3::new(0.0, 0.0, 0.02), Quat::from_rotation_z(0.2)),
            recipient: Pose::new(Vec3::new(0.0, 0.0, -0.02), Quat::from_rotation_z(-0.2)),
        }
    }

    #[test]
    fn the_default_schedule_sends_ten_frames_a_second_with_two_hand_samples_each() {
        let mut s = PairSender::default();
        let rates = StreamRates::default();
        assert_eq!(
            s.tick(0.016, &rates),
            Due::default(),
            "nothing before restart"
        );
        s.restart();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let (mut frames, mut keys, mut bytes, mut hands) = (0, 0, 0, 0);
        let dt = 1.0 / 60.0;
        for k in 0..600 {
            let now = f64::from(k) * f64::from(dt);
            let due = s.tick(dt, &rates);
            if due.hands {
                s.push_hands(HandSample {
                    time: now,
                    weight: 1.0,
                    ..HandSample::default()
                });
            }
            if due.frame {
                let n = s
                    .write(
                        now,
                        false,
                        pair_at(k as f32 * 0.02),
                        offsets(),
                        None,
                        &mut buf,
                    )
                    .unwrap();
                let f = Frame::decode(&buf[..n], Some(Vec3::new(k as f32 * 0.02, 0.0, -2.0)), 1.0)
                    .unwrap();
                frames += 1;
                keys += usize::from(f.is_key());
                hands += f.hand_count;
                bytes += n;
            }
        }
        assert_eq!(frames, 100);
        assert!(hands >= 199, "{hands}");
        // 3 key frames at the start and one a second after that.
        assert!((3 + 8..=3 + 9).contains(&keys), "{keys}");
        assert_eq!(
            bytes,
            100 * 40 + keys * 27 - 8,
            "40-byte frames, key frames 27 more (full position, scale, hand offsets)"
        );
    }

    #[test]
    fn the_largest_frame_fits_in_max_frame_bytes() {
        // A tilted key frame with every hand sample and the largest animation section: a frame
        // that did not fit was not sent, and the hand samples piling up kept the next one as large.
        let mut anim = AnimSnapshot::default();
        for k in 0..MAX_ANIM_VALUES {
            assert!(anim.push_value(k as f32 * 0.1));
        }
        for k in 0..super::super::anim::MAX_ANIM_MACHINES {
            assert!(anim.push_machine(super::super::anim::MachineState {
                node: k as u8,
                travel: k as u8 + 1,
                position: 1.5,
            }));
        }
        for k in 0..super::super::anim::MAX_ANIM_SHOTS {
            assert!(anim.push_shot(k % 2 == 0));
        }
        anim.player = Some(super::super::anim::PlayerState {
            animation: 2,
            position: 0.5,
        });
        let tilt = Quat::from_rotation_x(0.5) * Quat::from_rotation_y(1.0);
        let pair = PairSample {
            initiator: Pose::new(Vec3::new(1.0e5, 3.0, -2.0e5), tilt),
            recipient_local: Pose::new(Vec3::new(-0.82, 0.0, 0.17), tilt),
            contact_rotation: tilt,
        };
        for scale in [1.0, 100.0, 0.01] {
            let mut s = PairSender::default();
            s.set_scale(scale);
            s.restart();
            for k in 0..MAX_HAND_SAMPLES + 2 {
                s.push_hands(HandSample {
                    time: k as f64 * 0.01,
                    contact: Vec3::new(-0.4, 1.0, -0.1) * scale,
                    weight: 1.0,
                    connected: true,
                    arm_override: true,
                    has_shared_reach: true,
                });
            }
            let mut buf = [0u8; MAX_FRAME_BYTES];
            let n = s
                .write(
                    0.1,
                    true,
                    pair,
                    HandOffsets::default(),
                    Some(&anim),
                    &mut buf,
                )
                .expect("the largest frame fits");
            let f = Frame::decode(&buf[..n], None, 1.0).unwrap();
            assert!(f.is_key() && f.flags & TILTED != 0 && f.hand_count == MAX_HAND_SAMPLES);
            assert!(f.anim().is_some());
            assert!(n <= MAX_FRAME_BYTES, "{n}");
        }
    }

    #[test]
    fn frames_round_trip_within_their_quantisation() {
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        s.tick(0.1, &StreamRates::default());
        for k in 0..3 {
            s.push_hands(HandSample {
                time: 9.9 + f64::from(k) * 0.05,
                contact: Vec3::new(-0.4, 1.0, -0.1 * k as f32),
                weight: 0.5,
                connected: true,
                arm_override: k == 1,
                has_shared_reach: true,
            });
        }
        let mut anim = AnimSnapshot::default();
        for v in [0.25, -2.0, 1000.5] {
            anim.push_value(v);
        }
        let n = s
            .write(
                10.0,
                false,
                pair_at(1234.5),
                offsets(),
                Some(&anim),
                &mut buf,
            )
            .unwrap();
        let f = Frame::decode(&buf[..n], None, 1.0).unwrap();
        assert!(f.is_key());
        assert_eq!(f.stamp, stamp_of(10.0));
        assert_eq!(
            f.pair.initiator.position,
            pair_at(1234.5).initiator.position
        );
        assert!(
            f.pair
                .initiator
                .rotation
                .angle_between(Quat::from_rotation_y(0.5))
                < 1e-4
        );
        assert!(
            f.pair
                .contact_rotation
                .angle_between(Quat::from_rotation_x(0.3))
                < 0.005
        );
        let o = f.offsets.unwrap();
        assert!(o.initiator.position.distance(offsets().initiator.position) < 1e-4);
        assert_eq!(f.hand_count, 3);
        let ages: Vec<f64> = f.hands().iter().map(|h| h.time).collect();
        assert_eq!(ages, vec![0.1, 0.05, 0.0]);
        assert!(f.hands()[1].arm_override && !f.hands()[0].arm_override);
        assert!((f.hands()[2].weight - 0.5).abs() < 1.0 / 62.0);
        assert!(f.hands()[2].contact.distance(Vec3::new(-0.4, 1.0, -0.2)) < 1e-4);
        let a = f.anim().unwrap().values();
        assert_eq!(a.len(), 3);
        assert!((a[2] - 1000.5).abs() <= 0.5);
        // The same pair next time (not a key frame yet, 3 repeats): then no animation (unchanged).
        for _ in 0..3 {
            s.tick(0.1, &StreamRates::default());
            let n = s
                .write(
                    10.1,
                    false,
                    pair_at(1234.6),
                    offsets(),
                    Some(&anim),
                    &mut buf,
                )
                .unwrap();
            let f = Frame::decode(&buf[..n], Some(Vec3::new(1234.0, 0.0, -2.0)), 1.0).unwrap();
            assert!(f.anim().is_none());
            assert!(
                f.pair
                    .initiator
                    .position
                    .distance(Vec3::new(1234.6, 0.0, -2.0))
                    < 6e-4
            );
        }
    }

    #[test]
    fn moving_values_go_every_value_interval_and_events_at_once() {
        let mut s = PairSender::started();
        let rates = StreamRates::default();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let mut anim = super::super::anim::tests::locomotion();
        let mut sent = Vec::new();
        let dt = 1.0 / 60.0;
        for k in 0..120 {
            let now = f64::from(k) * f64::from(dt);
            let due = s.tick(dt, &rates);
            if !due.frame {
                continue;
            }
            // A blend position that moves all the time, a play position running with time, and a
            // one-shot that fires at 1 s.
            anim.values[0] = (now as f32 * 2.0).sin();
            anim.machines[0].position = (now as f32).rem_euclid(1.0);
            anim.shots = if now >= 1.0 { 0b11 } else { 0b10 };
            let n = s
                .write(now, false, pair_at(0.0), offsets(), Some(&anim), &mut buf)
                .unwrap();
            let f = Frame::decode(&buf[..n], Some(Vec3::new(0.0, 0.0, -2.0)), 1.0).unwrap();
            sent.push((now, f.anim().map(|a| a.shot(0))));
        }
        let frames = sent.len();
        let with_anim = sent.iter().filter(|(_, a)| a.is_some()).count();
        assert_eq!(frames, 20);
        assert_eq!(with_anim, frames, "the blend position moves in every frame");
        // The one-shot goes out in the first frame that sees it.
        let first = sent.iter().find(|(t, _)| *t >= 1.0).unwrap();
        assert_eq!(first.1, Some(true), "{sent:?}");
    }

    #[test]
    fn tilted_roots_are_sent_in_full_and_teleports_are_flagged() {
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let mut pair = pair_at(0.0);
        pair.initiator.rotation = Quat::from_rotation_x(0.4);
        s.teleport();
        let n = s
            .write(1.0, false, pair, offsets(), None, &mut buf)
            .unwrap();
        let f = Frame::decode(&buf[..n], None, 1.0).unwrap();
        assert_eq!(f.flags & (TILTED | TELEPORT), TILTED | TELEPORT);
        assert!(
            f.pair
                .initiator
                .rotation
                .angle_between(pair.initiator.rotation)
                < 0.005
        );
        let n = s
            .write(1.1, false, pair, offsets(), None, &mut buf)
            .unwrap();
        assert_eq!(
            Frame::decode(&buf[..n], None, 1.0).unwrap().flags & TELEPORT,
            0,
            "once"
        );
    }

    #[test]
    fn a_root_that_jumps_farther_than_the_teleport_distance_times_the_scale_is_a_teleport() {
        let flags = |s: &mut PairSender, t: f64| {
            let mut buf = [0u8; MAX_FRAME_BYTES];
            let n = s
                .write(t, false, pair_at(0.0), offsets(), None, &mut buf)
                .unwrap();
            Frame::decode(&buf[..n], None, s.scale()).unwrap().flags & TELEPORT
        };
        let at = |x: f32| Some(Pose::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY));
        for scale in [1.0_f32, 4.0] {
            let mut s = PairSender::default();
            s.set_scale(scale);
            s.restart();
            let jump = super::super::stream::TELEPORT_DISTANCE * s.scale();
            s.observe_root(at(0.0));
            s.observe_root(at(jump * 0.9));
            assert_eq!(
                flags(&mut s, 1.0),
                0,
                "a walk is not a teleport (scale {scale})"
            );
            s.observe_root(at(jump * 0.9 + jump * 1.1));
            assert_eq!(flags(&mut s, 1.1), TELEPORT, "a jump is (scale {scale})");
            // A restart forgets the last root: the first root of a new pair is no jump.
            s.restart();
            s.observe_root(at(100.0 * jump));
            assert_eq!(flags(&mut s, 1.2), 0, "after a restart (scale {scale})");
            s.observe_root(None);
            s.observe_root(at(0.0));
            assert_eq!(
                flags(&mut s, 1.3),
                0,
                "after a tick without a root (scale {scale})"
            );
        }
    }

    #[test]
    fn junk_is_rejected_and_never_panics() {
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let n = s
            .write(
                1.0,
                false,
                pair_at(3.0),
                offsets(),
                Some(&super::super::anim::tests::locomotion()),
                &mut buf,
            )
            .unwrap();
        assert!(Frame::decode(&buf[..n], None, 1.0).is_ok());
        assert_eq!(Frame::decode(&[], None, 1.0), Err(Malformed::Size));
        assert_eq!(
            Frame::decode(&buf[..n - 1], None, 1.0),
            Err(Malformed::Size)
        );
        let mut long = [0u8; MAX_FRAME_BYTES];
        long[..n].copy_from_slice(&buf[..n]);
        assert_eq!(
            Frame::decode(&long[..n + 1], None, 1.0),
            Err(Malformed::Size)
        );
        let mut wrong = buf;
        wrong[0] = 0x11;
        assert_eq!(Frame::decode(&wrong[..n], None, 1.0), Err(Malformed::Kind));
        let mut nan = buf;
        nan[3..7].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(Frame::decode(&nan[..n], None, 1.0), Err(Malformed::Value));
        let mut far = buf;
        far[3..7].copy_from_slice(&2.0e7f32.to_le_bytes());
        assert_eq!(Frame::decode(&far[..n], None, 1.0), Err(Malformed::Value));
        // A non-key frame cannot be read without a reference.
        for _ in 0..3 {
            s.write(1.0, false, pair_at(3.0), offsets(), None, &mut buf)
                .unwrap();
        }
        s.tick(2.0, &StreamRates::default());
        let mut s2 = PairSender::started();
        s2.keys_left = 0;
        s2.offsets = Some(offsets());
        let n = s2
            .write(1.0, false, pair_at(3.0), offsets(), None, &mut buf)
            .unwrap();
        assert_eq!(Frame::decode(&buf[..n], None, 1.0), Err(Malformed::Value));
        assert!(Frame::decode(&buf[..n], Some(Vec3::ZERO), 1.0).is_ok());
        let mut x = 12345u32;
        for len in 0..MAX_FRAME_BYTES + 4 {
            let mut junk = [0u8; MAX_FRAME_BYTES + 4];
            for b in &mut junk[..len] {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *b = (x >> 24) as u8;
            }
            junk[0] = FRAME_MARK | (junk[0] & 0x0F);
            if let Ok(f) = Frame::decode(&junk[..len], Some(Vec3::ZERO), 1.0) {
                assert!(f.pair.initiator.is_finite() && f.pair.recipient_local.is_finite());
            }
        }
    }

    #[test]
    fn stamps_unwrap_to_the_nearest_past_time() {
        for &now in &[0.0, 1.234, 65.5, 1000.0, 123_456.789] {
            for &age in &[0.0, 0.05, 0.7, 30.0, 64.0, -0.5] {
                let t: f64 = now - age;
                let back = unwrap_stamp(stamp_of(t), now);
                assert!(
                    (back - (t * 1000.0).round() / 1000.0).abs() < 1e-6,
                    "{now} {age} {back}"
                );
            }
        }
    }

    #[test]
    fn a_frame_where_the_motion_changes_sharply_is_sent_again_on_the_next_tick() {
        let rates = StreamRates::default();
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let dt = 1.0 / 60.0;
        let (mut x, mut repeats, mut repeat_times) = (0.0f32, 0, Vec::new());
        for k in 0..240 {
            let now = f64::from(k) * f64::from(dt);
            // Walks at 1.4 m/s from 1 s, stops dead at 3 s.
            if (1.0..3.0).contains(&now) {
                x += 1.4 * dt;
            }
            let due = s.tick(dt, &rates);
            if due.repeat {
                repeats += 1;
                repeat_times.push(now);
            }
            if due.frame {
                s.write(now, true, pair_at(x), offsets(), None, &mut buf)
                    .unwrap();
            }
        }
        // The start and the stop (each over one or two frames); nothing while walking or standing.
        assert!((2..=4).contains(&repeats), "{repeat_times:?}");
        assert!(
            repeat_times
                .iter()
                .all(|t| (1.0..1.3).contains(t) || (3.0..3.3).contains(t)),
            "{repeat_times:?}"
        );
    }

    #[test]
    fn offsets_that_jitter_by_a_fraction_of_a_millimetre_do_not_make_key_frames() {
        let rates = StreamRates::default();
        let mut s = PairSender::started();
        let mut buf = [0u8; MAX_FRAME_BYTES];
        let (mut keys, mut frames) = (0, 0);
        for k in 0..600 {
            let now = f64::from(k) / 60.0;
            let mut o = offsets();
            o.initiator.position.x += 0.0003 * (k as f32 * 0.7).sin();
            if s.tick(1.0 / 60.0, &rates).frame {
                let n = s.write(now, true, pair_at(0.0), o, None, &mut buf).unwrap();
                let f =
                    Frame::decode(&buf[..n], Some(pair_at(0.0).initiator.position), 1.0).unwrap();
                frames += 1;
                keys += usize::from(f.flags & KEY != 0);
            }
        }
        // The first three, then one a second: 3 + 9 over 10 s.
        assert!(frames >= 99 && keys <= 13, "{keys} key frames of {frames}");
        // A real change (a new grip) starts key frames again.
        let mut o = offsets();
        o.recipient.position.y += 0.05;
        s.tick(1.0 / 60.0, &rates);
        let n = s
            .write(11.0, true, pair_at(0.0), o, None, &mut buf)
            .unwrap();
        let f = Frame::decode(&buf[..n], Some(pair_at(0.0).initiator.position), 1.0).unwrap();
        assert!(f.flags & KEY != 0);
    }
}
