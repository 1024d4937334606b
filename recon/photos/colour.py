"""Photos colour a scan's object meshes (a session with both scans and photos).

The photos' SfM cameras are brought into the scan's scene frame: metric scale from the photo route's marker, known
distance or given scale; the support plane of the photos' dense points (normal toward the cameras) onto z = 0; then
the yaw and shift that best lay the dense points above the support onto the object meshes (a coarse yaw search, each
start refined by ICP). Each mesh vertex then takes the median colour of the photos that see it (in front of the
nearest surface in a coarse depth buffer, facing the camera); vertices no photo sees take the object's median
colour.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial import cKDTree
from trimesh.visual import ColorVisuals

from real2sim.recon.pointcloud.support import fit_support, inside_polygon
from real2sim.scene import Scene

if TYPE_CHECKING:
    from pathlib import Path

    from real2sim.recon.photos.run import PhotosReconCfg
    from real2sim.recon.photos.sfm import SfmResult

log = logging.getLogger(__name__)

YAW_STARTS = 36
"""Yaw starts of the registration search (every 10 degrees)."""
MIN_FIT = 0.5
"""The registration is used only when at least this share of the sparse points above the support lie within
``FIT_DISTANCE`` of the meshes."""
FIT_DISTANCE = 0.01
"""[m]."""
ICP_REACH = 0.1
"""[m]: ICP pairs a point only with a mesh vertex this close."""
ICP_POINTS = 2000
"""Dense points above the support used by the registration (an even random sample)."""
REGISTER_VOXEL = 0.004
"""TSDF voxel [m] of the dense points used only to register (coarser than the photo route's, faster)."""
DEPTH_CELL = 8
"""Depth-buffer cell [px] for the visibility test."""
DEPTH_TOLERANCE = 0.01
"""A vertex is seen when it is at most this far [m] behind the nearest surface in its depth cell."""


@dataclass(frozen=True)
class Registration:
    """``scene_from_photos``: 4x4 rigid map from the metric photo frame; ``fit``: share of the dense points above the
    support within ``FIT_DISTANCE`` of the meshes."""

    scene_from_photos: np.ndarray
    fit: float


def register_to_scene(points: np.ndarray, cameras: np.ndarray, scene: Scene) -> Registration | None:
    """Rigid map from the frame of metric photo ``points`` (dense, with the ``cameras``' centres) to ``scene``'s
    frame, or ``None`` when the points show no support, nothing above it, or no good fit to the meshes."""
    from real2sim.errors import StageError

    if len(points) < 50 or not scene.objects:
        return None
    try:
        fit = fit_support(points, voxel=0.005, distance=0.01, min_fraction=0.2, sensor=cameras.mean(axis=0),
                          up=None, keep_xy=False, seed=0)  # fmt: skip
    except StageError:
        return None
    a = points @ fit.world_from_input[:3, :3].T + fit.world_from_input[:3, 3]
    a = a[inside_polygon(a[:, :2], fit.hull, 0.05) & (a[:, 2] > 0.01) & (a[:, 2] < 1.0)]
    if len(a) < 20:
        return None
    if len(a) > ICP_POINTS:
        a = a[np.random.default_rng(0).choice(len(a), ICP_POINTS, replace=False)]
    b = np.concatenate([o.mesh_in_world().vertices for o in scene.objects])
    tree = cKDTree(b)
    starts = []
    for k in range(YAW_STARTS):  # a few ICP steps from every yaw, then the three best refined
        th = 2 * np.pi * k / YAW_STARTS
        T = np.eye(4)
        T[:2, :2] = [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]
        T[:2, 3] = np.median(b[:, :2], axis=0) - T[:2, :2] @ np.median(a[:, :2], axis=0)
        starts.append(_icp_yaw(a, tree, b, T, iters=8))
    starts.sort(key=lambda st: -st[1])
    T, score = max((_icp_yaw(a, tree, b, T0) for T0, _ in starts[:3]), key=lambda st: st[1])
    return Registration(T @ fit.world_from_input, score) if score >= MIN_FIT else None


def _icp_yaw(
    a: np.ndarray, tree: cKDTree, b: np.ndarray, T: np.ndarray, iters: int = 30
) -> tuple[np.ndarray, float]:
    """ICP over yaw and x/y shift (z fixed: both clouds stand on z = 0); the share of ``a`` within FIT_DISTANCE."""
    for _ in range(iters):
        p = a @ T[:3, :3].T + T[:3, 3]
        d, j = tree.query(p, distance_upper_bound=ICP_REACH)  # far points: no neighbour (and a fast query)
        near = np.isfinite(d)
        if near.sum() < 3:
            break
        keep = near & (d <= max(3.0 * float(np.median(d[near])), 2 * FIT_DISTANCE))
        if keep.sum() < 3:
            break
        src, dst = p[keep, :2], b[j[keep], :2]
        cs, cd = src.mean(axis=0), dst.mean(axis=0)
        u, _, vt = np.linalg.svd((src - cs).T @ (dst - cd))
        R = (u @ vt).T
        if np.linalg.det(R) < 0:
            vt[-1] *= -1
            R = (u @ vt).T
        step = np.eye(4)
        step[:2, :2] = R
        step[:2, 3] = cd - R @ cs
        T = step @ T
    d, _ = tree.query(a @ T[:3, :3].T + T[:3, 3], distance_upper_bound=FIT_DISTANCE)
    return T, float(np.mean(np.isfinite(d)))


def colour_from_photos(scene: Scene, sfm: SfmResult, scale: float, reg: Registration) -> Scene:
    """``scene`` with each object's mesh coloured from the registered photos (geometry unchanged)."""
    import cv2

    from real2sim.recon.photos.sfm import read_image

    meshes = [o.mesh_in_world() for o in scene.objects]
    v = np.concatenate([m.vertices for m in meshes])
    n = np.concatenate([m.vertex_normals for m in meshes])
    sfm_from_scene = np.linalg.inv(reg.scene_from_photos @ np.diag([scale, scale, scale, 1.0]))
    samples = []
    for name in sfm.registered:
        cam_from_scene = sfm.cam_from_world[name] @ sfm_from_scene
        cam_from_scene[:3, :] *= scale  # back to metres: cam_from_world maps SfM units
        R, t = cam_from_scene[:3, :3], cam_from_scene[:3, 3]
        intr = sfm.intrinsics[name]
        xc = v @ R.T + t
        z = xc[:, 2]
        uv, _ = cv2.projectPoints(v.reshape(-1, 1, 3), cv2.Rodrigues(R)[0], t, intr.K, intr.dist_coeffs)
        uv = uv.reshape(-1, 2)
        ok = (z > 1e-3) & np.all(np.isfinite(uv), axis=1)
        ok &= (uv[:, 0] >= 0) & (uv[:, 0] <= intr.width - 1) & (uv[:, 1] >= 0) & (uv[:, 1] <= intr.height - 1)
        centre = -R.T @ t
        ok &= np.einsum("ij,ij->i", n, centre - v) > 0
        cells = (np.floor(uv[ok] / DEPTH_CELL)).astype(np.int64)
        gw = intr.width // DEPTH_CELL + 1
        flat = cells[:, 1] * gw + cells[:, 0]
        zbuf = np.full((intr.height // DEPTH_CELL + 1) * gw, np.inf)
        np.minimum.at(zbuf, flat, z[ok])
        seen = np.flatnonzero(ok)[z[ok] <= zbuf[flat] + DEPTH_TOLERANCE]
        img = read_image(sfm.image_dir / name)  # the stored pixels, as SfM saw them (no EXIF rotation)
        if img is None or len(seen) == 0:
            continue
        px = np.rint(uv[seen]).astype(np.int64)
        rgb = img[px[:, 1], px[:, 0], ::-1].astype(np.float64) / 255.0
        col = np.full((len(v), 3), np.nan)
        col[seen] = rgb
        samples.append(col)
    if not samples:
        return scene
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: vertices no photo sees
        colour = np.nanmedian(np.stack(samples), axis=0)
    objects, start = [], 0
    for o, m in zip(scene.objects, meshes, strict=True):
        c = colour[start : start + len(m.vertices)]
        start += len(m.vertices)
        seen = np.all(np.isfinite(c), axis=1)
        if not seen.any():
            objects.append(o)
            continue
        med = np.median(c[seen], axis=0)
        c[~seen] = med  # the unseen side (underside, hidden faces): the object's median colour
        c8 = np.clip(np.round(c * 255), 0, 255).astype(np.uint8)
        mesh = o.mesh.copy()
        mesh.visual = ColorVisuals(mesh, vertex_colors=np.hstack([c8, np.full((len(c8), 1), 255, np.uint8)]))
        objects.append(replace(o, mesh=mesh, rgba=(*(round(float(x), 4) for x in med), 1.0)))
    prov = replace(scene.provenance, steps=(*scene.provenance.steps, "photo colours"))
    return replace(scene, objects=tuple(objects), provenance=prov)


def colour_scene_with_photos(scene: Scene, cfg: PhotosReconCfg) -> Scene:
    """Run SfM on ``cfg.image_dir`` (a ``PhotosReconCfg``), register the photos to ``scene`` and colour its meshes;
    ``scene`` unchanged, with a warning saying why, when the photos cannot be placed."""
    from real2sim.recon.photos.mvs import dense_points
    from real2sim.recon.photos.run import metric_scale
    from real2sim.recon.photos.sfm import run_sfm

    sfm = run_sfm(cfg.image_dir, cfg.sfm)
    scale, _ = metric_scale(sfm, cfg)
    if scale is None:
        log.warning("photos not used to colour the scans: no metric scale (marker, known distance or scale)")
        return scene
    mvs = replace(cfg.mvs, voxel=cfg.mvs.voxel or REGISTER_VOXEL)
    cloud, _ = dense_points(sfm, np.diag([scale, scale, scale, 1.0]), cfg.dense, mvs, sfm.timings)
    cams = np.array([-m[:3, :3].T @ m[:3, 3] for m in sfm.cam_from_world.values()]) * scale
    reg = register_to_scene(cloud.points, cams, scene)
    if reg is None:
        log.warning("photos not used to colour the scans: their dense points did not register to the meshes")
        return scene
    log.info("photos registered to the scans: %.0f%% of the dense points on the meshes", 100 * reg.fit)
    return colour_from_photos(scene, sfm, scale, reg)


def rewrite_scene(scene_dir: Path, scene: Scene) -> None:
    """Replace ``scene.json`` and ``meshes/`` of a written scene folder atomically, keeping its other files."""
    import shutil
    from pathlib import Path

    from real2sim.atomic import output_dir
    from real2sim.scene import write_scene_into

    scene_dir = Path(scene_dir)
    with output_dir(scene_dir) as tmp:
        for p in scene_dir.iterdir():
            if p.is_file() and p.name != "scene.json":
                shutil.copy2(p, tmp / p.name)
        write_scene_into(scene, tmp)
