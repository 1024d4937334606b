"""CPU dense path on synthetic ground truth: a textured plane seen by calibrated cameras (rendered exactly by its
homography), horizontal and vertical camera baselines; the fused points must lie on the plane and cover it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from real2sim.recon.photos.mvs import MvsCfg, dense_points_cpu
from real2sim.recon.photos.sfm import Intrinsics, SfmResult

W, H, F = 320, 240, 300.0
SIDE = 1.6  # plane side [m], centred at the origin, z = 0


def _look_down(eye: np.ndarray, tilt_deg: float, yaw_deg: float) -> np.ndarray:
    """cam_from_world of a camera at ``eye`` looking down (-z) tilted by ``tilt_deg`` about its x axis."""
    a, b = np.radians(tilt_deg), np.radians(yaw_deg)
    down = np.diag([1.0, -1.0, -1.0])  # camera z along world -z, camera y along world -y
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    rz = np.array([[np.cos(b), -np.sin(b), 0], [np.sin(b), np.cos(b), 0], [0, 0, 1]])
    r = rx @ down @ rz.T
    c = np.eye(4)
    c[:3, :3] = r
    c[:3, 3] = -r @ eye
    return c


def _scene(tmp_path, eyes: list[np.ndarray]) -> SfmResult:
    rng = np.random.default_rng(0)
    n_tex = 1024
    tex = cv2.resize(
        rng.uniform(0, 255, (128, 128)).astype(np.float32), (n_tex, n_tex), interpolation=cv2.INTER_CUBIC
    )
    tex = cv2.add(tex, cv2.resize(rng.uniform(-60, 60, (512, 512)).astype(np.float32), (n_tex, n_tex)))
    tex = np.clip(tex, 0, 255).astype(np.uint8)
    tex_to_plane = np.array([[SIDE / n_tex, 0, -SIDE / 2 + SIDE / n_tex / 2], [0, SIDE / n_tex, -SIDE / 2 + SIDE / n_tex / 2],
                             [0, 0, 1]])  # fmt: skip
    k = np.array([[F, 0, (W - 1) / 2], [0, F, (H - 1) / 2], [0, 0, 1]])
    sparse = np.c_[rng.uniform(-0.5, 0.5, (400, 2)), np.zeros(400)]
    cams, intr, obs = {}, {}, {}
    img_dir = tmp_path / "images"
    img_dir.mkdir()
    for i, eye in enumerate(eyes):
        name = f"v{i}.png"
        c = _look_down(eye, tilt_deg=8.0 * (-1) ** i, yaw_deg=5.0 * i)
        hom = k @ np.c_[c[:3, 0], c[:3, 1], c[:3, 3]] @ tex_to_plane
        img = cv2.warpPerspective(tex, hom, (W, H), flags=cv2.INTER_LINEAR, borderValue=0)
        cv2.imwrite(str(img_dir / name), cv2.cvtColor(img, cv2.COLOR_GRAY2BGR))
        cams[name] = c
        intr[name] = Intrinsics(
            "PINHOLE", W, H, (F, F, (W - 1) / 2 + 0.5, (H - 1) / 2 + 0.5)
        )  # COLMAP convention
        x = sparse @ c[:3, :3].T + c[:3, 3]
        uv = x[:, :2] / x[:, 2:] * F + [(W - 1) / 2 + 0.5, (H - 1) / 2 + 0.5]
        ok = (uv[:, 0] > 0) & (uv[:, 0] < W) & (uv[:, 1] > 0) & (uv[:, 1] < H)
        obs[name] = np.c_[uv[ok], np.flatnonzero(ok)]
    names = tuple(cams)
    return SfmResult(img_dir, names, cams, intr, sparse, np.full((len(sparse), 3), 0.5), {}, "synthetic", {},
                     observations=obs)  # fmt: skip


@pytest.mark.parametrize("axis", [0, 1], ids=["horizontal", "vertical"])
def test_dense_plane(tmp_path, axis):
    eyes = []
    for i in range(3):
        e = np.array([0.0, 0.0, 1.0])
        e[axis] = -0.12 + 0.12 * i
        eyes.append(e)
    sfm = _scene(tmp_path, eyes)
    timings: dict = {}
    # Every depth map's own points (min_weight 1): the stereo geometry and how much of the plane it covers.
    cloud = dense_points_cpu(sfm, np.eye(4), MvsCfg(min_weight=1.0), timings)
    z = cloud.points[:, 2]
    assert len(z) > 20000
    assert np.median(np.abs(z)) < 0.002, np.median(np.abs(z))
    assert np.percentile(np.abs(z), 95) < 0.01, np.percentile(
        np.abs(z), 95
    )  # 1 px of disparity is ~3 mm here
    # Coverage of the central 0.5 m x 0.4 m every camera sees: filled 5 mm cells.
    inside = (np.abs(cloud.points[:, 0]) < 0.25) & (np.abs(cloud.points[:, 1]) < 0.2)
    cells = {tuple(c) for c in np.floor(cloud.points[inside, :2] / 0.005).astype(int)}
    assert len(cells) > 0.9 * (100 * 80), len(cells)
    assert cloud.colors is not None and cloud.sensor_origin is not None
    assert {"dense_stereo", "dense_fusion"} <= set(timings)
    # The default keeps only surface a second depth map confirms: the single-view mismatches go, the plane stays.
    confirmed = dense_points_cpu(sfm, np.eye(4), MvsCfg())
    zc = np.abs(confirmed.points[:, 2])
    assert 5000 < len(zc) < len(z)
    assert np.median(zc) < 0.002 and np.percentile(zc, 95) < 0.6 * np.percentile(np.abs(z), 95)


def test_dense_rejects_views_without_partner(tmp_path):
    from real2sim.errors import StageError

    sfm = _scene(tmp_path, [np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0005])])  # no baseline
    with pytest.raises(StageError, match="no pair of registered views"):
        dense_points_cpu(sfm, np.eye(4))
