"""Dense geometry from registered photos.

CPU path (``dense_points_cpu``): every registered view is paired with the neighbour that shares the most sparse
points at a usable triangulation angle; the pair is rectified (OpenCV ``stereoRectify``), matched with semi-global
block matching (``StereoSGBM``, disparity range taken from the shared sparse points) and turned into a depth map
of the reference view (undistorted pinhole frame). The depth maps are fused in a truncated signed distance volume
(Open3D ``VoxelBlockGrid``), whose zero level set gives the points (colours, normals). Each point is given
the centre of the camera that sees it most frontally as its sensor origin, for normal orientation and free space.

CUDA path (``dense_points_cuda``): COLMAP PatchMatch stereo + stereo fusion through pycolmap (needs a CUDA build).
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from real2sim.errors import ConfigError, StageError
from real2sim.progress import progress
from real2sim.recon.io import PointCloud
from real2sim.recon.sfm import SfmResult

log = logging.getLogger(__name__)

CUDA_MISSING = "dense 'cuda' needs pycolmap built with CUDA (PatchMatch stereo); this pycolmap is CPU-only: use --dense cpu"


@dataclass(frozen=True)
class MvsCfg:
    """Options of the dense stage."""

    min_angle_deg: float = 3.0
    """Smallest triangulation angle [deg] (median over shared sparse points) of a stereo partner."""
    max_angle_deg: float = 20.0
    """Largest triangulation angle [deg] of a stereo partner (wider pairs match poorly)."""
    max_forward_deg: float = 25.0
    """Largest angle [deg] between a pair's baseline and either image plane (forward motion rectifies badly)."""
    min_shared_points: int = 30
    """Fewest sparse points a stereo partner must share with the reference view."""
    block_size: int = 5
    """SGBM matching block side [px] (odd)."""
    uniqueness: int = 10
    """SGBM uniqueness ratio [%]: the best match must beat the second best by this margin."""
    voxel: float | None = None
    """TSDF voxel [m]; None: the footprint of 1.5 pixels at the median sparse depth."""
    trunc_voxels: float = 4.0
    """TSDF truncation distance in voxels."""
    max_views: int = 0
    """Reference views used (evenly spread); 0: all registered views."""
    min_texture: float = 3.0
    """Grey-level standard deviation in a matching block below which a pixel counts as textureless (no depth)."""
    min_weight: float = 2.0
    """Fused points keep voxels observed by at least this many depth maps (TSDF weight): 2 keeps only surface
    that a second depth map confirms (multi-view consistency), which removes single-view mismatches, the
    speckle that makes a surface rough and its collision hulls stand off it."""
    max_disparities: int = 256
    """Widest disparity search [px] (a multiple of 16)."""

    def validate(self) -> MvsCfg:
        if not 0 < self.min_angle_deg < self.max_angle_deg < 90:
            raise ConfigError("mvs: 0 < min_angle_deg < max_angle_deg < 90 required")
        if self.block_size < 1 or self.block_size % 2 == 0:
            raise ConfigError(f"mvs: block_size must be odd and >= 1, got {self.block_size}")
        if self.voxel is not None and not self.voxel > 0:
            raise ConfigError(f"mvs: voxel must be > 0, got {self.voxel}")
        if (
            self.trunc_voxels < 1
            or self.max_views < 0
            or self.min_shared_points < 5
            or self.max_disparities % 16
        ):
            raise ConfigError(
                "mvs: trunc_voxels >= 1, max_views >= 0, min_shared_points >= 5, max_disparities % 16 == 0 required"
            )
        return self


@dataclass(frozen=True)
class _View:
    name: str
    K: np.ndarray  # noqa: N815 - OpenCV convention (pixel centres at integers)
    dist: np.ndarray
    R: np.ndarray  # noqa: N815 - cam_from_world rotation
    t: np.ndarray  # metric translation
    size: tuple[int, int]  # (width, height)

    @property
    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t


def _views(sfm: SfmResult, world_from_sfm: np.ndarray) -> dict[str, _View]:
    s = float(np.cbrt(np.linalg.det(world_from_sfm[:3, :3])))
    rot = world_from_sfm[:3, :3] / s
    out = {}
    for n in sfm.registered:
        c = sfm.cam_from_world[n]
        r = c[:3, :3] @ rot.T
        centre = s * rot @ (-c[:3, :3].T @ c[:3, 3]) + world_from_sfm[:3, 3]
        intr = sfm.intrinsics[n]
        k = intr.K.copy()
        k[0, 2] -= 0.5  # COLMAP pixel centres at half-integers -> OpenCV's at integers
        k[1, 2] -= 0.5
        out[n] = _View(n, k, intr.dist_coeffs, r, -r @ centre, (intr.width, intr.height))
    return out


def _pairs(
    sfm: SfmResult, views: dict[str, _View], world_from_sfm: np.ndarray, cfg: MvsCfg
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
    right = cv2.warpAffine(right, np.float32([[1, 0, shift], [0, 1, 0]]), (w, h), flags=cv2.INTER_NEAREST)
    pad = ((0, 0), (ndisp, 0)) + (((0, 0),) if left.ndim == 3 else ())
    bs = cfg.block_size
    sgbm = cv2.StereoSGBM_create(
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
    view: _View,
) -> np.ndarray:
    """Depth map [m] of ``view`` (undistorted pinhole frame) from a rectified disparity map."""
    h, w = d.shape
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


def _depth_from_pair(
    va: _View, vb: _View, img_a: np.ndarray, img_b: np.ndarray, sparse: np.ndarray, cfg: MvsCfg
) -> list[tuple[str, np.ndarray]]:
    """Depth maps [m] of both cameras of a pair (each in its undistorted pinhole frame, K of the view), from SGBM
    on the rectified pair (left-to-right, and mirrored for the right view)."""
    import cv2

    r = vb.R @ va.R.T
    t = vb.t - r @ va.t
    w, h = va.size
    r1, r2, p1, p2, _, _, _ = cv2.stereoRectify(
        va.K, va.dist, vb.K, vb.dist, (w, h), r, t.reshape(3, 1), flags=cv2.CALIB_ZERO_DISPARITY, alpha=-1
    )
    vertical = abs(p2[1, 3]) > abs(p2[0, 3])  # rectified along columns: SGBM runs on transposed images
    axis = 1 if vertical else 0
    if p2[axis, 3] > 0:  # the partner is on the left (above): swap so ``va`` is the left (upper) camera
        return _depth_from_pair(vb, va, img_b, img_a, sparse, cfg)
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
    ones = np.full((h, w), 255, np.uint8)
    content_a = cv2.remap(ones, ma[0], ma[1], cv2.INTER_NEAREST) > 0
    content_b = cv2.remap(ones, mb[0], mb[1], cv2.INTER_NEAREST) > 0

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


def _in_depth_map(view: _View, depth: np.ndarray, points: np.ndarray, tol: float) -> np.ndarray:
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


def dense_points_cpu(
    sfm: SfmResult, world_from_sfm: np.ndarray, cfg: MvsCfg = MvsCfg(), timings: dict | None = None
) -> PointCloud:
    """Rectified-pair SGBM depth maps fused in a TSDF volume → coloured points with per-point camera origins,
    in the frame of ``world_from_sfm`` (a similarity: metric scale and orientation)."""
    import cv2
    import open3d as o3d
    import open3d.core as o3c

    cfg.validate()
    t0 = time.perf_counter()
    views = _views(sfm, world_from_sfm)
    pairs = _pairs(sfm, views, world_from_sfm, cfg)
    if not pairs:
        raise StageError("dense: no pair of registered views with enough shared points at a usable angle")
    pts = sfm.points @ world_from_sfm[:3, :3].T + world_from_sfm[:3, 3]
    sets = {n: sfm.observations[n][:, 2].astype(int) for n in views}
    depths: dict[str, list[np.ndarray]] = {}
    images: dict[str, np.ndarray] = {}

    def load(n: str) -> np.ndarray:
        if n not in images:
            img = cv2.imread(str(sfm.image_dir / n), cv2.IMREAD_COLOR)
            if img is None:
                raise StageError(f"dense: cannot read {sfm.image_dir / n}")
            images[n] = img
        return images[n]

    with progress("dense stereo pairs", total=len(pairs)) as bar:
        for a, b in pairs:
            shared = np.intersect1d(sets[a], sets[b])
            for n, depth in _depth_from_pair(views[a], views[b], load(a), load(b), pts[shared], cfg):
                depths.setdefault(n, []).append(depth)
            bar()
    if not depths:
        raise StageError("dense: every stereo pair was vertical or had no sparse points in view")
    t1 = time.perf_counter()
    med_depth, f_px = [], []
    for n in depths:
        v = views[n]
        z = pts[sets[n]] @ v.R[2] + v.t[2]
        med_depth.append(np.median(z[z > 0]))
        f_px.append(v.K[0, 0])
    voxel = cfg.voxel if cfg.voxel is not None else float(1.5 * np.median(med_depth) / np.median(f_px))
    dev = o3c.Device("CPU:0")
    vbg = o3d.t.geometry.VoxelBlockGrid(
        attr_names=("tsdf", "weight", "color"), attr_dtypes=(o3c.float32, o3c.float32, o3c.float32),
        attr_channels=((1), (1), (3)), voxel_size=voxel, block_resolution=16, block_count=40000, device=dev,
    )  # fmt: skip
    merged: dict[str, np.ndarray] = {}
    for n in sorted(depths):
        v = views[n]
        depth = depths[n][0]
        for other in depths[n][1:]:
            both = (depth > 0) & (other > 0)
            depth = np.where(both, 0.5 * (depth + other), np.maximum(depth, other))
        merged[n] = depth
        colour = (
            cv2.cvtColor(cv2.undistort(load(n), v.K, v.dist), cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
        )
        z = pts[sets[n]] @ v.R[2] + v.t[2]
        trunc = float(2.0 * np.percentile(z[z > 0], 95))
        ext = np.eye(4)
        ext[:3, :3], ext[:3, 3] = v.R, v.t
        dt = o3d.t.geometry.Image(o3c.Tensor(np.ascontiguousarray(depth, dtype=np.float32)))
        ct = o3d.t.geometry.Image(o3c.Tensor(np.ascontiguousarray(colour)))
        kt, et = o3c.Tensor(v.K, o3c.float64), o3c.Tensor(ext, o3c.float64)
        blocks = vbg.compute_unique_block_coordinates(dt, kt, et, 1.0, trunc, cfg.trunc_voxels)
        vbg.integrate(blocks, dt, ct, kt, kt, et, 1.0, trunc, cfg.trunc_voxels)
    pcd = vbg.extract_point_cloud(cfg.min_weight)
    if "positions" not in pcd.point or len(pcd.point.positions) == 0:
        raise StageError("dense: the fused volume is empty (no consistent depth)")
    points = pcd.point.positions.numpy().astype(np.float64)
    colors = np.clip(pcd.point.colors.numpy().astype(np.float64), 0, 1)
    normals = pcd.point.normals.numpy().astype(np.float64)
    order = np.lexsort(
        points.T[::-1]
    )  # the voxel hash map's order depends on threading: make it deterministic
    points, colors, normals = points[order], colors[order], normals[order]
    # Sensor origin per point: of the cameras whose depth map holds the point (it saw it: the ray to the camera
    # is free), the one that sees it most frontally (outward normal towards the camera). A camera on the far side
    # of the object would "see" the point through the object, and the free space carved along that ray would
    # tunnel through the solid. Points no depth map holds fall back to the most frontal camera in front of them.
    names = sorted(views)
    centres = np.array([views[n].centre for n in names])
    best = np.zeros(len(points), dtype=int)
    best_score = np.full(len(points), -np.inf)
    seen_score = np.full(len(points), -np.inf)
    seen_best = np.full(len(points), -1)
    for k, n in enumerate(names):
        ray = centres[k][None] - points
        score = np.sum(ray * normals, 1) / np.linalg.norm(ray, axis=1)
        better = score > best_score
        best[better], best_score[better] = k, score[better]
        if n in merged:
            saw = _in_depth_map(views[n], merged[n], points, 3.0 * voxel)
            better = saw & (score > seen_score)
            seen_best[better], seen_score[better] = k, score[better]
    best = np.where(seen_best >= 0, seen_best, best)
    if timings is not None:
        timings["dense_stereo"] = t1 - t0
        timings["dense_fusion"] = time.perf_counter() - t1
    log.info(
        "dense: %d pairs, %d depth maps, voxel %.4f m, %d points", len(pairs), len(depths), voxel, len(points)
    )
    return PointCloud(points, colors=colors, sensor_origin=centres[best], source=str(sfm.image_dir))


def dense_points_cuda(sfm: SfmResult, world_from_sfm: np.ndarray, work_dir: Path | None = None) -> PointCloud:
    """COLMAP PatchMatch stereo + fusion (pycolmap with CUDA): undistort, patch-match, fuse; points in the frame of
    ``world_from_sfm``."""
    import pycolmap

    if not pycolmap.has_cuda:
        raise StageError(CUDA_MISSING)
    rec = sfm.reconstruction
    if rec is None:
        raise StageError("dense (cuda): the SfM result carries no pycolmap reconstruction")
    with tempfile.TemporaryDirectory(prefix="real2sim-mvs-", dir=work_dir) as tmp:
        sparse, dense = Path(tmp) / "sparse", Path(tmp) / "dense"
        sparse.mkdir()
        rec.write(sparse)
        pycolmap.undistort_images(dense, sparse, sfm.image_dir)
        pycolmap.patch_match_stereo(dense)
        fused = pycolmap.stereo_fusion(dense / "fused.ply", dense)
        xyz = np.array([p.xyz for p in fused.points3D.values()], dtype=float).reshape(-1, 3)
        col = np.array([p.color for p in fused.points3D.values()], dtype=float).reshape(-1, 3) / 255.0
    if len(xyz) == 0:
        raise StageError("dense (cuda): stereo fusion produced no points")
    xyz = xyz @ world_from_sfm[:3, :3].T + world_from_sfm[:3, 3]
    return PointCloud(xyz, colors=col, source=str(sfm.image_dir))


def dense_points(
    sfm: SfmResult,
    world_from_sfm: np.ndarray,
    mode: Literal["auto", "cpu", "cuda"] = "auto",
    cfg: MvsCfg = MvsCfg(),
    timings: dict | None = None,
) -> tuple[PointCloud, str]:
    """Dense points by the requested path; returns the cloud and the path used (``cpu`` / ``cuda``)."""
    import pycolmap

    if mode == "cuda" or (mode == "auto" and pycolmap.has_cuda):
        if not pycolmap.has_cuda:
            raise StageError(CUDA_MISSING)
        return dense_points_cuda(sfm, world_from_sfm), "cuda"
    return dense_points_cpu(sfm, world_from_sfm, cfg, timings), "cpu"
