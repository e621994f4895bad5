# processes: server client client client
# timeout: 90
extends EntwineTest
## The server-held EntwineHoldHandRoom over real ENet on 127.0.0.1: a dedicated server and three clients,
## A, B and C (by ascending peer id). A asks B; B accepts; every peer sees the pair only once the
## server's events arrive. C lies: it sends calls on behalf of B and A, which the server drops.
## Then B disconnects and the pair ends on every peer.

const CHARACTER := preload("res://characters/test_character.tscn")

var _room: EntwineHoldHandRoom
var _comps := {}


## Builds the room (same path on every peer) and one character per client peer id.
func _world(ids: Array) -> void:
	var world := add(Node3D.new()) as Node3D
	world.name = "World"
	add_floor(world)
	_room = EntwineHoldHandRoom.new()
	_room.name = "Room"
	world.add_child(_room)
	for i in ids.size():
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Player%d" % ids[i]
		c.position = Vector3(i * 2.0, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.player_id = ids[i]
		c.add_child(comp)
		_comps[ids[i]] = comp


func _interaction_of(id: int) -> Array:
	var c: HoldHandComponent = _comps[id]
	return [c.get_role(), c.get_partner_id()]


func _clients() -> Array:
	var ids := Array(get_multiplayer().get_peers()).filter(func(p: int) -> bool: return p != 1)
	ids.append(get_multiplayer().get_unique_id())
	ids.sort()
	return ids


func test_server_decides_and_drops_forged_calls() -> void:
	# A client forges a call for another player below: the server drops it with a warning.
	expect_warning("sent a call only another peer may send (a room call)")
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 8) == OK, "server listens")
	get_multiplayer().multiplayer_peer = peer
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == peers - 1, 20.0),
		"three clients connected")
	var ids := Array(get_multiplayer().get_peers())
	ids.sort()
	_world(ids)
	var a: int = ids[0]
	var b: int = ids[1]
	check(await wait_until(func() -> bool: return _interaction_of(a) == [0, b], 20.0),
		"the server pairs A (initiator) with B", [0, b], _interaction_of(a))
	check(await wait_until(func() -> bool: return _room.get_rejected_calls() >= 3, 20.0),
		"C's forged calls are dropped and counted", ">= 3", _room.get_rejected_calls())
	check(_interaction_of(a) == [0, b], "the forged cancel changed nothing", [0, b], _interaction_of(a))
	check(await wait_until(func() -> bool: return _interaction_of(a) == [-1, 0], 20.0),
		"B's disconnect ends the pair on the server", [-1, 0], _interaction_of(a))
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().is_empty(), 30.0),
		"the clients finished")
	get_multiplayer().multiplayer_peer = null


func test_client_pairs_through_the_server() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_client("127.0.0.1", port) == OK, "client dials")
	get_multiplayer().multiplayer_peer = peer
	check(await wait_until(func() -> bool: return _clients().size() == peers - 1, 20.0),
		"every client known", peers - 1, _clients().size())
	var ids := _clients()
	_world(ids)
	var me := get_multiplayer().get_unique_id()
	var a: int = ids[0]
	var b: int = ids[1]
	var c: int = ids[2]
	await create_timer(1.0).timeout  # let every peer build its world
	if me == a:
		check(_comps[a].request(_comps[b]), "A sends its request to the server")
		check(_interaction_of(a) == [-1, 0], "a sent request alone starts nothing")
		# A may not act for B: refused here, with a warning.
		check(not _comps[b].accept(), "A cannot accept for B")
		expect_warning("cannot act for player")
		check(logged_count("cannot act for player") == 1, "the refusal says why", 1, logged_count("cannot act for player"))
	elif me == b:
		check(await wait_until(func() -> bool: return _comps[b].get_pending_request_from() == a, 20.0),
			"B hears A's request through the server")
		check(_comps[b].accept(), "B accepts")
	check(await wait_until(func() -> bool: return _interaction_of(a) == [0, b] and _interaction_of(b) == [1, a], 20.0),
		"every client sees A lead B once the server's events arrive", [[0, b], [1, a]], [_interaction_of(a), _interaction_of(b)])
	if me == b:
		check(await wait_until(func() -> bool: return _comps[b].is_frozen(), 5.0), "B, the recipient, is frozen")
	if me == c:
		# Lies: cancel B's pair, accept for B, and ask on A's behalf — straight to the server.
		_room.rpc_id(1, "_submit", room_call(3, b, 0))
		_room.rpc_id(1, "_submit", room_call(1, b, 0))
		_room.rpc_id(1, "_submit", room_call(0, a, c))
		await create_timer(1.0).timeout
		check(_interaction_of(a) == [0, b], "the lies changed nothing", [0, b], _interaction_of(a))
	await create_timer(1.5).timeout
	if me == b:
		get_multiplayer().multiplayer_peer = null
		peer.close()
		return
	check(await wait_until(func() -> bool: return _interaction_of(a) == [-1, 0], 20.0),
		"B's disconnect ends the pair here too", [-1, 0], _interaction_of(a))
	get_multiplayer().multiplayer_peer = null
	peer.close()
