"""Reconstruction accuracy against ground truth: Chamfer distance, true meshes of a session, object matching.

Used by the tests and benchmarks that score reconstructions of sessions with a ``ground_truth.json`` (sample_data):
the point-cloud path (``match_by_centroid``) and the photos path (``evaluate_photos``, ``evaluate_photos_output``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from real2sim.matching import match_pairs


def chamfer_distance(a: trimesh.Trimesh, b: trimesh.Trimesh, samples: int = 20000) -> float:
    """Symmetric Chamfer distance [m]: mean of the two mean nearest-sample distances (seeded surface samples)."""
    from scipy.spatial import cKDTree

    pa = trimesh.sample.sample_surface(a, samples, seed=0)[0]
    pb = trimesh.sample.sample_surface(b, samples, seed=1)[0]
    return float(0.5 * (cKDTree(pb).query(pa)[0].mean() + cKDTree(pa).query(pb)[0].mean()))


@dataclass(frozen=True)
class TrueObject:
    """A ground-truth object: its name, its mesh placed in the world frame, its true volume [m^3]."""

    name: str
    mesh: trimesh.Trimesh
    volume: float


def true_objects(session: str | Path) -> list[TrueObject]:
    """The objects of ``session/ground_truth.json``, meshes placed by their ``world_from_object``."""
    from real2sim.meshio import load_mesh

    session = Path(session)
    gt = json.loads((session / "ground_truth.json").read_text())
    out = []
    for o in gt["objects"]:
        m = load_mesh(session / o["mesh"])
        m.apply_transform(np.asarray(o["world_from_object"]))
        out.append(TrueObject(o["name"], m, float(o["volume"])))
    return out


def match_by_centroid(truth: list[TrueObject], recs: list[trimesh.Trimesh]) -> list[tuple[int, int]]:
    """One-to-one (truth index, reconstruction index) pairs minimising the summed centroid distance."""
    cost = np.array([[np.linalg.norm(t.mesh.centroid - r.centroid) for r in recs] for t in truth])
    return [(i, j) for i, j, _ in match_pairs(cost)]


def evaluate_photos(session: str | Path, out: Path) -> dict:
    """Reconstruct ``session/images`` (``recon photos --marker-size 0.08``) into ``out`` in this process and compare
    with the ground truth (``evaluate_photos_output``); ``result``: the ``run_recon_photos`` value."""
    from real2sim.recon.photos.run import PhotosReconCfg, run_recon_photos

    session = Path(session)
    res = run_recon_photos(PhotosReconCfg(image_dir=session / "images", out_dir=out, marker_size=0.08))
    return {"result": res, **evaluate_photos_output(session, out)}


def evaluate_photos_output(session: str | Path, out: Path) -> dict:
    """Compare the photo reconstruction written to ``out`` with ``session/ground_truth.json``: pose errors, marker
    scale against the truth, Chamfer per object; the frames are tied by a rigid fit of the camera centres.
    ``report``: the run's ``sfm_report.json``."""
    from real2sim.recon.photos.align import Similarity, camera_centre, pose_errors, umeyama
    from real2sim.scene import load_scene

    session = Path(session)
    gt = json.loads((session / "ground_truth.json").read_text())
    ref = {Path(i["file"]).name: np.asarray(i["cam_from_world"]) for i in gt["images"]}
    cams = {
        c["file"]: np.asarray(c["cam_from_world"])
        for c in json.loads((out / "cameras.json").read_text())["cameras"]
    }
    errors = pose_errors(cams, ref)
    names = sorted(set(cams) & set(ref))
    c_est = np.array([camera_centre(cams[n]) for n in names])
    c_ref = np.array([camera_centre(ref[n]) for n in names])
    rigid = umeyama(c_est, c_ref, with_scale=False)
    to_gt = Similarity(1.0, rigid.rotation, rigid.translation)
    truth = [(t.name, t.mesh) for t in true_objects(session)]
    scene = load_scene(out)
    chamfer = {}
    for ob in scene.objects:
        m = ob.mesh_in_world()
        m.vertices = to_gt.apply(m.vertices)
        name, tm = min(truth, key=lambda t: np.linalg.norm(t[1].bounds.mean(0)[:2] - m.bounds.mean(0)[:2]))
        chamfer[f"{ob.name}->{name}"] = chamfer_distance(m, tm)
    return {"report": json.loads((out / "sfm_report.json").read_text()), "errors": errors,
            "scale_vs_truth": umeyama(c_est, c_ref).scale, "chamfer": chamfer,
            "n_truth": len(truth), "matched": {k.split("->")[1] for k in chamfer}}  # fmt: skip
