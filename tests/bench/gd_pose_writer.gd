extends SkeletonModifier3D
## A modifier that writes every bone's rest position and rotation back, with no other work: the cost
## floor of any modifier that poses a chain (engine calls plus the skeleton update they cause).


func _process_modification_with_delta(_delta: float) -> void:
	var skeleton := get_skeleton()
	for bone in skeleton.get_bone_count():
		var rest := skeleton.get_bone_rest(bone)
		skeleton.set_bone_pose_position(bone, rest.origin)
		skeleton.set_bone_pose_rotation(bone, rest.basis.get_rotation_quaternion())
