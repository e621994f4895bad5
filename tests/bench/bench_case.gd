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


## Returns the median of [param values] (numbers).
static func median(values: Array) -> float:
	var sorted := values.duplicate()
	sorted.sort()
	return sorted[sorted.size() / 2]
