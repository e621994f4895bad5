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
