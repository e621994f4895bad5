//! How a remote peer shows the pair: snapshot interpolation a little in the past.
//!
//! Every frame the initiator sends is stamped with its clock ([`super::stream`]). A remote peer
//! keeps the recent samples on one timeline and shows the pair as it was at **view time** = now −
//! **view delay**, interpolating between the two samples around it, so what it shows is exactly
//! what the initiator showed then, give or take quantisation. The delay adapts to the network:
//!
//! `delay = max(slow-decaying maximum age the newest sample reached before a newer one arrived
//! (transit, jitter and lost frames all show in it), longest transit seen + (1 + k) × frame
//! interval) + a safety margin`, where k is how many frames in a row are lost more often than once
//! in a hundred at the measured loss (0 on a clean link, 3 at most)
//!
//! and the view clock runs at most 5 % fast, or down to half speed, to follow it (it never jumps
//! back, and jumps ahead only when more than a second behind), so a change of delay never shows as
//! a jump. When the clocks are shared (the game has a
//! `NetClock`), [`PairReplay::view_delay`] is the true age of what is shown; without, it is the age
//! beyond the fastest frame's transit.
//!
//! When frames are later than ever before (or lost several in a row), the view clock slows down
//! past the newest sample in proportion to how far past it is, coming to a stop [`STRETCH`] past
//! it, so the view time it declares stays the time it shows ([`PairReplay::view_rate`] says how fast
//! it runs: animations shown at the view time advance at that rate). Meanwhile the initiator
//! carries on past the newest sample at its last velocity (slowing down if the samples were
//! slowing), for at most [`MAX_EXTRAPOLATION`], and
//! the recipient keeps its place beside it (its own motion relative to the initiator is the follow
//! spring settling, which would overshoot if carried on); whatever
//! the next sample corrects is taken up by an offset that fades at a twentieth of the roots' own speed
//! plus 0.05 m/s (plus, while the roots are slow, up to 0.3 m/s for a correction beyond 5 cm, so a
//! large one closes within about a second), so corrections never show as a step. At the start of a pair, each root begins
//! where this peer last showed the character and glides into the stream at
//! [`ReplayTuning::blend_speed`]. A root that jumps farther than [`TELEPORT_DISTANCE`] between
//! samples that the initiator marked as a teleport jumps here too.
//!
//! The receiver refuses frames that would move the initiator faster than
//! [`ReplayTuning::max_root_speed`] (unless marked as a teleport, at most one a second), stale and
//! duplicate ones, and anything malformed; each is counted.

use glam::{Quat, Vec3};

use crate::kit::{exp_alpha, move_towards, slerp_shortest, Pose};

use super::stream::{
    scale_code, scale_of_code, unwrap_stamp, AnimSnapshot, Frame, HandOffsets, HandSample,
    Malformed, StreamRates, FRAME_MARK, KEY, SHARED_MARK, TELEPORT,
};

/// Fastest vertical speed (m/s) accepted for the initiator's root: a long fall, not a lie.
pub const MAX_FALL_SPEED: f32 = 60.0;
pub use super::stream::TELEPORT_DISTANCE;
/// Longest a root is carried on (s) past the newest sample.
pub const MAX_EXTRAPOLATION: f32 = 0.25;
/// How fast the largest need seen is forgotten (seconds of delay per second).
const NEED_DECAY: f32 = 0.02;
/// Weight of each frame in the running loss estimate.
const LOSS_WEIGHT: f32 = 0.03;
/// The delay covers as many lost frames in a row as happen more often than this (at the measured
/// loss), up to [`MAX_LOSS_COVER`].
const LOSS_ODDS: f32 = 0.01;
const MAX_LOSS_COVER: u8 = 3;
/// Added to the measured need (s).
const DELAY_MARGIN: f32 = 0.01;
/// Largest speed change of the view clock while it follows the delay.
const CLOCK_SLEW: f64 = 0.05;
/// Largest slow-down of the view clock when frames got later.
const CLOCK_BRAKE: f64 = 0.5;
/// How far (s) the view clock may fall behind its goal before it jumps ahead.
const CLOCK_JUMP: f64 = 1.0;
/// How far (s) past the newest sample the view clock runs at most: it slows down in proportion
/// to how far past it is, so it comes to a stop there.
pub const STRETCH: f32 = MAX_EXTRAPOLATION;
/// Time constant (s) of small corrections.
const CORRECTION_TIME: f32 = 0.1;
/// Corrections fade at most this fraction of the roots' own speed, plus [`CORRECTION_FLOOR`] m/s…
const CORRECTION_SHARE: f32 = 0.05;
const CORRECTION_FLOOR: f32 = 0.05;
/// …plus, for the part of a correction beyond [`CORRECTION_SMALL`] m, this rate (1/s), at most
/// [`CORRECTION_LARGE`] m/s while the roots stand, fading to nothing at [`CORRECTION_SLOW`] m/s: a
/// large misprediction (a recipient held in place while it was still gliding in) closes in about
/// a second instead of drifting for several, while a walking root's steps grow by a fifth at most.
const CORRECTION_RATE: f32 = 3.0;
const CORRECTION_SMALL: f32 = 0.05;
const CORRECTION_LARGE: f32 = 0.3;
const CORRECTION_SLOW: f32 = 0.5;
/// What new samples correct about a root joins its start blend (rather than the slower
/// corrections) while the blend still has more than this (m) to go.
const BLEND_JOIN: f32 = 0.01;
/// Teleport frames within this many seconds of the first one belong to the same teleport…
const TELEPORT_REPEAT: f64 = 0.5;
/// …and a new teleport is accepted at most this often (s).
const TELEPORT_COOLDOWN: f64 = 1.0;
/// Frames this far (s) behind the view are of no use.
const TOO_OLD: f64 = 1.0;
/// After this long (s, sender clock) without an accepted root sample, a frame that breaks the speed
/// limit is taken anyway (the track was lost).
const RESYNC_AFTER: f64 = 1.0;

/// Samples farther apart than this (s) give no velocity to extrapolate with.
const MAX_VELOCITY_SPAN: f32 = 0.5;

/// Samples kept: 4 s of root samples at 10 Hz, 2 s at the most corners add (20 Hz), longer than
/// the longest delay a lossy link asks for (1.3 s at 250 ms ± 60 ms and 22.6 % loss); as long of
/// hand samples (20 Hz, up to 40 Hz with corners).
const POSE_SLOTS: usize = 40;
const HAND_SLOTS: usize = 80;
const ANIM_SLOTS: usize = 12;

/// Tuning of a remote peer's replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayTuning {
    /// The rates the initiator sends at.
    pub rates: StreamRates,
    /// Fastest the initiator's root may move horizontally between samples (m/s at scale 1, times
    /// the pair's scale: see [`super::stream::PairSender::set_scale`]) without a teleport mark (vertically:
    /// [`MAX_FALL_SPEED`], also times the scale).
    pub max_root_speed: f32,
    /// How fast a root glides from where this peer last showed it into the stream (m/s at scale
    /// 1, times the pair's scale).
    pub blend_speed: f32,
    /// Seconds without hand samples before the hands fade out.
    pub ik_timeout: f32,
    /// Seconds the hands take to fade out or back in.
    pub ik_fade_time: f32,
}

impl Default for ReplayTuning {
    fn default() -> Self {
        Self {
            rates: StreamRates::default(),
            max_root_speed: super::params::PairParam::MaxRootSpeed.spec().default,
            blend_speed: super::params::PairParam::BlendSpeed.spec().default,
            ik_timeout: super::params::PairParam::IkTimeout.spec().default,
            ik_fade_time: super::params::PairParam::IkFadeTime.spec().default,
        }
    }
}

/// What a remote peer applies to the pair's hands, in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteHands {
    /// The initiator's hand target.
    pub initiator_hand: Pose,
    /// The recipient's hand target.
    pub recipient_hand: Pose,
    /// The IK weight to apply (already faded for silence).
    pub weight: f32,
    /// Whether the arm animation layers are overridden.
    pub arm_override: bool,
}

/// The pair as a remote peer shows it this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairView {
    /// The initiator's root, world space.
    pub initiator: Pose,
    /// The recipient's root, world space.
    pub recipient: Pose,
    /// Both hands, once the first key frame and hand sample arrived.
    pub hands: Option<RemoteHands>,
    /// The sender-clock time shown.
    pub time: f64,
}

/// What a frame that passed [`PairReplay::receive`] brought.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// A root sample was kept.
    pub pose: bool,
    /// Hand samples were kept.
    pub hands: bool,
    /// An animation snapshot was kept.
    pub anim: bool,
}

/// Why a well-formed frame was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Undecodable.
    Malformed(Malformed),
    /// A duplicate, or older than anything still useful.
    Stale,
    /// It would move the initiator faster than the speed limit.
    TooFast,
    /// A non-key frame before any key frame: nothing to read it against.
    NoKey,
}

#[derive(Clone, Copy, Debug, Default)]
struct PoseEntry {
    initiator: Pose,
    recipient: Pose,
    contact_rotation: Quat,
    teleport: bool,
}

/// The entries on either side of a time.
type Around<'a, T> = (Option<&'a (f64, T)>, Option<&'a (f64, T)>);

/// A fixed number of entries sorted by time (the oldest dropped first).
#[derive(Clone, Copy, Debug)]
struct Timeline<T: Copy + Default, const N: usize> {
    items: [(f64, T); N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> Default for Timeline<T, N> {
    fn default() -> Self {
        Self {
            items: [(0.0, T::default()); N],
            len: 0,
        }
    }
}

impl<T: Copy + Default, const N: usize> Timeline<T, N> {
    fn slice(&self) -> &[(f64, T)] {
        &self.items[..self.len]
    }

    fn newest(&self) -> Option<&(f64, T)> {
        self.slice().last()
    }

    fn contains(&self, t: f64) -> bool {
        self.slice().iter().any(|(u, _)| (u - t).abs() < 5e-4)
    }

    /// Inserts in time order; returns false for a duplicate time or one older than a full buffer.
    fn insert(&mut self, t: f64, item: T) -> bool {
        if !t.is_finite() || self.contains(t) {
            return false;
        }
        let at = self.slice().partition_point(|(u, _)| *u < t);
        if self.len == N {
            if at == 0 {
                return false;
            }
            self.items.copy_within(1..N, 0);
            self.len -= 1;
            self.items.copy_within(at - 1..self.len, at);
            self.items[at - 1] = (t, item);
        } else {
            self.items.copy_within(at..self.len, at + 1);
            self.items[at] = (t, item);
        }
        self.len += 1;
        true
    }

    /// Returns the entries around `t`: the last at or before it and the first after it.
    fn around(&self, t: f64) -> Around<'_, T> {
        let s = self.slice();
        let at = s.partition_point(|(u, _)| *u <= t);
        (at.checked_sub(1).map(|i| &s[i]), s.get(at))
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

/// Everything a remote peer keeps of one pair's stream.
#[derive(Clone, Debug, Default)]
pub struct PairReplay {
    poses: Timeline<PoseEntry, POSE_SLOTS>,
    hands: Timeline<HandSample, HAND_SLOTS>,
    anims: Timeline<AnimSnapshot, ANIM_SLOTS>,
    /// The animation at the view time, as last computed by [`PairReplay::animation`].
    view_anim: AnimSnapshot,
    offsets: Option<HandOffsets>,
    /// Receiver clock minus sender clock (0 when they are shared), once known.
    clock_offset: Option<f64>,
    /// Whether the clocks are shared, once a frame said.
    shared: Option<bool>,
    /// Slow-decaying maximum age of the newest sample just before a newer one arrived (s).
    need: f32,
    /// Slow-decaying maximum age of a frame on arrival (s): transit and jitter.
    transit: f32,
    /// Running estimate of the fraction of frames lost.
    loss: f32,
    view_time: Option<f64>,
    view_delay: f32,
    /// View seconds per second at the last render (1 until then).
    view_rate: f32,
    /// Where the last frame's raw sample was, and when.
    last_raw: Option<(f64, [Pose; 2])>,
    /// Corrections still to fade, per root: small ones, and the start blend.
    correction: [Vec3; 2],
    correction_rotation: [Quat; 2],
    blend: [Vec3; 2],
    blend_rotation: [Quat; 2],
    started: bool,
    teleport_at: Option<f64>,
    silence: f32,
    /// Seconds since the last hand sample arrived, and the view's delay then.
    hand_silence: f32,
    hand_delay: f32,
    fade: f32,
    frames: u32,
    stale: u32,
    malformed: u32,
    too_fast: u32,
    /// The pair's scale from the last key frame ([`scale_code`]; the distances in this module's
    /// constants are for scale 1 and are multiplied by it).
    scale: i8,
}

impl PairReplay {
    /// Returns the pair's scale (the characters' height over a 1.75 m human) as the initiator
    /// last sent it in a key frame, 1 before any.
    #[must_use]
    pub fn scale(&self) -> f32 {
        scale_of_code(self.scale)
    }

    /// Offers a frame's bytes received at `now` (receiver clock, seconds; the shared clock when
    /// `shared_clock`); returns what was kept, or why nothing was (then counted).
    pub fn receive(
        &mut self,
        bytes: &[u8],
        now: f64,
        shared_clock: bool,
        tuning: &ReplayTuning,
    ) -> Result<Received, Refused> {
        let reference = self.poses.newest().map(|(_, p)| p.initiator.position);
        let head = bytes.first().copied().unwrap_or(0);
        let marked = head & 0xF0 == FRAME_MARK || head & 0xF0 == SHARED_MARK;
        if reference.is_none() && marked && head & KEY == 0 {
            return Err(Refused::NoKey);
        }
        let frame = Frame::decode(bytes, reference, self.scale()).map_err(|e| {
            self.malformed += 1;
            Refused::Malformed(e)
        })?;
        let s = if frame.is_key() {
            scale_code(frame.scale)
        } else {
            self.scale
        };
        let scale = scale_of_code(s);
        let (t, sender_now) = self.sender_time(&frame, now, shared_clock);
        if self.poses.contains(t) || self.view_time.is_some_and(|v| t < v - TOO_OLD) {
            self.stale += 1;
            return Err(Refused::Stale);
        }
        let teleport = self.check_speed(&frame, t, scale, tuning)?;
        self.measure_network(&frame, t, sender_now, tuning);
        let got = self.keep(&frame, t, s, teleport);
        Ok(got)
    }

    /// Returns a frame's time and the time now on the sender's clock (estimating the offset).
    fn sender_time(&mut self, frame: &Frame, now: f64, shared_clock: bool) -> (f64, f64) {
        let now = if now.is_finite() { now } else { 0.0 };
        // Both ends on the shared clock, or else the offset between the two is estimated; a
        // change of mode (a clock synchronised late) starts the estimate over.
        let shared_clock = shared_clock && frame.shared_clock;
        if self.shared != Some(shared_clock) {
            self.shared = Some(shared_clock);
            self.clock_offset = shared_clock.then_some(0.0);
        }
        let sender_now = now - self.clock_offset.unwrap_or(0.0);
        let t = unwrap_stamp(frame.stamp, sender_now);
        if !shared_clock {
            let o = now - t;
            self.clock_offset = Some(self.clock_offset.map_or(o, |c| c.min(o)));
        }
        let sender_now = now - self.clock_offset.unwrap_or(0.0);
        (t, sender_now)
    }

    /// Refuses a root faster than the speed limit unless it teleported; returns whether it did.
    fn check_speed(
        &mut self,
        frame: &Frame,
        t: f64,
        scale: f32,
        tuning: &ReplayTuning,
    ) -> Result<bool, Refused> {
        // The speed limit, against the samples on either side in time.
        let flagged = frame.flags & TELEPORT != 0;
        let teleport = flagged
            && self.teleport_at.is_none_or(|first| {
                (t - first).abs() <= TELEPORT_REPEAT || t - first >= TELEPORT_COOLDOWN
            });
        let p = frame.pair.initiator.position;
        let (before, after) = self.poses.around(t);
        let lost_track = before.is_none_or(|(u, _)| t - u > RESYNC_AFTER);
        if !teleport && !lost_track {
            let limit = tuning.max_root_speed.max(0.0) * scale;
            // Horizontally at the speed limit; vertically as fast as anything falls.
            let too_fast = [before, after].into_iter().flatten().any(|(u, e)| {
                let dt = (t - u).abs() as f32;
                let d = p - e.initiator.position;
                Vec3::new(d.x, 0.0, d.z).length() > limit * dt + 0.01 * scale
                    || d.y.abs() > (MAX_FALL_SPEED * dt + 0.01) * scale
            });
            if too_fast {
                self.too_fast += 1;
                return Err(Refused::TooFast);
            }
        }
        if teleport
            && self
                .teleport_at
                .is_none_or(|first| t - first >= TELEPORT_COOLDOWN)
        {
            self.teleport_at = Some(t);
        }
        Ok(teleport)
    }

    /// Measures from a frame how far back the view must stay, the transit and the frames lost.
    fn measure_network(&mut self, frame: &Frame, t: f64, sender_now: f64, tuning: &ReplayTuning) {
        // How old the newest sample had grown by now: the view must stay at least that far back.
        let interval = tuning.rates.sanitized().pose_interval;
        let late = (sender_now - t).max(0.0) as f32;
        let age = match self.poses.newest() {
            Some((newest, _)) if *newest < t => (sender_now - newest).max(0.0) as f32,
            Some(_) => 0.0,
            None => late + interval,
        };
        self.need = self.need.max(age.min(5.0));
        // A corner leaves a physics tick after its stamp by design: that is not the network's
        // transit, and it falls between two scheduled frames (no loss to count either).
        if !frame.corner {
            self.transit = self.transit.max(late.min(5.0));
        }
        if let Some((newest, _)) = self.poses.newest().filter(|(n, _)| *n < t && !frame.corner) {
            // Frames that should have come between the newest and this one were lost (or are
            // late: a reordered frame is counted lost, which errs toward a longer delay).
            let missing = ((t - newest) / f64::from(interval)).round() - 1.0;
            for _ in 0..(missing.clamp(0.0, 10.0) as u32) {
                self.loss += (1.0 - self.loss) * LOSS_WEIGHT;
            }
            self.loss -= self.loss * LOSS_WEIGHT;
        }
    }

    /// Keeps a frame's pair, hand offsets, hand samples and animation; returns what was kept.
    fn keep(&mut self, frame: &Frame, t: f64, s: i8, teleport: bool) -> Received {
        let pair = frame.pair;
        self.poses.insert(
            t,
            PoseEntry {
                initiator: pair.initiator,
                recipient: pair.initiator.from_local(pair.recipient_local),
                contact_rotation: pair.contact_rotation,
                teleport,
            },
        );
        if let Some(o) = frame.offsets {
            self.offsets = Some(o);
        }
        self.scale = s;
        let mut got = Received {
            pose: true,
            ..Received::default()
        };
        for h in frame.hands() {
            let th = t - h.time;
            got.hands |= self.hands.insert(th, HandSample { time: th, ..*h });
        }
        if got.hands {
            self.hand_silence = 0.0;
            self.hand_delay = self.view_delay;
        }
        if let Some(snapshot) = frame.anim() {
            got.anim = self.anims.insert(t, *snapshot);
        }
        self.silence = 0.0;
        self.frames += 1;
        got
    }

    /// Advances the view by `dt` seconds at receiver time `now` and returns the pair to show, or
    /// `None` before the first frame. `seen` is where this peer showed each root (initiator,
    /// recipient) just before the pair started: the roots glide from there into the stream.
    pub fn render(
        &mut self,
        now: f64,
        dt: f32,
        seen: [Option<Pose>; 2],
        tuning: &ReplayTuning,
    ) -> Option<PairView> {
        self.poses.newest()?;
        let rates = tuning.rates.sanitized();
        let scale = self.scale();
        let dt = if dt.is_finite() {
            dt.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let now = if now.is_finite() { now } else { 0.0 };
        let t = self.advance_view(now, dt, &rates);
        let (raw, contact_rotation, crossed_teleport) = self.sample(t);
        let speed = self.take_corrections(t, &raw, crossed_teleport, scale);
        if crossed_teleport {
            self.correction = [Vec3::ZERO; 2];
            self.correction_rotation = [Quat::IDENTITY; 2];
            self.blend = [Vec3::ZERO; 2];
            self.blend_rotation = [Quat::IDENTITY; 2];
        }
        self.glide_in_from(&seen, &raw, scale);
        let speed = if speed.is_finite() {
            speed.min(50.0 * scale)
        } else {
            0.0
        };
        self.last_raw = Some((t, raw));
        let alpha = exp_alpha(dt, CORRECTION_TIME);
        let correction_floor = (speed * CORRECTION_SHARE + CORRECTION_FLOOR * scale) * dt;
        let blend_cap = tuning.blend_speed.max(0.0) * scale * dt;
        let mut shown = raw;
        for k in 0..2 {
            let large = (self.correction[k].length() - CORRECTION_SMALL * scale).max(0.0);
            let standing = (1.0 - speed / (CORRECTION_SLOW * scale)).max(0.0);
            let correction_cap = correction_floor
                + (large * CORRECTION_RATE).min(CORRECTION_LARGE * scale * standing) * dt;
            self.correction[k] = fade(self.correction[k], alpha, correction_cap);
            self.blend[k] = fade(self.blend[k], alpha, blend_cap);
            self.correction_rotation[k] =
                slerp_shortest(self.correction_rotation[k], Quat::IDENTITY, alpha);
            self.blend_rotation[k] = slerp_shortest(self.blend_rotation[k], Quat::IDENTITY, alpha);
            shown[k] = Pose::new(
                raw[k].position + self.correction[k] + self.blend[k],
                crate::kit::pose::unit_quat(
                    self.blend_rotation[k] * self.correction_rotation[k] * raw[k].rotation,
                ),
            );
        }
        let hands = self.hands_at(t, shown[0], contact_rotation, dt, tuning);
        Some(PairView {
            initiator: shown[0],
            recipient: shown[1],
            hands,
            time: t,
        })
    }

    /// Advances the view clock toward the delay the network needs; returns the view's time.
    fn advance_view(&mut self, now: f64, dt: f32, rates: &StreamRates) -> f64 {
        self.silence += dt;
        self.hand_silence += dt;
        self.need = (self.need - NEED_DECAY * dt).max(rates.pose_interval);
        self.transit = (self.transit - NEED_DECAY * dt).max(0.0);
        // Enough to interpolate over the longest transit seen plus the frames lost in a row at
        // the measured loss, or over the longest wait seen, whichever is longer.
        let cover = loss_cover(self.loss);
        let covered = self.transit + (f32::from(cover) + 1.0) * rates.pose_interval;
        let delay = self.need.max(covered) + DELAY_MARGIN + dt;
        let sender_now = now - self.clock_offset.unwrap_or(0.0);
        let goal = sender_now - f64::from(delay);
        // The view clock never jumps back: when the goal falls behind (frames got later), it slows
        // down (to half speed at most); it speeds up by at most CLOCK_SLEW, and jumps ahead only
        // when far behind the goal (a long pause).
        // Past the newest sample (frames lost in a row, or later than ever), the clock slows down
        // with the distance run past it and stops STRETCH seconds past it: what is shown stays
        // what the initiator showed at the declared time (a short extrapolation), instead of the
        // view time running on while the roots stand.
        let newest = self.poses.newest().map_or(goal, |(n, _)| *n);
        let t = match self.view_time {
            None => goal,
            Some(v) => {
                let next = v + f64::from(dt);
                if goal - next > CLOCK_JUMP {
                    goal.min(newest.max(v))
                } else {
                    let slew = ((goal - next) * 2.0).clamp(-CLOCK_BRAKE, CLOCK_SLEW);
                    let room = (1.0 - (v - newest) / f64::from(STRETCH)).clamp(0.0, 1.0);
                    v + f64::from(dt) * (1.0 + slew) * room
                }
            }
        };
        self.view_rate = match self.view_time {
            Some(v) if dt > 0.0 => ((t - v) / f64::from(dt)) as f32,
            _ => 1.0,
        };
        self.view_time = Some(t);
        self.view_delay = (sender_now - t) as f32;
        t
    }

    /// Turns what new samples changed about the last frame into corrections; returns the speed.
    fn take_corrections(
        &mut self,
        t: f64,
        raw: &[Pose; 2],
        crossed_teleport: bool,
        scale: f32,
    ) -> f32 {
        // What new samples changed about the last frame's moment becomes a correction to fade; the
        // roots' own speed (which sets how fast it may fade) is measured on the new samples alone.
        let mut speed = 0.0f32;
        if let Some((last_t, last)) = self.last_raw {
            let (again, _, _) = self.sample(last_t);
            let span = (t - last_t) as f32;
            if span > 1e-4 {
                speed = (raw[0].position.distance(again[0].position) / span)
                    .max(raw[1].position.distance(again[1].position) / span);
            }
            for k in 0..2 {
                let dp = last[k].position - again[k].position;
                if dp.length() < TELEPORT_DISTANCE * scale && !crossed_teleport {
                    // While a root still glides in from where this peer saw it, what the first
                    // samples correct glides in with it (at blend_speed).
                    if self.blend[k].length() > BLEND_JOIN * scale {
                        self.blend[k] += dp;
                    } else {
                        self.correction[k] += dp;
                    }
                    self.correction_rotation[k] = crate::kit::pose::unit_quat(
                        self.correction_rotation[k]
                            * last[k].rotation
                            * again[k].rotation.inverse(),
                    );
                }
            }
        }
        speed
    }

    /// On the first view, lets each root glide in from where this peer saw it.
    fn glide_in_from(&mut self, seen: &[Option<Pose>; 2], raw: &[Pose; 2], scale: f32) {
        if !self.started {
            self.started = true;
            for k in 0..2 {
                if let Some(s) = seen[k].filter(|s| s.is_finite()) {
                    let d = s.position - raw[k].position;
                    if d.length() < 100.0 * scale {
                        self.blend[k] = d;
                        self.blend_rotation[k] = crate::kit::pose::unit_quat(
                            s.rotation * crate::kit::pose::ensure_unit(raw[k].rotation).conjugate(),
                        );
                    }
                }
            }
        }
    }

    /// Returns both roots and the contact rotation at sender time `t`, and whether a teleport lies
    /// between the last frame's moment and `t`.
    fn sample(&self, t: f64) -> ([Pose; 2], Quat, bool) {
        let scale = self.scale();
        let crossed = self.last_raw.is_some_and(|(last_t, _)| {
            self.poses
                .slice()
                .iter()
                .any(|(u, e)| e.teleport && *u > last_t && *u <= t)
        });
        let (a, b) = self.poses.around(t);
        let pick = |e: &PoseEntry| ([e.initiator, e.recipient], e.contact_rotation);
        let (roots, rotation) = match (a, b) {
            (Some((ta, ea)), Some((tb, eb))) => {
                if eb.teleport {
                    pick(ea)
                } else {
                    let u = ((t - ta) / (tb - ta)).clamp(0.0, 1.0) as f32;
                    (
                        [
                            Pose::lerp_slerp(ea.initiator, eb.initiator, u),
                            Pose::lerp_slerp(ea.recipient, eb.recipient, u),
                        ],
                        slerp_shortest(ea.contact_rotation, eb.contact_rotation, u),
                    )
                }
            }
            (None, Some((_, eb))) => pick(eb),
            (Some((ta, ea)), None) => {
                // Past the newest sample: the initiator carries on at its last velocity (slowing as
                // the last samples slowed), for at most MAX_EXTRAPOLATION; the recipient keeps its
                // place beside it. The recipient's own motion relative to the initiator is the
                // follow spring settling toward its offset: carrying that on runs past the offset
                // (half a metre after a quick glide in), holding it never does.
                let (mut roots, rotation) = pick(ea);
                let s = self.poses.slice();
                let before = |back: usize| s.len().checked_sub(back).map(|i| &s[i]);
                if let (false, Some((tp, ep))) = (ea.teleport, before(2)) {
                    let span = (ta - tp) as f32;
                    if span > 1e-4 && span <= MAX_VELOCITY_SPAN {
                        let x = ((t - ta) as f32).min(MAX_EXTRAPOLATION);
                        let v = (ea.initiator.position - ep.initiator.position) / span;
                        // The speed before, for the deceleration.
                        let v0 = before(3).and_then(|(tq, eq)| {
                            let span0 = (tp - tq) as f32;
                            (span0 > 1e-4 && span0 <= MAX_VELOCITY_SPAN).then(|| {
                                (ep.initiator.position - eq.initiator.position).length() / span0
                            })
                        });
                        let speed = v.length();
                        if speed.is_finite()
                            && speed * span < TELEPORT_DISTANCE * scale
                            && speed >= 1e-6 * scale
                        {
                            let decel = v0.map_or(0.0, |v0| ((v0 - speed) / span).max(0.0));
                            let run = if decel > 0.0 {
                                let x = x.min(speed / decel);
                                speed * x - 0.5 * decel * x * x
                            } else {
                                speed * x
                            };
                            let carried = v * (run / speed);
                            roots[0].position += carried;
                            roots[1].position += carried;
                        }
                    }
                }
                (roots, rotation)
            }
            (None, None) => ([Pose::IDENTITY; 2], Quat::IDENTITY),
        };
        (roots, rotation, crossed)
    }

    fn hands_at(
        &mut self,
        t: f64,
        initiator: Pose,
        contact_rotation: Quat,
        dt: f32,
        tuning: &ReplayTuning,
    ) -> Option<RemoteHands> {
        let offsets = self.offsets?;
        let (a, b) = self.hands.around(t);
        let h = match (a, b) {
            (Some((ta, ha)), Some((tb, hb))) => {
                let u = ((t - ta) / (tb - ta)).clamp(0.0, 1.0) as f32;
                HandSample {
                    contact: ha.contact.lerp(hb.contact, u),
                    weight: ha.weight + (hb.weight - ha.weight) * u,
                    ..*ha
                }
            }
            (Some((_, h)), None) | (None, Some((_, h))) => *h,
            (None, None) => return None,
        };
        // Silent once the view has run ik_timeout past the newest hand sample, or once none has
        // arrived for ik_timeout plus the view's delay then: frames that arrive in bursts (a busy
        // network or a starved process) keep the hands as long as the view still has samples.
        let dry = self
            .hands
            .newest()
            .map_or(f64::INFINITY, |&(newest, _)| t - newest);
        let late = self.hand_silence > tuning.ik_timeout + self.hand_delay;
        let live = if late || dry > f64::from(tuning.ik_timeout) {
            0.0
        } else {
            1.0
        };
        let rate = if tuning.ik_fade_time > 0.0 {
            dt / tuning.ik_fade_time
        } else {
            1.0
        };
        self.fade = move_towards(self.fade, live, rate);
        let contact = Pose::new(h.contact, contact_rotation);
        Some(RemoteHands {
            initiator_hand: initiator.from_local(contact.from_local(offsets.initiator)),
            recipient_hand: initiator.from_local(contact.from_local(offsets.recipient)),
            weight: h.weight * self.fade,
            arm_override: h.arm_override,
        })
    }

    /// Returns the initiator's animation at the current view time (the same clock as the roots),
    /// or `None` before the first snapshot at or before it: the values whose bit is set in
    /// `continuous` (floats and blend positions; the first 32) interpolated between the snapshots
    /// around the view time, the others held; nodes, travel targets and one-shots of the snapshot
    /// at or before it; play positions interpolated, or advanced with the view time past the newest
    /// snapshot.
    pub fn animation(&mut self, continuous: u32) -> Option<&AnimSnapshot> {
        let t = self.view_time?;
        let (a, b) = self.anims.around(t);
        let (ta, before) = a?;
        let elapsed = (t - ta) as f32;
        if let Some((tb, after)) = b {
            let s = ((t - ta) / (tb - ta).max(1e-6)) as f32;
            self.view_anim = before.at(Some(after), s, elapsed, continuous);
            return Some(&self.view_anim);
        }
        // Past the newest snapshot (values only go out every few frames, and one may be lost):
        // values carry on along the last two snapshots' slope for at most MAX_EXTRAPOLATION.
        let s = self.anims.slice();
        let previous = s.len().checked_sub(2).map(|i| s[i]);
        let ahead = match previous {
            Some((tp, p)) if tp < *ta && p.value_count == before.value_count => {
                let mut next = *before;
                for (v, (x, y)) in next.values[..usize::from(before.value_count)]
                    .iter_mut()
                    .zip(before.values().iter().zip(p.values()))
                {
                    *v = x + (x - y);
                }
                // Positions run on with time, not along the slope.
                next.machine_count = 0;
                next.player = None;
                let span = (ta - tp) as f32;
                Some((next, elapsed.min(MAX_EXTRAPOLATION) / span))
            }
            _ => None,
        };
        self.view_anim = match ahead {
            Some((next, s)) => before.at(Some(&next), s, elapsed, continuous),
            None => before.at(None, 0.0, elapsed, continuous),
        };
        Some(&self.view_anim)
    }

    /// Returns how far (m) a root still is from the stream while it glides in at a pair's start.
    #[must_use]
    pub fn blend_remaining(&self) -> f32 {
        self.blend[0].length().max(self.blend[1].length())
    }

    /// Returns the age (s) of what [`PairReplay::render`] showed last: the view delay.
    #[must_use]
    pub fn view_delay(&self) -> f32 {
        self.view_delay
    }

    /// Returns how fast the view clock ran at the last [`PairReplay::render`]: view seconds per
    /// second (1 on a steady stream; 0.5 to 1.05 while it follows a changing delay, down to 0 as
    /// it comes to a stop past the newest sample, more when it jumps after a long pause).
    /// Animations shown at the view time advance at this rate.
    #[must_use]
    pub fn view_rate(&self) -> f32 {
        if self.view_time.is_some() {
            self.view_rate
        } else {
            1.0
        }
    }

    /// Returns the sender-clock time shown last (the shared clock's when it is shared).
    #[must_use]
    pub fn view_time(&self) -> Option<f64> {
        self.view_time
    }

    /// Returns the seconds since the last accepted frame.
    #[must_use]
    pub fn silence(&self) -> f32 {
        self.silence
    }

    /// Returns whether any frame was accepted.
    #[must_use]
    pub fn has_pose(&self) -> bool {
        self.poses.newest().is_some()
    }

    /// Returns how many frames were accepted.
    #[must_use]
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Returns how many frames were dropped as duplicate or too old.
    #[must_use]
    pub fn stale(&self) -> u32 {
        self.stale
    }

    /// Returns how many frames were dropped as malformed.
    #[must_use]
    pub fn malformed(&self) -> u32 {
        self.malformed
    }

    /// Returns how many frames were refused for moving the initiator too fast.
    #[must_use]
    pub fn too_fast(&self) -> u32 {
        self.too_fast
    }

    /// Forgets the pair (counters too): the next frame starts afresh.
    pub fn reset(&mut self) {
        *self = Self::default();
        self.poses.clear();
    }
}

/// How many frames lost in a row the delay covers at loss fraction `loss`: those that happen more
/// often than [`LOSS_ODDS`].
fn loss_cover(loss: f32) -> u8 {
    let mut odds = loss.clamp(0.0, 1.0);
    let mut cover = 0;
    while odds > LOSS_ODDS && cover < MAX_LOSS_COVER {
        cover += 1;
        odds *= loss;
    }
    cover
}

/// Returns `v` shortened by the exponential step `alpha`, but by no more than `cap`.
fn fade(v: Vec3, alpha: f32, cap: f32) -> Vec3 {
    let len = v.length();
    if !len.is_finite() {
        return Vec3::ZERO;
    }
    let cut = (len * alpha).min(cap.max(0.0));
    if len <= 1e-6 || cut >= len {
        Vec3::ZERO
    } else {
        v * ((len - cut) / len)
    }
}

/// Returns the quaternion angle between two rotations in radians (test helper and diagnostics).
#[must_use]
pub fn rotation_error(a: Quat, b: Quat) -> f32 {
    let d = a.dot(b).abs().min(1.0);
    2.0 * d.acos()
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
