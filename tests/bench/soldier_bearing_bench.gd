extends EntwineBench
## `cargo xtask bench soldier_bearing`: a soldier's eyes-right look per frame, Rust `EntwineSoldierBearing`
## vs the same look in GDScript (`gd_soldier_bearing.gd`).
##
## CHARACTERS test characters each get one look modifier whose target sweeps from their right to
## their left and back, so the look keeps turning (rate-limited) every frame. Every frame each
## skeleton's hips sway a little, so every skeleton updates every frame in every configuration.
## The main thread's CPU time per frame (EntwineProfiler's thread clock, which other processes on a
## shared machine do not inflate; wall time printed next to it) is measured with no modifier, with
## an empty modifier (the engine's own cost of running any modifier: backing up and restoring the
## pose), with Rust `EntwineSoldierBearing`, with it saluting as well (its EntwineLimbIK raising the right arm,
## solved in the bearing's own pass: the look and the salute together), with it looking while its salute's EntwineLimbIK is made but
## lowered (what a squad's soldiers do between salutes), and with the GDScript baseline (the look
## only), in
## interleaved rounds; medians, the rounds' spread printed. The cost of a look is the frame time
## above the empty-modifier frame divided by the characters; it includes the engine calls every
## look must make (reading the poses, writing three bone rotations). The ratio is GDScript cost /
## Rust cost, for the look. A second line gives the modifiers' own passes (EntwineProfiler's own
## timing, the median and spread of OWN_ROUNDS more rounds of each Rust configuration): what is
## left is the engine's work. A third line gives what the skeleton charges for the bones a saluting
## soldier moves, whoever moves them: a modifier that only writes fixed rotations to those six bones
## (the chest, neck and head the look turns, the arm the salute raises; `gd_bone_pose.gd`) against
## one that only reads them, in the same rounds (the median of each round's own difference). Their
## scripts' calls are alike, so the difference is the skeleton's own work once the bones have moved (recomputing the bones below them), the
## least any bearing that moves them pays on top of its own pass.

const CHARACTERS := 100
const FRAMES := 120
const ROUNDS := 5
const OWN_ROUNDS := 5
const GD_BEARING := preload("res://tests/bench/gd_soldier_bearing.gd")
const BONE_POSE := preload("res://tests/bench/gd_bone_pose.gd")
## The bones a saluting soldier moves on the test character (the bearing's look and its salute).
const SALUTE_BONES := ["Chest", "Neck", "Head", "RightUpperArm", "RightLowerArm", "RightHand"]

var _characters: Array[TestCharacter] = []
var _modifiers: Array[SkeletonModifier3D] = []
var _time := 0.0
var _hips := -1
var _empty: GDScript


func _initialize() -> void:
	unthrottle()
	_run.call_deferred()


func _run() -> void:
	var scene := load("res://characters/test_character.tscn") as PackedScene
	for i in CHARACTERS:
		var c := scene.instantiate() as TestCharacter
		c.position = Vector3((i % 10) * 2.0, 0, (i / 10) * 2.0)
		c.frozen = true
		root.add_child(c)
		c.animation_tree.active = false
		c.set_physics_process(false)
		_characters.append(c)
	_hips = _characters[0].get_skeleton().find_bone("Hips")
	_empty = GDScript.new()
	_empty.source_code = "extends SkeletonModifier3D\n"
	_empty.reload()
	var kinds := ["none", "empty", "rust", "rust_salute", "rust_lowered", "gdscript", "bones_read", "bones_write"]
	var cpu := {}
	var wall := {}
	for kind in kinds:
		cpu[kind] = []
		wall[kind] = []
	for r in ROUNDS:
		for kind in kinds:
			_install(kind)
			await _frames(10)  # warm up
			var start := Time.get_ticks_usec()
			var c0 := thread_cpu_usec()
			await _frames(FRAMES)
			cpu[kind].append((thread_cpu_usec() - c0) / FRAMES)
			wall[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
	# More rounds with EntwineProfiler's own timing on (not in the rounds above: it adds two clock
	# reads per pass): how much of a soldier's cost is the modifiers' own passes.
	var own := {}
	for kind in ["rust", "rust_salute"]:
		_install(kind)
		await _frames(10)
		own[kind] = await own_rounds(["EntwineSoldierBearing", "EntwineLimbIK"], OWN_ROUNDS, FRAMES, _frames)
	_install("none")
	# Without a thread clock (-1), wall time.
	var samples: Dictionary = cpu if cpu["none"][0] >= 0.0 else wall
	var above := func(of: Dictionary, kind: String) -> float:
		return (median(of[kind]) - median(of["empty"])) / CHARACTERS
	var spread := func(kind: String) -> String:
		var empty: float = median(samples["empty"])
		return "rounds %.2f-%.2f" % [(samples[kind].min() - empty) / CHARACTERS,
			(samples[kind].max() - empty) / CHARACTERS]
	var none: float = median(samples["none"])
	var rust_us := maxf(above.call(samples, "rust"), 0.001)
	var gd_us := maxf(above.call(samples, "gdscript"), 0.001)
	print("bench soldier_bearing: %d soldiers turning their heads every frame, main-thread CPU above an empty modifier: rust %.2f µs/soldier (%s), saluting as well %.2f µs/soldier (%s), salute made but lowered %.2f µs/soldier (%s), gdscript %.2f µs/soldier (%s); the empty modifier costs %.2f µs/soldier, frame without modifiers %.2f ms; wall time: rust %.2f, saluting %.2f, gdscript %.2f, empty modifier %.2f µs/soldier%s ratio=%.1fx" % [
		CHARACTERS, rust_us, spread.call("rust"), above.call(samples, "rust_salute"),
		spread.call("rust_salute"), above.call(samples, "rust_lowered"), spread.call("rust_lowered"),
		gd_us, spread.call("gdscript"),
		(median(samples["empty"]) - none) / CHARACTERS, none / 1000.0,
		above.call(wall, "rust"), above.call(wall, "rust_salute"), above.call(wall, "gdscript"),
		(median(wall["empty"]) - median(wall["none"])) / CHARACTERS, outlier_note(samples),
		gd_us / rust_us])
	if own["rust"]["EntwineSoldierBearing"][0] >= 0.0:
		print("bench soldier_bearing: own passes (EntwineProfiler._get_own_time_usec, thread CPU per soldier per frame, medians of %d rounds): EntwineSoldierBearing %s looking; saluting as well, EntwineSoldierBearing %s with its salute's EntwineLimbIK solved in its pass (the LimbIKs' own passes %s); the rest of each figure above is the engine's work around them" % [
			OWN_ROUNDS, own_line(own["rust"]["EntwineSoldierBearing"], CHARACTERS),
			own_line(own["rust_salute"]["EntwineSoldierBearing"], CHARACTERS),
			own_line(own["rust_salute"]["EntwineLimbIK"], CHARACTERS)])
	var moved := paired(samples["bones_write"], samples["bones_read"], CHARACTERS)
	print("bench soldier_bearing: the skeleton's own work once a modifier has moved the six bones a saluting soldier moves (%s), each round's difference: %.2f µs/soldier (rounds %.2f-%.2f; a modifier writing their rotations %.2f µs/soldier above the empty modifier, %s; one reading them %.2f, %s)" % [
		", ".join(SALUTE_BONES), moved[0], moved[1], moved[2], above.call(samples, "bones_write"), spread.call("bones_write"),
		above.call(samples, "bones_read"), spread.call("bones_read")])
	for c in _characters:
		c.free()
	quit(0)


func _install(kind: String) -> void:
	_modifiers.clear()
	for c in _characters:
		var skeleton := c.get_skeleton()
		for child in skeleton.get_children():
			if child is SkeletonModifier3D:
				child.free()
		if kind == "none":
			continue
		var m: SkeletonModifier3D
		match kind:
			"empty":
				m = _empty.new()
			"bones_read", "bones_write":
				var pose := BONE_POSE.on_bones(skeleton, SALUTE_BONES, kind == "bones_write")
				if pose == null:
					quit(1)
					return
				skeleton.add_child(pose)
				continue
			"rust", "rust_salute", "rust_lowered":
				m = EntwineSoldierBearing.new()
			_:
				m = GD_BEARING.new()
		m.set("looking", true)
		m.set("turn_speed", deg_to_rad(720.0))
		skeleton.add_child(m)
		if kind == "rust_salute" or kind == "rust_lowered":
			(m as EntwineSoldierBearing).create_salute_ik()
			m.set("saluting", kind == "rust_salute")
		_modifiers.append(m)


func _frames(n: int) -> void:
	for f in n:
		_time += 0.016
		for i in _characters.size():
			var c := _characters[i]
			c.get_skeleton().set_bone_pose_rotation(_hips, Quaternion(Vector3.UP, 0.05 * sin(_time * 4.0)))
			if i < _modifiers.size():
				var side := 3.0 * sin(_time * 2.0 + i)
				_modifiers[i].set("look_target", c.global_position + Vector3(side, 1.6, -1.0))
		await process_frame
