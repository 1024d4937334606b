"""How close collision geometry is to the surface: Hausdorff distance and volume of the hull union vs the mesh."""

from __future__ import annotations

from dataclasses import dataclass

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


def _halfspaces(h: trimesh.Trimesh) -> np.ndarray:
    from scipy.spatial import ConvexHull

    return ConvexHull(np.asarray(h.vertices)).equations  # (k, 4): n . x + d <= 0 inside


def _inside_any(p: np.ndarray, eqs: list[np.ndarray], eps: float, skip: int = -1) -> np.ndarray:
    out = np.zeros(len(p), dtype=bool)
    for i, e in enumerate(eqs):
        if i != skip:
            out |= np.all(p @ e[:, :3].T + e[:, 3] <= eps, axis=1)
    return out


def _sample_hulls(hulls: list[trimesh.Trimesh], n: int, seed: int) -> list[np.ndarray]:
    areas = np.array([h.area for h in hulls])
    counts = np.maximum(4, np.round(n * areas / areas.sum()).astype(int))
    return [trimesh.sample.sample_surface(h, int(k), seed=seed + i + 1)[0] for i, (h, k) in
            enumerate(zip(hulls, counts, strict=True))]


def hull_fidelity(
    mesh: trimesh.Trimesh, hulls: list[trimesh.Trimesh], samples: int = 2000, seed: int = 0, volume: bool = False
) -> Fidelity:
    """Compare collision ``hulls`` (convex meshes) with the object's ``mesh`` surface (same frame).

    Mesh surface points outside every hull count their distance to the nearest hull surface (under-coverage);
    hull surface points outside the mesh and on the union's boundary count their distance to the mesh (bloat).
    Hull faces buried inside the mesh do not touch anything and are not counted.
    """
    from scipy.spatial import cKDTree

    diag = float(np.linalg.norm(mesh.extents))
    eqs = [_halfspaces(h) for h in hulls]
    p, _ = trimesh.sample.sample_surface(mesh, samples, seed=seed)
    dense = np.vstack(_sample_hulls(hulls, 20 * samples, seed))
    d1 = cKDTree(dense).query(p)[0]
    d1[_inside_any(p, eqs, 1e-9 * diag)] = 0.0
    qs = _sample_hulls(hulls, samples, seed + 1000)
    q = np.vstack([x[~_inside_any(x, eqs, -1e-7 * diag, skip=i)] for i, x in enumerate(qs)])
    d2 = np.zeros(1)
    if len(q):
        closest, dist, tri = trimesh.proximity.closest_point(mesh, q)
        outside = np.einsum("ij,ij->i", q - closest, mesh.face_normals[tri]) > 0
        # The closest face's normal misjudges points whose closest point is on a sharp edge or vertex (a point
        # deep inside looked 18 mm "outside" a reconstructed stone); confirm with a ray-parity inside test.
        if outside.any():
            idx = np.flatnonzero(outside)
            outside[idx[mesh.contains(q[idx])]] = False
        d2 = np.concatenate([d2, dist[outside]])
    hd = float(max(d1.max(), d2.max()))
    vr = iou = float("nan")
    if volume:
        rng = np.random.default_rng(seed)
        lo = np.minimum(mesh.bounds[0], np.min([h.bounds[0] for h in hulls], axis=0))
        hi = np.maximum(mesh.bounds[1], np.max([h.bounds[1] for h in hulls], axis=0))
        x = rng.uniform(lo, hi, size=(40000, 3))
        in_m = mesh.contains(x)
        in_u = _inside_any(x, eqs, 0.0)
        vr = float(in_u.sum() / max(in_m.sum(), 1))
        iou = float((in_m & in_u).sum() / max((in_m | in_u).sum(), 1))
    return Fidelity(hd, hd / diag, vr, iou)
