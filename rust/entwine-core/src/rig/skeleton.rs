//! Reading a skeleton by bone index: ancestry through a parent function (bounded, so a malformed
//! skeleton cannot loop), scale checks, and the measurements a node takes from the meshes a
//! skeleton draws (vertex bounds, a hand's extent, the bone a vertex mostly follows), and the
//! messages a node gives when a bone it needs is not found.

use glam::Vec3;

use super::{Humanoid, Role, Side, MAX_HAND_PARTS};

/// Returns whether `ancestor` is a proper ancestor of `bone` in a skeleton of `count` bones whose
/// bone `b`'s parent is `parent(b)` (negative: none). The walk is bounded by the bone count, so a
/// malformed skeleton (a parent cycle) cannot loop forever.
pub fn is_ancestor(parent: impl Fn(i32) -> i32, count: i32, ancestor: i32, mut bone: i32) -> bool {
    for _ in 0..=count.max(0) {
        bone = parent(bone);
        if bone < 0 {
            return false;
        }
        if bone == ancestor {
            return true;
        }
    }
    false
}

/// Returns `[grandparent, parent, bone]` of `bone` through `parent` (negative: none), `-1` from
/// the first one missing up: the two-bone chain a named end bone (a hand) hangs from.
pub fn chain_to(parent: impl Fn(i32) -> i32, bone: i32) -> [i32; 3] {
    let up = |b: i32| if b >= 0 { parent(b) } else { -1 };
    let lower = up(bone);
    [up(lower), lower, bone]
}

/// Returns the `[upper, lower, hand]` bones of the arm a hand hangs from: for a named `hand` the
/// bone of that name, its parent and grandparent ([`chain_to`]); for an empty name the `side` arm
/// of `humanoid`. `None` when one of them is missing.
pub fn arm_chain(
    skeleton: &impl Bones,
    hand: &str,
    side: Side,
    humanoid: &Humanoid,
) -> Option<[i32; 3]> {
    if hand.is_empty() {
        let [u, l, h] = Role::arm(side).map(|r| humanoid.bone(r).map(|b| b as i32));
        return Some([u?, l?, h?]);
    }
    let chain = chain_to(|b| skeleton.parent(b), skeleton.find(hand));
    (chain[0] >= 0).then_some(chain)
}

/// Returns whether a scale is the same on all three axes (within 0.1 %) and positive: a bone
/// whose local rotations can be written as they are.
pub fn is_uniform(scale: Vec3) -> bool {
    let (lo, hi) = (scale.min_element(), scale.max_element());
    lo > 0.0 && hi - lo <= 1e-3 * hi
}

/// Returns the index of the largest positive weight of a vertex's influences, or `None` when no
/// weight is positive: the bone the vertex mostly follows (the first of equal ones).
pub fn dominant_influence(weights: &[f32]) -> Option<usize> {
    let mut best = (None, 0.0f32);
    for (i, &w) in weights.iter().enumerate() {
        if w > best.1 {
            best = (Some(i), w);
        }
    }
    best.0
}

/// Returns, for each vertex of a skinned surface, the skin bind and the skeleton bone it mostly
/// follows: `vertices` vertices with the same number of `bones` / `weights` entries each (bind
/// indices and their weights, as Godot's `ARRAY_BONES` / `ARRAY_WEIGHTS` hold them), `binds` the
/// bone of each bind (negative: none). A vertex with no positive weight, or whose heaviest bind is
/// not in `binds` or has no bone, gives `None`. `None` for arrays that do not fit together (the
/// surface is skipped).
pub fn dominant_bones<'a>(
    vertices: usize,
    bones: &'a [i32],
    weights: &'a [f32],
    binds: &'a [i32],
) -> Option<impl Iterator<Item = Option<(i32, i32)>> + 'a> {
    if vertices == 0 || bones.len() != weights.len() || !bones.len().is_multiple_of(vertices) {
        return None;
    }
    let per = bones.len() / vertices;
    if per == 0 {
        return None;
    }
    let influences = bones.chunks_exact(per).zip(weights.chunks_exact(per));
    Some(influences.map(move |(bones, weights)| {
        let bind = bones[dominant_influence(weights)?];
        let &bone = usize::try_from(bind).ok().and_then(|i| binds.get(i))?;
        (bone >= 0).then_some((bind, bone))
    }))
}

/// Returns, for each bone of a skeleton of `count` bones (parents through `parent`), whether it
/// is one of `roots` or descends from one.
pub fn in_subtrees(parent: impl Fn(i32) -> i32, count: i32, roots: &[i32]) -> Vec<bool> {
    (0..count.max(0))
        .map(|b| {
            roots
                .iter()
                .any(|&r| r == b || is_ancestor(&parent, count, r, b))
        })
        .collect()
}

/// Returns the bone for a node's bone property: the bone called `name` (`find` looks a name up,
/// negative when absent) when the name is set — an explicit setting always wins — else the bone
/// `humanoid` found for `role` (below the skeleton's `count` bones). `Err` says what was tried,
/// naming `property` and the skeleton (`skeleton` gives its label, asked only then).
pub fn pick(
    property: &str,
    name: &str,
    find: impl FnOnce(&str) -> i32,
    role: Role,
    humanoid: &Humanoid,
    count: i32,
    skeleton: impl FnOnce() -> String,
) -> Result<i32, String> {
    if !name.is_empty() {
        let i = find(name);
        return if i >= 0 {
            Ok(i)
        } else {
            Err(bone_not_found(property, name, &skeleton()))
        };
    }
    match humanoid.bone(role) {
        Some(i) if (i as i32) < count => Ok(i as i32),
        _ => Err(role_not_found(property, role, &skeleton())),
    }
}

/// A skeleton as the bone lookups need it: its bones by index (`0..count()`), their parents and
/// names, and a label for messages.
pub trait Bones {
    /// How many bones the skeleton has.
    fn count(&self) -> i32;
    /// The bone called `name`, negative when absent.
    fn find(&self, name: &str) -> i32;
    /// The parent of `bone`, negative for a root.
    fn parent(&self, bone: i32) -> i32;
    /// The name of `bone`.
    fn name(&self, bone: i32) -> String;
    /// The skeleton's label in messages (its node path).
    fn label(&self) -> String;
}

/// A humanoid limb a two-bone chain runs through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limb {
    /// Upper arm, forearm, hand.
    LeftArm,
    /// The right arm.
    RightArm,
    /// Thigh, shin, foot.
    LeftLeg,
    /// The right leg.
    RightLeg,
}

impl Limb {
    /// The limb's `[upper, lower, end]` roles.
    #[must_use]
    pub const fn roles(self) -> [Role; 3] {
        match self {
            Limb::LeftArm => Role::arm(Side::Left),
            Limb::RightArm => Role::arm(Side::Right),
            Limb::LeftLeg => Role::leg(Side::Left),
            Limb::RightLeg => Role::leg(Side::Right),
        }
    }

    /// The side of the hand at the limb's end (`None` for a leg).
    #[must_use]
    pub const fn hand_side(self) -> Option<Side> {
        match self {
            Limb::LeftArm => Some(Side::Left),
            Limb::RightArm => Some(Side::Right),
            Limb::LeftLeg | Limb::RightLeg => None,
        }
    }
}

/// A two-bone chain found in a skeleton (see [`find_limb_chain`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimbChain {
    /// The `[upper, lower, end]` bones.
    pub bones: [i32; 3],
    /// The bones that turn with the end bone (the humanoid's other hand parts when the end bone is
    /// its hand: palm bones leaving the forearm at the wrist), `-1` past the last.
    pub parts: [i32; MAX_HAND_PARTS],
    /// The upper bone's parent (`-1`: none) when the lower and end bones are direct children down
    /// the chain (their local rotations can be written at once); `None` otherwise.
    pub upper_parent: Option<i32>,
}

/// Returns the three bones of a parent → child chain: the ones `names` `[upper, lower, end]` set
/// (see [`pick`]; the properties are `upper_bone`, `lower_bone`, `end_bone`), or where a name is
/// empty, the `limb`'s bones in the skeleton's humanoid (`humanoid` builds it, asked only then);
/// or why they do not form one.
pub fn find_limb_chain(
    skeleton: &impl Bones,
    names: [&str; 3],
    limb: Limb,
    humanoid: impl FnOnce() -> Humanoid,
) -> Result<LimbChain, String> {
    let humanoid = if names.iter().any(|n| n.is_empty()) {
        humanoid()
    } else {
        Humanoid::derive::<&str>(&[], &[], &[])
    };
    let count = skeleton.count();
    let mut bones = [0; 3];
    let properties = ["upper_bone", "lower_bone", "end_bone"];
    for (i, role) in limb.roles().into_iter().enumerate() {
        bones[i] = pick(
            properties[i],
            names[i],
            |n| skeleton.find(n),
            role,
            &humanoid,
            count,
            || skeleton.label(),
        )?;
    }
    for (parent, child) in [(bones[0], bones[1]), (bones[1], bones[2])] {
        if !is_ancestor(|b| skeleton.parent(b), count, parent, child) {
            return Err(not_a_descendant(
                &skeleton.name(child),
                &skeleton.name(parent),
            ));
        }
    }
    let mut parts = [-1; MAX_HAND_PARTS];
    if let Some(side) = limb.hand_side().filter(|_| names[2].is_empty()) {
        for (slot, bone) in parts.iter_mut().zip(humanoid.hand_parts(side)) {
            *slot = bone as i32;
        }
    }
    let direct = skeleton.parent(bones[1]) == bones[0] && skeleton.parent(bones[2]) == bones[1];
    Ok(LimbChain {
        bones,
        parts,
        upper_parent: direct.then(|| skeleton.parent(bones[0])),
    })
}

/// A value [`Span`] can hold the lowest and highest of: a number, or a point (per axis).
pub trait Spanned: Copy {
    /// Returns whether the value is finite (a non-finite one is left out).
    fn finite(self) -> bool;
    /// Returns the lower of two values (per axis).
    fn lower(self, other: Self) -> Self;
    /// Returns the higher of two values (per axis).
    fn higher(self, other: Self) -> Self;
}

macro_rules! spanned {
    ($($t:ty),*) => {$(
        impl Spanned for $t {
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn lower(self, other: Self) -> Self {
                self.min(other)
            }
            fn higher(self, other: Self) -> Self {
                self.max(other)
            }
        }
    )*};
}

spanned!(f32, Vec3);

/// The lowest and highest of the finite values added to it: a mesh's extent along an axis
/// ([`Extent`]), or the smallest box round its points ([`Bounds`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span<T>(Option<(T, T)>);

impl<T> Default for Span<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T: Spanned> Span<T> {
    /// Takes `v` in (a non-finite value is left out).
    pub fn add(&mut self, v: T) {
        if v.finite() {
            self.0 = Some(
                self.0
                    .map_or((v, v), |(lo, hi)| (lo.lower(v), hi.higher(v))),
            );
        }
    }

    /// Returns the lowest and highest values, or `None` before a finite one.
    pub fn get(self) -> Option<(T, T)> {
        self.0
    }
}

/// The smallest box round the finite points added to it.
pub type Bounds = Span<Vec3>;

/// The lowest and highest of the finite numbers added to it.
pub type Extent = Span<f32>;

/// A hand measured from the vertices it draws, along the rig's own palm and finger directions
/// from the wrist, for [`Humanoid::fit_hand_size`].
#[derive(Clone, Copy, Debug)]
pub struct HandExtent {
    wrist: Vec3,
    palm: Vec3,
    finger: Vec3,
    across: Vec3,
    /// Farthest out of the palm, farthest along the fingers, lowest and highest across.
    got: Option<(f32, f32, f32, f32)>,
}

impl HandExtent {
    /// Starts measuring the hand on `side` of `humanoid` whose wrist joint is at `wrist`.
    pub fn new(humanoid: &Humanoid, side: Side, wrist: Vec3) -> Self {
        let s = side as usize;
        let (palm, finger) = (humanoid.palm[s], humanoid.finger[s]);
        Self {
            wrist,
            palm,
            finger,
            across: palm.cross(finger),
            got: None,
        }
    }

    /// Takes a vertex of the hand in (a non-finite one is left out).
    pub fn add(&mut self, vertex: Vec3) {
        let d = vertex - self.wrist;
        if !d.is_finite() {
            return;
        }
        let (p, f, a) = (d.dot(self.palm), d.dot(self.finger), d.dot(self.across));
        self.got = Some(self.got.map_or((p, f, a, a), |(gp, gf, lo, hi)| {
            (gp.max(p), gf.max(f), lo.min(a), hi.max(a))
        }));
    }

    /// Returns `(palm surface, length, width)`: the farthest vertex out of the palm, along the
    /// fingers, and the span across; `None` before a vertex.
    pub fn get(self) -> Option<(f32, f32, f32)> {
        self.got
            .map(|(surface, length, lo, hi)| (surface, length, hi - lo))
    }
}

/// The warning for a bone property set to a name the skeleton does not have.
pub fn bone_not_found(property: &str, name: &str, skeleton: &str) -> String {
    format!("{property} '{name}' not found in skeleton '{skeleton}'")
}

/// The warning for a bone property left empty when the humanoid has no bone for its `role`: what
/// was tried, and what to set.
pub fn role_not_found(property: &str, role: Role, skeleton: &str) -> String {
    format!(
        "{property} is empty and no {} bone was found in skeleton '{skeleton}' (tried: {}); set {property}",
        role.godot_name(),
        role.tried()
    )
}

/// The warning for a chain whose `child` bone does not descend from its `parent` bone.
pub fn not_a_descendant(child: &str, parent: &str) -> String {
    format!(
        "bone '{child}' is not a descendant of '{parent}' (the chain must run upper → lower → end)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 ← 1 ← 2 ← 3, and 4 a root; 5 ↔ 6 a cycle.
    fn parent(b: i32) -> i32 {
        match b {
            1 => 0,
            2 => 1,
            3 => 2,
            5 => 6,
            6 => 5,
            _ => -1,
        }
    }

    #[test]
    fn ancestry_walks_up_and_stops_on_a_cycle() {
        assert!(is_ancestor(parent, 7, 0, 3));
        assert!(is_ancestor(parent, 7, 2, 3));
        assert!(!is_ancestor(parent, 7, 3, 3), "not its own ancestor");
        assert!(!is_ancestor(parent, 7, 3, 0), "not upward");
        assert!(!is_ancestor(parent, 7, 4, 3));
        assert!(!is_ancestor(parent, 7, 0, 5), "a cycle ends");
        assert!(is_ancestor(parent, 7, 6, 5));
    }

    #[test]
    fn a_chain_to_a_bone_is_its_grandparent_and_parent() {
        assert_eq!(chain_to(parent, 3), [1, 2, 3]);
        assert_eq!(chain_to(parent, 1), [-1, 0, 1]);
        assert_eq!(chain_to(parent, 4), [-1, -1, 4]);
        assert_eq!(chain_to(parent, -1), [-1, -1, -1]);
    }

    #[test]
    fn uniform_scales_within_a_tenth_of_a_percent() {
        assert!(is_uniform(Vec3::splat(0.01)));
        assert!(is_uniform(Vec3::new(1.0, 1.0009, 1.0)));
        assert!(!is_uniform(Vec3::new(1.0, 1.002, 1.0)));
        assert!(!is_uniform(Vec3::new(-1.0, -1.0, -1.0)), "a mirror is not");
        assert!(!is_uniform(Vec3::ZERO));
        assert!(!is_uniform(Vec3::NAN));
    }

    #[test]
    fn the_dominant_influence_is_the_first_largest_positive_weight() {
        assert_eq!(dominant_influence(&[0.2, 0.5, 0.3, 0.0]), Some(1));
        assert_eq!(dominant_influence(&[0.5, 0.5]), Some(0));
        assert_eq!(dominant_influence(&[0.0, 0.0]), None);
        assert_eq!(dominant_influence(&[]), None);
        assert_eq!(dominant_influence(&[f32::NAN, 0.1]), Some(1));
    }

    #[test]
    fn bounds_and_extents_skip_what_is_not_finite() {
        let mut b = Bounds::default();
        assert_eq!(b.get(), None);
        b.add(Vec3::new(1.0, -2.0, 3.0));
        b.add(Vec3::NAN);
        b.add(Vec3::new(-1.0, 0.0, 5.0));
        assert_eq!(
            b.get(),
            Some((Vec3::new(-1.0, -2.0, 3.0), Vec3::new(1.0, 0.0, 5.0)))
        );
        let mut e = Extent::default();
        for v in [0.5, f32::INFINITY, -0.25, 2.0] {
            e.add(v);
        }
        assert_eq!(e.get(), Some((-0.25, 2.0)));
    }

    #[test]
    fn a_hand_is_measured_along_its_palm_fingers_and_across() {
        let mut h = Humanoid::derive::<&str>(&[], &[], &[]);
        h.palm[0] = Vec3::NEG_Y;
        h.finger[0] = Vec3::NEG_X;
        let wrist = Vec3::new(0.5, 1.4, 0.0);
        let mut m = HandExtent::new(&h, Side::Left, wrist);
        assert!(m.get().is_none());
        // across = palm × finger = (−Y) × (−X) = −Z.
        for d in [
            Vec3::new(-0.18, -0.02, 0.04),
            Vec3::new(-0.05, 0.01, -0.05),
            Vec3::new(-0.1, -0.03, 0.0),
        ] {
            m.add(wrist + d);
        }
        m.add(Vec3::NAN);
        let (surface, length, width) = m.get().unwrap();
        assert!((surface - 0.03).abs() < 1e-6);
        assert!((length - 0.18).abs() < 1e-6);
        assert!((width - 0.09).abs() < 1e-6);
    }

    #[test]
    fn each_vertex_follows_its_heaviest_bind_when_the_arrays_fit() {
        // Two influences per vertex; bind 0 → bone 5, bind 1 → bone 7, bind 2 → no bone.
        let binds = [5, 7, -1];
        let bones = [0, 1, 1, 0, 2, 0, 0, 1, 9, 0];
        let weights = [0.7, 0.3, 0.6, 0.4, 0.8, 0.2, 0.0, 0.0, 1.0, 0.0];
        let got: Vec<_> = dominant_bones(5, &bones, &weights, &binds)
            .unwrap()
            .collect();
        assert_eq!(
            got,
            [Some((0, 5)), Some((1, 7)), None, None, None],
            "no bone, no weight, no such bind"
        );
        assert!(dominant_bones(0, &[], &[], &binds).is_none());
        assert!(
            dominant_bones(3, &bones, &weights, &binds).is_none(),
            "10 % 3"
        );
        assert!(dominant_bones(5, &bones, &weights[..8], &binds).is_none());
        assert!(
            dominant_bones(5, &[], &[], &binds).is_none(),
            "no influences"
        );
    }

    #[test]
    fn subtrees_hold_their_roots_and_descendants() {
        assert_eq!(
            in_subtrees(parent, 7, &[1, 4]),
            [false, true, true, true, true, false, false]
        );
        assert_eq!(in_subtrees(parent, 7, &[]), [false; 7]);
        assert!(in_subtrees(parent, -3, &[0]).is_empty());
    }

    #[test]
    fn a_set_name_wins_else_the_humanoid_role() {
        let names = ["Hips", "Spine", "Head"];
        let rest = [
            (Vec3::new(0.0, 1.0, 0.0), glam::Quat::IDENTITY),
            (Vec3::new(0.0, 1.2, 0.0), glam::Quat::IDENTITY),
            (Vec3::new(0.0, 1.6, 0.0), glam::Quat::IDENTITY),
        ];
        let h = Humanoid::derive(&names, &[-1, 0, 1], &rest);
        let find = |n: &str| names.iter().position(|&m| m == n).map_or(-1, |i| i as i32);
        let label = || "Skel".to_string();
        assert_eq!(pick("bone", "Spine", find, Role::Head, &h, 3, label), Ok(1));
        assert_eq!(pick("bone", "", find, Role::Head, &h, 3, label), Ok(2));
        assert_eq!(
            pick("bone", "Tail", find, Role::Head, &h, 3, label),
            Err(bone_not_found("bone", "Tail", "Skel"))
        );
        assert_eq!(
            pick("head_bone", "", find, Role::Head, &h, 2, label),
            Err(role_not_found("head_bone", Role::Head, "Skel")),
            "a found bone past the skeleton's count"
        );
        assert_eq!(
            pick("hand", "", find, Role::LeftHand, &h, 3, label),
            Err(role_not_found("hand", Role::LeftHand, "Skel"))
        );
    }

    #[test]
    fn missing_bone_messages_name_the_property_and_what_was_tried() {
        let m = role_not_found("head_bone", Role::Head, "Root/Skeleton3D");
        assert!(m.starts_with(
            "head_bone is empty and no Head bone was found in skeleton 'Root/Skeleton3D'"
        ));
        assert!(m.contains(Role::Head.tried()) && m.ends_with("; set head_bone"));
        assert_eq!(
            bone_not_found("end_bone", "Hand", "S"),
            "end_bone 'Hand' not found in skeleton 'S'"
        );
        assert!(not_a_descendant("a", "b").starts_with("bone 'a' is not a descendant of 'b'"));
    }
}
