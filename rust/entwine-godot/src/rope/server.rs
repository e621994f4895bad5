//! The rope server: every `RopeSimulation` of a world is stepped in one batch per physics tick.
//!
//! A rope registers with its world's slot when it enters the tree. Its own `physics_process` only
//! queues it (no engine call); the first rope queued in a tick schedules one deferred call, which
//! Godot runs right after every node's `_physics_process` of that tick (the scene tree flushes its
//! deferred calls there, before the physics server steps). That call, per world: gathers every
//! queued rope's anchor and end, moves the ropes into the core's [`RopeBatch`], takes the world's
//! physics space once and fills the ropes' colliders with one query per cluster of ropes (one for
//! ropes close together; see [`SharedGather`]), steps them in one call, moves them back and applies the results
//! (forces on attached bodies), and only then emits the ropes' signals, so a signal handler may use
//! any rope. Nothing here allocates once the lists have grown to the most ropes a tick has brought.
//!
//! Drawing goes the same way once per frame: a rope's `process` only queues it, and one deferred
//! call (run after every node's `_process`, before the frame is drawn) draws the queued ropes of
//! each world: each rope frames its tube, then the tubes' vertices are written (shared with the
//! world's batch thread, [`RopeBatch::for_each_shared`], when there are at least
//! [`SHARED_VERTICES`] of them), then each rope uploads its tube.

use std::cell::RefCell;

use entwine_core::rope::batch::RopeBatch;
use godot::builtin::AnyArray;
use godot::classes::{Engine, PhysicsDirectSpaceState3D, World3D};
use godot::obj::GdMut;
use godot::prelude::*;

use super::colliders::SharedGather;
use super::step::RopeFraming;
use super::{RopeSimulation, TubeVertices};
use crate::direct::{object_id_at, Alive};

/// The tube vertices a frame's drawing must write in all (about 0.2 ms of work: 64 default ropes)
/// before they are shared with the world's batch thread.
pub const SHARED_VERTICES: usize = 20_000;

/// The ropes a frame's drawing must frame (about 0.05 ms of work) before their framing is shared
/// with the world's batch thread.
pub const SHARED_FRAMINGS: usize = 64;

thread_local! {
    static SERVER: RefCell<Option<RopeServer>> = const { RefCell::new(None) };
    /// The state of [`advance_now`], kept from call to call.
    static MANUAL: RefCell<Manual> = RefCell::new(Manual::default());
}

/// [`advance_now`]'s batch, rope list, due flags, gather, and the physics spaces of its ropes'
/// worlds (numbered for the gather, emptied after each call); the room its ropes are bound in and
/// the scratch that finds a rope listed twice; the ropes of the last array it was given.
#[derive(Default)]
struct Manual {
    batch: RopeBatch,
    list: Vec<Gd<RopeSimulation>>,
    /// Each listed rope's index in the array (and in `seen`).
    from: Vec<u32>,
    seen: Seen,
    due: Vec<bool>,
    gather: SharedGather,
    spaces: Vec<(Option<InstanceId>, Option<Gd<PhysicsDirectSpaceState3D>>)>,
    bound: Bound,
    ids: Vec<(i64, u32)>,
    keep: Vec<bool>,
    /// [`draw_now`]'s room for drawing its ropes (see [`Drawing`]).
    drawing: Drawing,
}

impl Manual {
    /// Lists the live ropes of `ropes` in `list` (each once, with its index in `from`; see
    /// [`collect_ropes`] and [`drop_repeats`]).
    fn take_list(&mut self, ropes: &Array<Gd<RopeSimulation>>) {
        collect_ropes(ropes, &mut self.seen, &mut self.list, &mut self.from);
        drop_repeats(
            &mut self.list,
            &mut self.from,
            &mut self.ids,
            &mut self.keep,
        );
    }
}

/// Room for drawing a list of ropes at once (see [`draw_list`]), kept from frame to frame.
#[derive(Default)]
struct Drawing {
    bound: Bound,
    /// Each rope's tube framing, and what it gave (`None`: the rope is not drawn this time).
    framings: Vec<Option<RopeFraming<'static>>>,
    framed: Vec<Option<Option<usize>>>,
    uploads: Vec<bool>,
    vertices: Vec<TubeVertices<'static>>,
}

/// Room for one tick's ropes bound at once (empty between ticks, its capacity kept).
type Bound = Vec<GdMut<'static, RopeSimulation>>;

/// Returns `room`, emptied, as room for the same items of another lifetime (the rope guards a
/// tick binds, the tube vertices a frame writes). Items of any lifetime have the same layout, so
/// the standard library's in-place collection keeps the allocation: each tick or frame fills the
/// room the last one left, without allocating once it has grown.
fn recycle<T, U>(mut room: Vec<T>) -> Vec<U> {
    debug_assert!(
        size_of::<T>() == size_of::<U>() && align_of::<T>() == align_of::<U>(),
        "the same items in another lifetime"
    );
    room.clear();
    room.into_iter().map(|_| unreachable!("emptied")).collect()
}

/// Steps `batch` and gives each rope back to its node in `held` (bound, in the order they were
/// pushed), marking in `due` the ropes whose step left a signal to emit.
fn step_and_give_back(
    batch: &mut RopeBatch,
    gather: &SharedGather,
    held: &mut [GdMut<'_, RopeSimulation>],
    due: &mut [bool],
) {
    batch.step();
    for (k, e) in batch.drain().enumerate() {
        let owner = e.owner;
        if let (Some(r), Some(d)) = (held.get_mut(owner), due.get_mut(owner)) {
            *d |= r.end_batched(e, gather.unsupported(k));
        }
    }
}

/// The last array `advance_all` was given, element by element: the instance id each held (0 for
/// none) and the rope it was converted to. The rope is moved out into the call's list while the call
/// runs and back after it.
type Seen = Vec<(i64, Option<Gd<RopeSimulation>>)>;

/// Lists the live ropes of `ropes` in order into `list`, with each one's index in `from`: a freed
/// rope, a null or another object is passed over. An element holding the same object as last time
/// (by instance id, which Godot never gives to another object) takes its rope from `seen`: one engine
/// call for the id and one for the liveness, where converting an element to a rope takes about a
/// dozen (its type, class and liveness checks, and a copy of the variant). Others are converted
/// and remembered.
fn collect_ropes(
    ropes: &Array<Gd<RopeSimulation>>,
    seen: &mut Seen,
    list: &mut Vec<Gd<RopeSimulation>>,
    from: &mut Vec<u32>,
) {
    let elements: &AnyArray = ropes;
    list.clear();
    from.clear();
    seen.resize_with(elements.len(), || (0, None));
    for (i, (seen_id, seen_rope)) in seen.iter_mut().enumerate() {
        let id = object_id_at(ropes, i);
        if id != *seen_id || seen_rope.is_none() {
            *seen_id = id;
            *seen_rope = if id == 0 {
                None
            } else {
                elements
                    .get(i)
                    .and_then(|element| element.try_to::<Gd<RopeSimulation>>().ok())
            };
        }
        if let Some(rope) = seen_rope.take().filter(Alive::alive) {
            list.push(rope);
            from.push(i as u32);
        }
    }
}

/// Puts the ropes of `list` back where [`collect_ropes`] took them from in `seen`, unless `seen`
/// has since been filled from another array (a call made from a signal handler).
fn give_back_ropes(seen: &mut Seen, list: &mut Vec<Gd<RopeSimulation>>, from: &mut Vec<u32>) {
    for (rope, i) in list.drain(..).zip(from.drain(..)) {
        if let Some((id, slot @ None)) = seen.get_mut(i as usize) {
            if *id == rope.instance_id_unchecked().to_i64() {
                *slot = Some(rope);
            }
        }
    }
}

/// Drops the later listings of a rope listed more than once in `list` (each rope is bound once per
/// step, and a second binding while the first is held would fail), keeping the order and `from`
/// (the ropes' indices, one per rope) in step; `ids` and `keep` are scratch.
fn drop_repeats(
    list: &mut Vec<Gd<RopeSimulation>>,
    from: &mut Vec<u32>,
    ids: &mut Vec<(i64, u32)>,
    keep: &mut Vec<bool>,
) {
    ids.clear();
    ids.extend(
        list.iter()
            .enumerate()
            .map(|(i, r)| (r.instance_id_unchecked().to_i64(), i as u32)),
    );
    ids.sort_unstable();
    if ids.windows(2).all(|w| w[0].0 != w[1].0) {
        return;
    }
    keep.clear();
    keep.resize(list.len(), true);
    for w in ids.windows(2).filter(|w| w[0].0 == w[1].0) {
        keep[w[1].1 as usize] = false;
    }
    retain_kept(list, keep);
    retain_kept(from, keep);
}

/// Keeps the items of `items` whose flag in `keep` (one per item) is set, in order.
fn retain_kept<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut flags = keep.iter();
    items.retain(|_| flags.next().copied().unwrap_or(true));
}

/// The index in `spaces` of the physics space of a rope's world, the world added when it is new.
fn space_slot(
    rope: &RopeSimulation,
    registered: Option<usize>,
    spaces: &mut Vec<(Option<InstanceId>, Option<Gd<PhysicsDirectSpaceState3D>>)>,
) -> usize {
    // A new world: found through the server's slot (no engine call) or, for a rope out of the
    // tree, the node (none: no colliders).
    let here = registered
        .and_then(world_of)
        .or_else(|| rope.base().get_world_3d());
    let id = here.as_ref().map(|w| w.instance_id());
    match spaces.iter().position(|(w, _)| *w == id) {
        Some(s) => s,
        None => {
            spaces.push((id, here.and_then(|w| w.get_direct_space_state())));
            spaces.len() - 1
        }
    }
}

/// Steps `ropes` now in one batch with a time step of `dt` (`RopeSimulation.advance_all`): the
/// ropes are gathered (each world's physics space taken once, and the colliders of the ropes of a
/// world found by one query per cluster of ropes), stepped together, given back, and their signals
/// emitted. Called again from one of those signals, it steps the ropes one by one.
pub(super) fn advance_now(ropes: &Array<Gd<RopeSimulation>>, dt: f32) {
    let taken = MANUAL.with(|cell| {
        let mut m = cell.try_borrow_mut().ok()?;
        m.take_list(ropes);
        let Manual {
            batch,
            list,
            from,
            due,
            gather,
            spaces,
            bound,
            ..
        } = &mut *m;
        due.clear();
        due.resize(list.len(), false);
        gather.begin();
        spaces.clear();
        // Each rope is bound once for its gather, step and apply (nothing between them calls into
        // a rope).
        let mut held = recycle(core::mem::take(bound));
        held.extend(list.iter_mut().map(|r| r.bind_mut()));
        // The server slot each rope was registered in (its world), and the space index it gave.
        let mut last: Option<(Option<usize>, usize)> = None;
        for (i, r) in held.iter_mut().enumerate() {
            let registered = r.server_slot;
            let slot = match last {
                Some((seen, slot)) if seen == registered && registered.is_some() => slot,
                _ => {
                    let slot = space_slot(r, registered, spaces);
                    last = Some((registered, slot));
                    slot
                }
            };
            r.pending_dt = dt;
            due[i] = r.begin_batched(batch, gather, slot as u32, i);
        }
        for (s, (_, space)) in spaces.iter_mut().enumerate() {
            if let Some(space) = space.as_mut() {
                gather.run(space, s as u32, batch);
            }
        }
        gather.finish();
        // The query objects go with the call (this state outlives the engine).
        gather.release();
        spaces.clear();
        step_and_give_back(batch, gather, &mut held, due);
        *bound = recycle(held);
        Some((
            core::mem::take(list),
            core::mem::take(from),
            core::mem::take(due),
        ))
    });
    let Some((mut list, mut from, mut due)) = taken else {
        for mut rope in live_ropes(ropes) {
            rope.bind_mut().advance(dt);
        }
        return;
    };
    // Signals last, with the batch free (a handler may call this again, or free a rope).
    let mut emitted = false;
    for (rope, _) in list.iter_mut().zip(&due).filter(|(_, due)| **due) {
        if emitted && !rope.alive() {
            continue;
        }
        emitted |= rope.bind_mut().emit_step_signals();
    }
    due.clear();
    MANUAL.with(|cell| {
        if let Ok(mut m) = cell.try_borrow_mut() {
            give_back_ropes(&mut m.seen, &mut list, &mut from);
            m.list = list;
            m.from = from;
            m.due = due;
        }
    });
}

/// Returns the ropes of `ropes` that are alive, in order: a freed rope (or a null) is passed over,
/// where converting each element to a rope would fail on it.
fn live_ropes(ropes: &Array<Gd<RopeSimulation>>) -> impl Iterator<Item = Gd<RopeSimulation>> + '_ {
    let elements: &AnyArray = ropes;
    elements
        .iter_shared()
        .filter_map(|v| v.try_to::<Gd<RopeSimulation>>().ok())
        .filter(|r| r.alive())
}

/// Draws the ropes of `ropes` now, as a frame draws the ropes of a world (`RopeSimulation.refresh_meshes`;
/// see [`draw_list`]), each as `refresh_mesh` would: a rope asleep is drawn too. Freed ropes and
/// nulls are passed over and a rope listed twice is drawn once. Called again while it runs (no
/// script runs while the ropes are bound, so only from another thread's call: never), it draws the
/// ropes one by one.
pub(super) fn draw_now(ropes: &Array<Gd<RopeSimulation>>) {
    let drawn = MANUAL.with(|cell| {
        let mut m = cell.try_borrow_mut().ok()?;
        m.take_list(ropes);
        let m = &mut *m;
        // The same for every rope of the call: read once.
        let alpha = Engine::singleton().get_physics_interpolation_fraction() as f32;
        draw_list(&mut m.list, &mut m.drawing, &mut m.batch, alpha, true);
        give_back_ropes(&mut m.seen, &mut m.list, &mut m.from);
        Some(())
    });
    if drawn.is_none() {
        for mut rope in live_ropes(ropes) {
            rope.bind_mut().refresh_mesh();
        }
    }
}

/// Returns the world of server slot `slot`, `None` when the server has no such slot (or is busy).
fn world_of(slot: usize) -> Option<Gd<World3D>> {
    SERVER.with(|cell| {
        let cell = cell.try_borrow().ok()?;
        Some(cell.as_ref()?.work.get(slot)?.world.clone())
    })
}

/// Drops the rope server and the batch of [`advance_now`] (with their helper threads, see
/// `RopeBatch`), when the library is being unloaded. Ropes stepped afterwards register again.
pub(crate) fn release() {
    SERVER.with(|cell| {
        if let Ok(mut server) = cell.try_borrow_mut() {
            *server = None;
        }
    });
    MANUAL.with(|cell| {
        if let Ok(mut manual) = cell.try_borrow_mut() {
            *manual = Manual::default();
        }
    });
}

/// One world's ropes: who is due this tick, and the batch they are stepped in.
struct WorldWork {
    world: Gd<World3D>,
    pending: Vec<Gd<RopeSimulation>>,
    /// Per pending rope: whether its step left a signal to emit (only those are bound again).
    due: Vec<bool>,
    batch: RopeBatch,
    /// The colliders of the due ropes, one query per cluster of ropes, and the cutters' last poses.
    gather: SharedGather,
    /// Room for the due ropes bound at once (see [`recycle`]).
    bound: Bound,
    /// The ropes to draw this frame, and room for drawing them (see [`draw`]).
    drawing: Vec<Gd<RopeSimulation>>,
    room: Drawing,
}

/// The per-world registry (kept while any rope is in a tree).
struct RopeServer {
    /// The worlds' instance ids and their registered ropes (a slot index is a rope's handle).
    slots: Vec<(InstanceId, usize)>,
    /// Each slot's work; taken out while a flush runs.
    work: Vec<WorldWork>,
    /// Work of worlds registered while a flush runs (appended when it puts `work` back).
    incoming: Vec<WorldWork>,
    flushing: bool,
    flush: Callable,
    scheduled: bool,
    /// The frame's drawing (see [`draw`]), and whether it is scheduled.
    draw: Callable,
    draw_scheduled: bool,
    members: usize,
}

/// Registers a rope in `world`; returns its world slot.
pub(super) fn register(world: Gd<World3D>) -> usize {
    SERVER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let server = cell.get_or_insert_with(|| RopeServer {
            slots: Vec::new(),
            work: Vec::new(),
            incoming: Vec::new(),
            flushing: false,
            flush: Callable::from_fn("RopeServer.flush", |_| {
                flush();
            }),
            scheduled: false,
            draw: Callable::from_fn("RopeServer.draw", |_| {
                draw();
            }),
            draw_scheduled: false,
            members: 0,
        });
        server.members += 1;
        let id = world.instance_id();
        if let Some(slot) = server.slots.iter().position(|(w, _)| *w == id) {
            server.slots[slot].1 += 1;
            return slot;
        }
        server.slots.push((id, 1));
        let work = WorldWork {
            world,
            pending: Vec::new(),
            due: Vec::new(),
            batch: RopeBatch::default(),
            gather: SharedGather::default(),
            bound: Vec::new(),
            drawing: Vec::new(),
            room: Drawing::default(),
        };
        if server.flushing {
            server.incoming.push(work);
        } else {
            server.work.push(work);
        }
        server.slots.len() - 1
    })
}

/// Unregisters `rope` from world slot `slot` (it left the tree); the server is dropped with its last
/// rope.
pub(super) fn unregister(slot: usize, rope: &Gd<RopeSimulation>) {
    SERVER.with(|cell| {
        let Ok(mut cell) = cell.try_borrow_mut() else {
            return;
        };
        let Some(server) = cell.as_mut() else {
            return;
        };
        if let Some(s) = server.slots.get_mut(slot) {
            s.1 = s.1.saturating_sub(1);
        }
        if let Some(w) = server.work.get_mut(slot) {
            if let Some(i) = w.pending.iter().position(|r| r == rope) {
                w.pending.remove(i);
            }
            if let Some(i) = w.drawing.iter().position(|r| r == rope) {
                w.drawing.remove(i);
            }
        }
        server.members = server.members.saturating_sub(1);
        if server.members == 0 {
            *cell = None;
        }
    });
}

/// What a rope is queued for: this tick's batched step, or this frame's drawing.
#[derive(Clone, Copy)]
enum Due {
    Step,
    Draw,
}

/// Queues `rope` (registered in `slot`) for this tick's batch; schedules the batch with the first
/// one. Returns false when there is no such slot (the caller then steps the rope itself).
pub(super) fn queue(slot: usize, rope: Gd<RopeSimulation>) -> bool {
    enqueue(slot, rope, Due::Step)
}

/// Queues `rope` (registered in `slot`) for this frame's drawing; schedules the drawing with the
/// first one. Returns false when there is no such slot (the caller then draws the rope itself).
pub(super) fn queue_draw(slot: usize, rope: Gd<RopeSimulation>) -> bool {
    enqueue(slot, rope, Due::Draw)
}

/// Queues `rope` in world slot `slot` for `due`, scheduling its call with the first rope.
fn enqueue(slot: usize, rope: Gd<RopeSimulation>, due: Due) -> bool {
    SERVER.with(|cell| {
        let Ok(mut cell) = cell.try_borrow_mut() else {
            return false;
        };
        let Some(server) = cell.as_mut() else {
            return false;
        };
        let Some(w) = server.work.get_mut(slot) else {
            return false;
        };
        let (list, scheduled, call) = match due {
            Due::Step => (&mut w.pending, &mut server.scheduled, &server.flush),
            Due::Draw => (&mut w.drawing, &mut server.draw_scheduled, &server.draw),
        };
        list.push(rope);
        if !*scheduled {
            *scheduled = true;
            call.call_deferred(&[]);
        }
        true
    })
}

/// Takes every world's work out of the server for a flush (`Due::Step`) or a drawing, and clears
/// that call's schedule. `None` without a server, or while the other runs: that call is then
/// scheduled once more (a deferred call made during a flush runs after it).
fn take_work(due: Due) -> Option<Vec<WorldWork>> {
    SERVER.with(|cell| {
        let mut cell = cell.try_borrow_mut().ok()?;
        let server = cell.as_mut()?;
        let (scheduled, call) = match due {
            Due::Step => (&mut server.scheduled, &server.flush),
            Due::Draw => (&mut server.draw_scheduled, &server.draw),
        };
        if server.flushing {
            call.call_deferred(&[]);
            return None;
        }
        *scheduled = false;
        server.flushing = true;
        Some(core::mem::take(&mut server.work))
    })
}

/// Puts the work taken by [`take_work`] back, the worlds registered meanwhile after it.
fn put_back(mut work: Vec<WorldWork>) {
    SERVER.with(|cell| {
        let Ok(mut cell) = cell.try_borrow_mut() else {
            return;
        };
        if let Some(server) = cell.as_mut() {
            work.append(&mut server.incoming);
            server.work = work;
            server.flushing = false;
        }
    });
}

/// Draws every queued rope of every world (see the [module docs](self)). No signal is emitted and
/// no script runs while the ropes are bound.
fn draw() {
    let _own = crate::time::own_time(crate::time::Own::RopeSimulation);
    let Some(mut work) = take_work(Due::Draw) else {
        return;
    };
    // The same for every rope this frame: read once.
    let alpha = Engine::singleton().get_physics_interpolation_fraction() as f32;
    for w in work.iter_mut() {
        draw_world(w, alpha);
    }
    put_back(work);
}

/// Draws the queued ropes of one world: each frames its tube (and draws the rest of itself), the
/// tubes' vertices are written, shared with the batch's thread when there are many, and each
/// rope uploads its tube; `alpha` is the engine's physics interpolation fraction. Allocates nothing
/// once the lists have grown to the most ropes a frame has brought.
fn draw_world(w: &mut WorldWork, alpha: f32) {
    let WorldWork {
        drawing,
        room,
        batch,
        ..
    } = w;
    draw_list(drawing, room, batch, alpha, false);
    drawing.clear();
}

/// Draws the ropes of `ropes`: each frames its tube (and draws the rest of itself), the tubes'
/// vertices are written, shared with `batch`'s thread when there are at least [`SHARED_VERTICES`],
/// and each rope uploads its tube; `alpha` is the engine's physics interpolation fraction. With
/// `refresh`, a rope asleep and drawn where it sleeps is drawn again (as `refresh_mesh` does) and
/// a rope queued for the frame's drawing stays queued; without, the ropes are the frame's. No
/// signal is emitted and no script runs while the ropes are bound. Allocates nothing once `room`
/// has held the most ropes a call has brought.
fn draw_list(
    ropes: &mut [Gd<RopeSimulation>],
    room: &mut Drawing,
    batch: &mut RopeBatch,
    alpha: f32,
    refresh: bool,
) {
    if ropes.is_empty() {
        return;
    }
    let Drawing {
        bound,
        framings,
        framed,
        uploads,
        vertices,
    } = room;
    let mut held = recycle(core::mem::take(bound));
    held.extend(ropes.iter_mut().map(|r| r.bind_mut()));
    // Each rope's tube framing (no engine call), shared with the batch's thread when there are many.
    let mut frames = recycle(core::mem::take(framings));
    for r in held.iter_mut() {
        if refresh {
            r.drawn_asleep = false;
        } else {
            r.draw_queued = false;
        }
        frames.push(r.render_framing(alpha));
    }
    let frame = |f: &mut Option<RopeFraming<'_>>| {
        if let Some(f) = f.as_mut() {
            f.frame();
        }
    };
    if frames.len() >= SHARED_FRAMINGS {
        batch.for_each_shared(&mut frames, frame);
    } else {
        frames.iter_mut().for_each(frame);
    }
    framed.clear();
    framed.extend(frames.iter().map(|f| f.as_ref().map(|f| f.framed)));
    *framings = recycle(frames);
    uploads.clear();
    let mut writes = recycle(core::mem::take(vertices));
    let mut total = 0;
    for (r, framed) in held.iter_mut().zip(framed.iter()) {
        let due = framed.is_some_and(|framed| r.render_rest(alpha, framed));
        uploads.push(due);
        if let Some(v) = due.then(|| r.tube_vertices()).flatten() {
            total += v.count();
            writes.push(v);
        }
    }
    if total >= SHARED_VERTICES && writes.len() >= 2 {
        batch.for_each_shared(&mut writes, TubeVertices::write);
    } else {
        writes.iter_mut().for_each(TubeVertices::write);
    }
    *vertices = recycle(writes);
    for (r, _) in held.iter_mut().zip(uploads.iter()).filter(|(_, up)| **up) {
        r.render_upload();
    }
    *bound = recycle(held);
}

/// Steps every queued rope of every world: gather, one batched step per world, apply, then signals.
fn flush() {
    let _own = crate::time::own_time(crate::time::Own::RopeSimulation);
    let Some(mut work) = take_work(Due::Step) else {
        return;
    };
    for w in work.iter_mut() {
        let WorldWork {
            world,
            pending,
            due,
            batch,
            gather,
            bound,
            ..
        } = w;
        if pending.is_empty() {
            continue;
        }
        due.clear();
        due.resize(pending.len(), false);
        gather.begin();
        // Each rope is bound once for its gather, step and apply (nothing between them calls into
        // a rope; a rope is queued at most once a tick).
        let mut held = recycle(core::mem::take(bound));
        held.extend(pending.iter_mut().map(|r| r.bind_mut()));
        for (i, r) in held.iter_mut().enumerate() {
            due[i] = r.begin_batched(batch, gather, 0, i);
        }
        // The world's physics space, once per tick; one query per cluster of its ropes.
        if let Some(mut space) = world.get_direct_space_state() {
            gather.run(&mut space, 0, batch);
        }
        gather.finish();
        step_and_give_back(batch, gather, &mut held, due);
        *bound = recycle(held);
    }
    // Signals last, with the server free: a handler may add, free or drive any rope. Once one has
    // run, a rope further down the list may have been freed by it.
    let mut emitted = false;
    for w in work.iter_mut() {
        for (rope, _) in w.pending.iter_mut().zip(&w.due).filter(|(_, due)| **due) {
            if emitted && !rope.alive() {
                continue;
            }
            emitted |= rope.bind_mut().emit_step_signals();
        }
        w.pending.clear();
        w.due.clear();
    }
    put_back(work);
}
