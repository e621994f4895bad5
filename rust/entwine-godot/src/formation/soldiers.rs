//! Bearing attachment: each child agent's skeleton gets a `SoldierBearing` (and its salute `LimbIK`),
//! steered every tick from the squad's eyes-right and salute state; bearing signals and getters.

use entwine_core::formation::bearing::eye_target;
use entwine_core::formation::{Eyes, Gesture};
use godot::classes::Skeleton3D;
use godot::prelude::*;

use super::{bearing, AgentSource, FormationController, SoldierBearing};
use crate::convert::{affine_inverse, vec3, vector3};
use crate::direct::Alive;
use crate::limb_ik::LimbIK;

#[godot_api(secondary)]
impl FormationController {
    /// Returns true while the squad salutes.
    #[func]
    pub fn is_saluting(&self) -> bool {
        self.squad.is_saluting()
    }

    /// Returns true while the squad has eyes right (after [method dress], until the next command).
    #[func]
    pub fn is_eyes_right(&self) -> bool {
        self.squad.is_eyes_right()
    }

    /// Returns the index of the agent that agent `index` dresses on (its rank's guide) while eyes
    /// are right, or -1 (eyes front, the guide itself, no file-mate on its right, a circle).
    #[func]
    pub fn get_agent_guide(&self, index: i32) -> i32 {
        self.squad
            .guide(index.max(0) as usize)
            .map_or(-1, |g| g as i32)
    }

    /// Returns agent `index`'s bearing: [constant BEARING_EYES_RIGHT] | [constant BEARING_SALUTING]
    /// flags (0: eyes front, arms down).
    #[func]
    pub fn get_agent_bearing(&self, index: i32) -> i32 {
        i32::from(self.squad.bearing(index.max(0) as usize).bits())
    }

    /// Returns the [EntwineSoldierBearing] driving agent `index`'s skeleton (to tune its bones, limits or
    /// salute), or null for an agent without a skeleton.
    #[func]
    pub fn get_soldier_bearing(&self, index: i32) -> Option<Gd<SoldierBearing>> {
        let s = self.soldiers.get(index.max(0) as usize)?.as_ref()?;
        s.bearing.alive().then(|| s.bearing.clone())
    }
}

impl FormationController {
    /// Finds each child agent's skeleton and gives it a [EntwineSoldierBearing] (reusing one already
    /// there); frees the modifiers this controller made for agents that left.
    pub(super) fn attach_bearings(&mut self) {
        let old = std::mem::take(&mut self.soldiers);
        let mut soldiers: Vec<Option<Soldier>> = Vec::with_capacity(self.agents.len());
        let enabled =
            self.soldier_bearings && self.agent_source == AgentSource::Children && !self.in_editor;
        for agent in &self.agents {
            let found = if enabled && agent.alive() {
                find_skeleton(agent)
            } else {
                None
            };
            soldiers.push(found.and_then(|skeleton| {
                let owned_before = old
                    .iter()
                    .flatten()
                    .any(|s| s.owned && s.skeleton == skeleton.instance_id() && s.bearing.alive());
                let mut soldier = attach_bearing(agent, skeleton, owned_before)?;
                soldier
                    .bearing
                    .bind_mut()
                    .join_squad_warnings(bearing::SquadWarnings {
                        printed: self.bearing_warnings.clone(),
                        name: crate::rig::label(&self.to_gd()),
                    });
                Some(soldier)
            }));
        }
        for s in old.into_iter().flatten() {
            let kept = soldiers.iter().flatten().any(|n| n.skeleton == s.skeleton);
            if s.owned && !kept && s.bearing.alive() {
                free_bearing(s.bearing);
            }
        }
        self.soldiers = soldiers;
        self.heads.clear();
        self.heads.resize(self.soldiers.len(), None);
        let (eyes, saluting) = (self.squad.is_eyes_right(), self.squad.is_saluting());
        self.bearing_watch.restart(eyes, saluting, self.squad.len());
    }

    /// Steers every soldier's [EntwineSoldierBearing] from the squad's bearing: eyes on its guide's head,
    /// salute on or off. A skeleton that disappeared gives one warning; the agent marches on.
    pub(super) fn update_bearings(&mut self) {
        let n = self.soldiers.len().min(self.squad.len());
        if n == 0 {
            return;
        }
        for i in 0..n {
            let lost = self.soldiers[i].as_ref().is_some_and(|s| {
                !s.bearing.alive() || Gd::<Skeleton3D>::try_from_instance_id(s.skeleton).is_err()
            });
            if lost {
                self.soldiers[i] = None;
                let who = match self.agents.get(i) {
                    Some(a) if a.alive() => format!("agent {i} ('{}')", a.get_name()),
                    _ => format!("agent {i}"),
                };
                self.warn_plain(&format!(
                    "{who} lost its skeleton (freed or removed) mid-drill; it keeps marching in its slot without eyes right or salute"
                ));
            }
        }
        self.heads.resize(n, None);
        for i in 0..n {
            self.heads[i] = self.soldiers[i].as_ref().and_then(|s| {
                let b = s.bearing.bind();
                b.has_head_position().then(|| b.get_head_position())
            });
        }
        let turn_speed = self.head_turn_speed();
        for i in 0..n {
            if self.soldiers[i].is_none() {
                continue;
            }
            let bearing = self.squad.bearing(i);
            let target = match bearing.eyes {
                Eyes::Right => self.squad.guide(i).and_then(|g| self.head_of(g, i)),
                Eyes::Front => None,
            };
            let Some(s) = self.soldiers[i].as_mut() else {
                continue;
            };
            s.bearing
                .bind_mut()
                .drive(target, bearing.gesture == Gesture::Saluting, turn_speed);
        }
    }

    /// Returns where agent `g`'s eyes are (global), for agent `looker` to dress on: its head bone
    /// when it has a bearing, else its position raised to the looker's head height.
    pub(super) fn head_of(&self, g: usize, looker: usize) -> Option<Vector3> {
        let head = |i: usize| self.heads.get(i).copied().flatten().map(vec3);
        let position = |i: usize| {
            let agent = self.agents.get(i).filter(|a| a.alive())?;
            Some(vec3(agent.get_global_position()))
        };
        let looker = || head(looker).zip(position(looker));
        eye_target(head(g), || position(g), looker).map(vector3)
    }

    pub(super) fn emit_bearing_signals(&mut self) {
        let (eyes, saluting) = (self.squad.is_eyes_right(), self.squad.is_saluting());
        let (eyes, saluting) = self.bearing_watch.squad(eyes, saluting);
        if let Some(eyes) = eyes {
            self.signals().eyes_changed().emit(eyes);
        }
        if let Some(saluting) = saluting {
            self.signals().salute_changed().emit(saluting);
        }
        if self.emit_agent_signals {
            let n = self.squad.len();
            for i in 0..n {
                let bits = self.squad.bearing(i).bits();
                if self.bearing_watch.agent(i, bits, n) {
                    self.signals()
                        .agent_bearing_changed()
                        .emit(i as i64, i64::from(bits));
                }
            }
        }
    }
}

/// A child agent's skeleton and the bearing modifier on it.
pub(super) struct Soldier {
    pub(super) skeleton: InstanceId,
    pub(super) bearing: Gd<SoldierBearing>,
    /// Whether the controller created the modifiers (and frees them when the agent leaves).
    pub(super) owned: bool,
}

/// Returns an agent's skeleton: what its `get_skeleton()` method returns (e.g. the test
/// character's), else its first [Skeleton3D] descendant.
pub(super) fn find_skeleton(agent: &Gd<Node3D>) -> Option<Gd<Skeleton3D>> {
    if agent.has_method("get_skeleton") {
        let v = agent.clone().call("get_skeleton", &[]);
        if let Ok(skeleton) = v.try_to::<Gd<Skeleton3D>>() {
            return Some(skeleton);
        }
    }
    crate::scene::first_descendant::<Skeleton3D>(&agent.clone().upcast())
}

/// Returns the soldier record for `skeleton`: its existing [EntwineSoldierBearing] child, or a new one
/// (with a salute [EntwineLimbIK]) whose body forward is the agent's −Z in the skeleton's space.
pub(super) fn attach_bearing(
    agent: &Gd<Node3D>,
    skeleton: Gd<Skeleton3D>,
    owned: bool,
) -> Option<Soldier> {
    let existing = skeleton
        .get_children()
        .iter_shared()
        .find_map(|c| c.try_cast::<SoldierBearing>().ok());
    let id = skeleton.instance_id();
    if let Some(mut bearing) = existing {
        if bearing.bind().get_salute_ik_node().is_empty() {
            bearing.bind_mut().create_salute_ik();
        }
        return Some(Soldier {
            skeleton: id,
            bearing,
            owned,
        });
    }
    let mut bearing = SoldierBearing::new_alloc();
    bearing.set_name("EntwineSoldierBearing");
    if agent.is_inside_tree() && skeleton.is_inside_tree() {
        let forward = affine_inverse(skeleton.get_global_transform()).basis
            * (agent.get_global_basis() * Vector3::new(0.0, 0.0, -1.0));
        if forward.is_finite() && forward.length() > 1e-4 {
            bearing.bind_mut().set_body_forward(forward);
        }
    }
    let mut sk = skeleton.clone();
    sk.add_child(&bearing);
    bearing.bind_mut().create_salute_ik();
    Some(Soldier {
        skeleton: id,
        bearing,
        owned: true,
    })
}

/// Removes a bearing the controller made, and its salute IK.
pub(super) fn free_bearing(bearing: Gd<SoldierBearing>) {
    let ik: Option<Gd<LimbIK>> = {
        let b = bearing.bind();
        let path = b.get_salute_ik_node();
        if path.is_empty() {
            None
        } else {
            bearing.try_get_node_as::<LimbIK>(&path)
        }
    };
    if let Some(mut ik) = ik {
        ik.queue_free();
    }
    let mut bearing = bearing;
    bearing.set_active(false);
    bearing.queue_free();
}
