"""Scans in any frame: the real OSD ``test12`` re-expressed in a map frame (table at z = 0, z up; also shifted far
away) finds the objects the camera-frame scan finds; wrong sensor origins are detected; an empty scene says why."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from real2sim.matching import match_pairs
from real2sim.recon.io import PointCloud, read_points
from real2sim.recon.io.pcd import write_pcd
from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud
from real2sim.recon.pointcloud.scene import points_to_scene
from real2sim.recon.pointcloud.support import inside_polygon
from real2sim.recon.pointcloud.viewpoint import origin_problem, side_counts

SCAN = "test12"


def _scan(shared_data: Path) -> tuple[PointCloud, dict]:
    folder = shared_data / "pointclouds" / "osd_tabletop"
    return read_points(folder / f"{SCAN}.pcd"), json.loads((folder / "ground_truth.json").read_text())[SCAN]


def _map_from_camera(gt: dict, shift: tuple[float, float, float]) -> np.ndarray:
    """4x4 taking camera coordinates to a map frame with the labelled table plane at z = 0, z up, then ``shift``."""
    n = np.asarray(gt["table_plane_normal"], dtype=float)
    n /= np.linalg.norm(n)
    x = np.cross([0.0, 1.0, 0.0], n)
    x /= np.linalg.norm(x)
    R = np.stack([x, np.cross(n, x), n])
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = -R @ np.asarray(gt["table_plane_point"], dtype=float) + np.asarray(shift)
    return T


def _min_iou(cloud: PointCloud, labels: np.ndarray, n_found: int) -> float:
    """Smallest point IoU of the matched labelled objects (labels >= 10: object label // 10)."""
    valid = cloud.valid_mask()
    gobj = np.where(cloud.labels >= 10, cloud.labels // 10, 0)
    ids = sorted(set(np.unique(gobj[valid]).tolist()) - {0})
    iou = np.zeros((len(ids), n_found))
    for i, g in enumerate(ids):
        a = valid & (gobj == g)
        for k in range(n_found):
            b = labels == k + 1
            iou[i, k] = (a & b).sum() / (a | b).sum()
    return float(min(iou[i, j] for i, j, _ in match_pairs(-iou)))


@pytest.mark.parametrize("shift", [(0.0, 0.0, 0.0), (120.0, -40.0, 3.0)])
def test_map_frame_scan_finds_the_objects(
    shared_data: Path, tmp_path: Path, shift: tuple[float, float, float], caplog: pytest.LogCaptureFixture
) -> None:
    cloud, gt = _scan(shared_data)
    T = _map_from_camera(gt, shift)
    # VIEWPOINT 0 0 0, as PCL writes by default: the claimed sensor sits on the table plane or 3 m under it
    write_pcd(tmp_path / "map.pcd", replace(cloud.transformed(T), sensor_origin=np.zeros(3)))
    with caplog.at_level(logging.WARNING):
        out = run_recon_pointcloud(
            PointCloudReconCfg(inputs=(tmp_path / "map.pcd",), out_dir=tmp_path / "s", save_point_labels=True)
        )
    assert len(out.scene.objects) == gt["n_objects"]
    assert _min_iou(cloud, np.load(tmp_path / "s" / "point_labels.npy"), len(out.scene.objects)) >= 0.9
    assert "sensor origins ignored" in caplog.text
    up = out.world_from_input[:3, :3].T @ np.array([0.0, 0.0, 1.0])  # scene up in map coordinates
    assert up[2] >= np.cos(np.radians(1.0))
    for o in out.scene.objects:
        assert o.mesh.is_watertight and o.mesh.volume > 0


def test_given_sensor_origin_is_used(
    shared_data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``sensor_origin`` (the camera, in map coordinates) overrides the file's VIEWPOINT and passes the checks;
    origins far above the table, beside the camera or under the table do not."""
    cloud, gt = _scan(shared_data)
    T = _map_from_camera(gt, (0.0, 0.0, 0.0))
    m = cloud.transformed(T)
    write_pcd(tmp_path / "map.pcd", replace(m, sensor_origin=np.zeros(3)))
    cfg = PointCloudReconCfg(inputs=(tmp_path / "map.pcd",), sensor_origin=tuple(T[:3, 3]))
    with caplog.at_level(logging.WARNING):
        out = run_recon_pointcloud(cfg)
    assert len(out.scene.objects) == gt["n_objects"]
    assert "ignored" not in caplog.text
    assert _min_iou(cloud, out.point_labels, len(out.scene.objects)) >= 0.9
    W = out.world_from_input
    w = m.points[m.valid_mask()] @ W[:3, :3].T + W[:3, 3]
    camera = W[:3, :3] @ T[:3, 3] + W[:3, 3]
    sup = out.scene.support
    lo = np.asarray(sup.point[:2]) - 0.5 * np.asarray(sup.size[:2])
    hi = lo + np.asarray(sup.size[:2])
    hull = np.array([lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]])
    inside = inside_polygon(w[:, :2], hull)
    cfg = PointCloudReconCfg()
    sides = side_counts(w, inside, cfg)
    for offset, bad in (
        ((0, 0, 0), False),
        ((100, 30, 2), True),
        ((0.4, 0.4, 0.4), True),
        ((0, 0, -1), True),
    ):
        wo = np.broadcast_to(camera + offset, w.shape)
        why = origin_problem(w, wo, inside, inside & (np.abs(w[:, 2]) < 0.01), hull, sides, cfg)
        assert (why is not None) == bad, (offset, why)


def test_scan_without_any_viewpoint(shared_data: Path) -> None:
    """No origin from the file and none assumed: segmentation and meshing still work, from the geometry alone."""
    cloud, gt = _scan(shared_data)
    m = replace(cloud.transformed(_map_from_camera(gt, (120.0, -40.0, 3.0))), sensor_origin=None)
    out = points_to_scene(m, PointCloudReconCfg())
    assert len(out.scene.objects) == gt["n_objects"]
    assert _min_iou(cloud, out.point_labels, len(out.scene.objects)) >= 0.9


def test_empty_scene_says_why(shared_data: Path, caplog: pytest.LogCaptureFixture) -> None:
    cloud, gt = _scan(shared_data)
    h = (cloud.points - gt["table_plane_point"]) @ np.asarray(gt["table_plane_normal"])
    table = cloud.subset(np.flatnonzero(np.abs(h) < 0.005))  # the bare table: no points above it
    with caplog.at_level(logging.WARNING):
        out = points_to_scene(table, PointCloudReconCfg())
    assert out.scene.objects == ()
    assert "no objects found: no points 0.01..1 m above the support" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        out = points_to_scene(cloud, PointCloudReconCfg(min_object_points=100_000))
    assert out.scene.objects == ()
    assert (
        "no objects found: all 3 cluster(s) above the support were dropped (3 with fewer than" in caplog.text
    )


def test_pcd_viewpoint_round_trip(tmp_path: Path) -> None:
    pts = np.random.default_rng(0).normal(size=(50, 3))
    write_pcd(tmp_path / "a.pcd", PointCloud(pts, sensor_origin=np.array([1.5, -2.0, 0.25])))
    c = read_points(tmp_path / "a.pcd", "cm")
    np.testing.assert_allclose(c.sensor_origin, [0.015, -0.02, 0.0025])
    np.testing.assert_allclose(c.points, pts * 0.01, atol=1e-8)
    write_pcd(tmp_path / "b.pcd", PointCloud(pts))
    assert read_points(tmp_path / "b.pcd").sensor_origin is None
    cfg = PointCloudReconCfg(inputs=(tmp_path / "b.pcd",), sensor_origin=(1.0, 2.0, 3.0), units="cm")
    from real2sim.recon.pointcloud.run import load_clouds

    np.testing.assert_allclose(load_clouds(cfg)[0][0].sensor_origin, [0.01, 0.02, 0.03])


def test_e57_scan_positions_are_sensor_origins(tmp_path: Path) -> None:
    pye57 = pytest.importorskip("pye57")
    p = np.random.default_rng(0).normal(size=(100, 3))
    e = pye57.E57(str(tmp_path / "s.e57"), mode="w")
    scan = {"cartesianX": p[:, 0], "cartesianY": p[:, 1], "cartesianZ": p[:, 2]}
    e.write_scan_raw(scan, rotation=np.array([1.0, 0, 0, 0]), translation=np.array([5.0, 6, 7]))
    e.write_scan_raw(scan, rotation=np.array([0.0, 0, 0, 1]), translation=np.array([-1.0, 2, 3]))
    e.close()
    c = read_points(tmp_path / "s.e57")
    np.testing.assert_allclose(c.origins()[[0, 150]], [[5, 6, 7], [-1, 2, 3]])
    np.testing.assert_allclose(c.points[:100], p + [5, 6, 7], atol=1e-6)


def test_cli_sensor_origin_needs_three_numbers(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from real2sim.cli import cli

    write_pcd(tmp_path / "a.pcd", PointCloud(np.random.default_rng(0).normal(size=(50, 3))))
    r = CliRunner().invoke(cli, ["recon", "pointcloud", str(tmp_path / "a.pcd"), "-o", str(tmp_path / "s"),
                                 "--sensor-origin", "1,2"])  # fmt: skip
    assert r.exit_code == 1 and "--sensor-origin must be three finite numbers" in r.output, r.output
    assert not (tmp_path / "s").exists()
