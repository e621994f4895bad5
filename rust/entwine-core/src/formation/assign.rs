//! Slot assignment: which agent takes which slot when the squad re-forms.
//!
//! The cost is the total straight-line travel Σ‖agent − slot‖. A minimum of that sum has no two
//! paths crossing: if two paths crossed, swapping their slots would shorten both by the triangle
//! inequality. Up to [`EXACT_MAX`] agents the minimum is found exactly with the Hungarian method
//! (shortest augmenting paths, O(n³) at worst, f64 potentials) on a cost matrix computed once per
//! solve, warm-started by Jonker and Volgenant's row and column reductions and augmenting row
//! reduction, so only the agents those leave unmatched cost a path search. Above that, agents and slots are bisected recursively at the same
//! count along the slots' longer extent (O(n log n)), blocks of at most 48 are solved exactly, and
//! swap passes between agents close in that order remove the crossings and detours left at block
//! borders. It is not guaranteed optimal (typically within a few tens of percent on random
//! scatters, much closer between formations) and stays fast for tens of thousands of agents.

use glam::Vec2;

/// Squads up to this size are assigned exactly (Hungarian method).
pub const EXACT_MAX: usize = 160;
/// Neighbours (in sweep order) each agent tries swapping slots with, per pass, above `EXACT_MAX`.
const SWAP_WINDOW: usize = 12;
/// Most swap passes above `EXACT_MAX`.
const SWAP_PASSES: usize = 4;
/// Block size solved exactly at the leaves of the bisection above `EXACT_MAX`.
const BLOCK: usize = 48;

/// Reusable buffers for slot assignment (so re-forming does not allocate after the first time).
#[derive(Default, Debug, Clone)]
pub struct Assigner {
    u: Vec<f64>,
    v: Vec<f64>,
    p: Vec<usize>,
    way: Vec<usize>,
    minv: Vec<f64>,
    used: Vec<bool>,
    /// Rows (agents) matched by the reduction that opens each solve.
    row_done: Vec<bool>,
    free: Vec<usize>,
    /// The block's cost matrix (row = agent, column = slot), filled once per solve so the O(n³)
    /// inner loop reads costs instead of taking square roots.
    cost: Vec<f64>,
    /// Each agent's current travel in the swap passes, indexed like `agents`.
    travel: Vec<f64>,
    order_a: Vec<u32>,
    order_s: Vec<u32>,
    stack: Vec<(usize, usize)>,
    sub_a: Vec<Vec2>,
    sub_s: Vec<Vec2>,
    sub_out: Vec<u32>,
}

impl Assigner {
    /// Writes into `slot_of[i]` the slot taken by agent `i` so that total travel is minimal (exact
    /// up to [`EXACT_MAX`] agents, a planar heuristic above). `agents.len()` must equal
    /// `slots.len()`; otherwise `slot_of` gets the identity for the common prefix.
    pub fn assign(&mut self, agents: &[Vec2], slots: &[Vec2], slot_of: &mut Vec<u32>) {
        let n = agents.len().min(slots.len());
        slot_of.clear();
        slot_of.extend((0..n).map(|i| i as u32));
        if n <= 1 || agents.len() != slots.len() {
            return;
        }
        if !agents.iter().chain(slots).all(|p| p.is_finite()) {
            return;
        }
        if n <= EXACT_MAX {
            self.hungarian(agents, slots, slot_of);
        } else {
            self.banded(agents, slots, slot_of);
        }
    }

    /// Writes the exact assignment into `slot_of`; leaves `slot_of` untouched (the caller's
    /// permutation) if the method cannot finish, which finite costs never cause.
    fn hungarian(&mut self, agents: &[Vec2], slots: &[Vec2], slot_of: &mut [u32]) {
        let n = agents.len();
        self.cost.clear();
        for a in agents {
            let a = a.as_dvec2();
            self.cost
                .extend(slots.iter().map(|s| (a - s.as_dvec2()).length()));
        }
        reset(&mut self.u, n + 1, 0.0);
        reset(&mut self.v, n + 1, 0.0);
        reset(&mut self.p, n + 1, 0);
        reset(&mut self.way, n + 1, 0);
        // Warm start, as Jonker and Volgenant do: a row and a column reduction give feasible
        // potentials (every reduced cost c − u − v ≥ 0) and each column's zero goes to its row if
        // that row is free; then augmenting row reduction moves the free rows onto their cheapest
        // column, lowering that column's potential so the row it displaces, if any, is freed.
        // Through all of it every matched row sits on a column of least c − v, so with
        // u = min(c − v) per row the potentials stay feasible and matched edges tight: all the
        // augmenting phase below needs, so the optimum is the same. Only the rows still free then
        // (few, when agents stand near their slots) cost a shortest-path search each.
        self.reduce(n);
        self.augmenting_row_reduction(n);
        self.tighten_rows(n);
        if !self.augment_free_rows(n) {
            return;
        }
        for j in 1..=n {
            if self.p[j] > 0 {
                slot_of[self.p[j] - 1] = (j - 1) as u32;
            }
        }
    }

    /// Reduces rows and columns to feasible potentials, giving each column's zero to a free row.
    fn reduce(&mut self, n: usize) {
        reset(&mut self.row_done, n + 1, false);
        for i in 1..=n {
            let row = &self.cost[(i - 1) * n..i * n];
            self.u[i] = row.iter().copied().fold(f64::INFINITY, f64::min);
        }
        for j in 1..=n {
            let (mut best, mut at) = (f64::INFINITY, 0);
            for i in 1..=n {
                let r = self.cost[(i - 1) * n + j - 1] - self.u[i];
                // On a tie, prefer a row still free (lattices tie a lot).
                if r < best || (r == best && self.row_done[at] && !self.row_done[i]) {
                    best = r;
                    at = i;
                }
            }
            self.v[j] = best;
            if at != 0 && !self.row_done[at] {
                self.row_done[at] = true;
                self.p[j] = at;
            }
        }
    }

    /// Moves free rows onto their cheapest column, freeing the row each displaces (two passes).
    fn augmenting_row_reduction(&mut self, n: usize) {
        self.free.clear();
        self.free.extend((1..=n).filter(|i| !self.row_done[*i]));
        for _pass in 0..2 {
            let mut list = core::mem::take(&mut self.free);
            let mut k = 0;
            let mut steps = 0;
            while k < list.len() && steps < 4 * n {
                steps += 1;
                let i = list[k];
                k += 1;
                let row = &self.cost[(i - 1) * n..i * n];
                let (mut u1, mut j1, mut u2, mut j2) = (f64::INFINITY, 0, f64::INFINITY, 0);
                for j in 1..=n {
                    let h = row[j - 1] - self.v[j];
                    if h < u2 {
                        if h < u1 {
                            (u2, j2, u1, j1) = (u1, j1, h, j);
                        } else {
                            (u2, j2) = (h, j);
                        }
                    }
                }
                if j1 == 0 {
                    self.free.push(i);
                    continue;
                }
                let mut i0 = self.p[j1];
                if u1 < u2 && u2.is_finite() {
                    self.v[j1] -= u2 - u1;
                } else if i0 != 0 && j2 != 0 {
                    j1 = j2;
                    i0 = self.p[j2];
                }
                self.p[j1] = i;
                self.row_done[i] = true;
                if i0 != 0 {
                    self.row_done[i0] = false;
                    if u1 < u2 {
                        k -= 1;
                        list[k] = i0;
                    } else {
                        self.free.push(i0);
                    }
                }
            }
            self.free.extend_from_slice(&list[k..]);
            self.free.sort_unstable();
            self.free.dedup();
            self.free.retain(|i| !self.row_done[*i]);
            list.clear();
            if self.free.is_empty() {
                self.free = list;
                break;
            }
        }
    }

    /// Sets each row's potential to its least reduced cost, so matched edges are tight.
    fn tighten_rows(&mut self, n: usize) {
        for i in 1..=n {
            let row = &self.cost[(i - 1) * n..i * n];
            self.u[i] = row
                .iter()
                .zip(&self.v[1..])
                .map(|(c, v)| c - v)
                .fold(f64::INFINITY, f64::min);
        }
    }

    /// Matches each row still free by a shortest augmenting path; false if one is not found.
    fn augment_free_rows(&mut self, n: usize) -> bool {
        for i in 1..=n {
            if self.row_done[i] {
                continue;
            }
            self.p[0] = i;
            let mut j0 = 0;
            reset(&mut self.minv, n + 1, f64::INFINITY);
            reset(&mut self.used, n + 1, false);
            loop {
                self.used[j0] = true;
                let i0 = self.p[j0];
                let mut delta = f64::INFINITY;
                let mut j1 = 0;
                let row = &self.cost[(i0 - 1) * n..i0 * n];
                let ui0 = self.u[i0];
                let columns = row
                    .iter()
                    .zip(&self.v[1..])
                    .zip(&self.used[1..])
                    .zip(self.minv[1..].iter_mut().zip(&mut self.way[1..]));
                for (j, (((c, v), used), (minv, way))) in columns.enumerate() {
                    if !*used {
                        let cur = c - ui0 - v;
                        if cur < *minv {
                            *minv = cur;
                            *way = j0;
                        }
                        if *minv < delta {
                            delta = *minv;
                            j1 = j + 1;
                        }
                    }
                }
                if j1 == 0 || !delta.is_finite() {
                    // Only reachable with non-finite costs, which `assign` and `dist` rule out:
                    // keep the caller's permutation.
                    return false;
                }
                let columns = self.used.iter().zip(&self.p).zip(&mut self.v);
                for (((used, p), v), minv) in columns.zip(&mut self.minv) {
                    if *used {
                        self.u[*p] += delta;
                        *v -= delta;
                    } else {
                        *minv -= delta;
                    }
                }
                j0 = j1;
                if self.p[j0] == 0 {
                    break;
                }
            }
            loop {
                let j1 = self.way[j0];
                self.p[j0] = self.p[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
        true
    }

    fn banded(&mut self, agents: &[Vec2], slots: &[Vec2], slot_of: &mut [u32]) {
        let n = agents.len();
        self.order_a.clear();
        self.order_a.extend(0..n as u32);
        self.order_s.clear();
        self.order_s.extend(0..n as u32);
        // Recursive bisection: split both sets at the same count along the slots' longer extent,
        // down to blocks solved exactly.
        self.stack.clear();
        self.stack.push((0, n));
        while let Some((lo, hi)) = self.stack.pop() {
            let len = hi - lo;
            if len <= BLOCK {
                self.solve_block(agents, slots, lo, hi, slot_of);
                continue;
            }
            let (min, max) = self.order_s[lo..hi].iter().fold(
                (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
                |(a, b), s| (a.min(slots[*s as usize]), b.max(slots[*s as usize])),
            );
            let axis = if max.x - min.x >= max.y - min.y {
                Vec2::X
            } else {
                Vec2::Y
            };
            let mid = len / 2;
            let key = |p: Vec2| p.dot(axis);
            self.order_s[lo..hi].select_nth_unstable_by(mid, |a, b| {
                key(slots[*a as usize]).total_cmp(&key(slots[*b as usize]))
            });
            self.order_a[lo..hi].select_nth_unstable_by(mid, |a, b| {
                key(agents[*a as usize]).total_cmp(&key(agents[*b as usize]))
            });
            self.stack.push((lo, lo + mid));
            self.stack.push((lo + mid, hi));
        }
        // Window swaps in agent order: each removes a crossing or a detour between near agents.
        self.travel.clear();
        self.travel
            .extend((0..n).map(|a| dist(agents[a], slots[slot_of[a] as usize])));
        for _ in 0..SWAP_PASSES {
            let mut improved = false;
            for k in 0..n - 1 {
                for l in k + 1..(k + 1 + SWAP_WINDOW).min(n) {
                    let (a, b) = (self.order_a[k] as usize, self.order_a[l] as usize);
                    let (sa, sb) = (slot_of[a] as usize, slot_of[b] as usize);
                    let now = self.travel[a] + self.travel[b];
                    let (da, db) = (dist(agents[a], slots[sb]), dist(agents[b], slots[sa]));
                    if da + db < now - 1e-5 {
                        slot_of.swap(a, b);
                        self.travel[a] = da;
                        self.travel[b] = db;
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
    }

    fn solve_block(
        &mut self,
        agents: &[Vec2],
        slots: &[Vec2],
        lo: usize,
        hi: usize,
        slot_of: &mut [u32],
    ) {
        let mut sub_a = core::mem::take(&mut self.sub_a);
        let mut sub_s = core::mem::take(&mut self.sub_s);
        let mut sub_out = core::mem::take(&mut self.sub_out);
        sub_a.clear();
        sub_s.clear();
        sub_a.extend(self.order_a[lo..hi].iter().map(|a| agents[*a as usize]));
        sub_s.extend(self.order_s[lo..hi].iter().map(|s| slots[*s as usize]));
        // Start from the identity so the block stays a permutation whatever the solver does.
        sub_out.clear();
        sub_out.extend(0..(hi - lo) as u32);
        self.hungarian(&sub_a, &sub_s, &mut sub_out);
        for (k, s) in sub_out.iter().enumerate() {
            slot_of[self.order_a[lo + k] as usize] = self.order_s[lo + *s as usize];
        }
        self.sub_a = sub_a;
        self.sub_s = sub_s;
        self.sub_out = sub_out;
    }
}

/// Returns the distance between two points in `f64`: finite for any finite `f32` input (an `f32`
/// distance overflows to infinity beyond about 1.8e19 m).
fn dist(a: Vec2, b: Vec2) -> f64 {
    (a.as_dvec2() - b.as_dvec2()).length()
}

fn reset<T: Copy>(v: &mut Vec<T>, n: usize, value: T) {
    v.clear();
    v.resize(n, value);
}

/// Returns the total travel Σ‖agents[i] − slots[slot_of[i]]‖ in metres (summed in `f64`; a slot
/// index out of range counts as no travel).
#[must_use]
pub fn total_travel(agents: &[Vec2], slots: &[Vec2], slot_of: &[u32]) -> f32 {
    agents
        .iter()
        .zip(slot_of)
        .filter_map(|(a, s)| slots.get(*s as usize).map(|s| dist(*a, *s)))
        .sum::<f64>() as f32
}

/// Returns true when the open segments a0→a1 and b0→b1 properly cross.
#[must_use]
pub fn segments_cross(a0: Vec2, a1: Vec2, b0: Vec2, b1: Vec2) -> bool {
    let side = |p: Vec2, q: Vec2, r: Vec2| (q - p).perp_dot(r - p);
    let d1 = side(a0, a1, b0);
    let d2 = side(a0, a1, b1);
    let d3 = side(b0, b1, a0);
    let d4 = side(b0, b1, a1);
    d1 * d2 < 0.0 && d3 * d4 < 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::rng::Rng;

    fn permutations(n: usize) -> Vec<Vec<u32>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in permutations(n - 1) {
            for k in 0..=p.len() {
                let mut q = p.clone();
                q.insert(k, (n - 1) as u32);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn hungarian_matches_brute_force_on_small_cases() {
        let mut rng = Rng::new(7);
        let mut asg = Assigner::default();
        let mut slot_of = Vec::new();
        for n in 1..=7 {
            let perms = permutations(n);
            for _ in 0..20 {
                let a: Vec<Vec2> = (0..n).map(|_| rng.vec2() * 5.0).collect();
                let s: Vec<Vec2> = (0..n).map(|_| rng.vec2() * 5.0).collect();
                asg.assign(&a, &s, &mut slot_of);
                let got = total_travel(&a, &s, &slot_of);
                let best = perms
                    .iter()
                    .map(|p| total_travel(&a, &s, p))
                    .fold(f32::MAX, f32::min);
                assert!((got - best).abs() < 1e-4, "n={n}: {got} vs optimum {best}");
                let mut seen = slot_of.clone();
                seen.sort_unstable();
                assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
            }
        }
    }

    /// The textbook Hungarian method (shortest augmenting paths from zero potentials, costs taken
    /// on the fly), as the assigner ran before its warm start: the reference optimum.
    fn reference_optimum(a: &[Vec2], s: &[Vec2]) -> f64 {
        let n = a.len();
        let c = |i: usize, j: usize| dist(a[i - 1], s[j - 1]);
        let (mut u, mut v) = (vec![0.0; n + 1], vec![0.0; n + 1]);
        let (mut p, mut way) = (vec![0; n + 1], vec![0; n + 1]);
        for i in 1..=n {
            p[0] = i;
            let mut j0 = 0;
            let mut minv = vec![f64::INFINITY; n + 1];
            let mut used = vec![false; n + 1];
            loop {
                used[j0] = true;
                let (i0, mut delta, mut j1) = (p[j0], f64::INFINITY, 0);
                for j in 1..=n {
                    if !used[j] {
                        let cur = c(i0, j) - u[i0] - v[j];
                        if cur < minv[j] {
                            minv[j] = cur;
                            way[j] = j0;
                        }
                        if minv[j] < delta {
                            delta = minv[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=n {
                    if used[j] {
                        u[p[j]] += delta;
                        v[j] -= delta;
                    } else {
                        minv[j] -= delta;
                    }
                }
                j0 = j1;
                if p[j0] == 0 {
                    break;
                }
            }
            loop {
                let j1 = way[j0];
                p[j0] = p[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
        (1..=n).map(|j| c(p[j], j)).sum()
    }

    #[test]
    fn warm_started_assignment_matches_the_reference_optimum() {
        // Random scatters, lattices (many tied costs), agents near their slots (the warm start's
        // best case) and a squad shifted or halved onto a new layout, 1–160 agents.
        let mut rng = Rng::new(21);
        let mut asg = Assigner::default();
        let mut slot_of = Vec::new();
        let mut worst = 0.0f64;
        for case in 0..240 {
            let n = 1 + (case * 37) % EXACT_MAX;
            let lattice = |i: usize, files: usize| {
                Vec2::new((i % files) as f32 * 1.2, (i / files) as f32 * 1.2)
            };
            let s: Vec<Vec2> = match case % 4 {
                0 => (0..n).map(|_| rng.vec2() * 8.0).collect(),
                _ => (0..n).map(|i| lattice(i, 1 + case % 13)).collect(),
            };
            let a: Vec<Vec2> = match case % 4 {
                0 | 1 => (0..n).map(|_| rng.vec2() * 8.0).collect(),
                2 => s.iter().map(|p| *p + rng.vec2() * 0.3).collect(),
                _ => (0..n)
                    .map(|i| lattice(2 * i, 1 + case % 7) + Vec2::X)
                    .collect(),
            };
            asg.assign(&a, &s, &mut slot_of);
            let mut seen = slot_of.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n as u32).collect::<Vec<_>>(), "case {case}");
            let got: f64 = (0..n).map(|i| dist(a[i], s[slot_of[i] as usize])).sum();
            let best = reference_optimum(&a, &s);
            let rel = (got - best) / best.max(1e-9);
            worst = worst.max(rel);
            assert!(rel < 1e-9, "case {case}, n={n}: {got} vs optimum {best}");
        }
        println!("warm-started assignment: worst excess over the optimum {worst:.2e}");
    }

    #[test]
    fn optimal_assignment_has_no_crossing_paths() {
        let mut rng = Rng::new(11);
        let mut asg = Assigner::default();
        let mut slot_of = Vec::new();
        for _ in 0..20 {
            let a: Vec<Vec2> = (0..30).map(|_| rng.vec2() * 6.0).collect();
            let s: Vec<Vec2> = (0..30)
                .map(|i| Vec2::new(i as f32 * 1.2 - 18.0, 0.0))
                .collect();
            asg.assign(&a, &s, &mut slot_of);
            for i in 0..30 {
                for j in 0..i {
                    let (si, sj) = (s[slot_of[i] as usize], s[slot_of[j] as usize]);
                    assert!(
                        !segments_cross(a[i], si, a[j], sj),
                        "paths {i} and {j} cross"
                    );
                }
            }
        }
    }

    #[test]
    fn banded_heuristic_is_a_permutation_close_to_optimal() {
        let mut rng = Rng::new(3);
        let n = 400;
        let a: Vec<Vec2> = (0..n).map(|_| rng.vec2() * 10.0).collect();
        let s: Vec<Vec2> = (0..n)
            .map(|i| Vec2::new((i % 20) as f32 - 10.0, (i / 20) as f32 - 10.0))
            .collect();
        let mut asg = Assigner::default();
        let mut slot_of = Vec::new();
        asg.assign(&a, &s, &mut slot_of);
        let mut seen = slot_of.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
        let heuristic = total_travel(&a, &s, &slot_of);
        let mut exact = vec![0; n];
        asg.hungarian(&a, &s, &mut exact);
        let optimum = total_travel(&a, &s, &exact);
        assert!(heuristic < optimum * 1.6, "{heuristic} vs {optimum}");
    }

    #[test]
    fn hostile_input_gives_identity() {
        let mut asg = Assigner::default();
        let mut slot_of = Vec::new();
        asg.assign(
            &[Vec2::NAN, Vec2::ZERO],
            &[Vec2::ZERO, Vec2::ONE],
            &mut slot_of,
        );
        assert_eq!(slot_of, vec![0, 1]);
        asg.assign(&[], &[], &mut slot_of);
        assert!(slot_of.is_empty());
    }
}
