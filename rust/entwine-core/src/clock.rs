//! Estimating the server's clock from ping round trips.
//!
//! A client stamps a ping with its own time; the server answers with the client's stamp and its own
//! time. Each answer gives a round-trip time and an offset estimate `server + rtt/2 − now`. Samples
//! with the smallest round trip carry the least queueing noise, so the estimate keeps the offset of the
//! fastest of the last [`ClockSync::WINDOW`] samples.
//!
//! The clock a game reads ([`ClockSync::server_time`]) follows that estimate smoothly: after the
//! first [`ClockSync::SETTLE`] answers it moves toward each new estimate at most [`ClockSync::SLEW`]
//! seconds per second (it jumps only when more than [`ClockSync::SNAP`] off). On a jittery link the
//! fastest sample changes as the window slides and the estimate jumps by tens of milliseconds; things
//! stamped with a jumping clock (a pair's samples) would seem to speed up and slow down.

/// Seconds between a client's clock pings (an `EntwineNetClock`'s `ping_interval`; 0: off).
#[rustfmt::skip]
pub const PING_INTERVAL: crate::kit::param::Param = crate::kit::param::Param::new("ping_interval", crate::kit::param::Unit::Seconds, (0.0, 10.0), 1.0, "seconds between a client's pings (0: only ping_server())");

/// Pings the server answers per client: a burst of 20, then 20 per second (a client pinging
/// faster has the excess dropped and counted).
pub const PING_LIMIT: crate::kit::RateLimit = crate::kit::RateLimit::per_second(20.0);
/// Bytes of a ping: the client's stamp (f64).
pub const PING_BYTES: usize = 8;
/// Bytes of an answer: the client's stamp and the server's time (two f64).
pub const PONG_BYTES: usize = 16;

/// Returns the answer to a ping with the client's `stamp`, at server time `server`.
#[must_use]
pub fn encode_pong(stamp: f64, server: f64) -> [u8; PONG_BYTES] {
    let mut out = [0u8; PONG_BYTES];
    out[..8].copy_from_slice(&stamp.to_le_bytes());
    out[8..].copy_from_slice(&server.to_le_bytes());
    out
}

/// Reads a ping's stamp, or `None` for any other length.
#[must_use]
pub fn decode_ping(bytes: &[u8]) -> Option<f64> {
    <[u8; PING_BYTES]>::try_from(bytes)
        .ok()
        .map(f64::from_le_bytes)
}

/// Reads an answer: `(client stamp, server time)`, or `None` for any other length.
#[must_use]
pub fn decode_pong(bytes: &[u8]) -> Option<(f64, f64)> {
    let b = <[u8; PONG_BYTES]>::try_from(bytes).ok()?;
    let (stamp, server) = b.split_at(8);
    Some((
        f64::from_le_bytes(stamp.try_into().ok()?),
        f64::from_le_bytes(server.try_into().ok()?),
    ))
}

/// Round-trip and offset estimate toward a server clock. All times in seconds.
#[derive(Clone, Debug, Default)]
pub struct ClockSync {
    samples: [(f64, f64); Self::WINDOW],
    count: usize,
    next: usize,
    rejected: u32,
    answers: u32,
    /// The smoothed offset: its value at a client time, and the estimate it moves toward.
    anchor: (f64, f64),
    target: f64,
}

impl ClockSync {
    /// How many recent samples the estimate is chosen from.
    pub const WINDOW: usize = 8;
    /// Answers whose round trip exceeds this many seconds are rejected as bogus.
    pub const MAX_RTT: f64 = 10.0;
    /// The first answers set the clock at once.
    pub const SETTLE: u32 = 4;
    /// After that, the clock moves toward the estimate by at most this many seconds per second…
    pub const SLEW: f64 = 0.02;
    /// …unless it is more than this many seconds off.
    pub const SNAP: f64 = 0.25;

    /// Records a pong: `sent` is the client time stamped on the ping, `server` the server's time in the
    /// answer, `now` the client time at arrival. Returns the round-trip time, or `None` when the answer is
    /// impossible (non-finite, from the future, or older than [`Self::MAX_RTT`]) and was rejected.
    pub fn record(&mut self, sent: f64, server: f64, now: f64) -> Option<f64> {
        let rtt = now - sent;
        let finite = sent.is_finite() && server.is_finite() && now.is_finite();
        if !finite || !(0.0..=Self::MAX_RTT).contains(&rtt) {
            self.rejected += 1;
            return None;
        }
        self.samples[self.next] = (rtt, server + rtt * 0.5 - now);
        self.next = (self.next + 1) % Self::WINDOW;
        self.count = (self.count + 1).min(Self::WINDOW);
        self.answers = self.answers.saturating_add(1);
        let estimate = self.offset();
        let shown = self.smoothed(now);
        if self.answers <= Self::SETTLE || (estimate - shown).abs() > Self::SNAP {
            self.anchor = (now, estimate);
        } else {
            self.anchor = (now, shown);
        }
        self.target = estimate;
        Some(rtt)
    }

    /// The smoothed offset at client time `now`.
    fn smoothed(&self, now: f64) -> f64 {
        let (at, offset) = self.anchor;
        let room = Self::SLEW * (now - at).max(0.0);
        offset + (self.target - offset).clamp(-room, room)
    }

    /// Returns the best (smallest) recent round-trip time in seconds, or `None` before the first sample.
    #[must_use]
    pub fn rtt(&self) -> Option<f64> {
        self.best().map(|(rtt, _)| rtt)
    }

    /// Returns the estimated `server − client` clock offset in seconds (0 before the first sample):
    /// the fastest recent sample's, which [`ClockSync::server_time`] follows smoothly.
    #[must_use]
    pub fn offset(&self) -> f64 {
        self.best().map_or(0.0, |(_, offset)| offset)
    }

    /// Returns the server time for the client time `now`: the estimate, followed smoothly (see the
    /// module docs), so it never jumps back after the first answers unless far off.
    #[must_use]
    pub fn server_time(&self, now: f64) -> f64 {
        if self.answers == 0 {
            return now;
        }
        now + self.smoothed(now)
    }

    /// Returns how many answers were rejected as impossible.
    #[must_use]
    pub fn rejected(&self) -> u32 {
        self.rejected
    }

    /// Returns the best recent round trip in milliseconds, or -1 before the first answer (what
    /// `NetClock.get_rtt_ms` shows).
    #[must_use]
    pub fn rtt_ms(&self) -> f64 {
        self.rtt().map_or(-1.0, |rtt| rtt * 1000.0)
    }

    /// [`Self::record`], the round trip in milliseconds (what `NetClock.synced` carries).
    pub fn record_ms(&mut self, sent: f64, server: f64, now: f64) -> Option<f64> {
        self.record(sent, server, now).map(|rtt| rtt * 1000.0)
    }

    /// Returns whether [`Self::server_time`] is the server's clock: always on the server (and
    /// without a network, `is_client` false), on a client once an answer arrived.
    #[must_use]
    pub fn is_synced(&self, is_client: bool) -> bool {
        !is_client || self.rtt().is_some()
    }

    fn best(&self) -> Option<(f64, f64)> {
        self.samples[..self.count]
            .iter()
            .copied()
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }
}

/// When a client pings the server: once every `interval` seconds of frame time.
#[derive(Clone, Copy, Debug, Default)]
pub struct PingTimer {
    since: f64,
}

impl PingTimer {
    /// Advances the timer by a frame of `delta` seconds and returns whether a ping is due now.
    /// Only a client with an `interval` > 0 pings (0 turns automatic pinging off); the time counts
    /// only then, and restarts at each ping.
    pub fn due(&mut self, delta: f64, interval: f64, is_client: bool) -> bool {
        if !is_client || interval.is_nan() || interval <= 0.0 {
            return false;
        }
        self.since += delta;
        if self.since >= interval {
            self.since = 0.0;
            return true;
        }
        false
    }
}

/// Stamps a stream sampled once per physics tick: each tick's time is the last one plus the tick's
/// `dt` (give or take up to [`TickClock::CATCH_UP`] of it, toward the clock it reads), held within
/// [`TickClock::MAX_LAG`] behind and [`TickClock::MAX_LEAD`] ahead of that clock.
///
/// When a game falls behind, Godot runs several physics ticks back to back in one rendered frame;
/// the clock reads almost the same time for each while the poses they produce are a tick apart. A
/// stream stamped with the clock's reading would tell receivers the character moved several ticks'
/// distance in no time (and a speed limit would refuse it); stamped here, the ticks stay a tick
/// apart, and a game that runs slower than real time for longer follows the clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct TickClock {
    last: Option<f64>,
}

impl TickClock {
    /// Longest a stamp may trail the clock (s): a burst of up to nine 60 Hz ticks keeps its spacing.
    pub const MAX_LAG: f64 = 0.15;
    /// Furthest a stamp may run ahead of the clock (s).
    pub const MAX_LEAD: f64 = 0.02;
    /// Share of a tick by which a stamp off the clock closes on it per tick, so that the lag a stall
    /// left (Godot drops the ticks beyond `max_physics_steps_per_frame`), or a lead, does not stay.
    pub const CATCH_UP: f64 = 0.1;

    /// Returns the stamp of a physics tick of `dt` seconds at clock reading `now`.
    pub fn tick(&mut self, now: f64, dt: f32) -> f64 {
        if !now.is_finite() {
            return self.last.unwrap_or(0.0);
        }
        let dt = if dt.is_finite() {
            f64::from(dt.clamp(0.0, 1.0))
        } else {
            0.0
        };
        let t = match self.last {
            Some(last) => {
                let gap = (now - (last + dt)).clamp(-Self::CATCH_UP * dt, Self::CATCH_UP * dt);
                (last + dt + gap).clamp(now - Self::MAX_LAG, now + Self::MAX_LEAD)
            }
            None => now,
        };
        self.last = Some(t);
        t
    }

    /// Forgets the last stamp: the next tick takes the clock's reading.
    pub fn reset(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_link_gives_exact_offset() {
        let mut c = ClockSync::default();
        // Server clock runs 100 s ahead; 40 ms each way.
        let rtt = c.record(10.0, 110.04, 10.08).unwrap();
        assert!((rtt - 0.08).abs() < 1e-12);
        assert!((c.offset() - 100.0).abs() < 1e-9);
        assert!((c.server_time(20.0) - 120.0).abs() < 1e-9);
    }

    #[test]
    fn keeps_the_fastest_sample() {
        let mut c = ClockSync::default();
        c.record(0.0, 100.05, 0.1); // 50 ms each way: offset 100.0
        c.record(1.0, 101.4, 1.5); // a slow, asymmetric sample: offset 100.15
        assert!((c.rtt().unwrap() - 0.1).abs() < 1e-12);
        assert!((c.offset() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut c = ClockSync::default();
        c.record(0.0, 50.0, 0.01);
        for i in 0..ClockSync::WINDOW {
            let t = 1.0 + i as f64;
            c.record(t, t + 200.05, t + 0.1);
        }
        assert!((c.offset() - 200.0).abs() < 1e-9);
    }

    #[test]
    fn the_clock_follows_a_changed_estimate_smoothly() {
        let mut c = ClockSync::default();
        for i in 0..ClockSync::SETTLE {
            let t = f64::from(i);
            c.record(t, t + 100.05, t + 0.1); // offset 100.0
        }
        assert!((c.server_time(10.0) - 110.0).abs() < 1e-9);
        // The fastest sample now says 100.04 (a jittery link): the clock moves there at 2 %.
        let t = 10.0;
        c.record(t, t + 100.04 + 0.045, t + 0.09);
        assert!((c.offset() - 100.04).abs() < 1e-9);
        let mut last = c.server_time(t);
        for k in 1..=300 {
            let now = t + f64::from(k) * 0.01;
            let s = c.server_time(now);
            let rate = (s - last) / 0.01;
            assert!((0.98 - 1e-9..=1.02 + 1e-9).contains(&rate), "rate {rate}");
            last = s;
        }
        assert!(
            (c.server_time(13.0) - 113.04).abs() < 1e-9,
            "there after 2 s"
        );
        // Far off (a server restart): it jumps.
        c.record(20.0, 520.05, 20.1);
        c.record(21.0, 521.05, 21.1);
        for i in 0..ClockSync::WINDOW {
            let t = 22.0 + i as f64;
            c.record(t, t + 500.05, t + 0.1);
        }
        assert!((c.server_time(40.0) - 540.0).abs() < 1e-6);
    }

    #[test]
    fn rejects_impossible_answers() {
        let mut c = ClockSync::default();
        assert_eq!(c.record(5.0, 1.0, 4.0), None); // from the future
        assert_eq!(c.record(f64::NAN, 1.0, 4.0), None);
        assert_eq!(c.record(0.0, f64::INFINITY, 1.0), None);
        assert_eq!(c.record(0.0, 1.0, 60.0), None); // far too old
        assert_eq!(c.rejected(), 4);
        assert_eq!(c.rtt(), None);
        assert_eq!(c.offset(), 0.0);
    }

    #[test]
    fn the_glue_reads_milliseconds_and_whether_it_is_synced() {
        let mut c = ClockSync::default();
        assert_eq!(c.rtt_ms(), -1.0, "no answer yet");
        assert!(c.is_synced(false), "the server is its own clock");
        assert!(!c.is_synced(true), "a client waits for an answer");
        let ms = c.record_ms(10.0, 110.04, 10.08).unwrap();
        assert!((ms - 80.0).abs() < 1e-9);
        assert!((c.rtt_ms() - 80.0).abs() < 1e-9);
        assert!(c.is_synced(true));
        assert_eq!(c.record_ms(5.0, 1.0, 4.0), None, "from the future");
        assert_eq!(c.rejected(), 1);
    }

    #[test]
    fn a_client_pings_every_interval_and_the_server_never() {
        let mut t = PingTimer::default();
        let pings = |t: &mut PingTimer, frames: usize, interval: f64, client: bool| {
            (0..frames)
                .filter(|_| t.due(0.25, interval, client))
                .count()
        };
        assert_eq!(pings(&mut t, 12, 1.0, true), 3, "every fourth frame");
        assert_eq!(pings(&mut t, 12, 1.0, false), 0, "not on the server");
        assert_eq!(pings(&mut t, 12, 0.0, true), 0, "0 turns it off");
        assert_eq!(pings(&mut t, 12, f64::NAN, true), 0);
        assert_eq!(pings(&mut t, 3, 0.5, true), 1, "a shorter interval");
    }

    #[test]
    fn ticks_run_back_to_back_stay_a_tick_apart() {
        let dt = 1.0 / 60.0;
        let mut c = TickClock::default();
        let mut now = 10.0;
        assert_eq!(c.tick(now, dt), 10.0);
        // Steady 60 Hz: the clock's own times.
        for _ in 0..10 {
            now += f64::from(dt);
            assert!((c.tick(now, dt) - now).abs() < 1e-9);
        }
        // A stall of five ticks' time, then five ticks at (nearly) the same reading: each is a
        // tick (give or take a tenth) after the one before, and the last is near the reading.
        now += 5.0 * f64::from(dt);
        let mut last = c.tick(now - 4.0 * f64::from(dt), dt);
        for k in 1..5 {
            let t = c.tick(now + 1e-5 * f64::from(k), dt);
            let step = (t - last) / f64::from(dt);
            assert!(
                (0.9 - 1e-9..=1.1 + 1e-9).contains(&step),
                "tick {k}: {step} ticks"
            );
            last = t;
        }
        assert!((last - now).abs() <= 0.5 * f64::from(dt), "{}", last - now);
        // A stall that dropped ticks: the lag it leaves closes at a tenth of a tick per tick.
        now += 0.5;
        let t0 = c.tick(now, dt);
        assert!((now - t0 - TickClock::MAX_LAG).abs() < 1e-9);
        for _ in 0..100 {
            now += f64::from(dt);
            last = c.tick(now, dt);
        }
        assert!((last - now).abs() < 1e-9, "caught up: {}", now - last);
        // A game running at half speed for a second: the stamps follow the clock, at most
        // MAX_LAG behind, never ahead by more than MAX_LEAD.
        for _ in 0..60 {
            now += 2.0 * f64::from(dt);
            let t = c.tick(now, dt);
            assert!(t <= now + TickClock::MAX_LEAD && t >= now - TickClock::MAX_LAG - 1e-9);
        }
        // A clock that jumps back (resynchronised): the stamp is held within reach of it.
        now -= 1.0;
        let t = c.tick(now, dt);
        assert!(t <= now + TickClock::MAX_LEAD + 1e-9);
        // Bad input.
        let before = c.tick(now, dt);
        assert_eq!(c.tick(f64::NAN, dt), before);
        assert!(c.tick(now, f32::NAN).is_finite());
        c.reset();
        assert_eq!(c.tick(3.0, dt), 3.0);
    }

    #[test]
    fn pings_and_answers_read_back_and_nothing_else_does() {
        assert_eq!(decode_ping(&2.5f64.to_le_bytes()), Some(2.5));
        assert_eq!(decode_ping(&[0; 7]), None);
        assert_eq!(decode_ping(&[0; 9]), None);
        assert_eq!(decode_pong(&encode_pong(1.25, -3.0)), Some((1.25, -3.0)));
        assert_eq!(decode_pong(&[0; 15]), None);
        assert_eq!(decode_pong(&[]), None);
    }
}
