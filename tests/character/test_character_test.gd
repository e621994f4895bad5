extends EntwineTest
## The procedural TestCharacter: its humanoid skeleton and rest pose, its animations and AnimationTree,
## and how it walks, turns and freezes on a floor.

const CHARACTER_SCENE := preload("res://characters/test_character.tscn")
const CHARACTER_SCRIPT := preload("res://characters/test_character.gd")

const EXPECTED_BONES := [
	"Root", "Hips", "Spine", "Chest", "UpperChest", "Neck", "Head",
	"LeftShoulder", "LeftUpperArm", "LeftLowerArm", "LeftHand",
	"RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",
	"LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "LeftToes",
	"RightUpperLeg", "RightLowerLeg", "RightFoot", "RightToes",
]
const EXPECTED_PARENTS := {
	"Hips": "Root", "Spine": "Hips", "Chest": "Spine", "UpperChest": "Chest",
	"Neck": "UpperChest", "Head": "Neck",
	"LeftShoulder": "UpperChest", "LeftUpperArm": "LeftShoulder",
	"LeftLowerArm": "LeftUpperArm", "LeftHand": "LeftLowerArm",
	"RightShoulder": "UpperChest", "RightUpperArm": "RightShoulder",
	"RightLowerArm": "RightUpperArm", "RightHand": "RightLowerArm",
	"LeftUpperLeg": "Hips", "LeftLowerLeg": "LeftUpperLeg",
	"LeftFoot": "LeftLowerLeg", "LeftToes": "LeftFoot",
	"RightUpperLeg": "Hips", "RightLowerLeg": "RightUpperLeg",
	"RightFoot": "RightLowerLeg", "RightToes": "RightFoot",
}
## bone -> child its +Y must point at (rest).
const CHAIN := {
	"Hips": "Spine", "Spine": "Chest", "Chest": "UpperChest", "UpperChest": "Neck",
	"Neck": "Head", "LeftShoulder": "LeftUpperArm", "LeftUpperArm": "LeftLowerArm",
	"LeftLowerArm": "LeftHand", "RightShoulder": "RightUpperArm",
	"RightUpperArm": "RightLowerArm", "RightLowerArm": "RightHand",
	"LeftUpperLeg": "LeftLowerLeg", "LeftLowerLeg": "LeftFoot", "LeftFoot": "LeftToes",
	"RightUpperLeg": "RightLowerLeg", "RightLowerLeg": "RightFoot", "RightFoot": "RightToes",
}


## A 20x1x20 floor whose top is at y = 0 and a TestCharacter from the scene standing on it at the origin,
## both freed after the test.
func _spawn() -> TestCharacter:
	add_floor(null, 20.0)
	var ch := CHARACTER_SCENE.instantiate() as TestCharacter
	ch.position = Vector3.ZERO
	add(ch)
	await frames(2)
	return ch


## Model-space rest transform of every bone of [constant EXPECTED_BONES].
func _rest(sk: Skeleton3D) -> Dictionary:
	var rest := {}
	for b in EXPECTED_BONES:
		var i := sk.find_bone(b)
		rest[b] = sk.get_bone_global_rest(i) if i >= 0 else Transform3D()
	return rest


## Degrees between a bone's current pose rotation and its rest rotation.
func _deviation_from_rest_deg(sk: Skeleton3D, bone: int) -> float:
	var q := sk.get_bone_pose_rotation(bone)
	return rad_to_deg(q.angle_to(sk.get_bone_rest(bone).basis.get_rotation_quaternion()))


## Walks [param ch] along [param direction] for [param n] physics frames.
func _walk(ch: TestCharacter, direction: Vector3, n: int) -> void:
	ch.move_input = direction
	await physics_frames(n)


func _correlation(a: Array[float], b: Array[float]) -> float:
	var n := mini(a.size(), b.size())
	if n < 2:
		return 0.0
	var ma := 0.0
	var mb := 0.0
	for i in n:
		ma += a[i]
		mb += b[i]
	ma /= n
	mb /= n
	var sab := 0.0
	var saa := 0.0
	var sbb := 0.0
	for i in n:
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	if saa <= 0.0 or sbb <= 0.0:
		return 0.0
	return sab / sqrt(saa * sbb)


func test_scene_root_is_a_character_body_with_a_capsule() -> void:
	var node := CHARACTER_SCENE.instantiate()
	add(node)
	check(node is CharacterBody3D, "the scene root is a CharacterBody3D", "CharacterBody3D", node.get_class())
	check(node.get_script() == CHARACTER_SCRIPT, "the scene root runs test_character.gd",
		"res://characters/test_character.gd", node.get_script())
	check(node.name == &"TestCharacter", "the scene root is named TestCharacter", "TestCharacter", node.name)
	var ch := node as TestCharacter
	if ch == null:
		return
	var sk := ch.get_skeleton()
	check(sk != null and sk.name == &"Skeleton3D", "get_skeleton() returns the child Skeleton3D", "Skeleton3D",
		sk.name if sk != null else &"null")
	var cs := ch.get_node_or_null(^"CollisionShape3D") as CollisionShape3D
	if not check(cs != null and cs.shape is CapsuleShape3D, "the collision shape is a CapsuleShape3D",
			"CapsuleShape3D", cs.shape if cs != null else null):
		return
	var capsule := cs.shape as CapsuleShape3D
	check_near(capsule.height, 1.75, 1e-4, "the capsule is 1.75 m tall")
	check_near(capsule.radius, 0.25, 1e-4, "the capsule radius is 0.25 m")
	check_near(cs.position.y, 0.875, 1e-4, "the capsule is centred 0.875 m up")
	check(TestCharacter.HEIGHT == 1.75, "TestCharacter.HEIGHT is 1.75 m", 1.75, TestCharacter.HEIGHT)


func test_bones_follow_the_humanoid_profile() -> void:
	var ch := await _spawn()
	var sk := ch.get_skeleton()
	for b in EXPECTED_BONES:
		check(sk.find_bone(b) >= 0, "the skeleton has a bone named %s" % b, "index >= 0", sk.find_bone(b))
	for b in EXPECTED_PARENTS:
		var i := sk.find_bone(b)
		var p := sk.get_bone_parent(i) if i >= 0 else -2
		var parent_name: String = sk.get_bone_name(p) if p >= 0 else "(none)"
		check(p >= 0 and parent_name == EXPECTED_PARENTS[b], "the parent of %s is %s" % [b, EXPECTED_PARENTS[b]],
			EXPECTED_PARENTS[b], parent_name)
	var rest := _rest(sk)
	for b in CHAIN:
		var parent_t: Transform3D = rest[b]
		var child_local: Vector3 = parent_t.affine_inverse() * (rest[CHAIN[b]] as Transform3D).origin
		var dot := child_local.normalized().dot(Vector3.UP)
		check(dot > 0.999, "at rest the +Y axis of %s points at %s" % [b, CHAIN[b]],
			"dot with the direction to the child > 0.999", dot)
	for b in EXPECTED_BONES:
		var basis: Basis = (rest[b] as Transform3D).basis
		check_near(basis.determinant(), 1.0, 1e-4, "the rest basis of %s has determinant 1 (no mirroring or scale)" % b)
		check(basis.is_conformal(), "the rest basis of %s is a pure rotation (conformal)" % b, true, basis)


func test_proportions_are_adult() -> void:
	var ch := await _spawn()
	var rest := _rest(ch.get_skeleton())
	for side in ["Left", "Right"]:
		var shoulder: Vector3 = rest[side + "UpperArm"].origin
		var elbow: Vector3 = rest[side + "LowerArm"].origin
		var wrist: Vector3 = rest[side + "Hand"].origin
		check_near(shoulder.y, 1.45, 0.04, "the %s shoulder joint is ~1.45 m up" % side.to_lower())
		check_near(shoulder.distance_to(elbow), 0.28, 0.01, "the %s upper arm is ~0.28 m long" % side.to_lower())
		check_near(elbow.distance_to(wrist), 0.26, 0.01, "the %s forearm is ~0.26 m long" % side.to_lower())
	check_near(rest["LeftUpperLeg"].origin.y, 0.9, 0.05, "the hip joint is ~0.9 m up")
	var head: Vector3 = ch.bone_global_position("Head")
	check(head.y >= 1.55 and head.y <= 1.75, "the head bone stands 1.55–1.75 m above the floor", "1.55..1.75", head.y)


func test_left_is_minus_x_and_front_is_minus_z() -> void:
	var ch := await _spawn()
	var lh := ch.bone_global_position("LeftHand")
	var rh := ch.bone_global_position("RightHand")
	check(lh.x < 0.0, "the left hand is on the character's left (-X)", "x < 0", lh.x)
	check(rh.x > 0.0, "the right hand is on the character's right (+X)", "x > 0", rh.x)
	var ll := ch.bone_global_position("LeftUpperLeg")
	var rl := ch.bone_global_position("RightUpperLeg")
	check(ll.x < 0.0 and rl.x > 0.0, "the left leg is on -X and the right leg on +X", "left x < 0 < right x",
		"left %.3f, right %.3f" % [ll.x, rl.x])
	var head := ch.bone_global_position("Head")
	var eye := ch.bone_global_position("LeftEye")
	check(eye.z < head.z, "the eyes are in front of the head (-Z)", "< %.3f" % head.z, eye.z)


func test_arm_rest_pose_is_an_a_pose_with_bent_elbows() -> void:
	var ch := await _spawn()
	var rest := _rest(ch.get_skeleton())
	var shoulder_l: Vector3 = rest["LeftUpperArm"].origin
	var elbow_l: Vector3 = rest["LeftLowerArm"].origin
	var wrist_l: Vector3 = rest["LeftHand"].origin
	var shoulder_r: Vector3 = rest["RightUpperArm"].origin
	var elbow_r: Vector3 = rest["RightLowerArm"].origin
	var up_dir_l := (elbow_l - shoulder_l).normalized()
	var abduction := rad_to_deg(up_dir_l.angle_to(Vector3.DOWN))
	check(abduction >= 8.0 and abduction <= 17.0, "the left upper arm hangs 8–17° out from straight down",
		"8..17°", abduction)
	check(up_dir_l.x < 0.0, "the left upper arm hangs outward (-X)", "x < 0", up_dir_l.x)
	var up_dir_r := (elbow_r - shoulder_r).normalized()
	check(up_dir_r.x > 0.0, "the right upper arm hangs outward (+X)", "x > 0", up_dir_r.x)
	check_near(rad_to_deg(up_dir_r.angle_to(Vector3.DOWN)), abduction, 0.1,
		"the right upper arm hangs out as far as the left (mirrored)")
	var fore_dir_l := (wrist_l - elbow_l).normalized()
	var elbow_bend := rad_to_deg(up_dir_l.angle_to(fore_dir_l))
	check(elbow_bend >= 5.0 and elbow_bend <= 20.0, "the left elbow is bent 5–20°", "5..20°", elbow_bend)
	check(wrist_l.z < elbow_l.z, "the left elbow bends forward (wrist in front of the elbow, -Z)",
		"< %.3f" % elbow_l.z, wrist_l.z)


func test_animations_loop_and_animate_legs_and_arms() -> void:
	var ch := await _spawn()
	var ap := ch.get_node_or_null(^"AnimationPlayer") as AnimationPlayer
	if not check(ap != null and ap.has_animation(&"idle") and ap.has_animation(&"walk"),
			"an AnimationPlayer child has the animations idle and walk", "idle, walk",
			str(ap.get_animation_list()) if ap != null else "no AnimationPlayer"):
		return
	var walk := ap.get_animation(&"walk")
	var idle := ap.get_animation(&"idle")
	check(walk.loop_mode == Animation.LOOP_LINEAR, "walk loops", Animation.LOOP_LINEAR, walk.loop_mode)
	check_near(walk.length, 1.0, 1e-4, "walk lasts 1.0 s")
	check(idle.loop_mode == Animation.LOOP_LINEAR, "idle loops", Animation.LOOP_LINEAR, idle.loop_mode)
	check_near(idle.length, 2.0, 1e-4, "idle lasts 2.0 s")
	check(walk.find_track(^"Skeleton3D:LeftUpperLeg", Animation.TYPE_ROTATION_3D) >= 0,
		"walk has a rotation track for Skeleton3D:LeftUpperLeg", "track index >= 0",
		walk.find_track(^"Skeleton3D:LeftUpperLeg", Animation.TYPE_ROTATION_3D))
	check(walk.find_track(^"Skeleton3D:RightUpperArm", Animation.TYPE_ROTATION_3D) >= 0,
		"walk has a rotation track for Skeleton3D:RightUpperArm", "track index >= 0",
		walk.find_track(^"Skeleton3D:RightUpperArm", Animation.TYPE_ROTATION_3D))


func test_animation_tree_parameters() -> void:
	var ch := await _spawn()
	var at := ch.get_node_or_null(^"AnimationTree") as AnimationTree
	if not check(at != null, "the character has an AnimationTree child", "AnimationTree", null):
		return
	check(at.active, "the AnimationTree is active", true, at.active)
	check(at.tree_root is AnimationNodeBlendTree, "the AnimationTree root is an AnimationNodeBlendTree",
		"AnimationNodeBlendTree", at.tree_root)
	check(at.get(&"parameters/move/blend_amount") != null, "parameter parameters/move/blend_amount exists",
		"a value", at.get(&"parameters/move/blend_amount"))
	check(at.get(&"parameters/speed/scale") != null, "parameter parameters/speed/scale exists",
		"a value", at.get(&"parameters/speed/scale"))
	var arms: Variant = at.get(&"parameters/arms/blend_amount")
	if check(arms != null, "parameter parameters/arms/blend_amount exists", "a value", arms):
		check_near(float(arms), 1.0, 1e-6, "parameters/arms/blend_amount defaults to 1 (arms animated)")


func test_walking_moves_and_animates() -> void:
	var ch := await _spawn()
	var at := ch.animation_tree
	var start := ch.global_position
	var foot_rel0 := ch.global_transform.basis.inverse() * (ch.bone_global_position("LeftFoot") - ch.bone_global_position("Hips"))
	var max_foot_dev := 0.0
	var non_finite: Array[String] = []
	var foot_z: Array[float] = []
	var hand_z: Array[float] = []
	var max_knee := 0.0
	ch.move_input = Vector3(0.0, 0.0, -1.0)
	for i in 60:
		await physics_frame
		var inv_basis := ch.global_transform.basis.inverse()
		var hips_p := ch.bone_global_position("Hips")
		var foot_rel := inv_basis * (ch.bone_global_position("LeftFoot") - hips_p)
		max_foot_dev = maxf(max_foot_dev, foot_rel.distance_to(foot_rel0))
		if i >= 30: # walk fully blended in
			foot_z.append(foot_rel.z)
			hand_z.append((inv_basis * (ch.bone_global_position("LeftHand") - hips_p)).z)
			var hip_p := ch.bone_global_position("LeftUpperLeg")
			var knee_p := ch.bone_global_position("LeftLowerLeg")
			var ankle_p := ch.bone_global_position("LeftFoot")
			max_knee = maxf(max_knee, rad_to_deg((knee_p - hip_p).angle_to(ankle_p - knee_p)))
		for b in EXPECTED_BONES:
			if not ch.bone_global_position(b).is_finite():
				non_finite.append("%s at frame %d" % [b, i])
		if not ch.global_position.is_finite() or not ch.velocity.is_finite():
			non_finite.append("body at frame %d" % i)
	var moved := ch.global_position - start
	check(moved.z <= -0.5, "walking -Z for 60 frames moves at least 0.5 m toward -Z", "dz <= -0.5", moved.z)
	check(absf(moved.x) < 0.05, "walking -Z does not drift sideways", "|dx| < 0.05", moved.x)
	check(absf(ch.global_position.y) < 0.05, "the character stays at floor height while walking", "|y| < 0.05",
		ch.global_position.y)
	check(ch.is_on_floor(), "the character stays on the floor while walking", true, ch.is_on_floor())
	var fwd := -ch.global_transform.basis.z
	check(fwd.dot(Vector3(0, 0, -1)) > 0.99, "the character faces -Z while walking -Z", "dot > 0.99",
		fwd.dot(Vector3(0, 0, -1)))
	check(max_foot_dev >= 0.03, "the left foot moves at least 3 cm relative to the hips", ">= 0.03 m", max_foot_dev)
	var blend := float(at.get(&"parameters/move/blend_amount"))
	check(blend > 0.9, "the move blend is near 1 (walk) while walking", "> 0.9", blend)
	check(non_finite.is_empty(), "no bone position or velocity becomes NaN/inf while walking", "[]", non_finite)
	var corr := _correlation(foot_z, hand_z)
	check(corr < -0.5, "the left arm swings opposite to the left leg", "correlation < -0.5", corr)
	check(max_knee > 20.0, "the left knee bends more than 20° while walking", "> 20°", max_knee)


func test_arms_layer_zero_keeps_the_arms_at_rest_while_walking() -> void:
	var ch := await _spawn()
	var sk := ch.get_skeleton()
	var at := ch.animation_tree
	await _walk(ch, Vector3(0.0, 0.0, -1.0), 60)
	at.set(&"parameters/arms/blend_amount", 0.0)
	await physics_frames(3)
	var sh_idx := sk.find_bone("LeftUpperArm")
	var max_arm_dev := 0.0
	for i in 20:
		await physics_frame
		max_arm_dev = maxf(max_arm_dev, _deviation_from_rest_deg(sk, sh_idx))
	check(max_arm_dev < 0.5, "with arms/blend_amount = 0 LeftUpperArm stays at rest while walking", "< 0.5°",
		max_arm_dev)
	at.set(&"parameters/arms/blend_amount", 1.0)
	var max_arm_dev1 := 0.0
	for i in 30:
		await physics_frame
		max_arm_dev1 = maxf(max_arm_dev1, _deviation_from_rest_deg(sk, sh_idx))
	check(max_arm_dev1 > 10.0, "with arms/blend_amount = 1 LeftUpperArm swings more than 10° while walking",
		"> 10°", max_arm_dev1)
	# Legs kept walking throughout (walk_no_arms feeds the non-arm tracks).
	var head_y := ch.bone_global_position("Head").y
	check(head_y > 1.5, "the head stays above 1.5 m while the arm layer changes", "> 1.5", head_y)


func test_turning_faces_the_move_direction() -> void:
	var ch := await _spawn()
	await _walk(ch, Vector3(0.0, 0.0, -1.0), 30)
	var start := ch.global_position
	await _walk(ch, Vector3(1.0, 0.0, 0.0), 60)
	var fwd := -ch.global_transform.basis.z
	check(fwd.dot(Vector3(1, 0, 0)) > 0.98, "within 60 frames of moving +X the character faces +X",
		"dot > 0.98", fwd)
	check(ch.global_position.x - start.x > 0.5, "moving +X for 60 frames covers more than 0.5 m toward +X",
		"dx > 0.5", ch.global_position.x - start.x)
	# Facing +X, the character's left is -Z.
	var lh := ch.bone_global_position("LeftHand")
	var rh := ch.bone_global_position("RightHand")
	check(lh.z < ch.global_position.z and rh.z > ch.global_position.z,
		"facing +X the left hand is on the -Z side and the right hand on the +Z side",
		"left z < %.3f < right z" % ch.global_position.z, "left %.3f, right %.3f" % [lh.z, rh.z])


func test_frozen_character_stays_put() -> void:
	var ch := await _spawn()
	await _walk(ch, Vector3(1.0, 0.0, 0.0), 30)
	ch.frozen = true
	await physics_frame
	var frozen_pos := ch.global_position
	await physics_frames(20)
	check(ch.global_position.distance_to(frozen_pos) < 1e-5, "a frozen character does not move despite its move input",
		frozen_pos, ch.global_position)
	check(ch.velocity == Vector3.ZERO, "a frozen character has zero velocity", Vector3.ZERO, ch.velocity)
	ch.frozen = false
	ch.move_input = Vector3.ZERO
	await physics_frames(5)
	check(ch.velocity.length() < 0.2, "unfrozen with zero move input the character stays stopped", "speed < 0.2",
		ch.velocity.length())


func test_new_builds_the_same_character() -> void:
	var ch := await _spawn()
	var sk := ch.get_skeleton()
	var ch2 := CHARACTER_SCRIPT.new() as TestCharacter
	var sk2 := ch2.get_skeleton()
	check(sk2 != null, "TestCharacter.new() builds a skeleton", "Skeleton3D", sk2)
	if sk2 != null:
		check(sk2.get_bone_count() == sk.get_bone_count(), "TestCharacter.new() builds as many bones as the scene",
			sk.get_bone_count(), sk2.get_bone_count())
	check(ch2.get_node_or_null(^"AnimationTree") != null, "TestCharacter.new() builds an AnimationTree",
		"AnimationTree", ch2.get_node_or_null(^"AnimationTree"))
	check(ch2.get_node_or_null(^"CollisionShape3D") != null, "TestCharacter.new() builds a collision shape",
		"CollisionShape3D", ch2.get_node_or_null(^"CollisionShape3D"))
	ch2.free()
