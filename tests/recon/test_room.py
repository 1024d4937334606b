"""Room scans on real Kinect frames: the office (floor as support, walls and furniture static, package rests), the
grabber frames (floor as support, laptop and box as objects), and tabletops that stay off the room route."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from real2sim.recon.io import read_points
from real2sim.recon.pointcloud.run import PointCloudReconCfg, run_recon_pointcloud
from real2sim.recon.rooms.planes import detect_room
from tests.helpers.blas import cpu_kernels, folder_digest, two_kernels
from tests.helpers.floor_reference import (
    GRABBER_BOX,
    GRABBER_FLOOR_WINDOW,
    GRABBER_LAPTOP,
    OFFICE_FLOOR_WINDOW,
    angle_deg,
    floor_in_input,
    reference_floor,
)


def test_office_floor_walls_furniture_and_package_rests(shared_data: Path, tmp_path: Path) -> None:
    from real2sim.export.config import ExportCfg, ValidateCfg
    from real2sim.export.package import export_scene

    path = shared_data / "pointclouds" / "pcl_office" / "office1.pcd"
    cloud = read_points(path)
    out = run_recon_pointcloud(PointCloudReconCfg(inputs=(path,)))
    ref = reference_floor(cloud, OFFICE_FLOOR_WINDOW, 0.04)
    assert angle_deg(floor_in_input(out.world_from_input), ref) <= 2.0
    sensor_height = (out.world_from_input @ [0.0, 0.0, 0.0, 1.0])[2]
    assert 1.0 < sensor_height < 1.8  # a Kinect held at head height
    objs = out.scene.objects
    walls = [o for o in objs if o.name.startswith("wall")]
    assert len(walls) >= 3 and all(o.role == "static" and len(o.mesh.faces) == 12 for o in walls)
    assert any(o.name.startswith("furniture") and o.role == "static" for o in objs)
    dynamic = [o for o in objs if o.role == "dynamic"]
    assert dynamic and all(o.mesh.is_watertight and o.mesh_in_world().bounds[0, 2] >= -1e-6 for o in dynamic)
    labels = out.point_labels.reshape(cloud.height, cloud.width)
    valid = cloud.valid_mask().reshape(cloud.height, cloud.width)
    assert (labels[OFFICE_FLOOR_WINDOW] == 0)[valid[OFFICE_FLOOR_WINDOW]].mean() > 0.9
    # Export with each movable object's convex hull (CoACD on a noisy 1 m object takes a minute; the CLI run in
    # docs/rooms.md exports the full scene): static walls and furniture boxes, dynamic objects resting on the floor.
    hulls = tuple(replace(o, mesh=o.mesh.convex_hull) if o.role == "dynamic" else o for o in objs)
    vcfg = ValidateCfg(engines=(), check_urdf=False, sim_seconds=1.0)
    cfg = ExportCfg(
        formats=("mjcf",), workers=1, render=False, cache_dir=tmp_path / "cache", validate_cfg=vcfg
    )
    pkg = export_scene(replace(out.scene, objects=hulls), tmp_path / "pkg", cfg)  # raises when a check fails
    assert (pkg.path / "scene.xml").is_file()


def test_office_room_in_any_frame(shared_data: Path) -> None:
    cloud = read_points(shared_data / "pointclouds" / "pcl_office" / "office1.pcd")
    pts = cloud.points[cloud.valid_mask()]
    ref = reference_floor(cloud, OFFICE_FLOOR_WINDOW, 0.04)
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    R = q * np.sign(np.linalg.det(q))
    t = np.array([120.0, -40.0, 3.0])
    fit, why = detect_room(pts @ R.T + t, t, None, 0)
    assert fit is not None, why
    assert angle_deg(fit.floor.normal, R @ ref) <= 2.0
    assert abs(fit.floor.distance(t) - 1.36) < 0.1  # the sensor's height above the floor


@pytest.mark.parametrize("scan", ["test0", "test12"])
def test_tabletops_are_not_rooms(shared_data: Path, scan: str) -> None:
    cloud = read_points(shared_data / "pointclouds" / "osd_tabletop" / f"{scan}.pcd")
    fit, why = detect_room(cloud.points[cloud.valid_mask()], np.zeros(3), None, 0)
    assert fit is None and why


def test_grabber_floor_is_support_with_laptop_and_box(shared_data: Path) -> None:
    path = shared_data / "pointclouds" / "pcl_grabber" / "frame_20121214T142255.814212.pcd"
    cloud = read_points(path)
    out = run_recon_pointcloud(PointCloudReconCfg(inputs=(path,)))
    assert (
        angle_deg(floor_in_input(out.world_from_input), reference_floor(cloud, GRABBER_FLOOR_WINDOW, 0.02))
        <= 2.0
    )
    labels = out.point_labels.reshape(cloud.height, cloud.width)
    valid = cloud.valid_mask().reshape(cloud.height, cloud.width)
    assert (labels[GRABBER_FLOOR_WINDOW] == 0)[valid[GRABBER_FLOOR_WINDOW]].mean() > 0.9
    for box in (GRABBER_LAPTOP, GRABBER_BOX):  # one object covers most of each thing's image box
        lab = labels[box]
        top = np.bincount(lab[lab > 0]).argmax()
        assert (lab == top).mean() > 0.4
    laptop = np.bincount(labels[GRABBER_LAPTOP][labels[GRABBER_LAPTOP] > 0]).argmax()
    box = np.bincount(labels[GRABBER_BOX][labels[GRABBER_BOX] > 0]).argmax()
    assert laptop != box and all(o.role == "dynamic" for o in out.scene.objects)


@pytest.mark.slow
def test_office_scene_files_are_the_same_under_two_blas_kernels(shared_data: Path, tmp_path: Path) -> None:
    """The room route rounds its frame and places walls, furniture and objects without BLAS: the scene files
    (frame, boxes, meshes) do not depend on which OpenBLAS kernel the CPU picks."""
    kernels = two_kernels()
    if len(kernels) < 2:
        pytest.skip(f"this CPU runs fewer than two OpenBLAS kernels ({cpu_kernels()})")
    path = shared_data / "pointclouds" / "pcl_office" / "office1.pcd"
    digests = {}
    for k in kernels:
        out = tmp_path / k
        env = {**os.environ, "OPENBLAS_CORETYPE": k}
        cmd = [sys.executable, "-m", "real2sim", "-q", "recon", "pointcloud", str(path), "-o", str(out)]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        assert len(list((out / "meshes").glob("wall_*.ply"))) >= 3
        digests[k] = folder_digest(out)
    assert len(set(digests.values())) == 1, digests
