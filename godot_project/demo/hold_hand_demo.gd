extends Node3D
## HoldHandComponent: two characters hold hands; the initiator walks a loop (WASD or arrow keys take
## over when a key is pressed), the recipient is carried along and both hands meet at one point.
## Beside them a pair of Cesium Men (a real glTF humanoid, loaded at run time, no bone set by hand)
## walks the same loop further out, holding hands the same way.

var title := "HoldHandComponent — the partner follows, the hands meet (debug: reach spheres, contact); left: Cesium Man, a real glTF humanoid"

## Radius (m) and angular speed (rad/s) of the walked loop.
const LOOP_RADIUS := 2.5
const LOOP_RATE := 0.35

## The real humanoid beside the test characters (CC BY 4.0, see its LICENSE.md).
const REAL_MODEL := "res://assets/characters/cesium_man/CesiumMan.glb"
## How much further out than the first pair the real pair walks (m).
const REAL_OFFSET := 2.2

var _initiator: TestCharacter
var _recipient: TestCharacter
var _real: TestCharacter
var _camera: Camera3D
var _time := 0.0
var _keyboard := false


func _ready() -> void:
	_camera = DemoStage.build(self, Vector3(0, 3.0, 6.0), Vector3(0, 1.0, 0))
	var room := EntwineHoldHandRoom.new()
	add_child(room)
	var scene := load("res://characters/test_character.tscn") as PackedScene
	_initiator = scene.instantiate()
	_recipient = scene.instantiate()
	_initiator.position = Vector3(LOOP_RADIUS, 0, 0)
	_recipient.position = Vector3(LOOP_RADIUS + 1.5, 0, 1.0)
	_initiator.move_speed = 1.2
	room.add_child(_initiator)
	room.add_child(_recipient)
	var a := HoldHandComponent.new()
	var b := HoldHandComponent.new()
	a.debug_draw = true
	_initiator.add_child(a)
	_recipient.add_child(b)
	# The recipient accepts as soon as it is asked (a game would show a prompt).
	b.request_received.connect(func(_from: int) -> void: b.accept())
	a.request.call_deferred(b)
	# The real pair: the same nodes with no bone, axis or size set; the rig is read from the model.
	_real = GltfModel.on_test_body(REAL_MODEL)
	var real_partner := GltfModel.on_test_body(REAL_MODEL)
	_real.position = Vector3(LOOP_RADIUS + REAL_OFFSET, 0, 0)
	real_partner.position = Vector3(LOOP_RADIUS + REAL_OFFSET + 0.8, 0, 1.0)
	_real.move_speed = 1.2 * (LOOP_RADIUS + REAL_OFFSET) / LOOP_RADIUS
	room.add_child(_real)
	room.add_child(real_partner)
	var c := HoldHandComponent.new()
	var d := HoldHandComponent.new()
	_real.add_child(c)
	real_partner.add_child(d)
	d.request_received.connect(func(_from: int) -> void: d.accept())
	c.request.call_deferred(d)


func _unhandled_key_input(event: InputEvent) -> void:
	if event.is_pressed():
		_keyboard = true


func _physics_process(delta: float) -> void:
	_time += delta
	if _keyboard:
		var input := Input.get_vector("ui_left", "ui_right", "ui_up", "ui_down")
		_initiator.move_input = Vector3(input.x, 0, input.y)
	elif _time > 1.0:
		# Walk counter-clockwise around the origin, correcting toward the circle.
		var angle := atan2(-_initiator.position.z, _initiator.position.x) + 0.3
		var along := Vector3(-sin(angle), 0, -cos(angle))
		var wanted := Vector3(cos(angle - 0.3), 0, -sin(angle - 0.3)) * LOOP_RADIUS
		_initiator.move_input = (along + (wanted - _initiator.position) * 0.5).limit_length(1.0)
		# The real pair keeps level with the first, on a circle REAL_OFFSET further out.
		var real_angle := atan2(-_initiator.position.z, _initiator.position.x)
		var real_at := Vector3(cos(real_angle), 0, -sin(real_angle)) * (LOOP_RADIUS + REAL_OFFSET)
		var real_along := Vector3(-sin(real_angle), 0, -cos(real_angle))
		_real.move_input = (real_along + (real_at - _real.position) * 0.8).limit_length(1.0)
	# A camera in front of the pair, a little to the initiator's side, so both faces and the joined
	# hands are in view.
	var middle := (_initiator.global_position + _recipient.global_position) * 0.5
	var facing := _initiator.global_basis
	var eye := middle - facing.z * 3.6 + facing.x * 1.2 + Vector3(0, 1.9, 0)
	_camera.global_position = _camera.global_position.lerp(eye, 1.0 - exp(-delta * 3.0))
	_camera.look_at(middle + Vector3(0, 1.0, 0))
