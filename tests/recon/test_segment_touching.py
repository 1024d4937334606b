"""Segmentation and carving on ray-cast synthetic scans (seeded, with exact ground truth): separated objects,
implausible sensor origins, touching objects side by side and a box stacked on a box (split by default)."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from real2sim.matching import match_pairs
from real2sim.recon.io import PointCloud
from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.scene import points_to_scene
from tests.helpers.synthetic_scan import box, cylinder, scan_views


def _scan(meshes: list[trimesh.Trimesh], seed: int = 0) -> tuple[PointCloud, np.ndarray]:
    """Three sensors around the scene, 0.5 m up, 1 mm range noise; the merged cloud in the world frame with each
    point's sensor origin, and the index of the mesh each point lies on."""
    eyes = [np.array([0.6 * np.cos(az), 0.6 * np.sin(az), 0.5]) for az in (-2.2, 0.3, 2.4)]
    return scan_views(meshes, eyes, np.array([0.0, 0.0, 0.03]), fov_deg=60.0, noise=0.001, seed=seed)


def _reconstruct(
    meshes: list[trimesh.Trimesh], cfg: PointCloudReconCfg | None = None
) -> tuple[list[trimesh.Trimesh], np.ndarray]:
    """Objects (world-frame meshes) and the IoU matrix (true object x reconstructed object) of point labels."""
    cloud, truth = _scan(meshes)
    out = points_to_scene(cloud, cfg or PointCloudReconCfg(), up=np.array([0.0, 0.0, 1.0]), keep_xy=True)
    n_true = len(meshes) - 1  # mesh 0 is the table
    iou = np.zeros((n_true, len(out.scene.objects)))
    for i in range(n_true):
        for k in range(len(out.scene.objects)):
            a, b = truth == i + 1, out.point_labels == k + 1
            iou[i, k] = (a & b).sum() / (a | b).sum()
    return [o.mesh_in_world() for o in out.scene.objects], iou


TABLE = box((1.0, 0.8, 0.05), (0.0, 0.0), z0=-0.05)


def test_separated_objects_segmented_and_carved() -> None:
    objs = [box((0.10, 0.07, 0.05), (-0.08, 0.0), yaw=0.3), cylinder(0.035, 0.09, (0.08, 0.02))]
    recs, iou = _reconstruct([TABLE, *objs])
    assert len(recs) == 2
    best = iou.argmax(axis=1)
    assert sorted(best.tolist()) == [0, 1] and iou.max(axis=1).min() >= 0.9, iou
    for t, j in zip(objs, best, strict=True):
        r = recs[j]
        assert r.is_watertight and r.is_winding_consistent and r.bounds[0, 2] >= -1e-6
        # the unseen underside is closed against the table and nothing carved away: volume within 5 %
        assert abs(r.volume - t.volume) / t.volume <= 0.05, (r.volume, t.volume)


def test_implausible_sensor_origins_are_not_trusted() -> None:
    """A world-frame cloud read as if each point were seen from (0, 0, 0) (on the table, below nothing): carving
    from there would hollow the objects, so the origins are ignored and the meshes still match the truth."""
    objs = [box((0.10, 0.07, 0.05), (-0.08, 0.0), yaw=0.3), cylinder(0.035, 0.09, (0.08, 0.02))]
    cloud, _ = _scan([TABLE, *objs])
    wrong = PointCloud(cloud.points, sensor_origin=np.zeros(3))
    out = points_to_scene(wrong, PointCloudReconCfg(), up=np.array([0.0, 0.0, 1.0]), keep_xy=True)
    recs = sorted((o.mesh_in_world() for o in out.scene.objects), key=lambda m: m.centroid[0])
    assert len(recs) == 2
    for t, r in zip(objs, recs, strict=True):
        assert r.is_watertight and abs(r.volume - t.volume) / t.volume <= 0.05, (r.volume, t.volume)


@pytest.mark.parametrize("layout", ["side_by_side", "stacked"])
def test_touching_objects_split(layout: str) -> None:
    """With the default convexity split (LCCP), two boxes side by side and a box stacked on a box come apart;
    with it turned off each pair is one cluster."""
    if layout == "side_by_side":
        objs = [box((0.10, 0.08, 0.12), (-0.05, 0.0)), box((0.08, 0.10, 0.06), (0.04, 0.0))]
    else:
        objs = [box((0.14, 0.10, 0.06), (0.0, 0.0)), box((0.07, 0.06, 0.05), (0.01, 0.0), z0=0.06, yaw=0.4)]
    recs, iou = _reconstruct([TABLE, *objs])
    assert len(recs) == 2
    pairs = match_pairs(-iou)
    assert sorted(j for _, j, _ in pairs) == [0, 1] and min(iou[i, j] for i, j, _ in pairs) >= 0.8, iou
    merged, _ = _reconstruct([TABLE, *objs], PointCloudReconCfg(concave_split=None))
    assert len(merged) == 1
