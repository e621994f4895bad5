# processes: server client client client
# timeout: 150
extends EntwineTest
## A networked pair over real ENet on 127.0.0.1, seen from three viewpoints: a dedicated server,
## then clients A (the initiator), B (the recipient) and C (an onlooker), by ascending peer id.
##
## The full sequence of seed 2.2: A asks, B accepts, every peer enters the pair when the server's
## state arrives, A walks and stops; the onlooker's and the recipient's views of both hands and of
## the recipient's root must match the initiator's. The streams start at sequence 65500, so they
## cross the wrap-around. Then lies and junk (dropped and counted), cancel from either side, an
## initiator that goes silent (the recipient is released after the timeout on every peer) and an
## initiator that disconnects. Other suites reuse this one over WebSocket and through a lossy relay.

const CHARACTER := preload("res://characters/test_character.tscn")

var _room: HoldHandRoom
var _probe: NetProbe
var _comps := {}
var _chars := {}
var _peer: MultiplayerPeer
var _lost := []
var _max_step := {"root": 0.0, "hand_a": 0.0, "hand_b": 0.0}
var _last := {}


## The transport the suite runs over: "enet" or "websocket".
func transport() -> String:
	return "enet"


## Whether this run goes through the harness's lossy relay (then only the walk is checked).
func lossy() -> bool:
	return false


## Largest error allowed between the onlooker's and the initiator's hand contact points (m).
func contact_tolerance() -> float:
	return 0.02


func _listen() -> bool:
	if transport() == "websocket":
		var ws := WebSocketMultiplayerPeer.new()
		_peer = ws
		return ws.create_server(port) == OK
	var enet := ENetMultiplayerPeer.new()
	_peer = enet
	return enet.create_server(port, 8) == OK


func _dial() -> bool:
	if transport() == "websocket":
		var ws := WebSocketMultiplayerPeer.new()
		_peer = ws
		return ws.create_client("ws://127.0.0.1:%d" % port) == OK
	var enet := ENetMultiplayerPeer.new()
	_peer = enet
	return enet.create_client("127.0.0.1", dial_port()) == OK


## Builds the same world on every peer: room, probe, and one character per client, each with the
## game's ordinary position sync and a HoldHandComponent.
func _world(ids: Array) -> void:
	var world := add(Node3D.new()) as Node3D
	world.name = "World"
	add_floor(world)
	_room = HoldHandRoom.new()
	_room.name = "Room"
	world.add_child(_room)
	_probe = NetProbe.new()
	_probe.name = "Probe"
	world.add_child(_probe)
	for i in ids.size():
		var id: int = ids[i]
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Player%d" % id
		c.position = Vector3(i * 3.0, 0, 0)
		var sync := PlayerSync.new()
		sync.name = "Sync"
		sync.owner_peer = id
		c.add_child(sync)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		comp.player_id = id
		comp.first_sequence = 65500
		c.add_child(comp)
		_comps[id] = comp
		_chars[id] = c


func _clients() -> Array:
	var ids := Array(get_multiplayer().get_peers()).filter(func(p: int) -> bool: return p != 1)
	if get_multiplayer().get_unique_id() != 1:
		ids.append(get_multiplayer().get_unique_id())
	ids.sort()
	return ids


func _interaction_of(id: int) -> Array:
	var c: HoldHandComponent = _comps[id]
	return [c.get_role(), c.get_partner_id()]


func _paired(a: int, b: int) -> bool:
	return _interaction_of(a) == [0, b] and _interaction_of(b) == [1, a] \
		and _comps[a].get_phase() == HoldHandComponent.PHASE_ACTIVE


func _unpaired(a: int, b: int) -> bool:
	return _interaction_of(a) == [-1, 0] and _interaction_of(b) == [-1, 0]


## This peer's view of the pair: both contact hands and both roots.
func _view(a: int, b: int) -> Array:
	return [
		_chars[a].bone_global_position("LeftHand"),
		_chars[b].bone_global_position("RightHand"),
		_chars[b].global_position,
		_chars[a].global_position,
	]


func _track_steps(a: int, b: int) -> void:
	var now := _view(a, b)
	if not _last.is_empty():
		_max_step["hand_a"] = maxf(_max_step["hand_a"], now[0].distance_to(_last["v"][0]))
		_max_step["hand_b"] = maxf(_max_step["hand_b"], now[1].distance_to(_last["v"][1]))
		_max_step["root"] = maxf(_max_step["root"], now[2].distance_to(_last["v"][2]))
	_last["v"] = now


func test_server_decides_and_forwards() -> void:
	check(_listen(), "server listens over %s" % transport())
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == peers - 1, 20.0),
		"three clients connected")
	var ids := _clients()
	_world(ids)
	var a: int = ids[0]
	var b: int = ids[1]
	check(await wait_until(func() -> bool: return _paired(a, b), 30.0),
		"the server holds A leading B")
	if not lossy():
		# The onlooker's lies reach the server's copy of the pair too.
		check(await wait_until(func() -> bool: return _comps[a].get_network_stats()["rejected"] >= 1, 30.0),
			"forged frames for A are rejected here", ">= 1", _comps[a].get_network_stats())
	check(await wait_until(func() -> bool: return _done() >= peers - 1, 120.0), "the clients finished")
	# The server hangs up first, so nothing is sent to a client that is half gone.
	await create_timer(0.3).timeout
	get_multiplayer().multiplayer_peer = null
	_peer.close()


func test_client_pair_over_the_network() -> void:
	check(_dial(), "client dials over %s" % transport())
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return _clients().size() == peers - 1, 20.0),
		"every client known", peers - 1, _clients().size())
	var ids := _clients()
	_world(ids)
	var me := get_multiplayer().get_unique_id()
	var a: int = ids[0]
	var b: int = ids[1]
	var c: int = ids[2]
	if me == b:
		_comps[b].request_received.connect(func(_from: int) -> void: _comps[b].accept.call_deferred())
		_comps[b].initiator_lost.connect(func(who: int) -> void: _lost.append(who))
	await create_timer(1.0).timeout  # let every peer build its world

	# Seed 2.2: request, accept, and the pair appears only with the server's state.
	if me == a:
		check(_comps[a].request(_comps[b]), "A asks B")
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0),
		"every client sees A lead B", [[0, b], [1, a]], [_interaction_of(a), _interaction_of(b)])
	check(await wait_until(func() -> bool: return HoldHandComponent.is_pair_driven(_chars[b]), 5.0),
		"the recipient's root belongs to the pair here")
	check(HoldHandComponent.is_pair_driven(_chars[a]) == (me != a),
		"the initiator's root belongs to the pair on every peer but its own", me != a,
		HoldHandComponent.is_pair_driven(_chars[a]))

	# A walks for three seconds, then stops and the pair settles.
	await create_timer(1.0).timeout
	if me == a:
		_chars[a].move_input = Vector3(0.3, 0, -1).normalized()
	var tracker := _track_steps.bind(a, b)
	physics_frame.connect(tracker)
	await create_timer(2.5).timeout
	# Both bodies walk in the initiator's animation on every peer (snapshots; arm layers excluded).
	for id in [a, b]:
		var blend: float = _chars[id].animation_tree.get("parameters/move/blend_amount")
		check(blend > 0.5, "%s walks in the initiator's animation here" % ("A" if id == a else "B"), "> 0.5", blend)
	await create_timer(0.5).timeout
	if me == a:
		_chars[a].move_input = Vector3.ZERO
	await create_timer(2.0).timeout
	physics_frame.disconnect(tracker)
	check(_chars[a].global_position.distance_to(Vector3.ZERO) > 3.0,
		"the initiator walked", "> 3 m", _chars[a].global_position)

	# Every view against the initiator's, each averaged over the same two seconds of wall-clock time
	# (one clock on this machine), so the idle animation's sway and the stream's delay average out.
	if me == a:
		_probe.share("window", Time.get_unix_time_from_system() + 0.5)
	check(await wait_until(func() -> bool: return _probe.has("window"), 10.0), "the measuring window is set")
	var from: float = _probe.values["window"]
	while Time.get_unix_time_from_system() < from:
		await physics_frame
	var sum := [Vector3.ZERO, Vector3.ZERO, Vector3.ZERO, Vector3.ZERO]
	var samples := 0
	while Time.get_unix_time_from_system() < from + 2.0:
		var v := _view(a, b)
		for k in 4:
			sum[k] += v[k]
		samples += 1
		await physics_frame
	var averaged := sum.map(func(x: Vector3) -> Vector3: return x / maxi(samples, 1))
	_probe.share("view_%d" % me, averaged)
	_probe.share("steps_%d" % me, _max_step)
	check(await wait_until(func() -> bool: return _probe.has("view_%d" % a) and _probe.has("steps_%d" % a), 10.0),
		"the initiator's view arrives")
	if me != a:
		var mine: Array = averaged
		var theirs: Array = _probe.values["view_%d" % a]
		var who := "recipient" if me == b else "onlooker"
		var errors := [mine[0].distance_to(theirs[0]), mine[1].distance_to(theirs[1]), mine[2].distance_to(theirs[2])]
		print("HOLD_HAND_NET %s %s%s: initiator hand %.1f mm, recipient hand %.1f mm, recipient root %.1f mm; largest step per physics frame: root %.1f mm, hands %.1f / %.1f mm" % [
			transport(), who, " (lossy relay)" if lossy() else "", errors[0] * 1000.0, errors[1] * 1000.0,
			errors[2] * 1000.0, _max_step["root"] * 1000.0, _max_step["hand_a"] * 1000.0, _max_step["hand_b"] * 1000.0])
		check_near(mine[0], theirs[0], contact_tolerance(), "the %s sees the initiator's hand where the initiator does" % who)
		check_near(mine[1], theirs[1], contact_tolerance(), "the %s sees the recipient's hand where the initiator does" % who)
		check_near(mine[2], theirs[2], maxf(0.03, contact_tolerance()), "the %s sees the recipient's root where the initiator does" % who)
		# No snaps: one pose interval of walking is 0.14 m, so jumping onto a fresh target would step
		# at least that far in one frame. The initiator's own screen steps up to ~65 mm (the follow
		# spring carries the recipient around the initiator's turn); smoothing may catch up a little
		# faster after a late packet, but never by a jump.
		var own: Dictionary = _probe.values["steps_%d" % a]
		for key in ["root", "hand_a", "hand_b"]:
			check(_max_step[key] < 0.1, "%s never snaps here" % key, "< 0.1 m (initiator's own %.3f m)" % own[key], _max_step[key])
		var stats: Dictionary = _comps[a].get_network_stats()
		print("HOLD_HAND_NET %s %s: stream counters here %s" % [transport(), who, stats])
		check(stats["frames"] >= 80, "the initiator's frames arrive", ">= 80", stats)
		check(stats["last_ik_sequence"] >= 0 and stats["last_ik_sequence"] < 65500,
			"the IK sequence crossed the wrap-around and kept being accepted", "< 65500", stats["last_ik_sequence"])
		check(_comps[b].get_hand_weight() > 0.9, "the recipient's hand is held here", "> 0.9", _comps[b].get_hand_weight())
	else:
		check(_comps[a].get_network_stats()["sent_frames"] >= 80, "A sent its stream", ">= 80", _comps[a].get_network_stats())
	if lossy():
		await _leave(me, a)
		return

	# Lies and junk: C forges A's stream and sends frames for a pair it does not lead; A sends junk.
	if me == c:
		var forged := PackedByteArray([2, 0, 0])
		forged.resize(25)
		_comps[a].rpc("pair_frame", forged)
		_comps[c].rpc("pair_frame", forged)
		expect_error("sent pair frames for player")
	if me == a:
		_comps[a].rpc("pair_frame", PackedByteArray([1, 2, 3]))
		var nan := PackedByteArray()
		nan.resize(29)
		nan.encode_u8(0, 1)
		nan.encode_float(3, NAN)
		_comps[a].rpc("pair_frame", nan)
	if me != a:
		expect_error("dropped a malformed pair frame")
		check(await wait_until(func() -> bool: return _comps[a].get_network_stats()["malformed"] >= 2, 10.0),
			"A's junk is dropped and counted", ">= 2", _comps[a].get_network_stats())
	if me == b:
		check(await wait_until(func() -> bool: return _comps[a].get_network_stats()["rejected"] >= 1, 10.0),
			"C's forged frame is rejected", ">= 1", _comps[a].get_network_stats())
	await create_timer(0.5).timeout
	check(_paired(a, b), "the lies and junk changed nothing")
	await _barrier("lies_checked")

	# Cancel from the initiator, then from the recipient.
	for canceller in [a, b]:
		await _barrier("cancel_%d" % canceller)
		if me == canceller:
			check(_comps[canceller].cancel(), "%s cancels" % ("A" if canceller == a else "B"))
		check(await wait_until(func() -> bool: return _unpaired(a, b) and not _comps[b].is_frozen(), 10.0),
			"the cancel ends the pair on every peer", [[-1, 0], [-1, 0]], [_interaction_of(a), _interaction_of(b)])
		check(not HoldHandComponent.is_pair_driven(_chars[b]), "the game's own sync has the recipient back")
		await create_timer(0.5).timeout
		if me == a:
			check(_comps[a].request(_comps[b]), "A asks again")
		check(await wait_until(func() -> bool: return _paired(a, b), 20.0), "paired again")
		await create_timer(0.5).timeout

	# The initiator goes silent without leaving: the recipient is released after the timeout on
	# every peer, and its own peer ends the pair.
	await _barrier("before_silence")
	if me == a:
		_comps[a].process_mode = Node.PROCESS_MODE_DISABLED
		_probe.share("silent", true)
		await create_timer(5.0).timeout
		_comps[a].process_mode = Node.PROCESS_MODE_INHERIT
	else:
		check(await wait_until(func() -> bool: return _probe.has("silent"), 10.0), "A went silent")
		var started := Time.get_ticks_msec()
		check(await wait_until(func() -> bool: return not _comps[b].is_frozen(), 6.0),
			"the recipient is released after the initiator's silence")
		var waited := (Time.get_ticks_msec() - started) / 1000.0
		print("HOLD_HAND_NET %s: recipient released %.2f s after the initiator went silent (peer %d)" % [transport(), waited, me])
		check(waited > 2.0 and waited < 4.5, "released after about initiator_timeout (3 s)", "2..4.5 s", waited)
	if me == b:
		check(_lost == [a], "initiator_lost names A", [a], _lost)
		expect_error("the recipient is released")
	check(await wait_until(func() -> bool: return _unpaired(a, b), 10.0), "the recipient's peer ended the pair everywhere")
	await create_timer(0.5).timeout

	# The initiator disconnects: the pair ends and the recipient is free on every other peer.
	if me == a:
		check(_comps[a].request(_comps[b]), "A asks once more")
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0), "paired once more")
	await create_timer(1.0).timeout
	if me == a:
		_probe.share("done_%d" % me, true)
		_probe.share("leaving", true)
		await create_timer(0.3).timeout
		get_multiplayer().multiplayer_peer = null
		_peer.close()
		return
	check(await wait_until(func() -> bool: return _probe.has("leaving"), 10.0), "A says goodbye")
	check(await wait_until(func() -> bool: return not _comps[b].is_frozen() and _interaction_of(b) == [-1, 0], 3.5),
		"A's disconnect releases B within the timeout here")
	await _leave(me, a)


## Waits until every client reached the point named `name` (the server does not take part).
func _barrier(name: String) -> void:
	_probe.share("%s/%d" % [name, get_multiplayer().get_unique_id()], true)
	var reached := func() -> bool:
		return _probe.values.keys().filter(func(k: String) -> bool: return k.begins_with(name + "/")).size() >= peers - 1
	check(await wait_until(reached, 20.0), "every client reaches '%s'" % name)


func _done() -> int:
	return _probe.values.keys().filter(func(k: String) -> bool: return k.begins_with("done_")).size()


## Says this client is done and waits for the server to hang up.
func _leave(me: int, _a: int) -> void:
	_probe.share("done_%d" % me, true)
	await wait_until(func() -> bool: return not get_multiplayer().get_peers().has(1), 20.0)
	get_multiplayer().multiplayer_peer = null
	_peer.close()
