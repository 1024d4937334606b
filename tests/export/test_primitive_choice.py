"""Primitive or hulls for partly seen objects: a primitive that fits only within the looser ``primitive_tolerance``
(OSD test36 object_1, an oval tin under a round cylinder) gives way to hulls that are closer; scanned and
ground-truth boxes and cans stay primitives, without a decomposition (docs/collision.md, "Primitives of partly seen
objects")."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from real2sim.export.collision import geometry
from real2sim.export.collision.geometry import collision_geometry, hausdorff
from real2sim.export.collision.hulls import convex_hull, limit_points
from real2sim.export.collision.primitives import fit_primitive
from real2sim.export.config import ExportCfg
from real2sim.export.objects.repair import repair_mesh

OBJ2MJCF_TEST36_OBJECT_1 = (5.0, 3.13)
"""obj2mjcf's (CoACD defaults, 26 hulls) Hausdorff to OSD test36 object_1's mesh and 95th percentile distance of the
object's labelled Kinect points to its hulls' union [mm] (docs/collision.md)."""


@pytest.fixture(scope="module")
def test36(shared_data):
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    return run_recon_pointcloud(
        PointCloudReconCfg(inputs=(shared_data / "pointclouds" / "osd_tabletop" / "test36.pcd",))
    )


@pytest.fixture(scope="module")
def oval(test36) -> trimesh.Trimesh:
    return repair_mesh(next(o for o in test36.scene.objects if o.name == "object_1").mesh, "object_1").mesh


def _capture_p95(test36, shared_data, pieces: list[trimesh.Trimesh]) -> float:
    """95th percentile distance [mm] of object_1's ground-truth-labelled Kinect points to the pieces' union."""
    from real2sim.export.collision.fidelity import Surface, union_surface
    from real2sim.recon.io import read_points
    from tests.helpers.osd import truth_labels

    cloud = read_points(shared_data / "pointclouds" / "osd_tabletop" / "test36.pcd")
    pts = cloud.points[cloud.valid_mask()]
    labels = truth_labels(cloud)
    obj = next(o for o in test36.scene.objects if o.name == "object_1")
    object_from_input = np.linalg.inv(obj.world_from_object) @ test36.world_from_input
    pts = pts @ object_from_input[:3, :3].T + object_from_input[:3, 3]
    centre = obj.mesh.bounds.mean(axis=0)
    label = min(
        (g for g in np.unique(labels) if g > 0),
        key=lambda g: np.linalg.norm(pts[labels == g].mean(axis=0) - centre),
    )
    u = union_surface(pieces)
    return float(np.percentile(Surface([u], u.bounds.mean(axis=0)).distance(pts[labels == label]), 95) * 1e3)


def test_oval_tin_takes_hulls_closer_than_its_cylinder(test36, oval, shared_data):
    """test36 object_1 fits a cylinder only within ``primitive_tolerance`` (its section is oval); the hulls are
    closer to the mesh and to the Kinect's points than the cylinder and than obj2mjcf's hulls."""
    cfg = ExportCfg(cache=False)
    prim = fit_primitive(oval, cfg.primitive_tolerance, seed=cfg.seed)
    assert prim is not None and prim.kind == "cylinder"
    assert cfg.fidelity_tolerance < prim.error <= cfg.primitive_tolerance
    col = collision_geometry(oval, cfg)
    assert col.primitive is None and 1 < len(col.hulls) <= cfg.max_hulls
    h_hulls = hausdorff(oval, col.meshes(), cfg.seed) * 1e3
    assert h_hulls < hausdorff(oval, [prim.to_mesh()], cfg.seed) * 1e3
    assert h_hulls <= OBJ2MJCF_TEST36_OBJECT_1[0]
    p95 = _capture_p95(test36, shared_data, col.meshes())
    assert p95 <= OBJ2MJCF_TEST36_OBJECT_1[1]
    assert p95 < _capture_p95(test36, shared_data, [prim.to_mesh()])


def test_primitive_kept_when_the_hulls_are_no_closer(oval, monkeypatch):
    """Past ``fidelity_tolerance`` the primitive still wins when the hulls the route gives are no closer (a tight
    budget: here the one hull cut to 8 vertices)."""
    one = convex_hull(limit_points(np.asarray(oval.vertices), 8))
    monkeypatch.setattr(geometry, "run_coacd", lambda mesh, cfg, threads=1: [one])
    col = collision_geometry(oval, ExportCfg(cache=False))
    assert col.primitive is not None and col.primitive.kind == "cylinder" and not col.hulls


def test_scanned_box_and_can_take_no_decomposition(sample_data, tmp_path, monkeypatch):
    """The demo's scanned box and can fit within ``fidelity_tolerance``: primitives, and CoACD runs only for the mug
    and the stone."""
    import tomllib

    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    s = tomllib.loads((sample_data / "session.toml").read_text())
    scene = run_recon_pointcloud(
        PointCloudReconCfg(
            inputs=tuple(sample_data / f for f in s["lidar"]["files"]),
            poses=sample_data / s["lidar"]["poses"],
            out_dir=tmp_path / "scene",
        )
    ).scene
    runs = []

    def no_coacd(mesh, cfg, threads=1):
        runs.append(mesh)
        return [convex_hull(limit_points(np.asarray(mesh.vertices), cfg.max_hull_vertices))]

    monkeypatch.setattr(geometry, "run_coacd", no_coacd)
    kinds = []
    for o in scene.objects:
        col = collision_geometry(repair_mesh(o.mesh, o.name).mesh, ExportCfg(cache=False))
        kinds.append(col.primitive.kind if col.primitive is not None else "hulls")
    assert sorted(kinds) == ["box", "cylinder", "hulls", "hulls"]
    assert len(runs) == 2


@pytest.mark.parametrize("name, kind", [("box", "box"), ("cylinder", "cylinder")])
def test_ground_truth_primitives_stay(sample_data, name, kind):
    m = trimesh.load(sample_data / "ground_truth" / "meshes" / f"{name}.ply", process=False)
    col = collision_geometry(repair_mesh(m, name).mesh, ExportCfg(cache=False))
    assert col.primitive is not None and col.primitive.kind == kind
