# processes: server client client client
# relay: delay_ms=100 jitter_ms=20 loss=0.05 seed=7
# timeout: 150
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair over ENet through the harness's lossy relay: every client's datagrams are
## delayed 100 ms ± 20 ms (so they reorder) and 5 % are dropped, both ways. After the walk the
## onlooker's and the recipient's contact points must still be within 5 cm of the initiator's, and
## nothing may snap.


func lossy() -> bool:
	return true


func contact_tolerance() -> float:
	return 0.05
