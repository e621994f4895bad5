extends RefCounted
## The FormationController tick written in GDScript, as the benchmark's baseline: the same steps as
## the Rust core per 60 Hz tick (anchor motion, smoothstep reference with feed-forward, debounced
## state machine, PID with anti-windup, soft-wall repulsion over a counting-sort spatial hash,
## integration, contract metrics) on packed arrays, no allocation per tick.

const DT := 1.0 / 60.0
const K1 := 1.8
const K2 := 1.5
const K3 := 0.05
const I_MAX := 0.5
const ALIGN := 0.05
const STABLE := 0.03
const FRAMES := 5
const HEADING_TOL := 0.0349
const V_MAX := 3.0
const W_MAX := 6.283
const R := 0.4
const K_REP := 1.0

var n := 0
var pos := PackedVector2Array()
var heading := PackedFloat32Array()
var state := PackedByteArray()
var counter := PackedByteArray()
var integral := PackedVector2Array()
var slot_local := PackedVector2Array()
var slot_heading := PackedFloat32Array()
var neighbour := PackedInt32Array()
var start_rel := PackedVector2Array()
var start_heading := PackedFloat32Array()
var ref_prev := PackedVector2Array()
var ref_heading_prev := PackedFloat32Array()
var bucket_start := PackedInt32Array()
var bucket_items := PackedInt32Array()
var bucket_of := PackedInt32Array()
var anchor := Vector2.ZERO
var anchor_vel := Vector2.ZERO
var desired_vel := Vector2.ZERO
var since := 0.0
var transition := 0.8
var spacing_error := 0.0
var heading_std := 0.0


func setup(count: int, files: int, spacing: float, scatter: float) -> void:
	n = count
	for arr in [pos, integral, slot_local, start_rel, ref_prev]:
		arr.resize(n)
	for arr in [heading, slot_heading, start_heading, ref_heading_prev]:
		arr.resize(n)
	state.resize(n)
	counter.resize(n)
	neighbour.resize(n)
	bucket_of.resize(n)
	bucket_items.resize(n)
	var buckets := 16
	while buckets < n * 2:
		buckets *= 2
	bucket_start.resize(buckets + 1)
	var rng := RandomNumberGenerator.new()
	rng.seed = 3
	var ranks := ceili(float(n) / files)
	for i in n:
		var p := Vector2((i % files - (files - 1) * 0.5) * spacing, (i / files - (ranks - 1) * 0.5) * spacing)
		slot_local[i] = p
		slot_heading[i] = 0.0
		neighbour[i] = i + 1 if (i + 1) % files != 0 and i + 1 < n else i - 1
		pos[i] = p + Vector2(rng.randf_range(-scatter, scatter), rng.randf_range(-scatter, scatter))
		heading[i] = rng.randf_range(-PI, PI)
		state[i] = 1
	form()


func form() -> void:
	since = 0.0
	for i in n:
		start_rel[i] = pos[i] - anchor
		start_heading[i] = heading[i]
		ref_prev[i] = pos[i]
		ref_heading_prev[i] = heading[i]


func march(dir: Vector2, speed: float) -> void:
	desired_vel = dir.normalized() * speed


func _bucket(cx: int, cy: int) -> int:
	var h := (cx * 73856093) ^ (cy * 19349663)
	return h & (bucket_start.size() - 2)


func step() -> void:
	since += DT
	anchor_vel = anchor_vel.move_toward(desired_vel, 3.0 * DT)
	anchor += anchor_vel * DT
	# Spatial hash: counting sort of agents into buckets.
	bucket_start.fill(0)
	var nb := bucket_start.size() - 1
	for i in n:
		var b := _bucket(floori(pos[i].x / R), floori(pos[i].y / R))
		bucket_of[i] = b
		bucket_start[b + 1] += 1
	for b in nb:
		bucket_start[b + 1] += bucket_start[b]
	var cursor := bucket_start.duplicate()
	for i in n:
		var b := bucket_of[i]
		bucket_items[cursor[b]] = i
		cursor[b] += 1
	var u := clampf(since / transition, 0.0, 1.0)
	var blend := u * u * (3.0 - 2.0 * u)
	var moving := anchor_vel.length_squared() > 1e-6 or desired_vel.length_squared() > 1e-6
	var c := cos(0.0)
	var s := sin(0.0)
	for i in n:
		var local := slot_local[i]
		var slot := anchor + Vector2(local.x * c + local.y * s, -local.x * s + local.y * c)
		var slot_yaw := slot_heading[i]
		var target := anchor + start_rel[i].lerp(slot - anchor, blend)
		var target_yaw := start_heading[i] + angle_difference(start_heading[i], slot_yaw) * blend
		var v_ff := (target - ref_prev[i]) / DT
		var w_ff := angle_difference(ref_heading_prev[i], target_yaw) / DT
		ref_prev[i] = target
		ref_heading_prev[i] = target_yaw
		var p := pos[i]
		var d := slot.distance_to(p)
		var herr := angle_difference(heading[i], slot_yaw)
		var st := state[i]
		var facing := absf(herr) < HEADING_TOL
		if d > ALIGN and st != 1:
			st = 1
			counter[i] = 0
		else:
			var ok := false
			var next := st
			match st:
				1:
					ok = d < STABLE
					next = 3 if facing else 2
				2:
					ok = facing
					next = 3
				3:
					ok = d < STABLE and facing and not moving
					next = 0
				0:
					if moving or absf(herr) > 2.0 * HEADING_TOL:
						next = 3
					ok = false
			if st == 0:
				st = next
			elif ok:
				counter[i] += 1
				if counter[i] >= FRAMES:
					counter[i] = 0
					st = next
			else:
				counter[i] = 0
		state[i] = st
		var e := target - p
		var kp := 0.0 if st == 2 and e.length() <= STABLE else K1
		var integrating := st == 3 or st == 0
		var integ := integral[i] if integrating else Vector2.ZERO
		if integrating:
			var unsat := v_ff + e * kp + integ * K3
			if unsat.length() <= V_MAX or e.dot(integ) < 0.0:
				integ = (integ + e * DT).limit_length(I_MAX)
		integral[i] = integ
		var v := (v_ff + e * kp + integ * K3).limit_length(V_MAX)
		# Soft walls over the 3×3 neighbouring cells.
		var push := Vector2.ZERO
		var cx := floori(p.x / R)
		var cy := floori(p.y / R)
		for dx in range(-1, 2):
			for dy in range(-1, 2):
				var b := _bucket(cx + dx, cy + dy)
				for k in range(bucket_start[b], bucket_start[b + 1]):
					var j := bucket_items[k]
					if j == i:
						continue
					var dist := p.distance_to(pos[j])
					if dist < R:
						var away := (p - pos[j]) / dist if dist > 1e-4 else Vector2.RIGHT
						push += away * K_REP * (1.0 / maxf(dist, 0.02) - 1.0 / R)
		v = (v + push.limit_length(V_MAX)).limit_length(V_MAX)
		var w := clampf(w_ff + K2 * wrapf(angle_difference(heading[i], target_yaw), -PI, PI), -W_MAX, W_MAX)
		pos[i] = p + v * DT
		heading[i] = wrapf(heading[i] + w * DT, -PI, PI)
	# Metrics.
	var worst := 0.0
	var sum_h := 0.0
	var sum_h2 := 0.0
	for i in n:
		var j := neighbour[i]
		if j >= 0:
			var nominal := slot_local[i].distance_to(slot_local[j])
			worst = maxf(worst, absf(pos[i].distance_to(pos[j]) - nominal))
		var h := angle_difference(slot_heading[i], heading[i])
		sum_h += h
		sum_h2 += h * h
	spacing_error = worst
	var mean := sum_h / n
	heading_std = sqrt(maxf(sum_h2 / n - mean * mean, 0.0))
