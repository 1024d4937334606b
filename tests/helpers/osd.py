"""OSD tabletop ground truth (per-point labels) and object IoU, shared by the clutter tests and benchmark."""

from __future__ import annotations

import numpy as np

from real2sim.matching import match_pairs


def truth_labels(cloud) -> np.ndarray:
    """OSD ground truth per valid point of ``cloud``: 0 table/background, k >= 1 object k (label // 10 - 1)."""
    lab = cloud.labels[cloud.valid_mask()]
    return np.where(lab >= 10, lab // 10 - 1, 0)


def object_ious(truth: np.ndarray, labels: np.ndarray) -> list[float]:
    """Per labelled object (``truth`` > 0 per point), the point IoU of the predicted object (``labels`` k >= 1)
    matched to it one-to-one (maximum total IoU); 0 for an object left unmatched."""
    ids = sorted(set(np.unique(truth).tolist()) - {0})
    ks = sorted(set(np.unique(labels).tolist()) - {-1, 0})
    iou = np.zeros((len(ids), max(len(ks), 1)))
    for i, g in enumerate(ids):
        a = truth == g
        for j, k in enumerate(ks):
            b = labels == k
            iou[i, j] = (a & b).sum() / (a | b).sum()
    out = [0.0] * len(ids)
    for i, j, _ in match_pairs(-iou):
        out[i] = float(iou[i, j])
    return out
