extends EntwineBench
## `cargo xtask bench formation`: milliseconds per 60 Hz tick for a squad of AGENTS agents.
##
## Rust: a FormationController with AGENTS internal agents (a column of 100 files) forming up from a
## scatter and then marching, stepped with `advance(1/60)` (the tick alone, no rendering).
## GDScript: the same algorithm (`gd_formation.gd`) on GD_AGENTS agents, scaled per agent to AGENTS.
## In the tree: the same squad marching under its own physics processing, and NavigationServer3D
## with AGENTS avoidance agents (radius 0.2 m, 3 m/s, 10 neighbours) on one active map, standing on
## the same points as the squad's agents, each measured as CPU time per physics frame (all threads)
## above a bare scene, in interleaved rounds; also a squad forming up from the default line.
## ratio = GDScript ms / Rust advance() ms (per AGENTS agents); vs_navigation = navigation CPU ms /
## the squad's CPU ms in the tree.

const AGENTS := 10000
const GD_AGENTS := 1000
const TICKS := 120
const ROUNDS := 5
const WARM_UP := 30
const MEASURE_FRAMES := 180
const COLUMN := "(shape: Column(files: 100), spacing: 1.2)"
const GD_FORMATION := preload("res://tests/bench/gd_formation.gd")


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var rust_ms := _bench_rust()
	var gd_ms := _bench_gdscript() * float(AGENTS) / GD_AGENTS
	var tree := await _bench_in_the_tree()
	var nav_ms: float = tree[1]
	var nav_text := "n/a" if nav_ms < 0.0 else "%.3f" % nav_ms
	var nav_ratio := "n/a" if nav_ms < 0.0 or tree[0] <= 0.0 else "%.1fx" % (nav_ms / tree[0])
	print("bench formation: %d agents per 60 Hz tick; rust advance() %.3f ms/tick; in the tree %.3f ms CPU/frame (rounds %.3f-%.3f; main thread's own clock %.3f); gdscript same algorithm %.3f ms/tick (measured on %d agents, scaled ×%d); NavigationServer3D avoidance %s ms CPU/frame (rounds %.3f-%.3f); forming up from a 12 km line %.3f ms CPU/frame (rounds %.3f-%.3f); vs_navigation=%s ratio=%.1fx" % [
		AGENTS, rust_ms, tree[0], tree[2], tree[3], tree[6], gd_ms, GD_AGENTS, AGENTS / GD_AGENTS, nav_text, tree[4], tree[5], tree[7], tree[8], tree[9], nav_ratio, gd_ms / rust_ms])
	quit(0)


func _bench_rust() -> float:
	var squad := internal_squad(AGENTS, COLUMN)
	squad.set_process(false)
	squad.snap_to_slots()
	var rng := RandomNumberGenerator.new()
	rng.seed = 3
	for i in AGENTS:
		var p := squad.get_slot_position(i)
		squad.place_agent(i, p + Vector3(rng.randf_range(-0.5, 0.5), 0, rng.randf_range(-0.5, 0.5)), rng.randf_range(-PI, PI))
	squad.dress()
	var samples: Array[float] = []
	for r in ROUNDS:
		if r == 1:
			squad.march(Vector3(0, 0, -1), 1.4)
		var start := Time.get_ticks_usec()
		for t in TICKS:
			squad._advance(1.0 / 60.0)
		samples.append(float(Time.get_ticks_usec() - start) / TICKS / 1000.0)
	squad.free()
	return median(samples)


func _bench_gdscript() -> float:
	var sim = GD_FORMATION.new()
	sim.setup(GD_AGENTS, 100 * GD_AGENTS / AGENTS, 1.2, 0.5)
	var samples: Array[float] = []
	for r in ROUNDS:
		if r == 1:
			sim.march(Vector2(0, -1), 1.4)
		var start := Time.get_ticks_usec()
		for t in TICKS / 4:
			sim.step()
		samples.append(float(Time.get_ticks_usec() - start) / (TICKS / 4) / 1000.0)
	return median(samples)


## The squad and NavigationServer3D avoidance as a game runs them, each physics frame at 60 Hz:
## the CPU time the process uses per physics frame (all threads: avoidance runs on worker threads)
## with the squad's physics processing on, with the navigation map active, and with neither, in
## ROUNDS interleaved rounds of MEASURE_FRAMES frames each after WARM_UP frames (the first steps of
## a newly active map are much slower than its steady state). The squad's agents and the avoidance
## agents stand on the same points (each slot of the column, up to 0.5 m off it), so both do their
## work on the same crowd: the squad forms up from there while it marches. A second squad
## (`line`) forms up and marches from where new agents stand, the default line formation (12 km
## long for 10,000 agents): its agents are far apart for the whole bench, so its soft walls go
## through the spatial hash instead of the dense grid. Returns [squad ms, navigation ms, squad
## lowest, squad highest, navigation lowest, navigation highest, the squad's main-thread ms, line
## ms, line lowest, line highest]: each the median over the rounds of that configuration minus
## the bare one; the main-thread figure is the squad's CPU time per frame above the bare frame on
## the thread's own clock. -1 where CPU time cannot be read.
func _bench_in_the_tree() -> Array:
	if cpu_seconds() < 0.0:
		return [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]
	var squad := internal_squad(AGENTS, COLUMN)
	squad.snap_to_slots()
	var line := internal_squad(AGENTS, COLUMN)
	var nav := NavigationServer3D
	var map := nav.map_create()
	var agents: Array[RID] = []
	var rng := RandomNumberGenerator.new()
	rng.seed = 3
	var sink := func(_v: Vector3) -> void: pass
	for i in AGENTS:
		var a := nav.agent_create()
		nav.agent_set_map(a, map)
		nav.agent_set_avoidance_enabled(a, true)
		nav.agent_set_radius(a, 0.2)
		nav.agent_set_neighbor_distance(a, 1.0)
		nav.agent_set_max_neighbors(a, 10)
		nav.agent_set_max_speed(a, 3.0)
		nav.agent_set_time_horizon_agents(a, 1.0)
		nav.agent_set_avoidance_callback(a, sink)
		var slot := squad.get_slot_position(i)
		var p := slot + Vector3(rng.randf_range(-0.5, 0.5), 0, rng.randf_range(-0.5, 0.5))
		squad.place_agent(i, p, 0.0)
		nav.agent_set_position(a, p)
		nav.agent_set_velocity(a, (slot - p) * 1.8)
		agents.append(a)
	for s in [squad, line]:
		s.march(Vector3(0, 0, -1), 1.4)
	var runs := {"bare": [], "squad": [], "nav": [], "line": []}
	var main_thread := {"bare": [], "squad": []}
	for r in ROUNDS:
		for config in ["bare", "squad", "nav", "line"]:
			squad.set_physics_process(config == "squad")
			line.set_physics_process(config == "line")
			nav.map_set_active(map, config == "nav")
			for f in WARM_UP:
				await physics_frame
			var c0 := cpu_seconds()
			var t0 := thread_cpu_usec()
			for f in MEASURE_FRAMES:
				await physics_frame
			runs[config].append((cpu_seconds() - c0) * 1000.0 / MEASURE_FRAMES)
			if main_thread.has(config):
				main_thread[config].append((thread_cpu_usec() - t0) / 1000.0 / MEASURE_FRAMES)
	# Detach before freeing: freeing avoidance agents with callbacks straight away crashes Godot 4.6.
	for a in agents:
		nav.agent_set_avoidance_callback(a, Callable())
		nav.agent_set_map(a, RID())
	await physics_frame
	await physics_frame
	for a in agents:
		nav.free_rid(a)
	nav.free_rid(map)
	squad.free()
	line.free()
	await physics_frame
	var bare := median(runs["bare"])
	var out := []
	for config in ["squad", "nav", "line"]:
		var costs: Array = runs[config].map(func(x: float) -> float: return maxf(x - bare, 0.0))
		out.append(median(costs))
		out.append(costs.min())
		out.append(costs.max())
	# The squad runs on the main thread: its share read on the thread's own clock (ns resolution)
	# next to the process's clock (10 ms ticks), -1 without a thread clock.
	var squad_main := -1.0
	if main_thread["bare"][0] >= 0.0:
		squad_main = maxf(median(main_thread["squad"]) - median(main_thread["bare"]), 0.0)
	return [out[0], out[3], out[1], out[2], out[4], out[5], squad_main, out[6], out[7], out[8]]

