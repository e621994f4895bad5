extends Node3D
## HoldHandComponent over the network, on loopback: this process is the server (a dedicated one, it
## plays nobody) and starts three more Godot processes — the initiator, the recipient and an
## onlooker — each with its own window and camera. The initiator walks; the other two see the same
## pair from the initiator's stream. The characters also carry the game's ordinary position sync
## ([PlayerSync]), which steps aside while the pair drives their roots.
##
## With `--screenshots DIR` every peer saves its view as `DIR/NN_hold_hand_net_<role>.png` once the
## pair has walked for a while, then quits.

var title := "HoldHandComponent over ENet — server view (three more processes: initiator, recipient, onlooker)"

const ROLES := ["initiator", "recipient", "onlooker"]
## Seconds the pair walks (on each peer's clock) before the screenshots.
const SHOT_AFTER := 4.0

var _role := "server"
var _port := 0
var _shot_dir := ""
var _pids: Array[int] = []
var _ids := {}
var _chars := {}
var _comps := {}
var _camera: Camera3D
var _label: Label
var _started_at := -1.0
var _active_for := 0.0
var _done := false
var _saved := false
var _all_saved := false
var _leaving := false


func _ready() -> void:
	var args := OS.get_cmdline_user_args()
	var at := args.find("--net-peer")
	if at >= 0 and at + 1 < args.size():
		_role = args[at + 1]
	at = args.find("--port")
	_port = int(args[at + 1]) if at >= 0 and at + 1 < args.size() else randi_range(20000, 40000)
	at = args.find("--screenshots")
	_shot_dir = args[at + 1] if at >= 0 and at + 1 < args.size() else ""
	_camera = DemoStage.build(self, Vector3(6.0, 4.0, 6.0), Vector3(0, 1.0, -2.0))
	_label = Label.new()
	_label.position = Vector2(16, 44)
	_label.add_theme_font_size_override("font_size", 20)
	var layer := CanvasLayer.new()
	layer.add_child(_label)
	add_child(layer)
	var room := EntwineHoldHandRoom.new()
	room.name = "Room"
	add_child(room)
	room.requested.connect(func(f: int, t: int) -> void: print("hold_hand_net demo: %s hears %d asked %d" % [_role, f, t]))
	var peer := ENetMultiplayerPeer.new()
	if _role == "server":
		if peer.create_server(_port, 8) != OK:
			push_error("hold_hand_net demo: cannot listen on port %d" % _port)
			return
		multiplayer.multiplayer_peer = peer
		_spawn_peers()
	else:
		if peer.create_client("127.0.0.1", _port) != OK:
			push_error("hold_hand_net demo: cannot dial port %d" % _port)
			return
		multiplayer.multiplayer_peer = peer
		multiplayer.connected_to_server.connect(func() -> void: hello.rpc_id(1, _role))
		multiplayer.server_disconnected.connect(func() -> void: get_tree().quit(0))
	_label.text = "%s's view" % _role.capitalize()
	if _role != "server":
		title = "HoldHandComponent over ENet — the %s's view (one of four processes)" % _role


## Starts the three other peers with the same Godot, project and rendering driver.
func _spawn_peers() -> void:
	var forwarded: Array[String] = []
	var args := OS.get_cmdline_args()
	for option in ["--rendering-driver", "--audio-driver"]:
		var at := args.find(option)
		if at >= 0 and at + 1 < args.size():
			forwarded.append_array([option, args[at + 1]])
	if "--disable-vsync" in args:
		forwarded.append("--disable-vsync")
	if not _shot_dir.is_empty():
		# Screenshots under Xvfb: no sound card, and four software-rendered views share the CPU. The
		# peers draw half-size views at a fixed 20 frames of game time per rendered frame: at a
		# few frames a second, Godot would otherwise run several physics steps back to back per
		# frame, and frames stamped microseconds apart would carry poses 50 ms apart (receivers
		# refuse such frames as too fast).
		if not "--audio-driver" in forwarded:
			forwarded.append_array(["--audio-driver", "Dummy"])
		forwarded.append_array(["--resolution", "640x360", "--fixed-fps", "20"])
	for i in ROLES.size():
		var cmd: Array[String] = forwarded.duplicate()
		cmd.append_array(["--path", ProjectSettings.globalize_path("res://"), "--position",
			"%d,%d" % [40 + i * 60, 40 + i * 60], "--", "--net-peer", ROLES[i], "--port", str(_port)])
		if not _shot_dir.is_empty():
			cmd.append_array(["--screenshots", _shot_dir])
		var pid := OS.create_process(OS.get_executable_path(), cmd)
		if pid <= 0:
			push_error("hold_hand_net demo: could not start the %s's process" % ROLES[i])
		_pids.append(pid)


## A client says which role it plays (server side); once both players are known, everyone builds.
@rpc("any_peer", "call_remote", "reliable")
func hello(role: String) -> void:
	if not multiplayer.is_server() or not role in ROLES:
		return
	_ids[role] = multiplayer.get_remote_sender_id()
	if ROLES.all(func(r: String) -> bool: return _ids.has(r)):
		build.rpc(_ids["initiator"], _ids["recipient"])
		build(_ids["initiator"], _ids["recipient"])


## Builds the same pair of characters on every peer.
@rpc("authority", "call_remote", "reliable")
func build(initiator: int, recipient: int) -> void:
	var scene := load("res://characters/test_character.tscn") as PackedScene
	var room := get_node("Room")
	for role in ["initiator", "recipient"]:
		var id := initiator if role == "initiator" else recipient
		var c := scene.instantiate() as TestCharacter
		c.name = role.capitalize()
		c.position = Vector3(0, 0, 0) if role == "initiator" else Vector3(2.0, 0, 1.5)
		c.move_speed = 1.2
		var sync := PlayerSync.new()
		sync.name = "Sync"
		sync.owner_peer = id
		c.add_child(sync)
		room.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		comp.player_id = id
		c.add_child(comp)
		_chars[role] = c
		_comps[role] = comp
		comp.phase_changed.connect(func(_from: int, to: int) -> void:
			print("hold_hand_net demo: %s's %s is in phase %d" % [_role, role, to]))
	if _role == "recipient":
		_comps["recipient"].request_received.connect(func(_from: int) -> void: _comps["recipient"].accept())
	if _role == "initiator":
		get_tree().create_timer(1.0).timeout.connect(_ask)
	_started_at = Time.get_ticks_msec() / 1000.0


func _ask() -> void:
	var ok: bool = _comps["initiator"].request(_comps["recipient"])
	print("hold_hand_net demo: the initiator asks the recipient: ", "sent" if ok else "refused")


func _process(delta: float) -> void:
	if _started_at < 0.0 or _leaving or multiplayer.multiplayer_peer == null:
		return
	if _comps["initiator"].get_phase() == HoldHandComponent.PHASE_ACTIVE:
		_active_for += delta
	var t := Time.get_ticks_msec() / 1000.0 - _started_at
	var a: TestCharacter = _chars["initiator"]
	var b: TestCharacter = _chars["recipient"]
	if _role == "initiator" and _comps["initiator"].get_phase() == HoldHandComponent.PHASE_ACTIVE:
		a.move_input = Vector3(sin(t * 0.3), 0, -cos(t * 0.3))
	var mid := (a.global_position + b.global_position) * 0.5
	match _role:
		"initiator":
			_follow(a, Vector3(0.6, 2.2, 3.4))
		"recipient":
			_follow(b, Vector3(-0.8, 2.2, 3.4))
		_:
			_camera.look_at_from_position(mid + Vector3(3.2, 2.2, 2.4), mid + Vector3(0, 0.9, 0))
	var comp: HoldHandComponent = _comps["initiator"]
	var stats := comp.get_network_stats()
	_label.text = "%s's view — peer %d — phase %d, hand weight %.2f, frames %s" % [_role.capitalize(),
		multiplayer.get_unique_id(), comp.get_phase(), _comps["recipient"].get_hand_weight(),
		str(stats["sent_frames"]) + " sent" if _role == "initiator" else str(stats["frames"]) + " received"]
	var shot_ready: bool = _active_for > SHOT_AFTER and _comps["recipient"].get_hand_weight() > 0.9
	if _role != "server" and not _shot_dir.is_empty() and (shot_ready or t > 60.0) and not _saved:
		_saved = true
		_save_and_quit()
	if _role == "server":
		_done = _all_saved or t > 90.0 or _pids.all(func(p: int) -> bool: return not OS.is_process_running(p))


## Keeps the camera behind `body` (in its frame) looking at the pair.
func _follow(body: Node3D, offset: Vector3) -> void:
	var eye := body.global_transform * offset
	_camera.look_at_from_position(eye, body.global_position + Vector3(0, 1.0, -1.0) * 1.0)


func _save_and_quit() -> void:
	await RenderingServer.frame_post_draw
	var index := 1 + ROLES.find(_role)
	var path := "%s/hold_hand_net_%d_%s.png" % [_shot_dir, index, _role]
	var image := get_viewport().get_texture().get_image()
	if image == null or image.save_png(path) != OK:
		push_error("hold_hand_net demo: could not save %s" % path)
	else:
		print("saved ", path)
	# Stay in the pair until every view is saved (a peer that leaves ends the pair for all).
	saved.rpc_id(1)


## A client saved its view (server side); when all three have, everyone may leave.
@rpc("any_peer", "call_remote", "reliable")
func saved() -> void:
	if not multiplayer.is_server():
		return
	_ids["saved_%d" % multiplayer.get_remote_sender_id()] = true
	if _ids.keys().filter(func(k: String) -> bool: return k.begins_with("saved_")).size() == ROLES.size():
		_all_saved = true  # the showcase takes the server's view next, then this node leaves


## Every view is saved (server side, called by the showcase after its own screenshot): the pair
## ends, the clients stop publishing, then leave; the server waits for their processes to exit and
## closes last, so that no peer receives data for a node or from a peer that is already gone.
func finish() -> void:
	if _role != "server" or multiplayer.multiplayer_peer == null:
		return
	stop.rpc()
	await get_tree().create_timer(0.8).timeout
	# One at a time: the server tells the others when a peer leaves, and must not tell a peer that
	# is leaving too.
	var deadline := Time.get_ticks_msec() + 15000
	for role in ROLES:
		var id: int = _ids.get(role, 0)
		if id == 0 or not id in multiplayer.get_peers():
			continue
		leave.rpc_id(id)
		while id in multiplayer.get_peers() and Time.get_ticks_msec() < deadline:
			await get_tree().process_frame
	while Time.get_ticks_msec() < deadline and _pids.any(func(p: int) -> bool: return p > 0 and OS.is_process_running(p)):
		await get_tree().process_frame
	for pid in _pids:
		if pid > 0 and OS.is_process_running(pid):
			push_warning("hold_hand_net demo: a peer process (pid %d) did not leave; killing it" % pid)
			OS.kill(pid)
	_pids.clear()
	_started_at = -1.0
	multiplayer.multiplayer_peer.close()
	multiplayer.multiplayer_peer = null


## First step of the teardown (clients): the initiator ends the pair; every client stops publishing
## its character's position.
@rpc("authority", "call_remote", "reliable")
func stop() -> void:
	_leaving = true
	if _role == "initiator" and _comps.has("initiator"):
		_comps["initiator"].cancel()
	for c: Node in _chars.values():
		var sync := c.get_node_or_null("Sync")
		if sync != null and sync.is_multiplayer_authority():
			sync.queue_free()


## Last step of the teardown (clients): close the connection and quit.
@rpc("authority", "call_remote", "reliable")
func leave() -> void:
	_leaving = true
	for c: Node in _chars.values():
		c.queue_free()
	await get_tree().process_frame
	get_tree().quit(0)


## Returns whether the showcase may take its screenshot and move on (server side).
func is_done() -> bool:
	return _role != "server" or _done


func _exit_tree() -> void:
	# Without finish() (a window closed, a run cut short): the other processes end with this one.
	if _role != "server":
		return
	for pid in _pids:
		if pid > 0 and OS.is_process_running(pid):
			OS.kill(pid)
