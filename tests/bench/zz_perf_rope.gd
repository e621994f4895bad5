extends EntwineBench
func _initialize() -> void:
	_run.call_deferred()
func _run() -> void:
	var dt := 1.0 / 60.0
	var rust: Array[RopeSimulation] = []
	for i in 1000:
		var r := RopeSimulation.new()
		r.capacity = 32
		r.point_count = 32
		r.iterations = 8
		r.collision_mask = 0
		r.tube_sides = 6
		r.smoothing = 1
		r.position = Vector3((i % 40) * 1.5, 12.0, (i / 40) * 1.5) + Vector3(1, 0, 0)
		root.add_child(r)
		r.set_physics_process(false)
		r.set_process(false)
		rust.append(r)
	var frames := int(OS.get_environment("FRAMES")) if OS.get_environment("FRAMES") != "" else 2000
	var sim := 0.0
	for f in frames:
		var t := f * dt
		var offset := Vector3(cos(t * 6.0), 0.0, sin(t * 6.0))
		for i in rust.size():
			rust[i].position = Vector3((i % 40) * 1.5, 12.0, (i / 40) * 1.5) + offset
		var t0 := Time.get_ticks_usec()
		RopeSimulation.advance_all(rust, dt)
		if f >= 100:
			sim += Time.get_ticks_usec() - t0
	print("bench perf rope: %.3f ms" % [sim / (frames - 100) / 1000.0])
	quit(0)
