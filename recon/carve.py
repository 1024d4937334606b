"""Free-space carving: space a sensor ray passed through is empty.

Every measured point is the end of a ray from its sensor origin. On an object's meshing grid, the voxels such a ray
crossed before it reached its end point (less a margin for range noise) were seen empty. What no ray crossed is
either inside an object or unseen; the meshing (``mesh.py``) treats the unseen remainder above the support as
solid, which closes unseen undersides and backs as tightly as the views allow and leaves seen cavities open.

Rays that end on the support are carved down to the support plane (the ray's intersection with ``z = support_z``,
at most ``margin`` behind the measured point), so range noise on the table leaves no solid skirt around objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class FreeSpace:
    """Sensor rays of a scene, all in the meshing frame: ``ends`` (N, 3) measured points, ``origins`` (N, 3) the
    sensor position of each, ``on_support`` (N,) bool: the point lies on the support plane."""

    ends: np.ndarray
    origins: np.ndarray
    on_support: np.ndarray


def carve(
    lo: np.ndarray,
    h: float,
    shape: tuple[int, int, int],
    rays: FreeSpace,
    margin: float,
    support_z: float | None,
    max_samples: int = 4_000_000,
) -> np.ndarray:
    """Bool grid (``shape``, nodes at ``lo + h * index``): True where some ray passed through the node's voxel.

    A ray is sampled every ``h / 2`` from ``margin`` [m] in front of its end point (from the support plane for
    support rays) to where it leaves the grid toward its sensor.
    """
    shape_a = np.asarray(shape)
    carved = np.zeros(int(np.prod(shape_a)), dtype=bool)
    ends = np.asarray(rays.ends, dtype=np.float64)
    d = np.asarray(rays.origins, dtype=np.float64) - ends
    length = np.linalg.norm(d, axis=1)
    ok = length > 1e-9
    ends, d, length = ends[ok], d[ok], length[ok]
    on_support = np.asarray(rays.on_support, dtype=bool)[ok]
    u = d / length[:, None]
    box_lo = lo - 0.5 * h
    box_hi = lo + h * (shape_a - 1) + 0.5 * h
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / u
        t1 = (box_lo - ends) * inv
        t2 = (box_hi - ends) * inv
        tmin = np.nanmax(np.minimum(t1, t2), axis=1)
        tmax = np.nanmin(np.maximum(t1, t2), axis=1)
    start = np.full(len(ends), margin)
    if support_z is not None and on_support.any():
        uz = u[on_support, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = np.where(np.abs(uz) > 1e-6, (support_z - ends[on_support, 2]) / uz, 0.0)
        # never more than ``margin`` behind the end point: a point labelled support may be an object's foot
        start[on_support] = np.maximum(ts, -margin)
    tmin = np.maximum(tmin, start)
    tmax = np.minimum(tmax, length)
    sel = np.flatnonzero(tmax > tmin)
    if len(sel) == 0:
        return carved.reshape(shape)
    step = 0.5 * h
    n = (np.floor((tmax[sel] - tmin[sel]) / step) + 1).astype(np.int64)
    csum = np.cumsum(n)
    bounds = np.searchsorted(csum, np.arange(max_samples, csum[-1] + max_samples, max_samples), side="right")
    a = 0
    for b in np.unique(np.append(bounds, len(sel))):
        if b <= a:
            continue
        r = sel[a:b]
        nr = n[a:b]
        rid = np.repeat(np.arange(len(r)), nr)
        first = np.cumsum(nr) - nr
        k = np.arange(int(nr.sum())) - np.repeat(first, nr)
        t = tmin[r][rid] + step * k
        p = ends[r][rid] + t[:, None] * u[r][rid]
        ijk = np.rint((p - lo) / h).astype(np.int64)
        np.clip(ijk, 0, shape_a - 1, out=ijk)
        carved[np.ravel_multi_index(ijk.T, shape)] = True
        a = b
    return carved.reshape(shape)


def unseen_solid(carved: np.ndarray, spacing_vox: float) -> np.ndarray:
    """Solid mask from a carved mask: not carved, with slivers between neighbouring rays opened away (rays are
    ``spacing_vox`` voxels apart) and single-ray tunnels through solid closed."""
    from scipy import ndimage

    solid = ~carved
    r = int(np.clip(np.ceil(0.5 * spacing_vox), 1, 4))
    solid = ndimage.binary_opening(solid, iterations=r, border_value=1)
    solid = ndimage.binary_closing(solid, iterations=1, border_value=1)
    return solid


def ray_spacing(ends: np.ndarray, origins: np.ndarray, sample: int = 4000, seed: int = 0) -> float:
    """Typical distance [m] between neighbouring rays of one sensor near ``ends``: the median nearest-neighbour
    distance of end points that share a sensor origin (all points together when origins are all distinct)."""
    from scipy.spatial import cKDTree

    if len(ends) < 2:
        return 0.0
    key = np.round(origins, 6)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    groups = [np.flatnonzero(inv == g) for g in range(len(uniq))] if len(uniq) <= 64 else [np.arange(len(ends))]
    rng = np.random.default_rng(seed)
    dists = []
    for g in groups:
        if len(g) < 2:
            continue
        q = g if len(g) <= sample else rng.choice(g, sample, replace=False)
        d, _ = cKDTree(ends[g]).query(ends[q], k=2)
        dists.append(d[:, 1])
    return float(np.median(np.concatenate(dists))) if dists else 0.0
