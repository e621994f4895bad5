extends Node3D
## The Entwine showcase: runs each demo scene in turn.
##
## With a window: keys 1–9 switch demos, Esc quits. Headless with `-- --screenshots DIR` (what
## `cargo xtask demo` does without a display): each demo runs for a few seconds, a frame is saved as
## `DIR/NN_name.png`, then the next demo starts; `--only NAME` keeps the demos whose name contains
## NAME, `--scene NAME` only the demo called NAME (`cargo xtask demo` runs each scene this way, in
## its own process). With `-- --check-extension` (the exported-build check) it checks that the
## extension's classes are registered, that the built-in formations and rope presets are there, that
## the real glTF humanoids are in the build and read, and runs every scene (but the networked one,
## which starts other processes: its script is only loaded) for a moment, the hold-hands and
## wall-touch scenes showing the real humanoids; it prints `ENTWINE_EXTENSION_OK …` and quits with
## 0, or names what is missing and quits with 1.

const DEMOS := [
	["limb_ik", "res://demo/limb_ik_demo.gd"],
	["hold_hand", "res://demo/hold_hand_demo.gd"],
	["hold_hand_net", "res://demo/hold_hand_net_demo.gd"],
	["formation", "res://demo/formation_demo.gd"],
	["env_touch", "res://demo/env_touch_demo.gd"],
	["rope", "res://demo/rope_demo.gd"],
	["rope_bridge", "res://demo/rope_bridge_demo.gd"],
]
## The formations and rope presets the addon ships (built into the library).
const BUILTIN_FORMATIONS := ["arc", "box", "circle", "column", "hollow_box", "line", "spiral", "wedge"]
const BUILTIN_PRESETS := ["low", "mid", "high"]
## The real glTF humanoids the demos load at run time (exported as they are, not imported): the
## exported-build check loads each and counts its bones.
const MODELS := [
	["cesium_man", "res://assets/characters/cesium_man/CesiumMan.glb"],
	["robot_expressive", "res://assets/characters/robot_expressive/RobotExpressive.glb"],
]
## The scenes that show a pair of those humanoids.
const SCENES_WITH_MODELS := ["hold_hand", "env_touch"]
## Frames each scene runs during the exported-build check.
const CHECK_FRAMES := 20
const EXTENSION_CLASSES := ["EntwineLimbIK", "EntwineNetClock", "HoldHandComponent", "EntwineHoldHandRoom", "FormationController", "EntwineSoldierBearing", "EnvironmentInteractionStateMachine", "RopeSimulation", "EntwineRopePreset", "EntwineRopeBoneChain"]
## Frames a demo runs before its screenshot.
const SETTLE_FRAMES := 150

var _current: Node
var _label: Label


func _ready() -> void:
	var args := OS.get_cmdline_user_args()
	if "--check-extension" in args:
		_check_extension()
		return
	_label = Label.new()
	_label.position = Vector2(16, 12)
	_label.add_theme_font_size_override("font_size", 22)
	var layer := CanvasLayer.new()
	layer.add_child(_label)
	add_child(layer)
	if "--net-peer" in args:
		# A peer process started by the networked demo: run only that demo.
		_show(DEMOS.map(func(d: Array) -> String: return d[0]).find("hold_hand_net"))
		return
	var only_at := args.find("--only")
	var only: String = args[only_at + 1] if only_at >= 0 and only_at + 1 < args.size() else ""
	var scene_at := args.find("--scene")
	var exact: String = args[scene_at + 1] if scene_at >= 0 and scene_at + 1 < args.size() else ""
	var shots_at := args.find("--screenshots")
	if shots_at >= 0 and shots_at + 1 < args.size():
		_take_screenshots(args[shots_at + 1], only, exact)
	else:
		_show(0)


func _unhandled_key_input(event: InputEvent) -> void:
	var key := event as InputEventKey
	if key == null or not key.pressed:
		return
	if key.keycode == KEY_ESCAPE:
		get_tree().quit()
	elif key.keycode >= KEY_1 and key.keycode < KEY_1 + DEMOS.size():
		_show(key.keycode - KEY_1)


func _show(i: int) -> void:
	if _current:
		_current.queue_free()
	_current = (load(DEMOS[i][1]) as GDScript).new()
	_current.name = DEMOS[i][0]  # the same node path in every process (networked demos)
	add_child(_current)
	var title: String = _current.get("title") if _current.get("title") else DEMOS[i][0]
	_label.text = "Entwine — %s   [%d/%d, keys 1–%d]" % [title, i + 1, DEMOS.size(), DEMOS.size()]


func _take_screenshots(dir: String, only: String, exact: String) -> void:
	DirAccess.make_dir_recursive_absolute(dir)
	if not exact.is_empty() and not DEMOS.any(func(d: Array) -> bool: return d[0] == exact):
		push_error("showcase: no demo called '%s'" % exact)
		get_tree().quit(1)
		return
	for i in DEMOS.size():
		if not only.is_empty() and not DEMOS[i][0].contains(only):
			continue
		if not exact.is_empty() and DEMOS[i][0] != exact:
			continue
		_show(i)
		for f in SETTLE_FRAMES:
			await get_tree().process_frame
		# A demo with other processes (the networked one) says when it is ready.
		var deadline := Time.get_ticks_msec() + 120000
		while is_instance_valid(_current) and _current.has_method("is_done") and not _current.is_done() \
				and Time.get_ticks_msec() < deadline:
			await get_tree().process_frame
		await RenderingServer.frame_post_draw
		var path := "%s/%02d_%s.png" % [dir, i + 1, DEMOS[i][0]]
		var image := get_viewport().get_texture().get_image()
		if image == null or image.save_png(path) != OK:
			push_error("showcase: could not save %s" % path)
			get_tree().quit(1)
			return
		print("saved ", path)
		# A demo with other processes (the networked one) closes them in order.
		if is_instance_valid(_current) and _current.has_method("finish"):
			await _current.finish()
	if _current:
		_current.queue_free()
		_current = null
	await get_tree().process_frame
	get_tree().quit(0)


func _check_extension() -> void:
	var problems: Array[String] = []
	var missing := EXTENSION_CLASSES.filter(func(c: String) -> bool: return not ClassDB.class_exists(c))
	if not missing.is_empty():
		printerr("Entwine extension not loaded; missing classes: ", missing)
		get_tree().quit(1)
		return
	# Formations: every built-in one is known and accepted.
	var squad := FormationController.new()
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 12
	var rejected: Array[String] = []
	squad.formation_rejected.connect(func(n: String, why: String) -> void: rejected.append("%s (%s)" % [n, why]))
	add_child(squad)
	var names := squad.get_formation_names()
	for f in BUILTIN_FORMATIONS:
		if not f in names:
			problems.append("formation '%s' missing (have %s)" % [f, names])
		elif not squad.form(f):
			problems.append("formation '%s' refused" % f)
		squad.snap_to_slots()
	for r in rejected:
		problems.append("formation rejected: " + r)
	squad.queue_free()
	# Rope presets: the built-in table.
	var rope := RopeSimulation.new()
	add_child(rope)
	var presets := rope.get_preset_names()
	for p in BUILTIN_PRESETS:
		if not p in presets or not rope.apply_preset(p):
			problems.append("rope preset '%s' missing (have %s)" % [p, presets])
	rope.queue_free()
	# The real humanoids: each file is in the build and reads as a skinned character.
	var models: Array[String] = []
	for m in MODELS:
		if not FileAccess.file_exists(m[1]):
			problems.append("model '%s' not in the build (%s)" % [m[0], m[1]])
			continue
		var root := GltfModel.instantiate(m[1])
		var sk := GltfModel.skeleton(root) if root != null else null
		if sk == null or sk.get_bone_count() == 0:
			problems.append("model '%s' does not read as a skinned character" % m[0])
		else:
			models.append("%s:%d" % [m[0], sk.get_bone_count()])
		if root != null:
			root.free()
	# Every scene loads and runs for a moment.
	_label = Label.new()
	var layer := CanvasLayer.new()
	layer.add_child(_label)
	add_child(layer)
	var ran: Array[String] = []
	for i in DEMOS.size():
		var script := load(DEMOS[i][1]) as GDScript
		if script == null:
			problems.append("scene %s: script does not load" % DEMOS[i][0])
			continue
		if DEMOS[i][0] == "hold_hand_net":
			continue
		_show(i)
		for f in CHECK_FRAMES:
			await get_tree().process_frame
		# The scenes with real humanoids show them (GltfModel.on_test_body puts each on its body as
		# "Model"), not test characters in their place.
		if DEMOS[i][0] in SCENES_WITH_MODELS:
			var shown := _current.find_children("Model", "", true, false).size()
			if shown < 2:
				problems.append("scene %s: %d real humanoid(s) shown, expected 2" % [DEMOS[i][0], shown])
		ran.append(DEMOS[i][0])
	if _current:
		_current.queue_free()
		_current = null
	await get_tree().process_frame
	if problems.is_empty():
		print("ENTWINE_EXTENSION_OK classes=%d formations=%s presets=%s models=%s scenes=%s" % [EXTENSION_CLASSES.size(),
			",".join(BUILTIN_FORMATIONS), ",".join(BUILTIN_PRESETS), ",".join(models), ",".join(ran)])
		get_tree().quit(0)
	else:
		for p in problems:
			printerr("Entwine exported-build check: ", p)
		get_tree().quit(1)
