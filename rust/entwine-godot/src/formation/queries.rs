//! Read-outs: agents' and slots' global poses, latencies, states, the neighbour pairs, the live
//! metrics and the baseline, each converted from the squad's local ground plane.

use entwine_core::formation::Metrics;
use godot::prelude::*;

use super::FormationController;
use crate::convert::from_ground;

#[godot_api(secondary)]
impl FormationController {
    /// Returns how many times the formation has been laid out and slots assigned since the squad
    /// was built: one per `form`, `dress`, [method set_agent_active] that changed something,
    /// [method set_agents_active] batch or dropped peer.
    #[func(rename = _get_relayout_count)]
    pub fn get_relayout_count(&self) -> i64 {
        self.squad.relayout_count() as i64
    }

    /// Returns the number of agents.
    #[func]
    pub fn get_agent_count(&self) -> i32 {
        self.squad.len() as i32
    }

    /// Returns agent `index`'s global position (its last tick).
    #[func]
    pub fn get_agent_position(&self, index: i32) -> Vector3 {
        let i = index.max(0) as usize;
        if i >= self.squad.len() {
            return Vector3::ZERO;
        }
        let p = self.squad.position(i);
        let y = self.agents.get(i).map_or(0.0, |a| a.get_position().y);
        self.base().to_global(from_ground(p, y))
    }

    /// Returns agent `index`'s global yaw in radians.
    #[func]
    pub fn get_agent_heading(&self, index: i32) -> f32 {
        self.squad.heading(index.max(0) as usize) + self.base().get_global_rotation().y
    }

    /// Returns agent `index`'s commanded global velocity in m/s: the mean of the commands of the
    /// fixed 60 Hz ticks this physics frame ran (one at 60 Hz, two at 30 Hz), which is what a body
    /// you move yourself once per physics frame should move at.
    #[func]
    pub fn get_agent_velocity(&self, index: i32) -> Vector3 {
        let v = self.squad.frame_velocity(index.max(0) as usize);
        self.base().get_global_basis() * from_ground(v, 0.0)
    }

    /// Returns agent `index`'s actuation latency in seconds as the controller uses it: for body
    /// agents with [member measure_latency], the latency measured from its motion once known
    /// ([method is_agent_latency_measured]), else [member actuation_latency]. 0 out of range.
    #[func]
    pub fn get_agent_latency(&self, index: i32) -> f32 {
        self.squad.agent_latency(index.max(0) as usize)
    }

    /// Returns whether agent `index`'s latency has been measured (body agents, after a second or
    /// so of changing motion; internal and plain-node agents never are).
    #[func]
    pub fn is_agent_latency_measured(&self, index: i32) -> bool {
        index >= 0 && self.squad.agent_latency_measured(index as usize)
    }

    /// Returns the position gain agent `index` uses outside transitions: [member k1] lowered for
    /// its latency (see [member measure_latency]).
    #[func]
    pub fn get_agent_k1(&self, index: i32) -> f32 {
        self.squad.agent_k1(index.max(0) as usize)
    }

    /// Returns agent `index`'s state: 0 idle, 1 moving, 2 aligning, 3 stabilizing.
    #[func]
    pub fn get_agent_state(&self, index: i32) -> i32 {
        self.squad.state(index.max(0) as usize) as i32
    }

    /// Returns the global position of the slot agent `index` holds (its own position when dropped).
    #[func]
    pub fn get_slot_position(&self, index: i32) -> Vector3 {
        let i = index.max(0) as usize;
        match self.squad.slot_of(i) {
            Some(s) => {
                let p = self.squad.slot_pos(s);
                self.base().to_global(from_ground(p, 0.0))
            }
            None => self.get_agent_position(index),
        }
    }

    /// Returns the number of slots the current formation lays out (one per agent taking part).
    #[func]
    pub fn get_slot_count(&self) -> i32 {
        self.squad.slot_count() as i32
    }

    /// Returns slot [param slot]'s target: its global position now (it moves with the anchor),
    /// or `Vector3.ZERO` out of range.
    #[func]
    pub fn get_slot_target(&self, slot: i32) -> Vector3 {
        if slot < 0 || slot as usize >= self.squad.slot_count() {
            return Vector3::ZERO;
        }
        let p = self.squad.slot_pos(slot as usize);
        self.base().to_global(from_ground(p, 0.0))
    }

    /// Returns slot [param slot]'s target heading: the global yaw (radians) its holder must face.
    #[func]
    pub fn get_slot_heading(&self, slot: i32) -> f32 {
        if slot < 0 || slot as usize >= self.squad.slot_count() {
            return 0.0;
        }
        self.squad.slot_yaw(slot as usize) + self.base().get_global_rotation().y
    }

    /// Returns the slot agent [param index] holds, or −1 for a dropped agent.
    #[func]
    pub fn get_agent_slot(&self, index: i32) -> i32 {
        self.squad
            .slot_of(index.max(0) as usize)
            .map_or(-1, |s| s as i32)
    }

    /// Returns agent [param index]'s heading error: its yaw minus its slot's target heading,
    /// wrapped to [−π, π] (radians); 0 for a dropped agent.
    #[func]
    pub fn get_agent_heading_error(&self, index: i32) -> f32 {
        self.squad.heading_error(index.max(0) as usize)
    }

    /// Returns every neighbouring pair of slots, flattened (`[s0, t0, s1, t1, …]`): slots at most
    /// 1.5 × the formation's spacing apart, plus each slot with its nearest slot. The contract's
    /// `spacing_error` is the largest |actual − nominal| distance over the agents holding them.
    #[func]
    pub fn get_neighbour_pairs(&self) -> PackedInt32Array {
        let mut out = PackedInt32Array::new();
        for &(s, t) in self.squad.neighbour_pairs() {
            out.push(s as i32);
            out.push(t as i32);
        }
        out
    }

    /// Returns the spacing error now over every neighbouring pair (see [method
    /// get_neighbour_pairs]), in metres: the contract's spacing clause.
    #[func]
    pub fn get_pair_spacing_error(&self) -> f32 {
        self.squad.metrics().spacing_error
    }

    /// Returns the live metrics (see [signal settled]) plus `since_command` (s) and the agent
    /// counts per state `idle`, `moving`, `aligning`, `stabilizing`.
    #[func]
    pub fn get_metrics(&self) -> VarDictionary {
        let m = self.squad.metrics();
        let mut d = metrics_dict(m, &self.current);
        d.set("since_command", m.since_command);
        d.set("idle", m.states[0]);
        d.set("moving", m.states[1]);
        d.set("aligning", m.states[2]);
        d.set("stabilizing", m.states[3]);
        d
    }

    /// Returns the squad's baseline: `point` and `direction` (global, on the ground plane) and
    /// `angle` (global yaw of the axis, radians); empty with fewer than two agents.
    #[func]
    pub fn get_baseline(&mut self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some(b) = self.squad.baseline() {
            let point = self.base().to_global(from_ground(b.point, 0.0));
            let dir = self.base().get_global_basis() * from_ground(b.direction, 0.0);
            d.set("point", point);
            d.set("direction", dir);
            d.set("angle", (-dir.x).atan2(-dir.z));
        }
        d
    }
}

pub(super) fn metrics_dict(m: &Metrics, formation: &str) -> VarDictionary {
    let mut d = VarDictionary::new();
    d.set("settle_time", m.settle_time);
    d.set("contract_met", m.contract_met);
    d.set("formed", m.formed);
    d.set("arrived", m.arrived);
    d.set("travel_time", m.travel_time);
    d.set("spacing_error", m.spacing_error);
    d.set("nearest_spacing_error", m.nearest_spacing_error);
    d.set("heading_std", m.heading_std);
    d.set("max_slot_error", m.max_slot_error);
    d.set("mean_slot_error", m.mean_slot_error);
    d.set("active", m.active);
    d.set("formation", formation);
    d
}
