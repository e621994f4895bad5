# timeout: 180
extends EntwineTest
## FormationController's soldiers with skeletons: eyes right on their rank's guide during dress()
## (and front again on the next command), the salute through EntwineLimbIK, the head's turning speed
## limit, a skeleton freed mid-march, and agents without a skeleton left alone.

const CHARACTER := preload("res://characters/test_character.tscn")
const FILES := 4
const SPACING := 1.2

## Per skeleton: the head's and right hand's global transforms read during the last skeleton
## update (after the modifiers ran).
var _poses := {}


## Returns a squad of [param count] test characters standing near the slots of a
## [constant FILES]-file column (a few centimetres off, so the dress has work to do).
func _soldiers(count: int, name := "Squad") -> FormationController:
	var squad := FormationController.new()
	squad.name = name
	squad.add_formation("ranks", "(shape: Column(files: %d), spacing: %s)" % [FILES, SPACING])
	squad.formation = "ranks"
	var ranks := ceili(float(count) / FILES)
	var rng := RandomNumberGenerator.new()
	rng.seed = 11
	for i in count:
		var soldier := CHARACTER.instantiate() as TestCharacter
		soldier.name = "Soldier%d" % i
		var x := (i % FILES - (FILES - 1) * 0.5) * SPACING
		var z := (i / FILES - (ranks - 1) * 0.5) * SPACING
		soldier.position = Vector3(x + rng.randf_range(-0.05, 0.05), 0, z + rng.randf_range(-0.05, 0.05))
		soldier.frozen = true  # the controller moves them
		soldier.drive_animation = false
		squad.add_child(soldier)
	add(squad)
	for i in count:
		_watch(_soldier(squad, i))
	return squad


func _soldier(squad: FormationController, i: int) -> TestCharacter:
	return squad.get_child(i) as TestCharacter


func _watch(soldier: TestCharacter) -> void:
	var skeleton := soldier.get_skeleton()
	var head := skeleton.find_bone("Head")
	var hand := skeleton.find_bone("RightHand")
	var id := skeleton.get_instance_id()
	skeleton.skeleton_updated.connect(func() -> void:
		_poses[id] = [skeleton.global_transform * skeleton.get_bone_global_pose(head),
			skeleton.global_transform * skeleton.get_bone_global_pose(hand),
			skeleton.global_transform])


## Returns [head, right hand, skeleton] global transforms of soldier [param i] at its last update.
func _pose(squad: FormationController, i: int) -> Array:
	return _poses.get(_soldier(squad, i).get_skeleton().get_instance_id(), [])


## Returns the angle (degrees) between soldier [param i]'s head forward (−Z of the head bone) and
## the direction from its head to [param point].
func _head_error_to(squad: FormationController, i: int, point: Vector3) -> float:
	var head: Transform3D = _pose(squad, i)[0]
	var forward := -head.basis.orthonormalized().z
	return rad_to_deg(forward.angle_to(point - head.origin))


func test_dress_turns_every_head_toward_its_guide_and_back_to_the_front() -> void:
	var squad := _soldiers(8)
	var eyes := []
	squad.eyes_changed.connect(func(right: bool) -> void: eyes.append(right))
	var bearings := {}
	squad.agent_bearing_changed.connect(func(i: int, b: int) -> void: bearings[i] = b)
	await physics_frames(3)
	for i in 8:
		check(squad.get_soldier_bearing(i) != null, "soldier %d got an EntwineSoldierBearing" % i)
	check(squad.get_agent_guide(0) == -1, "no guide before a dress", -1, squad.get_agent_guide(0))
	check(squad.dress(), "dress() accepted")
	check(squad.is_eyes_right(), "eyes right after dress()")
	check(eyes == [true], "eyes_changed(true) emitted once", [true], eyes)
	check(await wait_until(func() -> bool: return squad.settle_time > 0.0, 10.0), "the squad settles after the dress")
	await physics_frames(60)  # the heads finish turning (90° at 180°/s: 0.5 s)
	var lookers := 0
	var worst := 0.0
	for i in 8:
		var g := squad.get_agent_guide(i)
		if g < 0:
			# A guide keeps eyes front: its head looks where its body faces.
			var body := _soldier(squad, i).global_basis
			var err := _head_error_to(squad, i, _pose(squad, i)[0].origin - body.z)
			check(err <= 5.0, "guide %d looks to the front (°)" % i, "<= 5", err)
			continue
		lookers += 1
		check(squad.get_agent_bearing(i) & FormationController.BEARING_EYES_RIGHT != 0, "agent %d has eyes right" % i)
		check(bearings.get(i, 0) & FormationController.BEARING_EYES_RIGHT != 0, "agent_bearing_changed reported agent %d" % i)
		# The guide is on the soldier's right, in its rank.
		var me := _soldier(squad, i)
		var to_guide := _soldier(squad, g).global_position - me.global_position
		check(to_guide.normalized().dot(me.global_basis.x) > 0.95, "agent %d's guide %d is on its right" % [i, g], "> 0.95", to_guide.normalized().dot(me.global_basis.x))
		var err := _head_error_to(squad, i, _pose(squad, g)[0].origin)
		worst = maxf(worst, err)
		check(err <= 5.0, "agent %d's head points at its guide %d (°)" % [i, g], "<= 5", err)
	check(lookers == 6, "two ranks of four: six soldiers dress on two guides", 6, lookers)
	print("eyes right: worst head-to-guide angle %.3f° over %d soldiers" % [worst, lookers])

	# The next command turns the eyes front again.
	check(squad.halt(), "halt() accepted")
	check(not squad.is_eyes_right(), "eyes front after the next command")
	check(eyes == [true, false], "eyes_changed(false) emitted", [true, false], eyes)
	await physics_frames(75)
	var worst_front := 0.0
	for i in 8:
		var body := _soldier(squad, i).global_basis
		var err := _head_error_to(squad, i, _pose(squad, i)[0].origin - body.z)
		worst_front = maxf(worst_front, err)
		check(err <= 5.0, "agent %d looks to the front again (°)" % i, "<= 5", err)
	print("eyes front: worst head-to-front angle %.3f°" % worst_front)


func test_head_turns_no_faster_than_head_turn_speed() -> void:
	var squad := _soldiers(4)
	squad.head_turn_speed = deg_to_rad(90.0)
	await physics_frames(3)
	var skeleton := _soldier(squad, 0).get_skeleton()
	var head := skeleton.find_bone("Head")
	# The delta the modifiers use is the process time since the skeleton's last update.
	var clock := [0.0, 0.0]  # total process time, time at the last sample
	var on_frame := func() -> void: clock[0] += root.get_process_delta_time()
	process_frame.connect(on_frame)
	var samples: Array[Vector2] = []  # (angle turned since the last sample °, seconds)
	var last := [Vector3.ZERO]
	var on_update := func() -> void:
		var forward := -skeleton.get_bone_global_pose(head).basis.orthonormalized().z
		if last[0] != Vector3.ZERO:
			samples.append(Vector2(rad_to_deg(last[0].angle_to(forward)), clock[0] - clock[1]))
		last[0] = forward
		clock[1] = clock[0]
	skeleton.skeleton_updated.connect(on_update)
	squad.dress()
	await physics_frames(90)
	squad.halt()
	await physics_frames(90)
	skeleton.skeleton_updated.disconnect(on_update)
	process_frame.disconnect(on_frame)
	var turned := 0.0
	var fastest := 0.0
	for s in samples:
		turned += s.x
		if s.y > 0.0:
			fastest = maxf(fastest, s.x / s.y)
	check(turned > 150.0, "the head turned right and back (° in total)", "> 150", turned)
	check(fastest <= 90.0 * 1.02 + 0.5, "the head never turned faster than 90°/s", "<= 92.3", fastest)
	print("turn rate: fastest %.2f°/s with head_turn_speed 90°/s over %d frames, %.1f° turned" % [fastest, samples.size(), turned])


func test_salute_puts_the_right_hand_at_the_brow_and_releases_it() -> void:
	var squad := _soldiers(4)
	var saluting := []
	squad.salute_changed.connect(func(on: bool) -> void: saluting.append(on))
	check(await wait_until(func() -> bool: return squad.settle_time > 0.0, 10.0), "the squad settles in its slots")
	await physics_frames(10)
	var before: Array[Vector3] = []
	for i in 4:
		before.append(_soldier(squad, i).global_position)
	var rest_hand: Vector3 = _pose(squad, 0)[1].origin
	var ik := squad.get_soldier_bearing(0).get_node(squad.get_soldier_bearing(0).salute_ik_node) as EntwineLimbIK
	# The bearing runs the salute's solve in its own pass: the EntwineLimbIK stays off (the skeleton does
	# not run it a second time) at influence 1 (below 1 the skeleton would copy and compare all
	# its bone poses around it every frame, even with it off).
	check(not ik.active and ik.influence == 1.0, "before the salute its EntwineLimbIK is off at influence 1", "off, 1.0", [ik.active, ik.influence])
	check(squad.salute(), "salute() accepted")
	check(squad.is_saluting(), "saluting")
	check(saluting == [true], "salute_changed(true) emitted", [true], saluting)
	await physics_frames(8)
	var rising := squad.get_soldier_bearing(0).get_salute_weight()
	check(rising > 0.0 and rising < 1.0, "the arm is rising", "in (0, 1)", rising)
	check(not ik.active and ik.influence == 1.0 and is_equal_approx(ik.position_weight, rising) and is_equal_approx(ik.rotation_weight, rising),
		"while the arm rises, the salute's weight is its EntwineLimbIK's position and rotation weight, the EntwineLimbIK off",
		"off, 1.0, %f, %f" % [rising, rising], [ik.active, ik.influence, ik.position_weight, ik.rotation_weight])
	var hand_rising: Vector3 = _pose(squad, 0)[1].origin
	var brow_rising := (_pose(squad, 0)[0] as Transform3D) * (squad.get_soldier_bearing(0).salute_hand_offset as Vector3)
	check(hand_rising.distance_to(rest_hand) > 0.02 and hand_rising.distance_to(brow_rising) > 0.02, "the rising hand is between its animated place and the brow", "> 0.02 m from each", [hand_rising.distance_to(rest_hand), hand_rising.distance_to(brow_rising)])
	await physics_frames(37)  # raised in 0.4 s
	var worst := 0.0
	for i in 4:
		var bearing := squad.get_soldier_bearing(i)
		check(squad.get_agent_bearing(i) & FormationController.BEARING_SALUTING != 0, "agent %d salutes" % i)
		check_near(bearing.get_salute_weight(), 1.0, 1e-4, "agent %d's salute fully raised" % i)
		var pose := _pose(squad, i)
		var head: Transform3D = pose[0]
		# The test character's head bone has the character's axes, so the offset applies as is.
		var brow := head * (bearing.salute_hand_offset as Vector3)
		var hand: Vector3 = pose[1].origin
		var err := hand.distance_to(brow)
		worst = maxf(worst, err)
		check(err <= 0.03, "agent %d's right hand at the brow target (m)" % i, "<= 0.03", err)
		check_near(bearing.get_salute_target().origin, brow, 0.002, "agent %d's reported salute target" % i)
		# A salute: the hand is above the shoulders, to the right of the head.
		var local := (pose[2] as Transform3D).affine_inverse() * hand
		check(local.y > 1.55 and local.x > 0.05, "agent %d's hand is up at its right temple" % i, "y > 1.55, x > 0.05", local)
		check_near(_soldier(squad, i).global_position, before[i], 0.005, "saluting moves no soldier %d" % i)
	print("salute: worst hand-to-brow distance %.6f m over 4 soldiers" % worst)

	# Eyes right while saluting: the hand stays at the brow of the turned head.
	squad.dress()
	await physics_frames(90)
	var worst_turned := 0.0
	for i in 4:
		var pose := _pose(squad, i)
		var brow := (pose[0] as Transform3D) * (squad.get_soldier_bearing(i).salute_hand_offset as Vector3)
		worst_turned = maxf(worst_turned, (pose[1].origin as Vector3).distance_to(brow))
	check(worst_turned <= 0.03, "saluting with eyes right: hands at the brows (m)", "<= 0.03", worst_turned)
	print("salute with eyes right: worst hand-to-brow distance %.6f m" % worst_turned)

	check(squad.end_salute(), "end_salute() accepted")
	check(saluting == [true, false], "salute_changed(false) emitted", [true, false], saluting)
	check(squad.is_eyes_right(), "ending the salute is no command: eyes stay right")
	squad.halt()  # eyes front, so the hand can be compared with its place before
	await physics_frames(60)
	check_near(squad.get_soldier_bearing(0).get_salute_weight(), 0.0, 1e-4, "the salute's weight blended back to 0")
	check(not ik.active and ik.influence == 1.0, "lowered again, its EntwineLimbIK is off at influence 1", "off, 1.0", [ik.active, ik.influence])
	var hand_down: Vector3 = _pose(squad, 0)[1].origin
	var local_down := (_pose(squad, 0)[2] as Transform3D).affine_inverse() * hand_down
	check(local_down.y < 1.0, "the hand is back down by the hip", "< 1.0", local_down.y)
	check_near(local_down, (_pose(squad, 0)[2] as Transform3D).affine_inverse() * rest_hand, 0.03, "the hand is back in its animated place")


func test_salute_duration_ends_the_salute_by_itself() -> void:
	var squad := _soldiers(2)
	squad.salute_duration = 0.5
	var saluting := []
	squad.salute_changed.connect(func(on: bool) -> void: saluting.append(on))
	await physics_frames(3)
	squad.salute()
	await physics_frames(20)
	check(squad.is_saluting(), "still saluting after 0.33 s")
	await physics_frames(20)
	check(not squad.is_saluting(), "the salute ended after 0.5 s")
	check(saluting == [true, false], "salute_changed(true), then (false)", [true, false], saluting)
	# Hostile values are clamped with one warning each.
	squad.salute_duration = -3.0
	squad.head_turn_speed = NAN
	squad.salute()
	await physics_frames(5)
	expect_warning("salute_duration must be in 0..=600")
	check(logged_count("salute_duration must be in 0..=600") == 1, "a negative salute_duration warns once", 1, logged_count("salute_duration must be in 0..=600"))
	expect_warning("head_turn_speed must be in 1..=3600")
	check(logged_count("head_turn_speed must be in 1..=3600") == 1, "a NaN head_turn_speed warns once", 1, logged_count("head_turn_speed must be in 1..=3600"))
	await physics_frames(40)
	check(squad.is_saluting(), "the clamped salute (0 = until end_salute) holds")
	var look := squad.get_soldier_bearing(0).get_look_angles()
	check(is_finite(look.x) and is_finite(look.y), "the look stays finite", "finite", look)


func test_a_soldier_losing_its_skeleton_warns_once_and_keeps_marching() -> void:
	var squad := _soldiers(4)
	await physics_frames(3)
	squad.dress()
	squad.salute()
	await physics_frames(40)
	squad.march(Vector3(0, 0, -1), 1.0)
	await physics_frames(30)
	var victim := _soldier(squad, 1)
	victim.animation_tree.active = false
	victim.get_skeleton().free()
	var start := victim.global_position
	await physics_frames(90)
	expect_warning("lost its skeleton")
	check(logged_count("lost its skeleton") == 1, "exactly one warning for the lost skeleton", 1, logged_count("lost its skeleton"))
	check(squad.get_soldier_bearing(1) == null, "the soldier has no bearing any more")
	check(start.z - victim.global_position.z > 1.0, "it keeps marching (m forward in 1.5 s)", "> 1.0", start.z - victim.global_position.z)
	check_near(victim.global_position * Vector3(1, 0, 1), squad.get_slot_position(1) * Vector3(1, 0, 1), 0.1, "it keeps its slot while marching")
	# Its file-mates still dress and salute.
	check(squad.get_soldier_bearing(0).get_salute_weight() > 0.99, "the others still salute")
	squad.halt()
	await physics_frames(30)
	expect_warning("lost its skeleton")
	check(logged_count("lost its skeleton") == 1, "still one warning after the next command", 1, logged_count("lost its skeleton"))


func test_agents_without_a_skeleton_are_unaffected() -> void:
	# Two identical MultiMesh crowds; one dresses and salutes: positions stay identical.
	var crowds: Array[FormationController] = []
	for k in 2:
		var crowd := FormationController.new()
		crowd.name = "Crowd%d" % k
		crowd.agent_source = FormationController.AGENTS_INTERNAL
		crowd.internal_agent_count = 300
		crowd.formation = "box"
		crowd.step_noise = 0.0
		crowds.append(add(crowd) as FormationController)
	await physics_frames(2)
	for crowd in crowds:
		crowd.snap_to_slots()
	crowds[0].salute()
	for crowd in crowds:
		crowd.dress()
		crowd._advance(1.0)
		crowd.march(Vector3(1, 0, 0), 1.2)
		crowd._advance(1.0)
	var same := true
	for i in 300:
		same = same and crowds[0].get_agent_position(i) == crowds[1].get_agent_position(i) \
			and crowds[0].get_agent_heading(i) == crowds[1].get_agent_heading(i)
	check(same, "a saluting crowd moves exactly like one that does not")
	check(crowds[0].is_saluting() and crowds[0].get_agent_bearing(7) & FormationController.BEARING_SALUTING != 0, "the crowd's agents are in the saluting state")
	check(crowds[0].get_soldier_bearing(0) == null, "internal agents get no EntwineSoldierBearing")

	# Plain Node3D children: no skeleton, no bearing node, no warning.
	var markers := FormationController.new()
	markers.name = "Markers"
	for i in 6:
		var n := Node3D.new()
		n.position = Vector3(i * 1.2, 0, 0)
		markers.add_child(n)
	add(markers)
	await physics_frames(2)
	markers.dress()
	markers.salute()
	await physics_frames(20)
	for i in 6:
		check(markers.get_soldier_bearing(i) == null, "marker %d has no bearing" % i)
		check(markers.get_child(i).get_child_count() == 0, "nothing was added under marker %d" % i)
	check(logged_count("EntwineSoldierBearing") == 0, "no bearing warnings", 0, logged_count("EntwineSoldierBearing"))


func test_soldier_bearing_bad_setup_warns_once() -> void:
	var soldier := add(CHARACTER.instantiate()) as TestCharacter
	soldier.frozen = true
	var bearing := EntwineSoldierBearing.new()
	bearing.head_bone = "NoSuchHead"
	soldier.get_skeleton().add_child(bearing)
	bearing.looking = true
	bearing.look_target = Vector3(5, 1.6, 0)
	bearing.saluting = true
	await frames(10)
	expect_warning("head_bone 'NoSuchHead' not found")
	check(logged_count("head_bone 'NoSuchHead' not found") == 1, "a missing head bone warns once", 1, logged_count("head_bone 'NoSuchHead' not found"))
	bearing.head_bone = "Head"
	await frames(10)
	expect_warning("saluting needs salute_ik_node")
	check(logged_count("saluting needs salute_ik_node") == 1, "a salute without an EntwineLimbIK warns once", 1, logged_count("saluting needs salute_ik_node"))
	# create_salute_ik() fixes it; hostile values fall back safely.
	check(bearing.create_salute_ik() != null, "create_salute_ik() returns the new EntwineLimbIK")
	expect_warning("look_target must be finite")
	bearing.look_target = Vector3(NAN, 0, 0)
	bearing.turn_speed = deg_to_rad(-5.0)
	bearing.body_forward = Vector3.UP
	await wait_until(func() -> bool: return bearing.get_salute_weight() > 0.99, 3.0)
	expect_warning("body_forward must be a horizontal direction")
	check(logged_count("body_forward must be a horizontal direction") == 1, "a vertical body_forward warns once", 1, logged_count("body_forward must be a horizontal direction"))
	expect_warning(": turn_speed must be in 1..=3600")
	check(logged_count(": turn_speed must be in 1..=3600") == 1, "a negative turn_speed warns once", 1, logged_count(": turn_speed must be in 1..=3600"))
	var look := bearing.get_look_angles()
	check(is_finite(look.x) and is_finite(look.y), "the look stays finite", "finite", look)
	check(bearing.get_salute_weight() > 0.5, "the salute runs once its EntwineLimbIK exists", "> 0.5", bearing.get_salute_weight())


## Returns a one-element array holding, after each update of [param skeleton] (its modifiers
## applied), the global position of the end bone of [param ik].
func _follow_end(skeleton: Skeleton3D, ik: EntwineLimbIK) -> Array:
	var at := [Vector3.INF]
	var end := skeleton.find_bone(ik.get_resolved_bones()[2])
	skeleton.skeleton_updated.connect(func() -> void:
		at[0] = skeleton.global_transform * skeleton.get_bone_global_pose(end).origin)
	return at


## Returns an EntwineSoldierBearing under the skeleton of a new, frozen test character.
func _lone_bearing() -> EntwineSoldierBearing:
	var soldier := add(CHARACTER.instantiate()) as TestCharacter
	soldier.frozen = true
	var bearing := EntwineSoldierBearing.new()
	soldier.get_skeleton().add_child(bearing)
	return bearing


func test_the_salute_drives_whichever_limb_ik_its_path_leads_to_now() -> void:
	# The bearing keeps the EntwineLimbIK it found; freeing it, or pointing salute_ik_node elsewhere, must move
	# the salute to the node the path leads to now.
	var bearing := _lone_bearing()
	var skeleton := bearing.get_parent() as Skeleton3D
	var first := bearing.create_salute_ik()
	var first_hand := _follow_end(skeleton, first)
	bearing.saluting = true
	await wait_until(func() -> bool: return bearing.get_salute_weight() > 0.99, 3.0)
	await frames(2)
	var miss: float = first_hand[0].distance_to(bearing.get_salute_target().origin)
	check(miss <= 0.03 and not first.active, "the first EntwineLimbIK's hand is at the brow (m), the EntwineLimbIK off", "<= 0.03, off", [miss, first.active])
	first.free()
	var second := bearing.create_salute_ik()
	check(second != null, "create_salute_ik() made a second EntwineLimbIK")
	var second_hand := _follow_end(skeleton, second)
	await frames(3)
	miss = second_hand[0].distance_to(bearing.get_salute_target().origin)
	check(miss <= 0.03 and not second.active, "the salute moved to the new EntwineLimbIK (m)", "<= 0.03, off", [miss, second.active])
	var third := EntwineLimbIK.new()
	third.name = "OtherIK"
	skeleton.add_child(third)
	bearing.salute_ik_node = bearing.get_path_to(third)
	var third_hand := _follow_end(skeleton, third)
	await frames(3)
	# The third is a default EntwineLimbIK: the left arm, which reaches across to the right brow.
	miss = third_hand[0].distance_to(bearing.get_salute_target().origin)
	check(miss <= 0.03 and not third.active, "salute_ik_node set to another EntwineLimbIK: that one's hand is at the brow (m)", "<= 0.03, off", [miss, third.active])
	var before := second.target_transform
	await frames(5)
	check(second.target_transform == before, "the EntwineLimbIK no longer named is left alone", before, second.target_transform)


func test_the_salute_is_solved_after_the_look_whatever_the_order_of_the_skeletons_children() -> void:
	# The salute's EntwineLimbIK placed before the bearing: the skeleton would run it first and the look
	# would then carry the hand off the brow; the bearing solves it in its own pass, after the look.
	var bearing := _lone_bearing()
	var skeleton := bearing.get_parent() as Skeleton3D
	var ik := bearing.create_salute_ik()
	var hand := _follow_end(skeleton, ik)
	skeleton.move_child(ik, bearing.get_index())
	check(ik.get_index() < bearing.get_index(), "the EntwineLimbIK comes before the bearing")
	bearing.look_target = skeleton.global_position + Vector3(2.0, 1.6, -1.0)
	bearing.looking = true
	bearing.turn_speed = deg_to_rad(720.0)
	bearing.saluting = true
	await physics_frames(45)
	var turned := bearing.get_look_angles().length()
	check(turned > 0.3, "the head is turned (rad)", "> 0.3", turned)
	var miss: float = hand[0].distance_to(bearing.get_salute_target().origin)
	# Solved before the look (the skeleton running the EntwineLimbIK first), the hand missed by 0.028 m.
	check(miss <= 0.005, "the hand is at the turned head's brow (m)", "<= 0.005", miss)
	print("salute before the look in the children: hand %.4f m from the brow, look %.3f rad" % [miss, turned])


## Returns the skeletons of new test characters standing still (frozen, animation off) at the
## given x positions.
func _still_skeletons(xs: Array) -> Array[Skeleton3D]:
	var skeletons: Array[Skeleton3D] = []
	for x in xs:
		var soldier := add(CHARACTER.instantiate()) as TestCharacter
		soldier.frozen = true
		soldier.animation_tree.active = false
		soldier.global_position = Vector3(x, 0, 0)
		skeletons.append(soldier.get_skeleton())
	return skeletons


func test_a_salute_limb_ik_under_another_skeleton_warns_once_and_moves_nothing() -> void:
	var skeletons := _still_skeletons([0.0, 3.0])
	var other := skeletons[1]
	var ik := EntwineLimbIK.new()
	ik.limb = EntwineLimbIK.LIMB_RIGHT_ARM
	ik.active = false
	other.add_child(ik)
	var hand := other.find_bone("RightHand")
	await frames(2)
	var hand_before := other.get_bone_global_pose(hand)
	var bearing := EntwineSoldierBearing.new()
	skeletons[0].add_child(bearing)
	bearing.salute_ik_node = bearing.get_path_to(ik)
	bearing.saluting = true
	await physics_frames(40)
	expect_warning("is not a child of this node's skeleton; no salute")
	check(logged_count("is not a child of this node's skeleton; no salute") == 1, "one warning", 1, logged_count("is not a child of this node's skeleton; no salute"))
	var moved := other.get_bone_global_pose(hand).origin.distance_to(hand_before.origin)
	check(moved < 1e-5, "the other skeleton's hand is not moved (m)", "< 1e-5", moved)


func test_standalone_bearing_on_a_rig_that_faces_plus_z() -> void:
	# An imported humanoid faces +Z in its skeleton: turn the test character's skeleton round to
	# match, and tell the bearing (body_forward) — the look still lands on the target.
	var soldier := add(CHARACTER.instantiate()) as TestCharacter
	soldier.frozen = true
	var skeleton := soldier.get_skeleton()
	skeleton.rotation.y = PI
	var bearing := EntwineSoldierBearing.new()
	bearing.body_forward = Vector3(0, 0, 1)
	skeleton.add_child(bearing)
	check(bearing.create_salute_ik() != null, "create_salute_ik() made the arm's EntwineLimbIK")
	var head := skeleton.find_bone("Head")
	var got := [Transform3D()]
	skeleton.skeleton_updated.connect(func() -> void:
		got[0] = skeleton.global_transform * skeleton.get_bone_global_pose(head))
	# The character faces −Z in the world; the target is ahead and to its right, a little low.
	var target := Vector3(2.0, 1.2, -1.5)
	bearing.look_target = target
	bearing.looking = true
	bearing.saluting = true
	await physics_frames(60)
	var h: Transform3D = got[0]
	# This rig's forward is +Z of its bones.
	var forward := h.basis.orthonormalized().z
	var err := rad_to_deg(forward.angle_to(target - h.origin))
	check(err <= 5.0, "the +Z rig's head points at the target (°)", "<= 5", err)
	check_near(bearing.get_salute_weight(), 1.0, 1e-4, "the salute is up")
	print("+Z rig: head-to-target angle %.3f°" % err)


func test_a_bearing_moved_to_another_skeleton_turns_that_head() -> void:
	# EntwineSoldierBearing keeps its skeleton from pass to pass: moved under another character's
	# skeleton, it must turn that one's head and leave the first one's alone.
	var soldiers := _still_skeletons([0.0, 4.0])
	var head := soldiers[0].find_bone("Head")
	var heads: Array[Transform3D] = [Transform3D(), Transform3D()]
	for i in 2:
		var skeleton := soldiers[i]
		skeleton.skeleton_updated.connect(func() -> void:
			heads[i] = skeleton.global_transform * skeleton.get_bone_global_pose(head))
	var bearing := EntwineSoldierBearing.new()
	soldiers[0].add_child(bearing)
	bearing.looking = true
	bearing.turn_speed = deg_to_rad(720.0)
	var aim := func(i: int) -> float:
		var h: Transform3D = heads[i]
		return rad_to_deg((-h.basis.orthonormalized().z).angle_to(bearing.look_target - h.origin))
	bearing.look_target = Vector3(2.0, 1.6, -1.5)
	await physics_frames(60)
	check(aim.call(0) <= 5.0, "the first soldier's head points at the target (°)", "<= 5", aim.call(0))
	var first_head: Transform3D = heads[0]
	bearing.reparent(soldiers[1], false)
	bearing.look_target = Vector3(6.0, 1.6, -1.5)
	await physics_frames(60)
	check(aim.call(1) <= 5.0, "the second soldier's head points at its target (°)", "<= 5", aim.call(1))
	var turned_back := rad_to_deg(heads[0].basis.orthonormalized().z.angle_to(first_head.basis.orthonormalized().z))
	check(turned_back >= 10.0, "the first soldier's head is no longer turned by it (° from where it was)", ">= 10", turned_back)


func test_turning_soldier_bearings_off_removes_them() -> void:
	var squad := _soldiers(3)
	await physics_frames(3)
	var skeleton := _soldier(squad, 0).get_skeleton()
	check(skeleton.get_node_or_null("EntwineSoldierBearing") != null and skeleton.get_node_or_null("SaluteIK") != null, "the controller added EntwineSoldierBearing and SaluteIK")
	squad.soldier_bearings = false
	await frames(2)
	check(skeleton.get_node_or_null("EntwineSoldierBearing") == null and skeleton.get_node_or_null("SaluteIK") == null, "turning soldier_bearings off removed them")
	check(squad.get_soldier_bearing(0) == null, "no bearing reported")
	squad.soldier_bearings = true
	await frames(2)
	check(squad.get_soldier_bearing(0) != null, "turning it back on adds them again")
	squad.salute()
	await physics_frames(40)
	check(squad.get_soldier_bearing(0).get_salute_weight() > 0.99, "and they salute")
