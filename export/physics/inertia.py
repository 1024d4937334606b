"""Mass properties from the watertight mesh: mass, centre of mass and the full inertia tensor about it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from real2sim.errors import InputError


@dataclass(frozen=True)
class MassProperties:
    """Rigid-body mass properties in the object frame: ``mass`` [kg], ``com`` [m], ``inertia`` 3x3 [kg m^2] about
    the COM (full tensor), ``volume`` [m^3], ``density`` [kg/m^3]."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    volume: float
    density: float

    def full_inertia(self) -> tuple[float, float, float, float, float, float]:
        """MuJoCo's ``fullinertia`` order: Ixx, Iyy, Izz, Ixy, Ixz, Iyz."""
        i = self.inertia
        return (i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2])


def inertia_problems(inertia: np.ndarray, rtol: float = 1e-9) -> list[str]:
    """Why a 3x3 inertia tensor is not physical (empty list = valid): symmetric, positive definite, and the
    principal moments satisfy the triangle inequality."""
    i = np.asarray(inertia, dtype=np.float64)
    out = []
    if i.shape != (3, 3) or not np.all(np.isfinite(i)):
        return ["inertia is not a finite 3x3 matrix"]
    scale = float(np.max(np.abs(i))) or 1.0
    if np.max(np.abs(i - i.T)) > rtol * scale:
        out.append("inertia is not symmetric")
    ev = np.linalg.eigvalsh(0.5 * (i + i.T))
    if ev[0] <= 0:
        out.append(f"inertia is not positive definite (principal moments {ev.tolist()})")
    elif ev[0] + ev[1] < ev[2] * (1 - 1e-9):
        out.append(f"principal moments {ev.tolist()} violate the triangle inequality")
    return out


def mass_properties(
    mesh: trimesh.Trimesh, where: str, density: float | None = None, mass: float | None = None
) -> MassProperties:
    """Mass properties of a watertight mesh from a given ``mass`` [kg] (preferred) or ``density`` [kg/m^3]."""
    if not mesh.is_watertight:
        raise InputError(where, "mass properties need a watertight mesh")
    volume = float(mesh.volume)
    if not volume > 0:
        raise InputError(where, f"mesh volume is {volume:.3g} m^3; cannot compute mass")
    if mass is not None:
        if not (np.isfinite(mass) and mass > 0):
            raise InputError(where, f"mass must be a positive number of kg, got {mass}")
        rho = float(mass) / volume
    elif density is not None:
        if not (np.isfinite(density) and density > 0):
            raise InputError(where, f"density must be a positive number of kg/m^3, got {density}")
        rho = float(density)
    else:
        raise InputError(where, "object has neither mass nor density")
    m = mesh.copy()
    m.density = rho
    props = m.mass_properties
    inertia = np.asarray(props["inertia"], dtype=np.float64)  # about the centre of mass, object axes
    inertia = 0.5 * (inertia + inertia.T)
    problems = inertia_problems(inertia)
    if problems:
        raise InputError(where, "; ".join(problems))
    return MassProperties(
        mass=float(props["mass"]),
        com=np.asarray(props["center_mass"], dtype=np.float64),
        inertia=inertia,
        volume=volume,
        density=rho,
    )
