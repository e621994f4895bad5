extends Node3D
## HoldHandComponent: two characters hold hands; the initiator walks a loop (WASD or arrow keys take
## over when a key is pressed), the recipient is carried along and both hands meet at one point.

var title := "HoldHandComponent — the partner follows, the hands meet (debug: reach spheres, contact)"

## Radius (m) and angular speed (rad/s) of the walked loop.
const LOOP_RADIUS := 2.5
const LOOP_RATE := 0.35

var _initiator: TestCharacter
var _recipient: TestCharacter
var _camera: Camera3D
var _time := 0.0
var _keyboard := false


func _ready() -> void:
	_camera = DemoStage.build(self, Vector3(0, 3.0, 6.0), Vector3(0, 1.0, 0))
	var room := HoldHandRoom.new()
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
	# A camera in front of the pair, a little to the initiator's side, so both faces and the joined
	# hands are in view.
	var middle := (_initiator.global_position + _recipient.global_position) * 0.5
	var facing := _initiator.global_basis
	var eye := middle - facing.z * 3.6 + facing.x * 1.2 + Vector3(0, 1.9, 0)
	_camera.global_position = _camera.global_position.lerp(eye, 1.0 - exp(-delta * 3.0))
	_camera.look_at(middle + Vector3(0, 1.0, 0))
