"""Where the base stands: the marker route on photos rendered from known cameras (a printed ArUco marker warped into
each view), and the ICP route on a synthetic scan of the SO-101 at a known pose; both against the truth."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from real2sim.twin.base import icp_pose, marker_pose, rotation_angle_deg
from real2sim.twin.geometry import mat_to_quat, pose_of

SIZE = 0.08
"""Marker side [m]."""
K = np.array([[800.0, 0, 320.0], [0, 800.0, 240.0], [0, 0, 1]])


def _yaw_pose(x: float, y: float, z: float, yaw_deg: float) -> np.ndarray:
    a = math.radians(yaw_deg)
    return pose_of([x, y, z], [math.cos(a / 2), 0.0, 0.0, math.sin(a / 2)])


def _look_at(eye, target) -> np.ndarray:
    """cam_from_world of a camera at ``eye`` looking at ``target`` (OpenCV axes: z forward, y down)."""
    z = np.asarray(target, float) - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = np.stack([x, y, z])
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = r, -r @ eye
    return t


def _photos(folder, world_from_marker: np.ndarray) -> list[dict]:
    import cv2

    s_px, pad = 600, 150
    marker = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 0, s_px)
    tex = np.full((s_px + 2 * pad, s_px + 2 * pad), 255, np.uint8)
    tex[pad : pad + s_px, pad : pad + s_px] = marker
    s, c = SIZE / s_px, pad + s_px / 2 - 0.5  # texture pixel centres (OpenCV) -> marker frame [m]
    a = np.array([[s, 0, -s * c], [0, -s, s * c], [0, 0, 1]])
    to_cv = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1.0]])  # COLMAP pixel centres -> OpenCV's
    centre = world_from_marker[:3, 3]
    cams = []
    for i, eye in enumerate(([0.35, 0.05, 0.45], [-0.2, 0.45, 0.5], [0.05, -0.25, 0.55])):
        cam_from_world = _look_at(np.asarray(eye) + [0.1, 0.2, 0.0], centre)
        cm = cam_from_world @ world_from_marker
        h = to_cv @ K @ np.column_stack([cm[:3, 0], cm[:3, 1], cm[:3, 3]]) @ a
        img = cv2.warpPerspective(tex, h, (640, 480), flags=cv2.INTER_LINEAR, borderValue=170)
        cv2.imwrite(str(folder / f"view_{i}.png"), img)
        cams.append({"file": f"view_{i}.png", "cam_from_world": cam_from_world.tolist(), "fx": 800.0, "fy": 800.0,
                     "cx": 320.0, "cy": 240.0, "width": 640, "height": 480, "dist_coeffs_opencv": []})  # fmt: skip
    return cams


def test_marker_route_recovers_the_base_pose(tmp_path):
    world_from_marker = _yaw_pose(0.1, 0.2, 0.0, 30.0)
    base_from_marker = _yaw_pose(0.06, 0.0, 0.0, 90.0)  # printed on the table beside the base, turned
    (tmp_path / "cameras.json").write_text(json.dumps({"cameras": _photos(tmp_path, world_from_marker)}))
    bfm = (*base_from_marker[:3, 3], *mat_to_quat(base_from_marker[:3, :3]))
    est = marker_pose(tmp_path, tmp_path / "cameras.json", SIZE, "DICT_4X4_50", 0, bfm)
    truth = world_from_marker @ np.linalg.inv(base_from_marker)
    assert np.linalg.norm(est.world_from_base[:3, 3] - truth[:3, 3]) < 1e-3
    assert rotation_angle_deg(est.world_from_base, truth) < 0.3
    assert len(est.figures["views"]) == 3 and 0 < est.sigma_position < 2e-3
    assert est.figures["edge_lengths_m"] == pytest.approx([SIZE] * 4, abs=5e-4)


def test_icp_route_recovers_the_base_pose_from_a_scan(so101):
    import mujoco

    from real2sim.twin.scan import robot_surface

    model = mujoco.MjModel.from_xml_path(str(so101 / "model" / "so101_new_calib.xml"))
    pts = robot_surface(model, mujoco.MjData(model), model.qpos0.copy())
    rng = np.random.default_rng(0)
    robot = pts[rng.choice(len(pts), 20000, replace=False)]
    truth = _yaw_pose(0.05, 0.3, 0.0, 25.0)
    world = robot @ truth[:3, :3].T + truth[:3, 3] + rng.normal(0, 5e-4, robot.shape)
    gx, gy = np.meshgrid(np.linspace(-0.2, 0.3, 120), np.linspace(0.1, 0.5, 100))
    table = np.column_stack([gx.ravel(), gy.ravel(), rng.normal(-0.0024, 5e-4, gx.size)])
    coarse = _yaw_pose(0.065, 0.29, 0.0, 21.0)  # 1.8 cm and 4 degrees off
    est = icp_pose(robot, np.concatenate([world, table]), coarse, 0.03)
    assert np.linalg.norm(est.world_from_base[:3, 3] - truth[:3, 3]) < 2e-3
    assert rotation_angle_deg(est.world_from_base, truth) < 0.5
    assert (
        est.figures["residual_m"] < 2e-3 and math.isfinite(est.sigma_position) and est.sigma_position < 1e-3
    )
