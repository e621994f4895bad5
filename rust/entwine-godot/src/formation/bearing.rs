//! `SoldierBearing`: a soldier's eyes right and salute as a `SkeletonModifier3D`
//! (`entwine_core::formation::bearing`).

use entwine_core::formation::bearing::BearingParam as BP;
use entwine_core::formation::bearing::{
    chain_deltas, chain_local_rotations, look_angles, rotate_vec, salute_pole, salute_target,
    BearingConfig, BearingMotion, BearingParam, BearingSettings, BodyFrame, SALUTE_HAND_OFFSET,
    SALUTE_POLE,
};
use entwine_core::kit::{unit_quat, Pose};
use glam::{Quat, Vec2, Vec3};
use godot::classes::notify::Node3DNotification;
use godot::classes::{ISkeletonModifier3D, Skeleton3D, SkeletonModifier3D};
use godot::prelude::*;

use crate::bones::is_uniform;
use crate::convert::{affine_inverse, quaternion, transform_scaled, vec3, vector3};
use crate::direct::Lent;
use crate::limb_ik::LimbIK;
use crate::rig;
use crate::scene::NodeCache;
use crate::warnings::{self, Warnings};

mod rig_data;

use rig_data::{rotation_of, salute_arm, Rig};

/// A soldier's bearing on top of its animation: the head (and a little of the neck and chest)
/// turns toward a point — "eyes right" on the guide during a dress — and the right hand rises to
/// the brow in a salute.
///
/// Add it as a child of a [Skeleton3D]; a [FormationController] adds one under the skeleton of
/// every soldier it drives and steers it (it uses one that is already there). Each frame, on top
/// of the animated pose:
///
/// - **Look**: while [member looking], the look turns toward [member look_target] (global) — its
///   yaw and pitch measured from the head's animated forward, clamped to [member yaw_limit] and
///   [member pitch_limit] — at most [member turn_speed] per second, and back to the front
///   at the same rate when [member looking] goes false. [member chest_share] of the look goes to
///   [member chest_bone], [member neck_share] to [member neck_bone], the rest to [member head_bone],
///   so the head's forward ends exactly on the target.
/// - **Salute**: while [member saluting], the [EntwineLimbIK] [member salute_ik_node] leads to (see
///   [method create_salute_ik]; a child of the same skeleton) puts the hand bone at
///   [member salute_hand_offset] from the head (in the head's frame), fingers toward the brow, the
///   elbow out to the side along [member salute_pole]. The salute's weight rises from 0 to 1 over
///   [member salute_time] (eased) and falls back the same way when the salute ends; it is the
///   EntwineLimbIK's `position_weight` and `rotation_weight`, so the wrist travels from its animated
///   place to the brow. The EntwineLimbIK's solve runs inside this modifier's pass, after the look (one
///   pass for the skeleton, whatever the children's order): the EntwineLimbIK itself is kept inactive,
///   and its target, pole and weights show what the salute last asked of it.
///
/// Directions use the character's axes: x right, y up, z back, with the character's forward given
/// by [member body_forward] in the skeleton's space (−Z for Godot-facing rigs, +Z for imported
/// humanoids that face +Z). Empty bone names (the default) and a zero [member body_forward] are
/// taken from the humanoid found in the skeleton (any common naming convention, the facing from
/// the rest pose); a set value always wins. A missing head bone gives one warning naming this
/// node's path, the skeleton and the names tried, and leaves the pose alone; a missing neck or
/// chest bone hands its share to the head. Changing [member hand_bone] re-points the [EntwineLimbIK] that
/// [method create_salute_ik] made at the new arm.
#[derive(GodotClass)]
#[class(init, base = SkeletonModifier3D, rename = EntwineSoldierBearing)]
pub struct SoldierBearing {
    base: Base<SkeletonModifier3D>,

    /// The head bone: its forward ends on the look target. Empty (default): the humanoid's head.
    #[export_group(name = "Bones")]
    #[export]
    #[var(set = set_head_bone)]
    head_bone: GString,
    /// The neck bone (optional: missing gives its share to the head). Empty: the humanoid's neck.
    #[export]
    #[var(set = set_neck_bone)]
    neck_bone: GString,
    /// The chest bone (optional: missing gives its share to the head). Empty: the humanoid's chest.
    #[export]
    #[var(set = set_chest_bone)]
    chest_bone: GString,
    /// The saluting arm's hand bone (the end of [member salute_ik_node]'s chain). Empty: the humanoid's
    /// right hand.
    #[export]
    #[var(set = set_hand_bone)]
    hand_bone: GString,
    /// The character's forward in the skeleton's space (−Z for rigs that face −Z like Godot's
    /// bodies, +Z for imported glTF humanoids). Zero (default): found from the rest pose (up × right,
    /// right running from the left to the right upper arm).
    #[export]
    #[var(set = set_body_forward)]
    body_forward: Vector3,

    /// Turn the look toward [member look_target]; false turns it back to the front.
    #[export_group(name = "Look")]
    #[export]
    #[var(get = is_looking, pub)]
    looking: bool,
    /// The point to look at, global.
    #[export]
    #[var(set = set_look_target)]
    look_target: Vector3,
    /// Fastest the look turns, in radians per second. In a squad, the [FormationController]'s `head_turn_speed` drives
    /// it.
    #[export(range = (BP::TurnSpeed.spec().hint_min(), BP::TurnSpeed.spec().hint_max(), 1.0, radians_as_degrees, suffix = BP::TurnSpeed.spec().suffix()))]
    #[var(set = set_turn_speed)]
    #[init(val = BP::TurnSpeed.spec().default)]
    turn_speed: f32,
    /// Largest look yaw either side of the animation's, in radians.
    #[export(range = (BP::YawLimit.spec().hint_min(), BP::YawLimit.spec().hint_max(), 0.5, radians_as_degrees, suffix = BP::YawLimit.spec().suffix()))]
    #[var(pub)]
    #[init(val = BP::YawLimit.spec().default)]
    yaw_limit: f32,
    /// Largest look pitch up or down, in radians.
    #[export(range = (BP::PitchLimit.spec().hint_min(), BP::PitchLimit.spec().hint_max(), 0.5, radians_as_degrees, suffix = BP::PitchLimit.spec().suffix()))]
    #[var(pub)]
    #[init(val = BP::PitchLimit.spec().default)]
    pitch_limit: f32,
    /// Share of the look taken by the chest bone. When
    /// it and [member neck_share] add up to more than 1, both are scaled down to add up to 1.
    #[export(range = (BP::ChestShare.spec().hint_min(), BP::ChestShare.spec().hint_max(), 0.01, suffix = BP::ChestShare.spec().suffix()))]
    #[var(pub)]
    #[init(val = BP::ChestShare.spec().default)]
    chest_share: f32,
    /// Share of the look taken by the neck bone; the head takes the rest.
    #[export(range = (BP::NeckShare.spec().hint_min(), BP::NeckShare.spec().hint_max(), 0.01, suffix = BP::NeckShare.spec().suffix()))]
    #[var(pub)]
    #[init(val = BP::NeckShare.spec().default)]
    neck_share: f32,

    /// Raise the right hand to the brow; false lowers it.
    #[export_group(name = "Salute")]
    #[export]
    #[var(get = is_saluting, pub)]
    saluting: bool,
    /// Time to raise or lower the salute, seconds.
    #[export(range = (BP::SaluteTime.spec().hint_min(), BP::SaluteTime.spec().hint_max(), 0.01, suffix = BP::SaluteTime.spec().suffix()))]
    #[var(pub)]
    #[init(val = BP::SaluteTime.spec().default)]
    salute_time: f32,
    /// A [EntwineLimbIK] on the saluting arm, a child of the same skeleton (see
    /// [method create_salute_ik]); this node runs its solve and keeps it inactive. Without one, or
    /// with one under another skeleton, a salute does nothing (one warning).
    #[export(node_path = ("EntwineLimbIK"))]
    #[var(get = get_salute_ik_node, set = set_salute_ik_node)]
    salute_ik_node: NodePath,
    /// Where the hand bone (the wrist) goes in a salute: metres from the head bone in the head's
    /// frame, character axes (x right, y up, z back), for a 1.75 m human — scaled by the rig's
    /// height (from its rest pose) over 1.75 m. The fingers then reach the right brow.
    #[export(range = (-100.0, 100.0, 0.001, or_less, or_greater, hide_slider, suffix = "m"))]
    #[var(set = set_salute_hand_offset)]
    #[init(val = vector3(SALUTE_HAND_OFFSET))]
    salute_hand_offset: Vector3,
    /// Direction from the shoulder the elbow bends toward in a salute, character axes (out to the
    /// right and a little forward); it turns with the chest.
    #[export]
    #[var(set = set_salute_pole)]
    #[init(val = vector3(SALUTE_POLE))]
    salute_pole: Vector3,

    motion: BearingMotion,
    /// The numeric properties last checked (their bits) and the config they gave.
    checked: Option<([u32; 6], BearingConfig)>,
    rig: Option<Rig>,
    /// The skeleton and bone count the rig was resolved for.
    resolved_for: Option<(InstanceId, i32)>,
    warnings: Warnings,
    /// Set by a [FormationController] on the bearings it gives its soldiers: the kinds of warning
    /// one of them already printed for the squad, and the squad's name, so that a squad of the
    /// same rig warns once, naming the first soldier and the squad, not once per soldier.
    squad: Option<SquadWarnings>,
    head_global: Vector3,
    head_known: bool,
    /// The [EntwineLimbIK] [method create_salute_ik] made: its bones follow [member hand_bone].
    own_ik: Option<InstanceId>,
    /// The [EntwineLimbIK] [member salute_ik_node] leads to.
    salute_ik_cache: NodeCache<LimbIK>,
    salute_target: Transform3D,
    /// This node, kept from the first pass: the salute's path is looked up from it (no handle made
    /// per frame).
    me: Option<Gd<Node>>,
    /// The skeleton (this node's parent) that runs the passes, kept from the first pass until this
    /// node is moved to another parent.
    skeleton: Option<Gd<Skeleton3D>>,
}

/// Warnings shared by the bearings of one squad (see `SoldierBearing::squad`).
#[derive(Clone)]
pub(crate) struct SquadWarnings {
    /// The warning kinds some soldier of the squad printed.
    pub printed: std::rc::Rc<std::cell::RefCell<Warnings>>,
    /// The squad's node path, for the message.
    pub name: String,
}

/// What a pass hands the salute: the skeleton's global transform, the head's pose after the look
/// (skeleton space), the chest's share of the look, the salute's eased weight and the frame's
/// delta.
#[derive(Clone, Copy)]
struct Aim {
    skeleton_global: Transform3D,
    head: Transform3D,
    chest_turn: Quat,
    weight: f32,
    delta: f64,
}

const WARN_HEAD: u32 = 0;
const WARN_IK: u32 = 1;
const WARN_IK_ELSEWHERE: u32 = 2;

#[godot_api]
impl ISkeletonModifier3D for SoldierBearing {
    fn on_notification(&mut self, what: Node3DNotification) {
        if crate::bones::parent_changed(what) {
            self.skeleton = None;
        }
    }

    fn process_modification_with_delta(&mut self, delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::SoldierBearing);
        let cfg = self.config();
        // The skeleton that runs this pass is alive: it is this node's parent. It is lent to the
        // pass (not cloned: a handle's clone is an engine call).
        let skeleton = self.skeleton.take().or_else(|| self.base().get_skeleton());
        if let Some(mut skeleton) = skeleton {
            self.pass(&mut skeleton, cfg, delta);
            self.skeleton = Some(skeleton);
        }
    }
}

impl SoldierBearing {
    /// One modifier pass on `skeleton`.
    fn pass(&mut self, gd: &mut Gd<Skeleton3D>, cfg: BearingConfig, delta: f64) {
        // The pass's reads and writes go straight to the engine (the skeleton running the pass is
        // alive; see `direct`).
        let Some(mut skeleton) = Lent::new(gd) else {
            return;
        };
        let Some(rig) = self.resolve(&skeleton) else {
            return;
        };
        let skeleton_global = skeleton.global_transform();
        let to_skeleton = affine_inverse(skeleton_global);
        let head_pose = skeleton.global_pose(rig.head);
        let head_rot = rotation_of(head_pose.basis);
        let forward = rotate_vec(head_rot, rig.head_forward);
        let desired = if self.looking && self.look_target.is_finite() {
            let target = vec3(to_skeleton * self.look_target);
            look_angles(forward, target - vec3(head_pose.origin), rig.frame.up)
                .unwrap_or(Vec2::ZERO)
        } else {
            Vec2::ZERO
        };
        self.motion.step(desired, self.saluting, &cfg, delta as f32);

        let look = self.motion.look();
        let shares = [
            if rig.chest >= 0 { cfg.chest_share } else { 0.0 },
            if rig.neck >= 0 { cfg.neck_share } else { 0.0 },
        ];
        let deltas = chain_deltas(forward, rig.frame.up, look, shares);
        if look != Vec2::ZERO {
            let bones = [rig.chest, rig.neck, rig.head];
            // Each bone's pose read once (a parent is often the bone before it; the head's was
            // read above).
            let mut known = [(rig.head, head_pose.basis); 6];
            let mut count = 1;
            let mut read = |bone: i32| {
                if bone < 0 {
                    return Basis::IDENTITY;
                }
                if let Some((_, b)) = known[..count].iter().find(|(k, _)| *k == bone) {
                    return *b;
                }
                let b = skeleton.global_pose(bone).basis;
                known[count] = (bone, b);
                count += 1;
                b
            };
            let globals = bones.map(&mut read);
            let parents = rig.parents.map(&mut read);
            let uniform = parents.iter().chain(&globals).all(|b| is_uniform(*b));
            if rig.in_order && uniform {
                // One pass of local writes: the skeleton recomputes its global poses once.
                let locals = chain_local_rotations(
                    parents.map(rotation_of),
                    globals.map(rotation_of),
                    deltas,
                );
                for (bone, local) in bones.into_iter().zip(locals) {
                    if bone >= 0 {
                        skeleton.set_pose_rotation(bone, quaternion(local));
                    }
                }
            } else {
                for (bone, d) in bones.into_iter().zip(deltas) {
                    if bone < 0 {
                        continue;
                    }
                    let g = skeleton.global_pose(bone);
                    let basis = Basis::from_quaternion(quaternion(unit_quat(d))) * g.basis;
                    skeleton.set_global_pose(bone, Transform3D::new(basis, g.origin));
                }
            }
        }
        let head_after = skeleton.global_pose(rig.head);
        self.head_global = skeleton_global * head_after.origin;
        self.head_known = true;
        self.salute(gd, skeleton_global, &rig, head_after, deltas[0], delta);
    }
}

#[godot_api]
impl SoldierBearing {
    /// Returns [member looking].
    #[func]
    pub fn is_looking(&self) -> bool {
        self.looking
    }

    /// Returns [member saluting].
    #[func]
    pub fn is_saluting(&self) -> bool {
        self.saluting
    }

    /// Sets the head bone's name (re-resolves the bones).
    #[func]
    pub fn set_head_bone(&mut self, name: GString) {
        self.head_bone = name;
        self.invalidate();
    }

    /// Sets the neck bone's name (re-resolves the bones).
    #[func]
    pub fn set_neck_bone(&mut self, name: GString) {
        self.neck_bone = name;
        self.invalidate();
    }

    /// Sets the chest bone's name (re-resolves the bones).
    #[func]
    pub fn set_chest_bone(&mut self, name: GString) {
        self.chest_bone = name;
        self.invalidate();
    }

    /// Sets [member salute_pole]; a non-finite one warns once (the default is used).
    #[func]
    pub fn set_salute_pole(&mut self, pole: Vector3) {
        self.salute_pole = pole;
        let node = self.to_gd();
        self.warnings
            .vector_within(&node, "salute_pole", pole, f32::MAX, vector3(SALUTE_POLE));
    }

    /// Sets [member look_target]; a non-finite one warns once (the head then looks ahead).
    #[func]
    pub fn set_look_target(&mut self, target: Vector3) {
        self.look_target = target;
        let node = self.to_gd();
        self.warnings
            .vector_within(&node, "look_target", target, f32::MAX, Vector3::ZERO);
    }

    /// Sets [member turn_speed]; outside its range (or NaN) it warns once, at once, and is clamped
    /// (NaN: the default).
    #[func]
    pub fn set_turn_speed(&mut self, radians_per_second: f32) {
        self.turn_speed = radians_per_second;
        let degrees_per_second = radians_per_second.to_degrees();
        let node = self.to_gd();
        let (lo, hi) = BearingParam::TurnSpeed.range();
        self.warnings.f32_within(
            &node,
            BearingParam::TurnSpeed.name(),
            degrees_per_second,
            lo,
            hi,
            BearingSettings::default().turn_speed,
        );
    }

    /// The squad's drive, each frame: where to look (`None`: ahead), whether to salute and how fast
    /// the head turns. Its values are the controller's, already checked.
    pub(crate) fn drive(&mut self, target: Option<Vector3>, saluting: bool, turn_speed: f32) {
        self.looking = target.is_some();
        if let Some(t) = target {
            self.look_target = t;
        }
        self.saluting = saluting;
        self.turn_speed = turn_speed;
    }

    /// Sets the hand bone's name (re-resolves the bones).
    #[func]
    pub fn set_hand_bone(&mut self, name: GString) {
        self.hand_bone = name;
        self.invalidate();
    }

    /// Sets the character's forward in the skeleton's space (re-resolves the bones).
    #[func]
    pub fn set_body_forward(&mut self, forward: Vector3) {
        self.body_forward = forward;
        let node = self.to_gd();
        let valid = forward == Vector3::ZERO || BodyFrame::new(vec3(forward), Vec3::Y).is_some();
        self.warnings.property(
            &node,
            "body_forward",
            forward,
            valid,
            Vector3::new(0.0, 0.0, -1.0),
            "must be a horizontal direction",
        );
        self.invalidate();
    }

    /// Sets where the hand goes in a salute (re-resolves the bones).
    #[func]
    pub fn set_salute_hand_offset(&mut self, offset: Vector3) {
        self.salute_hand_offset = offset;
        let node = self.to_gd();
        self.warnings.vector_within(
            &node,
            "salute_hand_offset",
            offset,
            1e6,
            vector3(SALUTE_HAND_OFFSET),
        );
        self.invalidate();
    }

    /// Sets the [EntwineLimbIK] the salute drives (a node path from this node).
    #[func]
    pub fn set_salute_ik_node(&mut self, path: NodePath) {
        self.salute_ik_node = path;
        self.warnings.clear(WARN_IK);
        self.warnings.clear(WARN_IK_ELSEWHERE);
    }

    /// Returns the salute's [EntwineLimbIK] path.
    #[func]
    pub fn get_salute_ik_node(&self) -> NodePath {
        self.salute_ik_node.clone()
    }

    /// Creates a [EntwineLimbIK] for the saluting arm (the grandparent and parent of [member hand_bone] →
    /// [member hand_bone]; `RightUpperArm` → `RightLowerArm` when the hand is not found) right
    /// after this node under the skeleton, sets [member salute_ik_node] to it and returns it (the
    /// existing one when [member salute_ik_node] already points at a [EntwineLimbIK]). Call it while the
    /// skeleton is not updating (e.g. from `_ready` or `_physics_process`); null without a parent
    /// skeleton.
    #[func]
    pub fn create_salute_ik(&mut self) -> Option<Gd<LimbIK>> {
        if let Some(ik) = self.ik() {
            return Some(ik);
        }
        let mut skeleton = self.base().get_parent()?.try_cast::<Skeleton3D>().ok()?;
        let [upper, lower, hand] =
            salute_arm(&skeleton, &self.hand_bone, &rig::humanoid(&skeleton));
        let mut ik = LimbIK::new_alloc();
        ik.set_name("SaluteIK");
        {
            let mut b = ik.bind_mut();
            b.set_upper_bone(upper);
            b.set_lower_bone(lower);
            b.set_end_bone(hand);
            b.set_rotation_weight(1.0);
        }
        self.own_ik = Some(ik.instance_id());
        ik.set_active(false);
        skeleton.add_child(&ik);
        let index = self.base().get_index() + 1;
        skeleton.move_child(&ik, index);
        let path = self.base().get_path_to(&ik);
        self.set_salute_ik_node(path);
        Some(ik)
    }

    /// Returns the current look, (yaw, pitch) in radians (yaw positive to the left), after rate
    /// limiting.
    #[func]
    pub fn get_look_angles(&self) -> Vector2 {
        let l = self.motion.look();
        Vector2::new(l.x, l.y)
    }

    /// Returns the salute's weight, 0 (arm down) ..= 1 (hand at the brow).
    #[func]
    pub fn get_salute_weight(&self) -> f32 {
        self.motion.salute_weight()
    }

    /// Returns true once the head bone's global position is known (after the first processed
    /// frame).
    #[func]
    pub fn has_head_position(&self) -> bool {
        self.head_known
    }

    /// Returns the head bone's global position in the last processed frame, after the look.
    #[func]
    pub fn get_head_position(&self) -> Vector3 {
        self.head_global
    }

    /// Returns the global transform the salute put the hand bone's target at in the last processed
    /// frame (identity before the first salute).
    #[func]
    pub fn get_salute_target(&self) -> Transform3D {
        self.salute_target
    }

    /// Snaps the look back to the front and the arm down at once (e.g. after a teleport).
    #[func]
    pub fn reset_bearing(&mut self) {
        self.motion.reset();
    }
}

impl SoldierBearing {
    fn invalidate(&mut self) {
        self.rig = None;
        self.resolved_for = None;
        self.warnings.clear(WARN_HEAD);
    }

    fn warn_once(&mut self, kind: u32, msg: &str) {
        if !self.warnings.mark(kind) {
            return;
        }
        let node = self.to_gd();
        match &self.squad {
            Some(squad) => {
                if squad.printed.borrow_mut().mark(kind) {
                    warnings::warn(
                        &node,
                        &format!(
                            "{msg} (printed once for squad '{}'; its other soldiers may have the \
                             same problem)",
                            squad.name
                        ),
                    );
                }
            }
            None => warnings::warn(&node, msg),
        }
    }

    /// Makes this bearing warn once per squad (see [`SquadWarnings`]).
    pub(crate) fn join_squad_warnings(&mut self, squad: SquadWarnings) {
        self.squad = Some(squad);
    }

    /// The numeric properties as set, unchecked, in the inspector's units (degrees for angles).
    fn settings_as_set(&self) -> BearingSettings {
        BearingSettings {
            turn_speed: self.turn_speed.to_degrees(),
            yaw_limit: self.yaw_limit.to_degrees(),
            pitch_limit: self.pitch_limit.to_degrees(),
            chest_share: self.chest_share,
            neck_share: self.neck_share,
            salute_time: self.salute_time,
        }
    }

    /// Returns the core config from the properties, checked by the core
    /// ([`BearingSettings::sanitized`]) again only when one of them changed: each out-of-range or
    /// non-finite property warns once with the core's text (naming it and its range; again only
    /// after a valid value) and is clamped (NaN: its default).
    fn config(&mut self) -> BearingConfig {
        let as_set = self.settings_as_set();
        let bits = as_set.to_bits();
        if let Some((_, cfg)) = self.checked.filter(|(b, _)| *b == bits) {
            return cfg;
        }
        let mut found = [None; BearingParam::ALL.len()];
        let checked = as_set.sanitized(|i| found[i.param as usize] = Some(i));
        let node = self.to_gd();
        for (param, issue) in BearingParam::ALL.into_iter().zip(found) {
            let message = || issue.map(|i| i.to_string()).unwrap_or_default();
            self.warnings
                .setting(&node, param.name(), issue.is_none(), message);
        }
        let cfg = checked.config();
        self.checked = Some((bits, cfg));
        cfg
    }

    /// Keeps this node's handle (made once: [member salute_ik_node] is looked up from it every frame).
    fn keep_me(&mut self) {
        if self.me.is_none() {
            self.me = Some(self.to_gd().upcast());
        }
    }

    fn ik(&mut self) -> Option<Gd<LimbIK>> {
        self.keep_me();
        let from = self.me.as_ref()?;
        self.salute_ik_cache.get(from, &self.salute_ik_node)
    }

    /// [`Self::ik`], the kept handle moved out of its cache (give it back with
    /// `salute_ik_cache.put_back`).
    fn take_ik(&mut self) -> Option<Gd<LimbIK>> {
        self.keep_me();
        let from = self.me.as_ref()?;
        self.salute_ik_cache.take(from, &self.salute_ik_node)
    }

    /// Returns true when [member salute_ik_node] leads to a [EntwineLimbIK] that is off (one look-up of the kept
    /// node and one direct call: see `direct`).
    fn salute_is_off(&mut self) -> bool {
        self.keep_me();
        let Some(from) = self.me.as_ref() else {
            return false;
        };
        self.salute_ik_cache
            .lend(from, &self.salute_ik_node)
            .is_some_and(|ik| !ik.is_active())
    }

    /// Raises the hand to the brow, by the salute's weight, with its [EntwineLimbIK]'s solve run inside
    /// this pass (after the look moved the head): one modifier pass for the skeleton. The EntwineLimbIK
    /// itself is kept off, so the skeleton does not run it a second time.
    fn salute(
        &mut self,
        skeleton: &mut Gd<Skeleton3D>,
        skeleton_global: Transform3D,
        rig: &Rig,
        head: Transform3D,
        chest_turn: Quat,
        delta: f64,
    ) {
        let weight = self.motion.salute_weight();
        if weight <= 0.0 && !self.saluting && self.salute_is_off() {
            // Lowered, and its LimbIK already off: a squad's soldiers between salutes.
            return;
        }
        // The kept LimbIK's handle is moved out for the salute and back after it (a clone is an
        // engine call through gdext's checks).
        let Some(mut ik) = self.take_ik() else {
            if self.saluting {
                self.warn_once(
                    WARN_IK,
                    "saluting needs salute_ik_node to point at an EntwineLimbIK (see create_salute_ik()); no salute",
                );
            }
            return;
        };
        let aim = Aim {
            skeleton_global,
            head,
            chest_turn,
            weight,
            delta,
        };
        self.salute_with(&mut ik, skeleton, rig, aim);
        self.salute_ik_cache.put_back(ik);
    }

    /// [`Self::salute`] with its EntwineLimbIK found: one binding of it for the check that it is this
    /// skeleton's, the salute's target and weights, and the solve.
    fn salute_with(
        &mut self,
        ik: &mut Gd<LimbIK>,
        skeleton: &mut Gd<Skeleton3D>,
        rig: &Rig,
        aim: Aim,
    ) {
        let target = rig.hand_in_head.map(|hand| {
            let head = Pose::new(vec3(aim.head.origin), rotation_of(aim.head.basis));
            let local = transform_scaled(salute_target(head, hand), Vector3::ONE);
            aim.skeleton_global * local
        });
        let raised = target.filter(|_| aim.weight > 0.0);
        let on = {
            let mut b = ik.bind_mut();
            let on = b.is_on(skeleton);
            if let (true, Some(target)) = (on, raised) {
                // Checked where it is set.
                let pole = salute_pole(&rig.frame, aim.chest_turn, vec3(self.salute_pole));
                b.set_target_transform(target);
                b.set_pole_direction(vector3(pole));
                b.set_position_weight(aim.weight);
                b.set_rotation_weight(aim.weight);
                b.solve_within(skeleton, aim.delta);
            }
            on
        };
        if !on {
            if self.saluting {
                self.warn_once(
                    WARN_IK_ELSEWHERE,
                    "salute_ik_node points at an EntwineLimbIK that is not a child of this node's skeleton; no salute",
                );
            }
            return;
        }
        if let Some(target) = raised {
            self.salute_target = target;
        }
        // Kept off, so that the skeleton does not run it as a modifier of its own; its switch goes
        // straight to the engine (see `direct`).
        if let Some(lent) = Lent::new(ik) {
            if lent.is_active() {
                lent.set_active(false);
            }
        }
        if target.is_none() && self.saluting {
            let msg = format!("hand_bone '{}' not found; no salute", self.hand_bone);
            self.warn_once(WARN_IK, &msg);
        }
    }
}
