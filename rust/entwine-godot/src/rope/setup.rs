//! RopeSimulation's setup: building the rope and its visuals, reading its settings and presets,
//! and finding its anchor, its end and the bodies it must not collide with.

use super::*;
use crate::direct::{Alive, Lent};

impl RopeSimulation {
    /// (Re)creates the rope at the anchor and the visuals.
    pub(super) fn build(&mut self) {
        self.bone_cache = -2;
        self.exclude_dirty = true;
        let params = self.params();
        let anchor = self
            .sample_anchor()
            .unwrap_or_else(|| vec3(self.base().get_global_position()));
        let mut rope = Rope::new(
            self.capacity as usize,
            self.point_count as usize,
            params,
            anchor,
            Vec3::NEG_Y,
        );
        if let Some(l) = self.pending_length.take() {
            let target = l.min(rope.max_length());
            rope.reset(anchor, Vec3::NEG_Y, target);
        }
        self.scratch = vec![Vec3::ZERO; rope.capacity()];
        self.rope = Some(Box::new(rope));
        self.world = World::with_capacity(MAX_COLLIDERS);
        if self.gatherer.is_none() {
            self.gatherer = Some(Gatherer::new());
        }
        self.rebuild_visuals();
        self.sync_params();
    }

    /// Returns the parameters from the properties (unsanitized).
    pub(super) fn params(&self) -> RopeParams {
        let g = ProjectSettings::singleton()
            .get_setting("physics/3d/default_gravity")
            .try_to::<f32>()
            .unwrap_or(9.8);
        let dir = ProjectSettings::singleton()
            .get_setting("physics/3d/default_gravity_vector")
            .try_to::<Vector3>()
            .map(vec3)
            .unwrap_or(Vec3::NEG_Y);
        RopeParams {
            segment_length: self.segment_length,
            damping: self.damping,
            iterations: u32::try_from(self.iterations).unwrap_or(0),
            substeps: u32::try_from(self.substeps).unwrap_or(0),
            gravity: dir * g * GRAVITY_SCALE.clamped(self.gravity_scale),
            radius: self.radius,
            ground_enabled: self.ground_enabled,
            ground_height: self.ground_height,
            friction: self.friction,
            tear_ratio: self.tear_ratio,
            stretch_limit: self.stretch_limit,
            length_speed: self.length_speed,
            point_mass: self.point_mass,
            fade_time: self.fade_time,
            sleep_distance: if self.can_sleep {
                self.sleep_distance
            } else {
                0.0
            },
        }
    }

    /// Sanitizes the properties, warns once per bad one, writes the fixed values back and hands them to
    /// the rope.
    pub(super) fn sync_params(&mut self) {
        let node = self.to_gd();
        let scale = self.gravity_scale;
        self.warnings.param(&node, &GRAVITY_SCALE, scale);
        let raw = self.params();
        let mut issues: [Option<ParamIssue>; 16] = [None; 16];
        let mut k = 0;
        let fixed = raw.sanitized(|i| {
            if k < issues.len() {
                issues[k] = Some(i);
                k += 1;
            }
        });
        for issue in issues.iter().flatten() {
            let (name, range) = match issue {
                // The rope's gravity is the project's times gravity_scale.
                ParamIssue::Gravity => (
                    "gravity_scale",
                    "a finite scale of the project's gravity".to_string(),
                ),
                _ => issue.describe(),
            };
            let bit = warn::PARAM_BASE + *issue as u32;
            self.warn_once(
                bit,
                &format!("{name} is out of range; accepted {range}; the value was clamped"),
            );
        }
        if k == 0 {
            // Every parameter is valid again: later bad values warn again.
            self.warnings.clear_below(16);
        }
        self.segment_length = fixed.segment_length;
        self.damping = fixed.damping;
        self.iterations = fixed.iterations as i32;
        self.substeps = fixed.substeps as i32;
        self.radius = fixed.radius;
        self.ground_height = fixed.ground_height;
        self.friction = fixed.friction;
        self.tear_ratio = fixed.tear_ratio;
        self.stretch_limit = fixed.stretch_limit;
        self.length_speed = fixed.length_speed;
        self.point_mass = fixed.point_mass;
        self.fade_time = fixed.fade_time;
        if self.can_sleep {
            self.sleep_distance = fixed.sleep_distance;
        }
        let fixed = self.params();
        if let Some(r) = self.rope.as_deref_mut() {
            r.set_params(fixed, |_| {});
        }
    }

    pub(super) fn apply_values(&mut self, iterations: i32, segment_length: f32) {
        self.iterations = iterations;
        self.segment_length = segment_length;
        self.sync_params();
    }

    pub(super) fn preset_table(&mut self) -> &PresetTable {
        if self.table.is_none() {
            let table = if self.presets_file.is_empty() {
                PresetTable::builtin()
            } else {
                let text = FileAccess::get_file_as_string(&self.presets_file).to_string();
                match PresetTable::from_ron(&text) {
                    Ok(t) => t,
                    Err(e) => {
                        let file = self.presets_file.clone();
                        self.warn_once(
                            warn::PRESETS_FILE,
                            &format!("presets_file '{file}' cannot be used ({e}); using the built-in table"),
                        );
                        PresetTable::builtin()
                    }
                }
            };
            self.table = Some(table);
        }
        self.table.get_or_insert_with(PresetTable::builtin)
    }

    pub(super) fn preset_names(&mut self) -> Vec<String> {
        self.preset_table()
            .presets
            .iter()
            .map(|p| p.name.clone())
            .collect()
    }

    /// Rebuilds the tube meshes and the debug points for the current settings.
    pub(super) fn rebuild_visuals(&mut self) {
        self.drawn_asleep = false;
        for t in [self.tube.take(), self.loose_tube.take()]
            .into_iter()
            .flatten()
        {
            let mut node = t.instance;
            self.base_mut().remove_child(&node);
            node.queue_free();
        }
        if let Some((mut node, _)) = self.debug.take() {
            self.base_mut().remove_child(&node);
            node.queue_free();
        }
        let Some(capacity) = self.rope.as_deref().map(Rope::capacity) else {
            return;
        };
        if self.tube_enabled {
            let material = self.material.clone().or_else(|| {
                let mut m = StandardMaterial3D::new_gd();
                m.set_albedo(Color::from_rgb(0.85, 0.25, 0.55));
                m.set_roughness(0.7);
                Some(m.upcast())
            });
            for loose in [false, true] {
                let t = TubeMesh::new(
                    capacity,
                    self.tube_sides as usize,
                    self.smoothing as usize,
                    material.as_ref(),
                );
                let mut node = t.instance.clone();
                node.set_name(if loose { "LooseTube" } else { "Tube" });
                self.base_mut().add_child(&node);
                if loose {
                    self.loose_tube = Some(t);
                } else {
                    self.tube = Some(t);
                }
            }
        }
        if self.debug_draw {
            let mut sphere = SphereMesh::new_gd();
            let r = (self.radius * 1.6).max(0.02);
            sphere.set_radius(r);
            sphere.set_height(2.0 * r);
            sphere.set_radial_segments(8);
            sphere.set_rings(4);
            let mut mat = StandardMaterial3D::new_gd();
            mat.set_albedo(Color::from_rgb(1.0, 0.9, 0.1));
            sphere.set_material(&mat);
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            mm.set_mesh(&sphere);
            mm.set_instance_count(capacity as i32);
            mm.set_visible_instance_count(0);
            let mut node = MultiMeshInstance3D::new_alloc();
            node.set_name("DebugPoints");
            node.set_multimesh(&mm);
            node.set_as_top_level(true);
            self.base_mut().add_child(&node);
            node.set_global_transform(Transform3D::IDENTITY);
            self.debug = Some((node, mm));
        }
    }

    /// Returns the anchor node, resolving and caching it (warns once when the path is broken).
    pub(super) fn anchor(&mut self) -> Option<Gd<Node3D>> {
        if let Some(n) = &self.anchor_cache {
            if n.alive() {
                return Some(n.clone());
            }
        }
        if !self.anchor_named {
            return None;
        }
        let path = self.anchor_node.clone();
        let node = self.base().try_get_node_as::<Node3D>(&path);
        if node.is_none() {
            self.warn_once(
                warn::ANCHOR_NODE,
                &format!("anchor_node '{path}' is not a Node3D in the tree; the rope hangs from itself until it is fixed"),
            );
        }
        self.anchor_cache = node.clone();
        self.anchor_skeleton = node.clone().and_then(|n| n.try_cast::<Skeleton3D>().ok());
        self.bone_cache = -2;
        self.exclude_dirty = true;
        node
    }

    /// Returns the anchor's world position now, or `None` when it is not finite.
    /// The frame [member anchor_offset] is given in (world): the anchor bone's, the anchor node's,
    /// or this node's.
    pub(crate) fn anchor_frame(&mut self) -> Transform3D {
        // The anchor (or this node) is lent for the read: one check that it is alive, then the
        // engine calls straight (see `direct`).
        if !self.anchor_cache.as_ref().is_some_and(Alive::alive) && self.anchor().is_none() {
            return self.own_frame();
        }
        if !self.anchor_bone.is_empty() {
            if let Some(skeleton) = self.anchor_skeleton.take() {
                let frame = self.bone_frame(&skeleton);
                self.anchor_skeleton = Some(skeleton);
                if let Some(frame) = frame {
                    return frame;
                }
            }
        }
        match self.anchor_cache.as_ref().and_then(Lent::new) {
            Some(anchor) => anchor.global_transform(),
            None => self.own_frame(),
        }
    }

    /// This node's global transform.
    fn own_frame(&mut self) -> Transform3D {
        // SAFETY: this node is alive: `&mut self` is only had through a bind of it.
        unsafe { Lent::assume_alive(self.me()) }.global_transform()
    }

    /// The frame of [member anchor_bone] in `skeleton` (the anchor), or the skeleton's own when it
    /// has no such bone (warned once); `None` when the skeleton has been freed.
    fn bone_frame(&mut self, skeleton: &Gd<Skeleton3D>) -> Option<Transform3D> {
        let skel = Lent::new(skeleton)?;
        if self.bone_cache == -2 || self.bone_cache >= skel.bone_count() {
            self.bone_cache = skeleton.find_bone(&self.anchor_bone);
            if self.bone_cache < 0 {
                let bone = self.anchor_bone.clone();
                self.warn_once(
                    warn::ANCHOR_BONE,
                    &format!("anchor_bone '{bone}' is not a bone of skeleton '{}'; the rope hangs from the skeleton's origin", skeleton.get_name()),
                );
            }
        }
        Some(if self.bone_cache >= 0 {
            skel.global_transform() * skel.global_pose(self.bone_cache)
        } else {
            skel.global_transform()
        })
    }

    /// Returns the kept handle to this node (see `me`).
    pub(super) fn me(&mut self) -> &Gd<RopeSimulation> {
        let me = match self.me.take() {
            Some(me) => me,
            None => self.to_gd(),
        };
        self.me.insert(me)
    }

    /// For the editor: marks the rope selected (it previews while selected).
    pub(crate) fn set_editor_selected(&mut self, selected: bool) {
        self.editor_selected = selected;
    }

    /// For the editor's gizmo: the rope's points now (world), into `out`; how many.
    pub(crate) fn editor_points(&self, out: &mut Vec<Vector3>) {
        out.clear();
        if let Some(r) = self.rope.as_deref() {
            out.extend(r.points().iter().map(|p| vector3(*p)));
        }
    }

    /// Returns [member anchor_offset] checked (finite and within ±1e6, else zero with one warning);
    /// the check runs again only when the property changed.
    pub(super) fn checked_anchor_offset(&mut self) -> Vector3 {
        let raw = self.anchor_offset;
        // Unchanged (every step but the first): no handle to the node is made for the check.
        if let Some(fixed) = unchanged(self.anchor_offset_seen, raw) {
            return fixed;
        }
        let node = self.to_gd();
        checked_offset(
            &mut self.warnings,
            &node,
            "anchor_offset",
            raw,
            &mut self.anchor_offset_seen,
        )
    }

    /// Returns [member end_offset] checked as [`Self::checked_anchor_offset`] checks its offset.
    pub(super) fn checked_end_offset(&mut self) -> Vector3 {
        let raw = self.end_offset;
        if let Some(fixed) = unchanged(self.end_offset_seen, raw) {
            return fixed;
        }
        let node = self.to_gd();
        checked_offset(
            &mut self.warnings,
            &node,
            "end_offset",
            raw,
            &mut self.end_offset_seen,
        )
    }

    pub(super) fn sample_anchor(&mut self) -> Option<Vec3> {
        let offset = self.checked_anchor_offset();
        let world = self.anchor_frame() * offset;
        let v = vec3(world);
        if v.is_finite() {
            self.clear_warning(warn::ANCHOR_NAN);
            Some(v)
        } else {
            self.warn_once(
                warn::ANCHOR_NAN,
                "the anchor's position is not finite (NaN or infinite); the rope keeps the last good anchor",
            );
            None
        }
    }

    /// Returns the end attachment for this step.
    pub(super) fn sample_end(&mut self) -> EndAttachment {
        if !self.end_named || self.end_detached {
            return EndAttachment::Free;
        }
        let path = self.end_node.clone();
        let Some(node) = self.base().try_get_node_as::<Node3D>(&path) else {
            self.warn_once(
                warn::END_NODE,
                &format!("end_node '{path}' is not a Node3D in the tree; the end hangs free"),
            );
            return EndAttachment::Free;
        };
        let end_offset = self.checked_end_offset();
        let at = vec3(node.get_global_transform() * end_offset);
        let end = match node.clone().try_cast::<RigidBody3D>() {
            Ok(body) if self.apply_tension_to_body => EndAttachment::Body {
                position: at,
                velocity: vec3(body.get_linear_velocity()),
                mass: body.get_mass(),
            },
            _ => EndAttachment::Pinned(at),
        };
        if at.is_finite() {
            self.clear_warning(warn::END_NAN);
        } else {
            self.warn_once(
                warn::END_NAN,
                "the end node's position is not finite; the end hangs free",
            );
        }
        end
    }

    /// Rebuilds the query's exclusion list: the anchor's own physics body, if any.
    pub(super) fn refresh_exclude(&mut self) {
        self.exclude_dirty = false;
        let mut exclude: Array<Rid> = Array::new();
        let end_path = self.end_node.clone();
        let end = if end_path.is_empty() {
            None
        } else {
            self.base().try_get_node_as::<Node>(&end_path)
        };
        let anchor = if self.exclude_anchor_body {
            self.anchor().map(|n| n.upcast::<Node>())
        } else {
            None
        };
        // The anchor's body (the character holding the rope) and the body the end is tied to.
        self.exclude_rids = [None; 2];
        for (slot, start) in [anchor, end].into_iter().enumerate() {
            let mut node = start;
            while let Some(n) = node {
                if let Ok(body) = n.clone().try_cast::<CollisionObject3D>() {
                    exclude.push(body.get_rid());
                    self.exclude_rids[slot] = Some(body.get_rid());
                    break;
                }
                node = n.get_parent();
            }
        }
        if let Some(g) = self.gatherer.as_mut() {
            g.set_exclude(&exclude);
        }
    }
}

/// Returns the checked value kept in `seen` when `raw` is the value it was checked for.
fn unchanged(seen: Option<(Vector3, Vector3)>, raw: Vector3) -> Option<Vector3> {
    seen.and_then(|(last, fixed)| same_bits(last, raw).then_some(fixed))
}

/// Returns the offset property `name` (value `raw`) checked: finite and within ±1e6, else zero with
/// one warning. `seen` keeps the last value checked and its result, so an unchanged value is not
/// checked again.
fn checked_offset(
    warnings: &mut Warnings,
    node: &Gd<RopeSimulation>,
    name: &str,
    raw: Vector3,
    seen: &mut Option<(Vector3, Vector3)>,
) -> Vector3 {
    match *seen {
        Some((last, fixed)) if same_bits(last, raw) => fixed,
        _ => {
            let fixed = warnings.vector_within(node, name, raw, 1e6, Vector3::ZERO);
            *seen = Some((raw, fixed));
            fixed
        }
    }
}
