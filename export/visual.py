"""Visual mesh: the repaired surface decimated to a face budget, vertex colours carried over."""

from __future__ import annotations

import numpy as np
import trimesh
from real2sim.export.repair import transfer_colors


def decimate(mesh: trimesh.Trimesh, faces: int) -> trimesh.Trimesh:
    """Quadric-error decimation (Open3D) to at most ``faces`` triangles; colours follow the nearest vertex."""
    if len(mesh.faces) <= faces:
        return mesh.copy()
    import open3d as o3d  # import before coacd in any process (their C++ runtimes clash the other way round)

    om = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(np.asarray(mesh.vertices, dtype=np.float64)),
        o3d.utility.Vector3iVector(np.asarray(mesh.faces, dtype=np.int32)),
    )
    d = om.simplify_quadric_decimation(int(faces))
    out = trimesh.Trimesh(np.asarray(d.vertices, dtype=np.float64), np.asarray(d.triangles, dtype=np.int64))
    out.update_faces(out.nondegenerate_faces())
    out.remove_unreferenced_vertices()
    colors = None
    if mesh.visual is not None and mesh.visual.kind == "vertex":
        colors = np.asarray(mesh.visual.vertex_colors, dtype=np.uint8)
    transfer_colors(out, np.asarray(mesh.vertices), colors)
    return out


def visual_mesh(mesh: trimesh.Trimesh, faces: int) -> trimesh.Trimesh:
    """The visual mesh within the ``faces`` budget (the watertight mesh itself when it is small enough)."""
    return decimate(mesh, faces)


def mean_rgba(mesh: trimesh.Trimesh, rgba: tuple[float, ...] | None) -> tuple[float, float, float, float]:
    """One colour for engines without vertex colours: the object's ``rgba`` or the mean vertex colour."""
    if rgba is not None:
        return tuple(float(x) for x in rgba)  # type: ignore[return-value]
    if mesh.visual is not None and mesh.visual.kind == "vertex":
        c = np.asarray(mesh.visual.vertex_colors, dtype=np.float64).mean(axis=0) / 255.0
        return (round(c[0], 4), round(c[1], 4), round(c[2], 4), 1.0)
    return (0.7, 0.7, 0.7, 1.0)
