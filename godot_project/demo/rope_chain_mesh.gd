extends RefCounted
## Builds bone chains and skinned tube meshes in code, for EntwineRopeBoneChain's demo and tests: a braid,
## a tail or a rope made of a Skeleton3D chain that an EntwineRopeBoneChain drives.


## Adds [param count] bones named [param prefix]1, [param prefix]2, … to [param skeleton]: a straight
## chain starting at [param origin] (in [param parent_bone]'s space; the skeleton's when -1) and running
## along [param direction] (same space) with [param spacing] metres between bones. Each bone's +Y points
## down the chain (Godot's bone convention). Resets the poses to the rest and returns the new indices.
static func add_chain(skeleton: Skeleton3D, prefix: String, count: int, parent_bone: int,
		origin: Vector3, direction: Vector3, spacing: float) -> PackedInt32Array:
	var y := direction.normalized()
	var hint := Vector3.RIGHT if absf(y.dot(Vector3.RIGHT)) < 0.9 else Vector3.BACK
	var z := hint.cross(y).normalized()
	var x := y.cross(z)
	var indices := PackedInt32Array()
	var parent := parent_bone
	for i in count:
		var bone := skeleton.add_bone("%s%d" % [prefix, i + 1])
		if parent >= 0:
			skeleton.set_bone_parent(bone, parent)
		var rest := Transform3D(Basis(x, y, z), origin) if i == 0 else Transform3D(Basis.IDENTITY, Vector3(0, spacing, 0))
		skeleton.set_bone_rest(bone, rest)
		indices.append(bone)
		parent = bone
	skeleton.reset_bone_poses()
	return indices


## Returns a MeshInstance3D (add it under [param skeleton]) with a tube skinned to the chain
## [param bones] (root first) in its rest pose: [param sides] vertices around, [param rings_per_bone]
## rings per bone, radius [param radius] tapering to [param tip_radius]; with [param braided] the radius
## swells and pinches like a three-strand braid.
static func skinned_tube(skeleton: Skeleton3D, bones: PackedInt32Array, radius: float, tip_radius: float,
		material: Material, braided := false, sides := 10, rings_per_bone := 4) -> MeshInstance3D:
	var rests: Array[Transform3D] = []
	for b in bones:
		rests.append(skeleton.get_bone_global_rest(b))
	var n := bones.size()
	# Arc lengths along the rest chain; the tip is extended by the last bone's length.
	var last_length := rests[n - 1].origin.distance_to(rests[n - 2].origin)
	var tip_end := rests[n - 1].origin + (rests[n - 1].origin - rests[n - 2].origin).normalized() * last_length * 0.6
	var verts := PackedVector3Array()
	var normals := PackedVector3Array()
	var weights := PackedFloat32Array()
	var bone_ids := PackedInt32Array()
	var indices := PackedInt32Array()
	var total_rings := (n - 1) * rings_per_bone + rings_per_bone / 2 + 1
	for r in total_rings:
		var f := float(r) / rings_per_bone # position in bones, 0 … n-1 (+ past the tip)
		var i := mini(int(f), n - 1)
		var t := f - i
		var at: Vector3
		var axis: Vector3
		var basis: Basis
		if i < n - 1:
			at = rests[i].origin.lerp(rests[i + 1].origin, t)
			axis = (rests[i + 1].origin - rests[i].origin).normalized()
			basis = rests[i].basis.orthonormalized()
		else:
			at = rests[n - 1].origin.lerp(tip_end, clampf(t * 2.0, 0.0, 1.0))
			axis = (tip_end - rests[n - 1].origin).normalized()
			basis = rests[n - 1].basis.orthonormalized()
		var along := f / float(n - 1 + 0.5)
		var rad := lerpf(radius, tip_radius, clampf(along, 0.0, 1.0))
		if braided:
			rad *= 0.78 + 0.22 * absf(sin(f * PI * 1.5))
		if r == total_rings - 1:
			rad *= 0.3
		var side := basis.x - axis * basis.x.dot(axis)
		side = side.normalized()
		var other := axis.cross(side)
		# Skinning: between bone i and i + 1 by t (the tip ring follows the tip bone alone).
		var b0 := bones[i]
		var b1 := bones[mini(i + 1, n - 1)]
		var w1 := t if i < n - 1 else 0.0
		for s in sides:
			var a := TAU * s / sides
			var normal := side * cos(a) + other * sin(a)
			verts.append(at + normal * rad)
			normals.append(normal)
			bone_ids.append_array([b0, b1, 0, 0])
			weights.append_array([1.0 - w1, w1, 0.0, 0.0])
		if r > 0:
			var base := (r - 1) * sides
			for s in sides:
				var a0 := base + s
				var a1 := base + (s + 1) % sides
				var c0 := a0 + sides
				var c1 := a1 + sides
				indices.append_array([a0, c0, a1, a1, c0, c1])
	var arrays := []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = verts
	arrays[Mesh.ARRAY_NORMAL] = normals
	arrays[Mesh.ARRAY_BONES] = bone_ids
	arrays[Mesh.ARRAY_WEIGHTS] = weights
	arrays[Mesh.ARRAY_INDEX] = indices
	var mesh := ArrayMesh.new()
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, arrays)
	mesh.surface_set_material(0, material)
	var instance := MeshInstance3D.new()
	instance.mesh = mesh
	instance.skin = skeleton.create_skin_from_rest_transforms()
	instance.skeleton = NodePath("..")
	return instance
