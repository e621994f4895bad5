# processes: server client client client
# timeout: 120
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair with the whole world scaled by 100, as a rig imported in centimetres is: the
## characters are 175 m tall, the recipient follows 82 m beside the initiator and the hands meet
## 2 m from its wrist. Over real ENet every remote view is compared with the initiator's per
## physics frame at its declared view time, against the clean contract times 100 (2 cm → 2 m at
## p95, 4 m at worst, overshoot 3 m): the pair's scale rides in the stream's key frames, so
## positions travel over ranges in proportion and nothing is refused as too fast or clipped.
##
## It once ran again on failure: in some runs both remote views were 4.1 m off at one moment, at
## the start of the walk. That was the stream drawing a straight line between two root samples
## across the moment the initiator set off (up to a quarter of the interval's motion, 4.3 m at this
## scale); the tick before a start or a stop now goes out as a frame of its own, and the worst is
## about 0.45 m.


func condition() -> String:
	return "clean, world scale 100"


func world_scale() -> float:
	return 100.0


## The forged-frame and lying-initiator checks are the clean suite's (their distances are at scale 1).
func lossy() -> bool:
	return true


func contract() -> Array:
	return [0.02 * 100.0, 0.04 * 100.0, 1.25, 0.03 * 100.0]
