"""Shared fixtures for export tests: synthetic scenes with known mass properties, exported once per session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from real2sim.scene import Scene, SceneObject, Support
from tests.conftest import run_once, shared_dir


def at(x: float, y: float, z: float, yaw: float = 0.0) -> np.ndarray:
    t = trimesh.transformations.rotation_matrix(yaw, [0, 0, 1])
    t[:3, 3] = [x, y, z]
    return t


def l_shape() -> trimesh.Trimesh:
    """A non-convex L block (union of two boxes), off-centre, so its inertia has products."""
    a = trimesh.creation.box((0.12, 0.04, 0.04))
    b = trimesh.creation.box((0.04, 0.04, 0.10))
    b.apply_translation([0.04, 0.0, 0.07])
    m = trimesh.boolean.union([a, b], engine="manifold")
    m.apply_translation([0.01, 0.02, 0.02])
    return m


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One decomposition cache for the run, shared by the xdist workers (the cache is safe to share: entries are
    content-addressed, written atomically and computed once under a lock)."""
    return shared_dir(tmp_path_factory, "coacd_cache")


@pytest.fixture(scope="session")
def synthetic_scene() -> Scene:
    objs = (
        SceneObject("box", trimesh.creation.box((0.10, 0.16, 0.05)), at(0.0, 0.0, 0.025, 0.3), density=700.0),
        SceneObject(
            "can", trimesh.creation.cylinder(0.035, 0.12, sections=256), at(0.25, 0.0, 0.06), mass=0.4
        ),
        SceneObject("ball", trimesh.creation.icosphere(5, 0.04), at(-0.25, 0.0, 0.04), density=300.0),
        SceneObject("L block", l_shape(), at(0.0, 0.25, 0.0), density=900.0),
        SceneObject('my "mug" <1> é', trimesh.creation.box((0.06, 0.06, 0.08)), at(0.0, -0.25, 0.04)),
    )
    return Scene(Support(size=(1.0, 1.0)), objs)


@pytest.fixture(scope="session")
def synthetic_package(synthetic_scene, tmp_path_factory, cache_dir):
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene

    cfg = ExportCfg(workers=1, cache_dir=cache_dir)
    return run_once(tmp_path_factory, "pkg", lambda out: export_scene(synthetic_scene, out / "synth", cfg))


@pytest.fixture(scope="session")
def bunny_path(shared_data) -> Path:
    p = shared_data / "pointclouds" / "bunny_scans" / "reference_bun_zipper_res2.ply"
    if not p.is_file():
        pytest.skip(f"{p} not present")
    return p


@pytest.fixture(scope="session")
def osd12_package(shared_data, tmp_path_factory, cache_dir):
    """The package (mjcf, urdf, usd) of the scene recon makes from the real OSD test12 Kinect scan (3 boxes)."""
    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    pcd = shared_data / "pointclouds" / "osd_tabletop" / "test12.pcd"
    cfg = ExportCfg(cache_dir=cache_dir, formats=("mjcf", "urdf", "usd"))

    def build(out: Path):
        scene = run_recon_pointcloud(PointCloudReconCfg(inputs=(pcd,), out_dir=out / "scene")).scene
        return export_scene(scene, out / "package", cfg)

    return run_once(tmp_path_factory, "osd12", build)
