extends SkeletonModifier3D
## For `limb_ik_bench.gd` and `soldier_bearing_bench.gd`: a modifier that only reads some bones'
## rotations, or only writes them (fixed rotations, no other work). The two differ by what the
## skeleton does once a modifier has moved those bones: the least any modifier that moves them pays
## on top of its own work (an arm IK: an arm's three bones; a saluting soldier: the chest, neck and
## head it turns and the arm it raises).

var bones := PackedInt32Array()
var rotations: Array[Quaternion] = []
var writes := false


## Returns a modifier on [param skeleton]'s bones named [param names] that only writes (with
## [param write]) or only reads their rotations; the rotations written are fixed, each turned from
## its bone's rest so that writing it moves the bone. Null (with an error naming it) when the
## skeleton has no bone of one of those names.
static func on_bones(skeleton: Skeleton3D, names: Array, write: bool) -> SkeletonModifier3D:
	var pose: SkeletonModifier3D = load("res://tests/bench/gd_bone_pose.gd").new()
	pose.writes = write
	for bone_name in names:
		var index := skeleton.find_bone(bone_name)
		if index < 0:
			push_error("the skeleton %s has no bone named %s" % [skeleton.name, bone_name])
			pose.free()
			return null
		pose.bones.append(index)
		pose.rotations.append(skeleton.get_bone_rest(index).basis.get_rotation_quaternion()
			* Quaternion(Vector3.RIGHT, 0.2))
	return pose


func _process_modification_with_delta(_delta: float) -> void:
	var skeleton := get_skeleton()
	if writes:
		for i in bones.size():
			skeleton.set_bone_pose_rotation(bones[i], rotations[i])
	else:
		for i in bones.size():
			rotations[i] = skeleton.get_bone_pose_rotation(bones[i])
