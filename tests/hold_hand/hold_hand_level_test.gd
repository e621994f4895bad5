# timeout: 120
extends EntwineTest
## HoldHandComponent over uneven ground: a pair walks up a 30° ramp and the recipient, moved only by
## the component, finds its own footing (the ground under each spot it is led to) instead of copying
## the initiator's height. Before, the recipient floated 125-139 mm above the slope.

const CHARACTER := preload("res://characters/test_character.tscn")
const SLOPE := deg_to_rad(30.0)
## Where the ramp starts (it rises toward -Z from here) and how long it is along the slope.
const RAMP_START_Z := -1.0
const RAMP_LENGTH := 9.0


## The ground's height at (x, z): the floor, then the ramp.
func _ground(p: Vector3) -> float:
	return maxf(0.0, (RAMP_START_Z - p.z) * tan(SLOPE))


func _ramp(parent: Node3D) -> void:
	var body := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	var thickness := 0.4
	box.size = Vector3(8.0, thickness, RAMP_LENGTH)
	shape.shape = box
	body.add_child(shape)
	# Local +Y turned onto the slope's normal, local -Z up the slope; the top face through the
	# ramp's start line.
	var up_slope := Vector3(0, sin(SLOPE), -cos(SLOPE))
	var normal := Vector3(0, cos(SLOPE), sin(SLOPE))
	body.transform = Transform3D(Basis(Vector3.RIGHT, SLOPE),
		Vector3(0, 0, RAMP_START_Z) + up_slope * RAMP_LENGTH * 0.5 - normal * thickness * 0.5)
	parent.add_child(body)


func test_the_recipient_keeps_its_feet_on_a_ramp() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	_ramp(world)
	var room := EntwineHoldHandRoom.new()
	world.add_child(room)
	var chars: Array[TestCharacter] = []
	var comps: Array[HoldHandComponent] = []
	for i in 2:
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Character%d" % i
		c.position = Vector3(i * 1.5, 0, 0.5)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		c.add_child(comp)
		chars.append(c)
		comps.append(comp)
	await physics_frames(2)
	var a := chars[0]
	var b := chars[1]
	check(comps[0].request(comps[1]), "request() accepted by the room")
	check(comps[1].accept(), "accept() accepted by the room")
	check(await wait_until(func() -> bool:
		return comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE, 2.0), "the pair is active")
	await create_timer(0.5).timeout
	# Up the ramp for 4 s; each character's height above the ground under it, on the slope only.
	a.move_input = Vector3(0, 0, -1)
	var worst := [0.0, 0.0]
	var samples := 0
	var frames := int(4.0 * Engine.physics_ticks_per_second)
	for f in frames:
		await physics_frame
		if b.global_position.z > RAMP_START_Z - 0.5 or a.global_position.z > RAMP_START_Z - 0.5:
			continue
		samples += 1
		for j in 2:
			var c: TestCharacter = chars[j]
			worst[j] = maxf(worst[j], absf(c.global_position.y - _ground(c.global_position)))
	a.move_input = Vector3.ZERO
	print("HOLD_HAND_LEVEL 30° ramp: largest height above the slope over %d frames: initiator %.1f mm, recipient %.1f mm; recipient %.2f m up the slope" % [
		samples, worst[0] * 1000.0, worst[1] * 1000.0, b.global_position.y])
	check(samples > 60, "the pair walked on the slope", "> 60 frames", samples)
	check(b.global_position.y > 1.0, "the recipient climbed the ramp", "> 1 m", b.global_position.y)
	check(worst[1] <= maxf(0.04, worst[0] + 0.01), "the recipient keeps its feet on the slope like the initiator",
		"<= %.1f mm" % (maxf(0.04, worst[0] + 0.01) * 1000.0), worst[1] * 1000.0)
	check(comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE and comps[0].get_hand_weight() > 0.9,
		"the hands stay joined", true, [comps[0].get_phase(), comps[0].get_hand_weight()])
