# timeout: 90
extends EntwineTest
## EntwineProfiler.thread_cpu_usec(), the thread CPU clock the benchmarks read, against the wall
## clock: it rises with a busy loop by about the loop's wall time (never more, never far less on a
## quiet core), stays still while the thread sleeps, and sees a sub-millisecond loop that the
## /proc counters (updated only at a scheduler tick or a context switch) would miss; and
## EntwineProfiler.process_cpu_usec(), every thread's together, which sees the main thread's work too
## and the work of a large batch of ropes on both of its threads.


## Spins for at least `usec` microseconds of wall time; returns the wall time spent.
func _spin(usec: int) -> int:
	var t0 := Time.get_ticks_usec()
	var x := 0
	while Time.get_ticks_usec() - t0 < usec:
		x += 1
	return Time.get_ticks_usec() - t0


func test_a_busy_loop_costs_about_its_wall_time() -> void:
	var best := 0.0
	for attempt in 5:
		var c0 := EntwineProfiler.thread_cpu_usec()
		var wall := _spin(50000)
		var cpu := EntwineProfiler.thread_cpu_usec() - c0
		check(cpu <= wall + 500.0, "a busy loop's CPU time is at most its wall time (+0.5 ms)", "<= %d" % (wall + 500), cpu)
		best = maxf(best, cpu / wall)
	# Other processes can take the core for part of a loop; the best of five runs had it nearly all.
	check(best > 0.8, "the best of five busy loops ran at least 80 % of its wall time on the CPU", "> 0.8", best)


func test_sleeping_costs_no_cpu_time() -> void:
	var c0 := EntwineProfiler.thread_cpu_usec()
	OS.delay_msec(60)
	var cpu := EntwineProfiler.thread_cpu_usec() - c0
	check(cpu >= 0.0 and cpu < 5000.0, "60 ms asleep cost under 5 ms of CPU time", "< 5000", cpu)


func test_a_short_loop_is_seen_at_once() -> void:
	# /proc/thread-self/schedstat would read the same value before and after most such loops.
	var seen := 0
	for attempt in 20:
		var c0 := EntwineProfiler.thread_cpu_usec()
		var wall := _spin(300)
		var cpu := EntwineProfiler.thread_cpu_usec() - c0
		if cpu > 0.25 * wall and cpu <= wall + 100.0:
			seen += 1
	check(seen >= 15, "at least 15 of 20 loops of 0.3 ms show their CPU time", ">= 15", seen)


func test_the_process_clock_counts_the_main_thread_too() -> void:
	var best := 0.0
	for attempt in 5:
		var p0 := EntwineProfiler.process_cpu_usec()
		var t0 := EntwineProfiler.thread_cpu_usec()
		_spin(30000)
		var thread := EntwineProfiler.thread_cpu_usec() - t0
		var process := EntwineProfiler.process_cpu_usec() - p0
		check(process >= thread - 100.0, "the process's CPU time includes the main thread's", ">= %d" % (thread - 100), process)
		best = maxf(best, thread / 30000.0)
	check(best > 0.8, "the main thread ran its loop", "> 0.8", best)


func test_a_large_rope_batch_runs_on_two_threads() -> void:
	# 160 long ropes: a batch over the sharing threshold. Its CPU time over all threads exceeds the
	# main thread's by the helper thread's share (where there is a second processor).
	var ropes := add_long_ropes(160, 16)
	var best := 0.0
	for attempt in 5:
		var p0 := EntwineProfiler.process_cpu_usec()
		var t0 := EntwineProfiler.thread_cpu_usec()
		for f in 20:
			RopeSimulation._advance_all(ropes, 1.0 / 60.0)
		var thread := EntwineProfiler.thread_cpu_usec() - t0
		var process := EntwineProfiler.process_cpu_usec() - p0
		best = maxf(best, process / maxf(thread, 1.0))
	if OS.get_processor_count() >= 2:
		check(best > 1.1, "the batch's work ran on a second thread too (process CPU over main-thread CPU)", "> 1.1", best)
	else:
		check(best >= 0.9, "one processor: the batch ran on the main thread", ">= 0.9", best)


## A still test character whose bearing looks aside: returns [skeleton, hips bone, bearing].
func _looking_soldier() -> Array:
	var character := add(preload("res://characters/test_character.tscn").instantiate()) as TestCharacter
	character.frozen = true
	character.animation_tree.active = false
	var skeleton := character.get_skeleton()
	var bearing := EntwineSoldierBearing.new()
	bearing.looking = true
	bearing.look_target = character.global_position + Vector3(3.0, 1.6, -1.0)
	skeleton.add_child(bearing)
	return [skeleton, skeleton.find_bone("Hips"), bearing]


func test_own_timing_counts_a_node_s_own_callbacks_only_while_on() -> void:
	var soldier := _looking_soldier()
	var skeleton: Skeleton3D = soldier[0]
	var hips: int = soldier[1]
	# The hips sway every frame, so the skeleton (and its modifiers) update every frame.
	var frames := func(n: int) -> void:
		for f in n:
			skeleton.set_bone_pose_rotation(hips, Quaternion(Vector3.UP, 0.05 * sin(f * 0.3)))
			await process_frame
	await frames.call(3)
	# A debug build times from the start: the Debugger's monitors read it.
	check(EntwineProfiler._is_own_timing() == OS.is_debug_build(), "own timing is on in a debug build, off in a release one")
	EntwineProfiler._set_own_timing(false)
	EntwineProfiler._reset_own_time()
	await frames.call(10)
	check(EntwineProfiler._get_own_call_count("EntwineSoldierBearing") == 0, "off: no call is counted", 0, EntwineProfiler._get_own_call_count("EntwineSoldierBearing"))
	check(EntwineProfiler._get_own_time_usec("EntwineSoldierBearing") == 0.0, "off: no time is counted", 0.0, EntwineProfiler._get_own_time_usec("EntwineSoldierBearing"))

	EntwineProfiler._set_own_timing(true)
	check(EntwineProfiler._is_own_timing(), "own timing is on once set")
	var t0 := EntwineProfiler.thread_cpu_usec()
	await frames.call(10)
	var spent := EntwineProfiler.thread_cpu_usec() - t0
	EntwineProfiler._set_own_timing(false)
	var calls := EntwineProfiler._get_own_call_count("EntwineSoldierBearing")
	var own := EntwineProfiler._get_own_time_usec("EntwineSoldierBearing")
	check(calls >= 10 and calls <= 20, "on: the modifier's passes over 10 updating frames are counted", "10..20", calls)
	check(own > 0.0 and own < spent, "on: their CPU time is counted, less than the frames' own", "0 < t < %.0f" % spent, own)
	check(EntwineProfiler._get_own_call_count("EntwineLimbIK") == 0, "a class with no node in the scene counted nothing", 0, EntwineProfiler._get_own_call_count("EntwineLimbIK"))
	await frames.call(3)
	check(EntwineProfiler._get_own_call_count("EntwineSoldierBearing") == calls, "off again: the totals stay as they were", calls, EntwineProfiler._get_own_call_count("EntwineSoldierBearing"))
	EntwineProfiler._reset_own_time()
	check(EntwineProfiler._get_own_call_count("EntwineSoldierBearing") == 0 and EntwineProfiler._get_own_time_usec("EntwineSoldierBearing") == 0.0, "reset clears the totals")
	expect_error("'Skeleton3D' is not a timed Entwine class")
	check(EntwineProfiler._get_own_time_usec("Skeleton3D") == -1.0, "a class Entwine does not time reads -1", -1.0, EntwineProfiler._get_own_time_usec("Skeleton3D"))
	EntwineProfiler._set_own_timing(OS.is_debug_build())


func test_each_node_type_has_a_debugger_monitor_in_ms_per_frame() -> void:
	var id := &"entwine/EntwineSoldierBearing (ms)"
	check(Performance.has_custom_monitor(id) == OS.is_debug_build(), "a debug build registers the node's monitor")
	if not OS.is_debug_build():
		return
	for name in ["EntwineLimbIK", "RopeSimulation", "HoldHandComponent", "FormationController", "EnvironmentInteractionStateMachine", "EntwineRopeBoneChain"]:
		check(Performance.has_custom_monitor(StringName("entwine/%s (ms)" % name)), "%s has a monitor" % name)
	var soldier := _looking_soldier()
	var skeleton: Skeleton3D = soldier[0]
	var hips: int = soldier[1]
	var bearing: EntwineSoldierBearing = soldier[2]
	Performance.get_custom_monitor(id)  # starts a new period
	for f in 20:
		skeleton.set_bone_pose_rotation(hips, Quaternion(Vector3.UP, 0.05 * sin(f * 0.3)))
		await process_frame
	var ms: float = Performance.get_custom_monitor(id)
	check(ms > 0.0 and ms < 16.7, "the bearing's monitor reads its own ms per frame", "0 < ms < 16.7", ms)
	bearing.queue_free()
	await process_frame
	await process_frame
	Performance.get_custom_monitor(id)
	for f in 5:
		await process_frame
	check(Performance.get_custom_monitor(id) == 0.0, "with no bearing left, the monitor reads 0", 0.0, Performance.get_custom_monitor(id))
