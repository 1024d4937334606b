"""Per-object work, run in parallel: a scene object's mesh is repaired into a watertight manifold (``repair.py``),
given a visual mesh (``visual.py``) and collision geometry (``export.collision``), and returned as a
``PreparedObject`` (``prepare.py``)."""
