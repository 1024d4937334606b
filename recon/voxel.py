"""Voxel downsampling of scans too large to hold: read in chunks, keep one mean point per occupied voxel.

``read_scan`` reads a file of at most ``STREAM_POINTS`` points whole (``read_points``); a larger one becomes a
``VoxelCloud``: the mean point (and colour) of each occupied voxel of size ``voxel``, in order of first appearance,
so memory grows with the occupied voxels, not the raw points. Binary PLY is read in chunks; other formats are read
whole, then reduced. ``VoxelCloud.point_labels`` maps labels of the voxels back to every point of the file (file
order, invalid points -1), streaming the file again. Before memory would run out, reading stops with one
``InputError`` line (the budget: ``$REAL2SIM_MAX_MEMORY`` in GB, else the memory available now).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io import PointCloud, Units, read_points
from real2sim.recon.io.points import iter_point_chunks, point_count

STREAM_POINTS = 2_000_000
"""Files with more points than this are voxel-downsampled while reading."""
CHUNK = 1_000_000
"""Points per chunk."""
BYTES_PER_VOXEL = 600
"""Peak memory reconstruction needs per kept voxel (reduction, then ``points_to_scene`` on the means)."""
BYTES_PER_POINT = 12
"""Memory per raw point that stays: its int32 label and the labels file written from it."""
READ_FACTOR = 8
"""Peak memory of reading a file whole (any format but binary PLY), per byte of the file."""
MAX_MEMORY_VAR = "REAL2SIM_MAX_MEMORY"
"""Environment variable: the memory budget in GB (default: the memory available when reading starts)."""


def memory_budget() -> float:
    """Bytes reading may plan to use: ``$REAL2SIM_MAX_MEMORY`` GB, else 90 % of ``MemAvailable``."""
    env = os.environ.get(MAX_MEMORY_VAR)
    if env:
        return float(env) * 2**30
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return 0.9 * int(line.split()[1]) * 1024
    except OSError:
        pass
    return float("inf")


@dataclass(frozen=True, eq=False)
class VoxelGrid:
    """Where the voxels of a downsampled file are: ``lo`` (the grid origin), ``size``, ``dims`` (cells per axis),
    the occupied voxels' flat keys ``keys`` (sorted) and ``rank`` (each sorted key's row in the cloud)."""

    path: Path
    units: Units
    lo: np.ndarray
    size: float
    dims: np.ndarray
    keys: np.ndarray
    rank: np.ndarray
    count: int

    def flat_keys(self, pts: np.ndarray) -> np.ndarray:
        ijk = np.floor((pts - self.lo) / self.size).astype(np.int64)
        np.clip(ijk, 0, self.dims - 1, out=ijk)
        return (ijk[:, 0] * self.dims[1] + ijk[:, 1]) * self.dims[2] + ijk[:, 2]


@dataclass(frozen=True, eq=False)
class VoxelCloud(PointCloud):
    """A ``PointCloud`` of voxel means standing for a larger file; ``grid`` maps its rows back to the file."""

    grid: VoxelGrid | None = field(default=None)

    def point_labels(self, labels: np.ndarray) -> np.ndarray:
        """int32 label per point of the file (file order) from one label per row of this cloud; -1 where invalid."""
        g = self.grid
        assert g is not None
        out = np.full(g.count, -1, dtype=np.int32)
        lab = np.asarray(labels, dtype=np.int32)
        for start, chunk, _ in iter_point_chunks(g.path, g.units, CHUNK):
            ok = np.flatnonzero(np.isfinite(chunk).all(axis=1))
            row = g.rank[np.searchsorted(g.keys, g.flat_keys(chunk[ok]))]
            out[start + ok] = lab[row]
        return out


def point_labels_of(cloud: PointCloud, labels: np.ndarray) -> np.ndarray:
    """int32 labels per point of the file ``cloud`` was read from (expanded when it is a ``VoxelCloud``)."""
    if isinstance(cloud, VoxelCloud):
        return cloud.point_labels(labels)
    return np.asarray(labels).astype(np.int32)


def read_scan(path: str | Path, units: Units, voxel: float) -> PointCloud:
    """``read_points(path, units)``, or for a file of more than ``STREAM_POINTS`` points its ``VoxelCloud`` at
    ``voxel`` [m]."""
    path = Path(path)
    n = point_count(path)
    if n is not None:
        return read_points(path, units) if n <= STREAM_POINTS else _downsampled(path, units, voxel, None)
    if path.is_file():
        need = path.stat().st_size * READ_FACTOR
        if need > memory_budget():
            raise InputError(path, f"too large to read whole for the memory available (about {need / 2**30:.1f} GB; "
                                   f"set {MAX_MEMORY_VAR}=GB, or convert it to binary PLY, which is read in chunks)")  # fmt: skip
    cloud = read_points(path, units)
    return cloud if len(cloud) <= STREAM_POINTS else _downsampled(path, units, voxel, cloud)


def _bounds(path: Path, units: Units, cloud: PointCloud | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    count = valid = 0
    for start, pts, _ in iter_point_chunks(path, units, CHUNK, cloud=cloud):
        ok = pts[np.isfinite(pts).all(axis=1)]
        count = start + len(pts)
        valid += len(ok)
        if len(ok):
            lo, hi = np.minimum(lo, ok.min(axis=0)), np.maximum(hi, ok.max(axis=0))
    return lo, hi, count, valid


def _downsampled(path: Path, units: Units, voxel: float, cloud: PointCloud | None) -> PointCloud:
    lo, hi, count, valid = _bounds(path, units, cloud)
    if valid == 0:
        raise InputError(path, f"all {count} points are invalid (NaN or infinite)")
    budget = memory_budget()
    dims = np.floor((hi - lo) / voxel).astype(np.int64) + 1
    if float(np.prod(dims.astype(np.float64))) >= 2.0**62:
        raise InputError(
            path, f"spans {np.round(hi - lo, 1).tolist()} m: too large for {voxel * 1e3:g} mm voxels"
        )
    grid = VoxelGrid(path, units, lo, voxel, dims, np.empty(0, np.int64), np.empty(0, np.int64), count)
    acc = _Sums.empty()
    pending: list[_Sums] = []
    pending_n = 0
    colored = None
    for start, pts, col in iter_point_chunks(path, units, CHUNK, colors=True, cloud=cloud):
        ok = np.flatnonzero(np.isfinite(pts).all(axis=1))
        colored = (col is not None) if colored is None else colored and col is not None
        part = _Sums.of(grid.flat_keys(pts[ok]), pts[ok], None if col is None else col[ok], start + ok)
        pending.append(part)
        pending_n += len(part.keys)
        if pending_n > max(len(acc.keys), CHUNK):
            acc, pending, pending_n = _Sums.merge([acc, *pending]), [], 0
            _check_memory(path, len(acc.keys), count, voxel, budget)
    acc = _Sums.merge([acc, *pending])
    _check_memory(path, len(acc.keys), count, voxel, budget)
    order = np.argsort(acc.first, kind="stable")  # rows in order of first appearance, as voxel_downsample
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    cnt = acc.count[order].astype(np.float64)[:, None]
    colors = None if not colored or acc.color is None else np.clip(acc.color[order] / cnt, 0.0, 1.0)
    return VoxelCloud(
        points=acc.sum[order] / cnt,
        colors=colors,
        sensor_origin=None if cloud is None or np.ndim(cloud.sensor_origin) != 1 else cloud.sensor_origin,
        source=str(path),
        grid=replace(grid, keys=acc.keys, rank=rank),
    )


def _check_memory(path: Path, voxels: int, count: int, voxel: float, budget: float) -> None:
    need = voxels * BYTES_PER_VOXEL + count * BYTES_PER_POINT
    if need > budget:
        raise InputError(
            path, f"too large for the memory available: {count:,} points keep at least {voxels:,} voxels of "
            f"{voxel * 1e3:g} mm (about {need / 2**30:.1f} GB to reconstruct, {budget / 2**30:.1f} GB available; "
            f"set {MAX_MEMORY_VAR}=GB, a coarser --mesh-voxel, or split the scan)"
        )  # fmt: skip


@dataclass(frozen=True)
class _Sums:
    """Per-voxel sums of a set of points: sorted unique ``keys``, point ``count``, coordinate ``sum``, colour sum,
    and the file index of each voxel's ``first`` point."""

    keys: np.ndarray
    count: np.ndarray
    sum: np.ndarray
    color: np.ndarray | None
    first: np.ndarray

    @staticmethod
    def empty() -> _Sums:
        return _Sums(
            np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, 3)), None, np.empty(0, np.int64)
        )

    @staticmethod
    def of(keys: np.ndarray, pts: np.ndarray, col: np.ndarray | None, index: np.ndarray) -> _Sums:
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        return _Sums(uk, np.bincount(inv, minlength=len(uk)), _sum(inv, pts, len(uk)),
                     None if col is None else _sum(inv, col, len(uk)), index[first])  # fmt: skip

    @staticmethod
    def merge(parts: list[_Sums]) -> _Sums:
        """One ``_Sums`` of parts given in file order (so a key's first part holds its earliest point)."""
        parts = [p for p in parts if len(p.keys)]
        if len(parts) == 1:
            return parts[0]
        keys = np.concatenate([p.keys for p in parts])
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        count = np.bincount(inv, weights=np.concatenate([p.count for p in parts]), minlength=len(uk))
        col = None
        if all(p.color is not None for p in parts):
            col = _sum(inv, np.concatenate([p.color for p in parts]), len(uk))  # type: ignore[misc]
        return _Sums(uk, count.astype(np.int64), _sum(inv, np.concatenate([p.sum for p in parts]), len(uk)), col,
                     np.concatenate([p.first for p in parts])[first])  # fmt: skip


def _sum(inv: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    return np.stack(
        [np.bincount(inv, weights=values[:, j], minlength=n) for j in range(values.shape[1])], axis=1
    )
