"""Reconstruction accuracy against ground truth: Chamfer distance, true meshes of a session, object matching.

Used by the tests and benchmarks that score reconstructions of sessions with a ``ground_truth.json`` (sample_data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh


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
    from scipy.optimize import linear_sum_assignment

    cost = np.array([[np.linalg.norm(t.mesh.centroid - r.centroid) for r in recs] for t in truth])
    rows, cols = linear_sum_assignment(cost)
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True)]
