//! Driving the agents: the agent list (children or internal), the squad stepped from their sensed
//! positions, and its velocities, headings and poses written back; the settle and state signals.

use entwine_core::formation::{Squad, MAX_AGENTS};
use godot::classes::{CharacterBody3D, RigidBody3D};
use godot::prelude::*;

use super::warn;
use super::{metrics_dict, set_yaw, AgentSource, FormationController};
use crate::convert::{from_ground, ground};
use crate::direct::Alive;

#[godot_api(secondary)]
impl FormationController {
    /// Runs the controller for `seconds` of simulated time right now (in 60 Hz ticks), e.g. for
    /// tests, tools or fast-forwarding. Returns the number of ticks run.
    #[func(rename = _advance)]
    pub fn advance(&mut self, seconds: f32) -> i32 {
        let mut ticks = 0;
        for dt in entwine_core::formation::advance_steps(seconds) {
            ticks += self.run(dt);
        }
        ticks as i32
    }

    /// Teleports every agent into its slot (e.g. to spawn a squad already formed).
    #[func]
    pub fn snap_to_slots(&mut self) {
        self.squad.snap_to_slots();
        self.write_agents();
    }

    /// Teleports agent `index` to the global `position` facing the global yaw `yaw` (radians).
    #[func]
    pub fn place_agent(&mut self, index: i32, position: Vector3, yaw: f32) {
        let Some(i) = self.index(index, "place_agent") else {
            return;
        };
        let local = self.base().to_local(position);
        let yaw_local = yaw - self.base().get_global_rotation().y;
        if !local.is_finite() || !yaw_local.is_finite() {
            self.warn_once(
                warn::PLACE_AGENT,
                "place_agent: position and yaw must be finite; ignored",
            );
            return;
        }
        self.squad.place(i, ground(local), yaw_local);
        self.write_agents();
    }

    /// Takes agent `index` out of the contract (false) or back in (true); slots are re-laid for
    /// the agents taking part.
    #[func]
    pub fn set_agent_active(&mut self, index: i32, active: bool) {
        if let Some(i) = self.index(index, "set_agent_active") {
            self.squad.set_active(i, active);
        }
    }

    /// Takes every agent listed in [param indices] out of the contract ([param active] false) or
    /// back in, re-laying and re-assigning the formation once for the whole batch (calling
    /// [method set_agent_active] per agent re-lays once per call). Out-of-range indices are
    /// ignored. Returns how many agents changed.
    #[func]
    pub fn set_agents_active(&mut self, indices: PackedInt32Array, active: bool) -> i32 {
        let n = self.squad.len();
        let mut pick = vec![false; n];
        for &i in indices.as_slice() {
            if i >= 0 && (i as usize) < n {
                pick[i as usize] = true;
            }
        }
        self.squad.set_active_where(|i| pick[i], active) as i32
    }
}

impl FormationController {
    pub(super) fn index(&mut self, index: i32, what: &str) -> Option<usize> {
        if index >= 0 && (index as usize) < self.squad.len() {
            Some(index as usize)
        } else {
            self.warn_plain(&format!(
                "{what}: agent index {index} is out of range 0..{}",
                self.squad.len()
            ));
            None
        }
    }

    /// Rebuilds the agent list (children or internal) and the squad when it changed.
    pub(super) fn rebuild_agents(&mut self, force: bool) {
        let internal = self.agent_source == AgentSource::Internal;
        let count = self.base().get_child_count();
        if !force && (internal || count == self.children_seen) {
            return;
        }
        self.children_seen = count;
        self.editor_dirty = true;
        self.agents.clear();
        self.bodies.clear();
        if !internal {
            for child in self.base().get_children().iter_shared() {
                if let Ok(node) = child.try_cast::<Node3D>() {
                    self.bodies.push(Body::of(&node));
                    self.agents.push(node);
                }
            }
        }
        let n = if internal {
            self.internal_agent_count.clamp(0, MAX_AGENTS as i32) as usize
        } else {
            self.agents.len()
        };
        let simulate = internal || self.bodies.iter().all(Option::is_none);
        let cfg = self.config();
        let recording = self.squad.recorder().map(|r| r.capacity());
        self.squad = Squad::new(n, simulate, cfg);
        if let Some(frames) = recording {
            self.squad.set_recording(frames);
        }
        self.peer_of_agent.resize(n, 0);
        self.last_states = vec![0; n];
        self.commands.forget_last();
        let name = self.formation.to_string();
        if let Some(file) = self.formations.get(&name) {
            let def = file.def.clone();
            if self.squad.form(&def).is_ok() {
                self.current = name;
            }
        } else if !self.formations.is_empty() || !name.is_empty() {
            self.reject_formation(&name, &format!("unknown formation '{name}'"));
        }
        if internal {
            self.squad.snap_to_slots();
        } else {
            // Children start where they stand.
            for i in 0..n {
                let p = self.agents[i].get_position();
                let yaw = self.agents[i].get_rotation().y;
                self.squad.place(i, ground(p), yaw);
            }
            if let Some(file) = self.formations.get(&self.current) {
                let def = file.def.clone();
                let _ = self.squad.form(&def);
            }
        }
        self.setup_multimesh(internal);
        self.attach_bearings();
    }

    /// Runs the squad for `dt` seconds. Returns the ticks run.
    pub(super) fn run(&mut self, dt: f32) -> u32 {
        self.rebuild_agents(false);
        self.warn_custom_overflow();
        // Checked when the squad runs, not when it enters the tree: a squad built in code may get
        // its children right after.
        if self.agent_source != AgentSource::Internal && self.agents.is_empty() {
            self.warn_once(
                warn::NO_CHILDREN,
                "has no Node3D children to drive (add agents as children, or set agent_source = Internal)",
            );
        } else {
            self.warnings.clear(warn::NO_CHILDREN);
        }
        let cfg = self.config();
        if cfg != *self.squad.config() {
            self.squad.set_config(cfg);
        }
        self.follow_leader();
        let external = !self.squad.simulates();
        if external {
            for i in 0..self.agents.len().min(self.squad.len()) {
                if !self.agents[i].alive() {
                    continue;
                }
                let p = self.agents[i].get_position();
                self.squad.sense(i, ground(p));
            }
        }
        let ticks = self.squad.advance(dt);
        if ticks > 0 && external {
            self.drive_bodies(dt);
        } else if ticks > 0 {
            self.write_agents();
        }
        if ticks > 0 {
            self.after_ticks();
        }
        self.update_bearings();
        ticks
    }

    pub(super) fn follow_leader(&mut self) {
        if self.leader_node.is_empty() {
            return;
        }
        let Some(leader) = self.base().try_get_node_as::<Node3D>(&self.leader_node) else {
            self.warn_once(
                warn::LEADER,
                &format!(
                    "leader_node '{}' is not a Node3D; not following",
                    self.leader_node
                ),
            );
            return;
        };
        let local = self.base().to_local(leader.get_global_position());
        let yaw = leader.get_global_rotation().y - self.base().get_global_rotation().y;
        let a = *self.squad.anchor();
        self.squad
            .set_anchor(ground(local), yaw, a.facing_yaw + (yaw - a.layout_yaw));
    }

    /// External agents: velocity for bodies (character or rigid), heading as rotation.y.
    pub(super) fn drive_bodies(&mut self, dt: f32) {
        let basis = self.base().get_global_basis();
        for i in 0..self.agents.len().min(self.squad.len()) {
            if !self.agents[i].alive() || !self.squad.is_active(i) {
                continue;
            }
            // The mean command of this frame's ticks: a body moves once per physics frame.
            let v = self.squad.frame_velocity(i);
            let heading = self.squad.heading(i);
            let mut node = self.agents[i].clone();
            set_yaw(&mut node, heading);
            match self.bodies[i].clone() {
                Some(Body::Character(mut body)) => {
                    let g = basis * from_ground(v, 0.0);
                    let old = body.get_velocity();
                    body.set_velocity(Vector3::new(g.x, old.y, g.z));
                    if self.move_bodies {
                        body.move_and_slide();
                    }
                }
                Some(Body::Rigid(mut body)) => {
                    // The physics step moves it at this velocity (it is kept awake); gravity keeps
                    // the vertical part, and the yaw is the squad's, so no spin about the vertical
                    // is left over.
                    let g = basis * from_ground(v, 0.0);
                    let old = body.get_linear_velocity();
                    body.set_linear_velocity(Vector3::new(g.x, old.y, g.z));
                    let spin = body.get_angular_velocity();
                    if spin.y != 0.0 {
                        body.set_angular_velocity(Vector3::new(spin.x, 0.0, spin.z));
                    }
                }
                None => {
                    let p = node.get_position() + from_ground(v, 0.0) * dt;
                    node.set_position(p);
                }
            }
        }
    }

    pub(super) fn after_ticks(&mut self) {
        self.sync_live();
        if self.emit_agent_signals {
            for i in 0..self.squad.len().min(self.last_states.len()) {
                let s = self.squad.state(i) as u8;
                if s != self.last_states[i] {
                    self.last_states[i] = s;
                    self.signals()
                        .agent_state_changed()
                        .emit(i as i64, i64::from(s));
                }
            }
        }
        if let Some(m) = self.squad.take_settled() {
            let d = metrics_dict(&m, &self.current);
            self.signals().settled().emit(&d);
        }
        self.emit_bearing_signals();
    }

    pub(super) fn sync_live(&mut self) {
        let m = *self.squad.metrics();
        self.spacing_error = m.spacing_error;
        self.heading_std = m.heading_std;
        self.settle_time = m.settle_time;
    }
}

/// A child agent the game's physics moves: driven by velocity.
#[derive(Clone)]
pub(super) enum Body {
    /// `velocity` is set (and `move_and_slide()` called with `move_bodies`).
    Character(Gd<CharacterBody3D>),
    /// `linear_velocity` is set before the physics step.
    Rigid(Gd<RigidBody3D>),
}

impl Body {
    /// The body `node` is, if any. A rigid body is kept awake from now on: a sleeping body does
    /// not move with the velocity it is given.
    fn of(node: &Gd<Node3D>) -> Option<Self> {
        if let Ok(c) = node.clone().try_cast::<CharacterBody3D>() {
            Some(Self::Character(c))
        } else {
            let mut rigid = node.clone().try_cast::<RigidBody3D>().ok()?;
            rigid.set_can_sleep(false);
            rigid.set_sleeping(false);
            Some(Self::Rigid(rigid))
        }
    }
}
