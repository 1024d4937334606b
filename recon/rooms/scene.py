"""``room_to_scene``: a room scan to a ``Scene``: the floor as support, walls and large furniture as static boxes,
the movable things standing on the floor as dynamic, meshed objects.

Scene frame: z up (the floor normal), the floor at z = 0, x along the largest wall's normal (walls axis-aligned),
origin at the centre of the seen floor; with ``keep_xy`` (scan poses given) the input frame re-levelled with the
smallest rotation and shifted only along z. Static boxes are gravity-aligned: a wall is a slab of
``WALL_THICKNESS`` behind its surface from the floor to its top; furniture is the box around its points from the
floor (or from its own underside when it does not reach the floor) to its top, turned to its footprint's principal
axes.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import trimesh

from real2sim.recon.io import PointCloud
from real2sim.recon.meshing.mesh import mesh_object
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.objects import (
    ReconOutput,
    estimate_normals,
    object_colour,
    paint,
    place_object,
    plane_scene,
    short_name,
    yaw_frame,
)
from real2sim.recon.pointcloud.support import largest_patch, rotation_between, voxel_downsample
from real2sim.recon.rooms.planes import (
    ROOM_PLANE_DISTANCE,
    ROOM_VOXEL,
    SURFACE_DEPTH,
    Plane,
    RoomFit,
    detect_room,
)
from real2sim.recon.segmentation.segment import euclidean_clusters
from real2sim.rounding import round_frame
from real2sim.scene import SceneObject
from real2sim.transforms import apply_transform, times_matrix

WALL_THICKNESS = 0.1
"""Thickness [m] of a wall's static box, behind its seen surface."""
FLOOR_BAND = 0.1
"""Points up to this high [m] above the floor are floor (depth noise of a far floor), not things on it."""
FLOOR_CONTACT = 0.15
"""A cluster whose lowest point is this close [m] to the floor stands on it."""
WALL_BAND = SURFACE_DEPTH / 2
"""Points this close [m] to a wall's surface are the wall (frames, switches, posters, depth steps)."""
STATIC_MIN_SIZE = 0.1
"""Clusters off the floor smaller than this [m] (largest extent) are dropped as clutter."""
INSIDE_STATIC = 0.05
"""A movable thing with more than this share of its points inside a static box is static itself."""
CLUSTER_TOLERANCE = 2.0 * ROOM_VOXEL
"""Cells of the room grid closer than this [m] belong to the same thing."""


def room_to_scene(
    cloud: PointCloud,
    cfg: PointCloudReconCfg,
    *,
    name: str,
    vidx: np.ndarray,
    pts: np.ndarray,
    sensor: np.ndarray | None,
    up: np.ndarray | None,
    keep_xy: bool,
) -> ReconOutput | None:
    """The room scene of the valid points ``pts`` (rows ``vidx`` of ``cloud``; ``sensor``: their mean sensor origin),
    or None when they show no room."""
    fit, _ = detect_room(pts, sensor, up, cfg.seed)
    if fit is None:
        return None
    # the fit's last bits depend on the CPU's BLAS/LAPACK kernel: rounded, the scene frame is the same everywhere
    T = round_frame(room_frame(pts, fit, keep_xy))
    w = apply_transform(T, pts)
    lab = np.full(len(pts), -1, dtype=np.int32)
    floor = np.abs(w[:, 2]) < ROOM_PLANE_DISTANCE
    lab[floor] = 0
    patch = largest_patch(w[floor, :2], 2 * ROOM_VOXEL)
    fxy = w[floor][patch, :2]
    lo, hi = fxy.min(axis=0), fxy.max(axis=0)
    walls: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (world_from_object, extents, point mask)
    free = w[:, 2] > FLOOR_BAND
    for p in fit.walls:
        box, on_wall, behind = wall_box(w, _plane_in(p, T))
        free &= ~behind & ~on_wall
        if box is not None:
            walls.append((*box, on_wall & (lab < 0)))
    w_sensor = None if sensor is None else T[:3, :3] @ sensor + T[:3, 3]
    movable, static = _things(w, np.flatnonzero(free), cfg)
    boxes = [b[:2] for b in walls] + [_furniture_box(w[sel]) for sel in static]
    objects: list[SceneObject] = []
    # A movable thing inside a static box (under a desk, in a wall's slab) would be thrown out: it stays static.
    for sel in movable:
        obj = None
        if not any(_inside_box(w[sel], *b).mean() > INSIDE_STATIC for b in boxes):
            obj = _dynamic_object(cloud, cfg, w, vidx, sel, w_sensor, f"object_{len(objects) + 1}", name)
        if obj is None:
            static.append(sel)
            continue
        objects.append(obj)
        lab[sel] = len(objects)
    statics = [(f"wall_{i + 1}", *b) for i, b in enumerate(walls)]
    statics += [
        (f"furniture_{i + 1}", *_furniture_box(w[sel]), _mask(len(w), sel)) for i, sel in enumerate(static)
    ]
    for nm, pose, ext, mask in statics:
        objects.append(_static_object(nm, pose, ext, cfg, short_name(name)))
        lab[mask & (lab < 0)] = len(objects)
    labels = np.full(len(cloud), -1, dtype=np.int32)
    labels[vidx] = lab
    return plane_scene(objects, lo, hi, name, T, labels)


def room_frame(pts: np.ndarray, fit: RoomFit, keep_xy: bool) -> np.ndarray:
    """4x4 scene-from-input: z along the floor normal, floor at z = 0 (see the module docstring)."""
    n = fit.floor.normal
    R = rotation_between(n, np.array([0.0, 0.0, 1.0]))
    if not keep_xy:
        wall = max(fit.walls, key=lambda p: p.count).normal
        h = R @ wall
        yaw = -np.arctan2(h[1], h[0])  # the largest wall's normal along +x
        c, s = np.cos(yaw), np.sin(yaw)
        R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ R
    near = np.abs(pts @ n + fit.floor.offset) < ROOM_PLANE_DISTANCE
    on = pts[near] @ R.T
    keep = largest_patch(on[:, :2], 2 * ROOM_VOXEL)
    t = np.array([0.0, 0.0, -float(np.median(on[keep, 2]))])
    if not keep_xy:
        t[:2] = -0.5 * (on[keep, :2].min(axis=0) + on[keep, :2].max(axis=0))
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def _plane_in(p: Plane, T: np.ndarray) -> Plane:
    n = T[:3, :3] @ p.normal
    return Plane(n, p.offset - float(np.dot(n, T[:3, 3])), p.count)


def wall_box(w: np.ndarray, p: Plane) -> tuple[tuple[np.ndarray, np.ndarray] | None, np.ndarray, np.ndarray]:
    """A wall's static box ``(world_from_object, extents)`` (None when too small), the mask of its points and the
    mask of the points behind it (seen through a door or window)."""
    nh = p.normal * np.array([1.0, 1.0, 0.0])
    nh = round_frame(nh / np.linalg.norm(nh))
    near = np.abs(p.distance(w)) < WALL_BAND
    across = times_matrix(w, nh)
    a = float(np.median(across[near]))
    th = np.cross([0.0, 0.0, 1.0], nh)
    s = times_matrix(w, th)
    on = np.flatnonzero(np.abs(across - a) < WALL_BAND)
    keep = on[largest_patch(np.stack([s[on], w[on, 2]], axis=1), 2 * ROOM_VOXEL)]
    s0, s1 = float(s[keep].min()), float(s[keep].max())
    top = float(np.percentile(w[keep, 2], 99))
    on_wall = np.zeros(len(w), dtype=bool)
    on_wall[on] = (s[on] >= s0) & (s[on] <= s1)
    behind = (across < a - WALL_BAND) & (s >= s0) & (s <= s1)
    if min(s1 - s0, top) < STATIC_MIN_SIZE:
        return None, on_wall, behind
    pose = np.eye(4)
    pose[:3, :3] = np.stack([nh, th, [0.0, 0.0, 1.0]], axis=1)
    pose[:3, 3] = (a - WALL_THICKNESS / 2) * nh + 0.5 * (s0 + s1) * th
    return (pose, np.array([WALL_THICKNESS, s1 - s0, top])), on_wall, behind


def _things(
    w: np.ndarray, idx: np.ndarray, cfg: PointCloudReconCfg
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Clusters of the points ``idx`` that are neither floor nor wall: (movable ones standing on the floor, large or
    raised ones), each as indices into ``w``."""
    if len(idx) == 0:
        return [], []
    ds, inv = voxel_downsample(w[idx], ROOM_VOXEL)
    lab = euclidean_clusters(ds, CLUSTER_TOLERANCE)[inv]
    order = np.argsort(lab, kind="stable")
    bounds = np.flatnonzero(np.diff(lab[order])) + 1
    dynamic, static = [], []
    for grp in np.split(order, bounds):
        sel = idx[grp]
        p = w[sel]
        z0, z1 = np.percentile(p[:, 2], [1, 99])
        xy = times_matrix(p[:, :2], yaw_frame(p[:, :2])) if len(p) > 2 else p[:, :2]
        size = max(float(np.ptp(xy[:, 0])), float(np.ptp(xy[:, 1])), z1 - max(z0, 0.0))
        n_cells = len(np.unique(inv[grp]))
        if n_cells < 3 or size < STATIC_MIN_SIZE or len(sel) < cfg.min_object_points:
            continue
        movable = z0 < FLOOR_CONTACT and z1 <= cfg.max_height and size <= cfg.max_object_size
        if movable and size >= cfg.min_object_size and len(sel) >= cfg.min_object_points:
            dynamic.append(sel)
        elif not movable:
            static.append(sel)
    return dynamic, static


def _furniture_box(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gravity-aligned box around points ``p`` (footprint principal axes), down to the floor when it reaches it."""
    R2 = yaw_frame(p[:, :2])
    xy = times_matrix(p[:, :2], R2)
    lo, hi = np.percentile(xy, 1, axis=0), np.percentile(xy, 99, axis=0)
    z0 = float(p[:, 2].min())
    z0 = 0.0 if z0 < FLOOR_CONTACT else z0
    z1 = float(np.percentile(p[:, 2], 99))
    pose = np.eye(4)
    pose[:2, :2] = R2
    pose[:2, 3] = times_matrix(0.5 * (lo + hi), R2.T)
    pose[2, 3] = z0
    return pose, np.array([hi[0] - lo[0], hi[1] - lo[1], max(z1 - z0, ROOM_VOXEL)])


def _inside_box(p: np.ndarray, pose: np.ndarray, ext: np.ndarray) -> np.ndarray:
    """Mask of the points ``p`` more than ``ROOM_VOXEL`` inside the box ``ext`` standing on ``pose``'s origin."""
    q = (p - pose[:3, 3]) @ pose[:3, :3]
    q[:, 2] -= ext[2] / 2
    return np.all(np.abs(q) < ext / 2 - ROOM_VOXEL, axis=1)


def _mask(n: int, sel: np.ndarray) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[sel] = True
    return m


def _static_object(
    name: str, pose: np.ndarray, ext: np.ndarray, cfg: PointCloudReconCfg, src: str
) -> SceneObject:
    """A static box ``ext`` (x, y, z) standing on its frame's origin."""
    box = trimesh.creation.box(extents=ext)
    box.apply_translation([0.0, 0.0, ext[2] / 2])
    return SceneObject(name=name, mesh=box, world_from_object=pose, role="static", density=cfg.density,
                       friction=cast("tuple[float, float, float]", tuple(cfg.friction)), source=f"{src}#{name}")  # fmt: skip


def _dynamic_object(
    cloud: PointCloud,
    cfg: PointCloudReconCfg,
    w: np.ndarray,
    vidx: np.ndarray,
    sel: np.ndarray,
    w_sensor: np.ndarray | None,
    name: str,
    source: str,
) -> SceneObject | None:
    """A movable thing standing on the floor, meshed and closed against it as on a tabletop (None when its mesh
    does not reach the floor)."""
    obj_pts = w[sel]
    mpts, _ = voxel_downsample(obj_pts, cfg.mesh_voxel)
    view = w_sensor if w_sensor is not None else np.array([*mpts[:, :2].mean(axis=0), mpts[:, 2].max() + 1.0])
    nrm = estimate_normals(mpts, cfg.normal_radius, view)
    mesh_w = mesh_object(mpts, nrm, 0.0, cfg)
    if mesh_w.bounds[0, 2] > cfg.plane_distance:  # closed above the floor: it does not stand on it
        return None
    colors = None if cloud.colors is None else cloud.colors[vidx[sel]]
    paint(mesh_w, obj_pts, colors)
    mesh_o, pose = place_object(mesh_w, 0.0)
    return SceneObject(name=name, mesh=mesh_o, world_from_object=pose, density=cfg.density,
                       friction=cast("tuple[float, float, float]", tuple(cfg.friction)), rgba=object_colour(colors),
                       source=f"{short_name(source)}#{name}")  # fmt: skip
