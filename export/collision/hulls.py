"""Qhull helpers: a convex hull wound outward, a hull cut to a vertex budget, summed hull area."""

from __future__ import annotations

import numpy as np


def convex_hull(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of ``points``: its vertices (in input order) and triangles wound outward (Qhull's facet normals,
    without ``trimesh.convex.convex_hull``'s repairs, which Qhull's output never needs)."""
    from scipy.spatial import ConvexHull

    p = np.asarray(points, dtype=np.float64)
    h = ConvexHull(p)
    used = np.unique(h.simplices)
    index = np.full(len(p), -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    f = np.asarray(h.simplices, dtype=np.int64)
    n = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
    flip = np.einsum("ij,ij->i", n, h.equations[:, :3]) < 0
    f[flip] = f[flip][:, [0, 2, 1]]
    return p[used], index[f]


def limit_points(points: np.ndarray, max_vertices: int) -> np.ndarray:
    """At most ``max_vertices`` of the hull vertices of ``points``, chosen to keep the hull closest to the full one.

    Greedy, as Quickhull builds a hull: start from a large simplex of extreme points, then repeatedly add the vertex
    farthest outside the current hull, so the vertices left out are those closest to the reduced hull. Qhull itself
    does it, stopped after ``max_vertices - 4`` added points (``TA``): ``Qf`` files each point under the facet it lies
    farthest outside of, ``Q9`` adds the farthest of all. A point added can bury a vertex; then Qhull runs on with as
    many more points as were buried. Deterministic."""
    from scipy.spatial import ConvexHull

    p = np.asarray(points, dtype=np.float64)
    hv = p[ConvexHull(p).vertices]
    if len(hv) <= max_vertices:
        return hv
    added = max_vertices - 4
    while True:
        kept = ConvexHull(hv, qhull_options=f"Qf Q9 TA{added}").vertices
        if len(kept) >= max_vertices or added >= len(hv) - 4:
            return hv[kept]
        added += max_vertices - len(kept)


def total_area(pieces: list[np.ndarray]) -> float:
    """Summed surface area [m^2] of the convex hulls of ``pieces`` (the refiner spreads its samples over it)."""
    from scipy.spatial import ConvexHull

    return float(sum(ConvexHull(p).area for p in pieces))
