//! Flood protection for anything that answers other machines: per-key token buckets and "warn at
//! most once per key per interval", both in fixed-size tables.
//!
//! Keys are whatever the caller can trust (a multiplayer peer id, or a peer id and a kind of
//! warning). Every table holds at most `N` keys, evicting the least recently used one when full, so
//! memory is bounded whatever the traffic, and no call allocates.

/// A token bucket's tuning: how many calls may come at once and how many per second after that.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Largest burst (tokens held when full).
    pub capacity: f32,
    /// Tokens added per second.
    pub per_second: f32,
}

impl RateLimit {
    /// Returns a limit of `rate` calls per second with a burst of one second's worth.
    #[must_use]
    pub const fn per_second(rate: f32) -> Self {
        Self {
            capacity: rate,
            per_second: rate,
        }
    }

    /// Returns `(capacity, per_second)` with non-finite or negative values as 0.
    fn sane(self) -> (f32, f32) {
        let fix = |v: f32| if v.is_finite() { v.max(0.0) } else { 0.0 };
        (fix(self.capacity), fix(self.per_second))
    }
}

/// A token bucket: starts full, spends one token per call, refills continuously up to its capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TokenBucket {
    tokens: f64,
    /// Time of the last refill (seconds), from the first finite time seen.
    last: Option<f64>,
    /// Whether the bucket was filled (on its first call).
    started: bool,
}

impl TokenBucket {
    /// Spends one token at time `now` (seconds, any monotonic clock) and returns `true`, or returns
    /// `false` when the bucket is empty. A non-finite `now`, or a clock that goes backwards, adds
    /// nothing.
    pub fn try_take(&mut self, now: f64, limit: RateLimit) -> bool {
        let (capacity, rate) = limit.sane();
        let (capacity, rate) = (f64::from(capacity), f64::from(rate));
        if !self.started {
            self.started = true;
            self.tokens = capacity;
        }
        if now.is_finite() {
            match self.last {
                None => self.last = Some(now),
                Some(last) if now > last => {
                    self.tokens = (self.tokens + (now - last) * rate).min(capacity);
                    self.last = Some(now);
                }
                Some(_) => {}
            }
        }
        self.tokens = self.tokens.min(capacity);
        // The tolerance absorbs rounding in many tiny refills.
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }

    /// Returns the tokens left (as of the last call).
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.tokens
    }
}

/// A fixed table of up to `N` values by key; when full, a new key replaces the least recently used.
#[derive(Clone, Copy, Debug)]
pub struct KeyedTable<K: Copy + PartialEq, V: Copy + Default, const N: usize> {
    slots: [Option<(K, V, u64)>; N],
    tick: u64,
}

impl<K: Copy + PartialEq, V: Copy + Default, const N: usize> Default for KeyedTable<K, V, N> {
    fn default() -> Self {
        Self {
            slots: [None; N],
            tick: 0,
        }
    }
}

impl<K: Copy + PartialEq, V: Copy + Default, const N: usize> KeyedTable<K, V, N> {
    /// Returns the value of `key`, inserting a default one (evicting the least recently used key
    /// when the table is full). `None` only when `N` is 0.
    pub fn entry(&mut self, key: K) -> Option<&mut V> {
        self.tick = self.tick.wrapping_add(1);
        let tick = self.tick;
        let index = self
            .slots
            .iter()
            .position(|s| s.is_some_and(|(k, _, _)| k == key))
            .or_else(|| self.slots.iter().position(Option::is_none))
            .or_else(|| (0..N).min_by_key(|&i| self.slots[i].map_or(0, |(_, _, used)| used)))?;
        let slot = &mut self.slots[index];
        match slot {
            Some((k, _, used)) if *k == key => *used = tick,
            _ => *slot = Some((key, V::default(), tick)),
        }
        slot.as_mut().map(|(_, v, _)| v)
    }

    /// Returns the value of `key` if the table holds it.
    #[must_use]
    pub fn get(&self, key: K) -> Option<&V> {
        self.slots
            .iter()
            .flatten()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, _)| v)
    }

    /// Forgets `key`.
    pub fn remove(&mut self, key: K) {
        for slot in &mut self.slots {
            if slot.is_some_and(|(k, _, _)| k == key) {
                *slot = None;
            }
        }
    }

    /// Returns how many keys the table holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// Returns whether the table holds no key.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One token bucket per key, at most `N` keys (see [`KeyedTable`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateLimiter<K: Copy + PartialEq, const N: usize> {
    buckets: KeyedTable<K, TokenBucket, N>,
    dropped: u64,
}

impl<K: Copy + PartialEq, const N: usize> RateLimiter<K, N> {
    /// Returns whether `key` may make a call at time `now` under `limit`; a refused call is counted.
    pub fn allow(&mut self, key: K, now: f64, limit: RateLimit) -> bool {
        let ok = self
            .buckets
            .entry(key)
            .is_some_and(|b| b.try_take(now, limit));
        if !ok {
            self.dropped += 1;
        }
        ok
    }

    /// Returns how many calls were refused, over every key.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct WarnSlot {
    last_warned: Option<f64>,
    suppressed: u32,
}

/// Lets a warning through at most once per key per interval, counting the ones held back.
///
/// ```
/// use entwine_core::kit::WarnThrottle;
/// let mut warns = WarnThrottle::<i64, 8>::new(10.0);
/// assert_eq!(warns.check(7, 0.0), Some(0)); // warn now; none was held back
/// assert_eq!(warns.check(7, 1.0), None); // held back (counted)
/// assert_eq!(warns.check(7, 10.0), Some(1)); // warn again, saying one was held back
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WarnThrottle<K: Copy + PartialEq, const N: usize> {
    interval: f64,
    slots: KeyedTable<K, WarnSlot, N>,
    suppressed: u64,
}

impl<K: Copy + PartialEq, const N: usize> WarnThrottle<K, N> {
    /// Returns a throttle that lets one warning per key through every `interval` seconds (a
    /// non-finite or negative interval counts as 0: every warning goes through).
    #[must_use]
    pub fn new(interval: f64) -> Self {
        Self {
            interval: if interval.is_finite() {
                interval.max(0.0)
            } else {
                0.0
            },
            slots: KeyedTable::default(),
            suppressed: 0,
        }
    }

    /// Returns `Some(held_back)` when a warning about `key` may be printed at time `now` (seconds),
    /// `held_back` being how many were held back since the previous one; else counts this one as
    /// held back and returns `None`. A non-finite `now`, or a clock that goes backwards, counts as
    /// no time passing.
    pub fn check(&mut self, key: K, now: f64) -> Option<u32> {
        let interval = self.interval;
        let Some(slot) = self.slots.entry(key) else {
            return Some(0);
        };
        let due = match slot.last_warned {
            None => true,
            Some(last) => now.is_finite() && now - last >= interval,
        };
        if due {
            let held = slot.suppressed;
            slot.suppressed = 0;
            if now.is_finite() || slot.last_warned.is_none() {
                slot.last_warned = Some(if now.is_finite() { now } else { 0.0 });
            }
            Some(held)
        } else {
            slot.suppressed = slot.suppressed.saturating_add(1);
            self.suppressed += 1;
            None
        }
    }

    /// Returns how many warnings were held back, over every key.
    #[must_use]
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_its_rate() {
        let limit = RateLimit {
            capacity: 5.0,
            per_second: 2.0,
        };
        let mut b = TokenBucket::default();
        let burst = (0..100).filter(|_| b.try_take(0.0, limit)).count();
        assert_eq!(burst, 5, "the burst");
        // 1,000 calls spread over one second: two tokens come back.
        let later = (0..1000)
            .filter(|i| b.try_take(f64::from(*i) / 1000.0 + 0.001, limit))
            .count();
        assert_eq!(later, 2, "the refill over one second");
        // A long pause refills to the capacity, not beyond.
        let after_pause = (0..100).filter(|_| b.try_take(1000.0, limit)).count();
        assert_eq!(after_pause, 5);
    }

    #[test]
    fn a_bucket_survives_bad_clocks_and_bad_limits() {
        let limit = RateLimit::per_second(3.0);
        let mut b = TokenBucket::default();
        assert!(
            b.try_take(f64::NAN, limit),
            "starts full even without a clock"
        );
        assert!(b.try_take(f64::NAN, limit));
        assert!(b.try_take(f64::INFINITY, limit));
        assert!(
            !b.try_take(f64::NAN, limit),
            "no time passes without a clock"
        );
        assert!(
            !b.try_take(1.0, limit),
            "the first finite time starts the clock"
        );
        assert!(b.try_take(2.0, limit), "one second later: three tokens");
        assert!(b.try_take(2.0, limit));
        assert!(b.try_take(2.0, limit));
        assert!(
            !b.try_take(1.5, limit),
            "a clock going backwards adds nothing"
        );
        assert!(!b.try_take(2.0, limit));
        for bad in [f32::NAN, f32::INFINITY, -1.0] {
            let mut b = TokenBucket::default();
            let limit = RateLimit {
                capacity: bad,
                per_second: bad,
            };
            assert!(
                !b.try_take(0.0, limit),
                "capacity {bad} lets nothing through"
            );
            assert!(!b.try_take(1e9, limit));
            assert!(b.tokens().is_finite());
        }
    }

    #[test]
    fn the_limiter_keeps_keys_apart_and_counts_drops() {
        let mut l = RateLimiter::<i64, 4>::default();
        let limit = RateLimit::per_second(20.0);
        // Peer 9 floods 1,000 calls in one second while peer 2 makes one call every 100 ms.
        let mut flood_passed = 0;
        let mut legit_passed = 0;
        for i in 0..1000 {
            let now = f64::from(i) / 1000.0;
            if l.allow(9, now, limit) {
                flood_passed += 1;
            }
            if i % 100 == 0 && l.allow(2, now, limit) {
                legit_passed += 1;
            }
        }
        assert!(
            (20..=41).contains(&flood_passed),
            "burst 20 plus 20 per second: {flood_passed}"
        );
        assert_eq!(legit_passed, 10, "the other peer is untouched");
        assert_eq!(l.dropped(), 1000 - flood_passed as u64);
    }

    #[test]
    fn tables_are_bounded_and_evict_the_least_recently_used() {
        let mut t = KeyedTable::<i64, u32, 3>::default();
        for k in 1..=3 {
            *t.entry(k).unwrap() = k as u32 * 10;
        }
        *t.entry(1).unwrap() += 1; // 1 is now the most recently used
        *t.entry(4).unwrap() = 40; // evicts 2
        assert_eq!(t.len(), 3);
        assert_eq!(t.get(2), None);
        assert_eq!(t.get(1), Some(&11));
        assert_eq!(t.get(3), Some(&30));
        assert_eq!(t.get(4), Some(&40));
        t.remove(3);
        assert_eq!(t.get(3), None);
        assert_eq!(*t.entry(3).unwrap(), 0, "a new key starts from the default");
        let mut empty = KeyedTable::<i64, u32, 0>::default();
        assert!(empty.entry(1).is_none());
        assert!(empty.is_empty());
    }

    #[test]
    fn warnings_go_out_once_per_key_per_interval_with_what_was_held_back() {
        let mut w = WarnThrottle::<(i64, u8), 8>::new(10.0);
        let mut printed = Vec::new();
        // Peer 9 causes 1,000 warnings of kind 0 and 1,000 of kind 1 in one second; peer 2 one.
        for i in 0..1000 {
            let now = f64::from(i) / 1000.0;
            for kind in [0, 1] {
                if let Some(held) = w.check((9, kind), now) {
                    printed.push((9, kind, held));
                }
            }
        }
        if let Some(held) = w.check((2, 0), 0.5) {
            printed.push((2, 0, held));
        }
        assert_eq!(printed, vec![(9, 0, 0), (9, 1, 0), (2, 0, 0)]);
        assert_eq!(w.suppressed(), 1998);
        assert_eq!(w.check((9, 0), 9.9), None, "still inside the interval");
        assert_eq!(w.check((9, 0), 10.0), Some(1000), "the next says how many");
        assert_eq!(w.check((9, 0), f64::NAN), None, "no clock, no time passes");
        assert_eq!(w.check((9, 0), 20.0), Some(1));
    }

    #[test]
    fn a_warning_table_full_of_other_keys_stays_bounded() {
        let mut w = WarnThrottle::<i64, 4>::new(10.0);
        // More keys than slots: every new key warns once; memory stays at four slots.
        let printed = (0..100).filter(|k| w.check(*k, 0.0).is_some()).count();
        assert_eq!(printed, 100);
        assert_eq!(w.slots.len(), 4);
        let mut off = WarnThrottle::<i64, 4>::new(f64::NAN);
        assert_eq!(off.check(1, 0.0), Some(0));
        assert_eq!(
            off.check(1, 0.0),
            Some(0),
            "interval 0: every warning goes out"
        );
    }
}
