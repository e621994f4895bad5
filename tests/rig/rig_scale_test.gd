# timeout: 120
extends EntwineTest
## Characters and bodies far from unit scale: no node may panic (a panic is an `ERROR:`) or write a
## non-finite pose. Godot's `Basis.orthonormalized()` asserts below a determinant of 1e-5, i.e. at a
## uniform scale of about 0.02, which an FBX armature imported at 0.01 has.

const CHARACTER := preload("res://characters/test_character.tscn")


## Every bone pose and the body's transform are finite.
func _finite(c: TestCharacter) -> bool:
	var sk := c.get_skeleton()
	if not (c.global_transform.origin.is_finite() and c.global_transform.basis.x.is_finite()):
		return false
	for i in sk.get_bone_count():
		var t := sk.get_bone_global_pose(i)
		if not (t.origin.is_finite() and t.basis.x.is_finite() and t.basis.y.is_finite() and t.basis.z.is_finite()):
			return false
	return true


## A pair holding hands, a wall-touching walker and a two-soldier squad, all under a node scaled
## by [param s], run for a second of walking.
func _run_scaled(s: Vector3) -> void:
	var world := add(Node3D.new()) as Node3D
	world.scale = s
	add_floor(world)
	add_box(Vector3(0.9, 1.0, -2.0), Vector3(0.2, 2.0, 6.0), 1, world)
	var room := HoldHandRoom.new()
	world.add_child(room)
	var chars: Array[TestCharacter] = []
	var comps: Array[HoldHandComponent] = []
	for i in 2:
		var c := CHARACTER.instantiate() as TestCharacter
		c.position = Vector3(-1.0 - i * 0.8, 0, 0)
		world.add_child(c)
		var comp := HoldHandComponent.new()
		c.add_child(comp)
		chars.append(c)
		comps.append(comp)
	var walker := CHARACTER.instantiate() as TestCharacter
	walker.position = Vector3(0.4, 0, 0)
	world.add_child(walker)
	var touch := EnvironmentInteractionStateMachine.new()
	walker.add_child(touch)
	chars.append(walker)
	var squad := FormationController.new()
	world.add_child(squad)
	squad.position = Vector3(3, 0, 0)
	for i in 2:
		var soldier := CHARACTER.instantiate() as TestCharacter
		soldier.position = Vector3(i * 0.8, 0, 0)
		squad.add_child(soldier)
		chars.append(soldier)
	await physics_frames(2)
	comps[0].request(comps[1])
	comps[1].accept()
	squad.dress()
	squad.salute()
	chars[0].move_input = Vector3(0, 0, -1)
	walker.move_input = Vector3(0, 0, -1)
	for frame in 60:
		await physics_frames(1)
		for c in chars:
			if not _finite(c):
				check(false, "every pose finite at scale %s (frame %d)" % [s, frame], "finite", c.name)
				return


func test_uniform_scale_0_01_never_panics_or_goes_non_finite() -> void:
	await _run_scaled(Vector3.ONE * 0.01)


func test_non_uniform_and_large_scales_never_panic() -> void:
	await _run_scaled(Vector3(0.01, 0.02, 0.005))
	await _run_scaled(Vector3.ONE * 100.0)
