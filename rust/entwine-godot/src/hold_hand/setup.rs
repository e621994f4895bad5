//! HoldHandComponent: finding its room, character, skeleton and clock, and reading its settings
//! (each checked against its inspector range, warned once and replaced when out of it).

use super::*;

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
        let Some(mut room) = self.live_room() else {
            return self.refused(what, "no HoldHandRoom".into());
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
    /// [NetClock]); else this process's clock.
    pub(super) fn clock_now(&mut self) -> (f64, bool) {
        let valid = self
            .net
            .clock
            .as_ref()
            .is_some_and(|c| c.is_instance_valid() && c.is_inside_tree());
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
        if !self.net_clock.is_empty() {
            return self.base().try_get_node_as::<NetClock>(&self.net_clock);
        }
        self.base()
            .get_tree()
            .get_nodes_in_group(crate::net_clock::GROUP)
            .iter_shared()
            .find_map(|n| n.try_cast::<NetClock>().ok())
    }

    /// Returns the replay's tuning, each property checked (see [`Self::setting`]).
    pub(super) fn replay_tuning(&mut self) -> ReplayTuning {
        let d = ReplayTuning::default();
        ReplayTuning {
            rates: self.stream_rates(),
            max_root_speed: self.setting(
                "max_root_speed",
                self.max_root_speed,
                0.5,
                100.0,
                d.max_root_speed,
            ),
            blend_speed: self.setting("blend_speed", self.blend_speed, 0.1, 50.0, d.blend_speed),
            ik_timeout: self.setting("ik_timeout", self.ik_timeout, 0.05, 10.0, d.ik_timeout),
            ik_fade_time: self.setting("ik_fade_time", self.ik_fade_time, 0.0, 2.0, d.ik_fade_time),
        }
    }

    /// Returns the stream's send intervals, each property checked (see [`Self::setting`]).
    pub(super) fn stream_rates(&mut self) -> StreamRates {
        let d = StreamRates::default();
        StreamRates {
            pose_interval: self.setting(
                "pose_interval",
                self.pose_interval,
                0.02,
                1.0,
                d.pose_interval,
            ),
            ik_interval: self.setting("ik_interval", self.ik_interval, 0.02, 1.0, d.ik_interval),
            animation_interval: self.setting(
                "animation_interval",
                self.animation_interval,
                0.0,
                1.0,
                d.animation_interval,
            ),
        }
        .sanitized()
    }

    pub(super) fn join_room(&mut self) {
        let room = self.find_room();
        let Some(mut room) = room else {
            self.warn_once(
                WARN_NO_ROOM,
                "no HoldHandRoom found (set `room`, put one above this node, or add one to the \
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
        if !self.room.is_empty() {
            return self.base().try_get_node_as::<HoldHandRoom>(&self.room);
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
        self.runtime.character = self.base().try_get_node_as::<Node3D>(&self.character);
        let root = self.runtime.character.clone().map(|c| c.upcast::<Node>());
        self.runtime.skeleton = if self.skeleton.is_empty() {
            root.as_ref().and_then(first_descendant::<Skeleton3D>)
        } else {
            self.base().try_get_node_as::<Skeleton3D>(&self.skeleton)
        };
        self.runtime.tree = if self.animation_tree.is_empty() {
            root.as_ref().and_then(first_descendant::<AnimationTree>)
        } else {
            self.base()
                .try_get_node_as::<AnimationTree>(&self.animation_tree)
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
                    "`character` ({}) is not a Node3D; this component stays idle",
                    self.character
                ),
            );
        }
    }

    pub(super) fn character_node(&self) -> Option<Gd<Node3D>> {
        self.runtime
            .character
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
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
        let found = match (self.tree_node(), self.skeleton_node()) {
            (Some(tree), Some(skeleton)) => detect_arm_layers(&tree, &skeleton),
            _ => PackedStringArray::new(),
        };
        self.runtime.arm_layers = Some(found.clone());
        found
    }

    pub(super) fn skeleton_node(&self) -> Option<Gd<Skeleton3D>> {
        self.runtime
            .skeleton
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
    }

    pub(super) fn tree_node(&self) -> Option<Gd<AnimationTree>> {
        self.runtime
            .tree
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
    }

    pub(super) fn root_pose(&self) -> Option<Pose> {
        Some(pose(self.character_node()?.get_global_transform()))
    }

    /// `k`, the initiator's height in the world over the 1.75 m reference human, when
    /// [member auto_proportions] is on (1 otherwise, or without a skeleton).
    pub(super) fn proportion(&mut self) -> f32 {
        if !self.auto_proportions {
            return 1.0;
        }
        let Some(skeleton) = self.skeleton_node() else {
            return 1.0;
        };
        if skeleton.get_bone_count() == 0 {
            return 1.0;
        }
        let height = match self.runtime.rig_height {
            Some(h) => h,
            None => {
                let h = rig::humanoid(&skeleton).height;
                self.runtime.rig_height = Some(h);
                h
            }
        };
        let scale = vec3(skeleton.get_global_transform().basis.get_scale());
        entwine_core::rig::world_proportion(height, entwine_core::rig::mean_scale(scale))
    }

    pub(super) fn follow_tuning(&mut self) -> FollowTuning {
        let t = self.follow_tuning_as_set();
        t.proportioned(self.proportion())
    }

    /// Returns the follow tuning as set (before scaling by the proportion), each property that is
    /// not finite or outside its range replaced (clamped, or its default) with one warning naming it.
    pub(super) fn follow_tuning_as_set(&mut self) -> FollowTuning {
        let d = FollowTuning::default();
        let follow_offset = self.setting_vector(
            "follow_offset",
            self.follow_offset,
            MAX_FOLLOW_OFFSET,
            vector3(d.follow_offset),
        );
        let preparation_offset = self.setting_vector(
            "preparation_offset",
            self.preparation_offset,
            MAX_FOLLOW_OFFSET,
            vector3(d.preparation_offset),
        );
        let spring_coefficient = self.setting(
            "spring_coefficient",
            self.spring_coefficient,
            0.0,
            100.0,
            d.spring_coefficient,
        );
        let min_follow_speed = self.setting_or_default(
            "min_follow_speed",
            self.min_follow_speed,
            0.0,
            100.0,
            d.min_follow_speed,
        );
        let max_follow_speed = self.setting_above(
            "max_follow_speed",
            self.max_follow_speed,
            100.0,
            d.max_follow_speed,
            ("must not be below min_follow_speed", min_follow_speed),
        );
        let stop_radius = self.setting("stop_radius", self.stop_radius, 0.0, 1.0, d.stop_radius);
        FollowTuning {
            follow_offset: vec3(follow_offset),
            preparation_offset: vec3(preparation_offset),
            spring_coefficient,
            min_follow_speed,
            max_follow_speed,
            stop_radius,
        }
    }

    /// Returns `value` when it is finite and within `lo..=hi`; else, with one warning naming the
    /// property `name` (until a valid value is seen), the value clamped or `default`.
    pub(super) fn setting(
        &mut self,
        name: &str,
        value: f32,
        lo: f32,
        hi: f32,
        default: f32,
    ) -> f32 {
        let node = self.to_gd();
        self.runtime
            .warnings
            .f32_within(&node, name, value, lo, hi, default)
    }

    /// [`Self::setting`], with `default` (not the clamped value) for a value outside `lo..=hi`.
    pub(super) fn setting_or_default(
        &mut self,
        name: &str,
        value: f32,
        lo: f32,
        hi: f32,
        default: f32,
    ) -> f32 {
        let node = self.to_gd();
        self.runtime
            .warnings
            .f32_within_or_default(&node, name, value, lo, hi, default)
    }

    /// A setting that must be finite, within `0..=hi` and at least another setting's checked value
    /// `lower.1` (`lower.0` says so in the warning, naming it): else `default` (or `lower.1` when
    /// that is higher), with one warning.
    pub(super) fn setting_above(
        &mut self,
        name: &str,
        value: f32,
        hi: f32,
        default: f32,
        lower: (&str, f32),
    ) -> f32 {
        let node = self.to_gd();
        let in_range = value.is_finite() && (0.0..=hi).contains(&value);
        let above = value >= lower.1;
        let fallback = if in_range {
            lower.1
        } else {
            default.max(lower.1)
        };
        let why = if in_range {
            lower.0
        } else {
            "must be in its range"
        };
        self.runtime
            .warnings
            .property(&node, name, value, in_range && above, fallback, why)
    }

    /// [`Self::setting`] for a vector: finite and within `limit` on every axis, else `default`.
    pub(super) fn setting_vector(
        &mut self,
        name: &str,
        value: Vector3,
        limit: f32,
        default: Vector3,
    ) -> Vector3 {
        let node = self.to_gd();
        self.runtime
            .warnings
            .vector_within(&node, name, value, limit, default)
    }

    /// Checks every numeric setting once per physics frame, so that a bad value is reported once,
    /// naming its property, whatever the pair is doing.
    pub(super) fn check_settings(&mut self) {
        let _ = self.follow_tuning_as_set();
        let _ = self.contact_tuning();
        let _ = self.replay_tuning();
        let _ = self.reach_margin();
        let _ = self.initiator_timeout();
        let _ = self.initiator_start_timeout();
        let _ = self.arm_layer_hold_value();
        for role in [Role::Initiator, Role::Recipient] {
            let _ = self.contact_setting(role);
        }
    }

    /// Returns the reach margin (m, for the reference arm), checked.
    pub(super) fn reach_margin(&mut self) -> f32 {
        self.setting("reach_margin", self.reach_margin, 0.0, 0.2, 0.02)
    }

    /// Returns how long a recipient waits for a silent initiator (s), checked.
    pub(super) fn initiator_timeout(&mut self) -> f32 {
        self.setting("initiator_timeout", self.initiator_timeout, 0.2, 60.0, 3.0)
    }

    /// Returns the wait (s) for the initiator's first frame of a pair, checked.
    pub(super) fn initiator_start_timeout(&mut self) -> f32 {
        self.setting(
            "initiator_start_timeout",
            self.initiator_start_timeout,
            0.2,
            120.0,
            10.0,
        )
    }

    /// Returns the arm layers' blend amount while holding hands, checked.
    pub(super) fn arm_layer_hold_value(&mut self) -> f32 {
        self.setting(
            "arm_layer_hold_value",
            self.arm_layer_hold_value,
            0.0,
            1.0,
            0.0,
        )
    }

    /// Returns `role`'s contact offset (m) and rotation (degrees), checked.
    pub(super) fn contact_setting(&mut self, role: Role) -> (Vector3, Vector3) {
        let (names, offset, rotation) = match role {
            Role::Initiator => (
                ["initiator_contact_offset", "initiator_contact_rotation"],
                self.initiator_contact_offset,
                self.initiator_contact_rotation,
            ),
            Role::Recipient => (
                ["recipient_contact_offset", "recipient_contact_rotation"],
                self.recipient_contact_offset,
                self.recipient_contact_rotation,
            ),
        };
        (
            self.setting_vector(names[0], offset, MAX_FOLLOW_OFFSET, Vector3::ZERO),
            self.setting_vector(names[1], rotation, 3600.0, Vector3::ZERO),
        )
    }

    /// Returns the contact tuning, or `None` (the hands are released, following goes on) while a
    /// property is not finite or outside its range (the disconnect distance at least the reconnect
    /// distance), with one warning naming it.
    pub(super) fn contact_tuning(&mut self) -> Option<ContactTuning> {
        let d = ContactTuning::default();
        let contact_smooth_time = self.setting(
            "contact_smooth_time",
            self.contact_smooth_time,
            0.0,
            1.0,
            d.contact_smooth_time,
        );
        let reconnect_distance = self.setting_or_default(
            "reconnect_distance",
            self.reconnect_distance,
            0.0,
            5.0,
            d.reconnect_distance,
        );
        let disconnect_distance = self.setting_above(
            "disconnect_distance",
            self.disconnect_distance,
            5.0,
            d.disconnect_distance,
            ("must not be below reconnect_distance", reconnect_distance),
        );
        let fade_in_time =
            self.setting("fade_in_time", self.fade_in_time, 0.0, 2.0, d.fade_in_time);
        let fade_out_time = self.setting(
            "fade_out_time",
            self.fade_out_time,
            0.0,
            2.0,
            d.fade_out_time,
        );
        let max_position_weight = self.setting(
            "max_position_weight",
            self.max_position_weight,
            0.0,
            1.0,
            1.0,
        );
        let max_rotation_weight = self.setting(
            "max_rotation_weight",
            self.max_rotation_weight,
            0.0,
            1.0,
            1.0,
        );
        // An invalid hand setting releases the hands (following goes on), as before the warnings
        // named the property.
        let as_set = [
            (contact_smooth_time, self.contact_smooth_time),
            (reconnect_distance, self.reconnect_distance),
            (disconnect_distance, self.disconnect_distance),
            (fade_in_time, self.fade_in_time),
            (fade_out_time, self.fade_out_time),
            (max_position_weight, self.max_position_weight),
            (max_rotation_weight, self.max_rotation_weight),
        ];
        if as_set.iter().any(|(used, set)| used != set) {
            return None;
        }
        let k = self.proportion();
        Some(ContactTuning {
            contact_smooth_time,
            reconnect_distance: reconnect_distance * k,
            disconnect_distance: disconnect_distance * k,
            fade_in_time,
            fade_out_time,
            max_position_weight,
            max_rotation_weight,
        })
    }
}
