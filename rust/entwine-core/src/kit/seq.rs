//! Wrap-around 16-bit sequence numbers (RFC 1982 serial-number arithmetic)
//! and a gate that drops stale, duplicate and out-of-order packets.

/// A 16-bit packet sequence number that wraps from 65535 to 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Seq16(pub u16);

impl Seq16 {
    /// Returns the following sequence number (65535 is followed by 0).
    #[must_use]
    pub const fn next(self) -> Self {
        Self(self.0.wrapping_add(1))
    }

    /// Returns `true` if `self` comes after `other`: `0 < (self − other) mod 2¹⁶ < 2¹⁵`.
    ///
    /// So 0 is newer than 65535. Numbers exactly 2¹⁵ apart are not newer than
    /// each other in either direction, and neither is a number than itself.
    #[must_use]
    pub const fn is_newer_than(self, other: Self) -> bool {
        let ahead = self.0.wrapping_sub(other.0);
        ahead != 0 && ahead < 0x8000
    }

    /// Returns `true` if `self` is `other` or comes after it: not stale. Pieces of one message
    /// that share its number (the chunks of a keyframe) pass, older numbers do not; a number
    /// exactly 2¹⁵ away is stale.
    #[must_use]
    pub const fn is_same_or_newer_than(self, other: Self) -> bool {
        self.0 == other.0 || self.is_newer_than(other)
    }
}

/// Remembers the newest accepted sequence number and admits only newer ones.
///
/// After more than 32767 packets are lost in a row, newer packets look stale;
/// call [`SequenceGate::reset`] when a connection restarts or times out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SequenceGate {
    last: Option<Seq16>,
}

impl SequenceGate {
    /// Returns a gate that has not seen any packet yet.
    #[must_use]
    pub const fn new() -> Self {
        Self { last: None }
    }

    /// Returns `true` (and remembers `seq`) if `seq` is the first packet or
    /// newer than the last accepted one; returns `false` for duplicates and for
    /// stale or out-of-order packets.
    #[must_use]
    pub fn accept(&mut self, seq: Seq16) -> bool {
        let fresh = self.last.is_none_or(|last| seq.is_newer_than(last));
        if fresh {
            self.last = Some(seq);
        }
        fresh
    }

    /// Returns the last accepted sequence number, if any.
    #[must_use]
    pub const fn last(&self) -> Option<Seq16> {
        self.last
    }

    /// Forgets the last accepted number, so the next packet is accepted.
    pub fn reset(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_wraps() {
        assert_eq!(Seq16(7).next(), Seq16(8));
        assert_eq!(Seq16(65535).next(), Seq16(0));
    }

    #[test]
    fn newer_across_the_wrap() {
        assert!(Seq16(0).is_newer_than(Seq16(65535)));
        assert!(!Seq16(65535).is_newer_than(Seq16(0)));
        assert!(Seq16(5).is_newer_than(Seq16(65530)));
        assert!(Seq16(65530).is_newer_than(Seq16(40000)));
        assert!(!Seq16(100).is_newer_than(Seq16(100)));
        // 32767 ahead is still newer; exactly half-way is neither.
        assert!(Seq16(32767).is_newer_than(Seq16(0)));
        assert!(Seq16(32766).is_newer_than(Seq16(65535)));
        assert!(!Seq16(32768).is_newer_than(Seq16(0)));
        assert!(!Seq16(0).is_newer_than(Seq16(32768)));
        // 32769 ahead means 32767 behind.
        assert!(Seq16(0).is_newer_than(Seq16(32769)));
    }

    #[test]
    fn the_same_number_is_not_stale_and_older_ones_are() {
        assert!(Seq16(100).is_same_or_newer_than(Seq16(100)));
        assert!(Seq16(0).is_same_or_newer_than(Seq16(65535)));
        assert!(!Seq16(65535).is_same_or_newer_than(Seq16(0)));
        assert!(!Seq16(99).is_same_or_newer_than(Seq16(100)));
        assert!(
            !Seq16(32768).is_same_or_newer_than(Seq16(0)),
            "half-way is stale"
        );
        // The same rule as a signed 16-bit difference that is not negative, for every distance.
        for d in 0..=u16::MAX {
            let (last, seq) = (Seq16(40_000), Seq16(40_000u16.wrapping_add(d)));
            assert_eq!(seq.is_same_or_newer_than(last), d as i16 >= 0, "{d}");
        }
    }

    #[test]
    fn gate_accepts_in_order_packets_across_the_wrap() {
        let mut gate = SequenceGate::new();
        assert_eq!(gate.last(), None);
        assert!(gate.accept(Seq16(65534)));
        assert!(gate.accept(Seq16(65535)));
        assert!(gate.accept(Seq16(0)));
        assert!(gate.accept(Seq16(2)), "gaps are fine");
        assert!(!gate.accept(Seq16(1)), "out of order");
        assert!(!gate.accept(Seq16(2)), "duplicate");
        assert!(!gate.accept(Seq16(65535)), "stale from before the wrap");
        assert_eq!(gate.last(), Some(Seq16(2)));
    }

    #[test]
    fn gate_first_packet_and_reset() {
        let mut gate = SequenceGate::default();
        assert!(gate.accept(Seq16(40000)));
        assert!(!gate.accept(Seq16(20000)), "20000 behind");
        gate.reset();
        assert!(gate.accept(Seq16(20000)));
        assert_eq!(gate.last(), Some(Seq16(20000)));
    }
}
