//! The animation section of a pair frame ([`super::stream`]): what the initiator's animation looks
//! like at one instant, its byte layout, when it is worth sending, and how a remote peer reads it at
//! its view time ([`super::replay`]).
//!
//! A snapshot holds:
//!
//! * **values**: the AnimationTree's numeric parameters (float, int, bool; a Vector2 blend position
//!   takes two values), in an order both peers derive from the same tree;
//! * **state machines**: per machine, its current node, the node it is travelling to (if any) and
//!   the play position in the current node;
//! * **one-shots**: whether each OneShot node is active (a remote peer fires or aborts on a change);
//! * **player**: for a rig without an AnimationTree, the AnimationPlayer's animation and position.
//!
//! Node and animation names travel as **small indices** (one byte) into lists each peer derives
//! from its own copy of the character: a state machine's node names, sorted, and the player's
//! animation names, sorted. Both peers instance the same character, so the lists agree, and
//! nothing is spent on names: a table of names in key frames would cost tens of bytes a second
//! per pair for what never changes during a pair.
//!
//! Section layout (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | bit 7: an extras byte follows; bits 5–6: version ([`ANIM_VERSION`]); bits 0–4: value count m ≤ [`MAX_ANIM_VALUES`] |
//! | 1, extras only | bits 0–1: state machine count k ≤ [`MAX_ANIM_MACHINES`]; bit 2: player; bits 3–6: one-shot count o ≤ [`MAX_ANIM_SHOTS`]; bit 7: 0 |
//! | 2·m | values, half floats |
//! | 4·k | per state machine: current node (u8, [`NO_NODE`]: none), travel target (u8, [`NO_NODE`]: none), play position (u16 ms) |
//! | 1 if o > 0 | one-shot active bits, first one-shot in bit 0 |
//! | 3 if player | animation (u8, [`NO_NODE`]: stopped), position (u16 ms) |
//!
//! A snapshot of the test character's tree (two values, no machine) is 5 bytes; a locomotion rig
//! with a BlendSpace2D, a TimeScale, one state machine and one one-shot is 13.

use crate::kit::{decode_half, ByteReader, ByteWriter, ShortBuffer};

/// Most numeric values one snapshot carries (a Vector2 counts twice).
pub const MAX_ANIM_VALUES: usize = 16;
/// Most state machines one snapshot carries.
pub const MAX_ANIM_MACHINES: usize = 3;
/// Most one-shots one snapshot carries.
pub const MAX_ANIM_SHOTS: usize = 8;
/// The section's layout version.
pub const ANIM_VERSION: u8 = 1;
/// A node or animation index meaning "none".
pub const NO_NODE: u8 = 0xFF;
/// Largest play position the section holds (s).
pub const MAX_POSITION: f32 = 65.535;
/// Largest section in bytes.
pub const MAX_ANIM_BYTES: usize = 2 + 2 * MAX_ANIM_VALUES + 4 * MAX_ANIM_MACHINES + 1 + 3;
/// A play position that drifted more than this (s) from what a receiver predicts counts as changed.
pub const POSITION_DEADBAND: f32 = 0.05;

/// One state machine at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MachineState {
    /// Index of the current node in the machine's sorted node list ([`NO_NODE`]: not playing).
    pub node: u8,
    /// Index of the node the machine travels to ([`NO_NODE`]: not travelling).
    pub travel: u8,
    /// Play position in the current node (s).
    pub position: f32,
}

impl Default for MachineState {
    fn default() -> Self {
        Self {
            node: NO_NODE,
            travel: NO_NODE,
            position: 0.0,
        }
    }
}

/// An AnimationPlayer (no AnimationTree) at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayerState {
    /// Index of the animation in the player's sorted animation list ([`NO_NODE`]: stopped).
    pub animation: u8,
    /// Play position (s).
    pub position: f32,
}

impl Default for PlayerState {
    fn default() -> Self {
        Self {
            animation: NO_NODE,
            position: 0.0,
        }
    }
}

/// The initiator's animation at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AnimSnapshot {
    /// Numeric parameter values (the first `value_count`).
    pub values: [f32; MAX_ANIM_VALUES],
    /// How many values.
    pub value_count: u8,
    /// State machines (the first `machine_count`).
    pub machines: [MachineState; MAX_ANIM_MACHINES],
    /// How many state machines.
    pub machine_count: u8,
    /// One-shot active bits, first one-shot in bit 0.
    pub shots: u8,
    /// How many one-shots.
    pub shot_count: u8,
    /// The AnimationPlayer, for a rig without an AnimationTree.
    pub player: Option<PlayerState>,
}

/// Why a section was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadSection {
    /// Too short.
    Size,
    /// An unknown version, a count out of range, a reserved bit set, or a value not finite.
    Value,
}

impl AnimSnapshot {
    /// Returns the used values.
    #[must_use]
    pub fn values(&self) -> &[f32] {
        &self.values[..usize::from(self.value_count).min(MAX_ANIM_VALUES)]
    }

    /// Returns the used state machines.
    #[must_use]
    pub fn machines(&self) -> &[MachineState] {
        &self.machines[..usize::from(self.machine_count).min(MAX_ANIM_MACHINES)]
    }

    /// Empties the snapshot.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Appends a value; returns false when full (the value is dropped). Not finite counts as 0.
    pub fn push_value(&mut self, x: f32) -> bool {
        let n = usize::from(self.value_count);
        if n >= MAX_ANIM_VALUES {
            return false;
        }
        self.values[n] = if x.is_finite() { x } else { 0.0 };
        self.value_count += 1;
        true
    }

    /// Appends a state machine; returns false when full.
    pub fn push_machine(&mut self, m: MachineState) -> bool {
        let n = usize::from(self.machine_count);
        if n >= MAX_ANIM_MACHINES {
            return false;
        }
        self.machines[n] = m;
        self.machine_count += 1;
        true
    }

    /// Appends a one-shot's active flag; returns false when full.
    pub fn push_shot(&mut self, active: bool) -> bool {
        let n = self.shot_count;
        if usize::from(n) >= MAX_ANIM_SHOTS {
            return false;
        }
        self.shots |= u8::from(active) << n;
        self.shot_count += 1;
        true
    }

    /// Returns whether one-shot `i` is active.
    #[must_use]
    pub fn shot(&self, i: usize) -> bool {
        i < usize::from(self.shot_count) && self.shots >> i & 1 != 0
    }

    /// Writes the section.
    pub fn encode(&self, w: &mut ByteWriter) -> Result<(), ShortBuffer> {
        let m = self.values().len() as u8;
        let k = self.machines().len() as u8;
        let o = self.shot_count.min(MAX_ANIM_SHOTS as u8);
        let extras = k > 0 || o > 0 || self.player.is_some();
        w.put_u8(u8::from(extras) << 7 | ANIM_VERSION << 5 | m)?;
        if extras {
            w.put_u8(k | u8::from(self.player.is_some()) << 2 | o << 3)?;
        }
        for v in self.values() {
            w.put_half(*v)?;
        }
        for s in self.machines() {
            w.put_u8(s.node)?;
            w.put_u8(s.travel)?;
            w.put_u16(position_code(s.position))?;
        }
        if o > 0 {
            let mask = if o >= 8 { 0xFF } else { (1u8 << o) - 1 };
            w.put_u8(self.shots & mask)?;
        }
        if let Some(p) = self.player {
            w.put_u8(p.animation)?;
            w.put_u16(position_code(p.position))?;
        }
        Ok(())
    }

    /// Reads a section.
    pub fn decode(r: &mut ByteReader) -> Result<Self, BadSection> {
        let short = |_| BadSection::Size;
        let head = r.get_u8().map_err(short)?;
        if head >> 5 & 3 != ANIM_VERSION {
            return Err(BadSection::Value);
        }
        let m = head & 0x1F;
        if usize::from(m) > MAX_ANIM_VALUES {
            return Err(BadSection::Value);
        }
        let (k, player, o) = if head & 0x80 != 0 {
            let extras = r.get_u8().map_err(short)?;
            let k = extras & 3;
            let o = extras >> 3 & 0x0F;
            if extras & 0x80 != 0
                || usize::from(k) > MAX_ANIM_MACHINES
                || usize::from(o) > MAX_ANIM_SHOTS
            {
                return Err(BadSection::Value);
            }
            (k, extras & 4 != 0, o)
        } else {
            (0, false, 0)
        };
        let mut s = Self::default();
        for _ in 0..m {
            let h = r.get_u16().map_err(short)?;
            if h >> 10 & 0x1F == 0x1F {
                return Err(BadSection::Value); // a half-float infinity or NaN
            }
            s.push_value(decode_half(h));
        }
        for _ in 0..k {
            let node = r.get_u8().map_err(short)?;
            let travel = r.get_u8().map_err(short)?;
            let position = f32::from(r.get_u16().map_err(short)?) / 1000.0;
            s.push_machine(MachineState {
                node,
                travel,
                position,
            });
        }
        if o > 0 {
            let bits = r.get_u8().map_err(short)?;
            if o < 8 && bits >> o != 0 {
                return Err(BadSection::Value); // a bit beyond the one-shots
            }
            s.shots = bits;
            s.shot_count = o;
        }
        if player {
            let animation = r.get_u8().map_err(short)?;
            let position = f32::from(r.get_u16().map_err(short)?) / 1000.0;
            s.player = Some(PlayerState {
                animation,
                position,
            });
        }
        Ok(s)
    }

    /// Returns whether `self` (now) differs from `last` (sent `age` seconds ago) enough to be sent:
    /// a value moved more than `deadband`, a node, travel target, one-shot or animation changed, or
    /// a play position drifted more than [`POSITION_DEADBAND`] from `last`'s position advanced by
    /// `age` (what a receiver predicts).
    #[must_use]
    pub fn differs(&self, last: &Self, age: f32, deadband: f32) -> bool {
        self.events_differ(last, age) || self.values_differ(last, deadband)
    }

    /// Returns whether a value moved more than `deadband` since `last`.
    #[must_use]
    pub fn values_differ(&self, last: &Self, deadband: f32) -> bool {
        self.value_count != last.value_count
            || self
                .values()
                .iter()
                .zip(last.values())
                .any(|(a, b)| (a - b).abs() > deadband)
    }

    /// Returns whether anything but the values changed since `last` (sent `age` seconds ago): a
    /// count, a node, travel target, one-shot or animation, or a play position that drifted more
    /// than [`POSITION_DEADBAND`] from `last`'s advanced by `age`.
    #[must_use]
    pub fn events_differ(&self, last: &Self, age: f32) -> bool {
        let drifted = |now: f32, then: f32| (now - (then + age)).abs() > POSITION_DEADBAND;
        self.switched(last)
            || self
                .machines()
                .iter()
                .zip(last.machines())
                .any(|(a, b)| a.node != NO_NODE && drifted(a.position, b.position))
            || self
                .player
                .zip(last.player)
                .is_some_and(|(a, b)| a.animation != NO_NODE && drifted(a.position, b.position))
    }

    /// Returns whether a count, a node, travel target, one-shot or animation changed since `last`
    /// (what a lost frame must not hold back).
    #[must_use]
    pub fn switched(&self, last: &Self) -> bool {
        self.machine_count != last.machine_count
            || self.shot_count != last.shot_count
            || self.shots != last.shots
            || self.player.map(|p| p.animation) != last.player.map(|p| p.animation)
            || self
                .machines()
                .iter()
                .zip(last.machines())
                .any(|(a, b)| a.node != b.node || a.travel != b.travel)
    }

    /// Returns the animation at a time `s` of the way (seconds `elapsed` after `self`'s time) toward
    /// `next`: values whose bit is set in `continuous` are interpolated, the others held; nodes,
    /// one-shots and animations are `self`'s; play positions are interpolated when `next` plays the
    /// same node or animation further on, else advanced by `elapsed`.
    #[must_use]
    pub fn at(&self, next: Option<&Self>, s: f32, elapsed: f32, continuous: u32) -> Self {
        let s = if s.is_finite() {
            s.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let elapsed = if elapsed.is_finite() {
            elapsed.max(0.0)
        } else {
            0.0
        };
        let mut out = *self;
        // A position stays finite whatever it and `elapsed` are (a sum of two huge values is not).
        let advance = |a: f32, b: Option<f32>| {
            let p = match b {
                Some(b) if b >= a => a + (b - a) * s,
                _ => a + elapsed,
            };
            if p.is_finite() {
                p
            } else {
                f32::MAX
            }
        };
        if let Some(n) = next {
            if n.value_count == self.value_count {
                for (i, v) in out.values[..usize::from(self.value_count)]
                    .iter_mut()
                    .enumerate()
                {
                    if i < 32 && continuous >> i & 1 != 0 {
                        *v += (n.values[i] - *v) * s;
                    }
                }
            }
        }
        for (i, m) in out.machines[..usize::from(self.machine_count)]
            .iter_mut()
            .enumerate()
        {
            let b = next
                .and_then(|n| n.machines().get(i))
                .filter(|b| b.node == m.node)
                .map(|b| b.position);
            m.position = advance(m.position, b);
        }
        if let Some(p) = out.player.as_mut() {
            let b = next
                .and_then(|n| n.player)
                .filter(|b| b.animation == p.animation)
                .map(|b| b.position);
            p.position = advance(p.position, b);
        }
        out
    }
}

fn position_code(x: f32) -> u16 {
    if x.is_finite() {
        (x.clamp(0.0, MAX_POSITION) * 1000.0).round() as u16
    } else {
        0
    }
}

/// How the arm layers (the tree's blend amounts that move the arms) follow a hand's IK position
/// `weight`: their animated values are saved when the weight first rises above 0 (nothing saved
/// yet), each saved value is blended toward the hold value by the weight (0: as animated, 1: the
/// hold value), and the saved values are forgotten once the weight is back at 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArmLayerBlend {
    /// The hand's IK position weight.
    pub weight: f32,
}

impl ArmLayerBlend {
    /// Returns whether the layers' values are to be saved now: nothing is saved (`saved_any`
    /// false) and the weight is above 0.
    #[must_use]
    pub fn saves(self, saved_any: bool) -> bool {
        !saved_any && self.weight > 0.0
    }

    /// Returns the value a layer saved at `saved` takes: blended toward `hold` by the weight.
    #[must_use]
    pub fn value(self, saved: f32, hold: f32) -> f32 {
        saved + (hold - saved) * self.weight
    }

    /// Returns whether the saved values are to be forgotten (after this blend): the weight is at
    /// or below 0.
    #[must_use]
    pub fn clears(self) -> bool {
        self.weight <= 0.0
    }
}

/// What one of an AnimationTree's `parameters/…` properties is to the snapshot
/// ([`TreeParam::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeParam<'a> {
    /// A state machine's playback: the machine's path in the tree (`""` for the root, else
    /// `"a/b/"`).
    Playback(&'a str),
    /// A node's one-shot request: the node's path (`"a/b/"`); the node is a OneShot when the tree
    /// says so, and its `active` parameter is that path followed by `active`.
    Request(&'a str),
    /// A numeric value the snapshot carries.
    Value(ValueKind),
    /// Not in the snapshot: not a parameter, a seek request, read-only, or not numeric.
    Skip,
}

/// The kind of a numeric tree parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A bool: one value, 0 or 1.
    Bool,
    /// An int: one value, rounded when applied.
    Int,
    /// A float: one value, interpolated.
    Float,
    /// A blend position (BlendSpace2D): two values.
    Vector2,
}

impl ValueKind {
    /// How many of the snapshot's values it takes.
    #[must_use]
    pub fn width(self) -> usize {
        if self == Self::Vector2 {
            2
        } else {
            1
        }
    }

    /// Whether it interpolates between snapshots (floats and blend positions).
    #[must_use]
    pub fn continuous(self) -> bool {
        matches!(self, Self::Float | Self::Vector2)
    }
}

/// What a replica last applied from the initiator's snapshots: travels and one-shots are asked
/// for once per change (and all on the first snapshot), and a state machine kept off the
/// initiator's node, and not on its way there, is restarted on it after a grace time.
#[derive(Clone, Debug, Default)]
pub struct FollowState {
    started: bool,
    shots: u8,
    targets: [(u8, u8); MAX_ANIM_MACHINES],
    mismatch: [f32; MAX_ANIM_MACHINES],
}

impl FollowState {
    /// Starts applying a snapshot; returns whether it is the first since the state was made.
    pub fn begin(&mut self) -> bool {
        let first = !self.started;
        self.started = true;
        first
    }

    /// Returns whether state machine `i` (below [`MAX_ANIM_MACHINES`]) is to travel to its target
    /// (when not already on it): on the `first` snapshot, or when the initiator's node and travel
    /// target `(node, travel)` changed since the last snapshot; remembers them.
    pub fn retarget(&mut self, i: usize, first: bool, state: (u8, u8)) -> bool {
        if first || self.targets[i] != state {
            self.targets[i] = state;
            return true;
        }
        false
    }

    /// Machine `i` has been off the initiator's node (and not heading there) for another `dt`
    /// seconds (negative: none); returns whether that has now lasted longer than `grace` seconds.
    /// Call [`FollowState::on_course`] once it is restarted on the node.
    pub fn astray(&mut self, i: usize, dt: f32, grace: f32) -> bool {
        self.mismatch[i] += dt.max(0.0);
        self.mismatch[i] > grace
    }

    /// Machine `i` is on the initiator's node or on its way (or was just restarted there): its
    /// time astray starts over.
    pub fn on_course(&mut self, i: usize) {
        self.mismatch[i] = 0.0;
    }

    /// Returns whether one-shot `i` is to be made `on` (fired, or aborted when off) where the tree
    /// differs: on the `first` snapshot, or when it changed since the last snapshot applied.
    #[must_use]
    pub fn shot_changed(&self, first: bool, i: usize, on: bool) -> bool {
        let was = self.shots >> i & 1 != 0;
        first || on != was
    }

    /// Remembers the one-shot bits of the snapshot just applied.
    pub fn shots_applied(&mut self, shots: u8) {
        self.shots = shots;
    }
}

/// The snapshot's value slots, handed out in order to a tree's numeric parameters: each takes
/// [`ValueKind::width`] slots, up to [`MAX_ANIM_VALUES`] in all, and the continuous ones mark
/// theirs in a bit mask (bit i: slot i interpolates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueSlots {
    used: usize,
    continuous: u32,
}

impl ValueSlots {
    /// Takes the slots of a value of `kind`; false (nothing taken) when they would pass
    /// [`MAX_ANIM_VALUES`] (a narrower value after it may still fit).
    pub fn take(&mut self, kind: ValueKind) -> bool {
        let width = kind.width();
        if self.used + width > MAX_ANIM_VALUES {
            return false;
        }
        if kind.continuous() {
            self.continuous |= ((1u32 << width) - 1) << self.used;
        }
        self.used += width;
        true
    }

    /// Returns how many slots are taken.
    #[must_use]
    pub fn used(self) -> usize {
        self.used
    }

    /// Returns which slots interpolate (bit i: slot i).
    #[must_use]
    pub fn continuous(self) -> u32 {
        self.continuous
    }
}

/// A tree parameter's value read back from a snapshot's slots ([`decode_values`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TreeValue {
    /// A bool.
    Bool(bool),
    /// An int.
    Int(i64),
    /// A float.
    Float(f32),
    /// A blend position (x, y).
    Vector2(f32, f32),
}

/// Reads a snapshot's flat `values` back as one typed value for each of `kinds`, in order, and
/// hands each to `out` with its index in `kinds`: a bool is a value above 0.5, an int the value
/// rounded, a float the value, a blend position two values. Nothing when the kinds do not take
/// exactly `values.len()` slots.
pub fn decode_values<I>(kinds: I, values: &[f32], mut out: impl FnMut(usize, TreeValue))
where
    I: IntoIterator<Item = ValueKind>,
    I::IntoIter: Clone,
{
    let kinds = kinds.into_iter();
    let slots: usize = kinds.clone().map(ValueKind::width).sum();
    if values.len() != slots {
        return;
    }
    let mut i = 0;
    for (j, kind) in kinds.enumerate() {
        let x = values[i];
        let v = match kind {
            ValueKind::Bool => TreeValue::Bool(x > 0.5),
            ValueKind::Int => TreeValue::Int(x.round() as i64),
            ValueKind::Float => TreeValue::Float(x),
            ValueKind::Vector2 => {
                i += 1;
                TreeValue::Vector2(x, values[i])
            }
        };
        i += 1;
        out(j, v);
    }
}

/// Godot's property usage bits a game-set parameter has (`STORAGE | EDITOR`), and the read-only bit.
const USAGE_STORAGE_OR_EDITOR: i64 = 2 | 4;
const USAGE_READ_ONLY: i64 = 1 << 28;

impl<'a> TreeParam<'a> {
    /// Classifies the tree property `name` of Godot variant type `variant_type` (1 bool, 2 int,
    /// 3 float, 5 Vector2) and property `usage` flags: playbacks and one-shot requests by their
    /// names; values when a game sets them (stored or shown in the editor, not read-only) and they
    /// are numeric; seek requests never.
    #[must_use]
    pub fn of(name: &'a str, variant_type: i64, usage: i64) -> Self {
        let Some(path) = name.strip_prefix("parameters/") else {
            return Self::Skip;
        };
        if path == "playback" || path.ends_with("/playback") {
            return Self::Playback(path.trim_end_matches("playback"));
        }
        if let Some(at) = path.strip_suffix("request") {
            if !at.ends_with("seek_") {
                return Self::Request(at);
            }
        }
        if path.ends_with("seek_request") || !settable(usage) {
            return Self::Skip;
        }
        match variant_type {
            1 => Self::Value(ValueKind::Bool),
            2 => Self::Value(ValueKind::Int),
            3 => Self::Value(ValueKind::Float),
            5 => Self::Value(ValueKind::Vector2),
            _ => Self::Skip,
        }
    }
}

/// Returns whether a property with these usage flags is one a game sets: stored or shown in the
/// editor, and not read-only (like a node's `current_position`).
#[must_use]
pub fn settable(usage: i64) -> bool {
    usage & USAGE_STORAGE_OR_EDITOR != 0 && usage & USAGE_READ_ONLY == 0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_follower_asks_for_a_travel_once_per_change_and_all_at_first() {
        let mut f = FollowState::default();
        assert!(f.begin(), "the first snapshot");
        assert!(f.retarget(0, true, (0, 0)), "every machine at first");
        assert!(!f.begin());
        assert!(!f.retarget(0, false, (0, 0)));
        assert!(f.retarget(0, false, (0, 2)), "a travel began");
        assert!(!f.retarget(0, false, (0, 2)));
        assert!(f.retarget(1, false, (1, NO_NODE)), "another machine");
        assert!(!f.retarget(0, false, (0, 2)));
        // A new pair starts over.
        let mut f = FollowState::default();
        assert!(f.begin());
    }

    #[test]
    fn a_follower_restarts_a_machine_astray_past_the_grace_time() {
        let mut f = FollowState::default();
        assert!(!f.astray(0, 0.1, 0.25));
        assert!(!f.astray(0, 0.1, 0.25));
        assert!(!f.astray(0, -5.0, 0.25), "no time back");
        assert!(!f.astray(1, 0.2, 0.25), "each machine its own");
        assert!(f.astray(0, 0.1, 0.25), "0.3 s > 0.25 s");
        f.on_course(0);
        assert!(!f.astray(0, 0.1, 0.25));
        assert!(f.astray(1, 0.1, 0.25));
    }

    #[test]
    fn a_follower_fires_one_shots_on_changes_and_all_at_first() {
        let mut f = FollowState::default();
        assert!(f.shot_changed(true, 0, false), "all at first, off too");
        assert!(f.shot_changed(true, 3, true));
        f.shots_applied(0b1000);
        assert!(!f.shot_changed(false, 3, true));
        assert!(!f.shot_changed(false, 0, false));
        assert!(f.shot_changed(false, 3, false), "aborted");
        assert!(f.shot_changed(false, 7, true), "fired");
    }

    #[test]
    fn value_slots_are_handed_out_in_order_up_to_the_limit() {
        let mut s = ValueSlots::default();
        assert!(s.take(ValueKind::Bool));
        assert!(s.take(ValueKind::Vector2));
        assert!(s.take(ValueKind::Int));
        assert!(s.take(ValueKind::Float));
        // Slots 1 and 2 (the blend position) and 4 (the float) interpolate.
        assert_eq!((s.used(), s.continuous()), (5, 0b1_0110));
        while s.used() + 2 <= MAX_ANIM_VALUES {
            assert!(s.take(ValueKind::Vector2));
        }
        assert_eq!(s.used(), MAX_ANIM_VALUES - 1);
        // A blend position no longer fits; a single value still does, then nothing.
        assert!(!s.take(ValueKind::Vector2));
        assert!(s.take(ValueKind::Bool));
        assert!(!s.take(ValueKind::Float));
        assert_eq!(s.used(), MAX_ANIM_VALUES);
        assert_eq!(s.continuous() >> 1 & 1, 1);
        assert_eq!(s.continuous() >> (MAX_ANIM_VALUES - 1), 0, "the bool");
    }

    #[test]
    fn values_decode_by_kind_from_their_slots() {
        let kinds = [
            ValueKind::Bool,
            ValueKind::Int,
            ValueKind::Vector2,
            ValueKind::Float,
            ValueKind::Bool,
        ];
        let values = [0.6, 2.5, -0.25, 0.75, 0.125, 0.5];
        let mut got = Vec::new();
        decode_values(kinds, &values, |j, v| got.push((j, v)));
        assert_eq!(
            got,
            [
                (0, TreeValue::Bool(true)),
                (1, TreeValue::Int(3)),
                (2, TreeValue::Vector2(-0.25, 0.75)),
                (3, TreeValue::Float(0.125)),
                (4, TreeValue::Bool(false)),
            ]
        );
        // Rounded half away from zero, as Godot's parameters were set.
        let mut ints = Vec::new();
        decode_values([ValueKind::Int], &[-2.5], |_, v| ints.push(v));
        assert_eq!(ints, [TreeValue::Int(-3)]);
        // Slots that do not match the kinds: nothing.
        let mut none = 0;
        decode_values(kinds, &values[..5], |_, _| none += 1);
        decode_values([ValueKind::Vector2], &[1.0], |_, _| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    fn arm_layers_save_when_the_weight_rises_blend_toward_hold_and_clear_at_zero() {
        let off = ArmLayerBlend { weight: 0.0 };
        let half = ArmLayerBlend { weight: 0.5 };
        let full = ArmLayerBlend { weight: 1.0 };
        // Saved once, when the weight first rises above 0.
        assert!(!off.saves(false));
        assert!(half.saves(false));
        assert!(!half.saves(true));
        assert!(!ArmLayerBlend { weight: f32::NAN }.saves(false));
        // 0 leaves the animated value, 1 gives the hold value, between blends.
        assert_eq!(off.value(0.8, 0.0), 0.8);
        assert_eq!(full.value(0.8, 0.0), 0.0);
        assert_eq!(half.value(0.8, 0.2), 0.8 + (0.2 - 0.8) * 0.5);
        // Forgotten at 0 (and below), kept while the hand holds.
        assert!(off.clears());
        assert!(ArmLayerBlend { weight: -1.0 }.clears());
        assert!(!half.clears());
        assert!(!full.clears());
    }

    #[test]
    fn tree_parameters_are_told_apart_by_name_type_and_usage() {
        const SET: i64 = 2 | 4;
        assert_eq!(
            TreeParam::of("parameters/playback", 24, SET),
            TreeParam::Playback("")
        );
        assert_eq!(
            TreeParam::of("parameters/Locomotion/playback", 24, SET),
            TreeParam::Playback("Locomotion/")
        );
        assert_eq!(
            TreeParam::of("parameters/Wave/request", 2, SET),
            TreeParam::Request("Wave/")
        );
        assert_eq!(
            TreeParam::of("parameters/Seek/seek_request", 3, SET),
            TreeParam::Skip
        );
        assert_eq!(
            TreeParam::of("parameters/Walk/blend_position", 5, SET),
            TreeParam::Value(ValueKind::Vector2)
        );
        assert_eq!(
            TreeParam::of("parameters/Speed/scale", 3, SET),
            TreeParam::Value(ValueKind::Float)
        );
        assert_eq!(
            TreeParam::of("parameters/on", 1, SET),
            TreeParam::Value(ValueKind::Bool)
        );
        assert_eq!(
            TreeParam::of("parameters/n", 2, 4),
            TreeParam::Value(ValueKind::Int)
        );
        // Read-only, not stored or shown, not numeric, not a parameter.
        assert_eq!(
            TreeParam::of("parameters/Shot/time", 3, SET | 1 << 28),
            TreeParam::Skip
        );
        assert_eq!(TreeParam::of("parameters/x", 3, 0), TreeParam::Skip);
        assert_eq!(TreeParam::of("parameters/name", 4, SET), TreeParam::Skip);
        assert_eq!(TreeParam::of("root_node", 22, SET), TreeParam::Skip);
        assert_eq!((ValueKind::Vector2.width(), ValueKind::Int.width()), (2, 1));
        assert!(ValueKind::Float.continuous() && !ValueKind::Bool.continuous());
    }

    pub(crate) fn locomotion() -> AnimSnapshot {
        let mut s = AnimSnapshot::default();
        // BlendSpace2D position (two values), TimeScale, a bool condition.
        for v in [0.25, -0.75, 1.3, 1.0] {
            s.push_value(v);
        }
        s.push_machine(MachineState {
            node: 2,
            travel: 4,
            position: 0.437,
        });
        s.push_shot(false);
        s.push_shot(true);
        s
    }

    fn round_trip(s: &AnimSnapshot) -> (AnimSnapshot, usize) {
        let mut buf = [0u8; MAX_ANIM_BYTES];
        let mut w = ByteWriter::new(&mut buf);
        s.encode(&mut w).unwrap();
        let n = w.written().len();
        let mut r = ByteReader::new(&buf[..n]);
        let back = AnimSnapshot::decode(&mut r).unwrap();
        assert_eq!(r.remaining(), 0);
        (back, n)
    }

    #[test]
    fn sections_round_trip_and_stay_small() {
        let s = locomotion();
        let (back, n) = round_trip(&s);
        assert_eq!(
            n,
            2 + 8 + 4 + 1,
            "header, 4 halves, a machine, one-shot bits"
        );
        assert_eq!(back.value_count, 4);
        for (a, b) in back.values().iter().zip(s.values()) {
            assert!((a - b).abs() <= b.abs() / 1024.0, "{a} {b}");
        }
        assert_eq!(back.machines()[0].node, 2);
        assert_eq!(back.machines()[0].travel, 4);
        assert!((back.machines()[0].position - 0.437).abs() < 5e-4);
        assert!(!back.shot(0) && back.shot(1) && !back.shot(2));
        assert!(back.player.is_none());
        // Values only: one header byte.
        let mut plain = AnimSnapshot::default();
        plain.push_value(0.5);
        plain.push_value(1.0);
        assert_eq!(round_trip(&plain).1, 5);
        // A player-only rig: 4 bytes.
        let mut player = AnimSnapshot {
            player: Some(PlayerState {
                animation: 1,
                position: 12.3456,
            }),
            ..AnimSnapshot::default()
        };
        let (back, n) = round_trip(&player);
        assert_eq!(n, 5);
        assert_eq!(back.player.unwrap().animation, 1);
        assert!((back.player.unwrap().position - 12.346).abs() < 1e-3);
        // Positions are clamped into range.
        player.player = Some(PlayerState {
            animation: 0,
            position: 1e9,
        });
        assert!((round_trip(&player).0.player.unwrap().position - MAX_POSITION).abs() < 1e-3);
    }

    #[test]
    fn bad_sections_are_rejected() {
        let decode = |b: &[u8]| AnimSnapshot::decode(&mut ByteReader::new(b));
        assert_eq!(decode(&[]), Err(BadSection::Size));
        assert_eq!(decode(&[2, 0, 0]), Err(BadSection::Value), "version 0");
        assert_eq!(
            decode(&[0x40 | 2, 0, 0]),
            Err(BadSection::Value),
            "version 2"
        );
        assert_eq!(decode(&[0x20 | 17]), Err(BadSection::Value), "17 values");
        assert_eq!(decode(&[0x20 | 1, 0]), Err(BadSection::Size));
        // A half-float infinity and NaN.
        assert_eq!(decode(&[0x21, 0x00, 0x7C]), Err(BadSection::Value));
        assert_eq!(decode(&[0x21, 0x01, 0x7E]), Err(BadSection::Value));
        assert_eq!(
            decode(&[0xA0, 0x80]),
            Err(BadSection::Value),
            "reserved bit"
        );
        assert_eq!(
            decode(&[0xA0, 9 << 3]),
            Err(BadSection::Value),
            "9 one-shots"
        );
        assert_eq!(decode(&[0xA0, 2 << 3, 0b100]), Err(BadSection::Value));
        assert!(decode(&[0xA0, 2 << 3, 0b10]).is_ok());
        assert_eq!(decode(&[0xA0, 1, 0, 0, 0]), Err(BadSection::Size));
        assert!(decode(&[0xA0, 1, 0, NO_NODE, 0, 0]).is_ok());
    }

    #[test]
    fn unchanged_snapshots_are_not_worth_sending_but_drift_and_events_are() {
        let s = locomotion();
        let mut later = s;
        later.machines[0].position += 0.1;
        assert!(
            !later.differs(&s, 0.1, 1e-3),
            "the position advanced with time"
        );
        assert!(later.differs(&s, 0.0, 1e-3), "the position jumped");
        let mut v = s;
        v.values[1] += 0.01;
        assert!(v.differs(&s, 0.0, 1e-3));
        let mut shot = s;
        shot.shots = 0b01;
        assert!(shot.differs(&s, 0.0, 1e-3));
        let mut travel = s;
        travel.machines[0].travel = NO_NODE;
        assert!(travel.differs(&s, 0.0, 1e-3));
        assert!(!s.differs(&s, 0.0, 1e-3));
    }

    #[test]
    fn snapshots_interpolate_continuous_values_and_positions() {
        let a = locomotion();
        let mut b = a;
        b.values[0] = 0.75;
        b.values[2] = 2.0;
        b.values[3] = 0.0;
        b.machines[0].position = 0.537;
        // Values 0, 1 (a Vector2) and 2 (a TimeScale) are continuous; 3 is a bool.
        let mid = a.at(Some(&b), 0.5, 0.05, 0b0111);
        assert!((mid.values[0] - 0.5).abs() < 1e-6);
        assert!((mid.values[2] - 1.65).abs() < 1e-6);
        assert_eq!(mid.values[3], 1.0, "held until the next snapshot");
        assert!((mid.machines[0].position - 0.487).abs() < 1e-6);
        // Another node next, or no next: the position runs on with time.
        b.machines[0].node = 3;
        let on = a.at(Some(&b), 0.5, 0.05, 0b0111);
        assert!((on.machines[0].position - 0.487).abs() < 1e-6);
        let alone = a.at(None, 0.0, 0.2, u32::MAX);
        assert!((alone.machines[0].position - 0.637).abs() < 1e-6);
        assert_eq!(alone.values, a.values);
        // A wrap (the next position is smaller): advanced by time, not run backwards.
        let mut wrapped = a;
        wrapped.machines[0].position = 0.01;
        let w = a.at(Some(&wrapped), 0.5, 0.05, 0);
        assert!((w.machines[0].position - 0.487).abs() < 1e-6);
        // Junk fractions are safe.
        let j = a.at(Some(&b), f32::NAN, f32::INFINITY, u32::MAX);
        assert!(j.values().iter().all(|v| v.is_finite()));
        assert!(j.machines()[0].position.is_finite());
    }
}
