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


# ---------------------------------------------------------------------------------------------

func test_rope_hangs_and_follows_its_anchor() -> void:
	var rope: RopeSimulation = _root.get_node("Rope")
	var anchor: Node3D = _root.get_node("RopeAnchor")
	_select(null)
	await _physics_frames(150)
	check(rope.is_editor_previewing(), "a rope with editor_preview = Always simulates unselected")
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
	check(not rope.is_editor_previewing(), "an unselected rope does not simulate")
	var before := rope.get_points()
	(_root.get_node("RopeAnchor") as Node3D).position += Vector3(0.3, 0, 0)
	await _physics_frames(10)
	check(rope.get_points() == before, "an unselected rope's points stay still")
	_select(rope)
	await _frames(3)
	check(rope.is_editor_previewing(), "a selected rope simulates")
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
	check(squad.has_editor_preview(), "the squad draws its slots in the editor")
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
	var limb: Node3D = _root.get_node("Arm/LimbIK")
	# The rope's end handle rides on the rope: let it settle from the tests before.
	await _physics_frames(300)
	for path in ["Arm/LimbIK", "Rope", "Bridge", "Toucher/EnvTouch", "Leader"]:
		var node: Node3D = _root.get_node(path)
		var ours := false
		for g in node.get_gizmos():
			ours = ours or (g is EditorNode3DGizmo and (g as EditorNode3DGizmo).get_plugin() == _gizmos)
		check(ours, "%s has Entwine's gizmo" % path)
	var h: PackedVector3Array = _gizmos.get_handle_positions(limb)
	check(h.size() == 2, "LimbIK has a target and a pole handle", 2, h.size())
	check_near(h[0], (_root.get_node("ArmTarget") as Node3D).global_position, 0.0001, "the target handle is on the target")
	# Pole: half the arm's reach (0.3 + 0.3 m) from the shoulder along pole_direction (+Z).
	check_near(h[1], Vector3(-1.2, 1.5, 0.3), 0.001, "the pole handle")
	var rope: Node3D = _root.get_node("Rope")
	h = _gizmos.get_handle_positions(rope)
	check_near(h[0], (_root.get_node("RopeAnchor") as Node3D).global_position, 0.0001, "the rope's anchor handle")
	check_near(h[1], (_root.get_node("RopeAnchor") as Node3D).global_position + Vector3(0, -1.65, 0), 0.03,
			"the rope's length handle hangs 11 × 0.15 m below")
	h = _gizmos.get_handle_positions(_root.get_node("Bridge"))
	check(h.size() == 3, "a pinned rope has a third handle, its end anchor", 3, h.size())
	check_near(h[2], (_root.get_node("BridgeEnd") as Node3D).global_position, 0.0001, "the end anchor handle is on BridgeEnd")
	check(_gizmos.get_handle_positions(rope).size() == 2, "a free rope has no end anchor handle")
	h = _gizmos.get_handle_positions(_root.get_node("Toucher/EnvTouch"))
	# The seed's box for 1.75 m: side 1.75, centre a quarter up from the waist and half forward.
	var box_centre := Vector3(2.2, 0.875 + 0.4375, -1.2 - 0.875)
	check_near(h[0], box_centre + Vector3(0, 0.875, 0), 0.0001, "the detection box's top handle")
	check_near(h[1], box_centre + Vector3(0.875 - 0.05, 0, 0), 0.0001, "the surface offset handle (0.05 m inside the side face)")
	h = _gizmos.get_handle_positions(_root.get_node("Leader"))
	var leader := (_root.get_node("Leader") as Node3D).global_position
	check_near(h[0], leader + Vector3(-0.82, 0, 0.17), 0.0001, "the follow offset handle")
	check_near(h[1], leader + Vector3(0, 0, 1), 0.0001, "the preparation offset handle")


func test_dragging_handles_writes_properties_and_undoes() -> void:
	var leader: Node3D = _root.get_node("Leader")
	var component: Node = leader.get_node("HoldHandComponent")
	check(_gizmos.drag_handle(leader, 0, leader.global_position + Vector3(-1.0, 0, 0.5)), "the follow handle drags")
	check_near(component.get("follow_offset"), Vector3(-1.0, 0, 0.5), 0.0001, "follow_offset is where it was dropped")
	_undo(component)
	check_near(component.get("follow_offset"), Vector3(-0.82, 0, 0.17), 0.0001, "undo restores follow_offset")

	var touch: Node3D = _root.get_node("Toucher/EnvTouch")
	var top: Vector3 = _gizmos.get_handle_positions(touch)[0]
	check(_gizmos.drag_handle(touch, 0, top + Vector3(0, 0.1, 0)), "the box handle drags")
	check_near(touch.get("character_height"), 1.95, 0.0001, "the top face 0.1 m up makes the box 0.2 m taller")
	_undo(touch)
	check_near(touch.get("character_height"), 0.0, 0.0001, "undo restores character_height (0: auto)")
	var side: Vector3 = _gizmos.get_handle_positions(touch)[1]
	check(_gizmos.drag_handle(touch, 1, side + Vector3(-0.05, 0, 0)), "the surface offset handle drags")
	check_near(touch.get("surface_offset"), 0.1, 0.0001, "surface_offset follows the handle 5 cm further in")
	_undo(touch)

	var limb: Node3D = _root.get_node("Arm/LimbIK")
	check(_gizmos.drag_handle(limb, 1, Vector3(-1.2, 1.5, 0) + Vector3(0.3, 0, 0)), "the pole handle drags")
	check_near(limb.get("pole_direction"), Vector3(1, 0, 0), 0.0001, "pole_direction points at the handle")
	_undo(limb)
	check_near(limb.get("pole_direction"), Vector3(0, 0, 1), 0.0001, "undo restores pole_direction")

	var rope: Node3D = _root.get_node("Rope")
	var anchor := (_root.get_node("RopeAnchor") as Node3D).global_position
	check(_gizmos.drag_handle(rope, 1, anchor + Vector3(0, -0.9, 0)), "the length handle drags")
	check(rope.get("point_count") == 7, "0.9 m of 0.15 m segments is 7 points", 7, rope.get("point_count"))
	_undo(rope)
	check(rope.get("point_count") == 12, "undo restores point_count", 12, rope.get("point_count"))

	var bridge: Node3D = _root.get_node("Bridge")
	var end := (_root.get_node("BridgeEnd") as Node3D).global_position
	check(_gizmos.drag_handle(bridge, 2, end + Vector3(0, -0.2, 0.1)), "the end anchor handle drags")
	check_near(bridge.get("end_offset"), Vector3(0, -0.2, 0.1), 0.0001, "end_offset is where the end was dropped")
	_undo(bridge)
	check_near(bridge.get("end_offset"), Vector3.ZERO, 0.0001, "undo restores end_offset")


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
