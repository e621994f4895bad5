class_name PlayerSync
extends MultiplayerSynchronizer
## A game's ordinary position sync of a player character, the kind most multiplayer games already
## have: the owning peer publishes its character's transform ten times a second, and every other peer
## eases its copy toward the last one received.
##
## It honours the hold-hand hook: while a [HoldHandComponent] drives the character's root on this
## peer ([method HoldHandComponent.is_pair_driven]), the received transform is kept but not applied,
## so it never overwrites the pair's authoritative targets.
##
## Add it as a child of the character on every peer, with [member owner_peer] set to the peer that
## plays the character.

## The peer that plays this character (it publishes; the others follow).
@export var owner_peer := 1
## Exponential approach rate of the other peers' copies (1/s).
@export var follow_rate := 15.0
## The character's transform as published by its owner.
@export var synced_transform := Transform3D()
## Transforms received and not applied because the pair drove the character.
var held_back := 0

var _received := false


func _ready() -> void:
	var config := SceneReplicationConfig.new()
	config.add_property(^".:synced_transform")
	config.property_set_replication_mode(^".:synced_transform",
		SceneReplicationConfig.REPLICATION_MODE_ALWAYS)
	config.property_set_spawn(^".:synced_transform", false)
	replication_config = config
	root_path = ^"."
	replication_interval = 0.1
	set_multiplayer_authority(owner_peer)
	synchronized.connect(func() -> void: _received = true)


func _physics_process(delta: float) -> void:
	var body := get_parent() as Node3D
	if body == null or multiplayer.multiplayer_peer == null:
		return
	if is_multiplayer_authority():
		synced_transform = body.global_transform
		return
	if not _received:
		return
	if HoldHandComponent.is_pair_driven(body):
		held_back += 1
		return
	var t := 1.0 - exp(-follow_rate * delta)
	body.global_transform = body.global_transform.interpolate_with(synced_transform, t)
