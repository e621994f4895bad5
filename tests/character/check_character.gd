extends SceneTree
## Headless check of the procedural TestCharacter.
## Run from /work/main:
##   timeout 60 /tmp/gd --headless --path godot_project -s res://tests/character/check_character.gd
## (godot_project/tests is a symlink to ../tests.)

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

var passed := 0
var failed := 0


func check(cond: bool, what: String) -> void:
	if cond:
		passed += 1
		print("  ok   ", what)
	else:
		failed += 1
		print("  FAIL ", what)


func near(a: float, b: float, tol: float) -> bool:
	return absf(a - b) <= tol


func vec_ok(v: Vector3) -> bool:
	return v.is_finite()


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


func _initialize() -> void:
	_run()


func _wait_physics(n: int) -> void:
	for i in n:
		await physics_frame


func _run() -> void:
	print("check_character: start")
	# _initialize() runs before the root window is inside the tree.
	await process_frame
	# Floor: 20x1x20 box whose top is at y = 0.
	var floor_body := StaticBody3D.new()
	floor_body.name = "Floor"
	var floor_shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(20.0, 1.0, 20.0)
	floor_shape.shape = box
	floor_shape.position = Vector3(0.0, -0.5, 0.0)
	floor_body.add_child(floor_shape)
	root.add_child(floor_body)

	var ch = CHARACTER_SCENE.instantiate()
	check(ch is CharacterBody3D and ch.get_script() == CHARACTER_SCRIPT, "scene root is CharacterBody3D with test_character.gd")
	check(ch.name == &"TestCharacter", "scene root named TestCharacter")
	ch.position = Vector3.ZERO
	root.add_child(ch)
	await process_frame
	await process_frame

	# --- structure --------------------------------------------------------
	var sk: Skeleton3D = ch.get_skeleton()
	check(sk != null and sk.name == &"Skeleton3D", "get_skeleton() returns child Skeleton3D")
	var cs := ch.get_node_or_null(^"CollisionShape3D") as CollisionShape3D
	check(cs != null and cs.shape is CapsuleShape3D and near(cs.shape.height, 1.75, 1e-4)
			and near(cs.shape.radius, 0.25, 1e-4) and near(cs.position.y, 0.875, 1e-4),
			"capsule collision 1.75 x 0.25 centred at 0.875")
	check(ch.HEIGHT == 1.75, "HEIGHT const")
	for b in EXPECTED_BONES:
		check(sk.find_bone(b) >= 0, "bone exists: " + b)
	for b in EXPECTED_PARENTS:
		var i := sk.find_bone(b)
		var p := sk.get_bone_parent(i) if i >= 0 else -2
		check(p >= 0 and sk.get_bone_name(p) == EXPECTED_PARENTS[b], "parent of %s is %s" % [b, EXPECTED_PARENTS[b]])

	# --- rest pose (model space) -----------------------------------------
	var rest := {}
	for b in EXPECTED_BONES:
		var i := sk.find_bone(b)
		rest[b] = sk.get_bone_global_rest(i) if i >= 0 else Transform3D()
	for b in CHAIN:
		var parent_t: Transform3D = rest[b]
		var child_local: Vector3 = parent_t.affine_inverse() * (rest[CHAIN[b]] as Transform3D).origin
		var dir := child_local.normalized()
		check(dir.dot(Vector3.UP) > 0.999, "rest +Y of %s points at %s" % [b, CHAIN[b]])
	for b in EXPECTED_BONES:
		var basis: Basis = (rest[b] as Transform3D).basis
		check(near(basis.determinant(), 1.0, 1e-4) and basis.is_conformal(), "rest basis of %s is a proper rotation" % b)

	var shoulder_l: Vector3 = rest["LeftUpperArm"].origin
	var elbow_l: Vector3 = rest["LeftLowerArm"].origin
	var wrist_l: Vector3 = rest["LeftHand"].origin
	var shoulder_r: Vector3 = rest["RightUpperArm"].origin
	var elbow_r: Vector3 = rest["RightLowerArm"].origin
	var wrist_r: Vector3 = rest["RightHand"].origin
	check(near(shoulder_l.y, 1.45, 0.04) and near(shoulder_r.y, 1.45, 0.04), "shoulder height ~1.45 (%.3f)" % shoulder_l.y)
	check(near(shoulder_l.distance_to(elbow_l), 0.28, 0.01) and near(shoulder_r.distance_to(elbow_r), 0.28, 0.01),
			"upper arm length ~0.28 (%.3f)" % shoulder_l.distance_to(elbow_l))
	check(near(elbow_l.distance_to(wrist_l), 0.26, 0.01) and near(elbow_r.distance_to(wrist_r), 0.26, 0.01),
			"forearm length ~0.26 (%.3f)" % elbow_l.distance_to(wrist_l))
	var hip_h: float = rest["LeftUpperLeg"].origin.y
	check(near(hip_h, 0.9, 0.05), "hip height ~0.9 (%.3f)" % hip_h)
	var up_dir_l := (elbow_l - shoulder_l).normalized()
	var abduction := rad_to_deg(up_dir_l.angle_to(Vector3.DOWN))
	check(abduction >= 8.0 and abduction <= 17.0 and up_dir_l.x < 0.0, "left arm hangs down and out (%.1f deg)" % abduction)
	var up_dir_r := (elbow_r - shoulder_r).normalized()
	check(up_dir_r.x > 0.0 and near(rad_to_deg(up_dir_r.angle_to(Vector3.DOWN)), abduction, 0.1), "right arm mirrors left")
	var fore_dir_l := (wrist_l - elbow_l).normalized()
	var elbow_bend := rad_to_deg(up_dir_l.angle_to(fore_dir_l))
	check(elbow_bend >= 5.0 and elbow_bend <= 20.0 and wrist_l.z < elbow_l.z, "elbow bent forward (%.1f deg)" % elbow_bend)

	# --- current pose, world space ---------------------------------------
	var head: Vector3 = ch.bone_global_position("Head")
	check(head.y >= 1.55 and head.y <= 1.75, "Head height in [1.55, 1.75] (%.3f)" % head.y)
	var lh: Vector3 = ch.bone_global_position("LeftHand")
	var rh: Vector3 = ch.bone_global_position("RightHand")
	check(lh.x < 0.0, "LeftHand x < 0 (%.3f)" % lh.x)
	check(rh.x > 0.0, "RightHand x > 0 (%.3f)" % rh.x)
	check(ch.bone_global_position("LeftUpperLeg").x < 0.0 and ch.bone_global_position("RightUpperLeg").x > 0.0, "legs on correct sides")
	check(ch.bone_global_position("LeftEye").z < head.z, "eyes in front of head (-Z)")

	# --- animation setup --------------------------------------------------
	var ap := ch.get_node_or_null(^"AnimationPlayer") as AnimationPlayer
	check(ap != null and ap.has_animation(&"idle") and ap.has_animation(&"walk"), "AnimationPlayer has idle and walk")
	if ap != null and ap.has_animation(&"walk") and ap.has_animation(&"idle"):
		var walk := ap.get_animation(&"walk")
		var idle := ap.get_animation(&"idle")
		check(walk.loop_mode == Animation.LOOP_LINEAR and near(walk.length, 1.0, 1e-4), "walk loops, 1.0 s")
		check(idle.loop_mode == Animation.LOOP_LINEAR and near(idle.length, 2.0, 1e-4), "idle loops, 2.0 s")
		check(walk.find_track(^"Skeleton3D:LeftUpperLeg", Animation.TYPE_ROTATION_3D) >= 0, "walk has rotation track Skeleton3D:LeftUpperLeg")
		check(walk.find_track(^"Skeleton3D:RightUpperArm", Animation.TYPE_ROTATION_3D) >= 0, "walk has rotation track Skeleton3D:RightUpperArm")
	var at := ch.get_node_or_null(^"AnimationTree") as AnimationTree
	check(at != null and at.active and at.tree_root is AnimationNodeBlendTree, "AnimationTree active with BlendTree root")
	if at != null:
		check(at.get(&"parameters/move/blend_amount") != null, "parameter parameters/move/blend_amount exists")
		check(at.get(&"parameters/speed/scale") != null, "parameter parameters/speed/scale exists")
		check(at.get(&"parameters/arms/blend_amount") != null and near(float(at.get(&"parameters/arms/blend_amount")), 1.0, 1e-6),
				"parameter parameters/arms/blend_amount exists, default 1")

	# --- walking toward -Z ------------------------------------------------
	var start: Vector3 = ch.global_position
	var foot_rel0: Vector3 = ch.global_transform.basis.inverse() * (ch.bone_global_position("LeftFoot") - ch.bone_global_position("Hips"))
	var max_foot_dev := 0.0
	var all_finite := true
	var foot_z: Array[float] = []
	var hand_z: Array[float] = []
	var max_knee := 0.0
	ch.move_input = Vector3(0.0, 0.0, -1.0)
	for i in 60:
		await physics_frame
		var inv_basis: Basis = ch.global_transform.basis.inverse()
		var hips_p: Vector3 = ch.bone_global_position("Hips")
		var foot_rel: Vector3 = inv_basis * (ch.bone_global_position("LeftFoot") - hips_p)
		max_foot_dev = maxf(max_foot_dev, foot_rel.distance_to(foot_rel0))
		if i >= 30: # walk fully blended in
			foot_z.append(foot_rel.z)
			hand_z.append((inv_basis * (ch.bone_global_position("LeftHand") - hips_p)).z)
			var hip_p: Vector3 = ch.bone_global_position("LeftUpperLeg")
			var knee_p: Vector3 = ch.bone_global_position("LeftLowerLeg")
			var ankle_p: Vector3 = ch.bone_global_position("LeftFoot")
			max_knee = maxf(max_knee, rad_to_deg((knee_p - hip_p).angle_to(ankle_p - knee_p)))
		for b in EXPECTED_BONES:
			if not vec_ok(ch.bone_global_position(b)):
				all_finite = false
		if not vec_ok(ch.global_position) or not vec_ok(ch.velocity):
			all_finite = false
	var moved: Vector3 = ch.global_position - start
	check(moved.z <= -0.5, "moved >= 0.5 m toward -Z in 60 frames (dz = %.3f)" % moved.z)
	check(absf(moved.x) < 0.05, "no sideways drift (dx = %.3f)" % moved.x)
	check(absf(ch.global_position.y) < 0.05 and ch.is_on_floor(), "stays on the floor (y = %.3f)" % ch.global_position.y)
	var fwd: Vector3 = -ch.global_transform.basis.z
	check(fwd.dot(Vector3(0, 0, -1)) > 0.99, "faces -Z while walking -Z")
	check(max_foot_dev >= 0.03, "left foot moved relative to hips (max %.3f m)" % max_foot_dev)
	if at != null:
		check(float(at.get(&"parameters/move/blend_amount")) > 0.9, "move blend near 1 while walking (%.3f)" % float(at.get(&"parameters/move/blend_amount")))
	check(all_finite, "no NaN/inf in bone positions while walking")
	var corr := _correlation(foot_z, hand_z)
	check(corr < -0.5, "left arm swings opposite to left leg (corr %.2f)" % corr)
	check(max_knee > 20.0, "knee bends while walking (max %.1f deg)" % max_knee)

	# --- arms layer: 0 = arms keep the rest pose ---------------------------
	at.set(&"parameters/arms/blend_amount", 0.0)
	await _wait_physics(3)
	var sh_idx := sk.find_bone("LeftUpperArm")
	var max_arm_dev := 0.0
	for i in 20:
		await physics_frame
		var q := sk.get_bone_pose_rotation(sh_idx)
		max_arm_dev = maxf(max_arm_dev, rad_to_deg(q.angle_to(sk.get_bone_rest(sh_idx).basis.get_rotation_quaternion())))
	check(max_arm_dev < 0.5, "arms/blend_amount = 0 keeps LeftUpperArm at rest while walking (%.2f deg)" % max_arm_dev)
	at.set(&"parameters/arms/blend_amount", 1.0)
	var max_arm_dev1 := 0.0
	for i in 30:
		await physics_frame
		var q := sk.get_bone_pose_rotation(sh_idx)
		max_arm_dev1 = maxf(max_arm_dev1, rad_to_deg(q.angle_to(sk.get_bone_rest(sh_idx).basis.get_rotation_quaternion())))
	check(max_arm_dev1 > 10.0, "arms/blend_amount = 1 swings LeftUpperArm (%.1f deg)" % max_arm_dev1)
	# Legs kept walking throughout (walk_no_arms feeds the non-arm tracks).
	check(ch.bone_global_position("Head").y > 1.5, "head stays up while walking (%.3f)" % ch.bone_global_position("Head").y)

	# --- turning toward +X ------------------------------------------------
	var start2: Vector3 = ch.global_position
	ch.move_input = Vector3(1.0, 0.0, 0.0)
	await _wait_physics(60)
	fwd = -ch.global_transform.basis.z
	check(fwd.dot(Vector3(1, 0, 0)) > 0.98, "turned to face +X (fwd = %s)" % str(fwd))
	check(ch.global_position.x - start2.x > 0.5, "moved toward +X")
	# Facing +X, the character's left is -Z.
	var lh2: Vector3 = ch.bone_global_position("LeftHand")
	var rh2: Vector3 = ch.bone_global_position("RightHand")
	check(lh2.z < ch.global_position.z and rh2.z > ch.global_position.z, "left hand on -Z side when facing +X")

	# --- frozen -----------------------------------------------------------
	ch.frozen = true
	await physics_frame
	var frozen_pos: Vector3 = ch.global_position
	await _wait_physics(20)
	check(ch.global_position.distance_to(frozen_pos) < 1e-5 and ch.velocity == Vector3.ZERO, "frozen: no movement, zero velocity")
	ch.frozen = false
	ch.move_input = Vector3.ZERO
	await _wait_physics(5)
	check(ch.velocity.length() < 0.2, "stops when move_input is zero")

	# --- TestCharacter.new() path -----------------------------------------
	var ch2 = CHARACTER_SCRIPT.new()
	check(ch2.get_skeleton() != null and ch2.get_skeleton().get_bone_count() == sk.get_bone_count(), "script .new() builds the same skeleton")
	check(ch2.get_node_or_null(^"AnimationTree") != null and ch2.get_node_or_null(^"CollisionShape3D") != null, "script .new() builds tree and collision")
	ch2.free()

	# --- cleanup ----------------------------------------------------------
	ch.queue_free()
	floor_body.queue_free()
	await process_frame
	await process_frame

	print("check_character: %d passed, %d failed" % [passed, failed])
	quit(0 if failed == 0 else 1)
