"""Collision geometry within an engine budget: one exact hull for a convex mesh whose hull fits the budget, else a
primitive where one fits, else CoACD convex hulls.

The watertight mesh is decimated before decomposing (CoACD's time grows with faces); CoACD merges down to
``max_hulls``, each hull is reduced to ``max_hull_vertices`` keeping the surface error small (``limit_points``), and
the budget CoACD leaves unused is spent splitting the hulls that bulge farthest past the surface (``refine``), and
each hull takes in the full-resolution vertices that decimation cut off from its patch (``cover_surface``).
Results are cached by mesh content + options.
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

from real2sim.atomic import write_bytes
from real2sim.export.config import ExportCfg, default_cache_dir
from real2sim.export.primitives import Primitive, fit_primitive
from real2sim.export.visual import decimate


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


def _import_coacd(threads: int = 1):
    """``coacd`` with Open3D loaded first (importing Open3D after CoACD fails with ``std::bad_cast``), limited to
    ``threads`` OpenMP threads: the caller gives each object the cores that no other object's process is using
    (``coacd_threads``), so parallel objects don't oversubscribe the cores and a lone object uses all of them
    (measured on 2 cores, sample mug: 6.8 s with one thread, 5.3 s with two; the hulls are identical)."""
    import open3d  # noqa: F401, I001  (first, on purpose)
    import coacd

    _set_openmp_threads(coacd, threads)
    return coacd


def coacd_threads(objects_at_once: int) -> int:
    """OpenMP threads for each of ``objects_at_once`` objects decomposed in parallel: this process's cores shared out."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, objects_at_once))


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
    opts = dict(cfg.decomposition_options(), full_search=FULL_SEARCH, coacd=version("coacd"), format=14)
    h.update(json.dumps(opts, sort_keys=True).encode())
    return h.hexdigest()


def _hull(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Convex hull of ``points``: its vertices (in input order) and triangles wound outward (Qhull's facet normals;
    5x faster than ``trimesh.convex.convex_hull``, which also repairs what Qhull's output never needs)."""
    from scipy.spatial import ConvexHull

    p = np.asarray(points, dtype=np.float64)
    h = ConvexHull(p)
    used = np.unique(h.simplices)
    index = np.full(len(p), -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    f = np.asarray(h.simplices, dtype=np.int64)
    n = np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])
    flip = np.einsum("ij,ij->i", n, h.equations[:, :3]) < 0
    f[flip] = f[flip][:, [0, 2, 1]]
    return p[used], index[f]


def limit_points(points: np.ndarray, max_vertices: int) -> np.ndarray:
    """At most ``max_vertices`` of the hull vertices of ``points``, chosen to keep the hull closest to the full one.

    Greedy, as Quickhull builds a hull: start from a large simplex of extreme points, then repeatedly add the vertex
    farthest outside the current hull, so the vertices left out are those closest to the reduced hull (a
    farthest-point subset, used before, spreads vertices evenly instead and can cut a corner off the hull). Qhull
    itself does it, stopped after ``max_vertices - 4`` added points (``TA``): ``Qf`` files each point under the facet
    it lies farthest outside of, ``Q9`` adds the farthest of all; 10x faster than adding points one by one to an
    incremental hull from Python. A point added can bury a vertex; then Qhull runs on with as many more points as
    were buried. Deterministic."""
    from scipy.spatial import ConvexHull

    p = np.asarray(points, dtype=np.float64)
    hv = p[ConvexHull(p).vertices]
    if len(hv) <= max_vertices:
        return hv
    added = max_vertices - 4
    while True:
        kept = ConvexHull(hv, qhull_options=f"Qf Q9 TA{added}").vertices
        if len(kept) >= max_vertices or added >= len(hv) - 4:
            return hv[kept]
        added += max_vertices - len(kept)


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


def cover_surface(
    work: trimesh.Trimesh, mesh: trimesh.Trimesh, pieces: list[np.ndarray], max_vertices: int, accept=None
) -> list[np.ndarray]:
    """Make the hulls (of the decimated ``work`` mesh) cover the full-resolution ``mesh`` again where decimation cut it.

    Decimation moves the surface inward at convex corners and ridges, so hulls built on it miss that sliver of the
    real object. Every full-resolution vertex that lies outside the decimated mesh and outside every hull is given to
    the hull that covers the decimated surface where it is nearest (the hull standing for that patch of surface),
    and that hull is rebuilt from its points plus these and cut to ``max_vertices`` again (``limit_points``). Only
    vertices decimation cut off are added, each to the hull of its own patch (not to the nearest hull by distance,
    which can reach across a dent), so a hull grows by about the local decimation error; the re-limited hull can
    still bulge a little more between the new vertices; ``accept(old, new)`` (if given) decides whether a grown
    hull replaces the old one (``run_coacd``: only if it bulges past the surface no more than the refinement
    tolerance or the worst hull already does, so the surface error does not grow)."""
    from scipy.spatial import ConvexHull

    from real2sim.export.fidelity import Surface

    v = np.asarray(mesh.vertices, dtype=np.float64)
    diag = float(np.linalg.norm(mesh.extents))
    eqs = [ConvexHull(p).equations for p in pieces]
    outside = np.ones(len(v), dtype=bool)
    for p, e in zip(pieces, eqs, strict=True):  # only the vertices in a hull's bounding box can be inside it
        box = np.flatnonzero(
            outside & np.all((v >= p.min(axis=0) - 1e-9 * diag) & (v <= p.max(axis=0) + 1e-9 * diag), axis=1)
        )
        outside[box[np.all(v[box] @ e[:, :3].T + e[:, 3] <= 1e-9 * diag, axis=1)]] = False
    if not outside.any():
        return pieces
    surf = Surface([work], np.asarray(mesh.bounds, dtype=np.float64).mean(axis=0))
    idx = np.flatnonzero(outside)
    idx = idx[~surf.inside(v[idx])]
    if not len(idx):
        return pieces
    c = surf.closest(v[idx])
    dist = np.stack([np.max(c @ e[:, :3].T + e[:, 3], axis=1) for e in eqs], axis=1)  # <= 0 inside
    owner = np.argmin(dist, axis=1)
    out = []
    for i, p in enumerate(pieces):
        add = v[idx[owner == i]]
        grown = limit_points(np.vstack([p, add]), max_vertices) if len(add) else p
        out.append(grown if grown is p or accept is None or accept(p, grown) else p)
    return out


FULL_SEARCH = {"mcts_nodes": 20, "mcts_iterations": 60, "mcts_max_depth": 3}
"""CoACD's search for meshes of at most ``coacd_full_search_faces`` faces (why: that option's docstring); part of
the cache key, so a change here cannot serve hulls cut with the old search."""


def _coacd_parts(coacd, mesh: trimesh.Trimesh, cfg: ExportCfg, max_hulls: int) -> list[np.ndarray]:
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


def _total_area(pieces: list[np.ndarray]) -> float:
    """Summed surface area [m^2] of the convex hulls of ``pieces`` (the refiner spreads its samples over it)."""
    from scipy.spatial import ConvexHull

    return float(sum(ConvexHull(p).area for p in pieces))


TIE = 1e-6
"""Bulges [m] closer than this are equal when choosing a split (then the one with fewer parts wins)."""


class _Refiner:
    """Splits convex hulls where they bulge past the surface (see ``refine``)."""

    def __init__(self, mesh: trimesh.Trimesh, work: trimesh.Trimesh, cfg: ExportCfg, area: float) -> None:
        import manifold3d

        from real2sim.export.fidelity import Surface

        self.cfg = cfg
        self.area = area
        """Total hull surface area [m^2]: ``refine_samples`` are spread over it."""
        self.surf = Surface([mesh], np.asarray(mesh.bounds, dtype=np.float64).mean(axis=0))
        self.solid = manifold3d.Manifold(
            manifold3d.Mesh(
                vert_properties=np.asarray(work.vertices, dtype=np.float32),
                tri_verts=np.asarray(work.faces, dtype=np.uint32),
            )
        )
        self._m3d = manifold3d

    def bloat(self, pts: np.ndarray) -> tuple[float, np.ndarray]:
        """Largest distance [m] of the surface of the hull of ``pts`` outside the mesh, and the point where it is
        (seeded area-weighted samples of the hull's triangles, plus its vertices)."""
        from scipy.spatial import ConvexHull

        tri = pts[ConvexHull(pts).simplices]
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
        n = max(64, int(self.cfg.refine_samples * area.sum() / self.area))
        rng = np.random.default_rng(self.cfg.seed)
        k = rng.choice(len(tri), size=n, p=area / area.sum())
        uv = rng.random((n, 2))
        flip = uv.sum(axis=1) > 1
        uv[flip] = 1 - uv[flip]
        t = tri[k]
        x = t[:, 0] + uv[:, :1] * (t[:, 1] - t[:, 0]) + uv[:, 1:] * (t[:, 2] - t[:, 0])
        x = np.vstack([x, pts])
        out = x[~self.surf.inside(x)]
        if not len(out):
            return 0.0, x[0]
        d = self.surf.distance(out)
        k = int(np.argmax(d))
        return float(d[k]), out[k]

    def piece(self, pts: np.ndarray):
        """The solid's part inside the hull of ``pts`` (manifold3d)."""
        return self.solid ^ self._m3d.Manifold.hull_points(np.asarray(pts, dtype=np.float32))

    def split(self, hull: np.ndarray, at: np.ndarray, bulge: float | None = None) -> list[np.ndarray] | None:
        """Best split of the solid inside ``hull`` by a plane through the surface point ``c`` nearest ``at`` (the
        worst bulge): the hulls of the two sides' connected parts. Candidates are ``refine_planes`` planes containing
        the bulge direction ``at - c`` (they cut through the bottom of a dent) and the plane normal to it (it cuts
        off the wall ``c`` lies on, when the nearest surface is a side of a slot). Returns None if no plane makes
        every new hull bulge less than ``hull`` does (``bulge``, if already measured)."""
        piece = self.piece(hull)
        if piece.is_empty() or piece.volume() <= 0:
            return None
        c = self.surf.closest(at[None])[0]
        d = at - c
        if np.linalg.norm(d) <= 0:
            return None
        d /= np.linalg.norm(d)
        u = np.cross(d, [1.0, 0.0, 0.0] if abs(d[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        v = np.cross(d, u)
        best, best_score = None, self.bloat(hull)[0] if bulge is None else bulge
        vol = piece.volume()
        angles = np.pi * np.arange(self.cfg.refine_planes) / self.cfg.refine_planes
        for n in [np.cos(a) * u + np.sin(a) * v for a in angles] + [d]:
            sides = piece.split_by_plane(n.tolist(), float(n @ c))
            parts = [p for s in sides for p in s.decompose() if p.volume() > 1e-3 * vol]
            if len(parts) < 2:
                continue
            hulls = [np.asarray(p.to_mesh().vert_properties[:, :3], dtype=np.float64) for p in parts]
            if any(len(h) < 4 or np.linalg.matrix_rank(h - h.mean(axis=0), tol=1e-9) < 3 for h in hulls):
                continue
            # scored before the vertex limit: the limited hull lies inside the full one and bulges no more
            score = 0.0
            for h in hulls:
                score = max(score, self.bloat(h)[0])
                if score >= best_score + TIE:
                    break
            if best is None:  # the first split that lowers the hull's own bulge
                wins = score < best_score - 1e-12
            else:  # a lower bulge wins; within TIE of it, fewer parts (cutting off a slot's wall, not slicing both)
                wins = score < best_score - TIE or (score < best_score + TIE and len(hulls) < len(best))
            if wins:
                best, best_score = hulls, min(score, best_score)
        return None if best is None else [limit_points(h, self.cfg.max_hull_vertices) for h in best]


MERGE_GAIN = 0.8
"""When the split of the worst hull does not fit the budget, other hulls may be merged to make room if each merged
hull bulges less than this share of the bulge being split (or within the tolerance): the worst surface error can only
go down. Measured: bunny 5.21 -> 4.67 mm (20,000 samples; within the tolerance only, CoACD's 32 bunny hulls admitted
no merge), stone IoU 0.9717 -> 0.9740; toy cat 10.3 % -> 5.5 % of its diagonal (its worst splits need 3-4 hulls)."""


def _merge_one(r: _Refiner, items: list, tol: float, max_vertices: int, pairs_tried: int) -> list | None:
    """``items`` with the two touching hulls merged whose merged hull adds the least volume and still bulges no more
    than ``tol`` past the surface (it frees a hull for a split where the error is), of the ``pairs_tried`` touching
    pairs that add least volume; None if no pair qualifies."""
    from scipy.spatial import ConvexHull

    pts = [it[0] for it in items]
    vols = [ConvexHull(p).volume for p in pts]
    lo, hi = [p.min(axis=0) for p in pts], [p.max(axis=0) for p in pts]
    pairs = []
    for a in range(len(pts)):
        for b in range(a + 1, len(pts)):
            if np.any(lo[a] > hi[b]) or np.any(lo[b] > hi[a]):
                continue
            pairs.append((ConvexHull(np.vstack([pts[a], pts[b]])).volume - vols[a] - vols[b], a, b))
    for _, a, b in sorted(pairs)[:pairs_tried]:
        h = limit_points(np.vstack([pts[a], pts[b]]), max_vertices)
        bl, at = r.bloat(h)
        if bl <= tol:
            out = [it for k, it in enumerate(items) if k not in (a, b)]
            return [*out, (h, bl, at, True)]
    return None


def refine(
    work: trimesh.Trimesh,
    mesh: trimesh.Trimesh,
    hulls: list[np.ndarray],
    cfg: ExportCfg,
    r: _Refiner | None = None,
) -> list[np.ndarray]:
    """Spend the unused hull budget where the hulls bulge farthest past the surface.

    CoACD stops cutting a part once its concavity is below its threshold, measured on the whole object's scale, so
    a hull may still bridge a dent by a couple of percent of the object's size while budget is left. Worst first,
    a hull bulging more than ``refine_tolerance`` x diagonal is split by the best of ``refine_planes`` planes
    through the dent (the solid inside the hull is cut with manifold3d; each side's connected parts get their
    own hull), if that lowers the bulge and the result fits ``max_hulls``. A hull no plane improves is left as is.
    When the split does not fit the budget, touching hulls whose merged hull stays within the tolerance, or below
    ``MERGE_GAIN`` x the bulge being split (least added volume first), are merged to make room (``_merge_one``);
    if not enough such pairs exist, nothing is merged and the hull stays as it is.
    ``r``: a refiner of ``mesh``/``work`` to reuse (its sample budget is set here for ``hulls``).
    """
    area = _total_area(hulls)
    if r is None:
        r = _Refiner(mesh, work, cfg, area)
    r.area = area
    tol = cfg.refine_tolerance * float(np.linalg.norm(mesh.extents))
    items = [(h, *r.bloat(h), False) for h in hulls]
    merges = 0
    while True:
        cand = [i for i, it in enumerate(items) if not it[3] and it[1] > tol]
        if not cand:
            break
        i = max(cand, key=lambda j: (items[j][1], -j))
        h, b, at, _ = items[i]
        sub = r.split(h, at, b)
        need = 0 if sub is None else len(items) - 1 + len(sub) - cfg.max_hulls
        rest = items[:i] + items[i + 1 :]
        while sub is not None and need > 0:  # make room: merge pairs that bulge less than this hull
            merged = None
            if merges < cfg.max_hulls:
                merged = _merge_one(
                    r, rest, max(tol, MERGE_GAIN * b), cfg.max_hull_vertices, cfg.refine_merge_pairs
                )
            if merged is None:
                break
            rest, merges, need = merged, merges + 1, need - 1
        if sub is not None and need > 0:
            break  # no room: the hulls left bulge less, so their merge thresholds are lower still
        if sub is None:
            items[i] = (h, b, at, True)
            continue
        items = rest + [(s, *r.bloat(s), False) for s in sub]
    return [it[0] for it in items]


def run_coacd(mesh: trimesh.Trimesh, cfg: ExportCfg, threads: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """CoACD (``threads`` OpenMP threads) on the decimated watertight mesh, merged to the hull budget, vertex-limited
    per hull, refined where it bulges past the surface (``refine``), then grown back over what decimation cut off
    (``cover_surface``)."""

    work = decimate(mesh, cfg.collision_faces)
    if not (work.is_watertight and work.volume > 0):
        work = mesh
    coacd = _import_coacd(threads)
    coacd.set_log_level("error")
    pieces = _coacd_parts(coacd, work, cfg, cfg.max_hulls)
    pts = [limit_points(v, cfg.max_hull_vertices) for v in pieces]
    if not pts:
        pts = [limit_points(np.asarray(mesh.vertices), cfg.max_hull_vertices)]
    r = None
    if cfg.refine_tolerance > 0 or (cfg.cover and work is not mesh):
        r = _Refiner(mesh, work, cfg, 0.0)  # one surface query structure and solid for both steps
    if cfg.refine_tolerance > 0:
        pts = refine(work, mesh, pts, cfg, r)
    if cfg.cover and work is not mesh:
        r.area = _total_area(pts)
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
    hulls = [_hull(p) for p in pts]
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
                return Collision(
                    Primitive(kind, a[:3], a[3:7], a[7 : 7 + n], float(a[7 + n])), (), cached=True
                )
            k = sum(1 for name in z.files if name.startswith("v"))
            return Collision(None, tuple((z[f"v{i}"], z[f"f{i}"]) for i in range(k)), cached=True)
    except (OSError, ValueError, KeyError):
        return None


PRIMITIVE_EXACT = 1e-6
"""A primitive this close to the surface (fraction of the diagonal: a box mesh's box) is the mesh itself."""


def convex_in_budget(mesh: trimesh.Trimesh, max_vertices: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The convex hull of ``mesh`` (vertices, faces) if the mesh is convex (its volume is its hull's) and the hull has
    at most ``max_vertices`` vertices: then one hull is the object exactly. It wins over a primitive that only fits
    within tolerance: a hexagonal prism (a nut, a hex key) lies within 1.7 % of its diagonal of a cylinder, but the
    cylinder rolls where the prism does not."""
    v = np.asarray(mesh.vertices, dtype=np.float64)
    if len(v) < 4 or np.linalg.matrix_rank(v - v.mean(axis=0), tol=1e-9) < 3:
        return None
    hv, hf = _hull(v)
    if len(hv) > max_vertices:
        return None
    volume = float(trimesh.Trimesh(hv, hf, process=False).volume)
    return (hv, hf) if abs(volume - float(mesh.volume)) <= 1e-9 * volume else None


def collision_geometry(mesh: trimesh.Trimesh, cfg: ExportCfg, threads: int = 1) -> Collision:
    """Collision geometry for a watertight ``mesh`` (object frame), from the cache when possible; ``threads``: OpenMP
    threads CoACD may use (the result does not depend on it)."""
    t0 = time.perf_counter()
    path = None
    if cfg.cache:
        path = (cfg.cache_dir or default_cache_dir()) / f"{cache_key(mesh, cfg)}.npz"
        if path.is_file():
            hit = _load(path)
            if hit is not None:
                return Collision(hit.primitive, hit.hulls, True, time.perf_counter() - t0)
    prim = fit_primitive(mesh, cfg.primitive_tolerance, seed=cfg.seed) if cfg.primitives else None
    exact = convex_in_budget(mesh, cfg.max_hull_vertices)
    if exact is not None and (prim is None or prim.error > PRIMITIVE_EXACT):
        col = Collision(None, (exact,))
    elif prim is not None:
        col = Collision(prim, ())
    else:
        col = Collision(None, tuple(run_coacd(mesh, cfg, threads)))
    if path is not None:
        try:
            _save(path, col)
        except OSError:
            pass  # a read-only cache only costs time
    return Collision(col.primitive, col.hulls, False, time.perf_counter() - t0)
