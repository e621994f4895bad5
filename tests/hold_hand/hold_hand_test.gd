# timeout: 180
extends EntwineTest
## HoldHandComponent on two (or three) test characters in one scene, through its public API.

const CHARACTER := preload("res://characters/test_character.tscn")
const HAND_BOX := preload("res://tests/lib/hand_box.gd")

var room: EntwineHoldHandRoom
## Hand world positions recorded during each skeleton update, keyed by skeleton.
var _hands := {}
## The hand's visible box (its mesh, in the world) recorded with [member _hands].
var _hand_boxes := {}
## The shared contact when the skeletons were posed (a physics tick may come in between).
var _contact_at_pose := Vector3.ZERO


## Builds a floor, a room and `count` characters with components; returns [characters, components].
func _scene(count := 2) -> Array:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	room = EntwineHoldHandRoom.new()
	world.add_child(room)
	var chars: Array[TestCharacter] = []
	var comps: Array[HoldHandComponent] = []
	for i in count:
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Character%d" % i
		c.position = Vector3(i * 1.5, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		c.add_child(comp)
		chars.append(c)
		comps.append(comp)
	await physics_frames(2)
	return [chars, comps]


## Pairs comps[0] (initiator) with comps[1] and waits until both are Active.
func _pair(comps: Array) -> void:
	check(comps[0].request(comps[1]), "request() accepted by the room")
	check(comps[1].accept(), "accept() accepted by the room")
	check(await wait_until(func() -> bool:
		return comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE \
			and comps[1].get_phase() == HoldHandComponent.PHASE_ACTIVE, 2.0), "both sides become Active")


func _record_hands(character: TestCharacter, bone: String) -> void:
	var skeleton := character.get_skeleton()
	var index := skeleton.find_bone(bone)
	var lower := skeleton.get_bone_parent(index)
	var upper := skeleton.get_bone_parent(lower)
	# The test character draws each hand as a box mesh on a BoneAttachment3D: the hand's real volume.
	var mesh: MeshInstance3D = null
	for child in skeleton.get_node("Att_" + bone).get_children():
		if child is MeshInstance3D and (child as MeshInstance3D).mesh is BoxMesh:
			mesh = child
	var size: Vector3 = (mesh.mesh as BoxMesh).size
	var local := mesh.transform
	skeleton.skeleton_updated.connect(func() -> void:
		var g := skeleton.global_transform
		_hands[character] = [g * skeleton.get_bone_global_pose(upper).origin,
			g * skeleton.get_bone_global_pose(lower).origin, g * skeleton.get_bone_global_pose(index).origin]
		_hand_boxes[character] = HAND_BOX.from_frame(g * skeleton.get_bone_global_pose(index) * local, Vector3.ZERO, size)
		var component := character.get_node_or_null("HoldHand") as HoldHandComponent
		if component != null and component.get_role() == HoldHandComponent.ROLE_INITIATOR:
			_contact_at_pose = component.get_contact_point())


func test_request_accept_runs_the_phases_with_one_preparation_frame() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var a: HoldHandComponent = comps[0]
	var b: HoldHandComponent = comps[1]
	var phases := {a: [], b: []}
	for c in [a, b]:
		c.phase_changed.connect(func(from: int, to: int) -> void:
			phases[c].append([from, to, Engine.get_physics_frames()]))
	var received := []
	b.request_received.connect(func(from: int) -> void: received.append(from))
	check(a.request(b), "request() returns true")
	await frames(1)
	check(received == [a.player_id], "the target hears who asked", [a.player_id], received)
	check(b.get_pending_request_from() == a.player_id, "the request waits for b's answer")
	await physics_frames(3)
	check(a.get_phase() == HoldHandComponent.PHASE_NONE, "a request alone starts nothing")
	check(b.accept(), "accept() returns true")
	await physics_frames(3)
	for c in [a, b]:
		var p: Array = phases[c]
		check(p.size() == 2 and p[0][0] == 0 and p[0][1] == 1 and p[1][0] == 1 and p[1][1] == 2,
			"phases None→Preparing→Active", "[[0,1],[1,2]]", p)
		if p.size() == 2:
			check(p[1][2] - p[0][2] == 1, "Active exactly one physics frame after Preparing", 1, p[1][2] - p[0][2])
	check(a.get_role() == HoldHandComponent.ROLE_INITIATOR, "the asker is the initiator")
	check(b.get_role() == HoldHandComponent.ROLE_RECIPIENT, "the accepter is the recipient")
	check(a.get_partner() == b and b.get_partner() == a, "partners point at each other")
	check(b.is_frozen() and chars[1].frozen and not chars[1].is_physics_processing(),
		"the recipient is frozen: flag set, its own physics suspended")
	check(not a.is_frozen() and chars[0].is_physics_processing(), "the initiator keeps control")


func test_a_server_peer_set_mid_pair_counts_for_it_from_the_next_frame() -> void:
	# The room reads whether it runs networked once per physics frame for the components' ticks: a
	# server peer set while a pair walks must count for them from the next frame, and so must the
	# peer's removal. On a server (peer 1) that does not play the initiator, the pair writes the
	# initiator's root (is_root_driven); locally, it does not.
	var parts := await _scene()
	var comps: Array = parts[1]
	var order: Array = [comps[0], comps[1]] if comps[0].get_player_id() != 1 else [comps[1], comps[0]]
	var initiator: HoldHandComponent = order[0]
	check(initiator.get_player_id() != 1, "the initiator is a player the server does not play", "!= 1", initiator.get_player_id())
	await _pair(order)
	await physics_frames(2)
	check(not initiator.is_root_driven(), "locally, the initiator's root is its own")
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 4) == OK, "server listens")
	get_multiplayer().multiplayer_peer = peer
	await physics_frames(2)
	check(initiator.is_root_driven(), "a server that does not play the initiator: the pair drives its root")
	get_multiplayer().multiplayer_peer = OfflineMultiplayerPeer.new()
	peer.close()
	await physics_frames(2)
	check(not initiator.is_root_driven(), "offline again: the initiator's root is its own")


func test_local_validation_refuses_bad_requests() -> void:
	var s: Array = await _scene(3)
	var comps: Array = s[1]
	expect_warning("cannot request itself")
	expect_warning("request() needs a valid HoldHandComponent target")
	check(not comps[0].request(comps[0]), "cannot ask oneself")
	check(not comps[0].request(null), "cannot ask nobody")
	check(not comps[0].accept(), "cannot accept without a request")
	await _pair(comps)
	check(not comps[2].request(comps[0]), "cannot ask a busy initiator")
	check(not comps[2].request(comps[1]), "cannot ask a busy recipient")
	check(not comps[0].request(comps[2]), "a busy player cannot ask")
	expect_warning("refused")
	check(logged_count("refused") >= 4, "each refusal is explained in a warning", ">= 4", logged_count("refused"))
	check(comps[2].get_phase() == HoldHandComponent.PHASE_NONE, "the third player stays out of it")


func test_decline_and_expiry_start_nothing() -> void:
	var s: Array = await _scene()
	var comps: Array = s[1]
	var a: HoldHandComponent = comps[0]
	var b: HoldHandComponent = comps[1]
	var answers := []
	a.request_declined.connect(func(by: int) -> void: answers.append(["declined", by]))
	a.request_expired.connect(func(to: int) -> void: answers.append(["expired", to]))
	a.request(b)
	check(b.decline(), "decline() returns true")
	await physics_frames(3)
	check(answers == [["declined", b.player_id]], "the asker hears the decline", [["declined", b.player_id]], answers)
	check(a.get_phase() == 0 and b.get_phase() == 0, "nobody holds hands without accepting")
	room.request_timeout = 0.5
	a.request(b)
	await create_timer(0.8).timeout
	await frames(1)
	check(answers.size() == 2 and answers[1] == ["expired", b.player_id], "the request expires after 0.5 s", "expired", answers)
	check(not b.accept(), "an expired request cannot be accepted")


func test_either_side_cancels_and_everything_is_restored() -> void:
	for canceller in [0, 1]:
		var s: Array = await _scene()
		var chars: Array = s[0]
		var comps: Array = s[1]
		var arms_before: float = chars[1].animation_tree.get("parameters/arms/blend_amount")
		await _pair(comps)
		await physics_frames(40)
		check(comps[1].get_hand_weight() > 0.99, "the recipient's hand is held", 1.0, comps[1].get_hand_weight())
		check(comps[canceller].cancel(), "cancel() from side %d" % canceller)
		await physics_frames(2)
		check(comps[0].get_phase() == 0 and comps[1].get_phase() == 0, "both sides stop")
		check(not chars[1].frozen and chars[1].is_physics_processing() and not comps[1].is_frozen(),
			"the recipient is unfrozen and its physics restored")
		await create_timer(0.2).timeout
		for c in comps:
			check(c.get_hand_weight() == 0.0, "hand IK faded out after the pair ended", 0.0, c.get_hand_weight())
		check_near(chars[1].animation_tree.get("parameters/arms/blend_amount"), arms_before, 1e-6,
			"the arm layer is restored")
		chars[0].get_parent().free()
		await frames(1)


func test_pair_walks_with_turns_hands_meet_and_recipient_follows() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var a: TestCharacter = chars[0]
	var b: TestCharacter = chars[1]
	var ia: HoldHandComponent = comps[0]
	_record_hands(a, "LeftHand")
	_record_hands(b, "RightHand")
	var connections := []
	ia.hands_connected_changed.connect(func(on: bool) -> void: connections.append(on))
	await _pair(comps)
	# A path with turns and a stop: [direction, seconds].
	var legs := [[Vector3(0, 0, -1), 3.0], [Vector3(1, 0, -1).normalized(), 2.5], [Vector3(1, 0, 0), 2.5],
		[Vector3(0, 0, 1), 2.5], [Vector3.ZERO, 1.5]]
	var max_root_error := 0.0
	var max_contact_gap := 0.0
	var max_overlap := 0.0
	var max_wrists := 0.0
	var contact_samples := 0
	var root_samples := 0
	var bad := 0
	var flips := 0
	var last_bend := [Vector3.ZERO, Vector3.ZERO]
	var frame_rate := Engine.physics_ticks_per_second
	for leg in legs:
		a.move_input = leg[0]
		var n := int(leg[1] * frame_rate)
		for f in n:
			await physics_frame
			var target: Vector3 = a.global_transform * ia.follow_offset
			# Straight stretches: from 1 s after a turn (the initiator itself takes a moment to turn).
			if f > frame_rate:
				root_samples += 1
				max_root_error = maxf(max_root_error, b.global_position.distance_to(target))
			if not (_hands.has(a) and _hands.has(b)):
				continue
			var ha: Array = _hands[a]
			var hb: Array = _hands[b]
			for p in ha + hb:
				if not (p as Vector3).is_finite():
					bad += 1
			if ia.are_hands_connected() and ia.has_shared_reach() and comps[1].get_hand_weight() >= 0.999:
				contact_samples += 1
				# The hands' volumes (their meshes' boxes) both reach the shared contact and do not
				# pass through each other.
				var contact := _contact_at_pose
				max_contact_gap = maxf(max_contact_gap, maxf(HAND_BOX.distance_to(_hand_boxes[a], contact),
					HAND_BOX.distance_to(_hand_boxes[b], contact)))
				max_overlap = maxf(max_overlap, HAND_BOX.overlap(_hand_boxes[a], _hand_boxes[b]))
				max_wrists = maxf(max_wrists, (ha[2] as Vector3).distance_to(hb[2]))
			# While the hands are held, elbows bend toward the body-derived pole (back, out, a little
			# down) and never jump to the other side of the shoulder→hand line between two frames.
			var held: bool = ia.are_hands_connected() and comps[0].get_hand_weight() >= 0.999
			for k in 2:
				if not held:
					last_bend[k] = Vector3.ZERO
					continue
				var j: Array = [ha, hb][k]
				var ik: EntwineLimbIK = comps[k].get_hand_ik()
				var pole: Vector3 = ik.get_parent().global_basis * ik.pole_direction
				var line: Vector3 = (j[2] - j[0]).normalized()
				var bend: Vector3 = (j[1] - j[0]) - line * (j[1] - j[0]).dot(line)
				var pole_perp: Vector3 = pole - line * pole.dot(line)
				if bend.length() < 0.01:
					continue
				bend = bend.normalized()
				# The pole only decides when it is well off the arm's line (≥ 30°).
				var pole_decides := pole_perp.length() >= 0.5 * pole.length()
				if (pole_decides and bend.dot(pole_perp) < 0.0) \
						or (last_bend[k] != Vector3.ZERO and bend.dot(last_bend[k]) < 0.0):
					flips += 1
					print("elbow flip: arm %d at frame %d of leg %s, bend %s, previous %s, pole %s, line %s, sin %.3f, hand %s" % [k, f, leg, bend, last_bend[k], pole_perp.normalized(), line, pole_perp.length() / pole.length(), j])
				last_bend[k] = bend
	print("hold_hand walk: root error max %.4f m over %d samples; hand to contact max %.4f m, hand boxes overlap max %.4f m, wrists apart max %.4f m over %d samples" % [
		max_root_error, root_samples, max_contact_gap, max_overlap, max_wrists, contact_samples])
	check(root_samples > 300 and max_root_error <= 0.02, "recipient root within 2 cm of its follow target on straight stretches",
		"<= 0.02 m", max_root_error)
	check(contact_samples > 300 and max_contact_gap <= 0.01, "both hands within 1 cm of the shared contact while connected",
		"<= 0.01 m", max_contact_gap)
	check(max_overlap <= 0.005, "the hands' boxes overlap by at most 5 mm (palm to palm, not through each other)",
		"<= 0.005 m", max_overlap)
	check(bad == 0, "no NaN in the hands", 0, bad)
	check(flips == 0, "elbows bend toward the body pole and never flip sides", 0, flips)
	check(connections == [true], "hands connect once and never flicker", [true], connections)


## With the grip off and no offsets, both wrists go to the one contact point: the measure above
## sees the two hands pass through each other.
func test_without_the_grip_the_hands_pass_through_each_other() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	comps[0].auto_grip = false
	_record_hands(chars[0], "LeftHand")
	_record_hands(chars[1], "RightHand")
	await _pair(comps)
	await physics_frames(60)
	check(comps[1].get_hand_weight() >= 0.999, "hands held")
	var overlap: float = HAND_BOX.overlap(_hand_boxes[chars[0]], _hand_boxes[chars[1]])
	var wrists: float = (_hands[chars[0]][2] as Vector3).distance_to(_hands[chars[1]][2])
	print("hold_hand without the grip: hand boxes overlap %.4f m, wrists apart %.4f m" % [overlap, wrists])
	check(overlap > 0.02, "the hands pass through each other", "> 0.02 m", overlap)
	check(comps[0].get_grip().is_empty() == false, "the grip still reports the hand it found")


func test_hysteresis_boundary_does_not_flicker() -> void:
	var s: Array = await _scene()
	var comps: Array = s[1]
	var ia: HoldHandComponent = comps[0]
	var events := []
	ia.hands_connected_changed.connect(func(on: bool) -> void: events.append(on))
	await _pair(comps)
	await physics_frames(20)
	# Move the follow point out past 1.51 m, then wobble between the thresholds, then back in.
	for x in [-1.7, -1.3, -1.45, -1.2, -1.48, -1.15, -0.9]:
		ia.follow_offset = Vector3(x, 0, 0)
		await physics_frames(20)
	check(events == [true, false, true], "connect, let go past 1.51 m, reconnect only under 1.1 m",
		[true, false, true], events)


func test_recipient_never_ends_inside_a_wall() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var a: TestCharacter = chars[0]
	var b: TestCharacter = chars[1]
	# A wall across the recipient's path only (it walks 0.82 m to the initiator's left).
	add_box(Vector3(-1.0, 1.0, -3.0), Vector3(1.0, 2.0, 0.2), 1, a.get_parent())
	await _pair(comps)
	a.move_input = Vector3(0, 0, -1)
	var deepest := 0.0
	for f in 240:
		await physics_frame
		# Capsule radius 0.25 against the wall's footprint x ∈ [-1.5, -0.5], z ∈ [-3.1, -2.9].
		var p := b.global_position
		var dx := maxf(maxf(-1.5 - p.x, p.x + 0.5), 0.0)
		var dz := maxf(maxf(-3.1 - p.z, p.z + 2.9), 0.0)
		var inside := 0.25 - Vector2(dx, dz).length()
		deepest = maxf(deepest, inside)
	check(deepest <= 0.01, "the recipient's capsule never sinks into the wall", "<= 0.01 m", deepest)
	check(a.global_position.z < -5.0, "the initiator walked past the wall", "< -5", a.global_position.z)


func test_recipient_freed_from_a_wall_catches_up_at_max_follow_speed() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var a: TestCharacter = chars[0]
	var b: TestCharacter = chars[1]
	var lead: HoldHandComponent = comps[0]
	lead.min_follow_speed = 1.0
	lead.max_follow_speed = 3.0
	# A wall across the recipient's lane only (x ∈ [-1.5, -0.5]), 1 m ahead of the pair.
	var wall := add_box(Vector3(-1.0, 1.0, -1.0), Vector3(1.0, 2.0, 0.2), 1, a.get_parent())
	await _pair(comps)
	a.move_input = Vector3(0, 0, -1)
	await create_timer(1.5).timeout
	a.move_input = Vector3.ZERO
	await physics_frames(5)
	var gap := b.global_position.distance_to(lead.get_follow_position())
	var follow_point := a.global_transform * Vector3(-0.82, 0, 0.17)
	var held_back := b.global_position.distance_to(follow_point)
	check(held_back > 1.0, "the wall held the recipient back", "> 1 m behind its follow point", held_back)
	check(gap < 0.01, "the driven position stayed with the blocked body", "< 0.01 m", gap)
	wall.queue_free()
	var dt := 1.0 / Engine.physics_ticks_per_second
	var limit: float = lead.max_follow_speed * dt + 0.001
	var last := b.global_position
	var largest := 0.0
	for f in 90:
		await physics_frame
		largest = maxf(largest, b.global_position.distance_to(last))
		last = b.global_position
	print("HOLD_HAND wall: held back %.3f m; largest step after the wall went %.4f m per frame (limit %.4f m = max_follow_speed·dt + 1 mm)" % [
		held_back, largest, limit])
	check(largest <= limit, "freed, the recipient never moves faster than max_follow_speed", "<= %.4f m per frame" % limit, largest)
	check(b.global_position.distance_to(follow_point) < 0.05, "and it caught up", "< 0.05 m", b.global_position.distance_to(follow_point))


func test_missing_partner_pauses_and_resumes() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var b: TestCharacter = chars[1]
	await _pair(comps)
	await physics_frames(30)
	var world := b.get_parent()
	world.remove_child(b)
	chars[0].move_input = Vector3(0, 0, -1)
	await physics_frames(30)
	check(comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE, "the pair survives a partner out of the tree")
	check(comps[0].get_hand_weight() == 0.0, "the initiator's hand is released", 0.0, comps[0].get_hand_weight())
	chars[0].move_input = Vector3.ZERO
	world.add_child(b)
	await physics_frames(60)
	var target: Vector3 = chars[0].global_transform * comps[0].follow_offset
	check_near(b.global_position, target, 0.02, "following resumes when the partner is back")
	check(comps[0].get_hand_weight() > 0.99, "the hands are held again", 1.0, comps[0].get_hand_weight())


func test_missing_hand_bone_fades_ik_but_follow_goes_on() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	comps[1].recipient_hand_bone = "NoSuchHand"
	comps[0].recipient_hand_bone = "NoSuchHand"
	await _pair(comps)
	chars[0].move_input = Vector3(0, 0, -1)
	await physics_frames(120)
	expect_warning("'NoSuchHand'")
	check(logged_count("'NoSuchHand'") == 1, "one warning names the missing bone", 1, logged_count("'NoSuchHand'"))
	for c in comps:
		check(c.get_hand_weight() == 0.0, "no hand IK without the bone", 0.0, c.get_hand_weight())
	var target: Vector3 = chars[0].global_transform * comps[0].follow_offset
	check_near(chars[1].global_position, target, 0.05, "the recipient still follows")
	check_near(chars[1].animation_tree.get("parameters/move/blend_amount"),
		chars[0].animation_tree.get("parameters/move/blend_amount"), 1e-5, "and mirrors the walk")


func test_recipient_mirrors_the_initiators_animation_except_arms() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	await _pair(comps)
	chars[0].move_input = Vector3(0, 0, -1)
	await physics_frames(60)
	for p in ["parameters/move/blend_amount", "parameters/speed/scale"]:
		check_near(chars[1].animation_tree.get(p), chars[0].animation_tree.get(p), 1e-5, "%s mirrored" % p)
	check(chars[0].animation_tree.get("parameters/move/blend_amount") > 0.5, "the initiator is walking")
	check_near(chars[1].animation_tree.get("parameters/arms/blend_amount"), 0.0, 1e-4,
		"the arm layer is held out of the locomotion on the recipient")


## An arm layer inside a nested blend tree (the character's whole tree under a node "body" of an
## outer one) is found and held out of the mirroring like a top-level one.
func test_a_nested_arm_layer_is_detected_and_held_out() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	for c in chars:
		c.drive_animation = false
		var outer := AnimationNodeBlendTree.new()
		outer.add_node(&"body", (c.animation_tree.tree_root as AnimationNodeBlendTree).duplicate(true))
		outer.connect_node(&"output", 0, &"body")
		c.animation_tree.tree_root = outer
	await physics_frames(2)
	check(comps[0].get_arm_layers() == PackedStringArray(["parameters/body/arms/blend_amount"]),
		"the nested arm blend is found", ["parameters/body/arms/blend_amount"], comps[0].get_arm_layers())
	await _pair(comps)
	chars[0].animation_tree.set("parameters/body/move/blend_amount", 0.7)
	chars[0].animation_tree.set("parameters/body/arms/blend_amount", 0.8)
	await physics_frames(10)
	check_near(chars[1].animation_tree.get("parameters/body/move/blend_amount"), 0.7, 1e-4,
		"the nested locomotion blend is mirrored")
	check_near(chars[1].animation_tree.get("parameters/body/arms/blend_amount"), 0.0, 1e-4,
		"the nested arm layer is held out of the mirroring")


func test_invalid_tuning_warns_and_keeps_following() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	comps[0].disconnect_distance = 0.5  # below reconnect_distance 1.1: invalid
	comps[0].min_follow_speed = 50.0  # above max_follow_speed 24: invalid
	await _pair(comps)
	await physics_frames(60)
	# One warning per invalid setting, naming it.
	expect_warning("disconnect_distance must not be below reconnect_distance")
	check(logged_count("disconnect_distance must not be below reconnect_distance") == 1,
		"one warning for the disconnect distance", 1,
		logged_count("disconnect_distance must not be below reconnect_distance"))
	expect_warning("max_follow_speed must not be below min_follow_speed")
	check(logged_count("max_follow_speed must not be below min_follow_speed") == 1,
		"one warning for the follow speeds", 1,
		logged_count("max_follow_speed must not be below min_follow_speed"))
	check(comps[1].get_hand_weight() == 0.0, "hands released while the IK tuning is invalid")
	var target: Vector3 = chars[0].global_transform * comps[0].follow_offset
	check_near(chars[1].global_position, target, 0.05, "following goes on with the default tuning")


func test_changed_roles_restart_cleanly_from_preparing() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	var a: HoldHandComponent = comps[0]
	var b: HoldHandComponent = comps[1]
	await _pair(comps)
	await physics_frames(10)
	var phases := []
	a.phase_changed.connect(func(from: int, to: int) -> void: phases.append([from, to]))
	# Within one frame the pair ends and starts again the other way round.
	a.cancel()
	b.request(a)
	a.accept()
	await physics_frames(3)
	check(phases == [[2, 1], [1, 2]], "a changed role restarts from Preparing, not from None", [[2, 1], [1, 2]], phases)
	check(a.get_role() == HoldHandComponent.ROLE_RECIPIENT and b.get_role() == HoldHandComponent.ROLE_INITIATOR,
		"the roles swapped")
	check(a.is_frozen() and chars[0].frozen and not b.is_frozen() and not chars[1].frozen,
		"the freeze moved to the new recipient")


func test_animation_player_is_mirrored_without_a_tree() -> void:
	var s: Array = await _scene()
	var chars: Array = s[0]
	var comps: Array = s[1]
	for c in chars:
		c.drive_animation = false
		c.animation_tree.free()
		c.animation_tree = null
	# The components look for an AnimationTree or AnimationPlayer when a pair starts.
	chars[0].animation_player.play("walk")
	await _pair(comps)
	await physics_frames(20)
	var src: AnimationPlayer = chars[0].animation_player
	var dst: AnimationPlayer = chars[1].animation_player
	check(dst.current_animation == "walk", "the recipient plays the initiator's animation", "walk", dst.current_animation)
	check_near(dst.current_animation_position, src.current_animation_position, 0.05, "at the same position")
