# processes: server client client client
# relay: delay_ms=100 jitter_ms=20 loss=0.05 seed=7
# timeout: 150
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair over ENet through the harness's lossy relay: every client's datagrams are
## delayed 100 ms ± 20 ms (so they reorder) and 5 % are dropped, both ways, so the initiator's frames
## cross two such links on their way to the others. Every remote view is compared with the
## initiator's at its declared view time, frame by frame. The contract (5 cm at the 95th percentile,
## 10 cm at worst, steps within 1.25x, 3 cm overshoot) is met in most runs, not all: when the frames
## that show the walk starting are lost, the recipient (which catches up faster than the initiator
## walks) is shown up to 15 cm behind for half a second. Its verdict is printed, and the suite asserts
## wider bounds (p95 15 cm, max 40 cm, steps 2x, overshoot 10 cm) on every point.


func lossy() -> bool:
	return true


func condition() -> String:
	return "relay 100/20/5%"


func contract() -> Array:
	return [0.05, 0.10, 1.25, 0.03]


func limits() -> Array:
	return [0.15, 0.40, 2.0, 0.10]
