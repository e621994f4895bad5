extends RefCounted
## Oriented boxes for measuring hands: [centre, [three unit axes], half extents].


## The box of [param size] centred at [param local_centre] in the frame [param frame] (any scale:
## the extents are scaled with the frame's axes).
static func from_frame(frame: Transform3D, local_centre: Vector3, size: Vector3) -> Array:
	var axes := [frame.basis.x, frame.basis.y, frame.basis.z]
	var half := Vector3(size.x * axes[0].length(), size.y * axes[1].length(), size.z * axes[2].length()) * 0.5
	return [frame * local_centre, [axes[0].normalized(), axes[1].normalized(), axes[2].normalized()], half]


## A box from [param origin] along the unit [param along] for [param length], [param width] wide
## along the unit [param across] and [param thickness] thick, centred on the line across and through.
static func along(origin: Vector3, along_dir: Vector3, across: Vector3, length: float, width: float, thickness: float) -> Array:
	var a := along_dir.normalized()
	var w := (across - a * across.dot(a)).normalized()
	var t := a.cross(w)
	return [origin + a * (length * 0.5), [a, w, t], Vector3(length, width, thickness) * 0.5]


static func _radius(box: Array, n: Vector3) -> float:
	var axes: Array = box[1]
	var half: Vector3 = box[2]
	return absf((axes[0] as Vector3).dot(n)) * half.x + absf((axes[1] as Vector3).dot(n)) * half.y \
		+ absf((axes[2] as Vector3).dot(n)) * half.z


## How deep two boxes interpenetrate: the smallest overlap of their projections over the 15
## separating-axis candidates (0 when some axis separates them).
static func overlap(a: Array, b: Array) -> float:
	var candidates: Array[Vector3] = []
	for x in a[1]:
		candidates.append(x)
	for y in b[1]:
		candidates.append(y)
	for x in a[1]:
		for y in b[1]:
			var n := (x as Vector3).cross(y)
			if n.length() > 1e-6:
				candidates.append(n.normalized())
	var d: Vector3 = (b[0] as Vector3) - (a[0] as Vector3)
	var least := INF
	for n in candidates:
		least = minf(least, _radius(a, n) + _radius(b, n) - absf(d.dot(n)))
	return maxf(least, 0.0)


## How far the box reaches from its centre along the unit [param n].
static func extent_along(box: Array, n: Vector3) -> float:
	return _radius(box, n)


## Distance from [param p] to the box (0 inside it).
static func distance_to(box: Array, p: Vector3) -> float:
	var d := p - (box[0] as Vector3)
	var axes: Array = box[1]
	var half: Vector3 = box[2]
	var out := Vector3.ZERO
	for k in 3:
		var c := (axes[k] as Vector3).dot(d)
		out[k] = maxf(absf(c) - half[k], 0.0)
	return out.length()
