"""Which collision geometry an object gets: its exact hull, a primitive, or CoACD hulls (``collision_geometry``)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import trimesh

from real2sim.export.collision.cache import cache_key, entry_lock, load, save
from real2sim.export.collision.coacd import run_coacd
from real2sim.export.collision.hulls import convex_hull, limit_points
from real2sim.export.collision.primitives import Primitive, fit_primitive
from real2sim.export.collision.shape import Collision
from real2sim.export.config import ExportCfg, default_cache_dir

PRIMITIVE_EXACT = 1e-6
"""A primitive this close to the surface (fraction of the diagonal: a box mesh's box) is the mesh itself."""


def convex_in_budget(mesh: trimesh.Trimesh, max_vertices: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The convex hull of ``mesh`` (vertices, faces) if the mesh is convex (its volume is its hull's) and the hull has
    at most ``max_vertices`` vertices: then one hull is the object exactly, and it wins over a primitive that only
    fits within tolerance (docs/DECISIONS.md, Export, "Exact hull before primitive")."""
    v = np.asarray(mesh.vertices, dtype=np.float64)
    if len(v) < 4 or np.linalg.matrix_rank(v - v.mean(axis=0), tol=1e-9) < 3:
        return None
    hv, hf = convex_hull(v)
    if len(hv) > max_vertices:
        return None
    volume = float(trimesh.Trimesh(hv, hf, process=False).volume)
    return (hv, hf) if abs(volume - float(mesh.volume)) <= 1e-9 * volume else None


COMPARE_SAMPLES = 2000
"""Surface samples of the Hausdorff distances that decide between a primitive and one hull (``hull_beats``)."""


def hausdorff(mesh: trimesh.Trimesh, pieces: list[trimesh.Trimesh], seed: int) -> float:
    """``hull_fidelity``'s Hausdorff [m] of collision ``pieces`` to ``mesh`` (``COMPARE_SAMPLES``, seeded)."""
    from real2sim.export.collision.fidelity import hull_fidelity

    return hull_fidelity(mesh, pieces, samples=COMPARE_SAMPLES, seed=seed).hausdorff


def one_hull_hausdorff(mesh: trimesh.Trimesh, max_vertices: int, seed: int) -> float:
    """``hausdorff`` of the mesh's one convex hull, cut to ``max_vertices``: the rival a primitive must match."""
    one = trimesh.Trimesh(*convex_hull(limit_points(np.asarray(mesh.vertices), max_vertices)), process=False)
    return hausdorff(mesh, [one], seed)


def hull_beats(mesh: trimesh.Trimesh, prim: Primitive, max_vertices: int, seed: int) -> bool:
    """Whether the mesh's one convex hull (cut to ``max_vertices``) is closer to the surface than the fitted
    primitive (``hull_fidelity``'s Hausdorff, same samples): then the primitive does not stand for the object (a scan
    seen from one side, whose box bridges its unseen back) and the hull route is taken (docs/collision.md)."""
    return one_hull_hausdorff(mesh, max_vertices, seed) < hausdorff(mesh, [prim.to_mesh()], seed)


def collision_geometry(mesh: trimesh.Trimesh, cfg: ExportCfg, threads: int = 1) -> Collision:
    """Collision geometry for a watertight ``mesh`` (object frame), from the cache when possible; ``threads``: OpenMP
    threads CoACD may use (the result does not depend on it)."""
    t0 = time.perf_counter()
    if cfg.cache:
        path = (cfg.cache_dir or default_cache_dir()) / f"{cache_key(mesh, cfg)}.npz"
        hit = load(path) if path.is_file() else None
        if hit is None:
            with entry_lock(path):  # another run computing this entry: wait for it, then read it
                hit = load(path) if path.is_file() else None
                if hit is None:
                    return _computed(mesh, cfg, threads, path, t0)
        return Collision(hit.primitive, hit.hulls, True, time.perf_counter() - t0)
    return _computed(mesh, cfg, threads, None, t0)


def _computed(mesh: trimesh.Trimesh, cfg: ExportCfg, threads: int, path: Path | None, t0: float) -> Collision:
    """Compute the collision geometry (exact hull, primitive or CoACD) and save it at ``path`` when given. A
    primitive is taken only where it is at least as close to the surface as the one hull and, unless it fits within
    ``fidelity_tolerance``, as close as the hulls (``primitive_or_hulls``)."""
    prim = fit_primitive(mesh, cfg.primitive_tolerance, seed=cfg.seed) if cfg.primitives else None
    exact = convex_in_budget(mesh, cfg.max_hull_vertices)
    if exact is not None and (prim is None or prim.error > PRIMITIVE_EXACT):
        col = Collision(None, (exact,))
    elif prim is not None:
        col = primitive_or_hulls(mesh, prim, cfg, threads)
    else:
        col = Collision(None, tuple(run_coacd(mesh, cfg, threads)))
    if path is not None:
        try:
            save(path, col)
        except OSError:
            pass  # a read-only cache only costs time
    return Collision(col.primitive, col.hulls, False, time.perf_counter() - t0)


def primitive_or_hulls(mesh: trimesh.Trimesh, prim: Primitive, cfg: ExportCfg, threads: int) -> Collision:
    """``prim`` if it is the mesh (``PRIMITIVE_EXACT``), or at least as close as the one hull (``hull_beats``) and
    its misfit (``Primitive.error``) is within ``fidelity_tolerance``, the fidelity the hulls are held to. Past that
    (it passed only the looser ``primitive_tolerance``: a shape the primitive does not have, such as an oval section
    under a cylinder) the hull route's hulls, unless they are no closer to the surface than ``prim``
    (docs/collision.md, "Primitives of partly seen objects"). The primitive's Hausdorff is measured once."""
    if prim.error <= PRIMITIVE_EXACT:
        return Collision(prim, ())
    h_prim = hausdorff(mesh, [prim.to_mesh()], cfg.seed)
    if one_hull_hausdorff(mesh, cfg.max_hull_vertices, cfg.seed) < h_prim:
        return Collision(None, tuple(run_coacd(mesh, cfg, threads)))
    if prim.error <= cfg.fidelity_tolerance:
        return Collision(prim, ())
    hulls = tuple(run_coacd(mesh, cfg, threads))
    pieces = [trimesh.Trimesh(v, f, process=False) for v, f in hulls]
    if not hulls or h_prim <= hausdorff(mesh, pieces, cfg.seed):
        return Collision(prim, ())
    return Collision(None, hulls)
