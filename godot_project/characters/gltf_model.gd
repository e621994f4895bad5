class_name GltfModel
extends RefCounted
## Loads a glTF / GLB character at run time (no editor import step): its scene, the Skeleton3D in it
## and its AnimationPlayer.


## The scene in the glTF file at [param path] (res:// or a file path), or null with an error naming
## the file when it cannot be read.
static func instantiate(path: String) -> Node3D:
	var doc := GLTFDocument.new()
	var state := GLTFState.new()
	var err := doc.append_from_file(path, state)
	if err != OK:
		push_error("GltfModel: cannot read '%s' (error %d)" % [path, err])
		return null
	var scene := doc.generate_scene(state) as Node3D
	if scene == null:
		push_error("GltfModel: '%s' has no scene" % path)
	return scene


## The first Skeleton3D under [param root], or null.
static func skeleton(root: Node) -> Skeleton3D:
	var found := root.find_children("*", "Skeleton3D", true, false)
	return found[0] as Skeleton3D if not found.is_empty() else null


## The first AnimationPlayer under [param root], or null.
static func animation_player(root: Node) -> AnimationPlayer:
	var found := root.find_children("*", "AnimationPlayer", true, false)
	return found[0] as AnimationPlayer if not found.is_empty() else null


## The skinned meshes' bounds in [param root]'s parent space, as posed now (each surface's vertices
## moved by their bones' current poses, so a mesh that is not at its bind pose is measured where it
## is drawn). Worked out from the vertices, not from the bones' names.
static func skinned_bounds(root: Node3D) -> AABB:
	var box := AABB()
	var first := true
	for m in root.find_children("*", "MeshInstance3D", true, false):
		var mi := m as MeshInstance3D
		var sk := mi.get_node_or_null(mi.skeleton) as Skeleton3D
		var skin := mi.skin
		var mesh := mi.mesh as ArrayMesh
		if mesh == null:
			continue
		for s in mesh.get_surface_count():
			var arrays := mesh.surface_get_arrays(s)
			var verts: PackedVector3Array = arrays[Mesh.ARRAY_VERTEX]
			var bones = arrays[Mesh.ARRAY_BONES]
			var weights = arrays[Mesh.ARRAY_WEIGHTS]
			var per := 4
			if bones != null and verts.size() > 0 and (bones as PackedInt32Array).size() >= verts.size() * 8:
				per = 8
			for v in verts.size():
				var p := verts[v]
				var world := Vector3.ZERO
				if sk != null and skin != null and bones != null and (bones as PackedInt32Array).size() >= (v + 1) * per:
					var sum := 0.0
					for k in per:
						var w: float = weights[v * per + k]
						if w <= 0.0:
							continue
						var bind: int = bones[v * per + k]
						var bone := skin.get_bind_bone(bind)
						if bone < 0:
							bone = sk.find_bone(skin.get_bind_name(bind))
						var t := sk.get_bone_global_pose(bone) * skin.get_bind_pose(bind)
						world += (t * p) * w
						sum += w
					world = sk.global_transform * (world / maxf(sum, 1e-6))
				else:
					world = mi.global_transform * p
				var local := root.get_parent_node_3d().global_transform.affine_inverse() * world if root.get_parent_node_3d() != null else world
				if first:
					box = AABB(local, Vector3.ZERO)
					first = false
				else:
					box = box.expand(local)
	return box


## A TestCharacter body (capsule, movement) carrying the model at [param path] instead of its own
## rig, turned so that the model's [param facing] (in its file; glTF characters face +Z) is the
## body's −Z, its animation [param animation] (empty: its first) looping on physics frames. The model
## is the body's child "Model".
## When the file cannot be read (a project that exports it filtered out, or a missing file), the
## test character keeps its own rig, with a warning. The demo project's models are exported as they
## are (their `.import` says `importer="keep"`), so its exported builds carry them.
static func on_test_body(path: String, facing := Vector3(0, 0, 1), animation := "") -> TestCharacter:
	var body := (load("res://characters/test_character.tscn") as PackedScene).instantiate() as TestCharacter
	var root := instantiate(path)
	if root == null:
		push_warning("GltfModel: '%s' not loaded; the test character keeps its own rig" % path)
		return body
	body.drive_animation = false
	for n in ["Skeleton3D", "AnimationTree", "AnimationPlayer"]:
		var old := body.get_node_or_null(n)
		if old != null:
			body.remove_child(old)
			old.free()
	root.name = "Model"
	root.rotation.y = -Vector3(0, 0, -1).signed_angle_to(facing, Vector3.UP)
	body.add_child(root)
	var ap := animation_player(root)
	if ap != null and not ap.get_animation_list().is_empty():
		var anim: StringName = ap.get_animation_list()[0]
		if not animation.is_empty() and ap.has_animation(animation):
			anim = animation
		ap.get_animation(anim).loop_mode = Animation.LOOP_LINEAR
		ap.callback_mode_process = AnimationMixer.ANIMATION_CALLBACK_MODE_PROCESS_PHYSICS
		ap.autoplay = anim
		ap.play(anim)
	return body
