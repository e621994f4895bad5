# timeout: 240
extends EntwineTest
## RigidBody3D agents: the controller sets each body's linear velocity and yaw, the physics server
## moves it. Each command acts LATENCY later (this script replaces the velocity the controller
## just set by the one it set LATENCY ago, before the physics step), with 1 mm of jitter per step
## and 3 % of velocity updates lost (the body keeps its previous velocity). 37 and 120 agents at
## 0 / 120 / 250 ms, two formations each, random starts up to 1 m from a slot with any heading,
## real physics steps. The contract: settle ≤ 1.2 s, then for the following second the spacing
## error over every neighbouring pair ≤ 5 cm and the heading standard deviation ≤ 3°. The squad
## also measures each body's latency: it must find the delay line's. One case stands the bodies
## on a floor under gravity, frictionless against it as the class docs advise.

const DT := 1.0 / 60.0


## A controller with `count` RigidBody3D children: no gravity, no collision layers (the soft walls
## keep them apart), rotation locked about X and Z as the class docs advise. The controller's own
## physics step is off: the test ticks it once per physics frame, then the physics server moves the
## bodies.
##
## With `friction` ≥ 0 the bodies instead stand on a floor under gravity: 1.7 m capsules on layer 2
## that collide with the floor (layer 1) only, with that friction against it.
func _squad(count: int, latency: float, friction := -1.0) -> FormationController:
	var squad := FormationController.new()
	squad.name = "Rigid"
	squad.hot_reload = false
	squad.emit_agent_signals = false
	squad.actuation_latency = latency
	for i in count:
		var body := RigidBody3D.new()
		body.collision_layer = 0
		body.collision_mask = 0
		body.gravity_scale = 0.0
		body.axis_lock_angular_x = true
		body.axis_lock_angular_z = true
		body.position = Vector3(i % 12, 0, i / 12)
		if friction >= 0.0:
			body.collision_layer = 2
			body.collision_mask = 1
			body.gravity_scale = 1.0
			body.position.y = 0.85
			var material := PhysicsMaterial.new()
			material.friction = friction
			body.physics_material_override = material
			var shape := CollisionShape3D.new()
			var capsule := CapsuleShape3D.new()
			capsule.radius = 0.25
			capsule.height = 1.7
			shape.shape = capsule
			body.add_child(shape)
		squad.add_child(body)
	return add(squad) as FormationController


func _trial(squad: FormationController, f: String, latency: float, rng: RandomNumberGenerator) -> Array:
	var n := squad.get_agent_count()
	var bodies: Array[RigidBody3D] = []
	for i in n:
		bodies.append(squad.get_child(i) as RigidBody3D)
	squad.form(f)
	squad.snap_to_slots()
	var y0 := bodies[0].position.y
	for i in n:
		bodies[i].position = squad.get_slot_position(i) + Vector3(0, y0, 0)
		bodies[i].linear_velocity = Vector3.ZERO
	squad._advance(0.3)  # settles in place, so the same command is not a duplicate
	var lag := int(round(latency * 60.0))
	var queues: Array = []
	var last: Array[Vector3] = []
	for i in n:
		var slot := squad.get_slot_position(i)
		var offset := Vector2.from_angle(rng.randf() * TAU) * sqrt(rng.randf()) * 1.0
		var p := slot + Vector3(offset.x, y0, offset.y)
		var yaw := rng.randf_range(-PI, PI)
		bodies[i].global_transform = Transform3D(Basis(Vector3.UP, yaw), p)
		bodies[i].linear_velocity = Vector3.ZERO
		bodies[i].angular_velocity = Vector3.ZERO
		squad.place_agent(i, p, yaw)
		var q: Array[Vector3] = []
		q.resize(lag)
		q.fill(Vector3.ZERO)
		queues.append(q)
		last.append(Vector3.ZERO)
	await physics_frames(1)  # the teleports reach the physics server
	var got := {}
	var on_settled := func(m: Dictionary) -> void:
		if got.is_empty():
			got.merge(m)
	squad.settled.connect(on_settled)
	squad.form(f)
	var spacing := 0.0
	var heading := 0.0
	var held := 0
	var drift := 0.0
	for t in 240:
		for i in n:
			bodies[i].position += Vector3(rng.randfn(0.0, 0.001), 0, rng.randfn(0.0, 0.001))
		squad._advance(DT)
		if t == 0:
			var since: float = squad.get_metrics()["since_command"]
			check(since < 1.5 * DT, "%s: the command restarted the settle clock" % f, "< 1.5 ticks", since)
		for i in n:
			var cmd := bodies[i].linear_velocity  # what the controller just set
			if rng.randf() < 0.03:
				cmd = last[i]  # lost: the body keeps its previous velocity
			last[i] = cmd
			var q: Array[Vector3] = queues[i]
			q.push_back(cmd)
			bodies[i].linear_velocity = q.pop_front()
		await physics_frames(1)
		if not got.is_empty():
			spacing = maxf(spacing, squad.get_pair_spacing_error())
			heading = maxf(heading, rad_to_deg(squad.get_metrics()["heading_std"]))
			held += 1
			if held > 60:
				break
	for i in n:
		drift = maxf(drift, absf(bodies[i].position.y - y0))
		# The body's own yaw is the one the controller reports (it drives the rotation).
		var yaw_gap := absf(angle_difference(bodies[i].rotation.y, squad.get_agent_heading(i)))
		check(yaw_gap < 0.02, "%s: body %d faces the controller's heading" % [f, i], "< 0.02 rad", yaw_gap)
	check(drift < 0.01, "%s: bodies stay on their plane" % f, "< 1 cm", drift)
	squad.settled.disconnect(on_settled)
	if got.is_empty() or held <= 60:
		return [-1.0, spacing, heading]
	return [got["settle_time"], maxf(spacing, got["spacing_error"]), maxf(heading, rad_to_deg(got["heading_std"]))]


func _run_case(count: int, latency: float, formations: Array, seed: int, friction := -1.0) -> void:
	if friction >= 0.0:
		add_floor()
	var squad := _squad(count, latency, friction)
	await physics_frames(1)
	squad.set_physics_process(false)
	check(squad.get_agent_count() == count, "%d rigid bodies are the agents" % count, count, squad.get_agent_count())
	var rng := RandomNumberGenerator.new()
	rng.seed = seed
	for f in formations:
		var r: Array = await _trial(squad, f, latency, rng)
		var tag := "%d rigid agents, %d ms, %s%s" % [count, int(latency * 1000.0), f, "" if friction < 0.0 else ", on a floor (friction %.1f)" % friction]
		check(r[0] >= 0.0, "%s: settles and holds for a second" % tag)
		check(r[0] <= 1.2, "%s: settled within 1.2 s" % tag, "<= 1.2", r[0])
		check(r[1] <= 0.05, "%s: spacing over every neighbouring pair within 5 cm" % tag, "<= 0.05", r[1])
		check(r[2] <= 3.0, "%s: heading std within 3°" % tag, "<= 3", r[2])
		print("rigid %s: settle %.3f s, worst spacing %.1f mm, worst heading std %.2f°" % [tag, r[0], r[1] * 1000.0, r[2]])
	var lo := 1e9
	var hi := -1e9
	for i in count:
		var est := squad.get_agent_latency(i)
		lo = minf(lo, est)
		hi = maxf(hi, est)
		check_near(est, round(latency * 60.0) / 60.0, 0.03, "body %d: measured latency within 30 ms of the delay line's" % i)
	print("rigid %d agents, %d ms: measured latencies %.1f–%.1f ms" % [count, int(latency * 1000.0), lo * 1000.0, hi * 1000.0])


func test_37_rigid_agents_at_0_ms() -> void:
	await _run_case(37, 0.0, ["column", "circle"], 21)


func test_37_rigid_agents_at_120_ms() -> void:
	await _run_case(37, 0.12, ["wedge", "spiral"], 22)


func test_37_rigid_agents_at_250_ms() -> void:
	await _run_case(37, 0.25, ["line", "column", "circle", "box"], 23)


func test_120_rigid_agents_at_0_ms() -> void:
	await _run_case(120, 0.0, ["hollow_box", "arc"], 24)


func test_120_rigid_agents_at_120_ms() -> void:
	await _run_case(120, 0.12, ["column", "circle"], 25)


func test_120_rigid_agents_at_250_ms() -> void:
	await _run_case(120, 0.25, ["wedge", "spiral", "line", "column"], 26)


func test_37_rigid_agents_on_a_floor_at_120_ms() -> void:
	await _run_case(37, 0.12, ["box", "arc"], 27, 0.0)
