class_name DemoStage
extends RefCounted
## Shared set dressing for the demo scenes: sky, sun, floor and a camera.


## Adds a lit environment, a floor of [param size] metres and a camera at [param eye] looking at
## [param look_at] under [param parent]. Returns the camera.
static func build(parent: Node3D, eye: Vector3, look_at: Vector3, size := 40.0) -> Camera3D:
	var env := Environment.new()
	env.background_mode = Environment.BG_COLOR
	env.background_color = Color(0.56, 0.66, 0.78)
	env.ambient_light_source = Environment.AMBIENT_SOURCE_COLOR
	env.ambient_light_color = Color(0.75, 0.78, 0.85)
	env.ambient_light_energy = 0.6
	var world := WorldEnvironment.new()
	world.environment = env
	parent.add_child(world)

	var sun := DirectionalLight3D.new()
	sun.rotation_degrees = Vector3(-55, 35, 0)
	sun.light_energy = 1.1
	sun.shadow_enabled = true
	parent.add_child(sun)

	var floor_body := StaticBody3D.new()
	floor_body.name = "Floor"
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(size, 1.0, size)
	shape.shape = box
	shape.position.y = -0.5
	floor_body.add_child(shape)
	var mesh := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(size, size)
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(0.42, 0.45, 0.40)
	plane.material = mat
	mesh.mesh = plane
	floor_body.add_child(mesh)
	parent.add_child(floor_body)

	var camera := Camera3D.new()
	camera.fov = 55.0
	parent.add_child(camera)
	camera.look_at_from_position(eye, look_at)
	camera.make_current()
	return camera
