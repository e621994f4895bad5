# timeout: 240
extends EntwineTest
## RopeSimulation against physics computed here: a rope pinned at both ends hangs as the analytic
## catenary, a rope hanging from one end hangs plumb, no segment passes through a thin wall, and a
## spinning blade or a bullet that crosses the rope between two physics frames cuts it on its first pass.

const DT := 1.0 / 60.0


## The catenary y = a·cosh((x − x0)/a) + c through (0, 0) and (span, 0) with arc length [param length]:
## returns [a, x0, c]. `a` is solved by bisection on 2a·sinh(span / 2a) = length.
func _catenary(span: float, length: float) -> Array:
	var lo := 1e-6 * span
	var hi := 1e6 * span
	for i in 200:
		var mid := sqrt(lo * hi)
		if 2.0 * mid * sinh(span / (2.0 * mid)) > length:
			lo = mid
		else:
			hi = mid
	var a := sqrt(lo * hi)
	var x0 := 0.5 * span
	return [a, x0, -a * cosh(x0 / a)]


## Distance from the point (x, y) to the catenary [param c] over 0 ≤ x ≤ [param span].
func _distance(c: Array, span: float, x: float, y: float) -> float:
	var at := func(u: float) -> float:
		var cy: float = c[0] * cosh((u - c[1]) / c[0]) + c[2]
		return Vector2(u - x, cy - y).length()
	var n := 2000
	var best := INF
	var best_k := 0
	for k in n + 1:
		var d: float = at.call(span * k / n)
		if d < best:
			best = d
			best_k = k
	var lo := span * maxf(best_k - 1, 0) / n
	var hi := span * minf(best_k + 1, n) / n
	for i in 50:
		var m1 := lo + (hi - lo) / 3.0
		var m2 := hi - (hi - lo) / 3.0
		if at.call(m1) < at.call(m2):
			hi = m2
		else:
			lo = m1
	return minf(best, at.call(0.5 * (lo + hi)))


## A rope of [param length] m and [param points] points hung from [param from], default settings
## otherwise; pinned at its far end to a node at [param to] when that is finite.
func _rope(from: Vector3, to: Vector3, length: float, points: int) -> RopeSimulation:
	var a := Node3D.new()
	a.position = from
	add(a)
	var rope := RopeSimulation.new()
	rope.capacity = maxi(points, 12)
	rope.point_count = points
	rope.segment_length = length / (points - 1)
	add(rope)
	rope.anchor_node = rope.get_path_to(a)
	if to.is_finite():
		var b := Node3D.new()
		b.position = to
		add(b)
		rope.end_node = rope.get_path_to(b)
	rope.reset_rope()
	return rope


func test_a_rope_pinned_at_both_ends_hangs_as_the_catenary() -> void:
	# [length m, points, span / length]: the seed's 12 points, the default 32, long and short ropes,
	# slack and nearly taut.
	var cases := [[3.0, 12, 2.0 / 3.0], [3.0, 32, 0.97], [10.0, 64, 0.5], [1.0, 8, 0.75],
		[1.0, 64, 0.3], [6.0, 24, 0.9]]
	var ropes: Array[RopeSimulation] = []
	for i in cases.size():
		var length: float = cases[i][0]
		var h := length + 2.0
		var span: float = cases[i][2] * length
		# Side by side in parallel planes near the origin (far from it, float steps alone read as motion).
		ropes.append(_rope(Vector3(0, h, 2.0 * i), Vector3(span, h, 2.0 * i), length, cases[i][1]))
	await physics_frames(1800) # 30 s
	var before: Array = []
	for r in ropes:
		before.append(r.get_points())
	await physics_frame
	for i in cases.size():
		var length: float = cases[i][0]
		var points: int = cases[i][1]
		var span: float = cases[i][2] * length
		var h := length + 2.0
		var r := ropes[i]
		var pts := r.get_points()
		var c := _catenary(span, r.length)
		var worst := 0.0
		var total := 0.0
		var measured := 0.0
		var worst_segment := 0.0
		var speed := 0.0
		for k in pts.size():
			var p: Vector3 = pts[k] - Vector3(0, h, 2.0 * i)
			var e := Vector2(_distance(c, span, p.x, p.y), p.z).length()
			worst = maxf(worst, e)
			total += e
			speed = maxf(speed, (pts[k] - before[i][k]).length() / DT)
			if k > 0:
				var seg := (pts[k] - pts[k - 1]).length()
				measured += seg
				if k > 1:
					worst_segment = maxf(worst_segment, seg / r.segment_length - 1.0)
		var what := "L=%s m n=%d span=%d%%" % [length, points, roundi(cases[i][2] * 100.0)]
		print("ROPE_CATENARY %s: max %.2f mm mean %.2f mm length %+.3f%% worst segment %+.3f%% settled speed %.3f mm/s substeps %d" % [
			what, worst * 1e3, total / pts.size() * 1e3, (measured / r.length - 1.0) * 100.0,
			worst_segment * 100.0, speed * 1e3, r.get_substeps_in_use()])
		check(worst <= 0.01 * length, "%s: every point within 1 %% of the length of the catenary" % what,
			"<= %s" % (0.01 * length), worst)
		check(absf(measured / r.length - 1.0) <= 0.01, "%s: length within 1 %%" % what, 1.0, measured / r.length)
		check(worst_segment <= 0.05, "%s: no segment over +5 %%" % what, "<= 0.05", worst_segment)
		check(speed <= 1e-3, "%s: settled (≤ 1 mm/s)" % what, "<= 0.001", speed)


func test_a_rope_hanging_from_one_end_settles_plumb() -> void:
	var anchor := Vector3(0, 6, 0)
	var rope := _rope(anchor, Vector3.INF, 3.3, 12)
	rope.ground_enabled = false
	var hand := rope.get_node(rope.anchor_node) as Node3D
	# Swing it sideways, then hold still and let it settle.
	await physics_frames(2)
	hand.position = anchor + Vector3(0.8, 0, 0.4)
	await physics_frames(20)
	hand.position = anchor
	await physics_frames(1800)
	var pts := rope.get_points()
	var tip: Vector3 = pts[pts.size() - 1]
	var off := Vector2(tip.x - anchor.x, tip.z - anchor.z).length()
	print("ROPE_PLUMB tip %.3f mm off the vertical, %.2f mm below its length" % [off * 1e3, (anchor.y - tip.y - rope.length) * 1e3])
	check(off <= 1e-3, "the tip settles straight below the anchor (≤ 1 mm)", "<= 0.001", off)
	check_near(anchor.y - tip.y, rope.length, 0.01 * rope.length, "it hangs at its length")


## How deep (m below the top) the segment a–b passes through the box [param wall] (a [centre, half
## extents] pair, axis-aligned), or -1 when it does not. Slab test on the rope's axis (no radius).
func _crossing(wall: Array, a: Vector3, b: Vector3) -> float:
	var c: Vector3 = wall[0]
	var half: Vector3 = wall[1]
	var la := a - c
	var d := b - a
	var t0 := 0.0
	var t1 := 1.0
	for k in 3:
		if absf(d[k]) < 1e-9:
			if absf(la[k]) > half[k]:
				return -1.0
			continue
		var u := (-half[k] - la[k]) / d[k]
		var v := (half[k] - la[k]) / d[k]
		t0 = maxf(t0, minf(u, v))
		t1 = minf(t1, maxf(u, v))
		if t0 > t1:
			return -1.0
	return half.y - minf((la + d * t0).y, (la + d * t1).y)


func _wall_run(wall: Array, path: Callable, frames: int, start: Vector3) -> Array:
	var rope := _rope(start, Vector3.INF, 3.3, 12)
	var a := rope.get_node(rope.anchor_node) as Node3D
	var bad := 0
	var deepest := 0.0
	var stretch := 0.0
	for f in frames:
		a.position = path.call((f + 1) * DT)
		await physics_frame
		var pts := rope.get_points()
		var crossed := -1.0
		for k in range(1, pts.size()):
			crossed = maxf(crossed, _crossing(wall, pts[k - 1], pts[k]))
		if crossed >= 0.0:
			bad += 1
			deepest = maxf(deepest, crossed)
		stretch = maxf(stretch, rope.get_max_stretch())
	rope.queue_free()
	return [bad, deepest, stretch]


func test_no_segment_passes_through_a_thin_wall() -> void:
	add_floor()
	# 5 cm thick, 1.4 m high, 4 m wide, across the x axis at x = 2.
	var wall := [Vector3(2.0, 0.7, 0.0), Vector3(0.025, 0.7, 2.0)]
	add_box(wall[0], wall[1] * 2.0)
	for speed in [4.0, 8.0, 12.0, 15.0]:
		# A straight pass at 2 m: the rope trails on the floor and is dragged over the wall.
		var pass_run: Array = await _wall_run(wall, func(t: float) -> Vector3:
			return Vector3(-3.0 + speed * t, 2.0, 0.0), int(10.0 / speed / DT), Vector3(-3.0, 2.0, 0.0))
		# A pendulum: the anchor swings across the wall with a peak speed of `speed`.
		var omega: float = speed / 3.0
		var swing: Array = await _wall_run(wall, func(t: float) -> Vector3:
			return Vector3(2.0 + 3.0 * sin(omega * t), 2.2, 0.0), 360, Vector3(2.0, 2.2, 0.0))
		print("ROPE_WALL %s m/s: pass %d frames with a segment through the wall (deepest %.0f mm, stretch %.1f%%), pendulum %d (deepest %.0f mm, stretch %.1f%%)" % [
			speed, pass_run[0], pass_run[1] * 1e3, pass_run[2] * 100.0, swing[0], swing[1] * 1e3, swing[2] * 100.0])
		check(pass_run[0] == 0, "no segment through the wall on a pass at %s m/s" % speed, 0, pass_run[0])
		check(swing[0] == 0, "no segment through the wall in a pendulum at %s m/s" % speed, 0, swing[0])
		check(pass_run[2] <= 0.10 and swing[2] <= 0.10, "the rope slides over the edge (stretch ≤ 10 %%) at %s m/s" % speed,
			"<= 0.10", maxf(pass_run[2], swing[2]))


## A rope hanging through the plane of a blade turning about the vertical axle at (0, 3, 0), 0.4 m
## from it. The blade is one-sided (0.6 m from the axle), starts 0.5 rad past the rope and is turned
## by [param spin] each frame; returns [frame of the first pass, frame of the cut, cuts]. The rope meets
## the pose a frame reached [param lag] frames later: 1 for a body the physics server moves (the rope
## steps before the server), 0 for one a script moves before the rope's step.
func _blade_run(blade: Node3D, rate: float, spin: Callable, lag: int) -> Array:
	var rope := _rope(Vector3(0.4, 5.0, 0.0), Vector3.INF, 3.3, 12)
	rope.cutter_mask = 2
	var cuts := [0]
	var cut_frame := [-1]
	var frame := [0]
	rope.rope_cut.connect(func(_i: int, _at: Vector3) -> void:
		cuts[0] += 1
		if cut_frame[0] < 0:
			cut_frame[0] = frame[0])
	# The blade touches the rope within w of a full turn (its half-thickness plus the rope's radius,
	# seen from the axle, 0.4 m away).
	var w := asin((0.01 + rope.radius) / 0.4)
	# The blade's angle after each physics frame, unwrapped with the turn it should have made (a
	# frame's turn can exceed half a revolution).
	var pass_frame := -1
	var last := blade.global_basis.x
	var turned := 0.5
	for f in 240:
		frame[0] = f
		spin.call()
		await physics_frame
		var now := blade.global_basis.x
		var step := atan2(last.z, last.x) - atan2(now.z, now.x) # about +Y, x toward −z
		turned += rate * DT + wrapf(step - rate * DT, -PI, PI)
		last = now
		if pass_frame < 0 and turned >= TAU - w:
			pass_frame = f + lag
		if cut_frame[0] >= 0 and f > cut_frame[0] + 5:
			break
	rope.queue_free()
	blade.queue_free()
	return [pass_frame, cut_frame[0], cuts[0]]


func _blade_shape(body: CollisionObject3D) -> void:
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.6, 0.1, 0.02)
	shape.shape = box
	shape.position = Vector3(0.3, 0, 0)
	body.add_child(shape)
	body.collision_layer = 2
	body.collision_mask = 0


func test_a_spinning_blade_cuts_on_its_first_pass() -> void:
	add_floor()
	for rate in [20.0, 125.0, 200.0]:
		# A rigid body spinning freely: the rope sweeps it with the body's own angular velocity.
		var body := RigidBody3D.new()
		_blade_shape(body)
		body.gravity_scale = 0.0
		body.can_sleep = false
		body.center_of_mass_mode = RigidBody3D.CENTER_OF_MASS_MODE_CUSTOM
		body.center_of_mass = Vector3.ZERO
		body.angular_damp_mode = RigidBody3D.DAMP_MODE_REPLACE
		body.angular_damp = 0.0
		body.position = Vector3(0, 3.0, 0)
		body.rotation.y = 0.5
		add(body)
		body.angular_velocity = Vector3(0, rate, 0)
		var r: Array = await _blade_run(body, rate, func() -> void: pass, 1)
		print("ROPE_BLADE rigid body at %s rad/s (%.2f rad per frame): first pass in frame %d, cut in frame %d, rope_cut emitted %d time(s)" % [
			rate, rate * DT, r[0], r[1], r[2]])
		check(r[1] >= 0 and r[1] == r[0], "a blade at %s rad/s cuts on its first pass" % rate, r[0], r[1])
		check(r[2] == 1, "rope_cut once at %s rad/s" % rate, 1, r[2])
	# A kinematic blade turned by a script (no velocity of its own: swept from its last pose).
	var rate := 125.0
	var blade := AnimatableBody3D.new()
	blade.sync_to_physics = false
	_blade_shape(blade)
	blade.position = Vector3(0, 3.0, 0)
	blade.rotation.y = 0.5
	add(blade)
	var r: Array = await _blade_run(blade, rate, func() -> void: blade.rotation.y += rate * DT, 0)
	print("ROPE_BLADE script-turned body at %s rad/s: first pass in frame %d, cut in frame %d, rope_cut emitted %d time(s)" % [rate, r[0], r[1], r[2]])
	check(r[1] >= 0 and r[1] == r[0], "a script-turned blade at %s rad/s cuts on its first pass" % rate, r[0], r[1])
	check(r[2] == 1, "rope_cut once for the script-turned blade", 1, r[2])


func test_a_bullet_crossing_between_two_frames_cuts() -> void:
	add_floor()
	var speed := 50.0
	var rope := _rope(Vector3(0, 5.0, 0), Vector3.INF, 3.3, 12)
	rope.cutter_mask = 2
	await physics_frames(30)
	var bullet := Area3D.new()
	bullet.collision_layer = 2
	bullet.collision_mask = 0
	var shape := CollisionShape3D.new()
	var ball := SphereShape3D.new()
	ball.radius = 0.01
	shape.shape = ball
	bullet.add_child(shape)
	# 37 % of a frame's flight short of the rope at a frame: it crosses between two frames.
	bullet.position = Vector3(-3.37 * speed * DT, 3.5, 0)
	add(bullet)
	var cuts: Array = []
	rope.rope_cut.connect(func(i: int, at: Vector3) -> void: cuts.append(at))
	var crossed := -1
	var cut_frame := -1
	var closest := INF
	for f in 20:
		bullet.position.x += speed * DT
		if crossed < 0 and bullet.position.x > 0.0:
			crossed = f
		closest = minf(closest, absf(bullet.position.x))
		await physics_frame
		if cut_frame < 0 and not cuts.is_empty():
			cut_frame = f
	print("ROPE_BULLET %s m/s: nearest to the rope at a frame %.0f mm, crossed in frame %d, cut in frame %d, cuts %d" % [
		speed, closest * 1e3, crossed, cut_frame, cuts.size()])
	check(closest > 0.1, "the bullet is never near the rope at a frame", "> 0.1", closest)
	check(cut_frame >= 0 and absi(cut_frame - crossed) <= 1, "a 50 m/s bullet crossing between frames cuts", crossed, cut_frame)
	check(cuts.size() == 1, "rope_cut once", 1, cuts.size())
	if cuts.size() == 1:
		check_near(cuts[0].y, 3.5, 0.3, "cut at the bullet's height")
