# processes: server client
# relay: delay_ms=100 jitter_ms=20 loss=0.05 seed=7
# timeout: 60
extends EntwineTest
## The harness's lossy relay through a real ENet connection: the client dials [method dial_port], so
## every datagram each way waits 100 ± 20 ms and 5 % are lost. EntwineNetClock's round trips must show it
## (2 × 80 … 2 × 120 ms, about 200 ms on average), and ENet must still connect and disconnect cleanly.

const DELAY_MS := 100.0
const JITTER_MS := 20.0
const ANSWERS := 10
## Frame and scheduling time a round trip may add on a busy machine, on top of the relay's delays.
const SLACK_MS := 120.0


func _make_clock() -> EntwineNetClock:
	var clock := EntwineNetClock.new()
	clock.name = "EntwineNetClock"
	clock.ping_interval = 0.0  # the test pings by hand
	return add(clock) as EntwineNetClock


func test_server_serves_through_the_relay() -> void:
	check(relay_port > 0 and relay_port != port, "the suite runs a relay on its own port",
		"a port other than %d" % port, relay_port)
	check(dial_port() == relay_port, "clients dial the relay", relay_port, dial_port())
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_server(port, 4) == OK, "server listens on 127.0.0.1:%d" % port)
	get_multiplayer().multiplayer_peer = peer
	_make_clock()
	var seen := {}
	get_multiplayer().peer_connected.connect(func(id: int) -> void: seen[id] = true)
	check(await wait_until(func() -> bool: return seen.size() == 1, 20.0),
		"the client connected through the relay", 1, seen.size())
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().is_empty(), 40.0),
		"the client finished and left", 0, get_multiplayer().get_peers().size())
	get_multiplayer().multiplayer_peer = null
	peer.close()


func test_client_measures_the_relay_delay() -> void:
	var peer := ENetMultiplayerPeer.new()
	check(peer.create_client("127.0.0.1", dial_port()) == OK, "client dials the relay on %d" % dial_port())
	get_multiplayer().multiplayer_peer = peer
	var clock := _make_clock()
	var connected := await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_CONNECTED, 20.0)
	if not check(connected, "connected to the server through the relay"):
		return
	var answers: Array[float] = []
	clock.synced.connect(func(rtt_ms: float) -> void: answers.append(rtt_ms))
	# One ping at a time; a ping or its answer the relay drops is simply sent again.
	var pings := 0
	while answers.size() < ANSWERS and pings < ANSWERS * 3:
		var before := answers.size()
		clock.ping_server()
		pings += 1
		await wait_until(func() -> bool: return answers.size() > before, 1.5)
	check(answers.size() == ANSWERS, "answers through a 5 % lossy relay", ANSWERS, answers.size())
	var low := 2.0 * (DELAY_MS - JITTER_MS)
	var high := 2.0 * (DELAY_MS + JITTER_MS) + SLACK_MS
	var total := 0.0
	for rtt in answers:
		total += rtt
		check(rtt >= low and rtt <= high, "every round trip pays the relay's delay both ways",
			"%.0f..%.0f ms" % [low, high], rtt)
	var mean := total / maxf(1.0, answers.size())
	# The mean of ten round trips of 200 ± 16 ms (two uniform jitters) is within ±16 ms of 200 ms at 3 σ.
	check(mean >= 2.0 * DELAY_MS - 16.0 and mean <= 2.0 * DELAY_MS + SLACK_MS,
		"the mean round trip is twice the relay's delay", "about %.0f ms" % (2.0 * DELAY_MS), mean)
	check(clock.get_rtt_ms() >= low, "EntwineNetClock's best round trip is no faster than the relay allows",
		"≥ %.0f ms" % low, clock.get_rtt_ms())
	print("relay_test: %d answers to %d pings, round trips %s ms, mean %.1f ms, best %.1f ms" % [
		answers.size(), pings, str(answers.map(func(r: float) -> int: return roundi(r))), mean,
		clock.get_rtt_ms()])
	# A graceful disconnect is acknowledged, so the server hears of it even when a datagram is lost.
	peer.get_peer(1).peer_disconnect()
	check(await wait_until(func() -> bool:
		return peer.get_connection_status() == MultiplayerPeer.CONNECTION_DISCONNECTED, 10.0),
		"the disconnect went through the relay")
	get_multiplayer().multiplayer_peer = null
	peer.close()
