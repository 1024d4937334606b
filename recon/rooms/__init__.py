"""Room scans: a levelled cloud enters; ``planes`` decides whether it shows a room and which large plane is the
floor and which are walls; ``scene.room_to_scene`` returns a ``Scene`` with the floor as support and walls and
large furniture as static objects (or None when the scan is not a room)."""
