# timeout: 60
extends EntwineTest
## EntwineProfiler.thread_cpu_usec(), the thread CPU clock the benchmarks read, against the wall
## clock: it rises with a busy loop by about the loop's wall time (never more, never far less on a
## quiet core), stays still while the thread sleeps, and sees a sub-millisecond loop that the
## /proc counters (updated only at a scheduler tick or a context switch) would miss.


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
