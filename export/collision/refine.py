"""Refinement: split the hulls that bulge farthest past the surface while the budget has room, merging mild pairs
to make room (``refine``)."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.export.collision.hulls import limit_points, total_area
from real2sim.export.config import ExportCfg

TIE = 1e-6
"""Bulges [m] closer than this are equal when choosing a split (then the one with fewer parts wins)."""
FINER_PLANES = 4
"""When none of the ``refine_planes`` planes through a bulge lowers it, a fan this many times finer is tried before
the hull is left as it is (a dent's crease that lies between two of the coarse planes)."""


class Refiner:
    """Splits convex hulls where they bulge past the surface (see ``refine``)."""

    def __init__(self, mesh: trimesh.Trimesh, work: trimesh.Trimesh, cfg: ExportCfg, area: float) -> None:
        import manifold3d

        from real2sim.export.collision.fidelity import Surface

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
        # manifold3d takes float32 too (its stub says float64); the hulls stay cut as they always were
        return self.solid ^ self._m3d.Manifold.hull_points(np.asarray(pts, dtype=np.float32))  # pyright: ignore[reportArgumentType]

    def split(self, hull: np.ndarray, at: np.ndarray, bulge: float | None = None) -> list[np.ndarray] | None:
        """Best split of the solid inside ``hull`` by a plane through the surface point ``c`` nearest ``at`` (the
        worst bulge): the hulls of the two sides' connected parts. Candidates are ``refine_planes`` planes containing
        the bulge direction ``at - c`` (they cut through the bottom of a dent) and the plane normal to it (it cuts
        off the wall ``c`` lies on, when the nearest surface is a side of a slot); when none of them lowers the bulge,
        a fan ``FINER_PLANES`` times finer. Returns None if no plane makes every new hull bulge less than ``hull``
        does (``bulge``, if already measured)."""
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
        coarse = self.cfg.refine_planes
        fine = FINER_PLANES * coarse
        fans = [
            [np.cos(a) * u + np.sin(a) * v for a in np.pi * np.arange(coarse) / coarse] + [d],
            [
                np.cos(np.pi * k / fine) * u + np.sin(np.pi * k / fine) * v
                for k in range(fine)
                if k % FINER_PLANES
            ],
        ]
        for fan in fans:
            if best is not None:
                break
            for n in fan:
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
go down."""


def merge_one(
    r: Refiner, items: list, tol: float, max_vertices: int, pairs_tried: int, pair_bulge: bool = False
) -> list | None:
    """``items`` with the two touching hulls merged whose merged hull adds the least volume and still bulges no more
    than ``tol`` (``pair_bulge``: or than the worse of the pair) past the surface (it frees a hull for a split where the error is), of the ``pairs_tried`` touching
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
        if bl <= (max(tol, items[a][1], items[b][1]) if pair_bulge else tol):
            out = [it for k, it in enumerate(items) if k not in (a, b)]
            return [*out, (h, bl, at, True)]
    return None


def refine(
    work: trimesh.Trimesh,
    mesh: trimesh.Trimesh,
    hulls: list[np.ndarray],
    cfg: ExportCfg,
    r: Refiner | None = None,
) -> list[np.ndarray]:
    """Spend the unused hull budget where the hulls bulge farthest past the surface.

    CoACD stops cutting a part once its concavity is below its threshold, measured on the whole object's scale, so
    a hull may still bridge a dent by a couple of percent of the object's size while budget is left. Worst first,
    a hull bulging more than ``refine_tolerance`` x diagonal is split by the best of ``refine_planes`` planes
    through the dent (the solid inside the hull is cut with manifold3d; each side's connected parts get their
    own hull), if that lowers the bulge and the result fits ``max_hulls``. A hull no plane improves is left as is.
    When the split does not fit the budget, touching hulls whose merged hull stays within the tolerance, or below
    ``MERGE_GAIN`` x the bulge being split (least added volume first), are merged to make room (``merge_one``);
    if not enough such pairs exist, nothing is merged and the hull stays as it is.
    ``r``: a refiner of ``mesh``/``work`` to reuse (its sample budget is set here for ``hulls``).
    """
    area = total_area(hulls)
    if r is None:
        r = Refiner(mesh, work, cfg, area)
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
                merged = merge_one(
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


MERGE_PAIRS = 8
"""Touching pairs (least added volume first) tried per merge by ``merge_to_tolerance``."""


def merge_to_tolerance(r: Refiner, pts: list[np.ndarray], tol: float, cfg: ExportCfg) -> list[np.ndarray]:
    """Fewest pieces at the fidelity: merge touching hulls (least added volume first) while the merged hull bulges
    past the surface at most ``tol`` [m] or the worse of the pair (a scan's noise: more pieces would not fit it
    closer), so no part of the surface is fitted worse than before (``merge_one``)."""
    r.area = total_area(pts)
    items = [(h, *r.bloat(h), False) for h in pts]
    while len(items) > 1:
        merged = merge_one(r, items, tol, cfg.max_hull_vertices, MERGE_PAIRS, pair_bulge=True)
        if merged is None:
            break
        items = merged
    return [it[0] for it in items]
