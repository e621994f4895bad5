extends EntwineBench
## `cargo xtask bench rope_bone_chain`: EntwineRopeBoneChain's cost per chain per frame, Rust vs the same
## algorithm in GDScript (`gd_rope_bone_chain.gd`), by the main thread's CPU time (wall time next to it).
##
## CHAINS skeletons, each with a BONES-bone chain, follow their own swinging RopeSimulation of POINTS
## points (so bone count ≠ point count is resampled). Frame time is measured with the ropes alone, with
## Rust `EntwineRopeBoneChain`s and with the GDScript baseline, in interleaved rounds; the cost of a chain is the
## frame time above the ropes-only frame divided by the chains. It includes the engine calls every
## modifier must make (reading the rope's points and the root's pose, writing each bone's pose) and the
## skeleton update they cause. The ratio is GDScript cost / Rust cost. For scale, "engine floor" is a
## GDScript modifier that only writes each bone's rest position and rotation (no rope, no math): what
## any modifier posing the chain costs in engine calls and the skeleton update.

const CHAINS := 100
const BONES := 10
const POINTS := 12
const FRAMES := 120
const ROUNDS := 5
const GD_CHAIN := preload("res://tests/bench/gd_rope_bone_chain.gd")
const ChainMesh := preload("res://demo/rope_chain_mesh.gd")
const FLOOR := preload("res://tests/bench/gd_pose_writer.gd")

var _anchors: Array[Node3D] = []
var _ropes: Array[RopeSimulation] = []
var _skeletons: Array[Skeleton3D] = []
var _modifiers: Array[Node] = []
var _time := 0.0


func _initialize() -> void:
	unthrottle()
	_run.call_deferred()


func _run() -> void:
	for i in CHAINS:
		var anchor := Node3D.new()
		anchor.position = Vector3((i % 10) * 2.0, 2.0, (i / 10) * 2.0)
		root.add_child(anchor)
		_anchors.append(anchor)
		var rope := RopeSimulation.new()
		rope.collision_mask = 0
		rope.tube_enabled = false
		rope.segment_length = 0.1
		rope.point_count = POINTS
		root.add_child(rope)
		rope.anchor_node = rope.get_path_to(anchor)
		_ropes.append(rope)
		var skeleton := Skeleton3D.new()
		anchor.add_child(skeleton)
		ChainMesh.add_chain(skeleton, "Bone", BONES, -1, Vector3.ZERO, Vector3.DOWN, 0.1)
		_skeletons.append(skeleton)
	var wall := {"none": [], "rust": [], "gdscript": [], "floor": []}
	var cpu := {"none": [], "rust": [], "gdscript": [], "floor": []}
	for r in ROUNDS:
		for kind in ["none", "rust", "gdscript", "floor"]:
			_install(kind)
			await _frames(10) # warm up
			var start := Time.get_ticks_usec()
			var c0 := thread_cpu_usec()
			await _frames(FRAMES)
			cpu[kind].append((thread_cpu_usec() - c0) / FRAMES)
			wall[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
	_install("none")
	# The main thread's CPU time (the modifiers and ropes run on it), wall time next to it.
	var samples: Dictionary = cpu if cpu["none"][0] >= 0.0 else wall
	var none: float = median(samples["none"])
	var wall_rust := (median(wall["rust"]) - median(wall["none"])) / CHAINS
	var wall_gd := (median(wall["gdscript"]) - median(wall["none"])) / CHAINS
	var rust_us := maxf((median(samples["rust"]) - none) / CHAINS, 0.001)
	var gd_us := maxf((median(samples["gdscript"]) - none) / CHAINS, 0.001)
	var floor_us := maxf((median(samples["floor"]) - none) / CHAINS, 0.0)
	print("bench rope_bone_chain: %d chains of %d bones on %d-point ropes, main-thread CPU: rust %.2f µs/chain/frame (%.3f ms for all), gdscript %.2f µs/chain/frame (%.3f ms), engine floor %.2f µs/chain/frame, frame with the ropes alone %.2f ms; wall time: rust %.2f, gdscript %.2f µs/chain/frame%s ratio=%.1fx" % [
		CHAINS, BONES, POINTS, rust_us, rust_us * CHAINS / 1000.0, gd_us, gd_us * CHAINS / 1000.0,
		floor_us, none / 1000.0, wall_rust, wall_gd, outlier_note(samples), gd_us / rust_us])
	quit(0)


func _install(kind: String) -> void:
	for m in _modifiers:
		m.free()
	_modifiers.clear()
	if kind == "none":
		return
	for i in CHAINS:
		var skeleton := _skeletons[i]
		if kind == "floor":
			var writer: SkeletonModifier3D = FLOOR.new()
			skeleton.add_child(writer)
			_modifiers.append(writer)
		elif kind == "rust":
			var chain := EntwineRopeBoneChain.new()
			skeleton.add_child(chain)
			chain.rope = _ropes[i]
			chain.root_bone = "Bone1"
			chain.tip_bone = "Bone%d" % BONES
			_modifiers.append(chain)
		else:
			var chain: SkeletonModifier3D = GD_CHAIN.new()
			skeleton.add_child(chain)
			chain.rope = _ropes[i]
			chain.setup(skeleton, "Bone1", "Bone%d" % BONES)
			_modifiers.append(chain)


## Waits [param n] frames, swinging every anchor (so every rope and chain moves every frame).
func _frames(n: int) -> void:
	for f in n:
		_time += 1.0 / 60.0
		for i in _anchors.size():
			var phase := i * 0.37
			_anchors[i].position.x = (i % 10) * 2.0 + 0.4 * sin(_time * 3.0 + phase)
		await process_frame
