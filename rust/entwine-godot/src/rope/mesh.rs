//! The rope's tube mesh: an `ArrayMesh` created once with a fixed vertex count (the capacity's
//! rings) and updated in place with `RenderingServer.mesh_surface_update_vertex_region` from byte
//! buffers filled here: only the rings the rope reaches (and, after it shrank, the rings it left,
//! once, to collapse them) are built and uploaded; the rings past them stay collapsed on the GPU.
//! The buffers are resized only when that extent changes (the rope gained or lost points). The core
//! frames the rings (`Tube::frame`) and writes their vertices straight into those bytes
//! (`Tube::write_vertices`), with no vertex arrays in between.
//!
//! Godot 4's vertex buffer holds the positions (`vertex stride` apart) followed by the normals and
//! tangents (octahedral, 16-bit, `normal/tangent stride` apart); the strides and offsets are asked from
//! the `RenderingServer` for the mesh's own format, so the layout is never guessed.

use entwine_core::rope::tube::{Redraw, VertexLayout};
use entwine_core::rope::Tube;
use glam::Vec3;
use godot::classes::mesh::{ArrayFormat, ArrayType, PrimitiveType};
use godot::classes::rendering_server::ArrayFormat as RsArrayFormat;
use godot::classes::{ArrayMesh, Material, MeshInstance3D, RenderingServer};
use godot::prelude::*;

use crate::direct::{bytes_mut, Lent};

use crate::convert::vector3;

/// A tube mesh instance kept in sync with a rope.
pub struct TubeMesh {
    tube: Tube,
    mesh: Gd<ArrayMesh>,
    mesh_rid: Rid,
    /// The node showing the mesh (top level: the vertices are in world space).
    pub instance: Gd<MeshInstance3D>,
    /// The uploaded rings' positions, and their normals and tangents (the two vertex streams).
    positions: PackedByteArray,
    normals: PackedByteArray,
    /// The vertices the two buffers are sized for (kept here: asking a packed array its size is an
    /// engine call).
    sized_for: usize,
    /// The two streams' strides and where a vertex's normal and tangent sit in theirs.
    layout: VertexLayout,
    /// Where the normal/tangent stream starts in the vertex buffer.
    stream_start: usize,
    /// Rings that may hold more than one point on the GPU (the last build's active rings + 1).
    live_rings: usize,
    /// Whether the instance was last left shown (a hidden, empty tube is not rebuilt).
    pub shown: bool,
    /// Whether the rope moved enough since the last upload to upload again.
    redraw: Redraw,
    /// The rendering server, kept (each `singleton()` asks the engine for the object's id).
    rs: Gd<RenderingServer>,
    /// The bounds of the rings last framed, for the upload.
    bounds: Aabb,
}

impl TubeMesh {
    /// Returns a tube for ropes of up to `max_points` points, `sides` around and `subdivisions` rings
    /// per segment (Catmull-Rom above 1), with `material` (or Godot's default).
    pub fn new(
        max_points: usize,
        sides: usize,
        subdivisions: usize,
        material: Option<&Gd<Material>>,
    ) -> Self {
        let mut tube = Tube::new(max_points, sides, subdivisions);
        tube.build(&[Vec3::ZERO, Vec3::NEG_Y * 0.01], 0.0);
        let n = tube.vertex_count();
        let positions: PackedVector3Array = tube.positions().iter().map(|p| vector3(*p)).collect();
        let normals: PackedVector3Array = tube.normals().iter().map(|p| vector3(*p)).collect();
        let tangents: PackedFloat32Array = tube
            .tangents()
            .iter()
            .flat_map(|t| [t.x, t.y, t.z, 1.0])
            .collect();
        let uvs: PackedVector2Array = tube
            .uvs()
            .into_iter()
            .map(|[u, v]| Vector2::new(u, v))
            .collect();
        let indices: PackedInt32Array = tube.indices().into_iter().collect();
        let mut arrays = VarArray::new();
        arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
        arrays.set(ArrayType::VERTEX.ord() as usize, &positions.to_variant());
        arrays.set(ArrayType::NORMAL.ord() as usize, &normals.to_variant());
        arrays.set(ArrayType::TANGENT.ord() as usize, &tangents.to_variant());
        arrays.set(ArrayType::TEX_UV.ord() as usize, &uvs.to_variant());
        arrays.set(ArrayType::INDEX.ord() as usize, &indices.to_variant());
        let mut mesh = ArrayMesh::new_gd();
        mesh.add_surface_from_arrays_ex(PrimitiveType::TRIANGLES, &arrays)
            .flags(ArrayFormat::FLAG_USE_DYNAMIC_UPDATE)
            .done();
        if let Some(m) = material {
            mesh.surface_set_material(0, m);
        }

        let format = RsArrayFormat::from_ord(mesh.surface_get_format(0).ord());
        let rs = RenderingServer::singleton();
        let count = n as i32;
        let vertex_stride = rs.mesh_surface_get_format_vertex_stride(format, count) as usize;
        let normal_stride =
            rs.mesh_surface_get_format_normal_tangent_stride(format, count) as usize;
        let stream_start = n * vertex_stride;
        // The offsets are "from the start of their respective buffer": the normal/tangent stream
        // follows the positions.
        let absolute = |o: usize| {
            if o < stream_start {
                stream_start + o
            } else {
                o
            }
        };
        let normal_offset =
            absolute(
                rs.mesh_surface_get_format_offset(format, count, ArrayType::NORMAL.ord()) as usize,
            );
        let has_tangent = mesh.surface_get_format(0).ord() & ArrayFormat::TANGENT.ord() != 0;
        let tangent_offset = has_tangent.then(|| {
            absolute(
                rs.mesh_surface_get_format_offset(format, count, ArrayType::TANGENT.ord()) as usize,
            )
        });
        let mesh_rid = mesh.get_rid();

        let mut instance = MeshInstance3D::new_alloc();
        instance.set_mesh(&mesh);
        instance.set_as_top_level(true);
        instance.set_global_transform(Transform3D::IDENTITY);
        Self {
            tube,
            mesh,
            mesh_rid,
            instance,
            positions: PackedByteArray::new(),
            normals: PackedByteArray::new(),
            sized_for: 0,
            layout: VertexLayout {
                position_stride: vertex_stride.max(12),
                normal_stride: normal_stride.max(4),
                normal_offset: normal_offset.saturating_sub(stream_start),
                tangent_offset: tangent_offset.map(|o| o.saturating_sub(stream_start)),
            },
            stream_start,
            // The surface was created around two points with radius 0: every ring is collapsed.
            live_rings: 0,
            shown: true,
            redraw: Redraw::with_capacity(max_points),
            rs,
            bounds: Aabb::new(Vector3::ZERO, Vector3::ZERO),
        }
    }

    /// Sets the tube's material.
    pub fn set_material(&mut self, material: Option<&Gd<Material>>) {
        match material {
            Some(m) => self.mesh.surface_set_material(0, m),
            None => self
                .mesh
                .surface_set_material(0, Gd::<Material>::null_arg()),
        }
    }

    /// Rebuilds the tube around `points` (world metres) with `radius` metres and uploads it in place:
    /// the rings the rope reaches, and those it reached last time. Does nothing when there are as many
    /// points as at the last upload, the radius is the same and no point has moved more than
    /// the core's `tube::STILL` on any axis since (a rope at rest): the tube stays as uploaded then,
    /// at most that far off. Returns whether it uploaded.
    pub fn update(&mut self, points: &[Vec3], radius: f32) -> bool {
        if !self.prepare(points, radius) {
            return false;
        }
        self.vertices().write();
        self.upload();
        true
    }

    /// The first of [`Self::update`]'s three parts: frames the rings around `points` and sizes the
    /// buffers for them. Returns false (and does nothing) when the tube need not be redrawn; else
    /// [`Self::vertices`] and [`Self::upload`] are to follow.
    pub fn prepare(&mut self, points: &[Vec3], radius: f32) -> bool {
        let Some(n) = self.framing().frame(points, radius) else {
            return false;
        };
        self.size_for(n);
        true
    }

    /// The tube's framing, borrowed out to run on any thread (see [`TubeFraming`]).
    pub fn framing(&mut self) -> TubeFraming<'_> {
        TubeFraming {
            tube: &mut self.tube,
            redraw: &mut self.redraw,
            live_rings: &mut self.live_rings,
            bounds: &mut self.bounds,
        }
    }

    /// Sizes the vertex buffers for `n` vertices (engine calls, when the count changed: on the
    /// main thread).
    pub fn size_for(&mut self, n: usize) {
        if self.sized_for != n {
            self.positions.resize(n * self.layout.position_stride);
            self.normals.resize(n * self.layout.normal_stride);
            self.sized_for = n;
        }
    }

    /// The second part: the framed rings' vertices to write into the buffers, which any thread
    /// may do (see [`TubeVertices::write`]).
    pub fn vertices(&mut self) -> TubeVertices<'_> {
        TubeVertices {
            tube: &self.tube,
            layout: &self.layout,
            positions: bytes_mut(&mut self.positions),
            normals: bytes_mut(&mut self.normals),
        }
    }

    /// The third part: uploads the written buffers and the tube's bounds.
    pub fn upload(&mut self) {
        // SAFETY: the RenderingServer singleton lives as long as the engine (see `direct`).
        let rs = unsafe { Lent::assume_alive(&self.rs) };
        rs.mesh_surface_update_vertex_region(self.mesh_rid, 0, 0, &self.positions);
        rs.mesh_surface_update_vertex_region(
            self.mesh_rid,
            0,
            self.stream_start as i32,
            &self.normals,
        );
        // On the instance (one RenderingServer call), not on the mesh (which would emit `changed`).
        if let Some(instance) = Lent::new(&self.instance) {
            instance.set_custom_aabb(self.bounds);
        }
    }

    /// The vertex positions as last written (world metres; allocates: for tests and tools).
    pub fn written_positions(&self) -> PackedVector3Array {
        let stride = self.layout.position_stride;
        self.positions
            .as_slice()
            .chunks_exact(stride)
            .map(|v| {
                let f = |k: usize| f32::from_le_bytes([v[k], v[k + 1], v[k + 2], v[k + 3]]);
                Vector3::new(f(0), f(4), f(8))
            })
            .collect()
    }
}

/// A tube's framing borrowed out of its [`TubeMesh`] (no engine object in it), so that many ropes'
/// framing can be shared between threads: [`TubeFraming::frame`], then [`TubeMesh::size_for`] on the
/// main thread.
pub struct TubeFraming<'a> {
    tube: &'a mut Tube,
    redraw: &'a mut Redraw,
    live_rings: &'a mut usize,
    bounds: &'a mut Aabb,
}

impl TubeFraming<'_> {
    /// Frames the tube along `points` when they moved since the last framing (see `Redraw`);
    /// returns how many vertices are then to be written, `None` when the tube stays as drawn.
    pub fn frame(&mut self, points: &[Vec3], radius: f32) -> Option<usize> {
        if !self.redraw.needed(points, radius) {
            return None;
        }
        let (lo, hi) = self.tube.frame(points, radius, *self.live_rings);
        let n = self.tube.written_rings() * (self.tube.sides() + 1);
        *self.live_rings = (self.tube.active_rings() + 1).min(self.tube.max_rings());
        let size = hi - lo;
        *self.bounds = if self.tube.active_rings() == 0 || !size.is_finite() {
            Aabb::new(Vector3::ZERO, Vector3::ZERO)
        } else {
            Aabb::new(vector3(lo), vector3(size))
        };
        Some(n)
    }
}

/// A framed tube's vertices and the bytes they go to (see [`TubeMesh::vertices`]): no engine
/// object in it, so it can be handed to another thread.
pub struct TubeVertices<'a> {
    tube: &'a Tube,
    layout: &'a VertexLayout,
    positions: &'a mut [u8],
    normals: &'a mut [u8],
}

impl TubeVertices<'_> {
    /// Writes the vertices (about 3 µs for a default rope's 315).
    pub fn write(&mut self) {
        self.tube
            .write_vertices(self.layout, self.positions, self.normals);
    }

    /// How many vertices there are to write (the buffers' share of a frame's work).
    pub fn count(&self) -> usize {
        self.positions.len() / self.layout.position_stride.max(1)
    }
}
