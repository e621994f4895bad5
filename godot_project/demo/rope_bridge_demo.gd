extends Node3D
## Ropes against physics: a rope bridge between two posts hangs as the catenary (the analytic curve for
## its length is drawn beside it in yellow, and the worst distance is shown live), a slack rope strung
## between two more posts is cut by a blade that starts spinning at 150 rad/s (2.5 rad per frame) after 2.25 s, on its first pass, and a rope
## swung over a thin wall drapes over its edge instead of cutting through it.

var title := "Ropes against physics — a catenary bridge, a 150 rad/s blade, a rope over a wall's edge"

const BLADE_LAYER := 2
const SPAN := 4.0
const BRIDGE_LENGTH := 5.0
const POST_HEIGHT := 2.6

var _bridge: RopeSimulation
var _curve: MeshInstance3D
var _hud: Label
var _cut_rope: RopeSimulation
var _cuts := 0
var _swing_anchor: Node3D
var _blade_body: RigidBody3D
var _time := 0.0
## Seconds before the blade starts spinning (so the line is seen whole, then cut).
const BLADE_START := 2.25
const BLADE_RATE := 150.0


func _ready() -> void:
	DemoStage.build(self, Vector3(1.0, 3.6, 8.5), Vector3(1.0, 1.4, -1.0), 40.0)
	# The bridge: 5 m of rope in 24 points between posts 4 m apart.
	var left := _post(Vector3(-SPAN * 0.5, 0, 0))
	var right := _post(Vector3(SPAN * 0.5, 0, 0))
	_bridge = _rope_between(left, right, BRIDGE_LENGTH, 24, Color(0.85, 0.62, 0.35))
	_curve = MeshInstance3D.new()
	var mat := StandardMaterial3D.new()
	mat.shading_mode = BaseMaterial3D.SHADING_MODE_UNSHADED
	mat.albedo_color = Color(1.0, 0.9, 0.1)
	_curve.material_override = mat
	_curve.position = Vector3(0, 0, 0.12)
	add_child(_curve)

	# A slack line between two posts behind, and a blade on a rigid body spinning through it.
	var a := _post(Vector3(-1.5, 0, -3.0))
	var b := _post(Vector3(2.5, 0, -3.0))
	_cut_rope = _rope_between(a, b, 4.6, 24, Color(0.3, 0.55, 0.9))
	_cut_rope.cutter_mask = 1 << (BLADE_LAYER - 1)
	# The cut-off piece stays on the floor a while (so a screenshot taken later still shows it).
	_cut_rope.fade_time = 30.0
	# One cut is the show: the blade is disarmed after it (it keeps spinning), so the stub left on the
	# post is not cut again each turn.
	_cut_rope.rope_cut.connect(func(_i: int, _at: Vector3) -> void:
		_cuts += 1
		_blade_body.collision_layer = 0)
	_blade_body = _blade(Vector3(0.5, 1.9, -3.0))

	# A rope hung from a node that swings it back and forth over a thin wall.
	var wall := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.05, 1.2, 2.0)
	shape.shape = box
	wall.add_child(shape)
	var mesh := MeshInstance3D.new()
	var wall_mesh := BoxMesh.new()
	wall_mesh.size = box.size
	mesh.mesh = wall_mesh
	wall.add_child(mesh)
	wall.position = Vector3(5.5, 0.6, -1.0)
	add_child(wall)
	_swing_anchor = Node3D.new()
	_swing_anchor.position = Vector3(5.5, 2.0, -1.0)
	add_child(_swing_anchor)
	var swing := RopeSimulation.new()
	add_child(swing)
	swing.anchor_node = swing.get_path_to(_swing_anchor)
	swing.point_count = 12
	swing.reset_rope()

	_hud = Label.new()
	_hud.position = Vector2(16, 44)
	_hud.add_theme_font_size_override("font_size", 18)
	var layer := CanvasLayer.new()
	layer.add_child(_hud)
	add_child(layer)


func _physics_process(delta: float) -> void:
	_time += delta
	if _time >= BLADE_START and _blade_body.angular_velocity == Vector3.ZERO:
		# Armed only now: while the line settled, the blade was not on the cutter layer.
		_blade_body.collision_layer = 1 << (BLADE_LAYER - 1)
		_blade_body.angular_velocity = Vector3(0, 0, BLADE_RATE)
	_swing_anchor.position.x = 5.5 + 2.0 * sin(_time * 3.0)


func _process(_delta: float) -> void:
	var pts := _bridge.get_points()
	if pts.size() < 2:
		return
	var a := _catenary_a(SPAN, _bridge.length)
	var origin: Vector3 = pts[0]
	var mesh := ImmediateMesh.new()
	mesh.surface_begin(Mesh.PRIMITIVE_LINE_STRIP)
	for k in 81:
		var x := SPAN * k / 80.0
		mesh.surface_add_vertex(origin + Vector3(x, a * cosh((x - SPAN * 0.5) / a) - a * cosh(SPAN * 0.5 / a), 0))
	mesh.surface_end()
	_curve.mesh = mesh
	var worst := 0.0
	for p in pts:
		var x: float = p.x - origin.x
		var y: float = a * cosh((x - SPAN * 0.5) / a) - a * cosh(SPAN * 0.5 / a)
		worst = maxf(worst, absf(p.y - origin.y - y))
	_hud.text = "bridge: %.2f m of rope, %.1f mm from the catenary at worst (vertical), %d substep(s)   blade: %d cut(s)" % [
		_bridge.length, worst * 1000.0, _bridge.get_substeps_in_use(), _cuts]


## Solves 2a·sinh(span / 2a) = length for the catenary parameter a.
func _catenary_a(span: float, length: float) -> float:
	var lo := 1e-4 * span
	var hi := 1e4 * span
	for i in 100:
		var mid := sqrt(lo * hi)
		if 2.0 * mid * sinh(span / (2.0 * mid)) > length:
			lo = mid
		else:
			hi = mid
	return sqrt(lo * hi)


func _post(at: Vector3) -> Node3D:
	var post := MeshInstance3D.new()
	var mesh := CylinderMesh.new()
	mesh.top_radius = 0.06
	mesh.bottom_radius = 0.08
	mesh.height = POST_HEIGHT
	post.mesh = mesh
	post.position = at + Vector3(0, POST_HEIGHT * 0.5, 0)
	add_child(post)
	var top := Node3D.new()
	top.position = Vector3(0, POST_HEIGHT * 0.5, 0)
	post.add_child(top)
	return top


func _rope_between(from: Node3D, to: Node3D, length: float, points: int, color: Color) -> RopeSimulation:
	var rope := RopeSimulation.new()
	rope.capacity = points
	rope.point_count = points
	rope.segment_length = length / (points - 1)
	rope.radius = 0.025
	add_child(rope)
	rope.anchor_node = rope.get_path_to(from)
	rope.end_node = rope.get_path_to(to)
	var mat := StandardMaterial3D.new()
	mat.albedo_color = color
	rope.material = mat
	rope.reset_rope()
	return rope


func _blade(pivot: Vector3) -> RigidBody3D:
	var body := RigidBody3D.new()
	body.collision_layer = 0
	body.collision_mask = 0
	body.gravity_scale = 0.0
	body.can_sleep = false
	body.center_of_mass_mode = RigidBody3D.CENTER_OF_MASS_MODE_CUSTOM
	body.center_of_mass = Vector3.ZERO
	body.angular_damp_mode = RigidBody3D.DAMP_MODE_REPLACE
	body.angular_damp = 0.0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(0.9, 0.02, 0.12)
	shape.shape = box
	shape.position = Vector3(0.45, 0, 0)
	body.add_child(shape)
	var mesh := MeshInstance3D.new()
	var blade_mesh := BoxMesh.new()
	blade_mesh.size = box.size
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(0.85, 0.15, 0.12)
	blade_mesh.material = mat
	mesh.mesh = blade_mesh
	mesh.position = shape.position
	body.add_child(mesh)
	body.position = pivot
	# Spins in the vertical plane across the line, starting clear of it.
	body.rotation = Vector3(0, 0, 0.6)
	add_child(body)
	return body
