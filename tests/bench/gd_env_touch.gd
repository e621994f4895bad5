extends Node3D
## The benchmark's baseline: EnvironmentInteractionStateMachine's state machine written in GDScript,
## with the same inputs, the same steps and the same defaults (the same detection shape query,
## closest point on box colliders, normal ray, Reset/Search/Approach/Rise/Touch with the four reset
## triggers, closed-form ramps, rotate-towards), driving the same EntwineLimbIK modifiers. Used by
## `env_touch_bench.gd` only. With `queries_only` it does just the two physics queries per frame.

const REFERENCE_RATE_HZ := 60.0
const STOPPED_EPSILON := 1e-3
const TIME_EPSILON := 1e-5
enum { RESET, SEARCH, APPROACH, RISE, TOUCH }

var queries_only := false
var interactable_mask := 1
var move_input := Vector3.ZERO

var surface_offset := 0.05
var side_switch_margin := 0.1
var reset_duration := 2.0
var reset_blend_duration := 10.0
var reset_rotation_speed := deg_to_rad(500.0)
var approach_distance := 2.0
var approach_weight := 0.5
var approach_rotation_weight := 0.75
var approach_blend_duration := 5.0
var approach_duration := 2.0
var approach_rotation_speed := deg_to_rad(500.0)
var rise_distance := 0.5
var rise_weight := 1.0
var rise_blend_duration := 5.0
var rise_rotation_speed := deg_to_rad(1000.0)
var normal_ray_length := 0.5
var touch_distance := 0.05
var touch_min_time := 1.0
var touch_duration := 0.5
var moving_away_offset := 0.005
var jump_speed := 0.5
var palm_axis := Vector3(0, 0, 1)
var finger_axis := Vector3(0, 1, 0)

## Accumulated cost (µs) and frames, as EnvironmentInteractionStateMachine._get_profile().
var profile_query_usec := 0.0
var profile_logic_usec := 0.0
var profile_total_usec := 0.0
var profile_frames := 0

var _character: CharacterBody3D
var _skeleton: Skeleton3D
var _shoulder_bones := PackedInt32Array()
var _iks: Array = []
var _rest: Array[Transform3D] = []
var _volume_local := Transform3D.IDENTITY
var _query := PhysicsShapeQueryParameters3D.new()
var _ray := PhysicsRayQueryParameters3D.new()
var _shoulder_height := 1.45
var _waist_height := 0.875
var _bone_from_frame := Quaternion.IDENTITY
var _ready_ok := false

var _state := RESET
var _elapsed := 0.0
var _blend_time := 0.0
var _side := 0
var _tracked := 0
var _last_tracked := 0
var _has_closest := false
var _closest := Vector3.ZERO
var _has_normal := false
var _normal := Vector3.ZERO
var _height := 0.875
var _lowest := INF
var _lost := false
## Per side: target relative to the root (Transform3D), position weight, rotation weight.
var _targets: Array[Transform3D] = [Transform3D.IDENTITY, Transform3D.IDENTITY]
var _pw := PackedFloat32Array([0.0, 0.0])
var _rw := PackedFloat32Array([0.0, 0.0])
## Shape cache: collider instance id -> [body, [[half_extents, local Transform3D], ...]].
var _colliders := {}
var _cand_ids := PackedInt64Array()
var _cand_points := PackedVector3Array()


func _physics_process(delta: float) -> void:
	if not _ready_ok and not _setup():
		return
	var start := Time.get_ticks_usec()
	_frame(delta)
	profile_total_usec += Time.get_ticks_usec() - start
	profile_frames += 1


func _setup() -> bool:
	_character = get_parent() as CharacterBody3D
	_skeleton = _character.get_skeleton()
	_shoulder_bones = PackedInt32Array([_skeleton.find_bone("LeftUpperArm"), _skeleton.find_bone("RightUpperArm")])
	var to_char := _character.global_transform.affine_inverse() * _skeleton.global_transform
	_shoulder_height = 0.5 * ((to_char * _skeleton.get_bone_global_rest(_shoulder_bones[0]).origin).y \
		+ (to_char * _skeleton.get_bone_global_rest(_shoulder_bones[1]).origin).y)
	var shape_node := _character.get_node("CollisionShape3D") as CollisionShape3D
	var height: float = (shape_node.shape as CapsuleShape3D).height
	_waist_height = shape_node.position.y
	_height = _waist_height
	_volume_local = Transform3D(Basis(), shape_node.position + Vector3(0, 0.25 * height, -0.5 * height))
	var box := BoxShape3D.new()
	box.size = Vector3.ONE * height
	_query.shape = box
	_query.collision_mask = interactable_mask
	_query.exclude = [_character.get_rid()]
	_ray.collision_mask = interactable_mask
	_ray.exclude = [_character.get_rid()]
	_bone_from_frame = _hand_frame(palm_axis, finger_axis).inverse()
	_rest.clear()
	_targets.clear()
	for side in ["Left", "Right"]:
		var rest := to_char * _skeleton.get_bone_global_rest(_skeleton.find_bone(side + "Hand"))
		_rest.append(rest.orthonormalized())
		_targets.append(rest.orthonormalized())
		var ik := EntwineLimbIK.new()
		ik.upper_bone = side + "UpperArm"
		ik.lower_bone = side + "LowerArm"
		ik.end_bone = side + "Hand"
		ik.pole_direction = Vector3(-1.0 if side == "Left" else 1.0, -1.0, 0.5)
		ik.position_weight = 0.0
		ik.rotation_weight = 0.0
		ik.active = false
		_skeleton.add_child(ik)
		_iks.append(ik)
	_ready_ok = true
	return true


func _frame(dt: float) -> void:
	var root := _character.global_transform.orthonormalized()
	var space := get_world_3d().direct_space_state
	var resetting := _state == RESET and _elapsed + dt < reset_duration
	var q_start := Time.get_ticks_usec()
	if resetting and not queries_only:
		_cand_ids.resize(0)
		_cand_points.resize(0)
		_step_and_apply(dt, root, space)
		return
	_query.transform = _character.global_transform * _volume_local
	var hits := space.intersect_shape(_query, 32)
	profile_query_usec += Time.get_ticks_usec() - q_start
	if queries_only:
		var sh := root * Vector3(0.18, _shoulder_height, 0.0)
		q_start = Time.get_ticks_usec()
		_ray.from = sh
		_ray.to = sh + root.basis.x * normal_ray_length
		space.intersect_ray(_ray)
		profile_query_usec += Time.get_ticks_usec() - q_start
		return
	# Detection: cache shapes of new colliders, drop the ones that left.
	var seen := {}
	for hit in hits:
		var body := hit["collider"] as CollisionObject3D
		var id := body.get_instance_id()
		seen[id] = true
		if not _colliders.has(id):
			var shapes := []
			for owner in body.get_shape_owners():
				var local := body.shape_owner_get_transform(owner)
				for k in body.shape_owner_get_shape_count(owner):
					var s := body.shape_owner_get_shape(owner, k)
					if s is BoxShape3D:
						shapes.append([(s as BoxShape3D).size * 0.5, local])
			_colliders[id] = [body, shapes]
	for id in _colliders.keys():
		if not seen.has(id):
			_colliders.erase(id)
	var logic_start := Time.get_ticks_usec()
	var query_point := root.origin + Vector3.UP * _shoulder_height
	_cand_ids.resize(0)
	_cand_points.resize(0)
	for id in _colliders:
		var entry: Array = _colliders[id]
		var body := entry[0] as CollisionObject3D
		var best := Vector3.INF
		var best_d := INF
		for shape in entry[1]:
			var xf: Transform3D = body.global_transform * (shape[1] as Transform3D)
			var local := xf.affine_inverse() * query_point
			var h: Vector3 = shape[0]
			var p := xf * local.clamp(-h, h)
			var d := p.distance_squared_to(query_point)
			if d < best_d:
				best_d = d
				best = p
		if best_d < INF:
			_cand_ids.append(id)
			_cand_points.append(best)
	profile_logic_usec += Time.get_ticks_usec() - logic_start
	_step_and_apply(dt, root, space)


func _step_and_apply(dt: float, root: Transform3D, space: PhysicsDirectSpaceState3D) -> void:
	var q_start := 0
	var sk_xf := _skeleton.global_transform
	var shoulders := [sk_xf * _skeleton.get_bone_global_pose(_shoulder_bones[0]).origin,
		sk_xf * _skeleton.get_bone_global_pose(_shoulder_bones[1]).origin]
	var velocity := _character.get_real_velocity()
	var grounded := _character.is_on_floor()
	# The normal ray toward the tracked contact.
	var normal_in := Vector3.ZERO
	var has_normal_in := false
	if _has_closest and _state != RESET:
		var aim := _closest
		var k := _cand_ids.find(_tracked)
		if k >= 0:
			aim = _cand_points[k]
		var from: Vector3 = shoulders[_side]
		var dir := (aim - from).normalized()
		if dir != Vector3.ZERO:
			q_start = Time.get_ticks_usec()
			_ray.from = from
			_ray.to = from + dir * normal_ray_length
			var hit := space.intersect_ray(_ray)
			profile_query_usec += Time.get_ticks_usec() - q_start
			if hit.has("normal"):
				normal_in = hit["normal"]
				has_normal_in = true
	var step_start := Time.get_ticks_usec()
	_step(dt, root, shoulders, velocity, grounded, has_normal_in, normal_in)
	profile_logic_usec += Time.get_ticks_usec() - step_start
	for side in 2:
		var ik: EntwineLimbIK = _iks[side]
		var active := _pw[side] > 1e-4 or _rw[side] > 1e-4
		if ik.active != active:
			ik.active = active
		ik.target_transform = root * _targets[side]
		ik.position_weight = _pw[side]
		ik.rotation_weight = _rw[side]


func _step(dt: float, root: Transform3D, shoulders: Array, velocity: Vector3, grounded: bool,
		has_normal_in: bool, normal_in: Vector3) -> void:
	if has_normal_in:
		_normal = normal_in.normalized()
		_has_normal = true
	_track(root, shoulders)
	dt = clampf(dt, 0.0, 1.0)
	var remaining := dt
	var transitions := 0
	while true:
		if transitions < 8:
			var next := _next_state(root, shoulders, velocity, grounded)
			if next >= 0:
				_transition(next)
				transitions += 1
				if next == SEARCH:
					_track(root, shoulders)
				continue
		if remaining <= 0.0:
			break
		var until := _time_to_event()
		var step := minf(remaining, until) if until > TIME_EPSILON and transitions < 8 else remaining
		_update(step, root, shoulders)
		remaining -= step
		if remaining <= TIME_EPSILON * 0.01:
			remaining = 0.0


func _track(root: Transform3D, shoulders: Array) -> void:
	if _tracked != 0:
		var k := _cand_ids.find(_tracked)
		if k >= 0:
			_closest = _cand_points[k]
		else:
			_tracked = 0
			_has_closest = false
			if _state == APPROACH or _state == RISE or _state == TOUCH:
				_lost = true
	if _tracked != 0 or _state != SEARCH or _cand_ids.is_empty():
		return
	var query := root.origin + Vector3.UP * _shoulder_height
	var nearest := 0
	var nearest_d := INF
	for k in _cand_ids.size():
		var d := query.distance_to(_cand_points[k])
		if d < nearest_d:
			nearest_d = d
			nearest = k
	var chosen := nearest
	var sticky := _cand_ids.find(_last_tracked)
	if sticky >= 0 and query.distance_to(_cand_points[sticky]) <= nearest_d + side_switch_margin:
		chosen = sticky
	_tracked = _cand_ids[chosen]
	_last_tracked = _tracked
	_closest = _cand_points[chosen]
	_has_closest = true
	_has_normal = false
	_lowest = INF
	_side = 0 if _closest.distance_to(shoulders[0]) < _closest.distance_to(shoulders[1]) else 1


func _is_moving(velocity: Vector3) -> bool:
	return Vector3(move_input.x, 0, move_input.z).length() > STOPPED_EPSILON


func _next_state(root: Transform3D, shoulders: Array, velocity: Vector3, grounded: bool) -> int:
	var shoulder: Vector3 = shoulders[_side]
	match _state:
		RESET:
			return SEARCH if _elapsed >= reset_duration - TIME_EPSILON and _is_moving(velocity) else -1
		SEARCH:
			if _should_reset(root, shoulders, velocity, grounded):
				return RESET
			if _has_closest and _closest.distance_to(root.origin) < approach_distance:
				return APPROACH
		APPROACH:
			if _elapsed >= approach_duration - TIME_EPSILON:
				_lowest = INF
				return RESET
			if _should_reset(root, shoulders, velocity, grounded):
				return RESET
			if _has_closest and _closest.distance_to(shoulder) < rise_distance:
				return RISE
		RISE:
			if _should_reset(root, shoulders, velocity, grounded):
				return RESET
			if _has_closest:
				var goal := _surface_target(shoulder)
				var target: Vector3 = root * _targets[_side].origin
				if _elapsed >= touch_min_time - TIME_EPSILON and target.distance_to(goal) < touch_distance:
					return TOUCH
		TOUCH:
			if _elapsed >= touch_duration - TIME_EPSILON:
				_lowest = INF
				return RESET
			if _should_reset(root, shoulders, velocity, grounded):
				return RESET
	return -1


func _should_reset(root: Transform3D, shoulders: Array, velocity: Vector3, grounded: bool) -> bool:
	var reset := false
	if _lost:
		_lost = false
		reset = true
	elif not _is_moving(velocity):
		reset = true
	elif _is_moving_away(root):
		reset = true
	elif _is_invalid_angle(root, shoulders):
		reset = true
	elif velocity.y >= jump_speed or not grounded:
		reset = true
	if reset:
		_lowest = INF
	return reset


func _is_moving_away(root: Transform3D) -> bool:
	if _tracked == 0 or not _has_closest:
		return false
	var d := root.origin.distance_to(_closest)
	if d <= _lowest:
		_lowest = d
		return false
	if d > _lowest + moving_away_offset:
		_lowest = INF
		return true
	return false


func _is_invalid_angle(root: Transform3D, shoulders: Array) -> bool:
	if _tracked == 0 or not _has_closest:
		return false
	var to_target := (_closest - (shoulders[_side] as Vector3)).normalized()
	if to_target == Vector3.ZERO:
		return false
	var outward := root.basis.x if _side == 1 else -root.basis.x
	return outward.dot(to_target) < 0.0


func _time_to_event() -> float:
	var due := INF
	match _state:
		RESET: due = reset_duration
		APPROACH: due = approach_duration
		RISE: due = touch_min_time
		TOUCH: due = touch_duration
	var left := due - _elapsed
	return left if left > 0.0 else INF


func _transition(to: int) -> void:
	var from := _state
	_state = to
	_elapsed = 0.0
	if not (from == RISE and to == TOUCH):
		_blend_time = 0.0
	if to == RESET:
		_tracked = 0
		_has_closest = false
		_lost = false
		_lowest = INF


func _surface_target(shoulder: Vector3) -> Vector3:
	var dir := (shoulder - _closest).normalized()
	if dir == Vector3.ZERO and _has_normal:
		dir = _normal
	return _closest + dir * surface_offset


func _update(dt: float, root: Transform3D, shoulders: Array) -> void:
	var t0 := _blend_time
	var t1 := _blend_time + dt
	var side := _side
	var shoulder: Vector3 = shoulders[side]
	match _state:
		RESET:
			var a := _ramp(t0, t1, reset_blend_duration)
			_height = lerpf(_height, _waist_height, a)
			_pw[side] = lerpf(_pw[side], 0.0, a)
			_rw[side] = lerpf(_rw[side], 0.0, a)
			var t := _targets[side]
			var rest := _rest[side]
			var rot := _rotate_towards(t.basis.get_rotation_quaternion(), rest.basis.get_rotation_quaternion(),
				reset_rotation_speed * dt)
			_targets[side] = Transform3D(Basis(rot), t.origin.lerp(rest.origin, a))
		SEARCH:
			_follow_surface(root, shoulder)
		APPROACH:
			var a := _ramp(t0, t1, approach_blend_duration)
			var goal := _hand_rotation(Vector3.DOWN, -root.basis.z, root)
			_turn_hand(root, goal, approach_rotation_speed * dt)
			_pw[side] = lerpf(_pw[side], approach_weight, a)
			_rw[side] = lerpf(_rw[side], approach_rotation_weight, a)
			_follow_surface(root, shoulder)
		RISE, TOUCH:
			var a := _ramp(t0, t1, rise_blend_duration)
			if _has_closest:
				_height = lerpf(_height, _surface_target(shoulder).y - root.origin.y, a)
			_pw[side] = lerpf(_pw[side], rise_weight, a)
			_rw[side] = lerpf(_rw[side], rise_weight, a)
			if _has_normal:
				_turn_hand(root, _hand_rotation(-_normal, Vector3.UP, root), rise_rotation_speed * dt)
			_follow_surface(root, shoulder)
	var other := 1 - side
	var release := 1.0 - exp(-dt / 0.15)
	_pw[other] = lerpf(_pw[other], 0.0, release)
	_rw[other] = lerpf(_rw[other], 0.0, release)
	_elapsed += dt
	_blend_time = t1


func _follow_surface(root: Transform3D, shoulder: Vector3) -> void:
	if not _has_closest:
		return
	var goal := _surface_target(shoulder)
	var world := Vector3(goal.x, root.origin.y + _height, goal.z)
	var t := _targets[_side]
	_targets[_side] = Transform3D(t.basis, root.affine_inverse() * world)


func _turn_hand(root: Transform3D, goal: Quaternion, max_angle: float) -> void:
	var t := _targets[_side]
	var root_q := root.basis.get_rotation_quaternion()
	var world := (root_q * t.basis.get_rotation_quaternion()).normalized()
	var turned := _rotate_towards(world, goal, max_angle)
	_targets[_side] = Transform3D(Basis((root_q.inverse() * turned).normalized()), t.origin)


func _hand_rotation(palm: Vector3, finger: Vector3, root: Transform3D) -> Quaternion:
	var f := _hand_frame(palm, finger)
	return (f * _bone_from_frame).normalized()


func _hand_frame(primary: Vector3, secondary: Vector3) -> Quaternion:
	var x := primary.normalized()
	var y := (secondary - x * x.dot(secondary)).normalized()
	var z := x.cross(y).normalized()
	return Basis(x, y, z).get_rotation_quaternion()


func _rotate_towards(from: Quaternion, to: Quaternion, max_angle: float) -> Quaternion:
	var angle := from.angle_to(to)
	if angle <= 1e-6 or max_angle >= angle:
		return to
	return from.slerp(to, max_angle / angle)


func _ramp(t0: float, t1: float, duration: float) -> float:
	if duration <= 0.0 or t1 >= duration:
		return 1.0
	var e := REFERENCE_RATE_HZ * (t1 * t1 - t0 * t0) / (2.0 * duration)
	return 0.0 if e <= 0.0 else 1.0 - exp(-e)
