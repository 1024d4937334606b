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
from pathlib import Path
from typing import Literal

import numpy as np

from real2sim.errors import StageError
from real2sim.progress import progress
from real2sim.recon.io import PointCloud
from real2sim.recon.photos.config import MvsCfg
from real2sim.recon.photos.sfm import SfmResult, read_image
from real2sim.recon.photos.stereo import depth_from_pair, in_depth_map, stereo_pairs, views_of

log = logging.getLogger(__name__)

CUDA_MISSING = "dense 'cuda' needs pycolmap built with CUDA (PatchMatch stereo); this pycolmap is CPU-only: use --dense cpu"


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
    views = views_of(sfm, world_from_sfm, cfg.max_image_size)
    pairs = stereo_pairs(sfm, views, world_from_sfm, cfg)
    if not pairs:
        raise StageError("dense: no pair of registered views with enough shared points at a usable angle")
    pts = sfm.points @ world_from_sfm[:3, :3].T + world_from_sfm[:3, 3]
    sets = {n: sfm.observations[n][:, 2].astype(int) for n in views}
    depths: dict[str, list[np.ndarray]] = {}
    images: dict[str, np.ndarray] = {}

    def load(n: str) -> np.ndarray:
        if n not in images:
            img = read_image(sfm.image_dir / n)
            if img is None:
                raise StageError(f"dense: cannot read {sfm.image_dir / n}")
            size = views[n].size
            if img.shape[1::-1] != size:
                img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
            images[n] = img
        return images[n]

    with progress("dense stereo pairs", total=len(pairs)) as bar:
        for a, b in pairs:
            shared = np.intersect1d(sets[a], sets[b])
            for n, depth in depth_from_pair(views[a], views[b], load(a), load(b), pts[shared], cfg):
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
        attr_channels=((1), (1), (3)), voxel_size=voxel, block_resolution=16, block_count=40000, device=dev,  # pyright: ignore[reportArgumentType]
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
        # open3d's generated stubs make Tensor's dtype and device required (they default to the array's dtype and
        # the CPU) and want SizeVectors for attr_channels above (plain ints work)
        dt = o3d.t.geometry.Image(o3c.Tensor(np.ascontiguousarray(depth, dtype=np.float32)))  # pyright: ignore[reportCallIssue]
        ct = o3d.t.geometry.Image(o3c.Tensor(np.ascontiguousarray(colour)))  # pyright: ignore[reportCallIssue]
        kt, et = o3c.Tensor(v.K, o3c.float64), o3c.Tensor(ext, o3c.float64)  # pyright: ignore[reportCallIssue]
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
            saw = in_depth_map(views[n], merged[n], points, 3.0 * voxel)
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
