# timeout: 420
extends EntwineTest
## Every node on real, freely licensed humanoids nobody here designed, loaded at run time from their
## glTF files (GltfModel, no editor import), with no bone name or axis set by hand. Figures are
## printed as `real <model>: …`.
##
## - Cesium Man (glTF sample models, CC BY 4.0): 19 bones named as a COLLADA export names them
##   (`Skeleton_torso_joint_1`, `leg_joint_L_1` … `_5`, `Skeleton_arm_joint_L__4_` counting down to
##   the hand), Z-up bones under a rotated armature, rest rotations about one axis only, T-pose,
##   facing +Z, 1.51 m, no finger bones, one skinned mesh, one walk animation.
## - Robot Expressive (three.js examples, CC0, by Tomás Laulhé): a Blender rig (`UpperArm.L`,
##   `LowerArm.R`) under an armature scaled by 100 (bone lengths in hundredths), no hand bone (three
##   palm bones and the thumb leave the forearm at the wrist), feet and knee pole targets on the root
##   bone, rigid parts on their bones and skinned hands, a big head, T-pose, facing +Z, 14 animations.

const KIT := preload("res://tests/rig/rig_kit.gd")
const HAND_BOX := preload("res://tests/lib/hand_box.gd")

## Each model: its file, its name in the figures, the bone that plays each part (read from the
## model's hierarchy by hand: the spine chain from the root, the neck chain above it, each limb's
## chain in depth order, the first joint of each finger), the bones that make up each hand (their
## vertices are the hand), the animation it walks with and the way it faces in its own file (glTF
## characters face +Z: both models' toes point +Z from their ankles). Godot's glTF import gives a
## bone that shares its name with a mesh node a suffix (the robot's `Torso_2`, `Head_2`).
const MODELS := [
	{
		"name": "cesium_man",
		"path": "res://assets/characters/cesium_man/CesiumMan.glb",
		"facing": Vector3(0, 0, 1),
		"walk": "",
		"bones": {
			"Hips": "Skeleton_torso_joint_1", "Spine": "Skeleton_torso_joint_2", "Chest": "torso_joint_3",
			"Neck": "Skeleton_neck_joint_1", "Head": "Skeleton_neck_joint_2",
			"LeftUpperArm": "Skeleton_arm_joint_L__4_", "LeftLowerArm": "Skeleton_arm_joint_L__3_",
			"LeftHand": "Skeleton_arm_joint_L__2_",
			"RightUpperArm": "Skeleton_arm_joint_R", "RightLowerArm": "Skeleton_arm_joint_R__2_",
			"RightHand": "Skeleton_arm_joint_R__3_",
			"LeftUpperLeg": "leg_joint_L_1", "LeftLowerLeg": "leg_joint_L_2", "LeftFoot": "leg_joint_L_3",
			"LeftToes": "leg_joint_L_5",
			"RightUpperLeg": "leg_joint_R_1", "RightLowerLeg": "leg_joint_R_2", "RightFoot": "leg_joint_R_3",
			"RightToes": "leg_joint_R_5",
		},
		"hands": {"Left": ["Skeleton_arm_joint_L__2_"], "Right": ["Skeleton_arm_joint_R__3_"]},
	},
	{
		"name": "robot_expressive",
		"path": "res://assets/characters/robot_expressive/RobotExpressive.glb",
		"facing": Vector3(0, 0, 1),
		"walk": "Walking",
		"bones": {
			"Hips": "Hips", "Spine": "Abdomen", "Chest": "Torso_2", "Neck": "Neck", "Head": "Head_2",
			"LeftShoulder": "Shoulder.L", "LeftUpperArm": "UpperArm.L", "LeftLowerArm": "LowerArm.L",
			"LeftHand": "Palm2.L",
			"RightShoulder": "Shoulder.R", "RightUpperArm": "UpperArm.R", "RightLowerArm": "LowerArm.R",
			"RightHand": "Palm2.R",
			"LeftUpperLeg": "UpperLeg.L", "LeftLowerLeg": "LowerLeg.L", "LeftFoot": "Foot.L",
			"RightUpperLeg": "UpperLeg.R", "RightLowerLeg": "LowerLeg.R", "RightFoot": "Foot.R",
			"LeftIndexProximal": "Index.L", "LeftMiddleProximal": "Middle1.L", "LeftRingProximal": "Ring1.L",
			"RightIndexProximal": "Index.R", "RightMiddleProximal": "Middle1.R", "RightRingProximal": "Ring1.R",
		},
		"hands": {
			"Left": ["Palm1.L", "Palm2.L", "Palm3.L", "Thumb.L", "Thumb2.L", "Index.L", "Index2.L", "Middle1.L", "Middle2.L", "Ring1.L", "Ring2.L"],
			"Right": ["Palm1.R", "Palm2.R", "Palm3.R", "Thumb.R", "Thumb2.R", "Index.R", "Index2.R", "Middle1.R", "Middle2.R", "Ring1.R", "Ring2.R"],
		},
	},
]

var _rng := RandomNumberGenerator.new()


## The model's size against the 1.75 m human the contracts are given for, at least 1: k = its
## meshes' height / 1.75 m (Cesium Man 0.86 → 1; the robot 2.55). A giant's hands are held to the
## contract times k, as a world scaled by k would be.
func _size(m: Dictionary) -> float:
	var probe := add(Node3D.new()) as Node3D
	var k := GltfModel.skinned_bounds(_model(m, probe)).size.y / 1.75
	probe.queue_free()
	return k


func _model(m: Dictionary, parent: Node) -> Node3D:
	var root := GltfModel.instantiate(m["path"])
	check(root != null, "%s: loaded from its glTF file" % m["name"])
	if root == null:
		root = Node3D.new()
	parent.add_child(root)
	return root


## The vertices drawn mostly by one of [param bones], in the skeleton's rest space (rest × bind pose:
## the mesh as modelled, whatever pose the file's bind matrices were taken in): the hand as drawn.
func _bone_vertices(root: Node3D, sk: Skeleton3D, bones: Array) -> PackedVector3Array:
	var out := PackedVector3Array()
	for m in root.find_children("*", "MeshInstance3D", true, false):
		var mi := m as MeshInstance3D
		if mi.skin == null or not (mi.mesh is ArrayMesh):
			continue
		for s in mi.mesh.get_surface_count():
			var arrays: Array = mi.mesh.surface_get_arrays(s)
			var verts: PackedVector3Array = arrays[Mesh.ARRAY_VERTEX]
			var vbones: PackedInt32Array = arrays[Mesh.ARRAY_BONES]
			var weights: PackedFloat32Array = arrays[Mesh.ARRAY_WEIGHTS]
			var per := vbones.size() / maxi(verts.size(), 1)
			for v in verts.size():
				var best := -1
				var best_w := 0.0
				for k in per:
					if weights[v * per + k] > best_w:
						best_w = weights[v * per + k]
						best = vbones[v * per + k]
				if best < 0:
					continue
				var b := mi.skin.get_bind_bone(best)
				if b < 0:
					b = sk.find_bone(mi.skin.get_bind_name(best))
				if b in bones:
					out.append(sk.get_bone_global_rest(b) * mi.skin.get_bind_pose(best) * verts[v])
	return out


## The hand on [param side] as a box around its own vertices (the bones the model's entry lists for
## it), in the hand bone's rest frame (box in the skeleton's rest space); with the box's thinnest
## axis (the palm's normal, unsigned) and its size.
func _rest_hand_box(m: Dictionary, root: Node3D, sk: Skeleton3D, side: String) -> Array:
	var bone := sk.find_bone(m["bones"][side + "Hand"])
	var parts: Array = (m["hands"][side] as Array).map(func(n: String) -> int: return sk.find_bone(n))
	var rest := sk.get_bone_global_rest(bone)
	var inv := Transform3D(rest.basis.orthonormalized(), rest.origin).affine_inverse()
	var lo := Vector3.INF
	var hi := -Vector3.INF
	for p in _bone_vertices(root, sk, parts):
		var l := inv * p
		lo = lo.min(l)
		hi = hi.max(l)
	var size := hi - lo
	var thin := Vector3.ZERO
	thin[size.min_axis_index()] = 1.0
	return [HAND_BOX.from_frame(Transform3D(rest.basis.orthonormalized(), rest.origin), (lo + hi) * 0.5, size), thin, size]


## The role → bone the rig found, its height against the meshes' own bounds (skinned and rigid
## parts), its facing against the model's known facing.
func test_the_rig_finds_every_part_the_height_and_the_facing() -> void:
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		var sk := GltfModel.skeleton(root)
		var d := EntwineHumanoidRig.describe(sk)
		var found: Dictionary = d["bones"]
		for role in (m["bones"] as Dictionary):
			print("real %s: %s = %s" % [m["name"], role, found.get(role, "<none>")])
			check(found.get(role, "") == m["bones"][role], "%s: %s found" % [m["name"], role], m["bones"][role], found.get(role, "<none>"))
		for role in found:
			check(role in m["bones"], "%s: nothing read as %s" % [m["name"], role], "<none>", found[role])
		var bounds := GltfModel.skinned_bounds(root)
		var to_world := sk.global_transform.basis
		var up_world := (to_world * (d["up"] as Vector3)).normalized()
		var height: float = d["height"] * (to_world * (d["up"] as Vector3)).length()
		var err := absf(height - bounds.size.y) / bounds.size.y
		check(err <= 0.10, "%s: height within 10 %% of the mesh's bounds" % m["name"], bounds.size.y, height)
		var fwd := (to_world * (d["forward"] as Vector3)).normalized()
		var angle := rad_to_deg(fwd.angle_to(m["facing"]))
		check(angle <= 10.0, "%s: facing within 10° of the model's" % m["name"], m["facing"], fwd)
		check(rad_to_deg(up_world.angle_to(Vector3.UP)) <= 10.0, "%s: up is up" % m["name"], Vector3.UP, up_world)
		print("real %s: %d roles found, height %.4f m, mesh bounds %.4f m (%.2f %%), facing %s, %.2f° from %s, up %s" % [
			m["name"], found.size(), height, bounds.size.y, err * 100.0, fwd, angle, m["facing"], up_world])


## EntwineLimbIK on each arm puts the hand on reachable targets within 1 cm; Godot's TwoBoneIK3D on the
## same bones reaches the same targets, and the two hands agree within 1 cm. With the targets
## turned, the hand's other parts (the robot's palms and thumb) keep their place on the hand.
func test_limb_ik_and_godot_two_bone_ik_agree_on_each_arm() -> void:
	_rng.seed = 15
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		var sk := GltfModel.skeleton(root)
		var worst := 0.0
		var worst_godot := 0.0
		var worst_diff := 0.0
		var worst_parts := 0.0
		for side in ["Left", "Right"]:
			var names := [m["bones"][side + "UpperArm"], m["bones"][side + "LowerArm"], m["bones"][side + "Hand"]]
			var bones := names.map(func(n: String) -> int: return sk.find_bone(n))
			var parts: Array = (m["hands"][side] as Array).map(func(n: String) -> int: return sk.find_bone(n))
			var rest := await KIT.world_poses(self, sk, bones)
			var reach := rest[0].origin.distance_to(rest[1].origin) + rest[1].origin.distance_to(rest[2].origin)
			# Reachable: beyond the folded arm's reach (the robot's forearm is twice its upper arm),
			# short of the straight arm's.
			var nearest := absf(rest[0].origin.distance_to(rest[1].origin) - rest[1].origin.distance_to(rest[2].origin)) / reach
			var goals := []
			for t in 4:
				var dir := Vector3(_rng.randf_range(-1, 1), _rng.randf_range(-1, 1), _rng.randf_range(-1, 1)).normalized()
				goals.append(rest[0].origin + dir * reach * _rng.randf_range(nearest + 0.1, 0.9))
			var ik := EntwineLimbIK.new()
			ik.limb = EntwineLimbIK.LIMB_LEFT_ARM if side == "Left" else EntwineLimbIK.LIMB_RIGHT_ARM
			sk.add_child(ik)
			check(ik.get_resolved_bones() == PackedStringArray(names), "%s: EntwineLimbIK finds the %s arm" % [m["name"], side], names, ik.get_resolved_bones())
			var ours := []
			for goal in goals:
				ik.target_transform = Transform3D(Basis.IDENTITY, goal)
				var got := await KIT.world_poses(self, sk, bones)
				ours.append(got[2].origin)
				var err := got[2].origin.distance_to(goal)
				worst = maxf(worst, err)
				check(err <= 0.01, "%s: EntwineLimbIK puts the %s hand within 1 cm of a reachable target" % [m["name"], side], 0.01, err)
			# The hand turned to a random orientation: every bone of the hand stays where it was on
			# the hand, relative to the hand bone (the rest pose's offsets, in the hand bone's frame).
			ik.rotation_weight = 1.0
			var turned := Basis(Vector3(_rng.randf_range(-1, 1), 1, 0.3).normalized(), _rng.randf_range(0.5, 2.5))
			ik.target_transform = Transform3D(turned, goals[0])
			var hand_rest := sk.get_bone_global_rest(bones[2])
			var posed := await KIT.world_poses(self, sk, [bones[2]] + parts)
			for k in parts.size():
				if parts[k] == bones[2] or sk.get_bone_parent(parts[k]) != sk.get_bone_parent(bones[2]):
					continue
				var expected: Vector3 = posed[0] * (hand_rest.affine_inverse() * sk.get_bone_global_rest(parts[k]).origin)
				worst_parts = maxf(worst_parts, (posed[k + 1] as Transform3D).origin.distance_to(expected))
			ik.queue_free()
			await frames(2)
			var godot := TwoBoneIK3D.new()
			var marker := Marker3D.new()
			holder.add_child(marker)
			sk.add_child(godot)
			godot.set_setting_count(1)
			godot.set_root_bone_name(0, names[0])
			godot.set_middle_bone_name(0, names[1])
			godot.set_end_bone_name(0, names[2])
			godot.set_target_node(0, godot.get_path_to(marker))
			# The elbow bends down and back, as EntwineLimbIK's default pole does.
			var pole := Marker3D.new()
			holder.add_child(pole)
			pole.global_position = rest[1].origin + Vector3(0, -0.5, -0.3)
			godot.set_pole_node(0, godot.get_path_to(pole))
			for k in goals.size():
				marker.global_position = goals[k]
				await physics_frames(2)
				var got := await KIT.world_poses(self, sk, bones)
				var err := got[2].origin.distance_to(goals[k])
				var diff := got[2].origin.distance_to(ours[k])
				worst_godot = maxf(worst_godot, err)
				worst_diff = maxf(worst_diff, diff)
				check(err <= 0.01, "%s: TwoBoneIK3D puts the %s hand within 1 cm of the target" % [m["name"], side], 0.01, err)
				check(diff <= 0.01, "%s: EntwineLimbIK's and TwoBoneIK3D's %s hands within 1 cm" % [m["name"], side], 0.01, diff)
			godot.queue_free()
			marker.queue_free()
			pole.queue_free()
			await frames(2)
		check(worst_parts <= 0.001, "%s: the hand's other bones stay on the turned hand within 1 mm" % m["name"], 0.001, worst_parts)
		print("real %s: limb_ik worst reach error %.4f mm, TwoBoneIK3D %.4f mm, the two hands %.4f mm apart at most; hand parts off the turned hand %.4f mm" % [
			m["name"], worst * 1000.0, worst_godot * 1000.0, worst_diff * 1000.0, worst_parts * 1000.0])


## A TestCharacter body (capsule, movement) carrying the model instead of its own rig, turned to face
## the body's −Z, its walk animation looping; with [param stretch] the model's own scale.
func _character(m: Dictionary, world: Node3D, at: Vector3, stretch := Vector3.ONE) -> Array:
	var body := GltfModel.on_test_body(m["path"], m["facing"], m["walk"])
	body.position = at
	world.add_child(body)
	check(body.has_node("Model"), "%s: the model is on the body" % m["name"])
	var model := body.get_node("Model") as Node3D
	model.scale = stretch
	return [body, model, GltfModel.skeleton(model)]


## Two instances (their models scaled by [param stretch]) walk holding hands; returns the kit's
## figures.
func _walk_pair(m: Dictionary, stretch: Vector3) -> Dictionary:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	var room := EntwineHoldHandRoom.new()
	world.add_child(room)
	var made := []
	var comps := []
	for i in 2:
		made.append(_character(m, world, Vector3(i * 0.8, 0, 0), stretch))
		var comp := HoldHandComponent.new()
		made[i][0].add_child(comp)
		comps.append(comp)
	await physics_frames(2)
	var sides := ["Left", "Right"]
	var rest_boxes := []
	var bones := []
	for i in 2:
		var sk: Skeleton3D = made[i][2]
		bones.append(sk.find_bone(m["bones"][sides[i] + "Hand"]))
		var rest_box: Array = _rest_hand_box(m, made[i][1], sk, sides[i])
		rest_boxes.append(rest_box[0])
		print("real %s: %s hand box from its vertices %s m" % [m["name"], sides[i].to_lower(), rest_box[2]])
	var hand_boxes := func(i: int) -> Array: return KIT.posed_box(made[i][2], bones[i], rest_boxes[i])
	var got: Dictionary = await KIT.walk_pair(self, [made[0][0], made[1][0]], [made[0][2], made[1][2]], comps, hand_boxes)
	var ik: EntwineLimbIK = comps[0].get_hand_ik()
	got["hand"] = ik.get_resolved_bones() if ik != null else PackedStringArray()
	got["k"] = comps[0].get_proportion()
	world.queue_free()
	await frames(2)
	return got


## Two instances walk holding hands: both hands within 1 cm × k of the shared contact, the two hands
## (boxes around their own vertices) overlapping by at most 5 mm × k (k of [method _size]).
func test_hold_hand_pair_walks_with_hands_together() -> void:
	for m in MODELS:
		var c := maxf(_size(m), 1.0)
		var got := await _walk_pair(m, Vector3.ONE)
		var hand: PackedStringArray = got["hand"]
		check(hand.size() == 3 and hand[2] == m["bones"]["LeftHand"], "%s: the initiator's left hand is found" % m["name"], m["bones"]["LeftHand"], hand)
		check(got["paired"], "%s: paired" % m["name"])
		check(got["samples"] > 30, "%s: hands held while walking" % m["name"], "> 30", got["samples"])
		check(got["gap"] <= 0.01 * c, "%s: both hands within 1 cm × k of the shared contact" % m["name"], 0.01 * c, got["gap"])
		check(got["overlap"] <= 0.005 * c, "%s: the hands overlap by at most 5 mm × k" % m["name"], 0.005 * c, got["overlap"])
		print("real %s: hold_hand hand to contact %.3f mm, hands overlap %.3f mm over %d frames, k %.3f" % [
			m["name"], got["gap"] * 1000.0, got["overlap"] * 1000.0, got["samples"], got["k"]])


## Walking along a wall, the near hand touches it: the wrist at its place off the wall (5 cm × k)
## within 5 cm × k, the palm (the hand's thinnest axis, from its vertices) within 10° of the wall's
## normal (k of [method _size], at least 1: the robot is 4.46 m). The wall is as tall as for a 1.75 m human
## times k, and as far from the body, or farther: beyond the arm's folded reach from the shoulder.
func test_env_touch_walking_along_a_wall_touches_it() -> void:
	for m in MODELS:
		var k := _size(m)
		var c := maxf(k, 1.0)
		# The wall stays beyond the arm's folded reach from the shoulder (the robot's forearm is twice
		# its upper arm: a wall 0.52 m from its shoulder is too near for its hand to reach at shoulder
		# height, which the touch does not yet allow for).
		var probe := add(Node3D.new()) as Node3D
		var psk := GltfModel.skeleton(_model(m, probe))
		var at := func(n: String) -> Vector3: return psk.global_transform * psk.get_bone_global_rest(psk.find_bone(m["bones"][n])).origin
		var folded: float = absf(at.call("LeftUpperArm").distance_to(at.call("LeftLowerArm")) - at.call("LeftLowerArm").distance_to(at.call("LeftHand")))
		var shoulder: float = absf((at.call("LeftUpperArm") as Vector3).x)
		var wall_x := maxf(0.45 * c, shoulder + folded + 0.1 * k)
		probe.queue_free()
		for face_x in [-wall_x, wall_x]:
			var world := add(Node3D.new()) as Node3D
			KIT.wall_world(self, world, face_x, 3.0 * c)
			var sign_x := signf(face_x)
			var made := _character(m, world, Vector3(0, 0, 4))
			var side := "Left" if face_x < 0.0 else "Right"
			var what := "%s wall %s" % [m["name"], side]
			var sk: Skeleton3D = made[2]
			var hand_bone := sk.find_bone(m["bones"][side + "Hand"])
			var thin: Vector3 = _rest_hand_box(m, made[1], sk, side)[1]
			# The palm: the hand's thinnest axis; the wrist 5 cm × k off the wall's face (the
			# touch's surface offset).
			var measure := func() -> Array:
				var hand := sk.global_transform * sk.get_bone_global_pose(hand_bone)
				var palm := (hand.basis.orthonormalized() * thin).normalized()
				return [rad_to_deg(acos(clampf(absf(palm.dot(Vector3(sign_x, 0, 0))), 0.0, 1.0))),
					absf((face_x - hand.origin.x) * sign_x - 0.05 * c)]
			var got: Dictionary = await KIT.touch_wall(self, made[0], sk, measure)
			check(got["touched"], "%s: the hand reaches Touch" % what)
			check(got["samples"] >= 5, "%s: sampled the touch" % what, ">= 5", got["samples"])
			check(got["angle"] <= 10.0, "%s: the palm faces the wall within 10°" % what, "<= 10°", got["angle"])
			check(got["wrist"] <= 0.05 * c, "%s: the wrist within 5 cm × k of its place off the wall" % what, 0.05 * c, got["wrist"])
			print("real %s: env_touch palm angle error %.2f°, wrist off its place %.4f m over %d frames, wall %.3f m from the body, k %.3f (mesh %.3f)" % [
				what, got["angle"], got["wrist"], got["samples"], wall_x, (got["node"] as EnvironmentInteractionStateMachine).get_proportion(), k])
			world.queue_free()
			await frames(2)


## A rope anchored on the model's hand bone hangs from it while the model walks in place: the first
## point at the bone's position within 1 mm every physics frame.
func test_rope_hangs_from_the_hand_bone_while_the_model_animates() -> void:
	for m in MODELS:
		var world := add(Node3D.new()) as Node3D
		add_floor(world)
		var made := _character(m, world, Vector3.ZERO)
		var sk: Skeleton3D = made[2]
		var bone_name: String = m["bones"]["RightHand"]
		var bone := sk.find_bone(bone_name)
		var rope := RopeSimulation.new()
		world.add_child(rope)
		rope.anchor_node = rope.get_path_to(sk)
		rope.anchor_bone = bone_name
		await physics_frames(3)
		var worst := 0.0
		var moved := 0.0
		var start := sk.global_transform * sk.get_bone_global_pose(bone).origin
		for f in 120:
			await physics_frame
			var at := sk.global_transform * sk.get_bone_global_pose(bone).origin
			moved = maxf(moved, at.distance_to(start))
			var first: Vector3 = rope.get_points()[0]
			worst = maxf(worst, first.distance_to(at))
		check(moved > 0.05, "%s: the hand moves with the walk" % m["name"], "> 0.05", moved)
		check(worst <= 0.001, "%s: the rope's first point on the hand bone within 1 mm every frame" % m["name"], 0.001, worst)
		print("real %s: rope first point to the hand bone %.4f mm at most over 120 frames (the hand moved %.3f m)" % [m["name"], worst * 1000.0, moved])
		world.queue_free()
		await frames(2)


## The model's root scaled (1, 1.2, 1) (a stretched import): the height seen in the world, EntwineLimbIK on
## each arm and a walking pair, each figure printed and asserted: the height against the stretched
## mesh's bounds (10 %), EntwineLimbIK within 1 cm × 1.2, both hands within 1 cm × 1.2 × k of the contact
## and overlapping by at most 5 mm × 1.2 × k.
func test_a_model_stretched_1_2_times_upward() -> void:
	_rng.seed = 16
	var stretch := Vector3(1, 1.2, 1)
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		root.scale = stretch
		var sk := GltfModel.skeleton(root)
		await frames(1)
		var d := EntwineHumanoidRig.describe(sk)
		var height: float = d["height"] * (sk.global_transform.basis * (d["up"] as Vector3)).length()
		var bounds := GltfModel.skinned_bounds(root)
		var herr := absf(height - bounds.size.y) / bounds.size.y
		check(herr <= 0.10, "%s stretched: height within 10 %% of the mesh's bounds" % m["name"], bounds.size.y, height)
		var worst := 0.0
		for side in ["Left", "Right"]:
			var bones := ["UpperArm", "LowerArm", "Hand"].map(func(b: String) -> int: return sk.find_bone(m["bones"][side + b]))
			var rest := await KIT.world_poses(self, sk, bones)
			var reach := rest[0].origin.distance_to(rest[1].origin) + rest[1].origin.distance_to(rest[2].origin)
			var nearest := absf(rest[0].origin.distance_to(rest[1].origin) - rest[1].origin.distance_to(rest[2].origin)) / reach
			var ik := EntwineLimbIK.new()
			ik.limb = EntwineLimbIK.LIMB_LEFT_ARM if side == "Left" else EntwineLimbIK.LIMB_RIGHT_ARM
			sk.add_child(ik)
			for t in 4:
				var dir := Vector3(_rng.randf_range(-1, 1), _rng.randf_range(-1, 1), _rng.randf_range(-1, 1)).normalized()
				# Every direction stays reachable however the stretch bends it: beyond the folded
				# arm's reach × 1.2, within the straight arm's / 1.2.
				var goal := rest[0].origin + dir * reach * _rng.randf_range(minf(1.2 * nearest + 0.05, 0.5), 0.8)
				ik.target_transform = Transform3D(Basis.IDENTITY, goal)
				var got := await KIT.world_poses(self, sk, bones)
				worst = maxf(worst, got[2].origin.distance_to(goal))
			ik.queue_free()
			await frames(2)
		check(worst <= 0.012, "%s stretched: EntwineLimbIK within 1 cm × 1.2 of reachable targets" % m["name"], 0.012, worst)
		holder.queue_free()
		var c := maxf(_size(m), 1.0)
		var got := await _walk_pair(m, stretch)
		check(got["paired"], "%s stretched: paired" % m["name"])
		check(got["samples"] > 30, "%s stretched: hands held while walking" % m["name"], "> 30", got["samples"])
		check(got["gap"] <= 0.012 * c, "%s stretched: both hands within 1 cm × 1.2 × k of the contact" % m["name"], 0.012 * c, got["gap"])
		check(got["overlap"] <= 0.006 * c, "%s stretched: the hands overlap by at most 5 mm × 1.2 × k" % m["name"], 0.006 * c, got["overlap"])
		print("real %s stretched (1, 1.2, 1): height %.4f m, mesh bounds %.4f m (%.2f %%); limb_ik worst %.4f mm; hold_hand hand to contact %.3f mm, hands overlap %.3f mm over %d frames" % [
			m["name"], height, bounds.size.y, herr * 100.0, worst * 1000.0, got["gap"] * 1000.0, got["overlap"] * 1000.0, got["samples"]])
