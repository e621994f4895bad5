//! `EnvironmentInteractionStateMachine`: the node, its properties and its physics tick.
//! A walking character's hand reaches for nearby walls; the decisions are the core's `env_touch`.
//!
//! Each physics frame the node gathers the frame's facts from Godot (character pose, shoulder
//! bones, velocity, the colliders in its detection volume and their closest points, a
//! surface-normal ray; [`frame`]), steps `entwine_core::env_touch::EnvTouch`, writes the resulting
//! targets and weights into two `LimbIK` modifiers it creates under the skeleton, and emits the
//! core's events as signals last. [`setup`] resolves the rig and sizes the volume, [`api`] holds
//! the class's methods and signals, [`debug`] the debug drawing.

mod api;
mod debug;
mod frame;
mod setup;

use entwine_core::env_touch::config::{TouchParam as P, CHARACTER_HEIGHT};
use entwine_core::env_touch::{Candidate, EnvTouch, Shape, TouchConfig, VelocityEstimate};
use glam::Affine3A;
use godot::classes::{
    CharacterBody3D, CollisionObject3D, Engine, INode3D, ImmediateMesh, MeshInstance3D, Node3D,
    PhysicsRayQueryParameters3D, PhysicsShapeQueryParameters3D, RigidBody3D, Skeleton3D,
};
use godot::prelude::*;

use crate::limb_ik::LimbIK;
use crate::warnings::Warnings;

pub use api::TouchStateKind;

/// Warning kinds (see [`Warnings`]): the setup failure and config issue (each reported again when
/// it changes) and, per collider, one without usable shapes.
const WARN_SETUP: u32 = 0;
const WARN_CONFIG: u32 = 1;
const WARN_COLLIDER: u32 = 2;

/// A character's hand reaches out and rests on nearby walls, pillars and railings as it walks past.
///
/// Add it as a child of the character (a [CharacterBody3D] with a [Skeleton3D], e.g. a humanoid). On
/// the first physics frame it sizes its detection volume from the character's height (a cube of
/// side = wingspan, raised a quarter and pushed half a wingspan forward; a shape query on the
/// [member interactable_mask] layers each physics frame, so static walls are found with any physics
/// engine) and creates two [EntwineLimbIK] modifiers under the skeleton (left and right arm, hand rotation
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
    #[export(node_path = ("Node3D"))]
    #[var(set = set_character_node)]
    #[init(val = NodePath::from(".."))]
    character_node: NodePath,
    /// The character's skeleton. Empty: the first [Skeleton3D] found under the character.
    #[export(node_path = ("Skeleton3D"))]
    #[var(set = set_skeleton_node)]
    skeleton_node: NodePath,
    /// The character's height in metres, which sizes the detection volume (the arm span is taken as
    /// the height, as it is on most people). 0 = the height of the humanoid found in the skeleton (its meshes'
    /// extent, else its head joint; see [EntwineHumanoidRig]), or, when the skeleton has no head, the
    /// character's capsule, cylinder or box [CollisionShape3D]'s (a body's collider need not be the
    /// size of the model it carries).
    #[export(range = (CHARACTER_HEIGHT.hint_min(), CHARACTER_HEIGHT.hint_max(), 0.01, or_greater, suffix = CHARACTER_HEIGHT.suffix()))]
    #[var(set = set_character_height)]
    character_height: f32,
    /// Scale the lengths and speeds below with the character: [member surface_offset],
    /// [member side_switch_margin], [member normal_ray_length], [member approach_distance],
    /// [member rise_distance], [member touch_distance], [member moving_away_offset] and
    /// [member jump_speed] are then given for a 1.75 m reference human (the size the defaults are
    /// tuned for) and multiplied by `k = h / 1.75`, `h` being the character's height in the world (as
    /// [member character_height] gives it, times the character's scale in the world).
    /// A 1.75 m character gets the values as set. Off: they are metres (m/s) as set. See
    /// [method get_proportion].
    #[export]
    #[init(val = true)]
    #[var(get = is_using_auto_proportions)]
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
    #[export(range = (P::SurfaceOffset.spec().hint_min(), P::SurfaceOffset.spec().hint_max(), 0.001, or_greater, suffix = P::SurfaceOffset.spec().suffix()))]
    #[init(val = P::SurfaceOffset.spec().default)]
    surface_offset: f32,
    /// After a reset, the collider touched before stays preferred while it is at most this much
    /// farther than the nearest one (keeps a corridor walk on one side). Scaled by
    /// [member auto_proportions].
    #[export(range = (P::SideSwitchMargin.spec().hint_min(), P::SideSwitchMargin.spec().hint_max(), 0.01, or_greater, suffix = P::SideSwitchMargin.spec().suffix()))]
    #[init(val = P::SideSwitchMargin.spec().default)]
    side_switch_margin: f32,
    /// Length of the ray from the shoulder toward the contact that finds the surface normal (scaled
    /// by [member auto_proportions]).
    #[export(range = (P::NormalRayLength.spec().hint_min(), P::NormalRayLength.spec().hint_max(), 0.01, or_greater, suffix = P::NormalRayLength.spec().suffix()))]
    #[init(val = P::NormalRayLength.spec().default)]
    normal_ray_length: f32,

    /// Reset lasts at least this long before searching again (and waits for movement).
    #[export_group(name = "Reset", prefix = "reset_")]
    #[export(range = (P::ResetDuration.spec().hint_min(), P::ResetDuration.spec().hint_max(), 0.01, or_greater, suffix = P::ResetDuration.spec().suffix()))]
    #[init(val = P::ResetDuration.spec().default)]
    reset_duration: f32,
    /// Time scale of the ramp that blends weights and targets back in Reset (each frame at 60 Hz
    /// covers `t / duration` of what is left, `t` the time in Reset; larger is slower).
    #[export(range = (P::ResetBlendDuration.spec().hint_min(), P::ResetBlendDuration.spec().hint_max(), 0.1, or_greater, suffix = P::ResetBlendDuration.spec().suffix()))]
    #[init(val = P::ResetBlendDuration.spec().default)]
    reset_blend_duration: f32,
    /// How fast the hand turns back to its rest rotation in Reset, in radians per second (shown in
    /// °/s).
    #[export(range = (P::ResetRotationSpeed.spec().hint_min(), P::ResetRotationSpeed.spec().hint_max(), 1.0, or_greater, radians_as_degrees, suffix = P::ResetRotationSpeed.spec().suffix()))]
    #[init(val = P::ResetRotationSpeed.spec().default)]
    reset_rotation_speed: f32,

    /// Search → Approach when the contact is this close to the character's origin (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Approach", prefix = "approach_")]
    #[export(range = (P::ApproachDistance.spec().hint_min(), P::ApproachDistance.spec().hint_max(), 0.01, or_greater, suffix = P::ApproachDistance.spec().suffix()))]
    #[init(val = P::ApproachDistance.spec().default)]
    approach_distance: f32,
    /// IK position weight Approach blends toward.
    #[export(range = (P::ApproachWeight.spec().hint_min(), P::ApproachWeight.spec().hint_max(), 0.01, suffix = P::ApproachWeight.spec().suffix()))]
    #[init(val = P::ApproachWeight.spec().default)]
    approach_weight: f32,
    /// IK rotation weight (palm toward the ground) Approach blends toward.
    #[export(range = (P::ApproachRotationWeight.spec().hint_min(), P::ApproachRotationWeight.spec().hint_max(), 0.01, suffix = P::ApproachRotationWeight.spec().suffix()))]
    #[init(val = P::ApproachRotationWeight.spec().default)]
    approach_rotation_weight: f32,
    /// Time scale of Approach's weight ramp.
    #[export(range = (P::ApproachBlendDuration.spec().hint_min(), P::ApproachBlendDuration.spec().hint_max(), 0.1, or_greater, suffix = P::ApproachBlendDuration.spec().suffix()))]
    #[init(val = P::ApproachBlendDuration.spec().default)]
    approach_blend_duration: f32,
    /// Approach gives up and resets after this long.
    #[export(range = (P::ApproachDuration.spec().hint_min(), P::ApproachDuration.spec().hint_max(), 0.01, or_greater, suffix = P::ApproachDuration.spec().suffix()))]
    #[init(val = P::ApproachDuration.spec().default)]
    approach_duration: f32,
    /// How fast the palm turns toward the ground in Approach, in radians per second (shown in °/s).
    #[export(range = (P::ApproachRotationSpeed.spec().hint_min(), P::ApproachRotationSpeed.spec().hint_max(), 1.0, or_greater, radians_as_degrees, suffix = P::ApproachRotationSpeed.spec().suffix()))]
    #[init(val = P::ApproachRotationSpeed.spec().default)]
    approach_rotation_speed: f32,

    /// Approach → Rise when the contact is this close to the shoulder (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Rise", prefix = "rise_")]
    #[export(range = (P::RiseDistance.spec().hint_min(), P::RiseDistance.spec().hint_max(), 0.01, or_greater, suffix = P::RiseDistance.spec().suffix()))]
    #[init(val = P::RiseDistance.spec().default)]
    rise_distance: f32,
    /// IK position and rotation weight Rise blends toward.
    #[export(range = (P::RiseWeight.spec().hint_min(), P::RiseWeight.spec().hint_max(), 0.01, suffix = P::RiseWeight.spec().suffix()))]
    #[init(val = P::RiseWeight.spec().default)]
    rise_weight: f32,
    /// Time scale of Rise's ramp (weights and hand height).
    #[export(range = (P::RiseBlendDuration.spec().hint_min(), P::RiseBlendDuration.spec().hint_max(), 0.1, or_greater, suffix = P::RiseBlendDuration.spec().suffix()))]
    #[init(val = P::RiseBlendDuration.spec().default)]
    rise_blend_duration: f32,
    /// How fast the palm turns against the surface in Rise and Touch, in radians per second (shown in °/s).
    #[export(range = (P::RiseRotationSpeed.spec().hint_min(), P::RiseRotationSpeed.spec().hint_max(), 1.0, or_greater, radians_as_degrees, suffix = P::RiseRotationSpeed.spec().suffix()))]
    #[init(val = P::RiseRotationSpeed.spec().default)]
    rise_rotation_speed: f32,

    /// Rise → Touch when the IK target is this close to its place on the surface (scaled by
    /// [member auto_proportions])…
    #[export_group(name = "Touch", prefix = "touch_")]
    #[export(range = (P::TouchDistance.spec().hint_min(), P::TouchDistance.spec().hint_max(), 0.001, or_greater, suffix = P::TouchDistance.spec().suffix()))]
    #[init(val = P::TouchDistance.spec().default)]
    touch_distance: f32,
    /// …and Rise has lasted at least this long.
    #[export(range = (P::TouchMinTime.spec().hint_min(), P::TouchMinTime.spec().hint_max(), 0.01, or_greater, suffix = P::TouchMinTime.spec().suffix()))]
    #[init(val = P::TouchMinTime.spec().default)]
    touch_min_time: f32,
    /// The hand rests this long, then lets go.
    #[export(range = (P::TouchDuration.spec().hint_min(), P::TouchDuration.spec().hint_max(), 0.01, or_greater, suffix = P::TouchDuration.spec().suffix()))]
    #[init(val = P::TouchDuration.spec().default)]
    touch_duration: f32,
    /// Keep the hand on the wall for as long as it can reach it while the character walks along
    /// (a hand on a wall or a railing), instead of letting go after [member touch_duration]. Off
    /// (the default): each touch lasts [member touch_duration], then the cycle starts over.
    #[export]
    #[var(get = is_touch_persistent, set = set_touch_persistent)]
    touch_persistent: bool,

    /// The movement the player asks for, in world space (only zero or not matters). Set it every
    /// frame from your input: once set, it decides "stopped" instead of the character's velocity,
    /// which lags behind the player with root motion. [method clear_move_input] goes back to velocity.
    #[var(get = get_move_input, set = set_move_input)]
    move_input: Vector3,
    /// Moving away: the distance to the contact may grow this much past its lowest value (scaled by
    /// [member auto_proportions]).
    #[export_group(name = "Reset triggers")]
    #[export(range = (P::MovingAwayOffset.spec().hint_min(), P::MovingAwayOffset.spec().hint_max(), 0.001, or_greater, suffix = P::MovingAwayOffset.spec().suffix()))]
    #[init(val = P::MovingAwayOffset.spec().default)]
    moving_away_offset: f32,
    /// Jumping: rising faster than this counts as a jump (so a step up or a slope does not;
    /// scaled by [member auto_proportions]).
    #[export(range = (P::JumpSpeed.spec().hint_min(), P::JumpSpeed.spec().hint_max(), 0.01, or_greater, suffix = P::JumpSpeed.spec().suffix()))]
    #[init(val = P::JumpSpeed.spec().default)]
    jump_speed: f32,

    /// Draws the detection volume, the closest point (red), the IK target (green for the left hand,
    /// blue for the right) and the shoulder → target line.
    #[export_group(name = "Debug")]
    #[export]
    #[var(get = is_debug_draw_enabled)]
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
    /// The character's velocity when it is not a physics body.
    velocity: VelocityEstimate,
    debug: Option<(Gd<MeshInstance3D>, Gd<ImmediateMesh>)>,
    /// Time spent since the last profile reset: in physics queries, the logic and in all.
    profile: entwine_core::env_touch::node::Profile,
    /// Result-dictionary keys, made once.
    keys: Option<[Variant; 2]>,
    /// Running in the editor: the node does nothing there.
    in_editor: bool,
    /// The shoulders in the character's frame when last read from the skeleton.
    shoulders: entwine_core::env_touch::node::ShoulderMemory,
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
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        crate::inspector::hide(property, &["touch_duration"], self.touch_persistent);
    }

    fn ready(&mut self) {
        self.in_editor = Engine::singleton().is_editor_hint();
        self.dirty = true;
        self.core = EnvTouch::default();
    }

    fn physics_process(&mut self, delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::EnvironmentInteractionStateMachine);
        if self.in_editor {
            return;
        }
        let start = std::time::Instant::now();
        self.frame(delta as f32);
        self.profile.frame(start.elapsed().as_secs_f64() * 1e6);
    }

    fn exit_tree(&mut self) {
        self.teardown();
        // Set up again if the node comes back into the tree.
        self.dirty = true;
    }
}

#[godot_api]
impl EnvironmentInteractionStateMachine {
    /// Returns [member auto_proportions].
    #[func]
    pub fn is_using_auto_proportions(&self) -> bool {
        self.auto_proportions
    }

    /// Returns [member debug_draw].
    #[func]
    pub fn is_debug_draw_enabled(&self) -> bool {
        self.debug_draw
    }

    /// Returns [member touch_persistent].
    #[func]
    pub fn is_touch_persistent(&self) -> bool {
        self.touch_persistent
    }

    /// Sets [member touch_persistent] ([member touch_duration] applies only while it is off).
    #[func]
    pub fn set_touch_persistent(&mut self, on: bool) {
        self.touch_persistent = on;
        self.base_mut().notify_property_list_changed();
    }

    /// Emitted on every state change, with the states left and entered (Reset 0 … Touch 4:
    /// the `STATE_*` constants).
    #[signal]
    fn state_changed(from: TouchStateKind, to: TouchStateKind);
    /// Emitted when a hand starts resting on a surface: `side` (`SIDE_LEFT` or `SIDE_RIGHT`), the
    /// contact point and the surface normal (world space).
    #[signal]
    fn touch_started(side: i64, point: Vector3, normal: Vector3);
    /// Emitted when a hand stops resting on a surface.
    #[signal]
    fn touch_ended(side: i64);

    /// Reset: letting go.
    #[constant]
    const STATE_RESET: i64 = TouchStateKind::Reset as i64;
    /// Search: tracking a collider.
    #[constant]
    const STATE_SEARCH: i64 = TouchStateKind::Search as i64;
    /// Approach: the hand moves toward it, palm down.
    #[constant]
    const STATE_APPROACH: i64 = TouchStateKind::Approach as i64;
    /// Rise: the hand rises onto the contact.
    #[constant]
    const STATE_RISE: i64 = TouchStateKind::Rise as i64;
    /// Touch: the hand rests on the surface.
    #[constant]
    const STATE_TOUCH: i64 = TouchStateKind::Touch as i64;
    /// The left hand.
    #[constant]
    const SIDE_LEFT: i64 = 0;
    /// The right hand.
    #[constant]
    const SIDE_RIGHT: i64 = 1;

    /// Sets [member character_node] (see the property for its range and effect).
    #[func]
    fn set_character_node(&mut self, path: NodePath) {
        self.character_node = path;
        self.invalidate();
    }

    /// Sets [member skeleton_node] (see the property for its range and effect).
    #[func]
    fn set_skeleton_node(&mut self, path: NodePath) {
        self.skeleton_node = path;
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
}
