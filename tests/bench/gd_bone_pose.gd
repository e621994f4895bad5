extends SkeletonModifier3D
## For `limb_ik_bench.gd` and `soldier_bearing_bench.gd`: a modifier that only reads some bones'
## rotations, or only writes them (fixed rotations, no other work). The two differ by what the
## skeleton does once a modifier has moved those bones: the least any modifier that moves them pays
## on top of its own work (an arm IK: an arm's three bones; a saluting soldier: the chest, neck and
## head it turns and the arm it raises).

var bones := PackedInt32Array()
var rotations: Array[Quaternion] = []
var writes := false


func _process_modification_with_delta(_delta: float) -> void:
	var skeleton := get_skeleton()
	if writes:
		for i in bones.size():
			skeleton.set_bone_pose_rotation(bones[i], rotations[i])
	else:
		for i in bones.size():
			rotations[i] = skeleton.get_bone_pose_rotation(bones[i])
