# timeout: 300
extends EntwineTest

const MODEL := "res://assets/characters/cesium_man/CesiumMan.glb"

func test_probe() -> void:
	var root := GltfModel.instantiate(MODEL)
	var holder := add(Node3D.new()) as Node3D
	holder.add_child(root)
	var sk := GltfModel.skeleton(root)
	print("skeleton path ", sk.get_path(), " bones ", sk.get_bone_count(), " global ", sk.global_transform)
	for i in sk.get_bone_count():
		print(i, " ", sk.get_bone_name(i), " parent ", sk.get_bone_parent(i), " rest ", sk.get_bone_global_rest(i).origin, " ", sk.get_bone_global_rest(i).basis.get_euler())
	var d := HumanoidRig.describe(sk)
	print(d)
	await frames(2)
	print("bounds ", GltfModel.skinned_bounds(root))
	var ap := GltfModel.animation_player(root)
	print("anims ", ap.get_animation_list() if ap else [])
	root.print_tree_pretty()
