# timeout: 400
extends EntwineTest
## Hostile values through every node: each exported float, int and vector property that a node's
## own class declares is set to NaN, ±inf, 0, negative and huge values, alone (a couple of physics
## frames each) and then all at once (two seconds), with zero-sized and degenerate shapes in the
## world. Nothing may panic (the harness fails a suite on any `ERROR:`), no transform a node
## writes — node transforms and skeleton bone poses — may hold a NaN or an infinity, and each
## property a node refuses or corrects is reported by exactly one warning naming the node's path and
## the property, however many bad values and frames it sees (see `_fuzz`).

const CHARACTER := preload("res://characters/test_character.tscn")
const ChainMesh := preload("res://demo/rope_chain_mesh.gd")

const BAD_FLOATS := [NAN, INF, -INF, 0.0, -1.0, -1e30, 1e30]
const BAD_INTS := [0, -1, -2147483648, 2147483647, 1000000]
const VECTOR_TYPES := [TYPE_VECTOR2, TYPE_VECTOR3, TYPE_VECTOR2I, TYPE_VECTOR3I]
## Warnings the scene itself provokes whatever the property (the degenerate shapes in the world),
## declared to the harness and not held against the property being set.
const SCENE_WARNINGS := [
	"is not supported by the rope and is ignored",
	# Godot's own, for the degenerate ConcavePolygonShape3D.
	"Too few vertices per face.",
]

## Values set per node class (for the closing note).
var _set_count := {}


## Returns the properties `object`'s own class declares and shows in the inspector, of a numeric or
## vector type.
func _numeric_properties(object: Object) -> Array:
	var out := []
	for p in ClassDB.class_get_property_list(object.get_class(), true):
		if p.usage & PROPERTY_USAGE_EDITOR == 0:
			continue
		if p.type == TYPE_FLOAT or p.type == TYPE_INT or p.type in VECTOR_TYPES:
			out.append(p)
	return out


## Returns the hostile values for property `p`. Enum and bit-mask properties get only values their
## Rust type can hold (godot-rust rejects others before the node sees them, with an ERROR).
func _bad_values(p: Dictionary) -> Array:
	var type: int = p.type
	if type == TYPE_INT and p.hint == PROPERTY_HINT_ENUM:
		var count: int = String(p.hint_string).split(",").size()
		return [0, count - 1]
	if type == TYPE_INT and p.hint in [PROPERTY_HINT_FLAGS, PROPERTY_HINT_LAYERS_3D_PHYSICS,
			PROPERTY_HINT_LAYERS_3D_RENDER, PROPERTY_HINT_LAYERS_2D_PHYSICS]:
		return [0, 1, 2147483647]
	var out := []
	match type:
		TYPE_FLOAT:
			out = BAD_FLOATS
		TYPE_INT:
			out = BAD_INTS
		TYPE_VECTOR2:
			for f in BAD_FLOATS:
				out.append(Vector2(f, f))
			out.append(Vector2(NAN, 1.0))
		TYPE_VECTOR3:
			for f in BAD_FLOATS:
				out.append(Vector3(f, f, f))
			out.append(Vector3(1.0, NAN, 0.0))
			out.append(Vector3(1e30, -1e30, 0.0))
		TYPE_VECTOR2I:
			for i in BAD_INTS:
				out.append(Vector2i(i, i))
		TYPE_VECTOR3I:
			for i in BAD_INTS:
				out.append(Vector3i(i, i, i))
	return out


## Returns the paths of nodes under `root` whose global transform, or (for skeletons) any bone's
## global pose, is not finite.
func _non_finite(root: Node) -> Array:
	var bad := []
	var stack: Array[Node] = [root]
	while not stack.is_empty():
		var n: Node = stack.pop_back()
		if n is Node3D and n.is_inside_tree() and not (n as Node3D).global_transform.is_finite():
			bad.append(str(n.get_path()))
		if n is Skeleton3D:
			var s := n as Skeleton3D
			for b in s.get_bone_count():
				if not s.get_bone_global_pose(b).is_finite() or not s.get_bone_pose(b).is_finite():
					bad.append("%s:%s" % [n.get_path(), s.get_bone_name(b)])
					break
		stack.append_array(n.get_children())
	return bad


## Checks that nothing under `root` holds a non-finite transform; returns whether it held.
func _check_finite(root: Node, what: String) -> bool:
	var bad := _non_finite(root)
	return check(bad.is_empty(), "no NaN or infinity in any transform after " + what, "none", bad)


## Returns whether [param v] has a component that is NaN or infinite.
func _non_finite_value(v: Variant) -> bool:
	match typeof(v):
		TYPE_FLOAT:
			return not is_finite(v)
		TYPE_VECTOR2:
			return not (v as Vector2).is_finite()
		TYPE_VECTOR3:
			return not (v as Vector3).is_finite()
	return false


## Returns the components of a number or vector as floats.
func _components(v: Variant) -> Array:
	match typeof(v):
		TYPE_FLOAT, TYPE_INT:
			return [float(v)]
		TYPE_VECTOR2, TYPE_VECTOR2I:
			return [float(v.x), float(v.y)]
		TYPE_VECTOR3, TYPE_VECTOR3I:
			return [float(v.x), float(v.y), float(v.z)]
	return []


## Returns whether [param v] lies outside the range property [param p] declares to the inspector
## (a bound without `or_greater` / `or_less` is the node's own contract).
func _out_of_range(p: Dictionary, v: Variant) -> bool:
	if p.hint != PROPERTY_HINT_RANGE:
		return false
	var parts: Array = []
	for part in String(p.hint_string).split(","):
		parts.append(part.strip_edges())
	if parts.size() < 2 or not parts[0].is_valid_float() or not parts[1].is_valid_float():
		return false
	var lo := float(parts[0])
	var hi := float(parts[1])
	for c in _components(v):
		if is_nan(c):
			continue
		if (c < lo and not parts.has("or_less")) or (c > hi and not parts.has("or_greater")):
			return true
	return false


## Returns whether a property read back as [param got] after being set to [param value] kept it
## (f32 rounding aside; NaN keeps NaN).
func _kept(value: Variant, got: Variant) -> bool:
	var a := _components(value)
	var b := _components(got)
	if a.size() != b.size():
		return false
	for i in a.size():
		var x: float = a[i]
		var y: float = b[i]
		if is_nan(x) or is_nan(y):
			if is_nan(x) != is_nan(y):
				return false
		elif not is_equal_approx(x, y):
			return false
	return true


## Returns a pattern matching [param property_name] as a whole word.
func _word(property_name: String) -> RegEx:
	return RegEx.create_from_string("(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % property_name)


## Returns the `WARNING:` messages among [param messages].
func _warnings_in(messages: PackedStringArray) -> Array:
	var out := []
	for m in messages:
		if m.begins_with("WARNING: "):
			out.append(m)
	return out


## Returns how many of the `WARNING:` lines among [param messages] name the property matched by
## [param word]; checks that each names the node's [param path] and that no other warning (apart
## from the scene's own, [const SCENE_WARNINGS]) appeared. [param what] says when.
func _count_named(messages: PackedStringArray, word: RegEx, path: String, what: String) -> int:
	var named := 0
	for w in _warnings_in(messages):
		if word.search(w):
			named += 1
			check(w.contains(path), "a warning %s names the node's path" % what, path, w)
		elif not SCENE_WARNINGS.any(func(t: String) -> bool: return w.contains(t)):
			check(false, "every warning %s names the property" % what, word.get_pattern(), w)
	return named


## Sets every numeric property of each of `targets` to each hostile value in turn (`frames_each`
## physics frames each, then its valid value again), then all of them at once for `seconds`;
## checks the transforms under `root` after every step, and the warnings:
## - each value a node refuses or corrects (NaN, infinity, outside the property's declared range,
##   read back changed, or warned about) gives exactly one warning naming the node's path and the
##   property, and restoring the valid value none;
## - the refused values set one after another, without a valid one between, warn once in all;
## - with every property hostile at once, each property warns at most once in `seconds`.
func _fuzz(targets: Array, root: Node, frames_each := 2, seconds := 2.0) -> void:
	var ok := true
	# Every warning about a fuzzed node is provoked on purpose (and asserted below).
	for target in targets:
		if is_instance_valid(target):
			expect_warning("%s '%s'" % [target.get_class(), target.get_path()])
	for text in SCENE_WARNINGS:
		expect_warning(text)
	for target in targets:
		if not is_instance_valid(target):
			continue  # freed by an earlier target's property (e.g. the controller rebuilt its agents)
		var props := _numeric_properties(target)
		var cls: String = target.get_class()
		var path := str(target.get_path())
		check(not props.is_empty(), "%s has numeric properties to fuzz" % cls)
		for p in props:
			if not is_instance_valid(target):
				break
			var what := "%s.%s" % [cls, p.name]
			var word := _word(p.name)
			var original: Variant = target.get(p.name)
			var refused := []
			for value in _bad_values(p):
				if not is_instance_valid(target):
					break
				var mark := logged_total()
				target.set(p.name, value)
				var got: Variant = target.get(p.name)
				_set_count[cls] = _set_count.get(cls, 0) + 1
				await physics_frames(frames_each)
				var named := _count_named(logged_since(mark), word, path,
					"while %s = %s" % [what, value])
				var known_bad := _non_finite_value(value) or _out_of_range(p, value) \
					or not _kept(value, got)
				check(named <= 1, "%s = %s warns at most once in %d frames" % [what, value,
					frames_each], "<= 1", named)
				if known_bad:
					check(named >= 1, "%s = %s (refused, corrected or out of range) warns" % [what,
						value], 1, named)
				if known_bad or named > 0:
					refused.append(value)
				if ok:
					ok = _check_finite(root, "%s = %s" % [what, value])
				if not is_instance_valid(target):
					break
				mark = logged_total()
				target.set(p.name, original)
				await physics_frames(frames_each)
				var after := _count_named(logged_since(mark), word, path,
					"after %s was restored" % what)
				check(after == 0, "%s restored to its valid value %s warns no more" % [what,
					original], 0, after)
			# The refused values one after another: one warning in all.
			if refused.size() > 1 and is_instance_valid(target):
				var mark := logged_total()
				for value in refused:
					target.set(p.name, value)
					await physics_frames(frames_each)
				var named := _count_named(logged_since(mark), word, path,
					"while %s = %s in a row" % [what, refused])
				check(named <= 1, "%s = %s in a row warns at most once" % [what, refused], "<= 1",
					named)
				target.set(p.name, original)
				await physics_frames(frames_each)
	await physics_frames(1)
	# Everything hostile at once: still at most one warning per property.
	var rng := RandomNumberGenerator.new()
	rng.seed = 19
	var mark := logged_total()
	var hostile := []  # [target, property name]
	for target in targets:
		if not is_instance_valid(target):
			continue
		for p in _numeric_properties(target):
			var values := _bad_values(p)
			target.set(p.name, values[rng.randi() % values.size()])
			hostile.append([target, p.name])
	var ticks := int(seconds * Engine.physics_ticks_per_second)
	for i in ticks:
		await physics_frame
		if ok and i % 15 == 14:
			ok = _check_finite(root, "every property hostile at once (%d frames)" % (i + 1))
	_check_finite(root, "%s s with every property hostile" % seconds)
	var warnings := _warnings_in(logged_since(mark))
	for entry in hostile:
		if not is_instance_valid(entry[0]):
			continue
		var word := _word(entry[1])
		var path := str((entry[0] as Node).get_path())
		var count := 0
		for w in warnings:
			if word.search(w) and w.contains(path):
				count += 1
		check(count <= 1, "%s.%s warns at most once in %s s with every property hostile" % [
			(entry[0] as Node).get_class(), entry[1], seconds], "<= 1", count)


## Zero-sized, degenerate and NaN-sized shapes on `layer` around the origin.
func _degenerate_shapes(parent: Node, layer: int) -> void:
	var shapes: Array[Shape3D] = []
	var box := BoxShape3D.new()
	box.size = Vector3.ZERO
	shapes.append(box)
	var sphere := SphereShape3D.new()
	sphere.radius = 0.0
	shapes.append(sphere)
	var cylinder := CylinderShape3D.new()
	cylinder.height = 0.0
	cylinder.radius = 0.0
	shapes.append(cylinder)
	var capsule := CapsuleShape3D.new()
	capsule.radius = 0.0
	capsule.height = 0.0
	shapes.append(capsule)
	var convex := ConvexPolygonShape3D.new()
	convex.points = PackedVector3Array([Vector3.ZERO, Vector3.ZERO, Vector3(1e-7, 0, 0)])
	shapes.append(convex)
	var thin := ConvexPolygonShape3D.new()
	thin.points = PackedVector3Array([Vector3(0, 0, 0), Vector3(0.01, 0, 0), Vector3(0, 0.01, 0),
		Vector3(0, 0, 1000.0)])
	shapes.append(thin)
	var trimesh := ConcavePolygonShape3D.new()
	trimesh.set_faces(PackedVector3Array([Vector3.ZERO, Vector3.ZERO, Vector3.ZERO]))
	shapes.append(trimesh)
	var k := 0
	for shape in shapes:
		var body := StaticBody3D.new()
		body.collision_layer = layer
		body.collision_mask = 0
		body.position = Vector3((k % 4) * 0.6 - 0.9, 1.2, -0.5 - (k / 4) * 0.6)
		var collision := CollisionShape3D.new()
		collision.shape = shape
		body.add_child(collision)
		parent.add_child(body)
		k += 1


func test_limb_ik() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	var character := CHARACTER.instantiate() as TestCharacter
	world.add_child(character)
	var target := Node3D.new()
	target.position = Vector3(-0.3, 1.2, -0.4)
	world.add_child(target)
	var ik := EntwineLimbIK.new()
	character.get_skeleton().add_child(ik)
	ik.target_node = ik.get_path_to(target)
	await physics_frames(5)
	await _fuzz([ik], world)
	# A target at a hostile place too.
	for p in [Vector3(NAN, 0, 0), Vector3(1e30, 0, 0), Vector3(INF, -INF, 0)]:
		target.position = p
		await physics_frames(3)
		target.position = Vector3(-0.3, 1.2, -0.4)
		await physics_frames(1)
	_check_finite(world, "hostile target positions")


func test_hold_hand() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	var room := EntwineHoldHandRoom.new()
	world.add_child(room)
	var comps: Array = []
	for i in 2:
		var c := CHARACTER.instantiate() as TestCharacter
		c.name = "Character%d" % i
		c.position = Vector3(i * 1.5, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		comp.name = "HoldHand"
		c.add_child(comp)
		comps.append(comp)
	await physics_frames(2)
	check(comps[0].request(comps[1]), "request() accepted by the room")
	check(comps[1].accept(), "accept() accepted by the room")
	check(await wait_until(func() -> bool:
		return comps[0].get_phase() == HoldHandComponent.PHASE_ACTIVE, 2.0), "the pair becomes Active")
	(comps[0].get_parent() as TestCharacter).move_input = Vector3.FORWARD
	await _fuzz([comps[0], comps[1], room], world)


func test_rope_simulation() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	_degenerate_shapes(world, 1)
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 2, 0)
	world.add_child(anchor)
	var rope := RopeSimulation.new()
	world.add_child(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	var body := RigidBody3D.new()
	var shape := CollisionShape3D.new()
	shape.shape = SphereShape3D.new()
	body.add_child(shape)
	body.position = Vector3(0, 0.5, 0)
	world.add_child(body)
	rope.end_node = rope.get_path_to(body)
	await physics_frames(5)
	await _fuzz([rope], world)


func test_rope_bone_chain() -> void:
	var world := add(Node3D.new()) as Node3D
	var anchor := Node3D.new()
	anchor.position = Vector3(0, 2.2, 0)
	world.add_child(anchor)
	var rope := RopeSimulation.new()
	world.add_child(rope)
	rope.anchor_node = rope.get_path_to(anchor)
	rope.collision_mask = 0
	rope.segment_length = 0.1
	rope.point_count = 12
	rope.reset_rope()
	var skeleton := Skeleton3D.new()
	anchor.add_child(skeleton)
	var indices := ChainMesh.add_chain(skeleton, "Bone", 8, -1, Vector3.ZERO, Vector3.DOWN, 0.1)
	var chain := EntwineRopeBoneChain.new()
	skeleton.add_child(chain)
	chain.rope = rope
	chain.root_bone = "Bone1"
	chain.tip_bone = "Bone8"
	check(indices.size() == 8, "eight bones", 8, indices.size())
	await physics_frames(5)
	await _fuzz([chain, rope], world)


func test_environment_interaction() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world, 40.0)
	const WALLS := 1 << 4
	var wall := add_box(Vector3(0.9, 1.0, -2.0), Vector3(0.2, 2.0, 8.0), WALLS)
	wall.collision_mask = 0
	_degenerate_shapes(world, WALLS)
	var character := CHARACTER.instantiate() as TestCharacter
	character.position = Vector3(0, 0, 2)
	world.add_child(character)
	var node := EnvironmentInteractionStateMachine.new()
	node.interactable_mask = WALLS
	character.add_child(node)
	character.move_input = Vector3.FORWARD
	node.move_input = Vector3.FORWARD
	await physics_frames(10)
	await _fuzz([node], world)


func test_formation_and_bearing() -> void:
	var world := add(Node3D.new()) as Node3D
	add_floor(world)
	var squad := FormationController.new()
	squad.add_formation("ranks", "(shape: Column(files: 2), spacing: 1.2)")
	squad.formation = "ranks"
	for i in 4:
		var soldier := CHARACTER.instantiate() as TestCharacter
		soldier.name = "Soldier%d" % i
		soldier.position = Vector3((i % 2) * 1.2, 0, (i / 2) * 1.2)
		soldier.frozen = true
		soldier.drive_animation = false
		squad.add_child(soldier)
	world.add_child(squad)
	await physics_frames(5)
	squad.dress()
	var bearings := world.find_children("*", "EntwineSoldierBearing", true, false)
	check(not bearings.is_empty(), "the soldiers have an EntwineSoldierBearing", "> 0", bearings.size())
	# The bearing first: the controller's own properties may rebuild its agents (and bearings).
	var targets: Array = []
	if not bearings.is_empty():
		targets.append(bearings[0])
	targets.append(squad)
	await _fuzz(targets, world)
	print("bad input: values set per class ", _set_count)
