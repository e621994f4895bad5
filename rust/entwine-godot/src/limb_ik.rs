//! `LimbIK`: the kit's two-bone solver as a `SkeletonModifier3D`.

use entwine_core::kit::ik;
use entwine_core::kit::{carry, chain_length, solve_limb, LimbGoal, LimbPose, PoleMemory};
use entwine_core::rig::skeleton::{self, find_limb_chain};
use entwine_core::rig::MAX_HAND_PARTS;
use godot::classes::notify::Node3DNotification;
use godot::classes::{ISkeletonModifier3D, Node3D, Skeleton3D, SkeletonModifier3D};
use godot::prelude::*;

use crate::bones::{is_uniform, SkeletonBones};
use crate::direct::Lent;
use crate::warnings::Warnings;

/// Warning kind: the chain cannot be resolved (printed once until it resolves).
const WARN_CHAIN: u32 = 0;

use crate::convert::{
    affine, affine_inverse, pose, quaternion, rotation, transform, transform_scaled, vec3,
};
use crate::rig;
use crate::scene::NodeCache;

/// Which limb a [EntwineLimbIK] bends when its bone names are left empty.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum Limb {
    /// The left arm: upper arm, forearm, hand.
    #[default]
    LeftArm,
    /// The right arm.
    RightArm,
    /// The left leg: thigh, shin, foot.
    LeftLeg,
    /// The right leg.
    RightLeg,
}

impl From<Limb> for skeleton::Limb {
    fn from(limb: Limb) -> Self {
        match limb {
            Limb::LeftArm => Self::LeftArm,
            Limb::RightArm => Self::RightArm,
            Limb::LeftLeg => Self::LeftLeg,
            Limb::RightLeg => Self::RightLeg,
        }
    }
}

/// Two-bone limb IK (an arm or a leg) applied as a skeleton modifier.
///
/// Add it as a child of a [Skeleton3D]. Each frame it bends the chain `upper_bone → lower_bone →
/// end_bone` so that the end bone reaches the target: the [member target_node] when set, else
/// [member target_transform] (global space). The elbow or knee bends toward the [member pole_node]
/// or, without one, along [member pole_direction] (skeleton space); with neither it keeps the
/// bend plane the animation gave it. The bend side is remembered from frame to frame and turns
/// toward the pole's side gradually, so an elbow never flips when the target passes in line with
/// the pole. A target out of reach makes the limb point straight at it.
///
/// [member position_weight] blends the end's position from the animated pose (0) to the target (1);
/// [member rotation_weight] blends the end bone's rotation to the target's. Godot's own
/// [member SkeletonModifier3D.influence] fades the whole modifier.
///
/// **Bones.** Leave [member upper_bone], [member lower_bone] and [member end_bone] empty (the default)
/// and the chain is the [member limb] of the humanoid found in the skeleton — by bone names in
/// Godot's humanoid profile, Blender (`upper_arm.l`, `UpperArm_L`), Mixamo (`mixamorig:LeftArm`), VRM
/// and VRoid conventions, twist bones skipped; see [method get_resolved_bones]. A name that is set
/// always wins.
///
/// A bone that is missing, or a chain that is not parent → child, gives one warning naming this
/// node's path, the skeleton and the names tried, and the modifier leaves the pose alone until the
/// chain is fixed.
///
/// **Driven by another modifier.** A [EntwineSoldierBearing]'s salute runs its [EntwineLimbIK]'s solve inside its
/// own pass, so that the skeleton runs one modifier for both: that [EntwineLimbIK] is kept inactive, and
/// its target, pole and weights show what it was last asked.
///
/// **In the editor** the modifier runs as Godot's own IK modifiers do: the limb follows its target
/// and pole while they are moved, and the editor's gizmo gives the target and the pole a handle
/// each. Like every skeleton modifier, the bent pose is not saved into the scene.
#[derive(GodotClass)]
#[class(tool, init, base = SkeletonModifier3D, rename = EntwineLimbIK)]
pub struct LimbIK {
    base: Base<SkeletonModifier3D>,

    /// The humanoid limb whose bones are used where a bone name below is empty:
    /// [constant LIMB_LEFT_ARM] (default), [constant LIMB_RIGHT_ARM], [constant LIMB_LEFT_LEG],
    /// [constant LIMB_RIGHT_LEG].
    #[export_group(name = "Chain")]
    #[export]
    #[var(set = set_limb)]
    limb: Limb,
    /// Name of the upper bone of the chain (shoulder side), e.g. `LeftUpperArm` or `LeftUpperLeg`.
    /// Empty (default): the [member limb]'s upper bone found in the skeleton.
    #[export]
    #[var(set = set_upper_bone)]
    upper_bone: GString,
    /// Name of the middle bone (elbow or knee side), a descendant of the upper bone. Empty: found.
    #[export]
    #[var(set = set_lower_bone)]
    lower_bone: GString,
    /// Name of the end bone (hand or foot), a descendant of the lower bone. This is what reaches the
    /// target. Empty: found.
    #[export]
    #[var(set = set_end_bone)]
    end_bone: GString,

    /// A node whose global transform is the target. When empty, [member target_transform] is used.
    #[export_group(name = "Target")]
    #[export(node_path = ("Node3D"))]
    #[var(set = set_target_node)]
    target_node: NodePath,
    /// The target's global transform, used when [member target_node] is empty.
    #[export]
    #[var(pub)]
    target_transform: Transform3D,

    /// A node whose global position the elbow/knee bends toward. Overrides [member pole_direction].
    #[export_group(name = "Pole")]
    #[export(node_path = ("Node3D"))]
    #[var(set = set_pole_node)]
    pole_node: NodePath,
    /// Direction, in the skeleton's space, from the upper bone toward which the elbow/knee bends.
    /// Zero keeps the bend plane of the animated pose; a non-finite one counts as zero, with one
    /// warning.
    #[export]
    #[var(pub)]
    pole_direction: Vector3,

    /// How far the end bone moves from its animated position to the target (0 = not at all, 1 = onto it).
    /// Outside 0..1 it is clamped (NaN: 1) with one warning.
    #[export_group(name = "Weights")]
    #[export(range = (ik::POSITION_WEIGHT.hint_min(), ik::POSITION_WEIGHT.hint_max(), suffix = ik::POSITION_WEIGHT.suffix()))]
    #[var(pub)]
    #[init(val = ik::POSITION_WEIGHT.default)]
    position_weight: f32,
    /// How far the end bone turns from its animated rotation to the target's rotation (0..1; outside,
    /// clamped, NaN: 0, with one warning).
    #[export(range = (ik::ROTATION_WEIGHT.hint_min(), ik::ROTATION_WEIGHT.hint_max(), suffix = ik::ROTATION_WEIGHT.suffix()))]
    #[var(pub)]
    #[init(val = ik::ROTATION_WEIGHT.default)]
    rotation_weight: f32,

    /// Bone indices `[upper, lower, end]` once resolved against the current skeleton.
    chain: Option<[i32; 3]>,
    /// The skeleton the chain was resolved for and its bone count (a change re-resolves).
    resolved_for: Option<(InstanceId, i32)>,
    /// Set after a warning so that a broken setup warns once, not every frame.
    warnings: Warnings,
    /// The chain's `[upper, lower, end]` poses (skeleton space) as they were before this modifier.
    animated: [Transform3D; 3],
    /// Last frame's bend side, so that a pole passing in line with the limb cannot flip the elbow.
    pole_memory: PoleMemory,
    /// The upper bone's parent (-1: none) when lower and end are direct children down the chain.
    upper_parent: Option<i32>,
    /// Bones that turn with the end bone (a hand made of palm bones leaving the forearm at the
    /// wrist: the humanoid's other hand parts), `-1` past the last.
    #[init(val = [-1; MAX_HAND_PARTS])]
    parts: [i32; MAX_HAND_PARTS],
    /// The nodes [member target_node] and [member pole_node] lead to.
    target_cache: NodeCache<Node3D>,
    pole_cache: NodeCache<Node3D>,
    /// This node, kept from the first pass: the per-frame checks name it in their warnings and
    /// look the target and pole paths up from it (no handle made per frame).
    me: Option<Gd<Node>>,
    /// The skeleton (this node's parent) that runs the passes, kept from the first pass until this
    /// node is moved to another parent.
    skeleton: Option<Gd<Skeleton3D>>,
    /// [member target_node] and [member pole_node] are set (not empty), as their setters last saw:
    /// a pass reads these instead of asking the engine whether each path is empty.
    target_named: bool,
    pole_named: bool,
}

#[godot_api]
impl ISkeletonModifier3D for LimbIK {
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        use crate::inspector::hide;
        hide(
            property,
            &["target_transform"],
            !self.target_node.is_empty(),
        );
        hide(property, &["pole_direction"], !self.pole_node.is_empty());
    }

    fn on_notification(&mut self, what: Node3DNotification) {
        if crate::bones::parent_changed(what) {
            self.skeleton = None;
        }
    }

    fn process_modification_with_delta(&mut self, delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::LimbIk);
        // The skeleton that runs this pass is alive: it is this node's parent. It is lent to the
        // pass (not cloned: a handle's clone is an engine call).
        let skeleton = self.skeleton.take().or_else(|| self.base().get_skeleton());
        if let Some(mut skeleton) = skeleton {
            self.pass(&mut skeleton, delta);
            self.skeleton = Some(skeleton);
        }
    }
}

impl LimbIK {
    /// Returns true when this node is a child of `skeleton` (its parent is kept from the first
    /// call or pass until it changes).
    pub(crate) fn is_on(&mut self, skeleton: &Gd<Skeleton3D>) -> bool {
        if self.skeleton.is_none() {
            self.skeleton = self.base().get_skeleton();
        }
        self.skeleton
            .as_ref()
            .is_some_and(|s| s.instance_id_unchecked() == skeleton.instance_id_unchecked())
    }

    /// Runs this modifier's solve inside another Entwine modifier's pass on `skeleton`, its
    /// parent (see [`LimbIK::is_on`]), whether this modifier is active or not: a
    /// [`SoldierBearing`](crate::formation::bearing::EntwineSoldierBearing)'s salute, one pass for the
    /// skeleton.
    pub(crate) fn solve_within(&mut self, skeleton: &mut Gd<Skeleton3D>, delta: f64) {
        self.pass(skeleton, delta);
    }

    /// One modifier pass on `skeleton`.
    fn pass(&mut self, skeleton: &mut Gd<Skeleton3D>, delta: f64) {
        // The pass's bone reads and writes go straight to the engine (the skeleton running the
        // pass is alive; see `direct`).
        let Some(mut skeleton) = Lent::new(skeleton) else {
            return;
        };
        let Some([upper, lower, end]) = self.resolve_chain(&skeleton) else {
            return;
        };
        let current = [upper, lower, end].map(|bone| skeleton.global_pose(bone));
        self.animated = current;
        let parts = self.parts;
        let part_poses = parts.map(|b| {
            if b >= 0 {
                skeleton.global_pose(b)
            } else {
                Transform3D::IDENTITY
            }
        });
        let Some(mut goal) = self.goal(&skeleton, current[0].origin) else {
            return;
        };
        let limb = LimbPose {
            upper: pose(current[0]),
            lower: pose(current[1]),
            end: pose(current[2]),
        };
        goal.pole = self.pole_memory.effective_pole(
            limb.upper.position,
            goal.target.position,
            goal.pole,
            delta as f32,
        );
        let solved = solve_limb(&limb, &goal);
        if !solved.is_finite() {
            // Nothing finite to write (the skeleton's own pose is not): leave it alone.
            return;
        }
        self.pole_memory.remember(&solved);
        let uniform = current.iter().all(|t| is_uniform(t.basis));
        match self.upper_parent {
            // A direct chain: write the three local rotations, so the skeleton recomputes the
            // chain's global poses once instead of after every write.
            Some(parent) if uniform => {
                let parent_rotation = if parent >= 0 {
                    rotation(skeleton.global_pose(parent).basis)
                } else {
                    glam::Quat::IDENTITY
                };
                let locals = solved.local_rotations(parent_rotation);
                for (bone, local) in [upper, lower, end].into_iter().zip(locals) {
                    skeleton.set_pose_rotation(bone, quaternion(local));
                }
            }
            _ => {
                for (i, (bone, new_pose)) in [
                    (upper, solved.upper),
                    (lower, solved.lower),
                    (end, solved.end),
                ]
                .into_iter()
                .enumerate()
                {
                    let scale = current[i].basis.get_scale();
                    skeleton.set_global_pose(bone, transform_scaled(new_pose, scale));
                }
            }
        }
        // The hand's other parts keep their place on the hand: moved and turned as the end bone
        // was (rotations and offsets only, so a zero-scaled bone cannot make it singular).
        for (&bone, was) in parts.iter().zip(&part_poses) {
            if bone < 0 {
                break;
            }
            if let Some(carried) = carry(limb.end, solved.end, affine(*was)) {
                skeleton.set_global_pose(bone, transform(carried));
            }
        }
    }
}

#[godot_api]
impl LimbIK {
    /// [member limb]: the left arm.
    #[constant]
    const LIMB_LEFT_ARM: i64 = Limb::LeftArm as i64;
    /// [member limb]: the right arm.
    #[constant]
    const LIMB_RIGHT_ARM: i64 = Limb::RightArm as i64;
    /// [member limb]: the left leg.
    #[constant]
    const LIMB_LEFT_LEG: i64 = Limb::LeftLeg as i64;
    /// [member limb]: the right leg.
    #[constant]
    const LIMB_RIGHT_LEG: i64 = Limb::RightLeg as i64;

    /// Sets the limb used for empty bone names (re-resolves the chain).
    #[func]
    pub fn set_limb(&mut self, limb: Limb) {
        self.limb = limb;
        self.invalidate();
    }

    /// Returns the names of the `[upper, lower, end]` bones the chain runs through (the set names,
    /// or the ones found in the skeleton), or an empty array when the chain is invalid.
    #[func]
    pub fn get_resolved_bones(&mut self) -> PackedStringArray {
        let mut out = PackedStringArray::new();
        if let Some(skeleton) = self.base().get_skeleton() {
            if let Some(chain) = self.resolve_gd(&skeleton) {
                for bone in chain {
                    out.push(&skeleton.get_bone_name(bone));
                }
            }
        }
        out
    }

    /// Sets [member target_node].
    #[func]
    pub fn set_target_node(&mut self, path: NodePath) {
        self.target_named = !path.is_empty();
        self.target_node = path;
        self.base_mut().notify_property_list_changed();
    }

    /// Sets [member pole_node].
    #[func]
    pub fn set_pole_node(&mut self, path: NodePath) {
        self.pole_named = !path.is_empty();
        self.pole_node = path;
        self.base_mut().notify_property_list_changed();
    }

    /// Sets the upper bone's name (re-resolves the chain).
    #[func]
    pub fn set_upper_bone(&mut self, name: GString) {
        self.upper_bone = name;
        self.invalidate();
    }

    /// Sets the lower bone's name (re-resolves the chain).
    #[func]
    pub fn set_lower_bone(&mut self, name: GString) {
        self.lower_bone = name;
        self.invalidate();
    }

    /// Sets the end bone's name (re-resolves the chain).
    #[func]
    pub fn set_end_bone(&mut self, name: GString) {
        self.end_bone = name;
        self.invalidate();
    }

    /// Returns true when the three bones were found in the skeleton, in parent → child order.
    #[func]
    pub fn is_chain_valid(&mut self) -> bool {
        match self.base().get_skeleton() {
            Some(skeleton) => self.resolve_gd(&skeleton).is_some(),
            None => false,
        }
    }

    /// Returns the three joints' transforms `[upper, lower, end]` after bending a chain given by their
    /// current transforms (any one space) toward `target` in the same space, with the elbow/knee toward
    /// `pole` (a point; pass the upper joint's origin for none) — the same solver this modifier runs,
    /// without a skeleton. Non-finite input returns the input.
    #[func]
    pub fn solve_chain(
        upper: Transform3D,
        lower: Transform3D,
        end: Transform3D,
        target: Transform3D,
        pole: Vector3,
        position_weight: f32,
        rotation_weight: f32,
    ) -> Array<Transform3D> {
        let limb = LimbPose {
            upper: pose(upper),
            lower: pose(lower),
            end: pose(end),
        };
        let goal = LimbGoal {
            target: pose(target),
            pole: (pole != upper.origin).then(|| vec3(pole)),
            position_weight,
            rotation_weight,
        };
        let solved = solve_limb(&limb, &goal);
        let mut out = Array::new();
        for (p, t) in [
            (solved.upper, upper),
            (solved.lower, lower),
            (solved.end, end),
        ] {
            out.push(transform_scaled(p, t.basis.get_scale()));
        }
        out
    }

    /// Returns the end bone's pose in the skeleton's space as the animation (and the modifiers before
    /// this one) left it in the last processed frame, before this modifier moved it.
    #[func]
    pub fn get_animated_end_transform(&self) -> Transform3D {
        self.animated[2]
    }

    /// Returns the upper bone's position in the skeleton's space before this modifier, in the last
    /// processed frame.
    #[func]
    pub fn get_animated_upper_position(&self) -> Vector3 {
        self.animated[0].origin
    }

    /// Returns the chain's reach: the upper plus the lower segment length in the rest pose, in metres
    /// of the skeleton's space (0 when the chain is invalid).
    #[func]
    pub fn get_chain_length(&mut self) -> f32 {
        let Some(skeleton) = self.base().get_skeleton() else {
            return 0.0;
        };
        let Some([upper, lower, end]) = self.resolve_gd(&skeleton) else {
            return 0.0;
        };
        chain_length([upper, lower, end].map(|b| vec3(skeleton.get_bone_global_rest(b).origin)))
    }
}

impl LimbIK {
    /// For the editor's gizmo: the skeleton's global transform, the upper bone's global position
    /// and the chain's reach in the world, when the chain resolves.
    pub(crate) fn editor_geometry(&mut self) -> Option<(Transform3D, Vector3, f32)> {
        let skeleton = self.base().get_skeleton()?;
        let [upper, lower, end] = self.resolve_gd(&skeleton)?;
        let frame = skeleton.get_global_transform();
        let reach = chain_length(
            [upper, lower, end].map(|b| vec3(frame * skeleton.get_bone_global_rest(b).origin)),
        );
        let root = frame * skeleton.get_bone_global_pose(upper).origin;
        Some((frame, root, reach))
    }

    /// For the editor's gizmo: the target and pole node paths.
    pub(crate) fn editor_paths(&self) -> (NodePath, NodePath) {
        (self.target_node.clone(), self.pole_node.clone())
    }

    fn invalidate(&mut self) {
        self.pole_memory.reset();
        self.chain = None;
        self.resolved_for = None;
        self.warnings.clear(WARN_CHAIN);
    }

    /// Returns the chain's bone indices, resolving (and warning once) when the skeleton changed.
    fn resolve_chain(&mut self, lent: &Lent<Skeleton3D>) -> Option<[i32; 3]> {
        let key = lent.rig_key();
        if self.resolved_for == Some(key) {
            return self.chain;
        }
        self.resolved_for = Some(key);
        let skeleton = lent.object();
        let names = [&self.upper_bone, &self.lower_bone, &self.end_bone].map(|n| n.to_string());
        let names = [0, 1, 2].map(|i| names[i].as_str());
        let found = find_limb_chain(&SkeletonBones(skeleton), names, self.limb.into(), || {
            rig::humanoid(skeleton)
        });
        self.chain = match found {
            Ok(found) => {
                self.parts = found.parts;
                self.upper_parent = found.upper_parent;
                self.warnings.clear(WARN_CHAIN);
                Some(found.bones)
            }
            Err(why) => {
                self.parts = [-1; MAX_HAND_PARTS];
                let node = self.to_gd();
                let msg =
                    format!("{why}; the modifier leaves the pose alone until the chain is fixed.");
                self.warnings.once(&node, WARN_CHAIN, &msg);
                None
            }
        };
        self.chain
    }

    /// [`Self::resolve_chain`] outside a pass (`None` for a freed skeleton).
    fn resolve_gd(&mut self, skeleton: &Gd<Skeleton3D>) -> Option<[i32; 3]> {
        self.resolve_chain(&Lent::new(skeleton)?)
    }

    /// Returns the goal in the skeleton's space (the upper bone at `shoulder` in it), or `None`
    /// when the target is unusable.
    fn goal(&mut self, skeleton: &Lent<Skeleton3D>, shoulder: Vector3) -> Option<LimbGoal> {
        if self.me.is_none() {
            self.me = Some(self.to_gd().upcast());
        }
        let node = self.me.as_ref()?;
        let position_weight = self
            .warnings
            .param(node, &ik::POSITION_WEIGHT, self.position_weight);
        let rotation_weight = self
            .warnings
            .param(node, &ik::ROTATION_WEIGHT, self.rotation_weight);
        let pole_direction = self.warnings.vector_within(
            node,
            "pole_direction",
            self.pole_direction,
            f32::MAX,
            Vector3::ZERO,
        );
        let to_skeleton = affine_inverse(skeleton.global_transform());
        let target_global = if !self.target_named {
            self.target_transform
        } else {
            self.target_cache
                .lend(node, &self.target_node)?
                .global_transform()
        };
        let target = to_skeleton * target_global;
        if !target.origin.is_finite() || !target.basis.is_finite() {
            return None;
        }
        let pole = if self.pole_named {
            self.pole_cache
                .lend(node, &self.pole_node)
                .map(|n| vec3(to_skeleton * n.global_transform().origin))
        } else if pole_direction != Vector3::ZERO {
            Some(vec3(shoulder + pole_direction))
        } else {
            None
        };
        Some(LimbGoal {
            target: pose(target),
            pole,
            position_weight,
            rotation_weight,
        })
    }
}
