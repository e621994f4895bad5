//! Commands: the drill methods build core `Command`s; each is routed (local, or the server sends it
//! to every client), checked, taken into the squad's frame and applied, or refused with a signal.

use entwine_core::formation::command::{self, route, Command, Order, Rejection, Route};
use godot::prelude::*;

use super::FormationController;
use crate::convert::{affine, vec3};
use crate::time::now;

#[godot_api(secondary)]
impl FormationController {
    /// Re-forms the squad into the formation called `name` (a file name without `.ron` from
    /// [member formations_dir], or a name given to [method add_formation]). Returns false (and
    /// keeps the current formation) when it is unknown, cannot seat the squad, or is a duplicate
    /// of the command still settling.
    #[func]
    pub fn form(&mut self, name: GString) -> bool {
        self.command(Command::form(name.to_string()))
    }

    /// Marches the squad along `direction` (global; its vertical part is ignored) at `speed` m/s
    /// until [method halt]. Agents turn in place to face the direction of march.
    #[func]
    pub fn march(&mut self, direction: Vector3, speed: f32) -> bool {
        self.command(Command::march(vec3(direction), speed))
    }

    /// Marches the squad's centre to `target` (global position) at `speed` m/s and halts there.
    #[func]
    pub fn march_to(&mut self, target: Vector3, speed: f32) -> bool {
        self.command(Command::march_to(vec3(target), speed))
    }

    /// Stops marching (the squad brakes at [member march_acceleration]).
    #[func]
    pub fn halt(&mut self) -> bool {
        self.command(Command::halt())
    }

    /// Turns every agent in place to face the global yaw `angle` (radians, like `rotation.y`).
    #[func]
    pub fn face(&mut self, angle: f32) -> bool {
        self.command(Command::face(angle))
    }

    /// Re-fits the formation to where the squad stands (baseline by weighted PCA and weighted
    /// median), closes gaps left by dropped agents and re-forms: drill's "dress".
    #[func]
    pub fn dress(&mut self) -> bool {
        self.command(Command::dress())
    }

    /// Every agent salutes: soldiers with a skeleton raise the right hand to the brow through their
    /// [EntwineSoldierBearing]'s [EntwineLimbIK]. Lasts until [method end_salute], or [member salute_duration]
    /// seconds when that is above 0. Positions, headings and the settle clock are untouched.
    #[func]
    pub fn salute(&mut self) -> bool {
        let seconds = self.salute_seconds();
        self.command(Command::salute(seconds))
    }

    /// Ends the salute: hands down (blended over the bearing's `salute_time`).
    #[func]
    pub fn end_salute(&mut self) -> bool {
        self.command(Command::end_salute())
    }
}

impl FormationController {
    /// Routes a command: local, or (networked) from the server to every client.
    pub(super) fn command(&mut self, cmd: Command) -> bool {
        let mp = self.base().get_multiplayer();
        let is_server = mp.as_ref().is_some_and(|mp| mp.is_server());
        match route(self.networked, self.is_online(), is_server) {
            Route::Local => self.apply(cmd),
            Route::Refuse => {
                self.refuse(cmd.kind.name(), &Rejection::IssuedByClient);
                false
            }
            Route::Broadcast => {
                if !self.apply(cmd.clone()) {
                    return false;
                }
                let stamp = self.server_time().unwrap_or(-1.0);
                let id = self.commands.issue(cmd, stamp);
                let Some(sent) = self.commands.sent(id).cloned() else {
                    return true;
                };
                let Some(mp) = mp else {
                    return true;
                };
                for peer in mp.get_peers().as_slice() {
                    if self.commands.is_dropped(*peer) {
                        continue;
                    }
                    self.send_command(*peer, &sent);
                    self.commands.sent_to(id, *peer, now());
                }
                true
            }
        }
    }

    /// Applies a command locally. Returns false when rejected.
    pub(super) fn apply(&mut self, cmd: Command) -> bool {
        let settling = self.squad.metrics().settle_time < 0.0;
        if let Err(r) = self.commands.admit(&cmd, settling) {
            self.refuse(cmd.kind.name(), &r);
            return false;
        }
        let frame = node_frame(&self.to_gd().upcast());
        let ok = match cmd.localize(&frame) {
            Err(r) => {
                self.refuse(cmd.kind.name(), &r);
                false
            }
            Ok(Order::Form(name)) => self.apply_form(name),
            Ok(order) => order.apply(&mut self.squad),
        };
        if ok {
            self.commands.applied(&cmd);
            if !cmd.kind.bearing_only() {
                self.sync_live();
            }
            self.emit_bearing_signals();
        }
        ok
    }

    /// Reports a refused command: a warning (none for a duplicate) and [signal command_rejected].
    pub(super) fn refuse(&mut self, name: &str, why: &Rejection) {
        if let Some(w) = why.warning(name) {
            self.warn_plain(&w);
        }
        let reason = why.to_string();
        self.signals().command_rejected().emit(name, &reason);
    }
}

/// The node's frame for [`Command::localize`]: the parent frame is global. A node not yet in the
/// tree has no global frame (the engine errors on reading one): its own transform stands in.
fn node_frame(node: &Gd<Node3D>) -> command::PlacedFrame {
    if node.is_inside_tree() {
        command::PlacedFrame::new(
            affine(node.get_global_transform()),
            node.get_global_rotation().y,
        )
    } else {
        command::PlacedFrame::new(affine(node.get_transform()), node.get_rotation().y)
    }
}
