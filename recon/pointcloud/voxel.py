"""Voxel downsampling of scans too large to hold: read in chunks, keep one mean point per occupied voxel.

``read_scan`` reads a file of at most ``STREAM_POINTS`` points whole (``read_points``); a larger one becomes a
``VoxelCloud``: the mean point (and colour) of each occupied voxel of size ``voxel``, in order of first appearance,
so memory grows with the occupied voxels, not the raw points. Binary PLY is read in chunks; other formats are read
whole, then reduced. ``VoxelCloud.point_labels`` maps labels of the voxels back to every point of the file (file
order, invalid points -1) from the voxel each point fell in (4 bytes a point, kept while reading). Before memory
would run out, reading stops with one ``InputError`` line (the budget: ``$REAL2SIM_MAX_MEMORY`` in GB, else the
memory available now).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
    """The voxels of a downsampled file: grid origin ``lo`` [m], voxel ``size`` [m], ``dims`` (cells per axis)."""

    lo: np.ndarray
    size: float
    dims: np.ndarray

    def flat_keys(self, pts: np.ndarray) -> np.ndarray:
        ijk = np.floor((pts - self.lo) / self.size).astype(np.int64)
        np.clip(ijk, 0, self.dims - 1, out=ijk)
        return (ijk[:, 0] * self.dims[1] + ijk[:, 1]) * self.dims[2] + ijk[:, 2]


@dataclass(frozen=True, eq=False)
class VoxelCloud(PointCloud):
    """A ``PointCloud`` of voxel means standing for a larger file: ``rows`` (int32, one per point of the file) is
    the row of each point's voxel, -1 for invalid points."""

    grid: VoxelGrid | None = field(default=None)
    rows: np.ndarray | None = field(default=None)

    def point_labels(self, labels: np.ndarray) -> np.ndarray:
        """int32 label per point of the file (file order) from one label per row of this cloud; -1 where invalid."""
        assert self.rows is not None
        lab = np.append(np.asarray(labels, dtype=np.int32), np.int32(-1))  # row -1 reads the appended -1
        return lab[self.rows]


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


def _finite(pts: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.isfinite(pts[:, 0]) & np.isfinite(pts[:, 1]) & np.isfinite(pts[:, 2]))


def _bounds(path: Path, units: Units, cloud: PointCloud | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    count = valid = 0
    for start, pts, _ in iter_point_chunks(path, units, CHUNK, cloud=cloud):
        ok = pts[_finite(pts)]
        count = start + len(pts)
        valid += len(ok)
        if len(ok):
            lo = np.minimum(lo, [ok[:, j].min() for j in range(3)])
            hi = np.maximum(hi, [ok[:, j].max() for j in range(3)])
    return lo, hi, count, valid


def _downsampled(path: Path, units: Units, voxel: float, cloud: PointCloud | None) -> PointCloud:
    budget = memory_budget()
    _check_memory(path, 0, len(cloud) if cloud is not None else point_count(path) or 0, voxel, budget)
    lo, hi, count, valid = _bounds(path, units, cloud)
    if valid == 0:
        raise InputError(path, f"all {count} points are invalid (NaN or infinite)")
    dims = np.floor((hi - lo) / voxel).astype(np.int64) + 1
    if float(np.prod(dims.astype(np.float64))) >= 2.0**62:
        raise InputError(
            path, f"spans {np.round(hi - lo, 1).tolist()} m: too large for {voxel * 1e3:g} mm voxels"
        )
    grid = VoxelGrid(lo, voxel, dims)
    rows = np.full(count, -1, dtype=np.int32)  # first each point's voxel within its chunk, then in the cloud
    chunk_keys: list[tuple[int, np.ndarray]] = []
    acc = _Sums.empty()
    pending: list[_Sums] = []
    pending_n = 0
    colored = True
    for start, pts, col in iter_point_chunks(path, units, CHUNK, colors=True, cloud=cloud):
        ok = _finite(pts)
        colored = colored and col is not None
        part, inv = _Sums.of(
            grid.flat_keys(pts[ok]), pts[ok], col[ok] if colored and col is not None else None, start + ok
        )
        rows[start + ok] = inv
        chunk_keys.append((start, part.keys))
        pending.append(part)
        pending_n += len(part.keys)
        if pending_n > max(len(acc.keys), CHUNK):
            acc, pending, pending_n = _Sums.merge([acc, *pending]), [], 0
            _check_memory(path, len(acc.keys), count, voxel, budget)
    acc = _Sums.merge([acc, *pending])
    _check_memory(path, len(acc.keys), count, voxel, budget)
    order = np.argsort(acc.first, kind="stable")  # rows in order of first appearance, as voxel_downsample
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    ends = [s for s, _ in chunk_keys[1:]] + [count]
    for (start, keys), end in zip(chunk_keys, ends, strict=True):
        final = np.append(rank[np.searchsorted(acc.keys, keys)], np.int32(-1))  # -1 stays -1
        rows[start:end] = final[rows[start:end]]
    cnt = acc.count[order].astype(np.float64)[:, None]
    colors = None if not colored or acc.color is None else np.clip(acc.color[order] / cnt, 0.0, 1.0)
    return VoxelCloud(
        points=acc.sum[order] / cnt,
        colors=colors,
        sensor_origin=None
        if cloud is None or cloud.sensor_origin is None or np.ndim(cloud.sensor_origin) != 1
        else cloud.sensor_origin,
        source=str(path),
        grid=grid,
        rows=rows,
    )


def _check_memory(path: Path, voxels: int, count: int, voxel: float, budget: float) -> None:
    need = voxels * BYTES_PER_VOXEL + count * BYTES_PER_POINT
    if need > budget:
        kept = f" in at least {voxels:,} voxels of {voxel * 1e3:g} mm" if voxels else ""
        raise InputError(
            path, f"too large for the memory available: {count:,} points{kept} need about {need / 2**30:.1f} GB to "
            f"reconstruct, {budget / 2**30:.1f} GB available (set {MAX_MEMORY_VAR}=GB, a coarser --mesh-voxel, or "
            "split the scan)"
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
    def of(
        keys: np.ndarray, pts: np.ndarray, col: np.ndarray | None, index: np.ndarray
    ) -> tuple[_Sums, np.ndarray]:
        """The sums of one chunk, and each point's voxel among them."""
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        sums = _Sums(uk, np.bincount(inv, minlength=len(uk)), _sum(inv, pts, len(uk)),
                     None if col is None else _sum(inv, col, len(uk)), index[first])  # fmt: skip
        return sums, inv

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
