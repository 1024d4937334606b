"""LAS / LAZ point clouds through ``laspy`` (the optional ``formats`` extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields, missing_extra


def read_las(path: Path) -> PointCloud:
    try:
        import laspy
    except ImportError:
        raise missing_extra(path, "laspy") from None
    try:
        las = laspy.read(str(path))
    except Exception as exc:  # laspy raises its own error types for malformed files
        raise InputError(path, f"not a readable LAS/LAZ file ({exc})") from None
    fields: dict[str, np.ndarray] = {"x": np.asarray(las.x), "y": np.asarray(las.y), "z": np.asarray(las.z)}
    dims = set(las.point_format.dimension_names)
    if "intensity" in dims:
        fields["intensity"] = np.asarray(las.intensity)
    if {"red", "green", "blue"} <= dims:
        fields.update(red=np.asarray(las.red), green=np.asarray(las.green), blue=np.asarray(las.blue))
    if "classification" in dims:
        fields["classification"] = np.asarray(las.classification)
    return cloud_from_fields(fields, path)
