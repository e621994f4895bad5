# processes: server client client
# timeout: 60
extends EntwineTest
## A server and two clients over real ENet on 127.0.0.1: each client calls EntwineNetClock's Rust `ping` RPC
## on the server, and the server's `pong` answer reaches only that client.

const CLIENT_PINGS := 5


func _make_clock() -> EntwineNetClock:
	var clock := EntwineNetClock.new()
	clock.name = "EntwineNetClock"
	clock.ping_interval = 0.0  # the test pings by hand
	return add(clock) as EntwineNetClock


func test_server_answers_every_client() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 8) == OK, "server listens on 127.0.0.1:%d" % port)
	# No peer-to-peer relaying: clients leaving at the same moment must not be told about each other.
	(get_multiplayer() as SceneMultiplayer).server_relay = false
	get_multiplayer().multiplayer_peer = peer
	var clock := _make_clock()
	var expected_clients := peers - 1
	var seen := {}
	get_multiplayer().peer_connected.connect(func(id: int) -> void: seen[id] = true)
	check(await wait_until(func() -> bool: return seen.size() == expected_clients, 15.0),
		"every client connected", expected_clients, seen.size())
	# The clients disconnect once they have their answers.
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().is_empty(), 30.0),
		"the clients finished and left", 0, get_multiplayer().get_peers().size())
	check(clock.get_rtt_ms() < 0.0, "the server never measures a round trip to itself", -1.0, clock.get_rtt_ms())
	check_near(clock.get_server_time(), Time.get_ticks_usec() * 1e-6, 0.001, "the server's clock is its own")
	get_multiplayer().multiplayer_peer = null
	peer.close()


func test_client_pings_and_gets_answers() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_client("127.0.0.1", port) == OK, "client dials 127.0.0.1:%d" % port)
	get_multiplayer().multiplayer_peer = peer
	var clock := _make_clock()
	var connected := await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_CONNECTED, 15.0)
	check(connected, "connected to the server")
	var answers: Array[float] = []
	clock.synced.connect(func(rtt_ms: float) -> void: answers.append(rtt_ms))
	for i in CLIENT_PINGS:
		var before := answers.size()
		clock.ping_server()
		check(await wait_until(func() -> bool: return answers.size() > before, 5.0),
			"ping %d answered by the server" % i)
	check(answers.size() == CLIENT_PINGS, "one answer per ping, none for the other client's pings",
		CLIENT_PINGS, answers.size())
	for rtt in answers:
		check(rtt >= 0.0 and rtt < 1000.0, "round trip on loopback is under a second", "0..1000 ms", rtt)
	check(clock.get_rejected_answers() == 0, "no answer rejected", 0, clock.get_rejected_answers())
	# Two estimates of the server clock taken 0.2 s apart advance by 0.2 s.
	var a := clock.get_server_time()
	await create_timer(0.2).timeout
	check_near(clock.get_server_time() - a, 0.2, 0.05, "the estimated server clock advances in real time")
	get_multiplayer().multiplayer_peer = null
	peer.close()
