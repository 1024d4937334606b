"""``points_to_scene``: one point cloud (already in one frame) to a segmented, gravity-aligned ``Scene``.

Stages: validity and unit check → support plane and scene frame (``pointcloud/support.py``) → crop to the support → voxel
downsampling and outlier removal → clustering above the plane (``segmentation/segment.py``) → per-object normals oriented to the
sensor → watertight meshes closed against the support (``meshing/mesh.py``).

Object frame: origin at the centre of the object's footprint on the support (z = 0 of the scene), x/y along the
footprint's principal axes, z up; ``world_from_object`` places it.
With ``object_only`` there is no support: the scene frame is the input frame shifted so that the object's lowest
point is at z = 0 and its bounding-box centre at x = y = 0, and the support is the plane z = 0 under it.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from scipy.spatial import cKDTree

from real2sim.errors import InputError
from real2sim.executor import thread_budget
from real2sim.provenance import Provenance
from real2sim.recon.io import PointCloud
from real2sim.recon.meshing.carve import FreeSpace
from real2sim.recon.meshing.mesh import mesh_object
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.empty_scene import no_objects_reason, warn_no_objects
from real2sim.recon.pointcloud.objects import (
    ReconOutput,
    estimate_normals,
    object_colour,
    paint,
    place_object,
    plane_scene,
    short_name,
)
from real2sim.recon.pointcloud.support import (
    SupportFit,
    fit_support,
    inside_polygon,
    voxel_downsample,
    voxel_mean,
)
from real2sim.recon.pointcloud.viewpoint import settle_frame
from real2sim.recon.segmentation.candidates import object_candidates
from real2sim.recon.segmentation.segment import segment_objects
from real2sim.rounding import round_frame
from real2sim.scene import Scene, SceneObject, Support
from real2sim.transforms import apply_transform


def check_extent(points: np.ndarray, cfg: PointCloudReconCfg, name: str) -> None:
    """Reject clouds whose size says the units are wrong."""
    p1, p99 = np.percentile(points, [1, 99], axis=0)
    ext = float(np.linalg.norm(p99 - p1))
    if not 1e-12 < ext < 1e9:  # no unit makes a scan this big or small: the numbers themselves are misread
        raise InputError(name, f"the cloud spans {ext:.4g} m: these are not coordinates in any unit; is the file's "
                               "byte order (endianness) or number type wrong?")  # fmt: skip
    if ext > cfg.max_extent:
        raise InputError(name, f"the cloud spans {ext:.4g} m, implausible for units={cfg.units!r}; "
                               "are the coordinates in mm or cm (--units)?")  # fmt: skip
    if ext < cfg.min_extent:
        raise InputError(name, f"the cloud spans only {ext:.3g} m with units={cfg.units!r}; "
                               "are the coordinates in a larger unit (--units)?")  # fmt: skip


def remove_outliers(points: np.ndarray, k: int, std: float) -> np.ndarray:
    """Mask of the points kept by statistical outlier removal (mean distance to ``k`` neighbours)."""
    if k <= 0 or len(points) <= k:
        return np.ones(len(points), dtype=bool)
    d, _ = cKDTree(points).query(points, k=k + 1, workers=thread_budget())
    m = d[:, 1:].mean(axis=1)
    return m <= m.mean() + std * m.std()


def points_to_scene(
    cloud: PointCloud,
    cfg: PointCloudReconCfg,
    *,
    object_only: bool = False,
    input_name: str = "",
    up: np.ndarray | None = None,
    keep_xy: bool = False,
    timings: dict[str, float] | None = None,
) -> ReconOutput:
    """Reconstruct a scene from one cloud. ``up``: the gravity-up direction in the cloud's frame when known (scan
    poses given); ``keep_xy``: keep the input x/y axes and origin (only re-level and shift in z). ``timings``, when
    given, receives seconds per stage (``support``, ``segment``, ``mesh``).

    BLAS runs single-threaded here: every product is tall and thin (N x 3 points times a 3 x 3 frame), where a
    second BLAS thread costs more than it gains, and far more on a busy machine, where its threads spin waiting
    for a core (docs/speed.md)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _points_to_scene(cloud, cfg, object_only, input_name, up, keep_xy, timings)


def _points_to_scene(
    cloud: PointCloud,
    cfg: PointCloudReconCfg,
    object_only: bool,
    input_name: str,
    up: np.ndarray | None,
    keep_xy: bool,
    timings: dict[str, float] | None,
) -> ReconOutput:
    clock = _Clock(timings)
    name = input_name or cloud.source or "point cloud"
    valid = cloud.valid_mask()
    if not valid.any():
        raise InputError(name, "no valid points (all NaN)")
    vidx = np.flatnonzero(valid)
    pts = cloud.points[vidx]
    check_extent(pts, cfg, name)
    origins = cloud.origins()
    origins = None if origins is None else np.asarray(origins)[vidx]
    labels = np.full(len(cloud), -1, dtype=np.int32)
    if object_only:
        return _object_only(cloud, cfg, name, vidx, pts, origins, labels)
    from real2sim.recon.rooms.scene import room_to_scene

    sensor_mean = None if origins is None else origins.mean(axis=0)
    # A room scan (floor, walls, furniture) takes its own route (rooms/scene.py).
    room = room_to_scene(
        cloud, cfg, name=name, vidx=vidx, pts=pts, sensor=sensor_mean, up=up, keep_xy=keep_xy
    )
    if room is not None:
        return room

    def fit_up(up_dir: np.ndarray | None) -> SupportFit:
        return fit_support(
            pts, voxel=cfg.voxel, distance=cfg.plane_distance, min_fraction=cfg.plane_min_fraction,
            sensor=sensor_mean, up=up_dir, keep_xy=keep_xy, seed=cfg.seed, source=name,
        )  # fmt: skip

    # origins that cannot be the sensors' are dropped; then the occlusion side, not a made-up origin, says up
    fit, origins = settle_frame(pts, origins, fit_up(up), cfg, name, fit_up if up is None else None)
    clock("support")
    # the fit's last bits depend on the CPU's BLAS/LAPACK kernel: rounded, the scene frame is the same everywhere
    T = round_frame(fit.world_from_input)
    hull = np.round(fit.hull, 9) + 0.0  # [m]; which points fall inside decides the voxel grid's anchor
    w = apply_transform(T, pts)
    w_orig = None if origins is None else apply_transform(T, origins)
    inside = inside_polygon(w[:, :2], hull, cfg.crop_margin)
    z = w[:, 2]
    support_mask = inside & (np.abs(z) < cfg.plane_distance)
    cand = object_candidates(w, hull, inside, cfg)

    objects: list[SceneObject] = []
    lab_valid = np.full(len(pts), -1, dtype=np.int32)
    lab_valid[support_mask] = 0
    if len(cand):
        ds, inv = voxel_downsample(w[cand], cfg.voxel)
        keep = remove_outliers(ds, cfg.outlier_neighbors, cfg.outlier_std)
        ds_col = None
        if cloud.colors is not None:
            ds_col = voxel_mean(cloud.colors[vidx][cand], inv, len(ds))
        ds_lab = np.full(len(ds), -1, dtype=np.int64)
        kidx = np.flatnonzero(keep)
        ds_nrm = None
        if cfg.concave_split is not None and len(kidx) >= 3:
            if w_orig is not None:  # settle_frame kept them: every origin above the support
                ds_o = voxel_mean(w_orig[cand], inv, len(ds))[kidx]
                ds_nrm = estimate_normals(ds[kidx], 2.5 * cfg.voxel, ds_o)  # small footprint: narrow creases
        ds_lab[kidx] = segment_objects(
            ds[kidx], None if ds_col is None else ds_col[kidx], tolerance=cfg.cluster_tolerance,
            min_points=cfg.min_object_points, min_size=cfg.min_object_size, max_size=cfg.max_object_size,
            colour_split=cfg.colour_split, normals=ds_nrm, concave_angle=cfg.concave_split,
            support_band=cfg.min_height + cfg.voxel, origins=None if ds_nrm is None else ds_o,
        )  # fmt: skip
        cand_lab = ds_lab[inv]
        lab_valid[cand] = np.where(cand_lab >= 0, cand_lab + 1, -1)
        n_obj = int(ds_lab.max()) + 1
        cand, cand_lab = add_low_object_points(w, inside, support_mask, lab_valid, cand, cand_lab, n_obj, cfg)
        clock("segment")
        free_space = None if w_orig is None else FreeSpace.from_rays(w, w_orig, support_mask)

        def one(k: int) -> SceneObject:
            sel = cand[cand_lab == k]
            obj_pts = w[sel]
            colors = None if cloud.colors is None else cloud.colors[vidx[sel]]
            mpts, minv = voxel_downsample(obj_pts, cfg.mesh_voxel)
            if w_orig is None:  # no usable origins: orient away from the object's inside, consistently
                nrm = _outward_normals(mpts, cfg.normal_radius)
            else:
                o = voxel_mean(w_orig[sel], minv, len(mpts))
                nrm = estimate_normals(mpts, cfg.normal_radius, o)
            mesh_w = mesh_object(mpts, nrm, 0.0, cfg, free_space=free_space)
            paint(mesh_w, obj_pts, colors)
            mesh_o, world_from_object = place_object(mesh_w, 0.0)
            return SceneObject(
                name=f"object_{k + 1}",
                mesh=mesh_o,
                world_from_object=world_from_object,
                density=cfg.density,
                friction=cast("tuple[float, float, float]", tuple(cfg.friction)),
                rgba=object_colour(colors),
                source=f"{short_name(name)}#cluster{k + 1}",
            )

        workers = min(thread_budget(), n_obj)
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                objects = list(pool.map(one, range(n_obj)))
        else:
            objects = [one(k) for k in range(n_obj)]
    clock("mesh")
    if not objects:
        warn_no_objects(name, no_objects_reason(w, inside, ds[kidx] if len(cand) else w[:0], cfg))
    labels[vidx] = lab_valid
    return plane_scene(objects, hull.min(axis=0), hull.max(axis=0), name, T, labels)


LOW_POINT_SIGMAS = 4.0
"""A point below ``min_height`` is off the support (part of an object: a cavity floor, a low rim) when it is this
many standard deviations of the support's own range noise above the plane and inside an object's footprint."""


def add_low_object_points(
    w: np.ndarray,
    inside: np.ndarray,
    support_mask: np.ndarray,
    lab_valid: np.ndarray,
    cand: np.ndarray,
    cand_lab: np.ndarray,
    n_obj: int,
    cfg: PointCloudReconCfg,
) -> tuple[np.ndarray, np.ndarray]:
    """Give each object the points under ``min_height`` that lie clearly above the support (beyond its measured
    noise) within the object's 2D convex footprint, e.g. the floor of a mug's cavity seen from above; they are
    relabelled from support (in place: ``lab_valid``, ``support_mask``) and appended to ``cand``/``cand_lab``."""
    from scipy.spatial import ConvexHull, QhullError

    z = w[:, 2]
    sup_z = z[support_mask]
    if n_obj == 0 or len(sup_z) < 100:
        return cand, cand_lab
    sigma = 1.4826 * float(np.median(np.abs(sup_z - np.median(sup_z))))
    low = np.flatnonzero(inside & (z > LOW_POINT_SIGMAS * sigma) & (z < cfg.min_height) & (lab_valid <= 0))
    if len(low) == 0:
        return cand, cand_lab
    add_idx, add_lab = [], []
    taken = np.zeros(len(low), dtype=bool)
    for k in range(n_obj):
        xy = w[cand[cand_lab == k], :2]
        try:
            hull = xy[ConvexHull(xy).vertices]
        except (QhullError, ValueError):
            continue
        m = ~taken & inside_polygon(w[low, :2], hull)
        taken |= m
        add_idx.append(low[m])
        add_lab.append(np.full(int(m.sum()), k, dtype=cand_lab.dtype))
    if not taken.any():
        return cand, cand_lab
    extra = np.concatenate(add_idx)
    extra_lab = np.concatenate(add_lab)
    lab_valid[extra] = extra_lab + 1
    support_mask[extra] = False
    return np.concatenate([cand, extra]), np.concatenate([cand_lab, extra_lab])


class _Clock:
    def __init__(self, sink: dict[str, float] | None):
        import time

        self._time = time.perf_counter
        self.sink = sink
        self.t = self._time()

    def __call__(self, name: str) -> None:
        now = self._time()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now


def _object_only(
    cloud: PointCloud,
    cfg: PointCloudReconCfg,
    name: str,
    vidx: np.ndarray,
    pts: np.ndarray,
    origins: np.ndarray | None,
    labels: np.ndarray,
) -> ReconOutput:
    keep = remove_outliers(pts, cfg.outlier_neighbors, cfg.outlier_std)
    kept = pts[keep]
    lo, hi = kept.min(axis=0), kept.max(axis=0)
    T = np.eye(4)
    T[:3, 3] = [-0.5 * (lo[0] + hi[0]), -0.5 * (lo[1] + hi[1]), -lo[2]]
    w = kept + T[:3, 3]
    mpts, minv = voxel_downsample(w, cfg.mesh_voxel)
    use_origins = origins is not None
    if origins is not None:
        o_w = origins[keep] + T[:3, 3]
        # A sensor cannot sit inside the object it scanned: then the origins are not sensor positions.
        inside_box = np.all((o_w >= w.min(axis=0)) & (o_w <= w.max(axis=0)), axis=1)
        use_origins = not inside_box.any()
    if use_origins:
        nrm = estimate_normals(mpts, cfg.normal_radius, voxel_mean(o_w, minv, len(mpts)))
    else:  # no sensor positions: orient away from the centroid, then propagate consistently over the surface
        nrm = _outward_normals(mpts, cfg.normal_radius)
    mesh_w = mesh_object(mpts, nrm, None, cfg)
    colors = None if cloud.colors is None else cloud.colors[vidx[keep]]
    paint(mesh_w, w, colors)
    obj = SceneObject(
        name="object_1",
        mesh=mesh_w,
        world_from_object=np.eye(4),
        density=cfg.density,
        friction=cast("tuple[float, float, float]", tuple(cfg.friction)),
        rgba=object_colour(colors),
        source=f"{short_name(name)}#object",
    )
    lab_valid = np.where(keep, 1, -1).astype(np.int32)
    labels[vidx] = lab_valid
    support = Support("plane", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), None)
    scene = Scene(
        support=support, objects=(obj,), world_from_input={short_name(name): T}, provenance=Provenance()
    )
    return ReconOutput(scene=scene, world_from_input=T, point_labels=labels)


def _outward_normals(points: np.ndarray, radius: float) -> np.ndarray:
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    pc.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=radius, max_nn=30))
    c = points.mean(axis=0)
    n = np.asarray(pc.normals).copy()
    n[np.einsum("ij,ij->i", n, points - c) < 0] *= -1
    pc.normals = o3d.utility.Vector3dVector(n)
    pc.orient_normals_consistent_tangent_plane(12)
    n = np.asarray(pc.normals).copy()
    if np.mean(np.einsum("ij,ij->i", n, points - c) > 0) < 0.5:
        n = -n
    return n
