"""CoACD on the decimated mesh, then the steps that fit its hulls to the budget and the surface (``run_coacd``)."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.export.collision.cover import cover_surface, refit_to_surface
from real2sim.export.collision.hulls import convex_hull, limit_points, total_area
from real2sim.export.collision.refine import Refiner, merge_to_tolerance, refine
from real2sim.export.config import ExportCfg
from real2sim.export.objects.visual import decimate


def import_coacd(threads: int = 1):
    """``coacd`` with Open3D loaded first (importing Open3D after CoACD fails with ``std::bad_cast``), limited to
    ``threads`` OpenMP threads: the caller gives each object the cores that no other object's process is using
    (``coacd_threads``), so parallel objects don't oversubscribe the cores and a lone object uses all of them."""
    import open3d  # noqa: F401, I001  (first, on purpose)
    import coacd

    set_openmp_threads(coacd, threads)
    return coacd


def coacd_threads(objects_at_once: int) -> int:
    """OpenMP threads for each of ``objects_at_once`` objects decomposed in parallel: this process's cores shared out."""
    from real2sim.executor import thread_budget

    return max(1, thread_budget() // max(1, objects_at_once))


def set_openmp_threads(module, n: int) -> None:
    """``omp_set_num_threads(n)`` on the OpenMP runtime vendored with ``module`` (a no-op if it has none)."""
    import ctypes
    import glob
    import os

    here = os.path.dirname(module.__file__)
    for lib in sorted(glob.glob(os.path.join(here, os.pardir, f"{module.__name__}.libs", "libgomp*.so*"))):
        try:
            ctypes.CDLL(lib).omp_set_num_threads(int(n))
        except (OSError, AttributeError):
            pass


FULL_SEARCH = {"mcts_nodes": 20, "mcts_iterations": 60, "mcts_max_depth": 3}
"""CoACD's search for meshes of at most ``coacd_full_search_faces`` faces (the code hash in the cache key covers it)."""


def coacd_parts(coacd, mesh: trimesh.Trimesh, cfg: ExportCfg, max_hulls: int) -> list[np.ndarray]:
    """CoACD's convex parts (vertex arrays) of a watertight ``mesh``, at most ``max_hulls``; degenerate ones dropped."""
    full = len(mesh.faces) <= cfg.coacd_full_search_faces  # a wider search where it is cheap
    parts = coacd.run_coacd(
        coacd.Mesh(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int32)),
        threshold=cfg.coacd_threshold,
        max_convex_hull=max_hulls,
        preprocess_mode="off",
        resolution=cfg.coacd_resolution,
        **(
            FULL_SEARCH
            if full
            else {
                "mcts_nodes": cfg.coacd_mcts_nodes,
                "mcts_iterations": cfg.coacd_mcts_iterations,
                "mcts_max_depth": cfg.coacd_mcts_depth,
            }
        ),
        merge=True,
        decimate=False,  # hulls are cut to the vertex budget by ``limit_points`` (less surface error than CoACD's)
        seed=cfg.seed,
    )
    pieces = []
    for v, _f in parts:
        v = np.asarray(v, dtype=np.float64)
        if len(v) >= 4 and np.linalg.matrix_rank(v - v.mean(axis=0), tol=1e-9) == 3:
            pieces.append(v)
    return pieces


def run_coacd(mesh: trimesh.Trimesh, cfg: ExportCfg, threads: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """CoACD (``threads`` OpenMP threads) on the decimated watertight mesh, merged to the hull budget, vertex-limited
    per hull, refined where it bulges past the surface (``refine``), then grown back over what decimation cut off
    (``cover_surface``)."""

    work = decimate(mesh, cfg.collision_faces)
    if not (work.is_watertight and work.volume > 0):
        work = mesh
    tol = cfg.fidelity_tolerance * float(np.linalg.norm(mesh.extents))
    r = Refiner(mesh, work, cfg, 0.0)  # one surface query structure and solid for every step
    one = limit_points(np.asarray(mesh.vertices, dtype=np.float64), cfg.max_hull_vertices)
    r.area = total_area([one])
    if r.bloat(one)[0] <= tol:  # nearly convex: one hull is within the fidelity tolerance
        return [convex_hull(one)]
    coacd = import_coacd(threads)
    coacd.set_log_level("error")
    pieces = coacd_parts(coacd, work, cfg, cfg.max_hulls)
    pts = [limit_points(v, cfg.max_hull_vertices) for v in pieces]
    if not pts:
        pts = [one]
    if cfg.refine_tolerance > 0:
        pts = refine(work, mesh, pts, cfg, r)
    pts = merge_to_tolerance(r, pts, tol, cfg)
    if cfg.cover and work is not mesh:
        r.area = total_area(pts)
        tol = cfg.refine_tolerance * float(np.linalg.norm(mesh.extents))
        worst = max(tol, *(r.bloat(p)[0] for p in pts))
        pts = cover_surface(
            work, mesh, pts, cfg.max_hull_vertices, accept=lambda old, new: r.bloat(new)[0] <= worst
        )
    if cfg.refit and work is not mesh:
        pts = refit_to_surface(
            pts,
            np.asarray(mesh.vertices, dtype=np.float64),
            cfg.refit_distance * float(np.linalg.norm(mesh.extents)),
        )
        pts = [limit_points(v, cfg.max_hull_vertices) for v in pts]
    hulls = [convex_hull(p) for p in pts]
    hulls.sort(key=lambda h: tuple(np.round(h[0].mean(axis=0), 9)))
    return hulls[: cfg.max_hulls]
