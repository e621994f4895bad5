extends EntwineBench
## `cargo xtask bench formation_drop` (also run by `cargo xtask bench formation`): the server's cost
## of dropping a peer that owns OWNED agents of a squad of AGENTS (every other agent), i.e. the
## batch deactivation `drop_peer` does (one re-lay and re-assignment for the whole peer), median of
## ROUNDS drops. Baseline: the one-call-per-agent deactivation it replaces (`set_agent_active` per
## agent), timed on BASELINE_CALLS calls and scaled to OWNED.
## ratio = per-agent baseline ms / batch ms.

const AGENTS := 8192
const OWNED := 4096
const PEER := 5
const ROUNDS := 5
const BASELINE_CALLS := 16


func _initialize() -> void:
	_run.call_deferred()


func _make() -> FormationController:
	var squad := internal_squad(AGENTS, "(shape: Column(files: 64), spacing: 1.2)")
	squad.set_process(false)
	squad.snap_to_slots()
	squad._advance(1.0 / 60.0)
	for i in range(0, AGENTS, 2):
		squad.set_agent_peer(i, PEER)
	return squad


func _run() -> void:
	unthrottle()
	var squad := _make()
	var batch: Array[float] = []
	var relays := 0
	for r in ROUNDS:
		var all := PackedInt32Array()
		for i in AGENTS:
			all.append(i)
		squad.set_agents_active(all, true)
		squad._advance(1.0 / 60.0)
		var before: int = squad._get_relayout_count()
		var start := Time.get_ticks_usec()
		var left := squad.drop_peer(PEER)
		batch.append(float(Time.get_ticks_usec() - start) / 1000.0)
		relays = squad._get_relayout_count() - before
		if left != OWNED:
			push_error("drop_peer took %d agents out, expected %d" % [left, OWNED])
	var batch_ms := median(batch)
	var all := PackedInt32Array()
	for i in AGENTS:
		all.append(i)
	squad.set_agents_active(all, true)
	var start := Time.get_ticks_usec()
	for k in BASELINE_CALLS:
		squad.set_agent_active(2 * k, false)
	var per_call := float(Time.get_ticks_usec() - start) / 1000.0 / BASELINE_CALLS
	var baseline_ms := per_call * OWNED
	squad.free()
	print("bench formation_drop: dropping a peer that owns %d of %d agents: %.2f ms (%d re-form); one set_agent_active per agent %.2f ms/call, %.0f ms for %d (scaled from %d calls) ratio=%.0fx" % [
		OWNED, AGENTS, batch_ms, relays, per_call, baseline_ms, OWNED, BASELINE_CALLS, baseline_ms / batch_ms])
	quit(0)
