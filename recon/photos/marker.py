"""Metric scale for an SfM reconstruction: from a printed ArUco / AprilTag marker of known size (its corners
detected with OpenCV in every registered view and triangulated), or from a known distance between two points the
user marks in two or more images. The scale's uncertainty is reported.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.errors import InputError, StageError
from real2sim.recon.photos.sfm import SfmResult, read_image
from real2sim.rounding import significant

CORNER_BIAS_PX = 0.15
"""Bound [px] on the systematic error of a refined marker corner."""


@dataclass(frozen=True)
class ScaleEstimate:
    """``scale`` [m per SfM unit] and its standard uncertainty; ``views`` used and per-edge estimates."""

    scale: float
    sigma: float
    views: int
    samples: tuple[float, ...]

    def to_json(self) -> dict:
        scale, sigma, rel = (significant(v) for v in (self.scale, self.sigma, self.sigma / self.scale))
        return {"scale": scale, "sigma": sigma, "relative_sigma": rel, "views": self.views}


def _projection(sfm: SfmResult, name: str) -> np.ndarray:
    return sfm.intrinsics[name].K @ sfm.cam_from_world[name][:3, :]


def _undistort(sfm: SfmResult, name: str, uv: np.ndarray) -> np.ndarray:
    """OpenCV pixel coordinates (pixel centres at integers) → undistorted COLMAP pixel coordinates (pixel centres at
    half-integers, the convention of the SfM intrinsics)."""
    import cv2

    uv = np.asarray(uv, dtype=float) + 0.5
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


def detect_marker(
    image: np.ndarray, dictionary: str = "DICT_4X4_50", marker_id: int = 0
) -> np.ndarray | None:
    """The 4 corners (4, 2) [px, OpenCV convention: pixel centres at integers] of marker ``marker_id`` (clockwise
    from top-left), refined to sub-pixel accuracy by intersecting lines fitted to the marker's edges
    (:func:`refine_corners`), or None."""
    import cv2

    aruco = cv2.aruco
    if not hasattr(aruco, dictionary):
        raise StageError(
            f"unknown marker dictionary {dictionary!r} (OpenCV names, e.g. DICT_4X4_50, DICT_APRILTAG_36h11)"
        )
    params = aruco.DetectorParameters()
    params.cornerRefinementMethod = aruco.CORNER_REFINE_SUBPIX
    det = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)), params)
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = det.detectMarkers(image)
    if ids is None:
        return None
    for c, i in zip(corners, ids.ravel(), strict=True):
        if int(i) == marker_id:
            return refine_corners(image, np.asarray(c, dtype=float).reshape(4, 2))
    return None


def refine_corners(gray: np.ndarray, corners: np.ndarray, cells: int = 6) -> np.ndarray:
    """Sub-pixel marker corners from its four straight edges.

    Corner detectors (contour polygons, ``cornerSubPix``) are biased towards the inside of a convex black corner by a
    few tenths of a pixel, which on a marker 50-100 px wide is a 1-2 % scale bias. Here each side's edge is located
    at many points along it (excluding the ends) as the crossing of the mid-level between the black border and the
    white margin, along the side's normal, with bilinear sampling; a line is fitted to each side and adjacent lines
    are intersected. ``cells``: bits across the marker including its border (the profiles stay within half a cell
    on each side of the edge). Returns the input corners where an edge cannot be measured.
    """
    from scipy.ndimage import map_coordinates

    img = np.asarray(gray, dtype=float)
    c = np.asarray(corners, dtype=float)
    centre = c.mean(0)
    lines = []
    for k in range(4):
        a, b = c[k], c[(k + 1) % 4]
        length = float(np.linalg.norm(b - a))
        d = (b - a) / max(length, 1e-9)
        n = np.array([-d[1], d[0]])
        if n @ ((a + b) / 2 - centre) < 0:
            n = -n  # outward
        reach = float(np.clip(length / cells * 0.5, 1.5, 6.0))
        offs = np.linspace(-reach, reach, int(reach * 20) + 1)
        pts = []
        for t in np.linspace(0.2, 0.8, max(8, int(length * 0.6 / 2))):
            p = a + t * (b - a)
            xy = p[None] + offs[:, None] * n[None]
            prof = map_coordinates(img, [xy[:, 1], xy[:, 0]], order=1, mode="nearest")
            k_in = max(2, len(offs) // 5)
            lo, hi = prof[:k_in].mean(), prof[-k_in:].mean()
            if hi - lo < 20:  # no clear black-to-white step here
                continue
            above = np.nonzero(prof >= (lo + hi) / 2)[0]
            j = int(above[0]) if len(above) else 0
            if j == 0:
                continue
            f = ((lo + hi) / 2 - prof[j - 1]) / (prof[j] - prof[j - 1])
            pts.append(p + (offs[j - 1] + f * (offs[j] - offs[j - 1])) * n)
        if len(pts) < 4:
            return c
        pts_a = np.asarray(pts)
        mu = pts_a.mean(0)
        _, _, vt = np.linalg.svd(pts_a - mu)
        lines.append((mu, vt[0]))
    out = np.empty((4, 2))
    for k in range(4):
        (p1, d1), (p2, d2) = lines[(k - 1) % 4], lines[k]  # corner k lies between side k-1 and side k
        m = np.array([d1, -d2]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return c
        s = np.linalg.solve(m, p2 - p1)
        out[k] = p1 + s[0] * d1
    if np.max(np.linalg.norm(out - c, axis=1)) > 3.0:
        return c  # the fit disagrees with the detection: keep the detection
    return out


def scale_from_marker(
    sfm: SfmResult, size: float, dictionary: str = "DICT_4X4_50", marker_id: int = 0
) -> ScaleEstimate:
    """Scale from the marker's side length ``size`` [m]: its corners are detected in every registered image,
    triangulated, and the four sides (and diagonals / sqrt 2) compared with ``size``.

    ``sigma`` combines the spread of those six estimates with a systematic term for corner localisation: a bias of
    up to ``CORNER_BIAS_PX`` per corner (measured on rendered markers with known corners) on the median side length
    in pixels, which does not average out over views."""

    obs: dict[str, np.ndarray] = {}
    for n in sfm.registered:
        img = read_image(sfm.image_dir / n, grey=True)
        if img is None:
            raise StageError(f"marker: cannot read {sfm.image_dir / n}")
        c = detect_marker(img, dictionary, marker_id)
        if c is not None:
            obs[n] = c
    if len(obs) < 2:
        raise StageError(
            f"marker {dictionary} id {marker_id} found in {len(obs)} registered image(s); need >= 2"
        )
    names = sorted(obs)
    projs = [_projection(sfm, n) for n in names]
    und = {n: _undistort(sfm, n, obs[n]) for n in names}
    corners = np.array([triangulate(projs, [und[n][k] for n in names]) for k in range(4)])
    sides = [np.linalg.norm(corners[k] - corners[(k + 1) % 4]) for k in range(4)]
    diags = [
        np.linalg.norm(corners[0] - corners[2]) / np.sqrt(2),
        np.linalg.norm(corners[1] - corners[3]) / np.sqrt(2),
    ]
    est = np.array([size / s for s in sides + diags])
    scale = float(np.mean(est))
    side_px = np.median([np.linalg.norm(obs[n] - np.roll(obs[n], 1, axis=0), axis=1).mean() for n in names])
    systematic = 2.0 * CORNER_BIAS_PX / side_px
    sigma = float(np.hypot(np.std(est, ddof=1) / np.sqrt(len(est)), systematic * scale))
    return ScaleEstimate(scale, sigma, len(names), tuple(float(x) for x in est))


def scale_from_known_distance(
    sfm: SfmResult,
    point_a: dict[str, tuple[float, float]],
    point_b: dict[str, tuple[float, float]],
    distance: float,
) -> ScaleEstimate:
    """Scale from two points A, B a known ``distance`` [m] apart, each given as ``{image name: (u, v) px}`` (OpenCV convention, pixel centres at integers) in two
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


def load_known_distance(
    path: str | Path,
) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]], float]:
    """Read a known-distance file (TOML)::

        distance = 0.30                      # metres between the two points
        [a]                                  # point A: image file name = [u, v] pixels (OpenCV: pixel centres
        "IMG_0001.jpg" = [812.5, 440.0]      # at integers), in two or more images
        "IMG_0004.jpg" = [790.0, 455.5]
        [b]
        "IMG_0001.jpg" = [1020.0, 300.0]
        "IMG_0002.jpg" = [1001.0, 310.5]

    Returns (point A, point B, distance). Problems are one ``InputError`` naming the file."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(path, "no such known-distance file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(path, f"not valid TOML ({e})") from None
    dist = doc.get("distance")
    if isinstance(dist, bool) or not isinstance(dist, int | float) or not math.isfinite(dist) or dist <= 0:
        raise InputError(path, f"'distance' must be a positive number of metres, got {dist!r}")
    points = []
    for key in ("a", "b"):
        table = doc.get(key)
        if not isinstance(table, dict) or len(table) < 2:
            raise InputError(path, f"[{key}] must map two or more image names to [u, v] pixels")
        pt = {}
        for name, uv in table.items():
            ok = (
                isinstance(uv, list)
                and len(uv) == 2
                and all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in uv
                )
            )
            if not ok:
                raise InputError(path, f"[{key}] {name!r}: expected [u, v] pixels, got {uv!r}")
            pt[str(name)] = (float(uv[0]), float(uv[1]))
        points.append(pt)
    return points[0], points[1], float(dist)
