"""E57 scans through ``pye57`` (the optional ``formats`` extra); every scan in the file, in its world frame, with
its scanner position (the scan pose's translation) as the sensor origin of its points."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, missing_extra


def read_e57(path: Path) -> PointCloud:
    try:
        import pye57
    except ImportError:
        raise missing_extra(path, "pye57") from None
    try:
        e57 = pye57.E57(str(path))
        scans, origins = [], []
        for i in range(e57.scan_count):
            d = e57.read_scan(i, colors=False, intensity=False, ignore_missing_fields=True, transform=True)
            scans.append(np.stack([d["cartesianX"], d["cartesianY"], d["cartesianZ"]], axis=1))
            origins.append(np.asarray(e57.get_header(i).translation, dtype=np.float64).reshape(3))
    except Exception as exc:  # pye57 raises libE57 errors for malformed files
        raise InputError(path, f"not a readable E57 file ({exc})") from None
    if not scans:
        raise InputError(path, "the E57 file holds no scans")
    pts = np.concatenate(scans)
    if all(np.array_equal(o, origins[0]) for o in origins):
        so = origins[0]
    else:  # several scanner positions: one origin per point
        so = np.concatenate([np.broadcast_to(o, s.shape) for o, s in zip(origins, scans, strict=True)])
    return PointCloud(points=pts.astype(np.float64), sensor_origin=so, source=str(path))
