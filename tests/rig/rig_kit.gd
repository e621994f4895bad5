extends RefCounted
## What the rig suites share (`rig_generated_test.gd`, `rig_real_test.gd`, `rig_scale_test.gd`):
## reading bones after the modifiers ran, moving a hand's rest box with its bone, walking a pair
## holding hands and walking a character along a wall, each measured the same way whatever the
## character is made of. The hand boxes come from each suite (the generator's bones, the model's own
## vertices, the test character's hand meshes), never from what the nodes report.

const HAND_BOX := preload("res://tests/lib/hand_box.gd")


## World transforms of [param bones] of [param sk], read during the next skeleton update (after the
## modifiers), or now when no update comes within five frames.
static func world_poses(t: EntwineTest, sk: Skeleton3D, bones: Array) -> Array[Transform3D]:
	var captured: Array[Transform3D] = []
	var read := func() -> Array[Transform3D]:
		var out: Array[Transform3D] = []
		for b in bones:
			out.append(sk.global_transform * sk.get_bone_global_pose(b))
		return out
	var capture := func() -> void:
		if captured.is_empty():
			captured.assign(read.call())
	sk.skeleton_updated.connect(capture)
	for i in 5:
		await t.process_frame
		if not captured.is_empty():
			break
	sk.skeleton_updated.disconnect(capture)
	return captured if not captured.is_empty() else read.call()


## [param box] (in the skeleton's rest space of [param bone]) moved with the bone's current pose
## into the world.
static func posed_box(sk: Skeleton3D, bone: int, box: Array) -> Array:
	var motion := sk.global_transform * sk.get_bone_global_pose(bone) * sk.get_bone_global_rest(bone).affine_inverse()
	var axes: Array = box[1]
	var half: Vector3 = box[2]
	var out_axes := []
	var out_half := Vector3.ZERO
	for k in 3:
		var a: Vector3 = motion.basis * (axes[k] as Vector3)
		out_axes.append(a.normalized())
		out_half[k] = half[k] * a.length()
	return [motion * (box[0] as Vector3), out_axes, out_half]


## Pairs [param comps] (on [param bodies], drawn by [param skeletons]; the initiator first), walks the initiator forward for [param steps]
## physics frames and measures, on every frame after the first second in which the hands are held
## at full weight: the farther hand's distance to the shared contact and the two hands' overlap.
## [param hand_boxes] gives each hand's world box as [code]func(i: int) -> Array[/code] (i = 0:
## the initiator's left hand, 1: the partner's right), read during each skeleton's update, as is the
## contact. Returns [code]{paired, samples, gap, overlap}[/code] (world units).
static func walk_pair(t: EntwineTest, bodies: Array, skeletons: Array, comps: Array, hand_boxes: Callable, steps := 180) -> Dictionary:
	var boxes := [null, null]
	var contacts := [Vector3.ZERO]
	var hooks := []
	for i in 2:
		var sk: Skeleton3D = skeletons[i]
		var hook := func() -> void:
			boxes[i] = hand_boxes.call(i)
			if i == 0:
				contacts[0] = comps[0].get_contact_point()
		sk.skeleton_updated.connect(hook)
		hooks.append([sk, hook])
	var paired: bool = comps[0].request(comps[1]) and comps[1].accept()
	bodies[0].move_input = Vector3(0, 0, -1)
	var gap := 0.0
	var overlap := 0.0
	var samples := 0
	for f in steps:
		await t.physics_frame
		if f > 60 and comps[0].are_hands_connected() and comps[1].get_hand_weight() >= 0.999 and boxes[0] != null and boxes[1] != null:
			samples += 1
			var contact: Vector3 = contacts[0]
			gap = maxf(gap, maxf(HAND_BOX.distance_to(boxes[0], contact), HAND_BOX.distance_to(boxes[1], contact)))
			overlap = maxf(overlap, HAND_BOX.overlap(boxes[0], boxes[1]))
	for h in hooks:
		if is_instance_valid(h[0]):
			(h[0] as Skeleton3D).skeleton_updated.disconnect(h[1])
	return {"paired": paired, "samples": samples, "gap": gap, "overlap": overlap}


## A floor and a wall 0.2 m thick and [param height] tall whose near face is at x = [param face_x]
## (layer 2, running along z), both in [param world]; the character is placed at z = 4 by the caller.
static func wall_world(t: EntwineTest, world: Node3D, face_x: float, height := 3.0) -> StaticBody3D:
	t.add_floor(world, 40.0)
	var wall := t.add_box(Vector3(face_x + 0.1 * signf(face_x), 0.5 * height, -2.0), Vector3(0.2, height, 14.0), 2, world)
	wall.collision_mask = 0
	return wall


## Adds an EnvironmentInteractionStateMachine (mask 2) to [param body], walks it forward and waits
## up to 8 s for Touch; then samples, up to 20 times during Touch, [param measure] (called with no
## argument after the skeleton [param sk] was posed; it returns [code][palm angle °, wrist error][/code]).
## Returns [code]{node, touched, samples, angle, wrist}[/code] (the worst of each).
static func touch_wall(t: EntwineTest, body: Node3D, sk: Skeleton3D, measure: Callable) -> Dictionary:
	var node := EnvironmentInteractionStateMachine.new()
	node.interactable_mask = 2
	body.add_child(node)
	body.move_input = Vector3(0, 0, -1)
	node.move_input = Vector3(0, 0, -1)
	var touched := await t.wait_until(func() -> bool: return node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH, 8.0)
	var worst_angle := 0.0
	var worst_wrist := 0.0
	var samples := 0
	while touched and node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH and samples < 20:
		var got := [null]
		var grab := func() -> void: got[0] = measure.call()
		sk.skeleton_updated.connect(grab, CONNECT_ONE_SHOT)
		await t.process_frame
		await t.process_frame
		if sk.skeleton_updated.is_connected(grab):
			sk.skeleton_updated.disconnect(grab)
		if got[0] == null or node.get_state() != EnvironmentInteractionStateMachine.STATE_TOUCH:
			break
		samples += 1
		worst_angle = maxf(worst_angle, got[0][0])
		worst_wrist = maxf(worst_wrist, got[0][1])
	return {"node": node, "touched": touched, "samples": samples, "angle": worst_angle, "wrist": worst_wrist}
