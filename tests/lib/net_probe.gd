class_name NetProbe
extends Node
## A test's shared notebook across processes: any peer writes a value under a key on every peer
## (reliable RPC), and tests wait for the keys they need. Put it at the same node path everywhere.

var values := {}


## Writes `value` under `key` here and on every other peer.
func share(key: String, value: Variant) -> void:
	values[key] = value
	put.rpc(key, value)


@rpc("any_peer", "call_remote", "reliable")
func put(key: String, value: Variant) -> void:
	values[key] = value


func has(key: String) -> bool:
	return values.has(key)


var _resent := {}


## Sends `key` again (its current value) if it was last sent more than `interval` seconds ago: for
## barriers on a lossy link, where a peer that was still connecting when the value went out never
## got it. Call it while waiting.
func resend(key: String, interval := 1.0) -> void:
	var now := Time.get_ticks_msec()
	if now - int(_resent.get(key, now)) >= int(interval * 1000.0) and values.has(key):
		put.rpc(key, values[key])
		_resent[key] = now
	elif not _resent.has(key):
		_resent[key] = now
