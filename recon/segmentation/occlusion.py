"""Surfaces that continue behind an occluder: an object standing on or in front of another cuts the other's visible
surface in two; the two pieces are one object when they lie on one plane and every point of the gap between them
is hidden from the sensor (behind something nearer), never seen through (Gestalt continuity, as in the OSD
authors' perceptual grouping, Richtsfeld et al. 2012).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from real2sim.recon.segmentation.convexity import PatchGraph

PIXEL_SPACINGS = 1.5
"""Range-image cell size, in sample spacings at the median range (so that a seen surface fills its cells)."""
MIN_PATCH_POINTS = 5
"""Only patches with at least this many points take part (their plane is measured)."""
PAIRS_TRIED = 6
"""Per pair of segments, this many of the nearest coplanar patch pairs are tried (nearest first)."""
MIN_LINES = 2
"""Two segments join only on at least this many consistent lines: one line is no vote."""


class RangeImage:
    """Nearest seen range per viewing direction from ``sensor`` (a z-buffer of the points on a tangent plane)."""

    def __init__(self, points: np.ndarray, sensor: np.ndarray, spacing: float):
        v = points - sensor
        r = np.linalg.norm(v, axis=1)
        self.sensor = sensor
        self.axis = (v / r[:, None]).mean(axis=0)
        self.axis /= np.linalg.norm(self.axis)
        e1 = np.cross(self.axis, [0.0, 0.0, 1.0] if abs(self.axis[2]) < 0.9 else [1.0, 0.0, 0.0])
        e1 /= np.linalg.norm(e1)
        self.basis = np.stack([e1, np.cross(self.axis, e1)])
        self.cell = PIXEL_SPACINGS * spacing / float(np.median(r))
        uv, _ = self._project(points)
        self.lo = uv.min(axis=0)
        ij = np.floor((uv - self.lo) / self.cell).astype(np.int64)
        self.shape = ij.max(axis=0) + 1
        self.depth = np.full(int(self.shape[0] * self.shape[1]), np.inf)
        np.minimum.at(self.depth, ij[:, 0] * self.shape[1] + ij[:, 1], r)

    def _project(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = x - self.sensor
        fwd = v @ self.axis
        return (v @ self.basis.T) / np.maximum(fwd, 1e-9)[:, None], np.linalg.norm(v, axis=1)

    def seen_range(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per point: the nearest range seen in its direction (inf where nothing was seen), and its own range."""
        uv, r = self._project(x)
        ij = np.floor((uv - self.lo) / self.cell).astype(np.int64)
        inside = (ij >= 0).all(axis=1) & (ij < self.shape).all(axis=1)
        seen = np.full(len(x), np.inf)
        seen[inside] = self.depth[ij[inside, 0] * self.shape[1] + ij[inside, 1]]
        return seen, r


def merge_occluded(
    seg: np.ndarray,
    g: PatchGraph,
    near: np.ndarray,
    image: RangeImage,
    *,
    concavity_deg: float,
    step: float,
    spacing: float,
    min_points: int = 0,
) -> np.ndarray:
    """Join segments (per point, 0..K-1, unions of ``g``'s patches) that do not touch (no ``near`` point pair
    links them) but continue one plane across a hidden gap. Of each two segments' coplanar patch pairs (normals
    within ``concavity_deg``, centroids within ``step`` of each other's plane) the ``PAIRS_TRIED`` nearest are
    tried: the line between a pair is consistent with one surface when no sample of it is seen through (nor
    unseen), and it is hidden when some sample lies behind a nearer surface. The segments join when more than half
    of the lines tried, and at least ``MIN_LINES``, are consistent and one of those is hidden; a fragment (under
    ``min_points`` points) also joins on its nearest line alone, consistent and hidden, and joins one segment only.
    Labels 0..K'-1."""
    k = int(seg.max()) + 1
    if k < 2:
        return seg
    ps = np.zeros(len(g.size), dtype=np.int64)
    ps[g.patch] = seg
    use = np.flatnonzero(g.size >= MIN_PATCH_POINTS)
    if len(use) < 2:
        return seg
    i, j = np.triu_indices(len(use), 1)
    a, b = use[i], use[j]
    touch = np.zeros((k, k), dtype=bool)
    touch[seg[near[:, 0]], seg[near[:, 1]]] = True
    diff = (ps[a] != ps[b]) & ~touch[ps[a], ps[b]] & ~touch[ps[b], ps[a]]
    a, b = a[diff], b[diff]
    na, nb = g.normal[a], g.normal[b]
    d = g.centroid[b] - g.centroid[a]
    ok = np.einsum("ij,ij->i", na, nb) > np.cos(np.radians(concavity_deg))
    ok &= (np.abs(np.einsum("ij,ij->i", d, na)) <= step) & (np.abs(np.einsum("ij,ij->i", d, nb)) <= step)
    a, b, d = a[ok], b[ok], d[ok]
    if len(a) == 0:
        return seg
    dist = np.linalg.norm(d, axis=1)
    sa, sb = np.minimum(ps[a], ps[b]), np.maximum(ps[a], ps[b])
    order = np.lexsort((dist, sb, sa))
    key = (sa * k + sb)[order]
    start = np.r_[0, np.flatnonzero(key[1:] != key[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(start, np.diff(np.r_[start, len(order)]))
    votes: dict[tuple[int, int], list[tuple[bool, bool]]] = {}
    for e in order[rank < PAIRS_TRIED]:
        n = max(2, int(np.ceil(dist[e] / spacing)))
        t = np.linspace(0.0, 1.0, n + 1)[:, None]
        x = g.centroid[a[e]] + t * d[e]
        seen, r = image.seen_range(x)
        consistent = bool((seen <= r + 2.0 * spacing).all())
        hidden = consistent and bool((seen < r - 2.0 * spacing).any())
        votes.setdefault((int(sa[e]), int(sb[e])), []).append((consistent, hidden))
    # a vote of the lines, not one line: whether one line has a hidden (or a seen-through) sample comes and goes
    # with 0.1 mm of noise on the points; a line over a seen surface at its own depth does not speak against one
    # surface, so it counts for the join, and only lines that see through the gap count against it
    size = np.bincount(seg, minlength=k)
    join = []
    partner: dict[int, tuple[tuple[int, int, int], int]] = {}
    for (i, j), v in votes.items():
        agree = sum(c for c, _ in v)
        if not (2 * agree > len(v) and agree >= MIN_LINES and any(h for _, h in v)) and not (
            v[0][1] and min(size[i], size[j]) < min_points
        ):
            continue
        if size[i] >= min_points and size[j] >= min_points:
            join.append((i, j))
        # a fragment joins one segment only (the one most of whose lines are hidden, else the larger), so that it
        # cannot bridge two objects
        for f, o in ((i, j), (j, i)):
            key = (sum(h for _, h in v), int(size[o]), -o)
            if size[f] < min_points and (f not in partner or key > partner[f][0]):
                partner[f] = (key, o)
    join += [(f, o) for f, (_, o) in partner.items()]
    if not join:
        return seg
    jj = np.asarray(join)
    m = coo_matrix((np.ones(len(jj)), (jj[:, 0], jj[:, 1])), shape=(k, k))
    _, comp = connected_components(m, directed=False)
    _, out = np.unique(comp[seg], return_inverse=True)
    return out.reshape(-1).astype(np.int64)
