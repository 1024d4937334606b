"""How close collision geometry is to the surface: Hausdorff distance and volume of the hull union vs the mesh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import trimesh


@dataclass(frozen=True)
class Fidelity:
    """``hausdorff`` [m]: symmetric, between the mesh surface and the boundary of the hull union;
    ``volume_ratio``: union volume / mesh volume; ``iou``: volume intersection over union (NaN if not computed)."""

    hausdorff: float
    hausdorff_rel: float
    volume_ratio: float = float("nan")
    iou: float = float("nan")


class Halfspaces(NamedTuple):
    """A convex hull as planes ``eqs`` (k, 4), ``n . x + d <= 0`` inside, one row per plane (Qhull gives every
    triangle of a flat facet that facet's plane: a cylinder primitive's 1020 triangles have 258), and its bounding
    box ``lo``, ``hi``."""

    eqs: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def halfspaces(h: trimesh.Trimesh) -> Halfspaces:
    from scipy.spatial import ConvexHull

    v = np.asarray(h.vertices, dtype=np.float64)
    return Halfspaces(np.unique(ConvexHull(v).equations, axis=0), v.min(axis=0), v.max(axis=0))


def inside_any(p: np.ndarray, hulls: list[Halfspaces], eps: float, skip: int = -1) -> np.ndarray:
    """Whether each point satisfies every plane of any hull but number ``skip`` to within ``eps``. Only points in a
    hull's box (widened by 1000 ``eps`` when ``eps > 0``) are tested against its planes: for ``eps <= 0`` that is
    exact; for ``eps > 0`` a point the planes admit is missed only if it lies over 1000 ``eps`` from the hull (off a
    corner sharper than a milliradian), where calling it outside is the truer answer. The plane test is elementwise,
    not ``p @ n.T``: BLAS would spin a second thread against the validator's rest simulation."""
    out = np.zeros(len(p), dtype=bool)
    for i, (e, lo, hi) in enumerate(hulls):
        if i == skip:
            continue
        pad = max(eps, 0.0) * 1e3
        k = np.flatnonzero(np.all((p >= lo - pad) & (p <= hi + pad), axis=1) & ~out)
        q = p[k]
        s = q[:, 0:1] * e[:, 0] + e[:, 3]
        s += q[:, 1:2] * e[:, 1]
        s += q[:, 2:3] * e[:, 2]
        out[k] = np.all(s <= eps, axis=1)
    return out


def _sample_hulls(hulls: list[trimesh.Trimesh], n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded area-weighted samples of each hull's surface: (points, the triangle (3, 3) each lies on)."""
    areas = np.array([h.area for h in hulls])
    counts = np.maximum(4, np.round(n * areas / areas.sum()).astype(int))
    out = []
    for i, (h, k) in enumerate(zip(hulls, counts, strict=True)):
        p, face = trimesh.sample.sample_surface(h, int(k), seed=seed + i + 1)[
            :2
        ]  # (points, faces): no colour asked
        out.append((p, np.asarray(h.triangles)[face]))
    return out


ASCENT_POINTS = 256
"""Farthest bulge samples refined by local ascent (``_ascend``)."""


def _ascend(p: np.ndarray, tri: np.ndarray, surf: Surface, keep, steps: int = 12) -> np.ndarray:
    """Distances [m] of the bulge samples ``p`` (on triangles ``tri``) moved, each within its triangle, to where the
    mesh is farthest nearby: a sample grid misses the narrow peak of a bulge, projected gradient ascent of the
    distance finds it. A move is kept only if it stays on the union's outer boundary outside the mesh (``keep``) and
    the distance grows."""
    p = p.copy()
    d = surf.distance(p)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-30
    step = 0.5 * d
    for _ in range(steps):
        g = p - surf.closest(p)
        g -= np.einsum("ij,ij->i", g, n)[:, None] * n
        g /= np.linalg.norm(g, axis=1, keepdims=True) + 1e-30
        q = trimesh.triangles.closest_point(tri, p + step[:, None] * g)
        dq = surf.distance(q)
        better = (dq > d) & keep(q)
        p[better], d[better] = q[better], dq[better]
        step = np.where(better, step, 0.5 * step)
    return d


class Surface:
    """Exact point queries against triangles (Open3D ray-casting scene, BVH in C++): unsigned distance to the
    surface, and inside (ray parity, 3 rays voting, so a ray grazing an edge cannot flip the answer). Coordinates are
    taken relative to ``origin`` for float32."""

    def __init__(self, meshes: list[trimesh.Trimesh], origin: np.ndarray) -> None:
        import open3d as o3d  # noqa: I001  (before coacd in any process; see collision.coacd.import_coacd)

        self._o3d, self.origin = o3d, origin
        self.scene = o3d.t.geometry.RaycastingScene()
        for m in meshes:
            # open3d's generated stubs make Tensor's dtype and device required; they default to the array's and CPU
            self.scene.add_triangles(
                o3d.core.Tensor(np.asarray(m.vertices - origin, dtype=np.float32)),  # pyright: ignore[reportCallIssue]
                o3d.core.Tensor(np.asarray(m.faces, dtype=np.uint32)),  # pyright: ignore[reportCallIssue]
            )

    def _q(self, p: np.ndarray):
        return self._o3d.core.Tensor(np.asarray(p - self.origin, dtype=np.float32))

    def distance(self, p: np.ndarray) -> np.ndarray:
        return self.scene.compute_distance(self._q(p)).numpy().astype(np.float64)

    def closest(self, p: np.ndarray) -> np.ndarray:
        r = self.scene.compute_closest_points(self._q(p))
        return r["points"].numpy().astype(np.float64) + self.origin

    def inside(self, p: np.ndarray) -> np.ndarray:
        return self.scene.compute_occupancy(self._q(p), nsamples=3).numpy() > 0.5

    def in_front(self, p: np.ndarray) -> np.ndarray:
        """``p`` lies on the outer side of the triangle nearest to it (a second opinion to ``inside``, which can
        misjudge a point: ray parity)."""
        r = self.scene.compute_closest_points(self._q(p))
        c = r["points"].numpy().astype(np.float64) + self.origin
        return np.einsum("ij,ij->i", p - c, r["primitive_normals"].numpy().astype(np.float64)) > 0


def hull_fidelity(
    mesh: trimesh.Trimesh,
    hulls: list[trimesh.Trimesh],
    samples: int = 2000,
    seed: int = 0,
    volume: bool = False,
    volume_samples: int = 40000,
) -> Fidelity:
    """Compare collision ``hulls`` (convex meshes) with the object's ``mesh`` surface (same frame).

    Mesh surface points outside every hull count their distance to the nearest hull surface (under-coverage);
    hull surface points outside the mesh and on the union's boundary count their distance to the mesh (bloat).
    Hull faces buried inside the mesh do not touch anything and are not counted. Distances are exact (point to
    triangle), not to a sampling of the other surface. With ``volume``, the volume ratio and IoU are estimated from
    ``volume_samples`` seeded uniform points in the joint bounding box (standard error ~ sqrt(IoU (1 - IoU) / n)
    for n points in the union).
    """
    diag = float(np.linalg.norm(mesh.extents))
    origin = np.asarray(mesh.bounds, dtype=np.float64).mean(axis=0)
    hs = [halfspaces(h) for h in hulls]
    surf = Surface([mesh], origin)
    p, _ = trimesh.sample.sample_surface(mesh, samples, seed=seed)[:2]
    d1 = Surface(hulls, origin).distance(p)
    d1[inside_any(p, hs, 1e-9 * diag)] = 0.0
    qs = _sample_hulls(hulls, samples, seed + 1000)
    bound = [
        ~inside_any(x, hs, -1e-7 * diag, skip=i) for i, (x, _) in enumerate(qs)
    ]  # on the union's boundary
    q = np.vstack([x[b] for (x, _), b in zip(qs, bound, strict=True)])
    qt = np.concatenate([t[b] for (_, t), b in zip(qs, bound, strict=True)])
    d2 = np.zeros(1)
    if len(q):
        out = ~surf.inside(q)
        q, qt = q[out], qt[out]
        dq = surf.distance(q)
        d2 = np.concatenate([d2, dq])
        top = np.argsort(-dq)[:ASCENT_POINTS]
        if len(top):

            def keep(x: np.ndarray) -> np.ndarray:  # the ascent seeks distance: an inside point must not pass
                return ~inside_any(x, hs, -1e-7 * diag) & ~surf.inside(x) & surf.in_front(x)

            d2 = np.concatenate([d2, _ascend(q[top], qt[top], surf, keep)])
    hd = float(max(d1.max(), d2.max()))
    vr = iou = float("nan")
    if volume:
        rng = np.random.default_rng(seed)
        lo = np.minimum(mesh.bounds[0], np.min([h.bounds[0] for h in hulls], axis=0))
        hi = np.maximum(mesh.bounds[1], np.max([h.bounds[1] for h in hulls], axis=0))
        x = rng.uniform(lo, hi, size=(int(volume_samples), 3))
        vr, iou = volume_overlap(surf.inside(x), inside_any(x, hs, 0.0))
    return Fidelity(hd, hd / diag, vr, iou)


def union_surface(pieces: list[trimesh.Trimesh]) -> trimesh.Trimesh:
    """The outer surface of the union of the convex ``pieces`` (each taken as the hull of its vertices; manifold3d)."""
    import manifold3d as m3

    u = None
    for p in pieces:
        h = m3.Manifold.hull_points(np.asarray(p.vertices, dtype=np.float64))
        u = h if u is None else u + h
    if u is None:
        raise ValueError("union_surface needs at least one piece")
    t = u.to_mesh()
    return trimesh.Trimesh(np.asarray(t.vert_properties[:, :3]), np.asarray(t.tri_verts), process=False)


def volume_overlap(in_mesh: np.ndarray, in_union: np.ndarray) -> tuple[float, float]:
    """Volume ratio (union / mesh) and IoU from the same uniform points' inside-the-mesh and inside-the-hulls masks."""
    return (
        float(in_union.sum() / max(in_mesh.sum(), 1)),
        float((in_mesh & in_union).sum() / max((in_mesh | in_union).sum(), 1)),
    )
