"""KITTI Velodyne ``.bin`` scans: float32 ``x y z intensity`` records, sensor at the origin."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields


def read_kitti(path: Path) -> PointCloud:
    raw = path.read_bytes()
    if len(raw) % 16:
        raise InputError(
            path, f"KITTI .bin size {len(raw)} is not a multiple of 16 bytes (x y z intensity float32)"
        )
    arr = np.frombuffer(raw, dtype="<f4").reshape(-1, 4)
    c = cloud_from_fields({"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2], "intensity": arr[:, 3]}, path)
    return PointCloud(points=c.points, intensity=c.intensity, sensor_origin=np.zeros(3), source=str(path))
