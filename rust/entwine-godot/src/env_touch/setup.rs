//! Setup: resolves the character, skeleton and arm bones, measures the character for the core's
//! `calibrate`, creates the IK modifiers and query objects; and keeps the core's config in sync.

use entwine_core::env_touch::node::{
    arm_bones, check_mask, RestRig, SetupIssue, ShoulderMemory, ARM_PROPERTIES,
};
use entwine_core::env_touch::{
    calibrate, character_size, hand_axes, EnvTouch, Measurements, TouchConfig, ELBOW_POLES,
};
use entwine_core::rig::{Humanoid, Role as RigRole, Side as RigSide};
use glam::Vec3;
use godot::classes::{
    BoxShape3D, CharacterBody3D, CollisionObject3D, Node3D, PhysicsRayQueryParameters3D,
    PhysicsShapeQueryParameters3D, RigidBody3D, Skeleton3D,
};
use godot::prelude::*;

use super::frame::set_ik;
use super::{EnvironmentInteractionStateMachine, Rig, WARN_COLLIDER, WARN_CONFIG};
use crate::convert::{affine, affine_inverse, vec3, vector3};
use crate::direct::Alive;
use crate::limb_ik::LimbIK;
use crate::warnings::key_of;

impl EnvironmentInteractionStateMachine {
    /// Marks the setup for rebuilding on the next physics frame.
    pub(super) fn invalidate(&mut self) {
        self.dirty = true;
    }

    /// Each hand's `(palm, finger)` axes in its bone's space: the set [member palm_axis] /
    /// [member finger_axis] for both hands, else (zero) the ones found in the rig.
    pub(super) fn effective_hand_axes(&self) -> [(Vec3, Vec3); 2] {
        hand_axes(
            vec3(self.palm_axis),
            vec3(self.finger_axis),
            self.hand_axes.unwrap_or([(Vec3::Z, Vec3::Y); 2]),
        )
    }

    /// Rebuilds the core configuration from the properties when one changed, warning about the
    /// first bad value.
    pub(super) fn sync_config(&mut self) {
        let axes = self.effective_hand_axes();
        let k = self.rig.as_ref().map_or(1.0, |rig| rig.proportion);
        let config = TouchConfig {
            shoulder_height: self.core.config().shoulder_height,
            waist_height: self.core.config().waist_height,
            surface_offset: self.surface_offset,
            side_switch_margin: self.side_switch_margin,
            reset_duration: self.reset_duration,
            reset_blend_duration: self.reset_blend_duration,
            reset_rotation_speed: self.reset_rotation_speed,
            approach_distance: self.approach_distance,
            approach_weight: self.approach_weight,
            approach_rotation_weight: self.approach_rotation_weight,
            approach_blend_duration: self.approach_blend_duration,
            approach_duration: self.approach_duration,
            approach_rotation_speed: self.approach_rotation_speed,
            rise_distance: self.rise_distance,
            rise_weight: self.rise_weight,
            rise_blend_duration: self.rise_blend_duration,
            rise_rotation_speed: self.rise_rotation_speed,
            normal_ray_length: self.normal_ray_length,
            touch_distance: self.touch_distance,
            touch_min_time: self.touch_min_time,
            touch_duration: self.touch_duration,
            moving_away_offset: self.moving_away_offset,
            jump_speed: self.jump_speed,
            palm_axis: axes[0].0,
            finger_axis: axes[0].1,
            right_palm_axis: axes[1].0,
            right_finger_axis: axes[1].1,
            persistent_touch: self.touch_persistent,
        }
        .proportioned(k);
        if self.last_config == Some(config) {
            return;
        }
        self.last_config = Some(config);
        match config.check() {
            Some(issue) => {
                let node = self.to_gd();
                let key = key_of(issue.param.name());
                self.warnings
                    .on_change(&node, WARN_CONFIG, key, &issue.to_string());
            }
            None => self.warnings.clear_keys(WARN_CONFIG),
        }
        self.core.set_config(config);
    }

    /// Resolves the character, skeleton and bones, sizes the volume and creates the IK modifiers.
    pub(super) fn setup(&mut self) -> Result<Rig, SetupIssue> {
        let (character, skeleton) = self.find_character()?;
        let (humanoid, bones) = self.find_arm_bones(&skeleton)?;
        check_mask(self.interactable_mask)?;
        let (body_height, centre) = self.character_size(&character)?;
        // Heights and rest poses in the character's frame, read once ("locked") from the rest pose.
        let to_character =
            affine_inverse(character.get_global_transform()) * skeleton.get_global_transform();
        let rest_of = |s: usize, k: usize| affine(skeleton.get_bone_global_rest(bones[s][k]));
        let at_rest = RestRig::new(
            &humanoid,
            affine(to_character),
            [rest_of(0, 0), rest_of(1, 0)],
            [rest_of(0, 2), rest_of(1, 2)],
        );
        let calibration = calibrate(&Measurements {
            set_height: self.character_height,
            rig_height: at_rest.rig_height,
            body_height,
            centre,
            shoulder_height: at_rest.shoulder_height,
            world_scale: vec3(character.get_global_transform().basis.get_scale()),
            auto_proportions: self.auto_proportions,
        })
        .map_err(SetupIssue::Calibration)?;
        let volume = calibration.volume;
        let rest = at_rest.rest_targets(calibration.world_scale);
        // Palm and finger axes in each hand bone's own space, from the rig's rest pose.
        self.hand_axes = Some(at_rest.hand_axes);
        self.shoulders = ShoulderMemory::new(at_rest.shoulders);
        let mut config = *self.core.config();
        config.shoulder_height = calibration.shoulder_height;
        config.waist_height = calibration.waist_height;
        self.core = EnvTouch::new(config, rest);
        self.last_config = None;

        let iks = add_arm_iks(&skeleton, bones, &humanoid);

        let volume_local = Transform3D::new(Basis::IDENTITY, vector3(volume.centre));
        self.make_queries(&character, volume.size * calibration.world_scale);
        self.warnings.clear_keys(WARN_COLLIDER);
        self.colliders.clear();
        self.velocity = Default::default();
        Ok(Rig {
            character_body: character.clone().try_cast::<CharacterBody3D>().ok(),
            rigid_body: character.clone().try_cast::<RigidBody3D>().ok(),
            character,
            skeleton,
            shoulders: [bones[0][0], bones[1][0]],
            iks,
            volume_local,
            volume_size: volume.size,
            proportion: calibration.proportion,
        })
    }

    /// Finds the character node and its skeleton (the set one, else the character's first).
    fn find_character(&self) -> Result<(Gd<Node3D>, Gd<Skeleton3D>), SetupIssue> {
        let character = self
            .base()
            .try_get_node_as::<Node3D>(&self.character_node)
            .ok_or_else(|| SetupIssue::NoCharacter(self.character_node.to_string()))?;
        let skeleton = if self.skeleton_node.is_empty() {
            crate::scene::first_descendant::<Skeleton3D>(&character.clone().upcast())
                .ok_or_else(|| SetupIssue::NoSkeleton(character.get_name().to_string()))?
        } else {
            self.base()
                .try_get_node_as::<Skeleton3D>(&self.skeleton_node)
                .ok_or_else(|| SetupIssue::NotASkeleton(self.skeleton_node.to_string()))?
        };
        Ok((character, skeleton))
    }

    /// Finds each arm's upper, lower and hand bone (named, else found in the rig) and the rig.
    fn find_arm_bones(
        &self,
        skeleton: &Gd<Skeleton3D>,
    ) -> Result<(Humanoid, [[i32; 3]; 2]), SetupIssue> {
        let lists = [&self.left_arm_bones, &self.right_arm_bones].map(|list| {
            list.as_slice()
                .iter()
                .map(GString::to_string)
                .collect::<Vec<_>>()
        });
        let arms = [
            arm_bones(&lists[0], ARM_PROPERTIES[0])?,
            arm_bones(&lists[1], ARM_PROPERTIES[1])?,
        ];
        let humanoid = crate::rig::humanoid(skeleton);
        let mut bones = [[0i32; 3]; 2];
        for (side, names) in arms.into_iter().enumerate() {
            let property = ARM_PROPERTIES[side];
            let roles = RigRole::arm([RigSide::Left, RigSide::Right][side]);
            for (k, name) in names.into_iter().enumerate() {
                let name = GString::from(name);
                bones[side][k] = crate::rig::pick(skeleton, "bone", &name, roles[k], &humanoid)
                    .map_err(|why| SetupIssue::Bone(property, why))?;
            }
        }
        Ok((humanoid, bones))
    }

    /// Creates the touch volume's shape query and the surface ray, both skipping the character.
    fn make_queries(&mut self, character: &Gd<Node3D>, box_size: f32) {
        self.exclude = Array::new();
        if let Ok(body) = character.clone().try_cast::<CollisionObject3D>() {
            self.exclude.push(body.get_rid());
        }
        let mut query = PhysicsShapeQueryParameters3D::new_gd();
        let mut box_shape = BoxShape3D::new_gd();
        box_shape.set_size(Vector3::splat(box_size));
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
    }

    /// Returns the character's height (m) and its collider's centre in its own frame.
    fn character_size(&self, character: &Gd<Node3D>) -> Result<(f32, Vec3), SetupIssue> {
        let from_shape = crate::scene::collider(character)
            .and_then(|(node, height)| Some((height?, vec3(node.get_position()))));
        character_size(self.character_height, from_shape)
            .ok_or_else(|| SetupIssue::NoHeight(character.get_name().to_string()))
    }

    /// Frees what setup created.
    pub(super) fn teardown(&mut self) {
        if let Some(rig) = self.rig.take() {
            for ik in rig.iks {
                if ik.alive() {
                    ik.upcast::<Node>().queue_free();
                }
            }
        }
        if let Some((mesh, _)) = self.debug.take() {
            if mesh.alive() {
                mesh.upcast::<Node>().queue_free();
            }
        }
        self.colliders.clear();
    }
}

/// Creates both arms' IK modifiers (inactive, elbows pointing out) as children of the skeleton.
fn add_arm_iks(
    skeleton: &Gd<Skeleton3D>,
    bones: [[i32; 3]; 2],
    humanoid: &Humanoid,
) -> [Gd<LimbIK>; 2] {
    let iks = [0, 1].map(|s| {
        let mut ik = LimbIK::new_alloc();
        let side = ["Left", "Right"][s];
        ik.set_name(&format!("EnvTouch{side}ArmIK"));
        let [upper, lower, end] = bones[s].map(|b| skeleton.get_bone_name(b));
        {
            let mut b = ik.bind_mut();
            b.set_upper_bone(upper);
            b.set_lower_bone(lower);
            b.set_end_bone(end);
            // Elbow out, down and a little back, in the character's axes of the rig found.
            b.set_pole_direction(vector3(humanoid.to_skeleton(ELBOW_POLES[s])));
            set_ik(&mut b, Transform3D::IDENTITY, 0.0, 0.0);
        }
        ik.set_active(false);
        ik
    });
    let mut skeleton_mut = skeleton.clone();
    for ik in &iks {
        skeleton_mut.add_child(ik);
    }
    iks
}
