"""Cameras of the twin: one where each of the capture's cameras was (``cameras.json`` of ``recon photos``: OpenCV
axes, ``cam_from_world`` in the scene frame), or one overview camera aimed at the robot's base."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.twin.geometry import mat_to_quat as matrix_to_quat

CV_TO_MJ = np.diag([1.0, -1.0, -1.0])
"""OpenCV camera axes (x right, y down, z forward) to MuJoCo's (x right, y up, looking along -z)."""


def add_cameras(spec, cameras: Path | None, target_body: str, base_pos: np.ndarray) -> list[str]:
    """Add the capture's cameras (``capture_NNN``) or one ``overview`` camera to the spec; returns their names."""
    import mujoco

    if cameras is None:
        cam = spec.worldbody.add_camera(name="overview")
        cam.pos = [float(base_pos[0]) + 0.7, float(base_pos[1]) - 0.5, float(base_pos[2]) + 0.6]
        cam.mode = mujoco.mjtCamLight.mjCAMLIGHT_TARGETBODY
        cam.targetbody = target_body
        cam.fovy = 60.0
        return ["overview"]
    try:
        cams = json.loads(Path(cameras).read_text())["cameras"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(cameras, f"not a cameras.json of real2sim recon photos ({exc})") from None
    names = []
    for i, c in enumerate(cams):
        try:
            cam_from_world = np.asarray(c["cam_from_world"], float).reshape(4, 4)
            fy, h = float(c["fy"]), float(c["height"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(cameras, f"camera {i}: {exc}") from None
        world_from_cam = np.linalg.inv(cam_from_world)
        name = f"capture_{i:03d}"
        cam = spec.worldbody.add_camera(name=name)
        cam.pos = [float(x) for x in world_from_cam[:3, 3]]
        cam.quat = [float(x) for x in matrix_to_quat(world_from_cam[:3, :3] @ CV_TO_MJ)]
        cam.fovy = math.degrees(2 * math.atan(h / (2 * fy)))
        names.append(name)
    return names
