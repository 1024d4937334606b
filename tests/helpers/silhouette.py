"""Silhouette check of a reconstructed object against the photos: an object mask found in each image without our
reconstruction (colour contrast to the plain table/background, refined by GrabCut), the mesh projected with a
camera, and their overlap and extents along the mask's long and short axes."""

from __future__ import annotations

import numpy as np


def object_mask(img: np.ndarray, scale: float = 0.5) -> np.ndarray:
    """Boolean mask of the object on a plain table: pixels whose Lab chroma differs from the image border's (the
    table and background) or that are very dark seed a GrabCut segmentation (at ``scale``); the largest component,
    holes filled, at full size."""
    import cv2

    small = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    b = max(2, round(10 * scale * 2))
    border = np.concatenate(
        [lab[:b], lab[-b:], lab[:, :b].transpose(1, 0, 2), lab[:, -b:].transpose(1, 0, 2)], 1
    )
    med = np.median(border.reshape(-1, 3), 0)
    chroma = np.hypot(lab[..., 1] - med[1], lab[..., 2] - med[2])
    r = max(1, round(12 * scale * 2))
    seed = ((chroma > 7) | (lab[..., 0] < 70)).astype(np.uint8)
    seed = cv2.morphologyEx(seed, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    seed = _largest_filled(cv2.morphologyEx(seed, cv2.MORPH_CLOSE, _disk(r)))
    if seed.sum() < 50:
        return cv2.resize(seed, img.shape[1::-1], interpolation=cv2.INTER_NEAREST).astype(bool)
    gc = np.full(seed.shape, cv2.GC_BGD, np.uint8)
    gc[cv2.dilate(seed, _disk(2 * r)) > 0] = cv2.GC_PR_BGD
    gc[seed > 0] = cv2.GC_PR_FGD
    gc[cv2.erode(seed, _disk(r + r // 4)) > 0] = cv2.GC_FGD
    cv2.setRNGSeed(0)
    cv2.grabCut(small, gc, None, np.zeros((1, 65)), np.zeros((1, 65)), 4, cv2.GC_INIT_WITH_MASK)
    fg = _largest_filled(((gc == cv2.GC_FGD) | (gc == cv2.GC_PR_FGD)).astype(np.uint8))
    return cv2.resize(fg, img.shape[1::-1], interpolation=cv2.INTER_LINEAR).astype(bool)


def _disk(r: int) -> np.ndarray:
    import cv2

    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


def _largest_filled(m: np.ndarray) -> np.ndarray:
    import cv2

    n, lbl, st, _ = cv2.connectedComponentsWithStats(m)
    out = np.zeros_like(m)
    if n < 2:
        return out
    cnts, _ = cv2.findContours((lbl == 1 + np.argmax(st[1:, cv2.CC_STAT_AREA])).astype(np.uint8),
                               cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)  # fmt: skip
    cv2.drawContours(out, cnts, -1, 1, -1)
    return out


def project(pts: np.ndarray, view) -> np.ndarray:
    """Pixel coordinates (OpenCV convention) of world points in a ``stereo.View``."""
    import cv2

    uv, _ = cv2.projectPoints(np.asarray(pts, float), cv2.Rodrigues(view.R)[0], view.t, view.K, view.dist)
    return uv[:, 0]


def mesh_silhouette(vertices: np.ndarray, faces: np.ndarray, view) -> np.ndarray:
    """Boolean mask of the mesh's projection (every face filled) in ``view`` (all vertices in front of it)."""
    import cv2

    sil = np.zeros(view.size[::-1], np.uint8)
    for t in np.round(project(vertices, view)[faces] * 4).astype(np.int32):
        cv2.fillConvexPoly(sil, t, 1, shift=2)
    return sil.astype(bool)


def axis_extents(mask: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Extents [px] along the long and short principal axes of ``mask``: of the mask, then of each of ``others``
    (a mask, or (N, 2) pixel coordinates)."""
    ys, xs = np.nonzero(mask)
    p = np.stack([xs, ys], 1).astype(float)
    c = p.mean(0)
    axes = np.linalg.svd(p - c, full_matrices=False)[2]
    out = []
    for q in (mask, *others):
        if q.ndim == 2 and q.shape == mask.shape and q.dtype == bool:
            ys, xs = np.nonzero(q)
            q = np.stack([xs, ys], 1).astype(float)
        out.append(np.ptp((q - c) @ axes.T, axis=0) if len(q) else np.zeros(2))
    return out


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / max(1, (a | b).sum()))
