"""Objects on the support: Euclidean clustering of the points above the plane, split where colour or geometry
separates touching objects, then size filters.

All inputs are in the scene frame (z up, support at z = 0).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree


def euclidean_clusters(points: np.ndarray, tolerance: float) -> np.ndarray:
    """Connected components of the graph linking points closer than ``tolerance`` [m]; labels 0..K-1."""
    n = len(points)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = cKDTree(points).query_pairs(tolerance, output_type="ndarray")
    g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, lab = connected_components(g, directed=False)
    return lab.astype(np.int64)


def split_by_colour(
    points: np.ndarray, colors: np.ndarray, tolerance: float, colour_threshold: float, min_points: int
) -> np.ndarray:
    """Region growing inside one cluster: neighbours join when their colours differ by less than
    ``colour_threshold`` (Euclidean RGB, 0..1). Regions with fewer than ``min_points`` are merged back into the
    neighbouring region they touch most, so texture does not shatter an object. Labels 0..K-1.
    """
    n = len(points)
    pairs = cKDTree(points).query_pairs(tolerance, output_type="ndarray")
    if len(pairs) == 0:
        return np.zeros(n, dtype=np.int64)
    dc = np.linalg.norm(colors[pairs[:, 0]] - colors[pairs[:, 1]], axis=1)
    keep = pairs[dc < colour_threshold]
    g = coo_matrix((np.ones(len(keep)), (keep[:, 0], keep[:, 1])), shape=(n, n))
    _, lab = connected_components(g, directed=False)
    # merge small regions into their most-touching neighbour, largest first
    for _ in range(20):
        sizes = np.bincount(lab)
        small = sizes < min_points
        if not small[lab].any() or small.all():
            break
        a, b = lab[pairs[:, 0]], lab[pairs[:, 1]]
        cross = a != b
        a, b = a[cross], b[cross]
        src = np.concatenate([a, b])
        dst = np.concatenate([b, a])
        m = small[src] & ~small[dst]
        if not m.any():
            m = small[src] & (sizes[dst] > sizes[src])
            if not m.any():
                break
        contact = coo_matrix((np.ones(m.sum()), (src[m], dst[m])), shape=(len(sizes), len(sizes))).tocsr()
        target = np.asarray(contact.argmax(axis=1)).ravel()
        has = np.asarray(contact.sum(axis=1)).ravel() > 0
        remap = np.arange(len(sizes))
        remap[has] = target[has]
        lab = remap[lab]
    _, lab = np.unique(lab, return_inverse=True)
    return lab.reshape(-1).astype(np.int64)


def segment_objects(
    points: np.ndarray,
    colors: np.ndarray | None,
    *,
    tolerance: float,
    min_points: int,
    min_size: float,
    max_size: float,
    colour_split: float | None,
) -> np.ndarray:
    """Object labels for scene-frame points above the support: -1 for rejected points, 0..K-1 for objects,
    ordered by decreasing size (point count; ties by centroid x then y), so the numbering is deterministic.
    """
    lab = euclidean_clusters(points, tolerance)
    if colour_split is not None and colors is not None and len(points):
        new = np.full(len(points), -1, dtype=np.int64)
        nxt = 0
        for k in range(lab.max() + 1):
            idx = np.flatnonzero(lab == k)
            if len(idx) >= 2 * min_points:
                sub = split_by_colour(points[idx], colors[idx], tolerance, colour_split, min_points)
            else:
                sub = np.zeros(len(idx), dtype=np.int64)
            new[idx] = sub + nxt
            nxt += sub.max() + 1
        lab = new
    out = np.full(len(points), -1, dtype=np.int64)
    keep = []
    for k in range(lab.max() + 1 if len(lab) else 0):
        idx = np.flatnonzero(lab == k)
        if len(idx) < min_points:
            continue
        ext = points[idx].max(axis=0) - points[idx].min(axis=0)
        if ext.max() < min_size or ext.max() > max_size:
            continue
        c = points[idx].mean(axis=0)
        keep.append((-len(idx), round(float(c[0]), 6), round(float(c[1]), 6), k))
    for new_id, (*_, k) in enumerate(sorted(keep)):
        out[lab == k] = new_id
    return out
