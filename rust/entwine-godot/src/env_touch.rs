//! `EnvironmentInteractionStateMachine`: a walking character's hand reaches for nearby walls.
//!
//! The node gathers the frame's facts from Godot (character pose, shoulder bones, velocity, the
//! colliders in its detection volume and their closest points, a surface-normal ray), hands them to
//! `entwine_core::env_touch::EnvTouch`, and writes the resulting targets and weights into two
//! `LimbIK` modifiers it creates under the skeleton.

use entwine_core::env_touch::{
    detection_box, Candidate, EnvTouch, Shape, Side, TouchConfig, TouchEvent, TouchInput,
};
use glam::{Affine3A, Vec3};
use godot::classes::base_material_3d::{Flags, ShadingMode};
use godot::classes::mesh::PrimitiveType;
use godot::classes::{
    BoxShape3D, CapsuleShape3D, CharacterBody3D, CollisionObject3D, CollisionShape3D,
    CylinderShape3D, Engine, INode3D, ImmediateMesh, MeshInstance3D, Node3D,
    PhysicsDirectSpaceState3D, PhysicsRayQueryParameters3D, PhysicsShapeQueryParameters3D,
    RigidBody3D, Skeleton3D, StandardMaterial3D,
};
use godot::prelude::*;

use crate::warnings::{key_of, Warnings};

/// Warning kinds (see [`Warnings`]): the setup failure and config issue (each reported again when
/// it changes) and, per collider, one without usable shapes.
const WARN_SETUP: u32 = 0;
const WARN_CONFIG: u32 = 1;
const WARN_COLLIDER: u32 = 2;

use crate::convert::{affine, pose, quaternion, vec3, vector3};
use crate::limb_ik::LimbIK;
use entwine_core::rig::{Role as RigRole, Side as RigSide};

/// Bone names per side: upper arm (shoulder joint), forearm, hand.
type ArmBones = [GString; 3];

/// A character's hand reaches out and rests on nearby walls, pillars and railings as it walks past.
///
/// Add it as a child of the character (a [CharacterBody3D] with a [Skeleton3D], e.g. a humanoid). On
/// the first physics frame it sizes its detection volume from the character's height (a cube of
/// side = wingspan, raised a quarter and pushed half a wingspan forward; a shape query on the
/// [member interactable_mask] layers each physics frame, so static walls are found with any physics
/// engine) and creates two [LimbIK] modifiers under the skeleton (left and right arm, hand rotation
/// included), then runs the state machine Reset → Search → Approach → Rise → Touch every physics
/// frame:
///
/// - **Reset** lets go: weights blend to 0, targets back to rest. After [member reset_duration] and
///   once the character moves again → Search.
/// - **Search** tracks one collider on the [member interactable_mask] layers (the nearest; kept until
///   it leaves, so a narrow corridor never flickers between hands) and picks the hand whose shoulder
///   is nearer. Within [member approach_distance] → Approach.
/// - **Approach** raises the weights to [member approach_weight] / [member approach_rotation_weight],
///   palm toward the ground at waist height. Within [member rise_distance] of the shoulder → Rise;
///   after [member approach_duration] it gives up.
/// - **Rise** lifts the hand to the contact point at the locked shoulder height, weights to
///   [member rise_weight], palm against the surface normal (found by a ray). After
///   [member touch_min_time] with the target within [member touch_distance] → Touch.
/// - **Touch** rests the hand on the surface for [member touch_duration].
///
/// Any tracking state resets when the character stops (from [member move_input] once the game sets
/// it, else its velocity), moves away from the contact, has the contact behind the hand's side, or
/// jumps (rises faster than [member jump_speed] or leaves the floor).
///
/// Blending is frame-rate independent: the same walk gives the same hand motion at 30, 60 or 144 Hz.
///
/// Bad setup (no character, no skeleton, a missing bone, no height, an empty mask) gives one warning
/// naming the property and the node stays idle; it never crashes.
#[derive(GodotClass)]
#[class(init, base = Node3D)]
pub struct EnvironmentInteractionStateMachine {
    base: Base<Node3D>,

    /// The character this node drives, usually its parent: a [CharacterBody3D] (velocity and
    /// floor are read from it), a [RigidBody3D] or any [Node3D] (velocity from its motion).
    #[export_group(name = "Setup")]
    #[export]
    #[var(set = set_character_path)]
    #[init(val = NodePath::from(".."))]
    character_path: NodePath,
    /// The character's skeleton. Empty: the first [Skeleton3D] found under the character.
    #[export]
    #[var(set = set_skeleton_path)]
    skeleton_path: NodePath,
    /// The character's height in metres, which sizes the detection volume (the seed takes the
    /// wingspan as the height). 0 = the height of the humanoid found in the skeleton (its meshes'
    /// extent, else its head joint; see [HumanoidRig]), or, when the skeleton has no head, the
    /// character's capsule, cylinder or box [CollisionShape3D]'s (a body's collider need not be the
    /// size of the model it carries).
    #[export(range = (0.0, 10.0, 0.01, or_greater, suffix = "m"))]
    #[var(set = set_character_height)]
    character_height: f32,
    /// Scale the lengths and speeds below with the character: [member surface_offset],
    /// [member side_switch_margin], [member normal_ray_length], [member approach_distance],
    /// [member rise_distance], [member touch_distance], [member moving_away_offset] and
    /// [member jump_speed] are then given for the 1.75 m reference human the seed was tuned for
    /// and multiplied by `k = h / 1.75`, `h` being the character's height in the world (as
    /// [member character_height] gives it, times the character's scale in the world).
    /// A 1.75 m character gets the values as set. Off: they are metres (m/s) as set. See
    /// [method get_proportion].
    #[export]
    #[init(val = true)]
    auto_proportions: bool,
    /// Left arm bones: upper arm (its origin is the shoulder joint), forearm, hand. Empty (default):
    /// the left arm of the humanoid found in the skeleton (any common naming convention, twist bones
    /// skipped); an empty entry of three takes that one bone from it.
    #[export]
    #[var(set = set_left_arm_bones)]
    left_arm_bones: PackedStringArray,
    /// Right arm bones: upper arm, forearm, hand. Empty (default): the humanoid's right arm.
    #[export]
    #[var(set = set_right_arm_bones)]
    right_arm_bones: PackedStringArray,
    /// The hand bones' palm normal (out of the palm) in each bone's own space, for both hands. Zero
    /// (default): found per hand from the rest pose (see [method get_hand_axes]): perpendicular to
    /// the fingers and the knuckle line (index → little finger bones), or, without finger bones,
    /// +Z on a rig that follows Godot's humanoid convention (+Y along the bone, +X the hinge axis).
    #[export]
    palm_axis: Vector3,
    /// The hand bones' finger direction in each bone's own space, for both hands. Zero (default):
    /// found per hand (wrist → knuckles; the bone's +Y on a Godot-convention rig without fingers).
    #[export]
    finger_axis: Vector3,

    /// Physics layers whose bodies the hands touch. Put walls, pillars and railings on their own
    /// layer and select only it here, so that other characters and props are left alone.
    #[export_group(name = "Detection")]
    #[export(flags_3d_physics)]
    #[var(set = set_interactable_mask)]
    #[init(val = 1)]
    interactable_mask: u32,
    /// The IK target stays this far off the surface, toward the shoulder (the hand's thickness).
    /// Scaled by [member auto_proportions], like every length and speed of this node.
    #[export(range = (0.0, 0.3, 0.001, or_greater, suffix = "m"))]
    #[init(val = 0.05)]
    surface_offset: f32,
    /// After a reset, the collider touched before stays preferred while it is at most this much
    /// farther than the nearest one (keeps a corridor walk on one side). Scaled by
    /// [member auto_proportions].
    #[export(range = (0.0, 1.0, 0.01, or_greater, suffix = "m"))]
    #[init(val = 0.1)]
    side_switch_margin: f32,
    /// Length of the ray from the shoulder toward the contact that finds the surface normal (scaled
    /// by [member auto_proportions]).
    #[export(range = (0.0, 3.0, 0.01, or_greater, suffix = "m"))]
    #[init(val = 0.5)]
    normal_ray_length: f32,

    /// Reset lasts at least this long before searching again (and waits for movement).
    #[export_group(name = "Reset")]
    #[export(range = (0.0, 10.0, 0.01, or_greater, suffix = "s"))]
    #[init(val = 2.0)]
    reset_duration: f32,
    /// Time scale of the ramp that blends weights and targets back in Reset (the seed's lerp
    /// duration; larger is slower).
    #[export(range = (0.0, 60.0, 0.1, or_greater, suffix = "s"))]
    #[init(val = 10.0)]
    reset_blend_duration: f32,
    /// How fast the hand turns back to its rest rotation in Reset.
    #[export(range = (0.0, 3600.0, 1.0, or_greater, suffix = "°/s"))]
    #[init(val = 500.0)]
    reset_rotation_speed: f32,

    /// Search → Approach when the contact is this close to the character's origin (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Approach")]
    #[export(range = (0.0, 10.0, 0.01, or_greater, suffix = "m"))]
    #[init(val = 2.0)]
    approach_distance: f32,
    /// IK position weight Approach blends toward.
    #[export(range = (0.0, 1.0, 0.01))]
    #[init(val = 0.5)]
    approach_weight: f32,
    /// IK rotation weight (palm toward the ground) Approach blends toward.
    #[export(range = (0.0, 1.0, 0.01))]
    #[init(val = 0.75)]
    approach_rotation_weight: f32,
    /// Time scale of Approach's weight ramp.
    #[export(range = (0.0, 60.0, 0.1, or_greater, suffix = "s"))]
    #[init(val = 5.0)]
    approach_blend_duration: f32,
    /// Approach gives up and resets after this long.
    #[export(range = (0.0, 30.0, 0.01, or_greater, suffix = "s"))]
    #[init(val = 2.0)]
    approach_duration: f32,
    /// How fast the palm turns toward the ground in Approach.
    #[export(range = (0.0, 3600.0, 1.0, or_greater, suffix = "°/s"))]
    #[init(val = 500.0)]
    approach_rotation_speed: f32,

    /// Approach → Rise when the contact is this close to the shoulder (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Rise")]
    #[export(range = (0.0, 3.0, 0.01, or_greater, suffix = "m"))]
    #[init(val = 0.5)]
    rise_distance: f32,
    /// IK position and rotation weight Rise blends toward.
    #[export(range = (0.0, 1.0, 0.01))]
    #[init(val = 1.0)]
    rise_weight: f32,
    /// Time scale of Rise's ramp (weights and hand height).
    #[export(range = (0.0, 60.0, 0.1, or_greater, suffix = "s"))]
    #[init(val = 5.0)]
    rise_blend_duration: f32,
    /// How fast the palm turns against the surface in Rise and Touch.
    #[export(range = (0.0, 3600.0, 1.0, or_greater, suffix = "°/s"))]
    #[init(val = 1000.0)]
    rise_rotation_speed: f32,

    /// Rise → Touch when the IK target is this close to its place on the surface (scaled by
    /// [member auto_proportions])…
    #[export_group(name = "Touch")]
    #[export(range = (0.0, 1.0, 0.001, or_greater, suffix = "m"))]
    #[init(val = 0.05)]
    touch_distance: f32,
    /// …and Rise has lasted at least this long.
    #[export(range = (0.0, 10.0, 0.01, or_greater, suffix = "s"))]
    #[init(val = 1.0)]
    touch_min_time: f32,
    /// The hand rests this long, then lets go.
    #[export(range = (0.0, 30.0, 0.01, or_greater, suffix = "s"))]
    #[init(val = 0.5)]
    touch_duration: f32,

    /// The movement the player asks for, in world space (only zero or not matters). Set it every
    /// frame from your input: once set, it decides "stopped" instead of the character's velocity,
    /// which lags behind the player with root motion. [method clear_move_input] goes back to velocity.
    #[var(get = get_move_input, set = set_move_input)]
    move_input: Vector3,
    /// Moving away: the distance to the contact may grow this much past its lowest value (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Reset triggers")]
    #[export(range = (0.0, 0.5, 0.001, or_greater, suffix = "m"))]
    #[init(val = 0.005)]
    moving_away_offset: f32,
    /// Jumping: rising faster than this counts as a jump (the seed's `round(velocity.y) >= 1`;
    /// scaled by [member auto_proportions]).
    #[export(range = (0.0, 20.0, 0.01, or_greater, suffix = "m/s"))]
    #[init(val = 0.5)]
    jump_speed: f32,

    /// Draws the detection volume, the closest point (red), the IK target (green for the left hand,
    /// blue for the right) and the shoulder → target line.
    #[export_group(name = "Debug")]
    #[export]
    debug_draw: bool,

    core: EnvTouch,
    rig: Option<Rig>,
    /// Set when a property that affects the setup changes.
    dirty: bool,
    /// Warnings: the last setup failure and config issue, and colliders without usable shapes
    /// (skipped until the setup is rebuilt).
    warnings: Warnings,
    has_move_input: bool,
    last_config: Option<TouchConfig>,
    colliders: Vec<Collider>,
    candidates: Vec<Candidate>,
    ray: Option<Gd<PhysicsRayQueryParameters3D>>,
    query: Option<Gd<PhysicsShapeQueryParameters3D>>,
    exclude: Array<Rid>,
    last_position: Option<Vector3>,
    debug: Option<(Gd<MeshInstance3D>, Gd<ImmediateMesh>)>,
    /// Time spent since the last profile reset (µs): in physics queries, and in everything else.
    profile_query_usec: f64,
    profile_logic_usec: f64,
    profile_total_usec: f64,
    profile_frames: i64,
    /// Result-dictionary keys, made once.
    keys: Option<[Variant; 2]>,
    /// Running in the editor: the node does nothing there.
    in_editor: bool,
    /// The shoulders in the character's frame when last read from the skeleton.
    shoulders_local: [Vector3; 2],
    /// Each hand's (palm, finger) axes in its bone's space, found in the rig at setup.
    hand_axes: Option<[(glam::Vec3, glam::Vec3); 2]>,
}

/// Everything resolved at setup.
struct Rig {
    character: Gd<Node3D>,
    /// The character as a body, when it is one (velocity and floor are read from it).
    character_body: Option<Gd<CharacterBody3D>>,
    rigid_body: Option<Gd<RigidBody3D>>,
    skeleton: Gd<Skeleton3D>,
    /// Upper-arm bone indices, left and right.
    shoulders: [i32; 2],
    iks: [Gd<LimbIK>; 2],
    /// The detection volume's transform relative to the character.
    volume_local: Transform3D,
    volume_size: f32,
    /// `k` of [member auto_proportions] (1 when off).
    proportion: f32,
}

/// An interactable body in the detection volume and its shapes in the body's space.
struct Collider {
    id: InstanceId,
    body: Gd<CollisionObject3D>,
    shapes: Vec<(Shape, Affine3A)>,
    /// Whether this frame's query found it.
    seen: bool,
}

#[godot_api]
impl INode3D for EnvironmentInteractionStateMachine {
    fn ready(&mut self) {
        self.in_editor = Engine::singleton().is_editor_hint();
        self.dirty = true;
        self.core = EnvTouch::default();
    }

    fn physics_process(&mut self, delta: f64) {
        if self.in_editor {
            return;
        }
        let start = std::time::Instant::now();
        self.frame(delta as f32);
        self.profile_total_usec += start.elapsed().as_secs_f64() * 1e6;
        self.profile_frames += 1;
    }

    fn exit_tree(&mut self) {
        self.teardown();
        // Set up again if the node comes back into the tree.
        self.dirty = true;
    }
}

#[godot_api]
impl EnvironmentInteractionStateMachine {
    /// Emitted on every state change, with the states' indices (see the `STATE_*` constants).
    #[signal]
    fn state_changed(from: i64, to: i64);
    /// Emitted when a hand starts resting on a surface: `side` (`SIDE_LEFT` or `SIDE_RIGHT`), the
    /// contact point and the surface normal (world space).
    #[signal]
    fn touch_started(side: i64, point: Vector3, normal: Vector3);
    /// Emitted when a hand stops resting on a surface.
    #[signal]
    fn touch_ended(side: i64);

    /// Reset: letting go.
    #[constant]
    const STATE_RESET: i64 = 0;
    /// Search: tracking a collider.
    #[constant]
    const STATE_SEARCH: i64 = 1;
    /// Approach: the hand moves toward it, palm down.
    #[constant]
    const STATE_APPROACH: i64 = 2;
    /// Rise: the hand rises onto the contact.
    #[constant]
    const STATE_RISE: i64 = 3;
    /// Touch: the hand rests on the surface.
    #[constant]
    const STATE_TOUCH: i64 = 4;
    /// The left hand.
    #[constant]
    const SIDE_LEFT: i64 = 0;
    /// The right hand.
    #[constant]
    const SIDE_RIGHT: i64 = 1;

    /// Sets [member character_path] (see the property for its range and effect).
    #[func]
    fn set_character_path(&mut self, path: NodePath) {
        self.character_path = path;
        self.invalidate();
    }

    /// Sets [member skeleton_path] (see the property for its range and effect).
    #[func]
    fn set_skeleton_path(&mut self, path: NodePath) {
        self.skeleton_path = path;
        self.invalidate();
    }

    /// Sets [member character_height] (see the property for its range and effect).
    #[func]
    fn set_character_height(&mut self, height: f32) {
        self.character_height = height;
        self.invalidate();
    }

    /// Sets [member left_arm_bones] (see the property for its range and effect).
    #[func]
    fn set_left_arm_bones(&mut self, bones: PackedStringArray) {
        self.left_arm_bones = bones;
        self.invalidate();
    }

    /// Sets [member right_arm_bones] (see the property for its range and effect).
    #[func]
    fn set_right_arm_bones(&mut self, bones: PackedStringArray) {
        self.right_arm_bones = bones;
        self.invalidate();
    }

    /// Sets [member interactable_mask] (see the property for its range and effect).
    #[func]
    fn set_interactable_mask(&mut self, mask: u32) {
        self.interactable_mask = mask;
        self.invalidate();
    }

    /// Returns [member move_input] (see the property).
    #[func]
    fn get_move_input(&self) -> Vector3 {
        self.move_input
    }

    /// Sets [member move_input] (see the property for its range and effect).
    #[func]
    fn set_move_input(&mut self, input: Vector3) {
        self.move_input = input;
        self.has_move_input = true;
    }

    /// Forgets [member move_input]: "stopped" is read from the character's velocity again.
    #[func]
    pub fn clear_move_input(&mut self) {
        self.move_input = Vector3::ZERO;
        self.has_move_input = false;
    }

    /// Returns the current state (`STATE_RESET` … `STATE_TOUCH`).
    #[func]
    pub fn get_state(&self) -> i64 {
        i64::from(self.core.state().index())
    }

    /// Returns the current state's name ("Reset", "Search", "Approach", "Rise" or "Touch").
    #[func]
    pub fn get_state_name(&self) -> GString {
        GString::from(self.core.state().name())
    }

    /// Returns the hand in use (`SIDE_LEFT` or `SIDE_RIGHT`), or -1 while no collider is tracked.
    #[func]
    pub fn get_current_side(&self) -> i64 {
        match self.core.tracked() {
            Some(_) => self.core.side().index() as i64,
            None => -1,
        }
    }

    /// Returns true while a collider is tracked.
    #[func]
    pub fn has_contact(&self) -> bool {
        self.core.closest_point().is_some()
    }

    /// Returns the tracked collider's closest point to the character at shoulder height (world
    /// space), or `Vector3.INF` when none is tracked.
    #[func]
    pub fn get_closest_point(&self) -> Vector3 {
        self.core.closest_point().map_or(
            Vector3::new(f32::INFINITY, f32::INFINITY, f32::INFINITY),
            vector3,
        )
    }

    /// Returns the last surface normal found by the ray (world space), or `Vector3.ZERO`.
    #[func]
    pub fn get_surface_normal(&self) -> Vector3 {
        self.core.surface_normal().map_or(Vector3::ZERO, vector3)
    }

    /// Returns a hand's IK target (world space) for `side` (`SIDE_LEFT` or `SIDE_RIGHT`).
    #[func]
    pub fn get_hand_target(&self, side: i64) -> Transform3D {
        let hand = self.core.hand(side_of(side));
        Transform3D::new(
            Basis::from_quaternion(quaternion(hand.pose.rotation)),
            vector3(hand.pose.position),
        )
    }

    /// Returns a hand's IK position weight (0 = animated, 1 = on the target).
    #[func]
    pub fn get_hand_weight(&self, side: i64) -> f32 {
        self.core.hand(side_of(side)).position_weight
    }

    /// Returns a hand's IK rotation weight.
    #[func]
    pub fn get_hand_rotation_weight(&self, side: i64) -> f32 {
        self.core.hand(side_of(side)).rotation_weight
    }

    /// Returns why the node last reset: "none", "stopped", "moving_away", "invalid_angle",
    /// "jumping", "collider_lost", "approach_timeout", "touch_done" or "forced".
    #[func]
    pub fn get_reset_reason(&self) -> GString {
        GString::from(self.core.reset_reason().name())
    }

    /// Returns true once the setup succeeded (character, skeleton, bones, height and mask usable).
    #[func]
    pub fn is_active(&self) -> bool {
        self.rig.is_some()
    }

    /// Returns the palm and finger axes in use, each in its hand bone's own space:
    /// `[left palm, left fingers, right palm, right fingers]` (the found ones once set up).
    #[func]
    pub fn get_hand_axes(&self) -> PackedVector3Array {
        let mut out = PackedVector3Array::new();
        for (palm, finger) in self.effective_hand_axes() {
            out.push(vector3(palm));
            out.push(vector3(finger));
        }
        out
    }

    /// Returns the [LimbIK] driving `side`'s arm, or null before setup.
    #[func]
    pub fn get_arm_ik(&self, side: i64) -> Option<Gd<LimbIK>> {
        self.rig
            .as_ref()
            .map(|rig| rig.iks[side_of(side).index()].clone())
    }

    /// Returns `k`, the factor [member auto_proportions] applies to the lengths and speeds (the
    /// character's height in the world over 1.75 m; 1 when the option is off, or before setup).
    #[func]
    pub fn get_proportion(&self) -> f32 {
        self.rig.as_ref().map_or(1.0, |rig| rig.proportion)
    }

    /// Returns the detection volume's side (in the character's own units), 0 before setup.
    #[func]
    pub fn get_detection_size(&self) -> f32 {
        self.rig.as_ref().map_or(0.0, |rig| rig.volume_size)
    }

    /// Returns the detection volume's centre and orientation relative to the character.
    #[func]
    pub fn get_detection_transform(&self) -> Transform3D {
        self.rig
            .as_ref()
            .map_or(Transform3D::IDENTITY, |rig| rig.volume_local)
    }

    /// Returns this node's measured cost since the last [method reset_profile], in microseconds per
    /// physics frame: `{"logic": …, "queries": …, "engine": …, "frames": n}`. "logic" is the state
    /// machine and the closest-point geometry, "queries" the time in the physics server (detection
    /// shape query and normal ray), "engine" the rest (reading transforms and bones, writing the IK).
    #[func]
    pub fn get_profile(&self) -> VarDictionary {
        let frames = self.profile_frames.max(1) as f64;
        let mut d = VarDictionary::new();
        d.set("logic", self.profile_logic_usec / frames);
        d.set("queries", self.profile_query_usec / frames);
        d.set(
            "engine",
            (self.profile_total_usec - self.profile_query_usec - self.profile_logic_usec) / frames,
        );
        d.set("frames", self.profile_frames);
        d
    }

    /// Starts a new measurement for [method get_profile].
    #[func]
    pub fn reset_profile(&mut self) {
        self.profile_query_usec = 0.0;
        self.profile_logic_usec = 0.0;
        self.profile_total_usec = 0.0;
        self.profile_frames = 0;
    }

    /// Lets go now (e.g. after a teleport): the node goes to Reset.
    #[func]
    pub fn force_reset(&mut self) {
        self.core
            .reset(entwine_core::env_touch::ResetReason::Forced);
        let events: Vec<TouchEvent> = self.core.events().to_vec();
        self.emit(&events);
    }
}

impl EnvironmentInteractionStateMachine {
    fn invalidate(&mut self) {
        self.dirty = true;
    }

    fn warn_collider(&mut self, id: InstanceId, why: &str) {
        let node = self.to_gd();
        let key = id.to_i64() as u64;
        self.warnings
            .once_for(&node, WARN_COLLIDER, key, &format!("{why}."));
    }

    /// One physics frame: gather, step the core, apply, draw.
    fn frame(&mut self, dt: f32) {
        if self.dirty {
            self.dirty = false;
            self.teardown();
            match self.setup() {
                Ok(rig) => {
                    self.warnings.clear_keys(WARN_SETUP);
                    self.rig = Some(rig);
                }
                Err(why) => {
                    let node = self.to_gd();
                    let msg = format!("{why}; the node stays idle until this is fixed.");
                    // Keyed by the problem, not the value it names: another bad value of the same
                    // property is the same problem.
                    let problem = why.split(" (got").next().unwrap_or(&why);
                    self.warnings
                        .on_change(&node, WARN_SETUP, key_of(problem), &msg);
                    return;
                }
            }
        }
        self.sync_config();
        let Some(rig) = &self.rig else {
            return;
        };
        if !rig.character.is_instance_valid() || !rig.skeleton.is_instance_valid() {
            self.rig = None;
            self.dirty = true;
            return;
        }
        let character = rig.character.clone();
        let skeleton = rig.skeleton.clone();
        let shoulder_bones = rig.shoulders;
        let character_xform = character.get_global_transform();
        // Physics queries take no scale: the box is sized in the world instead (see setup).
        let volume_xform = Transform3D::new(
            Basis::from_quaternion(quaternion(pose(character_xform).rotation)),
            character_xform * rig.volume_local.origin,
        );

        let root = pose(character_xform);
        let character_body = rig.character_body.clone();
        let rigid_body = rig.rigid_body.clone();
        // Reset ignores colliders and shoulders until its delay is nearly over: no physics query
        // and no skeleton read (which can force the skeleton to recompute its pose) before then.
        let resetting = self.core.state() == entwine_core::env_touch::TouchState::Reset
            && self.core.state_time() + dt < self.core.config().reset_duration;
        let shoulders = if resetting {
            self.shoulders_local.map(|s| vec3(character_xform * s))
        } else {
            let skeleton_xform = skeleton.get_global_transform();
            let world =
                shoulder_bones.map(|b| skeleton_xform * skeleton.get_bone_global_pose(b).origin);
            let to_character = character_xform.affine_inverse();
            self.shoulders_local = world.map(|w| to_character * w);
            world.map(vec3)
        };
        let (velocity, grounded) = self.motion(&character, character_body, rigid_body, dt);
        let space = if resetting {
            None
        } else {
            self.base()
                .get_world_3d()
                .and_then(|w| w.get_direct_space_state())
        };

        // The colliders in the volume and their closest points from the locked shoulder height.
        if let Some(space) = &space {
            self.detect(space.clone(), volume_xform);
        }
        let logic_start = std::time::Instant::now();
        let query = self.core.query_point(root);
        self.candidates.clear();
        for collider in self.colliders.iter().filter(|_| !resetting) {
            let body = affine(collider.body.get_global_transform());
            let mut best: Option<Vec3> = None;
            for (shape, local) in &collider.shapes {
                if let Some(p) = shape.closest_point(&(body * *local), query) {
                    if best.is_none_or(|b| p.distance_squared(query) < b.distance_squared(query)) {
                        best = Some(p);
                    }
                }
            }
            if let Some(p) = best {
                self.candidates.push(Candidate {
                    id: collider.id.to_i64() as u64,
                    closest_point: p,
                });
            }
        }
        let mut logic_usec = logic_start.elapsed().as_secs_f64() * 1e6;
        // Aim the ray at this frame's contact.
        let surface_normal = if let (true, Some(space)) = (self.core.wants_surface_normal(), &space)
        {
            let side = self.core.side().index();
            let target = self
                .core
                .tracked()
                .and_then(|id| self.candidates.iter().find(|c| c.id == id))
                .map(|c| c.closest_point)
                .or(self.core.closest_point());
            target.and_then(|t| self.cast_normal(space.clone(), shoulders[side], t))
        } else {
            None
        };

        let logic_start = std::time::Instant::now();
        let candidates = std::mem::take(&mut self.candidates);
        let hands = self.core.step(&TouchInput {
            dt,
            root,
            shoulders,
            velocity,
            move_input: self.has_move_input.then(|| vec3(self.move_input)),
            grounded,
            candidates: &candidates,
            surface_normal,
        });
        self.candidates = candidates;
        logic_usec += logic_start.elapsed().as_secs_f64() * 1e6;
        self.profile_logic_usec += logic_usec;

        if let Some(rig) = &self.rig {
            for (ik, hand) in rig.iks.iter().zip(hands) {
                let mut ik = ik.clone();
                if !ik.is_instance_valid() {
                    continue;
                }
                let active = hand.position_weight > 1e-4 || hand.rotation_weight > 1e-4;
                if ik.is_active() != active {
                    ik.set_active(active);
                }
                set_ik(
                    &mut ik.bind_mut(),
                    Transform3D::new(
                        Basis::from_quaternion(quaternion(hand.pose.rotation)),
                        vector3(hand.pose.position),
                    ),
                    hand.position_weight,
                    hand.rotation_weight,
                );
            }
        }
        let mut events =
            [TouchEvent::TouchEnded { side: Side::Left }; entwine_core::env_touch::MAX_EVENTS];
        let n = self.core.events().len();
        events[..n].copy_from_slice(self.core.events());
        self.draw(shoulders);
        self.emit(&events[..n]);
    }

    /// Refreshes `colliders` with the interactable bodies overlapping the detection volume.
    fn detect(&mut self, mut space: Gd<PhysicsDirectSpaceState3D>, volume: Transform3D) {
        for c in &mut self.colliders {
            c.seen = false;
        }
        let [key, _] = self.keys().clone();
        if let Some(query) = self.query.as_mut() {
            let start = std::time::Instant::now();
            query.set_transform(volume);
            let hits = space.intersect_shape_ex(&*query).max_results(32).done();
            self.profile_query_usec += start.elapsed().as_secs_f64() * 1e6;
            for hit in hits.iter_shared() {
                let Ok(object) = hit.get_or_nil(&key).try_to::<Gd<Object>>() else {
                    continue;
                };
                let id = object.instance_id();
                if let Some(c) = self.colliders.iter_mut().find(|c| c.id == id) {
                    c.seen = true;
                    continue;
                }
                if self.warnings.printed_for(WARN_COLLIDER, id.to_i64() as u64) {
                    continue;
                }
                self.add_collider(object);
            }
        }
        self.colliders
            .retain(|c| c.seen && c.body.is_instance_valid());
    }

    /// Caches a newly detected body's shapes (warning once when none is usable).
    fn add_collider(&mut self, object: Gd<Object>) {
        let id = object.instance_id();
        let Ok(body) = object.try_cast::<CollisionObject3D>() else {
            return;
        };
        let name = body.get_name();
        let (shapes, unsupported) = collider_shapes(&body);
        if let Some(kind) = unsupported {
            self.warn_collider(
                id,
                &format!("'{name}' has a {kind}, which has no closest-point query; that shape is ignored"),
            );
        }
        if shapes.is_empty() {
            self.warn_collider(
                id,
                &format!("'{name}' has no usable collision shape (box, sphere, capsule, cylinder, convex, concave or world boundary); it is ignored"),
            );
            return;
        }
        self.colliders.push(Collider {
            id,
            body,
            shapes,
            seen: true,
        });
    }

    fn emit(&mut self, events: &[TouchEvent]) {
        for event in events {
            match *event {
                TouchEvent::StateChanged { from, to } => self
                    .signals()
                    .state_changed()
                    .emit(i64::from(from.index()), i64::from(to.index())),
                TouchEvent::TouchStarted {
                    side,
                    point,
                    normal,
                } => self.signals().touch_started().emit(
                    side.index() as i64,
                    vector3(point),
                    vector3(normal),
                ),
                TouchEvent::TouchEnded { side } => {
                    self.signals().touch_ended().emit(side.index() as i64);
                }
            }
        }
    }

    /// Returns the character's velocity (m/s) and whether it stands on the floor.
    fn motion(
        &mut self,
        character: &Gd<Node3D>,
        character_body: Option<Gd<CharacterBody3D>>,
        rigid_body: Option<Gd<RigidBody3D>>,
        dt: f32,
    ) -> (Vec3, bool) {
        if let Some(body) = character_body {
            return (vec3(body.get_real_velocity()), body.is_on_floor());
        }
        if let Some(body) = rigid_body {
            return (vec3(body.get_linear_velocity()), true);
        }
        let position = character.get_global_position();
        let previous = self.last_position.replace(position);
        let velocity = match previous {
            Some(p) if dt > 0.0 => vec3(position - p) / dt,
            _ => Vec3::ZERO,
        };
        (velocity, true)
    }

    /// Returns the surface normal a ray from `from` toward `toward` finds on the interactable layers.
    fn cast_normal(
        &mut self,
        mut space: Gd<PhysicsDirectSpaceState3D>,
        from: Vec3,
        toward: Vec3,
    ) -> Option<Vec3> {
        let length = self.core.config().normal_ray_length;
        let dir = (toward - from).try_normalize()?;
        let to = from + dir * length;
        let [_, key] = self.keys().clone();
        let ray = self.ray.as_mut()?;
        ray.set_from(vector3(from));
        ray.set_to(vector3(to));
        let start = std::time::Instant::now();
        let hit = space.intersect_ray(&*ray);
        self.profile_query_usec += start.elapsed().as_secs_f64() * 1e6;
        let normal = hit.get_or_nil(&key).try_to::<Vector3>().ok()?;
        let n = vec3(normal).try_normalize()?;
        n.is_finite().then_some(n)
    }

    /// Returns the result-dictionary keys `["collider", "normal"]`.
    fn keys(&mut self) -> &[Variant; 2] {
        self.keys
            .get_or_insert_with(|| ["collider", "normal"].map(|k| GString::from(k).to_variant()))
    }

    /// Each hand's `(palm, finger)` axes in its bone's space: the set [member palm_axis] /
    /// [member finger_axis] for both hands, else (zero) the ones found in the rig.
    fn effective_hand_axes(&self) -> [(glam::Vec3, glam::Vec3); 2] {
        let found = self
            .hand_axes
            .unwrap_or([(glam::Vec3::Z, glam::Vec3::Y); 2]);
        found.map(|(palm, finger)| {
            (
                if self.palm_axis == Vector3::ZERO {
                    palm
                } else {
                    vec3(self.palm_axis)
                },
                if self.finger_axis == Vector3::ZERO {
                    finger
                } else {
                    vec3(self.finger_axis)
                },
            )
        })
    }

    /// Rebuilds the core configuration from the properties when one changed.
    fn sync_config(&mut self) {
        let axes = self.effective_hand_axes();
        let shoulder_height = self.core.config().shoulder_height;
        let waist_height = self.core.config().waist_height;
        let k = self.rig.as_ref().map_or(1.0, |rig| rig.proportion);
        let config = TouchConfig {
            shoulder_height,
            waist_height,
            surface_offset: self.surface_offset * k,
            side_switch_margin: self.side_switch_margin * k,
            reset_duration: self.reset_duration,
            reset_blend_duration: self.reset_blend_duration,
            reset_rotation_speed: self.reset_rotation_speed.to_radians(),
            approach_distance: self.approach_distance * k,
            approach_weight: self.approach_weight,
            approach_rotation_weight: self.approach_rotation_weight,
            approach_blend_duration: self.approach_blend_duration,
            approach_duration: self.approach_duration,
            approach_rotation_speed: self.approach_rotation_speed.to_radians(),
            rise_distance: self.rise_distance * k,
            rise_weight: self.rise_weight,
            rise_blend_duration: self.rise_blend_duration,
            rise_rotation_speed: self.rise_rotation_speed.to_radians(),
            normal_ray_length: self.normal_ray_length * k,
            touch_distance: self.touch_distance * k,
            touch_min_time: self.touch_min_time,
            touch_duration: self.touch_duration,
            moving_away_offset: self.moving_away_offset * k,
            jump_speed: self.jump_speed * k,
            palm_axis: axes[0].0,
            finger_axis: axes[0].1,
            right_palm_axis: axes[1].0,
            right_finger_axis: axes[1].1,
        };
        if self.last_config == Some(config) {
            return;
        }
        self.last_config = Some(config);
        match config.check() {
            Some(issue) => {
                let node = self.to_gd();
                let msg = format!(
                    "property '{}' must be {}; its default is used instead.",
                    issue.field, issue.accepted
                );
                let key = key_of(issue.field);
                self.warnings.on_change(&node, WARN_CONFIG, key, &msg);
            }
            None => self.warnings.clear_keys(WARN_CONFIG),
        }
        self.core.set_config(config);
    }

    /// Resolves the character, skeleton and bones, sizes the volume and creates the IK modifiers.
    fn setup(&mut self) -> Result<Rig, String> {
        let character = self
            .base()
            .try_get_node_as::<Node3D>(&self.character_path)
            .ok_or_else(|| {
                format!(
                    "character_path '{}' does not point at a Node3D",
                    self.character_path
                )
            })?;
        let skeleton = if self.skeleton_path.is_empty() {
            character
                .find_children_ex("*")
                .type_("Skeleton3D")
                .owned(false)
                .done()
                .iter_shared()
                .find_map(|n| n.try_cast::<Skeleton3D>().ok())
                .ok_or_else(|| {
                    format!(
                        "no Skeleton3D under the character '{}' (set skeleton_path)",
                        character.get_name()
                    )
                })?
        } else {
            self.base()
                .try_get_node_as::<Skeleton3D>(&self.skeleton_path)
                .ok_or_else(|| {
                    format!(
                        "skeleton_path '{}' does not point at a Skeleton3D",
                        self.skeleton_path
                    )
                })?
        };
        let arms = [
            arm_bones(&self.left_arm_bones, "left_arm_bones")?,
            arm_bones(&self.right_arm_bones, "right_arm_bones")?,
        ];
        let humanoid = crate::rig::humanoid(&skeleton);
        let mut bones = [[0i32; 3]; 2];
        for (side, names) in arms.iter().enumerate() {
            let property = ["left_arm_bones", "right_arm_bones"][side];
            let roles = RigRole::arm([RigSide::Left, RigSide::Right][side]);
            for (k, name) in names.iter().enumerate() {
                bones[side][k] = crate::rig::pick(&skeleton, "bone", name, roles[k], &humanoid)
                    .map_err(|why| format!("{property}: {why}"))?;
            }
        }
        if self.interactable_mask == 0 {
            return Err(
                "interactable_mask is 0, so no physics layer is interactable (select at least one layer)"
                    .to_string(),
            );
        }
        let (shape_height, centre) = self.character_size(&character)?;
        // Heights and rest poses in the character's frame, read once ("locked") from the rest pose.
        let to_character =
            character.get_global_transform().affine_inverse() * skeleton.get_global_transform();
        // Auto: the rig's own height, carried into the character's frame (a model on a body whose
        // collider is another size keeps its own proportions).
        let rig_height =
            humanoid.height * (to_character.basis * crate::convert::vector3(humanoid.up)).length();
        let height = if self.character_height == 0.0
            && humanoid.bone(RigRole::Head).is_some()
            && rig_height.is_finite()
            && rig_height > 0.0
        {
            rig_height
        } else {
            shape_height
        };
        let volume = detection_box(height, centre).ok_or_else(|| {
            format!("character_height must be a finite height > 0 (got {height})")
        })?;

        let shoulder_height = 0.5
            * (0..2)
                .map(|s| (to_character * skeleton.get_bone_global_rest(bones[s][0]).origin).y)
                .sum::<f32>();
        if !(shoulder_height.is_finite() && shoulder_height > 0.0) {
            return Err(format!(
                "the shoulder bones are not above the character's origin (height {shoulder_height} m)"
            ));
        }
        // The core works in metres around the character's unscaled root: the character's own
        // lengths are multiplied by its scale in the world (a node above it scaled 0.01 or 100).
        let world_scale = {
            let v = character.get_global_transform().basis.get_scale().abs();
            let s = (v.x + v.y + v.z) / 3.0;
            if s.is_finite() && s > 1e-9 {
                s
            } else {
                1.0
            }
        };
        let proportion = if self.auto_proportions {
            let k = height * world_scale / entwine_core::rig::REFERENCE_HEIGHT;
            if k.is_finite() && k > 1e-9 {
                k
            } else {
                1.0
            }
        } else {
            1.0
        };
        let rest = [0, 1].map(|s| {
            let p = pose(to_character * skeleton.get_bone_global_rest(bones[s][2]));
            entwine_core::kit::Pose::new(p.position * world_scale, p.rotation)
        });
        // Palm and finger axes in each hand bone's own space, from the rig's rest pose.
        self.hand_axes = Some([0, 1].map(|s| {
            let q = crate::convert::rotation(skeleton.get_bone_global_rest(bones[s][2]).basis);
            let local = |v: glam::Vec3| q.conjugate() * v;
            (local(humanoid.palm[s]), local(humanoid.finger[s]))
        }));
        self.shoulders_local =
            [0, 1].map(|s| to_character * skeleton.get_bone_global_rest(bones[s][0]).origin);
        let mut config = *self.core.config();
        config.shoulder_height = shoulder_height * world_scale;
        config.waist_height = centre.y.max(0.01) * world_scale;
        self.core = EnvTouch::new(config, rest);
        self.last_config = None;

        let iks = [0, 1].map(|s| {
            let mut ik = LimbIK::new_alloc();
            let side = ["Left", "Right"][s];
            ik.set_name(&format!("EnvTouch{side}ArmIK"));
            for (k, property) in ["upper_bone", "lower_bone", "end_bone"].iter().enumerate() {
                ik.set(*property, &skeleton.get_bone_name(bones[s][k]).to_variant());
            }
            // Elbow out, down and a little back, in the character's axes of the rig found.
            let out = if s == 0 { -1.0 } else { 1.0 };
            let pole = humanoid.to_skeleton(glam::Vec3::new(out, -1.0, 0.5));
            ik.set("pole_direction", &vector3(pole).to_variant());
            set_ik(&mut ik.bind_mut(), Transform3D::IDENTITY, 0.0, 0.0);
            ik.set_active(false);
            ik
        });
        let mut skeleton_mut = skeleton.clone();
        for ik in &iks {
            skeleton_mut.add_child(ik);
        }

        let volume_local = Transform3D::new(Basis::IDENTITY, vector3(volume.centre));
        self.exclude = Array::new();
        if let Ok(body) = character.clone().try_cast::<CollisionObject3D>() {
            self.exclude.push(body.get_rid());
        }
        let mut query = PhysicsShapeQueryParameters3D::new_gd();
        let mut box_shape = BoxShape3D::new_gd();
        box_shape.set_size(Vector3::splat(volume.size * world_scale));
        query.set_shape(&box_shape);
        query.set_collision_mask(self.interactable_mask);
        query.set_exclude(&self.exclude);
        query.set_collide_with_bodies(true);
        query.set_collide_with_areas(false);
        self.query = Some(query);
        let mut ray = PhysicsRayQueryParameters3D::new_gd();
        ray.set_collision_mask(self.interactable_mask);
        ray.set_exclude(&self.exclude);
        self.ray = Some(ray);
        self.warnings.clear_keys(WARN_COLLIDER);
        self.colliders.clear();
        self.last_position = None;
        Ok(Rig {
            character_body: character.clone().try_cast::<CharacterBody3D>().ok(),
            rigid_body: character.clone().try_cast::<RigidBody3D>().ok(),
            character,
            skeleton,
            shoulders: [bones[0][0], bones[1][0]],
            iks,
            volume_local,
            volume_size: volume.size,
            proportion,
        })
    }

    /// Returns the character's height (m) and its collider's centre in its own frame.
    fn character_size(&self, character: &Gd<Node3D>) -> Result<(f32, Vec3), String> {
        let shape_node = character
            .get_children()
            .iter_shared()
            .find_map(|n| n.try_cast::<CollisionShape3D>().ok());
        let from_shape = shape_node.as_ref().and_then(|node| {
            let shape = node.get_shape()?;
            let height = if let Ok(c) = shape.clone().try_cast::<CapsuleShape3D>() {
                c.get_height()
            } else if let Ok(c) = shape.clone().try_cast::<CylinderShape3D>() {
                c.get_height()
            } else if let Ok(b) = shape.clone().try_cast::<BoxShape3D>() {
                b.get_size().y
            } else {
                return None;
            };
            Some((height, vec3(node.get_position())))
        });
        if self.character_height != 0.0 {
            let centre =
                from_shape.map_or(Vec3::new(0.0, 0.5 * self.character_height, 0.0), |(_, c)| c);
            return Ok((self.character_height, centre));
        }
        from_shape.ok_or_else(|| {
            format!(
                "character_height is 0 (auto) but the character '{}' has no capsule, cylinder or box CollisionShape3D to read it from (set character_height)",
                character.get_name()
            )
        })
    }

    /// Frees what setup created.
    fn teardown(&mut self) {
        if let Some(rig) = self.rig.take() {
            for ik in rig.iks {
                if ik.is_instance_valid() {
                    ik.upcast::<Node>().queue_free();
                }
            }
        }
        if let Some((mesh, _)) = self.debug.take() {
            if mesh.is_instance_valid() {
                mesh.upcast::<Node>().queue_free();
            }
        }
        self.colliders.clear();
    }

    /// Draws the volume, contact, targets and side when `debug_draw` is on.
    fn draw(&mut self, shoulders: [Vec3; 2]) {
        if !self.debug_draw {
            if let Some((mesh, _)) = &mut self.debug {
                mesh.set_visible(false);
            }
            return;
        }
        let Some(rig) = &self.rig else {
            return;
        };
        let area_xform = rig.character.get_global_transform() * rig.volume_local;
        let half = rig.volume_size * 0.5;
        if self.debug.is_none() {
            let mut instance = MeshInstance3D::new_alloc();
            instance.set_name("EnvTouchDebug");
            instance.set_as_top_level(true);
            let mesh = ImmediateMesh::new_gd();
            instance.set_mesh(&mesh);
            let mut material = StandardMaterial3D::new_gd();
            material.set_shading_mode(ShadingMode::UNSHADED);
            material.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
            material.set_flag(Flags::DISABLE_DEPTH_TEST, true);
            instance.set_material_override(&material);
            self.base_mut().add_child(&instance);
            self.debug = Some((instance, mesh));
        }
        let Some((instance, mesh)) = &mut self.debug else {
            return;
        };
        instance.set_visible(true);
        instance.set_global_transform(Transform3D::IDENTITY);
        mesh.clear_surfaces();
        mesh.surface_begin(PrimitiveType::LINES);
        // The detection volume.
        mesh.surface_set_color(Color::from_rgb(1.0, 0.85, 0.2));
        let corner = |i: usize| {
            Vector3::new(
                if i & 1 == 0 { -half } else { half },
                if i & 2 == 0 { -half } else { half },
                if i & 4 == 0 { -half } else { half },
            )
        };
        for i in 0..8usize {
            for bit in [1usize, 2, 4] {
                if i & bit == 0 {
                    mesh.surface_add_vertex(area_xform * corner(i));
                    mesh.surface_add_vertex(area_xform * corner(i | bit));
                }
            }
        }
        let cross = |mesh: &mut Gd<ImmediateMesh>, p: Vector3, r: f32| {
            for axis in [Vector3::RIGHT, Vector3::UP, Vector3::BACK] {
                mesh.surface_add_vertex(p - axis * r);
                mesh.surface_add_vertex(p + axis * r);
            }
        };
        if let Some(p) = self.core.closest_point() {
            mesh.surface_set_color(Color::from_rgb(1.0, 0.1, 0.1));
            cross(mesh, vector3(p), 0.06);
        }
        for side in [Side::Left, Side::Right] {
            let hand = self.core.hand(side);
            if hand.position_weight < 1e-3 {
                continue;
            }
            let colour = match side {
                Side::Left => Color::from_rgb(0.1, 1.0, 0.2),
                Side::Right => Color::from_rgb(0.2, 0.5, 1.0),
            };
            mesh.surface_set_color(colour);
            cross(mesh, vector3(hand.pose.position), 0.04);
            mesh.surface_add_vertex(vector3(shoulders[side.index()]));
            mesh.surface_add_vertex(vector3(hand.pose.position));
        }
        mesh.surface_end();
    }
}

/// Writes a target and weights into a `LimbIK` through its Rust accessors (no Variant round trip
/// per frame).
fn set_ik(ik: &mut LimbIK, target: Transform3D, position_weight: f32, rotation_weight: f32) {
    ik.set_target_transform(target);
    ik.set_position_weight(position_weight);
    ik.set_rotation_weight(rotation_weight);
}

/// Returns the side for a `SIDE_*` constant (anything but 1 is left).
fn side_of(side: i64) -> Side {
    if side == 1 {
        Side::Right
    } else {
        Side::Left
    }
}

/// Returns an arm's three bone names, or why the property is unusable.
fn arm_bones(names: &PackedStringArray, property: &str) -> Result<ArmBones, String> {
    if names.is_empty() {
        return Ok([GString::new(), GString::new(), GString::new()]);
    }
    if names.len() != 3 {
        return Err(format!(
            "{property} must list 3 bones (upper arm, forearm, hand) or none, got {}",
            names.len()
        ));
    }
    Ok([names[0].clone(), names[1].clone(), names[2].clone()])
}

/// Returns a body's enabled shapes in its own space and the class of the first unsupported one.
fn collider_shapes(body: &Gd<CollisionObject3D>) -> (Vec<(Shape, Affine3A)>, Option<GString>) {
    let mut shapes = Vec::new();
    let mut unsupported = None;
    for owner in body.get_shape_owners().as_slice() {
        let owner = *owner as u32;
        if body.is_shape_owner_disabled(owner) {
            continue;
        }
        let local = affine(body.shape_owner_get_transform(owner));
        for k in 0..body.shape_owner_get_shape_count(owner) {
            let Some(shape) = body.shape_owner_get_shape(owner, k) else {
                continue;
            };
            match crate::convert::shape(shape.get_rid()) {
                Ok(Some((core, placed))) => shapes.push((core, local * placed)),
                Ok(None) => {}
                Err(_) => {
                    unsupported.get_or_insert_with(|| shape.get_class());
                }
            }
        }
    }
    (shapes, unsupported)
}
