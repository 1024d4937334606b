"""Per-object watertight meshing from oriented points (a volumetric method).

A signed distance is estimated on a voxel grid from the oriented points (each grid point takes the
distance-weighted mean of ``dot(x - p_i, n_i)`` over its nearest points, Hoppe et al. 1992), so regions the sensor
never saw take the sign of the nearest seen surface. With a support plane, the volume is intersected with the
half-space above it (the unseen underside is closed exactly at ``z = support_z``) and with the prism over the
points' 2D convex footprint (the unseen back cannot grow past what the top view bounds). Marching cubes on the
padded grid gives a closed surface; the largest component is kept, oriented outward and decimated to the triangle
budget, and checked watertight (``meshing/surface.py``).

Thin-walled objects (cups, bowls: ``thin_wall_fraction``) first have their unseen side completed through a
symmetry the scan supports (``meshing/symmetry.py``), then are meshed on the finest grid and decimated to the budget
(their walls would be thinned on a budget-sized grid).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError, cKDTree

from real2sim.errors import StageError
from real2sim.executor import thread_budget
from real2sim.recon.meshing.carve import FreeSpace, carve, carve_projective, ray_spacing_of, unseen_solid
from real2sim.recon.meshing.surface import keep_largest_inside, poisson_surface, seal, surface_within_budget
from real2sim.recon.pointcloud.support import polygon_signed_distance

BUDGET_FACES_PER_AREA = 2.5
"""Marching-cubes triangles per (box surface area / voxel area): sizes the grid for the triangle budget."""


class MeshCfg(Protocol):
    @property
    def mesh_voxel(self) -> float: ...
    @property
    def mesh_max_cells(self) -> int: ...
    @property
    def max_triangles(self) -> int: ...
    @property
    def symmetry_completion(self) -> bool: ...
    @property
    def thin_wall_grid(self) -> bool: ...


def signed_distance(
    lo: np.ndarray,
    h: float,
    shape: tuple[int, int, int],
    points: np.ndarray,
    normals: np.ndarray,
    k: int,
    solid: np.ndarray | None = None,
    band: float | None = None,
) -> np.ndarray:
    """Hoppe-style signed distance on the grid ``lo + h * index`` from oriented ``points``: positive outside.

    The nearest point of every grid node comes from a Euclidean distance transform of the occupied voxels (linear
    time); far from the surface only the sign matters and comes from that point's tangent plane. Within a thin
    band around the points the value is a Gaussian-weighted mean of the tangent-plane distances of the ``k``
    nearest points (a smooth, sub-voxel zero crossing).
    """
    from scipy import ndimage

    ijk = np.clip(np.rint((points - lo) / h).astype(np.int64), 0, np.array(shape) - 1)
    rep = np.full(shape, -1, dtype=np.int64)
    rep[ijk[:, 0], ijk[:, 1], ijk[:, 2]] = np.arange(len(points))
    idx = cast(
        np.ndarray, ndimage.distance_transform_edt(rep < 0, return_distances=False, return_indices=True)
    )
    near = rep[idx[0], idx[1], idx[2]].ravel()
    del idx
    axes = [lo[i] + h * np.arange(shape[i]) for i in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    diff = grid - points[near]
    d1 = np.linalg.norm(diff, axis=1)
    plane1 = np.einsum("mj,mj->m", diff, normals[near])
    sd = np.where(plane1 >= 0, 1.0, -1.0) * np.maximum(d1, np.abs(plane1))
    if solid is not None:
        sd = np.where(solid.ravel(), sd, np.abs(sd))
    sigma = 1.5 * h
    near_band = np.flatnonzero(d1 < (2.5 * h if band is None else band))
    k = min(k, len(points))
    if len(near_band) and k > 1:
        g = grid[near_band]
        d, nn = cKDTree(points).query(g, k=k, workers=thread_budget())
        plane = np.einsum("mkj,mkj->mk", g[:, None, :] - points[nn], normals[nn])
        w = np.exp(-((d - d[:, :1]) ** 2) / (2 * sigma**2))
        # Only the sheet of the nearest point: across a wall thinner than the kernel, the opposite face's points
        # (normals facing the other way) would pull the mean to "inside" on both sides and thicken the wall.
        nrm = normals[nn]
        w *= np.einsum("mkj,mj->mk", nrm, nrm[:, 0]) > 0.0
        sd[near_band] = (w * plane).sum(axis=1) / w.sum(axis=1)
    return sd


def mesh_object(
    points: np.ndarray,
    normals: np.ndarray,
    support_z: float | None,
    cfg: MeshCfg,
    *,
    free_space: FreeSpace | None = None,
) -> trimesh.Trimesh:
    """A watertight, outward-oriented mesh around oriented ``points`` (same frame as the points).

    ``normals`` must point out of the object (toward the sensor). With ``support_z`` the underside is closed
    against the plane ``z = support_z`` (z up) and the object is bounded by its points' 2D convex footprint.
    ``free_space``: the scene's sensor rays; away from the points, space a ray passed through is outside and the
    rest (unseen, above the support) inside (``meshing/carve.py``). Without it the far field takes the sign of the nearest
    point's tangent plane.
    """
    points = np.asarray(points, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    if len(points) < 10:
        raise StageError(f"too few points to mesh an object ({len(points)})")
    normals = normals / (np.linalg.norm(normals, axis=1, keepdims=True) + 1e-18)
    if support_z is None and free_space is None:
        return poisson_surface(points, normals, cfg)
    lo, hi, h = _grid_spacing(points, support_z, cfg)
    thin = support_z is not None and thin_wall_fraction(points, normals, 2.0 * h) >= THIN_WALL_FRACTION
    mirrored = None
    if thin and support_z is not None and free_space is not None and cfg.symmetry_completion:
        points, normals, mirrored = _symmetry_completion(points, normals, free_space, support_z, lo, hi, h)
        lo, hi, h = _grid_spacing(points, support_z, cfg)
    if thin and cfg.thin_wall_grid:
        h = max(cfg.mesh_voxel, float((hi - lo).max()) / cfg.mesh_max_cells)
    pad = 2
    lo = lo - pad * h
    shape = np.ceil((hi + pad * h - lo) / h).astype(int) + 1
    axes = [lo[i] + h * np.arange(shape[i]) for i in range(3)]
    shp = (int(shape[0]), int(shape[1]), int(shape[2]))
    solid, band = None, None
    if free_space is not None:
        solid, band = _carved_solid(lo, h, shp, points, normals, free_space, support_z, mirrored)
    sd = signed_distance(lo, h, shp, points, normals, k=8, solid=solid, band=band)
    if support_z is not None:
        zz = np.broadcast_to(axes[2][None, None, :], tuple(shape)).ravel()
        sd = np.maximum(sd, support_z - zz)
        xy = points[:, :2]
        try:
            hull = xy[ConvexHull(xy).vertices]
            gxy = np.stack(np.meshgrid(axes[0], axes[1], indexing="ij"), axis=-1).reshape(-1, 2)
            foot = polygon_signed_distance(gxy, hull).reshape(shape[0], shape[1], 1)
            sd = np.maximum(sd.reshape(shape), foot).ravel()
        except QhullError:
            pass
    else:  # no support: bound the inside by the points' 3D convex hull (closes unseen holes without a blob)
        sd = np.maximum(sd, _hull_distance(lo, h, (int(shape[0]), int(shape[1]), int(shape[2])), points))
    vol = sd.reshape(shape)
    seal(vol, h)
    if not (vol < 0).any():
        raise StageError("meshing found no inside: the normals do not enclose a volume")
    keep_largest_inside(vol)
    mesh = surface_within_budget(vol, lo, h, cfg.max_triangles, allow_decimation=thin and cfg.thin_wall_grid)
    v = np.array(mesh.vertices)
    if support_z is not None:
        v[:, 2] = np.maximum(v[:, 2], support_z)  # interpolation may nudge the base a hair below the support
    return trimesh.Trimesh(v, np.asarray(mesh.faces), process=False)


def _grid_spacing(
    points: np.ndarray, support_z: float | None, cfg: MeshCfg
) -> tuple[np.ndarray, np.ndarray, float]:
    """The points' bounding box (down to the support) and the meshing grid spacing [m] for it."""
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    if support_z is not None:
        lo[2] = min(lo[2], support_z)
    ext = hi - lo
    # Marching cubes gives about BUDGET_FACES_PER_AREA * area / h^2 triangles; a grid finer than the triangle
    # budget can use would only be resampled coarser afterwards (area bounded by the bounding box's).
    box_area = 2.0 * float(ext[0] * ext[1] + ext[1] * ext[2] + ext[0] * ext[2])
    h_budget = np.sqrt(BUDGET_FACES_PER_AREA * box_area / (0.9 * cfg.max_triangles))
    return lo, hi, max(cfg.mesh_voxel, float(ext.max()) / cfg.mesh_max_cells, float(h_budget))


SYMMETRY_TOL_SIGMAS = 2.5
"""A mapped point agrees with an observed one within this many range-noise sigmas (at least one voxel)."""


THIN_WALL_FRACTION = 0.25
"""Thin-walled: at least this share of an object's points see the opposite sheet within two coarse voxels."""


def thin_wall_fraction(points: np.ndarray, normals: np.ndarray, radius: float) -> float:
    """Share of ``points`` with a point whose normal faces the other way (cosine below -0.5) within ``radius``.

    Unit normals with a cosine below -0.5 have, along some axis, components of opposite signs whose product is
    below -1/6 (so each above 1/6 in size): only pairs across such a split are searched, axis by axis."""
    hit = np.zeros(len(points), dtype=bool)
    for k in range(3):
        pos = np.flatnonzero(normals[:, k] > OPPOSITE_COMPONENT)
        neg = np.flatnonzero(normals[:, k] < -OPPOSITE_COMPONENT)
        if len(pos) == 0 or len(neg) == 0:
            continue
        near = cKDTree(points[pos]).sparse_distance_matrix(
            cKDTree(points[neg]), radius, output_type="ndarray"
        )
        i, j = pos[near["i"]], neg[near["j"]]
        opp = np.einsum("ij,ij->i", normals[i], normals[j]) < -0.5
        hit[i[opp]] = True
        hit[j[opp]] = True
    return float(hit.mean()) if len(hit) else 0.0


OPPOSITE_COMPONENT = 1.0 / 6.0 - 1e-9
"""Normal components smaller than this in size cannot take part in a cosine below -0.5 on their axis."""


def _symmetry_completion(
    points: np.ndarray,
    normals: np.ndarray,
    rays: FreeSpace,
    support_z: float,
    lo: np.ndarray,
    hi: np.ndarray,
    h: float,
) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray, float, tuple[int, int, int]], np.ndarray] | None]:
    """Points and normals completed through the object's symmetry (``meshing/symmetry.py``) and the function that gives
    the space its mapped rays carve on a grid ``(lo, h, shape)``; unchanged and ``None`` when the scan supports
    no symmetry. ``lo``, ``hi``, ``h``: the points' box and grid spacing (``_grid_spacing``)."""
    from real2sim.recon.meshing.symmetry import carved_images, complete, find_symmetry

    if _distrusted_origins(lo - 2 * h, hi + 2 * h, h, rays, support_z):
        return points, normals, None
    margin, sigma = _carve_margin(points, normals, rays, lo, hi, h)
    tol = max(SYMMETRY_TOL_SIGMAS * sigma, h)
    sym, _, ev = find_symmetry(points, normals, rays, support_z, h, margin, tol)
    if sym is None:
        return points, normals, None
    points, normals = complete(points, normals, sym, support_z, tol, ev)
    return points, normals, lambda lo_, h_, shape_: carved_images(sym, ev, lo_, h_, shape_)


def _carved_solid(
    lo: np.ndarray,
    h: float,
    shape: tuple[int, int, int],
    points: np.ndarray,
    normals: np.ndarray,
    rays: FreeSpace,
    support_z: float | None,
    extra: Callable[[np.ndarray, float, tuple[int, int, int]], np.ndarray] | None = None,
) -> tuple[np.ndarray | None, float | None]:
    """Solid mask from free-space carving and the band [m] around the points where the tangent planes decide.

    The carving starts ``margin`` in front of each measured point, 2.5 sigma of the range noise along the rays
    (``range_noise``), so noise behind a surface does not carve into the object, and at least the distance by
    which ray marching may round a sample onto a node beyond it (``CARVE_ROUNDING`` voxels). ``(None, None)`` (no
    carving) when the sensor origins cannot be where the sensors were (e.g. a registered cloud saved in a world
    frame, read with ``sensor_at_origin``): one inside the object's box, or one not above the support.
    """
    hi = lo + h * (np.asarray(shape) - 1)
    if _distrusted_origins(lo, hi, h, rays, support_z):
        return None, None
    inside = rays.in_box(lo, hi)
    margin, _ = _carve_margin(points, normals, rays, lo, hi, h, inside)
    carved = carve_projective(lo, h, shape, rays, margin, support_z)
    if carved is None:
        carved = carve(lo, h, shape, rays, margin, support_z)
    if extra is not None:
        carved |= extra(lo, h, shape)
    spacing = ray_spacing_of(rays, inside) / h
    return unseen_solid(carved, spacing), margin + h


def _distrusted_origins(
    lo: np.ndarray, hi: np.ndarray, h: float, rays: FreeSpace, support_z: float | None
) -> bool:
    """True when the sensor origins cannot be where the sensors were: one inside the box, or one not above the
    support."""
    origins = np.asarray(rays.sensors if rays.sensors is not None else rays.origins)
    if np.all((origins >= lo - h) & (origins <= hi + h), axis=1).any():
        return True
    return support_z is not None and bool((origins[:, 2] <= support_z + h).any())


def _carve_margin(points: np.ndarray, normals: np.ndarray, rays: FreeSpace, lo: np.ndarray, hi: np.ndarray,
                  h: float, inside: np.ndarray | None = None) -> tuple[float, float]:  # fmt: skip
    """``(margin, sigma)``: the range noise sigma [m] of the rays ending in the box and the carving margin.
    ``inside``: the indices of those rays when known (``FreeSpace.in_box``)."""
    ends = np.asarray(rays.ends)
    idx = rays.in_box(lo, hi) if inside is None else inside
    mask = np.zeros(len(ends), dtype=bool)
    mask[idx] = ~np.asarray(rays.on_support, bool)[idx]
    sigma = range_noise(points, normals, ends, np.asarray(rays.origins), mask)
    return max(2.5 * sigma, CARVE_ROUNDING * h), sigma


CARVE_ROUNDING = 0.5 * np.sqrt(3.0)
"""Ray-marching carving marks the grid node nearest each sample: up to half a voxel diagonal (in voxels) beyond it."""


def range_noise(
    points: np.ndarray,
    normals: np.ndarray,
    ends: np.ndarray,
    origins: np.ndarray,
    mask: np.ndarray,
    sample: int = 20000,
) -> float:
    """Robust standard deviation [m] of the range noise along the sensor rays: each raw end point's offset from
    the tangent plane of its 8 nearest (smoothed) ``points``, divided by the cosine between its ray and that
    normal (a range error moves a point along its ray), over rays within 60 degrees of the normal."""
    sel = np.flatnonzero(mask)
    if len(sel) > sample:
        sel = sel[np.random.default_rng(0).choice(len(sel), sample, replace=False)]
    if len(sel) == 0 or len(points) < 8:
        return 0.0
    e = ends[sel]
    u = origins[sel] - e
    u /= np.linalg.norm(u, axis=1, keepdims=True) + 1e-18
    _, nn = cKDTree(points).query(e, k=8, workers=thread_budget())
    n0 = normals[nn[:, 0]]
    res = np.einsum("ij,ij->i", e - points[nn].mean(axis=1), n0)
    cos = np.abs(np.einsum("ij,ij->i", u, n0))
    ok = cos > 0.5
    if not ok.any():
        return 0.0
    return 1.4826 * float(np.median(np.abs(res[ok] / cos[ok])))


def _hull_distance(lo: np.ndarray, h: float, shape: tuple[int, int, int], points: np.ndarray) -> np.ndarray:
    """Signed distance bound to the 3D convex hull of ``points`` on the grid (max over facet planes)."""
    try:
        eq = ConvexHull(points).equations  # (F, 4): n . x + d <= 0 inside
    except QhullError:
        return np.full(int(np.prod(shape)), -np.inf)
    axes = [lo[i] + h * np.arange(shape[i]) for i in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    out = np.empty(len(grid))
    for s in range(0, len(grid), 65536):
        g = grid[s : s + 65536]
        out[s : s + 65536] = (g @ eq[:, :3].T + eq[:, 3]).max(axis=1)
    return out
