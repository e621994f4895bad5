//! The batched rope path allocates nothing per tick: a counting global allocator (this test binary's
//! own) watches ticks of many ropes — moved into a `RopeBatch`, stepped in one call, taken back —
//! while they swing through colliders, grow, shrink and draw their tubes (their vertices written on
//! this thread and the batch's second one, `RopeBatch::for_each_shared`); and again with a batch
//! large enough for its steps to be shared with that thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use entwine_core::kit::Pose;
use entwine_core::rope::batch::{RopeBatch, StepInput};
use entwine_core::rope::tube::VertexLayout;
use entwine_core::rope::{Collider, EndAttachment, Motion, Rope, RopeParams, Shape, Tube, World};
use glam::{Quat, Vec3};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One tick as the engine glue runs it: every rope (and its colliders) into the batch, one step,
/// every rope back, then each rope's tube drawn from its interpolated points.
#[allow(clippy::too_many_arguments)]
fn tick(
    batch: &mut RopeBatch,
    ropes: &mut [Option<Box<Rope>>],
    worlds: &mut [World],
    tubes: &mut [Drawn],
    scratch: &mut [Vec3],
    obstacle: &Collider,
    frame: usize,
) -> usize {
    let t = frame as f32 / 60.0;
    for (i, slot) in ropes.iter_mut().enumerate() {
        let Some(rope) = slot.take() else { continue };
        let mut world = core::mem::take(&mut worlds[i]);
        world.clear();
        world.push(obstacle.clone());
        let x = i as f32 * 0.7;
        let input = StepInput {
            dt: 1.0 / 60.0,
            anchor: Vec3::new(x + (t * 6.0).cos(), 4.0, (t * 6.0).sin()),
            end: if i % 3 == 0 {
                EndAttachment::Pinned(Vec3::new(x + 2.0, 1.0, 0.0))
            } else {
                EndAttachment::Free
            },
        };
        batch.push(rope, world, input, i);
    }
    let stepped = batch.step();
    for e in batch.drain() {
        ropes[e.owner] = Some(e.rope);
        worlds[e.owner] = e.world;
    }
    for slot in ropes.iter_mut() {
        let Some(rope) = slot.as_mut() else { continue };
        // Grow and shrink while stepping: the rope pays out and reels in within its capacity.
        if frame.is_multiple_of(90) {
            let target = if (frame / 90).is_multiple_of(2) {
                6.0
            } else {
                2.0
            };
            rope.set_target_length(target);
        }
    }
    // The tubes, as the glue draws many ropes: each framed here, then their vertices written into
    // the renderer's bytes on this thread and the batch's.
    for (rope, d) in ropes.iter().zip(tubes.iter_mut()) {
        if let Some(rope) = rope {
            let n = rope.interpolated(0.5, scratch);
            d.tube.frame(&scratch[..n], 0.03, 0);
        }
    }
    batch.for_each_shared(tubes, |d| {
        d.tube
            .write_vertices(&LAYOUT, &mut d.positions, &mut d.normals);
    });
    stepped
}

/// Godot's vertex layout: 12-byte positions, then 8-byte octahedral normals and tangents.
const LAYOUT: VertexLayout = VertexLayout {
    position_stride: 12,
    normal_stride: 8,
    normal_offset: 0,
    tangent_offset: Some(4),
};

/// A rope's tube and the renderer's bytes its vertices are written to.
struct Drawn {
    tube: Tube,
    positions: Vec<u8>,
    normals: Vec<u8>,
}

#[test]
fn a_tick_of_many_ropes_allocates_nothing() {
    // One test (the counter is global): 64 ropes of 12 to 32 points, stepped on one thread or
    // shared; then 96 ropes starting at 32 points, shared while they are long.
    let (allocations, _) = allocations_in_ticks(64, 12);
    assert_eq!(
        allocations, 0,
        "{allocations} allocations in 240 ticks of 64 ropes"
    );
    let (allocations, shared_steps) = allocations_in_ticks(96, 32);
    assert_eq!(
        allocations, 0,
        "{allocations} allocations in 240 ticks of 96 ropes"
    );
    if std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) && !cfg!(miri) {
        assert!(
            shared_steps > 0,
            "the large batch was shared with the batch's thread"
        );
    }
}

/// Runs 30 ticks of `count` ropes starting with `points` points, then counts the allocations of
/// the next 240; returns them and how many of those ticks the batch shared with its thread.
fn allocations_in_ticks(count: usize, points: usize) -> (usize, u64) {
    let params = RopeParams {
        iterations: 8,
        ..RopeParams::default()
    };
    let mut ropes: Vec<Option<Box<Rope>>> = (0..count)
        .map(|i| {
            Some(Box::new(Rope::new(
                32,
                points,
                params,
                Vec3::new(i as f32 * 0.7, 4.0, 0.0),
                Vec3::NEG_Y,
            )))
        })
        .collect();
    let mut worlds: Vec<World> = (0..count).map(|_| World::with_capacity(32)).collect();
    let mut tubes: Vec<Drawn> = (0..count)
        .map(|_| {
            let tube = Tube::new(32, 8, 3);
            let vertices = tube.vertex_count();
            Drawn {
                tube,
                positions: vec![0; vertices * LAYOUT.position_stride],
                normals: vec![0; vertices * LAYOUT.normal_stride],
            }
        })
        .collect();
    let mut scratch = vec![Vec3::ZERO; 32];
    let mut batch = RopeBatch::with_capacity(count);
    // A box the swinging ropes strike, so the collision paths run too.
    let obstacle = Collider {
        pose: Pose::new(Vec3::new(20.0, 2.5, 0.0), Quat::from_rotation_y(0.4)),
        shape: Shape::Box {
            half_extents: Vec3::new(30.0, 0.2, 0.5),
        },
        solid: true,
        cutter: false,
        motion: Motion::NONE,
    };
    // Runs the ticks of `frames` in order; returns how many rope steps they took and how many of
    // the batch's steps have been shared with its thread so far.
    let mut run_ticks = |frames: core::ops::Range<usize>| {
        let mut stepped = 0;
        for f in frames {
            stepped += tick(
                &mut batch,
                &mut ropes,
                &mut worlds,
                &mut tubes,
                &mut scratch,
                &obstacle,
                f,
            );
        }
        (stepped, batch.shared_step_count())
    };
    // Warm-up: the first ticks may size internal buffers.
    let (_, shared_before) = run_ticks(0..30);
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let (stepped, shared_after) = run_ticks(30..270);
    COUNTING.store(false, Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let shared_steps = shared_after - shared_before;
    assert_eq!(stepped, count * 240, "every rope stepped every tick");
    // The counter itself works: an allocation while counting is seen.
    COUNTING.store(true, Ordering::Relaxed);
    let probe = std::hint::black_box(vec![1_u8; 64]);
    COUNTING.store(false, Ordering::Relaxed);
    drop(probe);
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), allocations + 1);
    // The ropes did what ropes do: they grew, and the box held them up.
    let mut longest: f32 = 0.0;
    let mut resting_on_box = 0;
    for r in ropes.iter().flatten() {
        longest = longest.max(r.length());
        if r.points().iter().any(|p| (p.y - 2.73).abs() < 0.05) {
            resting_on_box += 1;
        }
    }
    assert!(longest > 4.0, "ropes grew (longest {longest} m)");
    assert!(resting_on_box > 0, "some rope lay on the box");
    (allocations, shared_steps)
}
