class_name EntwineTest
extends SceneTree
## Base class of Entwine's engine-level test suites, run by `cargo xtask test` in headless Godot.
##
## A suite is a file `tests/**/NAME_test.gd` that `extends EntwineTest` and defines `test_*` methods
## (they may `await`). The harness starts one Godot per word of the suite's `# processes:` header
## (default one "main"); a process runs the methods named `test_<role>_*` (or every `test_*` for
## role "main"). Each test prints one `TEST PASS name` or `TEST FAIL name | what | expected | got`
## line; the process exits 0 when every test passed. Nodes a test adds with [method add] are freed
## after it, so a suite leaks nothing.

## Role of this process ("main", "server", "client", …), from `--role`.
var role := "main"
## Index of this process among the suite's processes, from `--index`.
var index := 0
## Port on 127.0.0.1 the harness picked for this suite, from `--port`.
var port := 0
## How many processes the suite runs, from `--peers`.
var peers := 1
## Port on 127.0.0.1 of the lossy UDP relay in front of [member port] when the suite has a `# relay:`
## header, else 0, from `--relay-port`. Clients dial it through [method dial_port]; servers keep
## listening on [member port].
var relay_port := 0
## Substring a test name must contain to run (empty: all), from `--filter`.
var filter := ""

var _failures: Array[String] = []
var _owned: Array[Node] = []
var _passed := 0
var _failed := 0
var _logger: _CaptureLogger


## Captures warnings and errors so tests can assert on them.
class _CaptureLogger extends Logger:
	var mutex := Mutex.new()
	var messages: PackedStringArray = []

	func _log_error(function: String, file: String, line: int, code: String, rationale: String,
			_editor_notify: bool, error_type: int, _script_backtrace: Array[ScriptBacktrace]) -> void:
		var kind := "WARNING" if error_type == ERROR_TYPE_WARNING else "ERROR"
		var text := rationale if not rationale.is_empty() else code
		mutex.lock()
		messages.append("%s: %s (%s %s:%d)" % [kind, text, function, file, line])
		mutex.unlock()

	func _log_message(_message: String, _error: bool) -> void:
		pass


func _initialize() -> void:
	var args := OS.get_cmdline_user_args()
	for i in range(0, args.size() - 1):
		match args[i]:
			"--role": role = args[i + 1]
			"--index": index = int(args[i + 1])
			"--port": port = int(args[i + 1])
			"--peers": peers = int(args[i + 1])
			"--relay-port": relay_port = int(args[i + 1])
			"--filter": filter = args[i + 1]
	_logger = _CaptureLogger.new()
	OS.add_logger(_logger)
	_run.call_deferred()


func _run() -> void:
	await process_frame
	var prefix := "test_" if role == "main" else "test_%s_" % role
	# A suite that extends another lists an overridden test twice (its own and its base's): run it once.
	var ran := {}
	for method in get_script().get_script_method_list():
		var test_name: String = method["name"]
		if not test_name.begins_with(prefix) or ran.has(test_name):
			continue
		ran[test_name] = true
		if not filter.is_empty() and not test_name.contains(filter):
			continue
		_failures.clear()
		await call(test_name)
		# Leave whatever signal emission the test resumed from before freeing its nodes.
		await process_frame
		for node in _owned:
			if is_instance_valid(node):
				node.free()
		_owned.clear()
		await process_frame
		if _failures.is_empty():
			_passed += 1
			print("TEST PASS ", test_name)
		else:
			_failed += 1
			for extra in _failures.slice(1):
				print("CHECK FAILED ", test_name, " | ", extra)
			print("TEST FAIL ", test_name, " | ", _failures[0])
	print("%s: %d passed, %d failed" % [get_script().resource_path.get_file(), _passed, _failed])
	OS.remove_logger(_logger)
	_logger = null
	quit(0 if _failed == 0 else 1)


## Returns the port a client dials: [member relay_port] when the suite runs a relay, else [member port].
func dial_port() -> int:
	return relay_port if relay_port != 0 else port


## Adds [param node] under the root for the current test and returns it; it is freed after the test.
func add(node: Node) -> Node:
	root.add_child(node)
	_owned.append(node)
	return node


## Adds a static box body of [param size] centred at [param centre] on physics [param layer] under
## [param parent] (the root when null: then it is freed after the test) and returns it.
func add_box(centre: Vector3, size: Vector3, layer := 1, parent: Node = null) -> StaticBody3D:
	var body := StaticBody3D.new()
	body.collision_layer = layer
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = size
	shape.shape = box
	body.add_child(shape)
	body.position = centre
	if parent:
		parent.add_child(body)
	else:
		add(body)
	return body


## Adds a static floor (top at y = 0, [param size] metres square) like [method add_box].
func add_floor(parent: Node = null, size := 80.0) -> StaticBody3D:
	var floor_body := add_box(Vector3(0, -0.5, 0), Vector3(size, 1, size), 1, parent)
	floor_body.name = "Floor"
	return floor_body


## Returns where rope [param i] of [method add_long_ropes]'s grid hangs from: rows of
## [param columns] ropes, 1.5 m apart, 12 m up.
func rope_home(i: int, columns: int) -> Vector3:
	return Vector3((i % columns) * 1.5, 12.0, (i / columns) * 1.5)


## Adds [param count] ropes of 32 points and 8 iterations with no collider query, each hanging from
## its [method rope_home], their processing off (the test steps them), and returns them.
func add_long_ropes(count: int, columns: int) -> Array[RopeSimulation]:
	var ropes: Array[RopeSimulation] = []
	for i in count:
		var r := RopeSimulation.new()
		r.capacity = 32
		r.point_count = 32
		r.iterations = 8
		r.collision_mask = 0
		r.position = rope_home(i, columns)
		add(r)
		r.set_physics_process(false)
		r.set_process(false)
		ropes.append(r)
	return ropes


## Records a failure unless [param ok]. [param what] says what was checked.
func check(ok: bool, what: String, expected: Variant = true, got: Variant = false) -> bool:
	if not ok:
		_failures.append("%s | expected: %s | got: %s" % [what, str(expected), str(got)])
	return ok


## Checks that [param got] is within [param tolerance] of [param expected] (numbers or Vector3s).
func check_near(got: Variant, expected: Variant, tolerance: float, what: String) -> bool:
	var error: float
	if got is Vector3:
		error = (got as Vector3).distance_to(expected)
	else:
		error = absf(float(got) - float(expected))
	var ok := is_finite(error) and error <= tolerance
	return check(ok, "%s (tolerance %s, error %s)" % [what, tolerance, error], expected, got)


## Returns how many captured warnings or errors contain [param text].
func logged_count(text: String) -> int:
	var count := 0
	_logger.mutex.lock()
	for message in _logger.messages:
		if message.contains(text):
			count += 1
	_logger.mutex.unlock()
	return count


## Returns how many warnings and errors were captured so far (a mark for [method logged_since]).
func logged_total() -> int:
	_logger.mutex.lock()
	var n := _logger.messages.size()
	_logger.mutex.unlock()
	return n


## Returns the warnings and errors captured since [param mark] (from [method logged_total]).
func logged_since(mark: int) -> PackedStringArray:
	_logger.mutex.lock()
	var out := _logger.messages.slice(mark)
	_logger.mutex.unlock()
	return out


## Tells the harness that an `ERROR:` line containing [param text] is provoked on purpose.
func expect_error(text: String) -> void:
	print("EXPECT ERROR ", text)


## Tells the harness that a `WARNING:` line containing [param text] is provoked on purpose (the
## harness fails a suite on any other warning).
func expect_warning(text: String) -> void:
	print("EXPECT WARNING ", text)


## Waits [param n] physics frames.
## A room call as EntwineHoldHandRoom's `_submit` takes it: kind (0 request, 1 accept, 2 decline,
## 3 cancel), actor and target in 17 bytes.
static func room_call(kind: int, actor: int, target: int) -> PackedByteArray:
	var b := PackedByteArray()
	b.resize(17)
	b.encode_u8(0, kind)
	b.encode_s64(1, actor)
	b.encode_s64(9, target)
	return b


func physics_frames(n: int) -> void:
	for i in n:
		await physics_frame


## Waits [param n] process frames.
func frames(n: int) -> void:
	for i in n:
		await process_frame


## Waits until [param condition] returns true or [param seconds] pass; returns whether it held.
func wait_until(condition: Callable, seconds: float) -> bool:
	var deadline := Time.get_ticks_msec() + int(seconds * 1000.0)
	while not condition.call():
		if Time.get_ticks_msec() > deadline:
			return false
		await process_frame
	return true
