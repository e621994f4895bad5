# timeout: 300
extends EntwineTest
## EnvironmentInteractionStateMachine in a level's corridors: the walking test character on its
## defaults goes down corridors 1.0, 1.4 and 2.0 m wide, straight and bending. It touches one wall
## and keeps to it (or touches none), never uses both hands, never switches sides, and never
## approaches a wall it cannot reach (no Approach that times out); with touch_persistent the hand
## stays on the wall along the corridor instead of letting go every half second.

const CHARACTER := preload("res://characters/test_character.tscn")
## Walls live on physics layer 5; the floor stays on layer 1.
const WALL_LAYER := 1 << 4
## Each leg of a corridor, metres.
const LEG := 7.0
## The bend of a bending corridor's second leg, to the left.
const BEND := deg_to_rad(25.0)

var _character: TestCharacter
var _node: EnvironmentInteractionStateMachine


## A corridor `width` wide (between the walls' faces) from (0, 0, 4) along −Z for LEG metres,
## then, when `bending`, LEG metres more turned BEND to the left. Returns the legs' directions.
func _corridor(width: float, bending: bool) -> Array[Vector3]:
	add_floor(null, 60.0)
	var legs: Array[Vector3] = [Vector3(0, 0, -1)]
	legs.append(Vector3(-sin(BEND), 0, -cos(BEND)) if bending else Vector3(0, 0, -1))
	var start := Vector3(0, 0, 4)
	for d in legs:
		var across := Vector3(d.z, 0, -d.x)
		for side in [-1.0, 1.0]:
			# The outer wall (right of a left bend) runs half a metre past its leg's ends, so the
			# bend leaves no gap; the inner walls meet at the inner corner.
			var extra := 1.0 if side < 0.0 else 0.0
			var wall := add_box(start + d * LEG * 0.5 + across * side * (width * 0.5 + 0.1) + Vector3(0, 1.5, 0),
				Vector3(0.2, 3.0, LEG + extra), WALL_LAYER)
			wall.rotation.y = atan2(d.x, d.z)
			wall.collision_mask = 0
		start += d * LEG
	return legs


## The character at the corridor's start walking down it, with the node on its defaults.
func _walker(persistent := false) -> void:
	_character = CHARACTER.instantiate() as TestCharacter
	_character.position = Vector3(0, 0, 4)
	add(_character)
	_node = EnvironmentInteractionStateMachine.new()
	_node.interactable_mask = WALL_LAYER
	_node.touch_persistent = persistent
	_character.add_child(_node)


## Walks the corridor to its end and returns what happened: touches, their sides, Approach
## entries, approach timeouts, side switches, frames with both hands reaching, frames touching
## after the first touch and frames in all after it, and touch_ended count. A side switch is a
## hand reaching out (entering Approach) that is not the hand that reached before.
func _walk(legs: Array[Vector3]) -> Dictionary:
	var out := {"touches": 0, "sides": {}, "approaches": 0, "timeouts": 0, "switches": 0, "both": 0,
		"touching": 0, "after_first": 0, "ends": 0, "resets": []}
	_node.touch_started.connect(func(side: int, _p: Vector3, _n: Vector3) -> void:
		out["touches"] += 1
		out["sides"][side] = true)
	_node.touch_ended.connect(func(_side: int) -> void: out["ends"] += 1)
	var reached := {"last": -1}
	_node.state_changed.connect(func(_from: int, to: int) -> void:
		if to == EnvironmentInteractionStateMachine.STATE_APPROACH:
			out["approaches"] += 1
			# The hand that reaches out: a switch is a reach with the other hand than the last.
			var side := _node.get_current_side()
			out["sides"][side] = true
			if reached["last"] >= 0 and side != reached["last"]:
				out["switches"] += 1
			reached["last"] = side
		elif to == EnvironmentInteractionStateMachine.STATE_RESET:
			out["resets"].append(_node.get_reset_reason())
			if _node.get_reset_reason() == "approach_timeout":
				out["timeouts"] += 1)
	var leg := 0
	var start := Vector3(0, 0, 4)
	var bend := start + legs[0] * LEG
	for frame in int((2.0 * LEG + 1.0) / _character.move_speed * 60.0):
		if leg == 0 and (_character.global_position - bend).dot(legs[0]) > 0.0:
			leg = 1
		_character.move_input = legs[leg]
		_node.move_input = legs[leg]
		await physics_frame
		if _node.get_hand_weight(0) > 0.02 and _node.get_hand_weight(1) > 0.02:
			out["both"] += 1
		if out["touches"] > 0:
			out["after_first"] += 1
			if _node.get_state() == EnvironmentInteractionStateMachine.STATE_TOUCH:
				out["touching"] += 1
	_character.move_input = Vector3.ZERO
	_node.move_input = Vector3.ZERO
	return out


func _report(label: String, r: Dictionary) -> void:
	var share: float = 100.0 * r["touching"] / maxf(1.0, r["after_first"])
	print("corridor %s: touches %d (hands used %s), approaches %d, approach timeouts %d, side switches %d, frames with both hands %d, touching %.0f %% of the walk after the first touch; resets %s" % [
		label, r["touches"], r["sides"].keys(), r["approaches"], r["timeouts"], r["switches"], r["both"], share, r["resets"]])


func _check_corridor(width: float, bending: bool) -> void:
	var label := "%.1f m %s" % [width, "bending" if bending else "straight"]
	var legs := _corridor(width, bending)
	_walker()
	var r := await _walk(legs)
	_report(label, r)
	check(r["timeouts"] == 0, label + ": no wall out of reach is approached (no approach timeout)", 0, r["timeouts"])
	check(r["both"] == 0, label + ": never both hands", 0, r["both"])
	check(r["switches"] == 0, label + ": never switches sides", 0, r["switches"])
	check(r["sides"].size() <= 1, label + ": one hand reaches, for one wall", "<= 1", r["sides"].size())
	if width <= 1.0:
		# Walls 0.5 m from the middle: 0.3 m from a shoulder, well within reach.
		check(r["touches"] >= 1, label + ": touches the wall within reach", ">= 1", r["touches"])
	if width >= 2.0:
		# Walls 1 m from the middle: 0.8 m from a shoulder, beyond the 0.5 m rise distance.
		check(r["approaches"] == 0 and r["touches"] == 0, label + ": never reaches for walls out of reach", 0,
			r["approaches"] + r["touches"])


func test_a_1_0_m_corridor_straight() -> void:
	await _check_corridor(1.0, false)


func test_a_1_0_m_corridor_bending() -> void:
	await _check_corridor(1.0, true)


func test_a_1_4_m_corridor_straight() -> void:
	await _check_corridor(1.4, false)


func test_a_1_4_m_corridor_bending() -> void:
	await _check_corridor(1.4, true)


func test_a_2_0_m_corridor_straight() -> void:
	await _check_corridor(2.0, false)


func test_a_2_0_m_corridor_bending() -> void:
	await _check_corridor(2.0, true)


func _check_persistent(bending: bool) -> void:
	var label := "1.0 m %s, touch_persistent" % ("bending" if bending else "straight")
	var legs := _corridor(1.0, bending)
	_walker(true)
	var r := await _walk(legs)
	_report(label, r)
	var share := float(r["touching"]) / maxf(1.0, r["after_first"])
	check(r["touches"] >= 1, label + ": touches the wall", ">= 1", r["touches"])
	check(r["touches"] == 1, label + ": one touch along the whole wall (its two pieces included)", 1, r["touches"])
	check(share >= 0.8, label + ": the hand stays on the wall for the walk", ">= 0.8", share)
	check(r["switches"] == 0 and r["both"] == 0, label + ": one hand, one wall", 0, r["switches"] + r["both"])


func test_a_persistent_touch_stays_on_a_straight_wall() -> void:
	await _check_persistent(false)


func test_a_persistent_touch_stays_on_a_bending_wall() -> void:
	await _check_persistent(true)
