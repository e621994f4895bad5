@tool
class_name TestCharacter
extends CharacterBody3D
## Procedural humanoid test character (no imported assets).
##
## Everything is built in _init(), so the character works both when instanced
## from test_character.tscn and when created with TestCharacter.new().
##
## Axes: Godot convention. The character faces -Z (its left is -X, its right is
## +X), +Y is up, units are metres. Total height HEIGHT = 1.75 m.
##
## Children built here:
##   CollisionShape3D  capsule, height 1.75, radius 0.25, centred at y 0.875
##   Skeleton3D        bones named as in SkeletonProfileHumanoid (see BONES)
##     Att_<Bone>      BoneAttachment3D + MeshInstance3D per visible bone
##   AnimationPlayer   library "" with looping "idle" (2 s), "walk" (1 s) and
##                     "walk_no_arms" (walk without arm tracks, used by the tree)
##   AnimationTree     active, root = AnimationNodeBlendTree
##
## AnimationTree parameters (tree.set(...)):
##   parameters/move/blend_amount   0 = idle, 1 = walk. Driven from the
##                                  horizontal speed while drive_animation.
##   parameters/speed/scale         playback speed (TimeScale). Driven from the
##                                  horizontal speed while drive_animation
##                                  (1.0 at WALK_REFERENCE_SPEED = 1.4 m/s).
##   parameters/arms/blend_amount   arm layer (Shoulder, UpperArm, LowerArm,
##                                  Hand bones of both sides). 1 (default) =
##                                  arms follow the locomotion blend, 0 = arms
##                                  stay in the rest pose (e.g. for IK). Never
##                                  touched by this script.
##   Graph: idle ──────────────────────────┐
##          walk_no_arms ─┐ (in0)           ├─ move (Blend2) ─ speed (TimeScale) ─ output
##          walk ─────────┴ (in1) arms (Blend2, filter = arm bones) ─┘ (in1)
##   "arms" takes non-arm tracks from walk_no_arms (identical to walk) and
##   blends the arm tracks rest -> walk, so the final arm pose is
##   lerp(idle, walk, move * arms) and the rest of the body lerp(idle, walk, move).
##
## Bone rest convention (like Godot's humanoid profile): every bone rest is a
## proper Transform3D relative to its parent; each bone's local +Y axis points
## along the bone, from its origin (head) toward the origin of its main child
## (or toward its tip for end bones). Roll: for the spine, legs and arms the
## local +X axis is the hinge axis and points roughly to the character's right
## (+X model), so a positive rotation about local X swings a hanging limb
## forward (-Z): hip/shoulder flexion and elbow flexion are positive, knee
## flexion is negative. Spine/neck/head/hips/root rests are unrotated
## (identity basis: +Y up, +Z backward). Eyes and toes point forward (+Y = -Z
## model). Clavicles (Left/RightShoulder) point outward with +Z forward.
##
## Rest pose: upright, facing -Z, arms hanging down in an A-pose (ARM_ABDUCTION_DEG
## from vertical), elbows bent ELBOW_BEND_DEG forward, knees bent ~3 deg forward,
## so two-bone IK has a well-defined bend plane for arms and legs.

const HEIGHT := 1.75
const CAPSULE_RADIUS := 0.25
const WALK_REFERENCE_SPEED := 1.4 ## m/s at which "walk" plays at scale 1.0
const ARM_ABDUCTION_DEG := 12.0
const ELBOW_BEND_DEG := 10.0
const UPPER_ARM_LENGTH := 0.28
const FOREARM_LENGTH := 0.26
const HAND_LENGTH := 0.08

## Humanoid bones, parents listed before children: [name, parent].
const BONES := [
	["Root", ""],
	["Hips", "Root"],
	["Spine", "Hips"],
	["Chest", "Spine"],
	["UpperChest", "Chest"],
	["Neck", "UpperChest"],
	["Head", "Neck"],
	["LeftEye", "Head"],
	["RightEye", "Head"],
	["LeftShoulder", "UpperChest"],
	["LeftUpperArm", "LeftShoulder"],
	["LeftLowerArm", "LeftUpperArm"],
	["LeftHand", "LeftLowerArm"],
	["RightShoulder", "UpperChest"],
	["RightUpperArm", "RightShoulder"],
	["RightLowerArm", "RightUpperArm"],
	["RightHand", "RightLowerArm"],
	["LeftUpperLeg", "Hips"],
	["LeftLowerLeg", "LeftUpperLeg"],
	["LeftFoot", "LeftLowerLeg"],
	["LeftToes", "LeftFoot"],
	["RightUpperLeg", "Hips"],
	["RightLowerLeg", "RightUpperLeg"],
	["RightFoot", "RightLowerLeg"],
	["RightToes", "RightFoot"],
]

## Bones driven by the "arms" layer of the AnimationTree.
const ARM_BONES := [
	"LeftShoulder", "LeftUpperArm", "LeftLowerArm", "LeftHand",
	"RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",
]

@export var move_speed := 1.4 ## m/s at full move_input
@export var turn_speed := 10.0 ## 1/s, exponential approach of the facing yaw
## World-space desired move direction; y is ignored, length is clamped to 1.
var move_input := Vector3.ZERO
## When true: no movement, no gravity, velocity is kept at zero.
var frozen := false
## When false, _physics_process leaves the AnimationTree parameters alone.
var drive_animation := true

var skeleton: Skeleton3D
var animation_player: AnimationPlayer
var animation_tree: AnimationTree
var collision_shape: CollisionShape3D

## Model-space rest transform of every bone (bone name -> Transform3D).
var _model_rest := {}
## Length of every bone along its +Y (bone name -> float).
var _bone_length := {}
var _move_blend := 0.0
var _time_scale := 1.0
## The Att_<Bone> nodes and their bones' indices, moved by _follow_bones.
var _attachments: Array[Node3D] = []
var _attached_bones := PackedInt32Array()


func _init() -> void:
	# Guard against double construction (e.g. a @tool script reload in the editor).
	if get_node_or_null(^"Skeleton3D") != null:
		skeleton = get_node(^"Skeleton3D")
		animation_player = get_node_or_null(^"AnimationPlayer")
		animation_tree = get_node_or_null(^"AnimationTree")
		collision_shape = get_node_or_null(^"CollisionShape3D")
		for att in skeleton.get_children():
			if att is BoneAttachment3D:
				_attach(att)
		return
	_build_collision()
	_build_skeleton()
	_build_meshes()
	_build_animations()
	_build_animation_tree()


# --------------------------------------------------------------------------
# Public API

func get_skeleton() -> Skeleton3D:
	return skeleton


## World-space position of a bone's origin in the current (animated) pose.
## Returns Vector3.ZERO for an unknown bone name.
func bone_global_position(bone_name: String) -> Vector3:
	if skeleton == null:
		return Vector3.ZERO
	var idx := skeleton.find_bone(bone_name)
	if idx < 0:
		return Vector3.ZERO
	return skeleton.global_transform * skeleton.get_bone_global_pose(idx).origin


## Model-space (character-local) rest transform of a bone.
func bone_model_rest(bone_name: String) -> Transform3D:
	return _model_rest.get(bone_name, Transform3D.IDENTITY)


# --------------------------------------------------------------------------
# Movement

func _physics_process(delta: float) -> void:
	if Engine.is_editor_hint():
		return
	if HoldHandComponent.is_pair_driven(self):
		# A hold-hand pair drives this body and its animation on this peer (the initiator's stream).
		velocity = Vector3.ZERO
		return
	if frozen:
		velocity = Vector3.ZERO
		_drive_animation(0.0, delta)
		return

	var dir := Vector3(move_input.x, 0.0, move_input.z).limit_length(1.0)
	if not is_on_floor():
		velocity.y -= float(ProjectSettings.get_setting("physics/3d/default_gravity", 9.8)) * delta
	else:
		velocity.y = 0.0
	velocity.x = dir.x * move_speed
	velocity.z = dir.z * move_speed

	if dir.length_squared() > 1e-6:
		# Forward is -Z: yaw 0 faces -Z, so yaw = atan2(-x, -z).
		var target_yaw := atan2(-dir.x, -dir.z)
		var t := 1.0 - exp(-turn_speed * delta)
		rotation.y = lerp_angle(rotation.y, target_yaw, t)

	move_and_slide()

	var real := get_real_velocity()
	_drive_animation(Vector2(real.x, real.z).length(), delta)


func _drive_animation(horizontal_speed: float, delta: float) -> void:
	if not drive_animation or animation_tree == null:
		return
	var target_blend := clampf(horizontal_speed / (0.5 * WALK_REFERENCE_SPEED), 0.0, 1.0)
	var k := 1.0 - exp(-8.0 * delta)
	_move_blend = lerpf(_move_blend, target_blend, k)
	if _move_blend < 1e-3 and target_blend == 0.0:
		_move_blend = 0.0
	var walk_scale := clampf(horizontal_speed / WALK_REFERENCE_SPEED, 0.5, 2.5)
	_time_scale = lerpf(1.0, walk_scale, _move_blend)
	animation_tree.set(&"parameters/move/blend_amount", _move_blend)
	animation_tree.set(&"parameters/speed/scale", _time_scale)


# --------------------------------------------------------------------------
# Construction: collision

func _build_collision() -> void:
	collision_shape = CollisionShape3D.new()
	collision_shape.name = "CollisionShape3D"
	var capsule := CapsuleShape3D.new()
	capsule.height = HEIGHT
	capsule.radius = CAPSULE_RADIUS
	collision_shape.shape = capsule
	collision_shape.position = Vector3(0.0, HEIGHT * 0.5, 0.0)
	add_child(collision_shape)


# --------------------------------------------------------------------------
# Construction: skeleton

## Orthonormal basis whose +Y is along `y_dir` and whose +X is as close as
## possible to `x_hint` (must not be parallel to y_dir).
static func _basis_y_x(y_dir: Vector3, x_hint: Vector3) -> Basis:
	var y := y_dir.normalized()
	var z := x_hint.cross(y).normalized()
	var x := y.cross(z).normalized()
	return Basis(x, y, z)


## Orthonormal basis whose +Y is along `y_dir` and whose +Z is as close as
## possible to `z_hint`.
static func _basis_y_z(y_dir: Vector3, z_hint: Vector3) -> Basis:
	var y := y_dir.normalized()
	var x := y.cross(z_hint).normalized()
	var z := x.cross(y).normalized()
	return Basis(x, y, z)


## Model-space joint positions (bone heads) and the tips of end bones.
func _joint_positions() -> Dictionary:
	var p := {}
	p["Root"] = Vector3.ZERO
	p["Hips"] = Vector3(0.0, 0.95, 0.0)
	p["Spine"] = Vector3(0.0, 1.05, 0.0)
	p["Chest"] = Vector3(0.0, 1.17, 0.0)
	p["UpperChest"] = Vector3(0.0, 1.30, 0.0)
	p["Neck"] = Vector3(0.0, 1.49, 0.0)
	p["Head"] = Vector3(0.0, 1.60, 0.0)
	p["Head_tip"] = Vector3(0.0, HEIGHT, 0.0)
	for side in [-1.0, 1.0]:
		var s: String = "Left" if side < 0.0 else "Right"
		p[s + "Eye"] = Vector3(0.032 * side, 1.665, -0.085)
		p[s + "Eye_tip"] = Vector3(0.032 * side, 1.665, -0.105)
		# Arm: clavicle from the upper chest to the shoulder joint at 1.45 m.
		p[s + "Shoulder"] = Vector3(0.03 * side, 1.44, 0.0)
		var shoulder_joint := Vector3(0.18 * side, 1.45, 0.0)
		p[s + "UpperArm"] = shoulder_joint
		var a := deg_to_rad(ARM_ABDUCTION_DEG)
		var upper_dir := Vector3(sin(a) * side, -cos(a), 0.0)
		var elbow := shoulder_joint + upper_dir * UPPER_ARM_LENGTH
		p[s + "LowerArm"] = elbow
		var b := deg_to_rad(ELBOW_BEND_DEG)
		# Forearm bends forward (-Z) in the plane of the upper arm and -Z.
		var fore_dir := upper_dir * cos(b) + Vector3(0.0, 0.0, -1.0) * sin(b)
		var wrist := elbow + fore_dir * FOREARM_LENGTH
		p[s + "Hand"] = wrist
		p[s + "Hand_tip"] = wrist + fore_dir * HAND_LENGTH
		# Leg: hip joint at 0.90 m, knee slightly forward, ankle under the hip.
		p[s + "UpperLeg"] = Vector3(0.09 * side, 0.90, 0.0)
		p[s + "LowerLeg"] = Vector3(0.09 * side, 0.48, -0.01)
		p[s + "Foot"] = Vector3(0.09 * side, 0.08, 0.0)
		p[s + "Toes"] = Vector3(0.09 * side, 0.025, -0.13)
		p[s + "Toes_tip"] = Vector3(0.09 * side, 0.025, -0.19)
	return p


## Main child of each bone (the one its +Y points at); end bones use "<name>_tip".
const _MAIN_CHILD := {
	"Root": "Hips", "Hips": "Spine", "Spine": "Chest", "Chest": "UpperChest",
	"UpperChest": "Neck", "Neck": "Head", "Head": "Head_tip",
	"LeftEye": "LeftEye_tip", "RightEye": "RightEye_tip",
	"LeftShoulder": "LeftUpperArm", "LeftUpperArm": "LeftLowerArm",
	"LeftLowerArm": "LeftHand", "LeftHand": "LeftHand_tip",
	"RightShoulder": "RightUpperArm", "RightUpperArm": "RightLowerArm",
	"RightLowerArm": "RightHand", "RightHand": "RightHand_tip",
	"LeftUpperLeg": "LeftLowerLeg", "LeftLowerLeg": "LeftFoot",
	"LeftFoot": "LeftToes", "LeftToes": "LeftToes_tip",
	"RightUpperLeg": "RightLowerLeg", "RightLowerLeg": "RightFoot",
	"RightFoot": "RightToes", "RightToes": "RightToes_tip",
}


func _build_skeleton() -> void:
	skeleton = Skeleton3D.new()
	skeleton.name = "Skeleton3D"
	add_child(skeleton)

	var p := _joint_positions()
	for entry in BONES:
		var bone_name: String = entry[0]
		var parent_name: String = entry[1]
		var head: Vector3 = p[bone_name]
		var tip: Vector3 = p[_MAIN_CHILD[bone_name]]
		var dir := tip - head
		_bone_length[bone_name] = dir.length()

		var basis: Basis
		if bone_name in ["Root", "Hips", "Spine", "Chest", "UpperChest", "Neck", "Head"]:
			basis = Basis.IDENTITY # the spine is vertical: +Y up, +X right, +Z back
		elif bone_name.ends_with("Shoulder"):
			basis = _basis_y_z(dir, Vector3(0.0, 0.0, -1.0))
		elif bone_name.ends_with("LowerArm") or bone_name.ends_with("Hand"):
			# Keep the elbow/wrist hinge axis identical to the parent's +X.
			var parent_basis: Basis = (_model_rest[parent_name] as Transform3D).basis
			basis = _basis_y_x(dir, parent_basis.x)
		else:
			basis = _basis_y_x(dir, Vector3.RIGHT)
		var model := Transform3D(basis, head)
		_model_rest[bone_name] = model

		var idx := skeleton.add_bone(bone_name)
		var local := model
		if parent_name != "":
			skeleton.set_bone_parent(idx, skeleton.find_bone(parent_name))
			local = (_model_rest[parent_name] as Transform3D).affine_inverse() * model
		skeleton.set_bone_rest(idx, local)
	skeleton.reset_bone_poses()


# --------------------------------------------------------------------------
# Construction: meshes

func _make_material(color: Color) -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.albedo_color = color
	m.roughness = 0.8
	return m


func _build_meshes() -> void:
	var body := _make_material(Color(0.72, 0.72, 0.68))
	var left := _make_material(Color(0.85, 0.18, 0.15)) # left side: red
	var right := _make_material(Color(0.15, 0.3, 0.9)) # right side: blue
	var dark := _make_material(Color(0.08, 0.08, 0.08))

	for entry in BONES:
		var bone_name: String = entry[0]
		if bone_name == "Root":
			continue
		var mat: StandardMaterial3D = body
		if bone_name.begins_with("Left"):
			mat = left
		elif bone_name.begins_with("Right"):
			mat = right
		var att := BoneAttachment3D.new()
		att.name = "Att_" + bone_name
		att.bone_name = bone_name
		skeleton.add_child(att)
		_attach(att)
		var length: float = _bone_length[bone_name]
		match bone_name:
			"Hips":
				_add_box(att, Vector3(0.30, 0.18, 0.19), Vector3(0.0, -0.02, 0.0), mat)
			"Spine":
				_add_box(att, Vector3(0.27, length, 0.17), Vector3(0.0, length * 0.5, 0.0), mat)
			"Chest":
				_add_box(att, Vector3(0.30, length, 0.19), Vector3(0.0, length * 0.5, 0.0), mat)
			"UpperChest":
				_add_box(att, Vector3(0.34, 0.15, 0.20), Vector3(0.0, 0.075, 0.0), mat)
			"Neck":
				_add_capsule(att, 0.05, length, mat)
			"Head":
				var head := MeshInstance3D.new()
				var sphere := SphereMesh.new()
				sphere.radius = 0.095
				sphere.height = 0.23
				sphere.radial_segments = 16
				sphere.rings = 8
				head.mesh = sphere
				head.material_override = mat
				head.position = Vector3(0.0, 0.05, -0.01)
				att.add_child(head)
				# Nose marks the forward (-Z) direction.
				_add_box(att, Vector3(0.03, 0.04, 0.04), Vector3(0.0, 0.04, -0.105), dark)
			"LeftEye", "RightEye":
				var eye := MeshInstance3D.new()
				var s := SphereMesh.new()
				s.radius = 0.015
				s.height = 0.03
				s.radial_segments = 8
				s.rings = 4
				eye.mesh = s
				eye.material_override = dark
				att.add_child(eye)
			"LeftHand", "RightHand":
				_add_box(att, Vector3(0.08, length + 0.02, 0.03), Vector3(0.0, length * 0.5, 0.0), mat)
			"LeftFoot", "RightFoot":
				_add_box(att, Vector3(0.09, length + 0.08, 0.05), Vector3(0.0, length * 0.5 - 0.03, 0.0), mat)
			"LeftToes", "RightToes":
				_add_box(att, Vector3(0.09, length, 0.035), Vector3(0.0, length * 0.5, 0.0), mat)
			"LeftShoulder", "RightShoulder":
				_add_capsule(att, 0.04, length, mat)
			"LeftUpperArm", "RightUpperArm":
				_add_capsule(att, 0.045, length, mat)
			"LeftLowerArm", "RightLowerArm":
				_add_capsule(att, 0.038, length, mat)
			"LeftUpperLeg", "RightUpperLeg":
				_add_capsule(att, 0.07, length, mat)
			"LeftLowerLeg", "RightLowerLeg":
				_add_capsule(att, 0.052, length, mat)


## Moves [param att] with its bone from here (_follow_bones) instead of binding it to the skeleton:
## it keeps its bone's name (what rigid parts on a bone look like, as glTF imports them), but with
## an external skeleton left unset it never binds. Godot 4.6's release export template cannot undo
## a BoneAttachment3D's binding ("Attempt to disconnect a nonexistent connection … Signal:
## 'skeleton_updated', callable: ''" for every attachment leaving the tree), and an exported
## game's log must hold only what the game says.
func _attach(att: BoneAttachment3D) -> void:
	att.use_external_skeleton = true
	var bone := skeleton.find_bone(att.bone_name)
	if bone < 0:
		return
	att.transform = skeleton.get_bone_global_pose(bone)
	_attachments.append(att)
	_attached_bones.append(bone)
	if not skeleton.skeleton_updated.is_connected(_follow_bones):
		skeleton.skeleton_updated.connect(_follow_bones)


## Puts each Att_<Bone> node on its bone's pose, as the skeleton finishes a pose (IK included).
func _follow_bones() -> void:
	for i in _attachments.size():
		_attachments[i].transform = skeleton.get_bone_global_pose(_attached_bones[i])


## Capsule along the bone's +Y from its head to its tip. Twelve sides are smooth enough at a limb's
## size (the default 64 × 8 makes every character some 50,000 triangles, slow to draw — and to cast
## shadows — in software rendering).
func _add_capsule(parent: Node3D, radius: float, length: float, mat: Material) -> void:
	var mi := MeshInstance3D.new()
	var cap := CapsuleMesh.new()
	cap.radial_segments = 12
	cap.rings = 2
	cap.radius = radius
	cap.height = maxf(length + radius, 2.0 * radius)
	mi.mesh = cap
	mi.material_override = mat
	mi.position = Vector3(0.0, length * 0.5, 0.0)
	parent.add_child(mi)


func _add_box(parent: Node3D, size: Vector3, center: Vector3, mat: Material) -> void:
	var mi := MeshInstance3D.new()
	var box := BoxMesh.new()
	box.size = size
	mi.mesh = box
	mi.material_override = mat
	mi.position = center
	parent.add_child(mi)


# --------------------------------------------------------------------------
# Construction: animations

## Local pose rotation of `bone` = its rest rotation followed by a rotation of
## `angle_deg` about `model_axis`, where the axis is expressed in model space
## at rest (so the result does not depend on the bone's roll convention).
func _pose_rot(bone: String, model_axis: Vector3, angle_deg: float) -> Quaternion:
	var rest_local := skeleton.get_bone_rest(skeleton.find_bone(bone))
	var model_basis: Basis = (_model_rest[bone] as Transform3D).basis
	var local_axis := (model_basis.inverse() * model_axis).normalized()
	var q := rest_local.basis.get_rotation_quaternion() * Quaternion(local_axis, deg_to_rad(angle_deg))
	return q.normalized()


## Like _pose_rot but with several (axis, degrees) rotations applied in order.
func _pose_rot_multi(bone: String, rotations: Array) -> Quaternion:
	var rest_local := skeleton.get_bone_rest(skeleton.find_bone(bone))
	var model_basis: Basis = (_model_rest[bone] as Transform3D).basis
	var inv := model_basis.inverse()
	var delta := Quaternion.IDENTITY
	for r in rotations:
		var axis: Vector3 = (inv * (r[0] as Vector3)).normalized()
		delta = delta * Quaternion(axis, deg_to_rad(float(r[1])))
	return (rest_local.basis.get_rotation_quaternion() * delta).normalized()


func _track_path(bone: String) -> NodePath:
	return NodePath("Skeleton3D:" + bone)


## Adds a rotation track for `bone` sampled from `fn(phase) -> Quaternion`.
func _add_rot_track(anim: Animation, bone: String, samples: int, fn: Callable) -> void:
	var t := anim.add_track(Animation.TYPE_ROTATION_3D)
	anim.track_set_path(t, _track_path(bone))
	anim.track_set_interpolation_type(t, Animation.INTERPOLATION_LINEAR)
	for i in samples:
		var phase := float(i) / float(samples)
		anim.rotation_track_insert_key(t, phase * anim.length, fn.call(phase))


func _add_pos_track(anim: Animation, bone: String, samples: int, fn: Callable) -> void:
	var t := anim.add_track(Animation.TYPE_POSITION_3D)
	anim.track_set_path(t, _track_path(bone))
	anim.track_set_interpolation_type(t, Animation.INTERPOLATION_LINEAR)
	for i in samples:
		var phase := float(i) / float(samples)
		anim.position_track_insert_key(t, phase * anim.length, fn.call(phase))


func _make_idle() -> Animation:
	var anim := Animation.new()
	anim.length = 2.0
	anim.loop_mode = Animation.LOOP_LINEAR
	var n := 16
	var hips_rest := skeleton.get_bone_rest(skeleton.find_bone("Hips")).origin
	# Breathing: the chest lifts/tilts back slightly, head compensates.
	_add_rot_track(anim, "Spine", n, func(ph: float) -> Quaternion:
		return _pose_rot("Spine", Vector3.RIGHT, 0.6 * sin(TAU * ph)))
	_add_rot_track(anim, "Chest", n, func(ph: float) -> Quaternion:
		return _pose_rot("Chest", Vector3.RIGHT, 1.0 * sin(TAU * ph)))
	_add_rot_track(anim, "UpperChest", n, func(ph: float) -> Quaternion:
		return _pose_rot("UpperChest", Vector3.RIGHT, 1.2 * sin(TAU * ph)))
	_add_rot_track(anim, "Neck", n, func(ph: float) -> Quaternion:
		return _pose_rot("Neck", Vector3.RIGHT, -1.4 * sin(TAU * ph)))
	_add_rot_track(anim, "Head", n, func(ph: float) -> Quaternion:
		return _pose_rot("Head", Vector3.RIGHT, -1.4 * sin(TAU * ph)))
	_add_pos_track(anim, "Hips", n, func(ph: float) -> Vector3:
		return hips_rest + Vector3(0.0, 0.003 * sin(TAU * ph), 0.0))
	return anim


## Walk cycle, 1.0 s. phase 0: legs passing (left leg in swing), 0.25: left
## leg forward, 0.5: legs passing (right in swing), 0.75: right leg forward.
func _make_walk(with_arms: bool) -> Animation:
	var anim := Animation.new()
	anim.length = 1.0
	anim.loop_mode = Animation.LOOP_LINEAR
	var n := 24
	var hips_rest := skeleton.get_bone_rest(skeleton.find_bone("Hips")).origin

	# Slight hip bob: highest while the legs pass, lowest at double support.
	_add_pos_track(anim, "Hips", n, func(ph: float) -> Vector3:
		var bob := -0.025 * 0.5 * (1.0 - cos(2.0 * TAU * ph))
		return hips_rest + Vector3(0.0, bob, 0.0))
	# Pelvis yaws with the forward leg; the chest counter-rotates.
	_add_rot_track(anim, "Hips", n, func(ph: float) -> Quaternion:
		return _pose_rot("Hips", Vector3.UP, -4.0 * sin(TAU * ph)))
	_add_rot_track(anim, "Spine", n, func(ph: float) -> Quaternion:
		return _pose_rot_multi("Spine", [[Vector3.UP, 4.0 * sin(TAU * ph)], [Vector3.RIGHT, -2.0]]))
	_add_rot_track(anim, "Chest", n, func(ph: float) -> Quaternion:
		return _pose_rot("Chest", Vector3.UP, 4.0 * sin(TAU * ph)))

	for side in ["Left", "Right"]:
		var off := 0.0 if side == "Left" else 0.5
		var upper_leg: String = side + "UpperLeg"
		var lower_leg: String = side + "LowerLeg"
		var foot: String = side + "Foot"
		# Hip: +-25 deg, forward (positive about +X) at phase 0.25 (+off).
		_add_rot_track(anim, upper_leg, n, func(ph: float) -> Quaternion:
			return _pose_rot(upper_leg, Vector3.RIGHT, 25.0 * sin(TAU * (ph - off))))
		# Knee: flexes most mid-swing (leg moving forward), slight flex in stance.
		_add_rot_track(anim, lower_leg, n, func(ph: float) -> Quaternion:
			var swing := maxf(0.0, cos(TAU * (ph - off)))
			return _pose_rot(lower_leg, Vector3.RIGHT, -(6.0 + 42.0 * swing * swing)))
		# Ankle: lifts the toes a little during swing.
		_add_rot_track(anim, foot, n, func(ph: float) -> Quaternion:
			var swing := maxf(0.0, cos(TAU * (ph - off)))
			return _pose_rot(foot, Vector3.RIGHT, 12.0 * swing))
		if with_arms:
			var upper_arm: String = side + "UpperArm"
			var lower_arm: String = side + "LowerArm"
			# Shoulder: +-20 deg, opposite to the leg of the same side.
			_add_rot_track(anim, upper_arm, n, func(ph: float) -> Quaternion:
				return _pose_rot(upper_arm, Vector3.RIGHT, -20.0 * sin(TAU * (ph - off))))
			# Elbow: bends a bit more while the arm is forward.
			_add_rot_track(anim, lower_arm, n, func(ph: float) -> Quaternion:
				var fwd := maxf(0.0, -sin(TAU * (ph - off)))
				var hinge: Vector3 = (_model_rest[lower_arm] as Transform3D).basis.x
				return _pose_rot(lower_arm, hinge, 5.0 + 15.0 * fwd))
	return anim


func _build_animations() -> void:
	animation_player = AnimationPlayer.new()
	animation_player.name = "AnimationPlayer"
	var lib := AnimationLibrary.new()
	lib.add_animation(&"idle", _make_idle())
	lib.add_animation(&"walk", _make_walk(true))
	lib.add_animation(&"walk_no_arms", _make_walk(false))
	animation_player.add_animation_library(&"", lib)
	add_child(animation_player)


func _build_animation_tree() -> void:
	var bt := AnimationNodeBlendTree.new()

	var idle := AnimationNodeAnimation.new()
	idle.animation = &"idle"
	var walk := AnimationNodeAnimation.new()
	walk.animation = &"walk"
	var walk_body := AnimationNodeAnimation.new()
	walk_body.animation = &"walk_no_arms"

	var arms := AnimationNodeBlend2.new()
	arms.filter_enabled = true
	arms.sync = true # keep walk and walk_no_arms on the same clock
	for bone in ARM_BONES:
		arms.set_filter_path(_track_path(bone), true)

	var move := AnimationNodeBlend2.new()
	var speed := AnimationNodeTimeScale.new()

	bt.add_node(&"idle", idle, Vector2(0, 0))
	bt.add_node(&"walk_no_arms", walk_body, Vector2(0, 160))
	bt.add_node(&"walk", walk, Vector2(0, 300))
	bt.add_node(&"arms", arms, Vector2(260, 200))
	bt.add_node(&"move", move, Vector2(500, 80))
	bt.add_node(&"speed", speed, Vector2(720, 80))
	bt.connect_node(&"arms", 0, &"walk_no_arms")
	bt.connect_node(&"arms", 1, &"walk")
	bt.connect_node(&"move", 0, &"idle")
	bt.connect_node(&"move", 1, &"arms")
	bt.connect_node(&"speed", 0, &"move")
	bt.connect_node(&"output", 0, &"speed")

	animation_tree = AnimationTree.new()
	animation_tree.name = "AnimationTree"
	animation_tree.tree_root = bt
	animation_tree.anim_player = NodePath("../AnimationPlayer")
	add_child(animation_tree)
	animation_tree.set(&"parameters/move/blend_amount", 0.0)
	animation_tree.set(&"parameters/arms/blend_amount", 1.0)
	animation_tree.set(&"parameters/speed/scale", 1.0)
	animation_tree.active = true
