"""The scene frame does not depend on the last bits of the RANSAC plane it starts from: Open3D's plane search is not
reproducible from run to run although seeded (docs/reliability.md §7), and the support fit refines its plane to a
fixed point. Inputs: the real OSD scans (test44, test56) and the ray-cast tabletop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.recon.io import read_points
from real2sim.recon.pointcloud import support
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from tests.helpers.synthetic_scan import tabletop


def _tilted(model: np.ndarray, angle: float, axis: np.ndarray, shift: float) -> np.ndarray:
    """``model`` (a, b, c, d) turned by ``angle`` [rad] about ``axis`` and moved ``shift`` [m] along its normal."""
    k = float(np.linalg.norm(model[:3]))
    n, d = model[:3] / k, float(model[3]) / k
    axis = np.cross(n, axis)
    axis /= np.linalg.norm(axis)
    turned = n * np.cos(angle) + np.cross(axis, n) * np.sin(angle) + axis * (axis @ n) * (1 - np.cos(angle))
    return np.r_[turned, d - shift]


def _frames(points: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The scene frame of ``points``, fitted from the RANSAC planes of a first fit, each start turned and moved."""
    cfg = PointCloudReconCfg()
    real = support.ransac_planes
    seen: list = []

    def fit() -> np.ndarray:
        return support.fit_support(
            points, voxel=cfg.voxel, distance=cfg.plane_distance, min_fraction=cfg.plane_min_fraction,
            sensor=np.zeros(3), up=None, keep_xy=False, seed=cfg.seed,
        ).world_from_input  # fmt: skip

    def record(*a, **k) -> list:
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(support, "ransac_planes", record)
    out = [fit()]
    # each start: the RANSAC result turned by up to 0.05 deg and moved by up to 0.5 mm, more than two runs of
    # Open3D's search on one input were seen apart (docs/reliability.md §7)
    starts = [(8.7e-4, (1.0, 0.0, 0.0), 0.0), (3.5e-4, (0.0, 1.0, 0.0), 3.5e-4), (1e-9, (0.3, 0.7, 0.0), -5e-4),
              (5e-4, (-1.0, 0.2, 0.1), 2e-4)]  # fmt: skip
    for angle, axis, shift in starts:
        planes = [(_tilted(m, angle, np.asarray(axis), shift), inl) for m, inl in seen[0]]
        monkeypatch.setattr(support, "ransac_planes", lambda *a, planes=planes, **k: planes)
        out.append(fit())
    return out


@pytest.mark.parametrize("scene", ["test44", "test56"])
def test_the_scene_frame_of_a_real_scan_does_not_follow_the_ransac_bits(
    shared_data: Path, scene: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cloud = read_points(shared_data / "pointclouds" / "osd_tabletop" / f"{scene}.pcd")
    points = cloud.points[cloud.valid_mask()]
    frames = _frames(points, monkeypatch)
    assert all(np.array_equal(f, frames[0]) for f in frames[1:])


def test_the_scene_frame_of_a_ray_cast_table_does_not_follow_the_ransac_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scan = tabletop(100_000, seed=3)[0]
    frames = _frames(scan.points, monkeypatch)
    assert all(np.array_equal(f, frames[0]) for f in frames[1:])
    # and it is the true frame: its up axis is the table's normal (the world z seen from the sensor) within 0.05 deg
    up = scan.world_from_sensor[2, :3]
    assert np.degrees(np.arccos(min(1.0, float(frames[0][2, :3] @ up)))) < 0.05
