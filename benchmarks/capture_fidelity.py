"""Fidelity to the capture: how far the collision geometry lies from what the sensor saw, not from the mesh made of it.

A reconstructed mesh carries the scan's noise (the sample scans: 2 mm, ``ground_truth.json``), so a Hausdorff
distance to that mesh rewards collision geometry that follows the noise. Two figures that do not:

- ``capture``: each object's labelled sensor points (OSD: the dataset's ground-truth labels; the sample scans:
  ``ground_truth/lidar_labels``), in the object's frame, and their distance to the surface of the union of its
  collision pieces: mean, 95th percentile and max [mm]. The points carry the sensor's noise, the same for both tools.
- ``truth`` (the sample tabletop only): ``hull_fidelity``'s symmetric Hausdorff [mm] of the collision geometry
  against the true object (its ground-truth mesh at its true pose, in the reconstructed object's frame), and the
  mean distance [mm] from the true surface (20,000 samples) to the collision surface, which the Hausdorff, set by
  the reconstruction's unseen parts, hides.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import trimesh

NEAR = 0.005
"""A labelled point within this [m] of an object's mesh counts for that object when labels are matched to objects."""


def capture_mm(points: np.ndarray, meshes: list[trimesh.Trimesh]) -> list[float]:
    """Mean, 95th percentile and max [mm] of the distances from ``points`` to the union surface of ``meshes``."""
    from real2sim.export.collision.fidelity import Surface, union_surface

    u = union_surface(meshes)
    d = Surface([u], u.bounds.mean(axis=0)).distance(points) * 1e3
    return [float(d.mean()), float(np.percentile(d, 95)), float(d.max())]


def labelled_points(scene_name: str, scene, root: Path, shared: Path) -> dict[str, np.ndarray]:
    """Each object's captured points in its own frame, by the dataset's labels; {} where the scene has none."""
    from real2sim.recon.io import read_points

    clouds: list[tuple[np.ndarray, np.ndarray]] = []  # (world points, labels > 0 for objects)
    if scene_name.startswith("osd_"):
        path = shared / "pointclouds" / "osd_tabletop" / f"{scene_name.removeprefix('osd_')}.pcd"
        cloud = read_points(path)
        keep = cloud.valid_mask()
        lab = cloud.labels[keep]
        clouds.append(
            (
                trimesh.transform_points(cloud.points[keep], scene.world_from_input[path.name]),
                np.where(lab >= 10, lab // 10, 0),
            )
        )
    elif scene_name == "sample_tabletop":
        gt = json.loads((root / "sample_data" / "ground_truth.json").read_text())
        for s in gt["lidar"]:
            cloud = read_points(root / "sample_data" / s["file"])
            lab = np.load(root / "sample_data" / s["labels"])
            clouds.append(
                (trimesh.transform_points(cloud.points, scene.world_from_input[Path(s["file"]).name]), lab)
            )
    if not clouds:
        return {}
    pts = np.vstack([c[0] for c in clouds])
    lab = np.concatenate([c[1] for c in clouds])
    return {o.name: _object_points(o, pts, lab) for o in scene.objects}


def _object_points(o, pts: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """The points (object frame) of the label with the most points within ``NEAR`` of the object's mesh."""
    from real2sim.export.collision.fidelity import Surface

    local = trimesh.transform_points(pts, np.linalg.inv(o.world_from_object))
    lo, hi = o.mesh.bounds[0] - 0.02, o.mesh.bounds[1] + 0.02
    box = np.all((local >= lo) & (local <= hi), axis=1) & (lab > 0)
    if not box.any():
        return np.zeros((0, 3))
    near = Surface([o.mesh], o.mesh.bounds.mean(axis=0)).distance(local[box]) <= NEAR
    ids, counts = np.unique(lab[box][near], return_counts=True)
    if not len(ids):
        return np.zeros((0, 3))
    return local[lab == ids[np.argmax(counts)]]


def truth_meshes(scene, root: Path) -> dict[str, trimesh.Trimesh]:
    """The sample tabletop's true meshes, each in the frame of the reconstructed object nearest it."""
    gt = json.loads((root / "sample_data" / "ground_truth.json").read_text())
    true = []
    for g in gt["objects"]:
        m = trimesh.load(root / "sample_data" / g["mesh"], process=False)
        true.append(m.apply_transform(np.asarray(g["world_from_object"], dtype=np.float64)))
    out = {}
    for o in scene.objects:
        c = trimesh.transform_points(o.mesh.bounds.mean(axis=0)[None], o.world_from_object)[0]
        m = min(true, key=lambda t: float(np.linalg.norm(t.bounds.mean(axis=0) - c)))
        out[o.name] = m.copy().apply_transform(np.linalg.inv(o.world_from_object))
    return out


def capture_figures(scene_name: str, scene, meshes_of, root: Path, shared: Path) -> dict:
    """``capture_mm`` (per object [mean, p95, max] mm, or None) and, for the sample tabletop, ``truth_mm`` and
    ``truth_mean_mm`` (per object Hausdorff and mean distance mm to the true mesh) of the collision geometry
    ``meshes_of(object)``."""
    from real2sim.export.collision.fidelity import hull_fidelity

    pts = labelled_points(scene_name, scene, root, shared)
    out: dict = {}
    if pts:
        out["capture_mm"] = [
            capture_mm(pts[o.name], meshes_of(o)) if len(pts[o.name]) else None for o in scene.objects
        ]
    if scene_name == "sample_tabletop":
        truth = truth_meshes(scene, root)
        out["truth_mm"] = [
            hull_fidelity(truth[o.name], meshes_of(o), samples=20000).hausdorff * 1e3 for o in scene.objects
        ]
        out["truth_mean_mm"] = [
            capture_mm(trimesh.sample.sample_surface(truth[o.name], 20000, seed=0)[0], meshes_of(o))[0]
            for o in scene.objects
        ]
    return out
