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
    return merge_small_regions(lab, pairs, min_points)


def merge_small_regions(lab: np.ndarray, pairs: np.ndarray, min_points: int) -> np.ndarray:
    """Regions with fewer than ``min_points`` points join the neighbouring region they touch most (``pairs``:
    neighbouring point index pairs), largest first, so noise and texture do not shatter an object. Labels 0..K-1."""
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


def split_concave(
    points: np.ndarray,
    normals: np.ndarray,
    *,
    angle_deg: float,
    min_points: int,
    support_band: float,
    k: int = 12,
) -> np.ndarray:
    """Split one cluster (scene frame, support at z = 0) along concave creases, LCCP-style (Stein et al. 2014).

    1. Faces: points whose ``k`` nearest neighbours' normals agree (``1 - |mean normal| < 1 - cos(angle / 2)``)
       are smooth; the smooth points fall into connected faces. The rest is the crease band (edges, where
       estimated normals are smeared), which is left out of the convexity test.
    2. Adjacent faces (points within 4 sample spacings across the band) vote with their clean normals over the
       close pairs ``(p, q)``: concave when ``(n_p - n_q) . (p - q) < 0`` for most pairs and the faces' mean
       normals there differ by more than ``angle_deg``. Faces joined by any other adjacency merge.
    3. Crease points take the label of the nearest face point; segments smaller than ``min_points`` join the
       neighbour they touch most; a segment that neither reaches the support (lowest point within
       ``support_band``) nor rests on another (their boundary at its bottom), such as a mug's handle, merges back.
    Labels 0..K-1 (all zeros when nothing splits).
    """
    n = len(points)
    zeros = np.zeros(n, dtype=np.int64)
    if n < 2 * k:
        return zeros
    tree = cKDTree(points)
    d, nn = tree.query(points, k=k)
    spacing = float(np.median(d[:, 1]))
    var = 1.0 - np.linalg.norm(normals[nn].mean(axis=1), axis=1)
    smooth = var < 1.0 - np.cos(np.radians(angle_deg) / 2.0)
    pairs = tree.query_pairs(1.8 * spacing, output_type="ndarray")
    if len(pairs) == 0 or smooth.sum() < 2:
        return zeros
    # face edges: both ends smooth and the edge along both tangent planes (no step between parallel faces)
    e = points[pairs[:, 1]] - points[pairs[:, 0]]
    e /= np.linalg.norm(e, axis=1, keepdims=True) + 1e-18
    tol = np.sin(np.radians(angle_deg))
    along = (np.abs(np.einsum("ij,ij->i", e, normals[pairs[:, 0]])) < tol) & (
        np.abs(np.einsum("ij,ij->i", e, normals[pairs[:, 1]])) < tol
    )
    both = smooth[pairs[:, 0]] & smooth[pairs[:, 1]] & along
    sp = pairs[both]
    g = coo_matrix((np.ones(len(sp)), (sp[:, 0], sp[:, 1])), shape=(n, n))
    _, face = connected_components(g, directed=False)
    face = np.where(smooth, face, -1)
    sizes = np.bincount(face[smooth], minlength=int(face.max()) + 1)
    face[(face >= 0) & (sizes[np.maximum(face, 0)] < max(10, min_points // 4))] = -1
    idx = np.flatnonzero(face >= 0)
    if len(idx) < 2:
        return zeros
    _, face_c = np.unique(face[idx], return_inverse=True)
    face[idx] = face_c.reshape(-1)
    nf = int(face[idx].max()) + 1
    if nf == 1:
        return zeros
    near = cKDTree(points[idx]).query_pairs(6.0 * spacing, output_type="ndarray")
    a, b = idx[near[:, 0]], idx[near[:, 1]]
    cross = face[a] != face[b]
    a, b = a[cross], b[cross]
    swap = face[a] > face[b]
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    key = face[a] * nf + face[b]
    ukey, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    m = len(ukey)
    if m == 0:
        return zeros
    cnt = np.bincount(inv, minlength=m).astype(np.float64)
    vote = np.sign(np.einsum("ij,ij->i", normals[a] - normals[b], points[a] - points[b]))
    mean_vote = np.bincount(inv, weights=vote, minlength=m) / cnt
    na = np.stack([np.bincount(inv, weights=normals[a, j], minlength=m) for j in range(3)], 1)
    nb = np.stack([np.bincount(inv, weights=normals[b, j], minlength=m) for j in range(3)], 1)
    na /= np.linalg.norm(na, axis=1, keepdims=True) + 1e-18
    nb /= np.linalg.norm(nb, axis=1, keepdims=True) + 1e-18
    concave = (mean_vote < -0.3) & (np.einsum("ij,ij->i", na, nb) < np.cos(np.radians(angle_deg)))
    # parallel faces offset along their normal by a step (a narrow face between them, too narrow to be seen as
    # a face, e.g. where two boxes of different depth touch) meet in a crease too
    nbar = na + nb
    nbar /= np.linalg.norm(nbar, axis=1, keepdims=True) + 1e-18
    dab = points[a] - points[b]
    close = np.linalg.norm(dab, axis=1) < 3.0 * spacing
    off = np.abs(np.einsum("ij,ij->i", dab, nbar[inv]))
    n_close = np.bincount(inv, weights=close.astype(float), minlength=m)
    step = np.bincount(inv, weights=np.where(close, off, 0.0), minlength=m) / np.maximum(n_close, 1.0)
    concave |= (n_close >= 5) & (step > 1.5 * spacing)
    fsize = np.bincount(face[idx], minlength=nf)
    # an adjacency of a few pairs (a corner, noise) is not a shared boundary
    join = ~concave & (cnt >= np.maximum(5, 0.05 * np.minimum(fsize[ukey // nf], fsize[ukey % nf])))
    gf = coo_matrix((np.ones(int(join.sum())), (ukey[join] // nf, ukey[join] % nf)), shape=(nf, nf))
    _, seg_of_face = connected_components(gf, directed=False)
    seg = np.full(n, -1, dtype=np.int64)
    seg[idx] = seg_of_face[face[idx]]
    rest = np.flatnonzero(seg < 0)
    if len(rest):
        _, j = cKDTree(points[idx]).query(points[rest])
        seg[rest] = seg[idx][j]
    _, seg = np.unique(seg, return_inverse=True)
    seg = merge_small_regions(seg.reshape(-1).astype(np.int64), pairs, min_points)
    if seg.max() == 0:
        return zeros
    return _merge_unsupported(points, seg, pairs, support_band)


def _merge_unsupported(
    points: np.ndarray, seg: np.ndarray, pairs: np.ndarray, support_band: float
) -> np.ndarray:
    """Merge segments that neither reach the support nor rest on a neighbour into the neighbour they touch most."""
    while seg.max() > 0:
        a, b = seg[pairs[:, 0]], seg[pairs[:, 1]]
        cross = a != b
        changed = False
        for s_id in range(int(seg.max()) + 1):
            idx = np.flatnonzero(seg == s_id)
            z = points[idx, 2]
            if z.min() <= support_band:
                continue
            mine = cross & ((a == s_id) | (b == s_id))
            if not mine.any():
                continue
            bnd = np.where(a[mine] == s_id, pairs[mine, 0], pairs[mine, 1])
            height = max(float(z.max() - z.min()), 1e-6)
            if np.median(points[bnd, 2]) - z.min() <= 0.25 * height:
                continue  # it rests on its neighbour
            other = np.where(a[mine] == s_id, b[mine], a[mine])
            seg[idx] = int(np.bincount(other).argmax())
            _, seg = np.unique(seg, return_inverse=True)
            seg = seg.reshape(-1).astype(np.int64)
            changed = True
            break
        if not changed:
            break
    return seg


def _split_each(lab: np.ndarray, min_points: int, split) -> np.ndarray:
    """Relabel every cluster of ``lab`` (0..K-1) by ``split(point indices) -> sub-labels 0..S-1``, numbering the
    pieces consecutively; clusters under ``2 * min_points`` points are not split."""
    new = np.full(len(lab), -1, dtype=np.int64)
    nxt = 0
    for k in range(lab.max() + 1):
        idx = np.flatnonzero(lab == k)
        sub = split(idx) if len(idx) >= 2 * min_points else np.zeros(len(idx), dtype=np.int64)
        new[idx] = sub + nxt
        nxt += int(sub.max()) + 1
    return new


def segment_objects(
    points: np.ndarray,
    colors: np.ndarray | None,
    *,
    tolerance: float,
    min_points: int,
    min_size: float,
    max_size: float,
    colour_split: float | None,
    normals: np.ndarray | None = None,
    concave_angle: float | None = None,
    support_band: float = 0.015,
) -> np.ndarray:
    """Object labels for scene-frame points above the support: -1 for rejected points, 0..K-1 for objects,
    ordered by decreasing size (point count; ties by centroid x then y), so the numbering is deterministic.
    """
    lab = euclidean_clusters(points, tolerance)
    if concave_angle is not None and normals is not None and len(points):
        lab = _split_each(
            lab,
            min_points,
            lambda idx: split_concave(
                points[idx],
                normals[idx],
                angle_deg=concave_angle,
                min_points=min_points,
                support_band=support_band,
            ),
        )
    if colour_split is not None and colors is not None and len(points):
        lab = _split_each(
            lab,
            min_points,
            lambda idx: split_by_colour(points[idx], colors[idx], tolerance, colour_split, min_points),
        )
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
