"""Packages from real and sample scans (recon's run_recon_pointcloud) and the bunny reference mesh pass every check."""

from __future__ import annotations

import numpy as np
import trimesh
from real2sim.export.config import ExportCfg
from real2sim.export.package import export_scene

from real2sim.scene import Scene, SceneObject, Support


def _assert_ok(pkg, n_objects: int) -> None:
    failed = [c for c in pkg.checks if not c.passed]
    assert not failed, failed
    assert sum(c.name.startswith("rest drift") for c in pkg.checks) == n_objects
    assert all(c.value < 1e-3 for c in pkg.checks if c.name.startswith("rest drift"))
    pen = next(c for c in pkg.checks if c.name == "initial penetration")
    assert pen.value <= 1e-3


def test_bunny_reference_mesh_exports(bunny_path, tmp_path, cache_dir):
    m = trimesh.load(bunny_path, process=False)  # not watertight: repaired
    m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))  # the scan is y-up
    m.apply_translation(-m.bounds.mean(axis=0))
    t = np.eye(4)
    t[2, 3] = -m.bounds[0][2]
    pkg = export_scene(Scene(Support(), (SceneObject("bunny", m, t),)), tmp_path / "bunny",
                       ExportCfg(workers=1, cache_dir=cache_dir))
    _assert_ok(pkg, 1)
    hulls = next(c for c in pkg.checks if c.name == "hull budget bunny")
    assert 1 < hulls.value <= 32
    assert "pymeshfix" in (pkg.path / "README.md").read_text()


def _recon(inputs, tmp_path, poses=None):
    from real2sim.recon.pointcloud import run_recon_pointcloud
    from real2sim.recon.pointcloud_cfg import PointCloudReconCfg

    out = run_recon_pointcloud(PointCloudReconCfg(inputs=tuple(inputs), poses=poses, out_dir=tmp_path / "scene"))
    return out.scene


def test_osd_test0_scene_exports(shared_data, tmp_path, cache_dir):
    scene = _recon([shared_data / "pointclouds" / "osd_tabletop" / "test0.pcd"], tmp_path)
    assert len(scene.objects) == 2
    pkg = export_scene(scene, tmp_path / "osd", ExportCfg(cache_dir=cache_dir))
    _assert_ok(pkg, 2)


def test_sample_scene_exports(sample_data, tmp_path, cache_dir):
    import tomllib

    s = tomllib.loads((sample_data / "session.toml").read_text())
    scene = _recon([sample_data / f for f in s["lidar"]["files"]], tmp_path, sample_data / s["lidar"]["poses"])
    assert len(scene.objects) >= 1
    pkg = export_scene(scene, tmp_path / "sample", ExportCfg(cache_dir=cache_dir))
    _assert_ok(pkg, len(scene.objects))
