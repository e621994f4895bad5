extends SkeletonModifier3D
## The benchmark's baseline: EntwineLimbIK's two-bone solver written in GDScript, as a skeleton modifier with
## the same properties and the same steps (law of cosines in the bend plane, shortest-arc deltas,
## rotation blend). Used by `limb_ik_bench.gd` and `gd_hold_hand.gd` only.

@export var upper_bone := "LeftUpperArm"
@export var lower_bone := "LeftLowerArm"
@export var end_bone := "LeftHand"
@export var target_node: NodePath
@export var pole_direction := Vector3.ZERO
@export_range(0.0, 1.0) var position_weight := 1.0
@export_range(0.0, 1.0) var rotation_weight := 0.0

var _chain := PackedInt32Array()


func _process_modification_with_delta(_delta: float) -> void:
	var s := get_skeleton()
	if s == null:
		return
	if _chain.is_empty():
		_chain = PackedInt32Array([s.find_bone(upper_bone), s.find_bone(lower_bone), s.find_bone(end_bone)])
	if _chain[0] < 0 or _chain[1] < 0 or _chain[2] < 0:
		return
	var target_node_3d := get_node_or_null(target_node) as Node3D
	if target_node_3d == null:
		return
	var target := s.global_transform.affine_inverse() * target_node_3d.global_transform
	var u := s.get_bone_global_pose(_chain[0])
	var solved := solve(u, s.get_bone_global_pose(_chain[1]), s.get_bone_global_pose(_chain[2]), target,
		u.origin + pole_direction, position_weight, rotation_weight)
	if solved.is_empty():
		return
	for k in 3:
		s.set_bone_global_pose(_chain[k], solved[k])


## Returns [upper, lower, end] bent toward [param target] with the elbow toward [param pole], or an
## empty array when the chain is degenerate.
static func solve(u: Transform3D, l: Transform3D, e: Transform3D, target: Transform3D, pole: Vector3,
		position_weight: float, rotation_weight: float) -> Array[Transform3D]:
	var a := u.origin.distance_to(l.origin)
	var b := l.origin.distance_to(e.origin)
	if a < 1e-6 or b < 1e-6 or not target.origin.is_finite():
		return []
	var goal := e.origin.lerp(target.origin, clampf(position_weight, 0.0, 1.0))
	var to_goal := goal - u.origin
	var dist := to_goal.length()
	if dist < 1e-6:
		return []
	var dir := to_goal / dist
	var hint := pole - u.origin if pole != u.origin else l.origin - u.origin
	var bend := hint - dir * hint.dot(dir)
	if bend.length_squared() < 1e-10:
		bend = dir.cross(Vector3.RIGHT)
		if bend.length_squared() < 1e-10:
			bend = dir.cross(Vector3.FORWARD)
	bend = bend.normalized()
	var d := clampf(dist, absf(a - b) + 1e-5, a + b - 1e-5)
	var cos_u := clampf((a * a + d * d - b * b) / (2.0 * a * d), -1.0, 1.0)
	var elbow := u.origin + dir * (a * cos_u) + bend * (a * sqrt(1.0 - cos_u * cos_u))
	var hand := u.origin + dir * d
	var du := Quaternion((l.origin - u.origin).normalized(), (elbow - u.origin).normalized())
	var carried := du * (e.origin - l.origin)
	var dl := Quaternion(carried.normalized(), (hand - elbow).normalized())
	var hand_rot := (dl * du) * e.basis.get_rotation_quaternion()
	if rotation_weight > 0.0:
		hand_rot = hand_rot.slerp(target.basis.get_rotation_quaternion(), clampf(rotation_weight, 0.0, 1.0))
	return [Transform3D(Basis(du) * u.basis, u.origin), Transform3D(Basis(dl * du) * l.basis, elbow),
		Transform3D(Basis(hand_rot).scaled(e.basis.get_scale()), hand)]
