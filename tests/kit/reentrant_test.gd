# timeout: 120
extends EntwineTest
## Signal handlers that call back into the nodes: every signal of every node is connected to a
## handler that reads the emitting node and the other nodes of the scene (both components of a pair,
## the rope, the squad, the wall-touch node) while the scene runs through every state. A node that
## emitted while it (or a node it was driving) was still borrowed would make the handler's call fail
## with an error, which fails the suite; each test also asserts the handlers ran. The networked
## pair's handlers (the stream's frames arriving through an RPC) are hooked the same way in
## hold_hand_net.

const CHARACTER := preload("res://characters/test_character.tscn")
const WALL_LAYER := 1 << 4

## Handler calls per signal name.
var _heard := {}


## Connects every signal `node`'s class declares to `poke` (its arguments dropped), counting them.
func _hook(node: Object, poke: Callable) -> void:
	for s in ClassDB.class_get_signal_list(node.get_class(), true):
		var name: String = s["name"]
		var count: int = (s["args"] as Array).size()
		var handler := func() -> void:
			_heard[name] = _heard.get(name, 0) + 1
			poke.call()
		node.connect(name, handler.unbind(count) if count > 0 else handler)


func _heard_all(names: Array) -> void:
	for n in names:
		check(_heard.get(n, 0) > 0, "a handler of %s ran" % n, "> 0", _heard.get(n, 0))


func test_pair_handlers_call_back_into_both_components() -> void:
	_heard = {}
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	var room := EntwineHoldHandRoom.new()
	room.request_timeout = 0.5
	world.add_child(room)
	var chars: Array[TestCharacter] = []
	var comps: Array[HoldHandComponent] = []
	for i in 2:
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
	var a := comps[0]
	var b := comps[1]
	var poke := func() -> void:
		for c in comps:
			c.get_phase()
			c.get_role()
			c.get_partner()
			c.get_partner_id()
			c.is_frozen()
			c.get_contact_point()
			c.get_network_stats()
			c.get_pending_request_from()
			c.get_view_time()
		for ch in chars:
			HoldHandComponent.is_pair_driven(ch)
	_hook(a, poke)
	_hook(b, poke)
	# Asked, then withdrawn by cancelling; asked and declined; asked and left to expire.
	check(a.request(b), "A asks B")
	await physics_frames(2)
	check(a.cancel(), "A withdraws")
	await physics_frames(2)
	check(a.request(b), "A asks again")
	await physics_frames(2)
	check(b.decline(), "B declines")
	await physics_frames(2)
	check(a.request(b), "A asks a third time")
	await create_timer(0.8).timeout
	await frames(1)
	# Accepted: the pair forms, walks with the hands held, and B lets go.
	check(a.request(b), "A asks a fourth time")
	await physics_frames(2)
	check(b.accept(), "B accepts")
	check(await wait_until(func() -> bool: return a.get_phase() == HoldHandComponent.PHASE_ACTIVE, 2.0), "the pair is active")
	chars[0].move_input = Vector3(0, 0, -1)
	await create_timer(1.5).timeout
	chars[0].move_input = Vector3.ZERO
	await create_timer(0.5).timeout
	check(b.cancel(), "B lets go")
	await physics_frames(5)
	_heard_all(["request_received", "request_withdrawn", "request_declined", "request_expired",
		"request_accepted", "phase_changed", "frozen_changed", "hands_connected_changed", "cancelled"])
	print("REENTRANT pair: %s" % _heard)


func test_rope_squad_and_wall_touch_handlers_call_back_into_the_scene() -> void:
	_heard = {}
	add_floor(null, 40.0)
	var rope := RopeSimulation.new()
	rope.position = Vector3(0, 4, -6)
	add(rope)
	var squad := FormationController.new()
	squad.name = "Squad"
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 12
	add(squad)
	var wall := add_box(Vector3(-0.55, 1.5, -2.0), Vector3(0.2, 3.0, 14.0), WALL_LAYER)
	wall.collision_mask = 0
	var character := CHARACTER.instantiate() as TestCharacter
	character.position = Vector3(0, 0, 4)
	add(character)
	var touch := EnvironmentInteractionStateMachine.new()
	touch.interactable_mask = WALL_LAYER
	character.add_child(touch)
	var poke := func() -> void:
		rope.get_length()
		rope.get_tension()
		rope.get_points()
		rope.get_active_point_count()
		squad.get_agent_count()
		squad.get_slot_position(0)
		touch.get_state()
		touch.get_current_side()
		touch.get_move_input()
	_hook(rope, poke)
	_hook(squad, poke)
	_hook(touch, poke)
	character.move_input = Vector3(0, 0, -1)
	touch.move_input = Vector3(0, 0, -1)
	await physics_frames(5)
	check(squad.form("wedge"), "the squad forms a wedge")
	rope.length = rope.get_length() + 0.5
	await create_timer(1.0).timeout
	check(rope.cut_at(5), "the rope is cut")
	var settled := func() -> bool:
		return _heard.get("settled", 0) > 0 and _heard.get("touch_started", 0) > 0
	check(await wait_until(settled, 10.0), "the squad settles and the hand touches the wall")
	_heard_all(["formation_changed", "settled", "rope_cut", "length_reached", "state_changed", "touch_started"])
	print("REENTRANT rope, squad, wall touch: %s" % _heard)
