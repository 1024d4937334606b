"""Locally convex connected patches (LCCP, Stein et al. CVPR 2014) on a downsampled cloud.

1. Supervoxels: seeds on a grid of ``seed`` metres; every point joins the seed it reaches most cheaply through the
   neighbour graph, edge cost = length x (1 + normal change + colour change), so patches follow surfaces and do not
   cross creases or colour edges (VCCS-like, Papon et al. 2013).
2. The patch adjacency graph; each edge is classified from the two patches' centroids and normals: convex when the
   normals open away from each other, ``(n_i - n_j) . (x_i - x_j) > 0``; a concave edge whose normals differ by less
   than the concavity tolerance counts as smooth (noise); the sanity criterion rejects an edge whose connecting
   line runs along the crease direction ``n_i x n_j`` (patches meeting only at a step or corner).
3. Segments are the connected components over convex and smooth edges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, dijkstra
from scipy.spatial import cKDTree

SANITY_MAX_DEG = 60.0
"""LCCP sanity criterion: the largest angle [deg] between the connecting line and the crease that is rejected."""
SANITY_OFFSET_DEG = 25.0
"""LCCP sanity criterion: normal angle [deg] at which the rejection threshold halves."""
SANITY_SLOPE = 0.25
"""LCCP sanity criterion: steepness [1/deg] of the sigmoid in the normal angle."""


@dataclass(frozen=True)
class PatchGraph:
    """Supervoxel patches of a cloud and their adjacency.

    ``patch``: patch index per point (0..P-1); ``centroid``, ``normal``, ``colour``, ``size``: per patch;
    ``edges``: (E, 2) patch pairs (i < j); ``contact``: point pairs linking them; ``convex``: per edge, whether
    LCCP joins the two patches; ``pairs``: the neighbouring point index pairs the graph was built on.
    """

    patch: np.ndarray
    centroid: np.ndarray
    normal: np.ndarray
    colour: np.ndarray | None
    size: np.ndarray
    edges: np.ndarray
    contact: np.ndarray
    convex: np.ndarray
    pairs: np.ndarray


def _group_mean(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    cnt = np.maximum(np.bincount(group, minlength=n), 1).astype(np.float64)
    return np.stack(
        [np.bincount(group, weights=values[:, j], minlength=n) / cnt for j in range(values.shape[1])], 1
    )


def supervoxels(
    points: np.ndarray,
    normals: np.ndarray,
    colors: np.ndarray | None,
    pairs: np.ndarray,
    seed: float,
    normal_weight: float = 8.0,
    colour_weight: float = 8.0,
) -> np.ndarray:
    """Patch index per point (0..P-1): geodesic nearest seed over ``pairs`` (neighbouring point index pairs)."""
    n = len(points)
    cell = np.floor(points / seed).astype(np.int64)
    _, cell_id = np.unique(cell, axis=0, return_inverse=True)
    cell_id = cell_id.reshape(-1)
    nc = int(cell_id.max()) + 1
    ctr = _group_mean(points, cell_id, nc)
    d = np.linalg.norm(points - ctr[cell_id], axis=1)
    order = np.lexsort((np.arange(n), d, cell_id))
    first = np.ones(n, dtype=bool)
    first[1:] = cell_id[order[1:]] != cell_id[order[:-1]]
    seeds = order[first]
    i, j = pairs[:, 0], pairs[:, 1]
    cost = np.linalg.norm(points[i] - points[j], axis=1)
    cost *= 1.0 + normal_weight * (1.0 - np.abs(np.einsum("ij,ij->i", normals[i], normals[j])))
    if colors is not None:
        cost *= 1.0 + colour_weight * np.linalg.norm(colors[i] - colors[j], axis=1)
    g = coo_matrix((np.r_[cost, cost] + 1e-9, (np.r_[i, j], np.r_[j, i])), shape=(n, n)).tocsr()
    _, _, src = dijkstra(g, indices=seeds, min_only=True, return_predecessors=True)
    lone = src < 0  # points no seed reaches (isolated): their own patch
    src = np.where(lone, np.arange(n), src)
    _, patch = np.unique(src, return_inverse=True)
    return patch.reshape(-1).astype(np.int64)


def plane_normals(
    points: np.ndarray, patch: np.ndarray, centroid: np.ndarray, mean_normal: np.ndarray
) -> np.ndarray:
    """Per patch: the normal of its least-squares plane (smallest principal axis), turned toward the mean of its
    points' normals; the mean normal where the patch is too small or not flat."""
    npat = len(centroid)
    q = points - centroid[patch]
    cov = np.zeros((npat, 3, 3))
    for a in range(3):
        for b in range(a, 3):
            cov[:, a, b] = cov[:, b, a] = np.bincount(patch, weights=q[:, a] * q[:, b], minlength=npat)
    w, v = np.linalg.eigh(cov)
    n = v[:, :, 0]
    n[np.einsum("ij,ij->i", n, mean_normal) < 0] *= -1
    mean = mean_normal / (np.linalg.norm(mean_normal, axis=1, keepdims=True) + 1e-18)
    good = (np.bincount(patch, minlength=npat) >= 5) & (w[:, 0] < 0.25 * w[:, 1])
    return np.where(good[:, None], n, mean)


def sanity_threshold(beta_deg: np.ndarray) -> np.ndarray:
    """LCCP's sanity-criterion threshold [deg] for normal angle ``beta_deg``."""
    return SANITY_MAX_DEG / (1.0 + np.exp(-SANITY_SLOPE * (beta_deg - SANITY_OFFSET_DEG)))


def classify_edges(
    centroid: np.ndarray,
    normal: np.ndarray,
    edges: np.ndarray,
    concavity_tolerance_deg: float,
    seed: float,
    step_slack: float,
) -> np.ndarray:
    """Per patch edge: True when LCCP joins the patches (convex, or concave within the tolerance), the edge passes
    the sanity criterion, and there is no step between them: each centroid lies within
    ``|n_i x n_j| * seed + step_slack`` of the other patch's plane."""
    a, b = edges[:, 0], edges[:, 1]
    d = centroid[a] - centroid[b]
    step = np.minimum(
        np.abs(np.einsum("ij,ij->i", d, normal[a])), np.abs(np.einsum("ij,ij->i", d, normal[b]))
    )
    smooth = step <= np.linalg.norm(np.cross(normal[a], normal[b]), axis=1) * seed + step_slack
    d /= np.linalg.norm(d, axis=1, keepdims=True) + 1e-18
    na, nb = normal[a], normal[b]
    cosb = np.clip(np.einsum("ij,ij->i", na, nb), -1.0, 1.0)
    beta = np.degrees(np.arccos(cosb))
    convex = np.einsum("ij,ij->i", na - nb, d) > 0
    ok = convex | (beta < concavity_tolerance_deg)
    s = np.cross(na, nb)
    sn = np.linalg.norm(s, axis=1)
    cos_t = np.abs(np.einsum("ij,ij->i", d, s)) / np.maximum(sn, 1e-12)
    # the angle between the connecting line and the crease
    theta = np.degrees(np.arccos(np.clip(cos_t, 0.0, 1.0)))
    sane = (sn < 1e-6) | (theta > sanity_threshold(beta))
    return ok & sane & smooth


def patch_graph(
    points: np.ndarray,
    normals: np.ndarray,
    colors: np.ndarray | None,
    *,
    seed: float,
    radius: float,
    concavity_tolerance_deg: float,
    step_slack: float,
) -> PatchGraph:
    """Supervoxels of ``points`` (neighbours within ``radius``) and their LCCP-classified adjacency."""
    pairs = cKDTree(points).query_pairs(radius, output_type="ndarray")
    if len(pairs) == 0:
        pairs = np.zeros((0, 2), dtype=np.int64)
    patch = supervoxels(points, normals, colors, pairs, seed)
    npat = int(patch.max()) + 1 if len(patch) else 0
    size = np.bincount(patch, minlength=npat)
    centroid = _group_mean(points, patch, npat)
    nrm = plane_normals(points, patch, centroid, _group_mean(normals, patch, npat))
    colour = None if colors is None else _group_mean(colors, patch, npat)
    pa, pb = patch[pairs[:, 0]], patch[pairs[:, 1]]
    cross = pa != pb
    lo, hi = np.minimum(pa[cross], pb[cross]), np.maximum(pa[cross], pb[cross])
    key, contact = np.unique(lo * npat + hi, return_counts=True)
    edges = np.stack([key // npat, key % npat], 1).astype(np.int64)
    convex = classify_edges(centroid, nrm, edges, concavity_tolerance_deg, seed, step_slack)
    return PatchGraph(patch, centroid, nrm, colour, size, edges, contact, convex, pairs)


def lccp_segments(g: PatchGraph, keep: np.ndarray | None = None) -> np.ndarray:
    """Segment index per patch: components over the joining edges (``keep`` overrides ``g.convex``)."""
    npat = len(g.size)
    j = g.convex if keep is None else keep
    e = g.edges[j]
    m = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(npat, npat))
    _, seg = connected_components(m, directed=False)
    return seg.astype(np.int64)


def concavity_depth(points: np.ndarray, hull_of: np.ndarray | None = None) -> float:
    """How deep [m] the points reach inside their convex hull (98th percentile of the distance to the hull's
    surface): about 0 for one convex surface, the depth of the notch where two objects meet. ``hull_of``: a mask
    of the points that span the hull (all when ``None`` or when they span none)."""
    from scipy.spatial import ConvexHull, QhullError

    h = None
    for sel in ([] if hull_of is None else [hull_of]) + [None]:
        try:
            h = ConvexHull(points if sel is None else points[sel])
            break
        except (QhullError, ValueError):
            continue
    if h is None:
        return 0.0
    dist = -(points @ h.equations[:, :3].T + h.equations[:, 3]).max(axis=1)
    return float(np.percentile(dist, 98))


def _union_depth(points: np.ndarray, seg: np.ndarray, near: np.ndarray, pair: tuple[int, int]) -> float:
    """``concavity_depth`` of two segments' union, its hull spanned by the points not in contact with a third
    segment: a strip of a neighbour that patches carried into one of the two would stretch the hull over the
    other's surface and make a convex union look concave."""
    u = (seg == pair[0]) | (seg == pair[1])
    a, b = near[:, 0], near[:, 1]
    edge = u[a] != u[b]
    core = u.copy()
    core[a[edge]] = False
    core[b[edge]] = False
    return concavity_depth(points[u], core[u])


WEAK_CONTACT = 0.5
"""A convex union is not taken over a contact (point pairs) under this share of either segment's strongest contact
with another segment it also forms a convex union with."""


def merge_convex_unions(
    points: np.ndarray, seg: np.ndarray, near: np.ndarray, max_depth: float
) -> np.ndarray:
    """Join touching segments (``near``: point pairs in contact) whose union is convex within ``max_depth`` [m]
    (relief of one surface, such as a stone's dents, rather than a notch between two objects), shallowest first;
    a pair whose contact is under ``WEAK_CONTACT`` of either segment's strongest contact with a partner it forms
    such a union with is not joined. ``seg``: per point, 0..K-1. Labels 0..K'-1."""
    seg = seg.copy()
    depth: dict[tuple[int, int], float] = {}
    while True:
        a, b = seg[near[:, 0]], seg[near[:, 1]]
        cross = a != b
        k = int(seg.max()) + 1
        keys, counts = np.unique(
            np.minimum(a[cross], b[cross]) * k + np.maximum(a[cross], b[cross]), return_counts=True
        )
        # point pairs in contact per touching pair of segments (i < j)
        contact = {(int(x) // k, int(x) % k): int(c) for x, c in zip(keys, counts, strict=True)}
        depth = {p: depth[p] if p in depth else _union_depth(points, seg, near, p) for p in contact}
        if not depth:
            break
        # a pair whose contact is weak beside what either segment shares with another convex partner waits: a
        # piece of one object grazing the next object at a corner does not join it however flat their union
        strongest = np.zeros(k)
        for (i, j), c in contact.items():
            if depth[(i, j)] <= max_depth:
                strongest[i], strongest[j] = max(strongest[i], c), max(strongest[j], c)
        ok = [p for p in sorted(depth) if contact[p] >= WEAK_CONTACT * max(strongest[p[0]], strongest[p[1]])]
        if not ok:
            break
        best = min(ok, key=depth.__getitem__)
        if depth[best] > max_depth:
            break
        seg[seg == best[1]] = best[0]
        depth = {p: v for p, v in depth.items() if best[0] not in p and best[1] not in p}
    _, seg = np.unique(seg, return_inverse=True)
    return seg.reshape(-1).astype(np.int64)
