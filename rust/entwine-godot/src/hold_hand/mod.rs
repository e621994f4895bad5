//! `HoldHandComponent` and its local `HoldHandRoom`.

mod anim;
mod room;

use entwine_core::hold_hand::stream::{AnimSnapshot, TickFrames, TickInput};
use entwine_core::hold_hand::{
    palm_to_palm, ContactOutput, ContactSolver, ContactTuning, FollowDriver, FollowTuning,
    HandInput, HandOffsets, HandSample, HandShape, Interaction, Lifecycle, PairReplay, PairSample,
    PairSender, Phase, PlayerId, Refused, ReplayTuning, Role, RoomCall, StreamRates,
};
use entwine_core::kit::Pose;
use entwine_core::rig::{HandSize, Humanoid, Role as RigRole, Side};
use glam::Vec3;
use godot::classes::base_material_3d::{Flags, ShadingMode};
use godot::classes::mesh::PrimitiveType;
use godot::classes::notify::NodeNotification;
use godot::classes::{
    AnimationMixer, AnimationNodeAdd2, AnimationNodeAdd3, AnimationNodeBlend2, AnimationNodeBlend3,
    AnimationNodeBlendTree, AnimationPlayer, AnimationTree, CharacterBody3D, Engine, INode,
    ImmediateMesh, MeshInstance3D, Node, Node3D, Skeleton3D, StandardMaterial3D,
};
use godot::prelude::*;

use crate::warnings::Warnings;

use crate::convert::{pose, transform_scaled, vec3, vector3};
use crate::limb_ik::LimbIK;
use crate::net_clock::NetClock;
use crate::rig;
use crate::scene::first_descendant;
pub use room::HoldHandRoom;

/// Two characters holding hands: the initiator walks, the partner is carried along, and both arms
/// meet at one shared contact point.
///
/// Add one `HoldHandComponent` as a child of each character (a [CharacterBody3D] or any [Node3D]
/// with a [Skeleton3D] below it) and a [HoldHandRoom] somewhere above them (or set [member room]).
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
/// [LimbIK] modifiers it adds to each skeleton, fading their weights in and out with a distance
/// hysteresis. The **recipient** is frozen while paired: its `frozen` property (if its script has
/// one) is set, its own physics processing is suspended and its velocity zeroed; all of it is
/// restored when the pair ends ([signal frozen_changed]).
///
/// **Over the network** (the [HoldHandRoom] is networked and a peer is connected), set
/// [member player_id] to the peer id that plays the character, on every peer. The initiator's peer
/// does all of the above and streams the pair to every other peer ([member pose_interval],
/// [member ik_interval], [member animation_interval]); the others replay it: the recipient's peer
/// keeps the pair's stance steady around its own character, onlookers smooth both roots, and the
/// hands are rebuilt in the initiator's frame. The initiator's animation (the same kinds as the
/// local mirror, for rigs with or without an AnimationTree) is shown on both characters at the same
/// view time as the roots: while a pair is shown, this component advances their [AnimationTree] (or
/// [AnimationPlayer]) itself on the view clock, with its
/// [member AnimationMixer.callback_mode_process] set to manual, and gives its own mode back when
/// the pair ends (a mixer already in manual mode is left to the game). Frames from any other peer, stale or malformed ones
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

    /// The [HoldHandRoom] this character plays in. Empty: the nearest ancestor room, else the first
    /// node in the group `entwine_hold_hand_rooms`.
    #[export_group(name = "Setup")]
    #[export]
    room: NodePath,
    /// This player's id in the room (e.g. its multiplayer peer id). 0 picks one automatically, unique
    /// per component; at run time this property reads the id actually in use. Set before the
    /// component joins its room: a different id set while in the room warns once and is used only
    /// when it joins again.
    #[export]
    #[var(get = get_player_id, set = set_player_id)]
    player_id: i64,
    /// The character this component moves: its root ([CharacterBody3D] or [Node3D]).
    #[export]
    #[init(val = NodePath::from(".."))]
    character: NodePath,
    /// The character's skeleton. Empty: the first [Skeleton3D] below the character.
    #[export]
    skeleton: NodePath,
    /// The character's [AnimationTree]. Empty: the first one below the character.
    #[export]
    animation_tree: NodePath,

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
    auto_proportions: bool,
    /// Where the recipient stands, in the initiator's frame (−Z forward, +X right): the seed's 0.82 m
    /// to the left and 0.17 m behind (for a 1.75 m initiator, see [member auto_proportions]).
    #[export]
    #[init(val = Vector3::new(-0.82, 0.0, 0.17))]
    follow_offset: Vector3,
    /// Where the recipient is placed once when the pair starts, in the initiator's frame (1 m behind;
    /// scaled by [member auto_proportions]).
    #[export]
    #[init(val = Vector3::new(0.0, 0.0, 1.0))]
    preparation_offset: Vector3,
    /// Follow speed per metre of distance to the follow point (a rate: the same at any size).
    #[export(range = (0.0, 100.0, 0.1, suffix = "1/s"))]
    #[init(val = 16.0)]
    spring_coefficient: f32,
    /// Lowest follow speed once outside the stop radius (scaled by [member auto_proportions]).
    #[export(range = (0.0, 100.0, 0.1, suffix = "m/s"))]
    #[init(val = 12.0)]
    min_follow_speed: f32,
    /// Highest follow speed, also while a recipient catches up after a wall held it back (scaled by
    /// [member auto_proportions]).
    #[export(range = (0.0, 100.0, 0.1, suffix = "m/s"))]
    #[init(val = 24.0)]
    max_follow_speed: f32,
    /// Distance under which the recipient snaps onto the follow point (scaled by
    /// [member auto_proportions]).
    #[export(range = (0.0, 1.0, 0.001, suffix = "m"))]
    #[init(val = 0.02)]
    stop_radius: f32,
    /// Sweep the recipient's collision shape toward the follow point so that it slides along walls
    /// (needs a [CharacterBody3D]); off: it is placed directly.
    #[export]
    #[init(val = true)]
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
    auto_grip: bool,
    /// Offset of the initiator's hand from the shared contact point, in the contact's frame (the
    /// half-way rotation of the two hands). Zero, with the other three below, uses
    /// [member auto_grip].
    #[export]
    initiator_contact_offset: Vector3,
    /// Rotation of the initiator's hand relative to the shared contact rotation (Euler, degrees).
    #[export]
    initiator_contact_rotation: Vector3,
    /// Offset of the recipient's hand from the shared contact point, in the contact's frame.
    #[export]
    recipient_contact_offset: Vector3,
    /// Rotation of the recipient's hand relative to the shared contact rotation (Euler, degrees).
    #[export]
    recipient_contact_rotation: Vector3,
    /// Reach spheres are this much shorter than the arms, so that the contact stays reachable while
    /// the shoulders move between the solve and the skeleton update: metres for the 0.54 m arm of a
    /// 1.75 m human, scaled with the arm's length in the world.
    #[export(range = (0.0, 0.2, 0.005, suffix = "m"))]
    #[init(val = 0.02)]
    reach_margin: f32,
    /// SmoothDamp time of the shared contact point.
    #[export(range = (0.0, 1.0, 0.005, suffix = "s"))]
    #[init(val = 0.08)]
    contact_smooth_time: f32,
    /// A disconnected pair's hands reconnect when the roots are this close (scaled by
    /// [member auto_proportions]).
    #[export(range = (0.0, 5.0, 0.01, suffix = "m"))]
    #[init(val = 1.1)]
    reconnect_distance: f32,
    /// A connected pair's hands let go when the roots are farther apart than this (scaled by
    /// [member auto_proportions]).
    #[export(range = (0.0, 5.0, 0.01, suffix = "m"))]
    #[init(val = 1.51)]
    disconnect_distance: f32,
    /// Seconds for the hand IK to fade in.
    #[export(range = (0.0, 2.0, 0.01, suffix = "s"))]
    #[init(val = 0.15)]
    fade_in_time: f32,
    /// Seconds for the hand IK to fade out.
    #[export(range = (0.0, 2.0, 0.01, suffix = "s"))]
    #[init(val = 0.1)]
    fade_out_time: f32,
    /// Maximum IK position weight of the hands.
    #[export(range = (0.0, 1.0))]
    #[init(val = 1.0)]
    max_position_weight: f32,
    /// Maximum IK rotation weight of the hands.
    #[export(range = (0.0, 1.0))]
    #[init(val = 1.0)]
    max_rotation_weight: f32,

    /// Copy the initiator's animation onto the recipient every frame: the AnimationTree's numeric
    /// parameters (Vector2 blend positions included), its state machines' node, travels and play
    /// position, and its OneShots (fired or aborted as the initiator's); without a tree, the
    /// AnimationPlayer's animation and position.
    #[export_group(name = "Animation")]
    #[export]
    #[init(val = true)]
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
    #[export(range = (0.0, 1.0))]
    arm_layer_hold_value: f32,

    /// Seconds between the initiator's pair-pose broadcasts (both roots).
    #[export_group(name = "Network")]
    #[export(range = (0.02, 1.0, 0.01, suffix = "s"))]
    #[init(val = 0.1)]
    pose_interval: f32,
    /// Seconds between the initiator's IK-target broadcasts (both hands, weight and flags).
    #[export(range = (0.02, 1.0, 0.01, suffix = "s"))]
    #[init(val = 0.05)]
    ik_interval: f32,
    /// Seconds between animation snapshots over the network (the initiator's non-arm AnimationTree
    /// parameters, state machines, OneShots, or its AnimationPlayer's animation and position); a
    /// snapshot is skipped while nothing changed, but sent at least once a second. 0 turns them off.
    #[export(range = (0.0, 1.0, 0.01, suffix = "s"))]
    #[init(val = 0.1)]
    animation_interval: f32,
    /// Fastest the initiator's root may move horizontally between two of its samples (m/s; up or
    /// down, 60 m/s, as fast as anything falls; both times the pair's scale, see
    /// [member auto_proportions]): frames that would move it faster are refused and counted (`too_fast` in [method get_network_stats]), unless
    /// the initiator marked a teleport ([method teleport]; at most one a second). Guards every peer
    /// against a lying or broken initiator.
    #[export(range = (0.5, 100.0, 0.5, suffix = "m/s"))]
    #[init(val = 12.0)]
    max_root_speed: f32,
    /// How fast a remote peer glides each character from where it last showed it into the pair when
    /// the pair starts (instead of snapping to the initiator's one-off preparation placement); times
    /// the pair's scale (see [member auto_proportions]).
    #[export(range = (0.1, 50.0, 0.1, suffix = "m/s"))]
    #[init(val = 4.0)]
    blend_speed: f32,
    /// The [NetClock] whose shared time stamps the stream. Empty: the first node in the group
    /// `entwine_net_clocks` (every NetClock joins it). Without one, remote views still interpolate,
    /// but [method get_view_delay] leaves out the network's fastest transit time.
    #[export]
    net_clock: NodePath,
    /// Seconds without IK packets after which the remote hands fade out (they fade back in when
    /// packets resume).
    #[export(range = (0.05, 10.0, 0.05, suffix = "s"))]
    #[init(val = 0.5)]
    ik_timeout: f32,
    /// Seconds the remote hands take to fade out after [member ik_timeout], or back in.
    #[export(range = (0.0, 2.0, 0.01, suffix = "s"))]
    #[init(val = 0.2)]
    ik_fade_time: f32,
    /// Seconds without the initiator's stream (disconnected, not loaded, lost packets) after which
    /// the recipient is released ([signal initiator_lost]); the recipient's own peer then cancels
    /// the pair.
    #[export(range = (0.2, 60.0, 0.1, suffix = "s"))]
    #[init(val = 3.0)]
    initiator_timeout: f32,
    /// Seconds the recipient waits for the initiator's first frame of a pair before it is released
    /// as in [member initiator_timeout]. The initiator can learn of the pair seconds after the
    /// recipient (on a lossy network the room's word is resent until it arrives), so the first frame
    /// may come late; never less than [member initiator_timeout].
    #[export(range = (0.2, 120.0, 0.1, suffix = "s"))]
    #[init(val = 10.0)]
    initiator_start_timeout: f32,

    /// Draw the reach spheres, the shared contact and the connection state.
    #[export_group(name = "Debug")]
    #[export]
    debug_draw: bool,

    lifecycle: Lifecycle,
    driver: FollowDriver,
    solver: ContactSolver,
    sender: PairSender,
    receiver: PairReplay,
    runtime: Runtime,
    net: NetRuntime,
}

/// The pair's network state on this peer.
#[derive(Default)]
struct NetRuntime {
    /// The last hands the initiator solved, in its own frame (what it broadcasts).
    last_ik: Option<LastHands>,
    /// The clock that stamps the stream (resolved on each pair start).
    clock: Option<Gd<NetClock>>,
    /// Per-physics-tick times read from that clock: the initiator's stamps, and a remote peer's
    /// replay clock (ticks run back to back in one rendered frame stay a tick apart).
    stamps: entwine_core::clock::TickClock,
    view_ticks: entwine_core::clock::TickClock,
    /// The initiator's root last physics frame (to notice a teleport).
    last_root: Option<Pose>,
    /// Where this peer showed each character (initiator, recipient) when the pair started.
    seen: [Option<Pose>; 2],
    /// The view time and delay of this peer's last replay frame, or of the initiator's own sample.
    view_time: f64,
    view_delay: f32,
    view_blend: f32,
    /// Throttled warnings (forged, malformed, too fast).
    throttle: Warnings,
    /// What the animation snapshots carry (found the same way on every peer), the last snapshot
    /// read, and what each replica (initiator, recipient) last applied.
    anim_rig: anim::AnimRig,
    anim_snapshot: AnimSnapshot,
    anim_follow: [anim::AnimFollower; 2],
    /// Frames and bytes this peer sent as the initiator.
    sent_frames: i64,
    sent_bytes: i64,
    /// The last frame sent, for a repeat (see `Due::repeat`).
    last_frame: PackedByteArray,
    /// Frames dropped because the sender is not this pair's initiator.
    rejected: i64,
    /// Frames from this player that arrived while it leads no pair here (early or late).
    unexpected: i64,
    /// Recipient side: seconds since the initiator was last heard (or since the pair began), whether
    /// it was heard at all in this pair, and whether it was given up.
    silence: f32,
    heard: bool,
    released: bool,
    /// Whether the pair writes this character's root here (the game's own sync must not).
    root_driven: bool,
}

/// The hands as the initiator solved them, in its own frame.
#[derive(Clone, Copy)]
struct LastHands {
    contact: glam::Vec3,
    rotation: glam::Quat,
    offsets: HandOffsets,
    weight: f32,
    connected: bool,
    arm_override: bool,
    has_shared_reach: bool,
}

/// Throttled warning kinds (at most one per ten seconds each, with a count; see [`Warnings`]).
const THROTTLE_FORGED: u32 = 0;
const THROTTLE_MALFORMED: u32 = 1;
const THROTTLE_TOO_FAST: u32 = 2;

/// Per-interaction state the component restores or rebuilds.
#[derive(Default)]
struct Runtime {
    room: Option<Gd<HoldHandRoom>>,
    /// The character, its skeleton and animation tree, resolved on ready and on each new pair.
    character: Option<Gd<Node3D>>,
    skeleton: Option<Gd<Skeleton3D>>,
    tree: Option<Gd<AnimationTree>>,
    /// Used for mirroring when the character has no AnimationTree.
    player: Option<Gd<AnimationPlayer>>,
    joined_as: Option<PlayerId>,
    /// Saved before freezing: physics processing and the character's `frozen` property.
    freeze: Option<(bool, Variant)>,
    /// This character's hand IK, added to its skeleton on demand.
    ik: Option<Gd<LimbIK>>,
    /// The hand bone the IK was built for and whether building it failed.
    ik_bone: GString,
    /// The height of the humanoid in the skeleton (its units), found on the first use per pair.
    rig_height: Option<f32>,
    /// This hand's shape for the grip and the body's axes (right, up, back), in the skeleton's
    /// space, found with the IK.
    grip: Option<GripHand>,
    ik_failed: bool,
    /// Weights the initiator last set on this character's hand, and the physics frame it did.
    hand_weights: (f32, f32),
    driven_frame: u64,
    /// What is mirrored from the initiator (found on start), what the partner last had applied,
    /// and saved arm values to restore.
    mirror_rig: anim::AnimRig,
    mirror_follow: anim::AnimFollower,
    mirror_snapshot: AnimSnapshot,
    arm_saved: Vec<(StringName, Variant)>,
    /// The arm layers detected in the tree (when `arm_layer_parameters` is empty).
    arm_layers: Option<PackedStringArray>,
    contact: Vector3,
    connected: bool,
    /// Debug drawing (made when `debug_draw` is first used).
    debug_mesh: Option<Gd<ImmediateMesh>>,
    shared_reach: bool,
    warnings: Warnings,
}

/// A hand as the grip needs it, in its skeleton's units (see [`HandShape`]).
#[derive(Clone, Copy)]
struct GripHand {
    /// Palm and finger directions in the hand bone's own space.
    palm: Vec3,
    finger: Vec3,
    size: HandSize,
    /// The body's right, up and back in the skeleton's space.
    axes: [Vec3; 3],
}

impl GripHand {
    /// The hand's shape with its lengths multiplied by `scale` (into the world).
    fn shape(&self, scale: f32) -> HandShape {
        HandShape {
            palm: self.palm,
            finger: self.finger,
            length: self.size.length * scale,
            thickness: self.size.thickness * scale,
        }
    }
}

/// Warning bits, so that each problem is reported once.
const WARN_NO_ROOM: u32 = 1;
const WARN_NO_CHARACTER: u32 = 2;
const WARN_BONES: u32 = 4;
const WARN_ID: u32 = 16;
const WARN_CONTACT: u32 = 128;
const WARN_FRAME: u32 = 256;
/// Largest follow or preparation offset accepted (m); farther counts as invalid tuning.
const MAX_FOLLOW_OFFSET: f32 = 100.0;
/// Largest contact offset accepted (m); farther (or NaN) counts as none.
const MAX_CONTACT_OFFSET: f32 = 2.0;

/// Metadata set on a character while the pair writes its root (see [method is_pair_driven]).
const DRIVEN_META: &str = "entwine_pair_driven";

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
            if let Some(mut ik) = self.runtime.ik.take().filter(|ik| ik.is_instance_valid()) {
                ik.queue_free();
            }
        }
    }

    fn physics_process(&mut self, delta: f64) {
        let dt = delta as f32;
        self.check_settings();
        let frame = Engine::singleton().get_physics_frames();
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
            let rate = if self.fade_out_time > 0.0 {
                dt / self.fade_out_time
            } else {
                1.0
            };
            let (wp, wr) = self.runtime.hand_weights;
            self.set_hand_weights((wp - rate).max(0.0), (wr - rate).max(0.0));
        }
    }
}

#[godot_api]
impl HoldHandComponent {
    /// Phase: no interaction.
    #[constant]
    pub const PHASE_NONE: i32 = 0;
    /// Phase: the interaction arrived; following starts next frame.
    #[constant]
    pub const PHASE_PREPARING: i32 = 1;
    /// Phase: following, mirroring and hand IK run.
    #[constant]
    pub const PHASE_ACTIVE: i32 = 2;
    /// Role: not paired.
    #[constant]
    pub const ROLE_NONE: i32 = -1;
    /// Role: asked first; walks and is the pair's authority.
    #[constant]
    pub const ROLE_INITIATOR: i32 = 0;
    /// Role: accepted; carried along and frozen.
    #[constant]
    pub const ROLE_RECIPIENT: i32 = 1;

    /// Emitted on every phase change (PHASE_* constants).
    #[signal]
    fn phase_changed(from: i32, to: i32);
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

    /// Returns whether the pair writes this character's root on this peer right now: always for a
    /// recipient, and for an initiator on every peer but its own. A game's ordinary position sync
    /// (e.g. a [MultiplayerSynchronizer] of the character's transform) must not apply its updates
    /// while this is true, or it would overwrite the pair's authoritative targets. The same flag is
    /// readable without the component through [method is_pair_driven].
    #[func]
    pub fn is_root_driven(&self) -> bool {
        self.net.root_driven
    }

    /// Returns whether a [HoldHandComponent] drives `character`'s root on this peer (the metadata
    /// `entwine_pair_driven` it sets on the character). For a game's position sync:
    /// `if not HoldHandComponent.is_pair_driven(body): body.global_transform = synced`.
    #[func]
    pub fn is_pair_driven(character: Option<Gd<Node>>) -> bool {
        character
            .filter(|c| c.is_instance_valid())
            .is_some_and(|c| {
                c.get_meta_ex(DRIVEN_META)
                    .default(&false.to_variant())
                    .done()
                    .booleanize()
            })
    }

    /// Returns this component's network counters: `sent_frames` and `sent_bytes` (as the
    /// initiator), `frames` (accepted here), `stale` (duplicates — a frame where the motion
    /// changed sharply is sent twice — or too old to show), `malformed`,
    /// `too_fast` (frames that would move the initiator faster than [member max_root_speed]),
    /// `rejected` (frames from a peer that is not this player's), `unexpected` (frames from this
    /// player while it leads no pair here, e.g. before the room's state arrived).
    #[func]
    pub fn get_network_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("sent_frames", self.net.sent_frames);
        d.set("sent_bytes", self.net.sent_bytes);
        d.set("frames", i64::from(self.receiver.frames()));
        d.set("stale", i64::from(self.receiver.stale()));
        d.set("malformed", i64::from(self.receiver.malformed()));
        d.set("too_fast", i64::from(self.receiver.too_fast()));
        d.set("rejected", self.net.rejected);
        d.set("unexpected", self.net.unexpected);
        d
    }

    /// Returns how far in the past (seconds) this peer shows the pair this component leads: the
    /// replay's view delay on a remote peer (the true age on the shared clock when the scene has a
    /// [NetClock]), 0 on the initiator's own peer and when not paired. Read it on the initiator's
    /// component.
    #[func]
    pub fn get_view_delay(&self) -> f32 {
        self.net.view_delay
    }

    /// Returns the stream-clock time (the [NetClock]'s server time when there is one) of what this
    /// peer shows of the pair this component leads this physics frame: on the initiator's own peer,
    /// the time its current sample is stamped with; on any other peer, the replay's view time.
    /// 0 when not paired. Comparing two peers' views at equal view times compares like with like.
    #[func]
    pub fn get_view_time(&self) -> f64 {
        self.net.view_time
    }

    /// Returns how far (m) this peer still shows either character from the pair's stream while they
    /// glide in at the pair's start ([member blend_speed]); 0 once they follow the stream, on the
    /// initiator's own peer and when not paired. Read it on the initiator's component.
    #[func]
    pub fn get_view_blend(&self) -> f32 {
        self.net.view_blend
    }

    /// Tells every peer that this initiator's next jump is a teleport (a respawn, a cutscene cut):
    /// remote views jump with it instead of gliding, and the jump is not refused by
    /// [member max_root_speed]. An initiator that moves more than 3 m (times the pair's scale) in
    /// one physics frame is marked automatically.
    #[func]
    pub fn teleport(&mut self) {
        self.sender.teleport();
    }

    /// The initiator's stream (sent by its peer, checked here): one frame of both roots, the hand
    /// samples since the last frame and maybe an animation snapshot. Frames from any other peer,
    /// for a pair this player does not lead, malformed, stale or too fast ones are dropped and
    /// counted, with at most one warning per kind every 10 s.
    #[rpc(any_peer, call_remote, unreliable, channel = 1)]
    fn pair_frame(&mut self, bytes: PackedByteArray) {
        let sender = self
            .base()
            .get_multiplayer()
            .map_or(0, |mp| i64::from(mp.get_remote_sender_id()));
        let me = self.get_player_id();
        if sender != me {
            self.net.rejected += 1;
            self.warn_throttled(
                THROTTLE_FORGED,
                format!(
                    "peer {sender} sent pair frames for player {me}; only that player's peer may \
                     (dropped and counted in get_network_stats().rejected)"
                ),
            );
            return;
        }
        let leading = matches!(
            self.lifecycle.interaction(),
            Some(Interaction {
                role: Role::Initiator,
                ..
            })
        ) && self.lifecycle.phase() != Phase::None;
        if !leading || self.is_owned() {
            // Early (before the room's state arrived here), late, or a peer that leads no pair.
            self.net.unexpected += 1;
            return;
        }
        let (now, shared) = self.clock_now();
        let tuning = self.replay_tuning();
        match self
            .receiver
            .receive(bytes.as_slice(), now, shared, &tuning)
        {
            Ok(_) => {
                if let Some(mut partner) = self.get_partner() {
                    // The partner may emit frozen_changed: while this guard is held, a handler may
                    // call back into this component without a double borrow.
                    let _reentrant = self.base_mut();
                    partner.bind_mut().heard_initiator();
                }
            }
            Err(Refused::Malformed(e)) => self.warn_throttled(
                THROTTLE_MALFORMED,
                format!(
                    "dropped a malformed pair frame from peer {sender} ({e:?}, {} bytes); \
                     they are counted in get_network_stats().malformed",
                    bytes.len()
                ),
            ),
            Err(Refused::TooFast) => self.warn_throttled(
                THROTTLE_TOO_FAST,
                format!(
                    "refused a pair frame from peer {sender} that moves its character faster than \
                     max_root_speed ({} m/s) without a teleport; counted in \
                     get_network_stats().too_fast",
                    self.max_root_speed
                ),
            ),
            Err(Refused::Stale | Refused::NoKey) => {}
        }
    }

    /// Asks `target`'s player to hold hands. Returns false, with a warning saying why, when the room
    /// refuses (no room, the target is not in it, it is this character, or either side is busy).
    #[func]
    pub fn request(&mut self, target: Option<Gd<HoldHandComponent>>) -> bool {
        let Some(target) = target.filter(|t| t.is_instance_valid()) else {
            godot_warn!(
                "{}: request() needs a valid HoldHandComponent target",
                self.label()
            );
            return false;
        };
        if target == self.to_gd() {
            godot_warn!("{}: cannot request itself", self.label());
            return false;
        }
        let to = target.bind().player();
        match to {
            Some(to) => self.request_player(to),
            None => {
                godot_warn!("{}: the target is not in a room", self.label());
                false
            }
        }
    }

    /// Asks the player with id `player` to hold hands (see [method request]).
    #[func]
    pub fn request_player(&mut self, player: i64) -> bool {
        self.act("request", |from| RoomCall::Request { from, to: player })
    }

    /// Accepts the request addressed to this player. Returns false when there is none.
    #[func]
    pub fn accept(&mut self) -> bool {
        self.act("accept", |by| RoomCall::Accept { by })
    }

    /// Declines the request addressed to this player. Returns false when there is none.
    #[func]
    pub fn decline(&mut self) -> bool {
        self.act("decline", |by| RoomCall::Decline { by })
    }

    /// Withdraws this player's request, or ends the pair (either side may). False when neither exists.
    #[func]
    pub fn cancel(&mut self) -> bool {
        self.act("cancel", |by| RoomCall::Cancel { by })
    }

    /// Returns the current phase (PHASE_* constants).
    #[func]
    pub fn get_phase(&self) -> i32 {
        match self.lifecycle.phase() {
            Phase::None => Self::PHASE_NONE,
            Phase::Preparing => Self::PHASE_PREPARING,
            Phase::Active => Self::PHASE_ACTIVE,
        }
    }

    /// Returns this player's role (ROLE_* constants).
    #[func]
    pub fn get_role(&self) -> i32 {
        match self.lifecycle.interaction().map(|i| i.role) {
            None => Self::ROLE_NONE,
            Some(Role::Initiator) => Self::ROLE_INITIATOR,
            Some(Role::Recipient) => Self::ROLE_RECIPIENT,
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

    /// Returns the partner's player id (0 when not paired).
    #[func]
    pub fn get_partner_id(&self) -> i64 {
        self.lifecycle.interaction().map_or(0, |i| i.partner)
    }

    /// Returns the id of the player whose request waits for this player's answer (0 when none).
    #[func]
    pub fn get_pending_request_from(&self) -> i64 {
        let (Some(room), Some(me)) = (self.live_room(), self.runtime.joined_as) else {
            return 0;
        };
        let pending = room.bind().pending_request_to(me);
        pending.unwrap_or(0)
    }

    /// Returns the partner's component, or null.
    #[func]
    pub fn get_partner(&self) -> Option<Gd<HoldHandComponent>> {
        let partner = self.lifecycle.interaction()?.partner;
        self.live_room()?.bind().get_component(partner)
    }

    /// Returns whether this character is frozen as a recipient.
    #[func]
    pub fn is_frozen(&self) -> bool {
        self.runtime.freeze.is_some()
    }

    /// Returns whether the pair's hands are connected (initiator side; the distance hysteresis).
    #[func]
    pub fn are_hands_connected(&self) -> bool {
        self.runtime.connected
    }

    /// Returns whether both arms reach the shared contact point (initiator side).
    #[func]
    pub fn has_shared_reach(&self) -> bool {
        self.runtime.shared_reach
    }

    /// Returns the smoothed shared contact point in world space (initiator side).
    #[func]
    pub fn get_contact_point(&self) -> Vector3 {
        self.runtime.contact
    }

    /// Returns this character's hand IK position weight (0 when the hand is free).
    #[func]
    pub fn get_hand_weight(&self) -> f32 {
        self.runtime.hand_weights.0
    }

    /// Returns the arm-layer parameters in use: [member arm_layer_parameters] when set, else the
    /// ones detected in the character's [AnimationTree] (empty when none is found).
    #[func]
    pub fn get_arm_layers(&mut self) -> PackedStringArray {
        self.arm_layers()
    }

    /// Returns `k`, the factor [member auto_proportions] applies to this component's lengths and
    /// speeds: its character's height in the world over 1.75 m (1 when the option is off or no
    /// skeleton is found). Only the initiator's factor is used, for the whole pair.
    #[func]
    pub fn get_proportion(&mut self) -> f32 {
        if self.runtime.skeleton.is_none() {
            self.resolve_nodes();
        }
        self.proportion()
    }

    /// Returns what the grip ([member auto_grip]) knows about this character's hand, once its hand
    /// IK is built (empty before): `palm` and `finger` (unit directions in the hand bone's own
    /// space), `length`, `width` and `thickness` (the hand's outer size, in the skeleton's units)
    /// and `grip_point` (the middle of the palm's surface, in the hand bone's space).
    #[func]
    pub fn get_grip(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if let Some(g) = self.runtime.grip {
            let shape = g.shape(1.0);
            d.set("palm", vector3(g.palm.normalize_or_zero()));
            d.set("finger", vector3(g.finger.normalize_or_zero()));
            d.set("length", g.size.length);
            d.set("width", g.size.width);
            d.set("thickness", g.size.thickness);
            d.set(
                "grip_point",
                vector3(shape.grip_point().unwrap_or(Vec3::ZERO)),
            );
        }
        d
    }

    /// Returns this character's hand IK modifier (null until the first pair).
    #[func]
    pub fn get_hand_ik(&self) -> Option<Gd<LimbIK>> {
        self.runtime.ik.clone()
    }

    /// Returns the recipient's driven follow position in world space (initiator side; the recipient's
    /// own position when it is blocked by a wall differs).
    #[func]
    pub fn get_follow_position(&self) -> Vector3 {
        self.driver.driven().map(vector3).unwrap_or(Vector3::ZERO)
    }
}

impl HoldHandComponent {
    fn label(&self) -> String {
        crate::warnings::label(&self.to_gd())
    }

    fn refused(&self, what: &str, why: String) -> bool {
        godot_warn!("{}: {what}() refused: {why}", self.label());
        false
    }

    /// Runs this player's call `what` (built by `op` from the player's id) on the room; returns whether
    /// the room took it, with a warning saying why not.
    fn act(&mut self, what: &str, op: impl FnOnce(PlayerId) -> RoomCall) -> bool {
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
    fn player(&self) -> Option<PlayerId> {
        self.runtime.joined_as
    }

    /// Prints `message` once per warning `bit` (a one-bit mask: its index is the kind).
    fn warn_once(&mut self, bit: u32, message: String) {
        let node = self.to_gd();
        self.runtime
            .warnings
            .once(&node, bit.trailing_zeros(), &message);
    }

    /// Prints `message` unless this kind was printed in the last ten seconds (then counts it, and
    /// says how many were held back next time).
    fn warn_throttled(&mut self, kind: u32, message: String) {
        let node = self.to_gd();
        self.net.throttle.throttled(&node, kind, &message);
    }

    /// Returns the stream clock's time now and whether it is shared by every peer (a synchronised
    /// [NetClock]); else this process's clock.
    fn clock_now(&mut self) -> (f64, bool) {
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

    fn find_clock(&self) -> Option<Gd<NetClock>> {
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
    fn replay_tuning(&mut self) -> ReplayTuning {
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
    fn stream_rates(&mut self) -> StreamRates {
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

    fn join_room(&mut self) {
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

    fn find_room(&self) -> Option<Gd<HoldHandRoom>> {
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

    fn room_state(&self) -> Option<Interaction> {
        self.live_room()?
            .bind()
            .interaction(self.runtime.joined_as?)
    }

    /// Resolves the character, skeleton and animation tree from the properties (not per frame).
    fn resolve_nodes(&mut self) {
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

    fn character_node(&self) -> Option<Gd<Node3D>> {
        self.runtime
            .character
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
    }

    /// The arm-layer parameters: [member arm_layer_parameters] when set, else the ones detected in
    /// the character's tree (once per tree; copying a packed array does not allocate).
    fn arm_layers(&mut self) -> PackedStringArray {
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

    fn skeleton_node(&self) -> Option<Gd<Skeleton3D>> {
        self.runtime
            .skeleton
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
    }

    fn tree_node(&self) -> Option<Gd<AnimationTree>> {
        self.runtime
            .tree
            .as_ref()
            .filter(|n| n.is_instance_valid())
            .cloned()
    }

    fn root_pose(&self) -> Option<Pose> {
        Some(pose(self.character_node()?.get_global_transform()))
    }

    /// `k`, the initiator's height in the world over the 1.75 m reference human, when
    /// [member auto_proportions] is on (1 otherwise, or without a skeleton).
    fn proportion(&mut self) -> f32 {
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
        let scale = skeleton.get_global_transform().basis.get_scale().abs();
        let k = height * (scale.x + scale.y + scale.z) / 3.0 / entwine_core::rig::REFERENCE_HEIGHT;
        if k.is_finite() && k > 1e-6 {
            k
        } else {
            1.0
        }
    }

    fn follow_tuning(&mut self) -> FollowTuning {
        let t = self.follow_tuning_as_set();
        let k = self.proportion();
        FollowTuning {
            follow_offset: t.follow_offset * k,
            preparation_offset: t.preparation_offset * k,
            stop_radius: t.stop_radius * k,
            min_follow_speed: t.min_follow_speed * k,
            max_follow_speed: t.max_follow_speed * k,
            ..t
        }
    }

    /// Returns the follow tuning as set (before scaling by the proportion), each property that is
    /// not finite or outside its range replaced (clamped, or its default) with one warning naming it.
    fn follow_tuning_as_set(&mut self) -> FollowTuning {
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
    fn setting(&mut self, name: &str, value: f32, lo: f32, hi: f32, default: f32) -> f32 {
        let node = self.to_gd();
        self.runtime
            .warnings
            .f32_within(&node, name, value, lo, hi, default)
    }

    /// [`Self::setting`], with `default` (not the clamped value) for a value outside `lo..=hi`.
    fn setting_or_default(
        &mut self,
        name: &str,
        value: f32,
        lo: f32,
        hi: f32,
        default: f32,
    ) -> f32 {
        let node = self.to_gd();
        let valid = value.is_finite() && (lo..=hi).contains(&value);
        self.runtime
            .warnings
            .property(&node, name, value, valid, default, "must be in its range")
    }

    /// A setting that must be finite, within `0..=hi` and at least another setting's checked value
    /// `lower.1` (`lower.0` says so in the warning, naming it): else `default` (or `lower.1` when
    /// that is higher), with one warning.
    fn setting_above(
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
    fn setting_vector(
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
    fn check_settings(&mut self) {
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
    fn reach_margin(&mut self) -> f32 {
        self.setting("reach_margin", self.reach_margin, 0.0, 0.2, 0.02)
    }

    /// Returns how long a recipient waits for a silent initiator (s), checked.
    fn initiator_timeout(&mut self) -> f32 {
        self.setting("initiator_timeout", self.initiator_timeout, 0.2, 60.0, 3.0)
    }

    /// Returns the wait (s) for the initiator's first frame of a pair, checked.
    fn initiator_start_timeout(&mut self) -> f32 {
        self.setting(
            "initiator_start_timeout",
            self.initiator_start_timeout,
            0.2,
            120.0,
            10.0,
        )
    }

    /// Returns the arm layers' blend amount while holding hands, checked.
    fn arm_layer_hold_value(&mut self) -> f32 {
        self.setting(
            "arm_layer_hold_value",
            self.arm_layer_hold_value,
            0.0,
            1.0,
            0.0,
        )
    }

    /// Returns `role`'s contact offset (m) and rotation (degrees), checked.
    fn contact_setting(&mut self, role: Role) -> (Vector3, Vector3) {
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
    fn contact_tuning(&mut self) -> Option<ContactTuning> {
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

    fn on_phase_change(&mut self, from: Phase, to: Phase) {
        let role = self.lifecycle.interaction().map(|i| i.role);
        if to == Phase::None || (from == Phase::Active && to == Phase::Preparing) {
            self.stop();
        }
        if to == Phase::Preparing {
            self.prepare(role);
        }
        let (f, t) = (phase_code(from), phase_code(to));
        self.signals().phase_changed().emit(f, t);
    }

    /// Enters Preparing: freeze a recipient; an initiator aligns the recipient once.
    fn prepare(&mut self, role: Option<Role>) {
        self.resolve_nodes();
        self.runtime.ik_failed = false;
        match role {
            Some(Role::Recipient) => self.freeze(),
            Some(Role::Initiator) => {
                let tuning = self.follow_tuning();
                let (Some(me), Some(mut partner)) = (self.root_pose(), self.get_partner()) else {
                    self.driver.reset();
                    return;
                };
                let start = self.driver.prepare(me, &tuning);
                partner.bind_mut().place_root(start);
                self.runtime.mirror_rig.ready = false;
                self.runtime.mirror_follow.reset();
                self.sender.restart();
                self.net.stamps.reset();
                self.net.last_root = None;
            }
            None => {}
        }
    }

    /// Leaves an interaction: unfreeze, restore the arm layers, forget the pair's state. The hands'
    /// IK fades out over the following frames.
    fn stop(&mut self) {
        self.unfreeze();
        if let Some(mut tree) = self.tree_node() {
            for (name, value) in self.runtime.arm_saved.drain(..) {
                tree.set(&name, &value);
            }
        }
        self.runtime.arm_saved.clear();
        self.runtime.mirror_rig.ready = false;
        self.runtime.mirror_follow.reset();
        self.driver.reset();
        self.solver.reset();
        self.sender.stop();
        self.receiver.reset();
        self.net.last_ik = None;
        self.net.seen = [None; 2];
        self.net.view_time = 0.0;
        self.net.view_delay = 0.0;
        self.net.view_blend = 0.0;
        self.net.anim_rig.ready = false;
        for follower in &mut self.net.anim_follow {
            follower.reset();
        }
        self.net.silence = 0.0;
        self.net.heard = false;
        self.net.released = false;
        if self.runtime.connected {
            self.runtime.connected = false;
            self.signals().hands_connected_changed().emit(false);
        }
        self.runtime.shared_reach = false;
        if let Some(mut mesh) = self.runtime.debug_mesh.clone() {
            mesh.clear_surfaces();
        }
    }

    fn freeze(&mut self) {
        if self.runtime.freeze.is_some() {
            return;
        }
        let Some(mut body) = self.character_node() else {
            return;
        };
        let processing = body.is_physics_processing();
        let frozen_before = body.get("frozen");
        if !frozen_before.is_nil() {
            body.set("frozen", &true.to_variant());
        }
        body.set_physics_process(false);
        if let Ok(mut cb) = body.try_cast::<CharacterBody3D>() {
            cb.set_velocity(Vector3::ZERO);
        }
        self.runtime.freeze = Some((processing, frozen_before));
        self.signals().frozen_changed().emit(true);
    }

    fn unfreeze(&mut self) {
        let Some((processing, frozen_before)) = self.runtime.freeze.take() else {
            return;
        };
        if let Some(mut body) = self.character_node() {
            body.set_physics_process(processing);
            if !frozen_before.is_nil() {
                body.set("frozen", &frozen_before);
            }
        }
        self.signals().frozen_changed().emit(false);
    }

    /// Places this character's root at `target` at once (the one-off preparation alignment).
    fn place_root(&mut self, target: Pose) {
        if let Some(mut body) = self.character_node() {
            let scale = body.get_global_transform().basis.get_scale();
            body.set_global_transform(transform_scaled(target, scale));
        }
    }

    /// Moves this character's root toward `target`, sliding along walls when sweeping.
    fn move_root(&mut self, target: Pose, dt: f32) {
        let Some(body) = self.character_node() else {
            return;
        };
        let scale = body.get_global_transform().basis.get_scale();
        let facing = transform_scaled(target, scale).basis;
        match body.try_cast::<CharacterBody3D>() {
            Ok(mut cb) if self.sweep_collisions && dt > 0.0 => {
                let motion = vector3(target.position) - cb.get_global_position();
                cb.set_velocity(motion / dt);
                cb.move_and_slide();
                cb.set_velocity(Vector3::ZERO);
                let origin = cb.get_global_position();
                cb.set_global_transform(Transform3D::new(facing, origin));
            }
            Ok(cb) => cb
                .upcast::<Node3D>()
                .set_global_transform(Transform3D::new(facing, vector3(target.position))),
            Err(mut n) => {
                n.set_global_transform(Transform3D::new(facing, vector3(target.position)))
            }
        }
    }

    /// The initiator's frame: follow, mirror, contact and both hands' IK.
    fn drive_pair(&mut self, partner_id: PlayerId, dt: f32, frame: u64) {
        let partner = self.partner_in_tree(partner_id);
        let (Some(mut partner), Some(me)) = (partner, self.root_pose()) else {
            // Partner missing: following pauses and the hands are released (they fade out).
            self.solver.release(&ContactTuning::default(), dt);
            return;
        };
        let tuning = self.follow_tuning();
        if self.driver.driven().is_none() {
            // The partner appeared after the preparation: align it now.
            let start = self.driver.prepare(me, &tuning);
            partner.bind_mut().place_root(start);
        }
        let target = self.driver.step(me, dt, &tuning);
        partner.bind_mut().move_root(target, dt);
        // Held back by a wall? Go on from where the body is (this machine's own body, never a
        // remote replay), so catching up keeps to max_follow_speed.
        if let Some(actual) = partner.bind().root_pose() {
            self.driver.settle(actual.position);
        }
        self.mirror_animation_onto(&mut partner, dt);
        self.solve_hands(&mut partner, me, dt, frame);
    }

    /// Shows the initiator's animation on the partner in the same process: numeric parameters
    /// (blend positions included) copied exactly, state machines, one-shots and play positions
    /// applied as a remote replica would; without trees, the AnimationPlayer's animation and position.
    fn mirror_animation_onto(&mut self, partner: &mut Gd<HoldHandComponent>, dt: f32) {
        if !self.mirror_animation {
            return;
        }
        let players = (
            self.runtime
                .player
                .as_ref()
                .filter(|p| p.is_instance_valid())
                .cloned(),
            partner
                .bind()
                .runtime
                .player
                .as_ref()
                .filter(|p| p.is_instance_valid())
                .cloned(),
        );
        if let (Some(src), Some(mut dst)) = players {
            // No AnimationTree: mirror the AnimationPlayer's animation and position.
            let animation = src.get_current_animation();
            if animation.is_empty() {
                return;
            }
            if dst.get_current_animation() != animation {
                dst.play_ex().name(&StringName::from(&animation)).done();
            }
            dst.seek_ex(src.get_current_animation_position())
                .update(true)
                .done();
            return;
        }
        let (Some(src), Some(mut dst)) = (self.tree_node(), partner.bind().tree_node()) else {
            return;
        };
        if !self.runtime.mirror_rig.ready {
            // Once per pair: the initiator's tree, minus the arm layers.
            let arms = self.arm_layers();
            self.runtime.mirror_rig.build(Some(&src), None, &arms);
        }
        let rt = &mut self.runtime;
        rt.mirror_rig.copy_values(&src, &mut dst);
        rt.mirror_rig
            .read(Some(&src), None, &mut rt.mirror_snapshot);
        rt.mirror_snapshot.value_count = 0; // copied exactly above
        rt.mirror_rig.apply(
            &mut rt.mirror_follow,
            &rt.mirror_snapshot,
            Some(&mut dst),
            None,
            dt,
            LOCAL_ANIM_GRACE,
        );
    }

    /// Builds (once) this character's hand IK for `role` and returns it, or `None` when its bones are
    /// missing (warned once).
    fn hand_ik(&mut self, role: Role) -> Option<Gd<LimbIK>> {
        let bone = match role {
            Role::Initiator => self.initiator_hand_bone.clone(),
            Role::Recipient => self.recipient_hand_bone.clone(),
        };
        if let Some(ik) = self.runtime.ik.as_ref().filter(|ik| ik.is_instance_valid()) {
            if self.runtime.ik_bone == bone {
                return Some(ik.clone());
            }
        }
        if self.runtime.ik_failed {
            return None;
        }
        let skeleton = self.skeleton_node();
        let side = match role {
            Role::Initiator => Side::Left,
            Role::Recipient => Side::Right,
        };
        let humanoid = skeleton.as_ref().map(rig::humanoid);
        let chain = skeleton
            .as_ref()
            .zip(humanoid.as_ref())
            .and_then(|(s, h)| chain_for_hand(s, &bone, side, h));
        let (Some(mut skeleton), Some(humanoid), Some([upper, lower, hand])) =
            (skeleton, humanoid, chain)
        else {
            self.runtime.ik_failed = true;
            let skeleton = self
                .skeleton_node()
                .map_or_else(|| "none".to_string(), |s| rig::label(&s));
            let tried = if bone.is_empty() {
                format!(
                    "no {} found (tried: {})",
                    RigRole::arm(side)[2].godot_name(),
                    RigRole::arm(side)[2].tried()
                )
            } else {
                format!("hand bone '{bone}' (with a forearm and upper arm above it) not found")
            };
            self.warn_once(
                WARN_BONES,
                format!(
                    "{tried} in skeleton '{skeleton}'; the hands are not held, following and \
                     animation go on"
                ),
            );
            return None;
        };
        let mut ik = match self.runtime.ik.take().filter(|ik| ik.is_instance_valid()) {
            Some(ik) => ik,
            None => {
                let mut ik = LimbIK::new_alloc();
                ik.set_name("HoldHandIK");
                skeleton.add_child(&ik);
                ik
            }
        };
        {
            let mut b = ik.bind_mut();
            b.set_upper_bone(upper);
            b.set_lower_bone(lower);
            b.set_end_bone(hand.clone());
        }
        // Elbows out and down, away from the body, so they never flip inward (seed §6.8): in the
        // character's axes (x right, y up, z back) of the rig found in the skeleton.
        let hand_at = vec3(
            skeleton
                .get_bone_global_rest(skeleton.find_bone(&hand))
                .origin,
        );
        let centre = humanoid.bone(RigRole::Hips).map_or(Vec3::ZERO, |h| {
            vec3(skeleton.get_bone_global_rest(h as i32).origin)
        });
        let out = if humanoid.right.dot(hand_at - centre) < 0.0 {
            -0.5
        } else {
            0.5
        };
        let pole = humanoid.to_skeleton(Vec3::new(out, -1.0, 0.3));
        ik.set("pole_direction", &vector3(pole).to_variant());
        ik.set("position_weight", &0.0f32.to_variant());
        ik.set("rotation_weight", &0.0f32.to_variant());
        // The hand's palm and fingers in its bone's own space, for the grip.
        let q = crate::convert::rotation(
            skeleton
                .get_bone_global_rest(skeleton.find_bone(&hand))
                .basis,
        );
        let s = side as usize;
        self.runtime.grip = Some(GripHand {
            palm: q.conjugate() * humanoid.palm[s],
            finger: q.conjugate() * humanoid.finger[s],
            size: humanoid.hand_size(side),
            axes: [humanoid.right, humanoid.up, -humanoid.forward],
        });
        self.runtime.ik = Some(ik.clone());
        self.runtime.ik_bone = bone;
        Some(ik)
    }

    /// Returns this character's hand input for the contact solver (world space), from its IK's
    /// record of the animated pose.
    fn hand_input(
        &mut self,
        role: Role,
        offset: Vector3,
        rotation_deg: Vector3,
        grip: bool,
    ) -> Option<HandInput> {
        let usable =
            offset.is_finite() && offset.length() <= MAX_CONTACT_OFFSET && rotation_deg.is_finite();
        let (offset, rotation_deg) = if usable {
            // Wrapped so a huge angle cannot lose the basis' orthonormality.
            let wrap = |d: f32| d % 360.0;
            (
                offset,
                Vector3::new(
                    wrap(rotation_deg.x),
                    wrap(rotation_deg.y),
                    wrap(rotation_deg.z),
                ),
            )
        } else {
            self.warn_once(
                WARN_CONTACT,
                "contact offset or rotation is invalid (offsets must be finite and within 2 m, \
                 rotations finite); using none"
                    .into(),
            );
            (Vector3::ZERO, Vector3::ZERO)
        };
        let ik = self.hand_ik(role)?;
        let skeleton = self.skeleton_node()?;
        let to_world = skeleton.get_global_transform();
        let mut ik_b = ik.clone();
        // The chain's length is in the skeleton's units: in the world it is scaled by the nodes
        // above the skeleton (the mean of the axes for a non-uniform scale).
        let scale = to_world.basis.get_scale().abs();
        let arm = ik_b.bind_mut().get_chain_length() * (scale.x + scale.y + scale.z) / 3.0;
        let reach = arm - self.reach_margin() * arm / REFERENCE_ARM;
        let ik_ref = ik.bind();
        let hand = to_world * ik_ref.get_animated_end_transform();
        let upper = to_world * ik_ref.get_animated_upper_position();
        if reach <= 0.0 || hand.origin == to_world.origin {
            // Not processed yet: no animated pose recorded.
            return None;
        }
        if grip {
            // Palm to palm: the offset and rotation in the pair's frame, and the hand's animated
            // grip point as its preferred contact.
            let world_scale = (scale.x + scale.y + scale.z) / 3.0;
            let g = self.runtime.grip?;
            let (local, world) = (g.shape(1.0), g.shape(world_scale));
            let (offset, rotation) = palm_to_palm(&world, role == Role::Initiator)?;
            let grip_at = hand * vector3(local.grip_point()?);
            return Some(HandInput {
                contact: Pose::new(vec3(grip_at), pose(hand).rotation),
                upper_arm: vec3(upper),
                reach,
                offset,
                rotation,
            });
        }
        let euler = rotation_deg * (std::f32::consts::PI / 180.0);
        let rot = godot::builtin::Basis::from_euler(godot::builtin::EulerOrder::YXZ, euler);
        Some(HandInput {
            contact: pose(hand),
            upper_arm: vec3(upper),
            reach,
            offset: vec3(offset),
            rotation: crate::convert::rotation(rot),
        })
    }

    fn solve_hands(&mut self, partner: &mut Gd<HoldHandComponent>, me: Pose, dt: f32, frame: u64) {
        let tuning = self.contact_tuning();
        let grip = self.uses_grip();
        let (io, ir) = self.contact_setting(Role::Initiator);
        let mine = self.hand_input(Role::Initiator, io, ir, grip);
        let (ro, rr) = self.contact_setting(Role::Recipient);
        let theirs = partner.bind_mut().hand_input(Role::Recipient, ro, rr, grip);
        // The grip's offsets are in the pair's frame: the initiator's body axes in the world.
        let pair_frame = if grip { self.body_frame() } else { None };
        let partner_root = partner.bind().root_pose();
        let (Some(tuning), Some(mine), Some(theirs), Some(partner_root)) =
            (tuning, mine, theirs, partner_root)
        else {
            // IK invalid or bones missing: release both hands (they fade out); following goes on.
            self.solver.release(&ContactTuning::default(), dt);
            self.set_connected(false);
            if let Some(ik) = self.net.last_ik.as_mut() {
                ik.weight = 0.0;
                ik.connected = false;
            }
            return;
        };
        let distance = me.position.distance(partner_root.position);
        let out = self
            .solver
            .step_in_frame(&mine, &theirs, distance, true, &tuning, dt, pair_frame);
        self.runtime.contact = vector3(out.contact);
        if self.debug_draw {
            self.draw_debug(&out);
        }
        self.runtime.shared_reach = out.has_shared_reach;
        self.set_connected(out.connected);
        self.net.last_ik = Some(LastHands {
            contact: me.inverse_transform_point(out.contact),
            rotation: entwine_core::kit::pose::unit_quat(me.rotation.inverse() * out.rotation),
            offsets: HandOffsets {
                initiator: Pose::new(mine.offset, mine.rotation),
                recipient: Pose::new(theirs.offset, theirs.rotation),
            },
            weight: out.position_weight,
            connected: out.connected,
            arm_override: out.position_weight > 0.0,
            has_shared_reach: out.has_shared_reach,
        });
        self.drive_hand(
            out.initiator_target,
            out.position_weight,
            out.rotation_weight,
            frame,
        );
        partner.bind_mut().drive_hand(
            out.recipient_target,
            out.position_weight,
            out.rotation_weight,
            frame,
        );
    }

    /// Whether the hands take the palm-to-palm grip: [member auto_grip] with no contact offset or
    /// rotation set.
    fn uses_grip(&self) -> bool {
        self.auto_grip
            && [
                self.initiator_contact_offset,
                self.initiator_contact_rotation,
                self.recipient_contact_offset,
                self.recipient_contact_rotation,
            ]
            .iter()
            .all(|v| *v == Vector3::ZERO)
    }

    /// This character's body axes (right, up, back of the rig found in its skeleton) as a world
    /// rotation, once its hand IK is built.
    fn body_frame(&self) -> Option<glam::Quat> {
        let g = self.runtime.grip?;
        let basis = self.skeleton_node()?.get_global_transform().basis;
        let [x, y, z] = g.axes.map(|a| vec3(basis * vector3(a)));
        Some(entwine_core::kit::rotation_of_axes(x, y, z))
    }

    /// Draws the reach spheres (three great circles each), the preferred point (grey), the shared
    /// contact (green when connected, red when not) and a line between the hands' targets.
    fn draw_debug(&mut self, out: &ContactOutput) {
        let mut mesh = match self.runtime.debug_mesh.clone() {
            Some(mesh) => mesh,
            None => {
                let mesh = ImmediateMesh::new_gd();
                let mut material = StandardMaterial3D::new_gd();
                material.set_shading_mode(ShadingMode::UNSHADED);
                material.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
                material.set_flag(Flags::DISABLE_DEPTH_TEST, true);
                let mut instance = MeshInstance3D::new_alloc();
                instance.set_name("HoldHandDebug");
                instance.set_mesh(&mesh);
                instance.set_material_override(&material);
                self.base_mut().add_child(&instance);
                self.runtime.debug_mesh = Some(mesh.clone());
                mesh
            }
        };
        mesh.clear_surfaces();
        mesh.surface_begin(PrimitiveType::LINES);
        let line = |mesh: &mut Gd<ImmediateMesh>, a: Vector3, b: Vector3, color: Color| {
            mesh.surface_set_color(color);
            mesh.surface_add_vertex(a);
            mesh.surface_add_vertex(b);
        };
        const SEGMENTS: usize = 32;
        for (sphere, color) in out.spheres.iter().zip([
            Color::from_rgb(1.0, 0.5, 0.3),
            Color::from_rgb(0.3, 0.6, 1.0),
        ]) {
            let c = vector3(sphere.center);
            let r = sphere.radius;
            for axes in [
                (Vector3::RIGHT, Vector3::UP),
                (Vector3::UP, Vector3::BACK),
                (Vector3::BACK, Vector3::RIGHT),
            ] {
                for k in 0..SEGMENTS {
                    let at = |i: usize| {
                        let t = i as f32 / SEGMENTS as f32 * std::f32::consts::TAU;
                        c + (axes.0 * t.cos() + axes.1 * t.sin()) * r
                    };
                    line(&mut mesh, at(k), at(k + 1), color);
                }
            }
        }
        let cross = |mesh: &mut Gd<ImmediateMesh>, p: Vector3, size: f32, color: Color| {
            for axis in [Vector3::RIGHT, Vector3::UP, Vector3::BACK] {
                mesh.surface_set_color(color);
                mesh.surface_add_vertex(p - axis * size);
                mesh.surface_add_vertex(p + axis * size);
            }
        };
        cross(
            &mut mesh,
            vector3(out.preferred),
            0.04,
            Color::from_rgb(0.7, 0.7, 0.7),
        );
        let state = if out.connected {
            Color::from_rgb(0.2, 1.0, 0.3)
        } else {
            Color::from_rgb(1.0, 0.2, 0.2)
        };
        cross(&mut mesh, vector3(out.contact), 0.07, state);
        line(
            &mut mesh,
            vector3(out.initiator_target.position),
            vector3(out.recipient_target.position),
            state,
        );
        mesh.surface_end();
    }

    /// The room this component joined, unless it has been freed since.
    fn live_room(&self) -> Option<Gd<HoldHandRoom>> {
        self.runtime
            .room
            .as_ref()
            .filter(|r| r.is_instance_valid())
            .cloned()
    }

    /// The partner's component, when it is in the room and in the tree.
    fn partner_in_tree(&self, partner: PlayerId) -> Option<Gd<HoldHandComponent>> {
        self.live_room()?
            .bind()
            .get_component(partner)
            .filter(|p| p.is_inside_tree())
    }

    /// Returns whether this peer plays this component's player (always, without a network).
    fn is_owned(&self) -> bool {
        let peer = self.live_room().and_then(|r| r.bind().local_peer());
        peer.is_none_or(|p| Some(p) == self.runtime.joined_as)
    }

    /// The owned initiator, networked: takes the hand samples that are due and sends a frame when
    /// one is due, to every peer.
    fn broadcast(&mut self, dt: f32) {
        let Some(room) = self.live_room() else {
            return;
        };
        if room.bind().local_peer().is_none() {
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
        let k = self.sender.scale();
        // An initiator that jumped more than 3 m (times the scale) since the last physics frame
        // teleported.
        if let (Some(me), Some(last)) = (me, self.net.last_root) {
            if me.position.distance(last.position)
                > entwine_core::hold_hand::replay::TELEPORT_DISTANCE * k
            {
                self.sender.teleport();
            }
        }
        self.net.last_root = me;
        let rates = self.stream_rates();
        let due = self.sender.tick(dt, &rates);
        if due.repeat && !self.net.last_frame.is_empty() {
            let again = self.net.last_frame.clone(); // shared, not copied
            if self.rpcs().pair_frame(&again).call().is_ok() {
                self.net.sent_frames += 1;
                self.net.sent_bytes += again.len() as i64;
            }
        }
        let partner_root = self.get_partner().and_then(|p| p.bind().root_pose());
        let hands = self.net.last_ik;
        let offsets = hands.map(|h| h.offsets).unwrap_or_default();
        let pair = me.zip(partner_root).map(|(me, partner_root)| PairSample {
            initiator: me,
            recipient_local: me.to_local(partner_root),
            contact_rotation: hands.map_or(glam::Quat::IDENTITY, |h| h.rotation),
        });
        let hand = hands.map(|h| HandSample {
            time: now,
            contact: h.contact,
            weight: h.weight,
            connected: h.connected,
            arm_override: h.arm_override,
            has_shared_reach: h.has_shared_reach,
        });
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
            if self.rpcs().pair_frame(&bytes).call().is_ok() {
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

    /// Finds (once per pair) what the animation snapshots carry: the tree's numeric
    /// `parameters/…` minus the arm layers, its state machines and one-shots, in property-list
    /// order (the same on every peer for the same tree); without a tree, the AnimationPlayer's
    /// animations.
    fn animation_params(&mut self) {
        if self.net.anim_rig.ready {
            return;
        }
        let arms = self.arm_layers();
        let tree = self.tree_node();
        let player = self.player_node();
        self.net
            .anim_rig
            .build(tree.as_ref(), player.as_ref(), &arms);
    }

    fn player_node(&self) -> Option<Gd<AnimationPlayer>> {
        self.runtime
            .player
            .as_ref()
            .filter(|p| p.is_instance_valid())
            .cloned()
    }

    /// Reads this character's animation into the snapshot.
    fn read_animation(&mut self) {
        self.animation_params();
        let tree = self.tree_node();
        let player = self.player_node();
        self.net
            .anim_rig
            .read(tree.as_ref(), player.as_ref(), &mut self.net.anim_snapshot);
    }

    /// A replica of the initiator (every peer but the initiator's): shows the pair from the stream.
    fn replay_pair(&mut self, partner_id: PlayerId, dt: f32, frame: u64) {
        let partner = self.partner_in_tree(partner_id);
        let Some(mut partner) = partner else {
            return;
        };
        if partner.bind().net.released {
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
            (self.tree_node(), self.player_node()),
            (partner.bind().tree_node(), partner.bind().player_node()),
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
            let mixer = tree
                .map(|t| t.upcast::<AnimationMixer>())
                .or_else(|| player.map(|p| p.upcast::<AnimationMixer>()));
            if let Some(mixer) = mixer {
                follower.advance(mixer, step);
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
    fn watch_initiator(&mut self, initiator: PlayerId, dt: f32) {
        let local = self.live_room().and_then(|r| r.bind().local_peer());
        if local.is_none() || local == Some(initiator) || self.net.released {
            return;
        }
        self.net.silence += dt.max(0.0);
        // Before the first frame, the initiator may not know of the pair yet (its copy of the
        // room's word can be resent for seconds): a longer wait.
        let timeout = self.initiator_timeout();
        let timeout = if self.net.heard {
            timeout
        } else {
            self.initiator_start_timeout().max(timeout)
        };
        if self.net.silence < timeout {
            return;
        }
        self.net.released = true;
        self.unfreeze();
        godot_warn!(
            "{}: no stream from initiator {initiator} for {:.1} s; the recipient is released",
            self.label(),
            self.net.silence
        );
        self.signals().initiator_lost().emit(initiator);
        if self.is_owned() {
            // The server ends the pair for everyone.
            self.cancel();
        }
    }

    /// The initiator's stream arrived (or the initiator drove this recipient locally).
    fn heard_initiator(&mut self) {
        self.net.silence = 0.0;
        self.net.heard = true;
        if self.net.released
            && self.lifecycle.phase() != Phase::None
            && self.lifecycle.interaction().map(|i| i.role) == Some(Role::Recipient)
        {
            self.net.released = false;
            self.freeze();
        }
    }

    /// Keeps [method is_root_driven], its signal and the character's metadata up to date.
    fn update_root_driven(&mut self, owned: bool) {
        let driven = self.lifecycle.phase() != Phase::None
            && !self.net.released
            && match self.lifecycle.interaction().map(|i| i.role) {
                Some(Role::Recipient) => true,
                Some(Role::Initiator) => !owned,
                None => false,
            };
        if driven == self.net.root_driven {
            return;
        }
        self.net.root_driven = driven;
        if let Some(mut c) = self.character_node() {
            if driven {
                c.set_meta(DRIVEN_META, &true.to_variant());
            } else {
                c.remove_meta(DRIVEN_META);
            }
        }
        self.signals().root_driven_changed().emit(driven);
    }

    fn set_connected(&mut self, connected: bool) {
        if self.runtime.connected != connected {
            self.runtime.connected = connected;
            self.signals().hands_connected_changed().emit(connected);
        }
    }

    /// Sets this character's hand IK target (world space) and weights for this frame.
    fn drive_hand(&mut self, target: Pose, position_weight: f32, rotation_weight: f32, frame: u64) {
        self.runtime.driven_frame = frame;
        if let Some(mut ik) = self
            .runtime
            .ik
            .as_ref()
            .filter(|ik| ik.is_instance_valid())
            .cloned()
        {
            let scale = Vector3::ONE;
            ik.set(
                "target_transform",
                &transform_scaled(target, scale).to_variant(),
            );
        }
        self.set_hand_weights(position_weight, rotation_weight);
    }

    fn set_hand_weights(&mut self, position: f32, rotation: f32) {
        if self.runtime.hand_weights == (position, rotation) {
            return;
        }
        self.runtime.hand_weights = (position, rotation);
        if let Some(mut ik) = self
            .runtime
            .ik
            .as_ref()
            .filter(|ik| ik.is_instance_valid())
            .cloned()
        {
            let mut b = ik.bind_mut();
            b.set_position_weight(position);
            b.set_rotation_weight(rotation);
        }
        // Arm layers follow the hand weight: 0 → as animated, 1 → the hold value.
        let Some(mut tree) = self.tree_node() else {
            return;
        };
        if self.runtime.arm_saved.is_empty() && position > 0.0 {
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
                tree.set(name, &(v + (hold - v) * position).to_variant());
            }
        }
        if position <= 0.0 {
            self.runtime.arm_saved.clear();
        }
    }
}

/// Returns whether a property-list entry is a parameter a game sets (stored or shown in the editor,
/// not read-only like `current_position`).
fn is_settable_parameter(prop: &VarDictionary) -> bool {
    const STORAGE_OR_EDITOR: i64 = 2 | 4;
    const READ_ONLY: i64 = 1 << 28;
    let usage = prop
        .get("usage")
        .and_then(|u| u.try_to::<i64>().ok())
        .unwrap_or(0);
    usage & STORAGE_OR_EDITOR != 0 && usage & READ_ONLY == 0
}

/// Seconds the partner in the same process may stay in another state-machine node than the
/// initiator's while travelling there, before it is started there outright.
const LOCAL_ANIM_GRACE: f32 = 0.25;

/// The reference human's arm (upper arm plus forearm, metres) that `reach_margin` is given for.
const REFERENCE_ARM: f32 = 0.54;

fn phase_code(p: Phase) -> i32 {
    match p {
        Phase::None => HoldHandComponent::PHASE_NONE,
        Phase::Preparing => HoldHandComponent::PHASE_PREPARING,
        Phase::Active => HoldHandComponent::PHASE_ACTIVE,
    }
}

/// Returns the arm-layer parameters of `tree`: the amount of each filtered blend or add node of its
/// root blend tree, or of a blend tree nested in it (to four levels), whose filter passes a bone of
/// either arm of the humanoid in `skeleton`.
fn detect_arm_layers(tree: &Gd<AnimationTree>, skeleton: &Gd<Skeleton3D>) -> PackedStringArray {
    let mut out = PackedStringArray::new();
    let Some(root) = tree
        .get_tree_root()
        .and_then(|r| r.try_cast::<AnimationNodeBlendTree>().ok())
    else {
        return out;
    };
    let Some(mixer_root) = tree.try_get_node_as::<Node>(&tree.get_root_node()) else {
        return out;
    };
    let skeleton_path = mixer_root.get_path_to(skeleton);
    let humanoid = rig::humanoid(skeleton);
    let arm_bones: Vec<NodePath> = [Side::Left, Side::Right]
        .into_iter()
        .flat_map(|side| {
            let shoulder = match side {
                Side::Left => RigRole::LeftShoulder,
                Side::Right => RigRole::RightShoulder,
            };
            let [u, l, h] = RigRole::arm(side);
            [shoulder, u, l, h]
        })
        .filter_map(|role| humanoid.bone(role))
        .map(|b| {
            let path = format!("{skeleton_path}:{}", skeleton.get_bone_name(b as i32));
            NodePath::from(path.as_str())
        })
        .collect();
    collect_arm_layers(&root, "parameters/", &arm_bones, 0, &mut out);
    out
}

/// Adds to `out` the amount parameter (under `prefix`) of each filtered Blend2/Blend3/Add2/Add3 of
/// `tree` whose filter passes one of `arm_bones`, and those of the blend trees nested in it.
fn collect_arm_layers(
    tree: &Gd<AnimationNodeBlendTree>,
    prefix: &str,
    arm_bones: &[NodePath],
    depth: u32,
    out: &mut PackedStringArray,
) {
    for name in tree.get_node_list().iter_shared() {
        let Some(node) = tree.get_node(&name) else {
            continue;
        };
        if let Ok(inner) = node.clone().try_cast::<AnimationNodeBlendTree>() {
            if depth < 4 {
                collect_arm_layers(
                    &inner,
                    &format!("{prefix}{name}/"),
                    arm_bones,
                    depth + 1,
                    out,
                );
            }
            continue;
        }
        if !node.is_filter_enabled() || !arm_bones.iter().any(|p| node.is_path_filtered(p)) {
            continue;
        }
        let amount = if node.clone().try_cast::<AnimationNodeBlend2>().is_ok()
            || node.clone().try_cast::<AnimationNodeBlend3>().is_ok()
        {
            "blend_amount"
        } else if node.clone().try_cast::<AnimationNodeAdd2>().is_ok()
            || node.clone().try_cast::<AnimationNodeAdd3>().is_ok()
        {
            "add_amount"
        } else {
            continue;
        };
        out.push(&GString::from(&format!("{prefix}{name}/{amount}")));
    }
}

/// Returns the `[upper, lower, hand]` bone names of a hand's arm: for a named hand its grandparent
/// and parent, for an empty name the `side` arm of the humanoid.
fn chain_for_hand(
    skeleton: &Gd<Skeleton3D>,
    hand: &GString,
    side: Side,
    humanoid: &Humanoid,
) -> Option<[GString; 3]> {
    if hand.is_empty() {
        let [u, l, h] = RigRole::arm(side).map(|r| humanoid.bone(r));
        let name = |b: Option<usize>| b.map(|b| skeleton.get_bone_name(b as i32));
        return Some([name(u)?, name(l)?, name(h)?]);
    }
    let h = skeleton.find_bone(hand);
    if h < 0 {
        return None;
    }
    let lower = skeleton.get_bone_parent(h);
    if lower < 0 {
        return None;
    }
    let upper = skeleton.get_bone_parent(lower);
    if upper < 0 {
        return None;
    }
    Some([
        skeleton.get_bone_name(upper),
        skeleton.get_bone_name(lower),
        hand.clone(),
    ])
}
