//! Estimating the server's clock from ping round trips.
//!
//! A client stamps a ping with its own time; the server answers with the client's stamp and its own
//! time. Each answer gives a round-trip time and an offset estimate `server + rtt/2 − now`. Samples
//! with the smallest round trip carry the least queueing noise, so the estimate keeps the offset of the
//! fastest of the last [`ClockSync::WINDOW`] samples.

/// Round-trip and offset estimate toward a server clock. All times in seconds.
#[derive(Clone, Debug, Default)]
pub struct ClockSync {
    samples: [(f64, f64); Self::WINDOW],
    count: usize,
    next: usize,
    rejected: u32,
}

impl ClockSync {
    /// How many recent samples the estimate is chosen from.
    pub const WINDOW: usize = 8;
    /// Answers whose round trip exceeds this many seconds are rejected as bogus.
    pub const MAX_RTT: f64 = 10.0;

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
        Some(rtt)
    }

    /// Returns the best (smallest) recent round-trip time in seconds, or `None` before the first sample.
    #[must_use]
    pub fn rtt(&self) -> Option<f64> {
        self.best().map(|(rtt, _)| rtt)
    }

    /// Returns the estimated `server − client` clock offset in seconds (0 before the first sample).
    #[must_use]
    pub fn offset(&self) -> f64 {
        self.best().map_or(0.0, |(_, offset)| offset)
    }

    /// Returns the estimated server time for the client time `now`.
    #[must_use]
    pub fn server_time(&self, now: f64) -> f64 {
        now + self.offset()
    }

    /// Returns how many answers were rejected as impossible.
    #[must_use]
    pub fn rejected(&self) -> u32 {
        self.rejected
    }

    fn best(&self) -> Option<(f64, f64)> {
        self.samples[..self.count]
            .iter()
            .copied()
            .min_by(|a, b| a.0.total_cmp(&b.0))
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
}
