"""Physical values of the exported objects: mass, density and friction and where each came from (``values.py``, with
the materials table in ``materials.py``), mass properties from the watertight mesh (``inertia.py``), and the rest poses
found by dropping dynamic objects onto the support (``settle.py``)."""
