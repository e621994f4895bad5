//! A pair's settings as one value, [`PairSettings`], checked by [`PairSettings::sanitized`]: every
//! number finite and within its range, each corrected one reported as a typed [`PairIssue`].

use glam::Vec3;

use super::{ContactTuning, FollowTuning, ReplayTuning, StreamRates};
use crate::kit::param::Param;
use crate::kit::warn::within;

pub use super::params::PairParam;

pub use super::params::{MAX_OFFSET, MAX_ROTATION};
/// Everything a `HoldHandComponent` is tuned with, in the core's units (metres, seconds, degrees
/// for the contact rotations), before scaling by the character's proportion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairSettings {
    /// The follow spring.
    pub follow: FollowTuning,
    /// The contact solver and the IK weights.
    pub contact: ContactTuning,
    /// How a remote peer replays the stream, with the rates the initiator sends at.
    pub replay: ReplayTuning,
    /// Distance kept short of full reach, for the 0.62 m reference arm (m).
    pub reach_margin: f32,
    /// How long a recipient waits for a silent initiator (s).
    pub initiator_timeout: f32,
    /// How long a recipient waits for the initiator's first frame of a pair (s).
    pub initiator_start_timeout: f32,
    /// The arm layers' blend amount while holding hands (0–1).
    pub arm_layer_hold_value: f32,
    /// The initiator's and the recipient's contact offsets (m).
    pub contact_offsets: [Vec3; 2],
    /// The initiator's and the recipient's contact rotations (degrees, Euler YXZ).
    pub contact_rotations: [Vec3; 2],
}

impl Default for PairSettings {
    fn default() -> Self {
        Self {
            follow: FollowTuning::default(),
            contact: ContactTuning::default(),
            replay: ReplayTuning::default(),
            reach_margin: PairParam::ReachMargin.spec().default,
            initiator_timeout: PairParam::InitiatorTimeout.spec().default,
            initiator_start_timeout: PairParam::InitiatorStartTimeout.spec().default,
            arm_layer_hold_value: PairParam::ArmLayerHoldValue.spec().default,
            contact_offsets: [Vec3::ZERO; 2],
            contact_rotations: [Vec3::ZERO; 2],
        }
    }
}

/// Each [`PairParam`]'s issue (in [`PairParam::ALL`]'s order), `None` for a setting used as set.
pub type PairIssues = [Option<PairIssue>; PairParam::ALL.len()];

/// A node's settings between frames: as its properties last held them, as corrected, and whether
/// the hands may be held with them. [`SettingsCheck::check`] checks again only when a property
/// changed, so that a bad value is reported once, not every frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct SettingsCheck {
    last: Option<(PairSettings, PairSettings, bool)>,
}

impl SettingsCheck {
    /// Returns the usable settings for `as_set` ([`PairSettings::sanitized`]) and, when they were
    /// checked again (the first call, or a property changed since the last), every setting's
    /// issue; `None` when nothing changed (what was reported still holds).
    pub fn check(&mut self, as_set: PairSettings) -> (PairSettings, Option<PairIssues>) {
        if let Some((_, checked, _)) = self.last.filter(|l| l.0 == as_set) {
            return (checked, None);
        }
        let mut found: PairIssues = [None; PairParam::ALL.len()];
        let checked = as_set.sanitized(|i| found[i.param as usize] = Some(i));
        let hands_ok = !found.iter().flatten().any(|i| i.param.releases_hands());
        self.last = Some((as_set, checked, hands_ok));
        (checked, Some(found))
    }

    /// Whether the hands may be held: no setting that [`PairParam::releases_hands`] was corrected
    /// in the last check (false before the first).
    pub fn hands_ok(&self) -> bool {
        self.last.is_some_and(|l| l.2)
    }

    /// The contact tuning of the last check with its distances times the character's proportion
    /// `k` ([`super::ContactTuning::proportioned`]), or `None` (the hands are released, following
    /// goes on) while one of its settings is corrected.
    pub fn contact(&self, k: f32) -> Option<super::ContactTuning> {
        let (_, checked, hands_ok) = self.last?;
        hands_ok.then(|| checked.contact.proportioned(k))
    }
}

/// What was wrong with a setting [`PairSettings::sanitized`] corrected (`got` the value set,
/// `used` the value used instead).
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum PairProblem {
    /// Not finite or outside `lo..=hi`: `used` instead of `got`.
    Range {
        got: f32,
        lo: f32,
        hi: f32,
        used: f32,
    },
    /// Within its range but below the setting `floor` names (whose checked value it must reach):
    /// `used` instead of `got`.
    Below {
        got: f32,
        floor: PairParam,
        used: f32,
    },
    /// A vector not finite or beyond `±limit` on an axis: `used` instead of `got`.
    Vector { got: Vec3, limit: f32, used: Vec3 },
}

/// A setting [`PairSettings::sanitized`] corrected, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairIssue {
    /// Which setting.
    pub param: PairParam,
    /// What was wrong, and the value used instead.
    pub problem: PairProblem,
}

impl std::fmt::Display for PairIssue {
    /// The warning a node prints: "`name` must be in `lo`..=`hi` (got …); using …", naming the
    /// property; vectors as `(x, y, z)`, as Godot prints them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.param.name();
        let v = |v: Vec3| format!("({}, {}, {})", v.x, v.y, v.z);
        match self.problem {
            PairProblem::Range { got, lo, hi, used } => {
                write!(f, "{name} must be in {lo}..={hi} (got {got}); using {used}")
            }
            PairProblem::Below { got, floor, used } => write!(
                f,
                "{name} must not be below {} (got {got}); using {used}",
                floor.name()
            ),
            PairProblem::Vector { got, limit, used } => write!(
                f,
                "{name} must be finite and within ±{limit} (got {}); using {}",
                v(got),
                v(used)
            ),
        }
    }
}

/// The checks of one pass, reporting each correction.
struct Checker<F: FnMut(PairIssue)> {
    on_issue: F,
}

impl<F: FnMut(PairIssue)> Checker<F> {
    fn report(&mut self, param: PairParam, problem: PairProblem) {
        (self.on_issue)(PairIssue { param, problem });
    }

    /// Clamps a value outside its table range (a non-finite one takes the default); with `clamp`
    /// false, any invalid value takes the default.
    fn range(&mut self, p: PairParam, v: &mut f32, clamp: bool) {
        let Param {
            min: lo,
            max: hi,
            default,
            ..
        } = p.spec();
        let (used, valid) = within(*v, lo, hi, default, clamp);
        if !valid {
            self.report(
                p,
                PairProblem::Range {
                    got: *v,
                    lo,
                    hi,
                    used,
                },
            );
            *v = used;
        }
    }

    /// A value that must be finite, within its table range and at least `floor.1` (the checked
    /// value of the setting `floor.0`): else the default (or the floor when that is higher).
    fn above(&mut self, p: PairParam, v: &mut f32, floor: (PairParam, f32)) {
        let Param {
            max: hi, default, ..
        } = p.spec();
        let got = *v;
        let in_range = got.is_finite() && (0.0..=hi).contains(&got);
        if in_range && got >= floor.1 {
            return;
        }
        let used = if in_range {
            floor.1
        } else {
            default.max(floor.1)
        };
        let problem = if in_range {
            PairProblem::Below {
                got,
                floor: floor.0,
                used,
            }
        } else {
            PairProblem::Range {
                got,
                lo: 0.0,
                hi,
                used,
            }
        };
        self.report(p, problem);
        *v = used;
    }

    /// A vector finite and within `±limit` on every axis, else `default`.
    fn vector(&mut self, p: PairParam, v: &mut Vec3, limit: f32, default: Vec3) {
        if v.is_finite() && v.abs().max_element() <= limit {
            return;
        }
        self.report(
            p,
            PairProblem::Vector {
                got: *v,
                limit,
                used: default,
            },
        );
        *v = default;
    }

    /// Checks the follow tuning: offsets, spring, speeds and stop radius.
    fn follow(&mut self, f: &mut FollowTuning, d: &PairSettings) {
        use PairParam as P;
        self.vector(
            P::FollowOffset,
            &mut f.follow_offset,
            MAX_OFFSET,
            d.follow.follow_offset,
        );
        self.vector(
            P::PreparationOffset,
            &mut f.preparation_offset,
            MAX_OFFSET,
            d.follow.preparation_offset,
        );
        self.range(P::SpringCoefficient, &mut f.spring_coefficient, true);
        self.range(P::MinFollowSpeed, &mut f.min_follow_speed, false);
        let floor = (P::MinFollowSpeed, f.min_follow_speed);
        self.above(P::MaxFollowSpeed, &mut f.max_follow_speed, floor);
        self.range(P::StopRadius, &mut f.stop_radius, true);
    }

    /// Checks the contact tuning: smoothing, distances, fades and weights.
    fn contact(&mut self, k: &mut ContactTuning) {
        use PairParam as P;
        self.range(P::ContactSmoothTime, &mut k.contact_smooth_time, true);
        self.range(P::ReconnectDistance, &mut k.reconnect_distance, false);
        let floor = (P::ReconnectDistance, k.reconnect_distance);
        self.above(P::DisconnectDistance, &mut k.disconnect_distance, floor);
        self.range(P::FadeInTime, &mut k.fade_in_time, true);
        self.range(P::FadeOutTime, &mut k.fade_out_time, true);
        self.range(P::MaxPositionWeight, &mut k.max_position_weight, true);
        self.range(P::MaxRotationWeight, &mut k.max_rotation_weight, true);
    }

    /// Checks the replay tuning: stream rates, root speed, blend speed and IK timing.
    fn replay(&mut self, r: &mut ReplayTuning) {
        use PairParam as P;
        self.range(P::PoseInterval, &mut r.rates.pose_interval, true);
        self.range(P::IkInterval, &mut r.rates.ik_interval, true);
        self.range(P::AnimationInterval, &mut r.rates.animation_interval, true);
        r.rates = StreamRates::sanitized(r.rates);
        self.range(P::MaxRootSpeed, &mut r.max_root_speed, true);
        self.range(P::BlendSpeed, &mut r.blend_speed, true);
        self.range(P::IkTimeout, &mut r.ik_timeout, true);
        self.range(P::IkFadeTime, &mut r.ik_fade_time, true);
    }

    /// Checks the pair's own settings: reach margin, timeouts, arm layer and contact offsets.
    fn pair(&mut self, s: &mut PairSettings) {
        use PairParam as P;
        self.range(P::ReachMargin, &mut s.reach_margin, true);
        self.range(P::InitiatorTimeout, &mut s.initiator_timeout, true);
        self.range(
            P::InitiatorStartTimeout,
            &mut s.initiator_start_timeout,
            true,
        );
        self.range(P::ArmLayerHoldValue, &mut s.arm_layer_hold_value, true);
        let [io, ro] = &mut s.contact_offsets;
        let [ir, rr] = &mut s.contact_rotations;
        self.vector(P::InitiatorContactOffset, io, MAX_OFFSET, Vec3::ZERO);
        self.vector(P::InitiatorContactRotation, ir, MAX_ROTATION, Vec3::ZERO);
        self.vector(P::RecipientContactOffset, ro, MAX_OFFSET, Vec3::ZERO);
        self.vector(P::RecipientContactRotation, rr, MAX_ROTATION, Vec3::ZERO);
    }
}

impl PairSettings {
    /// Returns the settings with every value usable, calling `on_issue` once for each one
    /// corrected (in the order of the fields): numbers not finite or outside their ranges are
    /// clamped or take their defaults, `max_follow_speed` is at least `min_follow_speed`,
    /// `disconnect_distance` at least `reconnect_distance`, offsets and rotations finite and within
    /// [`MAX_OFFSET`] and [`MAX_ROTATION`] on every axis.
    ///
    /// A correction of a setting that [`PairParam::releases_hands`] should release the hands
    /// while it lasts: its value here is only a stand-in.
    #[must_use]
    pub fn sanitized(mut self, on_issue: impl FnMut(PairIssue)) -> Self {
        let d = Self::default();
        let mut c = Checker { on_issue };
        c.follow(&mut self.follow, &d);
        c.contact(&mut self.contact);
        c.replay(&mut self.replay);
        c.pair(&mut self);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issue_reads_as_the_warning_naming_the_property() {
        let mut s = PairSettings::default();
        s.contact_offsets[1] = Vec3::new(0.0, 0.0, 101.0);
        s.follow.spring_coefficient = f32::NAN;
        let (_, seen) = issues(s);
        let texts: Vec<String> = seen.iter().map(ToString::to_string).collect();
        assert!(
            texts.contains(&"recipient_contact_offset must be finite and within ±100 (got (0, 0, 101)); using (0, 0, 0)".to_string()),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("spring_coefficient must be in ")
                    && t.contains("(got NaN); using ")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_check_reports_once_per_change_and_a_bad_contact_setting_releases_the_hands() {
        let mut check = SettingsCheck::default();
        assert!(!check.hands_ok() && check.contact(1.0).is_none());
        let mut s = PairSettings::default();
        let (checked, issues) = check.check(s);
        assert_eq!(checked, s);
        assert!(issues
            .expect("first check reports")
            .iter()
            .all(Option::is_none));
        let contact = check.contact(2.0).expect("hands may be held");
        assert_eq!(
            contact.reconnect_distance,
            2.0 * s.contact.reconnect_distance
        );
        assert_eq!(contact.fade_in_time, s.contact.fade_in_time);
        // Unchanged: nothing new to report.
        assert!(check.check(s).1.is_none());

        // A bad fade time: reported once, naming it, and the hands let go while it lasts. (A NaN
        // never equals itself, so a NaN setting is checked again on every call.)
        s.contact.fade_in_time = -1.0;
        let (checked, issues) = check.check(s);
        assert!(checked.contact.fade_in_time >= 0.0);
        let issues = issues.expect("a change is checked");
        let bad: Vec<_> = PairParam::ALL
            .into_iter()
            .zip(issues)
            .filter_map(|(p, i)| i.map(|_| p.name()))
            .collect();
        assert_eq!(bad, ["fade_in_time"]);
        assert!(!check.hands_ok() && check.contact(1.0).is_none());
        assert!(check.check(s).1.is_none());

        // A bad follow setting is corrected but keeps the hands.
        s.contact.fade_in_time = 0.3;
        s.follow.spring_coefficient = -4.0;
        let (_, issues) = check.check(s);
        assert!(issues.unwrap()[PairParam::SpringCoefficient as usize].is_some());
        assert!(check.hands_ok());
    }

    fn issues(s: PairSettings) -> (PairSettings, Vec<PairIssue>) {
        let mut seen = Vec::new();
        let out = s.sanitized(|i| seen.push(i));
        (out, seen)
    }

    #[test]
    fn the_defaults_pass_unchanged_and_silently() {
        let (out, seen) = issues(PairSettings::default());
        assert_eq!(out, PairSettings::default());
        assert!(seen.is_empty(), "{seen:?}");
    }

    #[test]
    fn out_of_range_values_are_clamped_and_non_finite_ones_take_the_default() {
        let mut s = PairSettings::default();
        s.follow.spring_coefficient = 500.0;
        s.contact.fade_in_time = f32::NAN;
        s.replay.max_root_speed = f32::INFINITY;
        s.reach_margin = -1.0;
        let (out, seen) = issues(s);
        assert_eq!(out.follow.spring_coefficient, 100.0);
        assert_eq!(
            out.contact.fade_in_time,
            ContactTuning::default().fade_in_time
        );
        assert_eq!(
            out.replay.max_root_speed,
            ReplayTuning::default().max_root_speed
        );
        assert_eq!(out.reach_margin, 0.0);
        let params: Vec<_> = seen.iter().map(|i| i.param).collect();
        assert_eq!(
            params,
            [
                PairParam::SpringCoefficient,
                PairParam::FadeInTime,
                PairParam::MaxRootSpeed,
                PairParam::ReachMargin
            ]
        );
        assert_eq!(
            seen[0].problem,
            PairProblem::Range {
                got: 500.0,
                lo: 0.0,
                hi: 100.0,
                used: 100.0
            }
        );
    }

    #[test]
    fn a_minimum_speed_out_of_range_takes_its_default_not_the_bound() {
        let mut s = PairSettings::default();
        s.follow.min_follow_speed = 150.0;
        s.contact.reconnect_distance = 9.0;
        let (out, _) = issues(s);
        assert_eq!(out.follow.min_follow_speed, 12.0);
        assert_eq!(out.contact.reconnect_distance, 1.1);
    }

    #[test]
    fn a_maximum_below_its_minimum_is_raised_to_it_and_names_the_minimum() {
        let mut s = PairSettings::default();
        s.follow.min_follow_speed = 30.0;
        s.follow.max_follow_speed = 20.0;
        s.contact.reconnect_distance = 2.0;
        s.contact.disconnect_distance = 1.0;
        let (out, seen) = issues(s);
        assert_eq!(out.follow.max_follow_speed, 30.0);
        assert_eq!(out.contact.disconnect_distance, 2.0);
        assert_eq!(
            seen[0].problem,
            PairProblem::Below {
                got: 20.0,
                floor: PairParam::MinFollowSpeed,
                used: 30.0
            }
        );
        assert_eq!(seen[1].param, PairParam::DisconnectDistance);
        // Out of its own range, the maximum takes its default (or the minimum when higher).
        let mut s = PairSettings::default();
        s.follow.min_follow_speed = 50.0;
        s.follow.max_follow_speed = f32::NAN;
        let (out, seen) = issues(s);
        assert_eq!(out.follow.max_follow_speed, 50.0);
        assert!(matches!(seen[0].problem, PairProblem::Range { hi, .. } if hi == 100.0));
    }

    #[test]
    fn vectors_must_be_finite_and_within_their_limit() {
        let mut s = PairSettings::default();
        s.follow.follow_offset = Vec3::new(0.0, f32::NAN, 0.0);
        s.contact_offsets[1] = Vec3::new(0.0, 0.0, 101.0);
        s.contact_rotations[0] = Vec3::new(3599.0, -3600.0, 0.0);
        let (out, seen) = issues(s);
        assert_eq!(
            out.follow.follow_offset,
            FollowTuning::default().follow_offset
        );
        assert_eq!(out.contact_offsets[1], Vec3::ZERO);
        assert_eq!(out.contact_rotations[0], Vec3::new(3599.0, -3600.0, 0.0));
        let params: Vec<_> = seen.iter().map(|i| i.param).collect();
        assert_eq!(
            params,
            [PairParam::FollowOffset, PairParam::RecipientContactOffset]
        );
    }

    #[test]
    fn only_the_contact_solvers_tuning_releases_the_hands() {
        assert!(PairParam::DisconnectDistance.releases_hands());
        assert!(PairParam::MaxRotationWeight.releases_hands());
        assert!(!PairParam::SpringCoefficient.releases_hands());
        assert!(!PairParam::InitiatorContactOffset.releases_hands());
        assert_eq!(PairParam::IkFadeTime.name(), "ik_fade_time");
        for (i, p) in PairParam::ALL.into_iter().enumerate() {
            assert_eq!(p as usize, i, "{p:?} sits at its own index in ALL");
        }
    }
}
