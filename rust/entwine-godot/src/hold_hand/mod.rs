//! `HoldHandComponent` and its local `HoldHandRoom`.

mod anim;
mod api;
mod layers;
mod links;
mod network;
mod pair;
mod room;
mod setup;
mod state;

use crate::inbox::Message;
use entwine_core::hold_hand::contact::fade_step;
use entwine_core::hold_hand::hand::{contact_frame, Contact, HoldingHand};
use entwine_core::hold_hand::params::PairParam as P;
use entwine_core::hold_hand::settings::{PairParam, PairSettings, SettingsCheck};
use entwine_core::hold_hand::stream::{tick_samples, AnimSnapshot, TickFrames, TickInput};
use entwine_core::hold_hand::{
    root_driven, ContactOutput, ContactSolver, ContactTuning, FollowDriver, FollowTuning,
    HandInput, InitiatorWatch, Interaction, Lifecycle, PairReplay, PairSender, Phase, PlayerId,
    Refused, ReplayTuning, Role, RoomCall, SentHands, StreamRates,
};
use entwine_core::kit::Pose;
use entwine_core::rig::{Humanoid, Role as RigRole, Side};
use glam::Vec3;
use godot::classes::mesh::PrimitiveType;
use godot::classes::notify::NodeNotification;
use godot::classes::{
    AnimationMixer, AnimationNodeAdd2, AnimationNodeAdd3, AnimationNodeBlend2, AnimationNodeBlend3,
    AnimationNodeBlendTree, AnimationPlayer, AnimationTree, CharacterBody3D, Engine, INode,
    ImmediateMesh, Node, Node3D, Skeleton3D,
};
use godot::prelude::*;

use crate::warnings::Warnings;

use crate::convert::{affine, pose, transform_scaled, vec3, vector3};
use crate::direct::{Alive, Lent};
use crate::limb_ik::LimbIK;
use crate::net_clock::NetClock;
use crate::rig;
use crate::scene::first_descendant;
pub use api::{PairPhase, PairRole};
use entwine_core::hold_hand::stream::MAX_FRAME_BYTES;
use entwine_core::kit::inbox::{Dropped, SERVER};
use entwine_core::kit::RateLimit;
use layers::{chain_for_hand, detect_arm_layers, LOCAL_ANIM_GRACE};
pub use room::HoldHandRoom;
use state::{NetRuntime, Runtime, THROTTLE_TOO_FAST};

/// Pair frames the server reads from an initiator's peer: a burst of 240, then 120 per second
/// (an initiator sends at most 50 frames a second, pose_interval's least 0.02 s, each maybe
/// repeated once).
const FRAME_LIMIT: RateLimit = RateLimit {
    capacity: 240.0,
    per_second: 120.0,
};

/// Two characters holding hands: the initiator walks, the partner is carried along, and both arms
/// meet at one shared contact point.
///
/// Add one `HoldHandComponent` as a child of each character (a [CharacterBody3D] or any [Node3D]
/// with a [Skeleton3D] below it) and a [EntwineHoldHandRoom] somewhere above them (or set [member room]).
/// Then, from a game script: `a.request(b)` and, on `b`, `accept()` (e.g. from its
/// [signal request_received]). The room holds who is paired with whom; each component follows it
/// through the phases None → Preparing → Active ([signal phase_changed]).
///
/// The **initiator** is the single authority for the pair. Each physics frame it moves the
/// recipient toward [member follow_offset] in the initiator's frame with a distance-proportional,
/// clamped speed (a sweep that slides along walls instead of passing through them; a recipient a
/// wall held back goes on from where its body really is, never faster than
/// [member max_follow_speed]), mirrors its
/// animation onto the recipient (the AnimationTree's numeric parameters, Vector2 blend positions
/// included, except [member arm_layer_parameters]; its state machines' current node and travels,
/// OneShots and play position; without an AnimationTree, the AnimationPlayer's animation and
/// position),
/// solves the shared contact point from the two arms' reach spheres, and drives both hands with
/// [EntwineLimbIK] modifiers it adds to each skeleton, fading their weights in and out with a distance
/// hysteresis. The **recipient** is frozen while paired: its `frozen` property (if its script has
/// one) is set, its own physics processing is suspended and its velocity zeroed; all of it is
/// restored when the pair ends ([signal frozen_changed]).
///
/// **Over the network** (the [EntwineHoldHandRoom] is networked and a peer is connected), set
/// [member player_id] to the peer id that plays the character, on every peer. The initiator's peer
/// does all of the above and streams the pair to every other peer ([member pose_interval],
/// [member ik_interval], [member animation_interval]); the others replay it: the recipient's peer
/// keeps the pair's stance steady around its own character, onlookers smooth both roots, and the
/// hands are rebuilt in the initiator's frame. The initiator's animation (the same kinds as the
/// local mirror, for rigs with or without an AnimationTree) is shown on both characters at the same
/// view time as the roots: while a pair is shown, this component advances their [AnimationTree]
/// itself on the view clock, with its [member AnimationMixer.callback_mode_process] set to manual,
/// and gives its own mode back when the pair ends (a tree already in manual mode is left to the
/// game); an [AnimationPlayer] without a tree is sought to the initiator's position. A tree cannot
/// be sought: a replica that shows a state late, or fell behind, runs its tree ahead to the
/// initiator's play position once its cross-fade is over. A BlendSpace's play position is followed
/// over its whole range only with its `sync` on: without it each point's animation keeps its own
/// time, which is not sent, so where the blend moves onto other points the replica's position can
/// be off for a few frames. Frames from any other peer, stale or malformed ones
/// are dropped and counted ([method get_network_stats]). Silent IK fades the hands out
/// ([member ik_timeout]); a silent or vanished initiator releases the recipient
/// ([member initiator_timeout], or [member initiator_start_timeout] before its first frame;
/// [signal initiator_lost]). While the pair writes a character's root,
/// [method is_root_driven] is true and the game's own position sync must not apply its updates
/// ([method is_pair_driven]).
///
/// Degrades instead of failing: a missing partner pauses following and releases the hands; missing
/// hand bones fade the pair's IK out with one warning while following and animation go on. A
/// numeric setting outside its range (the inspector's; NaN or infinite included) warns once, naming
/// it, and is replaced (clamped, or its default); an invalid hand setting (smoothing, distances,
/// fades, weights) releases the hands while it lasts, and following goes on.
#[derive(GodotClass)]
#[class(init, base = Node)]
pub struct HoldHandComponent {
    base: Base<Node>,

    /// The [EntwineHoldHandRoom] this character plays in. Empty: the nearest ancestor room, else the first
    /// node in the group `entwine_hold_hand_rooms`.
    #[export_group(name = "Setup")]
    #[export(node_path = ("EntwineHoldHandRoom"))]
    room_node: NodePath,
    /// This player's id in the room (e.g. its multiplayer peer id). 0 picks one automatically, unique
    /// per component; at run time this property reads the id actually in use. Set before the
    /// component joins its room: a different id set while in the room warns once and is used only
    /// when it joins again.
    #[export]
    #[var(get = get_player_id, set = set_player_id)]
    player_id: i64,
    /// The character this component moves: its root ([CharacterBody3D] or [Node3D]).
    #[export(node_path = ("Node3D"))]
    #[init(val = NodePath::from(".."))]
    character_node: NodePath,
    /// The character's skeleton. Empty: the first [Skeleton3D] below the character.
    #[export(node_path = ("Skeleton3D"))]
    skeleton_node: NodePath,
    /// The character's [AnimationTree]. Empty: the first one below the character.
    #[export(node_path = ("AnimationTree"))]
    animation_tree_node: NodePath,

    /// Scale this node's lengths and speeds with the initiator's size: [member follow_offset],
    /// [member preparation_offset], [member stop_radius], [member min_follow_speed],
    /// [member max_follow_speed], [member reconnect_distance] and [member disconnect_distance] are
    /// then given for a 1.75 m reference human and multiplied by `k = h / 1.75`, `h` being the
    /// initiator's height in the world (the humanoid found in its skeleton, times the skeleton's
    /// scale in the world). A 1.75 m character gets the values as set; a rig imported at 0.01, or
    /// a giant, gets them in proportion. Over the network the initiator sends `k` (to 4 %) with
    /// the pair, so positions travel over ranges in proportion (±4 m × k around the initiator,
    /// millimetres × k) and every remote peer multiplies [member max_root_speed],
    /// [member blend_speed] and its own correction thresholds by it. Off: every value is in
    /// metres (and m/s) as set. See [method get_proportion].
    #[export_group(name = "Follow")]
    #[export]
    #[init(val = true)]
    #[var(get = is_using_auto_proportions)]
    auto_proportions: bool,
    /// Where the recipient stands, in the initiator's frame (−Z forward, +X right): by default 0.82 m
    /// to the left and 0.17 m behind, a hand-holding stance for a 1.75 m initiator (see
    /// [member auto_proportions]).
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    #[init(val = Vector3::new(-0.82, 0.0, 0.17))]
    follow_offset: Vector3,
    /// Where the recipient is placed once when the pair starts, in the initiator's frame (1 m behind;
    /// scaled by [member auto_proportions]).
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    #[init(val = Vector3::new(0.0, 0.0, 1.0))]
    preparation_offset: Vector3,
    /// Follow speed per metre of distance to the follow point (a rate: the same at any size).
    #[export(range = (P::SpringCoefficient.spec().hint_min(), P::SpringCoefficient.spec().hint_max(), 0.1, suffix = P::SpringCoefficient.spec().suffix()))]
    #[init(val = P::SpringCoefficient.spec().default)]
    spring_coefficient: f32,
    /// Lowest follow speed once outside the stop radius (scaled by [member auto_proportions]).
    #[export(range = (P::MinFollowSpeed.spec().hint_min(), P::MinFollowSpeed.spec().hint_max(), 0.1, suffix = P::MinFollowSpeed.spec().suffix()))]
    #[init(val = P::MinFollowSpeed.spec().default)]
    min_follow_speed: f32,
    /// Highest follow speed, also while a recipient catches up after a wall held it back (scaled by
    /// [member auto_proportions]).
    #[export(range = (P::MaxFollowSpeed.spec().hint_min(), P::MaxFollowSpeed.spec().hint_max(), 0.1, suffix = P::MaxFollowSpeed.spec().suffix()))]
    #[init(val = P::MaxFollowSpeed.spec().default)]
    max_follow_speed: f32,
    /// Distance under which the recipient snaps onto the follow point (scaled by
    /// [member auto_proportions]).
    #[export(range = (P::StopRadius.spec().hint_min(), P::StopRadius.spec().hint_max(), 0.001, suffix = P::StopRadius.spec().suffix()))]
    #[init(val = P::StopRadius.spec().default)]
    stop_radius: f32,
    /// Sweep the recipient's collision shape toward the follow point so that it slides along walls
    /// (needs a [CharacterBody3D]); off: it is placed directly.
    #[export]
    #[init(val = true)]
    #[var(get = is_sweeping_collisions)]
    sweep_collisions: bool,

    /// The initiator's contact hand bone; the arm chain is the bone's parent and grandparent. Empty
    /// (default): the left hand of the humanoid found in the character's skeleton (any common
    /// naming convention; its forearm and upper arm from the same rig, twist bones skipped).
    #[export_group(name = "Hands")]
    #[export]
    initiator_hand_bone: GString,
    /// The recipient's contact hand bone. Empty (default): the right hand of the humanoid found.
    #[export]
    recipient_hand_bone: GString,
    /// The hands meet palm to palm: each hangs fingers down, the initiator's palm facing back and
    /// the recipient's facing forward (in the initiator's body frame), with the middle of each
    /// palm's surface on the shared contact, so the two hands lie against each other one hand's
    /// thickness apart at the wrists instead of through each other. Each hand's palm and finger
    /// directions and its size (length, width, thickness) are found in its skeleton (see
    /// [method get_grip]). Used while the four contact offset and rotation properties below are
    /// all zero (the default); setting any of them replaces the grip with those values. Off: zero
    /// offsets put both wrists on the one contact point, turned half-way between the two hands.
    #[export]
    #[init(val = true)]
    #[var(get = is_auto_grip_enabled)]
    auto_grip: bool,
    /// Offset of the initiator's hand from the shared contact point, in the contact's frame (the
    /// half-way rotation of the two hands). Zero, with the other three below, uses
    /// [member auto_grip].
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    initiator_contact_offset: Vector3,
    /// Rotation of the initiator's hand relative to the shared contact rotation: Euler angles in
    /// radians, YXZ like [member Node3D.rotation] (the inspector shows degrees).
    #[export(range = (-360.0, 360.0, 0.1, or_less, or_greater, radians_as_degrees))]
    initiator_contact_rotation: Vector3,
    /// Offset of the recipient's hand from the shared contact point, in the contact's frame.
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    recipient_contact_offset: Vector3,
    /// Rotation of the recipient's hand relative to the shared contact rotation: Euler angles in
    /// radians, YXZ like [member Node3D.rotation] (the inspector shows degrees).
    #[export(range = (-360.0, 360.0, 0.1, or_less, or_greater, radians_as_degrees))]
    recipient_contact_rotation: Vector3,
    /// Reach spheres are this much shorter than the arms, so that the contact stays reachable while
    /// the shoulders move between the solve and the skeleton update: metres for the 0.54 m arm of a
    /// 1.75 m human, scaled with the arm's length in the world.
    #[export(range = (P::ReachMargin.spec().hint_min(), P::ReachMargin.spec().hint_max(), 0.005, suffix = P::ReachMargin.spec().suffix()))]
    #[init(val = P::ReachMargin.spec().default)]
    reach_margin: f32,
    /// SmoothDamp time of the shared contact point.
    #[export(range = (P::ContactSmoothTime.spec().hint_min(), P::ContactSmoothTime.spec().hint_max(), 0.005, suffix = P::ContactSmoothTime.spec().suffix()))]
    #[init(val = P::ContactSmoothTime.spec().default)]
    contact_smooth_time: f32,
    /// A disconnected pair's hands reconnect when the roots are this close (scaled by
    /// [member auto_proportions]).
    #[export(range = (P::ReconnectDistance.spec().hint_min(), P::ReconnectDistance.spec().hint_max(), 0.01, suffix = P::ReconnectDistance.spec().suffix()))]
    #[init(val = P::ReconnectDistance.spec().default)]
    reconnect_distance: f32,
    /// A connected pair's hands let go when the roots are farther apart than this (scaled by
    /// [member auto_proportions]).
    #[export(range = (P::DisconnectDistance.spec().hint_min(), P::DisconnectDistance.spec().hint_max(), 0.01, suffix = P::DisconnectDistance.spec().suffix()))]
    #[init(val = P::DisconnectDistance.spec().default)]
    disconnect_distance: f32,
    /// Seconds for the hand IK to fade in.
    #[export(range = (P::FadeInTime.spec().hint_min(), P::FadeInTime.spec().hint_max(), 0.01, suffix = P::FadeInTime.spec().suffix()))]
    #[init(val = P::FadeInTime.spec().default)]
    fade_in_time: f32,
    /// Seconds for the hand IK to fade out.
    #[export(range = (P::FadeOutTime.spec().hint_min(), P::FadeOutTime.spec().hint_max(), 0.01, suffix = P::FadeOutTime.spec().suffix()))]
    #[init(val = P::FadeOutTime.spec().default)]
    fade_out_time: f32,
    /// Maximum IK position weight of the hands.
    #[export(range = (P::MaxPositionWeight.spec().hint_min(), P::MaxPositionWeight.spec().hint_max(), suffix = P::MaxPositionWeight.spec().suffix()))]
    #[init(val = P::MaxPositionWeight.spec().default)]
    max_position_weight: f32,
    /// Maximum IK rotation weight of the hands.
    #[export(range = (P::MaxRotationWeight.spec().hint_min(), P::MaxRotationWeight.spec().hint_max(), suffix = P::MaxRotationWeight.spec().suffix()))]
    #[init(val = P::MaxRotationWeight.spec().default)]
    max_rotation_weight: f32,

    /// Copy the initiator's animation onto the recipient every frame: the AnimationTree's numeric
    /// parameters (Vector2 blend positions included), its state machines' node, travels and play
    /// position, and its OneShots (fired or aborted as the initiator's); without a tree, the
    /// AnimationPlayer's animation and position.
    #[export_group(name = "Animation")]
    #[export]
    #[init(val = true)]
    #[var(get = is_mirroring_animation)]
    mirror_animation: bool,
    /// AnimationTree parameters of the arm layers: never mirrored; blended toward
    /// [member arm_layer_hold_value] on both characters while the hands are held. Empty (default):
    /// detected in the character's tree — the `blend_amount` (Blend2, Blend3) or `add_amount`
    /// (Add2, Add3) of every node of the root [AnimationNodeBlendTree] whose filter is on and
    /// passes an arm bone (shoulder, upper arm, forearm or hand of the humanoid found in the
    /// skeleton); see [method get_arm_layers]. A tree whose arm layer is built otherwise
    /// (nested trees, state machines) needs the paths set here, e.g.
    /// `["parameters/arms/blend_amount"]`.
    #[export]
    arm_layer_parameters: PackedStringArray,
    /// Value the arm layer parameters take while the hands are held (0: arms out of the locomotion).
    #[export(range = (P::ArmLayerHoldValue.spec().hint_min(), P::ArmLayerHoldValue.spec().hint_max(), suffix = P::ArmLayerHoldValue.spec().suffix()))]
    arm_layer_hold_value: f32,

    /// Seconds between the initiator's pair-pose broadcasts (both roots).
    #[export_group(name = "Network")]
    #[export_subgroup(name = "Stream")]
    #[export(range = (P::PoseInterval.spec().hint_min(), P::PoseInterval.spec().hint_max(), 0.01, suffix = P::PoseInterval.spec().suffix()))]
    #[init(val = P::PoseInterval.spec().default)]
    pose_interval: f32,
    /// Seconds between the initiator's IK-target broadcasts (both hands, weight and flags).
    #[export(range = (P::IkInterval.spec().hint_min(), P::IkInterval.spec().hint_max(), 0.01, suffix = P::IkInterval.spec().suffix()))]
    #[init(val = P::IkInterval.spec().default)]
    ik_interval: f32,
    /// Seconds between animation snapshots over the network (the initiator's non-arm AnimationTree
    /// parameters, state machines, OneShots, or its AnimationPlayer's animation and position); a
    /// snapshot is skipped while nothing changed, but sent at least once a second. 0 turns them off.
    #[export(range = (P::AnimationInterval.spec().hint_min(), P::AnimationInterval.spec().hint_max(), 0.01, suffix = P::AnimationInterval.spec().suffix()))]
    #[init(val = P::AnimationInterval.spec().default)]
    animation_interval: f32,
    /// Fastest the initiator's root may move horizontally between two of its samples (m/s; up or
    /// down, 60 m/s, as fast as anything falls; both times the pair's scale, see
    /// [member auto_proportions]): frames that would move it faster are refused and counted (`too_fast` in [method get_network_stats]), unless
    /// the initiator marked a teleport ([method teleport]; at most one a second). Guards every peer
    /// against a lying or broken initiator.
    #[export(range = (P::MaxRootSpeed.spec().hint_min(), P::MaxRootSpeed.spec().hint_max(), 0.5, suffix = P::MaxRootSpeed.spec().suffix()))]
    #[init(val = P::MaxRootSpeed.spec().default)]
    max_root_speed: f32,
    /// How fast a remote peer glides each character from where it last showed it into the pair when
    /// the pair starts (instead of snapping to the initiator's one-off preparation placement); times
    /// the pair's scale (see [member auto_proportions]).
    #[export(range = (P::BlendSpeed.spec().hint_min(), P::BlendSpeed.spec().hint_max(), 0.1, suffix = P::BlendSpeed.spec().suffix()))]
    #[init(val = P::BlendSpeed.spec().default)]
    blend_speed: f32,
    /// The [EntwineNetClock] whose shared time stamps the stream. Empty: the first node in the group
    /// `entwine_net_clocks` (every EntwineNetClock joins it). Without one, remote views still interpolate,
    /// but [method get_view_delay] leaves out the network's fastest transit time.
    #[export(node_path = ("EntwineNetClock"))]
    net_clock_node: NodePath,
    #[export_subgroup(name = "Timeouts")]
    /// Seconds without IK packets after which the remote hands fade out (they fade back in when
    /// packets resume).
    #[export(range = (P::IkTimeout.spec().hint_min(), P::IkTimeout.spec().hint_max(), 0.05, suffix = P::IkTimeout.spec().suffix()))]
    #[init(val = P::IkTimeout.spec().default)]
    ik_timeout: f32,
    /// Seconds the remote hands take to fade out after [member ik_timeout], or back in.
    #[export(range = (P::IkFadeTime.spec().hint_min(), P::IkFadeTime.spec().hint_max(), 0.01, suffix = P::IkFadeTime.spec().suffix()))]
    #[init(val = P::IkFadeTime.spec().default)]
    ik_fade_time: f32,
    /// Seconds without the initiator's stream (disconnected, not loaded, lost packets) after which
    /// the recipient is released ([signal initiator_lost]); the recipient's own peer then cancels
    /// the pair.
    #[export(range = (P::InitiatorTimeout.spec().hint_min(), P::InitiatorTimeout.spec().hint_max(), 0.1, suffix = P::InitiatorTimeout.spec().suffix()))]
    #[init(val = P::InitiatorTimeout.spec().default)]
    initiator_timeout: f32,
    /// Seconds the recipient waits for the initiator's first frame of a pair before it is released
    /// as in [member initiator_timeout]. The initiator can learn of the pair seconds after the
    /// recipient (on a lossy network the room's word is resent until it arrives), so the first frame
    /// may come late; never less than [member initiator_timeout].
    #[export(range = (P::InitiatorStartTimeout.spec().hint_min(), P::InitiatorStartTimeout.spec().hint_max(), 0.1, suffix = P::InitiatorStartTimeout.spec().suffix()))]
    #[init(val = P::InitiatorStartTimeout.spec().default)]
    initiator_start_timeout: f32,

    /// Draw the reach spheres, the shared contact and the connection state.
    #[export_group(name = "Debug")]
    #[export]
    #[var(get = is_debug_draw_enabled)]
    debug_draw: bool,

    lifecycle: Lifecycle,
    driver: FollowDriver,
    solver: ContactSolver,
    sender: PairSender,
    receiver: PairReplay,
    runtime: Runtime,
    net: NetRuntime,
}

/// Warning bits, so that each problem is reported once.
const WARN_NO_ROOM: u32 = 1;
const WARN_NO_CHARACTER: u32 = 2;
const WARN_BONES: u32 = 4;
const WARN_ID: u32 = 16;
const WARN_CONTACT: u32 = 128;
const WARN_FRAME: u32 = 256;

#[godot_api]
impl INode for HoldHandComponent {
    fn ready(&mut self) {
        // After the characters' own physics (movement), so the initiator drives from this frame's pose.
        self.base_mut().set_physics_process_priority(10);
        self.resolve_nodes();
        self.join_room();
    }

    fn on_notification(&mut self, what: NodeNotification) {
        // Freed: restore this character and remove the hand IK. (Leaving the tree alone is not
        // leaving the room: a partner that is out of the tree for a while only pauses the pair; the
        // room ends pairs whose components are freed.)
        if what == NodeNotification::PREDELETE {
            self.stop();
            if let Some(mut ik) = self.runtime.ik.take().filter(|ik| ik.alive()) {
                ik.queue_free();
            }
        }
    }

    fn physics_process(&mut self, delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::HoldHandComponent);
        let dt = delta as f32;
        self.check_settings();
        let frame = self
            .runtime
            .engine
            .get_or_insert_with(Engine::singleton)
            .get_physics_frames();
        self.runtime.tick = Some(frame);
        let state = self.room_state();
        let valid = self.character_node().is_some();
        if let Some(change) = self.lifecycle.update(state, valid, frame) {
            self.on_phase_change(change.from, change.to);
        }
        let owned = self.is_owned();
        if self.lifecycle.phase() == Phase::Active {
            match self.lifecycle.interaction() {
                Some(Interaction {
                    role: Role::Initiator,
                    partner,
                    ..
                }) if owned => {
                    self.drive_pair(partner, dt, frame);
                    self.broadcast(dt);
                }
                Some(Interaction {
                    role: Role::Initiator,
                    partner,
                    ..
                }) => self.replay_pair(partner, dt, frame),
                Some(Interaction {
                    role: Role::Recipient,
                    partner,
                    ..
                }) => self.watch_initiator(partner, dt),
                None => {}
            }
        }
        self.update_root_driven(owned);
        // Hands nobody drives this frame fade out (the pair ended, or the initiator is gone).
        if frame > self.runtime.driven_frame + 1 {
            let rate = fade_step(dt, self.settings().contact.fade_out_time);
            let (wp, wr) = self.runtime.hand_weights;
            self.set_hand_weights((wp - rate).max(0.0), (wr - rate).max(0.0));
        }
        self.runtime.forget_tick();
    }
}

#[godot_api]
impl HoldHandComponent {
    /// Returns [member auto_proportions].
    #[func]
    pub fn is_using_auto_proportions(&self) -> bool {
        self.auto_proportions
    }

    /// Returns [member sweep_collisions].
    #[func]
    pub fn is_sweeping_collisions(&self) -> bool {
        self.sweep_collisions
    }

    /// Returns [member auto_grip].
    #[func]
    pub fn is_auto_grip_enabled(&self) -> bool {
        self.auto_grip
    }

    /// Returns [member mirror_animation].
    #[func]
    pub fn is_mirroring_animation(&self) -> bool {
        self.mirror_animation
    }

    /// Returns [member debug_draw].
    #[func]
    pub fn is_debug_draw_enabled(&self) -> bool {
        self.debug_draw
    }

    /// [method get_phase]: no interaction.
    #[constant]
    pub const PHASE_NONE: i64 = PairPhase::None as i64;
    /// [method get_phase]: the interaction arrived; following starts next frame.
    #[constant]
    pub const PHASE_PREPARING: i64 = PairPhase::Preparing as i64;
    /// [method get_phase]: following, mirroring and hand IK run.
    #[constant]
    pub const PHASE_ACTIVE: i64 = PairPhase::Active as i64;
    /// [method get_role]: not paired.
    #[constant]
    pub const ROLE_NONE: i64 = PairRole::None as i64;
    /// [method get_role]: asked first; walks and is the pair's authority.
    #[constant]
    pub const ROLE_INITIATOR: i64 = PairRole::Initiator as i64;
    /// [method get_role]: accepted; carried along and frozen.
    #[constant]
    pub const ROLE_RECIPIENT: i64 = PairRole::Recipient as i64;

    /// Emitted on every phase change: None 0, Preparing 1, Active 2 (as [method get_phase]).
    #[signal]
    fn phase_changed(from: PairPhase, to: PairPhase);
    /// Emitted on this character when another player asks it to hold hands.
    #[signal]
    fn request_received(from_player: i64);
    /// Emitted on the asker when the request is accepted.
    #[signal]
    fn request_accepted(by_player: i64);
    /// Emitted on the asker when the request is declined.
    #[signal]
    fn request_declined(by_player: i64);
    /// Emitted on the asker when the request expires unanswered.
    #[signal]
    fn request_expired(to_player: i64);
    /// Emitted on the asked player when the request is withdrawn.
    #[signal]
    fn request_withdrawn(from_player: i64);
    /// Emitted on both players when their pair ends (`by_player` cancelled or left).
    #[signal]
    fn cancelled(by_player: i64);
    /// Emitted when this character is frozen (as a recipient) or released.
    #[signal]
    fn frozen_changed(frozen: bool);
    /// Emitted on the initiator when the pair's hands connect or let go (distance hysteresis).
    #[signal]
    fn hands_connected_changed(connected: bool);
    /// Emitted on the recipient, on every peer, when the initiator's stream has been silent for
    /// [member initiator_timeout]: the recipient is released (and its own peer cancels the pair).
    #[signal]
    fn initiator_lost(initiator: i64);
    /// Emitted when the pair starts or stops writing this character's root on this peer (see
    /// [method is_root_driven]).
    #[signal]
    fn root_driven_changed(driven: bool);

    /// The initiator's stream (one byte array per frame): one frame of both roots, the hand
    /// samples since the last frame and maybe an animation snapshot. The server reads frames only
    /// from this player's own peer (at most 120 per second) and forwards those it accepts to
    /// every other peer; clients read frames only from the server. Frames from any other peer,
    /// for a pair this player does not lead, malformed, stale or too fast ones are dropped and
    /// counted, with at most one warning per peer and kind every 10 s.
    #[rpc(any_peer, call_remote, unreliable, channel = 1)]
    #[func(rename = _pair_frame)]
    fn pair_frame(&mut self, #[opt(default = Message::none())] message: Message) {
        let (sender, server) = crate::inbox::sender(&self.to_gd());
        let me = self.get_player_id();
        let (t, abuse) = crate::inbox::clock();
        let expected = if server { me } else { SERVER };
        let bytes = crate::inbox::bytes(&message);
        let inbox = &mut self.net.inbox;
        let checked = inbox
            .sender_is(sender, expected, t, abuse)
            .and_then(|()| match server {
                true => inbox.admit(sender, t, FRAME_LIMIT, abuse),
                false => Ok(()),
            })
            .and_then(|()| {
                let b = bytes.as_ref().map(PackedByteArray::as_slice);
                inbox.bytes(sender, b, MAX_FRAME_BYTES, t, abuse)
            });
        let frame = match checked {
            Ok(frame) => frame,
            Err(v) => return self.dropped_message(sender, v, "a pair frame"),
        };
        let leading = matches!(
            self.lifecycle.interaction(),
            Some(Interaction {
                role: Role::Initiator,
                ..
            })
        ) && self.lifecycle.phase() != Phase::None;
        if !leading || self.is_owned() {
            // Early (before the room's state arrived here), late, or a peer that leads no pair.
            let _ = self.net.inbox.drop(sender, Dropped::Unexpected, t, abuse);
            return;
        }
        let (now, shared) = self.clock_now();
        let tuning = self.replay_tuning();
        let received = self.receiver.receive(frame, now, shared, &tuning);
        if server && matches!(received, Ok(_) | Err(Refused::Stale | Refused::NoKey)) {
            // Every other peer gets what the server checked (Godot's relay can be off): a repeat
            // the server already had may be the copy another peer's link needs.
            let _ = self.rpcs().pair_frame(message.clone()).call_id(-sender);
        }
        match received {
            Ok(_) => {
                if let Some(mut partner) = self.get_partner() {
                    // The partner may emit frozen_changed: while this guard is held, a handler may
                    // call back into this component without a double borrow.
                    let _reentrant = self.base_mut();
                    partner.bind_mut().heard_initiator();
                }
            }
            Err(Refused::Malformed(e)) => {
                let v = self.net.inbox.drop(sender, Dropped::Malformed, t, abuse);
                let what = format!("a pair frame: {e:?}, {} bytes", frame.len());
                self.dropped_message(sender, v, &what);
            }
            Err(Refused::TooFast) => self.warn_throttled(
                THROTTLE_TOO_FAST,
                format!(
                    "refused a pair frame of player {me} (from peer {sender}) that moves its \
                     character faster than max_root_speed ({} m/s) without a teleport; counted in \
                     get_network_stats().too_fast",
                    self.max_root_speed
                ),
            ),
            Err(Refused::Stale | Refused::NoKey) => {}
        }
    }

    /// Returns this player's id in its room (the configured id before it joined one).
    #[func]
    pub fn get_player_id(&self) -> i64 {
        self.runtime.joined_as.unwrap_or(self.player_id)
    }

    /// Sets [member player_id]; while in a room as another id, warns once (it is used when the
    /// component joins again).
    #[func]
    pub fn set_player_id(&mut self, id: i64) {
        self.player_id = id;
        let node = self.to_gd();
        let joined = self.runtime.joined_as;
        let valid = joined.is_none_or(|j| j == id);
        self.runtime.warnings.property(
            &node,
            "player_id",
            id,
            valid,
            joined.unwrap_or(id),
            "cannot change while this character is in its room (it is used when it joins again)",
        );
    }
}
