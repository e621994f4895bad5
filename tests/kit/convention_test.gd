# timeout: 60
extends EntwineTest
## Every Entwine class, read through ClassDB as a script and the editor see it, follows Godot's
## conventions: helper classes carry the Entwine prefix, bool properties read through is_/has_/can_
## getters, node paths are named <role>_node, angles shown in degrees are stored in radians, mode-like
## ints are enums, no public method is an engine step, a callback, a peer call or a test hook, no
## get_ method returns a bool, and signals say what happened.

## The four headline nodes keep their own names; every other class starts with this.
const HEADLINE := ["HoldHandComponent", "RopeSimulation", "EnvironmentInteractionStateMachine", "FormationController"]
const PREFIX := "Entwine"
## A bool getter starts with one of these.
const BOOL_GETTER := ["is_", "has_", "can_", "are_"]
## An int property whose name ends so picks one of a set: it must be an enum.
const MODE_WORDS := ["kind", "mode", "source", "limb", "fit", "preview", "facing", "side", "state", "phase", "role"]
## Names of engine steps, engine and peer callbacks, and test counters: never public.
const INTERNAL_NAMES := ["^on_", "^advance", "^refresh_mesh", "^flush", "^step$", "^tick", "^ping$", "^pong$", "^submit$", "^replay$", "^refused$", "_frame$", "^net_", "_upload_count$", "_query_count$", "^get_profile$", "^drag_handle$", "^get_handle_"]
## The last word of a signal: past tense (…ed) or one of these.
const SIGNAL_ENDINGS := ["cut", "torn", "lost", "begun", "shown", "withdrawn"]


## The classes the extension registered.
func _classes() -> Array[String]:
	var out: Array[String] = []
	for c in ClassDB.get_class_list():
		var api := ClassDB.class_get_api_type(c)
		if api == ClassDB.API_EXTENSION or api == ClassDB.API_EDITOR_EXTENSION:
			out.append(c)
	out.sort()
	return out


## The class's own properties, without groups and categories.
func _properties(c: String) -> Array[Dictionary]:
	var out: Array[Dictionary] = []
	for p in ClassDB.class_get_property_list(c, true):
		var usage: int = p["usage"]
		if usage & (PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP | PROPERTY_USAGE_CATEGORY):
			continue
		out.append(p)
	return out


## Fails the check named `what` with the list of offenders, or passes it.
func _none(offenders: Array, what: String) -> void:
	check(offenders.is_empty(), what, "none", ", ".join(offenders))


func test_the_extension_registers_its_classes() -> void:
	var classes := _classes()
	for c in HEADLINE + ["EntwineLimbIK", "EntwineHoldHandRoom", "EntwineNetClock", "EntwineSoldierBearing", "EntwineRopeBoneChain"]:
		check(c in classes, "%s is registered" % c)
	print("convention: %d classes checked: %s" % [classes.size(), ", ".join(classes)])


func test_class_names_cannot_collide() -> void:
	var bad: Array[String] = []
	for c in _classes():
		if not (c in HEADLINE or c.begins_with(PREFIX)):
			bad.append(c)
	_none(bad, "every class but the four headline nodes starts with '%s'" % PREFIX)


func test_bool_properties_read_through_is_getters() -> void:
	var bad: Array[String] = []
	var seen := 0
	for c in _classes():
		for p in _properties(c):
			if p["type"] != TYPE_BOOL:
				continue
			seen += 1
			var getter := str(ClassDB.class_get_property_getter(c, p["name"]))
			if not BOOL_GETTER.any(func(pre: String) -> bool: return getter.begins_with(pre)):
				bad.append("%s.%s (getter %s)" % [c, p["name"], getter])
	check(seen > 20, "bool properties were found", "> 20", seen)
	_none(bad, "every bool property's getter starts with is_/has_/can_/are_")


func test_node_paths_are_named_role_node() -> void:
	var bad: Array[String] = []
	for c in _classes():
		for p in _properties(c):
			if p["type"] == TYPE_NODE_PATH and not str(p["name"]).ends_with("_node"):
				bad.append("%s.%s" % [c, p["name"]])
	_none(bad, "every NodePath property is named <role>_node")


func test_angles_shown_in_degrees_are_stored_in_radians() -> void:
	var bad: Array[String] = []
	var angles := 0
	for c in _classes():
		for p in _properties(c):
			var hint_string := str(p["hint_string"])
			if p["hint"] != PROPERTY_HINT_RANGE or not hint_string.contains("°"):
				continue
			angles += 1
			if not hint_string.contains("radians_as_degrees"):
				bad.append("%s.%s (%s)" % [c, p["name"], hint_string])
	check(angles >= 10, "angle properties were found", ">= 10", angles)
	_none(bad, "every property shown in degrees is stored in radians (radians_as_degrees)")


func test_radians_read_back_as_set() -> void:
	# A script sets radians and the node keeps them: no hidden degree conversion on the way.
	var bearing := EntwineSoldierBearing.new()
	bearing.yaw_limit = deg_to_rad(45.0)
	check_near(bearing.yaw_limit, deg_to_rad(45.0), 1e-6, "yaw_limit keeps the radians it was given")
	var fresh := EntwineSoldierBearing.new()
	check_near(fresh.turn_speed, deg_to_rad(180.0), 1e-5, "turn_speed's default is 180 °/s in rad/s")
	fresh.free()
	bearing.free()
	var squad := FormationController.new()
	check_near(squad.heading_tolerance, deg_to_rad(2.0), 1e-5, "heading_tolerance's default is 2° in radians")
	check_near(squad.contract_heading, deg_to_rad(3.0), 1e-5, "contract_heading's default is 3° in radians")
	squad.free()
	var touch := EnvironmentInteractionStateMachine.new()
	check_near(touch.rise_rotation_speed, deg_to_rad(1000.0), 1e-4, "rise_rotation_speed's default is 1000 °/s in rad/s")
	touch.free()


func test_mode_like_ints_are_enums() -> void:
	var bad: Array[String] = []
	for c in _classes():
		for p in _properties(c):
			if p["type"] != TYPE_INT:
				continue
			var words := str(p["name"]).split("_")
			if words[words.size() - 1] in MODE_WORDS and p["hint"] != PROPERTY_HINT_ENUM:
				bad.append("%s.%s" % [c, p["name"]])
	_none(bad, "every int property that picks a mode is an enum")


func test_no_public_method_is_an_engine_step_callback_or_hook() -> void:
	var bad: Array[String] = []
	var methods := 0
	var patterns: Array[RegEx] = []
	for p in INTERNAL_NAMES:
		patterns.append(RegEx.create_from_string(p))
	for c in _classes():
		for m in ClassDB.class_get_method_list(c, true):
			var name := str(m["name"])
			if name.begins_with("_"):
				continue
			methods += 1
			for re in patterns:
				if re.search(name) != null:
					bad.append("%s.%s" % [c, name])
					break
	check(methods > 150, "public methods were found", "> 150", methods)
	_none(bad, "no public method is an engine step, a callback, a peer call or a test hook")


func test_getters_of_bools_are_not_named_get() -> void:
	var bad: Array[String] = []
	for c in _classes():
		for m in ClassDB.class_get_method_list(c, true):
			var name := str(m["name"])
			if name.begins_with("get_") and (m["return"] as Dictionary)["type"] == TYPE_BOOL:
				bad.append("%s.%s" % [c, name])
	_none(bad, "no get_ method returns a bool")


func test_signals_say_what_happened() -> void:
	var bad: Array[String] = []
	var count := 0
	for c in _classes():
		for s in ClassDB.class_get_signal_list(c, true):
			count += 1
			var words := str(s["name"]).split("_")
			var last := words[words.size() - 1]
			if not (last.ends_with("ed") or last in SIGNAL_ENDINGS):
				bad.append("%s.%s" % [c, s["name"]])
	check(count >= 30, "signals were found", ">= 30", count)
	_none(bad, "every signal is named in the past tense")


func test_the_inspector_hides_what_does_not_apply() -> void:
	var ik := EntwineLimbIK.new()
	check(_shown(ik, "pole_direction"), "a LimbIK without a pole node shows pole_direction")
	ik.pole_node = ^"Pole"
	check(not _shown(ik, "pole_direction"), "with a pole node, pole_direction is hidden")
	ik.free()
	var squad := FormationController.new()
	check(not _shown(squad, "internal_agent_count"), "a squad of child nodes hides the internal agent count")
	squad.agent_source = 1  # internal agents
	check(_shown(squad, "internal_agent_count") and not _shown(squad, "move_bodies"), "internal agents show their count and hide move_bodies")
	check(not _shown(squad, "keyframe_rate"), "an offline squad hides its network settings")
	squad.networked = true
	check(_shown(squad, "keyframe_rate"), "a networked squad shows them")
	squad.free()
	var rope := RopeSimulation.new()
	check(not _shown(rope, "end_offset"), "a rope with no end node hides end_offset")
	rope.tube_enabled = false
	check(not _shown(rope, "tube_sides"), "a rope with no tube hides its sides")
	rope.free()
	var shape := EntwineFormationShape.new()
	shape.kind = 5  # wedge
	check(_shown(shape, "wedge_angle") and not _shown(shape, "radius"), "a wedge shows its angle, not an arc's radius")


## Returns whether the inspector shows `property` of `object`.
func _shown(object: Object, property: String) -> bool:
	for p in object.get_property_list():
		if p["name"] == property:
			return (p["usage"] & PROPERTY_USAGE_EDITOR) != 0
	return false


## Each guide's parameter table (printed from the core's tables) and the class it describes.
const GUIDE_TABLES := {
	"formation": "FormationController",
	"formation-shape": "EntwineFormationShape",
	"soldier-bearing": "EntwineSoldierBearing",
	"environment-touch": "EnvironmentInteractionStateMachine",
	"hold-hand": "HoldHandComponent",
	"rope": "RopeSimulation",
}


## The rows of every `<!-- params: NAME -->` table in the guides: {name: [[property, unit, range, default], …]}.
func _guide_tables() -> Dictionary:
	var out := {}
	var docs := ProjectSettings.globalize_path("res://").path_join("../docs")
	for file in DirAccess.get_files_at(docs):
		if not file.ends_with(".md"):
			continue
		var name := ""
		for line in FileAccess.get_file_as_string(docs.path_join(file)).split("\n"):
			if line.begins_with("<!-- params: "):
				name = line.trim_prefix("<!-- params: ").trim_suffix(" -->")
				out[name] = []
			elif line.begins_with("<!-- /params"):
				name = ""
			elif name != "" and line.begins_with("| `"):
				var cells := line.split("|")
				out[name].append([cells[1].strip_edges().trim_prefix("`").trim_suffix("`"), cells[2].strip_edges(),
					cells[3].strip_edges(), cells[4].strip_edges()])
	return out


## The range hint of `property` on class `c`: [min, max, flags (PackedStringArray), suffix], or [] without one.
func _range_hint(c: String, property: String) -> Array:
	for p in ClassDB.class_get_property_list(c, true):
		if p["name"] != property or p["hint"] != PROPERTY_HINT_RANGE:
			continue
		var parts := str(p["hint_string"]).split(",")
		var suffix := ""
		var flags := PackedStringArray()
		for part in parts.slice(2):
			if part.begins_with("suffix:"):
				suffix = part.trim_prefix("suffix:")
			else:
				flags.append(part)
		return [float(parts[0]), float(parts[1]), flags, suffix]
	return []


func test_the_inspector_and_the_guides_show_the_same_ranges_units_and_defaults() -> void:
	var tables := _guide_tables()
	var bad: Array[String] = []
	var rows := 0
	for name in GUIDE_TABLES:
		check(tables.has(name), "the guides have the table '%s'" % name)
		var c: String = GUIDE_TABLES[name]
		var fresh: Object = ClassDB.instantiate(c)
		for row in tables.get(name, []):
			rows += 1
			var property: String = row[0]
			var hint := _range_hint(c, property)
			if hint.is_empty():
				if not (property == "ground_height" and c == "RopeSimulation"):
					bad.append("%s.%s has no range hint" % [c, property])
				continue
			var flags: PackedStringArray = hint[2]
			var shown := float(fresh.get(property))
			if "radians_as_degrees" in flags:
				shown = rad_to_deg(shown)
			var range_text: String = row[2]
			var lo := float(range_text.trim_prefix("≥ ").split(" – ")[0])
			if not is_equal_approx(lo, hint[0]):
				bad.append("%s.%s: minimum %s in the guide, %s in the inspector" % [c, property, lo, hint[0]])
			if range_text.contains(" – "):
				var hi := float(range_text.split(" – ")[1])
				if not is_equal_approx(hi, hint[1]) and not (hi > hint[1] and "or_greater" in flags):
					bad.append("%s.%s: maximum %s in the guide, %s in the inspector" % [c, property, hi, hint[1]])
			elif not "or_greater" in flags:
				bad.append("%s.%s: no upper bound in the guide, but the inspector stops at %s" % [c, property, hint[1]])
			if row[1] != "" and row[1] != hint[3]:
				bad.append("%s.%s: unit %s in the guide, suffix %s in the inspector" % [c, property, row[1], hint[3]])
			if absf(shown - float(row[3])) > 1e-4 * maxf(1.0, absf(shown)):
				bad.append("%s.%s: default %s in the guide, %s on a new node" % [c, property, row[3], shown])
		if fresh is Node:
			fresh.free()
	check(rows >= 80, "the guides' tables list the numbers", ">= 80", rows)
	_none(bad, "the inspector's ranges, units and defaults are the guides'")
