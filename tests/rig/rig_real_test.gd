# timeout: 300
extends EntwineTest
## Every node on a real, freely licensed humanoid nobody here designed, loaded at run time from its
## glTF file (GltfModel, no editor import), with no bone name or axis set by hand. Cesium Man (glTF
## sample models, CC BY 4.0): 19 bones named as a COLLADA export names them (`Skeleton_torso_joint_1`,
## `leg_joint_L_1` … `_5`, `Skeleton_arm_joint_L__4_` counting down to the hand), Z-up bones under a
## rotated armature, rest rotations about one axis only, T-pose, facing +Z, 1.51 m, no finger bones,
## one walk animation. Figures are printed as `real <model>: …`.

const HAND_BOX := preload("res://tests/lib/hand_box.gd")

## Each model: its file, its name in the figures, the bone that plays each part (read from the
## model's hierarchy by hand: the spine chain from the root, the neck chain above it, each limb's
## chain in depth order), and the way it faces in its own file (glTF characters face +Z; Cesium
## Man's toes point +Z from its ankles).
const MODELS := [
	{
		"name": "cesium_man",
		"path": "res://assets/characters/cesium_man/CesiumMan.glb",
		"facing": Vector3(0, 0, 1),
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
	},
]

var _rng := RandomNumberGenerator.new()


## World transforms of [param bones] read during the next skeleton update (after the modifiers).
func _world_poses(sk: Skeleton3D, bones: Array) -> Array[Transform3D]:
	var captured: Array[Transform3D] = []
	var read := func() -> Array[Transform3D]:
		var out: Array[Transform3D] = []
		for b in bones:
			out.append(sk.global_transform * sk.get_bone_global_pose(b))
		return out
	var capture := func() -> void:
		if captured.is_empty():
			captured.assign(read.call())
	sk.skeleton_updated.connect(capture)
	for i in 5:
		await process_frame
		if not captured.is_empty():
			break
	sk.skeleton_updated.disconnect(capture)
	return captured if not captured.is_empty() else read.call()


func _model(m: Dictionary, parent: Node) -> Node3D:
	var root := GltfModel.instantiate(m["path"])
	check(root != null, "%s: loaded from its glTF file" % m["name"])
	if root == null:
		root = Node3D.new()
	parent.add_child(root)
	return root


## The vertices drawn mostly by [param bone], in the skeleton's rest space (the bind pose is the rest
## pose in these files): the hand as modelled.
func _bone_vertices(root: Node3D, sk: Skeleton3D, bone: int) -> PackedVector3Array:
	var out := PackedVector3Array()
	for m in root.find_children("*", "MeshInstance3D", true, false):
		var mi := m as MeshInstance3D
		if mi.skin == null or not (mi.mesh is ArrayMesh):
			continue
		for s in mi.mesh.get_surface_count():
			var arrays: Array = mi.mesh.surface_get_arrays(s)
			var verts: PackedVector3Array = arrays[Mesh.ARRAY_VERTEX]
			var bones: PackedInt32Array = arrays[Mesh.ARRAY_BONES]
			var weights: PackedFloat32Array = arrays[Mesh.ARRAY_WEIGHTS]
			var per := bones.size() / maxi(verts.size(), 1)
			for v in verts.size():
				var best := -1
				var best_w := 0.0
				for k in per:
					if weights[v * per + k] > best_w:
						best_w = weights[v * per + k]
						best = bones[v * per + k]
				if best < 0:
					continue
				var b := mi.skin.get_bind_bone(best)
				if b < 0:
					b = sk.find_bone(mi.skin.get_bind_name(best))
				if b == bone:
					out.append(sk.get_bone_global_rest(b) * mi.skin.get_bind_pose(best) * verts[v])
	return out


## The hand on [param side] as a box around its own vertices, in the hand bone's rest frame (box in
## the skeleton's rest space); with the box's thinnest axis (the palm's normal, unsigned).
func _rest_hand_box(root: Node3D, sk: Skeleton3D, bone: int) -> Array:
	var rest := sk.get_bone_global_rest(bone)
	var inv := rest.affine_inverse()
	var lo := Vector3.INF
	var hi := -Vector3.INF
	for p in _bone_vertices(root, sk, bone):
		var l := inv * p
		lo = lo.min(l)
		hi = hi.max(l)
	var size := hi - lo
	var thin := Vector3.ZERO
	thin[size.min_axis_index()] = 1.0
	return [HAND_BOX.from_frame(Transform3D(rest.basis.orthonormalized(), rest.origin), (lo + hi) * 0.5, size), thin, size]


## [param box] (in the skeleton's rest space of [param bone]) moved with the bone's current pose.
func _posed_box(sk: Skeleton3D, bone: int, box: Array) -> Array:
	var motion := sk.global_transform * sk.get_bone_global_pose(bone) * sk.get_bone_global_rest(bone).affine_inverse()
	var axes: Array = box[1]
	var half: Vector3 = box[2]
	var out_axes := []
	var out_half := Vector3.ZERO
	for k in 3:
		var a: Vector3 = motion.basis * (axes[k] as Vector3)
		out_axes.append(a.normalized())
		out_half[k] = half[k] * a.length()
	return [motion * (box[0] as Vector3), out_axes, out_half]


## The role → bone the rig found, its height against the skinned mesh's own bounds, its facing
## against the model's known facing.
func test_the_rig_finds_every_part_the_height_and_the_facing() -> void:
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		var sk := GltfModel.skeleton(root)
		var d := HumanoidRig.describe(sk)
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
		print("real %s: height %.4f m, mesh bounds %.4f m (%.2f %%), facing %s, %.2f° from %s, up %s" % [
			m["name"], height, bounds.size.y, err * 100.0, fwd, angle, m["facing"], up_world])


## LimbIK on each arm puts the hand on reachable targets within 1 cm; Godot's TwoBoneIK3D on the
## same bones reaches the same targets, and the two hands agree within 1 cm.
func test_limb_ik_and_godot_two_bone_ik_agree_on_each_arm() -> void:
	_rng.seed = 15
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		var sk := GltfModel.skeleton(root)
		var worst := 0.0
		var worst_godot := 0.0
		var worst_diff := 0.0
		for side in ["Left", "Right"]:
			var names := [m["bones"][side + "UpperArm"], m["bones"][side + "LowerArm"], m["bones"][side + "Hand"]]
			var bones := names.map(func(n: String) -> int: return sk.find_bone(n))
			var rest := await _world_poses(sk, bones)
			var reach := rest[0].origin.distance_to(rest[1].origin) + rest[1].origin.distance_to(rest[2].origin)
			var goals := []
			for t in 4:
				var dir := Vector3(_rng.randf_range(-1, 1), _rng.randf_range(-1, 1), _rng.randf_range(-1, 1)).normalized()
				goals.append(rest[0].origin + dir * reach * _rng.randf_range(0.4, 0.9))
			var ik := LimbIK.new()
			ik.limb = LimbIK.LIMB_LEFT_ARM if side == "Left" else LimbIK.LIMB_RIGHT_ARM
			sk.add_child(ik)
			check(ik.get_resolved_bones() == PackedStringArray(names), "%s: LimbIK finds the %s arm" % [m["name"], side], names, ik.get_resolved_bones())
			var ours := []
			for goal in goals:
				ik.target_transform = Transform3D(Basis.IDENTITY, goal)
				var got := await _world_poses(sk, bones)
				ours.append(got[2].origin)
				var err := got[2].origin.distance_to(goal)
				worst = maxf(worst, err)
				check(err <= 0.01, "%s: LimbIK puts the %s hand within 1 cm of a reachable target" % [m["name"], side], 0.01, err)
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
			# The elbow bends down and back, as LimbIK's default pole does.
			var pole := Marker3D.new()
			holder.add_child(pole)
			pole.global_position = rest[1].origin + Vector3(0, -0.5, -0.3)
			godot.set_pole_node(0, godot.get_path_to(pole))
			for k in goals.size():
				marker.global_position = goals[k]
				await physics_frames(2)
				var got := await _world_poses(sk, bones)
				var err := got[2].origin.distance_to(goals[k])
				var diff := got[2].origin.distance_to(ours[k])
				worst_godot = maxf(worst_godot, err)
				worst_diff = maxf(worst_diff, diff)
				check(err <= 0.01, "%s: TwoBoneIK3D puts the %s hand within 1 cm of the target" % [m["name"], side], 0.01, err)
				check(diff <= 0.01, "%s: LimbIK's and TwoBoneIK3D's %s hands within 1 cm" % [m["name"], side], 0.01, diff)
			godot.queue_free()
			marker.queue_free()
			pole.queue_free()
			await frames(2)
		print("real %s: limb_ik worst reach error %.4f mm, TwoBoneIK3D %.4f mm, the two hands %.4f mm apart at most" % [
			m["name"], worst * 1000.0, worst_godot * 1000.0, worst_diff * 1000.0])


## A TestCharacter body (capsule, movement) carrying the model instead of its own rig, turned to face
## the body's −Z, its walk animation looping.
func _character(m: Dictionary, world: Node3D, at: Vector3) -> Array:
	var body := GltfModel.on_test_body(m["path"], m["facing"])
	body.position = at
	world.add_child(body)
	check(body.has_node("Model"), "%s: the model is on the body" % m["name"])
	return [body, body.get_node("Model")]


## Two instances walk holding hands: both hands within 1 cm of the shared contact, the two hands
## (boxes around their own vertices) overlapping by at most 5 mm.
func test_hold_hand_pair_walks_with_hands_together() -> void:
	for m in MODELS:
		var world := add(Node3D.new()) as Node3D
		add_floor(world)
		var room := HoldHandRoom.new()
		world.add_child(room)
		var made := []
		var comps := []
		for i in 2:
			made.append(_character(m, world, Vector3(i * 0.8, 0, 0)))
			var comp := HoldHandComponent.new()
			made[i][0].add_child(comp)
			comps.append(comp)
		await physics_frames(2)
		var boxes := [null, null]
		var contacts := [Vector3.ZERO]
		for i in 2:
			var sk := GltfModel.skeleton(made[i][1])
			var bone := sk.find_bone(m["bones"]["LeftHand" if i == 0 else "RightHand"])
			var rest_box: Array = _rest_hand_box(made[i][1], sk, bone)
			print("real %s: %s hand box from its vertices %s m" % [m["name"], "left" if i == 0 else "right", rest_box[2]])
			sk.skeleton_updated.connect(func() -> void:
				boxes[i] = _posed_box(sk, bone, rest_box[0])
				if i == 0:
					contacts[0] = comps[0].get_contact_point())
		check(comps[0].request(comps[1]) and comps[1].accept(), "%s: paired" % m["name"])
		made[0][0].move_input = Vector3(0, 0, -1)
		var worst := 0.0
		var worst_overlap := 0.0
		var samples := 0
		for f in 180:
			await physics_frame
			if f > 60 and comps[0].are_hands_connected() and comps[1].get_hand_weight() >= 0.999 and boxes[0] != null and boxes[1] != null:
				samples += 1
				var contact: Vector3 = contacts[0]
				worst = maxf(worst, maxf(HAND_BOX.distance_to(boxes[0], contact), HAND_BOX.distance_to(boxes[1], contact)))
				worst_overlap = maxf(worst_overlap, HAND_BOX.overlap(boxes[0], boxes[1]))
		var ik: LimbIK = comps[0].get_hand_ik()
		check(ik != null and ik.get_resolved_bones().size() == 3 and ik.get_resolved_bones()[2] == m["bones"]["LeftHand"],
			"%s: the initiator's left hand is found" % m["name"], m["bones"]["LeftHand"], ik.get_resolved_bones() if ik else null)
		check(samples > 30, "%s: hands held while walking" % m["name"], "> 30", samples)
		check(worst <= 0.01, "%s: both hands within 1 cm of the shared contact" % m["name"], 0.01, worst)
		check(worst_overlap <= 0.005, "%s: the hands overlap by at most 5 mm" % m["name"], 0.005, worst_overlap)
		print("real %s: hold_hand hand to contact %.3f mm, hands overlap %.3f mm over %d frames, k %.3f" % [
			m["name"], worst * 1000.0, worst_overlap * 1000.0, samples, comps[0].get_proportion()])
		world.queue_free()
		await frames(2)


## Walking along a wall, the near hand touches it: the wrist within 5 cm of its place off the wall
## (half the hand's thickness plus the touch's 5 cm), the palm (the hand's thinnest axis, from its
## vertices) within 10° of the wall's normal.
func test_env_touch_walking_along_a_wall_touches_it() -> void:
	for m in MODELS:
		for face_x in [-0.45, 0.45]:
			var world := add(Node3D.new()) as Node3D
			add_floor(world, 40.0)
			var sign_x := signf(face_x)
			var wall := add_box(Vector3(face_x + 0.1 * sign_x, 1.5, -2.0), Vector3(0.2, 3.0, 14.0), 2, world)
			wall.collision_mask = 0
			var made := _character(m, world, Vector3(0, 0, 4))
			var body: TestCharacter = made[0]
			var node := EnvironmentInteractionStateMachine.new()
			node.interactable_mask = 2
			body.add_child(node)
			body.move_input = Vector3(0, 0, -1)
			node.move_input = Vector3(0, 0, -1)
			var side := "Left" if face_x < 0.0 else "Right"
			var what := "%s wall %s" % [m["name"], side]
			var touched := await wait_until(func() -> bool: return node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH, 8.0)
			check(touched, "%s: the hand reaches Touch" % what)
			var sk := GltfModel.skeleton(made[1])
			var hand_bone := sk.find_bone(m["bones"][side + "Hand"])
			var thin: Vector3 = _rest_hand_box(made[1], sk, hand_bone)[1]
			var rest_basis := sk.get_bone_global_rest(hand_bone).basis.orthonormalized()
			var worst_angle := 0.0
			var worst_wrist := 0.0
			var samples := 0
			while touched and node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH and samples < 20:
				var hand: Transform3D = (await _world_poses(sk, [hand_bone]))[0]
				if node.get_state() != EnvironmentInteractionStateMachine.STATE_TOUCH:
					break
				samples += 1
				var palm := (hand.basis.orthonormalized() * thin).normalized()
				worst_angle = maxf(worst_angle, rad_to_deg(acos(clampf(absf(palm.dot(Vector3(sign_x, 0, 0))), 0.0, 1.0))))
				worst_wrist = maxf(worst_wrist, absf((face_x - hand.origin.x) * sign_x - 0.05))
			check(samples >= 5, "%s: sampled the touch" % what, ">= 5", samples)
			check(worst_angle <= 10.0, "%s: the palm faces the wall within 10°" % what, "<= 10°", worst_angle)
			check(worst_wrist <= 0.05, "%s: the wrist within 5 cm of its place off the wall" % what, "<= 0.05", worst_wrist)
			print("real %s: env_touch palm angle error %.2f°, wrist off its place %.4f m over %d frames, k %.3f" % [what, worst_angle, worst_wrist, samples, node.get_proportion()])
			world.queue_free()
			await frames(2)


## A rope anchored on the model's hand bone hangs from it while the model walks in place: the first
## point at the bone's position within 1 mm every physics frame.
func test_rope_hangs_from_the_hand_bone_while_the_model_animates() -> void:
	for m in MODELS:
		var world := add(Node3D.new()) as Node3D
		add_floor(world)
		var made := _character(m, world, Vector3.ZERO)
		var sk := GltfModel.skeleton(made[1])
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


## The model's root scaled (1, 1.2, 1) (a stretched import): the height seen in the world, LimbIK on
## each arm and a walking pair, each figure printed and asserted: the height against the stretched
## mesh's bounds (10 %), LimbIK within 1 cm × 1.2, both hands within 1 cm × 1.2 of the contact and
## overlapping by at most 5 mm × 1.2.
func test_a_model_stretched_1_2_times_upward() -> void:
	_rng.seed = 16
	var stretch := Vector3(1, 1.2, 1)
	for m in MODELS:
		var holder := add(Node3D.new()) as Node3D
		var root := _model(m, holder)
		root.scale = stretch
		var sk := GltfModel.skeleton(root)
		await frames(1)
		var d := HumanoidRig.describe(sk)
		var height: float = d["height"] * (sk.global_transform.basis * (d["up"] as Vector3)).length()
		var bounds := GltfModel.skinned_bounds(root)
		var herr := absf(height - bounds.size.y) / bounds.size.y
		check(herr <= 0.10, "%s stretched: height within 10 %% of the mesh's bounds" % m["name"], bounds.size.y, height)
		var worst := 0.0
		for side in ["Left", "Right"]:
			var bones := ["UpperArm", "LowerArm", "Hand"].map(func(b: String) -> int: return sk.find_bone(m["bones"][side + b]))
			var rest := await _world_poses(sk, bones)
			var reach := rest[0].origin.distance_to(rest[1].origin) + rest[1].origin.distance_to(rest[2].origin)
			var ik := LimbIK.new()
			ik.limb = LimbIK.LIMB_LEFT_ARM if side == "Left" else LimbIK.LIMB_RIGHT_ARM
			sk.add_child(ik)
			for t in 4:
				var dir := Vector3(_rng.randf_range(-1, 1), _rng.randf_range(-1, 1), _rng.randf_range(-1, 1)).normalized()
				# Half the reach at most: every direction stays reachable however the stretch bends it.
				var goal := rest[0].origin + dir * reach * _rng.randf_range(0.3, 0.5)
				ik.target_transform = Transform3D(Basis.IDENTITY, goal)
				var got := await _world_poses(sk, bones)
				worst = maxf(worst, got[2].origin.distance_to(goal))
			ik.queue_free()
			await frames(2)
		check(worst <= 0.012, "%s stretched: LimbIK within 1 cm × 1.2 of reachable targets" % m["name"], 0.012, worst)
		holder.queue_free()
		# A walking pair of stretched models.
		var world := add(Node3D.new()) as Node3D
		add_floor(world)
		var room := HoldHandRoom.new()
		world.add_child(room)
		var made := []
		var comps := []
		for i in 2:
			made.append(_character(m, world, Vector3(i * 0.8, 0, 0)))
			(made[i][1] as Node3D).scale = stretch
			var comp := HoldHandComponent.new()
			made[i][0].add_child(comp)
			comps.append(comp)
		await physics_frames(2)
		var boxes := [null, null]
		var contacts := [Vector3.ZERO]
		for i in 2:
			var psk := GltfModel.skeleton(made[i][1])
			var bone := psk.find_bone(m["bones"]["LeftHand" if i == 0 else "RightHand"])
			var rest_box: Array = _rest_hand_box(made[i][1], psk, bone)
			psk.skeleton_updated.connect(func() -> void:
				boxes[i] = _posed_box(psk, bone, rest_box[0])
				if i == 0:
					contacts[0] = comps[0].get_contact_point())
		check(comps[0].request(comps[1]) and comps[1].accept(), "%s stretched: paired" % m["name"])
		made[0][0].move_input = Vector3(0, 0, -1)
		var gap := 0.0
		var overlap := 0.0
		var samples := 0
		for f in 180:
			await physics_frame
			if f > 60 and comps[0].are_hands_connected() and comps[1].get_hand_weight() >= 0.999 and boxes[0] != null and boxes[1] != null:
				samples += 1
				gap = maxf(gap, maxf(HAND_BOX.distance_to(boxes[0], contacts[0]), HAND_BOX.distance_to(boxes[1], contacts[0])))
				overlap = maxf(overlap, HAND_BOX.overlap(boxes[0], boxes[1]))
		check(samples > 30, "%s stretched: hands held while walking" % m["name"], "> 30", samples)
		check(gap <= 0.012, "%s stretched: both hands within 1 cm × 1.2 of the contact" % m["name"], 0.012, gap)
		check(overlap <= 0.006, "%s stretched: the hands overlap by at most 5 mm × 1.2" % m["name"], 0.006, overlap)
		print("real %s stretched (1, 1.2, 1): height %.4f m, mesh bounds %.4f m (%.2f %%); limb_ik worst %.4f mm; hold_hand hand to contact %.3f mm, hands overlap %.3f mm over %d frames" % [
			m["name"], height, bounds.size.y, herr * 100.0, worst * 1000.0, gap * 1000.0, overlap * 1000.0, samples])
		world.queue_free()
		await frames(2)
