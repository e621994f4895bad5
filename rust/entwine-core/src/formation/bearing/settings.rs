//! A bearing's settings in the units its node shows (degrees, seconds), [`BearingSettings`],
//! checked by [`BearingSettings::sanitized`]: every number finite and within its range, each
//! corrected one reported as a typed [`BearingIssue`] whose text names the property.

use super::BearingConfig;
use crate::kit::warn::{range_message, within};

/// One of a bearing's numeric settings (the `SoldierBearing` property of the same name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BearingParam {
    /// Fastest the look turns, degrees per second.
    TurnSpeed,
    /// Largest look yaw either side of the animation's, degrees.
    YawLimit,
    /// Largest look pitch up or down, degrees.
    PitchLimit,
    /// Share of the look taken by the chest bone.
    ChestShare,
    /// Share of the look taken by the neck bone.
    NeckShare,
    /// Time to raise or lower the salute, seconds.
    SaluteTime,
}

impl BearingParam {
    /// Every setting, in the order [`BearingSettings::sanitized`] checks them (`param as usize`
    /// indexes it).
    pub const ALL: [Self; 6] = [
        Self::TurnSpeed,
        Self::YawLimit,
        Self::PitchLimit,
        Self::ChestShare,
        Self::NeckShare,
        Self::SaluteTime,
    ];

    /// The property's name, as warnings print it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The setting's table entry (stored as the node stores it: radians for angles).
    #[must_use]
    pub const fn spec(self) -> Param {
        SPECS[self as usize]
    }

    /// The setting's valid range `(lo, hi)`, inclusive, as the inspector shows it (degrees for
    /// angles).
    #[must_use]
    pub fn range(self) -> (f32, f32) {
        let s = self.spec();
        (s.unit.shown(s.min) as f32, s.unit.shown(s.max) as f32)
    }

    /// The default as the inspector shows it (degrees for angles).
    #[must_use]
    pub fn shown_default(self) -> f32 {
        self.spec().shown_default() as f32
    }
}

use crate::kit::param::{Param, Unit as U};

/// One degree in radians.
const DEG: f32 = core::f32::consts::PI / 180.0;

/// The table, in [`BearingParam`]'s order.
#[rustfmt::skip]
const SPECS: [Param; 6] = [
    Param::new("turn_speed", U::RadiansPerSecond, (DEG, 3600.0 * DEG), 180.0 * DEG, "fastest the look turns"),
    Param::new("yaw_limit", U::Radians, (0.0, 180.0 * DEG), 100.0 * DEG, "largest look yaw either side of the animation's"),
    Param::new("pitch_limit", U::Radians, (0.0, 85.0 * DEG), 40.0 * DEG, "largest look pitch up or down"),
    Param::new("chest_share", U::Number, (0.0, 1.0), 0.15, "share of the look taken by the chest bone"),
    Param::new("neck_share", U::Number, (0.0, 1.0), 0.3, "share of the look taken by the neck bone (the head takes the rest)"),
    Param::new("salute_time", U::Seconds, (0.01, 10.0), 0.4, "time to raise or lower the salute"),
];

/// Every number of an `EntwineSoldierBearing`, for the docs.
#[must_use]
pub fn table() -> Vec<Param> {
    SPECS.to_vec()
}

/// A setting [`BearingSettings::sanitized`] corrected: it was not finite or outside its
/// [`BearingParam::range`]; `got` the value set, `used` the value used instead (a finite value is
/// clamped, a NaN or infinite one takes the default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BearingIssue {
    /// Which setting.
    pub param: BearingParam,
    /// The value set.
    pub got: f32,
    /// The value used instead.
    pub used: f32,
}

impl std::fmt::Display for BearingIssue {
    /// The warning a node prints: "`name` must be in `lo`..=`hi` (got …); using …".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (lo, hi) = self.param.range();
        f.write_str(&range_message(
            self.param.name(),
            lo,
            hi,
            self.got,
            self.used,
        ))
    }
}

/// A bearing's numeric settings as a `SoldierBearing` holds them: angles in degrees, the turn
/// speed in degrees per second, the salute time in seconds. [`Self::config`] gives the
/// [`BearingConfig`] (radians) the motion runs on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BearingSettings {
    /// Fastest the look turns, °/s.
    pub turn_speed: f32,
    /// Largest look yaw either side of the animation's, °.
    pub yaw_limit: f32,
    /// Largest look pitch up or down, °.
    pub pitch_limit: f32,
    /// Share of the look taken by the chest bone.
    pub chest_share: f32,
    /// Share of the look taken by the neck bone.
    pub neck_share: f32,
    /// Time to raise or lower the salute, s.
    pub salute_time: f32,
}

impl Default for BearingSettings {
    fn default() -> Self {
        use BearingParam as P;
        Self {
            turn_speed: P::TurnSpeed.shown_default(),
            yaw_limit: P::YawLimit.shown_default(),
            pitch_limit: P::PitchLimit.shown_default(),
            chest_share: P::ChestShare.shown_default(),
            neck_share: P::NeckShare.shown_default(),
            salute_time: P::SaluteTime.shown_default(),
        }
    }
}

impl BearingSettings {
    fn slots(&mut self) -> [&mut f32; 6] {
        [
            &mut self.turn_speed,
            &mut self.yaw_limit,
            &mut self.pitch_limit,
            &mut self.chest_share,
            &mut self.neck_share,
            &mut self.salute_time,
        ]
    }

    /// Returns the value of `param`.
    #[must_use]
    pub fn get(mut self, param: BearingParam) -> f32 {
        *self.slots()[param as usize]
    }

    /// Returns the settings with every value finite and within its [`BearingParam::range`],
    /// calling `on_issue` once for each one corrected, in the order of [`BearingParam::ALL`]: a
    /// finite value outside is clamped, a NaN or infinite one takes its default. Shares adding up
    /// to more than 1 are not an issue here ([`Self::config`] scales them down together).
    #[must_use]
    pub fn sanitized(mut self, mut on_issue: impl FnMut(BearingIssue)) -> Self {
        let d = Self::default();
        for (param, v) in BearingParam::ALL.into_iter().zip(self.slots()) {
            let (lo, hi) = param.range();
            let (used, valid) = within(*v, lo, hi, d.get(param), true);
            if !valid {
                on_issue(BearingIssue {
                    param,
                    got: *v,
                    used,
                });
                *v = used;
            }
        }
        self
    }

    /// Returns the values' bit patterns: equal exactly when nothing changed, NaN included (to
    /// check the settings again only after a change).
    #[must_use]
    pub fn to_bits(mut self) -> [u32; 6] {
        self.slots().map(|v| v.to_bits())
    }

    /// Returns the motion's config: [`Self::sanitized`] (silently) in radians, the chest and neck
    /// shares scaled down together when they add up to more than 1.
    #[must_use]
    pub fn config(self) -> BearingConfig {
        let s = self.sanitized(|_| {});
        BearingConfig {
            turn_speed: s.turn_speed.to_radians(),
            yaw_limit: s.yaw_limit.to_radians(),
            pitch_limit: s.pitch_limit.to_radians(),
            chest_share: s.chest_share,
            neck_share: s.neck_share,
            salute_time: s.salute_time,
        }
        .sanitized()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(s: BearingSettings) -> (BearingSettings, Vec<BearingIssue>) {
        let mut seen = Vec::new();
        let out = s.sanitized(|i| seen.push(i));
        (out, seen)
    }

    #[test]
    fn the_defaults_pass_unchanged_and_silently() {
        let (out, seen) = issues(BearingSettings::default());
        assert_eq!(out, BearingSettings::default());
        assert!(seen.is_empty(), "{seen:?}");
        assert_eq!(
            BearingSettings::default().config(),
            BearingConfig::default()
        );
    }

    #[test]
    fn out_of_range_values_are_clamped_and_non_finite_ones_take_the_default() {
        let s = BearingSettings {
            turn_speed: -5.0,
            yaw_limit: 200.0,
            pitch_limit: f32::NAN,
            chest_share: 0.5,
            neck_share: f32::NEG_INFINITY,
            salute_time: 0.0,
        };
        let (out, seen) = issues(s);
        assert_eq!(
            out,
            BearingSettings {
                turn_speed: 1.0,
                yaw_limit: 180.0,
                pitch_limit: 40.0,
                chest_share: 0.5,
                neck_share: 0.30,
                salute_time: 0.01,
            }
        );
        let params: Vec<_> = seen.iter().map(|i| i.param).collect();
        assert_eq!(
            params,
            [
                BearingParam::TurnSpeed,
                BearingParam::YawLimit,
                BearingParam::PitchLimit,
                BearingParam::NeckShare,
                BearingParam::SaluteTime
            ]
        );
        assert_eq!(
            seen[0],
            BearingIssue {
                param: BearingParam::TurnSpeed,
                got: -5.0,
                used: 1.0
            }
        );
    }

    #[test]
    fn the_warning_names_the_property_its_range_and_the_value_used() {
        let s = BearingSettings {
            turn_speed: -5.0,
            pitch_limit: 90.0,
            salute_time: f32::NAN,
            ..BearingSettings::default()
        };
        let texts: Vec<String> = issues(s).1.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "turn_speed must be in 1..=3600 (got -5); using 1",
                "pitch_limit must be in 0..=85 (got 90); using 85",
                "salute_time must be in 0.01..=10 (got NaN); using 0.4",
            ]
        );
    }

    #[test]
    fn the_bounds_agree_with_the_configs() {
        // The motion's own check keeps every checked setting as it is.
        for param in BearingParam::ALL {
            for v in [param.range().0, param.range().1] {
                let mut s = BearingSettings::default();
                *s.slots()[param as usize] = v;
                let c = s.config();
                let back = [
                    c.turn_speed.to_degrees(),
                    c.yaw_limit.to_degrees(),
                    c.pitch_limit.to_degrees(),
                    c.chest_share,
                    c.neck_share,
                    c.salute_time,
                ];
                let want = if param == BearingParam::ChestShare && v == 1.0 {
                    1.0 / 1.3 // scaled down with the neck's 0.3
                } else if param == BearingParam::NeckShare && v == 1.0 {
                    1.0 / 1.15
                } else {
                    v
                };
                let got = back[param as usize];
                assert!(
                    (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                    "{param:?} = {v}: the config holds {got}"
                );
            }
        }
    }

    #[test]
    fn shares_over_one_are_scaled_in_the_config_without_an_issue() {
        let s = BearingSettings {
            chest_share: 0.8,
            neck_share: 0.8,
            ..BearingSettings::default()
        };
        assert!(issues(s).1.is_empty());
        let c = s.config();
        assert!((c.chest_share - 0.5).abs() < 1e-6 && (c.neck_share - 0.5).abs() < 1e-6);
    }

    #[test]
    fn bits_tell_a_change_and_a_nan_stays_equal_to_itself() {
        let a = BearingSettings {
            yaw_limit: f32::NAN,
            ..BearingSettings::default()
        };
        assert_eq!(a.to_bits(), a.to_bits());
        let b = BearingSettings {
            yaw_limit: 90.0,
            ..a
        };
        assert_ne!(a.to_bits(), b.to_bits());
    }
}
