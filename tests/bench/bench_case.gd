class_name EntwineBench
extends SceneTree
## Base of the benchmarks run by `cargo xtask bench`: each prints one line
## `bench NAME: <figures> ratio=<R>x` and quits.


## Lets frames run as fast as they can: headless Godot otherwise pads every frame to about 6.9 ms
## (it cannot draw), which would hide the work being measured.
func unthrottle() -> void:
	OS.low_processor_usage_mode = false
	OS.low_processor_usage_mode_sleep_usec = 0
	Engine.max_fps = 0


## Makes every engine iteration run exactly one physics tick of 1/60 s and one process frame,
## unthrottled (a fast tick rate, one step per frame, time scaled back to 1/60 s per tick). Frames
## that run as fast as they can otherwise hold a varying number of physics ticks (10 to 21 in 90
## frames were seen in the `hold_hand` scene's rounds), so a frame's time would mix the two by a
## share that moves from round to round. Process deltas are scaled up as much; the physics delta is
## 1/60 s. Returns the settings replaced, for [method restore_ticks].
func tick_every_frame() -> Array:
	unthrottle()
	var was := [Engine.physics_ticks_per_second, Engine.max_physics_steps_per_frame, Engine.time_scale]
	Engine.physics_ticks_per_second = 60000
	Engine.max_physics_steps_per_frame = 1
	Engine.time_scale = 1000.0
	return was


## Puts back the settings [method tick_every_frame] replaced.
func restore_ticks(was: Array) -> void:
	Engine.physics_ticks_per_second = was[0]
	Engine.max_physics_steps_per_frame = was[1]
	Engine.time_scale = was[2]


## Returns a FormationController of [param agents] internal agents added to the tree, formed into
## [param formation] (RON) with its agents still where new agents stand (the default line), with
## agent signals, hot reload and physics processing off: the formation benches' squad.
func internal_squad(agents: int, formation: String) -> FormationController:
	var squad := FormationController.new()
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.emit_agent_signals = false
	squad.hot_reload = false
	squad.internal_agent_count = agents
	squad.add_formation("bench", formation)
	root.add_child(squad)
	squad.set_physics_process(false)
	squad.form("bench")
	return squad


## Returns the median of [param values] (numbers).
static func median(values: Array) -> float:
	var sorted := values.duplicate()
	sorted.sort()
	return sorted[sorted.size() / 2]


## Returns the differences of [param samples] over [param base], round by round (each pair taken
## from the same round, so a machine whose speed drifts between rounds moves both sides alike),
## divided by [param per]: [median, lowest, highest].
static func paired(samples: Array, base: Array, per: float) -> Array:
	var diffs := []
	for r in mini(samples.size(), base.size()):
		diffs.append((samples[r] - base[r]) / per)
	return [median(diffs), diffs.min(), diffs.max()]


## Returns the CPU time this process has used (user + system, all threads) in seconds, read from
## /proc/self/stat (Linux; 10 ms resolution), or -1 where that is not available. Engine work that
## runs on worker threads (navigation avoidance) shows here and not in a frame's wall time.
static func cpu_seconds() -> float:
	var f := FileAccess.open("/proc/self/stat", FileAccess.READ)
	if f == null:
		return -1.0
	var line := f.get_line()  # procfs reports a length of 0, so read the line itself
	var close := line.rfind(")")
	if close < 0:
		return -1.0
	var fields := line.substr(close + 2).split(" ")
	if fields.size() < 13:
		return -1.0
	# Fields 14 and 15 of the line (utime, stime) in clock ticks of 1/100 s.
	return (int(fields[11]) + int(fields[12])) / 100.0


## Returns the CPU time the calling thread has run, in microseconds (nanosecond resolution), from
## the operating system's per-thread CPU clock (EntwineProfiler), or -1 where that is not
## available. Called from the main thread it counts the main thread's work alone — scripts, nodes,
## skeleton modifiers, physics queries — and not the time other processes on a shared machine take
## from it, so it stays steady where wall time swings. (The /proc counters are not used: they are
## brought up to date only at a scheduler tick or a context switch, milliseconds behind a thread
## that runs unthrottled.)
static func thread_cpu_usec() -> float:
	return EntwineProfiler.thread_cpu_usec()


## Returns "" when every round of every configuration in [param samples] (configuration → its
## rounds' frame times) lies within a quarter of that configuration's median, else
## " (outlier rounds: <configuration> <time>, …)" naming the others: a round that other work on the
## machine slowed (or that caught a hitch) says so in the line instead of hiding in a median.
static func outlier_note(samples: Dictionary) -> String:
	var odd := []
	for kind in samples:
		var rounds: Array = samples[kind]
		var m := median(rounds)
		for v in rounds:
			if absf(v - m) > 0.25 * absf(m):
				odd.append("%s %.0f" % [kind, v])
	return "" if odd.is_empty() else " (outlier rounds, µs per frame: %s)" % ", ".join(odd)


## Times the own callbacks of the node classes [param classes] (EntwineProfiler's own timing, the
## thread's CPU clock) in [param rounds] rounds of [param frames] frames, the frames run by
## [param run] (awaited with the frame count). Returns, per class, each round's µs per frame.
## One round is not enough: on a shared machine the rounds of one run have spread by a factor of
## five, so the benches print their median and spread.
func own_rounds(classes: Array, rounds: int, frames: int, run: Callable) -> Dictionary:
	var out := {}
	for c in classes:
		out[c] = []
	for r in rounds:
		EntwineProfiler._reset_own_time()
		EntwineProfiler._set_own_timing(true)
		await run.call(frames)
		EntwineProfiler._set_own_timing(false)
		for c in classes:
			out[c].append(EntwineProfiler._get_own_time_usec(c) / frames)
	return out


## "<median> µs (rounds <lowest>-<highest>)" of [param rounds] (µs per frame), each divided by
## [param per] (the solves, soldiers or pairs of a frame).
static func own_line(rounds: Array, per: float) -> String:
	var sorted := rounds.duplicate()
	sorted.sort()
	return "%.2f µs (rounds %.2f-%.2f)" % [median(sorted) / per, sorted[0] / per, sorted[sorted.size() - 1] / per]


## Lets [param frames] frames pass.
func idle_frames(frames: int) -> void:
	for f in frames:
		await process_frame
