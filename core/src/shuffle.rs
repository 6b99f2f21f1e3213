//! The seeded generator behind every shuffle Kiln draws on the host (an epoch's order, the
//! holdout splits): small, fast and the same on every machine.

/// A small, fast, seedable generator for the per-epoch shuffle (splitmix64).
pub(crate) struct ShuffleRng(pub(crate) u64);

impl ShuffleRng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, 1), from the top 53 bits.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An index below `n` (n ≥ 1).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n.saturating_sub(1))
    }
}
