# processes: server client client
# timeout: 90
extends EntwineTest
## The networked command pipeline over real ENet on 127.0.0.1: the server's commands reach both
## clients once each; the second client never acknowledges, so after three resends (100 ms apart)
## the server drops it and its agents leave the contract; commands from clients are refused.

const AGENTS := 6


func _make_squad() -> FormationController:
	var squad := FormationController.new()
	squad.name = "Squad"
	squad.networked = true
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = AGENTS
	squad.acknowledge_commands = index != 2  # the last client stays silent
	return add(squad) as FormationController


func test_server_sends_commands_and_drops_the_silent_peer() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 8) == OK, "server listens on 127.0.0.1:%d" % port)
	(get_multiplayer() as SceneMultiplayer).server_relay = false
	get_multiplayer().multiplayer_peer = peer
	var squad := _make_squad()
	var clients := peers - 1
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == clients, 15.0),
		"both clients connected", clients, get_multiplayer().get_peers().size())
	# Give the clients a moment to add their Squad node after connecting.
	await create_timer(0.5).timeout
	var ids := get_multiplayer().get_peers()
	ids.sort()
	for i in AGENTS:
		squad.set_agent_peer(i, ids[i * ids.size() / AGENTS])
	var dropped: Array[int] = []
	squad.peer_dropped.connect(func(id: int) -> void: dropped.append(id))
	var started := Time.get_ticks_msec()
	check(squad.form("column"), "the server forms a column")
	await create_timer(0.2).timeout
	check(squad.march(Vector3(1, 0, 0), 1.0), "the server marches")
	check(await wait_until(func() -> bool: return not dropped.is_empty(), 5.0), "a silent peer is dropped")
	var after_ms := Time.get_ticks_msec() - started
	check(dropped.size() == 1, "exactly one peer dropped", 1, dropped.size())
	# Three resends 100 ms apart, then the drop: between 0.35 s and 2 s after the first command.
	check(after_ms >= 350 and after_ms < 2000, "dropped after three resends", "350..2000 ms", after_ms)
	check(await wait_until(func() -> bool: return squad.get_pending_acks() == 0, 3.0),
		"the other client acknowledged everything", 0, squad.get_pending_acks())
	squad._advance(0.1)
	var m := squad.get_metrics()
	check(m["active"] == AGENTS / 2, "the dropped peer's agents left the contract", AGENTS / 2, m["active"])
	expect_warning("never acknowledged")
	check(logged_count("never acknowledged") == 1, "the drop is reported once")
	# Each client also forges a command at the server: refused with a clear message.
	var forged := "sent a call only another peer may send (a squad command)"
	expect_warning(forged)
	check(await wait_until(func() -> bool: return logged_count(forged) >= clients, 10.0),
		"forged client commands are refused", clients, logged_count(forged))
	check(squad.get_dropped_calls()["forged"] == clients, "and counted", clients, squad.get_dropped_calls())
	await create_timer(0.3).timeout
	get_multiplayer().multiplayer_peer = null
	peer.close()


func test_client_applies_each_command_once() -> void:
	var squad := _make_squad()
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_client("127.0.0.1", port) == OK, "client dials 127.0.0.1:%d" % port)
	get_multiplayer().multiplayer_peer = peer
	check(await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_CONNECTED, 15.0), "connected")
	var received: Array[String] = []
	squad.command_received.connect(func(_id: int, command: String) -> void: received.append(command))
	check(await wait_until(func() -> bool: return received.size() >= 2, 10.0), "both commands arrive")
	# The silent client gets resends: they must not be applied again.
	await create_timer(0.6).timeout
	check(received == ["form", "march"], "each command applied once, in order", ["form", "march"], received)
	check(squad.formation == "column", "the server's formation is in use", "column", squad.formation)
	check(squad.get_metrics()["since_command"] >= 0.0, "metrics live on the client")
	# A client cannot command the squad.
	var refused: Array[String] = []
	squad.command_rejected.connect(func(c: String, _why: String) -> void: refused.append(c))
	check(not squad.halt(), "a client's own command is refused")
	check(refused == ["halt"], "command_rejected says which", ["halt"], refused)
	expect_warning("only the server issues commands")
	check(logged_count("only the server issues commands") == 1, "with one clear warning")
	# Forge a command at the server.
	var forged := PackedByteArray()
	forged.resize(34)
	forged.encode_s64(0, 999)
	forged.encode_double(8, -1.0)
	forged.encode_u8(16, 3)  # halt, with an empty name and zero vector and scalar
	squad.rpc_id(1, "_net_command", forged)
	check(await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_DISCONNECTED, 20.0),
		"the server ends the session")
	get_multiplayer().multiplayer_peer = null
