# timeout: 300
extends EntwineTest
## Characters and bodies far from unit scale: no node may panic (a panic is an `ERROR:`) or write a
## non-finite pose. Godot's `Basis.orthonormalized()` asserts below a determinant of 1e-5, i.e. at a
## uniform scale of about 0.02, which an FBX armature imported at 0.01 has.

const CHARACTER := preload("res://characters/test_character.tscn")
const HAND_BOX := preload("res://tests/lib/hand_box.gd")
const KIT := preload("res://tests/rig/rig_kit.gd")


## Every bone pose and the body's transform are finite.
func _finite(c: TestCharacter) -> bool:
	var sk := c.get_skeleton()
	if not (c.global_transform.origin.is_finite() and c.global_transform.basis.x.is_finite()):
		return false
	for i in sk.get_bone_count():
		var t := sk.get_bone_global_pose(i)
		if not (t.origin.is_finite() and t.basis.x.is_finite() and t.basis.y.is_finite() and t.basis.z.is_finite()):
			return false
	return true


## A pair holding hands, a wall-touching walker and a two-soldier squad, all under a node scaled
## by [param s], run for a second of walking.
func _run_scaled(s: Vector3) -> void:
	var world := add(Node3D.new()) as Node3D
	world.scale = s
	add_floor(world)
	add_box(Vector3(0.9, 1.0, -2.0), Vector3(0.2, 2.0, 6.0), 1, world)
	var room := EntwineHoldHandRoom.new()
	world.add_child(room)
	var chars: Array[TestCharacter] = []
	var comps: Array[HoldHandComponent] = []
	for i in 2:
		var c := CHARACTER.instantiate() as TestCharacter
		c.position = Vector3(-1.0 - i * 0.8, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		c.add_child(comp)
		chars.append(c)
		comps.append(comp)
	var walker := CHARACTER.instantiate() as TestCharacter
	walker.position = Vector3(0.4, 0, 0)
	world.add_child(walker)
	var touch := EnvironmentInteractionStateMachine.new()
	walker.add_child(touch)
	chars.append(walker)
	var squad := FormationController.new()
	world.add_child(squad)
	squad.position = Vector3(3, 0, 0)
	for i in 2:
		var soldier := CHARACTER.instantiate() as TestCharacter
		soldier.position = Vector3(i * 0.8, 0, 0)
		squad.add_child(soldier)
		chars.append(soldier)
	await physics_frames(2)
	comps[0].request(comps[1])
	comps[1].accept()
	squad.dress()
	squad.salute()
	chars[0].move_input = Vector3(0, 0, -1)
	walker.move_input = Vector3(0, 0, -1)
	for frame in 60:
		await physics_frames(1)
		for c in chars:
			if not _finite(c):
				check(false, "every pose finite at scale %s (frame %d)" % [s, frame], "finite", c.name)
				return


func test_uniform_scale_0_01_never_panics_or_goes_non_finite() -> void:
	await _run_scaled(Vector3.ONE * 0.01)


func test_non_uniform_and_large_scales_never_panic() -> void:
	await _run_scaled(Vector3(0.01, 0.02, 0.005))
	await _run_scaled(Vector3.ONE * 100.0)


## The hand on [param bone] of a test character as its visible box (the mesh on its
## BoneAttachment3D) in the world, in the skeleton's current pose.
func _hand_box(c: TestCharacter, bone: String) -> Array:
	var sk := c.get_skeleton()
	var mesh: MeshInstance3D = null
	for child in sk.get_node("Att_" + bone).get_children():
		if child is MeshInstance3D and (child as MeshInstance3D).mesh is BoxMesh:
			mesh = child
	var frame := sk.global_transform * sk.get_bone_global_pose(sk.find_bone(bone)) * mesh.transform
	return HAND_BOX.from_frame(frame, Vector3.ZERO, (mesh.mesh as BoxMesh).size)


## At scales 0.01, 1 and 100 (the whole world scaled) a walking pair keeps both hands on the shared
## contact (≤ 1 cm × scale) palm to palm (boxes overlap ≤ 5 mm × scale), with no setting made by
## hand: spacing, speeds and connection distances follow the characters' size.
func test_walking_pair_meets_its_contract_at_each_scale() -> void:
	for s in [0.01, 1.0, 100.0]:
		var world := add(Node3D.new()) as Node3D
		world.scale = Vector3.ONE * s
		add_floor(world)
		var room := EntwineHoldHandRoom.new()
		world.add_child(room)
		var chars: Array[TestCharacter] = []
		var comps: Array[HoldHandComponent] = []
		for i in 2:
			var c := CHARACTER.instantiate() as TestCharacter
			c.position = Vector3(i * 1.5, 0, 0)
			c.move_speed *= s
			world.add_child(c)
			var comp := HoldHandComponent.new()
			c.add_child(comp)
			chars.append(c)
			comps.append(comp)
		await physics_frames(2)
		var hand_boxes := func(i: int) -> Array: return _hand_box(chars[i], "LeftHand" if i == 0 else "RightHand")
		var got: Dictionary = await KIT.walk_pair(self, chars, [chars[0].get_skeleton(), chars[1].get_skeleton()], comps, hand_boxes)
		check(got["paired"], "scale %s: paired" % s)
		var samples: int = got["samples"]
		var worst: float = got["gap"]
		var worst_overlap: float = got["overlap"]
		print("rig_scale pair scale %s: hand to contact %.3f mm, hands overlap %.3f mm (per unit scale) over %d frames, k %.4f" % [
			s, worst * 1000.0 / s, worst_overlap * 1000.0 / s, samples, comps[0].get_proportion()])
		check(samples > 60, "scale %s: hands held while walking" % s, "> 60", samples)
		check(worst <= 0.01 * s, "scale %s: both hands within 1 cm × scale of the contact" % s, 0.01 * s, worst)
		check(worst_overlap <= 0.005 * s, "scale %s: hands overlap ≤ 5 mm × scale" % s, 0.005 * s, worst_overlap)
		world.queue_free()
		await frames(2)


## At scales 0.01, 1 and 100 a character walking along a wall puts its near hand on it: the hand's
## box within 5 cm × scale of the wall's face and its palm (the box's thin axis) within 10° of the
## wall's normal, with no setting made by hand.
func test_wall_touch_meets_its_contract_at_each_scale() -> void:
	for s in [0.01, 1.0, 100.0]:
		var world := add(Node3D.new()) as Node3D
		world.scale = Vector3.ONE * s
		var face_x := 0.45
		KIT.wall_world(self, world, face_x)
		var c := CHARACTER.instantiate() as TestCharacter
		c.position = Vector3(0, 0, 4)
		c.move_speed *= s
		world.add_child(c)
		# The hand's box side nearest the wall against the wall's face (in world units), its palm
		# (the box's thin axis) against the wall's normal.
		var measure := func() -> Array:
			var b: Array = _hand_box(c, "RightHand")
			var thin: Vector3 = (b[1] as Array)[2]
			var reach: float = (b[0] as Vector3).x + HAND_BOX.extent_along(b, Vector3.RIGHT)
			return [rad_to_deg(acos(clampf(absf(thin.dot(Vector3.RIGHT)), 0.0, 1.0))), absf(face_x * s - reach)]
		var got: Dictionary = await KIT.touch_wall(self, c, c.get_skeleton(), measure)
		var node: EnvironmentInteractionStateMachine = got["node"]
		check(got["touched"], "scale %s: the hand reaches Touch" % s)
		var samples: int = got["samples"]
		var worst_angle: float = got["angle"]
		var worst_gap: float = got["wrist"]
		print("rig_scale wall touch scale %s: palm angle %.2f°, hand to wall %.2f mm (per unit scale) over %d frames, k %.4f" % [
			s, worst_angle, worst_gap * 1000.0 / s, samples, node.get_proportion()])
		check(samples >= 5, "scale %s: sampled the touch" % s, ">= 5", samples)
		check(worst_angle <= 10.0, "scale %s: the palm faces the wall within 10°" % s, "<= 10°", worst_angle)
		check(worst_gap <= 0.05 * s, "scale %s: the hand within 5 cm × scale of the wall" % s, 0.05 * s, worst_gap)
		world.queue_free()
		await frames(2)
