//! `FormationController`'s primary script block: its constants, signals, property setters and the
//! RPC entry points (handled in `network.rs`), plus the node's warning helpers.

use super::*;
use crate::inbox::Message;
use crate::warnings;
use entwine_core::formation::MAX_AGENTS;
use entwine_core::kit::warn::int_checked;

#[godot_api]
impl FormationController {
    /// Returns [member move_bodies].
    #[func]
    pub fn is_moving_bodies(&self) -> bool {
        self.move_bodies
    }

    /// Returns [member emit_agent_signals].
    #[func]
    pub fn is_emitting_agent_signals(&self) -> bool {
        self.emit_agent_signals
    }

    /// Returns [member hot_reload].
    #[func]
    pub fn is_hot_reload_enabled(&self) -> bool {
        self.hot_reload
    }

    /// Returns [member measure_latency].
    #[func]
    pub fn is_measuring_latency(&self) -> bool {
        self.measure_latency
    }

    /// Returns [member soldier_bearings].
    #[func]
    pub fn has_soldier_bearings(&self) -> bool {
        self.soldier_bearings
    }

    /// Returns [member networked].
    #[func]
    pub fn is_networked(&self) -> bool {
        self.networked
    }

    /// Sets [member networked].
    #[func]
    pub fn set_networked(&mut self, on: bool) {
        self.networked = on;
        self.base_mut().notify_property_list_changed();
    }

    /// Returns [member acknowledge_commands].
    #[func]
    pub fn is_acknowledging_commands(&self) -> bool {
        self.acknowledge_commands
    }

    /// Returns [member debug_draw].
    #[func]
    pub fn is_debug_draw_enabled(&self) -> bool {
        self.debug_draw
    }

    /// Returns [member recording].
    #[func]
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// [member agent_source] value: drive the controller's children.
    #[constant]
    const AGENTS_CHILDREN: i64 = AgentSource::Children as i64;
    /// [member agent_source] value: simulate internal agents drawn with a MultiMesh.
    #[constant]
    const AGENTS_INTERNAL: i64 = AgentSource::Internal as i64;

    /// Emitted once per command when the squad has arrived (a [method march_to] reached its goal)
    /// and held formed for [member debounce_frames] ticks, with the metrics: `settle_time` (s),
    /// `contract_met` (settled within [member contract_settle] and formed now; in [method
    /// get_metrics] it turns false while bodies are off their slots), `formed`, `arrived`,
    /// `spacing_error` (m, over every neighbouring pair: see [method get_neighbour_pairs]),
    /// `nearest_spacing_error` (m, each slot's nearest neighbour only), `heading_std` (radians),
    /// `max_slot_error` (m), `mean_slot_error` (m), `active`, `command`, and `travel_time` (s: how
    /// long the command's move was planned to take at 85 % of [member max_speed]; a move longer
    /// than the contract's settle time cannot meet it).
    #[signal]
    pub(super) fn settled(metrics: VarDictionary);
    /// Emitted when a formation is taken into use.
    #[signal]
    pub(super) fn formation_changed(name: GString);
    /// Emitted when a formation cannot be used (unknown, unparsable, or it cannot seat the squad);
    /// the previous one stays in use.
    #[signal]
    pub(super) fn formation_rejected(name: GString, reason: GString);
    /// Emitted when an agent's state changes (0 idle, 1 moving, 2 aligning, 3 stabilizing).
    #[signal]
    pub(super) fn agent_state_changed(index: i64, state: i64);
    /// Emitted when a command is refused (duplicate, from a non-server peer, bad arguments).
    #[signal]
    pub(super) fn command_rejected(command: GString, reason: GString);
    /// Emitted on the server when a peer was dropped: it never acknowledged a command, or it
    /// disconnected while owning agents that took part.
    #[signal]
    pub(super) fn peer_dropped(peer_id: i64);
    /// Emitted on a client when a command from the server was applied.
    #[signal]
    pub(super) fn command_received(id: i64, command: GString);
    /// Emitted when the squad's eyes turn right ([method dress]) or back to the front (the next
    /// command).
    #[signal]
    pub(super) fn eyes_changed(right: bool);
    /// Emitted when the squad starts or ends a salute.
    #[signal]
    pub(super) fn salute_changed(saluting: bool);
    /// Emitted when an agent's bearing changes (with [member emit_agent_signals]): bit flags
    /// [constant BEARING_EYES_RIGHT] and [constant BEARING_SALUTING].
    #[signal]
    pub(super) fn agent_bearing_changed(index: i64, bearing: i64);

    /// [method get_agent_bearing] flag: the agent's eyes are right (it has a guide to dress on).
    #[constant]
    const BEARING_EYES_RIGHT: i64 = 1;
    /// [method get_agent_bearing] flag: the agent salutes.
    #[constant]
    const BEARING_SALUTING: i64 = 2;

    // ----- properties -------------------------------------------------------------------------

    /// Sets [member agent_source] (see the property for its range and effect).
    #[func]
    pub(super) fn set_agent_source(&mut self, source: AgentSource) {
        self.agent_source = source;
        self.base_mut().notify_property_list_changed();
        if self.ready {
            self.rebuild_agents(true);
        }
    }

    /// Sets [member internal_agent_count] (see the property for its range and effect).
    #[func]
    pub(super) fn set_internal_agent_count(&mut self, count: i32) {
        let (clamped, message) = int_checked("internal_agent_count", count, 0, MAX_AGENTS as i32);
        let node = self.to_gd();
        self.warnings
            .once_or_clear(&node, warn::AGENT_COUNT, message);
        self.internal_agent_count = clamped;
        if self.ready && self.agent_source == AgentSource::Internal {
            self.rebuild_agents(true);
        }
    }

    /// Sets [member soldier_bearings] (see the property for its range and effect).
    #[func]
    pub(super) fn set_soldier_bearings(&mut self, on: bool) {
        self.soldier_bearings = on;
        self.base_mut().notify_property_list_changed();
        if self.ready {
            self.attach_bearings();
        }
    }

    /// Sets [member formation] (see the property for its range and effect).
    #[func]
    pub(super) fn set_formation(&mut self, name: GString) {
        self.formation = name.clone();
        if self.ready {
            self.form(name);
        }
        self.editor_dirty = true;
    }

    /// Sets [member recording] (see the property for its range and effect).
    #[func]
    pub(super) fn set_recording(&mut self, on: bool) {
        self.recording = on;
        self.base_mut().notify_property_list_changed();
        if self.ready {
            if on {
                self.start_recording();
            } else {
                self.squad.set_recording(0);
                self.replay_frame = None;
            }
        }
    }

    // ----- network (the handlers are in network.rs) --------------------------------------------

    /// Returns the network messages this squad dropped, by reason: `rate_limited`
    /// (acknowledgements beyond 60 per second from one client), `forged` (a command or keyframe
    /// not from the server, or sent to the server), `malformed`, `unexpected`, plus
    /// `peers_disconnected` (peers the server disconnected for abuse, see the project settings
    /// under `entwine/network/`) and `warnings_held_back`.
    #[func]
    pub fn get_dropped_calls(&self) -> VarDictionary {
        crate::inbox::counts_dictionary(&self.inbox.counts())
    }

    /// A command from the server, handled on a client (one byte array): applied once per id
    /// (resends are only acknowledged), aged by its time in flight when a [EntwineNetClock] is
    /// set, then acknowledged.
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _net_command)]
    fn net_command(&mut self, #[opt(default = Message::none())] message: Message) {
        self.receive_command(&message);
    }

    /// A client's acknowledgement, handled on the server (one byte array).
    #[rpc(any_peer, call_remote, reliable)]
    #[func(rename = _net_ack)]
    fn net_ack(&mut self, #[opt(default = Message::none())] message: Message) {
        self.receive_ack(&message);
    }

    /// A state keyframe chunk from the server, handled on a client (see [member keyframe_rate]):
    /// malformed, stale or foreign chunks are dropped and counted.
    #[rpc(any_peer, call_remote, unreliable, channel = 1)]
    #[func(rename = _net_keyframe)]
    fn net_keyframe(&mut self, #[opt(default = Message::none())] message: Message) {
        self.receive_keyframe(&message);
    }
}

impl FormationController {
    pub(super) fn warn_plain(&self, msg: &str) {
        warnings::warn(&self.to_gd(), msg);
    }

    /// Warns once (per formation, point count and agent count) when the current formation is a
    /// custom one with fewer points than the squad has agents: the extra agents stand in ranks
    /// repeated behind the drawn points.
    pub(super) fn warn_custom_overflow(&mut self) {
        if self.in_editor {
            return;
        }
        let agents = self.squad.slot_count();
        let extra = self.squad.formation().extra_agents(agents);
        if extra == 0 {
            return;
        }
        let points = agents - extra;
        let name = &self.current;
        let warned = self
            .custom_overflow_warned
            .as_ref()
            .is_some_and(|(n, p, a)| n == name && *p == points && *a == agents);
        if warned {
            return;
        }
        self.warn_plain(&format!(
            "custom formation '{name}' has {points} points for {agents} agents: the {extra} extra \
             agents stand in ranks behind the drawn points, repeating them (draw {agents} points to \
             place every agent)"
        ));
        self.custom_overflow_warned = Some((name.clone(), points, agents));
    }

    /// Prints `msg` unless warning `kind` (see [`warn`]) was already printed.
    pub(super) fn warn_once(&mut self, kind: u32, msg: &str) {
        let node = self.to_gd();
        self.warnings.once(&node, kind, msg);
    }
}
