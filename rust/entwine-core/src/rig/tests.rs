//! Humanoids generated in every naming convention, with random per-bone rest rotations, at scales
//! 0.01–100, facing −Z or +Z, with twist bones: the derived rig must find the bones and measure the
//! body the generator built.

use super::*;
use crate::kit::test_util::{vec_angle, Lcg};

/// The reference body (the test character's joints, 1.75 m, facing −Z, A-pose), Godot names,
/// parents before children, plus knuckles: (name, parent, position).
fn reference() -> Vec<(&'static str, &'static str, Vec3)> {
    let mut b = vec![
        ("Root", "", Vec3::ZERO),
        ("Hips", "Root", Vec3::new(0.0, 0.95, 0.0)),
        ("Spine", "Hips", Vec3::new(0.0, 1.05, 0.0)),
        ("Chest", "Spine", Vec3::new(0.0, 1.17, 0.0)),
        ("UpperChest", "Chest", Vec3::new(0.0, 1.30, 0.0)),
        ("Neck", "UpperChest", Vec3::new(0.0, 1.49, 0.0)),
        ("Head", "Neck", Vec3::new(0.0, 1.60, 0.0)),
    ];
    for (side, s) in [("Left", -1.0f32), ("Right", 1.0)] {
        let leak = |n: &str| -> &'static str { Box::leak(format!("{side}{n}").into_boxed_str()) };
        let shoulder = Vec3::new(0.18 * s, 1.45, 0.0);
        let a = 12f32.to_radians();
        let upper_dir = Vec3::new(a.sin() * s, -a.cos(), 0.0);
        let elbow = shoulder + upper_dir * 0.28;
        let b10 = 10f32.to_radians();
        let fore = upper_dir * b10.cos() + Vec3::NEG_Z * b10.sin();
        let wrist = elbow + fore * 0.26;
        let knuckles = wrist + fore * 0.08;
        let across = Vec3::Z; // index forward (−Z), little back (+Z)
        b.extend([
            (
                leak("Shoulder"),
                "UpperChest",
                Vec3::new(0.03 * s, 1.44, 0.0),
            ),
            (leak("UpperArm"), leak("Shoulder"), shoulder),
            (leak("LowerArm"), leak("UpperArm"), elbow),
            (leak("Hand"), leak("LowerArm"), wrist),
            (
                leak("IndexProximal"),
                leak("Hand"),
                knuckles - across * 0.03,
            ),
            (
                leak("MiddleProximal"),
                leak("Hand"),
                knuckles - across * 0.01,
            ),
            (leak("RingProximal"), leak("Hand"), knuckles + across * 0.01),
            (
                leak("LittleProximal"),
                leak("Hand"),
                knuckles + across * 0.03,
            ),
            (leak("UpperLeg"), "Hips", Vec3::new(0.09 * s, 0.90, 0.0)),
            (
                leak("LowerLeg"),
                leak("UpperLeg"),
                Vec3::new(0.09 * s, 0.48, -0.01),
            ),
            (
                leak("Foot"),
                leak("LowerLeg"),
                Vec3::new(0.09 * s, 0.08, 0.0),
            ),
            (
                leak("Toes"),
                leak("Foot"),
                Vec3::new(0.09 * s, 0.025, -0.13),
            ),
        ]);
    }
    b
}

#[derive(Clone, Copy, Debug)]
enum Convention {
    Godot,
    BlenderDot,
    Underscore,
    Prefix,
    Mixamo,
    Vrm,
    VRoid,
    Rigify,
}

const CONVENTIONS: [Convention; 8] = [
    Convention::Godot,
    Convention::BlenderDot,
    Convention::Underscore,
    Convention::Prefix,
    Convention::Mixamo,
    Convention::Vrm,
    Convention::VRoid,
    Convention::Rigify,
];

/// Returns Blender's name (as in its metarig, before the side) for a limb or finger bone's Godot
/// name without the side; `None` for any other bone.
fn blender_limb(base: &str) -> Option<&'static str> {
    Some(match base {
        "UpperArm" => "upper_arm",
        "LowerArm" => "forearm",
        "Hand" => "hand",
        "Shoulder" => "shoulder",
        "UpperLeg" => "thigh",
        "LowerLeg" => "shin",
        "Foot" => "foot",
        "Toes" => "toe",
        "IndexProximal" => "f_index.01",
        "MiddleProximal" => "f_middle.01",
        "RingProximal" => "f_ring.01",
        "LittleProximal" => "f_pinky.01",
        _ => return None,
    })
}

/// A bone's Mixamo name without the side, from its Godot name without the side.
fn mixamo_base(base: &str) -> &str {
    match base {
        "UpperArm" => "Arm",
        "LowerArm" => "ForeArm",
        "UpperLeg" => "UpLeg",
        "LowerLeg" => "Leg",
        "Toes" => "ToeBase",
        "IndexProximal" => "HandIndex1",
        "MiddleProximal" => "HandMiddle1",
        "RingProximal" => "HandRing1",
        "LittleProximal" => "HandPinky1",
        "Chest" => "Spine1",
        "UpperChest" => "Spine2",
        other => other,
    }
}

/// A bone's VRoid name without the side, from its Godot name without the side.
fn vroid_base(base: &str) -> &str {
    match base {
        "IndexProximal" => "Index1",
        "MiddleProximal" => "Middle1",
        "RingProximal" => "Ring1",
        "LittleProximal" => "Little1",
        other => other,
    }
}

/// The bone's name in a convention, from its Godot name.
fn rename(godot: &str, c: Convention) -> String {
    let (side, base) = if let Some(b) = godot.strip_prefix("Left") {
        (Some('L'), b)
    } else if let Some(b) = godot.strip_prefix("Right") {
        (Some('R'), b)
    } else {
        (None, godot)
    };
    let side_word = |l: &str, r: &str| match side {
        Some('L') => l.to_string(),
        Some(_) => r.to_string(),
        None => String::new(),
    };
    match c {
        Convention::Godot => godot.to_string(),
        Convention::BlenderDot => {
            let b = match (base, blender_limb(base)) {
                (_, Some(b)) => b,
                ("UpperChest", None) => "upper_chest",
                (other, None) => return format!("{}_Armature", other.to_lowercase()),
            };
            format!("{b}.{}_Armature", side_word("l", "r"))
        }
        Convention::Underscore => match side {
            Some(_) => format!("{base}_{}", side_word("L", "R")),
            None => base.to_string(),
        },
        Convention::Prefix => match side {
            Some(_) => format!("{}_{base}", side_word("L", "R")),
            None => base.to_string(),
        },
        Convention::Mixamo => {
            let b = mixamo_base(base);
            format!("mixamorig:{}{b}", side_word("Left", "Right"))
        }
        Convention::Vrm => {
            let s = side_word("left", "right");
            if s.is_empty() {
                let mut b = base.to_string();
                b[..1].make_ascii_lowercase();
                b
            } else {
                format!("{s}{base}")
            }
        }
        Convention::VRoid => {
            let b = vroid_base(base);
            format!(
                "J_Bip_{}_{b}",
                side.map_or("C".to_string(), |s| s.to_string())
            )
        }
        Convention::Rigify => {
            let b = match base {
                "Root" => return "root".to_string(),
                "Hips" => return "DEF-spine".to_string(),
                "Spine" => return "DEF-spine.001".to_string(),
                "Chest" => return "DEF-spine.002".to_string(),
                "UpperChest" => return "DEF-spine.003".to_string(),
                "Neck" => return "DEF-spine.004".to_string(),
                "Head" => return "DEF-spine.005".to_string(),
                other => blender_limb(other).unwrap_or(other),
            };
            format!("DEF-{b}.{}", side_word("L", "R"))
        }
    }
}

struct Generated {
    names: Vec<String>,
    parents: Vec<i32>,
    rest: Vec<(Vec3, Quat)>,
    /// Godot name → index.
    index: std::collections::HashMap<&'static str, usize>,
}

/// The reference body renamed, scaled, turned to face `facing_z` (±1; −1 is Godot's −Z), every
/// bone given a random rest rotation, and with a twist bone between each upper arm and forearm.
fn generate(c: Convention, scale: f32, facing_z: f32, rng: &mut Lcg, twist: bool) -> Generated {
    let turn = if facing_z > 0.0 {
        Quat::from_rotation_y(core::f32::consts::PI)
    } else {
        Quat::IDENTITY
    };
    let mut g = Generated {
        names: vec![],
        parents: vec![],
        rest: vec![],
        index: Default::default(),
    };
    for (name, parent, pos) in reference() {
        let mut parent_index = if parent.is_empty() {
            -1
        } else {
            g.index[parent] as i32
        };
        if twist && name.ends_with("LowerArm") {
            let upper = g.index[parent];
            let mid = (g.rest[upper].0 + turn * (pos * scale)) * 0.5;
            // Rigify splits the upper arm in two numbered segments (`upper_arm.L.001`).
            let twist_name = match c {
                Convention::Rigify => format!("{}.001", rename(parent, c)),
                _ => format!("{}_twist", rename(parent, c)).replace(":", "_"),
            };
            g.names.push(twist_name);
            g.parents.push(parent_index);
            g.rest.push((mid, rng.quat()));
            parent_index = g.names.len() as i32 - 1;
        }
        g.index.insert(name, g.names.len());
        g.names.push(rename(name, c));
        g.parents.push(parent_index);
        g.rest.push((turn * (pos * scale), rng.quat()));
    }
    g
}

fn derive(g: &Generated) -> Humanoid {
    Humanoid::derive(&g.names, &g.parents, &g.rest)
}

/// Returns the names of a listed body ((name, parent, position) a bone), in its order.
fn names_of<'a>(body: &[(&'a str, &str, Vec3)]) -> Vec<&'a str> {
    body.iter().map(|b| b.0).collect()
}

/// Finds a bone of a listed body by name: its index, or −1 (no bone: a root's parent).
fn bone_index(body: &[(&str, &str, Vec3)], name: &str) -> i32 {
    body.iter()
        .position(|b| b.0 == name)
        .map_or(-1, |i| i as i32)
}

/// Returns each bone's parent index in a listed body (−1 for a root); parents come before children.
fn parents_of(body: &[(&str, &str, Vec3)]) -> Vec<i32> {
    body.iter().map(|b| bone_index(body, b.1)).collect()
}

/// Derives the rig of a listed body with every bone rolled at rest about a random axis by a random
/// angle (up to ±3.1 rad): four draws from `rng` a bone, in the body's order.
fn derive_rolled(body: &[(&str, &str, Vec3)], rng: &mut Lcg) -> Humanoid {
    let rest: Vec<(Vec3, Quat)> = body
        .iter()
        .map(|b| {
            let axis = Vec3::new(rng.signed(), rng.signed(), rng.signed())
                .try_normalize()
                .unwrap_or(Vec3::X);
            (b.2, Quat::from_axis_angle(axis, rng.signed() * 3.1))
        })
        .collect();
    Humanoid::derive(&names_of(body), &parents_of(body), &rest)
}

#[test]
#[allow(clippy::too_many_lines)] // reason: one loop over every convention, scale and facing
fn every_convention_scale_and_facing_finds_the_bones_and_measures_the_body() {
    let mut rng = Lcg(1515);
    for c in CONVENTIONS {
        for scale in [0.01, 1.0, 100.0] {
            for facing in [-1.0, 1.0] {
                for twist in [false, true] {
                    let g = generate(c, scale, facing, &mut rng, twist);
                    let h = derive(&g);
                    let what = format!("{c:?} scale {scale} facing {facing} twist {twist}");
                    for role in Role::ALL {
                        let expected = match (c, role) {
                            // Mixamo has no bone called chest: the neck's parent (Spine2) stands in.
                            (Convention::Mixamo, Role::Chest) => Some(g.index["UpperChest"]),
                            (Convention::Mixamo, Role::UpperChest) => None,
                            _ => Some(g.index[role.godot_name()]),
                        };
                        assert_eq!(
                            h.bone(*role),
                            expected,
                            "{what}: {role:?} → {:?}",
                            h.bone(*role).map(|i| &g.names[i])
                        );
                    }
                    let turn = if facing > 0.0 { -1.0 } else { 1.0 };
                    assert!(vec_angle(h.up, Vec3::Y) < 1e-3, "{what}: up {}", h.up);
                    assert!(
                        vec_angle(h.right, Vec3::X * turn) < 1e-3,
                        "{what}: right {}",
                        h.right
                    );
                    assert!(
                        vec_angle(h.forward, Vec3::NEG_Z * turn) < 1e-3,
                        "{what}: forward {}",
                        h.forward
                    );
                    assert!(
                        (h.height / scale - 1.75).abs() < 1e-3,
                        "{what}: height {}",
                        h.height
                    );
                    assert!((h.scale() - scale).abs() < 1e-3 * scale);
                    for s in 0..2 {
                        assert!(
                            (h.arm_length[s] / scale - 0.54).abs() < 1e-3,
                            "{what}: arm {}",
                            h.arm_length[s]
                        );
                        assert!(
                            (h.leg_length[s] / scale - 0.8201).abs() < 1e-3,
                            "{what}: leg {}",
                            h.leg_length[s]
                        );
                        assert!((h.hand_width[s] / scale - 0.06).abs() < 1e-3);
                        // Knuckles 8 cm from the wrist, 6 cm across: a 16 × 8 × 2.8 cm hand.
                        let size = h.hand_size([Side::Left, Side::Right][s]);
                        assert!(
                            (size.length / scale - 0.16).abs() < 1e-3,
                            "{what}: {size:?}"
                        );
                        assert!((size.width / scale - 0.08).abs() < 1e-3, "{what}: {size:?}");
                        assert!(
                            (size.thickness / scale - 0.028).abs() < 1e-3,
                            "{what}: {size:?}"
                        );
                    }
                    assert!((h.shoulder_width / scale - 0.36).abs() < 1e-3);
                    // Hanging A-pose arms, palms toward the body, index finger forward: the left palm
                    // faces the character's right and the right palm its left.
                    let b10 = 10f32.to_radians();
                    let a = 12f32.to_radians();
                    for (s, side) in [(0, -1.0f32), (1, 1.0)] {
                        let upper = Vec3::new(a.sin() * side, -a.cos(), 0.0);
                        let fore = (upper * b10.cos() + Vec3::NEG_Z * b10.sin())
                            * Vec3::new(turn, 1.0, turn);
                        assert!(
                            vec_angle(h.finger[s], fore) < 1e-3,
                            "{what}: finger {s} {}",
                            h.finger[s]
                        );
                        let palm = fore.cross(Vec3::NEG_Z * turn) * -side;
                        assert!(
                            vec_angle(h.palm[s], palm.normalize()) < 1e-3,
                            "{what}: palm {s} {} vs {palm}",
                            h.palm[s]
                        );
                        assert!(h.palm[s].dot(h.right) * side < -0.9);
                    }
                }
            }
        }
    }
}

#[test]
fn names_from_other_tools() {
    for (name, role) in [
        ("upper_arm.l_Armature", Some(Role::LeftUpperArm)),
        ("Bip01 R Forearm", Some(Role::RightLowerArm)),
        ("Bip01 Pelvis", Some(Role::Hips)),
        ("thigh_r", Some(Role::RightUpperLeg)),
        ("calf_l", Some(Role::LeftLowerLeg)),
        ("clavicle_l", Some(Role::LeftShoulder)),
        ("mixamorig:LeftHandThumb1", None),
        ("mixamorig:HeadTop_End", None),
        ("upperarm_twist_01_l", None),
        ("MCH-forearm_ik.L", None),
        ("leftUpperArm", Some(Role::LeftUpperArm)),
        ("J_Bip_C_UpperChest", Some(Role::UpperChest)),
        ("RightHandPinky1", Some(Role::RightLittle)),
        ("", None),
        ("éèà:::...", None),
        ("Root", None),
    ] {
        assert_eq!(role_from_name(name), role, "{name}");
    }
}

/// The test character (Godot names and convention, no fingers) keeps the palm and finger axes the
/// nodes used before: the hand bone's +Z and +Y.
#[test]
fn godot_convention_without_fingers_keeps_the_bone_axes() {
    let body: Vec<_> = reference()
        .into_iter()
        .filter(|b| !b.0.contains("Proximal"))
        .collect();
    let names = names_of(&body);
    let index = |n: &str| bone_index(&body, n);
    let parents = parents_of(&body);
    // Each arm bone's +Y runs to its child, +X toward the character's right.
    let rest: Vec<(Vec3, Quat)> = body
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let child = body
                .iter()
                .position(|c| parents[body.iter().position(|x| x.0 == c.0).unwrap()] == i as i32);
            let y = child
                .map(|c| (body[c].2 - b.2).normalize())
                .filter(|_| b.0.contains("Arm"))
                .unwrap_or(Vec3::Y);
            let z = Vec3::X.cross(y).normalize();
            let x = y.cross(z);
            (b.2, Quat::from_mat3(&glam::Mat3::from_cols(x, y, z)))
        })
        .collect();
    let h = Humanoid::derive(&names, &parents, &rest);
    for (s, hand) in [(0, "LeftHand"), (1, "RightHand")] {
        let q = rest[index(hand) as usize].1;
        assert!(vec_angle(h.palm[s], q * Vec3::Z) < 1e-4);
        assert!(vec_angle(h.finger[s], q * Vec3::Y) < 1e-4);
        // Without fingers the hand is sized from the height (1.75 m: 18.9 × 8.75 × 3.06 cm).
        let size = h.hand_size([Side::Left, Side::Right][s]);
        assert!((size.length - 0.189).abs() < 1e-3, "{size:?}");
        assert!((size.width - 0.0875).abs() < 1e-3, "{size:?}");
        assert!((size.thickness - 0.030_625).abs() < 1e-4, "{size:?}");
    }
}

/// Hostile skeletons: empty, a cycle of parents, NaN and huge poses, all bones at one point.
#[test]
fn hostile_skeletons_give_finite_rigs() {
    let nan = (
        Vec3::splat(f32::NAN),
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
    );
    let huge = (Vec3::splat(f32::MAX), Quat::IDENTITY);
    let zero = (Vec3::ZERO, Quat::IDENTITY);
    let names = [
        "Hips",
        "Head",
        "LeftUpperArm",
        "LeftLowerArm",
        "LeftHand",
        "RightHand",
    ];
    for rest in [[nan; 6], [huge; 6], [zero; 6]] {
        for parents in [[-1, 0, 0, 2, 3, 0], [1, 0, 3, 2, 5, 4], [9, 9, 9, 9, 9, 9]] {
            let h = Humanoid::derive(&names, &parents, &rest);
            assert!(h.is_finite(), "{h:?}");
            assert!(h.height > 0.0);
        }
    }
    let empty: [&str; 0] = [];
    let h = Humanoid::derive(&empty, &[], &[]);
    assert_eq!(h.height, REFERENCE_HEIGHT);
    assert_eq!(h.forward, Vec3::NEG_Z);
}

/// A rig named like a COLLADA export (glTF sample "Cesium Man"): no bone is called hips, head, hand
/// or foot; the torso, neck, arms and legs are chains named after the part plus a number
/// (`Skeleton_torso_joint_1`, `leg_joint_L_1` … `leg_joint_L_5`, `Skeleton_arm_joint_L__4_` counting
/// down), every bone rolled at random about its own axis, T-pose, facing +Z.
#[test]
fn chains_named_after_the_part_plus_a_number() {
    let mut rng = Lcg(15);
    let mut body: Vec<(&str, &str, Vec3)> = vec![
        ("Skeleton_torso_joint_1", "", Vec3::new(0.0, 0.68, 0.0)),
        (
            "Skeleton_torso_joint_2",
            "Skeleton_torso_joint_1",
            Vec3::new(0.0, 0.83, 0.0),
        ),
        (
            "torso_joint_3",
            "Skeleton_torso_joint_2",
            Vec3::new(0.0, 1.08, 0.0),
        ),
        (
            "Skeleton_neck_joint_1",
            "torso_joint_3",
            Vec3::new(0.0, 1.14, 0.0),
        ),
        (
            "Skeleton_neck_joint_2",
            "Skeleton_neck_joint_1",
            Vec3::new(0.0, 1.19, 0.0),
        ),
    ];
    // The character faces +Z: its left is +X.
    for (side, s) in [("L", 1.0f32), ("R", -1.0)] {
        let leak = |n: String| -> &'static str { Box::leak(n.into_boxed_str()) };
        let arm = [
            leak(format!("Skeleton_arm_joint_{side}__4_")),
            leak(format!("Skeleton_arm_joint_{side}__3_")),
            leak(format!("Skeleton_arm_joint_{side}__2_")),
        ];
        body.push((arm[0], "torso_joint_3", Vec3::new(0.09 * s, 1.08, 0.0)));
        body.push((arm[1], arm[0], Vec3::new(0.31 * s, 1.08, 0.0)));
        body.push((arm[2], arm[1], Vec3::new(0.56 * s, 1.08, 0.0)));
        let leg = [1, 2, 3, 5].map(|k| leak(format!("leg_joint_{side}_{k}")));
        body.push((
            leg[0],
            "Skeleton_torso_joint_1",
            Vec3::new(0.07 * s, 0.62, 0.0),
        ));
        body.push((leg[1], leg[0], Vec3::new(0.07 * s, 0.35, 0.0)));
        body.push((leg[2], leg[1], Vec3::new(0.07 * s, 0.07, 0.0)));
        body.push((leg[3], leg[2], Vec3::new(0.07 * s, 0.0, 0.12)));
    }
    let index = |n: &str| bone_index(&body, n);
    let h = derive_rolled(&body, &mut rng);
    for (role, name) in [
        (Role::Hips, "Skeleton_torso_joint_1"),
        (Role::Spine, "Skeleton_torso_joint_2"),
        (Role::Chest, "torso_joint_3"),
        (Role::Neck, "Skeleton_neck_joint_1"),
        (Role::Head, "Skeleton_neck_joint_2"),
        (Role::LeftUpperArm, "Skeleton_arm_joint_L__4_"),
        (Role::LeftLowerArm, "Skeleton_arm_joint_L__3_"),
        (Role::LeftHand, "Skeleton_arm_joint_L__2_"),
        (Role::RightUpperArm, "Skeleton_arm_joint_R__4_"),
        (Role::RightLowerArm, "Skeleton_arm_joint_R__3_"),
        (Role::RightHand, "Skeleton_arm_joint_R__2_"),
        (Role::LeftUpperLeg, "leg_joint_L_1"),
        (Role::LeftLowerLeg, "leg_joint_L_2"),
        (Role::LeftFoot, "leg_joint_L_3"),
        (Role::LeftToes, "leg_joint_L_5"),
        (Role::RightUpperLeg, "leg_joint_R_1"),
        (Role::RightLowerLeg, "leg_joint_R_2"),
        (Role::RightFoot, "leg_joint_R_3"),
        (Role::RightToes, "leg_joint_R_5"),
    ] {
        assert_eq!(h.bone(role), Some(index(name) as usize), "{role:?}");
    }
    assert!(vec_angle(h.forward, Vec3::Z) < 1e-4, "{:?}", h.forward);
    assert!(vec_angle(h.up, Vec3::Y) < 1e-4, "{:?}", h.up);
    assert!((h.arm_length[0] - 0.47).abs() < 1e-4, "{:?}", h.arm_length);
    // Two limbs that merely share a name are not a chain: both arms called "arm" on one side
    // keep the hierarchy rule (nothing is read as a hand).
    let split = ["Hips", "arm_L_1", "arm_L_2", "Head"];
    let h = Humanoid::derive(&split, &[-1, 0, 0, 0], &[(Vec3::ZERO, Quat::IDENTITY); 4]);
    assert_eq!(h.bone(Role::LeftHand), None);
    assert_eq!(h.bone(Role::LeftUpperArm), Some(1));
}

/// A big-headed body (head joint at 0.79 of its 1.51 m): its skinned mesh's extent gives the height
/// and the head's size; a mesh extent below the head joint, inverted or NaN is ignored.
#[test]
fn the_mesh_extent_measures_a_stylised_body() {
    let names = ["Hips", "Head", "LeftToes", "RightToes"];
    let rest = [
        (Vec3::new(0.0, 0.68, 0.0), Quat::IDENTITY),
        (Vec3::new(0.0, 1.19, 0.0), Quat::IDENTITY),
        (Vec3::new(0.07, 0.02, 0.03), Quat::IDENTITY),
        (Vec3::new(-0.07, 0.02, 0.03), Quat::IDENTITY),
    ];
    let mut h = Humanoid::derive(&names, &[-1, 0, 0, 0], &rest);
    // From the joints alone: (1.19 − 0.02) / 0.9 = 1.30 m, 14 % short.
    assert!((h.height - 1.3).abs() < 1e-3, "{}", h.height);
    let joints = h.clone();
    for (lo, hi) in [
        (0.0, 1.0),
        (1.0, 0.0),
        (f32::NAN, 1.5),
        (0.0, f32::INFINITY),
    ] {
        h.fit_extent(lo, hi, &rest);
        assert_eq!(h, joints, "{lo} {hi}");
    }
    h.fit_extent(0.0, 1.5066, &rest);
    assert!((h.height - 1.5066).abs() < 1e-4, "{}", h.height);
    assert!((h.head_size - 0.3166).abs() < 1e-4, "{}", h.head_size);
    assert!((h.hand_width[0] - 1.5066 / 20.0).abs() < 1e-5);
}

/// A mitten hand without finger bones (as Cesium Man's): its forearm runs down and forward, the
/// hand lies flat (palm down, T-pose) and its bone is rolled. The hand's own vertex bounds give the
/// palm (thinnest axis, on the guessed side), the length along the fingers and the thickness as
/// twice the wrist-to-palm distance; degenerate bounds change nothing.
#[test]
fn a_hand_measured_from_its_vertices() {
    let names = ["Hips", "Head", "arm_L_1", "arm_L_2", "arm_L_3"];
    let elbow = Vec3::new(0.31, 0.96, 0.0);
    let wrist = Vec3::new(0.45, 0.88, 0.08);
    let roll = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(0.3);
    let rest = [
        (Vec3::new(0.0, 0.68, 0.0), Quat::IDENTITY),
        (Vec3::new(0.0, 1.19, 0.0), Quat::IDENTITY),
        (Vec3::new(0.09, 1.07, 0.0), Quat::IDENTITY),
        (elbow, Quat::IDENTITY),
        (wrist, roll),
    ];
    let mut h = Humanoid::derive(&names, &[-1, 0, 0, 2, 3], &rest);
    assert_eq!(h.bone(Role::LeftHand), Some(4));
    let guessed = h.palm[0];
    // The mitten, in the skeleton's axes from the wrist: 14 cm out along +X, 8 cm across (Z),
    // 6 cm thick (Y), 2 cm above and 4 cm below the wrist; as bounds in the rolled bone's frame.
    let (world_lo, world_hi) = (Vec3::new(-0.01, -0.04, -0.04), Vec3::new(0.14, 0.02, 0.04));
    let inv = roll.conjugate();
    // The bone's frame is only rotated about Y and X, so take the box's corners through it and
    // bound them (a box in the bone's frame that holds the hand).
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for c in 0..8 {
        let p = Vec3::new(
            if c & 1 == 0 { world_lo.x } else { world_hi.x },
            if c & 2 == 0 { world_lo.y } else { world_hi.y },
            if c & 4 == 0 { world_lo.z } else { world_hi.z },
        );
        lo = lo.min(inv * p);
        hi = hi.max(inv * p);
    }
    let before = h.clone();
    for (a, b) in [(hi, lo), (Vec3::NAN, hi), (lo, lo)] {
        h.fit_hand(Side::Left, a, b, roll);
        assert_eq!(h, before);
    }
    // Unrolled: the bone's frame is the skeleton's, the thinnest axis Y, the palm down.
    let mut flat = before.clone();
    flat.fit_hand(Side::Left, world_lo, world_hi, Quat::IDENTITY);
    assert!(
        vec_angle(flat.palm[0], Vec3::NEG_Y) < 1e-4,
        "{:?}",
        flat.palm[0]
    );
    assert!(flat.palm[0].dot(guessed) > 0.0);
    assert!(flat.finger[0].dot(flat.palm[0]).abs() < 1e-5);
    let size = flat.hand_size(Side::Left);
    // The palm's surface 4 cm below the wrist: thickness 8 cm.
    assert!((size.thickness - 0.08).abs() < 1e-5, "{size:?}");
    assert!(size.length > 0.1 && size.length < 0.16, "{size:?}");
    assert!(size.width > 0.07 && size.width < 0.16, "{size:?}");
    // Rolled: the same palm in the skeleton's space, up to the box's looser fit.
    h.fit_hand(Side::Left, lo, hi, roll);
    assert!(h.measured_hand[0].is_some());
    assert!(h.palm[0].dot(guessed) > 0.0);
    assert!(h.finger[0].dot(h.palm[0]).abs() < 1e-5);
}

/// A Blender robot with no hand bone (Robot Expressive's arm, in its own units: a forearm with
/// three palm bones and a thumb leaving it at the wrist, a finger under each palm, bones rolled at
/// random): the palm bone carrying the middle finger is the hand, the other palms and the thumb
/// turn with it, the fingers give the palm; a forearm twist bone at the wrist is not a hand part;
/// the abdomen is the spine and the torso above it the chest.
#[test]
#[allow(clippy::too_many_lines)] // reason: one skeleton built and checked top to bottom
fn a_hand_made_of_palm_bones_leaving_the_forearm() {
    let mut rng = Lcg(16);
    let mut body: Vec<(&str, &str, Vec3)> = vec![
        ("Hips", "", Vec3::new(0.0, 1.0, 0.0)),
        ("Abdomen", "Hips", Vec3::new(0.0, 1.3, 0.0)),
        ("Torso", "Abdomen", Vec3::new(0.0, 1.8, 0.0)),
        ("Neck", "Torso", Vec3::new(0.0, 2.4, 0.0)),
        ("Head", "Neck", Vec3::new(0.0, 2.7, 0.0)),
    ];
    // Facing +Z: the left is +X. T-pose arms along ±X, palms down.
    for (side, s) in [("L", 1.0f32), ("R", -1.0)] {
        let leak = |n: &str| -> &'static str { Box::leak(format!("{n}.{side}").into_boxed_str()) };
        let wrist = Vec3::new(1.9 * s, 2.2, 0.0);
        body.extend([
            (leak("Shoulder"), "Torso", Vec3::new(0.55 * s, 2.2, 0.0)),
            (
                leak("UpperArm"),
                leak("Shoulder"),
                Vec3::new(0.6 * s, 2.2, 0.0),
            ),
            (
                leak("LowerArm"),
                leak("UpperArm"),
                Vec3::new(1.25 * s, 2.2, 0.0),
            ),
            (leak("Palm1"), leak("LowerArm"), wrist),
            (leak("Palm2"), leak("LowerArm"), wrist),
            (leak("Palm3"), leak("LowerArm"), wrist),
            (
                leak("Thumb"),
                leak("LowerArm"),
                wrist + Vec3::new(0.0, -0.03, 0.19),
            ),
            (
                leak("ForearmTwist"),
                leak("LowerArm"),
                wrist - Vec3::new(0.02 * s, 0.0, 0.0),
            ),
            (
                leak("Index"),
                leak("Palm1"),
                wrist + Vec3::new(0.42 * s, 0.0, 0.1),
            ),
            (
                leak("Middle1"),
                leak("Palm2"),
                wrist + Vec3::new(0.42 * s, 0.0, 0.0),
            ),
            (
                leak("Ring1"),
                leak("Palm3"),
                wrist + Vec3::new(0.42 * s, 0.0, -0.1),
            ),
            (
                leak("Index2"),
                leak("Index"),
                wrist + Vec3::new(0.6 * s, 0.0, 0.1),
            ),
        ]);
    }
    let index = |n: &str| bone_index(&body, n);
    let h = derive_rolled(&body, &mut rng);
    for (side, s, sign) in [(Side::Left, "L", 1.0f32), (Side::Right, "R", -1.0)] {
        let bone = |n: &str| Some(index(&format!("{n}.{s}")) as usize);
        let [upper, lower, hand] = Role::arm(side);
        assert_eq!(h.bone(upper), bone("UpperArm"), "{side:?}");
        assert_eq!(h.bone(lower), bone("LowerArm"), "{side:?}");
        assert_eq!(h.bone(hand), bone("Palm2"), "{side:?}");
        let mut parts: Vec<usize> = h.hand_parts(side).collect();
        parts.sort_unstable();
        let mut expected: Vec<usize> = ["Palm1", "Palm3", "Thumb"]
            .iter()
            .map(|n| bone(n).unwrap())
            .collect();
        expected.sort_unstable();
        assert_eq!(parts, expected, "{side:?}");
        assert!((h.arm_length[side as usize] - 1.3).abs() < 1e-4);
        // Fingers along the arm, outward; the palm down (index +Z, ring −Z: a left hand's
        // fingers × (index − ring) is −Y).
        let f = h.finger[side as usize];
        assert!(vec_angle(f, Vec3::X * sign) < 1e-3, "{side:?} {f:?}");
        let palm = h.palm[side as usize];
        assert!(vec_angle(palm, Vec3::NEG_Y) < 1e-3, "{side:?} {palm:?}");
    }
    assert!(vec_angle(h.forward, Vec3::Z) < 1e-4, "{:?}", h.forward);
    // The drawn hand, 0.25 out of the palm, 0.5 long and 0.45 wide, gives the grip's size;
    // degenerate figures change nothing.
    let mut sized = h.clone();
    for bad in [(f32::NAN, 0.5, 0.45), (0.25, -0.5, 0.45), (0.25, 0.5, 0.0)] {
        sized.fit_hand_size(Side::Left, bad.0, bad.1, bad.2);
        assert_eq!(sized, h);
    }
    sized.fit_hand_size(Side::Left, 0.25, 0.5, 0.45);
    let size = sized.hand_size(Side::Left);
    assert!((size.thickness - 0.5).abs() < 1e-6 && (size.length - 0.5).abs() < 1e-6);
    assert!((size.width - 0.45).abs() < 1e-6, "{size:?}");
    assert_eq!(sized.palm, h.palm);
    assert_eq!(sized.finger, h.finger);
    // The torso: the abdomen is the spine (nearer the root than the torso, which is the chest).
    assert_eq!(h.bone(Role::Spine), Some(index("Abdomen") as usize));
    assert_eq!(h.bone(Role::Chest), Some(index("Torso") as usize));
    // A rig whose hand has its own bone has no other hand parts, even with a twist bone at the
    // wrist.
    let g = generate(Convention::Godot, 1.0, -1.0, &mut rng, true);
    assert_eq!(derive(&g).hand_parts(Side::Left).count(), 0);
    assert_eq!(derive(&g).hand_parts(Side::Right).count(), 0);
}

/// A generated skeleton as [`skeleton::Bones`].
struct Listed<'a> {
    names: &'a [String],
    parents: &'a [i32],
}

impl<'a> Listed<'a> {
    fn of(g: &'a Generated) -> Self {
        Self {
            names: &g.names,
            parents: &g.parents,
        }
    }
}

impl skeleton::Bones for Listed<'_> {
    fn count(&self) -> i32 {
        self.names.len() as i32
    }
    fn find(&self, name: &str) -> i32 {
        self.names
            .iter()
            .position(|n| n == name)
            .map_or(-1, |i| i as i32)
    }
    fn parent(&self, bone: i32) -> i32 {
        self.parents[bone as usize]
    }
    fn name(&self, bone: i32) -> String {
        self.names[bone as usize].clone()
    }
    fn label(&self) -> String {
        "Rig/Skeleton3D".into()
    }
}

#[test]
fn a_limb_chain_is_found_by_role_or_name_with_its_hand_parts_and_checked_in_order() {
    use skeleton::{find_limb_chain, Limb};
    let mut rng = Lcg(5);
    // Twist bones between upper arm and forearm: the arm is not a direct chain, the leg is.
    let g = generate(Convention::Mixamo, 1.0, -1.0, &mut rng, true);
    let bones = Listed::of(&g);
    let h = derive(&g);
    let index = |godot: &str| g.index[godot] as i32;
    let arm = find_limb_chain(&bones, ["", "", ""], Limb::RightArm, || h.clone()).unwrap();
    assert_eq!(
        arm.bones,
        [
            index("RightUpperArm"),
            index("RightLowerArm"),
            index("RightHand")
        ]
    );
    assert_eq!(arm.parts, [-1; MAX_HAND_PARTS], "a hand with its own bone");
    assert_eq!(arm.upper_parent, None, "a twist bone in between");
    let leg = find_limb_chain(&bones, ["", "", ""], Limb::LeftLeg, || h.clone()).unwrap();
    assert_eq!(
        leg.bones,
        [
            index("LeftUpperLeg"),
            index("LeftLowerLeg"),
            index("LeftFoot")
        ]
    );
    assert_eq!(leg.upper_parent, Some(index("Hips")));
    // A set name wins (the humanoid is not even built when all three are set).
    let named = [
        g.names[index("LeftUpperLeg") as usize].as_str(),
        g.names[index("LeftLowerLeg") as usize].as_str(),
        g.names[index("LeftToes") as usize].as_str(),
    ];
    let toes = find_limb_chain(&bones, named, Limb::LeftArm, || unreachable!()).unwrap();
    assert_eq!(toes.bones[2], index("LeftToes"));
    assert_eq!(toes.upper_parent, None, "the toes are not the shin's child");
    // Out of order, or a name not in the skeleton: why, naming the bones or the property.
    let reversed = [named[1], named[0], named[2]];
    let err = find_limb_chain(&bones, reversed, Limb::LeftLeg, || unreachable!()).unwrap_err();
    assert_eq!(err, skeleton::not_a_descendant(named[0], named[1]));
    let err = find_limb_chain(&bones, ["", "", "Claw"], Limb::LeftArm, || h.clone()).unwrap_err();
    assert_eq!(
        err,
        skeleton::bone_not_found("end_bone", "Claw", "Rig/Skeleton3D")
    );
}

#[test]
fn an_arm_chain_is_the_humanoid_arm_or_a_named_hand_with_its_parent_and_grandparent() {
    use skeleton::arm_chain;
    let mut rng = Lcg(7);
    let g = generate(Convention::Mixamo, 1.0, -1.0, &mut rng, true);
    let bones = Listed::of(&g);
    let h = derive(&g);
    let index = |godot: &str| g.index[godot] as i32;
    // No name: the humanoid's arm on that side.
    assert_eq!(
        arm_chain(&bones, "", Side::Right, &h),
        Some([
            index("RightUpperArm"),
            index("RightLowerArm"),
            index("RightHand")
        ])
    );
    // A name: that bone, its parent and grandparent, whatever the side.
    let hand = index("LeftHand");
    let lower = g.parents[hand as usize];
    let upper = g.parents[lower as usize];
    let name = g.names[hand as usize].as_str();
    assert_eq!(
        arm_chain(&bones, name, Side::Right, &h),
        Some([upper, lower, hand])
    );
    // A name not in the skeleton, a bone without a grandparent, a humanoid without arms: none.
    assert_eq!(arm_chain(&bones, "Claw", Side::Left, &h), None);
    let root = g.parents.iter().position(|&p| p < 0).unwrap();
    let child = g.parents.iter().position(|&p| p == root as i32).unwrap();
    assert_eq!(arm_chain(&bones, &g.names[child], Side::Left, &h), None);
    let armless = Humanoid::derive::<&str>(&[], &[], &[]);
    assert_eq!(arm_chain(&bones, "", Side::Left, &armless), None);
}

#[test]
fn a_character_proportion_is_its_height_at_its_skeletons_mean_world_scale() {
    assert!((character_proportion(1.75, Vec3::ONE) - 1.0).abs() < 1e-6);
    assert!((character_proportion(175.0, Vec3::splat(0.01)) - 1.0).abs() < 1e-5);
    assert!(
        (character_proportion(1.75, Vec3::new(-2.0, 2.0, 2.0)) - 2.0).abs() < 1e-6,
        "a mirrored skeleton"
    );
    assert!((character_proportion(3.5, Vec3::new(1.0, 2.0, 3.0)) - 4.0).abs() < 1e-5);
    assert_eq!(character_proportion(0.0, Vec3::ONE), 1.0);
    assert_eq!(character_proportion(1.75, Vec3::ZERO), 1.0);
    assert_eq!(character_proportion(f32::NAN, Vec3::ONE), 1.0);
    assert_eq!(character_proportion(1.75, Vec3::splat(f32::INFINITY)), 1.0);
}

#[test]
fn world_proportion_is_the_height_in_the_world_over_the_reference_and_1_when_degenerate() {
    assert!((world_proportion(1.75, 1.0) - 1.0).abs() < 1e-6);
    assert!(
        (world_proportion(175.0, 0.01) - 1.0).abs() < 1e-5,
        "centimetre rig, scaled"
    );
    assert!((world_proportion(1.75, mean_scale(Vec3::new(-2.0, 2.0, 2.0))) - 2.0).abs() < 1e-6);
    for (h, s) in [
        (0.0, 1.0),
        (1.75, 0.0),
        (f32::NAN, 1.0),
        (1.75, f32::INFINITY),
        (-1.0, 1.0),
    ] {
        assert_eq!(world_proportion(h, s), 1.0, "height {h}, scale {s}");
    }
}

/// A hand with finger bones is sized along the palm and fingers they give, one without from its
/// vertices' bounds, and a rig without hands is not measured.
#[test]
fn a_hand_is_measured_by_its_bounds_or_along_its_fingers() {
    let measure = |keep: &dyn Fn(&str) -> bool| {
        let body: Vec<_> = reference().into_iter().filter(|b| keep(b.0)).collect();
        let names = names_of(&body);
        let index = |n: &str| bone_index(&body, n);
        let parents = parents_of(&body);
        let rest: Vec<(Vec3, Quat)> = body.iter().map(|b| (b.2, Quat::IDENTITY)).collect();
        let h = Humanoid::derive(&names, &parents, &rest);
        let hand = index("LeftHand");
        (h.hand_measure(Side::Left), usize::try_from(hand).ok())
    };
    let (with_fingers, hand) = measure(&|_| true);
    assert_eq!(with_fingers, Some(HandMeasure::Extent(hand.unwrap())));
    let (without, hand) = measure(&|n| !n.contains("Proximal"));
    assert_eq!(without, Some(HandMeasure::Bounds(hand.unwrap())));
    let (handless, _) = measure(&|n| !n.contains("Hand") && !n.contains("Proximal"));
    assert_eq!(handless, None);
}
