# timeout: 900
extends EntwineTest
## Every node on humanoids it was never tuned for (rig_generator.gd: each naming convention, random
## per-bone rest rotations, scales 0.01 / 1 / 100 on the node above the skeleton, facing −Z or +Z,
## twist bones between upper arm and forearm), with no bone name or axis set by hand. Figures are
## printed as `rig <convention> scale <s> facing <±Z> twist <b>: …` (see the suite's log).

const GEN := preload("res://tests/rig/rig_generator.gd")
const HAND_BOX := preload("res://tests/lib/hand_box.gd")
const KIT := preload("res://tests/rig/rig_kit.gd")
## The generated hand's thickness at the palm (a human hand's, about 3 cm for an 8 cm wide hand).
const HAND_THICKNESS := 0.03
const SCALES := [0.01, 1.0, 100.0]

var _rng := RandomNumberGenerator.new()


func _cases() -> Array:
	var out := []
	var k := 0
	for convention in GEN.CONVENTIONS:
		for s in SCALES:
			for facing in [-1.0, 1.0]:
				out.append([convention, s, facing, k % 2 == 1])
				k += 1
	return out


func _label(c: Array) -> String:
	return "rig %s scale %s facing %sZ twist %s" % [c[0], c[1], "+" if c[2] > 0 else "-", c[3]]


func test_limb_ik_finds_both_arms_and_reaches_random_targets() -> void:
	_rng.seed = 15
	for c in _cases():
		var s: float = c[1]
		var holder := add(GEN.build(c[0], Vector3.ONE * s, c[2], c[3], _rng)) as Node3D
		var sk := holder.get_node("Skeleton3D") as Skeleton3D
		var index: Dictionary = holder.get_meta("godot_index")
		var worst := 0.0
		for side in ["Left", "Right"]:
			var ik := EntwineLimbIK.new()
			ik.limb = EntwineLimbIK.LIMB_LEFT_ARM if side == "Left" else EntwineLimbIK.LIMB_RIGHT_ARM
			sk.add_child(ik)
			var expected := PackedStringArray()
			for b in ["UpperArm", "LowerArm", "Hand"]:
				expected.append(GEN.rename(side + b, c[0]))
			check(ik.get_resolved_bones() == expected, "%s: %s arm found" % [_label(c), side], expected, ik.get_resolved_bones())
			var bones := [index[side + "UpperArm"], index[side + "LowerArm"], index[side + "Hand"]]
			var rest := await KIT.world_poses(self, sk, bones)
			var reach := rest[0].origin.distance_to(rest[1].origin) + rest[1].origin.distance_to(rest[2].origin)
			check_near(reach, 0.54 * s, 0.001 * s, "%s: arm length in the world" % _label(c))
			for t in 4:
				var dir := Vector3(_rng.randf_range(-1, 1), _rng.randf_range(-1, 1), _rng.randf_range(-1, 1)).normalized()
				var goal := rest[0].origin + dir * reach * _rng.randf_range(0.3, 0.9)
				ik.target_transform = Transform3D(Basis.IDENTITY, goal)
				var got := await KIT.world_poses(self, sk, bones)
				var err := got[2].origin.distance_to(goal)
				worst = maxf(worst, err / s)
				check(err <= 0.001 * s, "%s: %s hand within 1 mm × scale of a random target" % [_label(c), side], 0.001 * s, err)
			ik.queue_free()
		print("%s: limb_ik worst reach error %.4f mm (per unit scale)" % [_label(c), worst * 1000.0])
		holder.queue_free()
		await frames(1)


func test_soldier_bearing_turns_eyes_right_and_salutes_with_no_settings() -> void:
	_rng.seed = 16
	for c in _cases():
		var s: float = c[1]
		var holder := add(GEN.build(c[0], Vector3.ONE * s, c[2], c[3], _rng)) as Node3D
		var sk := holder.get_node("Skeleton3D") as Skeleton3D
		var index: Dictionary = holder.get_meta("godot_index")
		var facing: Vector3 = holder.get_meta("facing")
		var bearing := EntwineSoldierBearing.new()
		sk.add_child(bearing)
		var ik := bearing.create_salute_ik()
		var head: int = index["Head"]
		var hand: int = index["RightHand"]
		# The head's forward in its own frame, from the generator's facing (outside the rig code).
		var head_forward_local := sk.get_bone_global_rest(head).basis.inverse() * facing
		var right := facing.cross(Vector3.UP)
		var head_at := holder.global_transform * sk.get_bone_global_rest(head).origin
		var look := head_at + (holder.global_transform.basis * (right * 2.0 + facing * 1.0))
		bearing.look_target = look
		bearing.looking = true
		bearing.saluting = true
		for i in 40:
			await physics_frames(1)
		var poses := await KIT.world_poses(self, sk, [head, hand])
		var fwd := (poses[0].basis * head_forward_local).normalized()
		var to := (look - poses[0].origin).normalized()
		var look_err := rad_to_deg(fwd.angle_to(to))
		check(look_err <= 5.0, "%s: eyes right on the target within 5°" % _label(c), 5.0, look_err)
		var target := bearing.get_salute_target()
		var hand_err := poses[1].origin.distance_to(target.origin)
		check(bearing.get_salute_weight() > 0.99, "%s: salute raised" % _label(c), 1.0, bearing.get_salute_weight())
		check(hand_err <= 0.01 * s, "%s: the saluting hand on its target within 1 cm × scale" % _label(c), 0.01 * s, hand_err)
		var hand_to_head := poses[1].origin.distance_to(poses[0].origin) / s
		check(hand_to_head < 0.3, "%s: the salute hand is near the head" % _label(c), "< 0.3", hand_to_head)
		check(ik.get_resolved_bones().size() == 3 and ik.get_resolved_bones()[2] == GEN.rename("RightHand", c[0]),
			"%s: the salute EntwineLimbIK is on the right arm" % _label(c), GEN.rename("RightHand", c[0]), ik.get_resolved_bones())
		print("%s: bearing look error %.2f°, salute hand error %.4f mm (per unit scale)" % [_label(c), look_err, hand_err / s * 1000.0])
		holder.queue_free()
		await frames(1)


## Setting the hand bone after the bearing exists re-points its salute EntwineLimbIK: the new hand moves.
func test_changing_the_salute_hand_rebuilds_its_limb_ik() -> void:
	_rng.seed = 17
	var holder := add(GEN.build("blender", Vector3.ONE, -1.0, false, _rng)) as Node3D
	var sk := holder.get_node("Skeleton3D") as Skeleton3D
	var index: Dictionary = holder.get_meta("godot_index")
	var bearing := EntwineSoldierBearing.new()
	sk.add_child(bearing)
	var ik := bearing.create_salute_ik()
	bearing.saluting = true
	await physics_frames(5)
	bearing.hand_bone = GEN.rename("LeftHand", "blender")
	for i in 40:
		await physics_frames(1)
	check(ik.get_resolved_bones().size() == 3 and ik.get_resolved_bones()[0] == GEN.rename("LeftUpperArm", "blender"),
		"the salute EntwineLimbIK follows hand_bone", GEN.rename("LeftUpperArm", "blender"), ik.get_resolved_bones())
	var poses := await KIT.world_poses(self, sk, [index["LeftHand"]])
	var err := poses[0].origin.distance_to(bearing.get_salute_target().origin)
	check(err <= 0.01, "the new hand reaches the salute target", 0.01, err)


## One warning per node, naming its path, the skeleton and what was tried.
func test_a_rig_without_arms_warns_once_per_node_with_path_and_names_tried() -> void:
	var holder := add(Node3D.new()) as Node3D
	var sk := Skeleton3D.new()
	sk.name = "Armless"
	holder.add_child(sk)
	sk.add_bone("torso")
	sk.add_bone("skull")
	sk.set_bone_parent(1, 0)
	var ik := EntwineLimbIK.new()
	ik.name = "ArmIK"
	sk.add_child(ik)
	for i in 5:
		await frames(1)
		ik.is_chain_valid()
	var text := "EntwineLimbIK '%s': upper_bone is empty and no LeftUpperArm bone was found in skeleton '%s' (tried: <side>UpperArm" \
		% [str(ik.get_path()), str(sk.get_path())]
	expect_warning(text)
	check(logged_count(text) == 1, "one warning naming the EntwineLimbIK's path, the skeleton and the names tried", 1, logged_count(text))


## A squad of seven soldiers whose rig has no head: one warning for the squad, naming the soldier
## whose bearing met it first and the squad, not seven identical ones.
func test_a_squad_of_headless_rigs_warns_once_naming_a_soldier_and_the_squad() -> void:
	# The soldiers are in the squad before it enters the tree, as in a scene.
	var squad := FormationController.new()
	squad.name = "HeadlessSquad"
	for i in 7:
		var soldier := Node3D.new()
		soldier.name = "Soldier%d" % i
		soldier.position = Vector3(i * 0.8, 0, 0)
		var sk := Skeleton3D.new()
		soldier.add_child(sk)
		sk.add_bone("torso")
		sk.add_bone("blob")
		sk.set_bone_parent(1, 0)
		sk.set_bone_rest(1, Transform3D(Basis.IDENTITY, Vector3(0, 0.5, 0)))
		squad.add_child(soldier)
	add(squad)
	expect_warning("no Head bone was found")
	await physics_frames(3)
	squad.dress()
	for i in 10:
		await frames(1)
	var count := logged_count("no Head bone was found")
	var once := logged_count("printed once for squad '%s'" % str(squad.get_path()))
	print("headless squad: %d head warnings, %d naming the squad" % [count, once])
	check(count == 1, "one head warning for the squad of seven", 1, count)
	check(once == 1, "the warning names the squad", 1, once)
	var named := logged_count("EntwineSoldierBearing '%s/Soldier" % str(squad.get_path()))
	check(named == 1, "the warning names the soldier's bearing", 1, named)


## HoldHandComponent finds the arm layer in the character's AnimationTree (the Blend2 whose filter
## passes the arm bones), and none when no filtered node passes them.
func test_arm_layer_parameters_are_detected_from_the_animation_tree() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	world.add_child(EntwineHoldHandRoom.new())
	var comps := []
	for i in 2:
		var c := (load("res://characters/test_character.tscn") as PackedScene).instantiate() as TestCharacter
		c.position = Vector3(i * 2.0, 0, 0)
		if i == 1:
			# This character's tree is its own copy, with the arm filter off.
			var root := (c.animation_tree.tree_root as AnimationNodeBlendTree).duplicate(true) as AnimationNodeBlendTree
			(root.get_node(&"arms") as AnimationNodeBlend2).filter_enabled = false
			c.animation_tree.tree_root = root
		world.add_child(c)
		var comp := HoldHandComponent.new()
		c.add_child(comp)
		comps.append(comp)
	await physics_frames(2)
	check(comps[0].get_arm_layers() == PackedStringArray(["parameters/arms/blend_amount"]),
		"the filtered arm blend is found", ["parameters/arms/blend_amount"], comps[0].get_arm_layers())
	check(comps[1].get_arm_layers().is_empty(), "no filtered node, no arm layer", [], comps[1].get_arm_layers())
	comps[1].arm_layer_parameters = PackedStringArray(["parameters/move/blend_amount"])
	check(comps[1].get_arm_layers() == PackedStringArray(["parameters/move/blend_amount"]), "a set list wins",
		["parameters/move/blend_amount"], comps[1].get_arm_layers())


## A TestCharacter body (capsule, movement) whose skeleton is replaced by a generated rig (its
## animation removed: the generated bones have other names). A rig facing +Z is turned to face the
## body's −Z, as a glTF humanoid is placed.
func _generated_character(c: Array, world: Node3D, at: Vector3, holder_scale := -1.0, arm := 1.0) -> Array:
	var body := (load("res://characters/test_character.tscn") as PackedScene).instantiate() as TestCharacter
	body.drive_animation = false
	for n in ["Skeleton3D", "AnimationTree", "AnimationPlayer"]:
		var old := body.get_node(n)
		body.remove_child(old)
		old.free()
	var s: float = c[1] if holder_scale < 0.0 else holder_scale
	var holder := GEN.build(c[0], Vector3.ONE * s, c[2], c[3], _rng, 1.0, arm)
	if c[2] > 0.0:
		holder.rotation.y = PI
	body.add_child(holder)
	body.position = at
	world.add_child(body)
	return [body, holder]


## The generated hand on [param side] as a box in the skeleton's rest space: from the wrist toward
## the knuckles for twice their distance (the finger tips), across the knuckles (index → little,
## widened by a finger: × 4/3) and [constant HAND_THICKNESS] thick. Worked out from the generator's
## bones, not from anything the nodes report.
func _rest_hand_box(holder: Node3D, side: String) -> Array:
	var sk := holder.get_node("Skeleton3D") as Skeleton3D
	var index: Dictionary = holder.get_meta("godot_index")
	var at := func(n: String) -> Vector3: return sk.get_bone_global_rest(index[side + n]).origin
	var wrist: Vector3 = at.call("Hand")
	var knuckles: Vector3 = (at.call("IndexProximal") + at.call("MiddleProximal") + at.call("RingProximal") + at.call("LittleProximal")) / 4.0
	var across: Vector3 = at.call("IndexProximal") - at.call("LittleProximal")
	return HAND_BOX.along(wrist, knuckles - wrist, across, 2.0 * wrist.distance_to(knuckles), across.length() * 4.0 / 3.0,
		HAND_THICKNESS * (knuckles - wrist).length() / 0.08)


## A pair of generated characters holds hands with no setting made by hand, at scales 0.01, 1 and
## 100 (the whole world scaled, bodies and rigs alike): each finds its hand and arm, the pair walks,
## both hands stay within 1 cm × scale of the shared contact, and the two hands (boxes from the
## generator's own bones) meet palm to palm, overlapping by at most 5 mm × scale.
func test_hold_hand_pair_on_generated_rigs_walks_with_hands_together() -> void:
	_rng.seed = 18
	await _walk_pairs(_cases(), 1.0)


## A short-armed pair (upper arm and forearm 0.6 of the reference's: 0.32 m arms on a 1.75 m body)
## still reaches the shared contact, palm to palm, at each scale.
func test_short_armed_pair_reaches_the_contact() -> void:
	_rng.seed = 21
	var cases := []
	for c in _cases():
		if c[0] in ["godot", "mixamo"]:
			cases.append(c)
	await _walk_pairs(cases, 0.6)


## Walks a pair of generated characters (arms [param arm] times the reference's) for each case and
## checks the grip's contract.
func _walk_pairs(cases: Array, arm: float) -> void:
	for c in cases:
		var scale: float = c[1]
		var world := add(Node3D.new()) as Node3D
		world.scale = Vector3.ONE * scale
		add_floor(world)
		var room := EntwineHoldHandRoom.new()
		world.add_child(room)
		var made := []
		var comps := []
		for i in 2:
			made.append(_generated_character(c, world, Vector3(i * 0.8, 0, 0), 1.0, arm))
			made[i][0].move_speed *= scale
			var comp := HoldHandComponent.new()
			made[i][0].add_child(comp)
			comps.append(comp)
		await physics_frames(2)
		var rest_boxes := [_rest_hand_box(made[0][1], "Left"), _rest_hand_box(made[1][1], "Right")]
		var skeletons := [made[0][1].get_node("Skeleton3D"), made[1][1].get_node("Skeleton3D")]
		var hands := [made[0][1].get_meta("godot_index")["LeftHand"], made[1][1].get_meta("godot_index")["RightHand"]]
		var hand_boxes := func(i: int) -> Array: return KIT.posed_box(skeletons[i], hands[i], rest_boxes[i])
		var got: Dictionary = await KIT.walk_pair(self, [made[0][0], made[1][0]], skeletons, comps, hand_boxes, 150)
		check(got["paired"], "%s: paired" % _label(c))
		var samples: int = got["samples"]
		var worst: float = got["gap"]
		var worst_overlap: float = got["overlap"]
		var ik: EntwineLimbIK = comps[0].get_hand_ik()
		check(ik != null and ik.get_resolved_bones().size() == 3 and ik.get_resolved_bones()[2] == GEN.rename("LeftHand", c[0]),
			"%s: the initiator's left hand is found" % _label(c), GEN.rename("LeftHand", c[0]), ik.get_resolved_bones() if ik else null)
		check(samples > 30, "%s: hands held while walking" % _label(c), "> 30", samples)
		check(worst <= 0.01 * scale, "%s: both hands within 1 cm × scale of the shared contact" % _label(c), 0.01 * scale, worst)
		check(worst_overlap <= 0.005 * scale, "%s: the hands overlap by at most 5 mm × scale" % _label(c), 0.005 * scale, worst_overlap)
		print("%s arms %.1f: hold_hand hand to contact %.3f mm, hands overlap %.3f mm (per unit scale) over %d frames, k %.3f" % [
			_label(c), arm, worst * 1000.0 / scale, worst_overlap * 1000.0 / scale, samples, comps[0].get_proportion()])
		world.queue_free()
		await frames(2)


## The palm of a generated hand, in the hand bone's own space, from the generator's bones (wrist →
## knuckles for the fingers; perpendicular to them and to the index → little line, out of the palm).
func _palm_local(holder: Node3D, side: String) -> Vector3:
	var sk := holder.get_node("Skeleton3D") as Skeleton3D
	var index: Dictionary = holder.get_meta("godot_index")
	var at := func(n: String) -> Vector3: return sk.get_bone_global_rest(index[side + n]).origin
	var wrist: Vector3 = at.call("Hand")
	var knuckles: Vector3 = (at.call("IndexProximal") + at.call("MiddleProximal") + at.call("RingProximal") + at.call("LittleProximal")) / 4.0
	var fingers := knuckles - wrist
	var across: Vector3 = at.call("IndexProximal") - at.call("LittleProximal")
	var palm := fingers.cross(across) if side == "Left" else across.cross(fingers)
	return (sk.get_bone_global_rest(index[side + "Hand"]).basis.inverse() * palm).normalized()


## A generated character walking along a wall touches it with the near hand, palm against it,
## with no palm, finger, bone or length setting made by hand, at scales 0.01, 1 and 100 (the whole
## world scaled): the wrist within 5 cm × scale of its place off the wall, the palm within 10°.
func test_env_touch_on_generated_rigs_puts_the_palm_on_the_wall() -> void:
	_rng.seed = 19
	for c in _cases():
		var scale: float = c[1]
		for face_x in [-0.45, 0.45]:
			var world := add(Node3D.new()) as Node3D
			world.scale = Vector3.ONE * scale
			var sign_x := signf(face_x)
			KIT.wall_world(self, world, face_x)
			var made := _generated_character(c, world, Vector3(0, 0, 4), 1.0)
			var body: TestCharacter = made[0]
			body.move_speed *= scale
			var holder: Node3D = made[1]
			var side := "Left" if face_x < 0.0 else "Right"
			var what := "%s wall %s" % [_label(c), side]
			var sk := holder.get_node("Skeleton3D") as Skeleton3D
			var hand_bone: int = holder.get_meta("godot_index")[side + "Hand"]
			var palm_local := _palm_local(holder, side)
			var measure := func() -> Array:
				var hand := sk.global_transform * sk.get_bone_global_pose(hand_bone)
				var palm := (hand.basis * palm_local).normalized()  # a uniform scale keeps directions
				return [rad_to_deg(palm.angle_to(Vector3(sign_x, 0, 0))), absf((face_x - hand.origin.x / scale) * sign_x - 0.05)]
			var got: Dictionary = await KIT.touch_wall(self, body, sk, measure)
			var node: EnvironmentInteractionStateMachine = got["node"]
			check(got["touched"], "%s: the hand reaches Touch" % what)
			var samples: int = got["samples"]
			var worst_angle: float = got["angle"]
			var worst_wrist: float = got["wrist"]
			check(samples >= 5, "%s: sampled the touch" % what, ">= 5", samples)
			check(worst_angle <= 10.0, "%s: the palm faces the wall within 10°" % what, "<= 10°", worst_angle)
			check(worst_wrist <= 0.05, "%s: the wrist within 5 cm × scale of its place off the wall" % what, "<= 0.05 per unit scale", worst_wrist)
			print("%s: env_touch palm angle error %.2f°, wrist off its place %.4f m per unit scale over %d frames, k %.3f" % [what, worst_angle, worst_wrist, samples, node.get_proportion()])
			world.queue_free()
			await frames(2)


## A rig modelled in centimetres (rest pose ×100, node above scaled 0.01): the salute hand lands as
## far from the head as on a 1.75 m rig in metres (the offset scales with the rig's height).
func test_salute_offset_scales_with_the_rig() -> void:
	var distances := []
	for rest_scale in [1.0, 100.0]:
		_rng.seed = 20
		var holder := add(GEN.build("mixamo", Vector3.ONE / rest_scale, -1.0, false, _rng, rest_scale)) as Node3D
		var sk := holder.get_node("Skeleton3D") as Skeleton3D
		var index: Dictionary = holder.get_meta("godot_index")
		var bearing := EntwineSoldierBearing.new()
		sk.add_child(bearing)
		bearing.create_salute_ik()
		bearing.saluting = true
		for i in 40:
			await physics_frames(1)
		var poses := await KIT.world_poses(self, sk, [index["Head"], index["RightHand"]])
		distances.append(poses[0].origin.distance_to(poses[1].origin))
		holder.queue_free()
		await frames(1)
	# The seed's offset (0.14, 0.06, -0.08) m from the head is 0.172 m long.
	check_near(distances[0], 0.172, 0.01, "salute hand 0.17 m from the head on a rig in metres")
	check_near(distances[1], distances[0], 0.001, "the same in the world on a rig in centimetres")
	print("rig mixamo in cm: salute hand %.4f m from the head (in metres: %.4f m)" % [distances[1], distances[0]])
