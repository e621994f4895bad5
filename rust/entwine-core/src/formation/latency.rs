//! Per-agent actuation latency, measured from what the agents do: the server works out each
//! agent's delay from its motion and tunes that agent's PID with it.
//!
//! An external agent acts on a commanded velocity some time after it was sent (network, animation,
//! the game's own movement code). Each tick, [`LatencyEstimator::observe`] compares the agent's
//! observed velocity — its displacement since the previous tick — with every command of the last
//! [`LAG_CANDIDATES`] ticks, and keeps, per candidate lag, an exponentially weighted mean of the
//! squared mismatch. The lag whose commands best explain the motion wins, refined to a fraction of
//! a tick by a parabola through its neighbours.
//!
//! Only ticks that carry information count: the weight of a tick is how much the recent commands
//! differ from one another (a squad standing still, or marching at a constant velocity, says
//! nothing about latency, and does not wash out what was learnt). Position noise adds the same
//! mismatch to every candidate, and a lost update (the body keeps its previous command for a tick)
//! is one tick's error, clipped so that it cannot outweigh the ticks around it. An agent is *measured* once enough
//! informative ticks were seen; until then the assumed latency stands.

use glam::Vec2;

/// Candidate lags, in ticks: 0 ..= 60 (one second at 60 Hz).
pub const LAG_CANDIDATES: usize = 61;
/// Spread of the commands in the window (m/s) at which a tick counts fully.
const FULL_SPREAD: f32 = 0.5;
/// Forgetting rate per fully informative tick (a memory of about 1.5 s of movement).
const RATE: f32 = 1.0 / 90.0;
/// Largest mismatch (m/s) one tick can add: a lost update or a shove during a sharp change of
/// command is one bad tick, and must not outweigh a second of good ones.
const CLIP: f32 = 0.25;
/// Informative ticks needed before an estimate replaces the assumed latency.
const MIN_INFO: f32 = 10.0;

/// Per-agent latency estimates for a squad. Allocates only in [`LatencyEstimator::resize`].
#[derive(Clone, Debug, Default)]
pub struct LatencyEstimator {
    /// Per agent × candidate: weighted mean squared velocity mismatch, (m/s)².
    err: Vec<f32>,
    /// Per agent: informative ticks seen (weighted, capped).
    info: Vec<f32>,
    /// Per agent: position at the last tick.
    last: Vec<Vec2>,
    /// Per agent: `last` is a sensed position from the previous tick.
    ready: Vec<bool>,
    /// Per agent: a position was sensed since the last tick.
    fresh: Vec<bool>,
    /// Per agent: the estimate, s.
    estimate: Vec<f32>,
    assumed: f32,
}

impl LatencyEstimator {
    /// Sizes the estimator for `n` agents and forgets everything: each agent's latency is
    /// `assumed` (s) until measured.
    pub fn resize(&mut self, n: usize, assumed: f32) {
        self.err.clear();
        self.err.resize(n * LAG_CANDIDATES, 0.0);
        self.info.clear();
        self.info.resize(n, 0.0);
        self.last.clear();
        self.last.resize(n, Vec2::ZERO);
        self.ready.clear();
        self.ready.resize(n, false);
        self.fresh.clear();
        self.fresh.resize(n, false);
        self.assumed = if assumed.is_finite() {
            assumed.max(0.0)
        } else {
            0.0
        };
        self.estimate.clear();
        self.estimate.resize(n, self.assumed);
    }

    /// Forgets agent `i`'s last position (it was teleported): the next tick observes nothing.
    pub fn break_track(&mut self, i: usize) {
        if let Some(r) = self.ready.get_mut(i) {
            *r = false;
        }
        if let Some(f) = self.fresh.get_mut(i) {
            *f = false;
        }
    }

    /// Notes that agent `i`'s position was sensed for the coming tick.
    pub fn sensed(&mut self, i: usize) {
        if let Some(f) = self.fresh.get_mut(i) {
            *f = true;
        }
    }

    /// One tick of agent `i`, before its new command: `pos` is where it stands now, `command(k)`
    /// the velocity commanded `k + 1` ticks ago (k in 0..[`LAG_CANDIDATES`]), `dt` the tick.
    /// Updates the estimate when the agent was sensed this tick and the last.
    pub fn observe(&mut self, i: usize, pos: Vec2, dt: f32, command: impl Fn(usize) -> Vec2) {
        if i >= self.info.len() || !dt.is_finite() || dt <= 0.0 {
            return;
        }
        let fresh = core::mem::replace(&mut self.fresh[i], false);
        let was_ready = self.ready[i];
        let last = self.last[i];
        self.last[i] = pos;
        self.ready[i] = fresh;
        if !fresh || !was_ready {
            return;
        }
        let seen = (pos - last) / dt;
        if !seen.is_finite() {
            return;
        }
        let newest = command(0);
        let mut spread = 0.0f32;
        for k in 1..LAG_CANDIDATES {
            spread = spread.max(command(k).distance_squared(newest));
        }
        // Information grows with the square of the signal against the noise.
        let w = (spread / (FULL_SPREAD * FULL_SPREAD)).min(1.0);
        if w.is_nan() || w <= 1e-4 {
            return;
        }
        let a = RATE * w;
        let row = &mut self.err[i * LAG_CANDIDATES..(i + 1) * LAG_CANDIDATES];
        for (k, e) in row.iter_mut().enumerate() {
            let m = seen.distance_squared(command(k)).min(CLIP * CLIP);
            *e += a * (m - *e);
        }
        let best = argmin(row);
        self.info[i] = (self.info[i] + w).min(1.0e4);
        if self.info[i] >= MIN_INFO {
            let mut lag = best as f32;
            if best > 0 && best + 1 < LAG_CANDIDATES {
                let (l, c, r) = (row[best - 1], row[best], row[best + 1]);
                let curve = l - 2.0 * c + r;
                if curve > 1e-12 {
                    lag += (0.5 * (l - r) / curve).clamp(-0.5, 0.5);
                }
            }
            self.estimate[i] = lag * dt;
        }
    }

    /// Returns agent `i`'s latency, s: measured, or the assumed one until then.
    #[must_use]
    pub fn latency(&self, i: usize) -> f32 {
        self.estimate.get(i).copied().unwrap_or(self.assumed)
    }

    /// Returns whether agent `i`'s latency has been measured (enough informative ticks).
    #[must_use]
    pub fn measured(&self, i: usize) -> bool {
        self.info.get(i).is_some_and(|x| *x >= MIN_INFO)
    }
}

fn argmin(row: &[f32]) -> usize {
    let mut best = 0;
    for (k, e) in row.iter().enumerate() {
        if *e < row[best] {
            best = k;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::rng::Rng;

    /// One agent whose motion follows its commands `lag` ticks (fractional: interpolated) late,
    /// with 1 mm of position noise per tick and a fraction `lost` of updates lost (the body keeps
    /// its previous command). Returns the estimate after `ticks` ticks of commands that change
    /// like a squad's (smooth moves to random points, pauses between).
    fn run(lag: f32, lost: f32, ticks: usize, seed: u64) -> (f32, bool) {
        let mut rng = Rng::new(seed);
        let mut est = LatencyEstimator::default();
        est.resize(1, 0.12);
        let dt = 1.0 / 60.0;
        let mut hist = [Vec2::ZERO; LAG_CANDIDATES];
        let mut head = 0usize; // hist[head] is written next
        let (mut pos, mut applied) = (Vec2::ZERO, Vec2::ZERO);
        let (mut from, mut to, mut t) = (Vec2::ZERO, rng.vec2(), 0.0f32);
        for _ in 0..ticks {
            est.sensed(0);
            let h = &hist;
            est.observe(0, pos, dt, |k| {
                h[(head + LAG_CANDIDATES - 1 - k) % LAG_CANDIDATES]
            });
            // A smoothstep move of about a metre in one second, then half a second still.
            t += dt;
            if t > 1.5 {
                (from, to, t) = (to, to + rng.vec2(), 0.0);
            }
            let u = (t / 1.0).min(1.0);
            let cmd = (to - from) * 6.0 * u * (1.0 - u);
            hist[head] = cmd;
            head = (head + 1) % LAG_CANDIDATES;
            // The body: the command `lag` ticks old (0: this one), unless this update is lost.
            let (whole, frac) = (lag.floor() as usize, lag.fract());
            let at = |m: usize| hist[(head + LAG_CANDIDATES - 1 - m) % LAG_CANDIDATES];
            let v = at(whole).lerp(at(whole + 1), frac);
            if (rng.signed() + 1.0) * 0.5 >= lost {
                applied = v;
            }
            pos += applied * dt + Vec2::new(rng.gauss(), rng.gauss()) * 0.001;
        }
        (est.latency(0), est.measured(0))
    }

    #[test]
    fn measures_latency_from_motion_despite_noise_and_loss() {
        for (seed, lag) in [0.0f32, 1.0, 3.0, 7.2, 12.6, 15.0, 30.0, 45.5]
            .into_iter()
            .enumerate()
        {
            let (got, measured) = run(lag, 0.03, 600, seed as u64 + 1);
            assert!(measured, "lag {lag}: not measured");
            let err_ms = (got - lag / 60.0).abs() * 1000.0;
            assert!(
                err_ms <= 10.0,
                "lag {lag} ticks: got {got} s, off by {err_ms} ms"
            );
        }
    }

    #[test]
    fn still_or_steady_agents_keep_what_was_learnt() {
        let mut est = LatencyEstimator::default();
        est.resize(1, 0.25);
        let hist = [Vec2::new(1.0, 0.0); LAG_CANDIDATES];
        // A constant velocity says nothing about latency: nothing is measured.
        let mut pos = Vec2::ZERO;
        for _ in 0..600 {
            est.sensed(0);
            est.observe(0, pos, 1.0 / 60.0, |k| hist[k]);
            pos += Vec2::new(1.0 / 60.0, 0.0);
        }
        assert!(!est.measured(0));
        assert_eq!(est.latency(0), 0.25);
        // Unsensed ticks and a teleport observe nothing either; hostile input stays finite.
        est.observe(0, Vec2::splat(f32::NAN), 1.0 / 60.0, |_| {
            Vec2::splat(f32::INFINITY)
        });
        est.break_track(0);
        est.observe(0, Vec2::new(1e30, 0.0), f32::NAN, |_| Vec2::ZERO);
        assert!(est.latency(0).is_finite());
        assert_eq!(est.latency(7), 0.25);
        assert!(!est.measured(7));
    }
}
