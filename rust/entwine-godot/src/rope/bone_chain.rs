//! `RopeBoneChain`: a chain of skeleton bones skinned to a `RopeSimulation`, as a `SkeletonModifier3D`.

use entwine_core::kit::{draw, Pose};
use entwine_core::rope::{BoneChain, ChainError, ChainFit};
use glam::Vec3;
use godot::classes::base_material_3d::{Flags, ShadingMode};
use godot::classes::mesh::PrimitiveType;
use godot::classes::{
    ISkeletonModifier3D, ImmediateMesh, Material, MeshInstance3D, Skeleton3D, SkeletonModifier3D,
    StandardMaterial3D,
};
use godot::prelude::*;

use crate::direct::{Alive, Lent};
use crate::warnings::Warnings;

use super::RopeSimulation;
use crate::convert::{affine_inverse, pose, transform_scaled, vec3, vector3};

/// How [EntwineRopeBoneChain] spreads the bones along the rope.
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum RopeChainFit {
    /// The root sits on the rope's start and the tip on its end, the bones in between at equal
    /// distances along the rope: the chain stretches with the rope (a skinned rope mesh, a leash).
    #[default]
    Stretch,
    /// Each bone sits at its rest distance (along the chain) from the rope's start: the chain keeps
    /// its length (a braid or a tail); past the end of a shorter rope the bones continue straight.
    RestLength,
}

/// Drives a chain of bones of a [Skeleton3D] with a [RopeSimulation]: a braid, a tail, a leash or a
/// skinned rope mesh follows the simulated rope.
///
/// Add it as a child of the [Skeleton3D], set [member rope], and name the chain with [member
/// root_bone] and [member tip_bone] (the tip must descend from the root; every bone between them is
/// part of the chain). Each frame, after the animation, the rope's points (as drawn this frame,
/// interpolated between physics steps like the rope's tube) are resampled by arc length to one point
/// per bone — any number of bones works with any number of rope points — and each bone is placed on
/// its point with its axis (the direction to the next bone in the rest pose) along the rope.
///
/// The twist around the rope is carried down the chain from the root's animated orientation by the
/// smallest rotation at each bone (a parallel-transport frame): no up vector, so the chain never flips
/// when the rope hangs straight, points up or loops; where the rope folds back on itself a bone keeps
/// its previous twist rather than spin. Resampling is continuous in the rope's shape, so the chain does
/// not pop when the rope grows or shrinks. Each bone keeps its scale.
///
/// The rope follows its anchor one physics frame late (see [RopeSimulation]). A braid or tail whose
/// root bone is where the rope is anchored can turn on [member attach_root]: the root stays where the
/// animation put it, and the gap to the rope fades out toward the tip.
///
/// Godot's own [member SkeletonModifier3D.influence] blends the result with the animated pose.
///
/// Bad input — no rope, a missing bone, a tip that does not descend from the root, a rope cut down to
/// fewer than 2 points, NaN positions — gives one warning naming the node and what to fix, and the
/// modifier leaves the skeleton alone until it is fixed ([signal following_stopped]).
///
/// Cost: nothing is allocated per frame; the work is linear in the bones plus the rope's points.
#[derive(GodotClass)]
#[class(init, base = SkeletonModifier3D, rename = EntwineRopeBoneChain)]
pub struct RopeBoneChain {
    base: Base<SkeletonModifier3D>,

    /// The rope the chain follows (a [RopeSimulation] anywhere in the scene).
    #[export_group(name = "Rope")]
    #[export]
    #[var(set = set_rope)]
    rope: Option<Gd<RopeSimulation>>,
    /// How the bones are spread along the rope: [constant FIT_STRETCH] over its whole length, or
    /// [constant FIT_REST_LENGTH] at their rest spacing from its start.
    #[export]
    #[var(set = set_fit)]
    fit: RopeChainFit,
    /// Keep the root bone where the animation puts it; the offset between it and the rope's start
    /// (the rope trails its anchor by a physics frame) fades out linearly toward the tip. For a braid
    /// or tail hung from the bone the rope is anchored to. Off: every bone sits on the rope.
    #[export]
    #[var(get = is_root_attached)]
    attach_root: bool,

    /// First bone of the chain (nearest the rope's anchor), e.g. `Braid1`.
    #[export_group(name = "Chain")]
    #[export]
    #[var(set = set_root_bone)]
    root_bone: GString,
    /// Last bone of the chain (at the rope's far end); must be a descendant of [member root_bone].
    #[export]
    #[var(set = set_tip_bone)]
    tip_bone: GString,

    /// Draw the bones' targets on the rope as a line with a cross at each bone (on top of everything).
    #[export_group(name = "Debug")]
    #[export]
    #[var(get = is_debug_draw_enabled, set = set_debug_draw)]
    debug_draw: bool,

    /// Bone indices root → tip once resolved.
    bones: Vec<i32>,
    /// The root's parent bone (-1: none).
    root_parent: i32,
    chain: Option<BoneChain>,
    /// The skeleton and bone count the chain was resolved for (a change re-resolves).
    resolved_for: Option<(InstanceId, i32)>,
    /// Rope points in the skeleton's space (scratch, sized to the rope's capacity).
    points: Vec<Vec3>,
    /// Per bone: its global scale this frame (scratch).
    scales: Vec<Vector3>,
    following: bool,
    warnings: Warnings,
    debug: Option<(Gd<MeshInstance3D>, Gd<ImmediateMesh>, Gd<Material>)>,
}

/// Warning kinds (see [`Warnings`]): each kind of bad input warns once until it is fixed.
mod warn {
    pub const ROPE: u32 = 0;
    pub const CHAIN: u32 = 1;
    pub const POINTS: u32 = 2;
    pub const NOT_FINITE: u32 = 3;
}

#[godot_api]
impl ISkeletonModifier3D for RopeBoneChain {
    fn process_modification_with_delta(&mut self, _delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::RopeBoneChain);
        match self.modify() {
            Ok(()) => {
                self.warnings.clear_all();
                if !self.following {
                    self.following = true;
                    let count = self.bones.len() as i32;
                    self.signals().following_started().emit(count);
                }
            }
            Err(None) => {}
            Err(Some((bit, why))) => {
                self.hide_debug();
                let node = self.to_gd();
                let msg = format!("{why}; the bones are left alone until it is fixed.");
                self.warnings.once(&node, bit, &msg);
                if let Some(chain) = self.chain.as_mut() {
                    chain.reset_history();
                }
                if self.following {
                    self.following = false;
                    self.refresh_skin();
                    self.signals()
                        .following_stopped()
                        .emit(&GString::from(why.as_str()));
                }
            }
        }
    }

    fn exit_tree(&mut self) {
        self.resolved_for = None;
    }
}

#[godot_api]
impl RopeBoneChain {
    /// Returns [member attach_root].
    #[func]
    pub fn is_root_attached(&self) -> bool {
        self.attach_root
    }

    /// Returns [member debug_draw].
    #[func]
    pub fn is_debug_draw_enabled(&self) -> bool {
        self.debug_draw
    }

    /// Emitted when the chain starts following the rope (the first good frame, or the first after a
    /// problem was fixed), with the number of bones in the chain.
    #[signal]
    fn following_started(bone_count: i32);
    /// Emitted when the chain stops following the rope because of bad input, with the reason (the
    /// same text as the warning).
    #[signal]
    fn following_stopped(reason: GString);

    /// [member fit]: the bones spread over the whole rope, root on its start, tip on its end.
    #[constant]
    const FIT_STRETCH: i64 = RopeChainFit::Stretch as i64;
    /// [member fit]: the bones at their rest spacing from the rope's start.
    #[constant]
    const FIT_REST_LENGTH: i64 = RopeChainFit::RestLength as i64;

    /// Sets the rope to follow.
    #[func]
    pub fn set_rope(&mut self, rope: Option<Gd<RopeSimulation>>) {
        self.rope = rope;
        self.warnings.clear(warn::ROPE);
        if let Some(chain) = self.chain.as_mut() {
            chain.reset_history();
        }
    }

    /// Sets how the bones are spread along the rope.
    #[func]
    pub fn set_fit(&mut self, fit: RopeChainFit) {
        self.fit = fit;
    }

    /// Sets the root bone's name (re-resolves the chain).
    #[func]
    pub fn set_root_bone(&mut self, name: GString) {
        self.root_bone = name;
        self.invalidate();
    }

    /// Sets the tip bone's name (re-resolves the chain).
    #[func]
    pub fn set_tip_bone(&mut self, name: GString) {
        self.tip_bone = name;
        self.invalidate();
    }

    /// Turns the debug drawing on or off.
    #[func]
    pub fn set_debug_draw(&mut self, on: bool) {
        self.debug_draw = on;
        if !on {
            if let Some((mut node, _, _)) = self.debug.take() {
                node.queue_free();
            }
        }
    }

    /// Returns the chain's bone indices, root first (empty when the chain is not valid).
    #[func]
    pub fn get_chain_bones(&mut self) -> PackedInt32Array {
        match self.base().get_skeleton() {
            Some(skeleton) if Lent::new(&skeleton).is_some_and(|s| self.resolve(&s).is_ok()) => {
                self.bones.iter().copied().collect()
            }
            _ => PackedInt32Array::new(),
        }
    }

    /// Returns true while the chain follows the rope (the last processed frame posed the bones).
    #[func]
    pub fn is_following(&self) -> bool {
        self.following
    }

    /// Returns where the last processed frame put each bone, root first, in world space (allocates:
    /// for scripts and tools).
    #[func]
    pub fn get_bone_targets(&self) -> PackedVector3Array {
        let (Some(chain), Some(skeleton)) = (self.chain.as_ref(), self.base().get_skeleton())
        else {
            return PackedVector3Array::new();
        };
        let to_world = skeleton.get_global_transform();
        chain
            .poses()
            .iter()
            .map(|p| to_world * vector3(p.position))
            .collect()
    }
}

/// A problem to warn about (its warning slot and the message), or `None` for "not ready yet, wait".
type Problem = Option<(u32, String)>;

/// The warning for a chain the solver refused, naming the rope.
fn chain_problem(e: ChainError, rope: &Gd<RopeSimulation>) -> Problem {
    let bit = match e {
        ChainError::TooFewPoints => warn::POINTS,
        ChainError::TooFewBones => warn::CHAIN,
        ChainError::BadPoint | ChainError::BadReference => warn::NOT_FINITE,
    };
    let rope_name = rope.get_name();
    Some((bit, format!("{} (rope '{rope_name}')", e.describe())))
}

/// Writes the solved bones' local poses, parent first, skipping a bone whose pose is not finite.
fn write_local_poses(
    poses: &mut Lent<Skeleton3D>,
    mut parent: Transform3D,
    bones: &[i32],
    solved: &[Pose],
    scales: &[Vector3],
) {
    for ((&bone, target), &scale) in bones.iter().zip(solved).zip(scales) {
        let global = transform_scaled(*target, scale);
        let local = affine_inverse(parent) * global;
        if !(local.origin.is_finite() && local.basis.is_finite()) {
            continue;
        }
        poses.set_pose_position(bone, local.origin);
        let rotation = crate::convert::quaternion(crate::convert::rotation(local.basis));
        poses.set_pose_rotation(bone, rotation);
        parent = global;
    }
}

impl RopeBoneChain {
    fn invalidate(&mut self) {
        self.resolved_for = None;
        self.chain = None;
        self.warnings.clear(warn::CHAIN);
    }

    /// Poses the chain on the rope for this frame.
    fn modify(&mut self) -> Result<(), Problem> {
        let Some(skeleton) = self.base().get_skeleton() else {
            return Err(None);
        };
        // The pass's bone reads and writes go straight to the engine (the skeleton running the
        // pass is alive; see `direct`).
        let Some(mut poses) = Lent::new(&skeleton) else {
            return Err(None);
        };
        self.resolve(&poses)
            .map_err(|why| Some((warn::CHAIN, why)))?;
        let rope = self.live_rope()?;
        // The rope's points in the skeleton's space.
        let n = self.rope_points(&rope, poses.global_transform())?;
        let root = poses.global_pose(self.bones[0]);
        if !(root.basis.is_finite() && root.origin.is_finite() && root.basis.determinant() != 0.0) {
            return Err(Some((
                warn::NOT_FINITE,
                format!("the pose of root_bone '{}' is not finite", self.root_bone),
            )));
        }
        let root = pose(root);
        for (slot, &bone) in self.scales.iter_mut().zip(&self.bones) {
            *slot = poses.global_pose(bone).basis.get_scale();
        }
        let fit = match self.fit {
            RopeChainFit::Stretch => ChainFit::Stretch,
            RopeChainFit::RestLength => ChainFit::RestLength,
        };
        let Some(chain) = self.chain.as_mut() else {
            return Err(None);
        };
        chain.reserve_points(self.points.len());
        let solved = match chain.solve(&self.points[..n], root, self.attach_root, fit) {
            Ok(poses) => poses,
            Err(e) => return Err(chain_problem(e, &rope)),
        };

        // Write local poses, parent first: each bone's parent is the previous chain bone, whose new
        // global transform is known, so the skeleton recomputes the chain once.
        let parent = if self.root_parent >= 0 {
            poses.global_pose(self.root_parent)
        } else {
            Transform3D::IDENTITY
        };
        write_local_poses(&mut poses, parent, &self.bones, solved, &self.scales);
        if self.debug_draw {
            self.draw_debug(&skeleton);
        }
        Ok(())
    }

    /// The rope the chain follows, when it is set, alive and in the scene tree.
    fn live_rope(&self) -> Result<Gd<RopeSimulation>, Problem> {
        let rope = self.rope.clone().filter(|r| r.alive());
        let Some(rope) = rope else {
            return Err(Some((
                warn::ROPE,
                "rope is not set (assign a RopeSimulation)".to_string(),
            )));
        };
        if !rope.is_inside_tree() {
            return Err(Some((
                warn::ROPE,
                format!("rope '{}' is not in the scene tree", rope.get_name()),
            )));
        }
        Ok(rope)
    }

    /// Reads the rope's points into the skeleton's space; returns how many there are.
    fn rope_points(
        &mut self,
        rope: &Gd<RopeSimulation>,
        to_world: Transform3D,
    ) -> Result<usize, Problem> {
        let det = to_world.basis.determinant();
        if !(det.is_finite() && det.abs() > 1e-12 && to_world.origin.is_finite()) {
            return Err(Some((
                warn::NOT_FINITE,
                "the skeleton's global transform is not finite or has zero scale".to_string(),
            )));
        }
        let to_skeleton = affine_inverse(to_world);
        let n = {
            let rope = rope.bind();
            let capacity = rope.point_capacity();
            if capacity == 0 {
                return Err(None); // not built yet (it builds when it enters the tree)
            }
            if self.points.len() < capacity {
                self.points.resize(capacity, Vec3::ZERO);
            }
            rope.interpolated_points(&mut self.points)
        };
        for p in &mut self.points[..n] {
            *p = vec3(to_skeleton * vector3(*p));
        }
        Ok(n)
    }

    /// Resolves the chain's bones against `skeleton` when it (or its bone count) changed.
    fn resolve(&mut self, lent: &Lent<Skeleton3D>) -> Result<(), String> {
        let key = lent.rig_key();
        let skeleton = lent.object();
        if self.resolved_for == Some(key) {
            return if self.chain.is_some() {
                Ok(())
            } else {
                Err(self.chain_problem(skeleton))
            };
        }
        self.resolved_for = Some(key);
        self.chain = None;
        self.bones.clear();
        let (root, tip) = self.find_chain(skeleton)?;
        let mut bone = tip;
        while bone != root {
            self.bones.push(bone);
            bone = skeleton.get_bone_parent(bone);
        }
        self.bones.push(root);
        self.bones.reverse();
        self.root_parent = skeleton.get_bone_parent(root);
        let rest: Vec<Pose> = self
            .bones
            .iter()
            .map(|&b| pose(skeleton.get_bone_global_rest(b)))
            .collect();
        self.scales = vec![Vector3::ONE; self.bones.len()];
        self.chain = Some(BoneChain::new(&rest));
        Ok(())
    }

    /// Returns why the chain cannot be resolved (for a skeleton that was already checked).
    fn chain_problem(&self, skeleton: &Gd<Skeleton3D>) -> String {
        self.find_chain(skeleton).err().unwrap_or_default()
    }

    /// Returns the root and tip bone indices, or why they do not form a chain.
    fn find_chain(&self, skeleton: &Gd<Skeleton3D>) -> Result<(i32, i32), String> {
        let skeleton_name = skeleton.get_name();
        let find = |property: &str, name: &GString| {
            if name.is_empty() {
                return Err(format!(
                    "{property} is empty (name a bone of skeleton '{skeleton_name}')"
                ));
            }
            let index = skeleton.find_bone(name);
            if index < 0 {
                Err(format!(
                    "{property} '{name}' is not a bone of skeleton '{skeleton_name}'"
                ))
            } else {
                Ok(index)
            }
        };
        let root = find("root_bone", &self.root_bone)?;
        let tip = find("tip_bone", &self.tip_bone)?;
        // The core's bounded walk: a malformed skeleton cannot loop forever.
        if crate::bones::is_ancestor(skeleton, root, tip) {
            return Ok((root, tip));
        }
        Err(format!(
            "tip_bone '{}' is not a descendant of root_bone '{}' (the chain runs root → tip and needs at least two bones)",
            self.tip_bone, self.root_bone
        ))
    }

    /// Makes the skeleton show its animated pose again once this modifier stops writing: Godot skips
    /// updating the skin of a skeleton whose pose did not change, which would leave the last rope pose
    /// on screen. Rewriting one bone's own pose changes nothing but marks the pose changed.
    fn refresh_skin(&mut self) {
        let Some(mut skeleton) = self.base().get_skeleton() else {
            return;
        };
        if skeleton.get_bone_count() > 0 {
            let position = skeleton.get_bone_pose_position(0);
            skeleton.set_bone_pose_position(0, position);
        }
    }

    fn hide_debug(&mut self) {
        if let Some((node, _, _)) = self.debug.as_mut() {
            node.set_visible(false);
        }
    }

    /// Draws the solved targets (line + crosses) in the skeleton's space.
    fn draw_debug(&mut self, skeleton: &Gd<Skeleton3D>) {
        if self.debug.is_none() {
            let mesh = ImmediateMesh::new_gd();
            let mut material = StandardMaterial3D::new_gd();
            material.set_shading_mode(ShadingMode::UNSHADED);
            material.set_flag(Flags::DISABLE_DEPTH_TEST, true);
            material.set_albedo(Color::from_rgb(1.0, 0.85, 0.1));
            let mut node = MeshInstance3D::new_alloc();
            node.set_name("RopeBoneChainDebug");
            node.set_mesh(&mesh);
            node.set_as_top_level(true);
            self.base_mut().add_child(&node);
            self.debug = Some((node, mesh, material.upcast()));
        }
        let Some(chain) = self.chain.as_ref() else {
            return;
        };
        let Some((node, mesh, material)) = self.debug.as_mut() else {
            return;
        };
        node.set_visible(true);
        node.set_global_transform(skeleton.get_global_transform());
        mesh.clear_surfaces();
        mesh.surface_begin_ex(PrimitiveType::LINES)
            .material(&*material)
            .done();
        let poses = chain.poses();
        let size = 0.02;
        for (i, p) in poses.iter().enumerate() {
            let at = vector3(p.position);
            if let Some(next) = poses.get(i + 1) {
                mesh.surface_add_vertex(at);
                mesh.surface_add_vertex(vector3(next.position));
            }
            for (a, b) in draw::star(p.position, size) {
                mesh.surface_add_vertex(vector3(a));
                mesh.surface_add_vertex(vector3(b));
            }
        }
        mesh.surface_end();
    }
}
