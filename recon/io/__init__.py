"""Readers and writers of capture files, one module per format (trimesh ``exchange/`` style).

Every point-cloud reader returns a :class:`PointCloud` in metres. Organised clouds (PCD with HEIGHT > 1) keep
their invalid points as NaN rows, so row ``i`` is the ``i``-th point of the file. Every problem with a file is one
:class:`~real2sim.errors.InputError` naming it.

Point clouds: ``read_points`` (``points.py``) dispatches on the suffix to ``ply``, ``pcd``, ``text``, ``npy``,
``kitti``, ``las`` and ``e57``. Gaussian splats: ``splat.py``. The names below load on first use (numpy and the
readers are not imported by ``units.py``'s users).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from real2sim.lazy import lazy_attributes
from real2sim.recon.io.units import UNITS, Units

if TYPE_CHECKING:
    from real2sim.recon.io.cloud import PointCloud, merge_clouds
    from real2sim.recon.io.points import SUFFIXES, read_points, unit_scale

__all__ = ["SUFFIXES", "UNITS", "PointCloud", "Units", "merge_clouds", "read_points", "unit_scale"]

_LAZY = {
    "PointCloud": "real2sim.recon.io.cloud",
    "merge_clouds": "real2sim.recon.io.cloud",
    "SUFFIXES": "real2sim.recon.io.points",
    "read_points": "real2sim.recon.io.points",
    "unit_scale": "real2sim.recon.io.points",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
