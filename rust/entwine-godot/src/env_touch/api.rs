//! The class's signals, constants and methods (properties' setters, state and hand queries,
//! profiling), and the state enum GDScript sees.

use entwine_core::env_touch::node::Profile;
use entwine_core::env_touch::{ResetReason, Side, TouchState};
use godot::prelude::*;

use super::EnvironmentInteractionStateMachine;
use crate::convert::{rigid_transform, vector3};
use crate::limb_ik::LimbIK;

/// A state of [EnvironmentInteractionStateMachine], as GDScript sees it: Reset 0, Search 1,
/// Approach 2, Rise 3, Touch 4 (the class's `STATE_*` constants name the same values).
#[derive(GodotConvert, Var, Export, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[godot(via = i64)]
pub enum TouchStateKind {
    /// Letting go; waits for the reset delay and for movement.
    #[default]
    Reset = 0,
    /// Tracking a collider.
    Search = 1,
    /// The hand moves toward it, palm down.
    Approach = 2,
    /// The hand rises onto the contact.
    Rise = 3,
    /// The hand rests on the surface.
    Touch = 4,
}

impl TouchStateKind {
    /// Returns the GDScript state of a core state.
    pub fn of(state: TouchState) -> Self {
        match state {
            TouchState::Reset => Self::Reset,
            TouchState::Search => Self::Search,
            TouchState::Approach => Self::Approach,
            TouchState::Rise => Self::Rise,
            TouchState::Touch => Self::Touch,
        }
    }
}

#[godot_api(secondary)]
impl EnvironmentInteractionStateMachine {
    /// Forgets [member move_input]: "stopped" is read from the character's velocity again.
    #[func]
    pub fn clear_move_input(&mut self) {
        self.move_input = Vector3::ZERO;
        self.has_move_input = false;
    }

    /// Returns the current state (`STATE_RESET` … `STATE_TOUCH`).
    #[func]
    pub fn get_state(&self) -> TouchStateKind {
        TouchStateKind::of(self.core.state())
    }

    /// Returns the current state's name ("Reset", "Search", "Approach", "Rise" or "Touch").
    #[func]
    pub fn get_state_name(&self) -> GString {
        GString::from(self.core.state().name())
    }

    /// Returns the hand in use (`SIDE_LEFT` or `SIDE_RIGHT`), or -1 while no collider is tracked.
    #[func]
    pub fn get_current_side(&self) -> i64 {
        match self.core.tracked() {
            Some(_) => self.core.side().index() as i64,
            None => -1,
        }
    }

    /// Returns true while a collider is tracked.
    #[func]
    pub fn has_contact(&self) -> bool {
        self.core.closest_point().is_some()
    }

    /// Returns the tracked collider's closest point to the character at shoulder height (world
    /// space), or `Vector3.INF` when none is tracked.
    #[func]
    pub fn get_closest_point(&self) -> Vector3 {
        self.core.closest_point().map_or(
            Vector3::new(f32::INFINITY, f32::INFINITY, f32::INFINITY),
            vector3,
        )
    }

    /// Returns the last surface normal found by the ray (world space), or `Vector3.ZERO`.
    #[func]
    pub fn get_surface_normal(&self) -> Vector3 {
        self.core.surface_normal().map_or(Vector3::ZERO, vector3)
    }

    /// Returns a hand's IK target (world space) for `side` (`SIDE_LEFT` or `SIDE_RIGHT`).
    #[func]
    pub fn get_hand_target(&self, side: i64) -> Transform3D {
        let hand = self.core.hand(Side::from_script(side));
        rigid_transform(hand.pose)
    }

    /// Returns a hand's IK position weight (0 = animated, 1 = on the target).
    #[func]
    pub fn get_hand_weight(&self, side: i64) -> f32 {
        self.core.hand(Side::from_script(side)).position_weight
    }

    /// Returns a hand's IK rotation weight.
    #[func]
    pub fn get_hand_rotation_weight(&self, side: i64) -> f32 {
        self.core.hand(Side::from_script(side)).rotation_weight
    }

    /// Returns why the node last reset: "none", "stopped", "moving_away", "invalid_angle",
    /// "jumping", "collider_lost", "approach_timeout", "touch_done" or "forced".
    #[func]
    pub fn get_reset_reason(&self) -> GString {
        GString::from(self.core.reset_reason().name())
    }

    /// Returns true once the setup succeeded (character, skeleton, bones, height and mask usable).
    #[func]
    pub fn is_active(&self) -> bool {
        self.rig.is_some()
    }

    /// Returns the palm and finger axes in use, each in its hand bone's own space:
    /// `[left palm, left fingers, right palm, right fingers]` (the found ones once set up).
    #[func]
    pub fn get_hand_axes(&self) -> PackedVector3Array {
        let mut out = PackedVector3Array::new();
        for (palm, finger) in self.effective_hand_axes() {
            out.push(vector3(palm));
            out.push(vector3(finger));
        }
        out
    }

    /// Returns the [EntwineLimbIK] driving `side`'s arm, or null before setup.
    #[func]
    pub fn get_arm_ik(&self, side: i64) -> Option<Gd<LimbIK>> {
        self.rig
            .as_ref()
            .map(|rig| rig.iks[Side::from_script(side).index()].clone())
    }

    /// Returns `k`, the factor [member auto_proportions] applies to the lengths and speeds (the
    /// character's height in the world over 1.75 m; 1 when the option is off, or before setup).
    #[func]
    pub fn get_proportion(&self) -> f32 {
        self.rig.as_ref().map_or(1.0, |rig| rig.proportion)
    }

    /// Returns the detection volume's side (in the character's own units), 0 before setup.
    #[func]
    pub fn get_detection_size(&self) -> f32 {
        self.rig.as_ref().map_or(0.0, |rig| rig.volume_size)
    }

    /// Returns the detection volume's centre and orientation relative to the character.
    #[func]
    pub fn get_detection_transform(&self) -> Transform3D {
        self.rig
            .as_ref()
            .map_or(Transform3D::IDENTITY, |rig| rig.volume_local)
    }

    /// Returns this node's measured cost since the last [method reset_profile], in microseconds per
    /// physics frame: `{"logic": …, "queries": …, "engine": …, "frames": n}`. "logic" is the state
    /// machine and the closest-point geometry, "queries" the time in the physics server (detection
    /// shape query and normal ray), "engine" the rest (reading transforms and bones, writing the IK).
    #[func(rename = _get_profile)]
    pub fn get_profile(&self) -> VarDictionary {
        let p = self.profile.per_frame();
        let mut d = VarDictionary::new();
        d.set("logic", p.logic);
        d.set("queries", p.queries);
        d.set("engine", p.engine);
        d.set("frames", p.frames);
        d
    }

    /// Starts a new measurement for [method get_profile].
    #[func(rename = _reset_profile)]
    pub fn reset_profile(&mut self) {
        self.profile = Profile::default();
    }

    /// Lets go now (e.g. after a teleport): the node goes to Reset.
    #[func]
    pub fn force_reset(&mut self) {
        self.core.reset(ResetReason::Forced);
        let (events, n) = self.take_events();
        self.emit(&events[..n]);
    }
}
