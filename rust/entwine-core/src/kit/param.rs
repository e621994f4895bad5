//! Tunables as data: a node's parameter table ([`Param`]: name, unit, range, default,
//! description), from which the core clamps, the glue builds its inspector hints, defaults and
//! warnings, and the docs their property tables; and typed reports of corrected values
//! ([`Correction`]).

/// The unit a tunable is stored in. Angles are stored in radians and shown in degrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number: a weight, a ratio, a scale.
    Number,
    /// A whole number: points, iterations, ticks.
    Count,
    /// Metres.
    Metres,
    /// Seconds.
    Seconds,
    /// Hertz.
    Hertz,
    /// Metres per second.
    MetresPerSecond,
    /// Metres per second squared.
    MetresPerSecondSquared,
    /// Per second (a gain or a rate).
    PerSecond,
    /// Per second squared (an integral gain).
    PerSecondSquared,
    /// Metre-seconds (an accumulated position error).
    MetreSeconds,
    /// Square metres per second (a soft wall's strength).
    SquareMetresPerSecond,
    /// Kilograms.
    Kilograms,
    /// Radians (shown in degrees).
    Radians,
    /// Radians per second (shown in degrees per second).
    RadiansPerSecond,
}

impl Unit {
    /// Whether values are angles or angular speeds: stored in radians, shown in degrees.
    #[must_use]
    pub const fn is_angle(self) -> bool {
        matches!(self, Self::Radians | Self::RadiansPerSecond)
    }

    /// The unit as the inspector and the docs write it after a value (empty for plain numbers
    /// and counts; degrees for angles).
    #[must_use]
    pub const fn suffix(self) -> &'static str {
        match self {
            Self::Number | Self::Count => "",
            Self::Metres => "m",
            Self::Seconds => "s",
            Self::Hertz => "Hz",
            Self::MetresPerSecond => "m/s",
            Self::MetresPerSecondSquared => "m/s²",
            Self::PerSecond => "1/s",
            Self::PerSecondSquared => "1/s²",
            Self::MetreSeconds => "m·s",
            Self::SquareMetresPerSecond => "m²/s",
            Self::Kilograms => "kg",
            Self::Radians => "°",
            Self::RadiansPerSecond => "°/s",
        }
    }

    /// Returns a stored value as shown: degrees for angles, else as it is, to six significant
    /// digits.
    #[must_use]
    pub fn shown(self, v: f32) -> f64 {
        let v = f64::from(v);
        tidy(if self.is_angle() { v.to_degrees() } else { v })
    }
}

/// Rounds `x` to six significant digits (so 360° stored as radians shows as 360, not
/// 359.99999).
fn tidy(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(5 - x.abs().log10().floor() as i32);
    let t = (x * scale).round() / scale;
    if t.is_finite() {
        t
    } else {
        x
    }
}

/// One tunable number of a node: the property's name, its unit, the accepted range and the
/// default, and a one-line description for the docs. A node's table of these is the only place
/// its ranges and defaults are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// The property's name.
    pub name: &'static str,
    /// The unit the value is stored in.
    pub unit: Unit,
    /// The smallest accepted value.
    pub min: f32,
    /// The largest accepted value (infinite: no upper bound).
    pub max: f32,
    /// The top of the inspector's slider: `max`, or where the slider ends when there is no upper
    /// bound (the field takes larger values: the glue adds `or_greater`).
    pub slider_max: f32,
    /// The default.
    pub default: f32,
    /// What it does, in one line.
    pub doc: &'static str,
}

impl Param {
    /// A table entry. Panics (at compile time in a `const`) unless `min <= default <= max`.
    #[must_use]
    pub const fn new(
        name: &'static str,
        unit: Unit,
        (min, max): (f32, f32),
        default: f32,
        doc: &'static str,
    ) -> Self {
        assert!(min <= default && default <= max, "default out of range");
        Self {
            name,
            unit,
            min,
            max,
            slider_max: max,
            default,
            doc,
        }
    }

    /// A table entry with no upper bound: any finite value from `min` up; the inspector's slider
    /// ends at `slider_max`. Panics (at compile time in a `const`) unless `min <= default`.
    #[must_use]
    pub const fn at_least(
        name: &'static str,
        unit: Unit,
        (min, slider_max): (f32, f32),
        default: f32,
        doc: &'static str,
    ) -> Self {
        assert!(min <= default && min < slider_max, "default out of range");
        Self {
            name,
            unit,
            min,
            max: f32::INFINITY,
            slider_max,
            default,
            doc,
        }
    }

    /// The entry with the inspector's slider ending at `slider_max` (below `max`: the field
    /// still takes values up to `max`, typed in; the glue adds `or_greater`).
    #[must_use]
    pub const fn with_slider(mut self, slider_max: f32) -> Self {
        assert!(
            slider_max > self.min && slider_max <= self.max,
            "slider out of range"
        );
        self.slider_max = slider_max;
        self
    }

    /// Whether `v` is accepted as it is: finite and within the range.
    #[must_use]
    pub fn accepts(&self, v: f32) -> bool {
        v.is_finite() && v >= self.min && v <= self.max
    }

    /// The accepted values in words, in the inspector's units: "0 to 1", "a finite value >= 0 s".
    #[must_use]
    pub fn accepted(&self) -> String {
        let suffix = match self.suffix() {
            "" => String::new(),
            s => format!(" {s}"),
        };
        if self.max.is_finite() {
            format!(
                "{} to {}{suffix}",
                self.hint_min(),
                self.unit.shown(self.max)
            )
        } else {
            format!("a finite value >= {}{suffix}", self.hint_min())
        }
    }

    /// The smallest value as the inspector shows it (degrees for angles).
    #[must_use]
    pub fn hint_min(&self) -> f64 {
        self.unit.shown(self.min)
    }

    /// The top of the inspector's slider as it shows it (degrees for angles).
    #[must_use]
    pub fn hint_max(&self) -> f64 {
        self.unit.shown(self.slider_max)
    }

    /// The default as the inspector shows it.
    #[must_use]
    pub fn shown_default(&self) -> f64 {
        self.unit.shown(self.default)
    }

    /// The inspector's suffix for the value ([`Unit::suffix`]).
    #[must_use]
    pub const fn suffix(&self) -> &'static str {
        self.unit.suffix()
    }

    /// Returns `v` within the range; a value that is not finite takes the default.
    #[must_use]
    pub fn clamped(&self, v: f32) -> f32 {
        crate::kit::clamp_finite(v, self.min, self.max, self.default)
    }

    /// Clamps `*value` into the range (the default when not finite) and reports a
    /// [`Correction`] naming `param` when it changed (see [`check`]).
    pub fn check<P: Copy>(
        &self,
        value: &mut f32,
        param: P,
        on_issue: &mut impl FnMut(Correction<P>),
    ) {
        check(value, self.min, self.max, self.default, param, on_issue);
    }

    /// The warning for a value `got` (as stored) that was replaced by `used`, in the units the
    /// inspector shows: "`name` must be in `min`..=`max` `unit` (got …); using …".
    #[must_use]
    pub fn warning(&self, got: f32, used: f32) -> String {
        let u = self.unit;
        let suffix = match u.suffix() {
            "" => String::new(),
            s => format!(" {s}"),
        };
        let range = if self.max.is_finite() {
            format!("in {}..={}", self.hint_min(), u.shown(self.max))
        } else {
            format!("at least {}", self.hint_min())
        };
        format!(
            "{} must be {range}{suffix} (got {}); using {}",
            self.name,
            shown_raw(u, got),
            u.shown(used)
        )
    }
}

/// A value as given, in the shown unit (not rounded: a bad value is shown as it was).
fn shown_raw(u: Unit, v: f32) -> f64 {
    if u.is_angle() {
        f64::from(v).to_degrees()
    } else {
        f64::from(v)
    }
}

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
    fn a_table_entry_shows_angles_in_degrees_and_warns_in_the_shown_units() {
        let turn = Param::new(
            "turn",
            Unit::RadiansPerSecond,
            (0.01, 100.0),
            std::f32::consts::TAU,
            "how fast",
        );
        assert_eq!(turn.shown_default(), 360.0);
        assert_eq!(turn.hint_min(), 0.572958);
        assert_eq!(turn.hint_max(), 5729.58);
        assert_eq!(turn.suffix(), "°/s");
        let mut v = 200.0;
        let mut seen = None;
        turn.check(&mut v, 7, &mut |c| seen = Some(c));
        assert_eq!(v, 100.0);
        let c = seen.expect("a correction");
        assert_eq!((c.param, c.lo, c.hi, c.used), (7, 0.01, 100.0, 100.0));
        let w = turn.warning(c.got, c.used);
        assert!(
            w.starts_with("turn must be in 0.572958..=5729.58 °/s (got 11459.1"),
            "{w}"
        );
        assert!(w.ends_with("using 5729.58"), "{w}");
        let gain = Param::new("k", Unit::Number, (0.0, 2.0), 1.0, "gain");
        assert_eq!(gain.clamped(f32::NAN), 1.0);
        assert_eq!(
            gain.warning(3.0, 2.0),
            "k must be in 0..=2 (got 3); using 2"
        );
    }

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
