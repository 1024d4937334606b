"""Synthetic range scans by ray casting (Open3D ``RaycastingScene``): physically consistent test and benchmark
inputs, where every point is the first surface a sensor ray hits (nothing is seen through an object).

Frames: meshes in the world frame (z up); ``cast`` returns points in the SENSOR frame (OpenCV convention: x right,
y down, z forward) with the world-frame ``world_from_sensor`` pose, as a real scan and its SLAM pose would be;
``scan_views`` merges several such scans into one world-frame cloud with per-point sensor origins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from real2sim.recon.io import PointCloud


@dataclass(frozen=True, eq=False)
class Scan:
    """A ray-cast scan: ``points`` (N, 3) in the sensor frame, ``labels`` (N,) the index of the mesh each point
    lies on, ``world_from_sensor`` 4x4."""

    points: np.ndarray
    labels: np.ndarray
    world_from_sensor: np.ndarray


def look_at(
    eye: np.ndarray, target: np.ndarray, up: tuple[float, float, float] = (0.0, 0.0, 1.0)
) -> np.ndarray:
    """``world_from_sensor`` of an OpenCV-convention sensor at ``eye`` looking at ``target``."""
    z = np.asarray(target, dtype=np.float64) - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, dtype=np.float64))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    T = np.eye(4)
    T[:3, :3] = np.stack([x, y, z], axis=1)
    T[:3, 3] = eye
    return T


def box(extents: tuple[float, float, float], centre_xy: tuple[float, float], z0: float = 0.0,
        yaw: float = 0.0) -> trimesh.Trimesh:  # fmt: skip
    """A box resting with its bottom at ``z0``, centred at ``centre_xy``, rotated by ``yaw`` [rad] about z."""
    m = trimesh.creation.box(extents=extents)
    m.apply_translation([0.0, 0.0, extents[2] / 2])
    m.apply_transform(trimesh.transformations.rotation_matrix(yaw, [0, 0, 1]))
    m.apply_translation([centre_xy[0], centre_xy[1], z0])
    return m


def cylinder(
    radius: float, height: float, centre_xy: tuple[float, float], z0: float = 0.0
) -> trimesh.Trimesh:
    m = trimesh.creation.cylinder(radius=radius, height=height, sections=64)
    m.apply_translation([centre_xy[0], centre_xy[1], z0 + height / 2])
    return m


def cast(
    meshes: list[trimesh.Trimesh],
    world_from_sensor: np.ndarray,
    *,
    width: int,
    height: int,
    fov_deg: float,
    noise: float = 0.0,
    seed: int = 0,
) -> Scan:
    """Cast a ``width`` x ``height`` pinhole grid (horizontal field of view ``fov_deg``) into ``meshes``; rays that
    hit nothing give no point. ``noise``: Gaussian range noise sigma [m] along each ray (seeded)."""
    import open3d as o3d

    scene = o3d.t.geometry.RaycastingScene()
    for m in meshes:
        scene.add_triangles(
            o3d.core.Tensor(np.asarray(m.vertices, dtype=np.float32)),
            o3d.core.Tensor(np.asarray(m.faces, dtype=np.uint32)),
        )
    f = (width / 2) / np.tan(np.radians(fov_deg) / 2)
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    d = np.stack([(u - width / 2) / f, (v - height / 2) / f, np.ones_like(u)], axis=-1).reshape(-1, 3)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    R, t = world_from_sensor[:3, :3], world_from_sensor[:3, 3]
    dw = d @ R.T
    rays = np.concatenate([np.broadcast_to(t, dw.shape), dw], axis=1).astype(np.float32)
    ans = scene.cast_rays(o3d.core.Tensor(rays))
    th = ans["t_hit"].numpy().astype(np.float64)
    gid = ans["geometry_ids"].numpy().astype(np.int64)
    hit = np.isfinite(th)
    r = th[hit]
    if noise > 0:
        r = r + np.random.default_rng(seed).normal(0.0, noise, len(r))
    return Scan(points=d[hit] * r[:, None], labels=gid[hit], world_from_sensor=world_from_sensor)


def tabletop(n_points: int, seed: int = 0, noise: float = 0.001) -> tuple[Scan, list[trimesh.Trimesh]]:
    """A 1.2 x 0.8 m table (top at z = 0) with two boxes and two cylinders, one sensor 1 m from the table centre
    looking down at 45 degrees; the pixel grid is sized to give about ``n_points`` hits."""
    meshes = [
        box((1.2, 0.8, 0.05), (0.0, 0.0), z0=-0.05),
        box((0.1, 0.15, 0.12), (-0.3, 0.1), yaw=0.3),
        box((0.08, 0.08, 0.2), (0.25, -0.15)),
        cylinder(0.04, 0.15, (0.2, 0.2)),
        cylinder(0.06, 0.1, (-0.1, -0.2)),
    ]
    T = look_at(np.array([0.0, -0.7, 0.7]), np.zeros(3))
    fov = 70.0
    probe = cast(meshes, T, width=160, height=120, fov_deg=fov)  # share of the view that hits something
    fill = max(len(probe.points) / (160 * 120), 1e-3)
    w = int(np.ceil(np.sqrt(n_points / fill * 4 / 3)))
    h = int(np.ceil(w * 3 / 4))
    scan = cast(meshes, T, width=w, height=h, fov_deg=fov, noise=noise, seed=seed)
    if len(scan.points) > n_points:
        keep = np.sort(np.random.default_rng(seed).choice(len(scan.points), n_points, replace=False))
        scan = Scan(scan.points[keep], scan.labels[keep], scan.world_from_sensor)
    return scan, meshes


def scan_views(
    meshes: list[trimesh.Trimesh],
    eyes: list[np.ndarray],
    target: np.ndarray,
    *,
    fov_deg: float,
    noise: float,
    seed: int = 0,
    width: int = 320,
    height: int = 240,
) -> tuple[PointCloud, np.ndarray]:
    """One ``cast`` per sensor position in ``eyes`` (looking at ``target``; scan ``k`` seeded ``seed + k``), merged
    in the world frame: the cloud with each point's sensor origin, and the index of the mesh each point lies on."""
    pts, lab, org = [], [], []
    for k, eye in enumerate(eyes):
        T = look_at(np.asarray(eye, dtype=np.float64), target)
        s = cast(meshes, T, width=width, height=height, fov_deg=fov_deg, noise=noise, seed=seed + k)
        w = s.points @ T[:3, :3].T + T[:3, 3]
        pts.append(w)
        lab.append(s.labels)
        org.append(np.broadcast_to(T[:3, 3], w.shape))
    return PointCloud(np.concatenate(pts), sensor_origin=np.concatenate(org)), np.concatenate(lab)
