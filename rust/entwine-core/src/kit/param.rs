//! Typed reports of corrected parameters: a `sanitized(on_issue)` clamps every value into its
//! accepted range and tells the caller which parameter it corrected, from what, to what.

/// A parameter a `sanitized(on_issue)` call had to correct, in the core's units.
///
/// `P` names the parameter (an enum per configuration type, such as
/// [`crate::formation::SquadParam`]); the glue turns it into a warning naming the property.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correction<P> {
    /// Which parameter.
    pub param: P,
    /// The value given (may be NaN or infinite).
    pub got: f32,
    /// The smallest accepted value.
    pub lo: f32,
    /// The largest accepted value.
    pub hi: f32,
    /// The value used instead: `got` clamped into `lo..=hi`, or the default when `got` was not
    /// finite.
    pub used: f32,
}

/// Clamps `*value` into `lo..=hi` (a non-finite value becomes `fallback`) and calls `on_issue`
/// with a [`Correction`] naming `param` when it changed.
pub fn check<P: Copy>(
    value: &mut f32,
    lo: f32,
    hi: f32,
    fallback: f32,
    param: P,
    on_issue: &mut impl FnMut(Correction<P>),
) {
    let got = *value;
    let used = crate::kit::clamp_finite(got, lo, hi, fallback);
    if got.is_finite() && got == used {
        return;
    }
    *value = used;
    on_issue(Correction {
        param,
        got,
        lo,
        hi,
        used,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_range_pass_silently_and_others_are_reported_once() {
        let mut seen = Vec::new();
        let mut v = 2.0;
        check(&mut v, 0.0, 5.0, 1.0, 'a', &mut |c| seen.push(c));
        assert_eq!((v, seen.len()), (2.0, 0));
        let mut v = 9.0;
        check(&mut v, 0.0, 5.0, 1.0, 'b', &mut |c| seen.push(c));
        assert_eq!(v, 5.0);
        let mut v = f32::NAN;
        check(&mut v, 0.0, 5.0, 1.0, 'c', &mut |c| seen.push(c));
        assert_eq!(v, 1.0);
        let mut v = f32::INFINITY;
        check(&mut v, 0.0, 5.0, 1.0, 'd', &mut |c| seen.push(c));
        assert_eq!(
            v, 1.0,
            "an infinite value takes the fallback, not the bound"
        );
        assert_eq!(seen.len(), 3);
        assert_eq!((seen[0].param, seen[0].got, seen[0].used), ('b', 9.0, 5.0));
        assert!(seen[1].got.is_nan() && seen[1].used == 1.0);
        assert_eq!((seen[2].lo, seen[2].hi), (0.0, 5.0));
    }
}
