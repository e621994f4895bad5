extends EntwineBench
## `cargo xtask bench limb_ik`: EntwineLimbIK solves per second, Rust vs the same solver in GDScript.
##
## CHARACTERS test characters each get two IK modifiers (both arms) reaching for moving targets.
## Every frame each skeleton's hips sway a little, so every skeleton updates every frame in every
## configuration (as an animated character would). Frame time is measured with no IK, with two
## empty SkeletonModifier3D per skeleton (what the engine charges any modifier, the floor), with
## Rust `EntwineLimbIK`, with Godot's own TwoBoneIK3D (C++, a target and a pole node per arm) and with
## the GDScript baseline (`gd_limb_ik.gd`), and with one TwoBoneIK3D per skeleton holding both arms
## (Godot's one-pass form: what one modifier pass per skeleton saves), and with a GDScript modifier
## per arm that only reads the arm's three bone rotations or only writes them (`gd_bone_pose.gd`:
## their difference is the skeleton's own work once a modifier has moved an arm, which every arm IK
## pays), in interleaved rounds; the cost of a solve is the frame's
## main-thread CPU time above the no-IK frame divided by the solves per frame (medians, the rounds'
## spread printed; wall time next to it). It includes the engine calls every modifier must make (reading and writing three bone
## poses). `vs_twobone=` is TwoBoneIK3D's cost / EntwineLimbIK's; the ratio is GDScript cost / Rust cost.
## A second figure times the solver alone, called from GDScript
## (`EntwineLimbIK.solve_chain` vs the GDScript `solve`), SOLVER_CALLS times each on the same chain.
## A second line gives EntwineLimbIK's own pass per solve (EntwineProfiler's own timing, the median and spread
## of OWN_ROUNDS more rounds).

const CHARACTERS := 100
const FRAMES := 120
const ROUNDS := 5
const OWN_ROUNDS := 5
const SOLVER_CALLS := 20000
const GD_IK := preload("res://tests/bench/gd_limb_ik.gd")
const BONE_POSE := preload("res://tests/bench/gd_bone_pose.gd")

var _characters: Array[TestCharacter] = []
var _targets: Array[Node3D] = []
var _poles: Array[Node3D] = []
var _time := 0.0
var _hips := -1


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
		for side in ["Left", "Right"]:
			var t := Node3D.new()
			root.add_child(t)
			_targets.append(t)
			# TwoBoneIK3D needs a pole node: out, down and back of the shoulder, as EntwineLimbIK's
			# pole direction says.
			var pole := Node3D.new()
			root.add_child(pole)
			var out := -1.0 if side == "Left" else 1.0
			pole.global_position = c.global_position + Vector3(out * 0.7, 0.9, 0.5)
			_poles.append(pole)
	_hips = _characters[0].get_skeleton().find_bone("Hips")
	var kinds := ["none", "empty", "rust", "twobone", "twobone_one", "gdscript", "arm_read", "arm_write"]
	var wall := {}
	var cpu := {}
	for kind in kinds:
		wall[kind] = []
		cpu[kind] = []
	for r in ROUNDS:
		for kind in kinds:
			_install(kind)
			await _frames(10)  # warm up
			var start := Time.get_ticks_usec()
			var c0 := thread_cpu_usec()
			await _frames(FRAMES)
			cpu[kind].append((thread_cpu_usec() - c0) / FRAMES)
			wall[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
	# More rounds of EntwineLimbIK with EntwineProfiler's own timing on (kept out of the rounds above: it
	# adds two clock reads per pass): the modifier's own pass, per solve.
	_install("rust")
	await _frames(10)
	var own: Dictionary = await own_rounds(["EntwineLimbIK"], OWN_ROUNDS, FRAMES, _frames)
	_install("none")
	var solver := _time_solvers()
	# The figures are the main thread's CPU time (the modifiers run on it; other work on the
	# machine does not inflate it), wall time next to them; without a thread clock, wall time.
	var samples: Dictionary = cpu if cpu["none"][0] >= 0.0 else wall
	var none: float = median(samples["none"])
	var solves := CHARACTERS * 2
	var wall_of := func(kind: String) -> float:
		return (median(wall[kind]) - median(wall["none"])) / solves
	var rust_us := maxf((median(samples["rust"]) - none) / solves, 0.001)
	var gd_us := maxf((median(samples["gdscript"]) - none) / solves, 0.001)
	var two_us := maxf((median(samples["twobone"]) - none) / solves, 0.001)
	var one_us := maxf((median(samples["twobone_one"]) - none) / solves, 0.001)
	var empty_us := (median(samples["empty"]) - none) / solves
	var moved_us := (median(samples["arm_write"]) - median(samples["arm_read"])) / solves
	var spread := func(kind: String) -> String:
		return "rounds %.2f-%.2f" % [(samples[kind].min() - none) / solves,
			(samples[kind].max() - none) / solves]
	print("bench limb_ik: on %d skeletons, %d solves/frame, main-thread CPU: rust %.2f µs/solve (%s; %.0f solves/s), TwoBoneIK3D %.2f µs/solve (%s; both arms in one TwoBoneIK3D %.2f µs/solve, %s), gdscript %.2f µs/solve (%s), an empty modifier %.2f µs (%s), frame without IK %.2f ms; wall time: rust %.2f, TwoBoneIK3D %.2f, gdscript %.2f, an empty modifier %.2f µs/solve; solver alone: rust %.2f µs, gdscript %.2f µs (%.1fx)%s vs_twobone=%.2fx ratio=%.1fx" % [
		CHARACTERS, solves, rust_us, spread.call("rust"), 1e6 / rust_us, two_us,
		spread.call("twobone"), one_us, spread.call("twobone_one"), gd_us, spread.call("gdscript"), empty_us, spread.call("empty"),
		none / 1000.0, wall_of.call("rust"), wall_of.call("twobone"), wall_of.call("gdscript"),
		wall_of.call("empty"), solver[0], solver[1], solver[1] / solver[0], outlier_note(samples),
		two_us / rust_us,
		gd_us / rust_us])
	print("bench limb_ik: a GDScript modifier writing an arm's three bone rotations costs %.2f µs more than one reading them (reading %.2f µs, %s; writing %.2f µs, %s, above the frame without IK): the skeleton's own work once a modifier has moved an arm, which every arm IK pays, Godot's TwoBoneIK3D and EntwineLimbIK alike" % [
		moved_us, (median(samples["arm_read"]) - none) / solves, spread.call("arm_read"),
		(median(samples["arm_write"]) - none) / solves, spread.call("arm_write")])
	if own["EntwineLimbIK"][0] >= 0.0:
		print("bench limb_ik: EntwineLimbIK's own pass (EntwineProfiler._get_own_time_usec, thread CPU per solve, medians of %d rounds) %s of its %.2f µs; the rest is the engine's work around it" % [
			OWN_ROUNDS, own_line(own["EntwineLimbIK"], CHARACTERS * 2), rust_us])
	for c in _characters:
		c.free()
	for t in _targets + _poles:
		t.free()
	quit(0)


## Returns [rust µs, gdscript µs] per call of the solver alone, on the first character's left arm.
func _time_solvers() -> Array[float]:
	var s := _characters[0].get_skeleton()
	var chain := ["LeftUpperArm", "LeftLowerArm", "LeftHand"].map(func(b: String) -> Transform3D:
		return s.get_bone_global_pose(s.find_bone(b)))
	var target := Transform3D(Basis(), chain[0].origin + Vector3(-0.2, -0.2, -0.3))
	var pole: Vector3 = chain[0].origin + Vector3(-0.7, -0.5, 1.0)
	var gd_solve := GD_IK.solve
	var start := Time.get_ticks_usec()
	for i in SOLVER_CALLS:
		EntwineLimbIK.solve_chain(chain[0], chain[1], chain[2], target, pole, 1.0, 0.0)
	var rust := float(Time.get_ticks_usec() - start) / SOLVER_CALLS
	start = Time.get_ticks_usec()
	for i in SOLVER_CALLS:
		gd_solve.call(chain[0], chain[1], chain[2], target, pole, 1.0, 0.0)
	var gd := float(Time.get_ticks_usec() - start) / SOLVER_CALLS
	return [rust, gd]


func _install(kind: String) -> void:
	for i in _characters.size():
		var skeleton := _characters[i].get_skeleton()
		for child in skeleton.get_children():
			if child is SkeletonModifier3D:
				child.free()
		if kind == "none":
			continue
		if kind == "twobone_one":
			# Godot's own one-pass form: one TwoBoneIK3D holding both arms as two settings.
			var both := TwoBoneIK3D.new()
			skeleton.add_child(both)
			both.set_setting_count(2)
			for k in 2:
				var side: String = ["Left", "Right"][k]
				both.set_root_bone_name(k, side + "UpperArm")
				both.set_middle_bone_name(k, side + "LowerArm")
				both.set_end_bone_name(k, side + "Hand")
				both.set_target_node(k, both.get_path_to(_targets[i * 2 + k]))
				both.set_pole_node(k, both.get_path_to(_poles[i * 2 + k]))
			continue
		for k in 2:
			var side: String = ["Left", "Right"][k]
			if kind == "empty":
				skeleton.add_child(SkeletonModifier3D.new())
				continue
			if kind == "arm_read" or kind == "arm_write":
				var arm := BONE_POSE.on_bones(skeleton,
					[side + "UpperArm", side + "LowerArm", side + "Hand"], kind == "arm_write")
				if arm == null:
					quit(1)
					return
				skeleton.add_child(arm)
				continue
			if kind == "twobone":
				var two := TwoBoneIK3D.new()
				skeleton.add_child(two)
				two.set_setting_count(1)
				two.set_root_bone_name(0, side + "UpperArm")
				two.set_middle_bone_name(0, side + "LowerArm")
				two.set_end_bone_name(0, side + "Hand")
				two.set_target_node(0, two.get_path_to(_targets[i * 2 + k]))
				two.set_pole_node(0, two.get_path_to(_poles[i * 2 + k]))
				continue
			var ik: SkeletonModifier3D = EntwineLimbIK.new() if kind == "rust" else GD_IK.new()
			ik.set("upper_bone", side + "UpperArm")
			ik.set("lower_bone", side + "LowerArm")
			ik.set("end_bone", side + "Hand")
			ik.set("pole_direction", Vector3(-1 if k == 0 else 1, -1, 0.5))
			skeleton.add_child(ik)
			ik.set("target_node", ik.get_path_to(_targets[i * 2 + k]))


func _frames(n: int) -> void:
	for f in n:
		_time += 0.016
		for c in _characters:
			var skeleton := c.get_skeleton()
			skeleton.set_bone_pose_rotation(_hips, Quaternion(Vector3.UP, 0.05 * sin(_time * 4.0)))
		for i in _targets.size():
			var c := _characters[i / 2]
			var side := -1.0 if i % 2 == 0 else 1.0
			_targets[i].global_position = c.global_position + Vector3(side * (0.3 + 0.1 * sin(_time * 3.0)),
				1.3 + 0.15 * sin(_time * 2.0 + i), -0.3)
		await process_frame

