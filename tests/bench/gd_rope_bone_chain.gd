extends SkeletonModifier3D
## The benchmark's baseline: EntwineRopeBoneChain's algorithm (stretch fit, parallel-transport frames, local
## poses written parent first) written in GDScript. It leaves out what only matters for bad input or
## folded ropes (warnings, the fold's twist memory), so it is a lower bound on a GDScript version's cost.

var rope: RopeSimulation
var _bones := PackedInt32Array()
var _axis: Array[Vector3] = []
var _rest_relative: Array[Quaternion] = []
var _cumulative := PackedFloat32Array()
var _positions := PackedVector3Array()


## Resolves the chain [param root] → [param tip] of [param skeleton].
func setup(skeleton: Skeleton3D, root: String, tip: String) -> void:
	var r := skeleton.find_bone(root)
	var b := skeleton.find_bone(tip)
	var chain: Array[int] = []
	while b != r and b >= 0:
		chain.push_front(b)
		b = skeleton.get_bone_parent(b)
	chain.push_front(r)
	_bones = PackedInt32Array(chain)
	var n := _bones.size()
	var rests: Array[Transform3D] = []
	for bone in _bones:
		rests.append(skeleton.get_bone_global_rest(bone))
	for i in n:
		var dir := (rests[i + 1].origin - rests[i].origin) if i + 1 < n else (rests[i].origin - rests[i - 1].origin)
		var q := rests[i].basis.get_rotation_quaternion()
		_axis.append((q.inverse() * dir).normalized())
		_rest_relative.append(Quaternion.IDENTITY if i == 0 else rests[i - 1].basis.get_rotation_quaternion().inverse() * q)
	_positions.resize(n)


static func _arc(from: Vector3, to: Vector3) -> Quaternion:
	var d := from.dot(to)
	if d < -0.999999:
		var axis := from.cross(Vector3.RIGHT)
		if axis.length_squared() < 1e-12:
			axis = from.cross(Vector3.UP)
		axis = axis.normalized()
		return Quaternion(axis.x, axis.y, axis.z, 0.0)
	var c := from.cross(to)
	return Quaternion(c.x, c.y, c.z, 1.0 + d).normalized()


func _process_modification_with_delta(_delta: float) -> void:
	var skeleton := get_skeleton()
	var points := rope.get_interpolated_points()
	var count := points.size()
	if count < 2:
		return
	var to_skeleton := skeleton.global_transform.affine_inverse()
	_cumulative.resize(count)
	_cumulative[0] = 0.0
	points[0] = to_skeleton * points[0]
	for i in range(1, count):
		points[i] = to_skeleton * points[i]
		_cumulative[i] = _cumulative[i - 1] + points[i].distance_to(points[i - 1])
	var total := _cumulative[count - 1]
	var n := _bones.size()
	var seg := 0
	for i in n:
		var s := total * i / float(n - 1)
		while seg + 2 < count and _cumulative[seg + 1] < s:
			seg += 1
		var length := _cumulative[seg + 1] - _cumulative[seg]
		var t := clampf((s - _cumulative[seg]) / length, 0.0, 1.0) if length > 0.0 else 0.0
		_positions[i] = points[seg].lerp(points[seg + 1], t)
	var reference := skeleton.get_bone_global_pose(_bones[0])
	var frame := reference.basis.get_rotation_quaternion()
	var parent_bone := skeleton.get_bone_parent(_bones[0])
	var parent := skeleton.get_bone_global_pose(parent_bone) if parent_bone >= 0 else Transform3D.IDENTITY
	var dir := frame * _axis[0]
	for i in n:
		var start := frame if i == 0 else frame * _rest_relative[i]
		if i + 1 < n:
			var chord := _positions[i + 1] - _positions[i]
			if chord.length() > 1e-6:
				dir = chord.normalized()
		var solved := (_arc(start * _axis[i], dir) * start).normalized()
		var scale := skeleton.get_bone_global_pose(_bones[i]).basis.get_scale()
		var global := Transform3D(Basis(solved) * Basis.from_scale(scale), _positions[i])
		var local := parent.affine_inverse() * global
		skeleton.set_bone_pose_position(_bones[i], local.origin)
		skeleton.set_bone_pose_rotation(_bones[i], local.basis.get_rotation_quaternion())
		parent = global
		frame = solved
