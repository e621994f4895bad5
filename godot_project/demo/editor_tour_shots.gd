@tool
extends Node
## `cargo xtask demo editor`: Entwine's editor plugin adds this script to the editor (running under
## Xvfb). It opens `editor_tour.tscn`, selects each Entwine node in turn and saves the 3D viewport
## as `editor_NN_name.png` into the folder given by `--screenshots`, printing `saved PATH` for each.
## The `formation_editor` shot edits the squad's formation with the formation editor: one point
## added behind the wedge's head (its pairs blue) and one too close to the head (drawn red).
## Then each node's inspector, every section unfolded, as `editor_inspector_NN_name.png`: its groups,
## units and only the properties that apply.

const SCENE := "res://demo/editor_tour.tscn"
## [file name, node to select, camera position, point looked at]
const SHOTS := [
	["overview", "", Vector3(0.6, 3.6, 5.6), Vector3(0.2, 0.9, 0)],
	["limb_ik", "Arm/EntwineLimbIK", Vector3(-0.2, 1.9, 1.6), Vector3(-1.0, 1.4, 0)],
	["rope", "Rope", Vector3(1.4, 2.0, 3.0), Vector3(0.6, 1.6, 0.3)],
	["rope_bridge", "Bridge", Vector3(1.3, 2.2, 2.6), Vector3(1.3, 1.7, 0.6)],
	["formation", "Squad", Vector3(0.0, 4.2, 4.8), Vector3(0.0, 0.0, 1.6)],
	["env_touch", "Toucher/EnvTouch", Vector3(5.2, 3.0, 1.6), Vector3(2.2, 1.0, -1.6)],
	["hold_hand", "Leader", Vector3(-1.2, 3.0, 2.4), Vector3(-1.8, 0.5, -1.4)],
	["formation_editor", "Squad", Vector3(0.4, 4.3, 3.4), Vector3(0.0, 0.0, 1.4)],
	["reach_spheres", "Holder", Vector3(-2.3, 1.9, -0.4), Vector3(-3.2, 1.25, 1.4)],
]
## [file name, node to select, property to set first, value] for the inspector shots.
const INSPECTOR_SHOTS := [
	["limb_ik", "Arm/EntwineLimbIK", "", null],
	["rope", "Rope", "", null],
	["formation", "Squad", "", null],
	["env_touch", "Toucher/EnvTouch", "", null],
	["hold_hand", "Leader/HoldHandComponent", "", null],
]

var _out := ""


func _ready() -> void:
	var args := OS.get_cmdline_user_args()
	for i in range(0, args.size() - 1):
		if args[i] == "--screenshots":
			_out = args[i + 1]
	_run.call_deferred()


func _frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func _run() -> void:
	await _frames(20)
	EditorInterface.open_scene_from_path(SCENE)
	EditorInterface.set_main_screen_editor("3D")
	EditorInterface.distraction_free_mode = true
	await _frames(30)
	var root := EditorInterface.get_edited_scene_root()
	var viewport := EditorInterface.get_editor_viewport_3d(0)
	for i in SHOTS.size():
		var shot: Array = SHOTS[i]
		var selection := EditorInterface.get_selection()
		selection.clear()
		if shot[1] != "":
			var node := root.get_node(shot[1] as String)
			selection.add_node(node)
			EditorInterface.edit_node(node)
		var formations: EntwineFormationEditor = get_parent().get_formation_editor()
		if shot[0] == "formation_editor":
			formations.edit(root.get_node(shot[1] as String))
			formations.grid = 0.0
			var head: Vector2 = formations.get_points()[0]
			formations.add_point(head + Vector2(0.0, 2.4))
			formations.add_point(head + Vector2(0.55, -0.2))
		else:
			formations.stop()
		var camera := viewport.get_camera_3d()
		camera.look_at_from_position(shot[2], shot[3])
		# Let the ropes swing down and the gizmos redraw.
		await _frames(90)
		camera.look_at_from_position(shot[2], shot[3])
		await _frames(3)
		var image := viewport.get_texture().get_image()
		var path := _out.path_join("editor_%02d_%s.png" % [i + 1, shot[0]])
		if image == null or image.save_png(path) != OK:
			push_error("could not save %s" % path)
			continue
		print("saved %s" % path)
	await _inspector_shots(root)
	get_tree().quit(0)


## Saves each node's inspector, every section unfolded, cropped to the dock.
func _inspector_shots(root: Node) -> void:
	EditorInterface.get_editor_main_screen().get_window().size = Vector2i(1280, 2000)
	EditorInterface.distraction_free_mode = false
	await _frames(10)
	var inspector := EditorInterface.get_inspector()
	(inspector.get_parent() as Control).custom_minimum_size.x = 420.0
	for i in INSPECTOR_SHOTS.size():
		var shot: Array = INSPECTOR_SHOTS[i]
		var node := root.get_node(shot[1] as String)
		var selection := EditorInterface.get_selection()
		selection.clear()
		selection.add_node(node)
		EditorInterface.edit_node(node)
		await _frames(10)
		await _expand_all(inspector)
		await _frames(10)
		var window_image := inspector.get_viewport().get_texture().get_image()
		var rect := Rect2i(inspector.get_parent().get_global_rect())
		var image := window_image.get_region(rect.intersection(Rect2i(Vector2i.ZERO, window_image.get_size())))
		var path := _out.path_join("editor_inspector_%02d_%s.png" % [i + 1, shot[0]])
		if image == null or image.save_png(path) != OK:
			push_error("could not save %s" % path)
			continue
		print("saved %s" % path)


## Unfolds every section of the inspector (and the sections that unfolding shows).
func _expand_all(inspector: Node) -> void:
	for round in 3:
		for section in inspector.find_children("*", "EditorInspectorSection", true, false):
			if section.has_method("unfold"):
				section.call("unfold")
		await _frames(2)
