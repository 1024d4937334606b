"""real2sim.export: a ``Scene`` to a checked MuJoCo/URDF sim package (Menagerie shape)."""
