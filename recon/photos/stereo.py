"""Two-view stereo for the CPU dense path: the views in the metric frame, one stereo partner per view, and depth
maps of both views of a pair from semi-global block matching on the rectified pair."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from real2sim.recon.photos.config import MvsCfg
    from real2sim.recon.photos.sfm import SfmResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class View:
    name: str
    K: np.ndarray  # noqa: N815 - OpenCV convention (pixel centres at integers)
    dist: np.ndarray
    R: np.ndarray  # noqa: N815 - cam_from_world rotation
    t: np.ndarray  # metric translation
    size: tuple[int, int]  # (width, height)

    @property
    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t


def views_of(sfm: SfmResult, world_from_sfm: np.ndarray, max_size: int = 0) -> dict[str, View]:
    """The registered views in the frame of ``world_from_sfm``; with ``max_size`` > 0 for images downscaled so the
    longer side is at most ``max_size`` px (``View.size`` and ``K`` of the downscaled image)."""
    s = float(np.cbrt(np.linalg.det(world_from_sfm[:3, :3])))
    rot = world_from_sfm[:3, :3] / s
    out = {}
    for n in sfm.registered:
        c = sfm.cam_from_world[n]
        r = c[:3, :3] @ rot.T
        centre = s * rot @ (-c[:3, :3].T @ c[:3, 3]) + world_from_sfm[:3, 3]
        intr = sfm.intrinsics[n]
        size = (intr.width, intr.height)
        if 0 < max_size < max(size):
            size = (
                max(1, round(size[0] * max_size / max(size))),
                max(1, round(size[1] * max_size / max(size))),
            )
        k = intr.K.copy()
        k[0] *= size[0] / intr.width
        k[1] *= size[1] / intr.height
        k[0, 2] -= 0.5  # COLMAP pixel centres at half-integers -> OpenCV's at integers
        k[1, 2] -= 0.5
        out[n] = View(n, k, intr.dist_coeffs, r, -r @ centre, size)
    return out


def stereo_pairs(
    sfm: SfmResult, views: dict[str, View], world_from_sfm: np.ndarray, cfg: MvsCfg
) -> list[tuple[str, str]]:
    """One (reference, partner) per reference view: most shared sparse points within the angle and forward-motion
    limits; a pair already chosen the other way round is not repeated."""
    pts = sfm.points @ world_from_sfm[:3, :3].T + world_from_sfm[:3, 3]
    sets = {n: set(sfm.observations[n][:, 2].astype(int).tolist()) for n in views}
    names = sorted(views)
    refs = names
    if cfg.max_views and cfg.max_views < len(names):
        refs = [names[i] for i in np.linspace(0, len(names) - 1, cfg.max_views).round().astype(int)]
    out = []
    for a in refs:
        best, best_n = None, 0
        for b in names:
            if b == a:
                continue
            shared = np.fromiter(sets[a] & sets[b], dtype=int)
            if len(shared) < cfg.min_shared_points:
                continue
            p = pts[shared]
            ra = views[a].centre - p
            rb = views[b].centre - p
            cos = np.sum(ra * rb, 1) / (np.linalg.norm(ra, axis=1) * np.linalg.norm(rb, axis=1))
            ang = float(np.degrees(np.arccos(np.clip(np.median(cos), -1, 1))))
            base = views[b].centre - views[a].centre
            base /= np.linalg.norm(base)
            da, db = views[a].R @ base, views[b].R @ base
            # Rectification needs the baseline roughly in both image planes (not forward motion).
            forward = float(np.degrees(np.arcsin(min(1.0, max(abs(da[2]), abs(db[2]))))))
            if forward > cfg.max_forward_deg:
                continue
            if cfg.min_angle_deg <= ang <= cfg.max_angle_deg and len(shared) > best_n:
                best, best_n = b, len(shared)
        if best is not None and (best, a) not in out:
            out.append((a, best))
    return out


def _sgbm(left: np.ndarray, right: np.ndarray, shift: int, ndisp: int, cfg: MvsCfg) -> np.ndarray:
    """Disparity ``u_left - u_right`` [px] of rectified images, searched in ``[shift, shift + ndisp)``; <= 0 where
    invalid. The right image is shifted by the smallest expected disparity and both are padded on the left, so the
    search covers every column (convergent views have large disparities)."""
    import cv2

    h, w = left.shape[:2]
    right = cv2.warpAffine(
        right, np.array([[1, 0, shift], [0, 1, 0]], dtype=np.float32), (w, h), flags=cv2.INTER_NEAREST
    )
    pad = ((0, 0), (ndisp, 0)) + (((0, 0),) if left.ndim == 3 else ())
    bs = cfg.block_size
    sgbm = cv2.StereoSGBM.create(
        minDisparity=0, numDisparities=ndisp, blockSize=bs, P1=8 * 3 * bs * bs, P2=32 * 3 * bs * bs,
        disp12MaxDiff=1, uniquenessRatio=cfg.uniqueness, speckleWindowSize=100, speckleRange=2,
        mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY,
    )  # fmt: skip
    d = sgbm.compute(np.pad(left, pad), np.pad(right, pad)).astype(np.float32)[:, ndisp:] / 16.0
    # Textureless pixels (and a block around them) give no reliable match; block matching also "fattens" textured
    # foreground into a textureless background (e.g. past the edge of a table).
    g = (
        cv2.cvtColor(left, cv2.COLOR_BGR2GRAY).astype(np.float32)
        if left.ndim == 3
        else left.astype(np.float32)
    )
    k = (bs, bs)
    std = np.sqrt(np.maximum(cv2.blur(g * g, k) - cv2.blur(g, k) ** 2, 0))
    flat = (std < cfg.min_texture).astype(np.uint8)
    flat = cv2.dilate(flat, np.ones((2 * bs + 1, 2 * bs + 1), np.uint8)) > 0
    return np.where((d > 0) & ~flat, d + shift, 0.0)


def _depth_image(
    d: np.ndarray,
    content: np.ndarray,
    rect_from_cam: np.ndarray,
    f: float,
    cx: float,
    cy: float,
    baseline: float,
    view: View,
) -> np.ndarray:
    """Depth map [m] of ``view`` (undistorted pinhole frame, its own size) from a rectified disparity map."""
    w, h = view.size
    v, u = np.nonzero((d > 0) & content)
    z = f * baseline / d[v, u]
    x_cam = np.stack([(u - cx) * z / f, (v - cy) * z / f, z], 1) @ rect_from_cam
    x_cam = x_cam[x_cam[:, 2] > 0]
    uv = x_cam[:, :2] / x_cam[:, 2:] * [view.K[0, 0], view.K[1, 1]] + [view.K[0, 2], view.K[1, 2]]
    ui, vi = np.round(uv[:, 0]).astype(int), np.round(uv[:, 1]).astype(int)
    ok = (ui >= 0) & (ui < w) & (vi >= 0) & (vi < h)
    depth = np.full((h, w), np.inf, np.float32)
    np.minimum.at(depth, (vi[ok], ui[ok]), x_cam[ok, 2].astype(np.float32))
    depth[~np.isfinite(depth)] = 0.0
    return depth


def depth_from_pair(
    va: View, vb: View, img_a: np.ndarray, img_b: np.ndarray, sparse: np.ndarray, cfg: MvsCfg
) -> list[tuple[str, np.ndarray]]:
    """Depth maps [m] of both cameras of a pair (each in its undistorted pinhole frame, K of the view), from SGBM
    on the rectified pair (left-to-right, and mirrored for the right view)."""
    import cv2

    r = vb.R @ va.R.T
    t_ab = vb.t - r @ va.t
    # One rectified canvas for both views; a square one when their sizes differ (portrait beside landscape).
    w, h = va.size if va.size == vb.size else (max(*va.size, *vb.size),) * 2
    r1, r2, p1, p2, _, _, _ = cv2.stereoRectify(
        va.K, va.dist, vb.K, vb.dist, (w, h), r, t_ab.reshape(3, 1), flags=cv2.CALIB_ZERO_DISPARITY, alpha=-1
    )
    vertical = abs(p2[1, 3]) > abs(p2[0, 3])  # rectified along columns: SGBM runs on transposed images
    axis = 1 if vertical else 0
    if p2[axis, 3] > 0:  # the partner is on the left (above): swap so ``va`` is the left (upper) camera
        return depth_from_pair(vb, va, img_b, img_a, sparse, cfg)
    f, cx, cy = p1[0, 0], p1[0, 2], p1[1, 2]
    baseline = -p2[axis, 3] / p2[0, 0]
    ma = cv2.initUndistortRectifyMap(va.K, va.dist, r1, p1, (w, h), cv2.CV_32FC1)
    mb = cv2.initUndistortRectifyMap(vb.K, vb.dist, r2, p2, (w, h), cv2.CV_32FC1)
    ra = cv2.remap(img_a, ma[0], ma[1], cv2.INTER_LINEAR)
    rb = cv2.remap(img_b, mb[0], mb[1], cv2.INTER_LINEAR)
    # Disparity range from the sparse points both views see (in the rectified left frame).
    xa = (sparse @ va.R.T + va.t) @ r1.T
    xa = xa[xa[:, 2] > 0]
    if len(xa) < 5:
        return []
    lo, hi = np.percentile(f * baseline / xa[:, 2], [2, 98])  # disparity along the baseline axis
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= 0:
        return []
    span = hi - lo
    shift = int(np.floor(lo - 0.15 * span - 8))
    ndisp = min(int(np.ceil((hi + 0.15 * span + 8 - shift) / 16.0)) * 16, cfg.max_disparities)
    log.debug(
        "pair %s-%s: f %.1f baseline %.4f disparity %d + %d", va.name, vb.name, f, baseline, shift, ndisp
    )
    content_a = cv2.remap(np.full(va.size[::-1], 255, np.uint8), ma[0], ma[1], cv2.INTER_NEAREST) > 0
    content_b = cv2.remap(np.full(vb.size[::-1], 255, np.uint8), mb[0], mb[1], cv2.INTER_NEAREST) > 0

    def t(img: np.ndarray) -> np.ndarray:  # into / out of the frame where epipolar lines are rows
        return np.ascontiguousarray(np.swapaxes(img, 0, 1) if vertical else img)

    ra_t, rb_t = t(ra), t(rb)
    d_left = t(_sgbm(ra_t, rb_t, shift, ndisp, cfg))
    # Mirrored, the right image becomes the left one with the same (positive) disparities.
    d_right = t(_sgbm(t(rb)[:, ::-1].copy(), t(ra)[:, ::-1].copy(), shift, ndisp, cfg)[:, ::-1])
    return [
        (va.name, _depth_image(d_left, content_a, r1, f, cx, cy, baseline, va)),
        (vb.name, _depth_image(np.ascontiguousarray(d_right), content_b, r2, f, cx, cy, baseline, vb)),
    ]


def in_depth_map(view: View, depth: np.ndarray, points: np.ndarray, tol: float) -> np.ndarray:
    """Points that ``view``'s depth map holds: they project into the image in front of the camera and the depth
    there agrees within ``tol`` (plus 1 % of the depth)."""
    x = points @ view.R.T + view.t
    z = x[:, 2]
    ok = z > 0
    uv = np.zeros((len(points), 2))
    uv[ok] = x[ok, :2] / z[ok, None] * [view.K[0, 0], view.K[1, 1]] + [view.K[0, 2], view.K[1, 2]]
    ui, vi = np.round(uv[:, 0]).astype(int), np.round(uv[:, 1]).astype(int)
    h, w = depth.shape
    ok &= (ui >= 0) & (ui < w) & (vi >= 0) & (vi < h)
    d = np.zeros(len(points))
    d[ok] = depth[vi[ok], ui[ok]]
    return ok & (d > 0) & (np.abs(d - z) <= tol + 0.01 * z)
