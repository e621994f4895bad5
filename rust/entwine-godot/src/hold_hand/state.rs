//! HoldHandComponent's state between frames: the pair's network state on this peer and what it
//! restores or rebuilds per interaction.

use super::*;
use crate::direct::Alive;
use std::cell::Cell;

/// The pair's network state on this peer.
#[derive(Default)]
pub(super) struct NetRuntime {
    /// The last hands the initiator solved, in its own frame (what it broadcasts).
    pub(super) last_ik: Option<SentHands>,
    /// The clock that stamps the stream (resolved on each pair start).
    pub(super) clock: Option<Gd<NetClock>>,
    /// Per-physics-tick times read from that clock: the initiator's stamps, and a remote peer's
    /// replay clock (ticks run back to back in one rendered frame stay a tick apart).
    pub(super) stamps: entwine_core::clock::TickClock,
    pub(super) view_ticks: entwine_core::clock::TickClock,
    /// Where this peer showed each character (initiator, recipient) when the pair started.
    pub(super) seen: [Option<Pose>; 2],
    /// The view time and delay of this peer's last replay frame, or of the initiator's own sample.
    pub(super) view_time: f64,
    pub(super) view_delay: f32,
    pub(super) view_blend: f32,
    /// Throttled warnings (too fast; the inbox throttles its own).
    pub(super) throttle: Warnings,
    /// What the animation snapshots carry (found the same way on every peer), the last snapshot
    /// read, and what each replica (initiator, recipient) last applied.
    pub(super) anim_rig: anim::AnimRig,
    pub(super) anim_snapshot: AnimSnapshot,
    pub(super) anim_follow: [anim::AnimFollower; 2],
    /// Frames and bytes this peer sent as the initiator.
    pub(super) sent_frames: i64,
    pub(super) sent_bytes: i64,
    /// The last frame sent, for a repeat (see `Due::repeat`).
    pub(super) last_frame: PackedByteArray,
    /// The gate in front of the stream's frames (what was dropped, by reason).
    pub(super) inbox: entwine_core::kit::Inbox,
    /// Recipient side: the initiator's silence, and whether it was given up.
    pub(super) watch: InitiatorWatch,
    /// Whether the pair writes this character's root here (the game's own sync must not).
    pub(super) root_driven: bool,
}

/// Throttled warning kinds (at most one per ten seconds each, with a count; see [`Warnings`]).
pub(super) const THROTTLE_TOO_FAST: u32 = 2;

/// Per-interaction state the component restores or rebuilds.
#[derive(Default)]
pub(super) struct Runtime {
    pub(super) room: Option<Gd<HoldHandRoom>>,
    /// The engine, kept for its physics frame count.
    pub(super) engine: Option<Gd<Engine>>,
    /// The character, its skeleton and animation tree, resolved on ready and on each new pair.
    pub(super) character: Option<Gd<Node3D>>,
    /// The same node when it is a [CharacterBody3D] (alive when `character` is: one object).
    pub(super) body: Option<Gd<CharacterBody3D>>,
    /// Initiator, own peer: the recipient's root height above the ground under it when the pair
    /// started (`None`: no ground found there, so the recipient keeps the initiator's height), and
    /// the ray that finds the ground under each spot it is led to.
    pub(super) footing: Option<f32>,
    pub(super) ground_ray: Option<Gd<godot::classes::PhysicsRayQueryParameters3D>>,
    pub(super) skeleton: Option<Gd<Skeleton3D>>,
    pub(super) tree: Option<Gd<AnimationTree>>,
    /// Used for mirroring when the character has no AnimationTree.
    pub(super) player: Option<Gd<AnimationPlayer>>,
    pub(super) joined_as: Option<PlayerId>,
    /// Saved before freezing: physics processing and the character's `frozen` property.
    pub(super) freeze: Option<(bool, Variant)>,
    /// This character's hand IK, added to its skeleton on demand.
    pub(super) ik: Option<Gd<LimbIK>>,
    /// The hand bone the IK was built for and whether building it failed.
    pub(super) ik_bone: GString,
    /// The height of the humanoid in the skeleton (its units), found on the first use per pair.
    pub(super) rig_height: Option<f32>,
    /// This hand's shape for the grip and the body's axes (right, up, back), in the skeleton's
    /// space, found with the IK.
    pub(super) grip: Option<HoldingHand>,
    /// The IK chain's reach in its rest pose (skeleton units), read once the chain resolves; 0
    /// until then (read again each frame while 0).
    pub(super) chain_length: f32,
    /// The physics frame being processed (`None` outside `_physics_process`), and what is read
    /// once within it (no script runs inside one; signals go out after it), forgotten with it
    /// ([`Runtime::forget_tick`]): the character's proportion, this peer's id in the room's
    /// network (`None` without one), and the checked settings.
    pub(super) tick: Option<u64>,
    pub(super) tick_proportion: Option<f32>,
    pub(super) tick_peer: Option<Option<PlayerId>>,
    pub(super) tick_settings: Option<PairSettings>,
    /// The handles found alive in this physics frame (`ALIVE_*` bits): nothing frees a node
    /// inside one, so each is checked once per tick.
    pub(super) alive: Cell<u8>,
    pub(super) ik_failed: bool,
    /// Weights the initiator last set on this character's hand, and the physics frame it did.
    pub(super) hand_weights: (f32, f32),
    pub(super) driven_frame: u64,
    /// What is mirrored from the initiator (found on start), what the partner last had applied,
    /// and saved arm values to restore.
    pub(super) mirror_rig: anim::AnimRig,
    pub(super) mirror_follow: anim::AnimFollower,
    pub(super) mirror_snapshot: AnimSnapshot,
    pub(super) arm_saved: Vec<(StringName, Variant)>,
    /// The arm layers detected in the tree (when `arm_layer_parameters` is empty).
    pub(super) arm_layers: Option<PackedStringArray>,
    pub(super) contact: Vector3,
    pub(super) connected: bool,
    /// Debug drawing (made when `debug_draw` is first used).
    pub(super) debug_mesh: Option<Gd<ImmediateMesh>>,
    pub(super) shared_reach: bool,
    pub(super) warnings: Warnings,
    /// The settings last checked (see `HoldHandComponent::settings`).
    pub(super) settings: SettingsCheck,
}

impl Runtime {
    /// Ends the physics frame's reads: the next ones come from the engine again.
    pub(super) fn forget_tick(&mut self) {
        self.tick = None;
        self.tick_proportion = None;
        self.tick_peer = None;
        self.tick_settings = None;
        self.alive.set(0);
    }

    /// The node `handle` holds, unless it has been freed (checked once per physics frame, under
    /// `bit`).
    pub(super) fn live<'a, T: GodotClass>(
        &self,
        handle: &'a Option<Gd<T>>,
        bit: u8,
    ) -> Option<&'a Gd<T>> {
        let node = handle.as_ref()?;
        let in_tick = self.tick.is_some();
        if !(in_tick && self.alive.get() & bit != 0) {
            if !node.alive() {
                return None;
            }
            if in_tick {
                self.alive.set(self.alive.get() | bit);
            }
        }
        Some(node)
    }
}

impl Runtime {
    /// [`Self::live`], lent for the engine calls of this tick (see `direct`).
    pub(super) fn lent<'a, T: GodotClass>(
        &self,
        handle: &'a Option<Gd<T>>,
        bit: u8,
    ) -> Option<Lent<'a, T>> {
        let node = self.live(handle, bit)?;
        // SAFETY: just found alive (at most once per tick, under `bit`), and nothing frees a node
        // inside a component's tick: no script runs in it, and its signals go out after it.
        Some(unsafe { Lent::assume_alive(node) })
    }
}

/// [`Runtime::alive`] bits.
pub(super) const ALIVE_ROOM: u8 = 1;
pub(super) const ALIVE_CHARACTER: u8 = 2;
pub(super) const ALIVE_SKELETON: u8 = 4;
pub(super) const ALIVE_TREE: u8 = 8;
