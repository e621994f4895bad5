extends RefCounted
## Builds humanoid skeletons the nodes were never tuned for: a 1.75 m A-pose body with knuckles,
## named in one of several conventions, every bone given a random rest rotation (so +Y does not
## run along the bones), facing −Z or +Z, optionally with a twist bone between each upper arm and
## forearm. The scale goes on the node above the skeleton.

const CONVENTIONS := ["godot", "blender", "underscore", "mixamo", "vrm", "vroid", "rigify"]

## Godot name -> [parent, model-space position] of the reference body (facing −Z), its upper arms
## and forearms [param arm] times the reference's 0.28 and 0.26 m.
static func reference_body(arm := 1.0) -> Array:
	var b := [
		["Root", "", Vector3.ZERO],
		["Hips", "Root", Vector3(0, 0.95, 0)],
		["Spine", "Hips", Vector3(0, 1.05, 0)],
		["Chest", "Spine", Vector3(0, 1.17, 0)],
		["UpperChest", "Chest", Vector3(0, 1.30, 0)],
		["Neck", "UpperChest", Vector3(0, 1.49, 0)],
		["Head", "Neck", Vector3(0, 1.60, 0)],
	]
	for side in [["Left", -1.0], ["Right", 1.0]]:
		var n: String = side[0]
		var s: float = side[1]
		var shoulder := Vector3(0.18 * s, 1.45, 0)
		var a := deg_to_rad(12.0)
		var upper_dir := Vector3(sin(a) * s, -cos(a), 0)
		var elbow := shoulder + upper_dir * 0.28 * arm
		var fore := upper_dir * cos(deg_to_rad(10.0)) + Vector3(0, 0, -1) * sin(deg_to_rad(10.0))
		var wrist := elbow + fore * 0.26 * arm
		var knuckles := wrist + fore * 0.08
		b.append_array([
			[n + "Shoulder", "UpperChest", Vector3(0.03 * s, 1.44, 0)],
			[n + "UpperArm", n + "Shoulder", shoulder],
			[n + "LowerArm", n + "UpperArm", elbow],
			[n + "Hand", n + "LowerArm", wrist],
			[n + "IndexProximal", n + "Hand", knuckles + Vector3(0, 0, -0.03)],
			[n + "MiddleProximal", n + "Hand", knuckles + Vector3(0, 0, -0.01)],
			[n + "RingProximal", n + "Hand", knuckles + Vector3(0, 0, 0.01)],
			[n + "LittleProximal", n + "Hand", knuckles + Vector3(0, 0, 0.03)],
			[n + "UpperLeg", "Hips", Vector3(0.09 * s, 0.90, 0)],
			[n + "LowerLeg", n + "UpperLeg", Vector3(0.09 * s, 0.48, -0.01)],
			[n + "Foot", n + "LowerLeg", Vector3(0.09 * s, 0.08, 0)],
			[n + "Toes", n + "Foot", Vector3(0.09 * s, 0.025, -0.13)],
		])
	return b


## The bone's name in [param convention], from its Godot name.
static func rename(godot: String, convention: String) -> String:
	var side := ""
	var base := godot
	if godot.begins_with("Left"):
		side = "L"
		base = godot.substr(4)
	elif godot.begins_with("Right"):
		side = "R"
		base = godot.substr(5)
	match convention:
		"godot":
			return godot
		"blender":
			var m := {"UpperArm": "upper_arm", "LowerArm": "forearm", "Hand": "hand", "Shoulder": "shoulder",
				"UpperLeg": "thigh", "LowerLeg": "shin", "Foot": "foot", "Toes": "toe",
				"IndexProximal": "f_index.01", "MiddleProximal": "f_middle.01", "RingProximal": "f_ring.01",
				"LittleProximal": "f_pinky.01", "UpperChest": "upper_chest"}
			if side == "":
				return m.get(base, base.to_lower()) + "_Armature"
			return "%s.%s_Armature" % [m.get(base, base.to_lower()), side.to_lower()]
		"underscore":
			return base if side == "" else "%s_%s" % [base, side]
		"mixamo":
			var m := {"UpperArm": "Arm", "LowerArm": "ForeArm", "UpperLeg": "UpLeg", "LowerLeg": "Leg",
				"Toes": "ToeBase", "IndexProximal": "HandIndex1", "MiddleProximal": "HandMiddle1",
				"RingProximal": "HandRing1", "LittleProximal": "HandPinky1", "Chest": "Spine1", "UpperChest": "Spine2"}
			var prefix := "" if side == "" else ("Left" if side == "L" else "Right")
			return "mixamorig_" + prefix + m.get(base, base)  # Godot turns the importer's ":" into "_"
		"vrm":
			if side == "":
				return base.substr(0, 1).to_lower() + base.substr(1)
			return ("left" if side == "L" else "right") + base
		"vroid":
			var m := {"IndexProximal": "Index1", "MiddleProximal": "Middle1", "RingProximal": "Ring1",
				"LittleProximal": "Little1"}
			return "J_Bip_%s_%s" % [side if side != "" else "C", m.get(base, base)]
		"rigify":
			# Rigify's deform bones: a numbered torso (no bone called hips, neck or head).
			var torso := {"Root": "root", "Hips": "DEF-spine", "Spine": "DEF-spine.001", "Chest": "DEF-spine.002",
				"UpperChest": "DEF-spine.003", "Neck": "DEF-spine.004", "Head": "DEF-spine.005"}
			if side == "":
				return torso.get(base, base)
			var m := {"UpperArm": "upper_arm", "LowerArm": "forearm", "Hand": "hand", "Shoulder": "shoulder",
				"UpperLeg": "thigh", "LowerLeg": "shin", "Foot": "foot", "Toes": "toe",
				"IndexProximal": "f_index.01", "MiddleProximal": "f_middle.01", "RingProximal": "f_ring.01",
				"LittleProximal": "f_pinky.01"}
			return "DEF-%s.%s" % [m.get(base, base), side]
	return godot


## A Node3D scaled by [param scale] holding a Skeleton3D built in [param convention]. Its meta
## "godot_index" maps Godot names to bone indices, "facing" is the model-space forward.
## [param rest_scale] scales the rest pose inside the skeleton (a rig modelled in centimetres is 100);
## [param arm] scales the arms (0.6: a short-armed character).
static func build(convention: String, scale: Vector3, facing_z: float, twist: bool, rng: RandomNumberGenerator, rest_scale := 1.0, arm := 1.0) -> Node3D:
	var holder := Node3D.new()
	holder.scale = scale
	var sk := Skeleton3D.new()
	sk.name = "Skeleton3D"
	holder.add_child(sk)
	var turn := Basis(Vector3.UP, PI) if facing_z > 0.0 else Basis.IDENTITY
	var global := {}
	var index := {}
	for entry in reference_body(arm):
		var name: String = entry[0]
		var parent: String = entry[1]
		var pos: Vector3 = turn * (entry[2] as Vector3) * rest_scale
		var parent_index: int = -1 if parent == "" else index[parent]
		if twist and name.ends_with("LowerArm"):
			# Rigify splits the upper arm in two numbered segments (`DEF-upper_arm.L.001`).
			var t := sk.add_bone(rename(parent, convention) + (".001" if convention == "rigify" else "_twist"))
			sk.set_bone_parent(t, parent_index)
			var tg := Transform3D(_random_basis(rng), ((global[parent] as Transform3D).origin + pos) * 0.5)
			sk.set_bone_rest(t, (global[parent] as Transform3D).affine_inverse() * tg)
			global[name + "_twist"] = tg
			sk.reset_bone_poses()
			parent_index = t
		var i := sk.add_bone(rename(name, convention))
		var g := Transform3D(_random_basis(rng), pos)
		if parent_index >= 0:
			sk.set_bone_parent(i, parent_index)
			var pg: Transform3D = global[name + "_twist"] if (twist and name.ends_with("LowerArm")) else global[parent]
			sk.set_bone_rest(i, pg.affine_inverse() * g)
		else:
			sk.set_bone_rest(i, g)
		global[name] = g
		index[name] = i
		sk.reset_bone_poses()
	sk.reset_bone_poses()
	holder.set_meta("godot_index", index)
	holder.set_meta("facing", Vector3(0, 0, facing_z))
	return holder


static func _random_basis(rng: RandomNumberGenerator) -> Basis:
	var q := Quaternion(rng.randf_range(-1, 1), rng.randf_range(-1, 1), rng.randf_range(-1, 1), rng.randf_range(-1, 1))
	if q.length() < 1e-3:
		return Basis.IDENTITY
	return Basis(q.normalized())
