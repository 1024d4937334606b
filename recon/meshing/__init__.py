"""Shared meshing: one object's oriented points (and its support plane, the sensors' free space) enter, a
watertight ``trimesh.Trimesh`` leaves (``mesh.mesh_object``). Free-space carving (``carve``), symmetry
completion of unseen sides (``symmetry``) and the volume-to-surface steps (``surface``) serve the scan, photo,
splat and room routes alike."""
