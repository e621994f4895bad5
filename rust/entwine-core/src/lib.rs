//! Engine-free core of Entwine.
//!
//! Everything here is plain Rust on top of [`glam`], so it can be unit-tested
//! without Godot and shared by every part of the extension.
//!
//! # Conventions
//!
//! * Godot's coordinate system: right-handed, +Y up, +X right, forward is −Z.
//! * Units: metres, seconds and radians throughout.
//! * Rotations are unit quaternions. The kit never uses glam's asserting
//!   quaternion helpers (`Quat * Vec3`, `Quat::inverse`, `Quat::slerp`, ...),
//!   because `godot-core` turns on glam's `debug-glam-assert`, which would make
//!   a non-unit or NaN quaternion panic in debug builds.
//!
//! # Contents
//!
//! * [`kit`]: the shared kinematics kit (poses, smoothing, sequence numbers,
//!   quantisation, two-bone limb IK, and the one collision [`kit::Shape`] type with closest
//!   points and signed distances). It never allocates and never panics.
//! * [`clock`]: estimating a server's clock from ping round trips.
//! * [`hold_hand`]: two players holding hands: room state, phases, follow spring, shared contact.
//! * [`env_touch`]: a walking character's hand reaches for and rests on nearby walls.
//! * [`rig`]: a humanoid described from any skeleton's bone names and rest pose.
//! * [`editor`]: the handle ↔ property geometry behind the editor's gizmos.
// `unsafe` in the crate is allowed only where it is: the ropes' batched step and the tube's vertex
// writer calling their AVX2 builds once the processor is known to have AVX2 (`rope::batch`,
// `rope::tube`), and the batch lending a closure that borrows the caller's data to its second
// thread (`RopeBatch::run_beside`, behind `for_each_shared`), which waits until the thread is done
// with it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod clock;
pub mod editor;
pub mod env_touch;
pub mod formation;
pub mod hold_hand;
pub mod kit;
pub mod rig;
pub mod rope;
