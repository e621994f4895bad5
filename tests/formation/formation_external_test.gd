# timeout: 300
extends EntwineTest
## External agents under latency: CharacterBody3D children driven by the controller's velocity
## commands, which act LATENCY later (a delay line in this script), with 1 mm of jitter per step
## and 3 % of velocity updates lost (the body keeps its previous command). 37 and 120 agents, every
## shipped formation, 0 / 120 / 250 ms, random starts up to 1 m from a slot with any heading. The
## contract: settle ≤ 1.2 s, then for the following second the spacing error over every
## neighbouring pair ≤ 5 cm and the heading standard deviation ≤ 3°.

const FORMATIONS := ["line", "column", "wedge", "circle", "arc", "spiral", "box", "hollow_box"]


## A controller with `count` CharacterBody3D children (no collision layers: bodies pass through
## each other; the controller's soft walls keep them apart), stepped by hand.
func _squad(count: int, latency: float) -> FormationController:
	var squad := FormationController.new()
	squad.name = "External"
	squad.hot_reload = false
	squad.emit_agent_signals = false
	squad.move_bodies = false
	squad.actuation_latency = latency
	for i in count:
		var body := CharacterBody3D.new()
		body.collision_layer = 0
		body.collision_mask = 0
		body.position = Vector3(i % 12, 0, i / 12)
		squad.add_child(body)
	return add(squad) as FormationController


## One trial: returns [settle s (or -1), worst spacing m, worst heading std °] over the settle and
## the following second.
func _trial(squad: FormationController, f: String, latency: float, rng: RandomNumberGenerator, hz: int) -> Array:
	var dt := 1.0 / hz
	var n := squad.get_agent_count()
	var bodies: Array[CharacterBody3D] = []
	for i in n:
		bodies.append(squad.get_child(i) as CharacterBody3D)
	squad.form(f)
	squad.snap_to_slots()
	for i in n:
		bodies[i].position = squad.get_slot_position(i)
		bodies[i].velocity = Vector3.ZERO
	squad._advance(0.3)  # settles in place, so the same command is not a duplicate
	for i in n:
		var slot := squad.get_slot_position(i)
		var offset := Vector2.from_angle(rng.randf() * TAU) * sqrt(rng.randf()) * 1.0
		var p := slot + Vector3(offset.x, 0, offset.y)
		bodies[i].position = p
		bodies[i].velocity = Vector3.ZERO
		squad.place_agent(i, p, rng.randf_range(-PI, PI))
	var lag := int(round(latency * hz))
	var queues: Array = []
	var last: Array[Vector3] = []
	for i in n:
		var q: Array[Vector3] = []
		q.resize(lag)
		q.fill(Vector3.ZERO)
		queues.append(q)
		last.append(Vector3.ZERO)
	var got := {}
	var on_settled := func(m: Dictionary) -> void:
		if got.is_empty():
			got.merge(m)
	squad.settled.connect(on_settled)
	squad.form(f)
	var spacing := 0.0
	var heading := 0.0
	var held := 0
	for t in 4 * hz:
		squad._advance(dt)
		for i in n:
			var cmd := bodies[i].velocity
			if rng.randf() < 0.03:
				cmd = last[i]  # this update was lost: the body keeps its previous command
			last[i] = cmd
			var q: Array[Vector3] = queues[i]
			q.push_back(cmd)
			var v: Vector3 = q.pop_front()
			bodies[i].velocity = v
			bodies[i].move_and_slide()
			bodies[i].position += Vector3(rng.randfn(0.0, 0.001), 0, rng.randfn(0.0, 0.001))
		if not got.is_empty():
			spacing = maxf(spacing, squad.get_pair_spacing_error())
			heading = maxf(heading, rad_to_deg(squad.get_metrics()["heading_std"]))
			held += 1
			if held > hz:
				break
	squad.settled.disconnect(on_settled)
	if got.is_empty() or held <= hz:
		return [-1.0, spacing, heading]
	return [got["settle_time"], maxf(spacing, got["spacing_error"]), maxf(heading, rad_to_deg(got["heading_std"]))]


## Runs every formation with `count` agents at `latency`, the game's physics at `hz` ticks a
## second (the squad steps at its own fixed 60 Hz; the bodies get one command per physics tick).
func _run_case(count: int, latency: float, seed: int, hz := 60) -> void:
	var was := Engine.physics_ticks_per_second
	Engine.physics_ticks_per_second = hz
	var squad := _squad(count, latency)
	await physics_frames(1)
	squad.set_physics_process(false)
	check(squad.get_agent_count() == count, "%d bodies are the agents" % count, count, squad.get_agent_count())
	var rng := RandomNumberGenerator.new()
	rng.seed = seed
	for f in FORMATIONS:
		var r := _trial(squad, f, latency, rng, hz)
		var tag := "%d external agents, %d ms, %d Hz physics, %s" % [count, int(latency * 1000.0), hz, f]
		check(r[0] >= 0.0, "%s: settles and holds for a second" % tag)
		check(r[0] <= 1.2, "%s: settled within 1.2 s" % tag, "<= 1.2", r[0])
		check(r[1] <= 0.05, "%s: spacing over every neighbouring pair within 5 cm" % tag, "<= 0.05", r[1])
		check(r[2] <= 3.0, "%s: heading std within 3°" % tag, "<= 3", r[2])
		print("external %s: settle %.3f s, worst spacing %.1f mm, worst heading std %.2f°" % [tag, r[0], r[1] * 1000.0, r[2]])
	Engine.physics_ticks_per_second = was


func test_37_agents_at_0_ms() -> void:
	await _run_case(37, 0.0, 1)


func test_37_agents_at_120_ms() -> void:
	await _run_case(37, 0.12, 2)


func test_37_agents_at_250_ms() -> void:
	await _run_case(37, 0.25, 3)


func test_120_agents_at_0_ms() -> void:
	await _run_case(120, 0.0, 4)


func test_120_agents_at_120_ms() -> void:
	await _run_case(120, 0.12, 5)


func test_120_agents_at_250_ms() -> void:
	await _run_case(120, 0.25, 6)


func test_37_agents_at_120_ms_with_30_hz_physics() -> void:
	await _run_case(37, 0.12, 7, 30)


func test_37_agents_at_120_ms_with_20_hz_physics() -> void:
	await _run_case(37, 0.12, 8, 20)
