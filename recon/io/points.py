"""``read_points``: any supported point-cloud file to a ``PointCloud`` in metres (by file suffix)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from real2sim.errors import ConfigError, InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields, reading
from real2sim.recon.io.e57 import read_e57
from real2sim.recon.io.kitti import read_kitti
from real2sim.recon.io.las import read_las
from real2sim.recon.io.npy import read_npy
from real2sim.recon.io.pcd import read_pcd
from real2sim.recon.io.ply import iter_ply_vertices, ply_vertex_layout, read_ply
from real2sim.recon.io.text import read_text
from real2sim.recon.io.units import UNITS, Units

READERS = {
    ".ply": read_ply,
    ".pcd": read_pcd,
    ".xyz": read_text,
    ".pts": read_text,
    ".txt": read_text,
    ".npy": read_npy,
    ".bin": read_kitti,
    ".las": read_las,
    ".laz": read_las,
    ".e57": read_e57,
}
"""The point-cloud formats by file suffix, one line each: a reader takes the path and returns a ``PointCloud`` in
file units (``read_points`` scales and checks it). A new format is a module of this package and its line here."""
SUFFIXES = tuple(READERS)


def unit_scale(units: Units) -> float:
    """Metres per file unit."""
    if units not in UNITS:
        raise ConfigError(f"units must be one of {', '.join(UNITS)}; got {units!r}")
    return UNITS[units]


def read_points(path: str | Path, units: Units = "m") -> PointCloud:
    """Read a point cloud file; ``units`` says what one file unit is (``m``, ``cm`` or ``mm``)."""
    scale = unit_scale(units)
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "is a directory, not a point-cloud file (give the scan files inside it)")
    if not path.is_file():
        raise InputError(
            path, "not a regular file (a FIFO, socket or device)" if path.exists() else "no such file"
        )
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise InputError(path, f"unsupported point-cloud format {suffix!r}; supported: {', '.join(SUFFIXES)}")
    with reading(path, suffix[1:].upper()):
        cloud = READERS[suffix](path)
    with np.errstate(invalid="ignore", over="ignore"):
        return _checked(cloud, path, scale)


def _checked(cloud: PointCloud, path: Path, scale: float) -> PointCloud:
    pts = np.asarray(cloud.points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise InputError(path, f"expected (N, 3) points, got shape {pts.shape}")
    if len(pts) == 0:
        raise InputError(path, "the file holds no points")
    if not np.isfinite(pts).all(axis=1).any():
        raise InputError(path, f"all {len(pts)} points are invalid (NaN or infinite)")
    so = cloud.sensor_origin
    return PointCloud(
        points=pts * scale,
        colors=cloud.colors,
        normals=cloud.normals,
        labels=cloud.labels,
        intensity=cloud.intensity,
        sensor_origin=None if so is None else np.asarray(so, dtype=np.float64) * scale,
        width=cloud.width,
        height=cloud.height,
        source=str(path),
    )


def _layout(path: Path) -> tuple[int, np.dtype, int] | None:
    if path.suffix.lower() != ".ply" or not path.is_file():
        return None
    with reading(path, "PLY"):
        return ply_vertex_layout(path)


def point_count(path: str | Path) -> int | None:
    """The number of points of a file that ``iter_point_chunks`` reads in chunks (binary PLY), from its header;
    None for other files."""
    layout = _layout(Path(path))
    return None if layout is None else layout[2]


Chunk = tuple[int, np.ndarray, np.ndarray | None]
"""``(index of the first point, points (n, 3) in metres with NaN rows, colours (n, 3) or None)``."""


def iter_point_chunks(
    path: str | Path, units: Units, chunk: int, colors: bool = False, cloud: PointCloud | None = None
) -> Iterator[Chunk]:
    """The points of a file ``chunk`` at a time (colours too when ``colors``): binary PLY read in chunks, any other
    file read whole by ``read_points`` (or taken from ``cloud``, already read) and then sliced."""
    path = Path(path)
    scale = unit_scale(units)
    layout = None if cloud is not None else _layout(path)
    if layout is None:
        cloud = cloud if cloud is not None else read_points(path, units)
        for start in range(0, len(cloud), chunk):
            c = cloud.colors
            yield (
                start,
                cloud.points[start : start + chunk],
                c[start : start + chunk] if colors and c is not None else None,
            )
        return
    start = 0
    for fields in iter_ply_vertices(path, layout, chunk):
        with reading(path, "PLY"), np.errstate(invalid="ignore", over="ignore"):
            col = None
            if colors:
                c = cloud_from_fields(fields, path)
                pts, col = c.points, c.colors
            elif all(k in fields for k in "xyz"):
                pts = np.stack([fields[k] for k in "xyz"], axis=1).astype(np.float64)
            else:
                pts = cloud_from_fields(fields, path).points  # raises: no x, y, z
            if scale != 1.0:
                pts *= scale
        yield start, pts, col
        start += len(pts)
