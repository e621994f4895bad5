# timeout: 120
extends EntwineTest
## EntwineRopeBoneChain through its public API: a procedural skinned chain follows a swinging rope within
## 1 cm at every bone, with any bone count against any point count, through length changes, with the
## root attached, at influence 0, and bad input warns once and leaves the skeleton alone.

const ChainMesh := preload("res://demo/rope_chain_mesh.gd")

## Largest bone-to-rope distance seen by the checks of the current test, metres.
var _worst := 0.0
## Largest angle between a bone's axis and the direction to the next bone, degrees.
var _worst_axis := 0.0
## Frames checked.
var _checked := 0
## The chain's bone poses (skeleton space) as the last frame showed them (bone poses read outside
## skeleton_updated are the animated ones, before the modifiers).
var _shown: Array[Transform3D] = []


## A swinging anchor with a rope, and a skeleton (riding on the anchor, turned and scaled so that
## its space differs from the world's) with a skinned chain of [param bones] bones driven by a
## EntwineRopeBoneChain. Returns [anchor, rope, skeleton, chain, bone indices].
func _rig(bones: int, points: int, segment := 0.1, spacing := 0.1) -> Array:
	var anchor := add(Node3D.new()) as Node3D
	anchor.name = "Anchor"
	anchor.position = Vector3(0, 2.2, 0)
	var rope := RopeSimulation.new()
	rope.name = "Rope"
	add(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.collision_mask = 0
	rope.segment_length = segment
	rope.point_count = points
	rope.reset_rope()
	var skeleton := Skeleton3D.new()
	skeleton.name = "Skeleton"
	anchor.add_child(skeleton)
	skeleton.rotation = Vector3(0.2, 0.7, -0.1)
	skeleton.scale = Vector3.ONE * 1.25
	var indices := ChainMesh.add_chain(skeleton, "Bone", bones, -1, Vector3.ZERO, Vector3.DOWN, spacing)
	var material := StandardMaterial3D.new()
	skeleton.add_child(ChainMesh.skinned_tube(skeleton, indices, 0.03, 0.01, material))
	var chain := EntwineRopeBoneChain.new()
	chain.name = "Chain"
	skeleton.add_child(chain)
	chain.rope = rope
	chain.root_bone = "Bone1"
	chain.tip_bone = "Bone%d" % bones
	_shown.clear()
	skeleton.skeleton_updated.connect(func() -> void:
		_shown.clear()
		for b in indices:
			_shown.append(skeleton.get_bone_global_pose(b)))
	return [anchor, rope, skeleton, chain, indices]


## Returns the point at arc length [param s] along [param points] (continuing straight past the end).
func _sample(points: PackedVector3Array, s: float) -> Vector3:
	var walked := 0.0
	for i in points.size() - 1:
		var a := points[i]
		var b := points[i + 1]
		var length := a.distance_to(b)
		if walked + length >= s and length > 0.0:
			return a.lerp(b, (s - walked) / length)
		walked += length
	var n := points.size()
	var last := points[n - 1]
	var dir := (last - points[n - 2]).normalized()
	return last + dir * (s - walked)


func _length(points: PackedVector3Array) -> float:
	var total := 0.0
	for i in points.size() - 1:
		total += points[i].distance_to(points[i + 1])
	return total


## Returns the world position of [param bone] as the skeleton shows it now.
func _bone_world(skeleton: Skeleton3D, bone: int) -> Vector3:
	return skeleton.global_transform * skeleton.get_bone_global_pose(bone).origin


## Checks every bone against the rope resampled independently here: each bone [param i] at arc length
## i/(n-1)·L (stretch) or at [param rest_arc][i] when given. Connected to skeleton_updated, so it sees
## the pose the frame shows and the rope points that frame was drawn from.
func _check_frame(skeleton: Skeleton3D, rope: RopeSimulation, indices: PackedInt32Array, rest_arc := PackedFloat32Array()) -> void:
	var points := rope.get_interpolated_points()
	if points.size() < 2:
		return
	var total := _length(points)
	var n := indices.size()
	var world: Array[Vector3] = []
	for i in n:
		world.append(_bone_world(skeleton, indices[i]))
	for i in n:
		var s := total * i / float(n - 1) if rest_arc.is_empty() else rest_arc[i]
		_worst = maxf(_worst, world[i].distance_to(_sample(points, s)))
		if i + 1 < n and world[i].distance_to(world[i + 1]) > 1e-4:
			var axis := (skeleton.global_transform.basis * skeleton.get_bone_global_pose(indices[i]).basis).y.normalized()
			var to_next := (world[i + 1] - world[i]).normalized()
			_worst_axis = maxf(_worst_axis, rad_to_deg(axis.angle_to(to_next)))
	_checked += 1


func _reset_measures() -> void:
	_worst = 0.0
	_worst_axis = 0.0
	_checked = 0


## Swings [param anchor] for [param seconds] (0.45 m side to side at 0.6 Hz, fore and aft at 0.4 Hz,
## bobbing and turning), one move per physics frame.
func _swing(anchor: Node3D, seconds: float) -> void:
	var t := 0.0
	var dt := 1.0 / Engine.physics_ticks_per_second
	while t < seconds:
		await physics_frame
		t += dt
		anchor.position = Vector3(0.45 * sin(TAU * 0.6 * t), 2.2 + 0.1 * sin(TAU * 1.1 * t), 0.3 * sin(TAU * 0.4 * t))
		anchor.rotation.y = 0.6 * sin(TAU * 0.3 * t)


func test_a_skinned_chain_follows_the_swinging_rope_within_a_centimetre() -> void:
	var warnings_before := logged_count("EntwineRopeBoneChain")
	var rig := _rig(10, 12)
	var anchor: Node3D = rig[0]
	var rope: RopeSimulation = rig[1]
	var skeleton: Skeleton3D = rig[2]
	var chain: EntwineRopeBoneChain = rig[3]
	var indices: PackedInt32Array = rig[4]
	var started := [0]
	chain.following_started.connect(func(count: int) -> void: started[0] = count)
	await physics_frames(5)
	_reset_measures()
	var check := func() -> void: _check_frame(skeleton, rope, indices)
	skeleton.skeleton_updated.connect(check)
	# Remember the tip's path, to prove the chain really swings.
	var extent := [Vector3.INF, -Vector3.INF]
	var track := func() -> void:
		var tip := _bone_world(skeleton, indices[indices.size() - 1])
		extent[0] = (extent[0] as Vector3).min(tip)
		extent[1] = (extent[1] as Vector3).max(tip)
	skeleton.skeleton_updated.connect(track)
	# Twist stability: the largest turn of any bone about its own axis (+Y) between drawn frames, per
	# physics tick (the swing of the axis itself follows the rope; a flip would be about half a turn).
	var turn := [0.0, 0.0, []]
	var twist := func() -> void:
		var time := Engine.get_physics_frames() + Engine.get_physics_interpolation_fraction()
		var now: Array[Quaternion] = []
		for b in indices:
			now.append(skeleton.get_bone_global_pose(b).basis.get_rotation_quaternion())
		var elapsed: float = time - turn[1]
		var before: Array = turn[2]
		if elapsed > 0.05:
			if not before.is_empty():
				for i in now.size():
					var rel: Quaternion = (before[i] as Quaternion).inverse() * now[i]
					var about_axis := absf(2.0 * atan2(rel.y, rel.w))
					about_axis = minf(about_axis, TAU - about_axis)
					turn[0] = maxf(turn[0], about_axis / elapsed)
			turn[1] = time
			turn[2] = now
	skeleton.skeleton_updated.connect(twist)
	await _swing(anchor, 4.0)
	skeleton.skeleton_updated.disconnect(track)
	skeleton.skeleton_updated.disconnect(twist)
	var tip_lo: Vector3 = extent[0]
	var tip_hi: Vector3 = extent[1]
	skeleton.skeleton_updated.disconnect(check)
	print("rope_bone_chain: 10 bones on 12 points, max bone error %s m, max axis error %.4f deg over %d frames, max twist %.3f rad per physics tick" % [_worst, _worst_axis, _checked, turn[0]])
	check(_checked >= 100, "frames checked while swinging", ">= 100", _checked)
	check_near(_worst, 0.0, 0.01, "every bone within 1 cm of its resampled rope point at every frame")
	check_near(_worst_axis, 0.0, 1.0, "every bone's axis points at the next bone (degrees)")
	check(turn[0] < 0.2, "no bone flips its twist (largest twist per physics tick)", "< 0.2 rad", turn[0])
	check(started[0] == 10, "following_started reports the chain's bones", 10, started[0])
	check(chain.is_following(), "is_following while it works")
	check((tip_hi - tip_lo).length() > 0.5, "the tip really swung", "> 0.5 m", (tip_hi - tip_lo).length())
	check(logged_count("EntwineRopeBoneChain") == warnings_before, "no warnings", warnings_before, logged_count("EntwineRopeBoneChain"))


func test_bone_count_and_point_count_may_differ() -> void:
	var warnings_before := logged_count("EntwineRopeBoneChain")
	for setup in [[4, 20, 0.06], [16, 5, 0.3], [2, 2, 0.5]]:
		var rig := _rig(setup[0], setup[1], setup[2])
		var anchor: Node3D = rig[0]
		var rope: RopeSimulation = rig[1]
		var skeleton: Skeleton3D = rig[2]
		var indices: PackedInt32Array = rig[4]
		await physics_frames(3)
		_reset_measures()
		var check := func() -> void: _check_frame(skeleton, rope, indices)
		skeleton.skeleton_updated.connect(check)
		await _swing(anchor, 1.5)
		skeleton.skeleton_updated.disconnect(check)
		print("rope_bone_chain: %d bones on %d points, max bone error %s m over %d frames" % [setup[0], setup[1], _worst, _checked])
		check(_checked >= 40, "frames checked (%d bones, %d points)" % [setup[0], setup[1]], ">= 40", _checked)
		check_near(_worst, 0.0, 0.01, "%d bones on %d points: every bone on the resampled rope" % [setup[0], setup[1]])
		anchor.free()
		rope.free()
	check(logged_count("EntwineRopeBoneChain") == warnings_before, "a count mismatch is resampled, not rejected", warnings_before, logged_count("EntwineRopeBoneChain"))


func test_rest_length_fit_keeps_the_spacing() -> void:
	var rig := _rig(6, 20, 0.1, 0.1)
	var anchor: Node3D = rig[0]
	var rope: RopeSimulation = rig[1]
	var skeleton: Skeleton3D = rig[2]
	var chain: EntwineRopeBoneChain = rig[3]
	var indices: PackedInt32Array = rig[4]
	chain.fit = EntwineRopeBoneChain.FIT_REST_LENGTH
	# The chain is 0.5 m of bones in a skeleton scaled 1.25: 0.625 m of a 1.9 m rope.
	var arc := PackedFloat32Array()
	for i in 6:
		arc.append(0.1 * 1.25 * i)
	await physics_frames(3)
	_reset_measures()
	var check := func() -> void: _check_frame(skeleton, rope, indices, arc)
	skeleton.skeleton_updated.connect(check)
	await _swing(anchor, 1.5)
	skeleton.skeleton_updated.disconnect(check)
	check(_checked >= 40, "frames checked", ">= 40", _checked)
	check_near(_worst, 0.0, 0.01, "bones at their rest spacing along the rope")


func test_no_popping_while_the_rope_grows_and_shrinks() -> void:
	var rig := _rig(10, 12)
	var anchor: Node3D = rig[0]
	var rope: RopeSimulation = rig[1]
	var skeleton: Skeleton3D = rig[2]
	var indices: PackedInt32Array = rig[4]
	rope.length_speed = 1.0
	await physics_frames(60) # settle
	_reset_measures()
	var check := func() -> void: _check_frame(skeleton, rope, indices)
	skeleton.skeleton_updated.connect(check)
	# Bone speed in metres per physics tick between drawn frames (frames are uneven when the machine is
	# busy; the drawn rope is interpolated in time, so its speed is what a pop would show in).
	var previous: Array[Vector3] = []
	var previous_time := [0.0]
	var biggest := [0.0]
	var jumps := func() -> void:
		var now: Array[Vector3] = []
		for b in indices:
			now.append(_bone_world(skeleton, b))
		var time := Engine.get_physics_frames() + Engine.get_physics_interpolation_fraction()
		var elapsed: float = time - previous_time[0]
		if not previous.is_empty() and elapsed > 0.05:
			for i in now.size():
				biggest[0] = maxf(biggest[0], now[i].distance_to(previous[i]) / elapsed)
		if previous.is_empty() or elapsed > 0.05:
			previous.assign(now)
			previous_time[0] = time
	skeleton.skeleton_updated.connect(jumps)
	for target in [2.0, 0.6, 1.4]:
		rope.length = target
		await physics_frames(90)
	skeleton.skeleton_updated.disconnect(jumps)
	var biggest_jump: float = biggest[0]
	skeleton.skeleton_updated.disconnect(check)
	print("rope_bone_chain: length 1.1 -> 2.0 -> 0.6 -> 1.4 m at 1 m/s: max bone speed %.4f m per physics tick, max bone error %s m" % [biggest_jump, _worst])
	check_near(_worst, 0.0, 0.01, "bones on the rope while it grows and shrinks")
	# Paying out at 1 m/s moves the tip ~1.7 cm per tick; a pop would jump a bone a segment (10 cm).
	check(biggest_jump > 0.005, "the bones moved with the rope", "> 0.005 m per tick", biggest_jump)
	check(biggest_jump < 0.05, "no bone jumps while the length changes", "< 0.05 m per tick", biggest_jump)
	check(absf(rope.length - 1.4) < 0.01, "the rope reached its length", 1.4, rope.length)


func test_attach_root_keeps_the_root_on_its_bone() -> void:
	var rig := _rig(10, 12)
	var anchor: Node3D = rig[0]
	var rope: RopeSimulation = rig[1]
	var skeleton: Skeleton3D = rig[2]
	var chain: EntwineRopeBoneChain = rig[3]
	var indices: PackedInt32Array = rig[4]
	chain.attach_root = true
	await physics_frames(3)
	var root_worst := [0.0]
	var tip_worst := [0.0]
	var gap := [0.0]
	var check := func() -> void:
		var points := rope.get_interpolated_points()
		# The root bone's animated place is the anchor's origin (the skeleton rides on the anchor).
		var root := _bone_world(skeleton, indices[0])
		root_worst[0] = maxf(root_worst[0], root.distance_to(anchor.global_position))
		gap[0] = maxf(gap[0], points[0].distance_to(anchor.global_position))
		var tip := _bone_world(skeleton, indices[indices.size() - 1])
		tip_worst[0] = maxf(tip_worst[0], tip.distance_to(points[points.size() - 1]))
	skeleton.skeleton_updated.connect(check)
	await _swing(anchor, 2.0)
	skeleton.skeleton_updated.disconnect(check)
	print("rope_bone_chain: attach_root: rope start trails the root by up to %.4f m; root error %s m, tip error %s m" % [gap[0], root_worst[0], tip_worst[0]])
	check(gap[0] > 0.01, "the rope's start trails the swinging anchor (what attach_root is for)", "> 0.01 m", gap[0])
	check_near(root_worst[0], 0.0, 0.001, "the root bone stays on its animated place")
	check_near(tip_worst[0], 0.0, 0.01, "the tip stays on the rope's end")


func test_influence_zero_leaves_the_rest_pose() -> void:
	var rig := _rig(8, 12)
	var anchor: Node3D = rig[0]
	var skeleton: Skeleton3D = rig[2]
	var chain: EntwineRopeBoneChain = rig[3]
	var indices: PackedInt32Array = rig[4]
	chain.influence = 0.0
	var worst := [0.0, 0]
	var check := func() -> void:
		for b in indices:
			var rest := skeleton.get_bone_global_rest(b)
			var now := skeleton.get_bone_global_pose(b)
			worst[0] = maxf(worst[0], now.origin.distance_to(rest.origin))
			worst[0] = maxf(worst[0], (now.basis.y - rest.basis.y).length())
		worst[1] += 1
	skeleton.skeleton_updated.connect(check)
	await _swing(anchor, 1.0)
	check(worst[1] > 20, "frames checked", "> 20", worst[1])
	check_near(worst[0], 0.0, 1e-4, "influence 0: the bones keep the rest pose")
	chain.influence = 1.0
	await physics_frames(3)
	skeleton.skeleton_updated.disconnect(check)
	var tip := indices.size() - 1
	var moved := _shown[tip].origin.distance_to(skeleton.get_bone_global_rest(indices[tip]).origin)
	check(moved > 0.05, "influence 1 moves the chain off its rest pose", "> 0.05 m", moved)


func test_bad_input_warns_once_and_leaves_the_skeleton_alone() -> void:
	var warnings_before := logged_count("EntwineRopeBoneChain")
	var rig := _rig(6, 12)
	var anchor: Node3D = rig[0]
	var rope: RopeSimulation = rig[1]
	var skeleton: Skeleton3D = rig[2]
	var chain: EntwineRopeBoneChain = rig[3]
	var indices: PackedInt32Array = rig[4]
	var stopped: Array[String] = []
	chain.following_stopped.connect(func(reason: String) -> void: stopped.append(reason))
	var at_rest := func() -> bool:
		for i in indices.size():
			if _shown[i].origin.distance_to(skeleton.get_bone_global_rest(indices[i]).origin) > 1e-4:
				return false
		return true
	anchor.position = Vector3(0.5, 2.2, 0) # the rope hangs off to one side of the skeleton's chain
	await physics_frames(10)
	check(chain.is_following() and not at_rest.call(), "following before the bad input")

	# No rope.
	chain.rope = null
	await physics_frames(10)
	var no_rope := "EntwineRopeBoneChain '%s': rope is not set" % str(chain.get_path())
	expect_warning(no_rope)
	check(logged_count(no_rope) == 1, "no rope: one warning", 1, logged_count(no_rope))
	check(at_rest.call(), "no rope: the bones are left alone")
	check(not chain.is_following(), "no rope: not following")
	check(stopped.size() == 1, "following_stopped once", 1, stopped.size())
	chain.rope = rope
	await physics_frames(5)
	check(chain.is_following(), "following again once the rope is back")

	# A bone that does not exist, then a tip that does not descend from the root.
	chain.root_bone = "Nope"
	await physics_frames(10)
	expect_warning("root_bone 'Nope' is not a bone")
	check(logged_count("root_bone 'Nope' is not a bone") == 1, "missing bone: one warning", 1, logged_count("root_bone 'Nope' is not a bone"))
	check(at_rest.call(), "missing bone: the bones are left alone")
	chain.root_bone = "Bone4"
	chain.tip_bone = "Bone2"
	await physics_frames(10)
	expect_warning("is not a descendant of root_bone 'Bone4'")
	check(logged_count("is not a descendant of root_bone 'Bone4'") == 1, "tip above root: one warning", 1, logged_count("is not a descendant of root_bone 'Bone4'"))
	check(chain.get_chain_bones().is_empty(), "no chain bones while invalid")
	chain.root_bone = "Bone1"
	chain.tip_bone = "Bone6"
	await physics_frames(5)
	check(chain.get_chain_bones() == indices, "the chain is root → tip", indices, chain.get_chain_bones())

	# The rope cut at its anchor: one point left.
	rope.cut_at(0)
	await physics_frames(10)
	check(rope.get_active_point_count() == 1, "the rope was cut down to one point", 1, rope.get_active_point_count())
	expect_warning("fewer than 2 points")
	check(logged_count("fewer than 2 points") == 1, "a one-point rope: one warning", 1, logged_count("fewer than 2 points"))
	check(at_rest.call(), "a one-point rope: the bones are left alone")
	rope.reset_rope()
	rope.point_count = 12
	await physics_frames(5)
	check(chain.is_following(), "following again once the rope grows back")

	# A skeleton moved to NaN (the renderer complains about the skinned mesh's transform itself).
	expect_error("!v.is_finite()")
	skeleton.position = Vector3(NAN, 0, 0)
	await physics_frames(10)
	expect_warning("the skeleton's global transform is not finite")
	check(logged_count("not finite") == 1, "NaN: one warning", 1, logged_count("not finite"))
	skeleton.position = Vector3.ZERO
	await physics_frames(5)
	check(chain.is_following(), "following again after the NaN")
	check(logged_count("EntwineRopeBoneChain") - warnings_before == 5, "five problems, five warnings", 5, logged_count("EntwineRopeBoneChain") - warnings_before)


func test_the_braid_in_the_rope_man_level_follows_its_rope() -> void:
	var warnings_before := logged_count("EntwineRopeBoneChain")
	var level: Node3D = add((load("res://demo/rope_demo.gd") as GDScript).new())
	var runner: TestCharacter = level.get("_character")
	var braid_rope: RopeSimulation = level.get("_braid_rope")
	var skeleton := runner.get_skeleton()
	var chain: EntwineRopeBoneChain = skeleton.get_node("BraidChain")
	var tip := skeleton.find_bone("Braid10")
	var head := skeleton.find_bone("Head")
	var worst := [0.0, 0, 0.0]
	var check_tip := func() -> void:
		var points := braid_rope.get_interpolated_points()
		var at := _bone_world(skeleton, tip)
		worst[0] = maxf(worst[0], at.distance_to(points[points.size() - 1]))
		worst[1] += 1
		# How far behind the head (the runner's +Z) the braid's tip streams.
		var behind := runner.global_transform.basis.inverse() * (at - _bone_world(skeleton, head))
		worst[2] = maxf(worst[2], behind.z)
	await physics_frames(30)
	skeleton.skeleton_updated.connect(check_tip)
	await physics_frames(180)
	skeleton.skeleton_updated.disconnect(check_tip)
	print("rope_bone_chain: Rope-Man's braid: tip error %s m over %d frames, streams up to %.2f m behind the head" % [worst[0], worst[1], worst[2]])
	check(chain.is_following(), "the braid follows its rope")
	check(worst[1] > 100, "frames checked", "> 100", worst[1])
	check_near(worst[0], 0.0, 0.01, "the braid's tip on its rope's end")
	check(worst[2] > 0.2, "the braid streams behind the running head", "> 0.2 m", worst[2])
	check(logged_count("EntwineRopeBoneChain") == warnings_before, "no warnings", warnings_before, logged_count("EntwineRopeBoneChain"))


func test_debug_draw_shows_the_targets() -> void:
	var rig := _rig(6, 12)
	var chain: EntwineRopeBoneChain = rig[3]
	chain.debug_draw = true
	await physics_frames(5)
	var lines := chain.get_node_or_null("RopeBoneChainDebug") as MeshInstance3D
	check(lines != null and lines.visible, "debug lines drawn")
	if lines:
		var mesh := lines.mesh as ImmediateMesh
		# A line between each pair of bones and a three-line cross on each: (5 + 18) lines.
		var vertices: PackedVector3Array = mesh.surface_get_arrays(0)[Mesh.ARRAY_VERTEX] if mesh.get_surface_count() == 1 else PackedVector3Array()
		check(vertices.size() == 2 * (5 + 18), "one line per link and a cross per bone", 46, vertices.size())
	var targets := chain.get_bone_targets()
	check(targets.size() == 6, "get_bone_targets: one per bone", 6, targets.size())
	chain.debug_draw = false
	await frames(2)
	check(chain.get_node_or_null("RopeBoneChainDebug") == null, "debug lines removed")
