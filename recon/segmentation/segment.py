"""Objects on the support: Euclidean clustering of the points above the plane, each cluster split into locally
convex parts and regrouped by support relations and occlusion (``split_convex``, docs/segmentation.md), an optional
colour split, then size filters.

All inputs are in the scene frame (z up, support at z = 0).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from real2sim.recon.segmentation.bridges import split_weak_links
from real2sim.recon.segmentation.convexity import lccp_segments, merge_convex_unions, patch_graph
from real2sim.recon.segmentation.occlusion import RangeImage, merge_occluded
from real2sim.recon.segmentation.refine import refine_boundaries
from real2sim.recon.segmentation.stacking import merge_unsupported


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
    neighbouring point index pairs), largest first, so noise and texture do not shatter an object. A small region
    whose strongest contact is another small region waits for that one's choice (a string of fragments along a rim
    follows the object it continues, not one that its last fragment grazes), unless every small region waits.
    Labels 0..K-1."""
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
        if m.any():
            touch = coo_matrix((np.ones(len(src)), (src, dst)), shape=(len(sizes), len(sizes))).tocsr()
            first = small & ~small[np.asarray(touch.argmax(axis=1)).ravel()]
            if (first[src] & m).any():
                m &= first[src]
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


SEED_SPACINGS = 4.0
"""Supervoxel seed grid, in sample spacings (median nearest-neighbour distance, ``sample_spacing``)."""
ADJACENT_SPACINGS = 1.8
"""Points within this many sample spacings are neighbours (supervoxel growth and patch adjacency) ..."""
GRID_REACH = 1.0
"""... and at least within this many 4th-neighbour distances, so that a surface sampled unevenly stays connected."""
STEP_SPACINGS = 1.0
"""Slack of the LCCP step check between adjacent patches, in sample spacings (range noise)."""
MAX_CONCAVITY = 0.01
"""Touching segments whose union is convex within this depth [m] are one object (surface relief, not a notch)."""


def sample_spacing(points: np.ndarray) -> tuple[float, float]:
    """Typical distances [m] between samples of a surface: the median distance to the nearest neighbour, and to the
    4th nearest (on a square grid, the 4 edge neighbours; robust to the jitter of voxel means)."""
    k = min(5, len(points))
    d = cKDTree(points).query(points, k=k)[0]
    return float(np.median(d[:, 1])), float(np.median(d[:, k - 1]))


def split_convex(
    points: np.ndarray,
    normals: np.ndarray,
    colors: np.ndarray | None,
    *,
    concavity_deg: float,
    min_points: int,
    support_band: float,
    tolerance: float,
    image: RangeImage | None = None,
) -> np.ndarray:
    """Split one cluster (scene frame, support at z = 0) into objects: locally convex connected patches (LCCP, Stein
    et al. 2014; ``segmentation/convexity.py``); pieces of one plane cut apart by an occluder join (``image``: the z-buffer from
    the sensor, ``segmentation/occlusion.py``); segments smaller than ``min_points`` join the neighbour they touch most
    (within ``tolerance``); touching segments whose union is convex within ``MAX_CONCAVITY`` join; a segment that
    neither reaches the support (within ``support_band``) nor rests on another, such as a mug's handle, joins a
    neighbour (``segmentation/stacking.py``); points near a boundary move to the segment whose local surface they lie on
    (``segmentation/refine.py``). Labels 0..K-1."""
    n = len(points)
    zeros = np.zeros(n, dtype=np.int64)
    if n < 8:
        return zeros
    spacing, grid = sample_spacing(points)
    radius = max(ADJACENT_SPACINGS * spacing, GRID_REACH * grid)
    g = patch_graph(
        points, normals, colors, seed=SEED_SPACINGS * spacing, radius=radius,
        concavity_tolerance_deg=concavity_deg, step_slack=STEP_SPACINGS * spacing,
    )  # fmt: skip
    seg = split_weak_links(
        points, normals, g, lccp_segments(g), min_points=min_points, max_depth=MAX_CONCAVITY, spacing=spacing
    )[g.patch]
    if seg.max() == 0:
        return zeros
    near = cKDTree(points).query_pairs(tolerance, output_type="ndarray")
    _, seg = np.unique(seg, return_inverse=True)
    seg = seg.reshape(-1).astype(np.int64)
    if image is not None:
        step = 2.0 * STEP_SPACINGS * spacing
        seg = merge_occluded(
            seg,
            g,
            g.pairs,
            image,
            concavity_deg=concavity_deg,
            step=step,
            spacing=spacing,
            min_points=min_points,
        )
    seg = merge_small_regions(seg, near, min_points)
    # shattered into pieces all too small (normals too noisy to judge): keep the cluster whole
    if seg.max() == 0 or np.bincount(seg).max() < min_points:
        return zeros
    seg = merge_convex_unions(points, seg, near, MAX_CONCAVITY)
    if seg.max() == 0:
        return zeros
    seg = merge_unsupported(points, normals, seg, g, near, support_band, spacing)
    return refine_boundaries(points, seg, spacing)


def fallback_normals(points: np.ndarray, lab: np.ndarray, k: int = 12) -> np.ndarray:
    """Unit normals where no sensor position orients them: per cluster, turned up (or away from the cluster's
    centroid where nearly horizontal), then made consistent over the surface (Open3D's tangent-plane propagation)
    and flipped so that most face up or out."""
    import open3d as o3d

    out = np.zeros_like(points)
    for c in range(int(lab.max()) + 1 if len(lab) else 0):
        idx = np.flatnonzero(lab == c)
        pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points[idx]))
        pc.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(min(k, len(idx))))
        n = np.asarray(pc.normals).copy()
        rel = points[idx] - points[idx].mean(axis=0)
        n[np.where(np.abs(n[:, 2]) > 0.5, n[:, 2] < 0, np.einsum("ij,ij->i", n, rel) < 0)] *= -1
        if len(idx) > k:
            pc.normals = o3d.utility.Vector3dVector(n)
            pc.orient_normals_consistent_tangent_plane(k)
            n = np.asarray(pc.normals).copy()
            score = np.where(np.abs(n[:, 2]) > 0.5, n[:, 2], np.einsum("ij,ij->i", n, rel))
            if np.mean(score > 0) < 0.5:
                n = -n
        out[idx] = n
    return out


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
    origins: np.ndarray | None = None,
) -> np.ndarray:
    """Object labels for scene-frame points above the support: -1 for rejected points, 0..K-1 for objects,
    ordered by decreasing size (point count; ties by centroid x then y), so the numbering is deterministic.
    """
    lab = euclidean_clusters(points, tolerance)
    if concave_angle and len(points):
        if normals is None:
            normals = fallback_normals(points, lab)
        image = None
        if origins is not None and len(points) > 1 and float(np.ptp(origins, axis=0).max()) <= tolerance:
            image = RangeImage(
                points, np.asarray(origins, dtype=np.float64).mean(axis=0), sample_spacing(points)[0]
            )
        lab = _split_each(
            lab,
            min_points,
            lambda idx: split_convex(
                points[idx],
                normals[idx],
                None if colors is None else colors[idx],
                concavity_deg=concave_angle,
                min_points=min_points,
                support_band=support_band,
                tolerance=tolerance,
                image=image,
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
