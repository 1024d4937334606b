"""Point-level refinement of the boundaries between touching segments.

Supervoxel patches are a few sample spacings wide, so a patch can straddle the crease where two objects meet and
carry a strip of one object's surface into the other. After the patch-level segmentation, every point near another
segment (the boundary band) is tested against the local surface of each segment it touches: the plane of that
segment's nearest points off the band, the point's distance to it counted in units of the plane's RMS scatter (at
least the median scatter of all such planes, the sensor's noise). A point moves to a neighbour only when it is an
outlier to its own segment's plane (beyond ``OUTLIER_SCATTER``) and fits the neighbour's plane better. A point on
a convex edge of its own object therefore stays (a plane fitted across the edge has a large scatter, while the
surface it stands on is flat and far off in units of its small scatter); the boundary moves onto the crease.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

BAND_SPACINGS = 2.0
"""A point within this many sample spacings of another segment lies on the boundary band."""
PLANE_NEIGHBOURS = 16
"""A segment's local plane at a band point: fitted to this many of its nearest points off the band ..."""
PLANE_REACH = 4.0
"""... all within this many band widths of the point (else the segment is not a candidate there)."""
OUTLIER_SCATTER = 2.0
"""A point leaves its segment only when farther from the segment's local plane than this many times the plane's
RMS scatter."""
ROUNDS = 3
"""Refinement rounds (each moves the boundary by at most one band width)."""


def _local_planes(points: np.ndarray, probe: np.ndarray, k: int, reach: float) -> tuple[np.ndarray, ...]:
    """For each ``probe`` point: whether ``k`` of ``points`` lie within ``reach``, the distance to their
    least-squares plane and the plane's RMS scatter."""
    d, j = cKDTree(points).query(probe, k=k, distance_upper_bound=reach)
    ok = np.isfinite(d).all(axis=1)
    q = points[np.where(ok[:, None], j, 0)]
    c = q.mean(axis=1)
    r = q - c[:, None]
    w, v = np.linalg.eigh(np.einsum("mki,mkj->mij", r, r))
    dist = np.abs(np.einsum("mi,mi->m", probe - c, v[:, :, 0]))
    return ok, dist, np.sqrt(np.maximum(w[:, 0], 0.0) / k)


def _refine_once(points: np.ndarray, seg: np.ndarray, tree: cKDTree, band: float) -> np.ndarray:
    pairs = tree.query_pairs(band, output_type="ndarray")
    if len(pairs) == 0:
        return seg
    a, b = seg[pairs[:, 0]], seg[pairs[:, 1]]
    cross = a != b
    if not cross.any():
        return seg
    on_band = np.zeros(len(points), dtype=bool)
    on_band[pairs[cross].ravel()] = True
    k = int(seg.max()) + 1
    # (point, segment) candidates: each band point with its own segment and those of its neighbours across
    bi = np.flatnonzero(on_band)
    key = np.unique(np.r_[pairs[cross, 0] * k + b[cross], pairs[cross, 1] * k + a[cross], bi * k + seg[bi]])
    cp, cl = key // k, key % k
    dist = np.full(len(key), np.inf)
    scatter = np.full(len(key), np.inf)
    for s in np.unique(cl):
        core = np.flatnonzero((seg == s) & ~on_band)
        if len(core) < PLANE_NEIGHBOURS:
            continue
        sel = np.flatnonzero(cl == s)
        ok, d, sc = _local_planes(points[core], points[cp[sel]], PLANE_NEIGHBOURS, PLANE_REACH * band)
        dist[sel[ok]], scatter[sel[ok]] = d[ok], sc[ok]
    noise = float(np.median(scatter[np.isfinite(scatter)])) if np.isfinite(scatter).any() else 0.0
    z = np.full(len(key), np.inf)  # distance in units of the plane's scatter
    fit = np.isfinite(dist)
    z[fit] = dist[fit] / np.maximum(scatter[fit], max(noise, 1e-12))
    own = cl == seg[cp]
    own_z = np.full(len(points), np.inf)
    own_z[cp[own]] = z[own]
    order = np.lexsort((cl, z, cp))  # per point, the best-fitting plane first (ties: lower segment)
    first = np.r_[True, cp[order][1:] != cp[order][:-1]]
    p, s, zs = cp[order][first], cl[order][first], z[order][first]
    # an outlier to its own surface moves to a better fit; with no own surface near, only to one it fits
    move = (s != seg[p]) & (own_z[p] > OUTLIER_SCATTER) & (zs < own_z[p])
    move &= np.isfinite(own_z[p]) | (zs <= OUTLIER_SCATTER)
    out = seg.copy()
    out[p[move]] = s[move]
    return out


def refine_boundaries(points: np.ndarray, seg: np.ndarray, spacing: float) -> np.ndarray:
    """Move the points near a boundary between segments (``seg``: per point, 0..K-1) to the segment whose local
    surface they lie on (module docstring); ``spacing``: the sample spacing [m]. Labels 0..K'-1."""
    if len(points) == 0 or seg.max() == 0:
        return seg
    tree = cKDTree(points)
    for _ in range(ROUNDS):
        new = _refine_once(points, seg, tree, BAND_SPACINGS * spacing)
        if np.array_equal(new, seg):
            break
        seg = new
    _, seg = np.unique(seg, return_inverse=True)
    return seg.reshape(-1).astype(np.int64)
