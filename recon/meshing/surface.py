"""Volumes to closed surfaces and mesh repair: marching cubes within a triangle budget, screened Poisson for
objects without a support, largest component, quadric decimation and watertight repair."""

from __future__ import annotations

from typing import Protocol, cast

import numpy as np
import trimesh

from real2sim.errors import StageError


class PoissonCfg(Protocol):
    @property
    def mesh_voxel(self) -> float: ...
    @property
    def max_triangles(self) -> int: ...


def marching_cubes(volume: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Iso-surface at 0 of ``volume`` (negative inside). Vertices in index coordinates."""
    try:
        import mcubes
    except ImportError:
        mcubes = None
    if mcubes is not None:
        v, f = mcubes.marching_cubes(-volume, 0.0)
        return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64)
    try:
        # scikit-image is not a dependency: the fallback where PyMCubes is missing
        from skimage.measure import marching_cubes as skimage_marching_cubes  # pyright: ignore[reportMissingImports]
    except ImportError:
        raise StageError("meshing needs PyMCubes (pip install pymcubes) or scikit-image") from None
    v, f, _, _ = skimage_marching_cubes(volume, 0.0)
    return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64)


def seal(vol: np.ndarray, value: float) -> None:
    """Outside on the grid's faces, so the iso-surface is closed."""
    vol[[0, -1], :, :] = value
    vol[:, [0, -1], :] = value
    vol[:, :, [0, -1]] = value


def keep_largest_inside(vol: np.ndarray) -> None:
    """In place: every inside region but the largest (26-connected) turns outside, and every outside pocket not
    connected to the grid's (sealed) faces turns inside: one solid body without internal voids per object."""
    from scipy import ndimage

    inside = vol < 0
    lab, n = cast("tuple[np.ndarray, int]", ndimage.label(inside, structure=np.ones((3, 3, 3), dtype=bool)))
    if n > 1:
        big = int(np.argmax(np.bincount(lab.ravel())[1:])) + 1
        other = inside & (lab != big)
        vol[other] = -vol[other]
        inside &= ~other
    lab, n = cast("tuple[np.ndarray, int]", ndimage.label(~inside))
    if n > 1:
        pocket = ~inside & (lab != lab[0, 0, 0])
        vol[pocket] = -np.abs(vol[pocket]) - 1e-12


def surface_within_budget(
    vol: np.ndarray, lo: np.ndarray, h: float, max_triangles: int, allow_decimation: bool = False
) -> trimesh.Trimesh:
    """Marching cubes of ``vol`` (spacing ``h``); when that gives more than ``max_triangles``, the field is
    resampled (trilinear) on a coarser grid sized for about 90 % of the budget and meshed again. Marching cubes on
    a sealed grid is closed by construction, so no decimation (which can fold faces) is needed.

    ``allow_decimation`` (thin walls, meshed on a grid finer than the budget): the fine surface is decimated
    (quadric error) to the budget instead, when that stays watertight: resampling a thin wall's field onto a
    coarse grid thins it (linear interpolation of the distance's V-shaped profile across the wall lies above it).
    """
    from scipy import ndimage

    v, f = marching_cubes(vol)
    if len(f) == 0:
        raise StageError("meshing produced no surface")
    if allow_decimation and len(f) > max_triangles:
        fine = ensure_closed(largest_component(trimesh.Trimesh(vertices=lo + v * h, faces=f, process=True)))
        mesh = decimate(fine, max_triangles)
        if len(mesh.faces) <= max_triangles and mesh.is_watertight and mesh.is_winding_consistent:
            return ensure_closed(mesh)
    step = h
    shape = np.asarray(vol.shape)
    for _ in range(6):
        if len(f) <= max_triangles:
            break
        step = step * np.sqrt(len(f) / (0.9 * max_triangles))
        n = np.maximum(np.floor((shape - 1) * h / step).astype(int) + 1, 3)
        axes = [np.arange(n[i]) * (step / h) for i in range(3)]
        coords = np.stack(np.meshgrid(*axes, indexing="ij"), axis=0)
        coarse = ndimage.map_coordinates(vol, coords, order=1, mode="nearest")
        seal(coarse, step)
        v, f = marching_cubes(coarse)
    if len(f) > max_triangles or len(f) == 0:
        raise StageError(f"could not mesh the object within {max_triangles} triangles")
    mesh = trimesh.Trimesh(vertices=lo + v * step, faces=f, process=True)
    mesh = largest_component(mesh)
    return ensure_closed(mesh)


POISSON_TRIM_LEVELS = 0.5
"""Screened Poisson vertices whose sample density is this many octree levels below the median are trimmed: they
lie where no samples were (the surface was extrapolated over an unseen hole), which is then closed minimally."""


def poisson_surface(points: np.ndarray, normals: np.ndarray, cfg: PoissonCfg) -> trimesh.Trimesh:
    """Screened Poisson surface for objects with no support under them. Poisson closes unseen holes with smooth
    bulges; the vertices it placed far from any sample (low density) are trimmed and the resulting holes filled
    with minimal patches (MeshFix), which follows an unseen flat base far more closely."""
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    pc.normals = o3d.utility.Vector3dVector(normals)
    ext = float((points.max(axis=0) - points.min(axis=0)).max())
    depth = int(np.clip(np.ceil(np.log2(ext / cfg.mesh_voxel)), 5, 10))
    m, dens = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(
        pc, depth=depth, scale=1.1, linear_fit=True, n_threads=1
    )  # threaded runs differ in the last bits
    v, f = np.asarray(m.vertices), np.asarray(m.triangles)
    full = largest_component(trimesh.Trimesh(v, f, process=True))
    dens = np.asarray(dens)
    keep = dens >= np.median(dens) - POISSON_TRIM_LEVELS
    mesh = full
    if not keep.all():
        trimmed = largest_component(trimesh.Trimesh(v, f[keep[f].all(axis=1)], process=True))
        vc, fc = _meshfix(trimmed)
        closed = trimesh.Trimesh(vc, fc, process=True)
        if (
            closed.is_watertight
            and closed.is_winding_consistent
            and len(closed.faces) > 0.5 * len(full.faces)
        ):
            mesh = closed
    mesh = decimate(mesh, cfg.max_triangles)
    return ensure_closed(mesh)


def largest_component(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """The component (by shared edges) with the most faces; ``mesh`` itself when it is one piece (counted first:
    splitting copies every piece)."""
    comps = trimesh.graph.connected_components(
        edges=mesh.face_adjacency, nodes=np.arange(len(mesh.faces)), min_len=1
    )
    if len(comps) <= 1:
        return mesh
    return max(mesh.split(only_watertight=False), key=lambda m: len(m.faces))


def signed_volume(mesh: trimesh.Trimesh) -> float:
    """The enclosed volume, negative for an inward-facing mesh (trimesh's volume term alone, without the rest of
    its mass properties)."""
    tri = mesh.triangles
    f1 = tri[:, 0, 0] + tri[:, 1, 0] + tri[:, 2, 0]
    return float((mesh.triangles_cross[:, 0] * f1).sum()) / 6.0


def decimate(mesh: trimesh.Trimesh, max_triangles: int) -> trimesh.Trimesh:
    """Quadric decimation to at most ``max_triangles``; kept only if the result is still watertight."""
    if len(mesh.faces) <= max_triangles:
        return mesh
    try:
        import fast_simplification

        v, f = fast_simplification.simplify(
            np.asarray(mesh.vertices, dtype=np.float64),
            np.asarray(mesh.faces),
            target_count=int(max_triangles),
        )[:2]  # (vertices, faces): no collapses asked
    except ImportError:  # slower fallback
        import open3d as o3d

        m = o3d.geometry.TriangleMesh(
            o3d.utility.Vector3dVector(mesh.vertices), o3d.utility.Vector3iVector(mesh.faces.astype(np.int32))
        )
        m = m.simplify_quadric_decimation(target_number_of_triangles=int(max_triangles))
        v, f = np.asarray(m.vertices), np.asarray(m.triangles)
    out = trimesh.Trimesh(v, f, process=True)
    if out.is_watertight and out.is_winding_consistent and len(out.faces) > 0:
        return out
    vclean, fclean = _meshfix(out)
    fixed = trimesh.Trimesh(vclean, fclean, process=True)
    if fixed.is_watertight and fixed.is_winding_consistent and len(fixed.faces) <= max_triangles:
        return fixed
    return mesh


def _meshfix(mesh: trimesh.Trimesh) -> tuple[np.ndarray, np.ndarray]:
    """pymeshfix's hole filling and clean-up, its own messages silenced (the callers check the result)."""
    import pymeshfix

    from real2sim.stdio import native_output_silenced

    with native_output_silenced():
        return pymeshfix.clean_from_arrays(np.asarray(mesh.vertices), np.asarray(mesh.faces))


def ensure_closed(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """Watertight, winding-consistent and outward (positive volume), repairing with pymeshfix if needed."""
    if not (mesh.is_watertight and mesh.is_winding_consistent):
        v, f = _meshfix(mesh)
        mesh = trimesh.Trimesh(v, f, process=True)
        if not (mesh.is_watertight and mesh.is_winding_consistent):
            raise StageError("could not make the object mesh watertight")
    if signed_volume(mesh) < 0:
        mesh.invert()
    return mesh
