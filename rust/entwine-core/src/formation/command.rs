//! The squad's command model: what a command is on the wire and in the squad's own frame, which
//! commands are refused and why, and the networked bookkeeping around them.
//!
//! A [`Command`] is what a caller asks for, in the frame of the controller's parent (global, for
//! a node): its [`Kind`], a formation name, a vector and a scalar — exactly what goes on the
//! wire. [`Command::localize`] validates it and turns it into an [`Order`] in the squad's local
//! ground plane through a [`Frame`] the caller supplies; [`Order::apply`] steers the [`Squad`].
//!
//! A [`CommandLog`] holds the rest: the last applied command (a repeat of it while the squad is
//! still settling is a [`Rejection::Duplicate`]), [`route`] (local, or the server sends to every
//! client, or refused on a client), the server's numbering with a ring of the last
//! [`RESEND_RING`] commands for resends, the [`AckTracker`] and the clients' [`SeenIds`].

use std::collections::VecDeque;
use std::fmt;

use glam::{Vec2, Vec3};

use super::net::{AckAction, AckTracker, SeenIds};
use super::Squad;
use crate::kit::{ByteReader, ByteWriter, ShortBuffer};

/// Commands the server keeps for resending (the oldest is forgotten first).
pub const RESEND_RING: usize = 64;

/// What a command does. The discriminant is its integer on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Re-form into the named formation.
    Form = 0,
    /// March along a direction at a speed until halted.
    March = 1,
    /// March the squad's centre to a point at a speed, then halt.
    MarchTo = 2,
    /// Stop marching.
    Halt = 3,
    /// Turn every agent in place to a yaw.
    Face = 4,
    /// Re-fit the formation to where the squad stands and re-form (eyes right).
    Dress = 5,
    /// Start a salute (for a number of seconds, 0 = until ended).
    Salute = 6,
    /// End the salute.
    EndSalute = 7,
}

impl Kind {
    /// Every kind, in wire order (`ALL[k as usize] == k`).
    pub const ALL: [Self; 8] = [
        Self::Form,
        Self::March,
        Self::MarchTo,
        Self::Halt,
        Self::Face,
        Self::Dress,
        Self::Salute,
        Self::EndSalute,
    ];

    /// Returns the kind with wire integer `wire`, or `None` for an unknown one.
    #[must_use]
    pub fn from_wire(wire: i64) -> Option<Self> {
        usize::try_from(wire)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// Returns the integer sent on the wire.
    #[must_use]
    pub fn wire(self) -> i64 {
        self as i64
    }

    /// Returns the command's name, as the node's method is called (`"march_to"`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Form => "form",
            Self::March => "march",
            Self::MarchTo => "march_to",
            Self::Halt => "halt",
            Self::Face => "face",
            Self::Dress => "dress",
            Self::Salute => "salute",
            Self::EndSalute => "end_salute",
        }
    }

    /// Returns whether the command only changes the soldiers' bearing (salute): it never counts
    /// as a duplicate, leaves the settle clock alone and is not remembered as the last command.
    #[must_use]
    pub fn bearing_only(self) -> bool {
        matches!(self, Self::Salute | Self::EndSalute)
    }
}

/// Most bytes of one command message: id (i64), the server's stamp (f64), kind (u8), the
/// formation name (a length byte and up to 255 bytes of UTF-8), vector (3 × f32) and scalar (f32).
pub const MAX_COMMAND_BYTES: usize = 8 + 8 + 1 + 1 + 255 + 12 + 4;
/// Bytes of one acknowledgement: the command's id (i64).
pub const ACK_BYTES: usize = 8;

/// Writes the server's command message (`id`, `stamp`, `command`) into `out` and returns its
/// length, or [`ShortBuffer`] when the formation name is longer than 255 bytes.
pub fn encode_message(
    id: i64,
    stamp: f64,
    command: &Command,
    out: &mut [u8; MAX_COMMAND_BYTES],
) -> Result<usize, ShortBuffer> {
    let mut w = ByteWriter::new(out);
    w.put_i64(id)?;
    w.put_f64(stamp)?;
    w.put_u8(command.kind as u8)?;
    w.put_short_str(&command.name)?;
    for v in command.vector.to_array() {
        w.put_f32(v)?;
    }
    w.put_f32(command.scalar)?;
    Ok(w.written().len())
}

/// Reads a command message: `(id, stamp, command)`, or `None` when the bytes are not exactly one
/// message of a known kind.
#[must_use]
pub fn decode_message(bytes: &[u8]) -> Option<(i64, f64, Command)> {
    let mut r = ByteReader::new(bytes);
    let id = r.get_i64().ok()?;
    let stamp = r.get_f64().ok()?;
    let kind = Kind::from_wire(i64::from(r.get_u8().ok()?))?;
    let name = r.get_short_str().ok()?.to_owned();
    let vector = Vec3::new(r.get_f32().ok()?, r.get_f32().ok()?, r.get_f32().ok()?);
    let scalar = r.get_f32().ok()?;
    (r.remaining() == 0).then(|| (id, stamp, Command::new(kind, name, vector, scalar)))
}

/// Reads an acknowledgement: the command's id, or `None` for any other length.
#[must_use]
pub fn decode_ack(bytes: &[u8]) -> Option<i64> {
    ByteReader::new(bytes)
        .get_i64()
        .ok()
        .filter(|_| bytes.len() == ACK_BYTES)
}

/// Returns the name of the command with wire integer `wire`, or `"unknown"`.
#[must_use]
pub fn wire_name(wire: i64) -> &'static str {
    Kind::from_wire(wire).map_or("unknown", Kind::name)
}

/// A command as asked for and as sent: kind, formation name, vector and scalar, in the frame of
/// the controller's parent. Two commands are equal when every field is (a NaN never is).
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// What it does.
    pub kind: Kind,
    /// [`Kind::Form`]: the formation's name; empty otherwise.
    pub name: String,
    /// [`Kind::March`]: the direction; [`Kind::MarchTo`]: the target point; zero otherwise.
    pub vector: Vec3,
    /// The speed (m/s) of a march, the yaw (rad) to face, or a salute's duration (s); else 0.
    pub scalar: f32,
}

impl Command {
    fn new(kind: Kind, name: String, vector: Vec3, scalar: f32) -> Self {
        Self {
            kind,
            name,
            vector,
            scalar,
        }
    }

    /// Returns a command to re-form into formation `name`.
    #[must_use]
    pub fn form(name: impl Into<String>) -> Self {
        Self::new(Kind::Form, name.into(), Vec3::ZERO, 0.0)
    }

    /// Returns a command to march along `direction` (its vertical part is ignored) at `speed`.
    #[must_use]
    pub fn march(direction: Vec3, speed: f32) -> Self {
        Self::new(Kind::March, String::new(), direction, speed)
    }

    /// Returns a command to march the squad's centre to `target` at `speed` and halt there.
    #[must_use]
    pub fn march_to(target: Vec3, speed: f32) -> Self {
        Self::new(Kind::MarchTo, String::new(), target, speed)
    }

    /// Returns a command to stop marching.
    #[must_use]
    pub fn halt() -> Self {
        Self::new(Kind::Halt, String::new(), Vec3::ZERO, 0.0)
    }

    /// Returns a command to turn every agent in place to face yaw `angle` (radians).
    #[must_use]
    pub fn face(angle: f32) -> Self {
        Self::new(Kind::Face, String::new(), Vec3::ZERO, angle)
    }

    /// Returns a command to dress the squad.
    #[must_use]
    pub fn dress() -> Self {
        Self::new(Kind::Dress, String::new(), Vec3::ZERO, 0.0)
    }

    /// Returns a command to salute for `seconds` (0: until [`Command::end_salute`]).
    #[must_use]
    pub fn salute(seconds: f32) -> Self {
        Self::new(Kind::Salute, String::new(), Vec3::ZERO, seconds)
    }

    /// Returns a command to end the salute.
    #[must_use]
    pub fn end_salute() -> Self {
        Self::new(Kind::EndSalute, String::new(), Vec3::ZERO, 0.0)
    }

    /// Returns the command with wire fields `(kind, name, vector, scalar)`, or `None` for an
    /// unknown kind.
    #[must_use]
    pub fn from_wire(kind: i64, name: String, vector: Vec3, scalar: f32) -> Option<Self> {
        Some(Self::new(Kind::from_wire(kind)?, name, vector, scalar))
    }

    /// Returns the order this command gives the squad, its vector and yaw taken into the squad's
    /// frame through `frame`; or why it is refused (a march with a non-finite vector or a
    /// negative or non-finite speed, a march direction with no horizontal part, a non-finite
    /// yaw). A salute with a non-finite duration salutes until ended.
    pub fn localize(&self, frame: &impl Frame) -> Result<Order<'_>, Rejection> {
        let (v, s) = (self.vector, self.scalar);
        Ok(match self.kind {
            Kind::Form => Order::Form(&self.name),
            Kind::March | Kind::MarchTo => {
                if !v.is_finite() || !s.is_finite() || s < 0.0 {
                    return Err(Rejection::BadMotion {
                        vector: v,
                        speed: s,
                    });
                }
                if self.kind == Kind::March {
                    let d = ground(frame.direction_to_local(v));
                    if d.length_squared() < 1e-12 {
                        return Err(Rejection::NoHorizontalPart);
                    }
                    Order::March {
                        direction: d,
                        speed: s,
                    }
                } else {
                    Order::MarchTo {
                        target: ground(frame.point_to_local(v)),
                        speed: s,
                    }
                }
            }
            Kind::Halt => Order::Halt,
            Kind::Face => {
                if !s.is_finite() {
                    return Err(Rejection::AngleNotFinite);
                }
                Order::Face {
                    yaw: s - frame.yaw(),
                }
            }
            Kind::Dress => Order::Dress,
            Kind::Salute => Order::Salute {
                seconds: if s.is_finite() { s } else { 0.0 },
            },
            Kind::EndSalute => Order::EndSalute,
        })
    }
}

/// Returns the ground-plane point of a local 3D vector: `(x, z)`.
#[inline]
#[must_use]
pub fn ground(v: Vec3) -> Vec2 {
    Vec2::new(v.x, v.z)
}

/// The controller's frame, as the caller (the node) knows it.
pub trait Frame {
    /// Returns direction `v` (parent frame) in the squad's local frame.
    fn direction_to_local(&self, v: Vec3) -> Vec3;
    /// Returns point `p` (parent frame) in the squad's local frame.
    fn point_to_local(&self, p: Vec3) -> Vec3;
    /// Returns the squad frame's yaw in the parent frame, radians.
    fn yaw(&self) -> f32;
}

/// The frame of a node placed by its global transform `to_parent` (any scale), for
/// [`Command::localize`]: directions and points are taken into it by
/// [`crate::kit::affine_inverse`], so a node (or a parent) scaled to zero maps them by its
/// rotation alone instead of failing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedFrame {
    to_local: glam::Affine3A,
    yaw: f32,
}

impl PlacedFrame {
    /// Returns the frame of the global transform `to_parent`, whose yaw in the parent frame is
    /// `yaw` (radians; a non-finite yaw counts as 0).
    #[must_use]
    pub fn new(to_parent: glam::Affine3A, yaw: f32) -> Self {
        Self {
            to_local: crate::kit::affine_inverse(to_parent),
            yaw: if yaw.is_finite() { yaw } else { 0.0 },
        }
    }
}

impl Frame for PlacedFrame {
    fn direction_to_local(&self, v: Vec3) -> Vec3 {
        self.to_local.transform_vector3(v)
    }
    fn point_to_local(&self, p: Vec3) -> Vec3 {
        self.to_local.transform_point3(p)
    }
    fn yaw(&self) -> f32 {
        self.yaw
    }
}

/// A command in the squad's own frame, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order<'a> {
    /// Re-form into the named formation (the caller looks it up: see [`Squad::form`]).
    Form(&'a str),
    /// March along a local ground direction (non-zero) at `speed` m/s (≥ 0).
    March {
        /// Local ground direction.
        direction: Vec2,
        /// m/s.
        speed: f32,
    },
    /// March the centre to a local ground point at `speed` m/s (≥ 0).
    MarchTo {
        /// Local ground point.
        target: Vec2,
        /// m/s.
        speed: f32,
    },
    /// Stop marching.
    Halt,
    /// Face local yaw `yaw` (radians).
    Face {
        /// Local yaw, radians.
        yaw: f32,
    },
    /// Dress.
    Dress,
    /// Salute for `seconds` (0: until ended).
    Salute {
        /// Seconds.
        seconds: f32,
    },
    /// End the salute.
    EndSalute,
}

impl Order<'_> {
    /// Steers `squad` by this order. Returns false for [`Order::Form`], which the caller applies
    /// with the formation it looks up by name.
    pub fn apply(self, squad: &mut Squad) -> bool {
        match self {
            Order::Form(_) => return false,
            Order::March { direction, speed } => squad.march(direction, speed),
            Order::MarchTo { target, speed } => squad.march_to(target, speed),
            Order::Halt => squad.halt(),
            Order::Face { yaw } => squad.face(yaw),
            Order::Dress => squad.dress(),
            Order::Salute { seconds } => squad.salute(seconds),
            Order::EndSalute => squad.end_salute(),
        }
        true
    }
}

/// Why a command was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rejection {
    /// The same command as the last one, while the squad is still settling from it.
    Duplicate,
    /// A client tried to issue a command while networked.
    IssuedByClient,
    /// A command arrived from a peer that is not the server.
    FromNonServer {
        /// The command's id.
        id: i64,
        /// The peer that sent it.
        sender: i32,
    },
    /// A march with a non-finite vector or a negative or non-finite speed.
    BadMotion {
        /// The direction or target given.
        vector: Vec3,
        /// The speed given.
        speed: f32,
    },
    /// A march direction with no horizontal part.
    NoHorizontalPart,
    /// A face with a non-finite angle.
    AngleNotFinite,
    /// A command with an unknown kind arrived.
    UnknownKind(i64),
}

impl Rejection {
    /// Returns the warning to print for command `name` refused for this reason, or `None` for a
    /// duplicate (refusing it is the expected outcome, reported by signal only).
    #[must_use]
    pub fn warning(&self, name: &str) -> Option<String> {
        match self {
            Self::Duplicate => None,
            Self::FromNonServer { .. } => Some(format!("{self}; rejected")),
            Self::IssuedByClient => Some(format!("{name}: {self}; rejected")),
            _ => Some(format!("{name}: {self}; ignored")),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate => f.write_str("duplicate of the command still settling"),
            Self::IssuedByClient => f.write_str("only the server issues commands when networked"),
            Self::FromNonServer { id, sender } => {
                write!(f, "command {id} from peer {sender}, who is not the server")
            }
            Self::BadMotion { vector: v, speed } => write!(
                f,
                "direction/target must be finite and speed ≥ 0 (got ({}, {}, {}), {speed})",
                v.x, v.y, v.z
            ),
            Self::NoHorizontalPart => f.write_str("direction has no horizontal part"),
            Self::AngleNotFinite => f.write_str("angle must be finite"),
            Self::UnknownKind(k) => write!(f, "unknown command kind {k}"),
        }
    }
}

/// Where a command goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Applied here only (not networked, or not connected).
    Local,
    /// Applied here, then sent to every client (the server, networked and connected).
    Broadcast,
    /// Refused: a connected client does not issue commands.
    Refuse,
}

/// Returns where a command issued here goes: `networked` and `online` say whether the node
/// sends commands and is connected, `is_server` whether it is the server.
#[must_use]
pub fn route(networked: bool, online: bool, is_server: bool) -> Route {
    match (networked && online, is_server) {
        (false, _) => Route::Local,
        (true, true) => Route::Broadcast,
        (true, false) => Route::Refuse,
    }
}

/// Returns how long (s) a command stamped at server time `stamp` has been in flight at server
/// time `now`, within 0..=1 s; 0 without a shared clock (`now` is `None`) or without a stamp
/// (negative).
#[must_use]
pub fn flight_age(now: Option<f64>, stamp: f64) -> f32 {
    match now {
        Some(now) if stamp >= 0.0 => (now - stamp).clamp(0.0, 1.0) as f32,
        _ => 0.0,
    }
}

/// A command the server sent: its id, its server-time stamp (−1 without a shared clock) and the
/// command.
#[derive(Clone, Debug, PartialEq)]
pub struct Sent {
    /// Command id (from 1).
    pub id: u32,
    /// Server time it was stamped with, s (−1: no shared clock).
    pub stamp: f64,
    /// The command.
    pub command: Command,
}

/// What [`CommandLog::poll`] asks the server to do.
#[derive(Clone, Debug, PartialEq)]
pub enum NetAction {
    /// Send `sent` to `peer` again.
    Resend {
        /// Peer id.
        peer: i32,
        /// The command as first sent (same id and stamp).
        sent: Sent,
    },
    /// `peer` never acknowledged after every resend: drop it from the contract and report it.
    Drop {
        /// Peer id.
        peer: i32,
    },
}

/// A squad's command bookkeeping: duplicate suppression, and (networked) numbering, the resend
/// ring, acknowledgements and the clients' filter of ids already applied.
#[derive(Debug, Default, Clone)]
pub struct CommandLog {
    last: Option<Command>,
    sent: VecDeque<Sent>,
    tracker: AckTracker,
    seen: SeenIds,
}

impl CommandLog {
    /// Returns `Err(Rejection::Duplicate)` when `command` equals the last applied one and the
    /// squad is still `settling` from it. A dress and the bearing-only commands are never
    /// duplicates (dressing again re-fits to where the squad stands now).
    pub fn admit(&self, command: &Command, settling: bool) -> Result<(), Rejection> {
        let exempt = command.kind == Kind::Dress || command.kind.bearing_only();
        if settling && !exempt && self.last.as_ref() == Some(command) {
            Err(Rejection::Duplicate)
        } else {
            Ok(())
        }
    }

    /// Records that `command` was applied (a bearing-only one is not remembered).
    pub fn applied(&mut self, command: &Command) {
        if !command.kind.bearing_only() && self.last.as_ref() != Some(command) {
            self.last = Some(command.clone());
        }
    }

    /// Forgets the last applied command (the squad was rebuilt, or its formation reloaded), so
    /// the next command is never a duplicate.
    pub fn forget_last(&mut self) {
        self.last = None;
    }

    /// Server: numbers `command`, keeps it (with `stamp`) in the resend ring and returns its id.
    /// Record each peer it is sent to with [`CommandLog::sent_to`].
    pub fn issue(&mut self, command: Command, stamp: f64) -> u32 {
        let id = self.tracker.next_id();
        if self.sent.len() >= RESEND_RING {
            self.sent.pop_front();
        }
        self.sent.push_back(Sent { id, stamp, command });
        id
    }

    /// Server: returns whether `peer` was dropped for never acknowledging (send it nothing).
    #[must_use]
    pub fn is_dropped(&self, peer: i32) -> bool {
        self.tracker.is_dropped(peer)
    }

    /// Server: records that command `id` went to `peer` at local time `now` (s).
    pub fn sent_to(&mut self, id: u32, peer: i32, now: f64) {
        self.tracker.sent(id, peer, now);
    }

    /// Returns the command `id` from the resend ring.
    #[must_use]
    pub fn sent(&self, id: u32) -> Option<&Sent> {
        self.sent.iter().find(|s| s.id == id)
    }

    /// Server: records `peer`'s acknowledgement of `id`. Returns false for one nobody waited for.
    pub fn ack(&mut self, id: i64, peer: i32) -> bool {
        self.tracker.ack(u32::try_from(id).unwrap_or(0), peer)
    }

    /// Server: returns the next due resend or drop at local time `now` (s), or `None`; call until
    /// `None` each frame. A resend of a command no longer in the ring is skipped.
    pub fn poll(&mut self, now: f64) -> Option<NetAction> {
        loop {
            match self.tracker.poll(now)? {
                AckAction::Drop { peer } => return Some(NetAction::Drop { peer }),
                AckAction::Resend { peer, id } => {
                    if let Some(sent) = self.sent(id) {
                        let sent = sent.clone();
                        return Some(NetAction::Resend { peer, sent });
                    }
                }
            }
        }
    }

    /// Client: checks command `id` from `sender`. Returns `Ok(true)` the first time the id is
    /// seen (apply it), `Ok(false)` for a resend (acknowledge it only), or
    /// [`Rejection::FromNonServer`] when the sender is not the server (peer 1) or this peer is
    /// the server itself.
    pub fn receive(&mut self, id: i64, sender: i32, is_server: bool) -> Result<bool, Rejection> {
        if sender != 1 || is_server {
            return Err(Rejection::FromNonServer { id, sender });
        }
        Ok(self.seen.first_time(u32::try_from(id).unwrap_or(0)))
    }

    /// Server: forgets `peer` (it disconnected): what it owed and that it was dropped.
    pub fn forget_peer(&mut self, peer: i32) {
        self.tracker.forget(peer);
    }

    /// Server: forgets every peer for which `connected` is false.
    pub fn retain_connected(&mut self, connected: impl FnMut(i32) -> bool) {
        self.tracker.retain_connected(connected);
    }

    /// Returns whether any peer owes an acknowledgement or is remembered as dropped.
    #[must_use]
    pub fn tracks_peers(&self) -> bool {
        self.tracker.pending() > 0 || self.tracker.dropped_count() > 0
    }

    /// Returns how many acknowledgements the server still waits for.
    #[must_use]
    pub fn pending_acks(&self) -> usize {
        self.tracker.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::net::{MAX_RESENDS, RESEND_AFTER};
    use crate::formation::SquadConfig;

    /// A frame turned by `yaw` about +Y and moved by `origin`, like a node's global transform.
    struct Turned {
        yaw: f32,
        origin: Vec3,
    }

    impl Frame for Turned {
        fn direction_to_local(&self, v: Vec3) -> Vec3 {
            glam::Quat::from_rotation_y(-self.yaw) * v
        }
        fn point_to_local(&self, p: Vec3) -> Vec3 {
            self.direction_to_local(p - self.origin)
        }
        fn yaw(&self) -> f32 {
            self.yaw
        }
    }

    const IDENTITY: Turned = Turned {
        yaw: 0.0,
        origin: Vec3::ZERO,
    };

    #[test]
    fn kinds_round_trip_through_the_wire_and_unknown_ones_are_refused() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_wire(k.wire()), Some(k));
        }
        assert_eq!(Kind::from_wire(8), None);
        assert_eq!(Kind::from_wire(-1), None);
        assert_eq!(wire_name(2), "march_to");
        assert_eq!(wire_name(99), "unknown");
        assert!(Command::from_wire(42, String::new(), Vec3::ZERO, 0.0).is_none());
        let c = Command::from_wire(1, String::new(), Vec3::X, 2.0).unwrap();
        assert_eq!(c, Command::march(Vec3::X, 2.0));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        let bad = [
            (Command::march(Vec3::NAN, 1.0), "must be finite"),
            (Command::march(Vec3::X, -1.0), "speed ≥ 0"),
            (Command::march_to(Vec3::X, f32::INFINITY), "speed ≥ 0"),
            (Command::march(Vec3::Y, 1.0), "no horizontal part"),
            (Command::face(f32::INFINITY), "angle must be finite"),
        ];
        for (c, why) in bad {
            let r = c.localize(&IDENTITY).unwrap_err();
            assert!(r.to_string().contains(why), "{c:?}: {r}");
            let w = r.warning(c.kind.name()).unwrap();
            assert!(
                w.starts_with(c.kind.name()) && w.ends_with("; ignored"),
                "{w}"
            );
        }
        let cmd = Command::salute(f32::NAN);
        let salute = cmd.localize(&IDENTITY).unwrap();
        assert_eq!(salute, Order::Salute { seconds: 0.0 });
    }

    #[test]
    fn orders_are_in_the_squad_frame_on_the_ground_plane() {
        let frame = Turned {
            yaw: std::f32::consts::FRAC_PI_2,
            origin: Vec3::new(10.0, 5.0, 0.0),
        };
        // Turned 90° about +Y: the parent's −X is the squad's −Z, i.e. (0, −1) on the ground.
        let Order::March { direction, speed } = Command::march(Vec3::new(-1.0, 3.0, 0.0), 2.0)
            .localize(&frame)
            .unwrap()
        else {
            panic!("a march gives a march order");
        };
        assert!(
            (direction - Vec2::new(0.0, -1.0)).length() < 1e-6,
            "{direction}"
        );
        assert_eq!(speed, 2.0);
        let Order::MarchTo { target, .. } = Command::march_to(Vec3::new(10.0, 0.0, -4.0), 1.0)
            .localize(&frame)
            .unwrap()
        else {
            panic!("a march_to gives a march_to order");
        };
        assert!((target - Vec2::new(4.0, 0.0)).length() < 1e-5, "{target}");
        let cmd = Command::face(1.0);
        let face = cmd.localize(&frame).unwrap();
        assert_eq!(
            face,
            Order::Face {
                yaw: 1.0 - std::f32::consts::FRAC_PI_2
            }
        );
        assert_eq!(
            Command::form("wedge").localize(&frame).unwrap(),
            Order::Form("wedge")
        );
    }

    #[test]
    fn orders_steer_the_squad() {
        let mut squad = Squad::new(4, true, SquadConfig::default());
        let cmd = Command::salute(0.0);
        let order = cmd.localize(&IDENTITY).unwrap();
        assert!(order.apply(&mut squad));
        assert!(squad.is_saluting());
        assert!(Order::EndSalute.apply(&mut squad));
        assert!(!squad.is_saluting());
        assert!(!Order::Form("line").apply(&mut squad), "the caller forms");
    }

    #[test]
    fn a_repeat_while_settling_is_a_duplicate_except_dress_and_salutes() {
        let mut log = CommandLog::default();
        let column = Command::form("column");
        assert_eq!(log.admit(&column, true), Ok(()));
        log.applied(&column);
        assert_eq!(log.admit(&column, true), Err(Rejection::Duplicate));
        assert_eq!(Rejection::Duplicate.warning("form"), None, "signal only");
        assert_eq!(log.admit(&column, false), Ok(()), "settled: accepted again");
        assert_eq!(log.admit(&Command::form("line"), true), Ok(()));
        // NaN arguments never equal anything, so they reach validation.
        let nan = Command::face(f32::NAN);
        log.applied(&nan);
        assert_eq!(log.admit(&nan, true), Ok(()));
        for exempt in [
            Command::dress(),
            Command::salute(0.0),
            Command::end_salute(),
        ] {
            log.applied(&exempt);
            assert_eq!(log.admit(&exempt, true), Ok(()), "{exempt:?}");
        }
        // A salute is not remembered: the dress before it still is.
        assert_eq!(log.last, Some(Command::dress()));
        log.forget_last();
        assert_eq!(log.admit(&Command::dress(), true), Ok(()));
        assert_eq!(log.last, None);
    }

    #[test]
    fn routing_sends_from_the_server_and_refuses_client_commands() {
        assert_eq!(route(false, true, false), Route::Local);
        assert_eq!(route(true, false, false), Route::Local, "offline: local");
        assert_eq!(route(true, true, true), Route::Broadcast);
        assert_eq!(route(true, true, false), Route::Refuse);
        let w = Rejection::IssuedByClient.warning("halt").unwrap();
        assert_eq!(
            w,
            "halt: only the server issues commands when networked; rejected"
        );
    }

    #[test]
    fn clients_apply_each_id_once_and_only_from_the_server() {
        let mut log = CommandLog::default();
        assert_eq!(log.receive(5, 1, false), Ok(true));
        assert_eq!(
            log.receive(5, 1, false),
            Ok(false),
            "a resend is not re-applied"
        );
        assert_eq!(log.receive(6, 1, false), Ok(true));
        let forged = log.receive(7, 3, false).unwrap_err();
        assert_eq!(
            forged.warning("form").unwrap(),
            "command 7 from peer 3, who is not the server; rejected"
        );
        assert!(
            log.receive(8, 1, true).is_err(),
            "the server takes no commands"
        );
    }

    #[test]
    fn the_server_resends_from_its_ring_then_drops_a_silent_peer() {
        let mut log = CommandLog::default();
        let id = log.issue(Command::halt(), 12.5);
        assert_eq!(id, 1);
        log.sent_to(id, 2, 0.0);
        log.sent_to(id, 3, 0.0);
        assert!(log.ack(1, 3));
        assert!(!log.ack(1, 3), "a second ack is unexpected");
        assert_eq!(log.pending_acks(), 1);
        assert_eq!(log.poll(RESEND_AFTER * 0.5), None);
        let mut now = 0.0;
        for _ in 0..MAX_RESENDS {
            now += RESEND_AFTER * 1.5;
            let expected = NetAction::Resend {
                peer: 2,
                sent: Sent {
                    id: 1,
                    stamp: 12.5,
                    command: Command::halt(),
                },
            };
            assert_eq!(log.poll(now), Some(expected));
            assert_eq!(log.poll(now), None);
        }
        now += RESEND_AFTER * 1.5;
        assert_eq!(log.poll(now), Some(NetAction::Drop { peer: 2 }));
        assert!(log.is_dropped(2));
        assert!(log.tracks_peers());
        log.retain_connected(|p| p != 2);
        assert!(!log.is_dropped(2) && !log.tracks_peers());
    }

    #[test]
    fn the_resend_ring_keeps_the_last_commands_only() {
        let mut log = CommandLog::default();
        for k in 0..RESEND_RING + 6 {
            log.issue(Command::face(k as f32), -1.0);
        }
        assert!(log.sent(1).is_none() && log.sent(6).is_none());
        assert_eq!(log.sent(7).map(|s| s.command.scalar), Some(6.0));
        let last = (RESEND_RING + 6) as u32;
        assert!(log.sent(last).is_some());
        // A resend of a command that left the ring is skipped; the peer is still dropped later.
        log.sent_to(1, 4, 0.0);
        let mut actions = Vec::new();
        let mut now = 0.0;
        for _ in 0..=MAX_RESENDS {
            now += RESEND_AFTER * 1.5;
            while let Some(a) = log.poll(now) {
                actions.push(a);
            }
        }
        assert_eq!(actions, vec![NetAction::Drop { peer: 4 }]);
    }

    #[test]
    fn time_in_flight_is_clamped_and_needs_a_clock() {
        assert_eq!(flight_age(Some(10.25), 10.0), 0.25);
        assert_eq!(flight_age(Some(20.0), 10.0), 1.0);
        assert_eq!(flight_age(Some(9.0), 10.0), 0.0);
        assert_eq!(flight_age(None, 10.0), 0.0);
        assert_eq!(flight_age(Some(10.0), -1.0), 0.0);
    }

    #[test]
    fn a_command_message_reads_back_and_nothing_else_does() {
        let commands = [
            Command::form("wedge"),
            Command::march(Vec3::new(1.0, 0.0, -2.0), 1.5),
            Command::march_to(Vec3::new(-4.0, 0.5, 9.0), 3.0),
            Command::face(-1.25),
            Command::salute(2.0),
            Command::form("é".repeat(127)),
        ];
        let mut buf = [0u8; MAX_COMMAND_BYTES];
        for (i, c) in commands.iter().enumerate() {
            let n = encode_message(i as i64 + 40, 12.5, c, &mut buf).unwrap();
            assert_eq!(
                decode_message(&buf[..n]),
                Some((i as i64 + 40, 12.5, c.clone()))
            );
            assert_eq!(decode_message(&buf[..n - 1]), None, "one byte short");
            let mut longer = buf[..n].to_vec();
            longer.push(0);
            assert_eq!(decode_message(&longer), None, "one byte too many");
            let mut bad = buf[..n].to_vec();
            bad[16] = 8;
            assert_eq!(decode_message(&bad), None, "an unknown kind");
        }
        let too_long = Command::form("x".repeat(256));
        assert_eq!(
            encode_message(1, 0.0, &too_long, &mut buf),
            Err(ShortBuffer)
        );
        assert_eq!(decode_message(&[]), None);
        assert_eq!(decode_ack(&7i64.to_le_bytes()), Some(7));
        assert_eq!(decode_ack(&[0; 9]), None);
        assert_eq!(decode_ack(&[0; 7]), None);
    }
}
