//! A humanoid rig described from a skeleton's bone names and rest pose, so that every node can set
//! itself up on a skeleton it has never seen.
//!
//! [`Humanoid::derive`] takes the bones' names, parents and model-space rest poses (any space the
//! skeleton's bones share) and finds:
//!
//! * **which bone plays which [`Role`]**, from the name: Godot's humanoid profile (`LeftUpperArm`;
//!   also what a `BoneMap` retarget produces), Blender's `upper_arm.l` / `upper_arm.L` /
//!   `UpperArm_L` / `L_UpperArm` (with any `_Armature`-style suffix), Mixamo's `mixamorig:LeftArm`,
//!   VRM / VRoid's `leftUpperArm` / `J_Bip_L_UpperArm`, 3ds Max's `Bip01 L UpperArm`, Rigify's
//!   `DEF-upper_arm.L` and numbered torso (`DEF-spine` … `DEF-spine.006`), `thigh`, `calf`,
//!   `clavicle`, `forearm`… Names are split into words (separators, camel case, digits), the side
//!   words (`l`, `left`, `r`, `right`) are taken out and the rest is looked up. Control, twist, roll,
//!   IK and end bones are never chosen; among several candidates the one nearest the root wins. A
//!   missing forearm or upper arm (leg: shin, thigh) is taken from the hierarchy above the hand
//!   (foot), skipping twist bones; a missing neck is the head's parent and a missing chest the neck's.
//!   Limbs named only after the part plus a number, as COLLADA exports name them
//!   (`arm_joint_L_1` …, `leg_joint_L_1` … `leg_joint_L_5`, `neck_joint_1`, `torso_joint_1` …),
//!   are read as one chain in depth order when each is a descendant of the one before: upper arm,
//!   forearm, hand; thigh, shin, foot, toes; neck, head; hips, spine, chest, upper chest.
//!   A rig with no hand bone, whose palm bones and thumb leave the forearm at the wrist (Blender's
//!   `LowerArm.L` → `Palm1.L`, `Palm2.L`, `Palm3.L`, `Thumb.L`), gets the palm bone that carries
//!   the middle finger as its hand and the others as [`Humanoid::hand_parts`], which turn with it.
//! * **the body's axes** in the skeleton's space: up from the hips to the head, right from the left
//!   to the right upper arm (or leg), forward = up × right. A rig facing +Z gets forward +Z.
//! * **proportions**: height, arm and leg lengths, shoulder width, head size, hand width.
//! * **the hands' palm normal and finger direction**, per hand: the fingers point from the wrist to
//!   the first joints of the index, middle, ring and little fingers; the palm is perpendicular to
//!   them and to the line across the knuckles (index → little). Without finger bones the rig's own
//!   convention is used when it is Godot's (the palm on the hand bone's +Z, fingers on +Y), else
//!   the forearm's direction and a palm facing the body's midline and down.
//!
//! Everything is plain arithmetic on the rest pose: no allocation after [`Humanoid::derive`], no
//! panic, no NaN for any input (degenerate rest poses fall back to Godot's axes and the reference
//! proportions).

use glam::{Quat, Vec3};

use crate::kit::pose::{rotate, unit_vec3};

pub mod skeleton;

/// The reference human the default absolute values are tuned for: 1.75 m tall.
pub const REFERENCE_HEIGHT: f32 = 1.75;
/// The reference human's arm, upper arm plus forearm (m): a pair's `reach_margin` is given for it.
pub const REFERENCE_ARM: f32 = 0.54;

/// The head bone's origin sits at this fraction of the height above the toes' joints (a human's
/// head joint is at about nine tenths of the height; the test character's at 1.575 of 1.75 m).
pub const HEAD_JOINT_FRACTION: f32 = 0.9;

/// A human hand's length (wrist to finger tips) is about this fraction of the height (0.19 m of
/// 1.75 m); used when a hand has no finger bones.
pub const HAND_LENGTH_FRACTION: f32 = 0.108;

/// A hand's thickness at the palm over its width (about 3 cm for an 8.75 cm hand).
pub const HAND_THICKNESS_RATIO: f32 = 0.35;

/// A hand's outer size, in the skeleton's units: see [`Humanoid::hand_size`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandSize {
    /// From the wrist (the hand bone's origin) to the finger tips.
    pub length: f32,
    /// Across the hand, little finger to index side.
    pub width: f32,
    /// From the back of the hand to the palm.
    pub thickness: f32,
}

/// Left or right, as seen by the character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The character's left (−X for a Godot-facing rig).
    Left = 0,
    /// The character's right.
    Right = 1,
}

macro_rules! roles {
    ($($role:ident => $name:literal,)*) => {
        /// A bone's part in a humanoid, named after Godot's `SkeletonProfileHumanoid`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub enum Role { $($role,)* }

        impl Role {
            /// Every role, in declaration order.
            pub const ALL: &'static [Role] = &[$(Role::$role,)*];

            /// The bone's name in Godot's humanoid profile.
            #[must_use]
            pub fn godot_name(self) -> &'static str {
                match self { $(Role::$role => $name,)* }
            }
        }
    };
}

roles! {
    Hips => "Hips",
    Spine => "Spine",
    Chest => "Chest",
    UpperChest => "UpperChest",
    Neck => "Neck",
    Head => "Head",
    LeftShoulder => "LeftShoulder",
    LeftUpperArm => "LeftUpperArm",
    LeftLowerArm => "LeftLowerArm",
    LeftHand => "LeftHand",
    RightShoulder => "RightShoulder",
    RightUpperArm => "RightUpperArm",
    RightLowerArm => "RightLowerArm",
    RightHand => "RightHand",
    LeftUpperLeg => "LeftUpperLeg",
    LeftLowerLeg => "LeftLowerLeg",
    LeftFoot => "LeftFoot",
    LeftToes => "LeftToes",
    RightUpperLeg => "RightUpperLeg",
    RightLowerLeg => "RightLowerLeg",
    RightFoot => "RightFoot",
    RightToes => "RightToes",
    LeftIndex => "LeftIndexProximal",
    LeftMiddle => "LeftMiddleProximal",
    LeftRing => "LeftRingProximal",
    LeftLittle => "LeftLittleProximal",
    RightIndex => "RightIndexProximal",
    RightMiddle => "RightMiddleProximal",
    RightRing => "RightRingProximal",
    RightLittle => "RightLittleProximal",
}

const ROLE_COUNT: usize = Role::ALL.len();

impl Role {
    /// The arm's `[upper, lower, hand]` roles.
    #[must_use]
    pub const fn arm(side: Side) -> [Role; 3] {
        match side {
            Side::Left => [Role::LeftUpperArm, Role::LeftLowerArm, Role::LeftHand],
            Side::Right => [Role::RightUpperArm, Role::RightLowerArm, Role::RightHand],
        }
    }

    /// The leg's `[upper, lower, foot]` roles.
    #[must_use]
    pub const fn leg(side: Side) -> [Role; 3] {
        match side {
            Side::Left => [Role::LeftUpperLeg, Role::LeftLowerLeg, Role::LeftFoot],
            Side::Right => [Role::RightUpperLeg, Role::RightLowerLeg, Role::RightFoot],
        }
    }

    /// The hand's `[index, middle, ring, little]` first finger joints.
    #[must_use]
    pub const fn fingers(side: Side) -> [Role; 4] {
        match side {
            Side::Left => [
                Role::LeftIndex,
                Role::LeftMiddle,
                Role::LeftRing,
                Role::LeftLittle,
            ],
            Side::Right => [
                Role::RightIndex,
                Role::RightMiddle,
                Role::RightRing,
                Role::RightLittle,
            ],
        }
    }
}

impl Role {
    /// What [`role_from_name`] accepts for this role, for a warning: the words a name may be made
    /// of once its side word is taken out, e.g. for the left upper arm `LeftUpperArm, left/l +
    /// upper arm | arm | up arm (upper_arm.l, UpperArm_L, mixamorig:LeftArm, J_Bip_L_UpperArm…)`.
    #[must_use]
    pub fn tried(self) -> &'static str {
        use Role::*;
        match self {
            Hips => "Hips, hips | hip | pelvis, else the first of a numbered torso chain",
            Spine => "Spine, spine | torso | abdomen",
            Chest | UpperChest => "Chest, chest | upper chest, else the neck's parent",
            Neck => "Neck, neck, else the head's parent",
            Head => "Head, head, else the last of a chain of bones all named neck + a number",
            LeftShoulder | RightShoulder => "<side>Shoulder, side + shoulder | clavicle | collar",
            LeftUpperArm | RightUpperArm => {
                "<side>UpperArm, side + upper arm | arm | up arm (upper_arm.l, UpperArm_L, \
                 L_UpperArm, mixamorig:LeftArm, leftUpperArm, J_Bip_L_UpperArm, Bip01 L UpperArm), \
                 else the forearm's parent"
            }
            LeftLowerArm | RightLowerArm => {
                "<side>LowerArm, side + lower arm | forearm | elbow, else the hand's parent (twist \
                 bones skipped)"
            }
            LeftHand | RightHand => {
                "<side>Hand, side + hand | wrist, else the third of a chain of bones all named \
                 side + arm + a number (arm_joint_L_1 …)"
            }
            LeftUpperLeg | RightUpperLeg => "<side>UpperLeg, side + upper leg | thigh | up leg",
            LeftLowerLeg | RightLowerLeg => {
                "<side>LowerLeg, side + lower leg | leg | shin | calf | knee, else the foot's parent"
            }
            LeftFoot | RightFoot => {
                "<side>Foot, side + foot | ankle, else the third of a chain of bones all named side + \
                 leg + a number (leg_joint_L_1 …)"
            }
            LeftToes | RightToes => "<side>Toes, side + toes | toe | toe base | ball",
            _ => "side + index | middle | ring | little | pinky (first joint nearest the hand)",
        }
    }
}

/// Words that mark a bone no node should drive (controls, helpers, twist and end bones).
const SKIP_WORDS: &[&str] = &[
    "twist",
    "roll",
    "ik",
    "fk",
    "pole",
    "target",
    "tgt",
    "ctrl",
    "control",
    "mch",
    "org",
    "end",
    "tip",
    "nub",
    "helper",
    "socket",
    "corrective",
    "bend",
    "meta",
    "metacarpal",
    "palm",
    "sec",
];
/// Words that carry no meaning for the role (rig prefixes and suffixes).
const NOISE_WORDS: &[&str] = &[
    "mixamorig",
    "armature",
    "j",
    "bip",
    "biped",
    "c",
    "def",
    "bone",
    "jnt",
    "joint",
    "skeleton",
    "f",
];

/// Returns `k`, a character's height in the world over [`REFERENCE_HEIGHT`]: `height` (skeleton
/// units) times `world_scale` (the skeleton's mean scale in the world, see [`mean_scale`]) over
/// 1.75 m. The seed's lengths and speeds for the reference human are multiplied by it. Returns 1
/// when `k` is not finite and above 10⁻⁶ (a degenerate rig or scale).
#[must_use]
pub fn world_proportion(height: f32, world_scale: f32) -> f32 {
    let k = height * world_scale / REFERENCE_HEIGHT;
    if k.is_finite() && k > 1e-6 {
        k
    } else {
        1.0
    }
}

/// Returns `k` of a character whose humanoid is `height` tall (skeleton units) on a skeleton with
/// the world scale `skeleton_scale` (its global basis's axis lengths): [`world_proportion`] at
/// the [`mean_scale`] of that scale, 1 when degenerate.
#[must_use]
pub fn character_proportion(height: f32, skeleton_scale: Vec3) -> f32 {
    world_proportion(height, mean_scale(skeleton_scale))
}

/// Returns the mean of a scale's absolute axes: the uniform scale a (nearly) uniformly scaled,
/// possibly mirrored, node has.
#[must_use]
pub fn mean_scale(scale: Vec3) -> f32 {
    let v = scale.abs();
    (v.x + v.y + v.z) / 3.0
}

/// Returns the role a bone's name gives it (ignoring the hierarchy), or `None`.
#[must_use]
pub fn role_from_name(name: &str) -> Option<Role> {
    let mut words: [&str; 12] = [""; 12];
    let mut count = 0;
    let mut side = None;
    let mut key = [0u8; 48];
    let mut key_len = 0;
    for word in Words::new(name) {
        if count == words.len() {
            break;
        }
        words[count] = word;
        count += 1;
    }
    for &word in &words[..count] {
        let lower = Lower(word);
        if lower.eq_any(SKIP_WORDS) {
            return None;
        }
        if lower.eq_any(&["l", "left"]) {
            side = Some(Side::Left);
            continue;
        }
        if lower.eq_any(&["r", "right"]) {
            side = Some(Side::Right);
            continue;
        }
        if lower.eq_any(NOISE_WORDS) || word.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for b in word.bytes() {
            if key_len == key.len() {
                return None;
            }
            key[key_len] = b.to_ascii_lowercase();
            key_len += 1;
        }
    }
    let key = core::str::from_utf8(&key[..key_len]).ok()?;
    if let Some(side) = side {
        return sided_role(side, key);
    }
    Some(match key {
        "hips" | "hip" | "pelvis" => Role::Hips,
        "spine" | "torso" | "abdomen" => Role::Spine,
        "chest" => Role::Chest,
        "upperchest" => Role::UpperChest,
        "neck" => Role::Neck,
        "head" => Role::Head,
        _ => return None,
    })
}

/// Returns the role of a left or right bone (arm, leg, finger) from its name's key, or `None`.
fn sided_role(side: Side, key: &str) -> Option<Role> {
    let finger = |k: &str| -> Option<usize> {
        [
            &["index"][..],
            &["middle"][..],
            &["ring"][..],
            &["little", "pinky", "pinkie"][..],
        ]
        .iter()
        .position(|names| names.iter().any(|n| k.contains(n)))
    };
    if let Some(f) = finger(key) {
        return Some(Role::fingers(side)[f]);
    }
    if key.contains("thumb") {
        return None;
    }
    let [upper_arm, lower_arm, hand] = Role::arm(side);
    let [upper_leg, lower_leg, foot] = Role::leg(side);
    let (shoulder, toes) = match side {
        Side::Left => (Role::LeftShoulder, Role::LeftToes),
        Side::Right => (Role::RightShoulder, Role::RightToes),
    };
    Some(match key {
        "shoulder" | "clavicle" | "collar" | "collarbone" => shoulder,
        "upperarm" | "arm" | "uparm" => upper_arm,
        "lowerarm" | "forearm" | "lowarm" | "elbow" => lower_arm,
        "hand" | "wrist" => hand,
        "upperleg" | "thigh" | "upleg" | "femur" => upper_leg,
        "lowerleg" | "leg" | "shin" | "calf" | "knee" | "lowleg" => lower_leg,
        "foot" | "ankle" => foot,
        "toes" | "toe" | "toebase" | "ball" => toes,
        _ => return None,
    })
}

/// An ASCII-case-insensitive view of a word.
struct Lower<'a>(&'a str);

impl Lower<'_> {
    fn eq_any(&self, list: &[&str]) -> bool {
        list.iter().any(|w| w.eq_ignore_ascii_case(self.0))
    }
}

/// Splits a bone name into words: at separators, at lower → upper case changes (`UpperArm`), and
/// between letters and digits (`Spine1`).
struct Words<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Words<'a> {
    fn new(s: &'a str) -> Self {
        Self { s, at: 0 }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.s.as_bytes();
        while self.at < bytes.len() && !bytes[self.at].is_ascii_alphanumeric() {
            self.at += 1;
        }
        if self.at >= bytes.len() {
            return None;
        }
        let start = self.at;
        self.at += 1;
        while self.at < bytes.len() {
            let (prev, b) = (bytes[self.at - 1], bytes[self.at]);
            let boundary = !b.is_ascii_alphanumeric()
                || (prev.is_ascii_lowercase() && b.is_ascii_uppercase())
                || (prev.is_ascii_digit() != b.is_ascii_digit());
            if boundary {
                break;
            }
            self.at += 1;
        }
        Some(&self.s[start..self.at])
    }
}

/// Returns the rest position of the bone playing `role`, when it has one and it is finite.
fn rest_position(
    bones: &[Option<usize>; ROLE_COUNT],
    rest: &[(Vec3, Quat)],
    role: Role,
) -> Option<Vec3> {
    bones[role as usize]
        .and_then(|i| rest.get(i))
        .map(|r| r.0)
        .filter(|p| p.is_finite())
}

/// A skeleton's bone names, parents and rest poses, as far as all three have entries.
struct Skeleton<'a, S> {
    names: &'a [S],
    parents: &'a [i32],
    rest: &'a [(Vec3, Quat)],
    n: usize,
}

impl<S: AsRef<str>> Skeleton<'_, S> {
    /// Returns how many parents are above a bone (at most one more than the bone count).
    fn depth(&self, mut bone: usize) -> usize {
        let (parents, n) = (self.parents, self.n);
        let mut d = 0;
        while d <= n {
            match usize::try_from(parents[bone]) {
                Ok(p) if p < n => bone = p,
                _ => break,
            }
            d += 1;
        }
        d
    }

    /// Returns whether bone `a` is an ancestor of bone `b`.
    fn is_ancestor(&self, a: usize, mut b: usize) -> bool {
        let (parents, n) = (self.parents, self.n);
        for _ in 0..=n {
            match usize::try_from(parents[b]) {
                Ok(p) if p < n => {
                    if p == a {
                        return true;
                    }
                    b = p;
                }
                _ => return false,
            }
        }
        false
    }

    /// Returns a bone's parent, when it has one in the skeleton.
    fn parent_of(&self, b: usize) -> Option<usize> {
        usize::try_from(self.parents[b])
            .ok()
            .filter(|&p| p < self.n)
    }

    /// Returns the bones named after `role` plus a number, in depth order, when they are one chain.
    fn numbered_chain(&self, role: Role) -> Vec<usize> {
        let (names, n) = (self.names, self.n);
        let mut chain: Vec<(usize, usize)> = names
            .iter()
            .enumerate()
            .take(n)
            .filter(|(_, name)| role_from_name(name.as_ref()) == Some(role))
            .map(|(i, _)| (self.depth(i), i))
            .collect();
        chain.sort_unstable();
        let c: Vec<usize> = chain.into_iter().map(|(_, i)| i).collect();
        if c.windows(2).all(|w| self.is_ancestor(w[0], w[1])) {
            c
        } else {
            Vec::new()
        }
    }

    /// Returns the nearest ancestor of a bone that is not a twist, roll or bend bone.
    fn usable_parent(&self, bone: usize) -> Option<usize> {
        let (names, parents, n) = (self.names, self.parents, self.n);
        let mut b = bone;
        for _ in 0..=n {
            let p = usize::try_from(parents[b]).ok().filter(|&p| p < n)?;
            let twist =
                Words::new(names[p].as_ref()).any(|w| Lower(w).eq_any(&["twist", "roll", "bend"]));
            if !twist {
                return Some(p);
            }
            b = p;
        }
        None
    }

    /// Finds each role's bone by its name (the shallowest bone when several names give one role).
    fn bones_by_name(&self) -> [Option<usize>; ROLE_COUNT] {
        let (names, n) = (self.names, self.n);
        let mut bones = [None; ROLE_COUNT];
        let mut best_depth = [usize::MAX; ROLE_COUNT];
        for (i, name) in names.iter().enumerate().take(n) {
            if let Some(role) = role_from_name(name.as_ref()) {
                let d = self.depth(i);
                if d < best_depth[role as usize] {
                    best_depth[role as usize] = d;
                    bones[role as usize] = Some(i);
                }
            }
        }
        bones
    }

    /// Finds arms named only "arm" and legs named only "leg" plus a number.
    fn numbered_limbs(&self, bones: &mut [Option<usize>; ROLE_COUNT]) {
        // An arm named only "arm" (upper arm, forearm, hand) or a leg named only "leg" (thigh,
        // shin, foot, toes) when its end bone has no name of its own.
        for side in [Side::Left, Side::Right] {
            let [upper_arm, lower_arm, hand] = Role::arm(side);
            let [upper_leg, lower_leg, foot] = Role::leg(side);
            let toes = match side {
                Side::Left => Role::LeftToes,
                Side::Right => Role::RightToes,
            };
            if bones[hand as usize].is_none() && bones[lower_arm as usize].is_none() {
                let c = self.numbered_chain(upper_arm);
                if c.len() >= 3 {
                    for (role, &bone) in [upper_arm, lower_arm, hand].iter().zip(&c) {
                        bones[*role as usize] = Some(bone);
                    }
                }
            }
            if bones[foot as usize].is_none() && bones[upper_leg as usize].is_none() {
                let c = self.numbered_chain(lower_leg);
                if c.len() >= 3 {
                    for (role, &bone) in [upper_leg, lower_leg, foot, toes].iter().zip(&c) {
                        bones[*role as usize] = Some(bone);
                    }
                }
            }
        }
    }

    /// Finds a neck and a torso named only "neck", "spine" or "torso" plus a number (Rigify's too).
    fn numbered_neck_and_torso(&self, bones: &mut [Option<usize>; ROLE_COUNT]) {
        let (names, n) = (self.names, self.n);
        // A neck named only "neck" with no head bone: the last of its chain is the head.
        if bones[Role::Head as usize].is_none() {
            let c = self.numbered_chain(Role::Neck);
            if c.len() >= 2 {
                bones[Role::Neck as usize] = Some(c[0]);
                bones[Role::Head as usize] = c.last().copied();
            }
        }
        // A torso named only "spine" or "torso" plus a number, with no hips bone. With the head
        // found, the chain is the body below the neck: hips, spine, chest, upper chest.
        if bones[Role::Hips as usize].is_none() && bones[Role::Head as usize].is_some() {
            let c = self.numbered_chain(Role::Spine);
            if c.len() >= 2 {
                let roles = [Role::Hips, Role::Spine, Role::Chest, Role::UpperChest];
                for (role, &bone) in roles.iter().zip(&c) {
                    bones[*role as usize] = Some(bone);
                }
            }
        }
        // Rigify numbers its torso: `spine` (the pelvis), `spine.001` … up to the head (`DEF-`
        // prefixes are noise, `ORG-`/`MCH-` bones are skipped), so no bone is called hips or head.
        // With neither found by name, a chain of at least four bones named only "spine" (plus a
        // number) is read that way, in depth order: hips, spine, chest, upper chest (with six or
        // more), the neck (third from the end with seven or more, else second), the head (last).
        if bones[Role::Hips as usize].is_none() && bones[Role::Head as usize].is_none() {
            let mut chain: Vec<(usize, usize)> = names
                .iter()
                .enumerate()
                .take(n)
                .filter(|(_, name)| role_from_name(name.as_ref()) == Some(Role::Spine))
                .map(|(i, _)| (self.depth(i), i))
                .collect();
            chain.sort_unstable();
            let c: Vec<usize> = chain.into_iter().map(|(_, i)| i).collect();
            let len = c.len();
            if len >= 4 {
                let neck = if len >= 7 { len - 3 } else { len - 2 };
                bones[Role::Hips as usize] = Some(c[0]);
                bones[Role::Spine as usize] = Some(c[1]);
                bones[Role::Chest as usize] = (neck > 2).then(|| c[2]);
                bones[Role::UpperChest as usize] = (neck > 3).then(|| c[3]);
                bones[Role::Neck as usize] = Some(c[neck]);
                bones[Role::Head as usize] = Some(c[len - 1]);
            }
        }
    }

    /// Finds a hand with no bone of its own from the bones that carry its fingers.
    fn hands_from_fingers(&self, bones: &mut [Option<usize>; ROLE_COUNT]) {
        let n = self.n;
        // A hand with no bone of its own (Blender rigs whose palm bones and thumb leave the forearm
        // at the wrist, as `Palm1.L`, `Palm2.L`… under `LowerArm.L`): the bone that carries the
        // fingers. With the forearm found and the fingers' nearest common ancestor the forearm (or
        // above it), that is the forearm's child on the way to the middle finger (else the index,
        // ring, little); otherwise the fingers' nearest common ancestor (one finger: its parent).
        for side in [Side::Left, Side::Right] {
            let [_, lower_arm, hand] = Role::arm(side);
            if bones[hand as usize].is_some() {
                continue;
            }
            let fingers = Role::fingers(side);
            let found: Vec<usize> = [fingers[1], fingers[0], fingers[2], fingers[3]]
                .iter()
                .filter_map(|r| bones[*r as usize])
                .collect();
            let Some(&first) = found.first() else {
                continue;
            };
            let mut common = self.parent_of(first);
            for &f in &found[1..] {
                while let Some(c) = common {
                    if self.is_ancestor(c, f) {
                        break;
                    }
                    common = self.parent_of(c);
                }
            }
            let Some(common) = common else {
                continue;
            };
            bones[hand as usize] = match bones[lower_arm as usize] {
                Some(fore) if common == fore || self.is_ancestor(common, fore) => {
                    let mut b = first;
                    let mut carrier = None;
                    for _ in 0..=n {
                        match self.parent_of(b) {
                            Some(p) if p == fore => {
                                carrier = Some(b);
                                break;
                            }
                            Some(p) => b = p,
                            None => break,
                        }
                    }
                    carrier
                }
                _ => Some(common),
            };
        }
    }

    /// Fills the arms', legs', neck's and chest's bones with unknown names from the hierarchy.
    fn chains_from_hierarchy(&self, bones: &mut [Option<usize>; ROLE_COUNT]) {
        // Chains whose middle bones have unknown names: take them from the hierarchy.
        for side in [Side::Left, Side::Right] {
            for [upper, lower, end] in [Role::arm(side), Role::leg(side)] {
                if bones[lower as usize].is_none() {
                    bones[lower as usize] = bones[end as usize].and_then(|b| self.usable_parent(b));
                }
                if bones[upper as usize].is_none() {
                    bones[upper as usize] =
                        bones[lower as usize].and_then(|b| self.usable_parent(b));
                }
            }
        }
        if bones[Role::Neck as usize].is_none() {
            bones[Role::Neck as usize] =
                bones[Role::Head as usize].and_then(|b| self.usable_parent(b));
        }
        if bones[Role::Chest as usize].is_none() {
            bones[Role::Chest as usize] = bones[Role::UpperChest as usize]
                .or_else(|| bones[Role::Neck as usize].and_then(|b| self.usable_parent(b)));
        }
    }

    /// Finds the bones that turn with each hand besides the hand bone.
    fn find_hand_parts(&self, h: &mut Humanoid) {
        let (names, rest, n) = (self.names, self.rest, self.n);
        // The hand's other parts: bones beside the hand bone (the same parent, not twist or helper
        // bones) that start at the wrist, within half the forearm's length of the hand's origin
        // (the robot's other palm bones and thumb); they turn with the hand.
        for side in [Side::Left, Side::Right] {
            let Some(hand) = h.bone(Role::arm(side)[2]) else {
                continue;
            };
            let Some(fore) = self.parent_of(hand) else {
                continue;
            };
            let wrist = rest[hand].0;
            let reach = 0.5 * wrist.distance(rest[fore].0);
            let mut k = 0;
            for b in 0..n {
                if k == MAX_HAND_PARTS {
                    break;
                }
                let helper = Words::new(names[b].as_ref()).any(|w| {
                    let w = Lower(w);
                    w.eq_any(SKIP_WORDS) && !w.eq_any(&["palm", "meta", "metacarpal"])
                });
                if b != hand
                    && self.parent_of(b) == Some(fore)
                    && !helper
                    && rest[b].0.distance(wrist) <= reach
                {
                    h.hand_parts[side as usize][k] = Some(b);
                    k += 1;
                }
            }
        }
    }
}

/// How [`Humanoid::hand_measure`] says a hand is sized from the meshes drawn (the hand bone's
/// index in each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandMeasure {
    /// From the bounds of the vertices the hand bone draws, in its rest frame.
    Bounds(usize),
    /// From the vertices the hand's bones draw, along its palm and fingers.
    Extent(usize),
}

/// A humanoid found in a skeleton: which bone plays each role, the body's axes and proportions, and
/// the hands' palm and finger directions. See the [module](self) documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct Humanoid {
    bones: [Option<usize>; ROLE_COUNT],
    /// Up, in the skeleton's space (unit).
    pub up: Vec3,
    /// The character's right, in the skeleton's space (unit, perpendicular to `up`).
    pub right: Vec3,
    /// The character's forward, in the skeleton's space (unit): `up × right`.
    pub forward: Vec3,
    /// Standing height in the skeleton's units: the head joint's height above the toes' joints
    /// divided by [`HEAD_JOINT_FRACTION`].
    pub height: f32,
    /// Upper arm plus forearm, `[left, right]` (0 when the arm was not found).
    pub arm_length: [f32; 2],
    /// Thigh plus shin, `[left, right]` (0 when the leg was not found).
    pub leg_length: [f32; 2],
    /// Distance between the two shoulder joints (the upper arms' origins).
    pub shoulder_width: f32,
    /// From the head joint to the top of the head: `height × (1 − HEAD_JOINT_FRACTION)`.
    pub head_size: f32,
    /// Width of each hand across the knuckles (index to little finger), or `height / 20` without
    /// finger bones.
    pub hand_width: [f32; 2],
    /// From each wrist to the mean of its first finger joints, `[left, right]` (0 without finger
    /// bones).
    pub knuckles: [f32; 2],
    /// Out of each palm, in the skeleton's space, rest pose (unit).
    pub palm: [Vec3; 2],
    /// From each wrist toward its fingers, in the skeleton's space, rest pose (unit).
    pub finger: [Vec3; 2],
    /// Each hand's size measured from its own vertices ([`Self::fit_hand`]), if it was.
    pub measured_hand: [Option<HandSize>; 2],
    /// Per hand, the bones beside the hand bone that start at the wrist (a rig without a hand bone,
    /// whose palm bones and thumb leave the forearm there): a solver that turns the hand turns them
    /// with it, so the hand stays in one piece.
    hand_parts: [[Option<usize>; MAX_HAND_PARTS]; 2],
}

/// At most this many bones beside the hand bone turn with it ([`Humanoid::hand_parts`]).
pub const MAX_HAND_PARTS: usize = 6;

impl Humanoid {
    /// Describes the humanoid in a skeleton of `names.len()` bones: `parents[i]` is bone `i`'s parent
    /// (negative: none), `rest[i]` its rest pose in the skeleton's space (position and rotation). The
    /// three slices should have one entry per bone; extra entries are ignored.
    #[must_use]
    pub fn derive<S: AsRef<str>>(names: &[S], parents: &[i32], rest: &[(Vec3, Quat)]) -> Self {
        let n = names.len().min(parents.len()).min(rest.len());
        let skeleton = Skeleton {
            names,
            parents,
            rest,
            n,
        };
        let mut bones = skeleton.bones_by_name();
        skeleton.numbered_limbs(&mut bones);
        skeleton.numbered_neck_and_torso(&mut bones);
        skeleton.hands_from_fingers(&mut bones);
        skeleton.chains_from_hierarchy(&mut bones);
        let mut h = Self::from_bones(bones, &rest[..n]);
        skeleton.find_hand_parts(&mut h);
        h
    }

    /// The bones that turn with the hand on `side` besides the hand bone itself: the bones beside
    /// it (the same parent, not twist or helper bones) that start at the wrist, within half the
    /// forearm's length of it. None on a rig whose hand bone carries the whole hand.
    pub fn hand_parts(&self, side: Side) -> impl Iterator<Item = usize> + '_ {
        self.hand_parts[side as usize].iter().flatten().copied()
    }

    /// Measures the body from bones already assigned to roles.
    fn from_bones(bones: [Option<usize>; ROLE_COUNT], rest: &[(Vec3, Quat)]) -> Self {
        let at = |role: Role| rest_position(&bones, rest, role);
        let pair = |a: Role, b: Role| Some((at(a)?, at(b)?));
        let (up, right, forward) = Self::body_axes(&bones, rest);
        let height = Self::body_height(&bones, rest, up);

        let limb = |[a, b, c]: [Role; 3]| match (at(a), at(b), at(c)) {
            (Some(a), Some(b), Some(c)) => {
                let l = a.distance(b) + b.distance(c);
                if l.is_finite() {
                    l
                } else {
                    0.0
                }
            }
            _ => 0.0,
        };
        let arm_length = [Side::Left, Side::Right].map(|s| limb(Role::arm(s)));
        let leg_length = [Side::Left, Side::Right].map(|s| limb(Role::leg(s)));
        let shoulder_width = pair(Role::LeftUpperArm, Role::RightUpperArm)
            .map(|(l, r)| l.distance(r))
            .filter(|w| w.is_finite())
            .unwrap_or(height * 0.36 / REFERENCE_HEIGHT);
        let head_size = height * (1.0 - HEAD_JOINT_FRACTION);

        let (palm, finger, hand_width, knuckle_reach) =
            Self::hand_frames(&bones, rest, up, right, height);
        let mut h = Self {
            bones,
            up,
            right,
            forward,
            height,
            arm_length,
            leg_length,
            shoulder_width,
            head_size,
            hand_width,
            knuckles: knuckle_reach,
            measured_hand: [None; 2],
            hand_parts: [[None; MAX_HAND_PARTS]; 2],
            palm,
            finger,
        };
        if !h.is_finite() {
            h = Self::from_bones([None; ROLE_COUNT], &[]);
            h.bones = bones;
        }
        h
    }

    /// Works out the body's up, right and forward axes from its spine and its limbs across it.
    fn body_axes(bones: &[Option<usize>; ROLE_COUNT], rest: &[(Vec3, Quat)]) -> (Vec3, Vec3, Vec3) {
        let at = |role: Role| rest_position(bones, rest, role);
        let pair = |a: Role, b: Role| Some((at(a)?, at(b)?));
        let unit = crate::kit::pose::unit_vec3;

        let up = pair(Role::Hips, Role::Head)
            .or_else(|| pair(Role::Spine, Role::Neck))
            .or_else(|| pair(Role::Hips, Role::Neck))
            .and_then(|(a, b)| unit(b - a))
            .unwrap_or(Vec3::Y);
        let across = [
            (Role::LeftUpperArm, Role::RightUpperArm),
            (Role::LeftUpperLeg, Role::RightUpperLeg),
            (Role::LeftShoulder, Role::RightShoulder),
            (Role::LeftHand, Role::RightHand),
        ]
        .into_iter()
        .find_map(|(l, r)| {
            let (l, r) = pair(l, r)?;
            let d = r - l;
            unit(d - up * up.dot(d))
        });
        let right = across.unwrap_or_else(|| {
            unit(Vec3::X - up * up.dot(Vec3::X)).unwrap_or_else(|| up.any_orthonormal_vector())
        });
        let forward = up.cross(right);
        (up, right, forward)
    }

    /// Works out the character's height from its head joint's height over its feet.
    fn body_height(bones: &[Option<usize>; ROLE_COUNT], rest: &[(Vec3, Quat)], up: Vec3) -> f32 {
        let at = |role: Role| rest_position(bones, rest, role);
        let heights = [
            Role::LeftToes,
            Role::RightToes,
            Role::LeftFoot,
            Role::RightFoot,
        ]
        .map(|r| at(r).map(|p| p.dot(up)));
        let ground = heights.into_iter().flatten().reduce(f32::min);
        let lowest = rest
            .iter()
            .map(|r| r.0.dot(up))
            .filter(|h| h.is_finite())
            .reduce(f32::min);
        let highest = rest
            .iter()
            .map(|r| r.0.dot(up))
            .filter(|h| h.is_finite())
            .reduce(f32::max);
        let ground = ground.or(lowest).unwrap_or(0.0);
        let head = at(Role::Head).map(|p| p.dot(up)).or(highest).unwrap_or(0.0);
        let mut height = (head - ground) / HEAD_JOINT_FRACTION;
        if !(height.is_finite() && height > 0.0) {
            height = REFERENCE_HEIGHT;
        }

        height
    }

    /// Works out each hand's palm and finger directions, width and knuckle reach.
    fn hand_frames(
        bones: &[Option<usize>; ROLE_COUNT],
        rest: &[(Vec3, Quat)],
        up: Vec3,
        right: Vec3,
        height: f32,
    ) -> ([Vec3; 2], [Vec3; 2], [f32; 2], [f32; 2]) {
        let at = |role: Role| rest_position(bones, rest, role);
        let pair = |a: Role, b: Role| Some((at(a)?, at(b)?));
        let unit = |v: Vec3| v.try_normalize();
        let mut palm = [Vec3::ZERO; 2];
        let mut finger = [Vec3::ZERO; 2];
        let mut hand_width = [height / 20.0; 2];
        let mut knuckle_reach = [0.0; 2];
        for side in [Side::Left, Side::Right] {
            let s = side as usize;
            let [_, lower, hand] = Role::arm(side);
            let hand_bone = bones[hand as usize].and_then(|i| rest.get(i).copied());
            let wrist = hand_bone.map(|h| h.0);
            let tips = Role::fingers(side).map(at);
            let (mut sum, mut count) = (Vec3::ZERO, 0.0);
            for tip in tips.iter().flatten() {
                sum += *tip;
                count += 1.0;
            }
            if let Some(w) = wrist.filter(|_| count > 0.0) {
                let d = w.distance(sum / count);
                if d.is_finite() {
                    knuckle_reach[s] = d;
                }
            }
            let godot_named = hand_bone.is_some() && Self::godot_convention(bones, rest);
            // Fingers: wrist → knuckles; else the hand bone's +Y on a Godot-convention rig; else
            // the forearm's direction.
            let f = wrist
                .filter(|_| count > 0.0)
                .and_then(|w| unit(sum / count - w))
                .or_else(|| {
                    hand_bone
                        .filter(|_| godot_named)
                        .and_then(|h| unit(rotate(h.1, Vec3::Y)))
                })
                .or_else(|| pair(lower, hand).and_then(|(a, b)| unit(b - a)))
                .unwrap_or(-up);
            let inward = if side == Side::Left { right } else { -right };
            // Palm: perpendicular to the fingers and to the knuckle line, facing the side that a
            // left hand's index → little line gives with the fingers (mirrored for the right).
            let knuckles = match (tips[0], tips[3].or(tips[2])) {
                (Some(index), Some(little)) => {
                    hand_width[s] = index.distance(little).max(1e-6);
                    Some(index - little)
                }
                _ => None,
            };
            let p = knuckles
                .and_then(|k| {
                    let n = if side == Side::Left {
                        f.cross(k)
                    } else {
                        k.cross(f)
                    };
                    unit(n)
                })
                .or_else(|| {
                    hand_bone
                        .filter(|_| godot_named)
                        .and_then(|h| unit(rotate(h.1, Vec3::Z)))
                })
                .or_else(|| {
                    let v = inward - up;
                    unit(v - f * f.dot(v))
                })
                .unwrap_or(inward);
            finger[s] = f;
            palm[s] = unit(p - f * f.dot(p)).unwrap_or_else(|| f.any_orthonormal_vector());
        }
        (palm, finger, hand_width, knuckle_reach)
    }

    /// Whether the hands follow Godot's humanoid bone convention (+Y along every arm bone): then a
    /// hand without finger bones has its palm on +Z.
    fn godot_convention(bones: &[Option<usize>; ROLE_COUNT], rest: &[(Vec3, Quat)]) -> bool {
        [Side::Left, Side::Right].iter().all(|&side| {
            let [u, l, h] = Role::arm(side);
            let get = |r: Role| bones[r as usize].and_then(|i| rest.get(i).copied());
            match (get(u), get(l), get(h)) {
                (Some(u), Some(l), Some(h)) => [(u, l.0), (l, h.0)].iter().all(|&(a, b)| {
                    (b - a.0)
                        .try_normalize()
                        .is_some_and(|d| rotate(a.1, Vec3::Y).dot(d) > 0.98)
                }),
                _ => false,
            }
        })
    }

    fn is_finite(&self) -> bool {
        self.up.is_finite()
            && self.right.is_finite()
            && self.forward.is_finite()
            && self.height.is_finite()
            && self.arm_length.iter().all(|v| v.is_finite())
            && self.leg_length.iter().all(|v| v.is_finite())
            && self.shoulder_width.is_finite()
            && self.hand_width.iter().all(|v| v.is_finite())
            && self.knuckles.iter().all(|v| v.is_finite())
            && self.palm.iter().chain(&self.finger).all(|v| v.is_finite())
    }

    /// Measures the height from the body's outer extent instead of the head joint: `lowest` and
    /// `highest` are the lowest and highest points of the character's skinned meshes along
    /// [`Self::up`] (dot products with `up`, in the skeleton's space, rest pose). A stylised body
    /// (a large head, the head joint well below nine tenths of the height) is measured as it is
    /// drawn: `height = highest − lowest`, `head_size = highest −` the head joint's height (at least
    /// a twentieth of the height). An extent that is not finite, not positive or does not reach above
    /// the head joint is ignored (the joint-based height stays).
    pub fn fit_extent(&mut self, lowest: f32, highest: f32, rest: &[(Vec3, Quat)]) {
        let height = highest - lowest;
        if !(lowest.is_finite() && highest.is_finite() && height.is_finite() && height > 0.0) {
            return;
        }
        let head = self
            .bone(Role::Head)
            .and_then(|i| rest.get(i))
            .map(|r| r.0.dot(self.up))
            .filter(|h| h.is_finite());
        let Some(head) = head.filter(|&h| h < highest) else {
            return;
        };
        // Without finger bones the hands were sized from the joint-based height.
        for s in 0..2 {
            if self.knuckles[s] <= 0.0 {
                self.hand_width[s] = height / 20.0;
            }
        }
        self.height = height;
        self.head_size = (highest - head).max(height / 20.0);
    }

    /// Measures the hand on `side` from its own vertices (those its hand bone mostly draws): `lo`
    /// and `hi` are their bounds in the hand bone's rest frame (`rotation` is that frame's rotation
    /// in the skeleton's space; the bounds are in the skeleton's units). A hand modelled without
    /// finger bones (a mitten, a fist) then gets:
    ///
    /// * its palm on the box's thinnest axis, on the side the rule without fingers guessed (toward
    ///   the midline and down), and its fingers the finger direction made perpendicular to it;
    /// * its length from the wrist to the farthest vertex along the fingers, its width across;
    /// * its thickness as twice the distance from the wrist to the palm's surface, so that a grip
    ///   ([`HandSize::thickness`] / 2 out of the palm) sits on the surface however the bone lies in
    ///   the hand.
    ///
    /// Bounds that are not finite, empty, or a palm surface behind the wrist leave the hand as it
    /// was.
    pub fn fit_hand(&mut self, side: Side, lo: Vec3, hi: Vec3, rotation: Quat) {
        let s = side as usize;
        let size = hi - lo;
        if !(lo.is_finite() && hi.is_finite() && size.min_element() > 0.0 && rotation.is_finite()) {
            return;
        }
        let k = if size.x <= size.y && size.x <= size.z {
            0
        } else if size.y <= size.z {
            1
        } else {
            2
        };
        let mut axis = Vec3::ZERO;
        axis[k] = 1.0;
        let Some(mut palm) = unit_vec3(rotate(rotation, axis)) else {
            return;
        };
        let mut surface = hi[k];
        if palm.dot(self.palm[s]) < 0.0 {
            palm = -palm;
            surface = -lo[k];
        }
        let Some(finger) = unit_vec3(self.finger[s] - palm * palm.dot(self.finger[s])) else {
            return;
        };
        if surface.is_nan() || surface <= 0.0 {
            return;
        }
        // The box's corners along the fingers and across, in the skeleton's axes.
        let (mut length, mut across_lo, mut across_hi) = (0.0f32, f32::MAX, f32::MIN);
        let across = palm.cross(finger);
        for c in 0..8 {
            let corner = Vec3::new(
                if c & 1 == 0 { lo.x } else { hi.x },
                if c & 2 == 0 { lo.y } else { hi.y },
                if c & 4 == 0 { lo.z } else { hi.z },
            );
            let p = rotate(rotation, corner);
            length = length.max(p.dot(finger));
            across_lo = across_lo.min(p.dot(across));
            across_hi = across_hi.max(p.dot(across));
        }
        let width = across_hi - across_lo;
        if !(length > 0.0 && width.is_finite() && width > 0.0) {
            return;
        }
        self.palm[s] = palm;
        self.finger[s] = finger;
        self.hand_width[s] = width;
        self.measured_hand[s] = Some(HandSize {
            length,
            width,
            thickness: 2.0 * surface,
        });
    }

    /// Sizes the hand on `side` from its own vertices, keeping the palm and finger directions the
    /// finger bones gave: `surface` is the farthest vertex out of the palm from the wrist (along
    /// [`Self::palm`]), `length` the farthest along [`Self::finger`], `width` the vertices' span
    /// across (skeleton units, rest pose). A hand drawn far bigger than its knuckles say (a
    /// cartoon robot's mitt) then grips with its drawn size: thickness twice the wrist → palm
    /// surface distance, so a grip half a thickness out of the palm sits on that surface. Values
    /// that are not finite and positive leave the hand as it was.
    pub fn fit_hand_size(&mut self, side: Side, surface: f32, length: f32, width: f32) {
        let ok = |v: f32| v.is_finite() && v > 0.0;
        if !(ok(surface) && ok(length) && ok(width)) {
            return;
        }
        let s = side as usize;
        self.hand_width[s] = width;
        self.measured_hand[s] = Some(HandSize {
            length,
            width,
            thickness: 2.0 * surface,
        });
    }

    /// How the hand on `side` is sized from the meshes the skeleton draws: a hand without finger
    /// bones (no knuckle span) from the bounds of the vertices its bone draws
    /// ([`Self::fit_hand`]), one with fingers from its bones' vertices along the palm and fingers
    /// they give ([`Self::fit_hand_size`]); `None` without a hand bone.
    #[must_use]
    pub fn hand_measure(&self, side: Side) -> Option<HandMeasure> {
        let hand = self.bone(Role::arm(side)[2])?;
        Some(if self.knuckles[side as usize] <= 0.0 {
            HandMeasure::Bounds(hand)
        } else {
            HandMeasure::Extent(hand)
        })
    }

    /// The bone that plays `role`, if one was found.
    #[must_use]
    pub fn bone(&self, role: Role) -> Option<usize> {
        self.bones[role as usize]
    }

    /// The height relative to the reference human ([`REFERENCE_HEIGHT`]): multiply the seed's
    /// absolute lengths by it.
    #[must_use]
    pub fn scale(&self) -> f32 {
        self.height / REFERENCE_HEIGHT
    }

    /// The outer size of the hand on `side`, in the skeleton's units, taken as a box from the wrist
    /// along [`Self::finger`]:
    ///
    /// * length: twice the wrist → knuckles distance (the fingers are about as long as the palm),
    ///   or `height × HAND_LENGTH_FRACTION` without finger bones;
    /// * width: the index → little knuckle span times 4/3 (that span covers three of the four
    ///   fingers' widths), or `height / 20` without finger bones;
    /// * thickness: `width × HAND_THICKNESS_RATIO`.
    ///
    /// For the 1.75 m reference human without fingers: 0.189 × 0.0875 × 0.031 m. A hand measured
    /// from its vertices ([`Self::fit_hand`]) has that size instead.
    #[must_use]
    pub fn hand_size(&self, side: Side) -> HandSize {
        let s = side as usize;
        if let Some(measured) = self.measured_hand[s] {
            return measured;
        }
        let width = if self.knuckles[s] > 0.0 {
            self.hand_width[s] * 4.0 / 3.0
        } else {
            self.hand_width[s]
        };
        let length = if self.knuckles[s] > 0.0 {
            2.0 * self.knuckles[s]
        } else {
            self.height * HAND_LENGTH_FRACTION
        };
        HandSize {
            length,
            width,
            thickness: width * HAND_THICKNESS_RATIO,
        }
    }

    /// `v` given in the character's axes (x right, y up, z back) in the skeleton's space.
    #[must_use]
    pub fn to_skeleton(&self, v: Vec3) -> Vec3 {
        self.right * v.x + self.up * v.y - self.forward * v.z
    }

    /// `v` in the skeleton's space in the character's axes (x right, y up, z back).
    #[must_use]
    pub fn to_character(&self, v: Vec3) -> Vec3 {
        Vec3::new(self.right.dot(v), self.up.dot(v), -self.forward.dot(v))
    }
}

#[cfg(test)]
mod tests;
