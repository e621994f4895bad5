# processes: server client client client client
# relay: delay_ms=250 jitter_ms=60 loss=0.12 seed=11
# timeout: 200
# retries: 2
extends "res://tests/hold_hand/hold_hand_net_test.gd"
## The networked pair over ENet through the harness's lossy relay at its worst: every client's
## datagrams are delayed 250 ms ± 60 ms (so they reorder) and 12 % are dropped, both ways, so the
## initiator's frames cross two such links on their way to the recipient and two onlookers (C and
## D). Every remote view is compared with the initiator's at its declared view time, frame by frame,
## against this condition's contract, which it asserts: 8 cm at the 95th percentile, 20 cm at
## worst, steps within 1.25x the initiator's largest, 3 cm overshoot at the stop. The replay's
## delay grows to cover the frames lost in a row at this loss (about a second here); when more are
## lost in a row than it covers, the view clock slows down and stops a quarter second past the
## newest sample instead of running on while the roots stand. (Until that stretch, this suite
## asserted only p95 15 cm, max 50 cm, steps 1.5x and overshoot 6 cm, and printed the contract:
## one try in a handful saw the view run past its newest sample and the recipient's roots 29 cm
## off at the 95th percentile while the correction faded.)
##
## It runs again up to twice when it fails (`# retries: 2`; a failed try is printed as FLAKY and its
## logs kept). It retried once until an evening when 4 of 8 first tries failed on a quiet machine
## (two in full runs, two in six runs of the suite alone), none of them twice in a row: the
## recipient's view of its own root p95 94.5 mm against 80; the initiator not hearing two clients'
## barrier messages for 40 s while every other client heard all four; the pair not formed within
## 40 s (the recipient's answer reached the room after the request had expired, twice); and a
## client's hand check made after the initiator's process had left (fixed: the views check the hand
## right after the walk, and a client that is done waits for the server to hang up). What made it
## fail before that: (1) the recipient gave the initiator up after 3 s without a
## frame while the initiator's copy of the room's word was still being resent, so the pair ended
## before it started (fixed: `initiator_start_timeout`); (2) the hands faded out whenever 0.5 s
## passed without a frame arriving, though the view still had hand samples to show (a hand 38 cm
## off, a 79 mm step; fixed: the fade waits until the view has run past the last hand sample);
## (3) a signal handler of the suite itself assigned a component freed during teardown to a typed
## variable, a script error (fixed in the handler).
## Seen only on a machine loaded far beyond its cores, not understood yet: a client that did not
## hear every other client's barrier message within 40 s, and two clients that received none of
## the initiator's frames while a third did (the barrier prints what it saw, a peer that drops
## out says so, and the server prints ENet's view of each link 6 s after pairing).


func lossy() -> bool:
	return true


func condition() -> String:
	return "relay 250/60/12%"


func contract() -> Array:
	return [0.08, 0.20, 1.25, 0.03]

