# processes: server client client client
# timeout: 150
# retries: 1
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair's whole sequence again, over WebSocketMultiplayerPeer instead of ENet: nothing
## in the product depends on the transport.
##
## It runs again once when it fails (`# retries: 1`; the failed try is printed as FLAKY and its logs
## kept): in 2 of about 14 runs both remote views showed the recipient's hand step 192-197 mm in one
## frame, against 1.25x the initiator's own largest hand step (185.5 mm). The same was then caught
## in the scaled suite's log: a view's start glide showing the initiator's one-off preparation
## placement, which the initiator's side of the step check skips; it is now skipped on both sides.
## The retry stays until runs show that was all. In one full run no WebSocket client connected within
## 20 s: the harness starts the clients 0.3 s after the server, a WebSocket client that dials before
## the server listens is refused and, unlike ENet's, does not try again; the clients now dial again
## while refused.


func transport() -> String:
	return "websocket"
