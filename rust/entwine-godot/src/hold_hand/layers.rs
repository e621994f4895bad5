//! What a character's rig holds for the pair: the animation tree's arm layers and the bone chains
//! of its hands.

use super::*;

/// Seconds the partner in the same process may stay in another state-machine node than the
/// initiator's while travelling there, before it is started there outright.
pub(super) const LOCAL_ANIM_GRACE: f32 = 0.25;

/// Returns the arm-layer parameters of `tree`: the amount of each filtered blend or add node of its
/// root blend tree, or of a blend tree nested in it (to four levels), whose filter passes a bone of
/// either arm of the humanoid in `skeleton`.
pub(super) fn detect_arm_layers(
    tree: &Gd<AnimationTree>,
    skeleton: &Gd<Skeleton3D>,
) -> PackedStringArray {
    let mut out = PackedStringArray::new();
    let Some(root) = tree
        .get_tree_root()
        .and_then(|r| r.try_cast::<AnimationNodeBlendTree>().ok())
    else {
        return out;
    };
    let Some(mixer_root) = tree.try_get_node_as::<Node>(&tree.get_root_node()) else {
        return out;
    };
    let skeleton_path = mixer_root.get_path_to(skeleton);
    let humanoid = rig::humanoid(skeleton);
    let arm_bones: Vec<NodePath> = [Side::Left, Side::Right]
        .into_iter()
        .flat_map(|side| {
            let shoulder = match side {
                Side::Left => RigRole::LeftShoulder,
                Side::Right => RigRole::RightShoulder,
            };
            let [u, l, h] = RigRole::arm(side);
            [shoulder, u, l, h]
        })
        .filter_map(|role| humanoid.bone(role))
        .map(|b| {
            let path = format!("{skeleton_path}:{}", skeleton.get_bone_name(b as i32));
            NodePath::from(path.as_str())
        })
        .collect();
    collect_arm_layers(&root, "parameters/", &arm_bones, 0, &mut out);
    out
}

/// Adds to `out` the amount parameter (under `prefix`) of each filtered Blend2/Blend3/Add2/Add3 of
/// `tree` whose filter passes one of `arm_bones`, and those of the blend trees nested in it.
pub(super) fn collect_arm_layers(
    tree: &Gd<AnimationNodeBlendTree>,
    prefix: &str,
    arm_bones: &[NodePath],
    depth: u32,
    out: &mut PackedStringArray,
) {
    for name in tree.get_node_list().iter_shared() {
        let Some(node) = tree.get_node(&name) else {
            continue;
        };
        if let Ok(inner) = node.clone().try_cast::<AnimationNodeBlendTree>() {
            if depth < 4 {
                collect_arm_layers(
                    &inner,
                    &format!("{prefix}{name}/"),
                    arm_bones,
                    depth + 1,
                    out,
                );
            }
            continue;
        }
        if !node.is_filter_enabled() || !arm_bones.iter().any(|p| node.is_path_filtered(p)) {
            continue;
        }
        let amount = if node.clone().try_cast::<AnimationNodeBlend2>().is_ok()
            || node.clone().try_cast::<AnimationNodeBlend3>().is_ok()
        {
            "blend_amount"
        } else if node.clone().try_cast::<AnimationNodeAdd2>().is_ok()
            || node.clone().try_cast::<AnimationNodeAdd3>().is_ok()
        {
            "add_amount"
        } else {
            continue;
        };
        out.push(&GString::from(&format!("{prefix}{name}/{amount}")));
    }
}

/// Returns the `[upper, lower, hand]` bone names of a hand's arm: for a named hand its grandparent
/// and parent, for an empty name the `side` arm of the humanoid.
pub(super) fn chain_for_hand(
    skeleton: &Gd<Skeleton3D>,
    hand: &GString,
    side: Side,
    humanoid: &Humanoid,
) -> Option<[GString; 3]> {
    let chain = crate::bones::arm_chain(skeleton, hand, side, humanoid)?;
    Some(chain.map(|b| skeleton.get_bone_name(b)))
}
