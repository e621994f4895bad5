extends EntwineBench
## `cargo xtask bench hold_hand`: per-pair cost of holding hands, Rust vs the same work in GDScript.
##
## PAIRS pairs of test characters walk side by side. Each round builds the scene four ways — no
## hand holding (the initiators walk, the recipients stand frozen), the same with an empty
## SkeletonModifier3D on each skeleton (the engine's own cost of one modifier per skeleton, which
## any IK node pays), HoldHandComponent pairs (Rust, with Rust LimbIK), and `gd_hold_hand.gd`
## pairs (GDScript, with GDScript IK) — and measures the frame time. The cost of a pair is the
## frame time above the no-holding frame divided by PAIRS (follow + contact solve + two IK chains
## + mirroring). The ratio is GDScript cost / Rust cost.

const PAIRS := 40
const FRAMES := 120
const ROUNDS := 3
const CHARACTER := preload("res://characters/test_character.tscn")
const GD_HOLD := preload("res://tests/bench/gd_hold_hand.gd")


func _initialize() -> void:
	unthrottle()
	_run.call_deferred()


func _run() -> void:
	var kinds := ["none", "floor", "rust", "gdscript"]
	var samples := {}
	for kind in kinds:
		samples[kind] = []
	for r in ROUNDS:
		for kind in kinds:
			var world := await _build(kind)
			for f in 30:
				await process_frame
			var start := Time.get_ticks_usec()
			for f in FRAMES:
				await process_frame
			samples[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
			world.free()
			await process_frame
	var none: float = median(samples["none"])
	var rust_us := maxf(median(samples["rust"]) - none, 0.1) / PAIRS
	var gd_us := maxf(median(samples["gdscript"]) - none, 0.1) / PAIRS
	var floor_us := (median(samples["floor"]) - none) / PAIRS
	print("bench hold_hand: %d pairs; rust %.1f µs/pair %s, gdscript %.1f µs/pair %s per frame; two empty modifiers %.1f µs/pair; frame without holding %.2f ms%s ratio=%.1fx" % [
		PAIRS, rust_us, spread(samples["rust"], none, PAIRS), gd_us,
		spread(samples["gdscript"], none, PAIRS), floor_us, none / 1000.0, outlier_note(samples),
		gd_us / rust_us])


## The rounds of [param frames] (µs per frame) as "(rounds a–b)" per pair above [param none].
func spread(frames: Array, none: float, pairs: int) -> String:
	return "(rounds %.1f–%.1f)" % [(frames.min() - none) / pairs, (frames.max() - none) / pairs]
	quit(0)


func _build(kind: String) -> Node3D:
	var world := Node3D.new()
	root.add_child(world)
	var floor_body := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(400, 1, 400)
	shape.shape = box
	shape.position.y = -0.5
	floor_body.add_child(shape)
	world.add_child(floor_body)
	var room := HoldHandRoom.new()
	world.add_child(room)
	var comps := []
	for i in PAIRS:
		var a := CHARACTER.instantiate() as TestCharacter
		var b := CHARACTER.instantiate() as TestCharacter
		a.position = Vector3(i * 3.0, 0, 0)
		b.position = Vector3(i * 3.0 - 0.82, 0, 0.17)
		world.add_child(a)
		world.add_child(b)
		a.move_input = Vector3(0, 0, -1)
		match kind:
			"none":
				b.frozen = true
			"floor":
				b.frozen = true
				for c in [a, b]:
					c.get_skeleton().add_child(SkeletonModifier3D.new())
			"rust":
				var ca := HoldHandComponent.new()
				var cb := HoldHandComponent.new()
				a.add_child(ca)
				b.add_child(cb)
				comps.append([ca, cb])
			"gdscript":
				var h: Node = GD_HOLD.new()
				h.initiator = a
				h.recipient = b
				world.add_child(h)
	await process_frame
	for pair in comps:
		pair[0].request(pair[1])
		pair[1].accept()
	return world

