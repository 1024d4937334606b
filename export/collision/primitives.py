"""Fit a box, cylinder, sphere or capsule to an object when it matches within tolerance (faster, stabler contact).

Sizes follow MuJoCo: box half-extents; cylinder (radius, half-height); sphere (radius); capsule (radius,
half-length of the segment). Poses are in the object frame, quaternions wxyz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import trimesh

from real2sim.transforms import matrix_to_quat

PrimitiveKind = Literal["box", "sphere", "cylinder", "capsule"]
SIZE_COUNT: dict[PrimitiveKind, int] = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2}
"""How many of MuJoCo's three geom sizes each kind uses (the rest are written as 0)."""


def mj_geom_type(kind: PrimitiveKind):
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
    pts, _ = trimesh.sample.sample_surface(mesh, samples, seed=seed)
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
    cands.append((_err(d_box, diag, np.prod(ext), vol, tolerance), "box", np.eye(3), np.zeros(3), half))

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
        return None
    r_obj = object_from_obb[:3, :3] @ rot
    pos = trimesh.transform_points(centre[None], object_from_obb)[0]
    return Primitive(kind, pos, matrix_to_quat(r_obj), np.asarray(size, dtype=np.float64), float(err))


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
