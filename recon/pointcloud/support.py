"""The support surface: RANSAC plane, the gravity-aligned scene frame it defines, and the crop to its extent.

Scene frame: z up (the plane normal, oriented toward the sensor or along a given up direction), metres, the support
surface at z = 0. When ``keep_xy`` is set (scan poses were given), the frame is the input frame re-levelled with
the smallest rotation and shifted only along z, so x/y follow the given world frame; otherwise the origin is put
at the centre of the seen support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull, QhullError

from real2sim.errors import StageError
from real2sim.transforms import times_matrix


@dataclass(frozen=True, eq=False)
class SupportFit:
    """A fitted support plane.

    ``normal``/``point``: the plane in the input frame (unit normal pointing to the free side). ``world_from_input``:
    4x4 into the scene frame. ``hull``: the support's seen extent as a 2D convex polygon (K, 2) in scene x/y [m].
    ``inlier_fraction``: share of the valid points that lie on the plane.
    """

    normal: np.ndarray
    point: np.ndarray
    world_from_input: np.ndarray
    hull: np.ndarray
    inlier_fraction: float


def voxel_downsample(points: np.ndarray, voxel: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean point per occupied voxel, and for every input point the index of its voxel (vectorised)."""
    keys = np.floor(points / voxel).astype(np.int64)
    keys -= keys.min(axis=0)
    dims = keys.max(axis=0) + 1
    if float(dims[0]) * float(dims[1]) * float(dims[2]) < 2.0**62:  # one int64 key per voxel: fast 1-D unique
        flat = (keys[:, 0] * dims[1] + keys[:, 1]) * dims[2] + keys[:, 2]
        _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(
        first, kind="stable"
    )  # voxels in order of first appearance: deterministic, input-ordered
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    inverse = rank[inverse]
    return voxel_mean(points, inverse, len(order)), inverse


def voxel_mean(values: np.ndarray, inverse: np.ndarray, n: int) -> np.ndarray:
    """Per-voxel mean of per-point ``values`` (N, C), given each point's voxel index ``inverse`` (0..n-1)."""
    counts = np.bincount(inverse, minlength=n).astype(np.float64)
    return np.stack([np.bincount(inverse, weights=values[:, j], minlength=n) / counts
                     for j in range(values.shape[1])], axis=1)  # fmt: skip


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest rotation taking unit vector ``a`` onto unit vector ``b``."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    c = float(np.dot(a, b))
    if c < -1 + 1e-12:  # opposite: rotate pi about any axis orthogonal to a
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-6:
            axis = np.cross(a, [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return 2 * np.outer(axis, axis) - np.eye(3)
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + vx + vx @ vx / (1 + c)


def fit_plane_lsq(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares plane (unit normal, centroid) of points: the normal is the scatter matrix's eigenvector of the
    smallest eigenvalue (a 3 x 3 problem, not a decomposition of every point)."""
    c = points.mean(axis=0)
    q = points - c
    _, v = np.linalg.eigh(q.T @ q)
    return v[:, 0], c


def ransac_planes(
    pts: np.ndarray, dist: float, n_planes: int, seed: int, min_inliers: int = 50
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Up to ``n_planes`` planes found one after another, each in the points the earlier ones left; the search stops
    when fewer than ``min_inliers`` points are left (no further plane could hold that many)."""
    import open3d as o3d

    o3d.utility.random.seed(seed)
    out = []
    remaining = np.arange(len(pts))
    for _ in range(n_planes):
        if len(remaining) < max(min_inliers, 50):
            break
        pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(pts[remaining]))
        model, inl = pc.segment_plane(distance_threshold=dist, ransac_n=3, num_iterations=1000)
        inl = np.asarray(inl, dtype=np.int64)
        if len(inl) < 3:
            break
        out.append((np.asarray(model, dtype=np.float64), remaining[inl]))
        remaining = np.delete(remaining, inl)
    return out


def largest_patch(xy: np.ndarray, cell: float) -> np.ndarray:
    """Mask of the points in the largest 8-connected patch of a 2D occupancy grid (drops far coplanar junk)."""
    ij = np.floor((xy - xy.min(axis=0)) / cell).astype(np.int64)
    grid = np.zeros(ij.max(axis=0) + 1, dtype=bool)
    grid[ij[:, 0], ij[:, 1]] = True
    grid = ndimage.binary_closing(grid, structure=np.ones((3, 3)), iterations=1) | grid
    lab, n = cast("tuple[np.ndarray, int]", ndimage.label(grid, structure=np.ones((3, 3))))
    if n <= 1:
        return np.ones(len(xy), dtype=bool)
    sizes = np.bincount(lab[ij[:, 0], ij[:, 1]], minlength=n + 1)
    sizes[0] = 0
    return lab[ij[:, 0], ij[:, 1]] == int(np.argmax(sizes))


REFIT_PASSES = 20
"""Most refits of the support plane on the points in its band (it usually settles in 2-4)."""

_LEVEL_COS = float(np.cos(np.radians(30.0)))
"""A support candidate must be within 30 deg of a given up direction."""


def fit_support(
    points: np.ndarray,
    *,
    voxel: float,
    distance: float,
    min_fraction: float,
    sensor: np.ndarray | None,
    up: np.ndarray | None,
    keep_xy: bool,
    seed: int,
    source: str = "",
) -> SupportFit:
    """Find the dominant plane of the valid ``points`` (input frame) and the scene frame it defines.

    The plane normal is oriented along ``up`` when given, else toward the mean ``sensor`` position (the input
    origin when None). Raises ``StageError`` when no plane holds at least ``min_fraction`` of the points.
    """
    where = f"{source}: " if source else ""
    ds, _ = voxel_downsample(points, voxel)
    # Candidates: the few largest planes of the evenly sampled cloud; the support is the one holding the most of
    # the sensor's own points (a near table outweighs a larger, farther floor or wall).
    min_inliers = max(min_fraction * len(ds), 50)
    planes = ransac_planes(ds, distance, 3, seed, int(np.ceil(min_inliers)))
    planes = [(m, inl) for m, inl in planes if len(inl) >= min_inliers]
    if not planes:
        raise StageError(
            f"{where}no support plane found (no plane holds {min_fraction:.0%} of the points); "
            "for a scan of a single object without a table use --object-only"
        )

    if (
        up is not None
    ):  # a support is level: planes far from the given up (a wall, an object's side) are not it
        u = np.asarray(up, dtype=np.float64) / np.linalg.norm(up)
        level = [(m, inl) for m, inl in planes if abs(m[:3] @ u) >= _LEVEL_COS * np.linalg.norm(m[:3])]
        planes = level or planes

    def support_count(m: np.ndarray) -> int:
        return int((np.abs(points @ m[:3] + m[3]) < distance * np.linalg.norm(m[:3])).sum())

    model = max(planes, key=lambda pl: support_count(pl[0]))[0]
    n0 = model[:3] / np.linalg.norm(model[:3])
    d0 = model[3] / np.linalg.norm(model[:3])
    # Refine on every input point near the RANSAC plane (two passes in its band) for a sub-degree normal ...
    near = np.abs(points @ n0 + d0) < distance
    n, c = fit_plane_lsq(points[near])
    near = np.abs((points - c) @ n) < distance
    n, c = fit_plane_lsq(points[near])
    # then in a narrower band until it holds the same points: Open3D's RANSAC is not reproducible from run to run
    # although seeded, and this fixed point does not depend on where the search started, so the scene frame is the
    # same in every run
    for _ in range(REFIT_PASSES):
        again = np.abs((points - c) @ n) < distance * 0.6
        if np.array_equal(again, near):
            break
        near = again
        n, c = fit_plane_lsq(points[near])
    if up is not None:
        ref = np.asarray(up, dtype=np.float64)
    else:
        s = np.zeros(3) if sensor is None else np.asarray(sensor, dtype=np.float64)
        ref = s - c
    if np.dot(n, ref) < 0:
        n = -n
    R = rotation_between(n, np.array([0.0, 0.0, 1.0]))
    on_plane = points[near] @ R.T
    keep = largest_patch(on_plane[:, :2], max(4 * voxel, 0.02))
    on_plane = on_plane[keep]
    z0 = float(np.median(on_plane[:, 2]))
    t = np.array([0.0, 0.0, -z0])
    if not keep_xy:
        t[:2] = -0.5 * (on_plane[:, :2].min(axis=0) + on_plane[:, :2].max(axis=0))
    world_from_input = np.eye(4)
    world_from_input[:3, :3] = R
    world_from_input[:3, 3] = t
    xy = on_plane[:, :2] + t[:2]
    try:
        hull_xy = xy[ConvexHull(xy).vertices]
    except QhullError:
        raise StageError(f"{where}the support plane's points are degenerate (collinear)") from None
    return SupportFit(
        normal=n,
        point=c,
        world_from_input=world_from_input,
        hull=hull_xy,
        inlier_fraction=float(near.sum() / len(points)),
    )


def inside_polygon(xy: np.ndarray, hull: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """Mask of ``xy`` points inside the convex polygon ``hull`` (counter-clockwise, as Qhull gives), grown by
    ``margin`` [m]."""
    xy = np.asarray(xy, dtype=np.float64)
    hull = np.asarray(hull, dtype=np.float64)
    if len(hull) < 3 or len(xy) < 1000 or margin < 0:
        return polygon_signed_distance(xy, hull) <= margin
    # Fast path (O(N log K)): the wedge around the centroid each point falls in decides against that wedge's
    # edge; only points outside the polygon need the margin test against every edge.
    ctr = hull.mean(axis=0)
    ang = np.arctan2(hull[:, 1] - ctr[1], hull[:, 0] - ctr[0])
    order = np.argsort(ang)
    hv, ang = hull[order], ang[order]
    pa = np.arctan2(xy[:, 1] - ctr[1], xy[:, 0] - ctr[0])
    i = (np.searchsorted(ang, pa) - 1) % len(hv)
    a, b = hv[i], hv[(i + 1) % len(hv)]
    cross = (b[:, 0] - a[:, 0]) * (xy[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (xy[:, 0] - a[:, 0])
    inside = cross >= 0  # left of the counter-clockwise edge
    out = np.flatnonzero(~inside)
    if margin > 0 and len(out):
        inside[out] = polygon_signed_distance(xy[out], hull) <= margin
    return inside


def polygon_signed_distance(xy: np.ndarray, hull: np.ndarray) -> np.ndarray:
    """Max over edges of the signed distance to the edge's line: negative inside a convex polygon."""
    a = hull
    b = np.roll(hull, -1, axis=0)
    e = b - a
    nrm = np.stack([e[:, 1], -e[:, 0]], axis=1)  # outward for counter-clockwise order
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True) + 1e-18
    # orientation check: make normals point away from the centroid
    ctr = hull.mean(axis=0)
    flip = np.einsum("ij,ij->i", nrm, a - ctr) < 0
    nrm[flip] *= -1
    off = np.einsum("ij,ij->i", nrm, a)
    # not ``xy @ nrm.T``: BLAS rounds it differently per CPU kernel, and the mesh's footprint moves with it
    return (times_matrix(xy, nrm.T) - off).max(axis=1)
