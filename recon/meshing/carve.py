"""Free-space carving: space a sensor ray passed through is empty.

Every measured point is the end of a ray from its sensor origin. On an object's meshing grid, the voxels such a ray
crossed before it reached its end point (less a margin for range noise) were seen empty. What no ray crossed is
either inside an object or unseen; the meshing (``meshing/mesh.py``) treats the unseen remainder above the support as
solid, which closes unseen undersides and backs as tightly as the views allow and leaves seen cavities open.

Rays that end on the support are carved down to the support plane (the ray's intersection with ``z = support_z``,
at most ``margin`` behind the measured point), so range noise on the table leaves no solid skirt around objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from real2sim.transforms import times_matrix

MAX_SENSORS = 32
"""Up to this many distinct sensor positions, carving projects the grid into each sensor's depth map (fast);
beyond (a moving sensor with per-point origins), every ray is marched through the grid."""


@dataclass(frozen=True, eq=False)
class FreeSpace:
    """Sensor rays of a scene, all in the meshing frame: ``ends`` (N, 3) measured points, ``origins`` (N, 3) the
    sensor position of each, ``on_support`` (N,) bool: the point lies on the support plane. ``sensor_id`` (N,)
    indexes ``sensors`` (K, 3), the distinct origins, when there are at most ``MAX_SENSORS`` of them."""

    ends: np.ndarray
    origins: np.ndarray
    on_support: np.ndarray
    sensor_id: np.ndarray | None = None
    sensors: np.ndarray | None = None

    @classmethod
    def from_rays(cls, ends: np.ndarray, origins: np.ndarray, on_support: np.ndarray) -> FreeSpace:
        """Rays with their distinct sensor positions found (exact duplicates of the origin rows)."""
        ends = np.asarray(ends, dtype=np.float64)
        origins = np.broadcast_to(np.asarray(origins, dtype=np.float64), ends.shape)
        first = origins[:1]
        if len(origins) and bool(np.all(origins == first)):
            sensors, sid = first.copy(), np.zeros(len(ends), dtype=np.int64)
        else:
            sensors, sid = np.unique(origins, axis=0, return_inverse=True)
            sid = sid.reshape(-1)
        if len(sensors) > MAX_SENSORS:
            sensors, sid = None, None
        return cls(ends, origins, np.asarray(on_support, dtype=bool), sid, sensors)

    def sensor_rays(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The rays of sensor ``k``: their indices and unit directions from the sensor (computed once, shared by
        every object's carving)."""
        return self._sensor_rays[k]

    def in_box(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Indices (ascending) of the rays whose end point lies in the box ``lo`` .. ``hi`` (bounds included)."""
        xs, order = self._x_order
        cand = order[np.searchsorted(xs, lo[0], side="left") : np.searchsorted(xs, hi[0], side="right")]
        e = self.ends[cand]
        ok = np.all((e >= lo) & (e <= hi), axis=1)
        return np.sort(cand[ok])

    @cached_property
    def _x_order(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.ends[:, 0])  # ties in any order: ``in_box`` sorts what it selects
        return self.ends[order, 0], order

    @cached_property
    def _sensor_rays(self) -> list[tuple[np.ndarray, np.ndarray]]:
        if self.sensors is None or self.sensor_id is None:
            return []
        out = []
        for k, o in enumerate(self.sensors):
            idx = np.flatnonzero(self.sensor_id == k)
            d = self.ends[idx] - o
            out.append((idx, d / (np.linalg.norm(d, axis=1, keepdims=True) + 1e-300)))
        return out


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
    start = _start_offsets(ends, u, on_support, margin, support_z)
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


def _start_offsets(
    ends: np.ndarray, u: np.ndarray, on_support: np.ndarray, margin: float, support_z: float | None
) -> np.ndarray:
    """Distance [m] in front of each end point (toward the sensor, unit directions ``u``) where carving starts."""
    start = np.full(len(ends), margin)
    if support_z is not None and on_support.any():
        uz = u[on_support, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = np.where(np.abs(uz) > 1e-6, (support_z - ends[on_support, 2]) / uz, 0.0)
        # never more than ``margin`` behind the end point: a point labelled support may be an object's foot
        start[on_support] = np.maximum(ts, -margin)
    return start


def carve_projective(
    lo: np.ndarray,
    h: float,
    shape: tuple[int, int, int],
    rays: FreeSpace,
    margin: float,
    support_z: float | None,
) -> np.ndarray | None:
    """Same result as ``carve`` computed per sensor by projection (a z-buffer): the rays of one sensor through the
    grid make a small depth map (pixels about one ray apart, each keeping its nearest carving limit, so a pixel
    never carves past any of its rays); a node is carved when it lies in front of its pixel's limit. Linear in
    the grid size per sensor. ``None`` when the sensors are not few and distinct or one sits inside the grid."""
    from scipy.spatial import cKDTree

    if rays.sensors is None or rays.sensor_id is None:
        return None
    shape_a = np.asarray(shape)
    hi = lo + h * (shape_a - 1)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    axes = [lo[i] + h * np.arange(shape[i]) for i in range(3)]
    carved = np.zeros(shape, dtype=bool)
    for k, o in enumerate(rays.sensors):
        c = 0.5 * (lo + hi) - o
        if np.all((o >= lo - h) & (o <= hi + h)):
            return None
        c /= np.linalg.norm(c)
        a = np.cross(c, [1.0, 0.0, 0.0] if abs(c[0]) < 0.9 else [0.0, 1.0, 0.0])
        a /= np.linalg.norm(a)
        b = np.cross(c, a)
        B = np.stack([a, b, c], axis=1)  # columns: local axes; local = (x - o) @ B
        cl = times_matrix(corners - o, B)
        if np.any(cl[:, 2] <= 1e-6):
            return None
        uv = cl[:, :2] / cl[:, 2:]
        uv_lo, uv_hi = uv.min(axis=0), uv.max(axis=0)
        # only rays within the cone around c that holds the uv box can fall in it (a cheap pre-selection)
        idx, unit = rays.sensor_rays(k)
        r2 = float(np.maximum(uv_lo**2, uv_hi**2).sum())  # the uv box's farthest corner from the axis
        idx = idx[times_matrix(unit, c) >= 1.0 / np.sqrt(1.0 + r2) - 1e-6]
        d = rays.ends[idx] - o
        dl = times_matrix(d, B)
        ok = dl[:, 2] > 1e-9
        ruv = dl[:, :2] / np.where(ok, dl[:, 2], 1.0)[:, None]
        sel = ok & np.all((ruv >= uv_lo) & (ruv <= uv_hi), axis=1)
        if sel.sum() < 2:
            continue
        idx, ruv, d = idx[sel], ruv[sel], d[sel]
        rng_ = np.linalg.norm(d, axis=1)
        u = -d / rng_[:, None]
        limit = rng_ - _start_offsets(rays.ends[idx], u, rays.on_support[idx], margin, support_z)
        q = ruv if len(ruv) <= 4000 else ruv[np.random.default_rng(k).choice(len(ruv), 4000, replace=False)]
        dd, _ = cKDTree(ruv).query(q, k=2)
        pix = 1.5 * float(np.median(dd[:, 1]))
        if not pix > 0:
            continue
        nuv = np.ceil((uv_hi - uv_lo) / pix).astype(np.int64) + 1
        pid = np.minimum(((ruv - uv_lo) / pix).astype(np.int64), nuv - 1)
        flat = pid[:, 0] * nuv[1] + pid[:, 1]
        zbuf = np.full(int(nuv[0] * nuv[1]), -np.inf)
        order = np.lexsort((limit, flat))
        f_sorted = flat[order]
        firsts = np.flatnonzero(np.r_[True, f_sorted[1:] != f_sorted[:-1]])
        zbuf[f_sorted[firsts]] = limit[order][firsts]
        # every node in the sensor's local frame, separably: local = X[i] + Y[j] + Z[k] - o @ B
        X = (axes[0][:, None] * B[0]).astype(np.float32)[:, None, None, :]
        Y = (axes[1][:, None] * B[1]).astype(np.float32)[None, :, None, :]
        Z = (axes[2][:, None] * B[2] - times_matrix(o, B)).astype(np.float32)[None, None, :, :]
        gl = X + Y + Z
        gz = gl[..., 2]
        gp0 = np.clip(((gl[..., 0] / gz - uv_lo[0]) / pix).astype(np.int64), 0, nuv[0] - 1)
        gp1 = np.clip(((gl[..., 1] / gz - uv_lo[1]) / pix).astype(np.int64), 0, nuv[1] - 1)
        lim = zbuf[gp0 * nuv[1] + gp1]
        carved |= np.sqrt(np.einsum("...j,...j->...", gl, gl)) < lim
    return carved


def unseen_solid(carved: np.ndarray, spacing_vox: float) -> np.ndarray:
    """Solid mask from a carved mask: not carved, with slivers between neighbouring rays opened away (rays are
    ``spacing_vox`` voxels apart) and single-ray tunnels through solid closed."""
    from scipy import ndimage

    solid = ~carved
    r = int(np.clip(np.ceil(0.5 * spacing_vox), 1, 4))
    solid = ndimage.binary_opening(solid, iterations=r, border_value=1)
    solid = ndimage.binary_closing(solid, iterations=1, border_value=1)
    return solid


def ray_spacing_of(rays: FreeSpace, idx: np.ndarray) -> float:
    """``ray_spacing`` of the rays ``idx``, grouped by the sensor list when the rays have one (the same groups as
    their rounded origins give, without sorting every ray's origin)."""
    if rays.sensors is None or rays.sensor_id is None:
        return ray_spacing(rays.ends[idx], np.asarray(rays.origins)[idx])
    _, of_sensor = np.unique(np.round(rays.sensors, 6), axis=0, return_inverse=True)
    return ray_spacing(rays.ends[idx], None, groups=of_sensor.reshape(-1)[rays.sensor_id[idx]])


def ray_spacing(
    ends: np.ndarray,
    origins: np.ndarray | None,
    sample: int = 4000,
    seed: int = 0,
    groups: np.ndarray | None = None,
) -> float:
    """Typical distance [m] between neighbouring rays of one sensor near ``ends``: the median nearest-neighbour
    distance of end points that share a sensor origin (all points together when origins are all distinct)."""
    from scipy.spatial import cKDTree

    if len(ends) < 2:
        return 0.0
    if groups is None:  # group by the rounded origins
        _, inv = np.unique(np.round(np.asarray(origins), 6), axis=0, return_inverse=True)
        groups = inv.reshape(-1)
    present = np.unique(groups)
    members = [np.flatnonzero(groups == g) for g in present] if len(present) <= 64 else [np.arange(len(ends))]
    rng = np.random.default_rng(seed)
    dists = []
    for g in members:
        if len(g) < 2:
            continue
        q = g if len(g) <= sample else rng.choice(g, sample, replace=False)
        d, _ = cKDTree(ends[g]).query(ends[q], k=2)
        dists.append(d[:, 1])
    return float(np.median(np.concatenate(dists))) if dists else 0.0
