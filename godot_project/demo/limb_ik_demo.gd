extends Node3D
## EntwineLimbIK: the test character walks a circle while its right arm reaches for a moving target.

var title := "EntwineLimbIK — the right hand follows the orange target while the character walks"

const CIRCLE_RADIUS := 2.2
## Angular speed of the walk around the circle (rad/s).
const WALK_RATE := 0.45

var _character: TestCharacter
var _target: MeshInstance3D
var _camera: Camera3D
var _time := 0.0


func _ready() -> void:
	_camera = DemoStage.build(self, Vector3(0, 3.2, 6.5), Vector3(0, 1.0, 0))

	_character = (load("res://characters/test_character.tscn") as PackedScene).instantiate()
	_character.position = Vector3(CIRCLE_RADIUS, 0, 0)
	add_child(_character)

	_target = MeshInstance3D.new()
	var sphere := SphereMesh.new()
	sphere.radius = 0.06
	sphere.height = 0.12
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(1.0, 0.55, 0.1)
	mat.emission_enabled = true
	mat.emission = Color(1.0, 0.45, 0.0)
	sphere.material = mat
	_target.mesh = sphere
	add_child(_target)

	var ik := EntwineLimbIK.new()
	ik.name = "RightArmIK"
	ik.upper_bone = "RightUpperArm"
	ik.lower_bone = "RightLowerArm"
	ik.end_bone = "RightHand"
	# Elbow out to the right and down, in the skeleton's space.
	ik.pole_direction = Vector3(1, -1, 0.5)
	_character.get_skeleton().add_child(ik)
	ik.target_node = ik.get_path_to(_target)


func _physics_process(delta: float) -> void:
	_time += delta
	# Walk counter-clockwise around the origin: the tangent of the circle.
	var angle := _time * WALK_RATE
	var along := Vector3(-sin(angle), 0, -cos(angle))
	var outward := Vector3(cos(angle), 0, -sin(angle))
	var wanted := outward * CIRCLE_RADIUS
	var correction := (wanted - _character.position) * Vector3(1, 0, 1)
	_character.move_input = (along + correction).limit_length(1.0)
	# The target circles in front of the right shoulder.
	var basis := _character.global_basis
	var right := basis.x
	var forward := -basis.z
	var wobble := Vector3(0, 0.18 * sin(_time * 2.1), 0) + right * 0.12 * cos(_time * 1.7)
	_target.global_position = _character.global_position + Vector3(0, 1.35, 0) + right * 0.3 \
		+ forward * 0.35 + wobble
	# Follow from the front-right, where the reaching arm is in view.
	var facing := _character.global_basis
	var eye := _character.global_position - facing.z * 2.6 + facing.x * 1.6 + Vector3(0, 1.6, 0)
	_camera.global_position = _camera.global_position.lerp(eye, 1.0 - exp(-delta * 3.0))
	_camera.look_at(_character.global_position + Vector3(0, 1.1, 0))
