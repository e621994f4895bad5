//! The squad's baseline: its principal direction by weighted PCA and a point on it by weighted
//! median, so one or a few agents dropping out barely move it.
//!
//! Weights follow slot order: the head 1.0, the tail 0.8, everyone else 0.9; absent agents weigh
//! nothing. Above [`CLUSTER_ABOVE`] agents, consecutive slots are pooled into clusters of
//! [`CLUSTER_SIZE`] (their weighted centroids and summed weights), which keeps the median's sort
//! small, so large squads stay linear.

use glam::Vec2;

/// Weight of the head (slot 0).
pub const HEAD_WEIGHT: f32 = 1.0;
/// Weight of the tail (last slot).
pub const TAIL_WEIGHT: f32 = 0.8;
/// Weight of every other slot.
pub const MIDDLE_WEIGHT: f32 = 0.9;
/// Squads larger than this are clustered before the fit.
pub const CLUSTER_ABOVE: usize = 64;
/// Consecutive slots per cluster.
pub const CLUSTER_SIZE: usize = 5;

/// Returns the baseline weight of slot `slot` of `n`.
#[must_use]
pub fn slot_weight(slot: usize, n: usize) -> f32 {
    if slot == 0 {
        HEAD_WEIGHT
    } else if slot + 1 == n {
        TAIL_WEIGHT
    } else {
        MIDDLE_WEIGHT
    }
}

/// A fitted baseline: a unit direction (x, z) and a point on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Baseline {
    /// Unit direction of the principal axis (x, z); its sign is arbitrary.
    pub direction: Vec2,
    /// The weighted-median point of the squad along the axis, on the axis through the weighted mean.
    pub point: Vec2,
    /// Largest eigenvalue of the weighted covariance (m²): spread along the axis.
    pub major: f32,
    /// Smallest eigenvalue (m²): spread across the axis.
    pub minor: f32,
}

/// Reusable buffers for the fit.
#[derive(Default, Debug, Clone)]
pub struct BaselineFit {
    pts: Vec<Vec2>,
    w: Vec<f32>,
    proj: Vec<(f32, f32)>,
}

impl BaselineFit {
    /// Returns the baseline of the points `pos[i]` with weights `w[i]` (non-finite points and
    /// non-positive weights are skipped), clustering by index order above [`CLUSTER_ABOVE`]
    /// points. Returns `None` with fewer than two usable points or zero total weight.
    pub fn fit(&mut self, pos: &[Vec2], w: &[f32]) -> Option<Baseline> {
        self.pts.clear();
        self.w.clear();
        let usable =
            |k: usize| w.get(k).is_some_and(|x| *x > 0.0 && x.is_finite()) && pos[k].is_finite();
        if pos.len() > CLUSTER_ABOVE {
            for start in (0..pos.len()).step_by(CLUSTER_SIZE) {
                let (mut sum, mut total) = (Vec2::ZERO, 0.0);
                for k in start..(start + CLUSTER_SIZE).min(pos.len()) {
                    if usable(k) {
                        sum += pos[k] * w[k];
                        total += w[k];
                    }
                }
                if total > 0.0 {
                    self.pts.push(sum / total);
                    self.w.push(total);
                }
            }
        } else {
            for k in 0..pos.len() {
                if usable(k) {
                    self.pts.push(pos[k]);
                    self.w.push(w[k]);
                }
            }
        }
        if self.pts.len() < 2 {
            return None;
        }
        let total: f32 = self.w.iter().sum();
        let mean = self
            .pts
            .iter()
            .zip(&self.w)
            .map(|(p, w)| *p * *w)
            .sum::<Vec2>()
            / total;
        let (mut cxx, mut cxy, mut cyy) = (0.0f32, 0.0f32, 0.0f32);
        for (p, w) in self.pts.iter().zip(&self.w) {
            let d = *p - mean;
            cxx += w * d.x * d.x;
            cxy += w * d.x * d.y;
            cyy += w * d.y * d.y;
        }
        let (cxx, cxy, cyy) = (cxx / total, cxy / total, cyy / total);
        // Closed-form eigen-decomposition of the symmetric 2×2 covariance.
        let angle = 0.5 * (2.0 * cxy).atan2(cxx - cyy);
        let direction = Vec2::new(angle.cos(), angle.sin());
        let half_trace = 0.5 * (cxx + cyy);
        let root = (0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy).sqrt();
        // Weighted median of the projections along the axis.
        self.proj.clear();
        self.proj.extend(
            self.pts
                .iter()
                .zip(&self.w)
                .map(|(p, w)| ((*p - mean).dot(direction), *w)),
        );
        self.proj.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut acc = 0.0;
        let mut median = 0.0;
        for (t, w) in &self.proj {
            acc += w;
            median = *t;
            if acc >= 0.5 * total {
                break;
            }
        }
        let out = Baseline {
            direction,
            point: mean + direction * median,
            major: half_trace + root,
            minor: (half_trace - root).max(0.0),
        };
        (out.direction.is_finite() && out.point.is_finite()).then_some(out)
    }
}

/// Returns the unsigned angle (radians, 0..=π/2) between two axes (directions up to sign).
#[must_use]
pub fn axis_angle(a: Vec2, b: Vec2) -> f32 {
    a.perp_dot(b).abs().atan2(a.dot(b).abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::rng::Rng;

    #[test]
    fn pca_matches_closed_form_on_known_data() {
        // Four points: (±2, 0) and (0, ±1) turned by 30°: covariance eigenvalues 2 and 0.5 with
        // equal weights, major axis at 30°.
        let a = 30f32.to_radians();
        let (c, s) = (a.cos(), a.sin());
        let turn = |x: f32, y: f32| Vec2::new(x * c - y * s, x * s + y * c) + Vec2::new(3.0, -1.0);
        let pts = [
            turn(2.0, 0.0),
            turn(-2.0, 0.0),
            turn(0.0, 1.0),
            turn(0.0, -1.0),
        ];
        let b = BaselineFit::default().fit(&pts, &[1.0; 4]).unwrap();
        assert!(axis_angle(b.direction, Vec2::new(c, s)) < 1e-5);
        assert!((b.major - 2.0).abs() < 1e-5, "{}", b.major);
        assert!((b.minor - 0.5).abs() < 1e-5, "{}", b.minor);
        // The weighted median lies on the axis through the centre.
        assert!(
            (b.point - Vec2::new(3.0, -1.0)).length() < 1e-4,
            "{}",
            b.point
        );
    }

    #[test]
    fn weights_pull_the_median_point() {
        let pts = [
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(2.0, 0.0),
        ];
        let b = BaselineFit::default()
            .fit(
                &pts,
                &[slot_weight(0, 3), slot_weight(1, 3), slot_weight(2, 3)],
            )
            .unwrap();
        assert!((b.point - Vec2::new(1.0, 0.0)).length() < 1e-5);
        let b = BaselineFit::default().fit(&pts, &[5.0, 0.1, 0.1]).unwrap();
        assert!((b.point - Vec2::ZERO).length() < 1e-5, "{}", b.point);
    }

    #[test]
    fn dropping_three_edge_agents_moves_baseline_under_half_a_degree() {
        let mut rng = Rng::new(42);
        let axis = Vec2::new(0.8, 0.6);
        let across = axis.perp();
        let pos: Vec<Vec2> = (0..20)
            .map(|i| axis * (i as f32 * 1.2) + across * rng.signed() * 0.05)
            .collect();
        let mut w: Vec<f32> = (0..20).map(|i| slot_weight(i, 20)).collect();
        let mut fit = BaselineFit::default();
        let full = fit.fit(&pos, &w).unwrap();
        for k in [0, 18, 19] {
            w[k] = 0.0;
        }
        let fewer = fit.fit(&pos, &w).unwrap();
        let shift = axis_angle(full.direction, fewer.direction).to_degrees();
        assert!(shift < 0.5, "baseline turned {shift}°");
        // The two-point (head–tail) method on the same data, for comparison, is worse.
        let two_point = |a: Vec2, b: Vec2| (b - a).normalize();
        let tp = axis_angle(two_point(pos[0], pos[19]), two_point(pos[1], pos[17])).to_degrees();
        assert!(shift <= tp + 1e-3, "pca {shift}° vs two-point {tp}°");
    }

    #[test]
    fn clustered_fit_agrees_with_full_fit() {
        let mut rng = Rng::new(5);
        let axis = Vec2::new(0.6, -0.8);
        let pos: Vec<Vec2> = (0..500)
            .map(|i| axis * (i as f32 * 0.5) + axis.perp() * rng.signed() * 0.1)
            .collect();
        let w = vec![0.9; 500];
        let b = BaselineFit::default().fit(&pos, &w).unwrap();
        assert!(axis_angle(b.direction, axis).to_degrees() < 0.05);
    }

    #[test]
    fn degenerate_input_gives_none() {
        let mut fit = BaselineFit::default();
        assert!(fit.fit(&[], &[]).is_none());
        assert!(fit.fit(&[Vec2::ONE], &[1.0]).is_none());
        assert!(fit.fit(&[Vec2::NAN, Vec2::ONE], &[1.0, 1.0]).is_none());
        assert!(fit.fit(&[Vec2::ZERO, Vec2::ONE], &[0.0, 0.0]).is_none());
        assert!(fit
            .fit(&[Vec2::ZERO, Vec2::ONE], &[f32::NAN, 1.0])
            .is_none());
    }
}
