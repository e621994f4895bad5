//! HoldHandComponent: finding its room, character, skeleton and clock, and reading its settings
//! (each checked against its inspector range, warned once and replaced when out of it).

use super::*;

use crate::direct::Alive;

/// Degrees in a radian.
const DEGREES_PER_RADIAN: f32 = 180.0 / std::f32::consts::PI;

impl HoldHandComponent {
    pub(super) fn label(&self) -> String {
        crate::warnings::label(&self.to_gd())
    }

    pub(super) fn refused(&self, what: &str, why: String) -> bool {
        godot_warn!("{}: {what}() refused: {why}", self.label());
        false
    }

    /// Runs this player's call `what` (built by `op` from the player's id) on the room; returns whether
    /// the room took it, with a warning saying why not.
    pub(super) fn act(&mut self, what: &str, op: impl FnOnce(PlayerId) -> RoomCall) -> bool {
        let Some(me) = self.player() else {
            return self.refused(what, "this character is not in a room".into());
        };
        let Some(mut room) = self.live_room().cloned() else {
            return self.refused(what, "no EntwineHoldHandRoom".into());
        };
        let op = op(me);
        let result = room.bind_mut().call(op);
        match result {
            Ok(()) => true,
            Err(e) => self.refused(what, e.to_string()),
        }
    }

    /// Returns this player's id once it is in a room.
    pub(super) fn player(&self) -> Option<PlayerId> {
        self.runtime.joined_as
    }

    /// Prints `message` once per warning `bit` (a one-bit mask: its index is the kind).
    pub(super) fn warn_once(&mut self, bit: u32, message: String) {
        let node = self.to_gd();
        self.runtime
            .warnings
            .once(&node, bit.trailing_zeros(), &message);
    }

    /// Prints `message` unless this kind was printed in the last ten seconds (then counts it, and
    /// says how many were held back next time).
    pub(super) fn warn_throttled(&mut self, kind: u32, message: String) {
        let node = self.to_gd();
        self.net.throttle.throttled(&node, kind, &message);
    }

    /// Returns the stream clock's time now and whether it is shared by every peer (a synchronised
    /// [EntwineNetClock]); else this process's clock.
    pub(super) fn clock_now(&mut self) -> (f64, bool) {
        let valid = self
            .net
            .clock
            .as_ref()
            .is_some_and(|c| c.alive() && c.is_inside_tree());
        if !valid {
            self.net.clock = self.find_clock();
        }
        match self.net.clock.as_ref() {
            Some(c) => {
                let c = c.bind();
                (c.server_time(), c.is_synced())
            }
            None => (crate::time::now(), false),
        }
    }

    pub(super) fn find_clock(&self) -> Option<Gd<NetClock>> {
        if !self.net_clock_node.is_empty() {
            return self
                .base()
                .try_get_node_as::<NetClock>(&self.net_clock_node);
        }
        self.base()
            .get_tree()
            .get_nodes_in_group(crate::net_clock::GROUP)
            .iter_shared()
            .find_map(|n| n.try_cast::<NetClock>().ok())
    }

    /// Returns the replay's tuning, each property checked (see [`Self::setting`]).
    /// Returns how a remote peer replays the stream (checked; see [`Self::settings`]).
    pub(super) fn replay_tuning(&mut self) -> ReplayTuning {
        self.settings().replay
    }

    /// Returns the stream's send intervals (checked; see [`Self::settings`]).
    pub(super) fn stream_rates(&mut self) -> StreamRates {
        self.settings().replay.rates
    }

    pub(super) fn join_room(&mut self) {
        let room = self.find_room();
        let Some(mut room) = room else {
            self.warn_once(
                WARN_NO_ROOM,
                "no EntwineHoldHandRoom found (set `room_node`, put one above this node, or add one to the \
                 group `entwine_hold_hand_rooms`); requests are refused"
                    .into(),
            );
            return;
        };
        let id = if self.player_id != 0 {
            self.player_id
        } else {
            self.base().instance_id().to_i64()
        };
        let me = self.to_gd();
        if room.bind_mut().join(id, me) {
            self.runtime.room = Some(room);
            self.runtime.joined_as = Some(id);
        } else {
            self.warn_once(
                WARN_ID,
                format!("player_id {id} is already taken in the room; this character is not in it"),
            );
        }
    }

    pub(super) fn find_room(&self) -> Option<Gd<HoldHandRoom>> {
        if !self.room_node.is_empty() {
            return self.base().try_get_node_as::<HoldHandRoom>(&self.room_node);
        }
        let mut node = self.base().get_parent();
        while let Some(n) = node {
            if let Ok(room) = n.clone().try_cast::<HoldHandRoom>() {
                return Some(room);
            }
            node = n.get_parent();
        }
        let tree = self.base().get_tree();
        tree.get_nodes_in_group("entwine_hold_hand_rooms")
            .iter_shared()
            .find_map(|n| n.try_cast::<HoldHandRoom>().ok())
    }

    pub(super) fn room_state(&self) -> Option<Interaction> {
        self.live_room()?
            .bind()
            .interaction(self.runtime.joined_as?)
    }

    /// Resolves the character, skeleton and animation tree from the properties (not per frame).
    pub(super) fn resolve_nodes(&mut self) {
        self.runtime.rig_height = None;
        let tick = self.runtime.tick;
        self.runtime.forget_tick();
        self.runtime.tick = tick;
        self.runtime.character = self.base().try_get_node_as::<Node3D>(&self.character_node);
        self.runtime.body = self
            .runtime
            .character
            .clone()
            .and_then(|c| c.try_cast::<CharacterBody3D>().ok());
        let root = self.runtime.character.clone().map(|c| c.upcast::<Node>());
        self.runtime.skeleton = if self.skeleton_node.is_empty() {
            root.as_ref().and_then(first_descendant::<Skeleton3D>)
        } else {
            self.base()
                .try_get_node_as::<Skeleton3D>(&self.skeleton_node)
        };
        self.runtime.tree = if self.animation_tree_node.is_empty() {
            root.as_ref().and_then(first_descendant::<AnimationTree>)
        } else {
            self.base()
                .try_get_node_as::<AnimationTree>(&self.animation_tree_node)
        };
        self.runtime.player = if self.runtime.tree.is_none() {
            self.runtime
                .character
                .clone()
                .and_then(|c| first_descendant::<AnimationPlayer>(&c.upcast()))
        } else {
            None
        };
        if self.runtime.character.is_none() {
            self.warn_once(
                WARN_NO_CHARACTER,
                format!(
                    "`character_node` ({}) is not a Node3D; this component stays idle",
                    self.character_node
                ),
            );
        }
    }

    pub(super) fn character_node(&self) -> Option<&Gd<Node3D>> {
        self.runtime
            .live(&self.runtime.character, state::ALIVE_CHARACTER)
    }

    /// The arm-layer parameters: [member arm_layer_parameters] when set, else the ones detected in
    /// the character's tree (once per tree; copying a packed array does not allocate).
    pub(super) fn arm_layers(&mut self) -> PackedStringArray {
        if !self.arm_layer_parameters.is_empty() {
            return self.arm_layer_parameters.clone();
        }
        if let Some(found) = &self.runtime.arm_layers {
            return found.clone();
        }
        let found = match (self.tree_node().cloned(), self.skeleton_node().cloned()) {
            (Some(tree), Some(skeleton)) => detect_arm_layers(&tree, &skeleton),
            _ => PackedStringArray::new(),
        };
        self.runtime.arm_layers = Some(found.clone());
        found
    }

    pub(super) fn skeleton_node(&self) -> Option<&Gd<Skeleton3D>> {
        self.runtime
            .live(&self.runtime.skeleton, state::ALIVE_SKELETON)
    }

    pub(super) fn tree_node(&self) -> Option<&Gd<AnimationTree>> {
        self.runtime.live(&self.runtime.tree, state::ALIVE_TREE)
    }

    pub(super) fn root_pose(&self) -> Option<Pose> {
        let character = self
            .runtime
            .lent(&self.runtime.character, state::ALIVE_CHARACTER)?;
        Some(pose(character.global_transform()))
    }

    /// `k`, the initiator's height in the world over the 1.75 m reference human, when
    /// [member auto_proportions] is on (1 otherwise, or without a skeleton).
    pub(super) fn proportion(&mut self) -> f32 {
        if !self.auto_proportions {
            return 1.0;
        }
        if let (Some(_), Some(k)) = (self.runtime.tick, self.runtime.tick_proportion) {
            return k;
        }
        let k = self.proportion_now();
        if self.runtime.tick.is_some() {
            self.runtime.tick_proportion = Some(k);
        }
        k
    }

    /// [`Self::proportion`] read from the skeleton now.
    fn proportion_now(&mut self) -> f32 {
        let Some(skeleton) = self.skeleton_node() else {
            return 1.0;
        };
        if skeleton.get_bone_count() == 0 {
            return 1.0;
        }
        let scale = vec3(skeleton.get_global_transform().basis.get_scale());
        let height = match self.runtime.rig_height {
            Some(h) => h,
            None => {
                let h = rig::humanoid(skeleton).height;
                self.runtime.rig_height = Some(h);
                h
            }
        };
        entwine_core::rig::character_proportion(height, scale)
    }

    pub(super) fn follow_tuning(&mut self) -> FollowTuning {
        let t = self.settings().follow;
        t.proportioned(self.proportion())
    }

    /// The settings as the properties hold them, unchecked.
    fn settings_as_set(&self) -> PairSettings {
        PairSettings {
            follow: FollowTuning {
                follow_offset: vec3(self.follow_offset),
                preparation_offset: vec3(self.preparation_offset),
                spring_coefficient: self.spring_coefficient,
                min_follow_speed: self.min_follow_speed,
                max_follow_speed: self.max_follow_speed,
                stop_radius: self.stop_radius,
            },
            contact: ContactTuning {
                contact_smooth_time: self.contact_smooth_time,
                reconnect_distance: self.reconnect_distance,
                disconnect_distance: self.disconnect_distance,
                fade_in_time: self.fade_in_time,
                fade_out_time: self.fade_out_time,
                max_position_weight: self.max_position_weight,
                max_rotation_weight: self.max_rotation_weight,
            },
            replay: ReplayTuning {
                rates: StreamRates {
                    pose_interval: self.pose_interval,
                    ik_interval: self.ik_interval,
                    animation_interval: self.animation_interval,
                },
                max_root_speed: self.max_root_speed,
                blend_speed: self.blend_speed,
                ik_timeout: self.ik_timeout,
                ik_fade_time: self.ik_fade_time,
            },
            reach_margin: self.reach_margin,
            initiator_timeout: self.initiator_timeout,
            initiator_start_timeout: self.initiator_start_timeout,
            arm_layer_hold_value: self.arm_layer_hold_value,
            contact_offsets: [
                vec3(self.initiator_contact_offset),
                vec3(self.recipient_contact_offset),
            ],
            // The core checks and converts them in degrees, as the inspector shows them.
            contact_rotations: [
                vec3(self.initiator_contact_rotation) * DEGREES_PER_RADIAN,
                vec3(self.recipient_contact_rotation) * DEGREES_PER_RADIAN,
            ],
        }
    }

    /// Returns the settings checked by the core ([`SettingsCheck`]), checking them again only when
    /// a property changed: each corrected property is warned about once, naming it (again only
    /// after it was set right).
    pub(super) fn settings(&mut self) -> PairSettings {
        if let (Some(_), Some(checked)) = (self.runtime.tick, self.runtime.tick_settings) {
            return checked;
        }
        let (checked, issues) = self.runtime.settings.check(self.settings_as_set());
        if self.runtime.tick.is_some() {
            self.runtime.tick_settings = Some(checked);
        }
        if let Some(found) = issues {
            let node = self.to_gd();
            for (param, issue) in PairParam::ALL.into_iter().zip(found) {
                let message = || issue.map(|i| i.to_string()).unwrap_or_default();
                let w = &mut self.runtime.warnings;
                w.setting(&node, param.name(), issue.is_none(), message);
            }
        }
        checked
    }

    /// Checks the settings (see [`Self::settings`]) once per physics frame, so that a bad value
    /// is reported once, naming its property, whatever the pair is doing.
    pub(super) fn check_settings(&mut self) {
        let _ = self.settings();
    }

    /// Returns the reach margin (m, for the reference arm), checked.
    pub(super) fn reach_margin(&mut self) -> f32 {
        self.settings().reach_margin
    }

    /// Returns how long a recipient waits for a silent initiator (s), checked.
    pub(super) fn initiator_timeout(&mut self) -> f32 {
        self.settings().initiator_timeout
    }

    /// Returns the wait (s) for the initiator's first frame of a pair, checked.
    pub(super) fn initiator_start_timeout(&mut self) -> f32 {
        self.settings().initiator_start_timeout
    }

    /// Returns the arm layers' blend amount while holding hands, checked.
    pub(super) fn arm_layer_hold_value(&mut self) -> f32 {
        self.settings().arm_layer_hold_value
    }

    /// Returns `role`'s contact offset (m) and rotation (degrees), checked.
    pub(super) fn contact_setting(&mut self, role: Role) -> (Vector3, Vector3) {
        let s = self.settings();
        let i = usize::from(role == Role::Recipient);
        (
            vector3(s.contact_offsets[i]),
            vector3(s.contact_rotations[i]),
        )
    }

    /// Returns the contact tuning (its distances times the character's proportion), or `None`
    /// (the hands are released, following goes on) while one of its properties is corrected.
    pub(super) fn contact_tuning(&mut self) -> Option<ContactTuning> {
        self.check_settings();
        let k = self.proportion();
        self.runtime.settings.contact(k)
    }
}
