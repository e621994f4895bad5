//! Squad state keyframes: what the network authority sends (a few times a second) so that every
//! peer's copy of the squad converges on its own — late joiners that missed the commands, and
//! clients that lost packets.
//!
//! A keyframe is one or more *chunks*, each a self-contained datagram covering the agents
//! `first .. first + count` of a squad of `total`; every chunk repeats the keyframe's sequence
//! number, server time, formation name and anchor, so a lost chunk only delays its own agents.
//!
//! # Wire format (version 1, little endian)
//!
//! | field | bytes | meaning |
//! |---|---|---|
//! | kind | 1 | [`KEYFRAME_KIND`] |
//! | seq | 2 | keyframe number (wraps) |
//! | server time | 8 | f64 seconds on the shared clock when the state was taken |
//! | total, first, count | varint each | squad size and the agents in this chunk (`count` ≤ [`MAX_CHUNK_AGENTS`]) |
//! | anchor | 8 + 4 + 4 + 8 + 8 | position (x, z), layout yaw, facing yaw, velocity, desired velocity: f32 |
//! | transition | 4 + 4 | the current command's transition length and time since the command, s: f32 |
//! | goal | 1 (+ 12) | 0, or 1 then the march goal (x, z) and speed: f32 |
//! | name | 1 + len | the formation's name, UTF-8, at most [`MAX_NAME`] bytes |
//! | agents | per agent | varint slot + 1 (0: not taking part, nothing follows); then zigzag varints of x and z in millimetres and of the heading in 1/65536 turns, each as a difference from the previous agent in the chunk that takes part (the first from the anchor and 0) |
//!
//! Positions are quantised to 1 mm and headings to 0.0055°; agents standing in formation differ
//! from their neighbour by about one spacing and not at all in heading, so an agent costs about
//! 5–7 bytes. The decoder accepts any bytes: anything malformed is a [`KeyframeError`], never a
//! panic.

use core::f32::consts::TAU;
use core::fmt;

use glam::Vec2;

use super::shape::MAX_AGENTS;

/// First byte of a keyframe chunk (also its format version).
pub const KEYFRAME_KIND: u8 = 0xF1;
/// Most agents in one chunk: keeps a chunk of agents spread over a kilometre under ~1,400 bytes.
pub const MAX_CHUNK_AGENTS: usize = 96;
/// Most bytes of one chunk (the largest a chunk can be, with room to spare): a receiver drops
/// anything longer unread.
pub const MAX_CHUNK_BYTES: usize = 4096;
/// Longest formation name carried, bytes.
pub const MAX_NAME: usize = 64;
/// Largest coordinate a keyframe carries, m (anchor and agents; beyond it a chunk is refused).
pub const MAX_COORD: f32 = 1.0e6;

const MM: f32 = 1000.0;
const HEADING_STEPS: f32 = 65536.0;

/// One agent's state in a keyframe.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KeyAgent {
    /// The slot it holds, or `None` when it does not take part (then `pos` and `heading` are 0).
    pub slot: Option<u32>,
    /// Position (x, z), m.
    pub pos: Vec2,
    /// Heading (yaw), rad, in (−π, π].
    pub heading: f32,
}

/// Everything in a chunk but its agents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyframeHeader {
    /// Keyframe number (wraps past `u16::MAX`).
    pub seq: u16,
    /// Shared-clock time (s) at which the state was taken.
    pub server_time: f64,
    /// Agents in the squad.
    pub total: u32,
    /// Index of the chunk's first agent.
    pub first: u32,
    /// Agents in the chunk.
    pub count: u32,
    /// Anchor position (x, z), m.
    pub anchor_pos: Vec2,
    /// Layout yaw, rad.
    pub layout_yaw: f32,
    /// Facing yaw, rad.
    pub facing_yaw: f32,
    /// Anchor velocity, m/s.
    pub anchor_vel: Vec2,
    /// Velocity the anchor accelerates toward, m/s.
    pub desired_vel: Vec2,
    /// March goal, if marching to a point.
    pub goal: Option<Vec2>,
    /// Marching speed toward `goal`, m/s.
    pub goal_speed: f32,
    /// Length of the current command's transition, s.
    pub transition: f32,
    /// Seconds since the current command.
    pub since_command: f32,
    /// The formation's name (at most [`MAX_NAME`] bytes).
    pub formation: String,
}

/// Why a chunk could not be encoded or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyframeError {
    /// The bytes end before the chunk does.
    Short,
    /// The first byte is not [`KEYFRAME_KIND`].
    Kind(u8),
    /// A varint is longer than 5 bytes or overflows 32 bits.
    Varint,
    /// `total` beyond [`MAX_AGENTS`], `count` beyond [`MAX_CHUNK_AGENTS`] or past `total`.
    Count,
    /// A non-finite number, or a coordinate beyond [`MAX_COORD`].
    Value,
    /// A name longer than [`MAX_NAME`] or not UTF-8.
    Name,
    /// A slot index not below `total`.
    Slot,
    /// Bytes left over after the last agent.
    Trailing,
}

impl fmt::Display for KeyframeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Short => write!(f, "truncated"),
            Self::Kind(k) => write!(f, "unknown kind 0x{k:02x}"),
            Self::Varint => write!(f, "overlong varint"),
            Self::Count => write!(f, "agent counts out of range"),
            Self::Value => write!(f, "non-finite or out-of-range value"),
            Self::Name => write!(f, "bad formation name"),
            Self::Slot => write!(f, "slot index out of range"),
            Self::Trailing => write!(f, "trailing bytes"),
        }
    }
}

/// Appends one chunk to `out`: `header` (its `count` is taken from `agents`) and `agents`, which are
/// the squad's agents `header.first ..`.
///
/// # Errors
/// [`KeyframeError::Count`] for more than [`MAX_CHUNK_AGENTS`] agents or a chunk past `total`;
/// [`KeyframeError::Value`] for non-finite values or coordinates beyond [`MAX_COORD`];
/// [`KeyframeError::Name`] for a name over [`MAX_NAME`] bytes; [`KeyframeError::Slot`] for a slot
/// not below `total`. On error `out` is left as it was.
pub fn encode_chunk(
    header: &KeyframeHeader,
    agents: &[KeyAgent],
    out: &mut Vec<u8>,
) -> Result<(), KeyframeError> {
    let start = out.len();
    let res = encode_inner(header, agents, out);
    if res.is_err() {
        out.truncate(start);
    }
    res
}

fn encode_inner(
    h: &KeyframeHeader,
    agents: &[KeyAgent],
    out: &mut Vec<u8>,
) -> Result<(), KeyframeError> {
    let count = agents.len();
    if count > MAX_CHUNK_AGENTS
        || h.total as usize > MAX_AGENTS
        || h.first as usize + count > h.total as usize
    {
        return Err(KeyframeError::Count);
    }
    if h.formation.len() > MAX_NAME {
        return Err(KeyframeError::Name);
    }
    let coords_ok = h.values_in_range() && h.server_time.is_finite();
    if !coords_ok {
        return Err(KeyframeError::Value);
    }
    out.push(KEYFRAME_KIND);
    out.extend_from_slice(&h.seq.to_le_bytes());
    out.extend_from_slice(&h.server_time.to_le_bytes());
    put_varint(out, h.total);
    put_varint(out, h.first);
    put_varint(out, count as u32);
    for x in [
        h.anchor_pos.x,
        h.anchor_pos.y,
        h.layout_yaw,
        h.facing_yaw,
        h.anchor_vel.x,
        h.anchor_vel.y,
        h.desired_vel.x,
        h.desired_vel.y,
        h.transition,
        h.since_command,
    ] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    match h.goal {
        Some(g) => {
            out.push(1);
            for x in [g.x, g.y, h.goal_speed] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        None => out.push(0),
    }
    out.push(h.formation.len() as u8);
    out.extend_from_slice(h.formation.as_bytes());
    let (mut px, mut pz) = quant_pos(h.anchor_pos);
    let mut ph: u16 = 0;
    for a in agents {
        let Some(slot) = a.slot else {
            out.push(0);
            continue;
        };
        if slot >= h.total {
            return Err(KeyframeError::Slot);
        }
        if !in_range(a.pos) || !a.heading.is_finite() {
            return Err(KeyframeError::Value);
        }
        put_varint(out, slot + 1);
        let (x, z) = quant_pos(a.pos);
        let hq = quant_heading(a.heading);
        put_varint(out, zigzag(x - px));
        put_varint(out, zigzag(z - pz));
        put_varint(out, zigzag(i32::from(hq.wrapping_sub(ph) as i16)));
        (px, pz, ph) = (x, z, hq);
    }
    Ok(())
}

/// Decodes one chunk into `header` and `agents` (both cleared and refilled, so their buffers are
/// reused).
///
/// # Errors
/// Any [`KeyframeError`] for malformed bytes; `header` and `agents` then hold no meaning.
pub fn decode_chunk(
    bytes: &[u8],
    header: &mut KeyframeHeader,
    agents: &mut Vec<KeyAgent>,
) -> Result<(), KeyframeError> {
    agents.clear();
    let mut r = Reader { bytes, at: 0 };
    let kind = r.u8()?;
    if kind != KEYFRAME_KIND {
        return Err(KeyframeError::Kind(kind));
    }
    header.seq = u16::from_le_bytes([r.u8()?, r.u8()?]);
    header.server_time = f64::from_le_bytes(r.array::<8>()?);
    header.total = r.varint()?;
    header.first = r.varint()?;
    header.count = r.varint()?;
    if header.total as usize > MAX_AGENTS
        || header.count as usize > MAX_CHUNK_AGENTS
        || header.first as u64 + header.count as u64 > header.total as u64
    {
        return Err(KeyframeError::Count);
    }
    if !header.server_time.is_finite() {
        return Err(KeyframeError::Value);
    }
    decode_motion(&mut r, header)?;
    let ok = header.values_in_range();
    if !ok {
        return Err(KeyframeError::Value);
    }
    let len = r.u8()? as usize;
    if len > MAX_NAME {
        return Err(KeyframeError::Name);
    }
    let name = r.take(len)?;
    let name = core::str::from_utf8(name).map_err(|_| KeyframeError::Name)?;
    header.formation.clear();
    header.formation.push_str(name);
    decode_agents(&mut r, header, agents)?;
    if r.at != bytes.len() {
        return Err(KeyframeError::Trailing);
    }
    Ok(())
}

/// Reads the anchor's pose, velocities, goal and the transition's progress into `header`.
fn decode_motion(r: &mut Reader, header: &mut KeyframeHeader) -> Result<(), KeyframeError> {
    let mut f = [0.0f32; 10];
    for x in &mut f {
        *x = r.f32()?;
    }
    header.anchor_pos = Vec2::new(f[0], f[1]);
    header.layout_yaw = f[2];
    header.facing_yaw = f[3];
    header.anchor_vel = Vec2::new(f[4], f[5]);
    header.desired_vel = Vec2::new(f[6], f[7]);
    header.transition = f[8];
    header.since_command = f[9];
    header.goal = match r.u8()? {
        0 => {
            header.goal_speed = 0.0;
            None
        }
        1 => {
            let g = Vec2::new(r.f32()?, r.f32()?);
            header.goal_speed = r.f32()?;
            Some(g)
        }
        _ => return Err(KeyframeError::Value),
    };
    Ok(())
}

/// Reads each agent's slot, position and heading (each relative to the one before).
fn decode_agents(
    r: &mut Reader,
    header: &KeyframeHeader,
    agents: &mut Vec<KeyAgent>,
) -> Result<(), KeyframeError> {
    let (mut px, mut pz) = quant_pos(header.anchor_pos);
    let mut ph: u16 = 0;
    for _ in 0..header.count {
        let slot = r.varint()?;
        if slot == 0 {
            agents.push(KeyAgent::default());
            continue;
        }
        if slot > header.total {
            return Err(KeyframeError::Slot);
        }
        let x = px
            .checked_add(unzigzag(r.varint()?))
            .ok_or(KeyframeError::Value)?;
        let z = pz
            .checked_add(unzigzag(r.varint()?))
            .ok_or(KeyframeError::Value)?;
        let dh = unzigzag(r.varint()?);
        if !(-32768..=32767).contains(&dh) {
            return Err(KeyframeError::Value);
        }
        let hq = ph.wrapping_add(dh as i16 as u16);
        let pos = Vec2::new(x as f32 / MM, z as f32 / MM);
        if !in_range(pos) {
            return Err(KeyframeError::Value);
        }
        agents.push(KeyAgent {
            slot: Some(slot - 1),
            pos,
            heading: dequant_heading(hq),
        });
        (px, pz, ph) = (x, z, hq);
    }
    Ok(())
}

impl KeyframeHeader {
    /// Returns whether every coordinate, velocity, angle and time of the header (all but the
    /// server time) is finite and within [`MAX_COORD`]: what a key frame may carry.
    fn values_in_range(&self) -> bool {
        [
            self.anchor_pos,
            self.anchor_vel,
            self.desired_vel,
            self.goal.unwrap_or(Vec2::ZERO),
        ]
        .iter()
        .all(|v| in_range(*v))
            && [
                self.layout_yaw,
                self.facing_yaw,
                self.goal_speed,
                self.transition,
                self.since_command,
            ]
            .iter()
            .all(|x| x.is_finite() && x.abs() <= MAX_COORD)
    }
}

fn in_range(v: Vec2) -> bool {
    v.is_finite() && v.x.abs() <= MAX_COORD && v.y.abs() <= MAX_COORD
}

/// Millimetres, as i32 (|v| ≤ 1e9 for coordinates within [`MAX_COORD`]).
fn quant_pos(p: Vec2) -> (i32, i32) {
    let q = |x: f32| (f64::from(x) * f64::from(MM)).round() as i32;
    (q(p.x), q(p.y))
}

fn quant_heading(h: f32) -> u16 {
    let turns = (h / TAU).rem_euclid(1.0);
    ((turns * HEADING_STEPS).round() as u32 & 0xFFFF) as u16
}

fn dequant_heading(q: u16) -> f32 {
    let h = f32::from(q) / HEADING_STEPS * TAU;
    if h > core::f32::consts::PI {
        h - TAU
    } else {
        h
    }
}

fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], KeyframeError> {
        let end = self.at.checked_add(n).ok_or(KeyframeError::Short)?;
        let s = self.bytes.get(self.at..end).ok_or(KeyframeError::Short)?;
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], KeyframeError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, KeyframeError> {
        Ok(self.take(1)?[0])
    }

    fn f32(&mut self) -> Result<f32, KeyframeError> {
        Ok(f32::from_le_bytes(self.array::<4>()?))
    }

    fn varint(&mut self) -> Result<u32, KeyframeError> {
        let mut v: u64 = 0;
        for k in 0..5 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7F) << (7 * k);
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| KeyframeError::Varint);
            }
        }
        Err(KeyframeError::Varint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formation::rng::Rng;

    fn header(total: u32, first: u32, count: u32) -> KeyframeHeader {
        KeyframeHeader {
            seq: 65530,
            server_time: 1234.5678,
            total,
            first,
            count,
            anchor_pos: Vec2::new(12.5, -3.25),
            layout_yaw: 0.7,
            facing_yaw: -2.9,
            anchor_vel: Vec2::new(1.0, 0.5),
            desired_vel: Vec2::new(1.2, 0.0),
            goal: Some(Vec2::new(40.0, -8.0)),
            goal_speed: 1.4,
            transition: 2.5,
            since_command: 0.75,
            formation: "wedge".into(),
        }
    }

    fn agents(rng: &mut Rng, n: usize, total: u32) -> Vec<KeyAgent> {
        (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    KeyAgent::default()
                } else {
                    KeyAgent {
                        slot: Some((i as u32 * 13) % total),
                        pos: Vec2::new(12.5, -3.25) + rng.vec2() * 30.0,
                        heading: rng.signed() * core::f32::consts::PI,
                    }
                }
            })
            .collect()
    }

    #[test]
    fn a_chunk_round_trips_within_a_millimetre_and_a_hundredth_of_a_degree() {
        let mut rng = Rng::new(5);
        let mut buf = Vec::new();
        let (mut h2, mut a2) = (KeyframeHeader::default(), Vec::new());
        for n in [0, 1, 2, 37, MAX_CHUNK_AGENTS] {
            let a = agents(&mut rng, n, 200);
            let h = header(200, 7, n as u32);
            buf.clear();
            encode_chunk(&h, &a, &mut buf).unwrap();
            decode_chunk(&buf, &mut h2, &mut a2).unwrap();
            assert_eq!(h2, h);
            assert_eq!(a2.len(), n);
            for (x, y) in a.iter().zip(&a2) {
                assert_eq!(x.slot, y.slot);
                assert!(x.pos.distance(y.pos) <= 0.0008, "{x:?} vs {y:?}");
                let dh = (x.heading - y.heading + core::f32::consts::PI).rem_euclid(TAU)
                    - core::f32::consts::PI;
                assert!(dh.abs() < 0.01_f32.to_radians(), "{x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn the_largest_chunk_fits_in_max_chunk_bytes() {
        // Every agent as far from the last as a chunk allows, headings spread, the longest name.
        let a: Vec<KeyAgent> = (0..MAX_CHUNK_AGENTS)
            .map(|i| {
                let s = if i % 2 == 0 { 1.0 } else { -1.0 };
                KeyAgent {
                    slot: Some(i as u32),
                    pos: Vec2::new(s * MAX_COORD * 0.999, -s * MAX_COORD * 0.999),
                    heading: s * 3.0,
                }
            })
            .collect();
        let mut h = header(MAX_CHUNK_AGENTS as u32, 0, MAX_CHUNK_AGENTS as u32);
        h.formation = "n".repeat(MAX_NAME);
        let mut buf = Vec::new();
        encode_chunk(&h, &a, &mut buf).unwrap();
        assert!(buf.len() <= MAX_CHUNK_BYTES, "{} bytes", buf.len());
    }

    #[test]
    fn a_squad_standing_in_formation_costs_a_few_bytes_per_agent() {
        // 96 agents in a 12-file column, 1.2 m apart, facing the same way.
        let a: Vec<KeyAgent> = (0..96)
            .map(|i| KeyAgent {
                slot: Some(i),
                pos: Vec2::new((i % 12) as f32 * 1.2, (i / 12) as f32 * 1.2),
                heading: 0.3,
            })
            .collect();
        let mut buf = Vec::new();
        encode_chunk(&header(96, 0, 96), &a, &mut buf).unwrap();
        let per_agent = (buf.len() - 74) as f32 / 96.0;
        assert!(
            per_agent <= 7.0,
            "{} bytes, {per_agent} per agent",
            buf.len()
        );
    }

    #[test]
    fn malformed_chunks_are_errors() {
        let mut rng = Rng::new(9);
        let a = agents(&mut rng, 20, 50);
        let mut good = Vec::new();
        encode_chunk(&header(50, 0, 20), &a, &mut good).unwrap();
        let (mut h, mut out) = (KeyframeHeader::default(), Vec::new());
        assert!(decode_chunk(&good, &mut h, &mut out).is_ok());
        // Every truncation.
        for len in 0..good.len() {
            assert_eq!(
                decode_chunk(&good[..len], &mut h, &mut out),
                Err(KeyframeError::Short),
                "cut at {len}"
            );
        }
        // Trailing bytes, wrong kind.
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(
            decode_chunk(&longer, &mut h, &mut out),
            Err(KeyframeError::Trailing)
        );
        let mut kind = good.clone();
        kind[0] = 0x00;
        assert_eq!(
            decode_chunk(&kind, &mut h, &mut out),
            Err(KeyframeError::Kind(0))
        );
        // A NaN server time (bytes 3..11), an infinite anchor x (the f32 after the varints).
        let mut nan = good.clone();
        nan[3..11].copy_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(
            decode_chunk(&nan, &mut h, &mut out),
            Err(KeyframeError::Value)
        );
        let mut inf = good.clone();
        inf[14..18].copy_from_slice(&f32::INFINITY.to_le_bytes());
        assert_eq!(
            decode_chunk(&inf, &mut h, &mut out),
            Err(KeyframeError::Value)
        );
        // Counts: a chunk past the squad, a squad past MAX_AGENTS, an overlong varint.
        let mut past = good.clone();
        past[12] = 45; // first = 45, count 20 > total 50
        assert_eq!(
            decode_chunk(&past, &mut h, &mut out),
            Err(KeyframeError::Count)
        );
        let mut huge = vec![KEYFRAME_KIND, 0, 0];
        huge.extend_from_slice(&0.0f64.to_le_bytes());
        huge.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0, 0]);
        assert_eq!(
            decode_chunk(&huge, &mut h, &mut out),
            Err(KeyframeError::Count)
        );
        let mut overlong = vec![KEYFRAME_KIND, 0, 0];
        overlong.extend_from_slice(&0.0f64.to_le_bytes());
        overlong.extend_from_slice(&[0xFF; 6]);
        assert_eq!(
            decode_chunk(&overlong, &mut h, &mut out),
            Err(KeyframeError::Varint)
        );
        // Random garbage never panics, and flipping any byte never panics.
        let mut junk = Vec::new();
        for k in 0..2000 {
            junk.clear();
            junk.push(if k % 2 == 0 { KEYFRAME_KIND } else { 0 });
            junk.extend((0..(k % 97)).map(|_| rng.next_u64() as u8));
            let _ = decode_chunk(&junk, &mut h, &mut out);
        }
        for i in 0..good.len() {
            let mut flipped = good.clone();
            flipped[i] ^= 0x5A;
            if let Ok(()) = decode_chunk(&flipped, &mut h, &mut out) {
                assert!(out.len() <= MAX_CHUNK_AGENTS);
                assert!(out
                    .iter()
                    .all(|a| a.pos.is_finite() && a.heading.is_finite()));
            }
        }
    }

    #[test]
    fn bad_input_is_refused_by_the_encoder() {
        let mut buf = vec![9];
        let a = [KeyAgent {
            slot: Some(0),
            pos: Vec2::new(f32::NAN, 0.0),
            heading: 0.0,
        }];
        assert_eq!(
            encode_chunk(&header(1, 0, 1), &a, &mut buf),
            Err(KeyframeError::Value)
        );
        assert_eq!(buf, vec![9], "nothing written on error");
        let far = [KeyAgent {
            slot: Some(0),
            pos: Vec2::new(2.0e6, 0.0),
            heading: 0.0,
        }];
        assert_eq!(
            encode_chunk(&header(1, 0, 1), &far, &mut buf),
            Err(KeyframeError::Value)
        );
        let slot = [KeyAgent {
            slot: Some(5),
            pos: Vec2::ZERO,
            heading: 0.0,
        }];
        assert_eq!(
            encode_chunk(&header(5, 0, 1), &slot, &mut buf),
            Err(KeyframeError::Slot)
        );
        let many = vec![KeyAgent::default(); MAX_CHUNK_AGENTS + 1];
        assert_eq!(
            encode_chunk(&header(1000, 0, 0), &many, &mut buf),
            Err(KeyframeError::Count)
        );
        let mut long = header(1, 0, 0);
        long.formation = "x".repeat(MAX_NAME + 1);
        assert_eq!(encode_chunk(&long, &[], &mut buf), Err(KeyframeError::Name));
    }
}
