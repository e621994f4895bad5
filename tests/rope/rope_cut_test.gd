# timeout: 170
extends EntwineTest
## Cuts from the paths cutters actually took between two physics frames. Every kind of cutter
## (RigidBody3D moved by physics, AnimatableBody3D turned by a script, Area3D and CharacterBody3D
## moved by a script) over a sweep of speeds, each in 10 phases (where it is at a frame relative to
## the rope): a blade or a bullet cuts in the frame whose path first touches the rope (its first
## pass), where it touched; a cutter that turns away, stops short or passes 1 cm beside the rope
## never cuts. Each case has its own rope, far from the others (300 m apart along a bullet's
## flight, 20 m across), and all the cases of a test run side by side in the same frames.

const DT := 1.0 / 60.0
const PHASES := 10
const RATES := [10.0, 30.0, 100.0, 200.0, 400.0, 1000.0]
const SPEEDS := [10.0, 30.0, 90.0, 150.0, 400.0, 1000.0]
## A one-sided blade: 0.6 m from its axle, 2 cm thick and tall.
const BLADE := Vector3(0.6, 0.02, 0.02)
## The height of the blades' plane and the bullets' line.
const BLADE_Y := 3.0
const BULLET_Y := 3.5
const BULLET_RADIUS := 0.01
## A script-turned blade spins up at this rate (rad/s²): its turn per frame changes by less than
## half a revolution from one frame to the next, so the rope can follow its winding.
const SPIN_UP := 6000.0
## Blades spin in place, out of reach (their axle this far from the rope), until this frame, then
## move toward the rope at [constant APPROACH] m/s.
const APPROACH_FRAME := 14
const APPROACH := 3.0
const START_GAP := 0.8
## How near (m) a cutter's surface must come to the rope's to touch it (the rope's contact tolerance).
const CONTACT := 1e-4
## The frame bullets are fired in (the ropes have settled by then).
const FIRE_FRAME := 3

## Physics frames since the test began (the rope's signals of a frame see that frame's number).
var _frame := 0


## Where case [param i] of a test lives.
func _cell(i: int) -> Vector3:
	return Vector3(300.0 * (i % 6), 0.0, 20.0 * (i / 6))


## A rope of 9 points hanging plumb from [param at], [param length] m long, cut by layer 2 only;
## its cuts are counted in [param c] ("cuts", "cut_frame", "cut_at").
func _rope(c: Dictionary, at: Vector3, length: float) -> RopeSimulation:
	var rope := RopeSimulation.new()
	rope.position = at
	rope.point_count = 9
	rope.segment_length = length / 8.0
	rope.collision_mask = 0
	rope.cutter_mask = 2
	rope.tube_enabled = false
	add(rope)
	c["rope"] = rope
	c["cuts"] = 0
	c["cut_frame"] = -1
	c["cut_at"] = Vector3.INF
	rope.rope_cut.connect(func(_i: int, where: Vector3) -> void:
		c["cuts"] += 1
		if c["cut_frame"] < 0:
			c["cut_frame"] = _frame
			c["cut_at"] = where)
	return rope


## Gives [param body] a box of [param size] at [param offset] on layer 2 (colliding with nothing).
func _box(body: CollisionObject3D, size: Vector3, offset := Vector3.ZERO) -> void:
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = size
	shape.shape = box
	shape.position = offset
	body.add_child(shape)
	body.collision_layer = 2
	body.collision_mask = 0


## Gives [param body] a ball of [constant BULLET_RADIUS] on layer 2 (colliding with nothing).
func _ball(body: CollisionObject3D) -> void:
	var shape := CollisionShape3D.new()
	var ball := SphereShape3D.new()
	ball.radius = BULLET_RADIUS
	shape.shape = ball
	body.add_child(shape)
	body.collision_layer = 2
	body.collision_mask = 0


## A rigid body with no gravity and no damping that never sleeps, turning about its origin.
func _rigid() -> PhysicsBody3D:
	var body := RigidBody3D.new()
	body.gravity_scale = 0.0
	body.can_sleep = false
	body.linear_damp_mode = RigidBody3D.DAMP_MODE_REPLACE
	body.linear_damp = 0.0
	body.angular_damp_mode = RigidBody3D.DAMP_MODE_REPLACE
	body.angular_damp = 0.0
	body.center_of_mass_mode = RigidBody3D.CENTER_OF_MASS_MODE_CUSTOM
	body.center_of_mass = Vector3.ZERO
	return body


## An AnimatableBody3D (synced to physics: a script's move shows after the next physics step).
func _animatable() -> PhysicsBody3D:
	return AnimatableBody3D.new()


## The angle of [param body] about +Y (from +X toward −Z).
func _yaw(body: Node3D) -> float:
	var x := body.global_basis.x
	return atan2(-x.z, x.x)


## Whether a vertical rope through [param rope] (x, z) of [param radius] touches the blade whose axle
## is at [param axle] (x, z) turned to [param angle].
func _blade_touches(rope: Vector2, axle: Vector2, angle: float, radius: float) -> bool:
	var d := rope - axle
	var c := cos(angle)
	var s := sin(angle)
	var lx := d.x * c - d.y * s
	var lz := d.x * s + d.y * c
	var ex := maxf(maxf(-lx, lx - BLADE.x), 0.0)
	var ez := maxf(absf(lz) - 0.5 * BLADE.z, 0.0)
	return ex * ex + ez * ez <= radius * radius


## Whether the blade's true path from (axle [param a0], angle [param t0]) turning by [param turn]
## while its axle moves to [param a1] touches the rope at [param rope]: sampled every 1 mrad and 0.5 mm.
func _path_touches(rope: Vector2, a0: Vector2, a1: Vector2, t0: float, turn: float, radius: float) -> bool:
	var reach := BLADE.x + 0.5 * BLADE.z + radius + 0.01
	if minf(rope.distance_to(a0), rope.distance_to(a1)) > reach + a0.distance_to(a1):
		return false
	var n := maxi(maxi(ceili(absf(turn) / 0.001), ceili(a0.distance_to(a1) / 0.0005)), 1)
	for k in n + 1:
		var f := float(k) / n
		if _blade_touches(rope, a0.lerp(a1, f), t0 + turn * f, radius):
			return true
	return false


## Moves [param c]'s blade for this frame: a rigid one is given its spin in frame 0 and its approach
## velocity in [constant APPROACH_FRAME]; a script-turned one is spun up and moved here. Records the
## pose the rope's step of this frame sees and the turn the blade makes before the next.
func _blade_frame(c: Dictionary, f: int) -> void:
	var body = c["body"]
	var rate: float = c["rate"]
	# The pose this frame's rope step sees: a rigid body where its last physics step left it, an
	# AnimatableBody3D (synced to physics) where the server put it at that step.
	c["seen"].append([Vector2(body.global_position.x, body.global_position.z), _yaw(body)])
	if c["rigid"]:
		if f == 0:
			body.angular_velocity = Vector3(0, rate, 0)
		if f == APPROACH_FRAME:
			body.linear_velocity = Vector3(APPROACH, 0, 0)
		c["turns"].append(rate * DT)
	else:
		var spin := minf(rate, SPIN_UP * (f + 1) * DT)
		c["angle"] += spin * DT
		if f >= APPROACH_FRAME:
			c["axle"] += Vector3(APPROACH * DT, 0, 0)
		# One transform: each change of an AnimatableBody3D's transform is sent to the server from
		# the node's last physics pose.
		body.transform = Transform3D(Basis(Vector3.UP, c["angle"]), c["axle"])
		c["turns"].append(spin * DT)


## Returns the first frame whose path (from the pose seen in the frame before) touches the rope, or -1.
func _blade_first_pass(c: Dictionary) -> int:
	var rope: RopeSimulation = c["rope"]
	var at := Vector2(rope.global_position.x, rope.global_position.z)
	var seen: Array = c["seen"]
	# A rigid body's turns start with its spin, set in frame 0 and made by that frame's physics step;
	# a script-turned body shows its frame's turn one frame later, as the rigid body does.
	for f in range(1, seen.size()):
		var cmd: float = c["turns"][f - 1]
		var t0: float = seen[f - 1][1]
		var turn := cmd + wrapf(seen[f][1] - t0 - cmd, -PI, PI)
		if _path_touches(at, seen[f - 1][0], seen[f][0], t0, turn, rope.radius + CONTACT):
			return f
	return -1


func test_blades_cut_on_their_first_pass() -> void:
	var cases := []
	for kind in ["RigidBody3D", "AnimatableBody3D"]:
		for rate: float in RATES:
			for k in PHASES:
				var origin := _cell(cases.size())
				var c := {"kind": kind, "rate": rate, "rigid": kind == "RigidBody3D", "seen": [], "turns": []}
				_rope(c, origin + Vector3(START_GAP, BLADE_Y + 0.6, 0), 1.2)
				var body: CollisionObject3D = _rigid() if c["rigid"] else _animatable()
				_box(body, BLADE, Vector3(0.5 * BLADE.x, 0, 0))
				c["angle"] = TAU * (k + 0.37) / PHASES
				c["axle"] = origin + Vector3(0, BLADE_Y, 0)
				body.transform = Transform3D(Basis(Vector3.UP, c["angle"]), c["axle"])
				add(body)
				c["body"] = body
				cases.append(c)
	for f in 46:
		await physics_frame
		_frame = f
		for c: Dictionary in cases:
			_blade_frame(c, f)
	await physics_frame
	_report_first_pass(cases, "blade", "rate", "rad/s", _blade_first_pass)
	for c: Dictionary in cases:
		var rope: RopeSimulation = c["rope"]
		var at: Vector3 = c["cut_at"]
		var off := Vector2(at.x - rope.global_position.x, at.z - rope.global_position.z).length()
		var where := off <= rope.radius + 0.01 and absf(at.y - BLADE_Y) <= 0.5 * BLADE.y + rope.radius + 0.01
		check(c["cut_frame"] < 0 or where, "a %s blade at %s rad/s cuts where it crossed the rope" % [c["kind"], c["rate"]],
			"within %.2f m of the rope's line at the blade's height" % (rope.radius + 0.01), at)


## Checks and prints, per kind and [param key] (speed or rate), how many phases cut in their first
## pass ([param first_pass] gives the frame) and that each rope was cut once.
func _report_first_pass(cases: Array, what: String, key: String, unit: String, first_pass: Callable) -> void:
	var table := {}
	for c: Dictionary in cases:
		var expected: int = first_pass.call(c)
		var label := "%s %s %5.0f %s" % [what, c["kind"], c[key], unit]
		if not table.has(label):
			table[label] = [0, 0, []]
		var row: Array = table[label]
		row[1] += 1
		if expected >= 0 and c["cut_frame"] == expected:
			row[0] += 1
		else:
			row[2].append("%d/%d" % [expected, c["cut_frame"]])
		check(c["cuts"] == 1, "rope_cut once for a %s at %s %s" % [c["kind"], c[key], unit], 1, c["cuts"])
	for label: String in table:
		var row: Array = table[label]
		print("ROPE_CUT first pass  %-40s %2d/%d%s" % [label, row[0], row[1],
			"" if row[2].is_empty() else "  (first pass/cut frame: %s)" % ", ".join(row[2])])
		check(row[0] == row[1], "%s cuts on its first pass in every phase" % label, row[1], row[0])


## A bullet case: a rope hanging through (0, [constant BULLET_Y], [param z]) of its cell and a bullet
## of [param kind] flying along +X at [param speed], fired in [constant FIRE_FRAME] (3 + phase) of
## a frame's flight short of the rope; [param stop] m before the rope's line it stops (INF: never).
func _bullet_case(i: int, kind: String, speed: float, phase: float, z: float, stop := INF) -> Dictionary:
	var origin := _cell(i)
	var c := {"kind": kind, "speed": speed, "z": z, "stop": stop, "seen": [], "body": null}
	_rope(c, origin + Vector3(0, BULLET_Y + 0.5, 0), 1.5)
	c["x0"] = origin.x - (3.0 + phase) * speed * DT
	c["line"] = origin.x
	c["origin"] = origin
	return c


## Fires, moves, stops and at last frees [param c]'s bullet in frame [param f]; records where the
## rope's step of this frame sees it (x).
func _bullet_frame(c: Dictionary, f: int) -> void:
	var flight: float = c["speed"] * DT
	var origin: Vector3 = c["origin"]
	var limit: float = INF if is_inf(c["stop"]) else c["line"] - c["stop"]
	if f == FIRE_FRAME:
		var made: CollisionObject3D
		match c["kind"]:
			"RigidBody3D": made = _rigid()
			"Area3D": made = Area3D.new()
			_: made = CharacterBody3D.new()
		_ball(made)
		made.position = Vector3(c["x0"], BULLET_Y, origin.z + c["z"])
		add(made)
		if made is RigidBody3D:
			(made as RigidBody3D).linear_velocity = Vector3(c["speed"], 0, 0)
		c["body"] = made
	var body = c["body"]
	if body == null:
		return
	if f > FIRE_FRAME + 12:
		body.queue_free()
		c["body"] = null
		return
	var x: float = body.global_position.x
	if body is RigidBody3D:
		c["seen"].append(x)
		# A rigid bullet that must stop short is stopped before the step that would take it too far.
		if x + flight > limit:
			body.linear_velocity = Vector3.ZERO
		return
	if f > FIRE_FRAME:
		var step := minf(flight, maxf(limit - x, 0.0))
		if body is CharacterBody3D:
			body.move_and_collide(Vector3(step, 0, 0))
		else:
			body.position.x += step
	c["seen"].append(body.global_position.x)


## Returns the first frame whose path touches the rope (a bullet within the rope's radius plus its
## own of the rope's line), or -1.
func _bullet_first_pass(c: Dictionary) -> int:
	var rope: RopeSimulation = c["rope"]
	var touch: float = rope.radius + BULLET_RADIUS + CONTACT
	if absf(c["z"]) >= touch:
		return -1
	var seen: Array = c["seen"]
	for k in range(1, seen.size()):
		if seen[k] > c["line"] - touch and seen[k - 1] <= c["line"] - touch:
			return FIRE_FRAME + k
	return -1


## Runs [param cases] (bullet cases) for the frames a bullet needs.
func _fly(cases: Array) -> void:
	for f in FIRE_FRAME + 16:
		await physics_frame
		_frame = f
		for c: Dictionary in cases:
			_bullet_frame(c, f)
	await physics_frame


func test_bullets_cut_on_their_first_pass() -> void:
	var cases := []
	for kind in ["RigidBody3D", "Area3D", "CharacterBody3D"]:
		for speed: float in SPEEDS:
			for k in PHASES:
				cases.append(_bullet_case(cases.size(), kind, speed, (k + 0.5) / PHASES, 0.0))
	await _fly(cases)
	_report_first_pass(cases, "bullet", "speed", "m/s", _bullet_first_pass)
	for c: Dictionary in cases:
		var rope: RopeSimulation = c["rope"]
		var crossing := Vector3(c["line"], BULLET_Y, rope.global_position.z)
		var at: Vector3 = c["cut_at"]
		check(c["cut_frame"] < 0 or at.distance_to(crossing) <= rope.radius + 0.01,
			"a %s bullet at %s m/s cuts where it crossed the rope" % [c["kind"], c["speed"]], crossing, at)


## A blade case for the phantom test: the rope [param gap] m from the axle at angle 0, the blade at
## [param angle], turned (rigid: spun; else by a script) at [param rate] for [param frames] frames
## from frame 3, then stopped.
func _still_blade_case(i: int, kind: String, rate: float, gap: float, angle: float, frames: int) -> Dictionary:
	var origin := _cell(i)
	var c := {"kind": kind, "rate": rate, "frames": frames}
	_rope(c, origin + Vector3(gap, BLADE_Y + 0.6, 0), 1.2)
	var body: CollisionObject3D = _rigid() if kind == "RigidBody3D" else _animatable()
	_box(body, BLADE, Vector3(0.5 * BLADE.x, 0, 0))
	body.position = origin + Vector3(0, BLADE_Y, 0)
	body.rotation = Vector3(0, angle, 0)
	add(body)
	c["body"] = body
	c["angle"] = angle
	return c


## Turns [param c]'s blade for frame [param f] (see [method _still_blade_case]).
func _still_blade_frame(c: Dictionary, f: int) -> void:
	var body = c["body"]
	var rate: float = c["rate"]
	var on: bool = f >= 3 and f < 3 + c["frames"]
	if body is RigidBody3D:
		body.angular_velocity = Vector3(0, rate if on else 0.0, 0)
	elif on:
		c["angle"] += minf(rate, SPIN_UP * (f - 2) * DT) * DT
		body.rotation = Vector3(0, c["angle"], 0)


func test_no_phantom_cuts() -> void:
	var bullets := []
	var blades := []
	var r := 0.03
	var i := 0
	for kind in ["RigidBody3D", "Area3D", "CharacterBody3D"]:
		for speed: float in SPEEDS:
			for k in PHASES:
				var phase := (k + 0.5) / PHASES
				# Passing with 1 cm between the bullet and the rope.
				var beside := _bullet_case(i, kind, speed, phase, r + BULLET_RADIUS + 0.01)
				beside["what"] = "passing 1 cm beside"
				bullets.append(beside)
				# Stopping 1 cm short of the rope.
				var short := _bullet_case(i + 1, kind, speed, phase, 0.0, r + BULLET_RADIUS + 0.01)
				short["what"] = "stopping 1 cm short"
				bullets.append(short)
				i += 2
	# A 10 cm box resting 8 to 12 cm beside the rope, launched away.
	for speed in [20.0, 60.0, 1000.0]:
		for gap in [0.08, 0.10, 0.12]:
			var origin := _cell(i)
			i += 1
			var c := {"kind": "RigidBody3D box", "what": "launched away from %.2f m at %s m/s" % [gap, speed]}
			_rope(c, origin + Vector3(0, BULLET_Y + 0.5, 0), 1.5)
			var box := _rigid()
			_box(box, Vector3(0.1, 0.1, 0.1))
			box.position = origin + Vector3(r + gap + 0.05, BULLET_Y, 0)
			add(box)
			c["launch"] = [box, speed]
			blades.append(c)
	# Blades at rest 0.15 to 0.19 m clear of the rope, turned away from it, and stopped once they
	# turned 5 rad (short of coming round); and blades whose tip passes 1 cm outside the rope.
	for kind in ["RigidBody3D", "AnimatableBody3D"]:
		var rates := [30.0, 60.0, 100.0, 200.0] if kind == "RigidBody3D" else [30.0, 60.0, 100.0, 150.0]
		for rate: float in rates:
			for clear in [0.15, 0.16, 0.17, 0.18, 0.19]:
				var angle := asin((clear + 0.5 * BLADE.z + r) / 0.4)
				var c := _still_blade_case(i, kind, rate, 0.4, angle, floori(5.0 / (rate * DT)))
				c["what"] = "at rest %.2f m clear, turned away at %s rad/s" % [clear, rate]
				blades.append(c)
				i += 1
		for rate: float in RATES:
			var tip := Vector2(BLADE.x, 0.5 * BLADE.z).length()
			var c := _still_blade_case(i, kind, rate, tip + r + 0.01, 0.5, 1000)
			c["what"] = "its tip passing 1 cm outside the rope at %s rad/s" % rate
			blades.append(c)
			i += 1
	for f in 40:
		await physics_frame
		_frame = f
		for c: Dictionary in bullets:
			if f < FIRE_FRAME + 16:
				_bullet_frame(c, f)
		for c: Dictionary in blades:
			if c.has("launch"):
				# Launched, and stopped before it reaches another case's rope.
				if f == FIRE_FRAME:
					c["launch"][0].linear_velocity = Vector3(c["launch"][1], 0, 0)
				elif f == FIRE_FRAME + 4:
					c["launch"][0].linear_velocity = Vector3.ZERO
			else:
				_still_blade_frame(c, f)
	await physics_frame
	var phantoms := {}
	for c: Dictionary in bullets + blades:
		var label: String = "%s %s" % [c["kind"], c["what"].split(" at ")[0]]
		if not phantoms.has(label):
			phantoms[label] = [0, 0]
		phantoms[label][0] += int(c["cuts"] > 0)
		phantoms[label][1] += 1
		check(c["cuts"] == 0, "a %s %s never cuts" % [c["kind"], c["what"]], 0, c["cuts"])
	for label: String in phantoms:
		print("ROPE_CUT phantom cuts  %-60s %d of %d" % [label, phantoms[label][0], phantoms[label][1]])


func test_cut_along() -> void:
	var c := {}
	var rope := _rope(c, Vector3(0, 4.0, 0), 1.5)
	await physics_frames(5)
	var r := rope.radius
	check(not rope.cut_along(Vector3(-3, 3.5, r + 0.01), Vector3(3, 3.5, r + 0.01), 0.0), "a ray 1 cm beside the rope does not cut")
	check(not rope.cut_along(Vector3(-3, 3.5, 0), Vector3(-r - 0.01, 3.5, 0), 0.0), "a ray stopping 1 cm short does not cut")
	check(not rope.cut_along(Vector3(-3, 3.5, 0.1), Vector3(3, 3.5, 0.1), 0.1 - r - 0.01), "a thick shot 1 cm beside does not cut")
	check(not rope.cut_along(Vector3(NAN, 3.5, 0), Vector3(3, 3.5, 0), 0.0), "a path that is not finite does not cut")
	check(c["cuts"] == 0, "no rope_cut for a miss", 0, c["cuts"])
	var points := rope.get_active_point_count()
	check(rope.cut_along(Vector3(-3, 3.5, 0.05), Vector3(3, 3.5, 0.05), 0.05), "a thick shot through the rope cuts")
	check(c["cuts"] == 1, "rope_cut once", 1, c["cuts"])
	check_near(c["cut_at"], Vector3(0, 3.5, 0), r + 0.01, "cut where the shot crossed the rope")
	check(rope.get_active_point_count() < points, "the part beyond the cut came off", "< %d" % points, rope.get_active_point_count())
	check(rope.cut_along(Vector3(-3, 3.9, 0), Vector3(3, 3.9, 0), 0.0), "a second shot above the cut cuts what is left")
	check(c["cuts"] == 2, "rope_cut for each cut", 2, c["cuts"])
