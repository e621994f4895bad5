# timeout: 240
extends EntwineTest
## Per-agent latency: CharacterBody3D agents driven by the controller's velocity commands, every
## third of them acting on each command 210 ms late and the rest 0–50 ms late (a delay line in this
## script; a latency between two ticks acts on the two commands around it, interpolated), with
## 1 mm of jitter per step and 3 % of velocity updates lost (the body keeps its previous one). The
## controller assumes the seed's typical 120 ms ([member FormationController.actuation_latency])
## and measures each agent's own. Asserted: every shipped formation from random starts up to 1 m
## off with any heading, from the first command on, meets the contract (settle ≤ 1.2 s, then for a
## second spacing over every neighbouring pair ≤ 5 cm and heading std ≤ 3°); afterwards every
## agent reports its latency within 30 ms and the slow third runs a lower k1 (seed: 1.2).

const FORMATIONS := ["line", "column", "wedge", "circle", "arc", "spiral", "box", "hollow_box"]
const DT := 1.0 / 60.0
const HISTORY := 64


func _squad(count: int, assumed: float, measure: bool) -> FormationController:
	var squad := FormationController.new()
	squad.name = "Mixed"
	squad.hot_reload = false
	squad.emit_agent_signals = false
	squad.move_bodies = false
	squad.actuation_latency = assumed
	squad.measure_latency = measure
	for i in count:
		var body := CharacterBody3D.new()
		body.collision_layer = 0
		body.collision_mask = 0
		body.position = Vector3(i % 12, 0, i / 12)
		squad.add_child(body)
	return add(squad) as FormationController


## One trial of formation `f`: [settle s (or -1), worst spacing m, worst heading std °].
func _trial(squad: FormationController, f: String, lag: Array[float], rng: RandomNumberGenerator) -> Array:
	var n := squad.get_agent_count()
	var bodies: Array[CharacterBody3D] = []
	for i in n:
		bodies.append(squad.get_child(i) as CharacterBody3D)
	squad.form(f)
	squad.snap_to_slots()
	for i in n:
		bodies[i].position = squad.get_slot_position(i)
		bodies[i].velocity = Vector3.ZERO
	squad._advance(0.3)
	var sent: Array = []
	var applied: Array[Vector3] = []
	for i in n:
		var slot := squad.get_slot_position(i)
		var offset := Vector2.from_angle(rng.randf() * TAU) * sqrt(rng.randf()) * 1.0
		var p := slot + Vector3(offset.x, 0, offset.y)
		bodies[i].position = p
		bodies[i].velocity = Vector3.ZERO
		squad.place_agent(i, p, rng.randf_range(-PI, PI))
		var q: Array[Vector3] = []
		q.resize(HISTORY)
		q.fill(Vector3.ZERO)
		sent.append(q)
		applied.append(Vector3.ZERO)
	var got := {}
	var on_settled := func(m: Dictionary) -> void:
		if got.is_empty():
			got.merge(m)
	squad.settled.connect(on_settled)
	squad.form(f)
	var spacing := 0.0
	var heading := 0.0
	var held := 0
	for t in 240:
		squad._advance(DT)
		for i in n:
			var q: Array[Vector3] = sent[i]
			q.pop_front()
			q.push_back(bodies[i].velocity)
			var ticks: float = lag[i] * 60.0
			var whole := int(floor(ticks))
			var v: Vector3 = q[HISTORY - 1 - whole].lerp(q[HISTORY - 2 - whole], ticks - whole)
			if rng.randf() >= 0.03:
				applied[i] = v
			bodies[i].velocity = applied[i]
			bodies[i].move_and_slide()
			bodies[i].position += Vector3(rng.randfn(0.0, 0.001), 0, rng.randfn(0.0, 0.001))
		if not got.is_empty():
			spacing = maxf(spacing, squad.get_pair_spacing_error())
			heading = maxf(heading, rad_to_deg(squad.get_metrics()["heading_std"]))
			held += 1
			if held > 60:
				break
	squad.settled.disconnect(on_settled)
	if got.is_empty() or held <= 60:
		return [-1.0, spacing, heading]
	return [got["settle_time"], maxf(spacing, got["spacing_error"]), maxf(heading, rad_to_deg(got["heading_std"]))]


func _lags(count: int, rng: RandomNumberGenerator) -> Array[float]:
	var lag: Array[float] = []
	for i in count:
		lag.append(0.21 if i % 3 == 0 else rng.randf_range(0.0, 0.05))
	return lag


func _run_mixed(count: int, seed: int) -> void:
	var rng := RandomNumberGenerator.new()
	rng.seed = seed
	var lag := _lags(count, rng)
	var squad := _squad(count, 0.12, true)
	await physics_frames(1)
	squad.set_physics_process(false)
	for i in count:
		check(not squad.is_agent_latency_measured(i), "agent %d: nothing measured before it moved" % i)
		check_near(squad.get_agent_latency(i), 0.12, 1e-4, "agent %d: the assumed latency until measured" % i)
	for f in FORMATIONS:
		var r := _trial(squad, f, lag, rng)
		var tag := "%d agents, a third at 210 ms, %s" % [count, f]
		check(r[0] >= 0.0, "%s: settles and holds for a second" % tag)
		check(r[0] <= 1.2, "%s: settled within 1.2 s" % tag, "<= 1.2", r[0])
		check(r[1] <= 0.05, "%s: spacing over every neighbouring pair within 5 cm" % tag, "<= 0.05", r[1])
		check(r[2] <= 3.0, "%s: heading std within 3°" % tag, "<= 3", r[2])
		print("latency %s: settle %.3f s, worst spacing %.1f mm, worst heading std %.2f°" % [tag, r[0], r[1] * 1000.0, r[2]])
	var worst := 0.0
	var slow: Array[String] = []
	var fast: Array[String] = []
	for i in count:
		var est := squad.get_agent_latency(i)
		worst = maxf(worst, absf(est - lag[i]))
		check(squad.is_agent_latency_measured(i), "agent %d: latency measured" % i)
		check_near(est, lag[i], 0.03, "agent %d: measured latency within 30 ms of its %.0f ms" % [i, lag[i] * 1000.0])
		var k1 := squad.get_agent_k1(i)
		if i % 3 == 0:
			check_near(k1, 1.2, 0.25, "agent %d (210 ms): k1 lowered toward the seed's 1.2" % i)
			slow.append("%.0f" % (est * 1000.0))
		else:
			check_near(k1, 1.8, 1e-4, "agent %d (%.0f ms): k1 kept at 1.8" % [i, lag[i] * 1000.0])
			fast.append("%.0f/%.0f" % [lag[i] * 1000.0, est * 1000.0])
	print("latency %d agents: measured ms of the 210 ms third: %s" % [count, ", ".join(slow)])
	print("latency %d agents: true/measured ms of the rest: %s" % [count, ", ".join(fast)])
	print("latency %d agents: worst estimate error %.1f ms" % [count, worst * 1000.0])


func test_a_third_of_37_agents_lagging_210_ms() -> void:
	await _run_mixed(37, 11)


func test_a_third_of_120_agents_lagging_210_ms() -> void:
	await _run_mixed(120, 12)


## Without measuring, the same squad assuming 120 ms misses the contract somewhere: the test above
## depends on the measurement, not on a lenient setup.
func test_without_measuring_the_mixed_squad_misses_the_contract() -> void:
	var rng := RandomNumberGenerator.new()
	rng.seed = 11
	var lag := _lags(37, rng)
	var squad := _squad(37, 0.12, false)
	await physics_frames(1)
	squad.set_physics_process(false)
	var missed := 0
	var worst := 0.0
	for f in FORMATIONS:
		var r := _trial(squad, f, lag, rng)
		if r[0] < 0.0 or r[0] > 1.2 or r[1] > 0.05 or r[2] > 3.0:
			missed += 1
		worst = maxf(worst, r[0] if r[0] >= 0.0 else 99.0)
		print("latency unmeasured 37 agents, %s: settle %.3f s, worst spacing %.1f mm, worst heading std %.2f°" % [f, r[0], r[1] * 1000.0, r[2]])
	check(missed > 0, "assuming 120 ms for everyone misses the contract in some formation", "> 0", missed)
	check_near(squad.get_agent_latency(0), 0.12, 1e-4, "unmeasured: the assumed latency is reported")
