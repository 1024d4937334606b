"""Make an object mesh a watertight, consistently oriented manifold (trimesh clean-up, pymeshfix hole filling).

Problems that can be repaired (NaN vertices, duplicate/degenerate faces, flipped winding, holes, non-manifold
edges) are repaired and reported as warnings; meshes that cannot hold a solid (empty, flat) are refused with one
``InputError`` line naming the object.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from trimesh.visual import ColorVisuals

from real2sim.errors import InputError
from real2sim.stdio import native_output_silenced


@dataclass(frozen=True)
class RepairResult:
    """A watertight mesh (vertex colours carried over where the input had them) and what was done to it."""

    mesh: trimesh.Trimesh
    warnings: tuple[str, ...]


def _vertex_colors(mesh: trimesh.Trimesh) -> np.ndarray | None:
    if isinstance(mesh.visual, ColorVisuals) and mesh.visual.kind == "vertex":
        c = np.asarray(mesh.visual.vertex_colors, dtype=np.uint8)
        if c.shape == (len(mesh.vertices), 4):
            return c
    return None


def transfer_colors(dst: trimesh.Trimesh, src_vertices: np.ndarray, src_colors: np.ndarray | None) -> None:
    """Give ``dst`` the colour of the nearest ``src`` vertex (after repair or decimation moved vertices)."""
    if src_colors is None or len(src_vertices) == 0:
        return
    from scipy.spatial import cKDTree

    _, idx = cKDTree(src_vertices).query(dst.vertices)
    dst.visual = ColorVisuals(dst, vertex_colors=src_colors[idx])


def _is_solid(m: trimesh.Trimesh) -> bool:
    return bool(len(m.faces) > 0 and m.is_watertight and m.is_winding_consistent and m.volume > 0)


def repair_mesh(mesh: trimesh.Trimesh, where: str) -> RepairResult:
    """A watertight, outward-oriented copy of ``mesh``; ``where`` names the object in messages."""
    warnings: list[str] = []
    v = np.asarray(mesh.vertices, dtype=np.float64)
    f = np.asarray(mesh.faces, dtype=np.int64)
    colors = _vertex_colors(mesh)
    if len(v) == 0 or len(f) == 0:
        raise InputError(where, "mesh is empty (no triangles); remove the object or re-run reconstruction")
    if f.ndim != 2 or f.shape[1] != 3 or f.min() < 0 or f.max() >= len(v):
        raise InputError(where, "mesh faces index missing vertices; the mesh file is corrupt")
    finite = np.all(np.isfinite(v), axis=1)
    if not finite.all():
        keep = finite[f].all(axis=1)
        warnings.append(
            f"{where}: dropped {int((~finite).sum())} NaN/inf vertices and {int((~keep).sum())} faces"
        )
        f = f[keep]
        if len(f) == 0:
            raise InputError(where, "mesh has no finite triangles (all vertices NaN/inf)")
    m = trimesh.Trimesh(v, f, process=False)
    if colors is not None:
        m.visual = ColorVisuals(m, vertex_colors=colors)
    src_v, src_c = v[finite], (colors[finite] if colors is not None else None)
    n0 = len(m.faces)
    m.merge_vertices()
    m.update_faces(m.nondegenerate_faces())
    m.update_faces(m.unique_faces())
    m.remove_unreferenced_vertices()
    if len(m.faces) < n0:
        warnings.append(f"{where}: removed {n0 - len(m.faces)} degenerate or duplicate faces")
    if len(m.faces) == 0:
        raise InputError(where, "mesh has only degenerate triangles (zero area)")
    ext = m.extents
    if np.min(ext) <= 1e-9 * max(float(np.max(ext)), 1e-12):
        raise InputError(
            where, f"mesh is flat (extents {np.round(ext, 6).tolist()} m) and encloses no volume"
        )
    if not _is_solid(m):
        if m.is_watertight:
            trimesh.repair.fix_winding(m)
            trimesh.repair.fix_inversion(m, multibody=True)
        if not _is_solid(m):
            m = _meshfix(m, where)
            warnings.append(
                f"{where}: mesh was not a closed manifold; filled holes and removed non-manifold parts (pymeshfix)"
            )
        else:
            warnings.append(f"{where}: fixed inconsistent or inverted face winding")
    if not _is_solid(m):
        raise InputError(where, "mesh could not be repaired to a closed solid; supply a watertight mesh")
    diag = float(np.linalg.norm(m.extents))
    if m.volume <= 1e-6 * diag**3:
        raise InputError(
            where, f"mesh encloses (almost) no volume ({m.volume:.3g} m^3); it cannot carry mass"
        )
    transfer_colors(m, src_v, src_c)
    return RepairResult(m, tuple(warnings))


def _meshfix(m: trimesh.Trimesh, where: str) -> trimesh.Trimesh:
    import pymeshfix

    v = np.ascontiguousarray(m.vertices, dtype=np.float64)
    f = np.ascontiguousarray(m.faces, dtype=np.int32)
    try:
        with native_output_silenced():  # MeshFix prints "could not fix everything"; the checks below decide
            v2, f2 = pymeshfix.clean_from_arrays(v, f)
    except Exception as exc:  # pymeshfix raises RuntimeError/ValueError on hopeless input
        raise InputError(where, f"mesh repair failed ({exc}); supply a watertight mesh") from None
    out = trimesh.Trimesh(np.asarray(v2, dtype=np.float64), np.asarray(f2, dtype=np.int64), process=True)
    if len(out.faces) and out.is_watertight and out.volume < 0:
        out.invert()
    return out
