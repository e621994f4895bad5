//! The one place where a skeleton becomes a core [`Humanoid`]: every node that needs bones, body
//! axes or proportions asks here. When the skeleton draws meshes (skinned, or rigid parts on its
//! bones), their extent gives the height ([`Humanoid::fit_extent`]).

use entwine_core::kit::draw::box_corners;
use entwine_core::rig::skeleton::{self, dominant_bones, in_subtrees, Bounds, Extent, HandExtent};
use entwine_core::rig::{HandMeasure, Humanoid, Role, Side};
use godot::classes::mesh::ArrayType;
use godot::classes::{ArrayMesh, BoneAttachment3D, MeshInstance3D, Skeleton3D, Skin};
use godot::prelude::*;

use crate::convert::{rotation, vec3, vector3};
use crate::direct::Alive;

/// Describes the humanoid in `skeleton` from its bone names and rest pose, and, when the skeleton
/// draws meshes (skinned, or rigid parts on its bones), the height from their extent and each
/// finger-less hand from its own
/// vertices (allocates and reads the meshes' vertices: call it when a node resolves its bones, never
/// per frame).
pub fn humanoid(skeleton: &Gd<Skeleton3D>) -> Humanoid {
    let n = skeleton.get_bone_count().max(0);
    let mut names = Vec::with_capacity(n as usize);
    let mut parents = Vec::with_capacity(n as usize);
    let mut rest = Vec::with_capacity(n as usize);
    for i in 0..n {
        names.push(skeleton.get_bone_name(i).to_string());
        parents.push(skeleton.get_bone_parent(i));
        let t = skeleton.get_bone_global_rest(i);
        rest.push((vec3(t.origin), rotation(t.basis)));
    }
    let mut h = Humanoid::derive(&names, &parents, &rest);
    if let Some((lowest, highest)) = mesh_extent(skeleton, h.up) {
        h.fit_extent(lowest, highest, &rest);
    }
    for side in [Side::Left, Side::Right] {
        match h.hand_measure(side) {
            Some(HandMeasure::Bounds(hand)) => {
                if let Some((lo, hi)) = bone_vertex_bounds(skeleton, hand as i32) {
                    let frame = skeleton.get_bone_global_rest(hand as i32);
                    h.fit_hand(side, lo, hi, rotation(frame.basis));
                }
            }
            Some(HandMeasure::Extent(hand)) => {
                if let Some((surface, length, width)) = hand_extent(skeleton, &h, side, hand) {
                    h.fit_hand_size(side, surface, length, width);
                }
            }
            None => {}
        }
    }
    h
}

/// The skinned meshes drawn by `skeleton`: its MeshInstance3D children with a Skin and this
/// skeleton, with each bind's bone index.
fn skinned_meshes(skeleton: &Gd<Skeleton3D>) -> Vec<(Gd<MeshInstance3D>, Gd<Skin>)> {
    let mut out = Vec::new();
    for child in skeleton.get_children().iter_shared() {
        let Ok(mi) = child.try_cast::<MeshInstance3D>() else {
            continue;
        };
        let Some(skin) = mi.get_skin() else {
            continue;
        };
        let drawn_by = mi.get_node_or_null(&mi.get_skeleton_path());
        if drawn_by.is_some_and(|n| n == skeleton.clone().upcast::<Node>())
            && mi.get_mesh().is_some()
        {
            out.push((mi, skin));
        }
    }
    out
}

/// The bone a skin's bind `b` moves (by index, else by name), or -1.
fn bind_bone(skeleton: &Gd<Skeleton3D>, skin: &Gd<Skin>, b: i32) -> i32 {
    let bone = skin.get_bind_bone(b);
    if bone >= 0 && bone < skeleton.get_bone_count() {
        return bone;
    }
    skeleton.find_bone(&GString::from(&skin.get_bind_name(b)))
}

/// The bounds, in `bone`'s rest frame (rotation and origin; skeleton units), of the vertices the
/// bone draws with the largest weight, at the rest pose. `None` without any.
fn bone_vertex_bounds(skeleton: &Gd<Skeleton3D>, bone: i32) -> Option<(glam::Vec3, glam::Vec3)> {
    let rest = skeleton.get_bone_global_rest(bone);
    // The rest's rotation by the core's rule (Godot's `orthonormalized()` asserts on small scales).
    let frame = crate::convert::pose(rest);
    let mut bounds = Bounds::default();
    skinned_vertices(skeleton, &|b| b == bone, &mut |v| {
        bounds.add(frame.inverse_transform_point(vec3(v)))
    });
    bounds.get()
}

/// The hand on `side` (its bone `hand`) measured from the vertices drawn mostly by its bones (the hand bone, the
/// bones that turn with it and everything under them: palms, thumb and fingers), along the rig's
/// own palm and finger directions from the wrist (skeleton units, rest pose), for
/// [`Humanoid::fit_hand_size`]: `(palm surface, length, width)`. `None` without such vertices.
fn hand_extent(
    skeleton: &Gd<Skeleton3D>,
    h: &Humanoid,
    side: Side,
    hand: usize,
) -> Option<(f32, f32, f32)> {
    let hand = hand as i32;
    let mut roots: Vec<i32> = vec![hand];
    roots.extend(h.hand_parts(side).map(|b| b as i32));
    let parent = |b| skeleton.get_bone_parent(b);
    let in_hand = in_subtrees(parent, skeleton.get_bone_count(), &roots);
    let wrist = vec3(skeleton.get_bone_global_rest(hand).origin);
    let mut extent = HandExtent::new(h, side, wrist);
    skinned_vertices(
        skeleton,
        &|b| usize::try_from(b).ok().and_then(|i| in_hand.get(i)) == Some(&true),
        &mut |v| extent.add(vec3(v)),
    );
    extent.get()
}

/// Calls `each` with every vertex (skeleton space, rest pose) of the skeleton's skinned meshes
/// whose largest weight is on a bone `wanted` accepts.
fn skinned_vertices(
    skeleton: &Gd<Skeleton3D>,
    wanted: &dyn Fn(i32) -> bool,
    each: &mut dyn FnMut(Vector3),
) {
    for (mi, skin) in skinned_meshes(skeleton) {
        let Some(mesh) = mi.get_mesh().and_then(|m| m.try_cast::<ArrayMesh>().ok()) else {
            continue;
        };
        let binds: Vec<i32> = (0..skin.get_bind_count())
            .map(|b| bind_bone(skeleton, &skin, b))
            .collect();
        for surface in 0..mesh.get_surface_count() {
            let arrays = mesh.surface_get_arrays(surface);
            let get = |k: ArrayType| arrays.get(k.ord() as usize);
            let (Some(verts), Some(bones), Some(weights)) = (
                get(ArrayType::VERTEX).and_then(|v| v.try_to::<PackedVector3Array>().ok()),
                get(ArrayType::BONES).and_then(|v| v.try_to::<PackedInt32Array>().ok()),
                get(ArrayType::WEIGHTS).and_then(|v| v.try_to::<PackedFloat32Array>().ok()),
            ) else {
                continue;
            };
            let followed =
                dominant_bones(verts.len(), bones.as_slice(), weights.as_slice(), &binds);
            let Some(followed) = followed else {
                continue;
            };
            for (vertex, dominant) in verts.as_slice().iter().zip(followed) {
                let Some((bind, b)) = dominant.filter(|&(_, b)| wanted(b)) else {
                    continue;
                };
                let at_rest = skeleton.get_bone_global_rest(b) * skin.get_bind_pose(bind);
                each(at_rest * *vertex);
            }
        }
    }
}

/// The lowest and highest points along `up` (skeleton space) of the meshes drawn by `skeleton` at
/// the rest pose: its skinned meshes (MeshInstance3D children with a Skin; each mesh's bounding box
/// carried by its first bound bone's rest × bind pose) and the rigid parts on its bones (meshes
/// under its BoneAttachment3D children, as glTF imports a mesh parented to a bone: each part's
/// vertices carried by the bone's rest pose and the nodes between). `None` without either.
fn mesh_extent(skeleton: &Gd<Skeleton3D>, up: glam::Vec3) -> Option<(f32, f32)> {
    let mut extent = Extent::default();
    let mut add = |h: f32| extent.add(h);
    let corners = |aabb: Aabb, to_skeleton: Transform3D| {
        box_corners(vec3(aabb.position), vec3(aabb.size))
            .map(|corner| vec3(to_skeleton * vector3(corner)).dot(up))
    };
    for child in skeleton.get_children().iter_shared() {
        let Ok(attachment) = child.try_cast::<BoneAttachment3D>() else {
            continue;
        };
        let mut bone = attachment.get_bone_idx();
        if bone < 0 {
            bone = skeleton.find_bone(&attachment.get_bone_name());
        }
        if bone < 0 || bone >= skeleton.get_bone_count() {
            continue;
        }
        let rest = skeleton.get_bone_global_rest(bone);
        let attachment_node = attachment.clone().upcast::<Node>();
        for node in attachment
            .find_children_ex("*")
            .type_("MeshInstance3D")
            .owned(false)
            .done()
            .iter_shared()
        {
            let Ok(mi) = node.try_cast::<MeshInstance3D>() else {
                continue;
            };
            let Some(mesh) = mi.get_mesh() else {
                continue;
            };
            // The mesh's transform relative to the attachment, through the nodes between.
            let mut local = mi.get_transform();
            let mut up_node = mi.get_parent();
            while let Some(p) = up_node {
                if p == attachment_node {
                    break;
                }
                if let Ok(p3) = p.clone().try_cast::<Node3D>() {
                    local = p3.get_transform() * local;
                }
                up_node = p.get_parent();
            }
            // The part's own vertices (a rotated box's corners would reach past them).
            let to_skeleton = rest * local;
            let faces = mesh.get_faces();
            if faces.is_empty() {
                corners(mesh.get_aabb(), to_skeleton)
                    .into_iter()
                    .for_each(&mut add);
            }
            for &p in faces.as_slice() {
                add(vec3(to_skeleton * p).dot(up));
            }
        }
    }
    for (mi, skin) in skinned_meshes(skeleton) {
        let Some(mesh) = mi.get_mesh() else {
            continue;
        };
        let Some(to_skeleton) = (0..skin.get_bind_count()).find_map(|b| {
            let bone = bind_bone(skeleton, &skin, b);
            (bone >= 0).then(|| skeleton.get_bone_global_rest(bone) * skin.get_bind_pose(b))
        }) else {
            continue;
        };
        corners(mesh.get_aabb(), to_skeleton)
            .into_iter()
            .for_each(&mut add);
    }
    extent.get()
}

/// A node's name for a skeleton in warnings: its path in the tree, else its name.
pub fn label(node: &Gd<impl Inherits<Node>>) -> String {
    let node = node.clone().upcast::<Node>();
    if node.is_inside_tree() {
        node.get_path().to_string()
    } else {
        node.get_name().to_string()
    }
}

/// Returns the bone for a node's bone property: the bone called `name` when the name is set (an
/// explicit setting always wins), else the bone `humanoid` found for `role`. `Err` says what was
/// tried, naming `property` and the skeleton.
pub fn pick(
    skeleton: &Gd<Skeleton3D>,
    property: &str,
    name: &GString,
    role: Role,
    humanoid: &Humanoid,
) -> Result<i32, String> {
    skeleton::pick(
        property,
        &name.to_string(),
        |n| skeleton.find_bone(n),
        role,
        humanoid,
        skeleton.get_bone_count(),
        || label(skeleton),
    )
}

/// What Entwine's nodes find in a humanoid skeleton with no bone name set by hand: which bone plays
/// each part, the body's axes and proportions. Every node that drives bones builds the same
/// description; call [method describe] to see it (for a new character, or a warning that a bone was
/// not found).
#[derive(GodotClass)]
#[class(init, base = RefCounted, rename = EntwineHumanoidRig)]
pub struct HumanoidRig {
    base: Base<RefCounted>,
}

#[godot_api]
impl HumanoidRig {
    /// Describes the humanoid in [param skeleton] from its bone names and rest pose. Returns a
    /// Dictionary:
    ///
    /// - `bones`: Dictionary from each part's name in Godot's humanoid profile (`Hips`,
    ///   `LeftUpperArm`, `RightHand`, `LeftIndexProximal`…) to the bone's name, for the parts found;
    /// - `up`, `right`, `forward`: the body's axes in the skeleton's space (unit Vector3);
    /// - `height`: the standing height in the skeleton's units (the head joint's height over the toes'
    ///   joints divided by 0.9); `arm_length`, `leg_length`: Vector2 (left, right);
    ///   `shoulder_width`, `head_size`: floats.
    ///
    /// An invalid skeleton gives an empty Dictionary. Allocates: not for per-frame use.
    #[func]
    fn describe(skeleton: Option<Gd<Skeleton3D>>) -> VarDictionary {
        let mut out = VarDictionary::new();
        let Some(skeleton) = skeleton.filter(|s| s.alive()) else {
            godot_warn!(
                "EntwineHumanoidRig.describe: no skeleton given; returning an empty Dictionary"
            );
            return out;
        };
        let h = humanoid(&skeleton);
        let mut bones = VarDictionary::new();
        for &role in Role::ALL {
            if let Some(i) = h.bone(role) {
                bones.set(role.godot_name(), &skeleton.get_bone_name(i as i32));
            }
        }
        out.set("bones", &bones);
        out.set("up", crate::convert::vector3(h.up));
        out.set("right", crate::convert::vector3(h.right));
        out.set("forward", crate::convert::vector3(h.forward));
        out.set("height", h.height);
        out.set("arm_length", Vector2::new(h.arm_length[0], h.arm_length[1]));
        out.set("leg_length", Vector2::new(h.leg_length[0], h.leg_length[1]));
        out.set("shoulder_width", h.shoulder_width);
        out.set("head_size", h.head_size);
        out
    }
}
