extends EntwineBench
## `cargo xtask bench rope`: 1,000 ropes × 32 points × 8 iterations per physics frame.
##
## Each rope hangs from a node that circles; the ropes are stepped by hand so that the simulation and
## the tube mesh update can be timed separately: Rust `RopeSimulation` (simulation in one batch with
## `RopeSimulation.advance_all`, as the physics tick steps a world's ropes, then the tubes in one
## batch with `RopeSimulation.refresh_meshes`, as a frame draws a world's ropes; and once more with
## one `advance(dt)` and one `_refresh_mesh()` call per rope, `one by one` in the line), the same Verlet rope in GDScript
## (`gd_rope.gd`, simulation only), in interleaved rounds compared by their medians, and Godot's built-in `SpringBoneSimulator3D` on 1,000 skeletons with
## 32-bone chains (one skeleton update each, the closest built-in). The ratio is GDScript simulation
## time / Rust simulation time. A batch this large is shared with a second thread, so the simulation's
## CPU time over all the process's threads (`EntwineProfiler.process_cpu_usec()`) is printed next to its
## wall time.
##
## It also measures `RopeSimulation` as a game uses it: TREE_ROPES ropes with default settings in the
## tree, stepped by the physics tick and drawn every frame (`tree` in the line: µs per rope per
## physics frame, the frame time with the ropes processing minus that with them idle, in interleaved
## rounds), once hanging at rest (`tree`), once carried around (`moving`: their nodes circle as
## the anchors above do, so every frame draws a new tube; `own callbacks`: the ropes' own callbacks
## and the rope server's step and drawing, EntwineProfiler's CPU time of the main thread (not the
## tube vertices the batch's thread writes), in rounds of their own), and with each rope falling onto a static
## box of its own (`resting on boxes`: timed while they settle; `settled`: after SETTLE_FRAMES ticks,
## most asleep, and the same with `can_sleep` off, awake). A last line plays the seed's game: SEED_ROPES
## default ropes (the seed's rope) hanging from runners' hands and dragging over a floor, timed by
## the main thread's CPU clock with their physics only and with their tubes as well; the seed asks
## under 2 ms of physics for it.

const ROPES := 1000
const POINTS := 32
const ITERATIONS := 8
const ROUNDS := 5
const RUST_FRAMES := 20
const GD_FRAMES := 3
const ONE_FRAMES := 4
const SPRING_FRAMES := 30
const WARM_UP_FRAMES := 120
const TREE_ROPES := 200
const TREE_FRAMES := 60
const SEED_ROPES := 100 # the seed's game: "< 2 ms of physics" for 100 of its ropes
const SETTLE_FRAMES := 2400 # physics ticks the ropes on boxes get to come to rest first (40 s)
const GD_ROPE := preload("res://tests/bench/gd_rope.gd")

var _time := 0.0


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var dt := 1.0 / 60.0
	var rust: Array[RopeSimulation] = []
	var gd: Array[Node3D] = []
	for i in ROPES:
		var r := RopeSimulation.new()
		r.capacity = POINTS
		r.point_count = POINTS
		r.iterations = ITERATIONS
		r.collision_mask = 0
		r.tube_sides = 6
		r.smoothing = 1
		r.position = _home(i) + Vector3(1, 0, 0) # where its anchor starts circling
		root.add_child(r)
		r.set_physics_process(false)
		r.set_process(false)
		rust.append(r)
		var g: Node3D = GD_ROPE.new()
		g.point_count = POINTS
		g.iterations = ITERATIONS
		g.position = _home(i) + Vector3(1, 0, 0)
		root.add_child(g)
		gd.append(g)
	# Interleaved rounds (the machine may be shared): the medians are compared. Each set of ropes
	# keeps its own clock, so its anchors move on smoothly from round to round (no jump while the
	# other set is timed), after a second of warm-up that is not timed.
	var rust_sim: Array[float] = []
	var rust_sim_cpu: Array[float] = []
	var rust_mesh: Array[float] = []
	var gd_sim: Array[float] = []
	var rust_frame := 0
	var frame := 0
	var rust_one: Array[float] = []
	var rust_one_mesh: Array[float] = []
	for f in WARM_UP_FRAMES:
		_move(rust, rust_frame, dt)
		rust_frame += 1
		RopeSimulation._advance_all(rust, dt)
	for round in ROUNDS:
		var sim_us := 0.0
		var sim_cpu_us := 0.0
		var mesh_us := 0.0
		for f in RUST_FRAMES:
			_move(rust, rust_frame, dt)
			rust_frame += 1
			var c0 := EntwineProfiler.process_cpu_usec()
			var t0 := Time.get_ticks_usec()
			RopeSimulation._advance_all(rust, dt)
			var t1 := Time.get_ticks_usec()
			sim_cpu_us += EntwineProfiler.process_cpu_usec() - c0
			RopeSimulation._refresh_meshes(rust)
			var t2 := Time.get_ticks_usec()
			sim_us += t1 - t0
			mesh_us += t2 - t1
			await process_frame
		rust_sim.append(sim_us / RUST_FRAMES / 1000.0)
		rust_sim_cpu.append(sim_cpu_us / RUST_FRAMES / 1000.0)
		rust_mesh.append(mesh_us / RUST_FRAMES / 1000.0)
		var one_us := 0.0
		var one_mesh_us := 0.0
		for f in ONE_FRAMES:
			_move(rust, rust_frame, dt)
			rust_frame += 1
			var t0 := Time.get_ticks_usec()
			for r in rust:
				r._advance(dt)
			var t1 := Time.get_ticks_usec()
			for r in rust:
				r._refresh_mesh()
			one_us += t1 - t0
			one_mesh_us += Time.get_ticks_usec() - t1
			await process_frame
		rust_one.append(one_us / ONE_FRAMES / 1000.0)
		rust_one_mesh.append(one_mesh_us / ONE_FRAMES / 1000.0)
		var gd_us := 0.0
		for f in GD_FRAMES:
			_move(gd, frame, dt)
			frame += 1
			var t0 := Time.get_ticks_usec()
			for g in gd:
				g.advance(dt)
			gd_us += Time.get_ticks_usec() - t0
			await process_frame
		gd_sim.append(gd_us / GD_FRAMES / 1000.0)
	var stretch := 0.0
	var substeps := 0.0
	for r in rust:
		stretch = maxf(stretch, r.get_max_stretch())
		substeps += r.get_substeps_in_use()
	substeps /= rust.size()
	for r in rust:
		r.free()
	for g in gd:
		g.free()
	var rs := median(rust_sim)
	var sim_cpu := "n/a" if EntwineProfiler.process_cpu_usec() < 0.0 else "%.2f" % median(rust_sim_cpu)
	var rm := median(rust_mesh)
	var gs := median(gd_sim)

	# --- default ropes in the tree: at rest, carried around, resting on boxes ---
	var tree_r: Array = await _in_tree(false)
	var moving_r: Array = await _in_tree(true)
	var boxed_r: Array = await _in_tree(false, true)
	var asleep_r: Array = await _in_tree(false, true, SETTLE_FRAMES)
	var awake_r: Array = await _in_tree(false, true, SETTLE_FRAMES, false)
	var seed_r: Array = await _seed_game()

	# --- SpringBoneSimulator3D on 32-bone chains ---
	var spring_r: Array = await _spring_bones()
	var spring_ms: float = spring_r[0]
	var spring := "n/a" if spring_ms < 0.0 else "%.2f ms/frame (rounds %.2f-%.2f)" % spring_r
	var vs_spring := "n/a" if spring_ms < 0.0 else "%.1fx" % (spring_ms / maxf(rs, 0.001))

	print("bench rope: %d ropes x %d points x %d iterations per frame; rust sim %.2f ms/frame (rounds %.2f-%.2f; CPU of all threads %s ms/frame; %.2f substeps in use on average; one by one %.2f ms/frame), mesh update %.2f ms/frame (rounds %.2f-%.2f; one by one %.2f ms/frame; max stretch %.1f %%); gdscript sim %.2f ms/frame; SpringBoneSimulator3D %d chains of %d bones %s vs_springbone=%s; tree %d default ropes %.1f us/rope per physics frame (rounds %.1f-%.1f), moving %.1f us/rope per physics frame (rounds %.1f-%.1f; own callbacks %.1f us/rope, rounds %.1f-%.1f) ratio=%.1fx" % [
		ROPES, POINTS, ITERATIONS, rs, rust_sim.min(), rust_sim.max(), sim_cpu, substeps, median(rust_one), rm,
		rust_mesh.min(), rust_mesh.max(), median(rust_one_mesh), stretch * 100.0, gs, ROPES, POINTS, spring, vs_spring,
		TREE_ROPES, tree_r[0], tree_r[1], tree_r[2], moving_r[0], moving_r[1], moving_r[2],
		moving_r[4][0], moving_r[4][1], moving_r[4][2], gs / maxf(rs, 0.001)])
	print("bench rope: tree %d default ropes resting on boxes %.1f us/rope per physics frame (rounds %.1f-%.1f); settled for %d s: %.1f us/rope (rounds %.1f-%.1f; %d of them asleep), with can_sleep off %.1f us/rope (rounds %.1f-%.1f)" % [
		TREE_ROPES, boxed_r[0], boxed_r[1], boxed_r[2], SETTLE_FRAMES / 60, asleep_r[0], asleep_r[1], asleep_r[2],
		asleep_r[3], awake_r[0], awake_r[1], awake_r[2]])
	print("bench rope: the seed's game, %d default ropes (12 points, 3.3 m, 4 iterations) dragged over a floor from a hand 1 m up running at 6 m/s, main-thread CPU per frame for all: physics %.2f ms (rounds %.2f-%.2f), physics and tubes %.2f ms (rounds %.2f-%.2f); %.0f %% of the points on the floor; the seed asks under 2 ms of physics" % [
		SEED_ROPES, seed_r[0], seed_r[1], seed_r[2], seed_r[3], seed_r[4], seed_r[5], seed_r[6] * 100.0])
	quit(0)



func _home(i: int) -> Vector3:
	return Vector3((i % 40) * 1.5, 12.0, (i / 40) * 1.5)


## Moves every rope's anchor around a small circle (1 m radius, about 6 m/s).
func _move(nodes: Array, f: int, dt: float) -> void:
	var t := f * dt
	var offset := Vector3(cos(t * 6.0), 0.0, sin(t * 6.0))
	for i in nodes.size():
		nodes[i].position = _home(i) + offset


## Returns the cost of SpringBoneSimulator3D per frame (ms) on ROPES skeletons with POINTS-bone chains
## and the spread of the rounds, [median, lowest, highest]: frames run unthrottled (headless Godot
## otherwise pads each to about 6.9 ms, which hid the simulators' cost), and in each of ROUNDS
## interleaved rounds the frame time with the simulators active minus that with them inactive (the
## bare skeletons). [-1, -1, -1] when unavailable.
func _spring_bones() -> Array:
	if not ClassDB.class_exists("SpringBoneSimulator3D"):
		return [-1.0, -1.0, -1.0]
	unthrottle()
	var skeletons: Array[Skeleton3D] = []
	for i in ROPES:
		var s := Skeleton3D.new()
		for b in POINTS:
			var idx := s.add_bone("b%d" % b)
			if b > 0:
				s.set_bone_parent(idx, b - 1)
				s.set_bone_rest(idx, Transform3D(Basis(), Vector3(0, -0.3, 0)))
		s.reset_bone_poses()
		s.position = _home(i)
		root.add_child(s)
		skeletons.append(s)
	var sims: Array[Node] = []
	for s in skeletons:
		var sim: Node = ClassDB.instantiate("SpringBoneSimulator3D")
		sim.set("setting_count", 1)
		sim.call("set_root_bone", 0, 0)
		sim.call("set_end_bone", 0, POINTS - 1)
		s.add_child(sim)
		sims.append(sim)
	var costs: Array[float] = []
	for r in ROUNDS:
		for sim in sims:
			sim.set("active", false)
		var bare := await _frame_ms(skeletons)
		for sim in sims:
			sim.set("active", true)
		var with_sim := await _frame_ms(skeletons)
		costs.append(maxf(with_sim - bare, 0.0))
	for s in skeletons:
		s.free()
	return [median(costs), costs.min(), costs.max()]


## Returns the cost of one default RopeSimulation in the tree per physics frame (µs), [median, lowest,
## highest] over ROUNDS interleaved rounds, and how many of the ropes slept at the end (with [param
## boxes], each rope rests on a static box of its own, 1 m wide, whose top is 3 m under its node, so
## every rope's collider query finds a shape; [param settle] more ticks to come to rest first, with
## [param can_sleep] set on every rope; when moving, the ropes' own callbacks are timed in rounds of
## their own too, returned last as [median, lowest, highest] µs per rope per frame, else -1s): each
## engine iteration runs exactly one physics tick of 1/60 s and one process frame (a fast tick rate with one step per frame, time scaled back to 1/60 s
## per tick), unthrottled; a round times TREE_FRAMES iterations with the ropes idle (physics and
## process off) and as many with them on, and the difference is shared among the ropes. With
## [param moving] the ropes' nodes are carried around a 1 m circle (`_move`, one step per iteration,
## in the idle iterations too, so moving them costs the same both ways), warmed up for a second
## first; otherwise they hang at rest.
func _in_tree(moving: bool, boxes := false, settle := 0, can_sleep := true) -> Array:
	var was := tick_every_frame()
	var ropes: Array[RopeSimulation] = []
	var bodies: Array[Node] = []
	for i in TREE_ROPES:
		var r := RopeSimulation.new()
		r.position = _home(i)
		r.can_sleep = can_sleep
		root.add_child(r)
		ropes.append(r)
		if boxes:
			var body := StaticBody3D.new()
			var shape := CollisionShape3D.new()
			var box := BoxShape3D.new()
			box.size = Vector3.ONE
			shape.shape = box
			body.add_child(shape)
			body.position = _home(i) + Vector3(0, -3.5, 0)
			root.add_child(body)
			bodies.append(body)
	var clock := [0] # the circle's frame count, carried on from round to round
	var carried: Array = []
	if moving:
		carried = ropes
	for f in (WARM_UP_FRAMES if moving else 30 + settle):
		_carry(carried, clock)
		await process_frame
	var costs: Array[float] = []
	for round in ROUNDS:
		for r in ropes:
			r.set_physics_process(false)
			r.set_process(false)
		var bare := await _iteration_us(carried, clock)
		for r in ropes:
			r.set_physics_process(true)
			r.set_process(true)
		var with_ropes := await _iteration_us(carried, clock)
		costs.append((with_ropes - bare) / TREE_ROPES)
	# Carried around, the ropes' own callbacks are timed too (in rounds of their own: the timing's
	# clock reads would add to the frames above), µs per rope per physics frame.
	var own := [-1.0, -1.0, -1.0]
	if moving:
		var carry := func(frames: int) -> void:
			for f in frames:
				_carry(carried, clock)
				await process_frame
		var rounds: Array = (await own_rounds(["RopeSimulation"], ROUNDS, TREE_FRAMES, carry))["RopeSimulation"]
		own = [median(rounds) / TREE_ROPES, rounds.min() / TREE_ROPES, rounds.max() / TREE_ROPES]
	var asleep := 0
	for r in ropes:
		asleep += int(r.sleeping)
	for r in ropes:
		r.free()
	for b in bodies:
		b.free()
	restore_ticks(was)
	return [median(costs), costs.min(), costs.max(), asleep, own]


## The seed's game (a runner with a rope in its hand, the rope's end dragging along the ground):
## SEED_ROPES ropes with default settings (which are the seed's: 12 points of 0.3 m, 4 iterations),
## each hanging from a node 1 m above a floor (a static box on the ropes' collision layer, as a level
## has) and carried around at 6 m/s (`_seed_runner`), stepped by the physics tick and drawn every
## frame. In each of ROUNDS interleaved rounds, the main thread's CPU time per frame with the ropes
## idle, with their physics only, and with physics and drawing. Returns [physics ms median, lowest,
## highest, physics and tubes ms median, lowest, highest, share of the points resting on the floor].
func _seed_game() -> Array:
	var was := tick_every_frame()
	var ropes: Array[RopeSimulation] = []
	var floor_body := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(120, 1, 120)
	shape.shape = box
	floor_body.add_child(shape)
	floor_body.position = Vector3(18, -0.5, 18)
	root.add_child(floor_body)
	for i in SEED_ROPES:
		var r := RopeSimulation.new()
		r.position = _seed_runner(i, 0.0)
		root.add_child(r)
		ropes.append(r)
	# While the ropes are idle, stand-ins (plain nodes) are carried instead, so that every frame
	# moves as many nodes and a rope's anchor never jumps when its physics resumes: the ropes keep a
	# clock of their own, which runs only while they step.
	var stand_ins: Array[Node3D] = []
	for i in SEED_ROPES:
		var n := Node3D.new()
		root.add_child(n)
		stand_ins.append(n)
	var clocks := [0, 0] # the ropes', the stand-ins'
	var carry := func(nodes: Array, which: int) -> void:
		var t: float = clocks[which] / 60.0
		for i in nodes.size():
			nodes[i].position = _seed_runner(i, t)
		clocks[which] += 1
	for f in WARM_UP_FRAMES:
		carry.call(ropes, 0)
		await process_frame
	var physics: Array[float] = []
	var both: Array[float] = []
	for round in ROUNDS:
		var cpu := []
		for mode in 3:
			for r in ropes:
				r.set_physics_process(mode >= 1)
				r.set_process(mode == 2)
			var nodes: Array = stand_ins if mode == 0 else ropes
			for f in 5:
				carry.call(nodes, int(mode == 0))
				await process_frame
			var c0 := thread_cpu_usec()
			for f in TREE_FRAMES:
				carry.call(nodes, int(mode == 0))
				await process_frame
			cpu.append((thread_cpu_usec() - c0) / TREE_FRAMES / 1000.0)
		physics.append(cpu[1] - cpu[0])
		both.append(cpu[2] - cpu[0])
	var on_floor := 0
	var points := 0
	for r in ropes:
		for p in r.get_points():
			points += 1
			on_floor += int(p.y < r.radius + 0.02)
	for r in ropes:
		r.free()
	for n in stand_ins:
		n.free()
	floor_body.free()
	restore_ticks(was)
	return [median(physics), physics.min(), physics.max(), median(both), both.min(), both.max(),
		float(on_floor) / maxf(points, 1)]


## Where the hand of runner [param i] of the seed's game is at [param t] seconds: 1 m up, running
## at 6 m/s around a circle of 15 m (wide enough that the rope trails behind the hand and drags on
## the floor, where a tight circle would whirl it up), each runner on its own circle and phase.
func _seed_runner(i: int, t: float) -> Vector3:
	var angle := t * 0.4 + i * 0.7
	return Vector3((i % 10) * 4.0 + 15.0 * cos(angle), 1.0, (i / 10) * 4.0 + 15.0 * sin(angle))


## Returns the mean wall time of one engine iteration (µs) over TREE_FRAMES, after 5 untimed ones,
## carrying [param nodes] one step further around their circle before each.
func _iteration_us(nodes: Array, clock: Array) -> float:
	for f in 5:
		_carry(nodes, clock)
		await process_frame
	var t0 := Time.get_ticks_usec()
	for f in TREE_FRAMES:
		_carry(nodes, clock)
		await process_frame
	return float(Time.get_ticks_usec() - t0) / TREE_FRAMES


## Moves [param nodes] one step of 1/60 s around their circle (`_move`) and counts it in [param
## clock] (an array of one frame count, shared by the rounds); nothing when there are none.
func _carry(nodes: Array, clock: Array) -> void:
	if nodes.is_empty():
		return
	_move(nodes, clock[0], 1.0 / 60.0)
	clock[0] += 1


func _frame_ms(skeletons: Array[Skeleton3D]) -> float:
	for f in 5:
		await process_frame
	var total := 0.0
	for f in SPRING_FRAMES:
		_move(skeletons, f, 1.0 / 60.0)
		var t0 := Time.get_ticks_usec()
		await process_frame
		total += Time.get_ticks_usec() - t0
	return total / SPRING_FRAMES / 1000.0
