//! Many ropes stepped together: one contiguous store of the ropes due this tick, each with its
//! colliders and inputs, stepped in one call.
//!
//! An engine's glue collects every rope due in a physics tick (its anchor, end attachment and the
//! colliders around it), moves each rope into the batch with [`RopeBatch::push`] (a rope is kept
//! boxed, so that is a pointer's move: the rope and its point buffers stay where they are), calls
//! [`RopeBatch::step`] once, and takes the ropes back with their [`StepEvents`] through
//! [`RopeBatch::drain`]. The store
//! keeps its capacity from tick to tick, so once it has held the most ropes a tick brings, a tick
//! allocates nothing (`tests/rope_batch_alloc.rs` counts).
//!
//! Each rope steps exactly as [`Rope::step`] would step it alone, bit for bit. The batch runs the
//! ropes' substeps together: in each, every rope integrates, then the constraint iterations of the
//! ropes run [`LANES`] at a time side by side (ropes grouped by point count and iteration count, see
//! [`super::lanes`]; a rope with solid colliders leaves its lane after each iteration for their
//! push-out and comes back; ropes of fewer than 3 points iterate alone), and then every rope
//! finishes its substep (tearing, strain limit, continuous collision, cutters, the loose piece).
//!
//! A large batch (at least [`SHARED_WORK`] point-iterations per substep in all) is shared with a
//! second thread where the platform has one: a thread of the batch's own (started with the first
//! large batch, ending with the batch) steps the batch's later ropes where they lie, with lists of
//! its own, while the calling thread steps the rest. Every rope's step is its own, so each gives
//! the same bits on either thread; no rope is moved for the hand-over, and it allocates nothing once
//! the helper's lists have held the most ropes it is given.
//!
//! Between steps the same thread can take other work from the batch's owner:
//! [`RopeBatch::for_each_shared`] works through a list the caller holds on both threads (an
//! engine's glue writes its ropes' tube vertices that way).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use glam::Vec3;

use super::lanes::{LaneParams, LaneSums, Lanes, LANES};
use super::{EndAttachment, Rope, StepCtx, StepEvents, Substep, World};

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
    /// The rope (boxed, so that handing it in and out of the batch moves a pointer, not the rope).
    pub rope: Box<Rope>,
    /// The colliders around it for this step.
    pub world: World,
    /// Its inputs for this step.
    pub input: StepInput,
    /// What happened during the step (default until [`RopeBatch::step`] ran).
    pub events: StepEvents,
    /// The caller's tag for this rope (e.g. its index in the caller's list), handed back unchanged.
    pub owner: usize,
}

/// The point-iterations per substep (each rope's points times its iterations, summed over the
/// batch) from which a batch is shared with a second thread: 64 ropes of 32 points and 8 iterations,
/// about 0.2 ms of work, against the tens of microseconds a hand-over to another thread can take.
pub const SHARED_WORK: usize = 64 * 32 * 8;

/// The most runs [`RopeBatch::for_each_shared`] cuts its items into.
pub const SHARED_PIECES: usize = 64;

/// The ropes due in one tick, stepped together. See the [module docs](self).
#[derive(Debug, Default)]
pub struct RopeBatch {
    entries: Vec<BatchEntry>,
    stepped: bool,
    /// The calling thread's lists for its share of a step.
    here: StepLists,
    /// The helper thread's lists for its share of a large batch's step (lent to it for the step).
    beside: StepLists,
    /// The second thread large batches are shared with: `None` until the first large batch,
    /// `Some(None)` where no thread could be started (the batch then steps everything itself).
    helper: Option<Option<Helper>>,
    /// How many steps were shared with the helper thread.
    shared_steps: u64,
}

/// The lists one thread's share of a step works in, kept from step to step with their capacity.
#[derive(Debug, Default)]
struct StepLists {
    /// Each entry's step in progress (parallel to the entries being stepped).
    work: Vec<Work>,
    /// The ropes due for lanes this substep, as sort keys (iterations, points, entry).
    order: Vec<u64>,
    lanes: Lanes,
}

/// A thread that steps part of a large batch and runs the closures of `RopeBatch::run_beside`.
/// Dropping it ends the thread and waits for it to be gone (so a library unloaded after its batches
/// were dropped leaves no thread running in its code).
#[derive(Debug)]
struct Helper {
    /// The hand-over between the two threads (a mutex and a condition variable: a wait allocates
    /// nothing, unlike a channel's first blocking receive on a thread).
    shared: Arc<HandOver>,
    thread: Option<JoinHandle<()>>,
}

/// What is on the hand-over, and the signal that it changed.
#[derive(Debug, Default)]
struct HandOver {
    job: Mutex<Job>,
    changed: Condvar,
}

/// The hand-over's content.
#[derive(Debug, Default)]
enum Job {
    /// Nothing to do.
    #[default]
    Idle,
    /// A closure of `RopeBatch::run_beside` for the thread to run.
    Run(Task),
    /// That closure has run (or panicked, which the thread caught).
    Ran,
    /// The thread is to return.
    Quit,
}

impl HandOver {
    /// Puts `job` on the hand-over and wakes the other thread.
    fn put(&self, job: Job) {
        let mut slot = self.job.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = job;
        self.changed.notify_all();
    }

    /// Hands a job's result back (that a closure ran) and wakes the other thread; returns false
    /// when the thread was told to return meanwhile, which a hand-back must not overwrite.
    fn finish(&self, result: Job) -> bool {
        let mut slot = self.job.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*slot, Job::Quit) {
            return false;
        }
        *slot = result;
        self.changed.notify_all();
        true
    }

    /// Waits until `take` accepts what is on the hand-over, leaves it `Idle` and returns what
    /// `take` made of it.
    fn wait_for<T>(&self, mut take: impl FnMut(&mut Job) -> Option<T>) -> T {
        let mut slot = self.job.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(out) = take(&mut slot) {
                return out;
            }
            slot = self
                .changed
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.shared.put(Job::Quit);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Helper {
    /// Starts the thread; `None` where the platform has no second thread to give.
    fn start() -> Option<Self> {
        if cfg!(target_family = "wasm")
            || std::thread::available_parallelism().map_or(true, |n| n.get() < 2)
        {
            return None;
        }
        let shared = Arc::new(HandOver::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("entwine-ropes".into())
            .spawn(move || loop {
                let job = theirs.wait_for(|slot| match core::mem::take(slot) {
                    job @ (Job::Run(_) | Job::Quit) => Some(job),
                    other => {
                        *slot = other;
                        None
                    }
                });
                let Job::Run(task) = job else {
                    return;
                };
                // A panic in the closure is caught here and resumed by no one: the caller only
                // waits for `Ran`.
                let _ = catch_unwind(AssertUnwindSafe(|| task.run()));
                if !theirs.finish(Job::Ran) {
                    return;
                }
            })
            .ok()?;
        Some(Self {
            shared,
            thread: Some(thread),
        })
    }
}

/// A closure of the caller's, lent to the helper thread for one `RopeBatch::run_beside`: the
/// address of an `Option<F>` on the caller's stack and the function that takes and calls it.
#[derive(Debug)]
struct Task {
    closure: *mut (),
    call: unsafe fn(*mut ()),
}

// SAFETY: a `Task` is only made by `run_beside` from a closure that is `Send`, and the `Option`
// it points to stays where it is until the helper has handed back `Ran` (see `run_beside`).
#[allow(unsafe_code)]
unsafe impl Send for Task {}

impl Task {
    /// Takes the closure out of its `Option` and calls it.
    fn run(&self) {
        // SAFETY: `call` was made for the type `closure` points to, which is alive (see `Send`).
        #[allow(unsafe_code)]
        unsafe {
            (self.call)(self.closure);
        }
    }
}

/// Takes the `F` out of the `Option<F>` at `closure` and calls it.
///
/// # Safety
/// `closure` must point to a live `Option<F>` that no other thread touches during the call.
#[allow(unsafe_code)]
unsafe fn call_lent<F: FnOnce()>(closure: *mut ()) {
    // SAFETY: as the function's contract says.
    if let Some(f) = unsafe { &mut *closure.cast::<Option<F>>() }.take() {
        f();
    }
}

/// Runs `theirs` on the thread behind `hand_over` while this thread runs `mine` (see
/// `RopeBatch::run_beside`).
fn lend<A: FnOnce() + Send, B: FnOnce()>(hand_over: &HandOver, theirs: A, mine: B) {
    let mut closure = Some(theirs);
    hand_over.put(Job::Run(Task {
        closure: core::ptr::from_mut(&mut closure).cast(),
        call: call_lent::<A>,
    }));
    // `closure` must outlive the helper's use of it: whatever `mine` does, this waits for `Ran`
    // before `closure` can go out of scope (a panic in `mine` is held until then).
    let result = catch_unwind(AssertUnwindSafe(mine));
    hand_over.wait_for(|slot| match core::mem::take(slot) {
        Job::Ran => Some(()),
        job => {
            *slot = job;
            None
        }
    });
    drop(closure);
    if let Err(panic) = result {
        resume_unwind(panic);
    }
}

/// One rope's step in progress.
#[derive(Debug)]
struct Work {
    ctx: Option<StepCtx>,
    sub: Option<Substep>,
    /// It has solid colliders: after each of its iterations in lanes, its points are pushed out of
    /// them on the rope.
    solids: bool,
}

impl RopeBatch {
    /// Returns an empty batch with room for `capacity` ropes before it allocates.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            stepped: false,
            here: StepLists {
                work: Vec::with_capacity(capacity),
                order: Vec::with_capacity(capacity),
                lanes: Lanes::default(),
            },
            beside: StepLists::default(),
            helper: None,
            shared_steps: 0,
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
    pub fn push(&mut self, rope: Box<Rope>, world: World, input: StepInput, owner: usize) {
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
    /// A large batch is shared with a second thread (see the [module docs](self)); the results are
    /// the same either way.
    pub fn step(&mut self) -> usize {
        if self.stepped {
            return 0;
        }
        let load = |e: &BatchEntry| e.rope.point_count() * e.rope.params().iterations as usize;
        let total: usize = self.entries.iter().map(load).sum();
        if total < SHARED_WORK || self.entries.len() < 2 {
            return self.step_here();
        }
        let Some(h) = self.helper.get_or_insert_with(Helper::start).as_ref() else {
            return self.step_here();
        };
        // Room for the whole batch in both lists, once: however the split moves, a step allocates
        // no more.
        let ropes = self.entries.len();
        self.here.reserve(ropes);
        self.beside.reserve(ropes);
        // The later ropes, about half the work, go to the helper thread.
        let mut head = 0;
        let mut split = self.entries.len() - 1;
        for (i, e) in self.entries.iter().enumerate() {
            head += load(e);
            if 2 * head >= total {
                split = (i + 1).min(self.entries.len() - 1);
                break;
            }
        }
        let (mine, theirs) = self.entries.split_at_mut(split);
        let (here, beside) = (&mut self.here, &mut self.beside);
        // A step does not panic; were one to, its ropes stay where they are.
        lend(
            &h.shared,
            || step_entries(theirs, beside),
            || step_entries(mine, here),
        );
        self.stepped = true;
        self.shared_steps += 1;
        self.entries.len()
    }

    /// Calls `work` on every item of `items`, sharing them with the batch's second thread (see
    /// the [module docs](self)): the items are cut into up to [`SHARED_PIECES`] runs in order, and
    /// each thread takes the next run until none is left, so a thread slow to start (a thread
    /// asleep can take a third of a millisecond to wake on a virtual machine) takes fewer, and
    /// the call ends about when the last run is done. Which thread does an item is not fixed;
    /// each item is done exactly once. Allocates nothing once the thread is running.
    pub fn for_each_shared<T: Send>(&mut self, items: &mut [T], work: impl Fn(&mut T) + Sync) {
        let per_piece = items.len().div_ceil(SHARED_PIECES).max(1);
        let mut runs = items.chunks_mut(per_piece);
        let pieces: [Mutex<Option<&mut [T]>>; SHARED_PIECES] =
            core::array::from_fn(|_| Mutex::new(runs.next()));
        let next = AtomicUsize::new(0);
        let take_runs = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(piece) = pieces.get(k) else {
                return;
            };
            let run = piece.lock().unwrap_or_else(PoisonError::into_inner).take();
            for item in run.into_iter().flatten() {
                work(item);
            }
        };
        self.run_beside(take_runs, take_runs);
    }

    /// Runs `theirs` on the batch's second thread while the calling thread runs `mine`, and
    /// returns when both have: for work between steps that borrows what the caller holds and
    /// splits in two (see the [module docs](self)). The thread is the one large batches are
    /// shared with, started here if the batch has none yet; where there is no second thread,
    /// `theirs` runs here first. Nothing is allocated once the thread is running. A panic in
    /// `mine` comes back to the caller after `theirs` has finished; one in `theirs` is caught on
    /// the helper thread and goes no further.
    fn run_beside(&mut self, theirs: impl FnOnce() + Send, mine: impl FnOnce()) {
        let helper = self.helper.get_or_insert_with(Helper::start);
        let Some(h) = helper.as_mut() else {
            let _ = catch_unwind(AssertUnwindSafe(theirs));
            mine();
            return;
        };
        lend(&h.shared, theirs, mine);
    }

    /// Steps every rope of the batch on this thread (see [`RopeBatch::step`] and
    /// [`step_entries`]).
    fn step_here(&mut self) -> usize {
        step_entries(&mut self.entries, &mut self.here);
        self.stepped = true;
        self.entries.len()
    }

    /// [`RopeBatch::step_here`] in the baseline's instructions whatever the processor has (for
    /// the test that compares the two builds).
    #[cfg(test)]
    fn step_here_any(&mut self) -> usize {
        step_entries_any(&mut self.entries, &mut self.here);
        self.stepped = true;
        self.entries.len()
    }

    /// Returns how many of this batch's steps were shared with its second thread (see the
    /// [module docs](self)); for tests and profiling.
    #[must_use]
    pub fn shared_step_count(&self) -> u64 {
        self.shared_steps
    }

    /// Returns the entries (after [`RopeBatch::step`]: with their events).
    #[must_use]
    pub fn entries(&self) -> &[BatchEntry] {
        &self.entries
    }

    /// Returns the colliders of entry `index` (in push order) to fill or change before
    /// [`RopeBatch::step`]; `None` past the last entry.
    pub fn world_mut(&mut self, index: usize) -> Option<&mut World> {
        self.entries.get_mut(index).map(|e| &mut e.world)
    }

    /// Takes every rope back out, in the order they were pushed, keeping the batch's capacity.
    pub fn drain(&mut self) -> impl Iterator<Item = BatchEntry> + '_ {
        self.stepped = false;
        self.entries.drain(..)
    }
}

impl StepLists {
    /// Makes room for `ropes` ropes (allocates only when the lists have less).
    fn reserve(&mut self, ropes: usize) {
        self.work.reserve(ropes.saturating_sub(self.work.len()));
        self.order.reserve(ropes.saturating_sub(self.order.len()));
    }
}

/// Steps every rope of `entries` on this thread in the lists `lists`, in the processor's widest
/// vector instructions: with AVX2 on an x86-64 that has it (chosen at run time; the library is
/// built for x86-64's baseline), else in the baseline's. Both give the same bits: the arithmetic is
/// the same operations in the same order (no fused multiply-add), only wider.
fn step_entries(entries: &mut [BatchEntry], lists: &mut StepLists) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor running this has AVX2 (checked just above), the only requirement
        // of a `target_feature(enable = "avx2")` function.
        #[allow(unsafe_code)]
        return unsafe { step_entries_avx2(entries, lists) };
    }
    step_entries_any(entries, lists);
}

/// [`step_entries`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn step_entries_avx2(entries: &mut [BatchEntry], lists: &mut StepLists) {
    step_entries_any(entries, lists);
}

/// The body of [`step_entries`], inlined into each of its builds.
#[inline(always)]
fn step_entries_any(entries: &mut [BatchEntry], lists: &mut StepLists) {
    let StepLists { work, order, lanes } = lists;
    work.clear();
    let mut substeps = 0;
    for e in entries.iter_mut() {
        let ctx = e
            .rope
            .begin_step(e.input.dt, e.input.anchor, e.input.end, &e.world);
        substeps = substeps.max(ctx.map_or(0, |c| c.substeps));
        work.push(Work {
            ctx,
            sub: None,
            solids: e.world.colliders().iter().any(|c| c.solid),
        });
    }
    for k in 0..substeps {
        order.clear();
        for (i, (e, w)) in entries.iter_mut().zip(work.iter_mut()).enumerate() {
            w.sub = None;
            let Some(ctx) = w.ctx.as_mut() else {
                continue;
            };
            if k >= ctx.substeps {
                continue;
            }
            w.sub = e.rope.begin_substep(ctx, k);
            let Some(sub) = w.sub else {
                continue;
            };
            if sub.n < 3 {
                e.rope.iterate(ctx, &sub, &e.world);
            } else {
                order.push((u64::from(ctx.p.iterations) << 48) | ((sub.n as u64) << 32) | i as u64);
            }
        }
        order.sort_unstable();
        for group in order.chunk_by(|a, b| a >> 32 == b >> 32) {
            for chunk in group.chunks(LANES) {
                iterate_in_lanes(chunk, entries, work, lanes);
            }
        }
        for (e, w) in entries.iter_mut().zip(work.iter_mut()) {
            if let (Some(ctx), Some(sub)) = (w.ctx.as_mut(), w.sub.as_ref()) {
                e.rope.end_substep(ctx, sub, k, &e.world);
            }
        }
    }
    for (e, w) in entries.iter_mut().zip(work.iter_mut()) {
        e.events = match w.ctx.take() {
            Some(ctx) => e.rope.finish_step(ctx),
            None => StepEvents::default(),
        };
    }
}

/// Runs the constraint iterations of the ropes `chunk` (sort keys of at most [`LANES`] entries with
/// the same point and iteration counts, each begun its substep) side by side; spare lanes repeat the
/// last rope and are dropped.
#[inline(always)]
fn iterate_in_lanes(
    chunk: &[u64],
    entries: &mut [BatchEntry],
    work: &mut [Work],
    lanes: &mut Lanes,
) {
    let entry = |key: u64| (key & 0xffff_ffff) as usize;
    let Some(&first) = chunk.first() else {
        return;
    };
    let Some((ctx, sub)) = work[entry(first)].ctx.zip(work[entry(first)].sub) else {
        return;
    };
    let (n, iterations) = (sub.n, ctx.p.iterations);
    lanes.reserve(n);
    let mut params = [LaneParams::default(); LANES];
    let mut sums = [LaneSums::default(); LANES];
    for l in 0..LANES {
        let i = entry(chunk[l.min(chunk.len() - 1)]);
        let (rope, w) = (&entries[i].rope, &work[i]);
        let (Some(ctx), Some(sub)) = (w.ctx.as_ref(), w.sub.as_ref()) else {
            return;
        };
        debug_assert!(sub.n == n && ctx.p.iterations == iterations);
        lanes.load(l, &rope.pos[..n], &rope.prev[..n]);
        let p = &ctx.p;
        params[l] = LaneParams {
            w_end: sub.w_end,
            head_rest: rope.head_rest,
            rest: p.segment_length,
            friction: ctx.friction,
            ground: p.ground_enabled,
            floor: p.ground_height + p.radius,
            free_end: sub.free_end(),
            pinned: sub.end_pin.is_some(),
        };
        sums[l] = LaneSums {
            pinned_correction: ctx.pinned_correction,
            max_lambda: ctx.max_lambda,
        };
    }
    // A rope with solid colliders leaves its lane after each iteration's ground push-out for the
    // colliders' push-out, and comes back.
    let solids = chunk.iter().any(|&key| work[entry(key)].solids);
    lanes.iterate(n, iterations, &params, &mut sums, |lanes| {
        if !solids {
            return;
        }
        for (l, &key) in chunk.iter().enumerate() {
            let i = entry(key);
            let (Some(ctx), Some(sub)) = (work[i].ctx.as_ref(), work[i].sub.as_ref()) else {
                continue;
            };
            if !work[i].solids {
                continue;
            }
            let e = &mut entries[i];
            lanes.store(l, &mut e.rope.pos[..n], &mut e.rope.prev[..n]);
            e.rope.push_out(ctx, sub, &e.world);
            lanes.load(l, &e.rope.pos[..n], &e.rope.prev[..n]);
        }
    });
    for (l, &key) in chunk.iter().enumerate() {
        let i = entry(key);
        let rope = &mut entries[i].rope;
        lanes.store(l, &mut rope.pos[..n], &mut rope.prev[..n]);
        if let Some(ctx) = work[i].ctx.as_mut() {
            ctx.pinned_correction = sums[l].pinned_correction;
            ctx.max_lambda = sums[l].max_lambda;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::Pose;
    use crate::rope::{Collider, RopeParams, Shape};
    use glam::Quat;

    /// Returns the end held by a 2 kg body where `rope`'s last point is, falling at 0.5 m/s.
    fn body_at_end(rope: &Rope) -> EndAttachment {
        EndAttachment::Body {
            position: rope.points()[rope.point_count() - 1],
            velocity: Vec3::new(0.0, -0.5, 0.0),
            mass: 2.0,
        }
    }

    /// Returns a 60 Hz frame's step input: the anchor moved to `anchor`, the far end held by `end`.
    fn frame_input(anchor: Vec3, end: EndAttachment) -> StepInput {
        StepInput {
            dt: 1.0 / 60.0,
            anchor,
            end,
        }
    }

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
        frame_input(
            Vec3::new(x + (t * 6.0).cos(), 5.0, (t * 6.0).sin()),
            EndAttachment::Free,
        )
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
        let mut held: Vec<Option<Box<Rope>>> =
            xs.iter().map(|x| Some(Box::new(rope(*x)))).collect();
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
    #[test]
    #[allow(clippy::too_many_lines)] // reason: one scenario read top to bottom
    fn ropes_side_by_side_step_exactly_as_alone() {
        // No colliders, so the ropes' iterations run in lanes: point counts shared by several ropes
        // and not (a lane group and a partial one), free, pinned and body ends, ropes on the
        // ground, growing and shrinking ropes (their point count changes between substeps), fast
        // anchors (more substeps) and a cut with its loose piece.
        let world = World::default();
        let count = 2 * crate::rope::lanes::LANES + 3;
        let setup = |i: usize| -> (Rope, f32) {
            let points = [32, 32, 12, 5, 3, 2][i % 6];
            let height = if i.is_multiple_of(4) { 1.0 } else { 6.0 };
            let params = RopeParams {
                iterations: [4, 8][i % 2],
                ..RopeParams::default()
            };
            let x = i as f32 * 0.7;
            (
                Rope::new(32, points, params, Vec3::new(x, height, 0.0), Vec3::NEG_Y),
                height,
            )
        };
        let input = |i: usize, f: usize, rope: &Rope, height: f32| -> StepInput {
            let t = f as f32 / 60.0;
            let speed = if i.is_multiple_of(5) { 20.0 } else { 6.0 };
            let x = i as f32 * 0.7;
            let anchor = Vec3::new(x + (t * speed).cos(), height, (t * speed).sin());
            let end = match i % 3 {
                0 => EndAttachment::Free,
                1 => EndAttachment::Pinned(anchor + Vec3::new(1.5, -0.5, 0.0)),
                _ => body_at_end(rope),
            };
            frame_input(anchor, end)
        };
        let mut alone: Vec<(Rope, f32)> = (0..count).map(setup).collect();
        let mut held: Vec<Option<(Box<Rope>, f32)>> = (0..count)
            .map(|i| {
                let (r, h) = setup(i);
                Some((Box::new(r), h))
            })
            .collect();
        let mut batch = RopeBatch::with_capacity(count);
        let mut lengths = 0;
        for f in 0..300 {
            let change = |i: usize, r: &mut Rope| {
                if f % 60 == 0 && i % 2 == 1 {
                    r.set_target_length(if f % 120 == 0 { 1.0 } else { 6.0 });
                }
                if f == 90 && i % 7 == 3 {
                    let _ = r.cut_at(r.point_count() / 2);
                }
            };
            let mut events_alone = Vec::new();
            for (i, (r, h)) in alone.iter_mut().enumerate() {
                change(i, r);
                let s = input(i, f, r, *h);
                events_alone.push(r.step(s.dt, s.anchor, s.end, &world));
            }
            for (i, slot) in held.iter_mut().enumerate() {
                let (mut r, h) = slot.take().expect("rope back from the batch");
                change(i, &mut r);
                let s = input(i, f, &r, h);
                batch.push(r, World::default(), s, i);
                *slot = Some((
                    Box::new(Rope::new(2, 2, RopeParams::default(), Vec3::ZERO, Vec3::Y)),
                    h,
                ));
            }
            batch.step();
            for e in batch.drain() {
                let (a, _) = &alone[e.owner];
                assert_eq!(
                    e.events, events_alone[e.owner],
                    "rope {} frame {f}",
                    e.owner
                );
                lengths += usize::from(e.events.length_reached);
                let h = held[e.owner].as_ref().expect("slot").1;
                assert_eq!(a.points(), e.rope.points(), "rope {} frame {f}", e.owner);
                assert_eq!(a.loose_points(), e.rope.loose_points());
                assert_eq!(a.tension().to_array(), e.rope.tension().to_array());
                assert_eq!(a.substeps_in_use(), e.rope.substeps_in_use());
                held[e.owner] = Some((e.rope, h));
            }
        }
        assert!(lengths > 0, "ropes reached their lengths");
        assert!(
            alone
                .iter()
                .any(|(r, _)| r.substeps_in_use() > 1 || r.loose_points().len() > 1),
            "some rope took more substeps or kept a loose piece"
        );
    }

    #[test]
    #[allow(clippy::too_many_lines)] // reason: one scenario read top to bottom
    fn the_wide_build_of_the_step_gives_the_bits_of_the_baseline_build() {
        // The same ropes through the step as dispatched (AVX2 where the processor has it) and
        // through the baseline build, frame by frame: fast and slow anchors, free, pinned and body
        // ends, point counts filling whole lane groups and not, a box under some.
        let mut boxed = World::with_capacity(1);
        boxed.push(Collider {
            pose: Pose::new(Vec3::new(4.0, 3.0, 0.0), Quat::from_rotation_y(0.4)),
            shape: Shape::Box {
                half_extents: Vec3::new(4.0, 0.2, 1.5),
            },
            solid: true,
            cutter: false,
            motion: crate::rope::Motion::NONE,
        });
        let count = 2 * crate::rope::lanes::LANES + 5;
        let make = |i: usize| {
            let params = RopeParams {
                iterations: [8, 4][i % 2],
                ..RopeParams::default()
            };
            let points = [32, 32, 17, 6][i % 4];
            Rope::new(
                32,
                points,
                params,
                Vec3::new(i as f32 * 0.5, 5.0, 0.0),
                Vec3::NEG_Y,
            )
        };
        let input = |i: usize, f: usize, rope: &Rope| {
            let t = f as f32 / 60.0;
            let speed = if i.is_multiple_of(3) { 18.0 } else { 5.0 };
            let anchor = Vec3::new(i as f32 * 0.5 + (t * speed).cos(), 5.0, (t * speed).sin());
            let end = match i % 3 {
                0 => EndAttachment::Free,
                1 => EndAttachment::Pinned(anchor + Vec3::new(1.0, -1.0, 0.0)),
                _ => body_at_end(rope),
            };
            frame_input(anchor, end)
        };
        let world = |i: usize| {
            if i % 4 == 2 {
                boxed.clone()
            } else {
                World::default()
            }
        };
        let mut wide: Vec<Option<Box<Rope>>> =
            (0..count).map(|i| Some(Box::new(make(i)))).collect();
        let mut base: Vec<Option<Box<Rope>>> =
            (0..count).map(|i| Some(Box::new(make(i)))).collect();
        let (mut a, mut b) = (RopeBatch::default(), RopeBatch::default());
        let start: Vec<Vec3> = (0..count)
            .map(|i| *make(i).points().last().expect("points"))
            .collect();
        let mut moved = 0.0_f32;
        for f in 0..240 {
            for i in 0..count {
                let r = wide[i].take().expect("rope back");
                let s = input(i, f, &r);
                a.push(r, world(i), s, i);
                let r = base[i].take().expect("rope back");
                let s = input(i, f, &r);
                b.push(r, world(i), s, i);
            }
            a.step_here();
            b.step_here_any();
            for (x, y) in a.drain().zip(b.drain()) {
                assert_eq!(x.owner, y.owner);
                assert_eq!(
                    x.rope.points(),
                    y.rope.points(),
                    "rope {} frame {f}",
                    x.owner
                );
                assert_eq!(x.events, y.events);
                assert_eq!(x.rope.tension().to_array(), y.rope.tension().to_array());
                let end = *x.rope.points().last().expect("points");
                moved = moved.max(end.distance(start[x.owner]));
                wide[x.owner] = Some(x.rope);
                base[y.owner] = Some(y.rope);
            }
        }
        assert!(moved > 0.5, "the ropes swung ({moved} m)");
        #[cfg(target_arch = "x86_64")]
        eprintln!(
            "the step as dispatched ran {}",
            if std::is_x86_feature_detected!("avx2") {
                "the AVX2 build"
            } else {
                "the baseline build (no AVX2 here)"
            }
        );
    }

    #[test]
    fn a_large_batch_shared_with_its_thread_steps_each_rope_exactly_as_alone() {
        // 80 ropes of 32 points and 8 iterations (over the shared threshold), some over a box,
        // free, pinned and body ends: each gives the same bits as stepped alone, the same events,
        // and the ropes come back in the order they went in.
        let count = 80;
        let params = RopeParams {
            iterations: 8,
            ..RopeParams::default()
        };
        let make = |i: usize| {
            let x = i as f32 * 0.7;
            Rope::new(32, 32, params, Vec3::new(x, 5.0, 0.0), Vec3::NEG_Y)
        };
        assert!(count * 32 * 8 >= SHARED_WORK);
        let mut boxed = World::with_capacity(1);
        boxed.push(Collider {
            pose: Pose::new(Vec3::new(10.0, 2.0, 0.0), Quat::from_rotation_y(0.3)),
            shape: Shape::Box {
                half_extents: Vec3::new(6.0, 0.2, 1.0),
            },
            solid: true,
            cutter: false,
            motion: crate::rope::Motion::NONE,
        });
        let world_of = |i: usize| {
            if i % 4 == 1 {
                boxed.clone()
            } else {
                World::default()
            }
        };
        let input = |i: usize, f: usize, rope: &Rope| {
            let t = f as f32 / 60.0;
            let x = i as f32 * 0.7;
            let anchor = Vec3::new(x + (t * 6.0).cos(), 5.0, (t * 6.0).sin());
            StepInput {
                dt: 1.0 / 60.0,
                anchor,
                end: match i % 3 {
                    0 => EndAttachment::Free,
                    1 => EndAttachment::Pinned(anchor + Vec3::new(1.5, -2.0, 0.0)),
                    _ => EndAttachment::Body {
                        position: rope.points()[rope.point_count() - 1],
                        velocity: Vec3::ZERO,
                        mass: 2.0,
                    },
                },
            }
        };
        let mut alone: Vec<Rope> = (0..count).map(make).collect();
        let mut held: Vec<Option<Box<Rope>>> =
            (0..count).map(|i| Some(Box::new(make(i)))).collect();
        let mut batch = RopeBatch::default();
        for f in 0..120 {
            let events: Vec<StepEvents> = alone
                .iter_mut()
                .enumerate()
                .map(|(i, r)| {
                    let s = input(i, f, r);
                    r.step(s.dt, s.anchor, s.end, &world_of(i))
                })
                .collect();
            for (i, slot) in held.iter_mut().enumerate() {
                let r = slot.take().expect("rope back from the batch");
                let s = input(i, f, &r);
                batch.push(r, world_of(i), s, i);
            }
            assert_eq!(batch.step(), count);
            for (k, e) in batch.drain().enumerate() {
                assert_eq!(e.owner, k, "the ropes come back in order");
                assert_eq!(e.events, events[k], "rope {k} frame {f}");
                assert_eq!(alone[k].points(), e.rope.points(), "rope {k} frame {f}");
                held[k] = Some(e.rope);
            }
        }
        if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
            assert_eq!(batch.shared_step_count(), 120, "every step was shared");
        }
    }

    #[test]
    #[allow(clippy::too_many_lines)] // reason: one scenario read top to bottom
    fn ropes_with_solid_colliders_step_in_lanes_exactly_as_alone() {
        // Ropes resting on and swinging against boxes (one turned), spheres and capsules, next to
        // ropes with no collider, share lanes: their points leave the lanes for the colliders'
        // push-out after every iteration and must come back with the bits they get alone. Free,
        // pinned and body ends; fast anchors take more substeps.
        use crate::kit::Pose;
        use crate::rope::{Collider, Shape};
        use glam::Quat;
        let count = 2 * crate::rope::lanes::LANES + 3;
        let home = |i: usize| Vec3::new(i as f32 * 1.5, 4.0, 0.0);
        let world_of = |i: usize| -> World {
            let mut w = World::with_capacity(4);
            let under = home(i) + Vec3::new(0.0, -3.5, 0.0);
            let boxed = |at: Vec3, turn: f32| {
                Collider::still(
                    Pose::new(at, Quat::from_rotation_z(turn)),
                    Shape::Box {
                        half_extents: Vec3::new(0.5, 0.5, 0.5),
                    },
                    true,
                    false,
                )
            };
            match i % 5 {
                0 => {
                    w.push(boxed(under, 0.0));
                }
                1 => {
                    w.push(boxed(under + Vec3::new(0.3, 0.4, 0.0), 0.4));
                }
                2 => {}
                3 => {
                    w.push(Collider::still(
                        Pose::new(under + Vec3::new(0.2, 0.3, 0.1), Quat::IDENTITY),
                        Shape::Sphere { radius: 0.6 },
                        true,
                        false,
                    ));
                }
                _ => {
                    w.push(Collider::still(
                        Pose::new(under + Vec3::Y, Quat::from_rotation_x(1.2)),
                        Shape::Capsule {
                            radius: 0.2,
                            half_height: 0.8,
                        },
                        true,
                        false,
                    ));
                    w.push(boxed(under, 0.0));
                }
            }
            w
        };
        let setup = |i: usize| -> Rope {
            let params = RopeParams {
                iterations: [4, 8][(i / 5) % 2],
                ..RopeParams::default()
            };
            Rope::new(32, [12, 12, 32][i % 3], params, home(i), Vec3::NEG_Y)
        };
        let input = |i: usize, f: usize, rope: &Rope| -> StepInput {
            let t = f as f32 / 60.0;
            let speed = if i.is_multiple_of(7) { 20.0 } else { 3.0 };
            let swing = if f < 120 { 0.0 } else { 0.6 };
            let anchor = home(i) + Vec3::new((t * speed).cos(), 0.0, (t * speed).sin()) * swing;
            let end = match i % 4 {
                0 | 1 => EndAttachment::Free,
                2 => EndAttachment::Pinned(anchor + Vec3::new(1.0, -2.0, 0.0)),
                _ => body_at_end(rope),
            };
            frame_input(anchor, end)
        };
        let worlds: Vec<World> = (0..count).map(world_of).collect();
        let mut alone: Vec<Rope> = (0..count).map(setup).collect();
        let mut held: Vec<Option<Box<Rope>>> =
            (0..count).map(|i| Some(Box::new(setup(i)))).collect();
        let mut batch = RopeBatch::with_capacity(count);
        let mut touched = 0;
        for f in 0..300 {
            let mut events_alone = Vec::new();
            for (i, r) in alone.iter_mut().enumerate() {
                let s = input(i, f, r);
                events_alone.push(r.step(s.dt, s.anchor, s.end, &worlds[i]));
            }
            for (i, slot) in held.iter_mut().enumerate() {
                let r = slot.take().expect("rope back from the batch");
                let s = input(i, f, &r);
                batch.push(r, worlds[i].clone(), s, i);
            }
            batch.step();
            for e in batch.drain() {
                let a = &alone[e.owner];
                assert_eq!(
                    e.events, events_alone[e.owner],
                    "rope {} frame {f}",
                    e.owner
                );
                assert_eq!(a.points(), e.rope.points(), "rope {} frame {f}", e.owner);
                assert_eq!(a.tension().to_array(), e.rope.tension().to_array());
                assert_eq!(a.substeps_in_use(), e.rope.substeps_in_use());
                held[e.owner] = Some(e.rope);
            }
        }
        // The colliders did hold ropes up: some point rests on top of its rope's box.
        for (i, r) in alone.iter().enumerate().filter(|(i, _)| i % 5 == 0) {
            let top = home(i).y - 3.0;
            if r.points().iter().any(|p| (p.y - top).abs() < 0.1) {
                touched += 1;
            }
        }
        assert!(touched > 0, "ropes rest on their boxes");
    }

    #[test]
    fn run_beside_runs_both_halves_on_borrowed_data_and_keeps_the_thread_for_steps() {
        let mut batch = RopeBatch::default();
        let mut values: Vec<u64> = (0..10_000).collect();
        let caller = std::thread::current().id();
        for round in 0..50_u64 {
            let (mine, theirs) = values.split_at_mut(5_000);
            let mut their_thread = None;
            batch.run_beside(
                || {
                    their_thread = Some(std::thread::current().id());
                    theirs.iter_mut().for_each(|v| *v += 2);
                },
                || mine.iter_mut().for_each(|v| *v += 1),
            );
            if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
                assert_ne!(their_thread, Some(caller), "round {round}: on the helper");
            }
            assert_eq!(values[4_999], 4_999 + round + 1);
            assert_eq!(values[5_000], 5_000 + 2 * (round + 1));
        }
        // A panic in the helper's half is caught there; one in the caller's half comes back after
        // the helper's half has run; the thread still takes work afterwards.
        let mut flag = false;
        batch.run_beside(|| panic!("in the helper's half"), || flag = true);
        assert!(flag);
        let mut done = false;
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
            batch.run_beside(|| done = true, || panic!("in the caller's half"));
        }));
        assert!(caught.is_err() && done);
        let mut ropes: Vec<Rope> = (0..80)
            .map(|i| {
                let params = RopeParams {
                    iterations: 8,
                    ..RopeParams::default()
                };
                Rope::new(32, 32, params, Vec3::new(i as f32, 5.0, 0.0), Vec3::NEG_Y)
            })
            .collect();
        for (i, r) in ropes.drain(..).enumerate() {
            batch.push(Box::new(r), World::default(), input(i as f32, 0.0), i);
        }
        assert_eq!(batch.step(), 80);
        if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
            assert_eq!(batch.shared_step_count(), 1, "the step was shared");
        }
    }

    #[test]
    fn for_each_shared_does_every_item_once_on_either_thread() {
        let mut batch = RopeBatch::default();
        let caller = std::thread::current().id();
        let mut helped = 0;
        for (round, len) in [0_usize, 1, 5, 63, 64, 65, 1000, 20_000]
            .iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            // Each item: how many times it was done, and by the calling thread or not.
            let mut items: Vec<(u32, bool, u64)> = vec![(0, false, 0); *len];
            batch.for_each_shared(&mut items, |(count, here, sum)| {
                *count += 1;
                *here = std::thread::current().id() == caller;
                // About a microsecond of work, so the other thread has time to join.
                for k in 0..200_u64 {
                    *sum = sum.wrapping_mul(31).wrapping_add(k);
                }
            });
            assert!(
                items.iter().all(|i| i.0 == 1),
                "round {round}: every item done once"
            );
            helped += items.iter().filter(|i| !i.1).count();
        }
        println!("items done by the batch's thread over the rounds: {helped}");
        if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
            // Whether the second thread wakes in time to help depends on the machine's load;
            // that it takes part at all does not: each item of the calling thread waits (up to
            // 10 s) until the other thread has done one.
            let other = std::sync::atomic::AtomicBool::new(false);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let mut items = vec![false; 1000];
            batch.for_each_shared(&mut items, |here| {
                *here = std::thread::current().id() == caller;
                if !*here {
                    other.store(true, Ordering::Release);
                    return;
                }
                while !other.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
                    std::thread::yield_now();
                }
            });
            assert!(
                items.iter().any(|here| !here),
                "the batch's thread took part"
            );
        }
    }
}
