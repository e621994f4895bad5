# processes: server client client
# timeout: 60
extends EntwineTest
## A peer that disconnects is dropped at once: its agents leave the contract in one re-form, in the
## frame the server learns of the disconnect, with no acknowledgement timeout involved (the peer
## acknowledged everything). The other client's agents stay.

const AGENTS := 9


func _make_squad() -> FormationController:
	var squad := FormationController.new()
	squad.name = "Squad"
	squad.networked = true
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = AGENTS
	return add(squad) as FormationController


func test_server_drops_a_disconnected_peer_in_one_re_form() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 8) == OK, "server listens on 127.0.0.1:%d" % port)
	(get_multiplayer() as SceneMultiplayer).server_relay = false
	get_multiplayer().multiplayer_peer = peer
	var squad := _make_squad()
	var clients := peers - 1
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == clients, 15.0),
		"both clients connected", clients, get_multiplayer().get_peers().size())
	await create_timer(0.5).timeout
	var ids := get_multiplayer().get_peers()
	ids.sort()
	for i in AGENTS:
		squad.set_agent_peer(i, ids[i % 2])
	var dropped: Array[int] = []
	var dropped_at: Array[int] = []
	squad.peer_dropped.connect(func(id: int) -> void:
		dropped.append(id)
		dropped_at.append(Time.get_ticks_usec()))
	var left_at: Array[int] = []  # (lambdas capture plain locals by value: arrays are shared)
	var left: Array[int] = []
	get_multiplayer().peer_disconnected.connect(func(id: int) -> void:
		left.append(id)
		left_at.append(Time.get_ticks_usec()))
	check(squad.form("column"), "the server forms a column")
	check(await wait_until(func() -> bool: return squad.get_pending_acks() == 0, 5.0),
		"every command acknowledged", 0, squad.get_pending_acks())
	var relays: int = squad._get_relayout_count()
	check(await wait_until(func() -> bool: return not dropped.is_empty(), 10.0), "the leaving peer is dropped")
	var leaving: int = left[0] if not left.is_empty() else -1
	check(dropped == [leaving], "exactly the leaving peer, once", [leaving], dropped)
	check(left_at.size() == 1 and dropped_at.size() == 1, "both the disconnect and the drop were seen")
	var delay_ms := (dropped_at[0] - left_at[0]) / 1000.0 if left_at.size() == 1 else 1e9
	print("FORMATION_DISCONNECT: peer %d dropped %.2f ms after peer_disconnected; re-forms %d" % [
		leaving, delay_ms, squad._get_relayout_count() - relays])
	check(abs(delay_ms) < 50.0, "dropped when the disconnect is seen, not after ack timeouts", "< 50 ms", delay_ms)
	check(squad._get_relayout_count() - relays == 1, "one re-form", 1, squad._get_relayout_count() - relays)
	squad._advance(0.1)
	var staying := 0
	for i in AGENTS:
		if ids[i % 2] != leaving:
			staying += 1
	var m := squad.get_metrics()
	check(m["active"] == staying, "only the staying peer's agents take part", staying, m["active"])
	check(squad.get_slot_count() == staying, "the formation is laid out for them", staying, squad.get_slot_count())
	check(logged_count("never acknowledged") == 0, "no acknowledgement timeout was involved")
	# The other client leaves too; nothing owned by the server itself remains tied.
	check(await wait_until(func() -> bool: return dropped.size() == 2, 15.0), "the second client is dropped on leaving")
	get_multiplayer().multiplayer_peer = null
	peer.close()


func test_client_acknowledges_then_leaves() -> void:
	var squad := _make_squad()
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_client("127.0.0.1", port) == OK, "client dials 127.0.0.1:%d" % port)
	get_multiplayer().multiplayer_peer = peer
	check(await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_CONNECTED, 15.0), "connected")
	var received: Array[String] = []
	squad.command_received.connect(func(_id: int, command: String) -> void: received.append(command))
	check(await wait_until(func() -> bool: return received.size() >= 1, 10.0), "the form command arrives")
	# The second client leaves a second after the command, the first three seconds later.
	await create_timer(1.0 if index == 2 else 4.0).timeout
	get_multiplayer().multiplayer_peer = null
	peer.close()
