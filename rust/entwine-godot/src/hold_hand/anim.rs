//! A character's animation as the stream's animation section ([`AnimSnapshot`]): which AnimationTree
//! parameters, state machines and one-shots it holds (found once per pair), reading them on the
//! initiator, and applying a snapshot to a replica (remote peers) or to the partner (same process).

use crate::direct::Alive;
use entwine_core::hold_hand::anim::{
    decode_values, AnimSnapshot, FollowState, MachineState, PlayerState, TreeParam, TreeValue,
    ValueKind as Kind, ValueSlots, MAX_ANIM_MACHINES, MAX_ANIM_SHOTS, NO_NODE,
};
use entwine_core::hold_hand::phase::{player_seek, PhaseCatchUp};
use godot::classes::animation_mixer::AnimationCallbackModeProcess;
use godot::classes::{
    AnimationMixer, AnimationNode, AnimationNodeBlendTree, AnimationNodeOneShot,
    AnimationNodeStateMachine, AnimationNodeStateMachinePlayback, AnimationPlayer, AnimationTree,
};
use godot::prelude::*;

/// OneShot requests (`AnimationNodeOneShot.OneShotRequest`).
const ONE_SHOT_FIRE: i64 = 1;
const ONE_SHOT_ABORT: i64 = 2;

/// What a character's animation snapshot holds, found once per pair; both peers find the same for
/// the same character.
#[derive(Debug, Default)]
pub(super) struct AnimRig {
    /// Whether [`AnimRig::build`] ran for this pair.
    pub ready: bool,
    /// Numeric parameters in property-list order.
    values: Vec<(StringName, Kind)>,
    /// State machines: the playback parameter and the machine's node names, sorted.
    machines: Vec<(StringName, Vec<StringName>)>,
    /// One-shots: the `active` and `request` parameters.
    shots: Vec<(StringName, StringName)>,
    /// Without an AnimationTree: the AnimationPlayer's animations, sorted.
    animations: Vec<StringName>,
    /// Bit i: value i interpolates (floats and blend positions).
    continuous: u32,
}

/// What a replica last applied, so that travels and one-shots are requested once per change.
#[derive(Debug, Default)]
pub(super) struct AnimFollower {
    /// The travels, one-shots and restarts asked for (the core's decisions).
    state: FollowState,
    /// The catch-up of the first settled machine's play position (and the tree's rate it learnt).
    phase: PhaseCatchUp,
    /// The tree this follower advances itself, and the process mode it had.
    taken: Option<(Gd<AnimationMixer>, AnimationCallbackModeProcess)>,
}

impl AnimFollower {
    /// Forgets what was applied (a new pair), handing the tree back first.
    pub fn reset(&mut self) {
        self.hand_back();
        *self = Self::default();
    }

    /// Advances `mixer` (the replica's tree) by `step` seconds: the
    /// view clock's time, which runs slower or faster than the game's while the view follows a
    /// changing delay, so the animation stays at the view time. The first call takes the mixer
    /// off its own processing (remembering its mode) until [`AnimFollower::hand_back`]; a mixer
    /// the game already advances by hand is left to the game.
    pub fn advance(&mut self, mixer: Gd<AnimationMixer>, step: f32) {
        if self.taken.as_ref().is_some_and(|(m, _)| *m != mixer) {
            self.hand_back();
        }
        let mut mixer = match &self.taken {
            Some((m, _)) => m.clone(),
            None => {
                let mode = mixer.get_callback_mode_process();
                if mode == AnimationCallbackModeProcess::MANUAL {
                    return;
                }
                let mut m = mixer;
                m.set_callback_mode_process(AnimationCallbackModeProcess::MANUAL);
                self.taken = Some((m.clone(), mode));
                m
            }
        };
        if step.is_finite() && step > 0.0 {
            mixer.advance(f64::from(step));
        }
    }

    /// Advances the mixer already taken, if any, by `step` seconds (a frame without a snapshot).
    pub fn advance_taken(&mut self, step: f32) {
        if let Some((m, _)) = &self.taken {
            let m = m.clone();
            if m.alive() {
                self.advance(m, step);
            }
        }
    }

    /// Gives the mixer taken by [`AnimFollower::advance`] its own processing back.
    pub fn hand_back(&mut self) {
        if let Some((mut m, mode)) = self.taken.take() {
            if m.alive() {
                m.set_callback_mode_process(mode);
            }
        }
    }
}

impl AnimRig {
    /// Finds what `tree` (or, without a tree, `player`) holds: its numeric `parameters/…` (a Vector2
    /// takes two values) except `arms` and requests, its state machines and its one-shots; or the
    /// player's animations. Capped at the section's limits.
    pub fn build(
        &mut self,
        tree: Option<&Gd<AnimationTree>>,
        player: Option<&Gd<AnimationPlayer>>,
        arms: &PackedStringArray,
    ) {
        *self = Self {
            ready: true,
            ..Self::default()
        };
        let Some(tree) = tree else {
            if let Some(player) = player {
                let mut names: Vec<StringName> = player
                    .get_animation_list()
                    .as_slice()
                    .iter()
                    .map(StringName::from)
                    .collect();
                names.sort_by_key(|n| n.to_string());
                names.truncate(usize::from(NO_NODE));
                self.animations = names;
            }
            return;
        };
        let root = tree.get_tree_root().map(|r| r.upcast::<AnimationNode>());
        let mut slots = ValueSlots::default();
        for prop in tree.get_property_list().iter_shared() {
            let name = prop.get("name").map(|n| n.to_string()).unwrap_or_default();
            let field = |key: &str| prop.get(key).and_then(|v| v.try_to::<i64>().ok());
            let (ty, usage) = (field("type").unwrap_or(0), field("usage").unwrap_or(0));
            match TreeParam::of(&name, ty, usage) {
                TreeParam::Playback(path) => {
                    let node = node_at(root.clone(), path);
                    let Some(sm) =
                        node.and_then(|n| n.try_cast::<AnimationNodeStateMachine>().ok())
                    else {
                        continue;
                    };
                    if self.machines.len() < MAX_ANIM_MACHINES {
                        let mut nodes: Vec<StringName> = sm.get_node_list().iter_shared().collect();
                        nodes.sort_by_key(|n| n.to_string());
                        nodes.truncate(usize::from(NO_NODE));
                        self.machines.push((StringName::from(name.as_str()), nodes));
                    }
                }
                TreeParam::Request(at) => {
                    let node = node_at(root.clone(), at);
                    if node.is_some_and(|n| n.try_cast::<AnimationNodeOneShot>().is_ok())
                        && self.shots.len() < MAX_ANIM_SHOTS
                    {
                        self.shots.push((
                            StringName::from(format!("parameters/{at}active").as_str()),
                            StringName::from(name.as_str()),
                        ));
                    }
                }
                TreeParam::Value(kind) => {
                    if arms.as_slice().iter().any(|a| a.to_string() == name) {
                        continue;
                    }
                    if !slots.take(kind) {
                        continue;
                    }
                    self.values.push((StringName::from(name.as_str()), kind));
                }
                TreeParam::Skip => {}
            }
        }
        self.continuous = slots.continuous();
    }

    /// Returns which values interpolate (bit i: value i).
    pub fn continuous(&self) -> u32 {
        self.continuous
    }

    /// Reads `tree` (or `player`) into `out`.
    pub fn read(
        &self,
        tree: Option<&Gd<AnimationTree>>,
        player: Option<&Gd<AnimationPlayer>>,
        out: &mut AnimSnapshot,
    ) {
        self.read_some(tree, player, out, true);
    }

    /// Reads `tree`'s state machines and one-shots into `out`, without its values (copied
    /// exactly by [`Self::copy_values`] instead).
    pub fn read_states(&self, tree: &Gd<AnimationTree>, out: &mut AnimSnapshot) {
        self.read_some(Some(tree), None, out, false);
    }

    fn read_some(
        &self,
        tree: Option<&Gd<AnimationTree>>,
        player: Option<&Gd<AnimationPlayer>>,
        out: &mut AnimSnapshot,
        values: bool,
    ) {
        out.clear();
        if let Some(tree) = tree {
            for (name, kind) in self.values.iter().filter(|_| values) {
                let v = tree.get(name);
                if *kind == Kind::Vector2 {
                    let p = v.try_to::<Vector2>().unwrap_or(Vector2::ZERO);
                    out.push_value(p.x);
                    out.push_value(p.y);
                    continue;
                }
                let x = v
                    .try_to::<f32>()
                    .or_else(|_| v.try_to::<i64>().map(|i| i as f32))
                    .or_else(|_| v.try_to::<bool>().map(f32::from))
                    .unwrap_or(0.0);
                out.push_value(x);
            }
            for (param, nodes) in &self.machines {
                let mut m = MachineState::default();
                if let Some(pb) = playback(tree, param) {
                    // A machine started by its own Start transition has a current node without
                    // counting as playing.
                    let current = pb.get_current_node();
                    if !current.is_empty() {
                        m.node = index_of(nodes, &current);
                        m.position = pb.get_current_play_position();
                    }
                    let path = pb.get_travel_path();
                    if let Some(last) = path.back() {
                        m.travel = index_of(nodes, &last);
                    }
                }
                out.push_machine(m);
            }
            for (active, _) in &self.shots {
                out.push_shot(tree.get(active).try_to::<bool>().unwrap_or(false));
            }
        } else if let Some(player) = player {
            let mut p = PlayerState::default();
            if player.is_playing() {
                p.animation = index_of(
                    &self.animations,
                    &StringName::from(&player.get_current_animation()),
                );
                p.position = player.get_current_animation_position() as f32;
            }
            out.player = Some(p);
        }
    }

    /// Shows `snap` on `tree` (or `player`): values set (when the snapshot has as many as this
    /// rig), a state machine travels to the initiator's target once per change and starts its
    /// node outright when still elsewhere after `grace` seconds, a play position that drifted is
    /// caught up by running the tree ahead, one-shots fire or abort when the initiator's did, and
    /// a player plays and seeks to the initiator's animation and position.
    pub fn apply(
        &self,
        follower: &mut AnimFollower,
        snap: &AnimSnapshot,
        tree: Option<&mut Gd<AnimationTree>>,
        player: Option<&mut Gd<AnimationPlayer>>,
        dt: f32,
        grace: f32,
    ) {
        let first = follower.state.begin();
        if let Some(tree) = tree {
            self.apply_values(snap, tree);
            let mut phased = false;
            for (i, ((param, nodes), m)) in self.machines.iter().zip(snap.machines()).enumerate() {
                let Some(mut pb) = playback(tree, param) else {
                    continue;
                };
                let name = |k: u8| nodes.get(usize::from(k));
                let Some(node) = name(m.node) else {
                    continue;
                };
                let target = name(m.travel).unwrap_or(node);
                let current = pb.get_current_node();
                if follower.state.retarget(i, first, (m.node, m.travel)) && current != *target {
                    pb.travel(target);
                }
                // The travel path (an engine array) is only read while this machine is elsewhere:
                // in step, the initiator's own travel target says whether a travel is under way.
                let heading = if current != *node {
                    pb.get_travel_path().back()
                } else {
                    None
                };
                if current != *node && heading.as_ref() != Some(target) {
                    if follower.state.astray(i, dt, grace) || !pb.is_playing() {
                        pb.start(node);
                        follower.state.on_course(i);
                    }
                    continue;
                }
                follower.state.on_course(i);
                // The same node, settled (no travel, cross-fade or one-shot over it): catch up a
                // play position that fell behind (once per frame).
                if phased
                    || current != *node
                    || (m.travel != NO_NODE && m.travel != m.node)
                    || snap.shots != 0
                    || !pb.get_fading_from_node().is_empty()
                {
                    continue;
                }
                phased = true;
                let length = pb.get_current_length();
                let here = pb.get_current_play_position();
                let Some(step) = follower.phase.advance(m.position, here, length) else {
                    continue;
                };
                tree.advance(f64::from(step));
                if pb.get_current_node() == *node {
                    let after = pb.get_current_play_position();
                    follower.phase.observe(step, here, after, length);
                }
            }
            for (i, (active, request)) in self.shots.iter().enumerate() {
                let on = snap.shot(i);
                if !follower.state.shot_changed(first, i, on) {
                    continue;
                }
                let here = tree.get(active).try_to::<bool>().unwrap_or(false);
                if on != here {
                    let r = if on { ONE_SHOT_FIRE } else { ONE_SHOT_ABORT };
                    tree.set(request, &r.to_variant());
                }
            }
            follower.state.shots_applied(snap.shots);
        } else if let (Some(player), Some(p)) = (player, snap.player) {
            let Some(name) = self.animations.get(usize::from(p.animation)) else {
                return;
            };
            if StringName::from(&player.get_current_animation()) != *name || !player.is_playing() {
                player.play_ex().name(name).done();
            }
            let length = player.get_current_animation_length() as f32;
            let here = player.get_current_animation_position() as f32;
            if let Some(at) = player_seek(p.position, here, length) {
                player.seek_ex(f64::from(at)).update(true).done();
            }
        }
    }

    /// Sets the values of `snap` on `tree`.
    fn apply_values(&self, snap: &AnimSnapshot, tree: &mut Gd<AnimationTree>) {
        let kinds = self.values.iter().map(|(_, k)| *k);
        decode_values(kinds, snap.values(), |j, v| {
            let v = match v {
                TreeValue::Bool(b) => b.to_variant(),
                TreeValue::Int(n) => n.to_variant(),
                TreeValue::Float(x) => x.to_variant(),
                TreeValue::Vector2(x, y) => Vector2::new(x, y).to_variant(),
            };
            tree.set(&self.values[j].0, &v);
        });
    }

    /// Copies the numeric parameters from `src` to `dst` exactly (the partner in the same process).
    pub fn copy_values(&self, src: &Gd<AnimationTree>, dst: &mut Gd<AnimationTree>) {
        for (name, _) in &self.values {
            dst.set(name, &src.get(name));
        }
    }
}

/// The node of the tree at `path` ("a/b/"), through blend trees and state machines.
fn node_at(root: Option<Gd<AnimationNode>>, path: &str) -> Option<Gd<AnimationNode>> {
    let mut node = root?;
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let name = StringName::from(seg);
        node = if let Ok(bt) = node.clone().try_cast::<AnimationNodeBlendTree>() {
            bt.get_node(&name)?
        } else if let Ok(sm) = node.clone().try_cast::<AnimationNodeStateMachine>() {
            sm.get_node(&name)?
        } else {
            return None;
        };
    }
    Some(node)
}

fn playback(
    tree: &Gd<AnimationTree>,
    param: &StringName,
) -> Option<Gd<AnimationNodeStateMachinePlayback>> {
    tree.get(param)
        .try_to::<Gd<AnimationNodeStateMachinePlayback>>()
        .ok()
}

fn index_of(names: &[StringName], name: &StringName) -> u8 {
    names
        .iter()
        .position(|n| n == name)
        .map_or(NO_NODE, |i| i as u8)
}
