extends Node3D
## Rope-Man Run: the runner drags a yarn rope from its right hand down a track. Yarn balls grow the
## rope (and the runner); red blades cut it; low walls must be jumped. Left/Right (or A/D) steer, Space
## jumps (with coyote time and a jump buffer); the camera follows with a look-ahead. Without input an
## autopilot runs the level.

var title := "Rope-Man Run — RopeSimulation (yarn grows it, blades cut it) + an EntwineRopeBoneChain braid (←/→, Space)"

const ChainMesh := preload("res://demo/rope_chain_mesh.gd")

const TRACK_LENGTH := 120.0
const TRACK_HALF_WIDTH := 3.0
const RUN_SPEED := 8.0
const ACCELERATION := 10.0
const STEER_SPEED := 5.0
const JUMP_SPEED := 5.5
## Seconds after leaving the ground during which a jump still works (the seed's 0.1 s).
const COYOTE_TIME := 0.1
## Seconds a jump press is remembered before landing (the seed's 0.1 s).
const JUMP_BUFFER_TIME := 0.1
## Camera offset from the runner (behind and above; Godot's behind is +Z) and look-ahead distance.
const CAMERA_OFFSET := Vector3(0, 3.2, 6.5)
const LOOK_AHEAD := 2.0
const YARN_LENGTH := 0.6
## The braid: bones hung from the back of the head, and the spacing of both bones and rope points.
const BRAID_BONES := 10
const BRAID_SPACING := 0.07
const CUTTER_LAYER := 2

enum State { RUN, AIR }

var _character: TestCharacter
var _rope: RopeSimulation
var _braid_rope: RopeSimulation
var _camera: Camera3D
var _hud: Label
var _state := State.RUN
var _speed := 0.0
var _since_grounded := 0.0
var _since_jump_pressed := INF
var _jump_was_down := false
var _autopilot := true
var _camera_velocity := Vector3.ZERO
var _camera_smooth := 0.2
var _yarns: Array[Node3D] = []
var _blades: Array[Node3D] = []
var _walls: Array[float] = []
var _collected := 0
var _cuts := 0
var _flash := 0.0
var _growth := 1.0


func _ready() -> void:
	_camera = DemoStage.build(self, Vector3(0, 4, 8), Vector3(0, 1, 0), 2.0 * TRACK_LENGTH + 40.0)
	_build_track()

	_character = (load("res://characters/test_character.tscn") as PackedScene).instantiate()
	add_child(_character)
	# The demo drives the runner itself (run, steer, jump); the character only animates.
	_character.set_physics_process(false)
	_character.animation_tree.set(&"parameters/move/blend_amount", 1.0)

	_rope = RopeSimulation.new()
	_rope.name = "Rope"
	add_child(_rope)
	_rope.anchor_node = _rope.get_path_to(_character.get_skeleton())
	_rope.anchor_bone = "RightHand"
	_rope.anchor_offset = Vector3(0, 0.06, 0)
	_rope.cutter_mask = 1 << (CUTTER_LAYER - 1)
	_rope.radius = 0.035
	_rope.point_count = 12
	_rope.fade_time = 1.2
	var yarn := StandardMaterial3D.new()
	yarn.albedo_color = Color(0.95, 0.3, 0.6)
	yarn.roughness = 0.9
	_rope.material = yarn
	_rope.apply_preset(_rope.preset_for_speed(RUN_SPEED))
	_camera_smooth = 0.2
	var preset := _rope.find_preset(_rope.preset_for_speed(RUN_SPEED))
	if preset:
		_camera_smooth = preset.camera_smooth_time
	_rope.reset_rope()
	_rope.rope_cut.connect(_on_rope_cut)
	_add_braid()

	_hud = Label.new()
	_hud.position = Vector2(16, 48)
	_hud.add_theme_font_size_override("font_size", 20)
	var layer := CanvasLayer.new()
	layer.add_child(_hud)
	add_child(layer)


## A braid down the back of Rope-Man's head: a chain of bones added to his skeleton under the Head
## bone, a skinned mesh on them, and an EntwineRopeBoneChain that lays the chain along a second, short rope
## hung from the braid's own root bone.
func _add_braid() -> void:
	var skeleton := _character.get_skeleton()
	var head := skeleton.find_bone("Head")
	# In the Head bone's space +Y is up and +Z is back: start at the back of the skull, hang down-back.
	var bones := ChainMesh.add_chain(skeleton, "Braid", BRAID_BONES, head, Vector3(0, 0.1, 0.08),
			Vector3(0, -1, 0.35), BRAID_SPACING)
	var hair := StandardMaterial3D.new()
	hair.albedo_color = Color(0.62, 0.27, 0.08)
	hair.roughness = 0.6
	var mesh := ChainMesh.skinned_tube(skeleton, bones, 0.045, 0.02, hair, true)
	mesh.name = "Braid"
	skeleton.add_child(mesh)

	_braid_rope = RopeSimulation.new()
	_braid_rope.name = "BraidRope"
	add_child(_braid_rope)
	_braid_rope.anchor_node = _braid_rope.get_path_to(skeleton)
	_braid_rope.anchor_bone = "Braid1"
	_braid_rope.segment_length = BRAID_SPACING
	_braid_rope.point_count = BRAID_BONES
	# Hair: heavier than the yarn (it hangs down the back) and with more air drag (it streams behind
	# a runner instead of whipping around the head).
	_braid_rope.damping = 0.98
	_braid_rope.gravity_scale = 2.5
	_braid_rope.iterations = 8
	_braid_rope.radius = 0.03
	_braid_rope.collision_mask = 0 # hair needs no physics query; the ground is enough
	_braid_rope.tube_enabled = false # the skinned braid is what is drawn
	_braid_rope.reset_rope()

	var chain := EntwineRopeBoneChain.new()
	chain.name = "BraidChain"
	skeleton.add_child(chain)
	chain.rope = _braid_rope
	chain.root_bone = "Braid1"
	chain.tip_bone = "Braid%d" % BRAID_BONES
	# The rope follows the head a physics frame late: keep the root on the head.
	chain.attach_root = true


func _build_track() -> void:
	var lane := StandardMaterial3D.new()
	lane.albedo_color = Color(0.36, 0.5, 0.62)
	var track := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(TRACK_HALF_WIDTH * 2.0, TRACK_LENGTH)
	plane.material = lane
	track.mesh = plane
	track.position = Vector3(0, 0.005, -TRACK_LENGTH * 0.5 + 4.0)
	add_child(track)
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	var colors := [Color(1.0, 0.8, 0.2), Color(0.4, 0.9, 0.5), Color(0.5, 0.7, 1.0), Color(1.0, 0.5, 0.3)]
	var z := -6.0
	var k := 0
	while z > -TRACK_LENGTH + 10.0:
		_add_yarn(Vector3(rng.randf_range(-1.5, 1.5), 0.35, z), colors[k % colors.size()])
		if k % 3 == 1:
			# A blade over one half of the track, low enough to slice the trailing rope.
			var side := -1.0 if rng.randf() < 0.5 else 1.0
			_add_blade(Vector3(side * TRACK_HALF_WIDTH * 0.5, 0.25, z - 5.0))
		elif k % 3 == 2:
			_add_wall(z - 5.0)
		z -= 10.0
		k += 1


func _add_yarn(at: Vector3, color: Color) -> void:
	var ball := MeshInstance3D.new()
	var sphere := SphereMesh.new()
	sphere.radius = 0.3
	sphere.height = 0.6
	var mat := StandardMaterial3D.new()
	mat.albedo_color = color
	mat.roughness = 1.0
	sphere.material = mat
	ball.mesh = sphere
	ball.position = at
	add_child(ball)
	_yarns.append(ball)


func _add_blade(at: Vector3) -> void:
	var blade := Area3D.new()
	blade.collision_layer = 1 << (CUTTER_LAYER - 1)
	blade.collision_mask = 0
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(TRACK_HALF_WIDTH, 0.5, 0.06)
	shape.shape = box
	blade.add_child(shape)
	var mesh := MeshInstance3D.new()
	var bm := BoxMesh.new()
	bm.size = box.size
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(0.9, 0.1, 0.1)
	mat.metallic = 0.6
	mat.emission_enabled = true
	mat.emission = Color(0.5, 0.0, 0.0)
	bm.material = mat
	mesh.mesh = bm
	blade.add_child(mesh)
	blade.position = at
	add_child(blade)
	_blades.append(blade)


func _add_wall(z: float) -> void:
	var wall := StaticBody3D.new()
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(TRACK_HALF_WIDTH * 2.0, 0.3, 0.3)
	shape.shape = box
	wall.add_child(shape)
	var mesh := MeshInstance3D.new()
	var bm := BoxMesh.new()
	bm.size = box.size
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(0.75, 0.7, 0.6)
	bm.material = mat
	mesh.mesh = bm
	wall.add_child(mesh)
	wall.position = Vector3(0, 0.15, z)
	add_child(wall)
	_walls.append(z)


func _physics_process(delta: float) -> void:
	var body := _character
	var steer := 0.0
	var jump_down := false
	if Input.is_key_pressed(KEY_LEFT) or Input.is_key_pressed(KEY_A):
		steer -= 1.0
	if Input.is_key_pressed(KEY_RIGHT) or Input.is_key_pressed(KEY_D):
		steer += 1.0
	jump_down = Input.is_key_pressed(KEY_SPACE)
	if steer != 0.0 or jump_down:
		_autopilot = false
	if _autopilot:
		var plan := _autopilot_plan()
		steer = plan.x
		jump_down = plan.y > 0.5

	# Jump buffer: remember the press; coyote time: accept it shortly after leaving the ground.
	if jump_down and not _jump_was_down:
		_since_jump_pressed = 0.0
	_jump_was_down = jump_down
	_since_jump_pressed += delta
	var grounded := body.is_on_floor()
	if grounded:
		_since_grounded = 0.0
		_state = State.RUN
	else:
		_since_grounded += delta
		if _state == State.RUN and _since_grounded > COYOTE_TIME:
			_state = State.AIR
	var velocity := body.velocity
	if _since_jump_pressed <= JUMP_BUFFER_TIME and _since_grounded <= COYOTE_TIME:
		velocity.y = JUMP_SPEED
		_state = State.AIR
		_since_jump_pressed = INF
		_since_grounded = INF
	elif not grounded:
		velocity.y -= 9.8 * delta
	_speed = move_toward(_speed, RUN_SPEED, ACCELERATION * delta)
	velocity.z = -_speed
	velocity.x = steer * STEER_SPEED
	body.velocity = velocity
	body.move_and_slide()
	body.global_position.x = clampf(body.global_position.x, -TRACK_HALF_WIDTH + 0.4, TRACK_HALF_WIDTH - 0.4)
	body.rotation.y = lerp_angle(body.rotation.y, atan2(-velocity.x, _speed) * 0.5, 1.0 - exp(-10.0 * delta))
	_character.animation_tree.set(&"parameters/speed/scale", clampf(_speed / TestCharacter.WALK_REFERENCE_SPEED, 0.5, 2.5) * 0.6)

	_collect_yarn()
	if body.global_position.z < -TRACK_LENGTH + 6.0:
		_restart()


## Returns (steer, jump) for the autopilot: head for the next yarn ball, keep clear of the next blade's
## half of the track, jump walls.
func _autopilot_plan() -> Vector2:
	var at := _character.global_position
	var goal_x := at.x
	for y in _yarns:
		if y.visible and y.global_position.z < at.z + 0.5:
			goal_x = y.global_position.x
			break
	for i in _blades.size():
		var b := _blades[i]
		var dz := at.z - b.global_position.z
		# The autopilot is not perfect: it misses every third blade, the first one too (so the demo shows cuts).
		if dz > -4.0 and dz < 6.0 and i % 3 != 0:
			goal_x = -signf(b.global_position.x) * 1.8
			break
	var jump := 0.0
	for z in _walls:
		var dz := at.z - z
		if dz > 0.6 and dz < 1.6:
			jump = 1.0
	return Vector2(clampf((goal_x - at.x) * 2.0, -1.0, 1.0), jump)


func _collect_yarn() -> void:
	var at := _character.global_position
	for y in _yarns:
		if y.visible and Vector2(y.global_position.x - at.x, y.global_position.z - at.z).length() < 0.7:
			y.visible = false
			_collected += 1
			_rope.length = _rope.length + YARN_LENGTH
			# Rope-Man grows with his yarn.
			_growth = minf(1.5, _growth + 0.04)
			_character.get_skeleton().scale = Vector3.ONE * _growth
			_braid_rope.segment_length = BRAID_SPACING * _growth


func _on_rope_cut(_index: int, _position: Vector3) -> void:
	_cuts += 1
	_flash = 0.6


func _restart() -> void:
	_character.global_position = Vector3.ZERO
	_character.velocity = Vector3.ZERO
	_speed = 0.0
	for y in _yarns:
		y.visible = true
	_rope.reset_rope()
	_braid_rope.reset_rope()


func _process(delta: float) -> void:
	# Look-ahead follow camera, critically damped (the seed's SmoothDamp, smooth time from the preset).
	var target := _character.global_position
	var desired := target + CAMERA_OFFSET + Vector3.FORWARD * LOOK_AHEAD
	var omega := 2.0 / maxf(_camera_smooth, 0.01)
	var x := omega * delta
	var decay := 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x)
	var change := _camera.global_position - desired
	var temp := (_camera_velocity + change * omega) * delta
	_camera_velocity = (_camera_velocity - temp * omega) * decay
	_camera.global_position = desired + (change + temp) * decay
	_camera.look_at(target + Vector3(0, 1.2, -LOOK_AHEAD), Vector3.UP)

	_flash = maxf(0.0, _flash - delta)
	_hud.text = "yarn %d   rope %.1f m (%d points)   cuts %d   %s%s%s" % [
		_collected, _rope.length, _rope.get_active_point_count(), _cuts,
		"RUN" if _state == State.RUN else "AIR",
		"   autopilot" if _autopilot else "",
		"   CUT!" if _flash > 0.0 else ""]
