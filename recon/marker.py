"""Metric scale for an SfM reconstruction: from a printed ArUco / AprilTag marker of known size (its corners
detected with OpenCV in every registered view and triangulated), or from a known distance between two points the
user marks in two or more images. The scale's uncertainty is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from real2sim.recon.sfm import SfmResult

from real2sim.errors import StageError


@dataclass(frozen=True)
class ScaleEstimate:
    """``scale`` [m per SfM unit] and its standard uncertainty; ``views`` used and per-edge estimates."""

    scale: float
    sigma: float
    views: int
    samples: tuple[float, ...]

    def to_json(self) -> dict:
        return {"scale": self.scale, "sigma": self.sigma, "relative_sigma": self.sigma / self.scale,
                "views": self.views}  # fmt: skip


def _projection(sfm: SfmResult, name: str) -> np.ndarray:
    return sfm.intrinsics[name].K @ sfm.cam_from_world[name][:3, :]


def _undistort(sfm: SfmResult, name: str, uv: np.ndarray) -> np.ndarray:
    import cv2

    intr = sfm.intrinsics[name]
    d = intr.dist_coeffs
    if not np.any(d):
        return uv
    return cv2.undistortPoints(uv.reshape(-1, 1, 2).astype(np.float64), intr.K, d, P=intr.K).reshape(-1, 2)


def triangulate(projections: list[np.ndarray], uvs: list[np.ndarray]) -> np.ndarray:
    """Linear (DLT) triangulation of one point seen in >= 2 views."""
    rows = []
    for p, (u, v) in zip(projections, uvs, strict=True):
        rows.append(u * p[2] - p[0])
        rows.append(v * p[2] - p[1])
    _, _, vt = np.linalg.svd(np.asarray(rows))
    x = vt[-1]
    return x[:3] / x[3]


def detect_marker(image: np.ndarray, dictionary: str = "DICT_4X4_50", marker_id: int = 0) -> np.ndarray | None:
    """The 4 corners (4, 2) [px] of marker ``marker_id`` (OpenCV order: clockwise from top-left), or None."""
    import cv2

    aruco = cv2.aruco
    if not hasattr(aruco, dictionary):
        raise StageError(f"unknown marker dictionary {dictionary!r} (OpenCV names, e.g. DICT_4X4_50, DICT_APRILTAG_36h11)")
    det = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)), aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(image)
    if ids is None:
        return None
    for c, i in zip(corners, ids.ravel(), strict=True):
        if int(i) == marker_id:
            return np.asarray(c, dtype=float).reshape(4, 2)
    return None


def scale_from_marker(sfm: SfmResult, size: float, dictionary: str = "DICT_4X4_50", marker_id: int = 0) -> ScaleEstimate:
    """Scale from the marker's side length ``size`` [m]: its corners are detected in every registered image,
    triangulated, and the four sides (and diagonals / sqrt 2) compared with ``size``."""
    import cv2

    obs: dict[str, np.ndarray] = {}
    for n in sfm.registered:
        img = cv2.imread(str(sfm.image_dir / n), cv2.IMREAD_GRAYSCALE)
        c = detect_marker(img, dictionary, marker_id)
        if c is not None:
            obs[n] = c
    if len(obs) < 2:
        raise StageError(f"marker {dictionary} id {marker_id} found in {len(obs)} registered image(s); need >= 2")
    names = sorted(obs)
    projs = [_projection(sfm, n) for n in names]
    und = {n: _undistort(sfm, n, obs[n]) for n in names}
    corners = np.array([triangulate(projs, [und[n][k] for n in names]) for k in range(4)])
    sides = [np.linalg.norm(corners[k] - corners[(k + 1) % 4]) for k in range(4)]
    diags = [np.linalg.norm(corners[0] - corners[2]) / np.sqrt(2), np.linalg.norm(corners[1] - corners[3]) / np.sqrt(2)]
    est = np.array([size / s for s in sides + diags])
    scale = float(np.mean(est))
    sigma = float(np.std(est, ddof=1) / np.sqrt(len(est)))
    return ScaleEstimate(scale, sigma, len(names), tuple(float(x) for x in est))


def scale_from_known_distance(
    sfm: SfmResult, point_a: dict[str, tuple[float, float]], point_b: dict[str, tuple[float, float]], distance: float
) -> ScaleEstimate:
    """Scale from two points A, B a known ``distance`` [m] apart, each given as ``{image name: (u, v) px}`` in two
    or more registered images. The uncertainty comes from leave-one-view-out re-triangulation."""
    for label, pt in (("A", point_a), ("B", point_b)):
        ok = [n for n in pt if n in sfm.cam_from_world]
        if len(ok) < 2:
            raise StageError(f"point {label} is given in {len(ok)} registered image(s); need >= 2")

    def tri(pt: dict, skip: str | None = None) -> np.ndarray:
        ns = [n for n in sorted(pt) if n in sfm.cam_from_world and n != skip]
        return triangulate([_projection(sfm, n) for n in ns],
                           [_undistort(sfm, n, np.array([pt[n]], dtype=float))[0] for n in ns])  # fmt: skip

    d = np.linalg.norm(tri(point_a) - tri(point_b))
    scale = float(distance / d)
    loo = []
    for pt, other in ((point_a, point_b), (point_b, point_a)):
        if len(pt) > 2:
            for n in pt:
                a = tri(pt, n)
                loo.append(distance / np.linalg.norm(a - tri(other)))
    sigma = float(np.std(loo) * np.sqrt(max(len(loo) - 1, 1)) / max(len(loo), 1)) if loo else float("nan")
    return ScaleEstimate(scale, sigma, len(set(point_a) | set(point_b)), tuple(loo))
