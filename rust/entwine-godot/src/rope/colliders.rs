//! Gathers the physics bodies and areas around ropes into the core's analytic [`World`]s, once per
//! physics frame, and gives each cutter the path it took since the previous frame: from the pose it
//! had then to the pose it has now (the core's `CutterMemory`), turning about a rigid body's centre
//! of mass by the winding its angular velocity then tells, else about its origin.
//!
//! Solids and cutters are found by two queries: the bodies on a collision mask (and on no cutter
//! mask) overlapping the rope's box, and the bodies and areas on a cutter mask overlapping that box
//! grown by how far the fastest cutter moves in two steps (the core's `cutter_box`: the server finds
//! a body or an area a script moved where it was in the previous step). Every cutter in the second
//! is remembered, so one that comes near and crosses the rope within a step is known where it came
//! from; a cutter takes part in a rope's world when its path comes near the rope.
//!
//! The rope server's ropes share their queries ([`SharedGather`]): per world and tick, the due ropes'
//! boxes are grouped into clusters (boxes within 2 m of each other: the core's `CLUSTER_GAP`),
//! each cluster takes one `PhysicsDirectSpaceState3D.intersect_shape` over the union of its boxes with the OR of its
//! masks, each shape found is read and converted once, and each rope gets the shapes whose bounds
//! meet its own box, minus its exclusions and the layers off its masks. Ropes close together (the
//! usual case) thus cost one query per tick. A cluster whose query comes back full
//! ([`QUERY_LIMIT`] shapes, so some may be missing) is split in two along its longest axis and each
//! half queried again, down to one rope per query, so no rope loses a shape its own query would have
//! found. A rope stepped alone ([`Gatherer`], `advance()`) runs its own query over its box. The
//! decisions (clusters, bounds, which shapes a rope keeps, the cutters' memory) are the core's
//! `rope::gather`; this file runs the engine's queries and reads their results.

use entwine_core::kit::Pose;
use entwine_core::rope::batch::RopeBatch;
pub use entwine_core::rope::gather::MAX_COLLIDERS;
use entwine_core::rope::gather::{cutter_box, keep_nearest, Bounds, Clusters, CutterMemory};
use entwine_core::rope::{Collider, Motion, Shape, World};
use std::sync::atomic::{AtomicI64, Ordering};

use glam::Vec3;
use godot::classes::{
    Area3D, BoxShape3D, CollisionObject3D, PhysicsDirectSpaceState3D, PhysicsServer3D,
    PhysicsShapeQueryParameters3D, RigidBody3D,
};
use godot::prelude::*;

use crate::convert::{pose, vec3, vector3};

/// Most shapes one shared query returns; a cluster query that comes back with this many is split.
pub const QUERY_LIMIT: usize = 256;

/// Collider queries (`intersect_shape`) the ropes have run since the library was loaded.
static QUERIES: AtomicI64 = AtomicI64::new(0);

/// Returns how many collider queries the ropes have run since the library was loaded.
pub fn query_count() -> i64 {
    QUERIES.load(Ordering::Relaxed)
}

/// The reusable query objects, where each cutter was in the previous frame, and room for the
/// shapes found.
pub struct Gatherer {
    objects: QueryObjects,
    /// Where each cutter was in the previous frame.
    cutters: CutterMemory,
    candidates: Vec<Candidate>,
    picked: Vec<(f32, u32)>,
}

impl Gatherer {
    /// Returns a gatherer with its query shape and parameters created once.
    pub fn new() -> Self {
        Self {
            objects: QueryObjects::new(),
            cutters: CutterMemory::with_capacity(MAX_COLLIDERS),
            candidates: Vec::new(),
            picked: Vec::new(),
        }
    }

    /// Sets the bodies the query ignores (the anchor's own character).
    pub fn set_exclude(&mut self, exclude: &Array<Rid>) {
        self.objects.query.set_exclude(exclude);
    }

    /// Clears `world` and fills it with the shapes around the box `lo..hi` (world metres) whose
    /// object is on `solid_mask` (bodies: solid) or `cutter_mask` (bodies and areas: cutters, each
    /// with its path over the last `dt` seconds; see [`find`]). Returns the name of the first
    /// unsupported shape type met (concave meshes, height maps), so the caller can warn once.
    #[allow(clippy::too_many_arguments)]
    pub fn gather(
        &mut self,
        space: &mut Gd<PhysicsDirectSpaceState3D>,
        lo: Vec3,
        hi: Vec3,
        solid_mask: u32,
        cutter_mask: u32,
        dt: f32,
        world: &mut World,
    ) -> Option<&'static str> {
        world.clear();
        self.cutters.begin();
        self.candidates.clear();
        if solid_mask | cutter_mask != 0 && lo.is_finite() && hi.is_finite() {
            let masks = (solid_mask, cutter_mask);
            let found = Found {
                memory: &mut self.cutters,
                out: &mut self.candidates,
            };
            find(
                &mut self.objects,
                space,
                (lo, hi),
                masks,
                dt,
                QUERY_LIMIT,
                found,
            );
        }
        self.cutters.finish();
        let take = Request {
            entry: 0,
            space: 0,
            lo,
            hi,
            solid: solid_mask,
            cutter: cutter_mask,
            exclude: [None, None],
            dt,
        };
        pick_into(&self.candidates, &take, &mut self.picked, world)
    }
}

/// Where [`find`] puts what it finds: the cutters' paths are taken from and kept in `memory`, the
/// shapes appended to `out`.
struct Found<'a> {
    memory: &'a mut CutterMemory,
    out: &'a mut Vec<Candidate>,
}

/// Finds the shapes around the box `lo..hi` for ropes with the masks `(solid, cutter)`: the
/// bodies on `solid` and on no cutter mask overlapping the box (one query), then the bodies and
/// areas on `cutter` overlapping it grown by the cutters' reach in `dt` ([`cutter_box`]; a second
/// query), each cutter with the path it took since the last tick (see [`path`]). Returns false
/// when a query came back with `limit` shapes (some may be missing).
fn find(
    objects: &mut QueryObjects,
    space: &mut Gd<PhysicsDirectSpaceState3D>,
    (lo, hi): (Vec3, Vec3),
    (solid, cutter): (u32, u32),
    dt: f32,
    limit: usize,
    found: Found<'_>,
) -> bool {
    let mut complete = true;
    if solid != 0 {
        let hits = objects.run(space, (lo, hi), (solid, 0), limit);
        complete &= hits.len() < limit;
        for hit in hits.iter_shared() {
            let Some(hit) = read_hit(&hit, &objects.keys, solid, 0) else {
                continue;
            };
            // A shape on a cutter mask comes with the cutters (their box holds this one).
            if hit.layer & cutter == 0 {
                found.out.extend(candidate(hit, 0, found.memory, dt));
            }
        }
    }
    if cutter != 0 {
        let hits = objects.run(space, cutter_box((lo, hi), dt), (0, cutter), limit);
        complete &= hits.len() < limit;
        for hit in hits.iter_shared() {
            if let Some(hit) = read_hit(&hit, &objects.keys, solid, cutter) {
                found.out.extend(candidate(hit, cutter, found.memory, dt));
            }
        }
    }
    complete
}

/// Returns the candidate a hit makes for ropes with the cutter mask `cutter` (a cutter's path since
/// the last tick taken from `memory`), or `None` for shape data that cannot be used.
fn candidate(mut hit: Hit, cutter: u32, memory: &mut CutterMemory, dt: f32) -> Option<Candidate> {
    let described = core::mem::replace(&mut hit.described, Ok(None));
    let (shape, bounds, motion) = match described {
        Ok(Some((Shape::Trimesh(mesh), at))) => {
            let bounds = Bounds::of(&Shape::Trimesh(mesh), at);
            (Err(TRIMESH), bounds, Motion::NONE)
        }
        Ok(Some((shape, at))) => {
            let motion = if hit.layer & cutter != 0 {
                path(memory, &hit, at, dt)
            } else {
                Motion::NONE
            };
            let bounds = Bounds::swept(&shape, at, motion, dt);
            (Ok((shape, at)), bounds, motion)
        }
        Ok(None) => return None,
        Err(name) => (Err(name), Bounds::Everywhere, Motion::NONE),
    };
    Some(Candidate {
        rid: hit.rid,
        layer: hit.layer,
        is_area: hit.is_area,
        shape,
        bounds,
        motion,
    })
}

/// Returns the path the cutter shape of `hit`, now at `at`, took over the last `dt` seconds, and
/// keeps it in `memory` (see `CutterMemory::path`): a rigid body that is not frozen turns about its
/// centre of mass, and its angular velocity now (the turn of its coming physics step) picks the
/// winding of its next path; any other body or area turns about its origin, and keeps turning as
/// it did.
fn path(memory: &mut CutterMemory, hit: &Hit, at: Pose, dt: f32) -> Motion {
    let key = (hit.object.instance_id().to_i64(), hit.index);
    let origin = vec3(hit.origin);
    let rigid = hit
        .object
        .clone()
        .try_cast::<RigidBody3D>()
        .ok()
        .filter(|body| !body.is_freeze_enabled())
        .and_then(|_| PhysicsServer3D::singleton().body_get_direct_state(hit.rid));
    match rigid {
        Some(state) => {
            let centre = origin + vec3(state.get_center_of_mass());
            let spin = vec3(state.get_angular_velocity());
            memory.path(key, at, centre, Some(spin), dt)
        }
        None => memory.path(key, at, origin, None, dt),
    }
}

/// Fills `world` with the candidates the rope of `take` takes: those on its masks, not excluded,
/// whose bounds (a cutter's over its path) meet its box, the [`MAX_COLLIDERS`] nearest in a crowd
/// (in the query's order). Returns the first shape type it met that the rope does not take.
fn pick_into(
    candidates: &[Candidate],
    take: &Request,
    picked: &mut Vec<(f32, u32)>,
    world: &mut World,
) -> Option<&'static str> {
    let mut unsupported = None;
    picked.clear();
    let centre = (take.lo + take.hi) * 0.5;
    for (k, c) in candidates.iter().enumerate() {
        if take.exclude.contains(&Some(c.rid)) {
            continue;
        }
        let solid = !c.is_area && c.layer & take.solid != 0;
        let cutter = c.layer & take.cutter != 0;
        if !solid && !cutter || !c.bounds.meets(take.lo, take.hi) {
            continue;
        }
        match c.shape {
            Ok(_) => picked.push((c.bounds.distance(centre), k as u32)),
            Err(name) => {
                unsupported.get_or_insert(name);
            }
        }
    }
    // A crowd: the nearest win, kept in the query's order.
    keep_nearest(picked);
    world.clear();
    for &(_, k) in picked.iter() {
        let c = &candidates[k as usize];
        let Ok((shape, pose)) = &c.shape else {
            continue;
        };
        let cutter = c.layer & take.cutter != 0;
        world.push(Collider {
            pose: *pose,
            shape: shape.clone(),
            solid: !c.is_area && c.layer & take.solid != 0,
            cutter,
            motion: if cutter { c.motion } else { Motion::NONE },
        });
    }
    unsupported
}

/// The name of the concave shape type, which the rope's world does not take.
const TRIMESH: &str = "ConcavePolygonShape3D";

/// One shape a query returned, read once.
struct Hit {
    object: Gd<CollisionObject3D>,
    /// The body's or area's RID.
    rid: Rid,
    /// The shape's index in its object.
    index: i32,
    layer: u32,
    is_area: bool,
    /// The object's origin (world).
    origin: Vector3,
    /// The core shape and its world pose (see [`describe`]).
    described: Result<Option<(Shape, Pose)>, &'static str>,
}

/// Reads one result of `intersect_shape` (its fields looked up by `keys`): `None` when it is
/// malformed or its object is neither a solid (a body on `solid_mask`) nor a cutter (a body or an
/// area on `cutter_mask`; a query without one finds no areas).
fn read_hit(hit: &VarDictionary, keys: &HitKeys, solid_mask: u32, cutter_mask: u32) -> Option<Hit> {
    let (Some(rid), Some(index), Some(object)) = (
        hit.get(&keys.rid),
        hit.get(&keys.shape),
        hit.get(&keys.collider),
    ) else {
        return None;
    };
    let (Ok(rid), Ok(index)) = (rid.try_to::<Rid>(), index.try_to::<i32>()) else {
        return None;
    };
    let object = object.try_to::<Gd<CollisionObject3D>>().ok()?;
    let layer = object.get_collision_layer();
    let is_area = cutter_mask != 0 && object.clone().try_cast::<Area3D>().is_ok();
    let solid = !is_area && layer & solid_mask != 0;
    let cutter = layer & cutter_mask != 0;
    if !solid && !cutter {
        return None;
    }
    // The node's transform, not the server's: a kinematic body moved by a script earlier in
    // this physics frame is where the script put it (the server applies it at its step).
    let at = object.get_global_transform();
    let server = PhysicsServer3D::singleton();
    let (shape_rid, transform) = if is_area {
        (
            server.area_get_shape(rid, index),
            at * server.area_get_shape_transform(rid, index),
        )
    } else {
        (
            server.body_get_shape(rid, index),
            at * server.body_get_shape_transform(rid, index),
        )
    };
    Some(Hit {
        object,
        rid,
        index,
        layer,
        is_area,
        origin: at.origin,
        described: describe(shape_rid, transform),
    })
}

/// Returns the core shape and its world pose for a physics shape placed by `transform`, `Ok(None)`
/// for data that cannot be used, or the type's name when the type cannot be read (a concave mesh is
/// read; [`TRIMESH`] names it for the caller, as the rope's world takes the four solids and the
/// shapes it approximates by them only; see `World::push`).
fn describe(shape: Rid, transform: Transform3D) -> Result<Option<(Shape, Pose)>, &'static str> {
    let Some((shape, local)) = crate::convert::shape(shape)? else {
        return Ok(None);
    };
    // Godot physics scales shapes with their body; round shapes keep a uniform scale.
    let scaled = shape.scaled(vec3(transform.basis.get_scale()));
    Ok(Some((
        scaled,
        pose(transform).compose(crate::convert::pose_of_affine(local)),
    )))
}

/// One rope's part in a [`SharedGather`].
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// The rope's entry in the batch (push order), whose world is filled.
    pub entry: usize,
    /// The caller's number for the rope's physics space (only ropes of one space share a query).
    pub space: u32,
    /// The rope's query box (world metres, finite).
    pub lo: Vec3,
    pub hi: Vec3,
    /// Its `collision_mask` and `cutter_mask` (not both 0).
    pub solid: u32,
    pub cutter: u32,
    /// The bodies it ignores (its anchor's body, its end's body).
    pub exclude: [Option<Rid>; 2],
    /// The step's time (s), for the cutters' motion.
    pub dt: f32,
}

/// One shape of a shared query, read and converted once for all the ropes of its cluster.
struct Candidate {
    /// Its body's or area's RID (for the ropes' exclusions).
    rid: Rid,
    layer: u32,
    is_area: bool,
    /// The shape and its world pose, or the name of a type the ropes do not take.
    shape: Result<(Shape, Pose), &'static str>,
    bounds: Bounds,
    /// Its motion over the last frame when it is on a cutter mask of the cluster.
    motion: Motion,
}

/// The keys of the fields a query's result holds, made once (a key made from a string for each
/// look-up costs a string conversion every time).
struct HitKeys {
    rid: Variant,
    shape: Variant,
    collider: Variant,
}

impl HitKeys {
    fn new() -> Self {
        let key = |name: &str| GString::from(name).to_variant();
        Self {
            rid: key("rid"),
            shape: key("shape"),
            collider: key("collider"),
        }
    }
}

/// A box query's reusable objects (a [`SharedGather`] makes them when first needed).
struct QueryObjects {
    query: Gd<PhysicsShapeQueryParameters3D>,
    bounds: Gd<BoxShape3D>,
    keys: HitKeys,
}

impl QueryObjects {
    fn new() -> Self {
        let bounds = BoxShape3D::new_gd();
        let mut query = PhysicsShapeQueryParameters3D::new_gd();
        query.set_shape(&bounds);
        query.set_collide_with_bodies(true);
        Self {
            query,
            bounds,
            keys: HitKeys::new(),
        }
    }

    /// Returns the shapes on `solid | cutter` (areas only with a cutter mask) overlapping the box
    /// `lo..hi`, at most `limit`, and counts the query.
    fn run(
        &mut self,
        space: &mut Gd<PhysicsDirectSpaceState3D>,
        (lo, hi): (Vec3, Vec3),
        (solid, cutter): (u32, u32),
        limit: usize,
    ) -> Array<VarDictionary> {
        self.bounds
            .set_size(vector3((hi - lo).max(Vec3::splat(0.01))));
        self.query
            .set_transform(Transform3D::new(Basis::IDENTITY, vector3((lo + hi) * 0.5)));
        self.query.set_collision_mask(solid | cutter);
        self.query.set_collide_with_areas(cutter != 0);
        QUERIES.fetch_add(1, Ordering::Relaxed);
        space
            .intersect_shape_ex(&self.query)
            .max_results(limit as i32)
            .done()
    }
}

/// The rope server's gather: the colliders of many ropes with one query per cluster of ropes (see
/// the [module docs](self)), and where each cutter shape was in the previous tick, once for all the
/// ropes. Its buffers are kept from tick to tick: it allocates nothing once they have held the most
/// ropes and shapes a tick brings (Godot's query result aside).
#[derive(Default)]
pub struct SharedGather {
    objects: Option<QueryObjects>,
    requests: Vec<Request>,
    /// Per batch entry: the first unsupported shape type its rope met (for its warning).
    unsupported: Vec<Option<&'static str>>,
    /// The requests of the space being gathered, grouped into clusters that share a query.
    clusters: Clusters,
    candidates: Vec<Candidate>,
    /// One rope's chosen candidates: (distance, candidate).
    picked: Vec<(f32, u32)>,
    /// Where each cutter shape was in the previous tick.
    cutters: CutterMemory,
}

impl SharedGather {
    /// Starts a tick: forgets the last tick's requests; this tick's cutters will be compared with
    /// where the last tick saw them.
    pub fn begin(&mut self) {
        self.cutters.begin();
        self.requests.clear();
        self.unsupported.clear();
    }

    /// Adds a rope's request (its box must be finite).
    pub fn request(&mut self, request: Request) {
        self.requests.push(request);
    }

    /// Ends a tick: keeps where this tick saw each cutter, sorted for the next tick's look-ups.
    pub fn finish(&mut self) {
        self.cutters.finish();
    }

    /// Drops the query objects (they are made again when needed).
    pub fn release(&mut self) {
        self.objects = None;
    }

    /// Returns the first shape type not supported that entry `entry`'s rope met this tick.
    pub fn unsupported(&self, entry: usize) -> Option<&'static str> {
        self.unsupported.get(entry).copied().flatten()
    }

    /// Fills the worlds of `batch`'s entries requested in `space` (numbered `space_id`) from
    /// one query per cluster of their boxes.
    pub fn run(
        &mut self,
        space: &mut Gd<PhysicsDirectSpaceState3D>,
        space_id: u32,
        batch: &mut RopeBatch,
    ) {
        if self.unsupported.len() < batch.len() {
            self.unsupported.resize(batch.len(), None);
        }
        let space_boxes = self
            .requests
            .iter()
            .map(|r| (r.space == space_id).then_some((r.lo, r.hi)));
        self.clusters.build(space_boxes);
        while let Some(run) = self.clusters.next_run() {
            self.query(space, run, batch);
        }
    }

    /// Queries the union of the boxes of the requests in `run` and fills their worlds, or splits
    /// the run in two (queried later) when the query came back full.
    fn query(
        &mut self,
        space: &mut Gd<PhysicsDirectSpaceState3D>,
        run: (usize, usize),
        batch: &mut RopeBatch,
    ) {
        let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let (mut solid, mut cutter) = (0, 0);
        for &i in self.clusters.members(run) {
            let r = &self.requests[i as usize];
            lo = lo.min(r.lo);
            hi = hi.max(r.hi);
            solid |= r.solid;
            cutter |= r.cutter;
        }
        let dt = self.requests[self.clusters.members(run)[0] as usize].dt;
        let objects = self.objects.get_or_insert_with(QueryObjects::new);
        self.candidates.clear();
        let found = Found {
            memory: &mut self.cutters,
            out: &mut self.candidates,
        };
        let complete = find(
            objects,
            space,
            (lo, hi),
            (solid, cutter),
            dt,
            QUERY_LIMIT,
            found,
        );
        if !complete && run.1 - run.0 > 1 {
            // Full: some shapes may be missing. Split the ropes in two along the box's longest side.
            let requests = &self.requests;
            let box_of = |i: u32| (requests[i as usize].lo, requests[i as usize].hi);
            self.clusters.split(run, (lo, hi), box_of);
            return;
        }
        self.fill_worlds(run, batch);
    }

    /// Gives each rope of `run` the colliders found that meet its box, the nearest first in a crowd.
    fn fill_worlds(&mut self, run: (usize, usize), batch: &mut RopeBatch) {
        for &i in self.clusters.members(run) {
            let r = self.requests[i as usize];
            let Some(world) = batch.world_mut(r.entry) else {
                continue;
            };
            if let Some(name) = pick_into(&self.candidates, &r, &mut self.picked, world) {
                if let Some(slot) = self.unsupported.get_mut(r.entry) {
                    slot.get_or_insert(name);
                }
            }
        }
    }
}
