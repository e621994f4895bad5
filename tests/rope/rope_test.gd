# timeout: 180
extends EntwineTest
## RopeSimulation through its public API: on the test character's hand at 4, 8 and 12 m/s, cutting,
## growing, record/replay, tension, presets and bad input.

const CHARACTER := preload("res://characters/test_character.tscn")

## [center, half extents] of the thin walls the runner's rope is dragged over.
var _walls: Array = []
## Rope points that touched a wall during the last run.
var _touches := 0


## A floor (top at y = 0) and, when [param walls], a corridor of thin walls (4 cm, 1.2 m high) on both
## sides of the runner's path: the slalom swings the rope into them.
func _stage(walls: bool) -> void:
	_walls.clear()
	_box(Vector3(0, -0.5, -40), Vector3(60, 0.5, 60))
	if walls:
		for x in [-1.1, 1.1]:
			var half := Vector3(0.02, 0.6, 20.0)
			_walls.append([Vector3(x, 0.6, -22.0), half])
			_box(Vector3(x, 0.6, -22.0), half)


func _box(center: Vector3, half: Vector3, layer := 1) -> StaticBody3D:
	return add_box(center, half * 2.0, layer)


func _inside_a_wall(p: Vector3) -> bool:
	for w in _walls:
		var local: Vector3 = (p - w[0]).abs()
		var half: Vector3 = w[1]
		if local.x < half.x - 0.001 and local.y < half.y - 0.001 and local.z < half.z - 0.001:
			return true
	return false


## A runner with a rope in its right hand, on the preset for [param speed].
func _runner(speed: float) -> Array:
	var character := add(CHARACTER.instantiate()) as TestCharacter
	character.frozen = true
	character.set_physics_process(false)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(character.get_skeleton())
	rope.anchor_bone = "RightHand"
	check(rope.apply_preset(rope.preset_for_speed(speed)), "a preset exists for %s m/s" % speed)
	return [character, rope]


func _run_at(speed: float) -> float:
	_stage(true)
	var pair := _runner(speed)
	var character: TestCharacter = pair[0]
	var rope: RopeSimulation = pair[1]
	# The same rope without the strain limit, for the record: what the iterations alone achieve.
	var raw := RopeSimulation.new()
	add(raw)
	raw.anchor_node = raw.get_path_to(character.get_skeleton())
	raw.anchor_bone = "RightHand"
	raw.apply_preset(raw.preset_for_speed(speed))
	raw.stretch_limit = 0.0
	raw.tube_enabled = false
	var raw_worst := 0.0
	await physics_frames(30) # settle hanging
	var worst := 0.0
	var lowest := INF
	var inside := 0
	var nans := 0
	var dt := 1.0 / Engine.physics_ticks_per_second
	var v := 0.0
	var travelled := 0.0
	_touches = 0
	# Accelerate at 8 m/s² to the speed, then slalom down the corridor (heading ±25°).
	while travelled < 34.0:
		v = minf(speed, v + 8.0 * dt)
		var heading := Vector3.FORWARD.rotated(Vector3.UP, deg_to_rad(25.0) * sin(travelled * 0.9))
		var next := character.global_position + heading * v * dt
		next.x = clampf(next.x, -0.6, 0.6)
		character.look_at(next + heading, Vector3.UP)
		character.global_position = next
		travelled += v * dt
		await physics_frame
		worst = maxf(worst, rope.get_max_stretch())
		raw_worst = maxf(raw_worst, raw.get_max_stretch())
		for p in rope.get_points():
			if not p.is_finite():
				nans += 1
			lowest = minf(lowest, p.y)
			if _inside_a_wall(p):
				inside += 1
			if absf(absf(p.x) - 1.1) < 0.02 + rope.radius + 0.01:
				_touches += 1
	check(nans == 0, "no NaN at %s m/s" % speed, 0, nans)
	check(lowest >= -0.001, "no point below the ground at %s m/s" % speed, ">= 0", lowest)
	check(inside == 0, "no point inside a wall at %s m/s" % speed, 0, inside)
	check(worst <= 0.05, "maximum stretch <= 5 %% at %s m/s" % speed, "<= 0.05", worst)
	check(_touches > 0, "the rope swung into the corridor walls at %s m/s" % speed, "> 0", _touches)
	print("rope: %s m/s, preset %s (%d iterations, %.2f m segments): max stretch %.2f %% (iterations alone, no strain limit: %.2f %%), lowest point %.3f m, wall contacts %d" % [
		speed, rope.preset_for_speed(speed), rope.iterations, rope.segment_length, worst * 100.0,
		raw_worst * 100.0, lowest, _touches])
	return worst


func test_hand_rope_at_4_metres_per_second() -> void:
	await _run_at(4.0)


func test_hand_rope_at_8_metres_per_second() -> void:
	await _run_at(8.0)


func test_hand_rope_at_12_metres_per_second() -> void:
	await _run_at(12.0)


func test_the_rope_hangs_from_the_hand_bone() -> void:
	_stage(false)
	var pair := _runner(4.0)
	var character: TestCharacter = pair[0]
	var rope: RopeSimulation = pair[1]
	await physics_frames(60)
	var points := rope.get_points()
	check(points.size() == 12, "12 points by default", 12, points.size())
	var hand := character.bone_global_position("RightHand")
	check_near(points[0], hand, 0.02, "point 0 is on the right hand")
	check(points[points.size() - 1].y < points[0].y, "the end hangs below the hand")
	check(rope.has_node("Tube"), "a tube mesh is drawn")


func test_an_obstacle_cuts_the_rope_once() -> void:
	_stage(false)
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 2.0, 0)
	add(anchor)
	# A blade (an Area3D on layer 2) across the path, 0.6–1.2 m high: under the anchor, through the rope.
	var blade := Area3D.new()
	blade.collision_layer = 2
	blade.collision_mask = 0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(4.0, 0.6, 0.04)
	shape.shape = box
	blade.add_child(shape)
	blade.position = Vector3(0, 0.9, -4.0)
	add(blade)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.cutter_mask = 2
	rope.fade_time = 0.5
	rope.reset_rope()
	var cuts: Array = []
	var faded := [0]
	rope.rope_cut.connect(func(i: int, at: Vector3) -> void: cuts.append([i, at]))
	rope.cut_piece_faded.connect(func() -> void: faded[0] += 1)
	await physics_frames(20)
	var dt := 1.0 / Engine.physics_ticks_per_second
	var saw_loose := false
	var shown_right := true
	var v := 0.0
	for f in 150:
		v = minf(8.0, v + 8.0 * dt)
		anchor.position.z -= v * dt
		await physics_frame
		var loose := rope.get_loose_points().size() > 1
		saw_loose = saw_loose or loose
		# The cut-off piece's tube shows while the piece is there (it fades), and not before.
		var tube := rope.get_node_or_null(^"LooseTube") as MeshInstance3D
		if tube != null and (loose or cuts.is_empty()):
			shown_right = shown_right and tube.visible == loose
	check(shown_right, "the cut-off piece's tube is shown exactly while the piece exists")
	var tube := rope.get_node_or_null(^"LooseTube") as MeshInstance3D
	check(tube != null and not tube.visible, "the cut-off piece's tube is hidden once it faded")
	check(cuts.size() == 1, "rope_cut emitted once", 1, cuts.size())
	if cuts.size() >= 1:
		var at: Vector3 = cuts[0][1]
		check(absf(at.z + 4.0) < 0.5 and at.y > 0.5 and at.y < 1.3, "cut where the blade is", Vector3(0, 0.9, -4), at)
		check(rope.get_active_point_count() == cuts[0][0] + 1, "points up to the cut stay attached",
			cuts[0][0] + 1, rope.get_active_point_count())
	check(saw_loose, "the loose part existed after the cut")
	check(faded[0] == 1, "the loose part faded once", 1, faded[0])
	check(rope.get_loose_points().is_empty(), "nothing left of the loose part")


func test_cut_at_and_tearing() -> void:
	_stage(false)
	var rope := RopeSimulation.new()
	rope.position = Vector3(0, 4, 0)
	add(rope)
	var cuts: Array = []
	var tears: Array = []
	rope.rope_cut.connect(func(i: int, _at: Vector3) -> void: cuts.append(i))
	rope.rope_torn.connect(func(i: int, _at: Vector3) -> void: tears.append(i))
	await physics_frames(5)
	check(rope.cut_at(5), "cut_at(5) cuts")
	check(not rope.cut_at(50), "cut_at out of range does nothing")
	check(not rope.cut_at(-1), "cut_at(-1) does nothing")
	check(cuts == [5], "one rope_cut for cut_at", [5], cuts)
	check(rope.get_active_point_count() == 6, "6 points stay", 6, rope.get_active_point_count())
	# Tearing: pin the end to a node that runs away.
	var end := Node3D.new()
	add(end)
	rope.length = 3.3
	await physics_frames(120)
	rope.tear_ratio = 1.5
	end.global_position = rope.get_points()[rope.get_active_point_count() - 1]
	rope.end_node = rope.get_path_to(end)
	for f in 60:
		end.global_position += Vector3(0.3, 0, 0)
		await physics_frame
	check(tears.size() == 1, "rope_torn once", 1, tears.size())
	check(cuts.size() == 2, "every tear is also a rope_cut", 2, cuts.size())


func test_length_grows_and_shrinks_smoothly() -> void:
	_stage(false)
	var rope := RopeSimulation.new()
	rope.position = Vector3(0, 8, 0)
	add(rope)
	var reached: Array = []
	rope.length_reached.connect(func(l: float) -> void: reached.append(l))
	await physics_frames(5)
	check_near(rope.length, 3.3, 0.001, "default length is 11 × 0.3 m")
	rope.length = 6.0
	var last := rope.length
	var max_jump := 0.0
	for f in 150:
		await physics_frame
		max_jump = maxf(max_jump, rope.length - last)
		last = rope.length
	check_near(rope.length, 6.0, 0.001, "grew to 6 m")
	check(rope.get_active_point_count() == 21, "21 points", 21, rope.get_active_point_count())
	check(max_jump <= rope.length_speed / Engine.physics_ticks_per_second + 0.0001, "grew smoothly", "<= speed·dt", max_jump)
	rope.point_count = 4
	await physics_frames(200)
	check_near(rope.length, 0.9, 0.001, "point_count 4 shrinks to 0.9 m")
	check(reached.size() == 2, "length_reached once per change", 2, reached.size())
	for p in rope.get_points():
		check(p.is_finite(), "finite points")


func test_record_and_replay_bit_for_bit() -> void:
	_stage(true)
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 1.2, 0)
	add(anchor)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	await physics_frames(10)
	rope.start_recording(10.0)
	check(rope.is_recording(), "recording")
	var dt := 1.0 / Engine.physics_ticks_per_second
	for f in 180:
		var t := f * dt
		anchor.position = Vector3(2.0 * sin(t * 2.0), 1.2 + 0.3 * sin(t * 5.0), -8.0 * t)
		if f == 60:
			rope.length = 5.0
		await physics_frame
	var steps := rope.stop_recording()
	var recorded := rope.get_points()
	check(steps == 180, "180 steps recorded", 180, steps)
	var finished := [0]
	rope.replay_finished.connect(func() -> void: finished[0] += 1)
	anchor.position = Vector3(10, 5, 10) # the live anchor is ignored during the replay
	check(rope.start_replay(), "replay starts")
	check(await wait_until(func() -> bool: return finished[0] == 1, 10.0), "replay_finished emitted")
	var replayed := rope.get_points()
	check(replayed.size() == recorded.size(), "same point count", recorded.size(), replayed.size())
	var same := replayed == recorded
	check(same, "the replay reproduces the rope bit for bit")


func test_tension_pulls_an_attached_rigid_body() -> void:
	_stage(false)
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 4, 0)
	add(anchor)
	var body := RigidBody3D.new()
	body.mass = 0.5
	var shape := CollisionShape3D.new()
	var sphere := SphereShape3D.new()
	sphere.radius = 0.1
	shape.shape = sphere
	body.add_child(shape)
	body.position = Vector3(0, 4 - 1.5, 0)
	add(body)
	var rope := RopeSimulation.new()
	rope.point_count = 6
	rope.iterations = 8
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.end_node = rope.get_path_to(body)
	rope.apply_tension_to_body = true
	await physics_frames(180)
	var hang := anchor.position.distance_to(body.position)
	check(hang < 1.5 * 1.1 and hang > 1.5 * 0.8, "the body hangs at the rope's length", 1.5, hang)
	check(rope.tension.y > 0.0, "the rope pulls the body up", "> 0", rope.tension)
	check_near(rope.get_tension_magnitude(), 0.5 * 9.8, 1.5, "tension ≈ the body's weight")
	# Pinned (no force on the body): the tension is reported, the body is carried.
	rope.apply_tension_to_body = false
	await physics_frames(30)
	check(rope.get_tension_magnitude() > 0.0, "a pinned end reports tension")


func test_presets() -> void:
	var rope := RopeSimulation.new()
	add(rope)
	check(rope.get_preset_names() == PackedStringArray(["low", "mid", "high"]), "built-in presets",
		["low", "mid", "high"], rope.get_preset_names())
	check(rope.apply_preset("high"), "apply_preset('high')")
	check(rope.iterations == 8 and is_equal_approx(rope.segment_length, 0.4), "high: 8 iterations, 0.4 m",
		[8, 0.4], [rope.iterations, rope.segment_length])
	check(rope.preset_for_speed(4.0) == "low" and rope.preset_for_speed(8.0) == "mid", "presets by speed")
	var p: EntwineRopePreset = rope.find_preset("low")
	check(p != null and p.iterations == 3 and is_equal_approx(p.segment_length, 0.25), "preset resource")
	rope.preset = p
	check(rope.iterations == 3, "assigning an EntwineRopePreset applies it", 3, rope.iterations)
	check(not rope.apply_preset("warp"), "unknown preset refused")
	expect_warning("no preset named 'warp'")
	check(logged_count("no preset named 'warp'") == 1, "one warning for an unknown preset", 1,
		logged_count("no preset named 'warp'"))


func test_bad_input_warns_once_and_never_breaks() -> void:
	_stage(false)
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 2, 0)
	add(anchor)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	for i in 3:
		rope.point_count = 1
		rope.segment_length = -0.5
		rope.damping = 1.5
		rope.iterations = 0
	for i in 3:
		rope.length = -2.0
	check(rope.point_count == 2, "point_count clamped to 2", 2, rope.point_count)
	check(rope.segment_length > 0.0, "segment_length clamped positive", "> 0", rope.segment_length)
	check(rope.damping == 1.0, "damping clamped to 1", 1.0, rope.damping)
	check(rope.iterations == 1, "iterations clamped to 1", 1, rope.iterations)
	for what in ["point_count 1 is out of range", "segment_length is out of range", "damping is out of range",
			"iterations is out of range", "length -2 is invalid"]:
		expect_warning(what)
		check(logged_count(what) == 1, "one warning: " + what, 1, logged_count(what))
	await physics_frames(10)
	anchor.position = Vector3(NAN, 2, 0)
	await physics_frames(10)
	expect_warning("anchor's position is not finite")
	check(logged_count("anchor's position is not finite") == 1, "one warning for a NaN anchor", 1,
		logged_count("anchor's position is not finite"))
	rope.anchor_node = NodePath("../Nowhere")
	await physics_frames(5)
	expect_warning("anchor_node '../Nowhere'")
	check(logged_count("anchor_node '../Nowhere'") == 1, "one warning for a missing anchor node", 1,
		logged_count("anchor_node '../Nowhere'"))
	for p in rope.get_points():
		check(p.is_finite(), "no NaN in the rope", true, p)


func test_debug_draw_and_rendering_switches() -> void:
	var rope := RopeSimulation.new()
	rope.position = Vector3(0, 3, 0)
	add(rope)
	rope.debug_draw = true
	rope.smoothing = 1
	rope.tube_sides = 3
	await frames(5)
	var dbg := rope.get_node_or_null("DebugPoints") as MultiMeshInstance3D
	check(dbg != null, "debug points drawn")
	if dbg:
		check(dbg.multimesh.visible_instance_count == rope.get_active_point_count(), "one sphere per point",
			rope.get_active_point_count(), dbg.multimesh.visible_instance_count)
	rope.tube_enabled = false
	await frames(2)
	check(not rope.has_node("Tube"), "tube removed")
	rope.material = StandardMaterial3D.new()
	rope.tube_enabled = true
	await frames(2)
	check(rope.has_node("Tube"), "tube back")


## A rope at rest keeps its tube as drawn (no upload while no point moves more than 10 µm); a
## rope that moves uploads its tube every drawn frame again.
func test_a_resting_rope_keeps_its_tube_and_a_moving_one_uploads_it() -> void:
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 3, 0)
	add(anchor)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.reset_rope()
	await frames(10)
	check(rope._get_tube_upload_count() > 0, "the tube is drawn", "> 0", rope._get_tube_upload_count())
	# A hanging rope comes to rest: 30 drawn frames in a row without an upload.
	var quiet := [0, rope._get_tube_upload_count()]
	var at_rest := func() -> bool:
		var n := rope._get_tube_upload_count()
		quiet[0] = quiet[0] + 1 if n == quiet[1] else 0
		quiet[1] = n
		return quiet[0] >= 30
	check(await wait_until(at_rest, 20.0), "a hanging rope stops uploading its tube once at rest",
		"30 frames without an upload", rope._get_tube_upload_count())
	var points := rope.get_points()
	# The anchor moves 0.3 m sideways: the rope swings and its tube follows every frame.
	anchor.position += Vector3(0.3, 0, 0)
	var before := rope._get_tube_upload_count()
	await frames(20)
	check(rope._get_tube_upload_count() - before >= 15, "a swinging rope uploads its tube (nearly) every drawn frame",
		">= 15 of 20", rope._get_tube_upload_count() - before)
	check(rope.get_points()[0].distance_to(points[0]) > 0.25, "the rope's first point followed the anchor",
		"> 0.25 m", rope.get_points()[0].distance_to(points[0]))


## Adds [param count] pairs of ropes of 32 points and 8 iterations with no collider query, each
## pair hanging from rope [code]i[/code]'s [method rope_home] in rows of 10, one of each pair to
## [param a] and the other to [param b].
func add_twin_ropes(count: int, a: Array[RopeSimulation], b: Array[RopeSimulation]) -> void:
	for i in count:
		for list: Array[RopeSimulation] in [a, b]:
			var r := RopeSimulation.new()
			r.capacity = 32
			r.point_count = 32
			r.iterations = 8
			r.collision_mask = 0
			r.position = rope_home(i, 10)
			add(r)
			list.append(r)


## The ropes of a world are drawn together once a frame, after every node's `_process` (with more
## than 20,000 tube vertices to write, shared with a second thread): each rope's tube is, bit for
## bit, the tube it draws alone from the same points in the same frame.
func test_ropes_drawn_together_draw_each_tube_as_the_rope_draws_it_alone() -> void:
	# 80 ropes of 32 points drawn together (94 rings of 9 vertices each, 67,680 vertices in all),
	# and a twin of each (same settings, same anchor) drawn alone: its processing off and
	# `refresh_mesh` called at the start of each frame, after the frame's physics, as the
	# together-drawn ropes are drawn at its end.
	var together: Array[RopeSimulation] = []
	var alone: Array[RopeSimulation] = []
	add_twin_ropes(80, together, alone)
	for i in 80:
		alone[i].set_process(false)
		# Drawn now, as its twin is at the end of this frame: from the same points (no physics
		# step between), so that both keep their tubes when their points move less than 10 µm.
		alone[i]._refresh_mesh()
	var state := {"frame": 0, "same": 0, "compared": 0, "differ": "", "drawn": 0}
	var start := []
	for r in together:
		start.append(r._get_tube_upload_count())
	var each_frame := func() -> void:
		var f: int = state.frame
		for i in 80:
			var a := together[i]._get_tube_vertices()
			var b := alone[i]._get_tube_vertices()
			if f > 0:
				state.compared += 1
				if a == b and a.size() == 94 * 9:
					state.same += 1
				elif state.differ == "":
					var k := 0
					while k < a.size() and a[k] == b[k]:
						k += 1
					state.differ = "rope %d frame %d: %d vertices drawn together, %d alone; first differing vertex %d: %s vs %s; uploads %d %d; engine frame %d physics %d" % [i, f, a.size(), b.size(), k, a[k] if k < a.size() else null, b[k] if k < b.size() else null, together[i]._get_tube_upload_count(), alone[i]._get_tube_upload_count(), Engine.get_process_frames(), Engine.get_physics_frames()]
			alone[i]._refresh_mesh()
			# Both swing: each frame their anchors move along a circle of 0.5 m.
			var home := rope_home(i, 10)
			var at := home + Vector3(cos(f * 0.2 + i), 0, sin(f * 0.2 + i)) * 0.5
			together[i].position = at
			alone[i].position = at
		state.frame = f + 1
	process_frame.connect(each_frame)
	await frames(40)
	process_frame.disconnect(each_frame)
	check(state.compared >= 80 * 30, "tubes compared in 30 frames or more", ">= 2400", state.compared)
	check(state.same == state.compared, "every tube drawn together is the tube drawn alone",
		state.compared, "%d (first difference: %s)" % [state.same, state.differ])
	var uploads := 0
	for i in 80:
		uploads += together[i]._get_tube_upload_count() - start[i]
	check(uploads >= 80 * 30, "each moving rope drawn together uploads its tube every frame",
		">= 2400 uploads in 40 frames", uploads)
	# With its processing off, a rope is left out of the drawing; refresh_mesh still draws it at once.
	together[0].set_process(false)
	var before := together[0]._get_tube_upload_count()
	together[0].position += Vector3(0.2, 0, 0)
	await frames(3)
	check(together[0]._get_tube_upload_count() == before, "a rope with its processing off is not drawn",
		before, together[0]._get_tube_upload_count())
	together[0]._refresh_mesh()
	check(together[0]._get_tube_upload_count() == before + 1, "refresh_mesh draws the rope at once",
		before + 1, together[0]._get_tube_upload_count())


## RopeSimulation.refresh_meshes draws a list of ropes as a frame draws a world's ropes: each tube,
## bit for bit, the tube refresh_mesh draws from the same points.
func test_ropes_refreshed_together_draw_each_tube_as_refresh_mesh_does() -> void:
	# 80 ropes of 32 points (67,680 tube vertices, so their writing is shared with the batch's
	# thread) drawn with one refresh_meshes call a frame, each beside a twin drawn by its own
	# refresh_mesh call, both sets stepped by the physics tick and not drawn by the frame.
	var together: Array[RopeSimulation] = []
	var alone: Array[RopeSimulation] = []
	add_twin_ropes(80, together, alone)
	for i in 80:
		together[i].set_process(false)
		alone[i].set_process(false)
	var state := {"frame": 0, "same": 0, "compared": 0, "differ": ""}
	var each_frame := func() -> void:
		var f: int = state.frame
		RopeSimulation._refresh_meshes(together)
		for i in 80:
			alone[i]._refresh_mesh()
			var a := together[i]._get_tube_vertices()
			var b := alone[i]._get_tube_vertices()
			state.compared += 1
			if a == b and a.size() == 94 * 9:
				state.same += 1
			elif state.differ == "":
				state.differ = "rope %d frame %d: %d vertices refreshed together, %d alone" % [i, f, a.size(), b.size()]
			var at := rope_home(i, 10) + Vector3(cos(f * 0.2 + i), 0, sin(f * 0.2 + i)) * 0.5
			together[i].position = at
			alone[i].position = at
		state.frame = f + 1
	process_frame.connect(each_frame)
	await frames(30)
	process_frame.disconnect(each_frame)
	check(state.compared >= 80 * 25, "tubes compared in 25 frames or more", ">= 2000", state.compared)
	check(state.same == state.compared, "every tube refreshed together is the tube refresh_mesh draws",
		state.compared, "%d (first difference: %s)" % [state.same, state.differ])
	# A rope listed twice is drawn once; a null and a freed rope are passed over.
	var twice := together[3]
	var before := twice._get_tube_upload_count()
	twice.position += Vector3(0.3, 0, 0)
	await physics_frame
	await physics_frame
	var gone := RopeSimulation.new()
	add(gone)
	var mixed: Array[RopeSimulation] = [twice, null, gone, twice, together[4]]
	gone.free()
	RopeSimulation._refresh_meshes(mixed)
	check(twice._get_tube_upload_count() == before + 1, "a rope listed twice is drawn once",
		before + 1, twice._get_tube_upload_count())
	var none: Array[RopeSimulation] = []
	RopeSimulation._refresh_meshes(none)


func test_a_resting_rope_sleeps_until_something_around_it_changes() -> void:
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 4, 0)
	add(anchor)
	var rope := RopeSimulation.new()
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.reset_rope()
	var told := [0]
	rope.sleeping_state_changed.connect(func() -> void: told[0] += 1)
	var asleep := func() -> bool: return rope.sleeping
	var awake := func() -> bool: return not rope.sleeping
	check(await wait_until(asleep, 10.0), "a rope hanging still falls asleep", "sleeping", rope.sleeping)
	await physics_frames(1)
	check(told[0] == 1, "sleeping_state_changed told it once", 1, told[0])
	# Asleep: not one bit moves and the tube is not uploaded again.
	var points := rope.get_points()
	var uploads := rope._get_tube_upload_count()
	await physics_frames(30)
	check(rope.get_points() == points, "a sleeping rope stays exactly where it fell asleep", points, rope.get_points())
	check(rope._get_tube_upload_count() == uploads, "a sleeping rope's tube is not uploaded", uploads,
		rope._get_tube_upload_count())
	# Its tube made again (more sides) while it sleeps: drawn once, where it sleeps, and left so.
	rope.tube_sides = 12
	await frames(5)
	check(rope.sleeping, "a new tube does not wake it", true, rope.sleeping)
	check(rope._get_tube_upload_count() == uploads + 1, "a sleeping rope's new tube is drawn once", uploads + 1,
		rope._get_tube_upload_count())
	await frames(10)
	check(rope._get_tube_upload_count() == uploads + 1, "and not again", uploads + 1, rope._get_tube_upload_count())
	# A body appears beside it (within its collider query, not touching): it wakes, then sleeps again.
	var body := add_box(Vector3(0.6, 2.5, 0), Vector3(0.2, 0.2, 0.2))
	check(await wait_until(awake, 2.0), "a body appearing next to it wakes it", "awake", rope.sleeping)
	check(await wait_until(asleep, 10.0), "still beside the body, it falls asleep again", "sleeping", rope.sleeping)
	body.position += Vector3(0, 0, 0.01)
	check(await wait_until(awake, 2.0), "the body moving a centimetre wakes it", "awake", rope.sleeping)
	check(await wait_until(asleep, 10.0), "and it sleeps again", "sleeping", rope.sleeping)
	# Its anchor moves: it wakes and follows.
	anchor.position += Vector3(0.3, 0, 0)
	check(await wait_until(awake, 2.0), "its anchor moving wakes it", "awake", rope.sleeping)
	await physics_frames(10)
	check(rope.get_points()[0].distance_to(points[0]) > 0.25, "the woken rope follows its anchor", "> 0.25 m",
		rope.get_points()[0].distance_to(points[0]))
	# By hand: put to sleep where it is (mid-swing), woken again.
	rope.sleeping = true
	check(rope.sleeping, "sleeping = true puts it to sleep at once", true, rope.sleeping)
	var held := rope.get_points()
	await physics_frames(10)
	check(rope.get_points() == held, "put to sleep mid-swing, it stays put", held, rope.get_points())
	rope.sleeping = false
	await physics_frames(2)
	check(rope.get_points() != held, "sleeping = false wakes it and it swings on", "moved", rope.get_points())
	await physics_frames(1)
	# Told at each change: asleep, awake, asleep, awake, asleep, awake, asleep (by hand), awake.
	check(told[0] == 8, "sleeping_state_changed told every change", 8, told[0])
	# can_sleep off: it never sleeps.
	rope.can_sleep = false
	await physics_frames(200)
	check(not rope.sleeping, "with can_sleep off it never sleeps", false, rope.sleeping)
	# A bad distance warns once and falls back to the default.
	rope.can_sleep = true
	rope.sleep_distance = NAN
	expect_warning("sleep_distance is out of range")
	check(logged_count("sleep_distance is out of range") == 1, "one warning for a NaN sleep_distance", 1,
		logged_count("sleep_distance is out of range"))
	check_near(rope.sleep_distance, 0.001, 1e-9, "a NaN sleep_distance falls back to 1 mm")


func test_rope_man_run_level_plays() -> void:
	var level: Node3D = add((load("res://demo/rope_demo.gd") as GDScript).new())
	await physics_frames(420)
	var runner: Node3D = level.get("_character")
	var rope: RopeSimulation = level.get("_rope")
	check(runner.global_position.z < -20.0, "the runner ran down the track", "< -20", runner.global_position.z)
	check(int(level.get("_collected")) >= 1, "yarn was collected", ">= 1", level.get("_collected"))
	check(rope.get_active_point_count() >= 2, "the rope is still attached", ">= 2", rope.get_active_point_count())
	for p in rope.get_points():
		check(p.is_finite() and p.y >= -0.001, "rope points finite and above the ground", true, p)
	print("rope: Rope-Man Run after 7 s: z %.1f, yarn %d, cuts %d, rope %.2f m" % [runner.global_position.z,
		level.get("_collected"), level.get("_cuts"), rope.length])


func test_a_moving_kinematic_body_pushes_the_rope_aside() -> void:
	_stage(false)
	var rope := RopeSimulation.new()
	rope.position = Vector3(0, 2.5, 0)
	rope.point_count = 8
	add(rope)
	# A kinematic box (AnimatableBody3D) sweeping through the hanging rope at 3 m/s.
	var body := AnimatableBody3D.new()
	body.sync_to_physics = false
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.3, 0.8, 0.3)
	shape.shape = box
	body.add_child(shape)
	body.position = Vector3(-1.5, 1.4, 0)
	add(body)
	await physics_frames(30)
	var dt := 1.0 / Engine.physics_ticks_per_second
	var inside := 0
	var pushed := 0.0
	for f in 60:
		body.position.x += 3.0 * dt
		await physics_frame
		for p in rope.get_points():
			var local: Vector3 = (p - body.position).abs()
			if local.x < 0.149 and local.y < 0.399 and local.z < 0.149:
				inside += 1
			pushed = maxf(pushed, absf(p.x))
	check(inside == 0, "no point inside the moving body", 0, inside)
	check(pushed > 0.2, "the body pushed the rope aside", "> 0.2 m", pushed)


## A rope hanging from [param at] (its own node), [param points] points 0.15 m apart, on the masks.
func _hanging(at: Vector3, solid: int, cutter := 0, points := 8) -> RopeSimulation:
	var rope := RopeSimulation.new()
	rope.position = at
	rope.point_count = points
	rope.segment_length = 0.15
	rope.collision_mask = solid
	rope.cutter_mask = cutter
	rope.tube_enabled = false
	add(rope)
	return rope


## Returns the lowest point of [param rope] (y).
func _lowest(rope: RopeSimulation) -> float:
	var y := INF
	for p in rope.get_points():
		y = minf(y, p.y)
	return y


## A box on [param layer] whose top is at 2.2 m, under a rope hanging at [param x]: deep enough
## that a point of the rope, built hanging straight down into it, leaves through the top.
func _rest_box(x: float, layer: int) -> StaticBody3D:
	return add_box(Vector3(x, 1.6, 0), Vector3(0.8, 1.2, 0.8), layer)


## Two ropes side by side (x, x + 1) under which lie a box on the layer they ignore (top 2.6 m)
## and, lower, one on their own (top 2.2 m): each hangs through the first and rests on the second.
func _mask_pair(x: float) -> Array:
	var ropes := []
	for k in 2:
		var own := 1 << k
		var other := 2 >> k
		var at := Vector3(x + k, 3.0, 0)
		add_box(Vector3(at.x, 2.45, 0), Vector3(0.6, 0.3, 0.6), other)
		_rest_box(at.x, own)
		ropes.append(_hanging(at, own))
	return ropes


func test_ropes_share_one_collider_query_and_each_gets_its_own_colliders() -> void:
	# Near x = 0 (one cluster, with a cutter mask) and far away at x = 100 (a second one): per tick
	# three queries.
	var near := _mask_pair(0.0)
	var far := _mask_pair(100.0)
	# A rope hanging from inside a static body on its own mask (its anchor's body, excluded)
	# through it onto a box below; a second rope resting on top of that same body.
	var holder := add_box(Vector3(2, 2.85, 0), Vector3(0.4, 0.3, 0.4), 1)
	var hand := Node3D.new()
	hand.position = Vector3(0, 0.1, 0)
	holder.add_child(hand)
	_rest_box(2.0, 1)
	var held := _hanging(Vector3(2, 3.0, 0), 1)
	held.anchor_node = held.get_path_to(hand)
	held.reset_rope()
	var on_top := _hanging(Vector3(2, 3.35, 0), 1, 0, 4)
	# A blade (an area on layer 3) across two ropes: the one with it on its cutter mask is cut, the
	# one with it only on its collision mask (areas are not solid) is not, and hangs through.
	var blade := Area3D.new()
	blade.collision_layer = 4
	blade.collision_mask = 0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.8, 0.1, 0.4)
	shape.shape = box
	blade.add_child(shape)
	blade.position = Vector3(4.15, 2.45, 0)
	add(blade)
	var cut := _hanging(Vector3(4, 3.0, 0), 0, 4)
	var uncut := _hanging(Vector3(4.3, 3.0, 0), 4 | 1)
	var cuts := [0, 0]
	cut.rope_cut.connect(func(_i: int, _at: Vector3) -> void: cuts[0] += 1)
	uncut.rope_cut.connect(func(_i: int, _at: Vector3) -> void: cuts[1] += 1)
	await physics_frames(90)
	for rope: RopeSimulation in near + far:
		var low := _lowest(rope)
		check(low > 2.15 and low < 2.3, "rope at x=%s (mask %d) rests on the box on its layer, through the other" % [rope.position.x, rope.collision_mask],
			"2.15-2.3 m", low)
	var inside := 0
	for p in held.get_points():
		if absf(p.x - 2.0) < 0.2 and absf(p.z) < 0.2 and p.y > 2.7 and p.y < 3.0:
			inside += 1
	check(inside >= 2, "the held rope hangs through its anchor's body", ">= 2 points inside", inside)
	check(_lowest(held) > 2.15 and _lowest(held) < 2.3, "the held rope rests on the box below", "2.15-2.3 m", _lowest(held))
	check(_lowest(on_top) > 2.95, "another rope rests on that body (only the anchor's rope ignores it)",
		"> 2.95 m", _lowest(on_top))
	check(cuts[0] == 1, "the rope with the blade on its cutter mask is cut once", 1, cuts[0])
	check(cuts[1] == 0, "the rope with the blade (an area) only on its collision mask is not cut", 0, cuts[1])
	check(_lowest(uncut) < 2.2, "that rope hangs through the blade", "< 2.2 m", _lowest(uncut))
	var before := RopeSimulation._get_collider_query_count()
	await physics_frames(10)
	var queries := RopeSimulation._get_collider_query_count() - before
	check(queries == 30, "one collider query per tick for each of the two clusters of ropes, and one for the cutters of the cluster with a cutter mask (10 ticks)", 30, queries)


func test_a_full_collider_query_is_split_and_no_rope_misses_a_collider() -> void:
	# Two ropes 2.5 m apart share a query, whose box also takes in a crowd of 600 small shapes
	# between them (more than a query returns): the cluster is split, each rope queried alone.
	var crowd := StaticBody3D.new()
	for i in 600:
		var shape := CollisionShape3D.new()
		var box := BoxShape3D.new()
		box.size = Vector3(0.04, 0.04, 0.04)
		shape.shape = box
		shape.position = Vector3(1.1 + (i % 10) * 0.06, 2.0 + (i / 10 % 10) * 0.08, -0.2 + (i / 100) * 0.08)
		crowd.add_child(shape)
	add(crowd)
	var ropes := []
	for x in [0.0, 2.5]:
		_rest_box(x, 1)
		ropes.append(_hanging(Vector3(x, 3.0, 0), 1))
	await physics_frames(60)
	for rope: RopeSimulation in ropes:
		var low := _lowest(rope)
		check(low > 2.15 and low < 2.3, "rope at x=%s rests on its box" % rope.position.x, "2.15-2.3 m", low)
	var before := RopeSimulation._get_collider_query_count()
	await physics_frames(10)
	var queries := RopeSimulation._get_collider_query_count() - before
	check(queries == 30, "per tick: the full cluster query, then one per rope (10 ticks)", 30, queries)


## Carries [param listed][i] and [param alone][i] (i below the size of [param alone]) around 1 m
## circles about [method rope_home] i for [param frames] ticks of 1/60 s, stepping [param batch] with
## [method RopeSimulation.advance_all] and [param alone] one by one with [method RopeSimulation.advance].
func _carry_batched_and_alone(batch: Array[RopeSimulation], listed: Array[RopeSimulation], alone: Array[RopeSimulation], frames: int, columns: int) -> void:
	var dt := 1.0 / 60.0
	for f in frames:
		var t := f * dt
		var offset := Vector3(cos(t * 6.0), 0.0, sin(t * 6.0))
		for i in alone.size():
			listed[i].position = rope_home(i, columns) + offset
			alone[i].position = rope_home(i, columns) + offset
		RopeSimulation._advance_all(batch, dt)
		for r in alone:
			r._advance(dt)


## A rope listed more than once in [method RopeSimulation.advance_all] is stepped once per call, and
## a freed rope in the list is passed over: the listed ropes move bit for bit as the same ropes
## stepped one by one with [method RopeSimulation.advance], and a rope freed from the list is gone
## without an error.
func test_a_rope_listed_twice_is_stepped_once() -> void:
	var listed := add_long_ropes(3, 3)
	var alone := add_long_ropes(2, 3)
	var gone: RopeSimulation = listed[2]
	var ropes: Array[RopeSimulation] = [listed[0], listed[1], listed[0], gone, listed[1], listed[0]]
	gone.free()
	_carry_batched_and_alone(ropes, listed, alone, 40, 3)
	var same := 0
	for i in 2:
		if listed[i].get_points() == alone[i].get_points():
			same += 1
	check(same == 2, "each rope listed three or two times moved as stepped once per frame, bit for bit", 2, same)
	var end: Vector3 = listed[0].get_points()[31]
	var home := rope_home(0, 3)
	var swing := Vector2(end.x - home.x, end.z - home.z).length()
	check(swing > 0.05, "the listed ropes swung", "> 0.05 m", swing)


## [method RopeSimulation.advance_all] remembers the ropes of the array it was last given (so that a
## tick does not convert every element again), and follows the array as it changes between calls: a
## rope put in place of another at the same index is stepped from then on and the one it replaced no
## more, a rope freed after it was stepped is passed over, and a rope added at the end joins. Each
## listed rope moves bit for bit as the same rope stepped alone in exactly the frames it was listed.
func test_advance_all_follows_its_array_as_it_changes() -> void:
	var listed := add_long_ropes(5, 5)
	var alone := add_long_ropes(5, 5)
	var ropes: Array[RopeSimulation] = [listed[0], listed[1], listed[2]]
	var stepped := [true, true, true, false, false] # which ropes the array holds now
	var dt := 1.0 / 60.0
	for f in 60:
		if f == 20:
			ropes[1] = listed[3] # the same index, another rope
			stepped[1] = false
			stepped[3] = true
		if f == 30:
			listed[2].free() # after it was stepped: the array keeps a freed rope
			stepped[2] = false
		if f == 40:
			ropes.append(listed[4])
			stepped[4] = true
		var offset := Vector3(cos(f * dt * 6.0), 0.0, sin(f * dt * 6.0))
		for i in 5:
			if is_instance_valid(listed[i]):
				listed[i].position = rope_home(i, 5) + offset
			alone[i].position = rope_home(i, 5) + offset
		RopeSimulation._advance_all(ropes, dt)
		for i in 5:
			if stepped[i]:
				alone[i]._advance(dt)
	var same := 0
	for i in [0, 1, 3, 4]:
		if listed[i].get_points() == alone[i].get_points():
			same += 1
	check(same == 4, "each rope moved bit for bit as the same rope stepped alone in the frames the array held it", 4, same)
	var moved := 0
	for i in [0, 1, 3, 4]:
		var end: Vector3 = listed[i].get_points()[31]
		var home := rope_home(i, 5)
		if Vector2(end.x - home.x, end.z - home.z).length() > 0.02:
			moved += 1
	check(moved == 4, "every rope that was listed swung", 4, moved)


## Many long ropes stepped together by [method RopeSimulation.advance_all] (a batch large enough to
## be shared with the batch's second thread) move bit for bit as the same ropes stepped one by one
## with [method RopeSimulation.advance], whichever thread steps them.
func test_many_ropes_stepped_together_move_exactly_as_one_by_one() -> void:
	var together := add_long_ropes(80, 10)
	var alone := add_long_ropes(80, 10)
	_carry_batched_and_alone(together, together, alone, 60, 10)
	var same := 0
	var swung := 0
	for i in 80:
		var a := together[i].get_points()
		var b := alone[i].get_points()
		if a == b:
			same += 1
		var home := rope_home(i, 10)
		if Vector2(a[31].x - home.x, a[31].z - home.z).length() > 0.05:
			swung += 1
	check(same == 80, "every rope of the batch has the points it has when stepped alone, bit for bit", 80, same)
	check(swung == 80, "the ropes swung (their ends left the vertical below their homes)", 80, swung)
