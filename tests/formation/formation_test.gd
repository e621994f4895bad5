# timeout: 180
extends EntwineTest
## FormationController through its public API in headless Godot: the contract in every shipped
## formation with latency and noise, re-forming without crossings, child agents, hot reload,
## record/replay, and hostile input.

const FORMATIONS := ["line", "column", "wedge", "circle", "arc", "spiral", "box", "hollow_box"]


func _squad(count := 20) -> FormationController:
	var squad := FormationController.new()
	squad.name = "Squad"
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = count
	return add(squad) as FormationController


## Returns the settled metrics emitted while advancing `seconds` in 60 Hz steps, or {}.
func _advance_until_settled(squad: FormationController, seconds: float) -> Dictionary:
	var got := {}
	var on_settled := func(m: Dictionary) -> void:
		if got.is_empty():
			got.merge(m)
	squad.settled.connect(on_settled)
	var steps := int(seconds * 60.0)
	for i in steps:
		squad._advance(1.0 / 60.0)
		if not got.is_empty():
			break
	squad.settled.disconnect(on_settled)
	return got


func _scatter(squad: FormationController, rng: RandomNumberGenerator, radius: float) -> void:
	for i in squad.get_agent_count():
		var offset := Vector2.from_angle(rng.randf() * TAU) * sqrt(rng.randf()) * radius
		var slot := squad.get_slot_position(i)
		squad.place_agent(i, slot + Vector3(offset.x, 0, offset.y), rng.randf_range(-PI, PI))


func test_built_in_formations_are_known_before_ready() -> void:
	var fresh := FormationController.new()
	for f in FORMATIONS:
		check(f in fresh.get_formation_names(), "a new controller knows '%s'" % f, true, fresh.get_formation_names())
	fresh.free()
	# Under a parent not yet in the tree, the controller is not ready when it is told to form.
	var parent := Node3D.new()
	var squad := FormationController.new()
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 6
	parent.add_child(squad)
	check(squad.form(&"wedge"), "form(&\"wedge\") right after add_child, before ready")
	add(parent)
	check(squad.form(&"column"), "form(&\"column\") right after the parent is added")
	await physics_frames(2)
	check(squad.formation == "column", "the squad keeps the formation it was told", "column", squad.formation)


func test_every_formation_meets_the_contract_with_latency_and_noise() -> void:
	var squad := _squad(20)
	squad.actuation_latency = 0.12
	squad.step_noise = 0.001
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	var names := squad.get_formation_names()
	for f in FORMATIONS:
		check(f in names, "the addon ships formation '%s'" % f, true, names)
	var worst_settle := 0.0
	var worst_spacing := 0.0
	var worst_heading := 0.0
	for f in FORMATIONS:
		check(squad.form(f), "form('%s') accepted" % f)
		squad.snap_to_slots()
		squad._advance(0.3)
		# Random starts: up to 1 m from a slot, any heading; then the command under test.
		_scatter(squad, rng, 1.0)
		squad.form(f)
		var m := _advance_until_settled(squad, 3.0)
		check(not m.is_empty(), "%s: the squad settles" % f)
		if m.is_empty():
			continue
		check(m["settle_time"] <= 1.2, "%s: settled within 1.2 s" % f, "<= 1.2", m["settle_time"])
		check(m["contract_met"], "%s: contract met" % f)
		check(m["spacing_error"] <= 0.05, "%s: spacing error within 5 cm" % f, "<= 0.05", m["spacing_error"])
		check(m["heading_std"] <= deg_to_rad(3.0), "%s: heading std within 3°" % f, "<= 3", rad_to_deg(m["heading_std"]))
		print("contract %s: settle %.3f s, spacing error %.4f m, heading std %.2f°" % [f, m["settle_time"], m["spacing_error"], rad_to_deg(m["heading_std"])])
		worst_settle = maxf(worst_settle, m["settle_time"])
		worst_spacing = maxf(worst_spacing, m["spacing_error"])
		worst_heading = maxf(worst_heading, rad_to_deg(m["heading_std"]))
		# It holds the contract afterwards too.
		squad._advance(0.5)
		check(squad.spacing_error <= 0.05, "%s: still within 5 cm half a second later" % f, "<= 0.05", squad.spacing_error)
	print("contract: worst settle %.3f s, spacing error %.4f m, heading std %.2f° over %d formations (20 agents, 120 ms latency, 1 mm step noise)" % [
		worst_settle, worst_spacing, worst_heading, FORMATIONS.size()])


func test_settles_in_real_physics_frames() -> void:
	var squad := _squad(20)
	var settled: Array[Dictionary] = []
	squad.settled.connect(func(m: Dictionary) -> void: settled.append(m))
	await physics_frames(2)
	check(squad.form("wedge"), "form('wedge')")
	check(await wait_until(func() -> bool: return not settled.is_empty(), 10.0), "settled signal arrives")
	if not settled.is_empty():
		check(settled[0]["formation"] == "wedge", "metrics name the formation", "wedge", settled[0]["formation"])
	check(squad.formation == "wedge", "formation property follows form()", "wedge", squad.formation)
	check(squad.settle_time > 0.0, "settle_time property is set", "> 0", squad.settle_time)


func _segments_cross(a0: Vector3, a1: Vector3, b0: Vector3, b1: Vector3) -> bool:
	var p := Vector2(a0.x, a0.z)
	var r := Vector2(a1.x, a1.z) - p
	var q := Vector2(b0.x, b0.z)
	var s := Vector2(b1.x, b1.z) - q
	var denom := r.cross(s)
	if absf(denom) < 1e-9:
		return false
	var t := (q - p).cross(s) / denom
	var u := (q - p).cross(r) / denom
	return t > 1e-4 and t < 1.0 - 1e-4 and u > 1e-4 and u < 1.0 - 1e-4


func test_ten_switches_without_crossings_or_nan() -> void:
	var squad := _squad(20)
	squad.actuation_latency = 0.12
	squad.step_noise = 0.001
	var sequence := ["column", "line", "wedge", "circle", "box", "spiral", "hollow_box", "arc", "column", "circle"]
	var closest := INF
	for k in sequence.size():
		var starts: Array[Vector3] = []
		for i in 20:
			starts.append(squad.get_agent_position(i))
		check(squad.form(sequence[k]), "switch %d to %s accepted" % [k, sequence[k]])
		var ends: Array[Vector3] = []
		for i in 20:
			ends.append(squad.get_slot_position(i))
		var crossings := 0
		for i in 20:
			for j in i:
				if _segments_cross(starts[i], ends[i], starts[j], ends[j]):
					crossings += 1
		check(crossings == 0, "switch %d: no two planned paths cross" % k, 0, crossings)
		# Some switches are interrupted half way.
		var ticks := 60 if k % 3 == 1 else 150
		var finite := true
		for t in ticks:
			squad._advance(1.0 / 60.0)
			for i in 20:
				var p := squad.get_agent_position(i)
				finite = finite and p.is_finite() and is_finite(squad.get_agent_heading(i))
				for j in i:
					closest = minf(closest, p.distance_to(squad.get_agent_position(j)))
		check(finite, "switch %d: every position and heading stays finite" % k)
	check(closest >= 0.8 * squad.repulsion_radius, "agents never closer than 0.8 r", ">= %s" % (0.8 * squad.repulsion_radius), closest)


func test_drives_character_bodies_by_velocity() -> void:
	var squad := FormationController.new()
	squad.name = "Bodies"
	squad.formation = "column"
	for i in 6:
		var body := CharacterBody3D.new()
		var shape := CollisionShape3D.new()
		var capsule := CapsuleShape3D.new()
		capsule.radius = 0.2
		shape.shape = capsule
		shape.position.y = 0.9
		body.add_child(shape)
		body.position = Vector3(i * 0.7 - 2.0, 0, 3.0)
		squad.add_child(body)
	add(squad)
	await physics_frames(2)
	check(squad.get_agent_count() == 6, "the six bodies are the agents", 6, squad.get_agent_count())
	var moving := false
	for i in 40:
		await physics_frame
		moving = moving or squad.get_agent_velocity(0).length() > 0.1
	check(moving, "the bodies are given velocities")
	check(await wait_until(func() -> bool: return squad.settle_time > 0.0, 10.0), "the bodies settle in their slots")
	for i in 6:
		var body := squad.get_child(i) as CharacterBody3D
		check_near(body.global_position * Vector3(1, 0, 1), squad.get_slot_position(i), 0.06, "body %d in its slot" % i)
	# A plain Node3D child joins later: the squad re-forms with it.
	var marker := Node3D.new()
	marker.position = Vector3(4, 0, 4)
	squad.add_child(marker)
	await physics_frames(3)
	check(squad.get_agent_count() == 7, "a new child joins the squad", 7, squad.get_agent_count())


func test_node3d_children_move_and_march() -> void:
	var squad := FormationController.new()
	squad.name = "Markers"
	for i in 8:
		var n := Node3D.new()
		n.position = Vector3(i, 0, 0)
		squad.add_child(n)
	add(squad)
	await physics_frames(2)
	squad.form("column")
	squad._advance(2.5)
	var before := squad.get_baseline()
	check(before.has("point"), "baseline available")
	squad.march(Vector3(0, 0, -1), 1.4)
	squad._advance(3.0)
	var marched: Vector3 = squad.get_baseline()["point"] - before["point"]
	check(marched.z < -3.0, "the squad marched forward (−Z)", "< -3", marched.z)
	for i in 8:
		check_near(wrapf(squad.get_agent_heading(i), -PI, PI), 0.0, deg_to_rad(3.0), "agent %d faces the march" % i)
	check(squad.halt(), "halt accepted")
	squad._advance(2.0)
	check(squad.get_agent_velocity(0).length() < 0.05, "halted", "< 0.05", squad.get_agent_velocity(0).length())
	check(squad.face(PI / 2), "face accepted")
	squad._advance(1.5)
	for i in 8:
		check_near(wrapf(squad.get_agent_heading(i) - PI / 2, -PI, PI), 0.0, deg_to_rad(3.0), "agent %d faced left" % i)
		var node := squad.get_child(i) as Node3D
		check_near(node.global_position, squad.get_agent_position(i), 0.05, "child %d drawn where the agent is" % i)
	squad.march_to(Vector3(5, 0, 5), 2.0)
	squad._advance(8.0)
	var at: Vector3 = squad.get_baseline()["point"]
	check_near(at * Vector3(1, 0, 1), Vector3(5, 0, 5), 0.3, "marched to the target")


func test_hot_reload_keeps_previous_formation_on_parse_error() -> void:
	expect_warning("formation 'broken'")  # the broken file written below
	var dir := "user://formation_test_dir"
	DirAccess.make_dir_recursive_absolute(dir)
	var path := dir + "/drill.ron"
	_write(path, "(\n    shape: Line,\n    spacing: 1.0,\n)\n")
	var squad := FormationController.new()
	squad.name = "Reload"
	squad.formations_dir = dir
	squad.formation = "drill"
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 5
	add(squad)
	await physics_frames(2)
	check(squad.form("drill") or squad.formation == "drill", "drill formation in use")
	squad._advance(3.0)
	var width := _width(squad)
	check_near(width, 4.0, 0.01, "line of 5 at 1.0 m spacing is 4 m wide")
	var rejected: Array[String] = []
	squad.formation_rejected.connect(func(_n: String, why: String) -> void: rejected.append(why))
	# Broken on line 3, column 14.
	await create_timer(1.1).timeout
	_write(path, "(\n    shape: Line,\n    spacing: ,\n)\n")
	check(await wait_until(func() -> bool: return not rejected.is_empty(), 5.0), "the broken file is reported")
	if not rejected.is_empty():
		check(rejected[0].contains("drill.ron:3:"), "the report names file and line", "drill.ron:3:", rejected[0])
	expect_warning("drill.ron:3:")
	check(logged_count("drill.ron:3:") >= 1, "a warning names file, line and column")
	squad._advance(1.0)
	check_near(_width(squad), 4.0, 0.01, "previous formation kept")
	await create_timer(1.1).timeout
	_write(path, "(shape: Line, spacing: 2.0)")
	check(await wait_until(func() -> bool:
		return absf(_width(squad) - 8.0) < 0.01, 5.0),
		"the fixed file is reloaded and applied")
	DirAccess.remove_absolute(path)


func test_hot_reload_reads_a_file_new_to_the_folder() -> void:
	expect_warning("fresh.ron:1:")  # the broken version written first
	var dir := "user://formation_new_file_dir"
	DirAccess.make_dir_recursive_absolute(dir)
	var path := dir + "/fresh.ron"
	DirAccess.remove_absolute(path)
	var squad := FormationController.new()
	squad.name = "Fresh"
	squad.formations_dir = dir
	squad.hot_reload = true
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 3
	add(squad)
	await physics_frames(2)
	check(not squad.get_formation_names().has("fresh"), "no formation 'fresh' before its file")
	var rejected: Array[String] = []
	squad.formation_rejected.connect(func(_n: String, why: String) -> void: rejected.append(why))
	_write(path, "(shape: Custom(points: [(0.0, 0.0), (2.0, ]))")
	check(await wait_until(func() -> bool: return not rejected.is_empty(), 3.0), "a broken new file is reported")
	await create_timer(1.2).timeout
	check(rejected.size() == 1, "once while it is unchanged", 1, rejected.size())
	_write(path, "(shape: Custom(points: [(0.0, 0.0), (2.0, 0.0), (1.0, 3.0)]), offset: (1.0, 1.0))")
	check(await wait_until(func() -> bool: return squad.get_formation_names().has("fresh"), 3.0),
			"hot reload reads the file once it parses")
	check(squad.form("fresh"), "and the squad forms it")
	var slots: Array[Vector3] = []
	for i in 3:
		slots.append(squad.get_slot_target(i))
	for p in [Vector3(0, 0, 0), Vector3(2, 0, 0), Vector3(1, 0, 3)]:
		var found := false
		for s in slots:
			found = found or s.distance_to(p) < 0.001
		check(found, "a slot on %s (the points, centred on the offset at their centroid)" % p)
	DirAccess.remove_absolute(path)


## Returns the largest distance between two slots (a line's length).
func _width(squad: FormationController) -> float:
	var w := 0.0
	for i in squad.get_agent_count():
		for j in i:
			w = maxf(w, squad.get_slot_position(i).distance_to(squad.get_slot_position(j)))
	return w


func _write(path: String, text: String) -> void:
	var f := FileAccess.open(path, FileAccess.WRITE)
	f.store_string(text)
	f.close()


func test_record_replay_and_export() -> void:
	var squad := _squad(4)
	squad.recording = true
	squad.form("line")
	squad._advance(20.0)
	check(squad.get_recorded_frames() == 1000, "the ring keeps 1,000 frames", 1000, squad.get_recorded_frames())
	var old: Dictionary = squad.get_recorded_sample(0, 2)
	check(old.has("position") and old.has("state"), "a recorded sample has position and state")
	check(squad.replay_seek(10), "seek to frame 10")
	check(squad.is_replaying(), "replaying")
	check(not squad.replay_seek(1000), "seeking past the end is refused")
	squad.replay_stop()
	check(not squad.is_replaying(), "replay stopped")
	var path := "user://formation_recording.csv"
	check(squad.export_recording(path), "export written")
	var lines := FileAccess.get_file_as_string(path).strip_edges().split("\n")
	check(lines.size() == 1 + 1000 * 4, "one header and one line per agent per frame", 4001, lines.size())
	check(lines[0] == "tick,agent,x,z,heading,speed,state", "CSV header", "tick,agent,x,z,heading,speed,state", lines[0])
	DirAccess.remove_absolute(path)


func test_hostile_input_is_rejected_and_state_kept() -> void:
	# Each hostile formation, command and resource below is refused with a warning, on purpose.
	for text in ["formation 'bad'", "formation 'nan'", "formation 'huge'", "formation 'syntax'",
			"formation 'deep'", "march: direction", "face: angle must be finite",
			"add_formation_resource: no EntwineFormationShape given"]:
		expect_warning(text)
	var squad := _squad(6)
	squad.form("line")
	squad._advance(2.0)
	var slot0 := squad.get_slot_position(0)
	var reasons: Array[String] = []
	squad.formation_rejected.connect(func(_n: String, why: String) -> void: reasons.append(why))
	check(not squad.add_formation("bad", "(shape: Line, spacing: -1.0)"), "negative spacing rejected")
	check(not squad.add_formation("nan", "(shape: Line, spacing: NaN)"), "NaN spacing rejected")
	check(not squad.add_formation("huge", "(shape: Column(files: 4000000000))"), "huge count rejected")
	check(not squad.add_formation("syntax", "(\n  shape: Line,\n  spacing 1.0\n)"), "syntax error rejected")
	check(not squad.add_formation("deep", "[".repeat(10000)), "deeply nested input rejected")
	check(reasons.size() == 5, "each rejection reported", 5, reasons.size())
	if reasons.size() == 5:
		check(reasons[0].contains("1:") and reasons[0].contains("spacing"), "message names position and field", "1:…spacing", reasons[0])
		check(reasons[3].contains("3:"), "syntax error names line 3", "3:", reasons[3])
	check(not squad.form("no_such_formation"), "unknown formation rejected")
	expect_warning("unknown formation 'no_such_formation'")
	check(logged_count("unknown formation 'no_such_formation'") == 1, "one clear warning for it")
	check(squad.formation == "line", "previous formation kept", "line", squad.formation)
	squad._advance(1.0)
	check_near(squad.get_slot_position(0), slot0, 0.001, "slots unchanged")
	# Duplicate commands while settling.
	var refused: Array[String] = []
	squad.command_rejected.connect(func(c: String, _why: String) -> void: refused.append(c))
	check(squad.form("column"), "form column")
	check(not squad.form("column"), "the same command again while settling is refused")
	check(refused == ["form"], "command_rejected names the command", ["form"], refused)
	check(not squad.march(Vector3(NAN, 0, 0), 1.0), "NaN direction refused")
	check(not squad.march(Vector3.UP, 1.0), "vertical direction refused")
	check(not squad.face(INF), "infinite angle refused")
	# Bad tuning values fall back with one warning each.
	squad.k1 = NAN
	squad.max_speed = -5.0
	squad._advance(0.5)
	squad._advance(0.5)
	expect_warning("k1 must be in")
	check(logged_count("k1 must be in") == 1, "one warning for k1", 1, logged_count("k1 must be in"))
	expect_warning("max_speed must be in")
	check(logged_count("max_speed must be in") == 1, "one warning for max_speed", 1, logged_count("max_speed must be in"))
	for i in 6:
		check(squad.get_agent_position(i).is_finite(), "agent %d finite" % i)
	squad.place_agent(99, Vector3.ZERO, 0.0)
	expect_warning("agent index 99 is out of range")
	check(logged_count("agent index 99 is out of range") == 1, "bad index warned")
	# Zero agents.
	squad.internal_agent_count = 0
	check(squad.form("circle"), "forming an empty squad is harmless")
	squad._advance(0.5)
	check(squad.get_agent_count() == 0, "no agents", 0, squad.get_agent_count())
	check(squad.get_baseline().is_empty(), "no baseline without agents")
	squad.internal_agent_count = 100000
	check(squad.get_agent_count() == 65536, "agent count clamped", 65536, squad.get_agent_count())
	expect_warning("internal_agent_count must be in")
	check(logged_count("internal_agent_count must be in") == 1, "clamp warned")
	squad.internal_agent_count = 0


func test_custom_points_are_kept_for_any_agent_count() -> void:
	# Three points around their centroid (0, 0): 1.5 m deep, so a repeated rank is 1.5 + 1.0 m back.
	var text := "(shape: Custom(points: [(0.0, -1.0), (-1.5, 0.5), (1.5, 0.5)]), spacing: 1.0)"
	var drawn: Array[Vector3] = [Vector3(0, 0, -1), Vector3(-1.5, 0, 0.5), Vector3(1.5, 0, 0.5)]
	for count in [2, 3, 5]:
		var squad := _squad(count)
		squad.name = "Custom%d" % count
		check(squad.add_formation("tri", text) and squad.form("tri"), "%d agents form three points" % count)
		check(squad.get_slot_count() == count, "a slot per agent", count, squad.get_slot_count())
		var expected: Array[Vector3] = []
		for i in count:
			var copy := floori(i / 3.0)
			expected.append(drawn[i % 3] + Vector3(0, 0, 2.5 * copy))
		for i in count:
			check_near(squad.get_slot_target(i), expected[i], 0.0001,
					"%d agents: slot %d (%s)" % [count, i, "a drawn point, not moved" if i < 3 else "behind the points"])
		if count > 3:
			expect_warning("custom formation 'tri' has 3 points for 5 agents")
		squad._advance(0.5)
		squad._advance(0.5)
		check(logged_count("custom formation 'tri' has 3 points for %d agents" % count) == (1 if count > 3 else 0),
				"%d agents: one warning naming the formation and the counts only when agents outnumber points" % count)


func test_dropped_agents_leave_the_contract() -> void:
	var squad := _squad(20)
	squad.form("line")
	squad._advance(1.0)
	var before: float = squad.get_baseline()["angle"]
	for i in [0, 18, 19]:
		squad.set_agent_active(i, false)
	var m := _advance_until_settled(squad, 3.0)
	check(not m.is_empty() and m["active"] == 17, "17 agents settle", 17, m.get("active", -1))
	var after: float = squad.get_baseline()["angle"]
	var turned := absf(rad_to_deg(angle_difference(before, after)))
	turned = minf(turned, absf(180.0 - turned))
	check(turned < 0.5, "the baseline turned less than 0.5° after dropping 3 edge agents", "< 0.5", turned)
	check(squad.debug_draw == false, "debug drawing off by default")
	squad.debug_draw = true
	await frames(2)
	squad.debug_draw = false


func test_formation_shape_resource() -> void:
	# A probe controller outside the tree checks an invalid resource's text below.
	expect_warning("formation 'probe'")
	var squad := _squad(8)
	var shape := EntwineFormationShape.new()
	shape.kind = 1  # Column
	shape.files = 4
	shape.spacing = 1.5
	check(shape.validate() == "", "a valid resource validates", "", shape.validate())
	check(squad.add_formation_resource("two_ranks", shape), "the resource registers")
	check(squad.form("two_ranks"), "and forms")
	squad._advance(3.0)
	check_near(_width(squad), sqrt(4.5 * 4.5 + 1.5 * 1.5), 0.01, "4 files × 2 ranks at 1.5 m")
	shape.spacing = -2.0
	check(shape.validate().contains("spacing"), "a negative spacing is named", "spacing", shape.validate())
	check(not squad.add_formation_resource("broken", shape), "an invalid resource is refused")
	check(not squad.add_formation_resource("none", null), "a missing resource is refused")
	check(FormationDefProbe.parses(shape.to_ron()) == false, "to_ron round-trips the invalid value")


class FormationDefProbe:
	static func parses(text: String) -> bool:
		var probe := FormationController.new()
		var ok := probe.add_formation("probe", text)
		probe.free()
		return ok


func test_dropping_a_peer_re_forms_once() -> void:
	var squad := _squad(300)
	squad.form("column")
	squad.snap_to_slots()
	for i in range(0, 300, 3):
		squad.set_agent_peer(i, 7)
	var before: int = squad._get_relayout_count()
	check(squad.drop_peer(7) == 100, "drop_peer takes the peer's 100 agents out")
	check(squad._get_relayout_count() == before + 1, "one re-form for the whole peer", before + 1, squad._get_relayout_count())
	squad._advance(1.0 / 60.0)
	check(squad.get_metrics()["active"] == 200, "200 agents stay", 200, squad.get_metrics()["active"])
	check(squad.get_agent_slot(0) == -1 and squad.get_agent_slot(1) >= 0, "dropped agents hold no slot")
	var back := PackedInt32Array()
	for i in range(0, 300, 3):
		back.append(i)
	check(squad.set_agents_active(back, true) == 100, "set_agents_active brings 100 back")
	check(squad._get_relayout_count() == before + 2, "again in one re-form", before + 2, squad._get_relayout_count())
	# Getters for testers: slot targets and headings, heading errors, neighbouring pairs.
	check(squad.get_slot_count() == 300, "300 slots", 300, squad.get_slot_count())
	var s := squad.get_agent_slot(5)
	check_near(squad.get_slot_target(s), squad.get_slot_position(5), 1e-4, "slot target = the agent's slot position")
	var err: float = squad.get_agent_heading_error(5)
	check(absf(angle_difference(squad.get_slot_heading(s) + err, squad.get_agent_heading(5))) < 1e-3, "heading error = heading − slot heading")
	var pairs := squad.get_neighbour_pairs()
	check(pairs.size() >= 2 * 299 and pairs.size() % 2 == 0, "neighbouring pairs cover the column", ">= 598", pairs.size())
	check(squad.get_pair_spacing_error() >= 0.0, "pair spacing error reported")
