extends EntwineBench
## `cargo xtask bench hold_hand`: per-pair cost of holding hands, Rust vs the same work in GDScript.
##
## PAIRS pairs of test characters walk side by side. Each round builds the scene five ways — no
## hand holding (the initiators walk, the recipients stand frozen), no hand holding with both
## characters walking on their own (each moving its body with `move_and_slide` and driving its own
## animation, as they did before they took hands), the same as the first with an empty
## SkeletonModifier3D on each skeleton (the engine's own cost of one modifier per skeleton, which
## any IK node pays), HoldHandComponent pairs (Rust, with Rust EntwineLimbIK), and `gd_hold_hand.gd`
## pairs (GDScript, with GDScript IK) — and measures each frame's main-thread CPU time and wall
## time, every frame running exactly one physics tick (`tick_every_frame`: the pair's follow and the
## characters' movement run per tick, the IK and the animation per frame, as in a game at 60 fps). The cost of a pair is the frame's time above the no-holding frame divided by PAIRS (follow
## + contact solve + two IK chains + mirroring). The ratio is GDScript cost / Rust cost, by
## main-thread CPU time. A second line gives the cost of a pair above two characters walking on
## their own (the `walk` frame: what the pair replaces), as the median of each round's own
## difference, which a machine drifting from round to round does not move. A third line gives the Rust nodes' own callbacks per pair
## (EntwineProfiler's own timing, the median and spread of OWN_ROUNDS more Rust rounds): the rest
## is the engine's work.

const PAIRS := 40
const FRAMES := 90
const ROUNDS := 7
const OWN_ROUNDS := 5
const CHARACTER := preload("res://characters/test_character.tscn")
const GD_HOLD := preload("res://tests/bench/gd_hold_hand.gd")


func _initialize() -> void:
	tick_every_frame()
	_run.call_deferred()


func _run() -> void:
	var kinds := ["none", "walk", "floor", "rust", "gdscript"]
	var wall := {}
	var cpu := {}
	for kind in kinds:
		wall[kind] = []
		cpu[kind] = []
	for r in ROUNDS:
		for kind in kinds:
			var world := await _build(kind)
			for f in 30:
				await process_frame
			var start := Time.get_ticks_usec()
			var c0 := thread_cpu_usec()
			for f in FRAMES:
				await process_frame
			cpu[kind].append((thread_cpu_usec() - c0) / FRAMES)
			wall[kind].append(float(Time.get_ticks_usec() - start) / FRAMES)
			world.free()
			await process_frame
	# More Rust rounds with EntwineProfiler's own timing on (kept out of the rounds above: it adds
	# two clock reads per callback): the nodes' own callbacks per pair.
	var own_world := await _build("rust")
	for f in 30:
		await process_frame
	var own: Dictionary = await own_rounds(["HoldHandComponent", "EntwineLimbIK"], OWN_ROUNDS, FRAMES, idle_frames)
	own_world.free()
	await process_frame
	# The headline is the main thread's CPU time (what the nodes, their modifiers and their physics
	# queries run on), which other work on the machine does not inflate; wall time is printed next
	# to it. Without a thread clock (not Linux) the wall time stands in.
	var clock := cpu if cpu["none"][0] >= 0.0 else wall
	var per_pair := func(kind: String, s: Dictionary) -> float:
		return (median(s[kind]) - median(s["none"])) / PAIRS
	var rust_us := maxf(per_pair.call("rust", clock), 0.1)
	var gd_us := maxf(per_pair.call("gdscript", clock), 0.1)
	print("bench hold_hand: %d pairs, main-thread CPU per frame: rust %.1f µs/pair %s, gdscript %.1f µs/pair %s; two empty modifiers %.1f µs/pair; frame without holding %.2f ms; wall time: rust %.1f, gdscript %.1f, two empty modifiers %.1f µs/pair, frame without holding %.2f ms%s ratio=%.1fx" % [
		PAIRS, rust_us, spread(clock["rust"], median(clock["none"]), PAIRS), gd_us,
		spread(clock["gdscript"], median(clock["none"]), PAIRS), per_pair.call("floor", clock),
		median(clock["none"]) / 1000.0, per_pair.call("rust", wall),
		per_pair.call("gdscript", wall), per_pair.call("floor", wall),
		median(wall["none"]) / 1000.0, outlier_note(clock), gd_us / rust_us])
	# Above both characters walking on their own (the recipient's own movement and animation are
	# replaced by the pair's while they hold hands): each round's own difference, the rounds'
	# median. A round's configurations run one after another, so a machine whose speed drifts from
	# round to round moves both sides of a round's difference alike.
	var walk_us: float = per_pair.call("walk", clock)
	var rust_walk := paired(clock["rust"], clock["walk"], PAIRS)
	var gd_walk := paired(clock["gdscript"], clock["walk"], PAIRS)
	print("bench hold_hand: above two characters walking on their own (the recipient moving its own body with move_and_slide and driving its own animation: %.1f µs/pair above a frozen recipient, rounds %s), each round's difference, medians: rust %.1f µs/pair (rounds %.1f–%.1f), gdscript %.1f µs/pair (rounds %.1f–%.1f) (%s)" % [
		walk_us, spread(clock["walk"], median(clock["none"]), PAIRS).trim_prefix("(rounds ").trim_suffix(")"),
		rust_walk[0], rust_walk[1], rust_walk[2], gd_walk[0], gd_walk[1], gd_walk[2],
		"%.1fx" % (gd_walk[0] / rust_walk[0]) if rust_walk[0] > 0.1 else "n/a: rust within the walking scene's spread"])
	if own["HoldHandComponent"][0] >= 0.0:
		print("bench hold_hand: own callbacks (EntwineProfiler._get_own_time_usec, thread CPU per pair per frame, medians of %d rounds): HoldHandComponent %s, its two LimbIKs %s, of the %.1f µs above; the rest is the engine's work around them" % [
			OWN_ROUNDS, own_line(own["HoldHandComponent"], PAIRS), own_line(own["EntwineLimbIK"], PAIRS), rust_us])
	quit(0)


## The rounds of [param frames] (µs per frame) as "(rounds a–b)" per pair above [param none].
func spread(frames: Array, none: float, pairs: int) -> String:
	return "(rounds %.1f–%.1f)" % [(frames.min() - none) / pairs, (frames.max() - none) / pairs]


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
	var room := EntwineHoldHandRoom.new()
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
			"walk":
				b.move_input = a.move_input
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

