extends Node
## The install path's scene (`cargo xtask test install`): the main scene of an empty project that
## holds only the addon (`addons/entwine/`, with its library) and the example characters
## (`characters/`), as a new user lays them out from the package. It runs right after that project's
## first headless import, and again as the project's headless debug export.
##
## Every Entwine node is created from GDScript, the way a game's own script would, and each is
## checked to do its job: EntwineLimbIK reaches, a HoldHandComponent pair becomes active in its
## EntwineHoldHandRoom, a RopeSimulation hangs and a EntwineRopeBoneChain follows it, an
## EnvironmentInteractionStateMachine runs, a FormationController forms a wedge right after
## `add_child` (its built-in formations are known at once) with SoldierBearings on its soldiers,
## a EntwineNetClock tells the time and EntwineHumanoidRig.describe finds the bones. Prints
## `INSTALL CHECK OK …` and quits with 0, or `INSTALL CHECK FAILED: …` and quits with 1; the
## harness also fails it on any error or warning in the log.

const CHARACTER := preload("res://characters/test_character.tscn")
## Physics frames each node is given to act.
const SETTLE := 30

var _problems: Array[String] = []
var _passed: Array[String] = []


func _ready() -> void:
	_run.call_deferred()


func _check(ok: bool, what: String) -> void:
	if ok:
		_passed.append(what)
	else:
		_problems.append(what)


func _physics_frames(n: int) -> void:
	for i in n:
		await get_tree().physics_frame


## The world pose of [param bone] as [param sk] shows it, its modifiers applied: read while the
## skeleton finishes its next update.
func _shown_bone(sk: Skeleton3D, bone: int) -> Transform3D:
	var got: Array[Transform3D] = []
	var capture := func() -> void:
		if got.is_empty():
			got.append(sk.global_transform * sk.get_bone_global_pose(bone))
	sk.skeleton_updated.connect(capture)
	for i in 10:
		await get_tree().process_frame
		if not got.is_empty():
			break
	sk.skeleton_updated.disconnect(capture)
	return got[0] if not got.is_empty() else Transform3D(Basis(), Vector3(INF, INF, INF))


func _run() -> void:
	var world := Node3D.new()
	world.name = "World"
	add_child(world)
	_add_floor(world)
	_formation(world)
	_humanoid_rig()
	_net_clock(world)
	await _limb_ik(world)
	await _hold_hand(world)
	await _rope(world)
	await _environment(world)
	await _soldiers(world)
	world.queue_free()
	await get_tree().process_frame
	if _problems.is_empty():
		print("INSTALL CHECK OK %d checks: %s" % [_passed.size(), ", ".join(_passed)])
		get_tree().quit(0)
	else:
		printerr("INSTALL CHECK FAILED: ", "; ".join(_problems))
		get_tree().quit(1)


func _add_floor(world: Node3D) -> void:
	var body := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(60, 1, 60)
	shape.shape = box
	shape.position = Vector3(0, -0.5, 0)
	body.add_child(shape)
	world.add_child(body)


func _character(world: Node3D, at: Vector3) -> TestCharacter:
	var c := CHARACTER.instantiate() as TestCharacter
	c.position = at
	world.add_child(c)
	return c


func _formation(world: Node3D) -> void:
	var squad := FormationController.new()
	squad.agent_source = FormationController.AGENTS_INTERNAL
	squad.internal_agent_count = 8
	var rejected: Array[String] = []
	squad.formation_rejected.connect(func(n: String, why: String) -> void: rejected.append("%s: %s" % [n, why]))
	world.add_child(squad)
	_check(squad.form(&"wedge"), "FormationController.form(&\"wedge\") right after add_child")
	_check(rejected.is_empty(), "no formation rejected %s" % [rejected])
	squad.queue_free()
	var fresh := FormationController.new()
	_check("wedge" in fresh.get_formation_names(), "a new FormationController knows the built-in formations")
	fresh.free()


func _humanoid_rig() -> void:
	var c := CHARACTER.instantiate() as TestCharacter
	var d := EntwineHumanoidRig.describe(c.get_skeleton())
	var bones: Dictionary = d.get("bones", {})
	_check(bones.get("LeftHand", "") == "LeftHand" and bones.get("Head", "") == "Head",
		"EntwineHumanoidRig.describe finds the hands and the head")
	_check(absf(float(d.get("height", 0.0)) - TestCharacter.HEIGHT) < 0.2,
		"EntwineHumanoidRig.describe measures the height (%s)" % d.get("height", 0.0))
	c.free()


func _net_clock(world: Node3D) -> void:
	var clock := EntwineNetClock.new()
	world.add_child(clock)
	var now := Time.get_ticks_usec() * 1e-6
	_check(absf(clock.get_server_time() - now) < 0.05, "EntwineNetClock.get_server_time() without a peer is the local clock")
	clock.queue_free()


func _limb_ik(world: Node3D) -> void:
	var c := _character(world, Vector3(-6, 0, 0))
	c.frozen = true
	var target := Node3D.new()
	target.position = c.position + Vector3(-0.35, 1.2, -0.35)
	world.add_child(target)
	var ik := EntwineLimbIK.new()
	c.get_skeleton().add_child(ik)
	ik.target_node = ik.get_path_to(target)
	await _physics_frames(SETTLE)
	var sk := c.get_skeleton()
	var hand := await _shown_bone(sk, sk.find_bone("LeftHand"))
	_check(hand.origin.distance_to(target.global_position) < 0.05,
		"EntwineLimbIK puts the hand on its target (%.3f m off)" % hand.origin.distance_to(target.global_position))


func _hold_hand(world: Node3D) -> void:
	var room := EntwineHoldHandRoom.new()
	world.add_child(room)
	var comps: Array[HoldHandComponent] = []
	for i in 2:
		var c := _character(world, Vector3(6 + i * 1.2, 0, 0))
		var comp := HoldHandComponent.new()
		c.add_child(comp)
		comps.append(comp)
	await _physics_frames(2)
	_check(comps[0].request(comps[1]), "HoldHandComponent.request() accepted by the EntwineHoldHandRoom")
	_check(comps[1].accept(), "HoldHandComponent.accept() accepted by the EntwineHoldHandRoom")
	var active := false
	for i in 120:
		await get_tree().physics_frame
		if comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE:
			active = true
			break
	_check(active, "the HoldHandComponent pair becomes active")
	comps[0].cancel()


func _rope(world: Node3D) -> void:
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 3, 6)
	world.add_child(anchor)
	var rope := RopeSimulation.new()
	world.add_child(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.segment_length = 0.1
	rope.point_count = 12
	rope.reset_rope()
	var skeleton := Skeleton3D.new()
	anchor.add_child(skeleton)
	for i in 8:
		skeleton.add_bone("Bone%d" % (i + 1))
		if i > 0:
			skeleton.set_bone_parent(i, i - 1)
			skeleton.set_bone_rest(i, Transform3D(Basis(), Vector3(0, -0.1, 0)))
	skeleton.reset_bone_poses()
	var chain := EntwineRopeBoneChain.new()
	skeleton.add_child(chain)
	chain.rope = rope
	chain.root_bone = "Bone1"
	chain.tip_bone = "Bone8"
	await _physics_frames(SETTLE)
	var points := rope.get_points()
	_check(points.size() == 12, "RopeSimulation has its points (%d)" % points.size())
	if points.size() > 1:
		_check(points[points.size() - 1].y < anchor.global_position.y - 0.5, "RopeSimulation hangs below its anchor")
	var tip := await _shown_bone(skeleton, 7)
	var along := INF
	for p in rope.get_points():
		along = minf(along, p.distance_to(tip.origin))
	_check(along < 0.1, "EntwineRopeBoneChain lays its bones along the rope (tip %.3f m off)" % along)


func _environment(world: Node3D) -> void:
	const WALLS := 1 << 4
	var wall := StaticBody3D.new()
	wall.collision_layer = WALLS
	wall.collision_mask = 0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.2, 3.0, 24.0)
	shape.shape = box
	wall.add_child(shape)
	wall.position = Vector3(-11.45, 1.5, -6.0)
	world.add_child(wall)
	var c := _character(world, Vector3(-12, 0, 4))
	var node := EnvironmentInteractionStateMachine.new()
	node.interactable_mask = WALLS
	c.add_child(node)
	var states: Array[int] = []
	node.state_changed.connect(func(_from: int, to: int) -> void: states.append(to))
	c.move_input = Vector3.FORWARD
	node.move_input = Vector3.FORWARD
	for i in 480:
		await get_tree().physics_frame
		if node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH:
			break
	_check(node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH,
		"EnvironmentInteractionStateMachine touches the wall (states %s)" % [states])
	c.move_input = Vector3.ZERO
	node.move_input = Vector3.ZERO


func _soldiers(world: Node3D) -> void:
	var squad := FormationController.new()
	squad.position = Vector3(0, 0, -8)
	for i in 4:
		var s := CHARACTER.instantiate() as TestCharacter
		s.position = Vector3((i % 2) * 1.2, 0, (i / 2) * 1.2)
		s.frozen = true
		s.drive_animation = false
		squad.add_child(s)
	world.add_child(squad)
	_check(squad.form(&"wedge"), "FormationController with soldiers forms a wedge right after add_child")
	await _physics_frames(SETTLE)
	var bearings := squad.find_children("*", "EntwineSoldierBearing", true, false)
	_check(bearings.size() == 4, "each soldier has a EntwineSoldierBearing (%d)" % bearings.size())
	_check(squad.salute(), "the squad salutes through its SoldierBearings")
	await _physics_frames(10)
	squad.end_salute()
