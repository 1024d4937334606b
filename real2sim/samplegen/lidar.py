"""Simulated depth/LiDAR scans by ray casting (Open3D ``RaycastingScene``) with a real sensor's imperfections.

Each scan is a depth-camera-like grid of rays from a sensor above the table edge looking down at the objects:
range noise along the ray, random dropouts, dropouts at grazing incidence, a limited field of view (the table is
only partly seen). Points are written in the SENSOR frame (OpenCV convention: x right, y down, z forward).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh


@dataclass(frozen=True)
class LidarCfg:
    """Sensor model of the simulated scans."""

    width: int = 320
    """Rays per row."""
    height: int = 240
    """Rows."""
    hfov_deg: float = 58.0
    """Horizontal field of view [deg]."""
    vfov_deg: float = 45.0
    """Vertical field of view [deg]."""
    noise_sigma: float = 0.002
    """Range noise standard deviation along the ray [m]."""
    dropout: float = 0.02
    """Probability that any return is lost at random."""
    grazing_cos: float = 0.2
    """Returns with |cos(incidence)| below this are lost with probability rising linearly to 1 at 0."""
    max_range: float = 3.0
    """Returns farther than this [m] are lost."""

    def validate(self) -> None:
        if self.width < 2 or self.height < 2:
            raise ValueError("lidar grid must be at least 2x2")
        if not (0 < self.hfov_deg < 180 and 0 < self.vfov_deg < 180):
            raise ValueError("lidar field of view must be in (0, 180) deg")
        if self.noise_sigma < 0 or not (0 <= self.dropout < 1) or not (0 <= self.grazing_cos < 1):
            raise ValueError("lidar noise_sigma >= 0, dropout and grazing_cos in [0, 1)")


def look_at(
    eye: np.ndarray, target: np.ndarray, up: tuple[float, float, float] = (0.0, 0.0, 1.0)
) -> np.ndarray:
    """world_from_sensor (4x4) of an OpenCV-convention sensor at ``eye`` looking at ``target`` (x right, y down,
    z forward), with the image's "up" towards world ``up``."""
    z = np.asarray(target, float) - np.asarray(eye, float)
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, float))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, z, eye
    return T


def ray_directions(cfg: LidarCfg) -> np.ndarray:
    """Unit ray directions (H*W, 3) in the sensor frame, row-major from the top-left."""
    fx = (cfg.width / 2) / np.tan(np.radians(cfg.hfov_deg) / 2)
    fy = (cfg.height / 2) / np.tan(np.radians(cfg.vfov_deg) / 2)
    u, v = np.meshgrid(np.arange(cfg.width) + 0.5, np.arange(cfg.height) + 0.5)
    d = np.stack([(u - cfg.width / 2) / fx, (v - cfg.height / 2) / fy, np.ones_like(u)], axis=-1).reshape(
        -1, 3
    )
    return d / np.linalg.norm(d, axis=1, keepdims=True)


@dataclass(frozen=True)
class Scan:
    """One simulated scan."""

    points_sensor: np.ndarray
    """(N, 3) float32 points in the sensor frame [m]."""
    intensity: np.ndarray
    """(N,) float32 return intensity 0..1."""
    labels: np.ndarray
    """(N,) int8 ground-truth label per point: 0 table, -1 floor, k >= 1 the k-th object."""
    world_from_sensor: np.ndarray
    """4x4 sensor pose."""
    colors: np.ndarray | None = None
    """(N, 3) uint8 RGB per point (the surface colour, shaded by incidence, as a coloured scanner records it)."""


def cast_scan(
    meshes: list[trimesh.Trimesh],
    labels: list[int],
    albedo: list[float],
    world_from_sensor: np.ndarray,
    cfg: LidarCfg,
    rng: np.random.Generator,
    rgb: list[tuple[float, float, float]] | None = None,
) -> Scan:
    """Cast the sensor's rays into the world ``meshes`` (world frame) and apply the sensor model; ``rgb`` (one
    colour 0..1 per mesh) gives the points colours (no random draws: the points do not depend on it)."""
    import open3d as o3d

    scene = o3d.t.geometry.RaycastingScene()
    for m in meshes:
        # open3d's generated stubs make Tensor's dtype and device required; they default to the array's and CPU
        scene.add_triangles(
            o3d.core.Tensor(np.asarray(m.vertices, dtype=np.float32)),  # pyright: ignore[reportCallIssue]
            o3d.core.Tensor(np.asarray(m.faces, dtype=np.uint32)),  # pyright: ignore[reportCallIssue]
        )
    d_sensor = ray_directions(cfg)
    R, t = world_from_sensor[:3, :3], world_from_sensor[:3, 3]
    d_world = d_sensor @ R.T
    rays = np.concatenate([np.broadcast_to(t, d_world.shape), d_world], axis=1).astype(np.float32)
    hit = scene.cast_rays(o3d.core.Tensor(rays))  # pyright: ignore[reportCallIssue]  (as above)
    t_hit = hit["t_hit"].numpy().astype(np.float64)
    geom = hit["geometry_ids"].numpy().astype(np.int64)
    normal = hit["primitive_normals"].numpy().astype(np.float64)

    n = len(d_sensor)
    # Draw every random number for every ray (hit or not) so the stream does not depend on the hit pattern.
    noise = rng.normal(0.0, cfg.noise_sigma, size=n)
    u_drop = rng.uniform(size=n)
    u_graze = rng.uniform(size=n)
    cos_inc = np.abs(np.einsum("ij,ij->i", normal, d_world))
    keep = np.isfinite(t_hit) & (t_hit <= cfg.max_range)
    keep &= u_drop >= cfg.dropout
    if cfg.grazing_cos > 0:
        p_graze = np.clip(1.0 - cos_inc / cfg.grazing_cos, 0.0, 1.0)
        keep &= u_graze >= p_graze
    rng_noisy = t_hit[keep] + noise[keep]
    pts = d_sensor[keep] * rng_noisy[:, None]
    gid = geom[keep]
    lab = np.asarray(labels, dtype=np.int8)[gid]
    alb = np.asarray(albedo, dtype=np.float64)[gid]
    inten = np.clip(alb * (0.3 + 0.7 * cos_inc[keep]), 0.0, 1.0)
    colors = None
    if rgb is not None:
        shade = (0.55 + 0.45 * cos_inc[keep])[:, None]
        colors = np.round(np.clip(np.asarray(rgb, dtype=np.float64)[gid] * shade, 0, 1) * 255).astype(
            np.uint8
        )
    return Scan(pts.astype(np.float32), inten.astype(np.float32), lab, world_from_sensor, colors)


def ply_bytes(points: np.ndarray, intensity: np.ndarray, colors: np.ndarray | None = None) -> bytes:
    """Binary little-endian PLY with float32 x y z intensity (and uchar red green blue with ``colors``)."""
    rgb = "" if colors is None else "property uchar red\nproperty uchar green\nproperty uchar blue\n"
    head = (
        "ply\nformat binary_little_endian 1.0\n"
        f"element vertex {len(points)}\n"
        f"property float x\nproperty float y\nproperty float z\nproperty float intensity\n{rgb}end_header\n"
    ).encode("ascii")
    fields = [("p", "<f4", 3), ("i", "<f4")] + ([] if colors is None else [("c", "u1", 3)])
    rec = np.empty(len(points), dtype=fields)
    rec["p"], rec["i"] = points, intensity
    if colors is not None:
        rec["c"] = colors
    return head + rec.tobytes()


def sensor_poses(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """``n`` sensor poses around and above the table, looking down at its centre from above and the side
    (heights 0.40-0.55 m, 0.50-0.60 m out), so no sensor sees an object's underside. With three or more sensors the
    last one looks down steeply (0.10-0.20 m out, 0.60-0.70 m up), as a handheld sweep or an overhead sensor does:
    only such a view sees into open containers (a mug's cavity floor needs more than ~50° elevation)."""
    poses = []
    az0 = rng.uniform(0, 2 * np.pi)
    for k in range(n):
        az = az0 + 2 * np.pi * k / n + rng.uniform(-0.15, 0.15)
        overhead = n >= 3 and k == n - 1
        dist, h = (
            (rng.uniform(0.10, 0.20), rng.uniform(0.60, 0.70))
            if overhead
            else (
                rng.uniform(0.50, 0.60),
                rng.uniform(0.40, 0.55),
            )
        )
        eye = np.array([dist * np.cos(az), dist * np.sin(az), h])
        target = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), 0.0])
        poses.append(look_at(eye, target))
    return poses
