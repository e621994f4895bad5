extends Node3D
## EnvironmentInteractionStateMachine: two Cesium Men (a real glTF humanoid, loaded at run time, no
## bone, axis or length set by hand) walk down a corridor. One brushes the stone wall on its left
## with its left hand; the other rests its right hand on the railing between the pillars. Walls,
## pillars and the railing are on the "interactable" layer (layer 5), the floor is not.

var title := "EnvironmentInteractionStateMachine — Cesium Man's hands reach for the wall and the railing"

const MODEL := "res://assets/characters/cesium_man/CesiumMan.glb"

const WALL_LAYER := 1 << 4
const CORRIDOR_START := 5.0
const CORRIDOR_END := -17.0

var _walkers: Array[TestCharacter] = []
var _nodes: Array[EnvironmentInteractionStateMachine] = []
var _camera: Camera3D
var _saved_max_steps := 8


func _ready() -> void:
	# Screenshots are taken after a fixed number of rendered frames: keep physics time in step with
	# them even when software rendering is slow.
	_saved_max_steps = Engine.max_physics_steps_per_frame
	Engine.max_physics_steps_per_frame = 1
	_camera = DemoStage.build(self, Vector3(1.9, 2.6, 4.6), Vector3(-0.2, 1.1, -2.0))
	var stone := _material(Color(0.62, 0.58, 0.52))
	var trim := _material(Color(0.45, 0.42, 0.38))
	var wood := _material(Color(0.55, 0.36, 0.2))
	var length := CORRIDOR_START - CORRIDOR_END + 6.0
	var mid_z := 0.5 * (CORRIDOR_START + CORRIDOR_END)
	# The left wall: one long box, with a darker skirting.
	_block(Vector3(-1.05, 1.5, mid_z), Vector3(0.3, 3.0, length), stone)
	_block(Vector3(-0.88, 0.15, mid_z), Vector3(0.04, 0.3, length), trim, false)
	# The right side: pillars (cylinders) every 3 m and a railing (a box) between them.
	var z := CORRIDOR_START
	while z > CORRIDOR_END - 2.0:
		_pillar(Vector3(1.45, 1.5, z), trim)
		z -= 3.0
	_block(Vector3(1.3, 0.98, mid_z), Vector3(0.12, 0.06, length), wood)
	for k in int(length / 0.5):
		_block(Vector3(1.3, 0.48, CORRIDOR_START + 3.0 - k * 0.5), Vector3(0.03, 0.96, 0.03), wood, false)
	# A far wall closing the corridor.
	_block(Vector3(0.2, 1.5, CORRIDOR_END - 3.5), Vector3(3.0, 3.0, 0.3), stone)

	# Left walker near the wall, right walker near the railing, a little behind.
	_walker(Vector3(-0.5, 0, CORRIDOR_START - 2.0), false)
	_walker(Vector3(0.9, 0, CORRIDOR_START - 0.5), true)


func _exit_tree() -> void:
	Engine.max_physics_steps_per_frame = _saved_max_steps


func _walker(start: Vector3, debug: bool) -> void:
	var character := GltfModel.on_test_body(MODEL)
	character.position = start
	character.move_speed = 1.1
	add_child(character)
	var touch := EnvironmentInteractionStateMachine.new()
	touch.interactable_mask = WALL_LAYER
	# Tuned for the showcase: a short pause between touches and a lingering touch (the seed's
	# defaults tap the wall for 0.5 s every few seconds).
	touch.reset_duration = 0.4
	touch.touch_duration = 5.0
	touch.debug_draw = debug
	character.add_child(touch)
	_walkers.append(character)
	_nodes.append(touch)


func _physics_process(_delta: float) -> void:
	for i in _walkers.size():
		var c := _walkers[i]
		if c.global_position.z < CORRIDOR_END:
			c.global_position.z = CORRIDOR_START
			_nodes[i].force_reset()
		var dir := Vector3(0, 0, -1)
		c.move_input = dir
		_nodes[i].move_input = dir
	var lead := _walkers[0].global_position
	_camera.look_at_from_position(lead + Vector3(1.5, 2.5, 3.8), lead + Vector3(0.4, 1.0, -1.2))


func _material(color: Color) -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.albedo_color = color
	m.roughness = 0.9
	return m


func _block(position: Vector3, size: Vector3, material: Material, solid := true) -> void:
	var mesh := MeshInstance3D.new()
	var box := BoxMesh.new()
	box.size = size
	mesh.mesh = box
	mesh.material_override = material
	if not solid:
		mesh.position = position
		add_child(mesh)
		return
	var body := StaticBody3D.new()
	body.collision_layer = WALL_LAYER
	body.collision_mask = 0
	body.position = position
	var shape := CollisionShape3D.new()
	var box_shape := BoxShape3D.new()
	box_shape.size = size
	shape.shape = box_shape
	body.add_child(shape)
	body.add_child(mesh)
	add_child(body)


func _pillar(position: Vector3, material: Material) -> void:
	var body := StaticBody3D.new()
	body.collision_layer = WALL_LAYER
	body.collision_mask = 0
	body.position = position
	var shape := CollisionShape3D.new()
	var cylinder := CylinderShape3D.new()
	cylinder.radius = 0.22
	cylinder.height = 3.0
	shape.shape = cylinder
	body.add_child(shape)
	var mesh := MeshInstance3D.new()
	var cyl := CylinderMesh.new()
	cyl.top_radius = 0.22
	cyl.bottom_radius = 0.22
	cyl.height = 3.0
	mesh.mesh = cyl
	mesh.material_override = material
	body.add_child(mesh)
	add_child(body)
