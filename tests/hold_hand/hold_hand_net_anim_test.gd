# processes: server client client client
# timeout: 120
# retries: 2
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The pair's animation over real ENet: every character gets a locomotion tree built here (a
## BlendSpace2D "ground" inside a state machine "loco" with two more states, a OneShot "shot" over
## it, and a TimeScale "speed"). A (the initiator) moves its blend position along a curve, changes
## its time scale, travels between the states, fires and aborts the one-shot. Every client records
## A's and B's animation each physics frame with the pair's view time on the shared clock; each
## remote view (B the recipient, C an onlooker) is compared with A's own record at that time, and
## on A's own peer B (the local partner) is compared with A in the same frame.
##
## Asserted: every state-machine node and one-shot change of A is shown within one animation
## interval (plus two physics frames) of A's time of change, on every view and for both characters;
## the blend position and time scale are within 0.05 of A's at the same view time (95th
## percentile) and 0.15 at worst; the play position in the state within 0.06 s at the 95th
## percentile once the state is shown. Then the same for a rig without an AnimationTree: every
## character's tree is removed, A leads B again and plays, switches and seeks its AnimationPlayer's
## animations; the animation is shown within one interval and its position within 0.06 s (p95).
##
## It runs again up to twice when it fails (`# retries: 2`; a failed try is printed as FLAKY and its
## logs kept): the tree play position is near its limit. It retried once until one evening when 3
## of its 9 tries failed (an onlooker's p95 0.082 and 0.101 s, the recipient's 0.067 s), two of them
## in a row in one full run; four runs of the suite alone passed at their first try in between. With each remote tree advanced on the view
## clock, an onlooker's p95 was 0.022-0.050 s in most tries and 0.061 and 0.080 s in 2 of about 11
## (median 0.008-0.013 s); with the trees running on their own it was 0.016-0.039 s, and 0.080 and
## 0.177 s in 2 of about 14 (the tree cannot be sought, only run ahead, so a tree ahead of the view
## stays ahead until its cycle comes round). The suite now prints the 12 largest play-position
## errors of each view with when they came. In five passing tries on a loaded machine (two busy
## loops beside the suite) the errors above 0.06 s came in two groups: in every remote view, four
## to seven frames of 0.10-0.29 s about 0.55 s into the show, before A's first change, falling by
## about 0.05 s a frame; in most, also one or two frames of 0.07-0.09 s right after the window left
## out after a state change (0.20-0.23 s after it: the replica entered the state late and caught up
## only once its cross-fade was over). A try fails with nine such frames of about 175.
## Catching up through the cross-fade as well was tried and dropped: in six tries on the loaded
## machine it took the second group away (no error above 0.021 s after a change; p95 0.012-0.021 s,
## against 0.015-0.034 s), but on the quiet machine it failed both tries of a run, with errors of
## 0.3-0.45 s from 0.2 to 0.9 s after a change (not understood). The first group is where the blend
## position crosses from the triangle of the (0, -1) point into that of (1, 0): this tree's blend
## space has no sync, so each point's animation keeps its own time, which is not sent. With `sync`
## on (tried, not kept: it is the harder case that is tested) it was gone in three tries of three.

const STATES := ["ground", "wave", "rest"]
const GROUND_POINTS := [Vector2(0, 0), Vector2(0, -1), Vector2(1, 0), Vector2(-1, 0), Vector2(0, 1)]
## A's script: seconds after the start of the show, and what it does then.
const SCRIPT := [[1.0, "travel", "wave"], [2.0, "fire"], [2.6, "abort"], [3.0, "travel", "rest"],
	[4.0, "travel", "ground"], [4.5, "fire"], [6.0, "end"]]

## Per frame: view time, then per character (A, B) blend x, blend y, scale, state index, one-shot
## active, play position, state length.
var _anim_times := PackedFloat64Array()
## Each character's tree's process mode before any pair.
var _tree_modes := {}
var _anim := PackedFloat32Array()


func condition() -> String:
	return "clean, animation"


## A locomotion tree: output <- speed (TimeScale) <- shot (OneShot: loco, walk) <- loco (state
## machine: ground (BlendSpace2D idle/walk), wave (walk), rest (idle)).
static func locomotion_tree() -> AnimationNodeBlendTree:
	var bt := AnimationNodeBlendTree.new()
	var sm := AnimationNodeStateMachine.new()
	var ground := AnimationNodeBlendSpace2D.new()
	for i in GROUND_POINTS.size():
		var a := AnimationNodeAnimation.new()
		a.animation = &"idle" if i == 0 else &"walk"
		ground.add_blend_point(a, GROUND_POINTS[i])
	var wave := AnimationNodeAnimation.new()
	wave.animation = &"walk"
	var rest := AnimationNodeAnimation.new()
	rest.animation = &"idle"
	sm.add_node(&"ground", ground, Vector2(200, 0))
	sm.add_node(&"wave", wave, Vector2(400, 0))
	sm.add_node(&"rest", rest, Vector2(400, 200))
	var auto := AnimationNodeStateMachineTransition.new()
	auto.advance_mode = AnimationNodeStateMachineTransition.ADVANCE_MODE_AUTO
	sm.add_transition(&"Start", &"ground", auto)
	for pair in [["ground", "wave"], ["wave", "ground"], ["ground", "rest"], ["rest", "ground"],
			["wave", "rest"], ["rest", "wave"]]:
		var t := AnimationNodeStateMachineTransition.new()
		t.xfade_time = 0.1
		sm.add_transition(StringName(pair[0]), StringName(pair[1]), t)
	var shot := AnimationNodeOneShot.new()
	shot.fadein_time = 0.05
	shot.fadeout_time = 0.05
	var shot_anim := AnimationNodeAnimation.new()
	shot_anim.animation = &"walk"
	var speed := AnimationNodeTimeScale.new()
	bt.add_node(&"loco", sm, Vector2(0, 0))
	bt.add_node(&"shot_anim", shot_anim, Vector2(0, 200))
	bt.add_node(&"shot", shot, Vector2(300, 0))
	bt.add_node(&"speed", speed, Vector2(500, 0))
	bt.connect_node(&"shot", 0, &"loco")
	bt.connect_node(&"shot", 1, &"shot_anim")
	bt.connect_node(&"speed", 0, &"shot")
	bt.connect_node(&"output", 0, &"speed")
	return bt


func _characters(world: Node3D, ids: Array) -> void:
	await super(world, ids)
	for id in _chars:
		var c: TestCharacter = _chars[id]
		c.drive_animation = false
		c.animation_tree.tree_root = locomotion_tree()
		c.animation_tree.set("parameters/speed/scale", 1.0)


func _blend_at(s: float) -> Vector2:
	return Vector2(sin(1.7 * s), -cos(1.1 * s)) * 0.9


## One character's animation: blend x, blend y, time scale, state index, one-shot active, play
## position and length of the state.
func _anim_of(c: TestCharacter) -> Array:
	var tree := c.animation_tree
	var blend: Vector2 = tree.get("parameters/loco/ground/blend_position")
	var pb: AnimationNodeStateMachinePlayback = tree.get("parameters/loco/playback")
	return [blend.x, blend.y, float(tree.get("parameters/speed/scale")),
		float(STATES.find(String(pb.get_current_node()))), 1.0 if tree.get("parameters/shot/active") else 0.0,
		pb.get_current_play_position(), pb.get_current_length()]


func _record(a: int, b: int) -> void:
	var t: float = _comps[a].get_view_time()
	if t <= 0.0 or (not _anim_times.is_empty() and t == _anim_times[_anim_times.size() - 1]):
		return
	_anim_times.append(t)
	_anim.append_array(PackedFloat32Array(_anim_of(_chars[a]) + _anim_of(_chars[b])))


func test_server_decides_and_forwards() -> void:
	var world := _base()
	check(_listen(), "server listens")
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return get_multiplayer().get_peers().size() == peers - 1, 20.0),
		"every client connected")
	var ids := _clients()
	await _characters(world, ids)
	check(await wait_until(func() -> bool: return _paired(ids[0], ids[1]), 30.0), "the server holds A leading B")
	check(await wait_until(func() -> bool: return _done() >= peers - 1, 100.0), "the clients finished")
	await create_timer(0.3).timeout
	get_multiplayer().multiplayer_peer = null
	_peer.close()


func test_client_pair_over_the_network() -> void:
	var world := _base()
	check(_dial(), "client dials")
	get_multiplayer().multiplayer_peer = _peer
	check(await wait_until(func() -> bool: return _clients_dialling().size() == peers - 1, 20.0), "every client known")
	var ids := _clients()
	await _characters(world, ids)
	for id in _chars:
		_tree_modes[id] = _chars[id].animation_tree.callback_mode_process
	var me := get_multiplayer().get_unique_id()
	var a: int = ids[0]
	var b: int = ids[1]
	if me == b:
		_comps[b].request_received.connect(func(_from: int) -> void: _comps[b].accept.call_deferred())
	check(await wait_until(func() -> bool: return _clock.is_synced(), 10.0), "the shared clock is synced")
	await create_timer(1.0).timeout
	if me == a:
		check(_comps[a].request(_comps[b]), "A asks B")
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0), "every client sees A lead B")
	if me == a:
		# Where the show's curves start, before the start glide.
		_chars[a].animation_tree.set("parameters/loco/ground/blend_position", _blend_at(0.0))
	await _barrier("paired")
	await create_timer(1.5).timeout  # the start glide

	var interval: float = _comps[a].animation_interval
	var show_start := 0.0
	var sent_before: int = _comps[a].get_network_stats()["sent_bytes"]
	if me == a:
		show_start = _clock.get_server_time()
		_probe.share("show", show_start)
		var step := 0
		var tree: AnimationTree = _chars[a].animation_tree
		var pb: AnimationNodeStateMachinePlayback = tree.get("parameters/loco/playback")
		while true:
			# Recorded before this frame's changes, as the partner here has seen them.
			_record(a, b)
			var s := _clock.get_server_time() - show_start
			tree.set("parameters/loco/ground/blend_position", _blend_at(s))
			tree.set("parameters/speed/scale", 1.0 + 0.4 * sin(0.9 * s))
			if s >= SCRIPT[step][0]:
				var what: String = SCRIPT[step][1]
				if what == "end":
					break
				elif what == "travel":
					pb.travel(StringName(SCRIPT[step][2]))
				elif what == "fire":
					tree.set("parameters/shot/request", AnimationNodeOneShot.ONE_SHOT_REQUEST_FIRE)
				elif what == "abort":
					tree.set("parameters/shot/request", AnimationNodeOneShot.ONE_SHOT_REQUEST_ABORT)
				step += 1
			await physics_frame
		var seconds: float = _clock.get_server_time() - show_start
		var sent: int = _comps[a].get_network_stats()["sent_bytes"] - sent_before
		print("HOLD_HAND_NET_ANIM: A sent %.0f B/s of frames (payload) during the show" % (sent / seconds))
		_probe.share("anim_record", {"t": _anim_times, "v": _anim})
	else:
		check(await wait_until(func() -> bool: return _probe.has("show"), 20.0), "A starts its show")
		show_start = _probe.values["show"]
		while _anim_times.is_empty() or _anim_times[_anim_times.size() - 1] < show_start + SCRIPT[-1][0]:
			_record(a, b)
			await physics_frame
			if _clock.get_server_time() > show_start + SCRIPT[-1][0] + 5.0:
				break
	check(await wait_until(func() -> bool: return _probe.has("anim_record"), 20.0), "A's record arrives")
	var truth: Dictionary = _probe.values["anim_record"]
	if me == a:
		_compare_anim("A's own peer, B mirrored", truth, 1, interval)
	else:
		var who := "recipient" if me == b else "onlooker"
		_compare_anim(who + ", A", truth, 0, interval)
		_compare_anim(who + ", B", truth, 1, interval)
	await _player_only(me, a, b, interval)
	await _leave(me)


## The same with an AnimationPlayer-only rig: the trees are removed everywhere, A leads B again and
## plays, switches and seeks animations; every view is compared with A's own record.
func _player_only(me: int, a: int, b: int, interval: float) -> void:
	# While the pair is shown, a remote peer's replicas are advanced on the view clock by the
	# component (their trees in manual mode); the initiator's own and its local partner's run on
	# their own. When the pair ends, every tree has its own mode back.
	const MANUAL := AnimationMixer.ANIMATION_CALLBACK_MODE_PROCESS_MANUAL
	for id in [a, b]:
		var mode: int = _chars[id].animation_tree.callback_mode_process
		check((mode == MANUAL) == (me != a), "%s's tree is advanced by the pair on a remote peer only" % ("A" if id == a else "B"),
			"manual" if me != a else "its own", mode)
	await _barrier("tree_checked")
	if me == a:
		check(_comps[a].cancel(), "A ends the pair")
	check(await wait_until(func() -> bool: return _unpaired(a, b), 10.0), "the pair ended everywhere")
	await physics_frames(2)
	for id in [a, b]:
		check(_chars[id].animation_tree.callback_mode_process == _tree_modes[id],
			"the tree has its own process mode back when the pair ends", _tree_modes[id],
			_chars[id].animation_tree.callback_mode_process)
	for id in _chars:
		var c: TestCharacter = _chars[id]
		c.animation_tree.free()
		c.animation_tree = null
	await _barrier("trees_removed")
	if me == a:
		_chars[a].animation_player.play(&"idle")
		check(_comps[a].request(_comps[b]), "A asks again")
	check(await wait_until(func() -> bool: return _paired(a, b), 20.0), "paired again, without trees")
	await _barrier("paired_without_trees")
	await create_timer(1.5).timeout
	var times := PackedFloat64Array()
	var rec := PackedFloat32Array()
	var names: PackedStringArray = _chars[a].animation_player.get_animation_list()
	# A's script: [seconds, animation, seek to (or -1)].
	var plan := [[0.5, "walk", -1.0], [1.5, "walk", 0.3], [2.5, "idle", -1.0], [3.5, "", -1.0]]
	var start := 0.0
	if me == a:
		start = _clock.get_server_time()
		_probe.share("player_show", start)
	else:
		check(await wait_until(func() -> bool: return _probe.has("player_show"), 20.0), "A starts its player show")
		start = _probe.values["player_show"]
	var step := 0
	var events := []
	while true:
		var t: float = _comps[a].get_view_time()
		if t > 0.0 and (times.is_empty() or t != times[times.size() - 1]):
			times.append(t)
			for id in [a, b]:
				var p: AnimationPlayer = _chars[id].animation_player
				rec.append_array(PackedFloat32Array([float(names.find(p.current_animation)),
					p.current_animation_position, p.current_animation_length]))
		var s := _clock.get_server_time() - start
		if me == a and step < plan.size() and s >= plan[step][0]:
			if plan[step][1] == "":
				break
			var p: AnimationPlayer = _chars[a].animation_player
			if p.current_animation != plan[step][1]:
				p.play(StringName(plan[step][1]))
			if plan[step][2] >= 0.0:
				p.seek(plan[step][2], true)
			events.append(_clock.get_server_time())
			step += 1
		if me != a and (times.size() > 0 and times[times.size() - 1] > start + plan[-1][0] or s > plan[-1][0] + 5.0):
			break
		await physics_frame
	if me == a:
		_probe.share("player_record", {"t": times, "v": rec, "e": events})
	check(await wait_until(func() -> bool: return _probe.has("player_record"), 20.0), "A's player record arrives")
	var truth: Dictionary = _probe.values["player_record"]
	var labels := ["A", "B"] if me != a else ["B"]
	for label in labels:
		var which := 0 if label == "A" else 1
		var who := "recipient" if me == b else ("onlooker" if me != a else "A's own peer")
		_compare_player("%s, %s (AnimationPlayer only)" % [who, label], truth, times, rec, which, interval)


## Compares character `which` of a player record (`times`, `rec`: animation index, position, length
## per character) with A's own.
func _compare_player(label: String, truth: Dictionary, times: PackedFloat64Array, rec: PackedFloat32Array,
		which: int, interval: float) -> void:
	var tt: PackedFloat64Array = truth["t"]
	var tv: PackedFloat32Array = truth["v"]
	var events: Array = truth["e"]
	check(tt.size() > 60 and times.size() > 60, "%s: both records have frames" % label, "> 60", [tt.size(), times.size()])
	if tt.size() < 2 or times.is_empty():
		return
	var frame := 1.0 / Engine.physics_ticks_per_second
	var late_limit := interval + 2.0 * frame
	var changes := 0
	for i in range(1, tt.size()):
		if tv[i * 6] != tv[(i - 1) * 6]:
			changes += 1
			var shown := INF
			for k in times.size():
				if times[k] >= tt[i] - frame and rec[k * 6 + which * 3] == tv[i * 6]:
					shown = times[k]
					break
			check(shown - tt[i] <= late_limit, "%s: A's switch to animation %d at %.2f shown within one animation interval" % [
				label, int(tv[i * 6]), tt[i]], "<= %.3f s" % late_limit, shown - tt[i])
	check(changes >= 2, "%s: A switched animations" % label, ">= 2", changes)
	var err := PackedFloat32Array()
	var j := 0
	for k in times.size():
		var t := times[k]
		while j + 1 < tt.size() and tt[j + 1] <= t:
			j += 1
		if t < tt[0] or j + 1 >= tt.size():
			continue
		var settled := true
		for e in events:
			if t >= e - frame and t < e + interval + 0.1:
				settled = false
		var mine := k * 6 + which * 3
		if not settled or rec[mine] != tv[j * 6] or tv[(j + 1) * 6] != tv[j * 6]:
			continue
		var a0: float = tv[j * 6 + 1]
		var a1: float = tv[(j + 1) * 6 + 1]
		var length: float = tv[j * 6 + 2]
		if a1 < a0:
			a1 += length  # wrapped
		var want := fposmod(lerpf(a0, a1, (t - tt[j]) / maxf(tt[j + 1] - tt[j], 1e-6)), maxf(length, 1e-6))
		var d := absf(rec[mine + 1] - want)
		err.append(minf(d, absf(length - d)) if length > 0.0 else d)
	var st := _stats(err)
	print("HOLD_HAND_NET_ANIM %s: %d switches; position error p50 %.4f p95 %.4f max %.4f s (%d)" % [
		label, changes, st[0], st[1], st[2], err.size()])
	check(err.size() > 50 and st[1] <= 0.06, "%s: the animation position follows A's" % label, "p95 <= 0.06 s", st)


## Compares character `which` (0 A, 1 B) of this peer's record with A's own record.
func _compare_anim(label: String, truth: Dictionary, which: int, interval: float) -> void:
	var tt: PackedFloat64Array = truth["t"]
	var tv: PackedFloat32Array = truth["v"]
	check(tt.size() > 100 and _anim_times.size() > 100, "%s: both records have frames" % label,
		"> 100", [tt.size(), _anim_times.size()])
	if tt.size() < 2 or _anim_times.is_empty():
		return
	# A's changes of state and one-shot, with their times.
	var changes := []
	for i in range(1, tt.size()):
		for k in [3, 4]:
			if tv[i * 14 + k] != tv[(i - 1) * 14 + k]:
				changes.append([tt[i], k, tv[i * 14 + k]])
	check(changes.size() >= 6, "%s: A changed state and one-shot" % label, ">= 6", changes.size())
	var frame := 1.0 / Engine.physics_ticks_per_second
	var late_limit := interval + 2.0 * frame
	var worst_late := 0.0
	for ch in changes:
		# The first time at or after A's change that this view shows the new value.
		var shown := -1.0
		for i in _anim_times.size():
			if _anim_times[i] >= ch[0] - frame and _anim[i * 14 + which * 7 + ch[1]] == ch[2]:
				shown = _anim_times[i]
				break
		var late: float = shown - ch[0] if shown >= 0.0 else INF
		worst_late = maxf(worst_late, late)
		check(late <= late_limit, "%s: A's %s change to %d at %.2f shown within one animation interval" % [
			label, "state" if ch[1] == 3 else "one-shot", int(ch[2]), ch[0]], "<= %.3f s" % late_limit, late)
	# Continuous values and play position at equal view times.
	var blend_err := PackedFloat32Array()
	var pos_err := PackedFloat32Array()
	var pos_at := []
	var j := 0
	for i in _anim_times.size():
		var t := _anim_times[i]
		while j + 1 < tt.size() and tt[j + 1] <= t:
			j += 1
		if t < tt[0] or j + 1 >= tt.size():
			continue
		var s := (t - tt[j]) / maxf(tt[j + 1] - tt[j], 1e-6)
		var mine := i * 14 + which * 7
		for k in 3:
			var want := lerpf(tv[j * 14 + k], tv[(j + 1) * 14 + k], s)
			blend_err.append(absf(_anim[mine + k] - want))
		# The play position, once the state is shown (an interval and a bit after A's change) and
		# where A shows it around this time too, without the one-shot (which holds the state).
		var state := _anim[mine + 3]
		var settled := true
		for ch in changes:
			if t >= ch[0] - frame and t < ch[0] + interval + 0.1:
				settled = false
		if settled and _anim[mine + 4] == 0.0 and tv[j * 14 + 4] == 0.0 and tv[(j + 1) * 14 + 4] == 0.0 \
				and tv[j * 14 + 3] == state and tv[(j + 1) * 14 + 3] == state and tv[(j + 1) * 14 + 5] >= tv[j * 14 + 5]:
			# On the cycle: a position just past the loop's end is next to one just before it.
			var d := absf(_anim[mine + 5] - lerpf(tv[j * 14 + 5], tv[(j + 1) * 14 + 5], s))
			var length: float = tv[j * 14 + 6]
			pos_err.append(minf(d, absf(length - d)) if length > 0.0 else d)
			var since := INF
			for ch in changes:
				if ch[0] <= t:
					since = t - ch[0]
			pos_at.append([pos_err[pos_err.size() - 1], t, since])
	var bs := _stats(blend_err)
	var ps := _stats(pos_err)
	# Where the largest play-position errors were: view time, and time since A's last change.
	pos_at.sort_custom(func(x: Array, y: Array) -> bool: return x[0] > y[0])
	var worst := []
	for w in pos_at.slice(0, 12):
		worst.append("%.3f s at %.2f (%.2f after a change)" % w)
	print("HOLD_HAND_NET_ANIM %s: largest play position errors %s" % [label, ", ".join(worst)])
	print("HOLD_HAND_NET_ANIM %s: %d changes, latest shown %.3f s after A (interval %.2f s); blend/scale error p50 %.4f p95 %.4f max %.4f (%d); play position error p50 %.4f p95 %.4f max %.4f s (%d)" % [
		label, changes.size(), worst_late, interval, bs[0], bs[1], bs[2], blend_err.size(), ps[0], ps[1], ps[2], pos_err.size()])
	check(blend_err.size() > 100, "%s: blend positions compared" % label, "> 100", blend_err.size())
	check(bs[1] <= 0.05 and bs[2] <= 0.15, "%s: blend position and time scale follow A's" % label,
		"p95 <= 0.05, max <= 0.15", bs)
	check(pos_err.size() > 50 and ps[1] <= 0.06, "%s: play position follows A's" % label, "p95 <= 0.06 s", ps)


## p50, p95 and maximum of `v`.
func _stats(v: PackedFloat32Array) -> Array:
	if v.is_empty():
		return [INF, INF, INF]
	var s := v.duplicate()
	s.sort()
	return [s[int(s.size() * 0.5)], s[mini(int(s.size() * 0.95), s.size() - 1)], s[s.size() - 1]]
