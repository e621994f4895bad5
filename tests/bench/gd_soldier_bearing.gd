extends SkeletonModifier3D
## The benchmark's baseline: EntwineSoldierBearing's look written in GDScript, as a skeleton modifier with
## the same steps (yaw and pitch from the head's animated forward, limits, a rate-limited look,
## cumulative chest/neck/head rotations written as global poses). Used by
## `soldier_bearing_bench.gd` only.

const YAW_LIMIT := deg_to_rad(100.0)
const PITCH_LIMIT := deg_to_rad(40.0)
const CHEST_SHARE := 0.15
const NECK_SHARE := 0.30

@export var head_bone := "Head"
@export var neck_bone := "Neck"
@export var chest_bone := "Chest"
@export var looking := true
@export var look_target := Vector3.ZERO
@export var turn_speed := deg_to_rad(180.0) ## rad/s, like EntwineSoldierBearing

var _bones := PackedInt32Array()
var _head_forward := Vector3.FORWARD
var _look := Vector2.ZERO


func _process_modification_with_delta(delta: float) -> void:
	var s := get_skeleton()
	if s == null:
		return
	if _bones.is_empty():
		_bones = PackedInt32Array([s.find_bone(chest_bone), s.find_bone(neck_bone), s.find_bone(head_bone)])
		_head_forward = s.get_bone_global_rest(_bones[2]).basis.orthonormalized().inverse() * Vector3.FORWARD
	if _bones[2] < 0:
		return
	var head := s.get_bone_global_pose(_bones[2])
	var forward := head.basis.orthonormalized() * _head_forward
	var desired := Vector2.ZERO
	if looking:
		desired = _angles(forward, s.global_transform.affine_inverse() * look_target - head.origin)
	desired = Vector2(clampf(desired.x, -YAW_LIMIT, YAW_LIMIT), clampf(desired.y, -PITCH_LIMIT, PITCH_LIMIT))
	_look = _look.move_toward(desired, turn_speed * delta)
	if _look == Vector2.ZERO:
		return
	var c0 := _rotation(forward, _look * CHEST_SHARE)
	var c1 := _rotation(forward, _look * (CHEST_SHARE + NECK_SHARE))
	var c2 := _rotation(forward, _look)
	var deltas := [c0, c1 * c0.inverse(), c2 * c1.inverse()]
	for k in 3:
		if _bones[k] < 0:
			continue
		var g := s.get_bone_global_pose(_bones[k])
		s.set_bone_global_pose(_bones[k], Transform3D(Basis(deltas[k] as Quaternion) * g.basis, g.origin))


static func _angles(f: Vector3, t: Vector3) -> Vector2:
	var fh := Vector3(f.x, 0.0, f.z)
	var th := Vector3(t.x, 0.0, t.z)
	if fh.length_squared() < 1e-8 or th.length_squared() < 1e-8:
		return Vector2.ZERO
	var yaw := atan2(Vector3.UP.dot(fh.cross(th)), fh.dot(th))
	var pitch := atan2(t.y, th.length()) - atan2(f.y, fh.length())
	return Vector2(yaw, pitch)


static func _rotation(f: Vector3, look: Vector2) -> Quaternion:
	var yaw := Quaternion(Vector3.UP, look.x)
	var right := f.cross(Vector3.UP)
	if right.length_squared() < 1e-12:
		return yaw
	return (yaw * Quaternion(right.normalized(), look.y)).normalized()
