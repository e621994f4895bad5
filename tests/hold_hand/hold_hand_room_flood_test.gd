# processes: server client client client
# timeout: 120
# retries: 1
extends EntwineTest
## The server-held EntwineHoldHandRoom under a flood, over real ENet on 127.0.0.1 between four processes: a
## dedicated server and clients A, B and F (by ascending peer id). F sends 1,000 `submit` calls
## within one second — forged (acting for A or B), unknown, and valid-looking ones the room refuses —
## while A asks B, B accepts and they walk holding hands. The pair must form and work, A's and B's
## counters must show nothing of the flood, the server must drop F's excess, answer it only a few
## refusals, and print at most one warning of each kind about F.
##
## Every process builds its room and probe before it sets its multiplayer peer, and its characters
## before it says it is ready; nobody sends the room or the pair anything before every peer is ready.
##
## It runs again once when it fails (`# retries: 1`; the failed try is printed as FLAKY and its logs
## kept): in 1 of about 8 runs (in a full test run) B's copy of A's stream had accepted 17 frames
## in the 4 s after pairing instead of the usual 36-43, none refused, while the pair held and walked.
## Not understood yet: B prints its stream counters and the server ENet's view of each link.

const CHARACTER := preload("res://characters/test_character.tscn")
const FLOOD := 1000
## Calls F sends per physics frame: 1,000 in about 60 frames, one second at 60 Hz.
const PER_FRAME := 17

var _room: EntwineHoldHandRoom
var _probe: NetProbe
var _comps := {}
var _chars := {}
var _peer: ENetMultiplayerPeer


## Builds the world's room and probe at the same paths on every peer, before any RPC can arrive.
func _stage() -> void:
	var world := add(Node3D.new()) as Node3D
	world.name = "World"
	add_floor(world)
	_room = EntwineHoldHandRoom.new()
	_room.name = "Room"
	world.add_child(_room)
	_probe = NetProbe.new()
	_probe.name = "Probe"
	world.add_child(_probe)


## Adds one character per client id, then tells every peer this one is ready.
func _cast(ids: Array) -> void:
	var world := root.get_node("World") as Node3D
	for i in ids.size():
		var id: int = ids[i]
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Player%d" % id
		c.position = Vector3(i * 3.0, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		comp.player_id = id
		c.add_child(comp)
		_comps[id] = comp
		_chars[id] = c
	_probe.share("ready/%d" % get_multiplayer().get_unique_id(), true)


func _count(prefix: String) -> int:
	return _probe.values.keys().filter(func(k: String) -> bool: return k.begins_with(prefix)).size()


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


func test_server_drops_the_flood_and_warns_once() -> void:
	# This suite measures the gate, so F must last its whole flood: the disconnect policy (which
	# would cut F off about 600 calls in) is off here; the hostile-peer suite tests it.
	ProjectSettings.set_setting("entwine/network/disconnect_abusive_peers", false)
	expect_warning("kept, as entwine/network/disconnect_abusive_peers is false")
	_stage()
	_peer = ENetMultiplayerPeer.new()
	check(_peer.create_server(port, 8) == OK, "server listens")
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == peers - 1, 20.0),
		"three clients connected")
	var ids := _clients()
	_cast(ids)
	check(await wait_until(func() -> bool: return _count("ready/") >= peers, 20.0), "every peer built its world")
	var a: int = ids[0]
	var b: int = ids[1]
	var f: int = ids[2]
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0),
		"the server pairs A with B through the flood", [[0, b], [1, a]], [_interaction_of(a), _interaction_of(b)])
	check(await wait_until(func() -> bool: return _probe.has("flood_sent"), 20.0), "F flooded")
	# Every call F sent has arrived once it is either handled or dropped.
	var arrived := func() -> bool:
		var s: Dictionary = _room.get_peer_stats(f)
		return s["calls"] + s["rate_limited"] >= FLOOD
	check(await wait_until(arrived, 20.0), "F's calls all arrived", FLOOD, _room.get_peer_stats(f))
	var mine: Dictionary = _room.get_peer_stats(f)
	var sent: Array = _probe.values["flood_sent"]
	var warned := {
		"flood": logged_count("peer %d sent more calls per second than allowed (a room call)" % f),
		"forged": logged_count("peer %d sent a call only another peer may send (a room call)" % f),
		"unknown": logged_count("peer %d sent a malformed call (a room call)" % f),
	}
	print("HOLD_HAND_ROOM flood: F sent %d calls in %.2f s; the server handled %d, dropped %d (rate limit %d/s), rejected %d, answered %d refusals and held back %d; warnings about F: %s; room totals %s" % [
		sent[0], sent[1], mine["calls"], mine["rate_limited"], int(_room.max_calls_per_second), mine["rejected"],
		mine["refusals_sent"], mine["refusals_dropped"], warned, _room.get_stats()])
	check(mine["rate_limited"] >= FLOOD - 100, "F's excess is dropped", ">= %d" % (FLOOD - 100), mine["rate_limited"])
	check(mine["calls"] <= 100, "the server handled only F's allowance", "<= 100", mine["calls"])
	check(mine["rejected"] >= 1, "F's forged and unknown calls that got through were rejected", ">= 1", mine["rejected"])
	check(mine["refusals_sent"] >= 1 and mine["refusals_sent"] <= 10, "F got a few refusals, not one per call",
		"1..10", mine["refusals_sent"])
	for kind in warned:
		check(warned[kind] == 1, "one warning about F's %s calls" % kind, 1, warned[kind])
	var kept := logged_count("peer %d keeps sending calls that are dropped" % f)
	check(kept == 1, "one warning that F abuses the room and is kept", 1, kept)
	expect_warning("EntwineHoldHandRoom")
	check(logged_count("EntwineHoldHandRoom") == 4, "and no other room warning", 4, logged_count("EntwineHoldHandRoom"))
	for id in [a, b]:
		var s: Dictionary = _room.get_peer_stats(id)
		var who := "A" if id == a else "B"
		check(s["rate_limited"] == 0 and s["rejected"] == 0 and s["refusals_sent"] == 0,
			"%s's counters show nothing of the flood" % who, "0 dropped, rejected or refused", s)
	for id in [a, b, f]:
		var link := _peer.get_peer(id)
		if link != null:
			print("HOLD_HAND_ROOM flood: link to %s after the flood: rtt %d ms, loss %.3f, throttle %d/32" % [
				"A" if id == a else ("B" if id == b else "F"),
				int(link.get_statistic(ENetPacketPeer.PEER_ROUND_TRIP_TIME)),
				link.get_statistic(ENetPacketPeer.PEER_PACKET_LOSS) / float(ENetPacketPeer.PACKET_LOSS_SCALE),
				int(link.get_statistic(ENetPacketPeer.PEER_PACKET_THROTTLE))])
	check(await wait_until(func() -> bool: return _count("done/") >= peers - 1, 60.0), "the clients finished")
	check(_paired(a, b), "the pair held to the end")
	await create_timer(0.3).timeout
	get_multiplayer().multiplayer_peer = null
	_peer.close()


func test_client_pairs_or_floods() -> void:
	# The flooding client's own calls include refused ones (itself, a player not there, nothing to
	# answer): the server's refusals come back as warnings, on purpose.
	expect_warning("the server refused:")
	_stage()
	_peer = ENetMultiplayerPeer.new()
	check(_peer.create_client("127.0.0.1", dial_port()) == OK, "client dials")
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return _clients().size() == peers - 1, 20.0),
		"every client known", peers - 1, _clients().size())
	var ids := _clients()
	_cast(ids)
	var me := get_multiplayer().get_unique_id()
	var a: int = ids[0]
	var b: int = ids[1]
	var f: int = ids[2]
	if me == b:
		_comps[b].request_received.connect(func(_from: int) -> void: _comps[b].accept.call_deferred())
	check(await wait_until(func() -> bool: return _count("ready/") >= peers, 20.0), "every peer built its world")

	if me == f:
		await _flood(a, b, f)
	elif me == a:
		check(_comps[a].request(_comps[b]), "A asks B while F floods")
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0),
		"every client sees A lead B", [[0, b], [1, a]], [_interaction_of(a), _interaction_of(b)])
	var start: Vector3 = _chars[b].global_position
	await create_timer(0.5).timeout
	if me == a:
		_chars[a].move_input = Vector3(0, 0, -1)
	await create_timer(1.5).timeout
	if me == a:
		_chars[a].move_input = Vector3.ZERO
	await create_timer(2.0).timeout
	check(_paired(a, b), "the pair still holds")
	if me != f:
		var moved: float = _chars[b].global_position.distance_to(start)
		check(moved > 1.0, "the recipient walked along here", "> 1 m", moved)
		var weight: float = _comps[a if me == a else b].get_hand_weight()
		check(weight > 0.9, "the hands are held here", "> 0.9", weight)
		var stats: Dictionary = _room.get_stats()
		print("HOLD_HAND_ROOM flood: peer %s's room counters %s" % ["A" if me == a else "B", stats])
		check(stats["refusals_received"] == 0 and stats["rejected"] == 0 and stats["rate_limited"] == 0,
			"this peer's room counters show nothing of the flood", "0", stats)
		check(logged_count("EntwineHoldHandRoom") == 0, "and its log holds no room warning", 0, logged_count("EntwineHoldHandRoom"))
		if me == b:
			var stream: Dictionary = _comps[a].get_network_stats()
			print("HOLD_HAND_ROOM flood: B's copy of A's stream %s" % stream)
			check(stream["rejected"] == 0 and stream["malformed"] == 0 and stream["frames"] >= 30,
				"the pair's stream arrives clean", ">= 30 frames, none rejected or malformed", stream)
	else:
		var stats: Dictionary = _room.get_stats()
		print("HOLD_HAND_ROOM flood: the flooder's room counters %s" % stats)
		check(stats["refusals_received"] >= 1 and stats["refusals_received"] <= 10,
			"the flooder hears a few refusals, not one per call", "1..10", stats["refusals_received"])
	_probe.share("done/%d" % me, true)
	await wait_until(func() -> bool: return not get_multiplayer().get_peers().has(1), 30.0)
	get_multiplayer().multiplayer_peer = null
	_peer.close()


## F's flood: 1,000 calls straight to the server within about one second, six kinds in turn.
func _flood(a: int, b: int, f: int) -> void:
	var calls := [
		[3, a, 0],  # forged: cancel A's pair
		[1, b, 0],  # forged: accept for B
		[9, f, 0],  # unknown call
		[0, f, 424242],  # valid-looking: ask a player who is not there
		[1, f, 0],  # valid-looking: accept with nothing pending
		[0, f, f],  # valid-looking: ask itself
	]
	var started := Time.get_ticks_usec()
	for i in FLOOD:
		var c: Array = calls[i % calls.size()]
		_room.rpc_id(1, "_submit", room_call(c[0], c[1], c[2]))
		if i % PER_FRAME == PER_FRAME - 1:
			await physics_frame
	var seconds := (Time.get_ticks_usec() - started) / 1e6
	check(seconds <= 1.2, "the flood took about one second", "<= 1.2 s", seconds)
	_probe.share("flood_sent", [FLOOD, seconds])
