//! The squad's tick as it was written before its passes were fused (kept for the tests, which check
//! that the fused tick gives bit-identical agents and metrics).

use glam::Vec2;

use super::{
    angle_difference, move_profile, split_direction, usable, wall_salt, wrap_angle, Squad,
    TickShared, HOLD_FRACTION, NONE, TICK, WALL_NEIGHBOURS,
};
use crate::formation::agent::{next_state, position_command, turn_command, Gains};
use crate::formation::squad::Metrics;

impl Squad {
    /// The tick as it was before the fused loop: one pass for the control law, one for actuation, one
    /// for the metrics.
    pub(super) fn reference_step(&mut self) {
        let dt = TICK;
        self.advance_clock(dt);
        let (t, mut gains) = self.begin_tick(dt);
        for i in 0..self.n {
            self.reference_control(i, &t, &mut gains);
        }
        self.reference_actuate(&t);
        if t.in_flight {
            self.delay_head = t.read_at;
        }
        self.reference_metrics();
        self.record_tick();
    }

    /// The control law's pass for one agent: its velocity and turn rate commands.
    fn reference_control(&mut self, i: usize, t: &TickShared, gains: &mut Gains) {
        let s = self.slot_of.get(i).copied().unwrap_or(NONE);
        if !self.active[i] || s == NONE {
            self.vel[i] = Vec2::ZERO;
            self.omega[i] = 0.0;
            if self.simulate {
                self.prev_pos[i] = self.pos[i];
                self.prev_heading[i] = self.heading[i];
            }
            return;
        }
        let s = s as usize;
        let slot = self.slot_pos(s);
        let slot_yaw = self.slot_yaw(s);
        let blend = if self.simulate {
            t.blend
        } else if self.transition > 0.0 {
            move_profile(
                self.since_command + self.lead_of(i, t.lead_pos),
                self.transition,
            )
        } else {
            1.0
        };
        let target = self.anchor.pos + self.start_rel[i].lerp(slot - self.anchor.pos, blend);
        let target_yaw = wrap_angle(
            self.start_heading[i] + angle_difference(self.start_heading[i], slot_yaw) * t.blend_yaw,
        );
        let v_ff = (target - self.ref_prev[i]) / t.dt;
        let w_ff = angle_difference(self.ref_heading_prev[i], target_yaw) / t.dt;
        self.ref_prev[i] = target;
        self.ref_heading_prev[i] = target_yaw;
        // Smith predictor: compare the reference with where the agent will be once the
        // commands already sent (and not yet acted on) have played out, so that latency
        // neither makes it overshoot nor double-counts the feed-forward.
        let (pending_v, pending_w) = if t.in_flight {
            self.in_flight(i, t.cols, t.write_at)
        } else {
            (Vec2::ZERO, 0.0)
        };
        gains.k1 =
            (t.cfg.gains.k1 * t.cfg.latency_gains.k1_scale(self.agent_latency(i))).max(t.guide);
        let (aim, aim_yaw) = (
            target - pending_v * t.dt,
            wrap_angle(target_yaw - pending_w * t.dt),
        );
        let p = self.pos[i];
        let state = next_state(
            self.state[i],
            &mut self.counter[i],
            slot.distance(p),
            angle_difference(self.heading[i], slot_yaw),
            t.slot_moving,
            &t.cfg.thresholds,
        );
        self.state[i] = state;
        let mut v = position_command(
            state,
            aim - p,
            v_ff,
            &mut self.integral[i],
            gains,
            t.dt,
            t.cfg.max_speed,
            HOLD_FRACTION * t.cfg.thresholds.stable,
        );
        if t.r > 0.0 && t.cfg.repulsion_strength > 0.0 {
            let push = self.reference_push(i, t);
            v = (v + push.clamp_length_max(t.cfg.max_speed)).clamp_length_max(t.cfg.max_speed);
        }
        let w = turn_command(
            angle_difference(self.heading[i], aim_yaw),
            w_ff,
            gains,
            t.cfg.max_turn_rate,
        );
        self.vel[i] = v;
        self.omega[i] = w;
    }

    /// Returns the soft walls' push on agent `i` from the agents near its predicted position: at
    /// most `WALL_NEIGHBOURS` of them, sampled as the fused tick samples a crowded block.
    fn reference_push(&mut self, i: usize, t: &TickShared) -> Vec2 {
        let r = t.r;
        let mut push = Vec2::ZERO;
        let pos = &self.pred;
        let p = pos[i];
        let salt = wall_salt(i, t.tick);
        let (seen, total) = self
            .hash
            .for_each_near_capped(p, WALL_NEIGHBOURS, salt, |j| {
                if j != i {
                    let d = pos[j].distance(p);
                    if d < r {
                        let away = if d > 1e-4 {
                            (p - pos[j]) / d
                        } else {
                            split_direction(i, j)
                        };
                        push += away * t.cfg.repulsion_strength * (1.0 / d.max(0.02) - 1.0 / r);
                    }
                }
            });
        if seen > 0 && seen < total {
            push *= total as f32 / seen as f32;
        }
        self.wall_pairs += seen as u64;
        push
    }

    /// The actuation pass: simulated agents move, external agents' commands are kept for later.
    fn reference_actuate(&mut self, t: &TickShared) {
        for i in 0..self.n {
            if !self.active[i] {
                continue;
            }
            if self.simulate {
                let (v, w) = if self.delay_ticks > 0 {
                    let base = i * t.cols;
                    self.delay_vel[base + t.write_at] = self.vel[i];
                    self.delay_omega[base + t.write_at] = self.omega[i];
                    (
                        self.delay_vel[base + t.read_at],
                        self.delay_omega[base + t.read_at],
                    )
                } else {
                    (self.vel[i], self.omega[i])
                };
                self.prev_pos[i] = self.pos[i];
                self.prev_heading[i] = self.heading[i];
                let mut step = v * t.dt;
                if t.cfg.step_noise > 0.0 {
                    step += Vec2::new(self.rng.gauss(), self.rng.gauss()) * t.cfg.step_noise;
                }
                let (pos, heading) = (self.pos[i] + step, self.heading[i] + w * t.dt);
                if usable(pos) && heading.is_finite() {
                    self.pos[i] = pos;
                    self.heading[i] = wrap_angle(heading);
                } else {
                    // A command that overflowed (hostile input upstream): stay put, stop.
                    self.vel[i] = Vec2::ZERO;
                    self.omega[i] = 0.0;
                }
            } else {
                // External agents: their motion lags, their heading (set by the squad) does not,
                // so only velocities count as in flight for the predictor. The history is kept at
                // every candidate latency, for the predictor and the latency measurement.
                let base = i * t.cols;
                self.delay_vel[base + t.write_at] = self.vel[i];
                self.delay_omega[base + t.write_at] = 0.0;
                self.prev_heading[i] = self.heading[i];
                self.heading[i] = wrap_angle(self.heading[i] + self.omega[i] * t.dt);
            }
        }
    }

    fn reference_metrics(&mut self) {
        let mut m = Metrics {
            since_command: self.since_command,
            settle_time: self.metrics.settle_time,
            contract_met: self.metrics.contract_met,
            travel_time: self.transition,
            ..Metrics::default()
        };
        let (mut sum_e, mut sum_h, mut sum_h2) = (0.0f32, 0.0f32, 0.0f32);
        for i in 0..self.n {
            let s = self.slot_of.get(i).copied().unwrap_or(NONE);
            if !self.active[i] || s == NONE {
                continue;
            }
            let s = s as usize;
            m.active += 1;
            m.states[self.state[i] as usize] += 1;
            let slot = self.slot_pos(s);
            let e = slot.distance(self.pos[i]);
            sum_e += e;
            m.max_slot_error = m.max_slot_error.max(e);
            let h = angle_difference(self.slot_yaw(s), self.heading[i]);
            sum_h += h;
            sum_h2 += h * h;
            let nb = self.neighbour.get(s).copied().unwrap_or(NONE);
            let j = self.agent_of_slot.get(nb as usize).copied().unwrap_or(NONE);
            if nb != NONE
                && (nb as usize) < self.slots.len()
                && s < self.slots.len()
                && j != NONE
                && self.active.get(j as usize) == Some(&true)
            {
                let nominal = self.slots[s].distance(self.slots[nb as usize]);
                let actual = self.pos[i].distance(self.pos[j as usize]);
                m.nearest_spacing_error = m.nearest_spacing_error.max((actual - nominal).abs());
            }
        }
        for &(s, t) in &self.pairs {
            // Pairs and slots can disagree for a frame while a re-form shrinks the squad.
            let (Some(&a), Some(&b)) = (
                self.agent_of_slot.get(s as usize),
                self.agent_of_slot.get(t as usize),
            ) else {
                continue;
            };
            if a != NONE
                && b != NONE
                && self.active.get(a as usize) == Some(&true)
                && self.active.get(b as usize) == Some(&true)
                && (s as usize) < self.slots.len()
                && (t as usize) < self.slots.len()
            {
                let nominal = self.slots[s as usize].distance(self.slots[t as usize]);
                let actual = self.pos[a as usize].distance(self.pos[b as usize]);
                m.spacing_error = m.spacing_error.max((actual - nominal).abs());
            }
        }
        if m.active > 0 {
            let n = m.active as f32;
            m.mean_slot_error = sum_e / n;
            let mean = sum_h / n;
            m.heading_std = (sum_h2 / n - mean * mean).max(0.0).sqrt();
        }
        if !m.spacing_error.is_finite() {
            m.spacing_error = f32::MAX;
        }
        if !m.nearest_spacing_error.is_finite() {
            m.nearest_spacing_error = f32::MAX;
        }
        self.reference_settle(&mut m);
        self.metrics = m;
    }

    /// Settles as the tick does (one rule for both: the reference checks the tick's pass).
    fn reference_settle(&mut self, m: &mut Metrics) {
        self.settle(m);
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::super::TICK;
    use crate::formation::rng::Rng;
    use crate::formation::{FormationDef, Squad, SquadConfig};

    /// Returns `squad` advanced by `dt` as `advance` did before the fused tick: the reference tick,
    /// then the frame's sum of commands.
    fn reference_advance(squad: &mut Squad, dt: f32) -> u32 {
        if !dt.is_finite() || dt <= 0.0 {
            return 0;
        }
        squad.accumulator += dt;
        let mut ran = 0;
        squad.frame_sum.fill(Vec2::ZERO);
        while squad.accumulator >= TICK && ran < super::super::MAX_CATCH_UP {
            squad.accumulator -= TICK;
            squad.reference_step();
            for (sum, v) in squad.frame_sum.iter_mut().zip(&squad.vel) {
                *sum += *v;
            }
            ran += 1;
        }
        if ran > 0 {
            let k = 1.0 / ran as f32;
            for (f, sum) in squad.frame_vel.iter_mut().zip(&squad.frame_sum) {
                *f = *sum * k;
            }
        }
        if ran == super::super::MAX_CATCH_UP && squad.accumulator >= TICK {
            squad.accumulator %= TICK;
        }
        ran
    }

    /// Asserts that every per-agent value and the metrics of `a` and `b` are bit for bit equal.
    fn assert_same(a: &Squad, b: &Squad, what: &str) {
        fn bits2(v: &[Vec2]) -> Vec<(u32, u32)> {
            v.iter().map(|p| (p.x.to_bits(), p.y.to_bits())).collect()
        }
        fn bits(v: &[f32]) -> Vec<u32> {
            v.iter().map(|x| x.to_bits()).collect()
        }
        assert_eq!(bits2(&a.pos), bits2(&b.pos), "{what}: positions");
        assert_eq!(
            bits2(&a.prev_pos),
            bits2(&b.prev_pos),
            "{what}: previous positions"
        );
        assert_eq!(bits(&a.heading), bits(&b.heading), "{what}: headings");
        assert_eq!(
            bits(&a.prev_heading),
            bits(&b.prev_heading),
            "{what}: previous headings"
        );
        assert_eq!(bits2(&a.vel), bits2(&b.vel), "{what}: velocities");
        assert_eq!(
            bits2(&a.frame_vel),
            bits2(&b.frame_vel),
            "{what}: frame velocities"
        );
        assert_eq!(bits(&a.omega), bits(&b.omega), "{what}: turn rates");
        assert_eq!(a.state, b.state, "{what}: states");
        assert_eq!(a.counter, b.counter, "{what}: counters");
        assert_eq!(bits2(&a.integral), bits2(&b.integral), "{what}: integrals");
        assert_eq!(bits2(&a.ref_prev), bits2(&b.ref_prev), "{what}: references");
        assert_eq!(
            bits(&a.ref_heading_prev),
            bits(&b.ref_heading_prev),
            "{what}: reference yaws"
        );
        assert_eq!(
            bits2(&a.delay_vel),
            bits2(&b.delay_vel),
            "{what}: commands in flight"
        );
        assert_eq!(
            bits(&a.delay_omega),
            bits(&b.delay_omega),
            "{what}: turns in flight"
        );
        assert_eq!(a.delay_head, b.delay_head, "{what}: delay head");
        assert_eq!(a.lag, b.lag, "{what}: lags");
        let (ma, mb) = (a.metrics, b.metrics);
        let mbits = |m: crate::formation::squad::Metrics| {
            (
                [
                    m.spacing_error,
                    m.nearest_spacing_error,
                    m.mean_slot_error,
                    m.max_slot_error,
                    m.heading_std,
                    m.since_command,
                    m.settle_time,
                    m.travel_time,
                ]
                .map(f32::to_bits),
                m.active,
                m.states,
                m.contract_met,
            )
        };
        assert_eq!(mbits(ma), mbits(mb), "{what}: metrics {ma:?} vs {mb:?}");
        assert_eq!(a.settled_pending, b.settled_pending, "{what}: settle");
    }

    /// Scatters every agent up to `radius` m off its slot, turned anyhow.
    fn scatter(squad: &mut Squad, rng: &mut Rng, radius: f32) {
        for i in 0..squad.len() {
            if let Some(s) = squad.slot_of(i) {
                let p = squad.slot_pos(s) + rng.vec2() * radius;
                squad.place(i, p, rng.vec2().x * 6.0);
            }
        }
    }

    /// Runs `script(tick, squad)` and then a tick on two copies of `squad`, one with the fused tick
    /// (`advance`, or `step` every third tick) and one with the reference, comparing them each tick.
    fn compare(mut squad: Squad, ticks: usize, mut script: impl FnMut(usize, &mut Squad)) {
        let mut old = squad.clone();
        for t in 0..ticks {
            script(t, &mut squad);
            script(t, &mut old);
            if t % 3 == 2 {
                squad.step();
                old.reference_step();
            } else {
                // Every seventh frame is a long one (two ticks, a catch-up).
                let dt = if t % 7 == 0 { 2.5 * TICK } else { TICK };
                assert_eq!(squad.advance(dt), reference_advance(&mut old, dt));
            }
            assert_same(&squad, &old, &format!("tick {t}"));
        }
    }

    fn column(n: usize, cfg: SquadConfig, simulate: bool) -> Squad {
        let mut squad = Squad::new(n, simulate, cfg);
        let def = FormationDef::from_ron("(shape: Column(files: 12), spacing: 1.2)")
            .expect("the column parses");
        squad.form(&def).expect("the column seats every agent");
        squad
    }

    #[test]
    fn the_fused_tick_matches_the_reference_forming_up_and_marching() {
        let mut squad = column(300, SquadConfig::default(), true);
        scatter(&mut squad, &mut Rng::new(4), 0.6);
        squad.dress();
        compare(squad, 240, |t, s| match t {
            90 => s.march(Vec2::new(0.3, -1.0), 1.4),
            170 => s.halt(),
            200 => s.face(1.0),
            _ => {}
        });
    }

    #[test]
    fn the_fused_tick_matches_the_reference_under_latency_noise_and_crowding() {
        let cfg = SquadConfig {
            latency: 0.1,
            step_noise: 0.004,
            repulsion_radius: 0.9,
            ..SquadConfig::default()
        };
        let mut squad = column(150, cfg, true);
        scatter(&mut squad, &mut Rng::new(5), 1.5);
        squad.dress();
        compare(squad, 200, |t, s| match t {
            40 => {
                let _ = s.set_active_where(|i| i % 9 == 0, false);
            }
            120 => {
                s.set_active(9, true);
                s.march_to(Vec2::new(5.0, -8.0), 2.0);
            }
            _ => {}
        });
    }

    #[test]
    fn the_fused_tick_matches_the_reference_for_external_agents() {
        let cfg = SquadConfig {
            latency: 0.05,
            ..SquadConfig::default()
        };
        let mut squad = column(120, cfg, false);
        scatter(&mut squad, &mut Rng::new(6), 0.8);
        squad.dress();
        // Bodies that move at 90 % of their last command, with a little slip: the script runs
        // once per copy, so what it feeds depends only on the tick and the squad.
        compare(squad, 180, |t, s| {
            for i in 0..s.len() {
                let slip = Vec2::new(((t * 7 + i * 13) % 11) as f32 - 5.0, (i % 5) as f32 - 2.0);
                let p = s.position(i) + s.velocity(i) * (0.9 * TICK) + slip * 1e-4;
                s.sense(i, p);
            }
            if t == 100 {
                s.set_active(3, false);
            }
        });
    }
}
