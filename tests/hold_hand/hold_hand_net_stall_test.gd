# processes: server client client client
# timeout: 150
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair over clean ENet while the initiator's process stalls for half a second one
## second into the walk (a hitch: a level streaming in, a garbage collection, a starved machine).
##
## Asserted, besides everything the clean suite asserts: ENet's packet throttle never falls on any
## link during the walk (EntwineHoldHandRoom.keep_enet_throttle_open, on by default), every frame the
## initiator sent arrives, and the remote views meet the clean contract frame by frame outside the
## stall and the 1.5 s after it (while it stalls the initiator shows nothing new, and its stream's
## clock catches up afterwards: STALL_SETTLE). With the throttle left to ENet, one try of two saw
## the initiator's link throttled to 14/32 and 20-24 of its 78 frames lost on this lossless link.


func condition() -> String:
	return "clean, initiator stalls 500 ms"


func stalled() -> String:
	return "initiator"


func stall_ms() -> int:
	return 500


## Whether the room keeps ENet's packet throttle open (its default).
func throttle_open() -> bool:
	return true


func _base() -> Node3D:
	var world := super()
	_room.keep_enet_throttle_open = throttle_open()
	return world
