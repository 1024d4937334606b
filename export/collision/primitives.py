"""Fit a box, cylinder, sphere or capsule to an object when it matches within tolerance (faster, stabler contact).

Sizes follow MuJoCo: box half-extents; cylinder (radius, half-height); sphere (radius); capsule (radius,
half-length of the segment). Poses are in the object frame, quaternions wxyz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import trimesh

from real2sim.transforms import matrix_to_quat

if TYPE_CHECKING:
    import mujoco

PrimitiveKind = Literal["box", "sphere", "cylinder", "capsule"]
SIZE_COUNT: dict[PrimitiveKind, int] = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2}
"""How many of MuJoCo's three geom sizes each kind uses (the rest are written as 0)."""


def mj_geom_type(kind: PrimitiveKind) -> mujoco.mjtGeom:
    """MuJoCo's ``mjtGeom`` of a primitive kind (``mjGEOM_BOX`` for ``box``)."""
    import mujoco

    return getattr(mujoco.mjtGeom, f"mjGEOM_{kind.upper()}")


def kind_of_geom(geom_type: int) -> PrimitiveKind | None:
    """The primitive kind of a MuJoCo geom type, None for any other geom (a mesh, a plane)."""
    import mujoco

    name = mujoco.mjtGeom(int(geom_type)).name.removeprefix("mjGEOM_").lower()
    return name if name in SIZE_COUNT else None  # type: ignore[return-value]


@dataclass(frozen=True)
class Primitive:
    """A primitive collision shape in the object frame; ``error`` is its worst surface distance / bbox diagonal."""

    kind: PrimitiveKind
    pos: np.ndarray
    quat: np.ndarray
    size: np.ndarray
    error: float

    def to_mesh(self) -> trimesh.Trimesh:
        """A triangle mesh of the primitive in the object frame (for metrics and renders)."""
        if self.kind == "box":
            m = trimesh.creation.box(extents=2 * self.size)
        elif self.kind == "sphere":
            m = trimesh.creation.icosphere(subdivisions=4, radius=self.size[0])
        elif self.kind == "cylinder":
            m = trimesh.creation.cylinder(
                radius=self.size[0], height=2 * self.size[1], sections=256
            )  # sagitta 1e-4 r
        else:
            m = trimesh.creation.capsule(radius=self.size[0], height=2 * self.size[1], count=[24, 24])
        t = trimesh.transformations.quaternion_matrix(
            self.quat
        )  # not transforms.pose_matrix: last bits differ
        t[:3, 3] = self.pos
        m.apply_transform(t)
        return m


def fit_primitive(
    mesh: trimesh.Trimesh, tolerance: float, seed: int = 0, samples: int = 3000
) -> Primitive | None:
    """The best-fitting primitive if one fits ``mesh`` within ``tolerance`` (fraction of the bbox diagonal)."""
    to_obb, ext = trimesh.bounds.oriented_bounds(mesh)
    ext = np.asarray(ext, dtype=np.float64)
    obb_from_object = np.asarray(to_obb, dtype=np.float64)
    object_from_obb = np.linalg.inv(obb_from_object)
    pts, _ = trimesh.sample.sample_surface(mesh, samples, seed=seed)[:2]  # (points, faces): no colour asked
    p = trimesh.transform_points(np.vstack([pts, mesh.vertices]), obb_from_object)
    diag = float(np.linalg.norm(ext))
    vol = float(mesh.volume)
    half = ext / 2
    cands: list[
        tuple[float, PrimitiveKind, np.ndarray, np.ndarray, np.ndarray]
    ] = []  # (err, kind, axis R, centre, size)

    q = np.abs(p)
    outside = np.linalg.norm(np.maximum(q - half, 0), axis=1)
    inside = np.min(half - q, axis=1)
    d_box = np.where(np.all(q <= half, axis=1), inside, outside)
    cands.append(
        (_err(d_box, diag, float(np.prod(ext)), vol, tolerance), "box", np.eye(3), np.zeros(3), half)
    )

    c = trimesh.transform_points(mesh.center_mass[None], obb_from_object)[0]
    r_s = np.linalg.norm(p - c, axis=1)
    r = float(r_s.max() + r_s.min()) / 2  # minimax radius
    cands.append(
        (_err(r_s - r, diag, 4 / 3 * np.pi * r**3, vol, tolerance), "sphere", np.eye(3), c, np.array([r]))
    )

    for k in range(3):
        o = [i for i in range(3) if i != k]
        rot = np.eye(3)[:, [o[0], o[1], k]]  # columns: local x, y, z(axis) in OBB coordinates
        if np.linalg.det(rot) < 0:
            rot[:, 0] *= -1
        z = np.abs(p[:, k])
        h = float(half[k])
        side = z < h * (1 - 1e-6)
        # the axis from a circle fit to the side (an odd-sided prism's bounding box is off its axis)
        axis = _circle_centre(p[side][:, o]) if side.sum() >= 3 else np.zeros(2)
        rho = np.linalg.norm(p[:, o] - axis, axis=1)
        # minimax radius over the side: a faceted cylinder's vertices and face centres are equally far off it
        rad = float(rho[side].max() + rho[side].min()) / 2 if side.any() else float(np.max(ext[o]) / 2)
        centre = np.zeros(3)
        centre[o] = axis
        d_in = np.minimum(rad - rho, h - z)
        d_out = np.hypot(np.maximum(rho - rad, 0), np.maximum(z - h, 0))
        d_cyl = np.where((rho <= rad) & (z <= h), d_in, d_out)
        v_cyl = np.pi * rad**2 * 2 * h
        cands.append((_err(d_cyl, diag, v_cyl, vol, tolerance), "cylinder", rot, centre, np.array([rad, h])))
        a = h - rad
        if a > 0.05 * h:
            d_cap = np.hypot(rho, np.maximum(z - a, 0)) - rad
            v_cap = np.pi * rad**2 * 2 * a + 4 / 3 * np.pi * rad**3
            cands.append(
                (_err(d_cap, diag, v_cap, vol, tolerance), "capsule", rot, centre, np.array([rad, a]))
            )

    err, kind, rot, centre, size = min(cands, key=lambda t: t[0])
    if not err <= tolerance:
        fit = robust_fit(p, diag, vol, half, tolerance)
        if fit is None:
            return None
        err, kind, rot, centre, size = fit
    r_obj = object_from_obb[:3, :3] @ rot
    pos = trimesh.transform_points(centre[None], object_from_obb)[0]
    return Primitive(kind, pos, matrix_to_quat(r_obj), np.asarray(size, dtype=np.float64), float(err))


ROBUST_QUANTILE = 95.0
"""A scanned surface fits a primitive when this percentile of its distances to it is within tolerance (the rest:
scan noise, Poisson's rounded edges and closed-over underside; docs/DECISIONS.md, Export, "Primitives from scans")."""
START_VOLUME = 0.35
"""A box or cylinder start (from the oriented bounding box) whose volume is off the mesh's by more than this share
is not refined (a mug, a stone: the fit could not close the gap; it saves the fit's time)."""
ROBUST_SAMPLES = 800
"""Surface points the robust least-squares fit uses (seeded subset of the samples)."""


def robust_fit(p: np.ndarray, diag: float, vol: float, half: np.ndarray, tolerance: float):
    """``(err, kind, rot, centre, size)`` of the box or cylinder (any OBB axis) that a noisy scanned surface ``p``
    (OBB frame) fits best by robust least squares, if its ``ROBUST_QUANTILE`` distance is within ``tolerance`` x
    ``diag`` and its volume within 3 x ``tolerance`` of ``vol``; ``err`` is that percentile distance / ``diag``."""
    from real2sim.export.collision.fit import refine_fit, signed_distance

    sub = p[np.linspace(0, len(p) - 1, min(len(p), ROBUST_SAMPLES)).astype(np.int64)]
    starts: list[tuple[PrimitiveKind, np.ndarray, np.ndarray]] = [("box", np.eye(3), half.copy())]
    for k in range(3):
        o = [i for i in range(3) if i != k]
        rot = np.eye(3)[:, [o[0], o[1], k]]
        if np.linalg.det(rot) < 0:
            rot[:, 0] *= -1
        starts.append(("cylinder", rot, np.array([float(np.mean(half[o])), float(half[k])])))
    best = None
    for kind, rot0, size0 in starts:
        if abs(_volume(kind, size0) / vol - 1) > START_VOLUME:
            continue
        rot, centre, size = refine_fit(kind, sub, rot0, np.zeros(3), size0, tolerance * diag / 4)
        if abs(_volume(kind, size) - vol) > 3 * tolerance * vol:
            continue
        err = (
            float(np.percentile(np.abs(signed_distance(kind, (p - centre) @ rot, size)), ROBUST_QUANTILE))
            / diag
        )
        if err <= tolerance and (best is None or err < best[0]):
            best = (err, kind, rot, centre, size)
    return best


def _volume(kind: PrimitiveKind, size: np.ndarray) -> float:
    """Volume of a box or cylinder of MuJoCo ``size``."""
    return float(np.prod(2 * size)) if kind == "box" else float(np.pi * size[0] ** 2 * 2 * size[1])


def _circle_centre(xy: np.ndarray) -> np.ndarray:
    """Least-squares (algebraic) circle centre of 2-D points: x^2 + y^2 = 2 a x + 2 b y + c."""
    a = np.column_stack([2 * xy, np.ones(len(xy))])
    sol, *_ = np.linalg.lstsq(a, np.sum(xy**2, axis=1), rcond=None)
    return sol[:2]


def _err(d: np.ndarray, diag: float, v_prim: float, v_mesh: float, tol: float) -> float:
    """Worst surface distance / diagonal, or inf when the volumes differ by more than 3 * tol."""
    if abs(v_prim - v_mesh) > 3 * tol * v_mesh:
        return float("inf")
    return float(np.max(np.abs(d)) / diag)
