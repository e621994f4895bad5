extends Node3D
## The benchmark's baseline: RopeSimulation's Verlet rope written in GDScript, with the same steps as
## the Rust core on a world without colliders (Verlet with damping and gravity; distance constraints
## in alternating sweeps ending toward the anchor side, then the ground clamp, every iteration; the
## strain limit from the anchor and a last ground clamp). Used by `rope_bench.gd` only.

var point_count := 32
var segment_length := 0.3
var damping := 0.99
var iterations := 8
var gravity := Vector3(0, -9.8, 0)
var radius := 0.03
var ground_height := 0.0
var stretch_limit := 0.03

var _pos := PackedVector3Array()
var _prev := PackedVector3Array()


func _ready() -> void:
	_pos.resize(point_count)
	_prev.resize(point_count)
	var anchor := global_position
	for i in point_count:
		_pos[i] = anchor + Vector3.DOWN * segment_length * i
		_prev[i] = _pos[i]


## One step of [param dt] seconds with the anchor at this node.
func advance(dt: float) -> void:
	var n := point_count
	var anchor := global_position
	_pos[0] = anchor
	_prev[0] = anchor
	var g := gravity * dt * dt
	var floor_y := ground_height + radius
	for i in range(1, n):
		var v := (_pos[i] - _prev[i]) * damping
		_prev[i] = _pos[i]
		_pos[i] += v + g
	var last := n - 1
	for it in iterations:
		var forward := (iterations - 1 - it) % 2 == 0
		for jj in last:
			var j := jj if forward else last - 1 - jj
			var a := _pos[j]
			var b := _pos[j + 1]
			var delta := b - a
			var d := delta.length()
			if d < 1e-6:
				continue
			var wa := 0.0 if j == 0 else 1.0
			var corr := delta * ((d - segment_length) / (d * (wa + 1.0)))
			_pos[j] = a + corr * wa
			_pos[j + 1] = b - corr
		for i in range(1, n):
			if _pos[i].y < floor_y:
				_pos[i].y = floor_y
				_prev[i].y = floor_y
	var max_len := segment_length * (1.0 + stretch_limit)
	for i in range(1, n):
		var d := _pos[i] - _pos[i - 1]
		var l := d.length()
		if l > max_len:
			_pos[i] = _pos[i - 1] + d * (max_len / l)
		if _pos[i].y < floor_y:
			_pos[i].y = floor_y
			_prev[i].y = floor_y
