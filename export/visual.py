"""Visual mesh: the repaired surface decimated to a face budget, vertex colours carried over."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.export.repair import transfer_colors

FLAT_TOLERANCE = 1e-6
"""Before decimating, edges whose collapse moves the surface by less than this x the diagonal are collapsed
(manifold3d ``simplify``: the result stays a closed manifold on a subset of the vertices)."""


def _collapse_flat(mesh: trimesh.Trimesh) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of a watertight ``mesh`` with its flat and sliver triangles merged (``FLAT_TOLERANCE``);
    the mesh as it is if manifold3d does not take it."""
    import manifold3d

    v, f = np.array(mesh.vertices, dtype=np.float64), np.array(mesh.faces, dtype=np.int64)
    if not mesh.is_watertight:
        return v, f
    solid = manifold3d.Manifold(manifold3d.Mesh64(vert_properties=v, tri_verts=f.astype(np.uint32)))
    if solid.status() != manifold3d.Error.NoError or solid.is_empty():
        return v, f
    out = solid.simplify(FLAT_TOLERANCE * float(np.linalg.norm(mesh.extents))).to_mesh64()
    return np.array(out.vert_properties[:, :3], dtype=np.float64), np.array(out.tri_verts, dtype=np.int64)


def decimate(mesh: trimesh.Trimesh, faces: int) -> trimesh.Trimesh:
    """Quadric-error decimation (Open3D) to at most ``faces`` triangles, flat triangles merged first
    (``FLAT_TOLERANCE``); colours follow the nearest vertex."""
    if len(mesh.faces) <= faces:
        return mesh.copy()
    import open3d as o3d  # import before coacd in any process (their C++ runtimes clash the other way round)

    v, f = _collapse_flat(mesh)
    om = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(v), o3d.utility.Vector3iVector(f.astype(np.int32))
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
