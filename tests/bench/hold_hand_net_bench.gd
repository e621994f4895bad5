extends EntwineBench
## `cargo xtask bench hold_hand_net`: bytes per second one holding pair costs on the wire, against
## replicating the same state with MultiplayerSynchronizers.
##
## One process, two SceneMultiplayers joined over real ENet on 127.0.0.1: a host (peer 1, who plays
## the initiator A) and a client (who plays the recipient B). A asks, B accepts, and A walks in a
## circle. The bytes the host's ENet connection sends to its one peer are counted (ENet headers
## included; IP/UDP headers not) over a window:
##
## 1. the pair's stream (pair poses 10 Hz, IK 20 Hz, animation 10 Hz, as HoldHandComponent sends
##    them), then
## 2. the same state through MultiplayerSynchronizers, as a game without Entwine's stream would:
##    both characters' transforms at 10 Hz, both hand IK target transforms and weights at 20 Hz, and
##    the same animation parameters at 10 Hz (the pair ended, the same walk);
## 3. the same with the characters' position and rotation (two Vector3) instead of their transform,
##    a leaner synchronizer a careful game might use.
##
## The ratio is synchronizer bytes (2) / stream bytes; the line also shows the lean variant (3).
## Background ENet traffic (pings) is in every window.

const CHARACTER := preload("res://characters/test_character.tscn")
const WINDOW := 5.0

var _host := {}
var _guest := {}


func _initialize() -> void:
	_run.call_deferred()


func _side(name: String, mp: SceneMultiplayer) -> Dictionary:
	var root := Node.new()
	root.name = name
	get_root().add_child(root)
	set_multiplayer(mp, root.get_path())
	var world := Node3D.new()
	world.name = "World"
	root.add_child(world)
	# Both sides share this process's physics space: each side's floor and characters are on a
	# layer of their own, so the host's characters and the guest's copies do not push each other
	# (they stand in the same places).
	var layer := 1 if name == "Host" else 2
	var floor := StaticBody3D.new()
	floor.collision_layer = layer
	floor.collision_mask = 0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(200, 1, 200)
	shape.shape = box
	shape.position = Vector3(0, -0.5, 0)
	floor.add_child(shape)
	world.add_child(floor)
	var room := EntwineHoldHandRoom.new()
	room.name = "Room"
	world.add_child(room)
	return {"root": root, "world": world, "room": room, "mp": mp, "chars": {}, "comps": {}, "layer": layer}


func _player(side: Dictionary, id: int, slot: int) -> void:
	var c := CHARACTER.instantiate() as TestCharacter
	c.name = "Player%d" % slot
	c.position = Vector3(slot * 3.0, 0, 0)
	c.collision_layer = side["layer"]
	c.collision_mask = side["layer"]
	side["world"].add_child(c)
	var comp := HoldHandComponent.new()
	comp.name = "HoldHand"
	comp.player_id = id
	comp.room_node = ^"../../Room"  # each side's own room (both are in the rooms group)
	c.add_child(comp)
	side["chars"][slot] = c
	side["comps"][slot] = comp


func _sent(peer: ENetMultiplayerPeer) -> int:
	return int(peer.host.pop_statistic(ENetConnection.HOST_TOTAL_SENT_DATA))


func _wait(seconds: float) -> void:
	await create_timer(seconds).timeout


func _walk(seconds: float) -> void:
	var start := Time.get_ticks_msec()
	while Time.get_ticks_msec() - start < seconds * 1000.0:
		var t := Time.get_ticks_msec() / 1000.0
		_host["chars"][0].move_input = Vector3(cos(t * 0.6), 0, sin(t * 0.6))
		await physics_frame


func _synchronizer(side: Dictionary, label: String, interval: float, props: Array) -> MultiplayerSynchronizer:
	var sync := MultiplayerSynchronizer.new()
	sync.name = "Sync%s%d" % [label, int(interval * 1000.0)]
	var config := SceneReplicationConfig.new()
	for p in props:
		config.add_property(p)
		config.property_set_spawn(p, false)
		config.property_set_replication_mode(p, SceneReplicationConfig.REPLICATION_MODE_ALWAYS)
	sync.replication_config = config
	side["world"].add_child(sync)
	sync.root_path = ^".."
	sync.replication_interval = interval
	sync.set_multiplayer_authority(1)
	return sync


func _run() -> void:
	var port := randi_range(20000, 40000)
	_host = _side("Host", SceneMultiplayer.new())
	_guest = _side("Guest", SceneMultiplayer.new())
	var server := ENetMultiplayerPeer.new()
	var client := ENetMultiplayerPeer.new()
	if server.create_server(port, 4) != OK or client.create_client("127.0.0.1", port) != OK:
		print("bench hold_hand_net: FAILED (cannot open ENet on 127.0.0.1:%d)" % port)
		quit(1)
		return
	_host["mp"].multiplayer_peer = server
	_guest["mp"].multiplayer_peer = client
	var start := Time.get_ticks_msec()
	while _guest["mp"].get_unique_id() <= 1 or _host["mp"].get_peers().is_empty():
		await process_frame
		if Time.get_ticks_msec() - start > 10000:
			print("bench hold_hand_net: FAILED (no connection)")
			quit(1)
			return
	var b_id: int = _guest["mp"].get_unique_id()
	for side in [_host, _guest]:
		_player(side, 1, 0)
		_player(side, b_id, 1)
	await _wait(0.5)
	_host["comps"][0].request(_host["comps"][1])
	await _wait(0.5)
	_guest["comps"][1].accept()
	start = Time.get_ticks_msec()
	while _guest["comps"][1].get_role() != HoldHandComponent.ROLE_RECIPIENT:
		await process_frame
		if Time.get_ticks_msec() - start > 10000:
			print("bench hold_hand_net: FAILED (the pair did not form)")
			quit(1)
			return

	# 1. The pair's own stream.
	await _walk(1.0)
	_sent(server)
	var frames_before: int = _host["comps"][0].get_network_stats()["sent_frames"]
	var payload_before: int = _host["comps"][0].get_network_stats()["sent_bytes"]
	await _walk(WINDOW)
	var stream := _sent(server) / WINDOW
	var stats: Dictionary = _host["comps"][0].get_network_stats()
	var frames_per_s: float = (stats["sent_frames"] - frames_before) / WINDOW
	var payload_per_s: float = (stats["sent_bytes"] - payload_before) / WINDOW
	var received: int = _guest["comps"][0].get_network_stats()["frames"]

	# 2. The same state through MultiplayerSynchronizers (the pair ended; the walk goes on).
	_host["comps"][0].cancel()
	await _wait(0.5)
	var synced := {}
	var replicated := true
	for variant in ["transform", "lean"]:
		var props := {0.1: [], 0.05: []}
		var world: Node3D = _host["world"]
		for slot in [0, 1]:
			var c: TestCharacter = _host["chars"][slot]
			var ch := str(world.get_path_to(c))
			if variant == "transform":
				props[0.1].append(NodePath(ch + ":transform"))
			else:
				props[0.1].append(NodePath(ch + ":position"))
				props[0.1].append(NodePath(ch + ":rotation"))
			var tree := str(world.get_path_to(c.animation_tree))
			props[0.1].append(NodePath(tree + ":parameters/move/blend_amount"))
			props[0.1].append(NodePath(tree + ":parameters/speed/scale"))
			var ik := str(world.get_path_to(_host["comps"][slot].get_hand_ik()))
			props[0.05].append(NodePath(ik + ":target_transform"))
			props[0.05].append(NodePath(ik + ":position_weight"))
			props[0.05].append(NodePath(ik + ":rotation_weight"))
		var made := []
		for side in [_host, _guest]:
			for interval in props:
				made.append(_synchronizer(side, variant, interval, props[interval]))
		var guest_a: TestCharacter = _guest["chars"][0]
		var before := guest_a.position
		await _walk(1.0)
		_sent(server)
		await _walk(WINDOW)
		synced[variant] = _sent(server) / WINDOW
		replicated = replicated and guest_a.position.distance_to(before) > 0.5
		for sync in made:
			sync.queue_free()
		await _wait(0.3)
	print("hold_hand_net: stream %.0f frames/s, %.0f B/s payload, %d frames received; synchronizer replicated: %s" % [
		frames_per_s, payload_per_s, received, replicated])
	if received < 50 or not replicated:
		print("bench hold_hand_net: FAILED (stream frames received %d, synchronizer replicated %s)" % [received, replicated])
		quit(1)
		return
	print("bench hold_hand_net: pair stream %.0f B/s per pair (%.0f B/s payload), MultiplayerSynchronizer %.0f B/s (lean position+rotation variant %.0f B/s, %.1fx) ratio=%.1fx" % [
		stream, payload_per_s, synced["transform"], synced["lean"], synced["lean"] / stream, synced["transform"] / stream])
	_host["mp"].multiplayer_peer = null
	_guest["mp"].multiplayer_peer = null
	for side in [_host, _guest]:
		side["root"].free()
	quit(0)
