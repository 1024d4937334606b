"""Object candidates: the points above the support, including the parts of objects beyond its seen extent.

The support's seen extent (the convex hull of its inliers) ends where the scan ends or where objects hide the table
behind them. An object partly over that edge, or standing on the hidden table behind others, is still an object on
the support: points up to ``CANDIDATE_REACH`` beyond the hull are kept when their Euclidean cluster lies mostly
(``MIN_INSIDE_SHARE``) above the seen support, or when, not touching anything above it, they form a whole object
standing on the plane's hidden continuation: cut by neither the reach nor ``max_height``, and with nothing of it
continuing below the plane (as a wall, a chair or a shelf standing on the floor does). Background joined to the
objects through a contact and larger than them keeps only its points above the seen support, as without the reach.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.support import inside_polygon, polygon_signed_distance, voxel_downsample
from real2sim.recon.segmentation.segment import euclidean_clusters

CANDIDATE_REACH = 0.3
"""How far [m] beyond the seen support (plus ``crop_margin``) a cluster reaching over its edge is followed."""
MIN_INSIDE_SHARE = 0.5
"""A cluster keeps its points beyond the seen support when at least this share of it lies above the support."""


def object_candidates(
    w: np.ndarray, hull: np.ndarray, inside: np.ndarray, cfg: PointCloudReconCfg
) -> np.ndarray:
    """Indices of the candidate points of ``w`` (scene frame, support at z = 0): between ``min_height`` and
    ``max_height``, and inside the support's ``hull`` (``inside``: grown by ``crop_margin``) or in a cluster that
    lies mostly inside it."""
    z = w[:, 2]
    band = (z >= cfg.min_height) & (z <= cfg.max_height)
    cand = np.flatnonzero(inside & band)
    if CANDIDATE_REACH <= 0 or len(cand) == 0:
        return cand
    near = band & ~inside
    near[near] = inside_polygon(w[near, :2], hull, cfg.crop_margin + CANDIDATE_REACH)
    if not near.any():
        return cand
    wide = np.flatnonzero(inside & band | near)
    ds, inv = voxel_downsample(w[wide], cfg.voxel)
    lab = euclidean_clusters(ds, cfg.cluster_tolerance)
    # share of each cluster's voxels that hold a point above the seen support
    vin = np.zeros(len(ds), dtype=bool)
    vin[inv[inside[wide]]] = True
    share = np.bincount(lab, weights=vin, minlength=lab.max() + 1) / np.bincount(lab)
    ok = share >= MIN_INSIDE_SHARE
    isolated = share == 0
    if isolated.any():
        ok |= isolated & _whole_on_plane(w, ds, lab, isolated, hull, cfg)
    keep = inside[wide] | ok[lab[inv]]
    return wide[keep]


def _whole_on_plane(
    w: np.ndarray,
    ds: np.ndarray,
    lab: np.ndarray,
    isolated: np.ndarray,
    hull: np.ndarray,
    cfg: PointCloudReconCfg,
) -> np.ndarray:
    """Per cluster of the voxel points ``ds`` (labels ``lab``), whether it is a whole object on the support plane:
    clear of the reach's edge and of ``max_height``, and no point of ``w`` below the plane under its footprint.
    Decided for the ``isolated`` clusters (beyond the seen support); False elsewhere."""
    n = len(isolated)
    sel = np.flatnonzero(isolated[lab])
    p, plab = ds[sel], lab[sel]
    cut = (p[:, 2] > cfg.max_height - 2 * cfg.voxel) | (
        polygon_signed_distance(p[:, :2], hull) > cfg.crop_margin + CANDIDATE_REACH - 2 * cfg.voxel
    )
    bad = np.bincount(plab[cut], minlength=n) > 0
    z = w[:, 2]
    below = w[(z < -2 * cfg.plane_distance) & (z > -cfg.max_height), :2]
    tol = cfg.cluster_tolerance
    lo, hi = p[:, :2].min(axis=0) - tol, p[:, :2].max(axis=0) + tol
    below = below[np.all((below >= lo) & (below <= hi), axis=1)]
    if len(below):
        d, j = cKDTree(p[:, :2]).query(below, distance_upper_bound=tol)
        bad[plab[j[np.isfinite(d)]]] = True
    return isolated & ~bad
