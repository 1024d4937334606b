"""The support-contact hull: an object of several collision pieces meets the support through one geom, the convex
hull of its pieces, and its pieces meet only other objects (docs/DECISIONS.md, "Support-contact hull").

A convex support touches a body where the body's convex hull does, so the rest is the same, at a few contacts
instead of up to four per piece. Collision classes (MuJoCo's ``contype``/``conaffinity``; ``a`` and ``b`` collide
when ``a.contype & b.conaffinity or b.contype & a.conaffinity``): the support ``SUPPORT``, a support-contact hull
``HULL``, the pieces of an object that has one ``PIECES``; everything else (single-piece objects, a robot added
later) keeps MuJoCo's default (1, 1) and touches the support and the pieces but never a support-contact hull."""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull

from real2sim.export.collision.hulls import convex_hull, limit_points
from real2sim.export.collision.shape import Collision

SUPPORT = (2, 1)
"""(contype, conaffinity) of the support slab: touches default geoms and support-contact hulls, not pieces."""
HULL = (0, 2)
"""(contype, conaffinity) of a support-contact hull: touches the support only (not other hulls, pieces, floor)."""
PIECES = (4, 5)
"""(contype, conaffinity) of the pieces of an object with a support-contact hull: everything but the support."""
GROUP = 4
"""MuJoCo geom group of support-contact hulls (collision pieces are group 3; hidden by default)."""
BASE_BAND = 0.02
"""Hull vertices this share of the height above the lowest one form the base the object rests on."""


def support_hull(col: Collision, max_vertices: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The convex hull of ``col``'s pieces (object frame), cut to ``max_vertices``; None for one piece (it touches
    the support itself)."""
    if col.count < 2:
        return None
    v = np.vstack([h[0] for h in col.hulls])
    v = v[ConvexHull(v).vertices]
    # the base decides the rest: its vertices are kept first (up to half the budget), the rest of the budget shapes
    # the sides, so the cut hull rests where the pieces do
    base = v[v[:, 2] <= v[:, 2].min() + BASE_BAND * np.ptp(v[:, 2])]
    if len(base) > max_vertices // 2:
        base = limit_points(base, max_vertices // 2) if _solid(base) else _outline(base, max_vertices // 2)
    rest = limit_points(v, max_vertices - len(base))
    return convex_hull(np.unique(np.vstack([base, rest]), axis=0))


def _dims(p: np.ndarray) -> int:
    """How many dimensions the points ``p`` span."""
    return int(np.linalg.matrix_rank(p - p.mean(axis=0), tol=1e-9))


def _solid(p: np.ndarray) -> bool:
    """Whether ``p`` spans three dimensions (Qhull can build its hull)."""
    return len(p) >= 4 and _dims(p) == 3


def _outline(p: np.ndarray, n: int) -> np.ndarray:
    """At most ``n`` points of a flat base: its top-view outline, evenly thinned."""
    o = p[ConvexHull(p[:, :2]).vertices] if len(p) >= 3 and _dims(p[:, :2]) == 2 else p
    return o[np.linspace(0, len(o) - 1, min(n, len(o))).round().astype(int)]
