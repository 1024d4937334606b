"""Scan colours reach the object meshes (nearest coloured points) without changing their geometry, and survive
saving the scene."""

from __future__ import annotations

import numpy as np

from real2sim.recon.io import PointCloud
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.scene import points_to_scene
from real2sim.scene import load_scene, save_scene
from tests.helpers.synthetic_scan import tabletop

COLOURS = np.array([[0.6, 0.5, 0.4], [0.9, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.2, 0.9], [0.9, 0.8, 0.1]])
"""Table, then one colour per object of ``tabletop``."""


def test_object_meshes_carry_the_scan_colours_and_keep_their_geometry(tmp_path):
    scan, _ = tabletop(40000, seed=1)
    cfg = PointCloudReconCfg(inputs=())
    plain = points_to_scene(PointCloud(scan.points), cfg)
    coloured = points_to_scene(PointCloud(scan.points, colors=COLOURS[scan.labels]), cfg)
    assert len(plain.scene.objects) == len(coloured.scene.objects) == 4
    for a, b in zip(plain.scene.objects, coloured.scene.objects, strict=True):
        assert np.array_equal(a.mesh.vertices, b.mesh.vertices) and np.array_equal(a.mesh.faces, b.mesh.faces)
        assert np.array_equal(a.world_from_object, b.world_from_object)
        assert a.mesh.visual.kind != "vertex" and b.mesh.visual.kind == "vertex"
        c = np.asarray(b.mesh.visual.vertex_colors)[:, :3] / 255.0
        truth = COLOURS[1:][np.argmin(np.abs(COLOURS[1:] - np.asarray(b.rgba[:3])).sum(axis=1))]
        assert np.mean(np.abs(c - truth).max(axis=1) < 0.1) > 0.9, b.name  # the object's own colour
    save_scene(coloured.scene, tmp_path / "s")
    back = load_scene(tmp_path / "s")
    for a, b in zip(coloured.scene.objects, back.objects, strict=True):
        assert np.array_equal(
            np.asarray(a.mesh.visual.vertex_colors), np.asarray(b.mesh.visual.vertex_colors)
        )
