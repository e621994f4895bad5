# processes: server client client client
# timeout: 150
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair's whole sequence again, over WebSocketMultiplayerPeer instead of ENet: nothing
## in the product depends on the transport.


func transport() -> String:
	return "websocket"
