extends EntwineBench
## `cargo xtask bench env_touch`: 200 test characters walking along walls, each with a wall-touch node:
## the Rust EnvironmentInteractionStateMachine vs the same state machine in GDScript (gd_env_touch.gd).
##
## Each node measures its own cost per physics frame in three parts: the logic (the state machine and
## the closest points on the colliders), the physics queries (the detection shape query and the
## normal ray: identical engine calls in both) and the engine glue (reading transforms, bones and
## velocity, caching shapes, writing the IK). The printed ratio compares the logic; the whole node's
## cost in the physics tick is reported too. Timers: Rust `Instant`, GDScript `Time.get_ticks_usec()`
## (its truncation to whole µs is unbiased over many frames).
## The characters' whole physics tick (movement + nodes) is also timed, against a run without nodes.
## Modes run in interleaved rounds; figures are medians over rounds.

const CHARACTERS := 200
const LANES := 20
const FRAMES := 300
const WARMUP := 10
const ROUNDS := 3
const WALL_LAYER := 1 << 4
const GD_TOUCH := preload("res://tests/bench/gd_env_touch.gd")

var _characters: Array[TestCharacter] = []
var _starts: Array[Vector3] = []
var _nodes: Array[Node] = []
var _tick_start := 0
var _tick_usec := 0.0
var _ticks := 0


## Runs first in every physics frame.
class TickStart extends Node:
	var bench: Object
	func _physics_process(_delta: float) -> void:
		bench.set("_tick_start", Time.get_ticks_usec())


## Runs last in every physics frame.
class TickEnd extends Node:
	var bench: Object
	func _physics_process(_delta: float) -> void:
		bench.set("_tick_usec", float(bench.get("_tick_usec")) + float(Time.get_ticks_usec() - int(bench.get("_tick_start"))))
		bench.set("_ticks", int(bench.get("_ticks")) + 1)


func _initialize() -> void:
	_run.call_deferred()


func _run() -> void:
	var first := TickStart.new()
	first.bench = self
	first.process_physics_priority = -1000000
	root.add_child(first)
	var last := TickEnd.new()
	last.bench = self
	last.process_physics_priority = 1000000
	root.add_child(last)
	var floor_body := StaticBody3D.new()
	var floor_shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(LANES * 2.0 + 10.0, 1.0, 400.0)
	floor_shape.shape = box
	floor_shape.position = Vector3(LANES - 1.0, -0.5, -150.0)
	floor_body.add_child(floor_shape)
	root.add_child(floor_body)
	var scene := load("res://characters/test_character.tscn") as PackedScene
	for i in CHARACTERS:
		var lane := i % LANES
		var row := i / LANES
		var start := Vector3(lane * 2.0, 0.0, -row * 30.0)
		var c := scene.instantiate() as TestCharacter
		c.position = start
		c.move_input = Vector3(0, 0, -1)
		root.add_child(c)
		c.animation_tree.active = false
		_characters.append(c)
		_starts.append(start)
		# A 28 m wall on alternating sides, its face 0.45 m from the walking line.
		var side := -1.0 if i % 2 == 0 else 1.0
		var wall := StaticBody3D.new()
		wall.collision_layer = WALL_LAYER
		wall.collision_mask = 0
		var shape := CollisionShape3D.new()
		var wall_box := BoxShape3D.new()
		wall_box.size = Vector3(0.2, 3.0, 28.0)
		shape.shape = wall_box
		wall.add_child(shape)
		wall.position = start + Vector3(side * 0.55, 1.5, -13.0)
		root.add_child(wall)
	var samples := {"none": [], "rust": [], "gdscript": [], "queries": []}
	var logic := {"rust": [], "gdscript": [], "queries": []}
	var query := {"rust": [], "gdscript": [], "queries": []}
	var engine := {"rust": [], "gdscript": [], "queries": []}
	for r in ROUNDS:
		for kind in ["none", "rust", "gdscript", "queries"]:
			_install(kind)
			await _frames(WARMUP)
			for n in _nodes:
				_reset_profile(n)
			_tick_usec = 0.0
			_ticks = 0
			await _frames(FRAMES)
			samples[kind].append(_tick_usec / maxf(_ticks, 1) / CHARACTERS)
			if kind != "none":
				var l := 0.0
				var q := 0.0
				var e := 0.0
				for n in _nodes:
					var p := _profile(n)
					l += p[0]
					q += p[1]
					e += p[2]
				logic[kind].append(l / _nodes.size())
				query[kind].append(q / _nodes.size())
				engine[kind].append(e / _nodes.size())
	_install("none")
	var none: float = median(samples["none"])
	var rust_total := median(samples["rust"]) - none
	var gd_total := median(samples["gdscript"]) - none
	var rust_logic: float = median(logic["rust"])
	var gd_logic: float = median(logic["gdscript"])
	print("bench env_touch: %d characters walking along walls, per character per physics frame: state machine + closest points rust %.3f µs, gdscript %.2f µs; engine reads/IK writes rust %.2f µs, gdscript %.2f µs; physics queries rust %.2f µs, gdscript %.2f µs (one shape query + one ray alone %.2f µs); whole node in the physics tick rust %.2f µs, gdscript %.2f µs (ratio %.1fx; tick without nodes %.2f µs); %d touches ratio=%.1fx" % [
		CHARACTERS, rust_logic, gd_logic, median(engine["rust"]), median(engine["gdscript"]),
		median(query["rust"]), median(query["gdscript"]), median(query["queries"]),
		rust_total, gd_total, gd_total / maxf(rust_total, 0.001), none, _touch_count, gd_logic / maxf(rust_logic, 0.001)])
	for c in _characters:
		c.free()
	quit(0)


var _touch_count := 0


func _install(kind: String) -> void:
	for n in _nodes:
		n.free()
	_nodes.clear()
	for i in _characters.size():
		var c := _characters[i]
		for child in c.get_skeleton().get_children():
			if child is EntwineLimbIK:
				child.free()
		c.global_position = _starts[i]
		c.velocity = Vector3.ZERO
		if kind == "none":
			continue
		var node: Node
		if kind == "rust":
			var n := EnvironmentInteractionStateMachine.new()
			n.interactable_mask = WALL_LAYER
			n.move_input = Vector3(0, 0, -1)
			n.touch_started.connect(func(_s: int, _p: Vector3, _n: Vector3) -> void: _touch_count += 1)
			node = n
		else:
			var g: Node3D = GD_TOUCH.new()
			g.set("interactable_mask", WALL_LAYER)
			g.set("move_input", Vector3(0, 0, -1))
			g.set("queries_only", kind == "queries")
			node = g
		c.add_child(node)
		_nodes.append(node)


func _reset_profile(n: Node) -> void:
	if n is EnvironmentInteractionStateMachine:
		(n as EnvironmentInteractionStateMachine)._reset_profile()
	else:
		n.set("profile_query_usec", 0.0)
		n.set("profile_logic_usec", 0.0)
		n.set("profile_total_usec", 0.0)
		n.set("profile_frames", 0)


## Returns [logic, queries, engine] in µs per frame.
func _profile(n: Node) -> Array:
	if n is EnvironmentInteractionStateMachine:
		var d := (n as EnvironmentInteractionStateMachine)._get_profile()
		return [d["logic"], d["queries"], d["engine"]]
	var frames := maxi(int(n.get("profile_frames")), 1)
	var total := float(n.get("profile_total_usec"))
	var q := float(n.get("profile_query_usec"))
	var l := float(n.get("profile_logic_usec"))
	return [l / frames, q / frames, (total - q - l) / frames]


func _frames(n: int) -> void:
	for f in n:
		await physics_frame

