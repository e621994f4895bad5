# processes: server client client client
# timeout: 120
# retries: 1
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair with the whole world scaled by 100, as a rig imported in centimetres is: the
## characters are 175 m tall, the recipient follows 82 m beside the initiator and the hands meet
## 2 m from its wrist. Over real ENet every remote view is compared with the initiator's per
## physics frame at its declared view time, against the clean contract times 100 (2 cm → 2 m at
## p95, 4 m at worst, overshoot 3 m): the pair's scale rides in the stream's key frames, so
## positions travel over ranges in proportion and nothing is refused as too fast or clipped.
##
## It runs again once when it fails (`# retries: 1`; the failed try is printed as FLAKY and its logs
## kept). What made it fail before: (1) both remote views 4.1 m off at the start of the walk: the
## stream drew a straight line between two root samples across the moment the initiator set off
## (up to a quarter of the interval's motion, 4.3 m here); the tick before a start or a stop now
## goes out as a frame of its own, and the worst is about 0.45 m; (2) a remote view whose start
## glide showed the initiator's one-off preparation placement, which the initiator's side of the
## step check skips (now skipped on both sides). Seen once in about 20 runs, not understood yet:
## the recipient's view delay rose from 132 to 341 ms and its roots were 5-6 m off at the start of
## the walk (the suite prints when a view's delay rises).


func condition() -> String:
	return "clean, world scale 100"


func world_scale() -> float:
	return 100.0


## The forged-frame and lying-initiator checks are the clean suite's (their distances are at scale 1).
func lossy() -> bool:
	return true


func contract() -> Array:
	return [0.02 * 100.0, 0.04 * 100.0, 1.25, 0.03 * 100.0]
