"""Readers and writers of capture files, one module per format (trimesh ``exchange/`` style).

Every point-cloud reader returns a :class:`PointCloud` in metres. Organised clouds (PCD with HEIGHT > 1) keep
their invalid points as NaN rows, so row ``i`` is the ``i``-th point of the file. Every problem with a file is one
:class:`~real2sim.errors.InputError` naming it.

Point clouds: ``read_points`` (``points.py``) dispatches on the suffix to ``ply``, ``pcd``, ``text``, ``npy``,
``kitti``, ``las`` and ``e57``. Gaussian splats: ``splat.py``.
"""

from real2sim.recon.io.cloud import PointCloud, merge_clouds
from real2sim.recon.io.points import SUFFIXES, UNITS, Units, read_points, unit_scale

__all__ = ["SUFFIXES", "UNITS", "PointCloud", "Units", "merge_clouds", "read_points", "unit_scale"]
