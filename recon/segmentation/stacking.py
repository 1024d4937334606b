"""Support relations between convex segments: every object stands on the support or rests on another object.

A segment that does neither (a mug's handle, a part of a face cut off by an occluding object) is a fragment: it
joins the neighbour its surface continues into (most convex patch connections), else the one it touches most,
never one that rests on it.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix

from real2sim.recon.segmentation.convexity import PatchGraph

UP_COS = 0.5
"""A surface whose normal is within 60 degrees of up can carry what lies on it."""
REST_FRACTION = 0.5
"""Segment S rests on T when at least this share of their contact has S above T (or on T's upward surface)."""
MIN_REST_PAIRS = 3
"""... and at least this many contact point pairs do."""
LEAN_FRACTION = 2.0 / 3.0
"""Segment S leans on T (a tilted object whose low edge is hidden) when this share of their contact has S above T,
wherever on S the contact lies."""
LOW_QUANTILE = 0.02
"""A segment's bottom for the contact test: this quantile of its heights."""
BOTTOM_FRACTION = 0.3
"""... and the contact lies at S's bottom: its median height within this share of S's height above S's lowest point."""


def _pair_matrix(a: np.ndarray, b: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    return coo_matrix((w, (a, b)), shape=(n, n)).toarray()


def rests_on(
    points: np.ndarray, normals: np.ndarray, seg: np.ndarray, pairs: np.ndarray, spacing: float
) -> np.ndarray:
    """(K, K) boolean: segment i rests on segment j (their contact lies at i's bottom and has i above j, or on j's
    upward surface) or leans on it (most of their contact has i above j)."""
    k = int(seg.max()) + 1
    cross = seg[pairs[:, 0]] != seg[pairs[:, 1]]
    p = np.r_[pairs[cross, 0], pairs[cross, 1]]
    q = np.r_[pairs[cross, 1], pairs[cross, 0]]
    on = (normals[q, 2] > UP_COS) & (points[p, 2] >= points[q, 2] - spacing)
    on |= points[p, 2] - points[q, 2] > spacing
    total = _pair_matrix(seg[p], seg[q], np.ones(len(p)), k)
    above = _pair_matrix(seg[p], seg[q], on.astype(float), k)
    order = np.lexsort((points[:, 2], seg))
    starts = np.searchsorted(seg[order], np.arange(k))
    ends = np.r_[starts[1:], len(seg)]
    zs = points[order, 2]
    lo = zs[starts + ((ends - starts - 1) * LOW_QUANTILE).astype(np.int64)]
    hi = zs[ends - 1]
    rel = (points[p, 2] - lo[seg[p]]) / np.maximum(hi - lo, 1e-9)[seg[p]]
    bottom = np.ones((k, k), dtype=bool)
    key = seg[p] * k + seg[q]
    order = np.lexsort((rel, key))
    key, rel = key[order], rel[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], len(key)]
    med = rel[(starts + ends - 1) // 2]
    bottom.flat[key[starts]] = med <= BOTTOM_FRACTION
    high = _pair_matrix(seg[p], seg[q], (points[p, 2] - points[q, 2] > spacing).astype(float), k)
    lean = (high >= MIN_REST_PAIRS) & (high >= LEAN_FRACTION * np.maximum(total, 1.0))
    return lean | ((above >= MIN_REST_PAIRS) & (above >= REST_FRACTION * np.maximum(total, 1.0)) & bottom)


def merge_unsupported(
    points: np.ndarray,
    normals: np.ndarray,
    seg: np.ndarray,
    g: PatchGraph,
    near: np.ndarray,
    support_band: float,
    spacing: float,
) -> np.ndarray:
    """Merge fragments (segments that neither reach the support within ``support_band`` nor rest on another
    segment) into a neighbour, smallest first, until every segment is supported. ``seg``: per point, 0..K-1, a
    union of ``g``'s patches; ``near``: point pairs in contact. Labels 0..K'-1."""
    pairs = near
    seg = seg.copy()
    alone = np.zeros(len(seg), dtype=bool)  # fragments with no neighbour: left to the size filters
    while seg.max() > 0:
        k = int(seg.max()) + 1
        low = np.full(k, np.inf)
        np.minimum.at(low, seg, points[:, 2])
        rest = rests_on(points, normals, seg, pairs, spacing)
        supported = (low <= support_band) | rest.any(axis=1)
        supported[seg[alone]] = True
        if supported.all():
            break
        sizes = np.bincount(seg, minlength=k)
        s = int(np.flatnonzero(~supported)[np.argmin(sizes[~supported])])
        a, b = seg[pairs[:, 0]], seg[pairs[:, 1]]
        contact = _pair_matrix(a, b, np.ones(len(a)), k)
        contact = contact + contact.T
        ps = np.zeros(len(g.size), dtype=np.int64)
        ps[g.patch] = seg
        ea, eb = ps[g.edges[:, 0]], ps[g.edges[:, 1]]
        conv = _pair_matrix(ea, eb, g.convex.astype(float), k)
        conv = conv + conv.T
        cand = (contact[s] > 0) & ~rest[:, s]
        cand[s] = False
        if not cand.any():
            cand = contact[s] > 0
            cand[s] = False
        if not cand.any():
            alone[seg == s] = True
            continue
        score = np.where(cand, conv[s] * 1e6 + contact[s], -1.0)
        seg[seg == s] = int(np.argmax(score))
        _, seg = np.unique(seg, return_inverse=True)
        seg = seg.reshape(-1).astype(np.int64)
    return seg
