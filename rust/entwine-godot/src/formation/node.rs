//! `FormationController`'s engine callbacks: its defaults (from the core's `SquadConfig`), and the
//! per-frame order — settings, hot reload, network, keyframes, then the squad's step and drawing.

use std::collections::HashMap;

use entwine_core::formation::command::CommandLog;
use entwine_core::formation::params;
use entwine_core::formation::{Squad, SquadConfig};
use godot::classes::INode3D;
use godot::prelude::*;

use super::library::{builtin_library, DEFAULT_FORMATIONS_DIR};
use super::{AgentSource, FormationController};
use crate::warnings::Warnings;

#[godot_api]
impl INode3D for FormationController {
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        use crate::inspector::hide;
        let internal = self.agent_source == AgentSource::Internal;
        hide(property, &["internal_agent_count", "agent_mesh"], !internal);
        hide(property, &["move_bodies", "soldier_bearings"], internal);
        let bearings = self.soldier_bearings && !internal;
        hide(property, &["head_turn_speed", "salute_duration"], !bearings);
        let net = ["net_clock_node", "acknowledge_commands", "keyframe_rate"];
        hide(property, &net, !self.networked);
        hide(property, &["record_frames"], !self.recording);
    }

    fn init(base: Base<Node3D>) -> Self {
        let cfg = SquadConfig::default();
        Self {
            base,
            agent_source: AgentSource::Children,
            internal_agent_count: params::INTERNAL_AGENT_COUNT.default as i32,
            agent_mesh: None,
            move_bodies: true,
            emit_agent_signals: true,
            formations_dir: DEFAULT_FORMATIONS_DIR.into(),
            formation: "line".into(),
            hot_reload: godot::classes::Os::singleton().has_feature("editor"),
            leader_node: NodePath::default(),
            max_speed: cfg.max_speed,
            max_turn_rate: cfg.max_turn_rate,
            arrival_time: cfg.arrival_time,
            march_acceleration: cfg.anchor_acceleration,
            k1: cfg.gains.k1,
            k2: cfg.gains.k2,
            k3: cfg.gains.k3,
            integral_limit: cfg.gains.integral_limit,
            align_threshold: cfg.thresholds.align,
            stable_threshold: cfg.thresholds.stable,
            debounce_frames: i32::from(cfg.thresholds.frames),
            heading_tolerance: cfg.thresholds.heading,
            transition_gain_max: cfg.transition_gain_max,
            repulsion_radius: cfg.repulsion_radius,
            repulsion_strength: cfg.repulsion_strength,
            contract_spacing: cfg.contract_spacing,
            contract_heading: cfg.contract_heading,
            contract_settle: cfg.contract_settle,
            actuation_latency: cfg.latency,
            measure_latency: true,
            step_noise: cfg.step_noise,
            networked: false,
            net_clock_node: NodePath::default(),
            acknowledge_commands: true,
            keyframe_rate: params::KEYFRAME_RATE.default,
            keyframes: Default::default(),
            inbox: Default::default(),
            debug_draw: false,
            recording: false,
            record_frames: params::RECORD_FRAMES.default as i32,
            spacing_error: 0.0,
            heading_std: 0.0,
            settle_time: -1.0,
            squad: Squad::new(0, false, cfg),
            formations: builtin_library(),
            new_files: HashMap::new(),
            current: "line".into(),
            agents: Vec::new(),
            bodies: Vec::new(),
            peer_of_agent: Vec::new(),
            children_seen: -1,
            multimesh: None,
            mm_buffer: PackedFloat32Array::new(),
            debug_mesh: None,
            debug_instance: None,
            last_states: Vec::new(),
            reload_timer: 0.0,
            warnings: Warnings::default(),
            replay_frame: None,
            commands: CommandLog::default(),
            watching_peers: false,
            ready: false,
            soldier_bearings: true,
            head_turn_speed: params::HEAD_TURN_SPEED.default,
            salute_duration: params::SALUTE_DURATION.default,
            soldiers: Vec::new(),
            heads: Vec::new(),
            bearing_watch: Default::default(),
            bearing_warnings: Default::default(),
            lay_out_agents_button: PhantomVar::default(),
            in_editor: false,
            editor_dirty: true,
            editor_slots: None,
            custom_overflow_warned: None,
        }
    }

    fn ready(&mut self) {
        if godot::classes::Engine::singleton().is_editor_hint() {
            // The editor's preview: the formation laid out for the children, drawn, not driven.
            self.in_editor = true;
            self.load_formation_dir();
            self.ready = true;
            self.rebuild_agents(true);
            self.editor_dirty = true;
            return;
        }
        self.load_formation_dir();
        self.ready = true;
        self.rebuild_agents(true);
        if self.recording {
            self.start_recording();
        }
    }

    fn physics_process(&mut self, delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::FormationController);
        if !self.ready || self.in_editor {
            return;
        }
        self.check_settings();
        self.hot_reload_tick(delta);
        self.network_tick();
        self.keyframe_tick(delta as f32);
        if self.replay_frame.is_some() {
            return;
        }
        self.run(delta as f32);
    }

    fn process(&mut self, _delta: f64) {
        let _own = crate::time::own_time(crate::time::Own::FormationController);
        if !self.ready {
            return;
        }
        if self.in_editor {
            self.editor_preview();
            return;
        }
        self.draw_agents();
        self.draw_debug();
    }
}
