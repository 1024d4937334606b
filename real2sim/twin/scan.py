"""The two point sets the ICP base route registers: the robot's surface at home (its mesh vertices, base frame) and
a scan of the scene (in the scene frame, directly or through the ``world_from_input`` of a ``scene.json``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.bounded import load_json
from real2sim.errors import InputError
from real2sim.transforms import apply_transform
from real2sim.twin.geometry import body_geoms, geom_points


def robot_surface(model, data, q_home: np.ndarray) -> np.ndarray:
    """Points [m] of every mesh geom of the robot (visual and collision) at ``q_home``, in the robot's own frame."""
    import mujoco

    data.qpos[:] = q_home
    mujoco.mj_forward(model, data)
    geoms = [
        g
        for g in body_geoms(model, set(range(1, model.nbody)))
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
    ]
    if not geoms:
        raise InputError("robot", "the ICP route needs the robot's mesh geoms (it has none)")
    return np.concatenate([geom_points(model, data, g) for g in geoms])


def scan_points(scan: Path, scene_json: Path | None) -> np.ndarray:
    """The scan's valid points in the scene frame."""
    from real2sim.recon.io.points import read_points

    pts = read_points(scan).points
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    if scene_json is not None:
        doc = load_json(scene_json, "scene.json")
        try:
            t = np.asarray(doc["world_from_input"][Path(scan).name], float).reshape(4, 4)
        except (KeyError, TypeError, ValueError):
            raise InputError(
                scene_json,
                f"has no world_from_input for {Path(scan).name} (the scan must be one of its inputs)",
            ) from None
        pts = apply_transform(t, pts)
    return pts
