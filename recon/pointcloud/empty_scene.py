"""Why a scene came out without objects: one warning line naming the filter that removed them."""

from __future__ import annotations

import logging

import numpy as np

from real2sim.recon.pointcloud.config import PointCloudReconCfg

log = logging.getLogger(__name__)


def no_objects_reason(w: np.ndarray, inside: np.ndarray, kept: np.ndarray, cfg: PointCloudReconCfg) -> str:
    """Why no object was found. ``w``: scene-frame points, ``inside``: within the support's extent, ``kept``: the
    downsampled candidates that survived outlier removal (what segmentation received)."""
    z = w[:, 2]
    if not (inside & (z >= cfg.min_height) & (z <= cfg.max_height)).any():
        high = int((inside & (z > cfg.max_height)).sum())
        below = int((inside & (z <= -cfg.min_height)).sum())
        outside = int((~inside & (z >= cfg.min_height) & (z <= cfg.max_height)).sum())
        parts = [f"{n} {what}" for n, what in ((high, f"higher than {cfg.max_height:g} m"),
                 (below, "under the support"), (outside, "beside its seen extent")) if n]  # fmt: skip
        return (
            f"no points {cfg.min_height:g}..{cfg.max_height:g} m above the support within its seen extent"
            + (f" ({', '.join(parts)})" if parts else "")
        )
    if len(kept) == 0:
        return "every point above the support was removed as an outlier"
    from real2sim.recon.segmentation.segment import euclidean_clusters

    lab = euclidean_clusters(kept, cfg.cluster_tolerance)
    n = int(lab.max()) + 1
    few = small = large = 0
    for k in range(n):
        p = kept[lab == k]
        ext = float((p.max(axis=0) - p.min(axis=0)).max())
        if len(p) < cfg.min_object_points:
            few += 1
        elif ext < cfg.min_object_size:
            small += 1
        elif ext > cfg.max_object_size:
            large += 1
    parts = [f"{c} {what}" for c, what in ((few, f"with fewer than {cfg.min_object_points} points"),
             (small, f"smaller than {cfg.min_object_size:g} m"),
             (large, f"larger than {cfg.max_object_size:g} m")) if c]  # fmt: skip
    return f"all {n} cluster(s) above the support were dropped ({', '.join(parts) or 'by segmentation'})"


def warn_no_objects(name: str, why: str) -> None:
    log.warning("%s: no objects found: %s", name, why)
