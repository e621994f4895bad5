//! HoldHandComponent over the network: the initiator's stream out, a remote peer's replay of it,
//! and the recipient's watch over a silent initiator.

use super::*;
use crate::direct::Alive;
use crate::inbox::Message;
use entwine_core::hold_hand::anim::ArmLayerBlend;
use entwine_core::kit::inbox::SERVER;

impl HoldHandComponent {
    /// The room this component joined, unless it has been freed since.
    pub(super) fn live_room(&self) -> Option<&Gd<HoldHandRoom>> {
        self.runtime.live(&self.runtime.room, state::ALIVE_ROOM)
    }

    /// The partner's component, when it is in the room and in the tree.
    pub(super) fn partner_in_tree(&self, partner: PlayerId) -> Option<Gd<HoldHandComponent>> {
        self.live_room()?
            .bind()
            .get_component(partner)
            .filter(|p| p.is_inside_tree())
    }

    /// Returns whether this peer plays this component's player (always, without a network).
    pub(super) fn is_owned(&mut self) -> bool {
        let peer = self.local_peer();
        peer.is_none_or(|p| Some(p) == self.runtime.joined_as)
    }

    /// This peer's id in the room's network, `None` without one (read from the room once per
    /// `_physics_process`: its multiplayer peer takes engine calls).
    pub(super) fn local_peer(&mut self) -> Option<PlayerId> {
        if let (Some(_), Some(peer)) = (self.runtime.tick, self.runtime.tick_peer) {
            return peer;
        }
        let tick = self.runtime.tick;
        let peer = self.live_room().and_then(|r| match tick {
            Some(frame) => r.bind().local_peer_in_frame(frame),
            None => r.bind().local_peer(),
        });
        if self.runtime.tick.is_some() {
            self.runtime.tick_peer = Some(peer);
        }
        peer
    }

    /// The owned initiator, networked: takes the hand samples that are due and sends a frame when
    /// one is due, to every peer.
    pub(super) fn broadcast(&mut self, dt: f32) {
        if self.local_peer().is_none() {
            return;
        }
        let (wall, shared) = self.clock_now();
        let now = self.net.stamps.tick(wall, dt);
        self.net.view_time = now;
        self.net.view_delay = 0.0;
        let me = self.root_pose();
        // The pair's scale rides in key frames: positions go over ranges in proportion, and
        // receivers scale their thresholds and speed limits by it.
        let k = self.proportion();
        self.sender.set_scale(k);
        // An initiator that jumped more than 3 m (times the scale) since the last tick teleported.
        self.sender.observe_root(me);
        let rates = self.stream_rates();
        let due = self.sender.tick(dt, &rates);
        if due.repeat && !self.net.last_frame.is_empty() {
            let again = self.net.last_frame.clone(); // shared, not copied
            if self.send_frame(&again) {
                self.net.sent_frames += 1;
                self.net.sent_bytes += again.len() as i64;
            }
        }
        let partner_root = self.get_partner().and_then(|p| p.bind().root_pose());
        let (pair, hand, offsets) = tick_samples(now, me, partner_root, self.net.last_ik.as_ref());
        if due.anim && due.frame && pair.is_some() {
            self.read_animation();
        }
        let input = TickInput {
            now,
            shared,
            pair,
            hand,
            offsets,
            anim: due.anim.then_some(&self.net.anim_snapshot),
        };
        let mut frames = TickFrames::default();
        let written = self.sender.send_tick(due, &input, &mut frames);
        for bytes in frames.iter() {
            let bytes = PackedByteArray::from(bytes);
            if self.send_frame(&bytes) {
                self.net.sent_frames += 1;
                self.net.sent_bytes += bytes.len() as i64;
            }
            self.net.last_frame = bytes;
        }
        if written.is_err() {
            // Cannot happen while MAX_FRAME_BYTES bounds every frame (a core test writes the
            // largest one); say so rather than fall silent.
            self.warn_once(
                WARN_FRAME,
                "a pair frame did not fit in MAX_FRAME_BYTES and was not sent (a bug: please \
                 report it)"
                    .into(),
            );
        }
    }

    /// Sends one frame of this initiator's stream: to every peer from the server, to the server
    /// (which checks and forwards it) from a client. Returns whether it went out.
    fn send_frame(&mut self, bytes: &PackedByteArray) -> bool {
        let message = Message(bytes.to_variant());
        if self.local_peer() == Some(SERVER) {
            self.rpcs().pair_frame(message.clone()).call().is_ok()
        } else {
            self.rpcs().pair_frame(message).call_id(SERVER).is_ok()
        }
    }

    /// Acts on a dropped frame's verdict (see `crate::inbox::act`).
    pub(super) fn dropped_message(
        &mut self,
        sender: i64,
        v: entwine_core::kit::Verdict,
        what: &str,
    ) {
        let node = self.to_gd();
        crate::inbox::act(&node, &mut self.net.inbox, sender, v, what);
    }

    /// Finds (once per pair) what the animation snapshots carry: the tree's numeric
    /// `parameters/…` minus the arm layers, its state machines and one-shots, in property-list
    /// order (the same on every peer for the same tree); without a tree, the AnimationPlayer's
    /// animations.
    pub(super) fn animation_params(&mut self) {
        if self.net.anim_rig.ready {
            return;
        }
        let arms = self.arm_layers();
        let tree = self.tree_node().cloned();
        let player = self.player_node();
        self.net
            .anim_rig
            .build(tree.as_ref(), player.as_ref(), &arms);
    }

    pub(super) fn player_node(&self) -> Option<Gd<AnimationPlayer>> {
        self.runtime.player.as_ref().filter(|p| p.alive()).cloned()
    }

    /// Reads this character's animation into the snapshot.
    pub(super) fn read_animation(&mut self) {
        self.animation_params();
        let tree = self.tree_node().cloned();
        let player = self.player_node();
        self.net
            .anim_rig
            .read(tree.as_ref(), player.as_ref(), &mut self.net.anim_snapshot);
    }

    /// A replica of the initiator (every peer but the initiator's): shows the pair from the stream.
    pub(super) fn replay_pair(&mut self, partner_id: PlayerId, dt: f32, frame: u64) {
        let partner = self.partner_in_tree(partner_id);
        let Some(mut partner) = partner else {
            return;
        };
        if partner.bind().net.watch.released() {
            // Given up after the initiator's silence: the hands fade out, the animations run on
            // their own again.
            for follower in &mut self.net.anim_follow {
                follower.hand_back();
            }
            return;
        }
        if !self.receiver.has_pose() {
            // Until the stream starts, remember where this peer shows both characters: the pair
            // glides from there.
            self.net.seen = [self.root_pose(), partner.bind().root_pose()];
        }
        let (wall, _) = self.clock_now();
        let now = self.net.view_ticks.tick(wall, dt);
        let tuning = self.replay_tuning();
        let Some(view) = self.receiver.render(now, dt, self.net.seen, &tuning) else {
            return; // nothing before the first frame
        };
        self.net.view_time = view.time;
        self.net.view_delay = self.receiver.view_delay();
        self.net.view_blend = self.receiver.blend_remaining();
        self.place_root(view.initiator);
        partner.bind_mut().place_root(view.recipient);
        self.animation_params();
        let continuous = self.net.anim_rig.continuous();
        let snap = self.receiver.animation(continuous).copied();
        // Both replicas show the initiator's animation at the view time, and advance on the view
        // clock (slower while the view waits for late frames).
        let grace = self.animation_interval.max(0.05) * 2.0;
        let step = dt * self.receiver.view_rate();
        let targets = [
            (self.tree_node().cloned(), self.player_node()),
            (
                partner.bind().tree_node().cloned(),
                partner.bind().player_node(),
            ),
        ];
        for (i, (mut tree, mut player)) in targets.into_iter().enumerate() {
            let net = &mut self.net;
            let follower = &mut net.anim_follow[i];
            let Some(snap) = snap.as_ref() else {
                follower.advance_taken(step);
                continue;
            };
            net.anim_rig
                .apply(follower, snap, tree.as_mut(), player.as_mut(), dt, grace);
            // A tree runs on the view clock (it cannot be sought); a player without a tree is
            // sought to the view time's position instead whenever it is more than 20 ms off
            // (advancing it on the view clock as well left it 0.4 s off at the 95th percentile).
            if let Some(tree) = tree {
                follower.advance(tree.upcast::<AnimationMixer>(), step);
            }
        }
        let Some(hands) = view.hands else {
            return; // no IK until the first key frame and hand sample
        };
        if self.hand_ik(Role::Initiator).is_some() {
            self.drive_hand(hands.initiator_hand, hands.weight, hands.weight, frame);
        }
        let mut p = partner.bind_mut();
        if p.hand_ik(Role::Recipient).is_some() {
            p.drive_hand(hands.recipient_hand, hands.weight, hands.weight, frame);
        }
    }

    /// The recipient, when its initiator is on another peer: gives the pair up after a silence.
    pub(super) fn watch_initiator(&mut self, initiator: PlayerId, dt: f32) {
        let local = self.local_peer();
        if local.is_none() || local == Some(initiator) {
            return;
        }
        // Before the first frame, the initiator may not know of the pair yet (its copy of the
        // room's word can be resent for seconds): the longer start timeout.
        let (timeout, start) = (self.initiator_timeout(), self.initiator_start_timeout());
        let Some(silence) = self.net.watch.tick(dt, timeout, start) else {
            return;
        };
        self.unfreeze();
        godot_warn!(
            "{}: no stream from initiator {initiator} for {silence:.1} s; the recipient is released",
            self.label(),
        );
        self.signals().initiator_lost().emit(initiator);
        if self.is_owned() {
            // The server ends the pair for everyone.
            self.cancel();
        }
    }

    /// The initiator's stream arrived (or the initiator drove this recipient locally).
    pub(super) fn heard_initiator(&mut self) {
        let recipient = self.lifecycle.phase() != Phase::None
            && self.lifecycle.interaction().map(|i| i.role) == Some(Role::Recipient);
        if self.net.watch.heard(recipient) {
            self.freeze();
        }
    }

    /// Keeps [method is_root_driven], its signal and the character's metadata up to date.
    pub(super) fn update_root_driven(&mut self, owned: bool) {
        let driven = root_driven(
            self.lifecycle.phase(),
            self.lifecycle.interaction().map(|i| i.role),
            self.net.watch.released(),
            owned,
        );
        if driven == self.net.root_driven {
            return;
        }
        self.net.root_driven = driven;
        if let Some(mut c) = self.character_node().cloned() {
            crate::names::with_pair_driven(|name| {
                if driven {
                    c.set_meta(name, &true.to_variant());
                } else {
                    c.remove_meta(name);
                }
            });
        }
        self.signals().root_driven_changed().emit(driven);
    }

    pub(super) fn set_connected(&mut self, connected: bool) {
        if self.runtime.connected != connected {
            self.runtime.connected = connected;
            self.signals().hands_connected_changed().emit(connected);
        }
    }

    /// Sets this character's hand IK target (world space) and weights for this frame.
    pub(super) fn drive_hand(
        &mut self,
        target: Pose,
        position_weight: f32,
        rotation_weight: f32,
        frame: u64,
    ) {
        self.runtime.driven_frame = frame;
        if let Some(ik) = self.live_ik() {
            ik.bind_mut()
                .set_target_transform(transform_scaled(target, Vector3::ONE));
        }
        self.set_hand_weights(position_weight, rotation_weight);
    }

    /// This character's hand IK, unless it has been freed (lent, not cloned: a handle's clone is
    /// an engine call too).
    fn live_ik(&mut self) -> Option<&mut Gd<LimbIK>> {
        self.runtime.ik.as_mut().filter(|ik| ik.alive())
    }

    pub(super) fn set_hand_weights(&mut self, position: f32, rotation: f32) {
        if self.runtime.hand_weights == (position, rotation) {
            return;
        }
        self.runtime.hand_weights = (position, rotation);
        if let Some(ik) = self.live_ik() {
            let mut b = ik.bind_mut();
            b.set_position_weight(position);
            b.set_rotation_weight(rotation);
        }
        // Arm layers follow the hand weight: 0 → as animated, 1 → the hold value.
        let Some(mut tree) = self.tree_node().cloned() else {
            return;
        };
        let blend = ArmLayerBlend { weight: position };
        if blend.saves(!self.runtime.arm_saved.is_empty()) {
            for name in self.arm_layers().as_slice() {
                let name = StringName::from(name);
                let value = tree.get(&name);
                if !value.is_nil() {
                    self.runtime.arm_saved.push((name, value));
                }
            }
        }
        // A blend amount: outside 0..=1 (or NaN) would drive the arm layer to non-finite poses.
        let hold = self.arm_layer_hold_value();
        for (name, saved) in &self.runtime.arm_saved {
            if let Ok(v) = saved.try_to::<f32>() {
                tree.set(name, &blend.value(v, hold).to_variant());
            }
        }
        if blend.clears() {
            self.runtime.arm_saved.clear();
        }
    }
}
