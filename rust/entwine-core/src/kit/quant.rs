//! Quantised encodings for the network, and a byte writer/reader over
//! caller-provided buffers.
//!
//! | value      | bytes | encoding                              | worst round-trip error        |
//! |------------|-------|---------------------------------------|-------------------------------|
//! | position   | 6     | 3 × i16 over ±`range_m`               | `range_m` / 65534 per axis    |
//! | rotation   | 4     | smallest three, 2 + 3 × 10 bits       | 0.275°                        |
//! | unit value | 1     | u8 over [0, 1]                        | 1/510 ≈ 0.00196               |
//! | yaw        | 2     | u16 over one turn                     | 0.0028°                       |
//! | half float | 2     | IEEE 754 binary16, clamped to ±65504  | 2⁻¹¹ relative                 |
//! | wrapped position | 6 | 3 × u16 millimetres, modulo 65.536 m | 0.5 mm, resolved near a reference |
//!
//! Every encoder accepts any input (clamping, NaN → a documented fallback)
//! and every decoder accepts any bytes, so nothing here can panic. Multi-byte
//! values are little endian.

use core::f32::consts::SQRT_2;
use core::fmt;

use glam::{Quat, Vec3};

use super::pose::unit_quat;
use super::smoothing::saturate;

/// Size in bytes of an encoded position.
pub const POSITION_BYTES: usize = 6;
/// Size in bytes of an encoded rotation.
pub const ROTATION_BYTES: usize = 4;

/// Position steps per side of zero (i16 without its lone negative extreme).
const POSITION_STEPS: f32 = 32767.0;
/// Rotation steps per side of zero in each 10-bit field (code 511 is zero).
const ROTATION_STEPS: f32 = 511.0;
/// Rotation field steps per unit of quaternion component: 511 / (1/√2).
const ROTATION_SCALE: f32 = ROTATION_STEPS * SQRT_2;
/// Steps of a unit value.
const UNIT_STEPS: f32 = 255.0;

/// Returns `local` (metres, relative to some origin) packed into 6 bytes: three
/// little-endian i16 over [−`range_m`, `range_m`].
///
/// The step is `range_m` / 32767 (0.12 mm for a 4 m range), so a decoded
/// in-range component is off by at most `range_m` / 65534. Components outside
/// the range, including ±∞, clamp to ±`range_m`; NaN components encode 0.
/// A `range_m` that is not positive and finite encodes the zero vector.
#[must_use]
pub fn encode_position(local: Vec3, range_m: f32) -> [u8; POSITION_BYTES] {
    let scale = if is_valid_range(range_m) {
        POSITION_STEPS / range_m
    } else {
        0.0
    };
    // `as` saturates and maps NaN to 0.
    let [x, y, z] = local
        .to_array()
        .map(|c| ((c * scale).clamp(-POSITION_STEPS, POSITION_STEPS).round() as i16).to_le_bytes());
    [x[0], x[1], y[0], y[1], z[0], z[1]]
}

/// Returns the position (metres) packed by [`encode_position`] with the same
/// `range_m`, always within ±`range_m` per axis. A `range_m` that is not
/// positive and finite decodes to the zero vector.
#[must_use]
pub fn decode_position(bytes: [u8; POSITION_BYTES], range_m: f32) -> Vec3 {
    if !is_valid_range(range_m) {
        return Vec3::ZERO;
    }
    let [x0, x1, y0, y1, z0, z1] = bytes;
    let axis =
        |lo, hi| (f32::from(i16::from_le_bytes([lo, hi])) / POSITION_STEPS).max(-1.0) * range_m;
    let v = Vec3::new(axis(x0, x1), axis(y0, y1), axis(z0, z1));
    debug_assert!(v.is_finite());
    v
}

/// Returns `true` if `range_m` is positive and finite.
fn is_valid_range(range_m: f32) -> bool {
    range_m.is_finite() && range_m > 0.0
}

/// Returns `q` packed into 4 bytes with the "smallest three" scheme.
///
/// The quaternion is normalised and negated if needed so that its largest
/// component is positive; that component is dropped and its index stored in
/// the top 2 bits. The other three, each within [−1/√2, 1/√2], follow in
/// x, y, z, w order as 10-bit fields (bits 29–20, 19–10, 9–0; code 511 is 0,
/// one step is 1/(511·√2) ≈ 0.00138).
///
/// Round-trip angle error: each kept component is off by at most half a step,
/// δ = 1/(1022·√2); rebuilding the dropped one at most doubles the error, so
/// the angle is off by at most 4·√3·δ ≈ 0.0048 rad = **0.275°**, reached when
/// all four components are near ½ (0.273° measured there). Random rotations
/// typically stay below 0.25°. The identity and the half turns about X, Y and
/// Z round-trip exactly. Zero or non-finite input encodes the identity.
#[must_use]
pub fn encode_rotation(q: Quat) -> [u8; ROTATION_BYTES] {
    let c = unit_quat(q).to_array();
    let largest = (1..4).fold(
        0,
        |best, i| if c[i].abs() > c[best].abs() { i } else { best },
    );
    let sign = if c[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut packed = (largest as u32) << 30;
    for (i, shift) in (0..4).filter(|&i| i != largest).zip([20, 10, 0]) {
        let code = (c[i] * sign * ROTATION_SCALE)
            .clamp(-ROTATION_STEPS, ROTATION_STEPS)
            .round()
            + ROTATION_STEPS;
        packed |= (code as u32) << shift;
    }
    packed.to_le_bytes()
}

/// Returns the unit quaternion packed by [`encode_rotation`], with its largest
/// component positive. Any 4 bytes decode to a finite unit quaternion (the
/// unused field code 1023 reads as 1022).
#[must_use]
pub fn decode_rotation(bytes: [u8; ROTATION_BYTES]) -> Quat {
    let packed = u32::from_le_bytes(bytes);
    let largest = (packed >> 30) as usize;
    let mut c = [0.0; 4];
    for (i, shift) in (0..4).filter(|&i| i != largest).zip([20, 10, 0]) {
        let code = ((packed >> shift) & 0x3ff) as f32;
        c[i] = (code - ROTATION_STEPS).min(ROTATION_STEPS) / ROTATION_SCALE;
    }
    let rest: f32 = c.iter().map(|x| x * x).sum();
    c[largest] = (1.0 - rest).max(0.0).sqrt();
    let q = unit_quat(Quat::from_array(c));
    debug_assert!(q.is_finite());
    q
}

/// Returns `x` (a weight in [0, 1]) packed into one byte, step 1/255.
/// Values outside [0, 1] clamp; NaN encodes 0.
#[must_use]
pub fn encode_unit(x: f32) -> u8 {
    (saturate(x) * UNIT_STEPS).round() as u8
}

/// Returns the weight in [0, 1] packed by [`encode_unit`], within 1/510 of
/// the encoded value; 0 and 1 are exact.
#[must_use]
pub fn decode_unit(byte: u8) -> f32 {
    f32::from(byte) / UNIT_STEPS
}

/// Returns the rotation of `q` about +Y (radians, right-handed) packed into a u16 over one turn.
/// A non-finite `q` encodes 0.
#[must_use]
pub fn encode_yaw(q: Quat) -> u16 {
    let q = unit_quat(q);
    // The heading of −Z (Godot's forward) after the rotation, measured about +Y.
    let f = q * Vec3::NEG_Z;
    let yaw = (-f.x).atan2(-f.z);
    let turns = (yaw / core::f32::consts::TAU).rem_euclid(1.0);
    ((turns * 65536.0).round() as u32 % 65536) as u16
}

/// Returns the rotation about +Y packed by [`encode_yaw`].
#[must_use]
pub fn decode_yaw(code: u16) -> Quat {
    Quat::from_rotation_y(f32::from(code) / 65536.0 * core::f32::consts::TAU)
}

/// Returns whether `q` is a rotation about +Y alone (within `tolerance` radians of tilt), so that
/// [`encode_yaw`] keeps it.
#[must_use]
pub fn is_upright(q: Quat, tolerance: f32) -> bool {
    let up = unit_quat(q) * Vec3::Y;
    up.is_finite() && up.y >= tolerance.cos()
}

/// Returns `x` as IEEE 754 binary16 bits, rounded to nearest; beyond ±65504 it clamps, and NaN or
/// ±∞ encode 0 (a parameter value must stay finite).
#[must_use]
pub fn encode_half(x: f32) -> u16 {
    if !x.is_finite() {
        return 0;
    }
    let x = x.clamp(-65504.0, 65504.0);
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let a = x.abs();
    if a < 6.103_515_6e-5 {
        // Subnormal half: steps of 2⁻²⁴.
        return sign | (a * 16_777_216.0).round() as u16;
    }
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mant = bits & 0x007f_ffff;
    // Round the 23-bit mantissa to 10 bits, to nearest even; a carry bumps the exponent.
    let mut h = ((exp as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | (h.min(0x7bff) as u16)
}

/// Returns the value of binary16 bits written by [`encode_half`]; infinities and NaNs (which it
/// never writes) decode to 0.
#[must_use]
pub fn decode_half(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f32::from(h & 0x3ff);
    match exp {
        0 => sign * mant / 16_777_216.0,
        31 => 0.0,
        e => sign * (1.0 + mant / 1024.0) * 2f32.powi(e - 15),
    }
}

/// Metres per step of a wrapped position at scale 1 (a millimetre).
pub const WRAP_STEP: f32 = 1.0e-3;

/// Returns a usable wrapped-position step (m): `step` when finite and positive, else
/// [`WRAP_STEP`].
fn wrap_step(step: f32) -> f64 {
    if step.is_finite() && step > 0.0 {
        f64::from(step)
    } else {
        f64::from(WRAP_STEP)
    }
}

/// Returns `world` (metres) as three u16 counts of `step` metres (e.g. [`WRAP_STEP`], a
/// millimetre: modulo 65.536 m) keeping the low bits only, so that a receiver who knows a
/// reference within ±32 768 steps rebuilds the position with [`decode_wrapped`]. Non-finite
/// components encode 0; a non-finite or non-positive step is [`WRAP_STEP`].
#[must_use]
pub fn encode_wrapped(world: Vec3, step: f32) -> [u16; 3] {
    let step = wrap_step(step);
    world.to_array().map(|c| {
        let steps = if c.is_finite() {
            (f64::from(c) / step).round()
        } else {
            0.0
        };
        (steps.rem_euclid(65536.0) as u32 % 65536) as u16
    })
}

/// Returns the position nearest `reference` whose low bits are `codes` (see [`encode_wrapped`]):
/// exact to half a step when the true position is within ±32 767 steps of `reference` on every
/// axis (±32.7 m for [`WRAP_STEP`]).
#[must_use]
pub fn decode_wrapped(codes: [u16; 3], reference: Vec3, step: f32) -> Vec3 {
    let step = wrap_step(step);
    let mut out = [0.0f32; 3];
    for ((o, code), r) in out.iter_mut().zip(codes).zip(reference.to_array()) {
        let r = if r.is_finite() { f64::from(r) } else { 0.0 };
        let r_steps = (r / step).round();
        let r_code = r_steps.rem_euclid(65536.0) as i64;
        let diff = (i64::from(code) - r_code).rem_euclid(65536);
        let diff = if diff >= 32768 { diff - 65536 } else { diff };
        *o = ((r_steps + diff as f64) * step) as f32;
    }
    Vec3::from_array(out)
}

/// The error returned when a buffer has too few bytes left for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortBuffer;

impl fmt::Display for ShortBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("buffer too short")
    }
}

impl std::error::Error for ShortBuffer {}

/// Writes values front to back into a caller-provided byte buffer.
///
/// A put that does not fit returns [`ShortBuffer`] and writes nothing.
#[derive(Debug)]
pub struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> ByteWriter<'a> {
    /// Returns a writer that starts at the beginning of `buf`.
    #[must_use]
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Returns the bytes written so far.
    #[must_use]
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Returns how many bytes are still free.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.len)
    }

    /// Returns `Ok` after appending `bytes`, or [`ShortBuffer`] if they do not fit.
    fn put<const N: usize>(&mut self, bytes: [u8; N]) -> Result<(), ShortBuffer> {
        let slot = self
            .buf
            .get_mut(self.len..)
            .and_then(<[u8]>::first_chunk_mut::<N>)
            .ok_or(ShortBuffer)?;
        *slot = bytes;
        self.len += N;
        Ok(())
    }

    /// Returns `Ok` after writing one byte.
    pub fn put_u8(&mut self, value: u8) -> Result<(), ShortBuffer> {
        self.put([value])
    }

    /// Returns `Ok` after writing `value` as 2 little-endian bytes.
    pub fn put_u16(&mut self, value: u16) -> Result<(), ShortBuffer> {
        self.put(value.to_le_bytes())
    }

    /// Returns `Ok` after writing the IEEE 754 bits of `value` as 4 little-endian bytes.
    pub fn put_f32(&mut self, value: f32) -> Result<(), ShortBuffer> {
        self.put(value.to_le_bytes())
    }

    /// Returns `Ok` after writing `value` as 8 little-endian bytes.
    pub fn put_i64(&mut self, value: i64) -> Result<(), ShortBuffer> {
        self.put(value.to_le_bytes())
    }

    /// Returns `Ok` after writing the IEEE 754 bits of `value` as 8 little-endian bytes.
    pub fn put_f64(&mut self, value: f64) -> Result<(), ShortBuffer> {
        self.put(value.to_le_bytes())
    }

    /// Returns `Ok` after writing `text` as one length byte and its UTF-8 bytes, or
    /// [`ShortBuffer`] (writing nothing) if it is longer than 255 bytes or does not fit.
    pub fn put_short_str(&mut self, text: &str) -> Result<(), ShortBuffer> {
        let len = u8::try_from(text.len()).map_err(|_| ShortBuffer)?;
        let end = self.len + 1 + text.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(ShortBuffer)?;
        slot[0] = len;
        slot[1..].copy_from_slice(text.as_bytes());
        self.len = end;
        Ok(())
    }

    /// Returns `Ok` after writing `local` (metres) with [`encode_position`] (6 bytes).
    pub fn put_position(&mut self, local: Vec3, range_m: f32) -> Result<(), ShortBuffer> {
        self.put(encode_position(local, range_m))
    }

    /// Returns `Ok` after writing `q` with [`encode_rotation`] (4 bytes).
    pub fn put_rotation(&mut self, q: Quat) -> Result<(), ShortBuffer> {
        self.put(encode_rotation(q))
    }

    /// Returns `Ok` after writing `x` with [`encode_unit`] (1 byte).
    pub fn put_unit(&mut self, x: f32) -> Result<(), ShortBuffer> {
        self.put([encode_unit(x)])
    }

    /// Returns `Ok` after writing `x` with [`encode_half`] (2 bytes).
    pub fn put_half(&mut self, x: f32) -> Result<(), ShortBuffer> {
        self.put_u16(encode_half(x))
    }

    /// Returns `Ok` after writing the yaw of `q` with [`encode_yaw`] (2 bytes).
    pub fn put_yaw(&mut self, q: Quat) -> Result<(), ShortBuffer> {
        self.put_u16(encode_yaw(q))
    }

    /// Returns `Ok` after writing `world` with [`encode_wrapped`] (6 bytes).
    pub fn put_wrapped(&mut self, world: Vec3, step: f32) -> Result<(), ShortBuffer> {
        let [x, y, z] = encode_wrapped(world, step).map(u16::to_le_bytes);
        self.put([x[0], x[1], y[0], y[1], z[0], z[1]])
    }
}

/// Reads values front to back from a byte slice.
///
/// A get past the end returns [`ShortBuffer`] and consumes nothing.
#[derive(Clone, Debug)]
pub struct ByteReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    /// Returns a reader that starts at the beginning of `buf`.
    #[must_use]
    pub const fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Returns how many bytes are still unread.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Returns the next `N` bytes, or [`ShortBuffer`] if fewer are left.
    fn take<const N: usize>(&mut self) -> Result<[u8; N], ShortBuffer> {
        let bytes = *self
            .buf
            .get(self.pos..)
            .and_then(<[u8]>::first_chunk::<N>)
            .ok_or(ShortBuffer)?;
        self.pos += N;
        Ok(bytes)
    }

    /// Returns the next byte.
    pub fn get_u8(&mut self) -> Result<u8, ShortBuffer> {
        self.take().map(|[b]| b)
    }

    /// Returns the next 2 bytes as a little-endian u16.
    pub fn get_u16(&mut self) -> Result<u16, ShortBuffer> {
        self.take().map(u16::from_le_bytes)
    }

    /// Returns the next 4 bytes as little-endian f32 bits (which may be NaN or ±∞).
    pub fn get_f32(&mut self) -> Result<f32, ShortBuffer> {
        self.take().map(f32::from_le_bytes)
    }

    /// Returns the next 8 bytes as a little-endian i64.
    pub fn get_i64(&mut self) -> Result<i64, ShortBuffer> {
        self.take().map(i64::from_le_bytes)
    }

    /// Returns the next 8 bytes as little-endian f64 bits (which may be NaN or ±∞).
    pub fn get_f64(&mut self) -> Result<f64, ShortBuffer> {
        self.take().map(f64::from_le_bytes)
    }

    /// Returns a text written by [`ByteWriter::put_short_str`]: `Err` when the buffer is short
    /// or the bytes are not UTF-8 (consuming nothing).
    pub fn get_short_str(&mut self) -> Result<&'a str, ShortBuffer> {
        let buf: &'a [u8] = self.buf;
        let len = usize::from(*buf.get(self.pos).ok_or(ShortBuffer)?);
        let bytes = buf
            .get(self.pos + 1..self.pos + 1 + len)
            .ok_or(ShortBuffer)?;
        let text = core::str::from_utf8(bytes).map_err(|_| ShortBuffer)?;
        self.pos += 1 + len;
        Ok(text)
    }

    /// Returns the next 6 bytes decoded with [`decode_position`] (metres).
    pub fn get_position(&mut self, range_m: f32) -> Result<Vec3, ShortBuffer> {
        self.take().map(|bytes| decode_position(bytes, range_m))
    }

    /// Returns the next 4 bytes decoded with [`decode_rotation`].
    pub fn get_rotation(&mut self) -> Result<Quat, ShortBuffer> {
        self.take().map(decode_rotation)
    }

    /// Returns the next byte decoded with [`decode_unit`].
    pub fn get_unit(&mut self) -> Result<f32, ShortBuffer> {
        self.take().map(|[b]| decode_unit(b))
    }

    /// Returns the next 2 bytes decoded with [`decode_half`].
    pub fn get_half(&mut self) -> Result<f32, ShortBuffer> {
        self.get_u16().map(decode_half)
    }

    /// Returns the next 2 bytes decoded with [`decode_yaw`].
    pub fn get_yaw(&mut self) -> Result<Quat, ShortBuffer> {
        self.get_u16().map(decode_yaw)
    }

    /// Returns the next 6 bytes decoded with [`decode_wrapped`] near `reference`.
    pub fn get_wrapped(&mut self, reference: Vec3, step: f32) -> Result<Vec3, ShortBuffer> {
        let b: [u8; 6] = self.take()?;
        let codes = [
            u16::from_le_bytes([b[0], b[1]]),
            u16::from_le_bytes([b[2], b[3]]),
            u16::from_le_bytes([b[4], b[5]]),
        ];
        Ok(decode_wrapped(codes, reference, step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::test_util::{quat_angle, Lcg};
    use core::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, PI};

    /// The documented worst-case rotation round-trip error, in degrees.
    const ROTATION_BOUND_DEG: f64 = 0.275;

    #[test]
    fn position_known_bytes() {
        // 1/4·32767 = 8191.75 → 8192 = 0x2000; −16383.5 → −16384 = 0xC000; 32767 = 0x7FFF.
        let bytes = encode_position(Vec3::new(1.0, -2.0, 4.0), 4.0);
        assert_eq!(bytes, [0x00, 0x20, 0x00, 0xC0, 0xFF, 0x7F]);
        let back = decode_position(bytes, 4.0);
        assert!((back.x - 8192.0 * 4.0 / 32767.0).abs() < 1e-7);
        assert_eq!(back.z, 4.0);
        assert_eq!(encode_position(Vec3::ZERO, 4.0), [0; 6]);
    }

    #[test]
    fn position_round_trip_error_bound() {
        let range = 4.0;
        let bound = range / 65534.0 + 1e-6; // half a step, plus f32 rounding
        let mut rng = Lcg(1);
        let mut worst = 0.0f32;
        for _ in 0..100_000 {
            let p = rng.vec3() * range;
            let err = (decode_position(encode_position(p, range), range) - p)
                .abs()
                .max_element();
            worst = worst.max(err);
        }
        assert!(worst <= bound, "worst {worst} > {bound}");
        assert!(
            worst > range / 65534.0 * 0.9,
            "sweep should approach the bound"
        );
    }

    #[test]
    fn position_edges_clamping_and_fallbacks() {
        let r = 4.0;
        let edge = Vec3::new(r, -r, 0.0);
        assert_eq!(decode_position(encode_position(edge, r), r), edge);
        let far = Vec3::new(5.0, -100.0, f32::INFINITY);
        assert_eq!(
            decode_position(encode_position(far, r), r),
            Vec3::new(r, -r, r)
        );
        let nan = Vec3::new(f32::NAN, 1.0, f32::NEG_INFINITY);
        let back = decode_position(encode_position(nan, r), r);
        assert_eq!((back.x, back.z), (0.0, -r));
        for bad_range in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert_eq!(encode_position(Vec3::ONE, bad_range), [0; 6]);
            assert_eq!(decode_position([0xFF; 6], bad_range), Vec3::ZERO);
        }
        // i16::MIN never comes out of the encoder but still decodes within range.
        assert_eq!(decode_position([0x00, 0x80, 0, 0, 0, 0], r).x, -r);
    }

    #[test]
    fn rotation_identity_has_known_bytes_and_is_exact() {
        // Index 3 (w), then three zero fields of code 511: 0xDFF7FDFF.
        let bytes = encode_rotation(Quat::IDENTITY);
        assert_eq!(bytes, [0xFF, 0xFD, 0xF7, 0xDF]);
        assert_eq!(decode_rotation(bytes), Quat::IDENTITY);
        for half_turn in [
            Quat::from_xyzw(1.0, 0.0, 0.0, 0.0),
            Quat::from_xyzw(0.0, 0.0, -1.0, 0.0),
        ] {
            let back = decode_rotation(encode_rotation(half_turn));
            assert!(back == half_turn || back == -half_turn);
        }
    }

    #[test]
    fn rotation_sign_and_scale_do_not_matter() {
        let q = Quat::from_rotation_y(FRAC_PI_2);
        assert_eq!(encode_rotation(q), encode_rotation(-q));
        assert_eq!(encode_rotation(q), encode_rotation(q * 3.0));
        // Ties at ±1/√2 hit the end codes and still decode correctly.
        let tie = Quat::from_xyzw(0.0, FRAC_1_SQRT_2, 0.0, -FRAC_1_SQRT_2);
        assert!(quat_angle(decode_rotation(encode_rotation(tie)), tie) < 1e-5);
    }

    #[test]
    fn rotation_worst_case_error_is_below_the_documented_bound() {
        let mut rng = Lcg(2024);
        let mut worst = 0.0f64;
        for _ in 0..200_000 {
            let q = rng.quat();
            worst = worst.max(quat_angle(decode_rotation(encode_rotation(q)), q));
        }
        let worst_deg = worst.to_degrees();
        println!("worst rotation error over 200000 random rotations: {worst_deg:.4}°");
        assert!(worst_deg < ROTATION_BOUND_DEG, "{worst_deg}°");
    }

    #[test]
    fn rotation_bound_is_tight_where_all_components_are_near_one_half() {
        // Three equal components just under half a step above a code, the
        // fourth (dropped) one slightly larger: every error adds up.
        let mut worst = 0.0f64;
        for code in 340..362 {
            let v = (code as f32 + 0.49) / ROTATION_SCALE;
            let q = Quat::from_xyzw(v, v, v, (1.0 - 3.0 * v * v).sqrt());
            worst = worst.max(quat_angle(decode_rotation(encode_rotation(q)), q));
        }
        let worst_deg = worst.to_degrees();
        println!("worst rotation error near (½, ½, ½, ½): {worst_deg:.4}°");
        assert!(
            worst_deg > 0.26 && worst_deg < ROTATION_BOUND_DEG,
            "{worst_deg}°"
        );
    }

    #[test]
    fn rotation_fallbacks_and_arbitrary_bytes() {
        let identity = encode_rotation(Quat::IDENTITY);
        assert_eq!(
            encode_rotation(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
            identity
        );
        assert_eq!(
            encode_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            identity
        );
        assert_eq!(
            encode_rotation(Quat::from_xyzw(f32::INFINITY, 0.0, 0.0, 1.0)),
            identity
        );
        let mut rng = Lcg(5);
        let random = (0..10_000).map(|_| rng.bits().to_le_bytes());
        for bytes in [[0xFF; 4], [0; 4]].into_iter().chain(random) {
            let q = decode_rotation(bytes);
            assert!(
                q.is_finite() && (q.length() - 1.0).abs() < 1e-5,
                "{bytes:?}"
            );
        }
        let upside_down = Quat::from_rotation_x(PI);
        assert!(quat_angle(decode_rotation(encode_rotation(upside_down)), upside_down) < 1e-6);
    }

    #[test]
    fn unit_known_values_and_bound() {
        assert_eq!(encode_unit(0.0), 0);
        assert_eq!(encode_unit(1.0), 255);
        assert_eq!(encode_unit(0.5), 128);
        assert_eq!(decode_unit(0), 0.0);
        assert_eq!(decode_unit(255), 1.0);
        assert_eq!(decode_unit(51), 0.2);
        assert_eq!(encode_unit(-1.0), 0);
        assert_eq!(encode_unit(2.0), 255);
        assert_eq!(encode_unit(f32::INFINITY), 255);
        assert_eq!(encode_unit(f32::NAN), 0);
        let worst = (0..=10_000)
            .map(|i| i as f32 / 10_000.0)
            .map(|x| (decode_unit(encode_unit(x)) - x).abs())
            .fold(0.0, f32::max);
        assert!(worst <= 1.0 / 510.0 + 1e-6, "{worst}");
    }

    #[test]
    fn writer_and_reader_round_trip() {
        let mut buf = [0u8; 18];
        let mut w = ByteWriter::new(&mut buf);
        w.put_u8(0xAB).unwrap();
        w.put_u16(0x1234).unwrap();
        w.put_f32(1.0).unwrap();
        w.put_position(Vec3::new(1.0, -2.0, 4.0), 4.0).unwrap();
        w.put_rotation(Quat::IDENTITY).unwrap();
        assert_eq!(w.remaining(), 1);
        w.put_unit(1.0).unwrap();
        assert_eq!(w.remaining(), 0);
        assert_eq!(
            &w.written()[..7],
            &[0xAB, 0x34, 0x12, 0x00, 0x00, 0x80, 0x3F]
        );

        let mut r = ByteReader::new(&buf);
        assert_eq!(r.get_u8(), Ok(0xAB));
        assert_eq!(r.get_u16(), Ok(0x1234));
        assert_eq!(r.get_f32(), Ok(1.0));
        assert_eq!(r.get_position(4.0).unwrap().z, 4.0);
        assert_eq!(r.get_rotation(), Ok(Quat::IDENTITY));
        assert_eq!(r.get_unit(), Ok(1.0));
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.get_u8(), Err(ShortBuffer));
    }

    #[test]
    fn short_buffers_fail_without_side_effects() {
        let mut buf = [0u8; 5];
        let mut w = ByteWriter::new(&mut buf);
        w.put_u16(7).unwrap();
        assert_eq!(w.put_rotation(Quat::IDENTITY), Err(ShortBuffer));
        assert_eq!(w.put_position(Vec3::ONE, 1.0), Err(ShortBuffer));
        assert_eq!(w.written(), &[7, 0]);
        w.put_u8(9).unwrap();
        w.put_u16(0xFFFF).unwrap();
        assert_eq!(w.put_u8(1), Err(ShortBuffer));
        assert_eq!(ByteWriter::new(&mut []).put_u8(1), Err(ShortBuffer));

        let mut r = ByteReader::new(&buf[..3]);
        assert_eq!(r.get_f32(), Err(ShortBuffer));
        assert_eq!(r.get_position(1.0), Err(ShortBuffer));
        assert_eq!(r.remaining(), 3);
        assert_eq!(r.get_u16(), Ok(7));
        assert_eq!(r.get_u16(), Err(ShortBuffer));
        assert_eq!(r.get_u8(), Ok(9));
        assert_eq!(r.get_unit(), Err(ShortBuffer));
        assert_eq!(ShortBuffer.to_string(), "buffer too short");
    }

    #[test]
    fn half_floats_round_trip_within_their_precision() {
        for &x in &[
            0.0f32, 1.0, -1.0, 0.5, 0.333, 1e-3, 2.5e-6, -7.25, 1000.3, 65504.0, 1e9,
        ] {
            let back = decode_half(encode_half(x));
            let expected = x.clamp(-65504.0, 65504.0);
            let tol = expected.abs() / 2048.0 + 6e-8;
            assert!((back - expected).abs() <= tol, "{x} -> {back}");
        }
        assert_eq!(decode_half(encode_half(f32::NAN)), 0.0);
        assert_eq!(decode_half(encode_half(f32::INFINITY)), 0.0);
        let mut rng = Lcg(9);
        for _ in 0..10_000 {
            let x = rng.signed() * 100.0;
            let back = decode_half(encode_half(x));
            assert!((back - x).abs() <= x.abs() / 2048.0 + 6e-8, "{x} -> {back}");
        }
        for h in 0..=u16::MAX {
            assert!(decode_half(h).is_finite());
        }
    }

    #[test]
    fn yaw_round_trips_upright_rotations() {
        let mut rng = Lcg(3);
        for _ in 0..10_000 {
            let a = rng.signed() * 10.0;
            let q = Quat::from_rotation_y(a);
            let back = decode_yaw(encode_yaw(q));
            assert!(quat_angle(q, back) < 0.003_f64.to_radians() + 1e-5, "{a}");
            assert!(is_upright(q, 0.01));
        }
        assert!(!is_upright(Quat::from_rotation_x(0.2), 0.01));
        assert!(decode_yaw(encode_yaw(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0))).is_finite());
    }

    #[test]
    fn wrapped_positions_resolve_near_their_reference() {
        let mut rng = Lcg(5);
        for _ in 0..10_000 {
            let p = Vec3::new(
                rng.signed() * 1.0e5,
                rng.signed() * 50.0,
                rng.signed() * 1.0e5,
            );
            let near = p + Vec3::new(rng.signed(), rng.signed(), rng.signed()) * 30.0;
            let back = decode_wrapped(encode_wrapped(p, WRAP_STEP), near, WRAP_STEP);
            // f32 world coordinates of 1e5 m have 8 mm steps of their own.
            let tol = 5.1e-4 + p.abs().max_element() * f32::EPSILON;
            assert!((back - p).abs().max_element() <= tol, "{p} {near} {back}");
        }
        assert!(decode_wrapped([1, 2, 3], Vec3::splat(f32::NAN), WRAP_STEP).is_finite());
        assert!(decode_wrapped([1, 2, 3], Vec3::ONE, f32::NAN).is_finite());
        assert!(decode_wrapped([1, 2, 3], Vec3::ONE, -1.0).is_finite());
        // At a hundredth of a millimetre (a figurine at scale 0.01).
        let p = Vec3::new(0.123_45, -0.2, 0.3);
        let back = decode_wrapped(encode_wrapped(p, 1e-5), p + Vec3::splat(0.2), 1e-5);
        assert!(back.distance(p) <= 1e-5, "{back}");
    }
}
