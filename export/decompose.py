"""Collision geometry within an engine budget: a primitive where one fits, else CoACD convex hulls.

The watertight mesh is decimated before decomposing (CoACD's time grows with faces); CoACD merges down to
``max_hulls`` and each hull is reduced to ``max_hull_vertices``. Results are cached by mesh content + options.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from real2sim.export.config import ExportCfg, default_cache_dir
from real2sim.export.primitives import Primitive, fit_primitive
from real2sim.export.visual import decimate

from real2sim.atomic import write_bytes


@dataclass(frozen=True)
class Collision:
    """An object's collision geometry in its own frame: one ``primitive`` or convex ``hulls`` (vertices, faces)."""

    primitive: Primitive | None
    hulls: tuple[tuple[np.ndarray, np.ndarray], ...]
    cached: bool = False
    seconds: float = 0.0

    @property
    def count(self) -> int:
        return 1 if self.primitive is not None else len(self.hulls)

    def meshes(self) -> list[trimesh.Trimesh]:
        if self.primitive is not None:
            return [self.primitive.to_mesh()]
        return [trimesh.Trimesh(v, f, process=False) for v, f in self.hulls]


def _import_coacd():
    """``coacd`` with Open3D loaded first (importing Open3D after CoACD fails with ``std::bad_cast``), limited to one
    OpenMP thread: objects already run in parallel processes (one per core), and on a shared 2-core machine CoACD's
    extra threads only wait for a core (measured: 1.6 s wall for 0.8 s of CPU with 2 threads, 0.7 s with one)."""
    import open3d  # noqa: F401, I001  (first, on purpose)
    import coacd

    _set_openmp_threads(coacd, 1)
    return coacd


def _set_openmp_threads(module, n: int) -> None:
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


def cache_key(mesh: trimesh.Trimesh, cfg: ExportCfg) -> str:
    from importlib.metadata import version

    h = hashlib.sha256()
    h.update(np.ascontiguousarray(mesh.vertices, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(mesh.faces, dtype="<i8").tobytes())
    opts = dict(cfg.decomposition_options(), coacd=version("coacd"), format=3)
    h.update(json.dumps(opts, sort_keys=True).encode())
    return h.hexdigest()


def _hull(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull (outward faces) of ``points``, vertices in a canonical order."""
    hull = trimesh.convex.convex_hull(np.asarray(points, dtype=np.float64))
    return np.asarray(hull.vertices, dtype=np.float64), np.asarray(hull.faces, dtype=np.int64)


def limit_vertices(v: np.ndarray, max_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Hull of at most ``max_vertices`` points: farthest-point subset of the hull vertices (deterministic)."""
    hv, hf = _hull(v)
    if len(hv) <= max_vertices:
        return hv, hf
    chosen = [int(np.argmax(np.linalg.norm(hv - hv.mean(axis=0), axis=1)))]
    d = np.linalg.norm(hv - hv[chosen[0]], axis=1)
    while len(chosen) < max_vertices:
        k = int(np.argmax(d))
        chosen.append(k)
        d = np.minimum(d, np.linalg.norm(hv - hv[k], axis=1))
    return _hull(hv[np.sort(chosen)])


def refit_to_surface(pieces: list[np.ndarray], vertices: np.ndarray, reach: float) -> list[np.ndarray]:
    """Grow each hull (from the decimated mesh) to take in the original ``vertices`` it nearly covers.

    Decimation before CoACD moves the surface by up to its error; vertices of the full mesh that lie outside every
    hull but within ``reach`` [m] of one are added to the nearest hull's points, so the hulls follow the real
    surface again. Vertices farther out are left alone (adding them could bridge a concavity)."""
    from scipy.spatial import ConvexHull

    eqs = [ConvexHull(p).equations for p in pieces]
    dist = np.full((len(vertices), len(pieces)), np.inf)
    for i, e in enumerate(eqs):  # distance outside the hull's planes (a lower bound; <= 0 inside)
        dist[:, i] = np.max(vertices @ e[:, :3].T + e[:, 3], axis=1)
    near = dist.min(axis=1)
    owner = dist.argmin(axis=1)
    take = (near > 0) & (near <= reach)
    return [np.vstack([p, vertices[take & (owner == i)]]) for i, p in enumerate(pieces)]


def run_coacd(mesh: trimesh.Trimesh, cfg: ExportCfg) -> list[tuple[np.ndarray, np.ndarray]]:
    """CoACD on the decimated watertight mesh, merged to the hull budget, vertex-limited per hull."""
    work = decimate(mesh, cfg.collision_faces)
    if not (work.is_watertight and work.volume > 0):
        work = mesh
    coacd = _import_coacd()
    coacd.set_log_level("error")
    parts = coacd.run_coacd(
        coacd.Mesh(np.asarray(work.vertices, dtype=np.float64), np.asarray(work.faces, dtype=np.int32)),
        threshold=cfg.coacd_threshold,
        max_convex_hull=cfg.max_hulls,
        preprocess_mode="off",
        resolution=cfg.coacd_resolution,
        mcts_nodes=cfg.coacd_mcts_nodes,
        mcts_iterations=cfg.coacd_mcts_iterations,
        mcts_max_depth=cfg.coacd_mcts_depth,
        merge=True,
        decimate=True,
        max_ch_vertex=cfg.max_hull_vertices,
        seed=cfg.seed,
    )
    pieces = []
    for v, _f in parts:
        v = np.asarray(v, dtype=np.float64)
        if len(v) >= 4 and np.linalg.matrix_rank(v - v.mean(axis=0), tol=1e-9) == 3:
            pieces.append(v)
    if cfg.refit and pieces and work is not mesh:
        pieces = refit_to_surface(pieces, np.asarray(mesh.vertices, dtype=np.float64),
                                  cfg.refit_distance * float(np.linalg.norm(mesh.extents)))
    hulls = [limit_vertices(v, cfg.max_hull_vertices) for v in pieces]
    if not hulls:
        hulls = [limit_vertices(np.asarray(mesh.vertices), cfg.max_hull_vertices)]
    hulls.sort(key=lambda h: tuple(np.round(h[0].mean(axis=0), 9)))
    return hulls[: cfg.max_hulls]


def _save(path: Path, col: Collision) -> None:
    buf = io.BytesIO()
    arrays: dict[str, np.ndarray] = {}
    if col.primitive is not None:
        p = col.primitive
        arrays["prim_kind"] = np.array(p.kind)
        arrays["prim"] = np.concatenate([p.pos, p.quat, p.size, [p.error]])
    for i, (v, f) in enumerate(col.hulls):
        arrays[f"v{i}"], arrays[f"f{i}"] = v, f
    np.savez(buf, **arrays)
    write_bytes(path, buf.getvalue())


def _load(path: Path) -> Collision | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            if "prim_kind" in z:
                a = z["prim"]
                kind = str(z["prim_kind"])
                n = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2}[kind]
                return Collision(Primitive(kind, a[:3], a[3:7], a[7 : 7 + n], float(a[7 + n])), (), cached=True)
            k = sum(1 for name in z.files if name.startswith("v"))
            return Collision(None, tuple((z[f"v{i}"], z[f"f{i}"]) for i in range(k)), cached=True)
    except (OSError, ValueError, KeyError):
        return None


def collision_geometry(mesh: trimesh.Trimesh, cfg: ExportCfg) -> Collision:
    """Collision geometry for a watertight ``mesh`` (object frame), from the cache when possible."""
    t0 = time.perf_counter()
    path = None
    if cfg.cache:
        path = (cfg.cache_dir or default_cache_dir()) / f"{cache_key(mesh, cfg)}.npz"
        if path.is_file():
            hit = _load(path)
            if hit is not None:
                return Collision(hit.primitive, hit.hulls, True, time.perf_counter() - t0)
    prim = fit_primitive(mesh, cfg.primitive_tolerance, seed=cfg.seed) if cfg.primitives else None
    col = Collision(prim, ()) if prim is not None else Collision(None, tuple(run_coacd(mesh, cfg)))
    if path is not None:
        try:
            _save(path, col)
        except OSError:
            pass  # a read-only cache only costs time
    return Collision(col.primitive, col.hulls, False, time.perf_counter() - t0)
