# timeout: 240
extends EntwineTest
## EnvironmentInteractionStateMachine on the walking test character, through its public API: walls on
## either side, letting go (walking away, stopping, jumping), a narrow corridor, a wall on a layer
## that is not interactable, and bad setups.

const CHARACTER := preload("res://characters/test_character.tscn")
## Walls live on physics layer 5; the floor stays on layer 1.
const WALL_LAYER := 1 << 4
## The test character's hand mesh: a box in the hand bone's space (see test_character.gd).
const HAND_BOX_SIZE := Vector3(0.08, 0.10, 0.03)
const HAND_BOX_CENTRE := Vector3(0.0, 0.04, 0.0)

var _character: TestCharacter
var _node: EnvironmentInteractionStateMachine
var _states: Array = []
var _touches: Array = []
var _ends: Array = []


## A floor, walls given as [centre, size, layer] and the character at [param start] walking along
## [param direction], with the node on it (walls on WALL_LAYER are interactable).
func _setup(walls: Array, start := Vector3(0, 0, 4), direction := Vector3(0, 0, -1)) -> void:
	if _character != null and is_instance_valid(_character):
		# A second scene in the same test: stop the previous character's node.
		_character.set_physics_process(false)
	add_floor(null, 40.0)
	for w in walls:
		_wall(w[0], w[1], w[2] if w.size() > 2 else WALL_LAYER)
	_character = CHARACTER.instantiate() as TestCharacter
	_character.position = start
	_character.rotation.y = atan2(-direction.x, -direction.z)
	add(_character)
	_node = EnvironmentInteractionStateMachine.new()
	_node.interactable_mask = WALL_LAYER
	_character.add_child(_node)
	_states.clear()
	_touches.clear()
	_ends.clear()
	_node.state_changed.connect(func(from: int, to: int) -> void: _states.append([from, to]))
	_node.touch_started.connect(func(side: int, point: Vector3, normal: Vector3) -> void:
		_touches.append([side, point, normal]))
	_node.touch_ended.connect(func(side: int) -> void: _ends.append(side))
	_walk(direction)


func _wall(centre: Vector3, size: Vector3, layer: int) -> StaticBody3D:
	var body := add_box(centre, size, layer)
	body.collision_mask = 0
	return body


func _walk(direction: Vector3) -> void:
	_character.move_input = direction
	_node.move_input = direction


## The hand bone's world transform in the final (IK-applied) pose of the next skeleton update.
func _hand(side: String) -> Transform3D:
	var skeleton := _character.get_skeleton()
	var captured: Array[Transform3D] = []
	var capture := func() -> void:
		if captured.is_empty():
			captured.append(skeleton.global_transform * skeleton.get_bone_global_pose(skeleton.find_bone(side + "Hand")))
	skeleton.skeleton_updated.connect(capture)
	for i in 5:
		await process_frame
		if not captured.is_empty():
			break
	skeleton.skeleton_updated.disconnect(capture)
	return captured[0] if not captured.is_empty() else skeleton.global_transform * skeleton.get_bone_global_pose(skeleton.find_bone(side + "Hand"))


## Waits until the node is in [param state] (at most [param seconds]); returns whether it got there.
func _until_state(state: int, seconds: float) -> bool:
	return await wait_until(func() -> bool: return _node.get_state() == state, seconds)


## Walks past a wall whose face is at x = face_x and checks the touch of the hand on that side.
## Returns [wrist distance, palm face distance, palm angle error] measured over the touch.
func _touch_past_wall(face_x: float) -> Array:
	var sign_x := signf(face_x)
	_setup([[Vector3(face_x + 0.1 * sign_x, 1.5, -2.0), Vector3(0.2, 3.0, 14.0)]])
	var side := "Left" if face_x < 0.0 else "Right"
	var side_id := EnvironmentInteractionStateMachine.SIDE_LEFT if face_x < 0.0 \
		else EnvironmentInteractionStateMachine.SIDE_RIGHT
	var other := EnvironmentInteractionStateMachine.SIDE_RIGHT - side_id
	check(await _until_state(EnvironmentInteractionStateMachine.STATE_TOUCH, 8.0), "%s hand reaches Touch" % side)
	check(_node.get_current_side() == side_id, "the %s side is chosen" % side, side_id, _node.get_current_side())
	var worst_wrist := 0.0
	var worst_palm_gap := 0.0
	var worst_angle := 0.0
	var min_corner := INF
	var samples := 0
	while _node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH and samples < 60:
		var hand := await _hand(side)
		if _node.get_state() != EnvironmentInteractionStateMachine.STATE_TOUCH:
			break
		samples += 1
		# Distance of the wrist (the IK end) off the wall face, along the wall's normal.
		var wrist := (face_x - hand.origin.x) * sign_x
		worst_wrist = maxf(worst_wrist, absf(wrist - 0.05))
		# The hand mesh must stay outside the wall: every corner of the hand box.
		var nearest := INF
		for i in 8:
			var corner := HAND_BOX_CENTRE + Vector3(
				(0.5 if i & 1 else -0.5) * HAND_BOX_SIZE.x,
				(0.5 if i & 2 else -0.5) * HAND_BOX_SIZE.y,
				(0.5 if i & 4 else -0.5) * HAND_BOX_SIZE.z)
			var p := hand * corner
			nearest = minf(nearest, (face_x - p.x) * sign_x)
		min_corner = minf(min_corner, nearest)
		worst_palm_gap = maxf(worst_palm_gap, nearest)
		var palm := (hand.basis.orthonormalized() * Vector3(0, 0, 1)).normalized()
		var into_wall := Vector3(sign_x, 0, 0)
		worst_angle = maxf(worst_angle, rad_to_deg(palm.angle_to(into_wall)))
		check(_node.get_hand_weight(other) < 0.01, "the other hand stays animated", "< 0.01", _node.get_hand_weight(other))
	check(samples >= 10, "sampled the touch", ">= 10 frames", samples)
	check(worst_wrist <= 0.01, "%s wrist rests 5 cm off the surface (±1 cm)" % side, "<= 0.01 m", worst_wrist)
	check(min_corner > 0.0, "%s hand does not penetrate the wall" % side, "> 0 m", min_corner)
	check(worst_palm_gap <= 0.05, "%s palm within 5 cm of the surface" % side, "<= 0.05 m", worst_palm_gap)
	check(worst_angle <= 10.0, "%s palm faces the surface within 10°" % side, "<= 10°", worst_angle)
	check(_touches.size() >= 1 and _touches[0][0] == side_id, "touch_started names the %s side" % side, side_id,
		_touches[0][0] if _touches.size() > 0 else null)
	if _touches.size() > 0:
		check_near((_touches[0][2] as Vector3), Vector3(-sign_x, 0, 0), 0.01, "touch_started gives the wall's normal")
		check_near((_touches[0][1] as Vector3).x, face_x, 0.01, "touch_started gives a point on the wall")
	print("env_touch %s: wrist off surface 0.05 m ± %.4f m, nearest hand corner %.4f m, palm face gap <= %.4f m, palm angle error <= %.2f° over %d frames" % [
		side, worst_wrist, min_corner, worst_palm_gap, worst_angle, samples])
	return [worst_wrist, worst_palm_gap, worst_angle]


func test_left_wall_is_touched_by_the_left_hand() -> void:
	await _touch_past_wall(-0.45)
	# The touch lasts its duration, then the hand lets go.
	check(await _until_state(EnvironmentInteractionStateMachine.STATE_RESET, 2.0), "Touch ends in Reset")
	check(_ends.size() == 1 and _ends[0] == EnvironmentInteractionStateMachine.SIDE_LEFT, "touch_ended(left)", [0], _ends)
	check(_node.get_reset_reason() == "touch_done", "the touch ran its 0.5 s", "touch_done", _node.get_reset_reason())
	check(_states.slice(0, 5) == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]], "state_changed walks the graph",
		[[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]], _states.slice(0, 5))
	await physics_frames(90)
	check(_node.get_hand_weight(EnvironmentInteractionStateMachine.SIDE_LEFT) < 0.01, "after Reset the hand is animated again",
		"< 0.01", _node.get_hand_weight(EnvironmentInteractionStateMachine.SIDE_LEFT))


func test_right_wall_is_touched_by_the_right_hand() -> void:
	await _touch_past_wall(0.45)


## Gets the right hand onto a wall and holds it there (long touch) for a release test.
func _hold_on_right_wall() -> void:
	_setup([[Vector3(0.55, 1.5, -6.0), Vector3(0.2, 3.0, 24.0)]])
	_node.touch_duration = 30.0
	check(await _until_state(EnvironmentInteractionStateMachine.STATE_TOUCH, 8.0), "the hand rests on the wall")


func _check_lets_go(reason: String) -> void:
	check(await _until_state(EnvironmentInteractionStateMachine.STATE_RESET, 2.0), "lets go (%s)" % reason)
	check(_node.get_reset_reason() == reason, "reset reason", reason, _node.get_reset_reason())
	await physics_frames(90)
	var w := _node.get_hand_weight(EnvironmentInteractionStateMachine.SIDE_RIGHT)
	check(w < 0.05, "the hand is released 1.5 s later (%s)" % reason, "< 0.05", w)


func test_walking_away_lets_go() -> void:
	await _hold_on_right_wall()
	_walk(Vector3(-1, 0, -0.3).normalized())
	await _check_lets_go("moving_away")


func test_stopping_lets_go() -> void:
	await _hold_on_right_wall()
	_walk(Vector3.ZERO)
	await _check_lets_go("stopped")
	# Standing still: it stays in Reset.
	await physics_frames(150)
	check(_node.get_state() == EnvironmentInteractionStateMachine.STATE_RESET, "stays in Reset while stopped")


func test_stopping_without_move_input_uses_velocity() -> void:
	await _hold_on_right_wall()
	_node.clear_move_input()
	_character.move_input = Vector3.ZERO
	await _check_lets_go("stopped")


func test_jumping_lets_go() -> void:
	await _hold_on_right_wall()
	_character.velocity.y = 4.0
	_character.move_and_slide()
	await _check_lets_go("jumping")


func test_narrow_corridor_does_not_flicker() -> void:
	# An 0.84 m corridor, 20 m long: both walls are always in the detection volume.
	_setup([[Vector3(-0.52, 1.5, -6.0), Vector3(0.2, 3.0, 24.0)], [Vector3(0.52, 1.5, -6.0), Vector3(0.2, 3.0, 24.0)]])
	var both := 0
	var switches := 0
	var last_side := -1
	for i in 480:
		await physics_frame
		var l := _node.get_hand_weight(0)
		var r := _node.get_hand_weight(1)
		if l > 0.02 and r > 0.02:
			both += 1
		var side := _node.get_current_side()
		if side >= 0:
			if last_side >= 0 and side != last_side:
				switches += 1
			last_side = side
	check(_touches.size() >= 2, "touches the corridor walls repeatedly", ">= 2", _touches.size())
	check(both == 0, "never reaches with both hands", 0, both)
	check(switches == 0, "never switches sides", 0, switches)
	var sides := {}
	for t in _touches:
		sides[t[0]] = true
	check(sides.size() == 1, "every touch on the same side", 1, sides.size())


func test_wall_on_a_non_interactable_layer_is_ignored() -> void:
	_setup([[Vector3(-0.55, 1.5, -2.0), Vector3(0.2, 3.0, 14.0), 1 << 2]])
	await physics_frames(360)
	check(_touches.is_empty(), "no touch", 0, _touches.size())
	check(not _node.has_contact(), "no collider tracked")
	check(_node.get_hand_weight(0) < 1e-3 and _node.get_hand_weight(1) < 1e-3, "both hands animated")
	# The same wall on the interactable layer is touched.
	_node.interactable_mask = WALL_LAYER | (1 << 2)
	check(await _until_state(EnvironmentInteractionStateMachine.STATE_TOUCH, 6.0), "touched once its layer is interactable")


func test_the_detection_volume_follows_the_character_height() -> void:
	_setup([])
	await physics_frames(2)
	check(_node.is_active(), "the node set itself up")
	# The character's height is what it draws: the top of its meshes' vertices above its feet.
	var h := _drawn_height()
	check(h > 1.7 and h < 1.85, "the test character is drawn about 1.75 m tall", "1.7..1.85 m", h)
	check_near(_node.get_detection_size(), h, 0.002, "a cube of side = the character's drawn height")
	# From the body's centre (its capsule's, 0.875 m up), raised a quarter of the height.
	check_near(_node.get_detection_transform().origin, Vector3(0, 0.875 + h * 0.25, -h * 0.5), 0.003,
		"raised a quarter, pushed half a wingspan forward")
	check(_node.get_arm_ik(0) != null and _node.get_arm_ik(0).get_parent() == _character.get_skeleton(),
		"an EntwineLimbIK for the left arm under the skeleton")
	check(_node.get_arm_ik(1) != null and _node.get_arm_ik(1).end_bone == "RightHand", "an EntwineLimbIK for the right hand")
	# An explicit height wins over the collision shape's.
	_node.character_height = 2.0
	await physics_frames(2)
	check_near(_node.get_detection_size(), 2.0, 1e-4, "character_height sizes the volume")


## The character's drawn height: the highest vertex of the meshes under its skeleton, above its
## feet (the outside truth the node's height is held to).
func _drawn_height() -> float:
	var top := -INF
	for node in _character.get_skeleton().find_children("*", "MeshInstance3D", true, false):
		var mesh_instance := node as MeshInstance3D
		if mesh_instance.mesh == null:
			continue
		for surface in mesh_instance.mesh.get_surface_count():
			var vertices: PackedVector3Array = mesh_instance.mesh.surface_get_arrays(surface)[Mesh.ARRAY_VERTEX]
			for v in vertices:
				top = maxf(top, (mesh_instance.global_transform * v).y)
	return top - _character.global_position.y


## A body on the wall layer with one shape, at [param position].
func _body(shape: Shape3D, position: Vector3) -> StaticBody3D:
	var body := StaticBody3D.new()
	body.collision_layer = WALL_LAYER
	var node := CollisionShape3D.new()
	node.shape = shape
	body.add_child(node)
	body.position = position
	add(body)
	return body


func test_pillars_railings_and_meshes_are_touched() -> void:
	# The character stands pushing forward (input, no speed) with the shape's surface at x = +0.45 to
	# its right: every supported shape kind is found, reached and touched.
	var cylinder := CylinderShape3D.new()
	cylinder.radius = 0.25
	cylinder.height = 3.0
	var capsule := CapsuleShape3D.new()
	capsule.radius = 0.2
	capsule.height = 3.0
	var convex := ConvexPolygonShape3D.new()
	convex.points = PackedVector3Array([Vector3(-0.1, -1.5, -1), Vector3(0.1, -1.5, -1), Vector3(-0.1, 1.5, -1),
		Vector3(0.1, 1.5, -1), Vector3(-0.1, -1.5, 1), Vector3(0.1, -1.5, 1), Vector3(-0.1, 1.5, 1), Vector3(0.1, 1.5, 1)])
	var trimesh := ConcavePolygonShape3D.new()
	# A 3 m × 3 m quad facing −X (two triangles) at local x = 0.
	trimesh.set_faces(PackedVector3Array([Vector3(0, -1.5, -1.5), Vector3(0, 1.5, -1.5), Vector3(0, 1.5, 1.5),
		Vector3(0, -1.5, -1.5), Vector3(0, 1.5, 1.5), Vector3(0, -1.5, 1.5)]))
	var cases := [["cylinder", cylinder, 0.25], ["capsule", capsule, 0.2], ["convex", convex, 0.1],
		["trimesh", trimesh, 0.0]]
	for k in cases.size():
		var c: Array = cases[k]
		var origin := Vector3(k * 12.0 - 18.0, 0, 0)
		_setup([], origin)
		_character.move_speed = 0.0
		_body(c[1], origin + Vector3(0.45 + float(c[2]), 1.5, 0))
		check(await _until_state(EnvironmentInteractionStateMachine.STATE_TOUCH, 6.0), "a %s is touched" % c[0])
		check(_node.get_current_side() == EnvironmentInteractionStateMachine.SIDE_RIGHT, "%s: with the right hand" % c[0],
			1, _node.get_current_side())
		var p := _node.get_closest_point()
		check_near(p.x - origin.x, 0.45, 0.01, "%s: the contact lies on its surface" % c[0])
		var hand := await _hand("Right")
		check_near(0.45 - (hand.origin.x - origin.x), 0.05, 0.01, "%s: the wrist rests 5 cm off the surface" % c[0])
		_node.queue_free()
		await physics_frames(2)


func test_bad_setups_warn_once_and_stay_idle() -> void:
	# No character: a node under a plain Node.
	var holder := Node.new()
	add(holder)
	var orphan := EnvironmentInteractionStateMachine.new()
	holder.add_child(orphan)
	await physics_frames(5)
	expect_warning("does not point at a Node3D")
	check(logged_count("does not point at a Node3D") == 1, "one warning for a missing character", 1,
		logged_count("does not point at a Node3D"))
	check(not orphan.is_active(), "stays idle without a character")
	# A missing bone.
	_setup([[Vector3(-0.55, 1.5, -2.0), Vector3(0.2, 3.0, 14.0)]])
	_node.left_arm_bones = PackedStringArray(["LeftUpperArm", "LeftLowerArm", "LeftPalm"])
	await physics_frames(10)
	expect_warning("bone 'LeftPalm' not found")
	check(logged_count("bone 'LeftPalm' not found") == 1, "one warning names the missing bone", 1,
		logged_count("bone 'LeftPalm' not found"))
	check(not _node.is_active(), "stays idle with a missing bone")
	_node.left_arm_bones = PackedStringArray(["LeftUpperArm", "LeftLowerArm", "LeftHand"])
	await physics_frames(2)
	check(_node.is_active(), "fixing the bone name starts it")
	# An empty mask.
	_node.interactable_mask = 0
	await physics_frames(5)
	expect_warning("interactable_mask is 0")
	check(logged_count("interactable_mask is 0") == 1, "one warning for an empty mask", 1, logged_count("interactable_mask is 0"))
	check(not _node.is_active(), "stays idle with an empty mask")
	_node.interactable_mask = WALL_LAYER
	# A negative height.
	_node.character_height = -1.0
	await physics_frames(5)
	expect_warning("character_height must be")
	check(logged_count("character_height must be") == 1, "one warning for a bad height", 1, logged_count("character_height must be"))
	_node.character_height = 0.0
	# A bad tunable falls back to its default with one warning.
	_node.touch_duration = -3.0
	await physics_frames(5)
	expect_warning("'touch_duration' must be")
	check(logged_count("'touch_duration' must be") == 1, "one warning for a negative duration", 1,
		logged_count("'touch_duration' must be"))
	_node.touch_duration = 0.5
	check(_node.is_active(), "active again once fixed")
	# A collider with only an unsupported shape: one warning, ignored.
	var odd := StaticBody3D.new()
	odd.collision_layer = WALL_LAYER
	var shape := CollisionShape3D.new()
	shape.shape = HeightMapShape3D.new()
	odd.add_child(shape)
	_character.move_speed = 0.0
	odd.position = _character.global_position + Vector3(0.5, 1.4, -0.5)
	add(odd)
	# Colliders are looked for once Reset may end.
	await _until_state(EnvironmentInteractionStateMachine.STATE_SEARCH, 4.0)
	await physics_frames(10)
	expect_warning("HeightMapShape3D")
	check(logged_count("HeightMapShape3D") == 1, "one warning for an unsupported shape", 1, logged_count("HeightMapShape3D"))
	# No skeleton: a bare CharacterBody3D.
	var bare := CharacterBody3D.new()
	add(bare)
	var lonely := EnvironmentInteractionStateMachine.new()
	bare.add_child(lonely)
	await physics_frames(5)
	expect_warning("no Skeleton3D under the character")
	check(logged_count("no Skeleton3D under the character") == 1, "one warning for a missing skeleton", 1,
		logged_count("no Skeleton3D under the character"))
	check(not lonely.is_active(), "stays idle without a skeleton")


func test_timeline_is_the_same_at_30_60_and_144_hz() -> void:
	# Standing (input held, no speed) beside a wall: every transition depends on time alone, so the
	# touch starts at the same instant and the blend has the same value at any physics rate.
	var results := {}
	for hz in [30, 60, 144]:
		Engine.physics_ticks_per_second = hz
		# The step in progress keeps the old rate's delta: start the scene after it.
		await physics_frames(2)
		var origin := Vector3(12.0 * results.size() - 12.0, 0, 0)
		_setup([[origin + Vector3(0.55, 1.5, -2.0), Vector3(0.2, 3.0, 14.0)]], origin)
		_character.move_speed = 0.0
		var touch_at := -1.0
		var weight_at := -1.0
		var steps := 0
		# The node's own count of physics steps is the clock (it does not depend on when in the frame
		# the test resumes).
		while steps < 3.6 * hz:
			await physics_frame
			steps = int(_node._get_profile()["frames"])
			if touch_at < 0.0 and _node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH:
				touch_at = float(steps) / hz
			if steps == roundi(2.5 * hz):
				weight_at = _node.get_hand_weight(EnvironmentInteractionStateMachine.SIDE_RIGHT)
		results[hz] = [touch_at, weight_at]
		_node.queue_free()
		_character.set_physics_process(false)
	Engine.physics_ticks_per_second = 60
	print("env_touch timeline: touch starts at %s s, right-hand weight at 2.5 s %s (30 / 60 / 144 Hz)" % [
		[results[30][0], results[60][0], results[144][0]], [results[30][1], results[60][1], results[144][1]]])
	for hz in [30, 60, 144]:
		check_near(results[hz][0], 3.0, 1e-3, "touch starts 3 s in at %d Hz (2 s Reset + 1 s Rise)" % hz)
		check_near(results[hz][1], results[60][1], 1e-4, "the rise blend at 2.5 s matches 60 Hz at %d Hz" % hz)
	check(results[60][1] > 0.5 and results[60][1] < 0.95, "the blend is mid-way at 2.5 s", "0.5..0.95", results[60][1])
