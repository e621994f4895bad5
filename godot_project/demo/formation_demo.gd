extends Node3D
## FormationController: a drill square. Twenty soldiers (test characters driven by velocity) open
## with a review — dress (eyes right on each rank's guide) and salute — then run a drill — line →
## wedge → circle → column, march, halt, face, dress and salute again — while a 2,000-agent
## MultiMesh crowd re-forms behind them (no skeletons: the bearing leaves it alone). The live
## contract metrics are on screen; the panel on the right tunes ε, δ, k1..k3 and the formation live.

var title := "FormationController — 20 soldiers dress right and salute; a %d-agent crowd re-forms behind" % crowd_size()

## The drill: [seconds into the cycle, command, argument].
const DRILL := [
	[0.4, "dress", null],
	[0.9, "salute", null],
	[6.5, "end_salute", null],
	[7.5, "form", "line"],
	[11.0, "form", "wedge"],
	[14.5, "form", "circle"],
	[18.0, "form", "column"],
	[20.0, "march", null],
	[24.0, "halt", null],
	[26.0, "face", PI / 2],
	[28.0, "face", 0.0],
	[30.0, "dress", null],
	[30.6, "salute", null],
	[33.5, "end_salute", null],
]
const CYCLE := 35.0
## The drill's clock advances by at most this per rendered frame, so a slow renderer (a software
## screenshot) sees the same opening — the squad dressed right and saluting — as a live window.
const MAX_CLOCK_STEP := 1.0 / 30.0
const CROWD_SHAPES := ["crowd_box", "crowd_spiral", "crowd_column", "crowd_square"]

var _squad: FormationController
var _crowd: FormationController
var _soldiers: Array[TestCharacter] = []
var _metrics: Label
var _metrics_box: Panel
var _command := "column"
var _time := 0.0
var _next := 0
var _crowd_time := 0.0
var _crowd_shape := 0
var _last_settle := "—"
## The panel's formation button: each press forms the next formation.
var _formation_picker: Button


func _ready() -> void:
	# From the front right: the soldiers face −Z and look right (+X), toward the camera.
	DemoStage.build(self, Vector3(6.6, 3.3, -5.8), Vector3(-0.8, 1.0, 0.5), 140.0)

	_squad = FormationController.new()
	_squad.name = "DrillSquad"
	_squad.formation = "column"
	_squad.debug_draw = true
	var scene := load("res://characters/test_character.tscn") as PackedScene
	for i in 20:
		var soldier := scene.instantiate() as TestCharacter
		soldier.name = "Soldier%02d" % i
		# Near their places in the column (ranks of five), a little out of line for the dress.
		soldier.position = Vector3((i % 5) * 1.2 - 2.4 + 0.06 * sin(i * 1.7), 0, (i / 5) * 1.2 - 1.8 + 0.06 * cos(i * 2.3))
		_squad.add_child(soldier)
		_soldiers.append(soldier)
	add_child(_squad)
	for soldier in _soldiers:
		# The controller moves them (move_and_slide with its velocity); they animate from speed.
		soldier.frozen = true
		soldier.drive_animation = false
	_squad.snap_to_slots()
	_squad.settled.connect(_on_settled)
	_squad.formation_changed.connect(_on_formation_changed)

	_crowd = FormationController.new()
	_crowd.name = "Crowd"
	_crowd.position = Vector3(-42, 0, 26)
	_crowd.agent_source = FormationController.AGENTS_INTERNAL
	_crowd.emit_agent_signals = false
	_crowd.add_formation("crowd_box", "(shape: Box(files: 50), spacing: 0.7)")
	_crowd.add_formation("crowd_spiral", "(shape: Spiral(initial_radius: 2.0, growth: 0.2), spacing: 0.7)")
	_crowd.add_formation("crowd_column", "(shape: Column(files: 80), spacing: 0.7)")
	_crowd.add_formation("crowd_square", "(shape: Box(files: 64), spacing: 0.6, direction: 45.0)")
	_crowd.max_speed = 6.0
	_crowd.agent_mesh = _crowd_mesh()
	_crowd.formation = "crowd_box"
	_crowd.internal_agent_count = crowd_size()
	add_child(_crowd)
	_crowd.snap_to_slots()

	_build_ui()


## Agents in the crowd: 2,000, or 500 when a software renderer (llvmpipe under Xvfb, what
## `cargo xtask demo` uses without a display) draws the frames.
static func crowd_size() -> int:
	var adapter := RenderingServer.get_video_adapter_name().to_lower()
	var software := adapter.contains("llvmpipe") or adapter.contains("softpipe") or adapter.contains("swrast")
	return 500 if software else 2000


## The crowd stands 40–60 m from the camera: an eight-sided capsule (about 50 triangles instead of
## the default capsule's thousand) looks the same there and keeps 2,000 agents cheap to draw, also
## for a software renderer. Colours come from the MultiMesh.
static func _crowd_mesh() -> Mesh:
	var capsule := CapsuleMesh.new()
	capsule.radius = 0.22
	capsule.height = 1.7
	capsule.radial_segments = 8
	capsule.rings = 1
	var mat := StandardMaterial3D.new()
	mat.vertex_color_use_as_albedo = true
	capsule.material = mat
	return capsule


func _physics_process(delta: float) -> void:
	_crowd_time += delta
	if _crowd_time > 9.0:
		_crowd_time = 0.0
		_crowd_shape = (_crowd_shape + 1) % CROWD_SHAPES.size()
		_crowd.form(CROWD_SHAPES[_crowd_shape])
	# Walk cycles from the commanded speed.
	for i in _soldiers.size():
		var speed := _squad.get_agent_velocity(i).length()
		var tree := _soldiers[i].animation_tree
		if tree:
			tree.set(&"parameters/move/blend_amount", clampf(speed / 0.6, 0.0, 1.0))
			tree.set(&"parameters/speed/scale", clampf(speed / 1.4, 0.6, 2.0))


func _process(delta: float) -> void:
	_time += minf(delta, MAX_CLOCK_STEP)
	var t := fmod(_time, CYCLE)
	if _next < DRILL.size() and t >= DRILL[_next][0]:
		_run(DRILL[_next])
		_next += 1
	elif t < DRILL[0][0] and _next >= DRILL.size():
		_next = 0
	var m := _squad.get_metrics()
	var settle: float = m["settle_time"]
	var bearing := ("eyes right" if _squad.is_eyes_right() else "eyes front") + (" · saluting" if _squad.is_saluting() else "")
	_metrics.text = "Drill: %s\nbearing: %s\nformation: %s\nspacing error: %.1f cm  (≤ 5)\nheading std: %.2f°  (≤ 3)\nsettle: %s  (≤ 1.2 s)\nlast settle: %s\nstates: %d idle · %d moving · %d aligning · %d stabilizing\ncrowd: %d agents, %s" % [
		_command, bearing, m["formation"], m["spacing_error"] * 100.0, rad_to_deg(m["heading_std"]),
		("%.2f s" % settle) if settle >= 0.0 else "settling…", _last_settle,
		m["idle"], m["moving"], m["aligning"], m["stabilizing"],
		_crowd.get_agent_count(), CROWD_SHAPES[_crowd_shape].trim_prefix("crowd_")]
	_metrics_box.size = _metrics.get_combined_minimum_size() + Vector2(20, 20)


func _run(step: Array) -> void:
	var what: String = step[1]
	match what:
		"form":
			_squad.form(step[2])
			_command = "form %s" % step[2]
		"march":
			# Alternate sides each cycle so the squad stays on the square.
			var side := 1.0 if int(_time / CYCLE) % 2 == 0 else -1.0
			_squad.march(Vector3(side, 0, 0), 1.2)
			_command = "right, march" if side > 0.0 else "left, march"
		"halt":
			_squad.halt()
			_command = "halt"
		"face":
			_squad.face(step[2])
			_command = "left, face" if step[2] != 0.0 else "front, face"
		"dress":
			_squad.dress()
			_command = "right, dress (eyes right)"
		"salute":
			_squad.salute()
			_command = "present, arms (salute)"
		"end_salute":
			_squad.end_salute()
			_command = "order, arms"


func _on_formation_changed(formation: String) -> void:
	if _formation_picker != null:
		_formation_picker.text = "formation: %s  ▸" % formation


func _on_settled(m: Dictionary) -> void:
	_last_settle = "%.2f s %s" % [m["settle_time"], "✓ contract met" if m["contract_met"] else "✗"]


## The panels are plain Panels with their children placed by hand, not Containers: Godot 4.6's
## release export template cannot undo a Container's connections to its children (an "Attempt to
## disconnect a nonexistent connection" error for each child as the scene is freed), and an
## exported game's log must hold only what the game says.
func _build_ui() -> void:
	var layer := CanvasLayer.new()
	add_child(layer)
	var style := StyleBoxFlat.new()
	style.bg_color = Color(0.05, 0.07, 0.1, 0.72)
	_metrics_box = Panel.new()
	_metrics_box.position = Vector2(16, 52)
	_metrics_box.add_theme_stylebox_override("panel", style)
	_metrics = Label.new()
	_metrics.position = Vector2(10, 10)
	_metrics.add_theme_font_size_override("font_size", 17)
	_metrics_box.add_child(_metrics)
	layer.add_child(_metrics_box)

	var panel := Panel.new()
	panel.add_theme_stylebox_override("panel", style)
	panel.anchor_left = 1.0
	panel.anchor_right = 1.0
	panel.offset_left = -290
	panel.offset_right = -16
	panel.offset_top = 52
	var heading := Label.new()
	heading.text = "Tuning (live)"
	heading.add_theme_font_size_override("font_size", 17)
	var y := _place(panel, heading, 10.0, 0.0)
	_formation_picker = Button.new()
	_formation_picker.alignment = HORIZONTAL_ALIGNMENT_LEFT
	_formation_picker.pressed.connect(func() -> void:
		var names := _squad.get_formation_names()
		var next: String = names[(names.find(_squad.formation) + 1) % names.size()]
		_squad.form(next)
		_command = "form %s (panel)" % next)
	y = _place(panel, _formation_picker, y, 31.0)
	_on_formation_changed(_squad.formation)
	y = _slider(panel, y, "ε align threshold (m)", "align_threshold", 0.01, 0.2, 0.005)
	y = _slider(panel, y, "δ heading tolerance (°)", "heading_tolerance", 0.5, 10.0, 0.1, true)
	y = _slider(panel, y, "k1 position gain", "k1", 0.0, 6.0, 0.05)
	y = _slider(panel, y, "k2 heading gain", "k2", 0.0, 6.0, 0.05)
	y = _slider(panel, y, "k3 integral gain", "k3", 0.0, 1.0, 0.01)
	panel.offset_bottom = panel.offset_top + y + 6.0
	layer.add_child(panel)


## Puts [param control] in [param panel] at height [param y], as wide as the panel's inside (and
## [param height] tall when above 0); returns the height below it.
func _place(panel: Panel, control: Control, y: float, height: float) -> float:
	control.position = Vector2(10, y)
	control.size = Vector2(254, height if height > 0.0 else control.get_combined_minimum_size().y)
	panel.add_child(control)
	return y + control.size.y + 4.0


## `degrees`: the property is an angle in radians, shown in degrees.
func _slider(panel: Panel, y: float, text: String, property: String, lo: float, hi: float, step: float, degrees := false) -> float:
	var label := Label.new()
	var slider := HSlider.new()
	slider.min_value = lo
	slider.max_value = hi
	slider.step = step
	slider.value = rad_to_deg(_squad.get(property)) if degrees else _squad.get(property)
	var show := func(v: float) -> void: label.text = "%s: %.3f" % [text, v]
	show.call(slider.value)
	slider.value_changed.connect(func(v: float) -> void:
		_squad.set(property, deg_to_rad(v) if degrees else v)
		show.call(v))
	y = _place(panel, label, y, 0.0)
	return _place(panel, slider, y, 16.0)
