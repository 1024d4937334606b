"""Per-object watertight meshing from oriented points (a volumetric method).

A signed distance is estimated on a voxel grid from the oriented points (each grid point takes the
distance-weighted mean of ``dot(x - p_i, n_i)`` over its nearest points, Hoppe et al. 1992), so regions the sensor
never saw take the sign of the nearest seen surface. With a support plane, the volume is intersected with the
half-space above it (the unseen underside is closed exactly at ``z = support_z``) and with the prism over the
points' 2D convex footprint (the unseen back cannot grow past what the top view bounds). Marching cubes on the
padded grid gives a closed surface; the largest component is kept, oriented outward and decimated to the triangle
budget, and checked watertight.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError, cKDTree

from real2sim.errors import StageError
from real2sim.recon.support import polygon_signed_distance


class MeshCfg(Protocol):
    mesh_voxel: float
    mesh_max_cells: int
    max_triangles: int


def _marching_cubes(volume: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Iso-surface at 0 of ``volume`` (negative inside). Vertices in index coordinates."""
    try:
        import mcubes
    except ImportError:
        mcubes = None
    if mcubes is not None:
        v, f = mcubes.marching_cubes(-volume, 0.0)
        return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64)
    try:
        from skimage.measure import marching_cubes
    except ImportError:
        raise StageError("meshing needs PyMCubes (pip install pymcubes) or scikit-image") from None
    v, f, _, _ = marching_cubes(volume, 0.0)
    return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64)


def signed_distance(
    grid: np.ndarray, points: np.ndarray, normals: np.ndarray, k: int, sigma: float
) -> np.ndarray:
    """Hoppe-style signed distance at ``grid`` points (M, 3) from oriented ``points``: positive outside."""
    tree = cKDTree(points)
    k = min(k, len(points))
    d, idx = tree.query(grid, k=k, workers=-1)
    if k == 1:
        d, idx = d[:, None], idx[:, None]
    diff = grid[:, None, :] - points[idx]
    plane = np.einsum("mkj,mkj->mk", diff, normals[idx])
    w = np.exp(-((d - d[:, :1]) ** 2) / (2 * sigma**2))
    sd = (w * plane).sum(axis=1) / w.sum(axis=1)
    # Far from the surface keep the magnitude honest: at least the distance to the nearest point.
    return np.sign(sd) * np.maximum(np.abs(sd), np.maximum(d[:, 0] - 2 * sigma, 0.0))


def mesh_object(
    points: np.ndarray, normals: np.ndarray, support_z: float | None, cfg: MeshCfg
) -> trimesh.Trimesh:
    """A watertight, outward-oriented mesh around oriented ``points`` (same frame as the points).

    ``normals`` must point out of the object (toward the sensor). With ``support_z`` the underside is closed
    against the plane ``z = support_z`` (z up) and the object is bounded by its points' 2D convex footprint.
    """
    points = np.asarray(points, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    if len(points) < 10:
        raise StageError(f"too few points to mesh an object ({len(points)})")
    normals = normals / (np.linalg.norm(normals, axis=1, keepdims=True) + 1e-18)
    lo = points.min(axis=0)
    hi = points.max(axis=0)
    if support_z is not None:
        lo[2] = min(lo[2], support_z)
    ext = hi - lo
    h = max(cfg.mesh_voxel, float(ext.max()) / cfg.mesh_max_cells)
    pad = 2
    lo = lo - pad * h
    shape = np.ceil((hi + pad * h - lo) / h).astype(int) + 1
    axes = [lo[i] + h * np.arange(shape[i]) for i in range(3)]
    gx, gy, gz = np.meshgrid(*axes, indexing="ij")
    grid = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)
    sd = signed_distance(grid, points, normals, k=8, sigma=1.5 * h)
    if support_z is not None:
        sd = np.maximum(sd, support_z - grid[:, 2])
        xy = points[:, :2]
        try:
            hull = xy[ConvexHull(xy).vertices]
            sd = np.maximum(sd, polygon_signed_distance(grid[:, :2], hull))
        except QhullError:
            pass
    vol = sd.reshape(shape)
    vol[[0, -1], :, :] = h
    vol[:, [0, -1], :] = h
    vol[:, :, [0, -1]] = h
    if not (vol < 0).any():
        raise StageError("meshing found no inside: the normals do not enclose a volume")
    v, f = _marching_cubes(vol)
    if len(f) == 0:
        raise StageError("meshing produced no surface")
    mesh = trimesh.Trimesh(vertices=lo + v * h, faces=f, process=True)
    mesh = largest_component(mesh)
    mesh = decimate(mesh, cfg.max_triangles)
    mesh = ensure_closed(mesh)
    return mesh


def largest_component(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    parts = mesh.split(only_watertight=False)
    if len(parts) <= 1:
        return mesh
    return max(parts, key=lambda m: (abs(m.volume) if m.is_watertight else 0.0, len(m.faces)))


def decimate(mesh: trimesh.Trimesh, max_triangles: int) -> trimesh.Trimesh:
    """Quadric decimation to at most ``max_triangles``; kept only if the result is still watertight."""
    if len(mesh.faces) <= max_triangles:
        return mesh
    import open3d as o3d

    m = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(mesh.vertices), o3d.utility.Vector3iVector(mesh.faces.astype(np.int32))
    )
    m = m.simplify_quadric_decimation(target_number_of_triangles=int(max_triangles))
    m.remove_degenerate_triangles()
    m.remove_duplicated_triangles()
    m.remove_unreferenced_vertices()
    out = trimesh.Trimesh(np.asarray(m.vertices), np.asarray(m.triangles), process=True)
    if out.is_watertight and out.is_winding_consistent and len(out.faces) > 0:
        return out
    try:
        import pymeshfix

        vclean, fclean = pymeshfix.clean_from_arrays(np.asarray(out.vertices), np.asarray(out.faces))
        fixed = trimesh.Trimesh(vclean, fclean, process=True)
        if fixed.is_watertight and fixed.is_winding_consistent:
            return fixed
    except ImportError:
        pass
    return mesh


def ensure_closed(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Watertight, winding-consistent and outward (positive volume), repairing with pymeshfix if needed."""
    if not (mesh.is_watertight and mesh.is_winding_consistent):
        import pymeshfix

        v, f = pymeshfix.clean_from_arrays(np.asarray(mesh.vertices), np.asarray(mesh.faces))
        mesh = trimesh.Trimesh(v, f, process=True)
        if not (mesh.is_watertight and mesh.is_winding_consistent):
            raise StageError("could not make the object mesh watertight")
    if mesh.volume < 0:
        mesh.invert()
    return mesh
