"""How well a solid mesh stands for a splat, scored against all its opaque Gaussians (not only those kept):
coverage (centres inside the solid or within a tolerance of its surface), the unsigned surface figure, precision
(surface samples within the tolerance of an opaque centre), genus and volume against the convex hull's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import cKDTree


@dataclass(frozen=True)
class SolidScore:
    """Fractions in 0..1; ``tol`` in the mesh's unit."""

    tol: float
    coverage: float
    """Opaque centres inside the solid or within ``tol`` of its surface."""
    on_surface: float
    """Opaque centres within ``tol`` of the surface (interior Gaussians deeper than ``tol`` count as misses)."""
    precision: float
    """Area-uniform surface samples within ``tol`` of an opaque centre."""
    genus: int
    watertight: bool
    hull_ratio: float
    """Volume over the convex hull's volume."""


def genus(mesh: trimesh.Trimesh) -> int:
    """Total genus of a closed mesh: sum over its closed parts of 1 - euler/2."""
    return int(len(mesh.split(only_watertight=False)) - mesh.euler_number // 2)


def score_solid(
    mesh: trimesh.Trimesh, centres: np.ndarray, tol_frac: float = 0.02, samples: int = 20000
) -> SolidScore:
    """Score ``mesh`` against the opaque Gaussians' ``centres`` (same frame) at ``tol_frac`` of the mesh's height
    (its z extent: the scene is gravity-aligned)."""
    tol = tol_frac * float(mesh.extents[2])
    _, d, _ = trimesh.proximity.closest_point(mesh, centres)
    near = d <= tol
    inside = np.zeros(len(centres), dtype=bool)
    if mesh.is_watertight:
        inside[~near] = mesh.contains(centres[~near])
    pts, _ = trimesh.sample.sample_surface_even(mesh, samples, seed=0)
    dp, _ = cKDTree(centres).query(pts)
    return SolidScore(
        tol=tol,
        coverage=float(np.mean(near | inside)),
        on_surface=float(np.mean(near)),
        precision=float(np.mean(dp <= tol)),
        genus=genus(mesh),
        watertight=bool(mesh.is_watertight),
        hull_ratio=float(mesh.volume / mesh.convex_hull.volume),
    )
