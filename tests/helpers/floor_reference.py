"""Reference floor planes of the real Kinect room frames, by another route than the recon (image windows of bare
floor picked by eye, least squares), shared by ``tests/recon/test_room.py`` and ``benchmarks/bench_rooms.py``."""

from __future__ import annotations

import numpy as np

from real2sim.recon.pointcloud.support import fit_plane_lsq

OFFICE_FLOOR_WINDOW = (slice(420, 480), slice(270, 400))
"""Image rows/columns of office1.pcd showing bare floor (picked by eye on its colour image)."""
GRABBER_FLOOR_WINDOW = (slice(350, 480), slice(0, 560))
"""Image rows/columns of the grabber frames showing bare carpet."""
GRABBER_LAPTOP = (slice(145, 320), slice(130, 375))
GRABBER_BOX = (slice(178, 315), slice(372, 505))
"""Image boxes (rows, columns) of the laptop and of the box in the first grabber frame (by eye)."""


def reference_floor(cloud, window: tuple[slice, slice], band: float) -> np.ndarray:
    """Floor normal by another route than the recon's RANSAC: least squares on an image window of bare floor, then
    regrown over the lower half of the image (points within ``band`` of the plane) and refitted."""
    grid = cloud.points.reshape(cloud.height, cloud.width, 3)
    p = grid[window].reshape(-1, 3)
    n, c = fit_plane_lsq(p[np.isfinite(p).all(axis=1)])
    lower = grid[cloud.height // 2 :].reshape(-1, 3)
    lower = lower[np.isfinite(lower).all(axis=1)]
    for _ in range(2):
        n, c = fit_plane_lsq(lower[np.abs((lower - c) @ n) < band])
    return n


def angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(min(1.0, abs(a @ b) / np.linalg.norm(a) / np.linalg.norm(b)))))


def floor_in_input(world_from_input: np.ndarray) -> np.ndarray:
    return np.linalg.inv(world_from_input)[:3, :3] @ np.array([0.0, 0.0, 1.0])
