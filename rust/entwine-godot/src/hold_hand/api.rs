//! HoldHandComponent's script API: asking, accepting and ending a pair, and what a script can read
//! about it (phase, partner, hands, the network view).

use super::*;
use crate::direct::Alive;

/// A pair's phase as GDScript sees it: None 0, Preparing 1, Active 2 (the class's deprecated
/// `PHASE_*` constants name the same values).
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum PairPhase {
    /// No interaction.
    #[default]
    None = 0,
    /// The interaction arrived; following starts next frame.
    Preparing = 1,
    /// Following, mirroring and hand IK run.
    Active = 2,
}

impl PairPhase {
    /// Returns the GDScript phase of a core phase.
    pub fn of(phase: Phase) -> Self {
        match phase {
            Phase::None => Self::None,
            Phase::Preparing => Self::Preparing,
            Phase::Active => Self::Active,
        }
    }
}

/// A player's role in its pair as GDScript sees it: None −1, Initiator 0, Recipient 1 (the class's
/// deprecated `ROLE_*` constants name the same values).
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum PairRole {
    /// Not paired.
    #[default]
    None = (-1),
    /// Asked first; walks and is the pair's authority.
    Initiator = 0,
    /// Accepted; carried along and frozen.
    Recipient = 1,
}

impl PairRole {
    /// Returns the GDScript role of a core role (`None` when not paired).
    pub fn of(role: Option<Role>) -> Self {
        match role {
            None => Self::None,
            Some(Role::Initiator) => Self::Initiator,
            Some(Role::Recipient) => Self::Recipient,
        }
    }
}

#[godot_api(secondary)]
impl HoldHandComponent {
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
        character.filter(|c| c.alive()).is_some_and(|c| {
            crate::names::with_pair_driven(|name| {
                c.get_meta_ex(name)
                    .default(&false.to_variant())
                    .done()
                    .booleanize()
            })
        })
    }

    /// Returns this component's network counters: `sent_frames` and `sent_bytes` (as the
    /// initiator), `frames` (accepted here), `stale` (duplicates — a frame where the motion
    /// changed sharply is sent twice — or too old to show), `malformed`,
    /// `too_fast` (frames that would move the initiator faster than [member max_root_speed]),
    /// `rejected` (frames from a peer that may not send them: see [method get_dropped_calls]),
    /// `unexpected` (frames from this player while it leads no pair here, e.g. before the room's
    /// state arrived).
    #[func]
    pub fn get_network_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("sent_frames", self.net.sent_frames);
        d.set("sent_bytes", self.net.sent_bytes);
        d.set("frames", i64::from(self.receiver.frames()));
        d.set("stale", i64::from(self.receiver.stale()));
        let dropped = self.net.inbox.counts();
        d.set("malformed", dropped.malformed);
        d.set("too_fast", i64::from(self.receiver.too_fast()));
        d.set("rejected", dropped.forged);
        d.set("unexpected", dropped.unexpected);
        d
    }

    /// Returns the pair frames this component dropped, by reason: `rate_limited` (beyond 120 per
    /// second), `forged` (not from this player's peer on the server, not from the server on a
    /// client), `malformed`, `unexpected` (while this player leads no pair here), plus
    /// `peers_disconnected` (peers the server disconnected for abuse, see the project settings
    /// under `entwine/network/`) and `warnings_held_back`.
    #[func]
    pub fn get_dropped_calls(&self) -> VarDictionary {
        crate::inbox::counts_dictionary(&self.net.inbox.counts())
    }

    /// Returns how far in the past (seconds) this peer shows the pair this component leads: the
    /// replay's view delay on a remote peer (the true age on the shared clock when the scene has a
    /// [EntwineNetClock]), 0 on the initiator's own peer and when not paired. Read it on the initiator's
    /// component.
    #[func]
    pub fn get_view_delay(&self) -> f32 {
        self.net.view_delay
    }

    /// Returns the stream-clock time (the [EntwineNetClock]'s server time when there is one) of what this
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

    /// Asks `target`'s player to hold hands. Returns false, with a warning saying why, when the room
    /// refuses (no room, the target is not in it, it is this character, or either side is busy).
    #[func]
    pub fn request(&mut self, target: Option<Gd<HoldHandComponent>>) -> bool {
        let Some(target) = target.filter(|t| t.alive()) else {
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

    /// Returns the current phase: None 0, Preparing 1, Active 2.
    #[func]
    pub fn get_phase(&self) -> PairPhase {
        PairPhase::of(self.lifecycle.phase())
    }

    /// Returns this player's role: None −1, Initiator 0, Recipient 1.
    #[func]
    pub fn get_role(&self) -> PairRole {
        PairRole::of(self.lifecycle.interaction().map(|i| i.role))
    }

    /// Returns the partner's player id (0 when not paired).
    #[func]
    pub fn get_partner_id(&self) -> i64 {
        self.lifecycle.interaction().map_or(0, |i| i.partner)
    }

    /// Returns the id of the player whose request waits for this player's answer (0 when none).
    #[func]
    pub fn get_pending_request_from(&self) -> i64 {
        let (Some(room), Some(me)) = (self.live_room().cloned(), self.runtime.joined_as) else {
            return 0;
        };
        let pending = room.bind().pending_request_to(me);
        pending.unwrap_or(0)
    }

    /// Returns the partner's component, or null.
    #[func]
    pub fn get_partner(&self) -> Option<Gd<HoldHandComponent>> {
        let partner = self.lifecycle.interaction()?.partner;
        self.live_room().cloned()?.bind().get_component(partner)
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
