"""The support-contact hull: an object of several collision pieces meets the support through one geom, the convex
hull of its pieces, and its pieces meet only other objects (docs/DECISIONS.md, "Support-contact hull").

A convex support touches a body where the body's convex hull does, so the rest is the same, at a few contacts
instead of up to four per piece. Collision classes (MuJoCo's ``contype``/``conaffinity``; ``a`` and ``b`` collide
when ``a.contype & b.conaffinity or b.contype & a.conaffinity``): the support ``SUPPORT``, a support-contact hull
``HULL``, the pieces of an object that has one ``PIECES``; everything else (single-piece objects, a robot added
later) keeps MuJoCo's default (1, 1) and touches the support and the pieces but never a support-contact hull."""

from __future__ import annotations

import numpy as np

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


def support_hull(col: Collision, max_vertices: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The convex hull of ``col``'s pieces (object frame), cut to ``max_vertices``; None for one piece (it touches
    the support itself)."""
    if col.count < 2:
        return None
    v = np.vstack([h[0] for h in col.hulls])
    return convex_hull(limit_points(v, max_vertices))
