extends Node
## The `hold_hand` benchmark's baseline: HoldHandComponent's per-frame pair work written in GDScript
## (follow spring with MoveTowards, shared contact from two reach spheres with the seed's four cases,
## SmoothDamp, hysteresis, weight fades, animation mirroring) driving two `gd_limb_ik.gd` modifiers.
## It has no lifecycle or networking: it starts paired. Used by `hold_hand_bench.gd` only.

const GD_IK := preload("res://tests/bench/gd_limb_ik.gd")

var initiator: TestCharacter
var recipient: TestCharacter
var follow_offset := Vector3(-0.82, 0, 0.17)
var spring := 16.0
var min_speed := 12.0
var max_speed := 24.0
var stop_radius := 0.02
var smooth_time := 0.08
var reconnect := 1.1
var disconnect := 1.51
var fade_in := 0.15
var fade_out := 0.1

var _driven := Vector3.ZERO
var _has_driven := false
var _contact := Vector3.ZERO
var _velocity := Vector3.ZERO
var _has_contact := false
var _connected := -1
var _weight := 0.0
var _ik_a: SkeletonModifier3D
var _ik_b: SkeletonModifier3D
var _target_a := Node3D.new()
var _target_b := Node3D.new()
var _params: Array[StringName] = []


func _ready() -> void:
	process_physics_priority = 10
	add_child(_target_a)
	add_child(_target_b)
	_ik_a = _make_ik(initiator, "Left", _target_a, -0.7)
	_ik_b = _make_ik(recipient, "Right", _target_b, 0.7)
	recipient.frozen = true
	recipient.set_physics_process(false)
	for p in initiator.animation_tree.get_property_list():
		var n: String = p["name"]
		if n.begins_with("parameters/") and n != "parameters/arms/blend_amount":
			_params.append(StringName(n))


func _make_ik(c: TestCharacter, side: String, target: Node3D, out: float) -> SkeletonModifier3D:
	var ik: SkeletonModifier3D = GD_IK.new()
	ik.upper_bone = side + "UpperArm"
	ik.lower_bone = side + "LowerArm"
	ik.end_bone = side + "Hand"
	ik.pole_direction = Vector3(out, -0.5, 1.0)
	c.get_skeleton().add_child(ik)
	ik.target_node = ik.get_path_to(target)
	return ik


func _physics_process(delta: float) -> void:
	var me := initiator.global_transform
	# Follow.
	var target := me * follow_offset
	if not _has_driven:
		_driven = target
		_has_driven = true
	var d := _driven.distance_to(target)
	if d <= stop_radius:
		_driven = target
	else:
		_driven = _driven.move_toward(target, clampf(spring * d, min_speed, max_speed) * delta)
	recipient.velocity = (_driven - recipient.global_position) / delta
	recipient.move_and_slide()
	recipient.velocity = Vector3.ZERO
	recipient.global_basis = me.basis
	# Mirror the animation.
	var src := initiator.animation_tree
	var dst := recipient.animation_tree
	for p in _params:
		dst.set(p, src.get(p))
	# Contact.
	var sa := initiator.get_skeleton()
	var sb := recipient.get_skeleton()
	var ha: Vector3 = sa.global_transform * sa.get_bone_global_pose(sa.find_bone("LeftHand")).origin
	var hb: Vector3 = sb.global_transform * sb.get_bone_global_pose(sb.find_bone("RightHand")).origin
	var ua: Vector3 = sa.global_transform * sa.get_bone_global_pose(sa.find_bone("LeftUpperArm")).origin
	var ub: Vector3 = sb.global_transform * sb.get_bone_global_pose(sb.find_bone("RightUpperArm")).origin
	var preferred := (ha + hb) * 0.5
	var goal := _constrain(preferred, ua, 0.54, ub, 0.54)
	if not _has_contact:
		_contact = goal
		_has_contact = true
	_contact = _smooth_damp(_contact, goal, delta)
	_contact = _constrain(_contact, ua, 0.54, ub, 0.54)
	# Hysteresis and fades.
	var root_d := me.origin.distance_to(recipient.global_position)
	var on := root_d <= disconnect if _connected != 0 else root_d <= reconnect
	_connected = 1 if on else 0
	var wanted := 1.0 if on else 0.0
	var duration := fade_in if wanted > _weight else fade_out
	_weight = move_toward(_weight, wanted, delta / duration)
	_target_a.global_position = _contact
	_target_b.global_position = _contact
	_ik_a.position_weight = _weight
	_ik_b.position_weight = _weight


func _constrain(p: Vector3, ca: Vector3, la: float, cb: Vector3, lb: float) -> Vector3:
	if p.distance_to(ca) <= la and p.distance_to(cb) <= lb:
		return p
	var axis := cb - ca
	var dist := axis.length()
	if dist > la + lb:
		return ca + axis * (la / (la + lb))
	var pa := ca + (p - ca).normalized() * la
	var pb := cb + (p - cb).normalized() * lb
	var a_ok := pa.distance_to(cb) <= lb
	var b_ok := pb.distance_to(ca) <= la
	if a_ok and (not b_ok or pa.distance_squared_to(p) <= pb.distance_squared_to(p)):
		return pa
	if b_ok:
		return pb
	var n := axis / dist
	var x := (dist * dist + la * la - lb * lb) / (2.0 * dist)
	var rho := sqrt(maxf(0.0, la * la - x * x))
	var c := ca + n * x
	var on_plane := p - n * (p - c).dot(n)
	var radial := on_plane - c
	if radial.length() > rho:
		return c + radial.normalized() * rho
	return on_plane


func _smooth_damp(current: Vector3, target: Vector3, dt: float) -> Vector3:
	var omega := 2.0 / smooth_time
	var x := omega * dt
	var decay := 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x)
	var change := current - target
	var temp := (_velocity + omega * change) * dt
	_velocity = (_velocity - omega * temp) * decay
	var output := target + (change + temp) * decay
	if (target - current).dot(output - target) > 0.0:
		output = target
		_velocity = Vector3.ZERO
	return output
