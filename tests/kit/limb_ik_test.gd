extends EntwineTest
## EntwineLimbIK on the test character's left arm, through its public API.

const CHARACTER := preload("res://characters/test_character.tscn")

var _character: TestCharacter
var _skeleton: Skeleton3D


## A still character (animation off) with an EntwineLimbIK on its left arm aiming at a target node.
func _setup() -> EntwineLimbIK:
	_character = add(CHARACTER.instantiate()) as TestCharacter
	_character.frozen = true
	_character.animation_tree.active = false
	_skeleton = _character.get_skeleton()
	var target := Node3D.new()
	target.name = "Target"
	add(target)
	var ik := EntwineLimbIK.new()
	_skeleton.add_child(ik)
	ik.target_node = ik.get_path_to(target)
	return ik


func _target() -> Node3D:
	return root.get_node("Target") as Node3D


## Returns the world transforms of [param bones] after the next skeleton update (read during the
## update, when modifiers have run), or after a few frames when the skeleton has nothing to update.
func _world_poses(bones: Array) -> Array[Transform3D]:
	var captured: Array[Transform3D] = []
	var read := func() -> Array[Transform3D]:
		var out: Array[Transform3D] = []
		for bone in bones:
			out.append(_skeleton.global_transform * _skeleton.get_bone_global_pose(_skeleton.find_bone(bone)))
		return out
	var capture := func() -> void:
		if captured.is_empty():
			captured.assign(read.call())
	_skeleton.skeleton_updated.connect(capture)
	for i in 5:
		await process_frame
		if not captured.is_empty():
			break
	_skeleton.skeleton_updated.disconnect(capture)
	return captured if not captured.is_empty() else read.call()


## Returns the world positions of the chain's joints after the next skeleton update.
func _joints() -> Array[Vector3]:
	var out: Array[Vector3] = []
	for t in await _world_poses(["LeftUpperArm", "LeftLowerArm", "LeftHand"]):
		out.append(t.origin)
	return out


func _hand_basis() -> Basis:
	return (await _world_poses(["LeftHand"]))[0].basis.orthonormalized()


func test_reachable_targets_are_reached_within_a_millimetre() -> void:
	var ik := _setup()
	var rest := await _joints()
	var shoulder := rest[0]
	var reach := ik.get_chain_length()
	check_near(reach, 0.54, 0.01, "chain length is upper arm + forearm")
	for offset in [Vector3(0, -0.2, -0.35), Vector3(-0.3, 0.0, -0.2), Vector3(0.15, 0.25, -0.3),
			Vector3(-0.1, -0.45, 0.1)]:
		_target().global_position = shoulder + offset
		var j := await _joints()
		check_near(j[2], shoulder + offset, 0.001, "hand reaches %s from the shoulder" % offset)
		check_near(j[0].distance_to(j[1]), rest[0].distance_to(rest[1]), 0.0005, "upper arm keeps its length")
		check_near(j[1].distance_to(j[2]), rest[1].distance_to(rest[2]), 0.0005, "forearm keeps its length")


func test_the_hand_follows_whichever_node_the_target_path_leads_to_now() -> void:
	# EntwineLimbIK keeps the target node it found: a freed target replaced by another of the same name,
	# or target_node set to another node, must be followed at once.
	var ik := _setup()
	var shoulder := (await _joints())[0]
	var a := shoulder + Vector3(0, -0.2, -0.35)
	_target().global_position = a
	check_near((await _joints())[2], a, 0.001, "the hand reaches the first target")
	_target().free()
	var second := Node3D.new()
	second.name = "Target"
	add(second)
	var b := shoulder + Vector3(-0.3, 0.0, -0.2)
	second.global_position = b
	check_near((await _joints())[2], b, 0.001, "a new node at the same path is followed")
	var third := Node3D.new()
	third.name = "OtherTarget"
	add(third)
	var c := shoulder + Vector3(0.15, 0.25, -0.3)
	third.global_position = c
	ik.target_node = ik.get_path_to(third)
	check_near((await _joints())[2], c, 0.001, "target_node set to another node: that one is followed")


func test_a_cleared_target_node_hands_over_to_target_transform() -> void:
	# EntwineLimbIK keeps whether target_node is set from its setter: clearing the path must make the
	# hand go to target_transform at once.
	var ik := _setup()
	var shoulder := (await _joints())[0]
	var a := shoulder + Vector3(0, -0.2, -0.35)
	_target().global_position = a
	check_near((await _joints())[2], a, 0.001, "the hand reaches the target node")
	var b := shoulder + Vector3(-0.3, 0.0, -0.2)
	ik.target_transform = Transform3D(Basis(), b)
	ik.target_node = NodePath()
	check_near((await _joints())[2], b, 0.001, "target_node cleared: target_transform is followed")
	ik.set("target_node", ik.get_path_to(_target()))
	check_near((await _joints())[2], a, 0.001, "target_node set again (through set()): the node is followed")


func test_a_limb_ik_moved_to_another_skeleton_works_on_that_one() -> void:
	# EntwineLimbIK keeps its skeleton from pass to pass: moved under another character's skeleton, it
	# must solve that skeleton's arm and leave the first one to its own pose.
	var ik := _setup()
	var first := _skeleton
	var first_shoulder := (await _joints())[0]
	var a := first_shoulder + Vector3(0, -0.2, -0.35)
	_target().global_position = a
	check_near((await _joints())[2], a, 0.001, "the first character's hand reaches the target")
	var other := add(CHARACTER.instantiate()) as TestCharacter
	other.frozen = true
	other.animation_tree.active = false
	other.global_position = Vector3(3, 0, 0)
	var second := other.get_skeleton()
	ik.target_node = NodePath()
	ik.reparent(second, false)
	_skeleton = second
	var shoulder := (await _joints())[0]
	check(shoulder.distance_to(first_shoulder) > 2.0, "the second character stands elsewhere")
	var b := shoulder + Vector3(-0.3, 0.0, -0.2)
	ik.target_transform = Transform3D(Basis(), b)
	check_near((await _joints())[2], b, 0.001, "the hand of the skeleton it was moved to reaches the target")
	_skeleton = first
	var left := await _joints()
	check(left[2].distance_to(a) > 0.05, "the first skeleton's hand is no longer driven (%.3f m from the old target)" % left[2].distance_to(a))
	check_near(left[0], first_shoulder, 0.001, "the first skeleton keeps its shoulder")


func test_unreachable_target_makes_the_arm_point_straight_at_it() -> void:
	var ik := _setup()
	var shoulder := (await _joints())[0]
	var goal := shoulder + Vector3(-1.5, 0.8, -2.0)
	_target().global_position = goal
	var j := await _joints()
	var to_goal := (goal - shoulder).normalized()
	check(rad_to_deg((j[2] - shoulder).angle_to(to_goal)) < 0.1, "hand on the shoulder→target line",
		"< 0.1°", rad_to_deg((j[2] - shoulder).angle_to(to_goal)))
	check(rad_to_deg((j[1] - shoulder).angle_to(to_goal)) < 0.1, "elbow on the shoulder→target line",
		"< 0.1°", rad_to_deg((j[1] - shoulder).angle_to(to_goal)))
	check_near(j[2].distance_to(shoulder), ik.get_chain_length(), 0.001, "the arm is fully stretched")


func test_position_weight_blends_between_pose_and_target() -> void:
	var ik := _setup()
	ik.position_weight = 0.0
	var animated := (await _joints())[2]
	var goal := animated + Vector3(0.05, 0.25, -0.2)
	_target().global_position = goal
	check_near((await _joints())[2], animated, 0.0005, "weight 0 leaves the hand where the pose put it")
	ik.position_weight = 0.5
	check_near((await _joints())[2], animated.lerp(goal, 0.5), 0.001, "weight 0.5 moves the hand halfway")
	ik.position_weight = 1.0
	check_near((await _joints())[2], goal, 0.001, "weight 1 puts the hand on the target")


func test_rotation_weight_turns_the_hand_to_the_target() -> void:
	var ik := _setup()
	var shoulder := (await _joints())[0]
	_target().global_transform = Transform3D(Basis(Vector3(1, 0, 0), 0.7).rotated(Vector3.UP, 0.4),
		shoulder + Vector3(0, -0.2, -0.3))
	ik.rotation_weight = 1.0
	var hand := await _hand_basis()
	var err := rad_to_deg(hand.get_rotation_quaternion().angle_to(_target().global_basis.get_rotation_quaternion()))
	check(err < 0.1, "hand rotation equals the target's at rotation weight 1", "< 0.1°", err)


func test_influence_zero_leaves_the_pose_untouched() -> void:
	var ik := _setup()
	ik.active = false
	var before := await _joints()
	ik.active = true
	ik.influence = 0.0
	_target().global_position = before[0] + Vector3(0, 0.2, -0.4)
	var after := await _joints()
	for k in 3:
		check_near(after[k], before[k], 0.0001, "joint %d unchanged at influence 0" % k)
	ik.influence = 1.0
	check_near((await _joints())[2], before[0] + Vector3(0, 0.2, -0.4), 0.001, "influence 1 reaches again")


func test_elbow_bends_toward_the_pole() -> void:
	var ik := _setup()
	var shoulder := (await _joints())[0]
	var goal := shoulder + Vector3(0, -0.1, -0.4)
	_target().global_position = goal
	var pole := Node3D.new()
	pole.name = "Pole"
	add(pole)
	ik.pole_node = ik.get_path_to(pole)
	for side in [Vector3(-1, 0, 0), Vector3(0, -1, 0), Vector3(0, 1, 0), Vector3(1, 0, 0)]:
		pole.global_position = shoulder + side
		# The bend side turns toward a new pole over a few frames (it never flips at once).
		var j := await _joints()
		var settle := Time.get_ticks_msec() + 1000
		while Time.get_ticks_msec() < settle:
			j = await _joints()
		var line := (j[2] - j[0]).normalized()
		var bend := j[1] - j[0]
		bend -= line * bend.dot(line)
		var pole_off: Vector3 = side - line * side.dot(line)
		check(bend.dot(pole_off) > 0.0 and bend.length() > 0.02, "elbow bends toward a pole at %s" % side,
			"positive", bend.dot(pole_off))
		check_near(j[2], goal, 0.001, "hand still on target with pole %s" % side)


func test_missing_bone_warns_once_and_leaves_the_pose() -> void:
	var ik := _setup()
	ik.active = false
	var before := await _joints()
	ik.active = true
	ik.end_bone = "LeftHandd"
	_target().global_position = before[0] + Vector3(0, 0.2, -0.4)
	for i in 5:
		var after := await _joints()
		check_near(after[2], before[2], 0.0001, "hand untouched while the chain is broken")
	expect_warning("'LeftHandd' not found")
	check(logged_count("'LeftHandd' not found") == 1, "exactly one warning names the missing bone", 1,
		logged_count("'LeftHandd' not found"))
	check(not ik.is_chain_valid(), "is_chain_valid() reports the broken chain")
	ik.end_bone = "LeftHand"
	check(ik.is_chain_valid(), "fixing the name repairs the chain")
	check_near((await _joints())[2], before[0] + Vector3(0, 0.2, -0.4), 0.001, "the repaired chain reaches")


func test_misordered_chain_warns_once() -> void:
	var ik := _setup()
	ik.upper_bone = "LeftHand"
	ik.end_bone = "LeftUpperArm"
	await _joints()
	await _joints()
	expect_warning("is not a descendant of 'LeftHand'")
	check(logged_count("is not a descendant of 'LeftHand'") == 1, "one warning names the misordered bone",
		1, logged_count("is not a descendant of 'LeftHand'"))


func test_non_finite_target_is_ignored() -> void:
	var ik := _setup()
	ik.active = false
	var before := await _joints()
	ik.active = true
	ik.target_node = NodePath()
	ik.target_transform = Transform3D(Basis(), Vector3(NAN, 0, INF))
	var after := await _joints()
	check_near(after[2], before[2], 0.0001, "a NaN target leaves the hand where it was")
	check(after[1].is_finite() and after[2].is_finite(), "no NaN in the pose")


func test_solve_chain_runs_the_same_solver_without_a_skeleton() -> void:
	var ik := _setup()
	ik.active = false
	var s := _skeleton
	var chain: Array[Transform3D] = []
	for bone in ["LeftUpperArm", "LeftLowerArm", "LeftHand"]:
		chain.append(s.get_bone_global_pose(s.find_bone(bone)))
	var goal := Transform3D(Basis(), chain[0].origin + Vector3(-0.1, -0.2, -0.35))
	var out := EntwineLimbIK.solve_chain(chain[0], chain[1], chain[2], goal, chain[0].origin + Vector3(0, -1, 1), 1.0, 0.0)
	check(out.size() == 3, "three joint transforms come back", 3, out.size())
	check_near(out[2].origin, goal.origin, 0.001, "the end reaches the target")
	check_near(out[0].origin.distance_to(out[1].origin), chain[0].origin.distance_to(chain[1].origin), 0.0005,
		"the upper segment keeps its length")
	var nan := EntwineLimbIK.solve_chain(chain[0], chain[1], chain[2], Transform3D(Basis(), Vector3(NAN, 0, 0)),
		chain[0].origin, 1.0, 0.0)
	check_near(nan[2].origin, chain[2].origin, 1e-5, "a NaN target returns the input")
