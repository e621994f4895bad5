//! The per-frame engine calls Entwine makes on objects it keeps (the skeleton of a bone pass, a
//! body it moves, a node it reads, a rope's tube and the engine's singletons), made straight
//! through the engine's method binds.
//!
//! A call through gdext first checks that the object is still alive (a look-up in Godot's object
//! database) and, a few times over, that it runs on the main thread. On an object already found
//! alive for the work at hand those checks cannot fail, yet they were about a third of a bone
//! pass's own time (docs/perf-notes/2026-12-03-gdext-checks-direct-calls.md). [`Lent`] checks once
//! that the object is alive (the same look-up gdext makes) and then makes the same engine calls
//! without the checks, for as long as it is lent: within one pass or one tick, in which nothing
//! frees the object (no script runs between the calls, and a node is freed at the end of the frame
//! when a script asks). Where the method binds could not be loaded (an engine whose API lacks one;
//! warned once at start), it makes the calls through gdext instead, with the same results.
//!
//! The look-up itself ([`Alive`]) and the read of the objects an array holds
//! ([`object_id_at`]) go through the engine's interface directly as well: gdext's
//! `is_instance_valid` calls a utility function after its main-thread checks, and reading an
//! array's element copies it out (a copy and a drop, each an engine call with those checks).

use std::sync::OnceLock;

use godot::classes::{
    CharacterBody3D, Engine, GeometryInstance3D, Node, Node3D, RenderingServer, Skeleton3D,
    SkeletonModifier3D,
};
use godot::obj::Inherits;
use godot::prelude::*;
use godot::sys::{self, GodotFfi};

/// The engine's method binds for the calls [`Lent`] makes, and its ptrcall entry.
struct Calls {
    ptrcall: sys::GDExtensionInterfaceObjectMethodBindPtrcall,
    object_from_id: sys::GDExtensionInterfaceObjectGetInstanceFromId,
    array_element: sys::GDExtensionInterfaceArrayOperatorIndexConst,
    variant_object_id: sys::GDExtensionInterfaceVariantGetObjectInstanceId,
    bytes_at: sys::GDExtensionInterfacePackedByteArrayOperatorIndex,
    bytes_size: unsafe extern "C" fn(
        sys::GDExtensionTypePtr,
        *const sys::GDExtensionConstTypePtr,
        sys::GDExtensionTypePtr,
        i32,
    ),
    get_bone_global_pose: sys::GDExtensionMethodBindPtr,
    set_bone_global_pose: sys::GDExtensionMethodBindPtr,
    set_bone_pose_rotation: sys::GDExtensionMethodBindPtr,
    set_bone_pose_position: sys::GDExtensionMethodBindPtr,
    get_bone_count: sys::GDExtensionMethodBindPtr,
    get_global_transform: sys::GDExtensionMethodBindPtr,
    set_global_transform: sys::GDExtensionMethodBindPtr,
    set_velocity: sys::GDExtensionMethodBindPtr,
    move_and_slide: sys::GDExtensionMethodBindPtr,
    mesh_surface_update_vertex_region: sys::GDExtensionMethodBindPtr,
    set_custom_aabb: sys::GDExtensionMethodBindPtr,
    get_physics_interpolation_fraction: sys::GDExtensionMethodBindPtr,
    is_inside_tree: sys::GDExtensionMethodBindPtr,
    modifier_is_active: sys::GDExtensionMethodBindPtr,
    modifier_set_active: sys::GDExtensionMethodBindPtr,
}

// SAFETY: the method binds are the engine's, valid for the process and not tied to a thread (the
// engine's own code calls them from any thread); using them takes `unsafe` and a live object.
unsafe impl Send for Calls {}
// SAFETY: as above; the struct is never written after it is made.
unsafe impl Sync for Calls {}

static CALLS: OnceLock<Option<Calls>> = OnceLock::new();

/// Loads the method binds (at the scene stage of the library's start, on the main thread).
/// Without one of them, [`Lent`] goes through gdext (warned once).
pub fn load() {
    let loaded = CALLS.get_or_init(|| {
        // The hashes are the methods' signatures in Godot's extension API (stable across
        // versions: a changed signature gets a new hash and the old one keeps working).
        let skeleton = StringName::from("Skeleton3D");
        let node = StringName::from("Node3D");
        let body = StringName::from("CharacterBody3D");
        let server = StringName::from("RenderingServer");
        let geometry = StringName::from("GeometryInstance3D");
        let engine = StringName::from("Engine");
        let node_class = StringName::from("Node");
        let modifier = StringName::from("SkeletonModifier3D");
        // SAFETY: the library is initialised (this runs from its init callback, on the main
        // thread); the names are live StringNames for the call's duration.
        unsafe {
            let interface = sys::get_interface();
            let bind = |class: &StringName, method: &str, hash: i64| {
                let method = StringName::from(method);
                let ptr = (interface.classdb_get_method_bind)(
                    class.string_sys(),
                    method.string_sys(),
                    hash,
                );
                (!ptr.is_null()).then_some(ptr)
            };
            Some(Calls {
                ptrcall: interface.object_method_bind_ptrcall,
                object_from_id: interface.object_get_instance_from_id,
                array_element: interface.array_operator_index_const,
                variant_object_id: interface.variant_get_object_instance_id,
                bytes_at: interface.packed_byte_array_operator_index,
                bytes_size: {
                    let size = StringName::from("size");
                    (interface.variant_get_ptr_builtin_method)(
                        sys::GDEXTENSION_VARIANT_TYPE_PACKED_BYTE_ARRAY,
                        size.string_sys(),
                        3173160232,
                    )?
                },
                get_bone_global_pose: bind(&skeleton, "get_bone_global_pose", 1965739696)?,
                set_bone_global_pose: bind(&skeleton, "set_bone_global_pose", 3616898986)?,
                set_bone_pose_rotation: bind(&skeleton, "set_bone_pose_rotation", 2823819782)?,
                set_bone_pose_position: bind(&skeleton, "set_bone_pose_position", 1530502735)?,
                get_bone_count: bind(&skeleton, "get_bone_count", 3905245786)?,
                get_global_transform: bind(&node, "get_global_transform", 3229777777)?,
                set_global_transform: bind(&node, "set_global_transform", 2952846383)?,
                set_velocity: bind(&body, "set_velocity", 3460891852)?,
                move_and_slide: bind(&body, "move_and_slide", 2240911060)?,
                mesh_surface_update_vertex_region: bind(
                    &server,
                    "mesh_surface_update_vertex_region",
                    2900195149,
                )?,
                set_custom_aabb: bind(&geometry, "set_custom_aabb", 259215842)?,
                get_physics_interpolation_fraction: bind(
                    &engine,
                    "get_physics_interpolation_fraction",
                    1740695150,
                )?,
                is_inside_tree: bind(&node_class, "is_inside_tree", 36873697)?,
                modifier_is_active: bind(&modifier, "is_active", 36873697)?,
                modifier_set_active: bind(&modifier, "set_active", 2586408642)?,
            })
        }
    });
    if loaded.is_none() {
        godot_warn!(
            "Entwine: this engine lacks a method Entwine calls directly every frame (on Node, Skeleton3D, SkeletonModifier3D, Node3D, CharacterBody3D, RenderingServer, GeometryInstance3D or Engine); those calls go through gdext's checked path instead (same results, slower)"
        );
    }
}

/// Whether `a` and `b` hold the same engine data: one is a copy of the other (a property's path
/// and the copy kept of it), so they are equal. Comparing two paths' contents is an engine call
/// (through gdext's checks); this compares their handles. False says nothing: compare them then.
pub fn shares_data(a: &NodePath, b: &NodePath) -> bool {
    const SIZE: usize = std::mem::size_of::<NodePath>();
    // SAFETY: both point at live NodePaths, whose engine storage is SIZE bytes (a handle to the
    // shared, reference-counted data); the bytes are only read.
    unsafe {
        let a = std::slice::from_raw_parts(a.sys().cast::<u8>(), SIZE);
        let b = std::slice::from_raw_parts(b.sys().cast::<u8>(), SIZE);
        a == b
    }
}

/// Whether a handle's object is alive: one look-up of its instance id in the engine's object
/// database, which is what gdext's `is_instance_valid` makes (through a utility function, after its
/// main-thread checks).
pub trait Alive {
    /// Whether the object is alive.
    fn alive(&self) -> bool;
}

impl<T: GodotClass> Alive for Gd<T> {
    fn alive(&self) -> bool {
        let Some(look_up) = CALLS
            .get()
            .and_then(Option::as_ref)
            .map(|c| c.object_from_id)
        else {
            return self.is_instance_valid();
        };
        let id = self.instance_id_unchecked().to_i64() as u64;
        // SAFETY: the engine's look-up takes any id and returns null for one that names no live
        // object.
        unsafe { !look_up(id).is_null() }
    }
}

/// The instance id of the object held at `index` of `array` (0 for no object, or past the end),
/// read in place: the element is not copied out (a copy and its drop are two engine calls, each
/// through gdext's main-thread checks).
pub fn object_id_at<T: godot::meta::Element>(array: &Array<T>, index: usize) -> i64 {
    let calls = CALLS.get().and_then(Option::as_ref);
    let Some((element_at, object_id)) = calls.map(|c| (c.array_element, c.variant_object_id))
    else {
        let element = array.get(index).map(|e| e.to_variant());
        return element
            .and_then(|e| e.object_id_unchecked())
            .map_or(0, |id| id.to_i64());
    };
    let Ok(index) = i64::try_from(index) else {
        return 0;
    };
    // SAFETY: `array` is a live array; the engine returns null for an index out of its bounds, and
    // reads the id of any variant (0 for one that holds no object) without changing it.
    unsafe {
        let element = element_at(array.sys(), index);
        if element.is_null() {
            return 0;
        }
        object_id(element.cast_const()) as i64
    }
}

/// The bytes of `array`, to write in place: its size and a pointer to its storage (made its own
/// first if the storage is shared, as Godot's copy-on-write does for any write) read through the
/// engine's interface directly, where gdext's `as_mut_slice` makes three engine calls, each after
/// its main-thread checks.
pub fn bytes_mut(array: &mut PackedByteArray) -> &mut [u8] {
    let Some(calls) = CALLS.get().and_then(Option::as_ref) else {
        return array.as_mut_slice();
    };
    let mut size = 0i64;
    // SAFETY: `array` is a live PackedByteArray; `size` takes no argument and returns an int
    // (an int64).
    unsafe {
        (calls.bytes_size)(array.sys_mut(), std::ptr::null(), (&raw mut size).cast(), 0);
    }
    let Ok(len @ 1..) = usize::try_from(size) else {
        return &mut [];
    };
    // SAFETY: the engine returns a pointer to the array's first byte (after making its storage
    // unique), or null for an index out of bounds; the array holds `len` initialised bytes, and
    // the slice borrows the array mutably, so nothing else resizes or reads it meanwhile.
    unsafe {
        let first = (calls.bytes_at)(array.sys_mut(), 0);
        if first.is_null() {
            return &mut [];
        }
        std::slice::from_raw_parts_mut(first, len)
    }
}

/// An object found alive, lent for a pass or a tick (see the [module docs](self)).
pub struct Lent<'a, T: GodotClass> {
    object: &'a Gd<T>,
    /// The object's pointer and the binds, when the direct calls are available.
    direct: Option<(sys::GDExtensionObjectPtr, &'static Calls)>,
}

impl<'a, T: GodotClass> Lent<'a, T> {
    /// Lends `object` if it is alive (one look-up in the object database, as gdext's own check);
    /// `None` when it has been freed. The caller keeps it alive while lent: nothing it does
    /// with the object in between frees it.
    pub fn new(object: &'a Gd<T>) -> Option<Self> {
        if !object.alive() {
            return None;
        }
        let direct = CALLS
            .get()
            .and_then(Option::as_ref)
            .map(|calls| (object.obj_sys(), calls));
        Some(Self { object, direct })
    }

    /// Lends `object`, which the caller has found alive for the work at hand (a node checked once
    /// per tick), without looking it up again.
    ///
    /// # Safety
    /// `object` is alive, and nothing frees it while it is lent.
    pub unsafe fn assume_alive(object: &'a Gd<T>) -> Self {
        let direct = CALLS
            .get()
            .and_then(Option::as_ref)
            .map(|calls| (object.obj_sys(), calls));
        Self { object, direct }
    }

    /// The object lent, for the calls [`Lent`] does not make.
    pub fn object(&self) -> &'a Gd<T> {
        self.object
    }

    /// Calls the method `bind` picks on the object with `args` (each a pointer to its value in
    /// the engine's ptrcall layout: an int as an int64, a bool as a byte, a vector, quaternion,
    /// transform or box as gdext's type) for no result; false (nothing called) when the direct
    /// calls are unavailable, for the caller to go through gdext.
    ///
    /// # Safety
    /// The method must belong to the object's class, take exactly `args` and return nothing.
    unsafe fn send(
        &self,
        bind: fn(&Calls) -> sys::GDExtensionMethodBindPtr,
        args: &[sys::GDExtensionConstTypePtr],
    ) -> bool {
        let Some((object, calls)) = self.direct else {
            return false;
        };
        // SAFETY: the object is alive (found so in `new`, or by the caller of `assume_alive`, and
        // kept alive while lent); the rest is the caller's contract.
        unsafe { (calls.ptrcall)(bind(calls), object, args.as_ptr(), std::ptr::null_mut()) };
        true
    }

    /// As [`Self::send`], for a method returning an `R` (in its ptrcall layout); `None` when the
    /// direct calls are unavailable.
    ///
    /// # Safety
    /// The method must belong to the object's class, take exactly `args` and return an `R`.
    unsafe fn fetch<R: Copy>(
        &self,
        bind: fn(&Calls) -> sys::GDExtensionMethodBindPtr,
        args: &[sys::GDExtensionConstTypePtr],
        mut out: R,
    ) -> Option<R> {
        let (object, calls) = self.direct?;
        let ret = &mut out as *mut R as sys::GDExtensionTypePtr;
        // SAFETY: as in `send`.
        unsafe { (calls.ptrcall)(bind(calls), object, args.as_ptr(), ret) };
        Some(out)
    }
}

/// A pointer to `value` as a ptrcall argument.
fn arg<V>(value: &V) -> sys::GDExtensionConstTypePtr {
    value as *const V as sys::GDExtensionConstTypePtr
}

impl<T: Inherits<Node>> Lent<'_, T> {
    /// `Node.is_inside_tree()`.
    pub fn is_inside_tree(&self) -> bool {
        // SAFETY: a Node's method: no argument, a bool (a byte) out.
        match unsafe { self.fetch(|c| c.is_inside_tree, &[], 0u8) } {
            Some(inside) => inside != 0,
            None => self.object.upcast_ref::<Node>().is_inside_tree(),
        }
    }
}

impl<T: Inherits<Node3D>> Lent<'_, T> {
    /// `Node3D.get_global_transform()`.
    pub fn global_transform(&self) -> Transform3D {
        // SAFETY: a Node3D's method: no argument, a Transform3D out.
        unsafe { self.fetch(|c| c.get_global_transform, &[], Transform3D::IDENTITY) }
            .unwrap_or_else(|| self.object.upcast_ref::<Node3D>().get_global_transform())
    }

    /// `Node3D.set_global_transform(transform)`.
    pub fn set_global_transform(&self, transform: Transform3D) {
        // SAFETY: a Node3D's method: a Transform3D in, nothing out.
        if !unsafe { self.send(|c| c.set_global_transform, &[arg(&transform)]) } {
            let mut node = self.object.clone().upcast::<Node3D>();
            node.set_global_transform(transform);
        }
    }
}

impl Lent<'_, Skeleton3D> {
    /// `Skeleton3D.get_bone_global_pose(bone)`.
    pub fn global_pose(&self, bone: i32) -> Transform3D {
        let index = i64::from(bone);
        // SAFETY: a Skeleton3D's method: an int in, a Transform3D out.
        unsafe {
            self.fetch(
                |c| c.get_bone_global_pose,
                &[arg(&index)],
                Transform3D::IDENTITY,
            )
        }
        .unwrap_or_else(|| self.object.get_bone_global_pose(bone))
    }

    /// `Skeleton3D.get_bone_count()`.
    pub fn bone_count(&self) -> i32 {
        // SAFETY: a Skeleton3D's method: no argument, an int (an int64) out.
        match unsafe { self.fetch(|c| c.get_bone_count, &[], 0i64) } {
            Some(count) => i32::try_from(count).unwrap_or(0),
            None => self.object.get_bone_count(),
        }
    }

    /// What bones resolved by name on the skeleton depend on: which skeleton it is and how many
    /// bones it has (a changed key means resolving them again).
    pub fn rig_key(&self) -> (InstanceId, i32) {
        (self.object.instance_id_unchecked(), self.bone_count())
    }

    /// `Skeleton3D.set_bone_global_pose(bone, pose)`.
    pub fn set_global_pose(&mut self, bone: i32, pose: Transform3D) {
        let index = i64::from(bone);
        // SAFETY: a Skeleton3D's method: an int and a Transform3D in, nothing out.
        if !unsafe { self.send(|c| c.set_bone_global_pose, &[arg(&index), arg(&pose)]) } {
            self.object.clone().set_bone_global_pose(bone, pose);
        }
    }

    /// `Skeleton3D.set_bone_pose_rotation(bone, rotation)`.
    pub fn set_pose_rotation(&mut self, bone: i32, rotation: Quaternion) {
        let index = i64::from(bone);
        // SAFETY: a Skeleton3D's method: an int and a Quaternion in, nothing out.
        if !unsafe { self.send(|c| c.set_bone_pose_rotation, &[arg(&index), arg(&rotation)]) } {
            self.object.clone().set_bone_pose_rotation(bone, rotation);
        }
    }

    /// `Skeleton3D.set_bone_pose_position(bone, position)`.
    pub fn set_pose_position(&mut self, bone: i32, position: Vector3) {
        let index = i64::from(bone);
        // SAFETY: a Skeleton3D's method: an int and a Vector3 in, nothing out.
        if !unsafe { self.send(|c| c.set_bone_pose_position, &[arg(&index), arg(&position)]) } {
            self.object.clone().set_bone_pose_position(bone, position);
        }
    }
}

impl<T: Inherits<SkeletonModifier3D>> Lent<'_, T> {
    /// `SkeletonModifier3D.is_active()`.
    pub fn is_active(&self) -> bool {
        // SAFETY: a SkeletonModifier3D's method: no argument, a bool (a byte) out.
        match unsafe { self.fetch(|c| c.modifier_is_active, &[], 0u8) } {
            Some(active) => active != 0,
            None => self.object.upcast_ref::<SkeletonModifier3D>().is_active(),
        }
    }

    /// `SkeletonModifier3D.set_active(active)`.
    pub fn set_active(&self, active: bool) {
        let byte = u8::from(active);
        // SAFETY: a SkeletonModifier3D's method: a bool (a byte) in, nothing out.
        if !unsafe { self.send(|c| c.modifier_set_active, &[arg(&byte)]) } {
            let mut modifier = self.object.clone().upcast::<SkeletonModifier3D>();
            modifier.set_active(active);
        }
    }
}

impl Lent<'_, CharacterBody3D> {
    /// `CharacterBody3D.set_velocity(velocity)`.
    pub fn set_velocity(&self, velocity: Vector3) {
        // SAFETY: a CharacterBody3D's method: a Vector3 in, nothing out.
        if !unsafe { self.send(|c| c.set_velocity, &[arg(&velocity)]) } {
            self.object.clone().set_velocity(velocity);
        }
    }

    /// `CharacterBody3D.move_and_slide()`; returns whether it collided.
    pub fn move_and_slide(&self) -> bool {
        // SAFETY: a CharacterBody3D's method: no argument, a bool (a byte) out.
        match unsafe { self.fetch(|c| c.move_and_slide, &[], 0u8) } {
            Some(collided) => collided != 0,
            None => self.object.clone().move_and_slide(),
        }
    }
}

impl<T: Inherits<GeometryInstance3D>> Lent<'_, T> {
    /// `GeometryInstance3D.set_custom_aabb(aabb)`.
    pub fn set_custom_aabb(&self, aabb: Aabb) {
        // SAFETY: a GeometryInstance3D's method: an AABB in, nothing out.
        if !unsafe { self.send(|c| c.set_custom_aabb, &[arg(&aabb)]) } {
            let mut geometry = self.object.clone().upcast::<GeometryInstance3D>();
            geometry.set_custom_aabb(aabb);
        }
    }
}

impl Lent<'_, RenderingServer> {
    /// `RenderingServer.mesh_surface_update_vertex_region(mesh, surface, offset, data)`.
    pub fn mesh_surface_update_vertex_region(
        &self,
        mesh: Rid,
        surface: i32,
        offset: i32,
        data: &PackedByteArray,
    ) {
        let (id, index, start) = (mesh.to_u64(), i64::from(surface), i64::from(offset));
        let args = [arg(&id), arg(&index), arg(&start), data.sys()];
        // SAFETY: a RenderingServer's method: a RID (its 64-bit id), two ints and a
        // PackedByteArray (its engine storage, from gdext) in, nothing out.
        if !unsafe { self.send(|c| c.mesh_surface_update_vertex_region, &args) } {
            let mut server = self.object.clone();
            server.mesh_surface_update_vertex_region(mesh, surface, offset, data);
        }
    }
}

impl Lent<'_, Engine> {
    /// `Engine.get_physics_interpolation_fraction()`.
    pub fn physics_interpolation_fraction(&self) -> f64 {
        // SAFETY: the Engine's method: no argument, a float (a double) out.
        unsafe { self.fetch(|c| c.get_physics_interpolation_fraction, &[], 0.0f64) }
            .unwrap_or_else(|| self.object.get_physics_interpolation_fraction())
    }
}
