"""Undo decimation's shrinkage: hulls built on the decimated mesh grown back over the full-resolution surface."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.export.collision.hulls import limit_points


def refit_to_surface(pieces: list[np.ndarray], vertices: np.ndarray, reach: float) -> list[np.ndarray]:
    """Grow each hull (from the decimated mesh) to take in the original ``vertices`` it nearly covers.

    Decimation before CoACD moves the surface by up to its error; vertices of the full mesh that lie outside every
    hull but within ``reach`` [m] of one are added to the nearest hull's points, so the hulls follow the real
    surface again. Vertices farther out are left alone (adding them could bridge a concavity)."""
    from scipy.spatial import ConvexHull

    eqs = [ConvexHull(p).equations for p in pieces]
    dist = np.full((len(vertices), len(pieces)), np.inf)
    for i, e in enumerate(eqs):  # distance outside the hull's planes (a lower bound; <= 0 inside)
        dist[:, i] = np.max(vertices @ e[:, :3].T + e[:, 3], axis=1)
    near = dist.min(axis=1)
    owner = dist.argmin(axis=1)
    take = (near > 0) & (near <= reach)
    return [np.vstack([p, vertices[take & (owner == i)]]) for i, p in enumerate(pieces)]


def cover_surface(
    work: trimesh.Trimesh, mesh: trimesh.Trimesh, pieces: list[np.ndarray], max_vertices: int, accept=None
) -> list[np.ndarray]:
    """Make the hulls (of the decimated ``work`` mesh) cover the full-resolution ``mesh`` again where decimation cut it.

    Decimation moves the surface inward at convex corners and ridges, so hulls built on it miss that sliver of the
    real object. Every full-resolution vertex that lies outside the decimated mesh and outside every hull is given to
    the hull that covers the decimated surface where it is nearest (the hull standing for that patch of surface),
    and that hull is rebuilt from its points plus these and cut to ``max_vertices`` again (``limit_points``). Only
    vertices decimation cut off are added, each to the hull of its own patch (not to the nearest hull by distance,
    which can reach across a dent), so a hull grows by about the local decimation error; the re-limited hull can
    still bulge a little more between the new vertices; ``accept(old, new)`` (if given) decides whether a grown
    hull replaces the old one (``run_coacd``: only if it bulges past the surface no more than the refinement
    tolerance or the worst hull already does, so the surface error does not grow)."""
    from scipy.spatial import ConvexHull

    from real2sim.export.collision.fidelity import Surface

    v = np.asarray(mesh.vertices, dtype=np.float64)
    diag = float(np.linalg.norm(mesh.extents))
    eqs = [ConvexHull(p).equations for p in pieces]
    outside = np.ones(len(v), dtype=bool)
    for p, e in zip(pieces, eqs, strict=True):  # only the vertices in a hull's bounding box can be inside it
        box = np.flatnonzero(
            outside & np.all((v >= p.min(axis=0) - 1e-9 * diag) & (v <= p.max(axis=0) + 1e-9 * diag), axis=1)
        )
        outside[box[np.all(v[box] @ e[:, :3].T + e[:, 3] <= 1e-9 * diag, axis=1)]] = False
    if not outside.any():
        return pieces
    surf = Surface([work], np.asarray(mesh.bounds, dtype=np.float64).mean(axis=0))
    idx = np.flatnonzero(outside)
    idx = idx[~surf.inside(v[idx])]
    if not len(idx):
        return pieces
    c = surf.closest(v[idx])
    dist = np.stack([np.max(c @ e[:, :3].T + e[:, 3], axis=1) for e in eqs], axis=1)  # <= 0 inside
    owner = np.argmin(dist, axis=1)
    out = []
    for i, p in enumerate(pieces):
        add = v[idx[owner == i]]
        grown = limit_points(np.vstack([p, add]), max_vertices) if len(add) else p
        out.append(grown if grown is p or accept is None or accept(p, grown) else p)
    return out
