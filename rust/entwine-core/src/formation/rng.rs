//! A tiny deterministic random source for simulated actuation noise and tests.

use glam::Vec2;

/// A splitmix64 generator: fast, seedable and the same on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Returns a generator started from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Returns the next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Returns a pseudo-random number in [−1, 1).
    pub fn signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Returns a pseudo-random vector in the square [−1, 1)².
    pub fn vec2(&mut self) -> Vec2 {
        Vec2::new(self.signed(), self.signed())
    }

    /// Returns an approximately normal sample with unit variance (sum of four uniforms).
    pub fn gauss(&mut self) -> f32 {
        (self.signed() + self.signed() + self.signed() + self.signed()) * 0.866_025_4
    }
}
