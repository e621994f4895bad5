//! Many ropes stepped together: one contiguous store of the ropes due this tick, each with its
//! colliders and inputs, stepped in one call.
//!
//! An engine's glue collects every rope due in a physics tick (its anchor, end attachment and the
//! colliders around it), moves each rope's state into the batch with [`RopeBatch::push`] (a move of
//! the rope's fixed-size header: its point buffers stay where they are), calls [`RopeBatch::step`]
//! once, and takes the ropes back with their [`StepEvents`] through [`RopeBatch::drain`]. The store
//! keeps its capacity from tick to tick, so once it has held the most ropes a tick brings, a tick
//! allocates nothing (`tests/rope_batch_alloc.rs` counts).
//!
//! Each rope steps exactly as [`Rope::step`] would step it alone, in the order the ropes were pushed.

use glam::Vec3;

use super::{EndAttachment, Rope, StepEvents, World};

/// One rope's inputs for a step: the time step, the anchor and the end attachment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepInput {
    /// Seconds to advance.
    pub dt: f32,
    /// Where the anchor is now (world metres).
    pub anchor: Vec3,
    /// What the far end is attached to this step.
    pub end: EndAttachment,
}

/// A rope in the batch, with its colliders, inputs and (after [`RopeBatch::step`]) what happened.
#[derive(Debug)]
pub struct BatchEntry {
    /// The rope.
    pub rope: Rope,
    /// The colliders around it for this step.
    pub world: World,
    /// Its inputs for this step.
    pub input: StepInput,
    /// What happened during the step (default until [`RopeBatch::step`] ran).
    pub events: StepEvents,
    /// The caller's tag for this rope (e.g. its index in the caller's list), handed back unchanged.
    pub owner: usize,
}

/// The ropes due in one tick, stepped together. See the [module docs](self).
#[derive(Debug, Default)]
pub struct RopeBatch {
    entries: Vec<BatchEntry>,
    stepped: bool,
}

impl RopeBatch {
    /// Returns an empty batch with room for `capacity` ropes before it allocates.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            stepped: false,
        }
    }

    /// Returns the number of ropes waiting in the batch.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns true when no rope waits in the batch.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Returns how many ropes the batch holds without allocating.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Adds `rope` with its colliders and inputs for the next [`RopeBatch::step`], tagged `owner`.
    /// Allocates only when the batch holds more ropes than it ever has.
    pub fn push(&mut self, rope: Rope, world: World, input: StepInput, owner: usize) {
        self.entries.push(BatchEntry {
            rope,
            world,
            input,
            events: StepEvents::default(),
            owner,
        });
        self.stepped = false;
    }

    /// Steps every rope in the batch once with its own inputs and colliders, in the order they were
    /// pushed; returns how many were stepped. A second call before [`RopeBatch::drain`] does nothing.
    pub fn step(&mut self) -> usize {
        if self.stepped {
            return 0;
        }
        for e in &mut self.entries {
            e.events = e
                .rope
                .step(e.input.dt, e.input.anchor, e.input.end, &e.world);
        }
        self.stepped = true;
        self.entries.len()
    }

    /// Returns the entries (after [`RopeBatch::step`]: with their events).
    #[must_use]
    pub fn entries(&self) -> &[BatchEntry] {
        &self.entries
    }

    /// Takes every rope back out, in the order they were pushed, keeping the batch's capacity.
    pub fn drain(&mut self) -> impl Iterator<Item = BatchEntry> + '_ {
        self.stepped = false;
        self.entries.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::Pose;
    use crate::rope::{Collider, RopeParams, Shape};
    use glam::Quat;

    fn rope(x: f32) -> Rope {
        Rope::new(
            32,
            12,
            RopeParams::default(),
            Vec3::new(x, 5.0, 0.0),
            Vec3::NEG_Y,
        )
    }

    fn input(x: f32, t: f32) -> StepInput {
        StepInput {
            dt: 1.0 / 60.0,
            anchor: Vec3::new(x + (t * 6.0).cos(), 5.0, (t * 6.0).sin()),
            end: EndAttachment::Free,
        }
    }

    #[test]
    fn a_batch_steps_each_rope_exactly_as_it_steps_alone() {
        // Ropes swinging over a box: some touch it, so the colliders matter.
        let mut world = World::with_capacity(4);
        world.push(Collider {
            pose: Pose::new(Vec3::new(0.75, 2.5, 0.0), Quat::IDENTITY),
            shape: Shape::Box {
                half_extents: Vec3::new(2.5, 0.2, 2.0),
            },
            solid: true,
            cutter: false,
            motion: crate::rope::Motion::NONE,
        });
        let xs = [0.0_f32, 0.5, 1.0, 1.5];
        let mut alone: Vec<Rope> = xs.iter().map(|x| rope(*x)).collect();
        let mut held: Vec<Option<Rope>> = xs.iter().map(|x| Some(rope(*x))).collect();
        let mut worlds: Vec<World> = xs.iter().map(|_| world.clone()).collect();
        let mut batch = RopeBatch::with_capacity(xs.len());
        // The first rope once more, without the box: the box must make a difference.
        let mut no_box = rope(xs[0]);
        for f in 0..240 {
            let t = f as f32 / 60.0;
            let s = input(xs[0], t);
            no_box.step(s.dt, s.anchor, s.end, &World::default());
            for (i, r) in alone.iter_mut().enumerate() {
                let s = input(xs[i], t);
                r.step(s.dt, s.anchor, s.end, &world);
            }
            for (i, slot) in held.iter_mut().enumerate() {
                let r = slot.take().expect("rope back from the batch");
                let w = core::mem::take(&mut worlds[i]);
                batch.push(r, w, input(xs[i], t), i);
            }
            assert_eq!(batch.step(), xs.len());
            assert_eq!(
                batch.step(),
                0,
                "a second step before draining does nothing"
            );
            for e in batch.drain() {
                held[e.owner] = Some(e.rope);
                worlds[e.owner] = e.world;
            }
            assert!(batch.is_empty());
        }
        for (a, b) in alone.iter().zip(&held) {
            let b = b.as_ref().expect("rope");
            assert_eq!(a.points(), b.points(), "bit for bit");
        }
        let moved = no_box
            .points()
            .iter()
            .zip(alone[0].points())
            .map(|(a, b)| a.distance(*b))
            .fold(0.0_f32, f32::max);
        assert!(moved > 0.05, "the box changed the rope's path ({moved} m)");
    }
}
