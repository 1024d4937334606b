"""A ray-cast tabletop scan of any size written straight to a binary PLY, a block of pixel rows at a time, so that
writing a 100M-point file takes little memory (``synthetic_scan.tabletop``'s scene, sensor and noise)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.helpers.synthetic_scan import box, cylinder, look_at

FOV = 70.0
COUNT_WIDTH = 12
"""The vertex count is written space-padded to this width, then filled in once the points are cast."""


def tabletop_meshes() -> list:
    return [
        box((1.2, 0.8, 0.05), (0.0, 0.0), z0=-0.05),
        box((0.1, 0.15, 0.12), (-0.3, 0.1), yaw=0.3),
        box((0.08, 0.08, 0.2), (0.25, -0.15)),
        cylinder(0.04, 0.15, (0.2, 0.2)),
        cylinder(0.06, 0.1, (-0.1, -0.2)),
    ]


def write_tabletop_ply(path: Path, n_points: int, seed: int = 0, noise: float = 0.001, rows: int = 64) -> int:
    """Write about ``n_points`` (at most that many) ray-cast points (float32 x, y, z in the sensor frame, metres)
    to ``path`` as binary little-endian PLY; returns the number written."""
    import open3d as o3d

    meshes = tabletop_meshes()
    scene = o3d.t.geometry.RaycastingScene()
    for m in meshes:
        scene.add_triangles(
            o3d.core.Tensor(np.asarray(m.vertices, dtype=np.float32)),
            o3d.core.Tensor(np.asarray(m.faces, dtype=np.uint32)),
        )
    T = look_at(np.array([0.0, -0.7, 0.7]), np.zeros(3))
    R, t = T[:3, :3], T[:3, 3]

    def cast(width: int, height: int, v0: int, v1: int) -> tuple[np.ndarray, np.ndarray]:
        f = (width / 2) / np.tan(np.radians(FOV) / 2)
        u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(v0, v1) + 0.5)
        d = np.stack([(u - width / 2) / f, (v - height / 2) / f, np.ones_like(u)], axis=-1).reshape(-1, 3)
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        dw = d @ R.T
        rays = np.concatenate([np.broadcast_to(t, dw.shape), dw], axis=1).astype(np.float32)
        th = scene.cast_rays(o3d.core.Tensor(rays))["t_hit"].numpy().astype(np.float64)
        hit = np.isfinite(th)
        return d[hit], th[hit]

    probe, _ = cast(160, 120, 0, 120)
    fill = max(len(probe) / (160 * 120), 1e-3)
    w = int(np.ceil(np.sqrt(n_points / fill * 4 / 3)))
    h = int(np.ceil(w * 3 / 4))
    header = "ply\nformat binary_little_endian 1.0\nelement vertex {}\nproperty float x\nproperty float y\n"
    header += "property float z\nend_header\n"
    written = 0
    with open(path, "wb") as f:
        f.write(header.format(" " * COUNT_WIDTH).encode())
        for k, v0 in enumerate(range(0, h, rows)):
            d, r = cast(w, h, v0, min(h, v0 + rows))
            r = r + np.random.default_rng([seed, k]).normal(0.0, noise, len(r))
            pts = (d * r[:, None]).astype("<f4")[: n_points - written]
            f.write(pts.tobytes())
            written += len(pts)
            if written >= n_points:
                break
        f.seek(0)
        f.write(header.format(str(written).ljust(COUNT_WIDTH)).encode())
    return written
