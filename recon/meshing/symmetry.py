"""Symmetry completion of a partially seen object resting on a support (after Bohg et al. 2011, "Mind the gap").

A scanned object is seen from a few sides only; ``meshing/carve.py`` marks the space some ray crossed as empty and the
meshing treats the unseen rest above the support as solid, which fills unseen concavities (the far half of a
mug's cavity floor that no ray reached). Many objects on a table are symmetric about a vertical plane or a
vertical axis (boxes, cups, bowls, bottles; a mug but for its handle). When the scan itself says so, the sensor
rays are copied through the symmetry: the copied (virtual) sensors see the unseen side as the real ones saw its
counterpart, so the same carving makes the unseen half of the cavity seen-empty, and the copied end points that
land in unseen space become surface points.

Which symmetry: every candidate transform ``S`` (a reflection about a vertical plane, or rotations about a vertical
axis) maps the object's observed points ``p`` to ``S p``; each image is
  - *supported* when an observed point lies within ``tol`` of it (the two sides agree),
  - *contradicted* when it lies in carved space (a ray was seen to pass through there) or beside the object,
  - *unseen* otherwise (no evidence either way).
The best plane (or axis) is the one with the most support less the contradictions, refined on its supported
pairs (ICP for a plane; for an axis, the point nearest the normal lines); it is accepted only if its support,
contradiction and residual pass ``MIN_SUPPORT``, ``MAX_CONTRADICTION`` and ``MAX_RESIDUAL`` (values and why:
docs/DECISIONS.md, Recon; a rotation also ``MAX_PROTRUSION``). Otherwise nothing changes (an irregular stone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from scipy.spatial import cKDTree

from real2sim.recon.meshing.carve import FreeSpace, carve, carve_projective

EVIDENCE_REACH = 1.5
"""The evidence grid spans this many times the points' horizontal radius about their centre (the candidate planes
and axes lie within half the radius of it, so the images of the points stay inside)."""
MIN_SUPPORT = 0.4
"""A symmetry is accepted only if this share of the mapped points land within ``tol`` of observed ones."""
MAX_CONTRADICTION = 0.04
"""... and at most this share land in seen-empty space (or outside the search region)."""
MAX_PROTRUSION = 0.2
"""A rotation axis may leave at most this share of the points off its body (a handle, a spout): points whose
images land in seen-empty space under two or more of the rotations."""
MAX_RESIDUAL = 1.1
"""... and the mapped points' spread about the observed surface, over its own spread, is at most this."""
SCORE_POINTS = 1500
"""Observed points (seeded subsample) scored per candidate transform."""
COARSE_POINTS = 500
"""Of those, the first this many score the coarse candidate grid (before ICP refinement)."""
MIRROR_STEP_DEG = 3.0
"""Angular step [deg] of the coarse search over mirror-plane normals."""
ROTATION_ANGLES = 6
"""Rotations tried about a candidate vertical axis: multiples of 360 / this many degrees."""


@dataclass(frozen=True, eq=False)
class Symmetry:
    """An accepted symmetry: ``kind`` ``"mirror"`` or ``"rotation"``; ``transforms`` the 4x4 maps whose images of
    the rays are added (one for a mirror, the accepted non-identity rotations for an axis); ``support`` and
    ``contradiction``: the mean fractions of the scored points, ``params``: plane (point x, y, normal angle [rad])
    or axis (x, y)."""

    kind: Literal["mirror", "rotation"]
    transforms: tuple[np.ndarray, ...]
    support: float
    contradiction: float
    params: tuple[float, ...]


def reflection(point_xy: np.ndarray, angle: float) -> np.ndarray:
    """4x4 reflection about the vertical plane through ``point_xy`` with horizontal normal at ``angle`` [rad]."""
    n = np.array([np.cos(angle), np.sin(angle), 0.0])
    T = np.eye(4)
    T[:3, :3] -= 2.0 * np.outer(n, n)
    T[:3, 3] = 2.0 * (n[:2] @ np.asarray(point_xy, dtype=np.float64)) * n
    return T


def rotation_z(centre_xy: np.ndarray, angle: float) -> np.ndarray:
    """4x4 rotation by ``angle`` [rad] about the vertical axis through ``centre_xy``."""
    c, s = np.cos(angle), np.sin(angle)
    T = np.eye(4)
    T[:2, :2] = [[c, -s], [s, c]]
    ctr = np.asarray(centre_xy, dtype=np.float64)
    T[:2, 3] = ctr - T[:2, :2] @ ctr
    return T


def _apply(T: np.ndarray, p: np.ndarray) -> np.ndarray:
    return p @ T[:3, :3].T + T[:3, 3]


class Evidence:
    """What the scan says about a region around an object, on a grid (spacing ``h``): ``carved`` (seen empty) and
    the distance [m] from every node to the nearest observed point's node."""

    def __init__(
        self, points: np.ndarray, rays: FreeSpace, support_z: float, h: float, margin: float
    ) -> None:
        from scipy import ndimage

        ctr = 0.5 * (points.min(axis=0) + points.max(axis=0))
        radius = float(np.linalg.norm(points[:, :2] - ctr[:2], axis=1).max())
        # a plane or axis a little off the points' centre maps them up to about twice as far out: cover that
        reach = EVIDENCE_REACH * radius + 4.0 * h
        self.lo = np.array([ctr[0] - reach, ctr[1] - reach, support_z])
        top = float(points[:, 2].max()) + 4.0 * h
        self.h = h
        self.shape = (int(np.ceil(2 * reach / h)) + 1, int(np.ceil(2 * reach / h)) + 1,
                      int(np.ceil((top - support_z) / h)) + 1)  # fmt: skip
        carved = carve_projective(self.lo, h, self.shape, rays, margin, support_z)
        if carved is None:
            carved = carve(self.lo, h, self.shape, rays, margin, support_z)
        self.carved = carved
        occ = np.ones(self.shape, dtype=bool)
        ijk = self.index(points)
        ok = ijk[:, 0] >= 0
        occ[ijk[ok, 0], ijk[ok, 1], ijk[ok, 2]] = False
        self.dist = cast(np.ndarray, ndimage.distance_transform_edt(occ)) * h
        self.hi = self.lo + h * (np.asarray(self.shape) - 1)

    def index(self, q: np.ndarray) -> np.ndarray:
        """Nearest node of each point; rows of -1 for points outside the grid."""
        ijk = np.rint((q - self.lo) / self.h).astype(np.int64)
        bad = np.any((ijk < 0) | (ijk >= np.asarray(self.shape)), axis=1)
        ijk[bad] = -1
        return ijk

    def classify(self, q: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """``(supported, contradicted)`` masks of mapped points ``q``."""
        ijk = self.index(q)
        out = ijk[:, 0] < 0
        ijk[out] = 0
        d = self.dist[ijk[:, 0], ijk[:, 1], ijk[:, 2]]
        c = self.carved[ijk[:, 0], ijk[:, 1], ijk[:, 2]]
        supported = ~out & (d <= tol)
        contradicted = out | (c & ~supported)
        return supported, contradicted


def _score(ev: Evidence, q: np.ndarray, tol: float) -> tuple[float, float]:
    s, c = ev.classify(q, tol)
    return float(s.mean()), float(c.mean())


def _score_many(ev: Evidence, transforms: np.ndarray, p: np.ndarray, tol: float,
                chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Supported and contradicted fractions of ``p`` mapped by each of ``transforms`` (M, 4, 4), all of which
    keep z (vertical planes and axes): only x, y are mapped, in grid units."""
    shape = np.asarray(ev.shape)
    dist = ev.dist.reshape(-1, shape[2])
    carved = ev.carved.reshape(-1, shape[2])
    pv = (p - ev.lo) / ev.h
    iz = np.clip(np.rint(pv[:, 2]).astype(np.int64), 0, shape[2] - 1)
    # in grid units the map is x -> R x + (R lo + t - lo) / h
    R = transforms[:, :2, :2]
    t = (np.einsum("mij,j->mi", R, ev.lo[:2]) + transforms[:, :2, 3] - ev.lo[:2]) / ev.h
    sup = np.empty(len(transforms))
    con = np.empty(len(transforms))
    for a in range(0, len(transforms), chunk):
        q = np.matmul(R[a : a + chunk], pv[:, :2].T) + t[a : a + chunk, :, None]  # (m, 2, P)
        ij = np.rint(q).astype(np.int64)
        out = (ij[:, 0] < 0) | (ij[:, 0] >= shape[0]) | (ij[:, 1] < 0) | (ij[:, 1] >= shape[1])
        flat = np.clip(ij[:, 0], 0, shape[0] - 1) * shape[1] + np.clip(ij[:, 1], 0, shape[1] - 1)
        supported = ~out & (dist[flat, iz] <= tol)
        contradicted = out | (carved[flat, iz] & ~supported)
        sup[a : a + chunk] = supported.mean(axis=1)
        con[a : a + chunk] = contradicted.mean(axis=1)
    return sup, con


def _refine_mirror(p: np.ndarray, tree: cKDTree, point: np.ndarray, angle: float, tol: float,
                   iters: int = 8) -> tuple[np.ndarray, float]:  # fmt: skip
    """ICP on the plane: pair each mapped point with its nearest observed point (within ``2 tol``) and refit the
    plane that best swaps the pairs (normal along their differences, through their midpoints)."""
    for _ in range(iters):
        q = _apply(reflection(point, angle), p)
        d, j = tree.query(q, distance_upper_bound=2.0 * tol)
        ok = np.isfinite(d)
        if ok.sum() < 10:
            break
        a, b = p[ok, :2], tree.data[j[ok], :2]
        diff = a - b
        n = np.array([np.cos(angle), np.sin(angle)])
        sign = np.where(diff @ n >= 0, 1.0, -1.0)
        w = diff * sign[:, None]
        big = np.linalg.norm(w, axis=1) > 0.5 * tol  # pairs far from the plane fix its direction
        if big.sum() >= 10:
            _, _, vt = np.linalg.svd(w[big], full_matrices=False)
            n_new = vt[0] if vt[0] @ n >= 0 else -vt[0]
            angle = float(np.arctan2(n_new[1], n_new[0]))
            n = n_new
        offset = float(np.mean(0.5 * (a + b) @ n))
        point = offset * n
    return np.asarray(point, dtype=np.float64), angle


def _refine_axis(points: np.ndarray, normals: np.ndarray, centre: np.ndarray, tol: float,
                 iters: int = 5) -> np.ndarray:  # fmt: skip
    """Least-squares axis of a surface of revolution: every normal line meets the axis, so the axis (x, y) is the
    point nearest the lines of the points' horizontal normals; lines passing farther than ``2 tol`` from the
    current estimate (a handle, the top and bottom faces) are left out, and the fit repeated."""
    nxy = normals[:, :2]
    ln = np.linalg.norm(nxy, axis=1)
    ok = ln > 0.5  # normals at least 30 degrees from vertical
    perp = np.stack([-nxy[:, 1], nxy[:, 0]], axis=1) / np.maximum(ln, 1e-12)[:, None]
    b_all = np.einsum("ij,ij->i", perp, points[:, :2])
    for _ in range(iters):
        r = perp @ centre - b_all
        use = ok & (np.abs(r) <= 2.0 * tol)
        if use.sum() < 10:
            break
        centre = np.linalg.lstsq(perp[use], b_all[use], rcond=None)[0]
    return np.asarray(centre, dtype=np.float64)


def _residual(T: np.ndarray | None, p: np.ndarray, points: np.ndarray, normals: np.ndarray, tree: cKDTree,
              tol: float) -> float:  # fmt: skip
    """Robust spread [m] (1.4826 x median absolute value) of the offsets of the mapped points ``T p`` from the
    tangent plane of their nearest observed point (pairs within ``tol``). ``T=None``: each point against its
    nearest other observed point, the surface's own noise."""
    if T is None:
        d, j = tree.query(p, k=2, distance_upper_bound=tol)
        d, j, q = d[:, 1], j[:, 1], p
    else:
        q = _apply(T, p)
        d, j = tree.query(q, distance_upper_bound=tol)
    ok = np.isfinite(d)
    if ok.sum() < 10:
        return np.inf
    r = np.abs(np.einsum("ij,ij->i", q[ok] - points[j[ok]], normals[j[ok]]))
    return 1.4826 * float(np.median(r))


def find_symmetry(
    points: np.ndarray,
    normals: np.ndarray,
    rays: FreeSpace,
    support_z: float,
    h: float,
    margin: float,
    tol: float,
    seed: int = 0,
) -> tuple[Symmetry | None, dict[str, float], Evidence]:
    """The vertical mirror plane or rotation axis that the scan supports best, if it passes the thresholds, and a
    report of the best candidates' scores (for logging and tests). ``tol`` [m]: how close a mapped point must come
    to an observed one to count as agreeing (a few times the range noise)."""
    points = np.asarray(points, dtype=np.float64)
    ev = Evidence(points, rays, support_z, h, margin)
    rng = np.random.default_rng(seed)
    p = (
        points
        if len(points) <= SCORE_POINTS
        else points[rng.choice(len(points), SCORE_POINTS, replace=False)]
    )
    p_coarse = p[:COARSE_POINTS]
    normals = np.asarray(normals, dtype=np.float64)
    tree = cKDTree(points)
    noise = max(_residual(None, p, points, normals, tree, tol), 1e-9)
    ctr = 0.5 * (points[:, :2].min(axis=0) + points[:, :2].max(axis=0))
    radius = float(np.linalg.norm(points[:, :2] - ctr, axis=1).max())
    report: dict[str, float] = {}

    # --- mirror planes: normal angle in [0, pi), offset along the normal around the footprint's centre
    offs = np.arange(-0.5 * radius, 0.5 * radius + 1e-12, h)
    cand = [(ctr + o * np.array([np.cos(a), np.sin(a)]), float(a))
            for a in np.radians(np.arange(0.0, 180.0, MIRROR_STEP_DEG)) for o in offs]  # fmt: skip
    s, c = _score_many(ev, np.stack([reflection(pt, a) for pt, a in cand]), p_coarse, tol)
    pt, ang = cand[int(np.argmax(s - 2.0 * c))]
    pt, ang = _refine_mirror(p, tree, pt, ang, tol)
    T = reflection(pt, ang)
    s_m, c_m = _score(ev, _apply(T, p), tol)
    r_m = _residual(T, p, points, normals, tree, tol) / noise
    report.update(mirror_support=s_m, mirror_contradiction=c_m, mirror_residual=r_m)
    mirror = None
    if s_m >= MIN_SUPPORT and c_m <= MAX_CONTRADICTION and r_m <= MAX_RESIDUAL:
        mirror = Symmetry("mirror", (T,), s_m, c_m, (float(pt[0]), float(pt[1]), ang))

    # --- rotation axes: centres on a grid over the footprint, rotations by multiples of 360 / ROTATION_ANGLES
    angles = [2.0 * np.pi * k / ROTATION_ANGLES for k in range(1, ROTATION_ANGLES)]
    span = np.arange(-0.5 * radius, 0.5 * radius + 1e-12, 2.0 * h)
    centres = [ctr + np.array([dx, dy]) for dx in span for dy in span]
    Ts = np.stack([rotation_z(cx, a) for cx in centres for a in angles])
    s, c = _score_many(ev, Ts, p_coarse, tol)
    v = (s - 2.0 * c).reshape(len(centres), len(angles)).mean(axis=1)
    c_xy = _refine_axis(points, normals, centres[int(np.argmax(v))], tol)
    rots = tuple(rotation_z(c_xy, a) for a in angles)
    body = body_mask(ev, rots, p, tol)
    s_r, c_r = _scores_of(ev, rots, p[body], tol) if body.any() else (0.0, 1.0)
    r_r = float(np.mean([_residual(T, p[body], points, normals, tree, tol) for T in rots])) / noise
    report.update(rotation_support=s_r, rotation_contradiction=c_r, rotation_body=float(body.mean()),
                  rotation_residual=r_r)  # fmt: skip
    rotation = None
    if (
        body.mean() >= 1.0 - MAX_PROTRUSION
        and s_r >= MIN_SUPPORT
        and c_r <= MAX_CONTRADICTION
        and r_r <= MAX_RESIDUAL
    ):
        rotation = Symmetry("rotation", rots, s_r, c_r, (float(c_xy[0]), float(c_xy[1])))
    return (rotation or mirror), report, ev


def body_mask(ev: Evidence, transforms: tuple[np.ndarray, ...], p: np.ndarray, tol: float) -> np.ndarray:
    """The points that follow the symmetry: images contradicted (in seen-empty space) under at most one of
    ``transforms`` (a single transform, a mirror: under none). The rest is a protrusion that breaks it (a mug's
    handle under rotation); it is neither scored nor copied."""
    bad = np.zeros(len(p), dtype=np.int64)
    for T in transforms:
        bad += ev.classify(_apply(T, p), tol)[1]
    return bad <= (1 if len(transforms) > 1 else 0)


def _scores_of(
    ev: Evidence, transforms: tuple[np.ndarray, ...], p: np.ndarray, tol: float
) -> tuple[float, float]:
    """Mean supported and contradicted fractions of ``p`` over ``transforms``."""
    sc = [_score(ev, _apply(T, p), tol) for T in transforms]
    return float(np.mean([x[0] for x in sc])), float(np.mean([x[1] for x in sc]))


def complete(
    points: np.ndarray,
    normals: np.ndarray,
    sym: Symmetry,
    support_z: float,
    tol: float,
    ev: Evidence,
) -> tuple[np.ndarray, np.ndarray]:
    """The object's points and normals with the mapped points that land in unseen space (farther than ``tol``
    from every observed point, not in carved space, above the support) added."""
    new_p, new_n = [points], [normals]
    body = (
        body_mask(ev, sym.transforms, points, tol) if sym.kind == "rotation" else np.ones(len(points), bool)
    )
    for T in sym.transforms:
        q = _apply(T, points[body])
        s, c = ev.classify(q, tol)
        add = ~s & ~c & (q[:, 2] > support_z)
        new_p.append(q[add])
        new_n.append(normals[body][add] @ T[:3, :3].T)
    return np.concatenate(new_p), np.concatenate(new_n)


def carved_images(
    sym: Symmetry, ev: Evidence, lo: np.ndarray, h: float, shape: tuple[int, int, int]
) -> np.ndarray:
    """Bool grid (nodes ``lo + h * index``): the space the mapped rays carve, i.e. the nodes whose preimage under
    one of the transforms is carved in ``ev`` (carving the mapped rays of a sensor is carving the original rays
    at the mapped-back node). Nodes whose preimage is outside the evidence grid stay uncarved."""
    ev_shape = np.asarray(ev.shape)
    gx, gy = np.meshgrid(lo[0] + h * np.arange(shape[0]), lo[1] + h * np.arange(shape[1]), indexing="ij")
    xy = np.stack([gx.ravel(), gy.ravel()], axis=1)
    iz = np.rint((lo[2] + h * np.arange(shape[2]) - ev.lo[2]) / ev.h).astype(np.int64)
    z_in = (iz >= 0) & (iz < ev_shape[2])
    iz = np.clip(iz, 0, ev_shape[2] - 1)
    out = np.zeros((len(xy), shape[2]), dtype=bool)
    flat_carved = ev.carved.reshape(-1, ev_shape[2])
    for T in sym.transforms:
        Ti = np.linalg.inv(T)
        pre = xy @ Ti[:2, :2].T + Ti[:2, 3]
        ij = np.rint((pre - ev.lo[:2]) / ev.h).astype(np.int64)
        ok = np.all((ij >= 0) & (ij < ev_shape[:2]), axis=1)
        col = ij[ok, 0] * ev_shape[1] + ij[ok, 1]
        out[ok] |= flat_carved[col][:, iz] & z_in
    return out.reshape(shape)
