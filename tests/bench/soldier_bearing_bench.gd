extends EntwineBench
## `cargo xtask bench soldier_bearing`: a soldier's eyes-right look per frame, Rust `SoldierBearing`
## vs the same look in GDScript (`gd_soldier_bearing.gd`).
##
## CHARACTERS test characters each get one look modifier whose target sweeps from their right to
## their left and back, so the look keeps turning (rate-limited) every frame. Every frame each
## skeleton's hips sway a little, so every skeleton updates every frame in every configuration.
## Frame time is measured with no modifier, with an empty modifier (the engine's own cost of
## running any modifier: backing up and restoring the pose), with Rust `SoldierBearing`, and with
## the GDScript baseline, in interleaved rounds. The cost of a look is the frame time above the
## empty-modifier frame divided by the characters; it includes the engine calls every look must
## make (reading the poses, writing three bone rotations). The ratio is GDScript cost / Rust cost.

const CHARACTERS := 100
const FRAMES := 120
const ROUNDS := 5
const GD_BEARING := preload("res://tests/bench/gd_soldier_bearing.gd")

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
	var samples := {"none": [], "empty": [], "rust": [], "gdscript": []}
	for r in ROUNDS:
		for kind in ["none", "empty", "rust", "gdscript"]:
			_install(kind)
			await _frames(10)  # warm up
			var start := Time.get_ticks_usec()
			await _frames(FRAMES)
			samples[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
	_install("none")
	var none: float = median(samples["none"])
	var empty: float = median(samples["empty"])
	var rust_us := maxf((median(samples["rust"]) - empty) / CHARACTERS, 0.001)
	var gd_us := maxf((median(samples["gdscript"]) - empty) / CHARACTERS, 0.001)
	print("bench soldier_bearing: %d soldiers turning their heads every frame: rust %.2f µs/soldier, gdscript %.2f µs/soldier above an empty modifier (which costs %.2f µs/soldier), frame without modifiers %.2f ms%s ratio=%.1fx" % [
		CHARACTERS, rust_us, gd_us, (empty - none) / CHARACTERS, none / 1000.0,
		outlier_note(samples), gd_us / rust_us])
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
			"rust":
				m = SoldierBearing.new()
			_:
				m = GD_BEARING.new()
		m.set("looking", true)
		m.set("turn_speed", 720.0)
		skeleton.add_child(m)
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
