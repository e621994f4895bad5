# editor: res://demo/editor_tour.tscn
# timeout: 90
@tool
extends Node
## The editor suite: `cargo xtask test editor` opens the demo project in the Godot editor (headless,
## `--editor`), with Entwine's editor plugin, which adds this script to the editor
## (`--entwine-editor-script`). It opens `demo/editor_tour.tscn` and checks the tool-mode previews,
## the gizmos' handles against the scene's own nodes, undo/redo, and that nothing computed in the
## editor is saved. The harness fails the run on any ERROR or WARNING line in the editor's log.
## Prints `TEST PASS name` / `TEST FAIL name | what | expected | got` and quits.

const SCENE := "res://demo/editor_tour.tscn"

var _passed := 0
var _failed := 0
var _test := ""
var _test_failed := false
var _root: Node
var _gizmos: Object
## Substring a test name must contain to run (empty: all), from `--filter`.
var _filter := ""


func _ready() -> void:
	var args := OS.get_cmdline_user_args()
	for i in range(0, args.size() - 1):
		if args[i] == "--filter":
			_filter = args[i + 1]
	_run.call_deferred()


func _run() -> void:
	await _frames(10)
	EditorInterface.open_scene_from_path(SCENE)
	await _frames(10)
	_root = EditorInterface.get_edited_scene_root()
	_gizmos = get_parent().get_gizmo_plugin()
	if _root == null or _gizmos == null:
		print("TEST FAIL setup | the tour scene opens and the plugin has gizmos | both | scene %s, gizmos %s" % [_root, _gizmos])
		_finish()
		return
	for method in get_script().get_script_method_list():
		var test_name: String = method["name"]
		if not test_name.begins_with("test_"):
			continue
		if not _filter.is_empty() and not test_name.contains(_filter):
			continue
		_test = test_name
		_test_failed = false
		await call(test_name)
		if _test_failed:
			_failed += 1
		else:
			_passed += 1
			print("TEST PASS %s" % test_name)
	_finish()


func _finish() -> void:
	print("%d passed, %d failed" % [_passed, _failed])
	# Close the scene unsaved, so nothing the tests changed is written.
	get_tree().quit(0 if _failed == 0 else 1)


func _frames(n: int) -> void:
	for i in n:
		await get_tree().process_frame


func _physics_frames(n: int) -> void:
	for i in n:
		await get_tree().physics_frame


func check(ok: bool, what: String, expected: Variant = true, got: Variant = ok) -> void:
	if not ok:
		_test_failed = true
		print("TEST FAIL %s | %s | expected: %s | got: %s" % [_test, what, expected, got])


func check_near(got: Variant, expected: Variant, tolerance: float, what: String) -> void:
	var d: float
	if got is Vector3:
		d = (got as Vector3).distance_to(expected)
	elif got is Vector2:
		d = (got as Vector2).distance_to(expected)
	else:
		d = absf(float(got) - float(expected))
	check(d <= tolerance, "%s (within %s)" % [what, tolerance], expected, got)


func _select(node: Node) -> void:
	var selection := EditorInterface.get_selection()
	selection.clear()
	if node != null:
		selection.add_node(node)


func _undo(node: Object) -> void:
	var manager := EditorInterface.get_editor_undo_redo()
	manager.get_history_undo_redo(manager.get_object_history_id(node)).undo()


func _redo(node: Object) -> void:
	var manager := EditorInterface.get_editor_undo_redo()
	manager.get_history_undo_redo(manager.get_object_history_id(node)).redo()


## The undo history an edit of [param node] goes to (the scene's).
func _history(node: Object) -> UndoRedo:
	var manager := EditorInterface.get_editor_undo_redo()
	return manager.get_history_undo_redo(manager.get_object_history_id(node))


## The formation editor's toolbar, as the plugin put it in the 3D viewport's menu.
func _toolbar() -> Control:
	return EditorInterface.get_base_control().find_child("EntwineFormationToolbar", true, false) as Control


# ---------------------------------------------------------------------------------------------

func test_rope_hangs_and_follows_its_anchor() -> void:
	var rope: RopeSimulation = _root.get_node("Rope")
	var anchor: Node3D = _root.get_node("RopeAnchor")
	_select(null)
	await _physics_frames(150)
	check(rope._is_editor_previewing(), "a rope with editor_preview = Always simulates unselected")
	var points := rope.get_points()
	var top := anchor.global_position
	check_near(points[0], top, 0.001, "the first point is on the anchor")
	# A free rope settles hanging straight down: the end is its length below the anchor.
	check_near(points[points.size() - 1], top + Vector3(0, -rope.length, 0), 0.03,
			"the end hangs its length (%.2f m) below the anchor" % rope.length)
	anchor.global_position = top + Vector3(0.5, 0, 0)
	await _physics_frames(3)
	check_near(rope.get_points()[0], anchor.global_position, 0.001, "the rope follows a moved anchor")
	await _physics_frames(240)
	points = rope.get_points()
	check_near(points[points.size() - 1], anchor.global_position + Vector3(0, -rope.length, 0), 0.05,
			"and swings back to hang below it")
	_undo_position(anchor, top)


func _undo_position(node: Node3D, at: Vector3) -> void:
	node.global_position = at


func test_pinned_rope_hangs_as_the_catenary() -> void:
	var bridge: RopeSimulation = _root.get_node("Bridge")
	await _physics_frames(240)
	var points := bridge.get_points()
	var a: Vector3 = (_root.get_node("BridgeStart") as Node3D).global_position
	var b: Vector3 = (_root.get_node("BridgeEnd") as Node3D).global_position
	check_near(points[points.size() - 1], b, 0.002, "the end is pinned to BridgeEnd")
	# The catenary of the rope's length between the two pins: L = 2c·sinh(s / 2c), sag =
	# c·(cosh(s / 2c) − 1), solved for c by bisection.
	var span := a.distance_to(b)
	var length := bridge.length
	var lo := 0.01
	var hi := 100.0
	for i in 100:
		var c := (lo + hi) * 0.5
		if 2.0 * c * sinh(span / (2.0 * c)) > length:
			lo = c
		else:
			hi = c
	var c := (lo + hi) * 0.5
	var sag := c * (cosh(span / (2.0 * c)) - 1.0)
	var lowest := INF
	for p in points:
		lowest = minf(lowest, p.y)
	# 12 straight links sag a little less than the smooth curve (their chords cut its bottom).
	check_near(a.y - lowest, sag, 0.02, "the sag is the catenary's %.3f m" % sag)


func test_a_rope_previews_only_while_selected_by_default() -> void:
	var rope: RopeSimulation = _root.get_node("Rope")
	rope.editor_preview = RopeSimulation.EDITOR_PREVIEW_WHILE_SELECTED
	_select(null)
	await _frames(3)
	check(not rope._is_editor_previewing(), "an unselected rope does not simulate")
	var before := rope.get_points()
	(_root.get_node("RopeAnchor") as Node3D).position += Vector3(0.3, 0, 0)
	await _physics_frames(10)
	check(rope.get_points() == before, "an unselected rope's points stay still")
	_select(rope)
	await _frames(3)
	check(rope._is_editor_previewing(), "a selected rope simulates")
	await _physics_frames(5)
	check(rope.get_points()[0] != before[0], "a selected rope follows its anchor")
	(_root.get_node("RopeAnchor") as Node3D).position -= Vector3(0.3, 0, 0)
	rope.editor_preview = RopeSimulation.EDITOR_PREVIEW_ALWAYS
	_select(null)


func test_limb_ik_poses_the_arm_toward_its_target() -> void:
	# The hand bone's attachment shows the pose as drawn, after the skeleton's modifiers.
	var hand: Node3D = _root.get_node("Arm/HandMesh")
	var target: Node3D = _root.get_node("ArmTarget")
	await _frames(5)
	check_near(hand.global_position, target.global_position, 0.01, "the hand reaches the target in the editor")
	target.global_position += Vector3(0.05, -0.1, 0.05)
	await _frames(5)
	check_near(hand.global_position, target.global_position, 0.01, "and follows it when it is moved")
	target.global_position -= Vector3(0.05, -0.1, 0.05)


func test_formation_draws_its_slots_and_lays_out_agents_undoably() -> void:
	var squad: FormationController = _root.get_node("Squad")
	await _frames(3)
	check(squad._has_editor_preview(), "the squad draws its slots in the editor")
	check(squad.get_slot_count() == 5, "one slot per child agent", 5, squad.get_slot_count())
	var before: Array[Vector3] = []
	for child in squad.get_children():
		before.append((child as Node3D).position)
	await _physics_frames(30)
	var still := true
	for i in squad.get_child_count():
		still = still and (squad.get_child(i) as Node3D).position == before[i]
	check(still, "the editor preview drives no agent")
	squad.lay_out_agents()
	for i in squad.get_child_count():
		var child := squad.get_child(i) as Node3D
		var slot := squad.get_slot_position(i)
		check_near(Vector2(child.global_position.x, child.global_position.z), Vector2(slot.x, slot.z),
				0.001, "agent %d stands on its slot" % i)
		check_near(child.position.y, before[i].y, 0.0001, "agent %d keeps its height" % i)
	_undo(squad.get_child(0))
	var back := true
	for i in squad.get_child_count():
		back = back and (squad.get_child(i) as Node3D).position.is_equal_approx(before[i])
	check(back, "one undo puts every agent back")


func test_gizmo_handles_sit_on_the_scene() -> void:
	var limb: Node3D = _root.get_node("Arm/EntwineLimbIK")
	# The rope's end handle rides on the rope: let it settle from the tests before.
	await _physics_frames(300)
	for path in ["Arm/EntwineLimbIK", "Rope", "Bridge", "Toucher/EnvTouch", "Leader"]:
		var node: Node3D = _root.get_node(path)
		var ours := false
		for g in node.get_gizmos():
			ours = ours or (g is EditorNode3DGizmo and (g as EditorNode3DGizmo).get_plugin() == _gizmos)
		check(ours, "%s has Entwine's gizmo" % path)
	var h: PackedVector3Array = _gizmos._get_handle_positions(limb)
	check(h.size() == 2, "EntwineLimbIK has a target and a pole handle", 2, h.size())
	check_near(h[0], (_root.get_node("ArmTarget") as Node3D).global_position, 0.0001, "the target handle is on the target")
	# Pole: half the arm's reach (0.3 + 0.3 m) from the shoulder along pole_direction (+Z).
	check_near(h[1], Vector3(-1.2, 1.5, 0.3), 0.001, "the pole handle")
	var rope: Node3D = _root.get_node("Rope")
	h = _gizmos._get_handle_positions(rope)
	check_near(h[0], (_root.get_node("RopeAnchor") as Node3D).global_position, 0.0001, "the rope's anchor handle")
	check_near(h[1], (_root.get_node("RopeAnchor") as Node3D).global_position + Vector3(0, -1.65, 0), 0.03,
			"the rope's length handle hangs 11 × 0.15 m below")
	h = _gizmos._get_handle_positions(_root.get_node("Bridge"))
	check(h.size() == 3, "a pinned rope has a third handle, its end anchor", 3, h.size())
	check_near(h[2], (_root.get_node("BridgeEnd") as Node3D).global_position, 0.0001, "the end anchor handle is on BridgeEnd")
	check(_gizmos._get_handle_positions(rope).size() == 2, "a free rope has no end anchor handle")
	h = _gizmos._get_handle_positions(_root.get_node("Toucher/EnvTouch"))
	# The seed's box for 1.75 m: side 1.75, centre a quarter up from the waist and half forward.
	var box_centre := Vector3(2.2, 0.875 + 0.4375, -1.2 - 0.875)
	check_near(h[0], box_centre + Vector3(0, 0.875, 0), 0.0001, "the detection box's top handle")
	check_near(h[1], box_centre + Vector3(0.875 - 0.05, 0, 0), 0.0001, "the surface offset handle (0.05 m inside the side face)")
	h = _gizmos._get_handle_positions(_root.get_node("Leader"))
	var leader := (_root.get_node("Leader") as Node3D).global_position
	check_near(h[0], leader + Vector3(-0.82, 0, 0.17), 0.0001, "the follow offset handle")
	check_near(h[1], leader + Vector3(0, 0, 1), 0.0001, "the preparation offset handle")


func test_dragging_handles_writes_properties_and_undoes() -> void:
	var leader: Node3D = _root.get_node("Leader")
	var component: Node = leader.get_node("HoldHandComponent")
	check(_gizmos._drag_handle(leader, 0, leader.global_position + Vector3(-1.0, 0, 0.5)), "the follow handle drags")
	check_near(component.get("follow_offset"), Vector3(-1.0, 0, 0.5), 0.0001, "follow_offset is where it was dropped")
	_undo(component)
	check_near(component.get("follow_offset"), Vector3(-0.82, 0, 0.17), 0.0001, "undo restores follow_offset")

	var touch: Node3D = _root.get_node("Toucher/EnvTouch")
	var top: Vector3 = _gizmos._get_handle_positions(touch)[0]
	check(_gizmos._drag_handle(touch, 0, top + Vector3(0, 0.1, 0)), "the box handle drags")
	# The top face sits 0.75 side above the collider centre: 0.1 m up is a 0.1 / 0.75 m taller box,
	# whose top face is under the dropped handle.
	check_near(touch.get("character_height"), 1.75 + 0.1 / 0.75, 0.0001, "the top face 0.1 m up makes the box 0.133 m taller")
	check_near(_gizmos._get_handle_positions(touch)[0].y, top.y + 0.1, 0.0001, "the top face follows the mouse")
	_undo(touch)
	check_near(touch.get("character_height"), 0.0, 0.0001, "undo restores character_height (0: auto)")
	var side: Vector3 = _gizmos._get_handle_positions(touch)[1]
	check(_gizmos._drag_handle(touch, 1, side + Vector3(-0.05, 0, 0)), "the surface offset handle drags")
	check_near(touch.get("surface_offset"), 0.1, 0.0001, "surface_offset follows the handle 5 cm further in")
	_undo(touch)

	var limb: Node3D = _root.get_node("Arm/EntwineLimbIK")
	check(_gizmos._drag_handle(limb, 1, Vector3(-1.2, 1.5, 0) + Vector3(0.3, 0, 0)), "the pole handle drags")
	check_near(limb.get("pole_direction"), Vector3(1, 0, 0), 0.0001, "pole_direction points at the handle")
	_undo(limb)
	check_near(limb.get("pole_direction"), Vector3(0, 0, 1), 0.0001, "undo restores pole_direction")

	var rope: Node3D = _root.get_node("Rope")
	var anchor := (_root.get_node("RopeAnchor") as Node3D).global_position
	check(_gizmos._drag_handle(rope, 1, anchor + Vector3(0, -0.9, 0)), "the length handle drags")
	check(rope.get("point_count") == 7, "0.9 m of 0.15 m segments is 7 points", 7, rope.get("point_count"))
	_undo(rope)
	check(rope.get("point_count") == 12, "undo restores point_count", 12, rope.get("point_count"))

	var bridge: Node3D = _root.get_node("Bridge")
	var end := (_root.get_node("BridgeEnd") as Node3D).global_position
	check(_gizmos._drag_handle(bridge, 2, end + Vector3(0, -0.2, 0.1)), "the end anchor handle drags")
	check_near(bridge.get("end_offset"), Vector3(0, -0.2, 0.1), 0.0001, "end_offset is where the end was dropped")
	_undo(bridge)
	check_near(bridge.get("end_offset"), Vector3.ZERO, 0.0001, "undo restores end_offset")


func _points_equal(a: PackedVector2Array, b: PackedVector2Array) -> bool:
	if a.size() != b.size():
		return false
	for i in a.size():
		if a[i].distance_to(b[i]) > 0.0001:
			return false
	return true


func test_formation_editor_edits_saves_and_loads_as_drawn() -> void:
	var squad: FormationController = _root.get_node("Squad")
	var editor: EntwineFormationEditor = get_parent().get_formation_editor()
	check(editor != null and editor.edit(squad), "the squad's formation opens in the formation editor")
	var start := editor.get_points()
	check(start.size() == 5, "one point per slot of the wedge", 5, start.size())
	for i in start.size():
		var slot := squad.to_local(squad.get_slot_target(i))
		check_near(start[i], Vector2(slot.x, slot.z), 0.0001, "point %d is slot %d" % [i, i])
	var h: PackedVector3Array = _gizmos._get_handle_positions(squad)
	check(h.size() == 5, "a handle per point", 5, h.size())
	check_near(h[3], squad.to_global(Vector3(start[3].x, 0.03, start[3].y)), 0.0001, "handle 3 is on point 3")
	var pairs: Array = editor.get_spacing_pairs()
	var crowded := 0
	for p in pairs:
		crowded += p.z
	check(pairs.size() >= 4 and crowded == 0, "the wedge's neighbours are drawn, none crowded", "≥ 4, 0", "%d, %d" % [pairs.size(), crowded])

	# Add: on the grid, one undo step.
	editor.grid = 0.5
	check(editor.add_point(Vector2(0.3, 2.8)) == 5, "a point is added after the last")
	check_near(editor.get_points()[5], Vector2(0.5, 3.0), 0.0001, "on the 0.5 m grid")
	_undo(squad)
	check(_points_equal(editor.get_points(), start), "one undo takes the added point away")
	_redo(squad)
	check(editor.get_points().size() == 6, "redo adds it again", 6, editor.get_points().size())

	# Move by dragging its handle: snapped, one undo step.
	check(_gizmos._drag_handle(squad, 5, squad.to_global(Vector3(1.1, 0.4, 2.4))), "the point's handle drags")
	check_near(editor.get_points()[5], Vector2(1.0, 2.5), 0.0001, "the point is on the grid under the drop")
	_undo(squad)
	check_near(editor.get_points()[5], Vector2(0.5, 3.0), 0.0001, "undo puts it back")

	# The spacing drawn live: a point 0.5 m from the head is crowded.
	editor.grid = 0.0
	check(editor.move_point(5, start[0] + Vector2(0.5, 0)), "a point moves")
	var near_head := false
	for p in editor.get_spacing_pairs():
		near_head = near_head or (p == Vector3i(0, 5, 1))
	check(near_head, "a point 0.5 m from the head is drawn crowded (the spacing is 1.2 m)")

	# Delete: the later points move up; undo and redo.
	check(editor.delete_point(5), "the point is deleted")
	check(_points_equal(editor.get_points(), start), "the wedge is back")
	_undo(squad)
	check(editor.get_points().size() == 6, "undo restores the deleted point", 6, editor.get_points().size())
	_redo(squad)
	check(not editor.delete_point(9), "there is no point 9")

	# Mirror: delete the right arm (points 2 and 4), mirror the left one back.
	check(editor.mirror() == 0, "the wedge is symmetric: mirroring adds nothing")
	editor.delete_point(4)
	editor.delete_point(2)
	check(editor.mirror() == 2, "mirroring adds the two missing points")
	var mirrored := editor.get_points()
	for p in start:
		var found := false
		for q in mirrored:
			found = found or q.distance_to(p) < 0.0001
		check(found, "mirrored: the wedge's point %s is back" % p)
	_undo(squad)
	check(editor.get_points().size() == 3, "one undo takes both mirrored points away", 3, editor.get_points().size())
	_redo(squad)

	# Snap: every point on the grid, one undo step.
	editor.grid = 0.5
	check(editor.snap_points(), "snapping moves the wedge's points")
	var on_grid := true
	for p in editor.get_points():
		on_grid = on_grid and is_equal_approx(fposmod(p.x, 0.5), 0.0) and is_equal_approx(fposmod(p.y, 0.5), 0.0)
	check(on_grid, "every point is on the grid", true, editor.get_points())
	_undo(squad)
	check(_points_equal(editor.get_points(), mirrored), "undo un-snaps them")

	# The head steps forward: the formation to save.
	editor.grid = 0.0
	editor.move_point(0, mirrored[0] + Vector2(0, -0.6))
	var drawn := editor.get_points()
	var dir := "user://entwine_editor_test"
	DirAccess.make_dir_recursive_absolute(dir)
	check(editor.save(dir + "/drawn.ron"), "the formation saves")
	var text := FileAccess.get_file_as_string(dir + "/drawn.ron")
	check(text.contains("Custom"), "as custom points", "Custom", text)

	# A controller whose formations folder holds the file lays its slots on the drawn points, with
	# as many agents as points, fewer (the first points, not moved) and more (every point kept, the
	# extra agents in copies of the points repeated behind them, their depth plus the spacing back).
	var front := INF
	var back := -INF
	for p in drawn:
		front = minf(front, p.y)
		back = maxf(back, p.y)
	var rank := back - front + 1.2
	for count in [drawn.size(), 2, drawn.size() + 4]:
		var probe := FormationController.new()
		probe.formations_dir = dir
		probe.formation = "drawn"
		for i in count:
			probe.add_child(Node3D.new())
		add_child(probe)
		await _frames(2)
		check(probe.get_slot_count() == count, "the saved formation seats %d" % count, count, probe.get_slot_count())
		for i in probe.get_slot_count():
			var slot := probe.get_slot_target(i)
			var copy := floori(float(i) / drawn.size())
			var expected: Vector2 = drawn[i % drawn.size()] + Vector2(0, rank * copy)
			check_near(Vector2(slot.x, slot.z), expected, 0.0001,
					"%d agents: slot %d is %s" % [count, i, "drawn point %d" % i if copy == 0 else "behind the drawn points"])
		probe.queue_free()
	DirAccess.remove_absolute(dir + "/drawn.ron")
	editor.stop()
	check(not editor.is_editing() and _gizmos._get_handle_positions(squad).is_empty(), "stopping removes the points' handles")


func test_the_toolbar_and_shift_clicks_edit_formation_points() -> void:
	var squad: FormationController = _root.get_node("Squad")
	var plugin = get_parent()
	var editor: EntwineFormationEditor = plugin.get_formation_editor()
	_select(squad)
	EditorInterface.edit_node(squad)
	await _frames(2)
	var edit: Button = _toolbar().get_node("EditFormation")
	edit.button_pressed = true
	check(editor.is_editing() and editor.get_controller() == squad, "Edit formation edits the selected squad")
	var camera := EditorInterface.get_editor_viewport_3d(0).get_camera_3d()
	camera.look_at_from_position(Vector3(0.5, 6, 5), Vector3(0, 0, 1.6))
	var n := editor.get_points().size()
	var click := InputEventMouseButton.new()
	click.button_index = MOUSE_BUTTON_LEFT
	click.pressed = true
	click.shift_pressed = true
	click.position = camera.unproject_position(squad.to_global(Vector3(1.0, 0, 2.5)))
	check(plugin._viewport_input(camera, click) == EditorPlugin.AFTER_GUI_INPUT_STOP, "Shift+click is the formation editor's")
	check(editor.get_points().size() == n + 1, "Shift+click adds a point", n + 1, editor.get_points().size())
	check_near(editor.get_points()[editor.get_points().size() - 1], Vector2(1.0, 2.5), 0.001, "on the ground under the mouse")
	click.button_index = MOUSE_BUTTON_RIGHT
	check(plugin._viewport_input(camera, click) == EditorPlugin.AFTER_GUI_INPUT_STOP, "Shift+right-click on a point is taken")
	check(editor.get_points().size() == n, "and deletes the point", n, editor.get_points().size())
	click.position = camera.unproject_position(squad.to_global(Vector3(3.0, 0, 4.0)))
	check(plugin._viewport_input(camera, click) == EditorPlugin.AFTER_GUI_INPUT_PASS, "Shift+right-click off the points is the editor's")
	click.shift_pressed = false
	click.button_index = MOUSE_BUTTON_LEFT
	check(plugin._viewport_input(camera, click) == EditorPlugin.AFTER_GUI_INPUT_PASS, "a click without Shift is the editor's")
	check(editor.get_points().size() == n, "and adds nothing", n, editor.get_points().size())
	edit.button_pressed = false
	check(not editor.is_editing(), "Edit formation off stops editing")
	_select(null)


func test_the_toolbar_buttons_and_the_save_dialog() -> void:
	var squad: FormationController = _root.get_node("Squad")
	var editor: EntwineFormationEditor = get_parent().get_formation_editor()
	var toolbar := _toolbar()
	check(toolbar != null, "the formation toolbar is in the 3D viewport's menu")
	if toolbar == null:
		return
	_select(null)
	EditorInterface.edit_node(null)
	await _frames(2)
	check(not toolbar.visible, "hidden while no FormationController is selected")
	_select(squad)
	EditorInterface.edit_node(squad)
	await _frames(2)
	check(toolbar.visible, "shown while one is selected")
	var edit: Button = toolbar.get_node("EditFormation")
	var mirror: Button = toolbar.get_node("Mirror")
	var snap: Button = toolbar.get_node("Snap")
	var grid: SpinBox = toolbar.get_node("GridStep")
	var save: Button = toolbar.get_node("Save")
	check(edit.toggle_mode and not edit.button_pressed, "Edit formation is a toggle, off")
	edit.button_pressed = true
	check(editor.is_editing() and editor.get_controller() == squad, "pressing Edit formation edits the selected squad")
	var start := editor.get_points()
	var history := _history(squad)

	# Mirror: the right arm deleted, the Mirror button brings it back as one undo step.
	grid.value = 0.0
	check(editor.grid == 0.0, "the grid box set to 0 turns snapping off", 0.0, editor.grid)
	editor.delete_point(4)
	editor.delete_point(2)
	var half := editor.get_points()
	var at := history.get_current_action()
	mirror.emit_signal("pressed")
	var mirrored := editor.get_points()
	check(mirrored.size() == start.size(), "Mirror adds the two missing points", start.size(), mirrored.size())
	for p in start:
		var found := false
		for q in mirrored:
			found = found or q.distance_to(p) < 0.0001
		check(found, "mirrored: the wedge's point %s is back" % p)
	check(history.get_current_action() == at + 1, "Mirror is one undo step", at + 1, history.get_current_action())
	history.undo()
	check(_points_equal(editor.get_points(), half), "one undo takes both mirrored points away")
	history.redo()
	check(_points_equal(editor.get_points(), mirrored), "redo mirrors again")

	# The grid box sets the step; Snap puts every point on it as one undo step.
	grid.value = 0.5
	check(is_equal_approx(editor.grid, 0.5), "the grid box sets the grid step", 0.5, editor.grid)
	at = history.get_current_action()
	snap.emit_signal("pressed")
	var on_grid := true
	for p in editor.get_points():
		on_grid = on_grid and is_equal_approx(p.x / 0.5, roundf(p.x / 0.5)) and is_equal_approx(p.y / 0.5, roundf(p.y / 0.5))
	check(on_grid, "Snap puts every point on the 0.5 m grid", true, editor.get_points())
	check(not _points_equal(editor.get_points(), mirrored), "and the wedge's points moved")
	check(history.get_current_action() == at + 1, "Snap is one undo step", at + 1, history.get_current_action())
	var snapped := editor.get_points()
	history.undo()
	check(_points_equal(editor.get_points(), mirrored), "one undo un-snaps them")
	history.redo()
	check(_points_equal(editor.get_points(), snapped), "redo snaps them again")

	# Save…: the dialog opens on the controller's formations folder; choosing a file writes it, and
	# the controller re-reads its folder and lays its slots on the saved points.
	save.emit_signal("pressed")
	var dialog := EditorInterface.get_base_control().find_child("EntwineSaveFormationDialog", true, false) as EditorFileDialog
	check(dialog != null and dialog.visible, "Save… opens the save dialog")
	if dialog == null:
		return
	var formations_file := squad.formations_dir.trim_suffix("/") + "/custom.ron"
	check(dialog.current_path == formations_file, "on custom.ron in the controller's formations folder",
			formations_file, dialog.current_path)
	dialog.hide()
	# The same with a formations folder in user://, which the test then reads.
	var dir := "user://entwine_editor_test"
	DirAccess.make_dir_recursive_absolute(dir)
	var old_dir := squad.formations_dir
	squad.formations_dir = dir
	edit.button_pressed = false
	edit.button_pressed = true
	editor.set_points(squad, snapped)
	save.emit_signal("pressed")
	check(dialog.visible and dialog.current_path == dir + "/custom.ron", "a user:// folder's dialog opens there",
			dir + "/custom.ron", dialog.current_path)
	dialog.hide()
	var path := dir + "/toolbar.ron"
	dialog.emit_signal("file_selected", path)
	check(FileAccess.file_exists(path), "choosing a file in the dialog writes it")
	check(FileAccess.get_file_as_string(path).contains("Custom"), "as custom points")
	check(squad.get_formation_names().has("toolbar"), "the controller re-read its folder: it knows 'toolbar'")
	squad.formation = "toolbar"
	squad.reload_formations()
	await _frames(2)
	check(squad.get_slot_count() == snapped.size(), "the squad seats its five agents in it", snapped.size(), squad.get_slot_count())
	for i in squad.get_slot_count():
		var slot := squad.to_local(squad.get_slot_target(i))
		check_near(Vector2(slot.x, slot.z), snapped[i], 0.0001, "slot %d is the saved point %d" % [i, i])
	edit.button_pressed = false
	check(not editor.is_editing(), "releasing Edit formation stops editing")
	squad.formation = "wedge"
	squad.formations_dir = old_dir
	squad.reload_formations()
	DirAccess.remove_absolute(path)
	_select(null)


func test_every_handle_drag_is_one_undo_step_that_undo_restores() -> void:
	# Each handle dragged by the same offset: the property it edits changes, as one step of the
	# scene's history; one undo puts the value back exactly, redo gives the dragged one again.
	var offset := Vector3(-0.07, 0.23, -0.11)
	var handles := 0
	for path in ["Arm/EntwineLimbIK", "Rope", "Bridge", "Toucher/EnvTouch", "Leader", "Holder"]:
		var node: Node3D = _root.get_node(path)
		var h: PackedVector3Array = _gizmos._get_handle_positions(node)
		for id in h.size():
			var object: Object = _gizmos._get_handle_object(node, id)
			var property: String = _gizmos._get_handle_property(node, id)
			var what := "%s handle %d (%s)" % [path, id, property]
			check(object != null and not property.is_empty(), "%s edits a property" % what)
			if object == null:
				continue
			var history := _history(object)
			var before: Variant = object.get(property)
			var at := history.get_current_action()
			check(_gizmos._drag_handle(node, id, h[id] + offset), "%s drags" % what)
			var after: Variant = object.get(property)
			check(after != before, "%s: the drag changes %s" % [what, property], "≠ %s" % [before], after)
			check(history.get_current_action() == at + 1, "%s: one undo step" % what, at + 1, history.get_current_action())
			history.undo()
			check(object.get(property) == before, "%s: one undo restores %s" % [what, property], before, object.get(property))
			history.redo()
			check(object.get(property) == after, "%s: redo drags it again" % what, after, object.get(property))
			history.undo()
			handles += 1
	# EntwineLimbIK: target, pole; Rope: anchor, length; Bridge: and its end anchor; EnvTouch: top, offset,
	# left, front; Leader: follow, preparation; Holder: and a reach sphere per arm.
	check(handles == 2 + 2 + 3 + 4 + 2 + 4, "every handle was dragged", 17, handles)


func test_reach_spheres_and_side_faces_have_handles() -> void:
	var holder: Node3D = _root.get_node("Holder")
	var component: Node = holder.get_node("HoldHandComponent")
	var skeleton: Skeleton3D = holder.get_skeleton()
	var h: PackedVector3Array = _gizmos._get_handle_positions(holder)
	check(h.size() == 4, "follow, preparation and a reach handle per arm", 4, h.size())
	var sides := [["LeftUpperArm", "LeftLowerArm", "LeftHand"], ["RightUpperArm", "RightLowerArm", "RightHand"]]
	for s in 2:
		var bones: Array = sides[s]
		var at := func(name: String) -> Vector3: return skeleton.get_bone_global_rest(skeleton.find_bone(name)).origin
		var arm: float = at.call(bones[0]).distance_to(at.call(bones[1])) + at.call(bones[1]).distance_to(at.call(bones[2]))
		var shoulder := skeleton.global_transform * skeleton.get_bone_global_pose(skeleton.find_bone(bones[0])).origin
		check_near(h[2 + s].distance_to(shoulder), arm - 0.02 * arm / 0.54, 0.0001,
				"the %s reach handle is on the sphere of the arm less the margin" % bones[0])
		var outward := -1.0 if s == 0 else 1.0
		check((h[2 + s].x - shoulder.x) * outward > 0.0, "the %s handle is on the outer side" % bones[0])
		check(_gizmos._get_handle_property(holder, 2 + s) == "reach_margin", "it edits reach_margin")
		# 5 cm toward the shoulder: the margin grows by 5 cm of the 0.54 m reference arm.
		check(_gizmos._drag_handle(holder, 2 + s, h[2 + s] + (shoulder - h[2 + s]).normalized() * 0.05), "the reach handle drags")
		check_near(component.get("reach_margin"), 0.02 + 0.05 * 0.54 / arm, 0.0001, "reach_margin follows the radius")
		_undo(component)
		check_near(component.get("reach_margin"), 0.02, 0.0001, "undo restores reach_margin")

	var touch: Node3D = _root.get_node("Toucher/EnvTouch")
	h = _gizmos._get_handle_positions(touch)
	check(h.size() == 4, "the detection box has top, offset, left and front handles", 4, h.size())
	var box_centre := Vector3(2.2, 0.875 + 0.4375, -1.2 - 0.875)
	check_near(h[2], box_centre + Vector3(-0.875, 0, 0), 0.0001, "the left face handle")
	check_near(h[3], box_centre + Vector3(0, 0, -0.875), 0.0001, "the front face handle")
	check(_gizmos._drag_handle(touch, 2, h[2] + Vector3(-0.1, 0.3, 0.2)), "the left face drags")
	check_near(touch.get("character_height"), 1.95, 0.0001, "the left face 0.1 m out: a 0.2 m wider box (it is centred)")
	check_near(_gizmos._get_handle_positions(touch)[2].x, h[2].x - 0.1, 0.0001, "the left face follows the mouse")
	_undo(touch)
	check_near(touch.get("character_height"), 0.0, 0.0001, "undo restores character_height")
	check(_gizmos._drag_handle(touch, 3, h[3] + Vector3(0, 0, -0.1)), "the front face drags")
	check_near(touch.get("character_height"), 1.85, 0.0001, "the front face 0.1 m out: 0.1 m more (the box grows forward)")
	check_near(_gizmos._get_handle_positions(touch)[3].z, h[3].z - 0.1, 0.0001, "the front face follows the mouse")
	_undo(touch)
	check_near(touch.get("character_height"), 0.0, 0.0001, "undo restores character_height")


func test_nothing_computed_in_the_editor_is_saved() -> void:
	await _physics_frames(10)
	var packed := PackedScene.new()
	check(packed.pack(_root) == OK, "the edited scene packs")
	var saved := packed.get_state()
	var original := (load(SCENE) as PackedScene).get_state()
	check(saved.get_node_count() == original.get_node_count(),
			"no preview node (rope tubes, slot drawings) is saved", original.get_node_count(), saved.get_node_count())
	for i in saved.get_node_count():
		if saved.get_node_name(i) != &"Arm":
			continue
		for p in saved.get_node_property_count(i):
			if saved.get_node_property_name(i, p) == &"bones/0/rotation":
				check(saved.get_node_property_value(i, p) == Quaternion(1, 0, 0, 0),
						"the arm's saved pose is its own, not the IK's", Quaternion(1, 0, 0, 0), saved.get_node_property_value(i, p))
