"""What every engine check compares with: each object as MuJoCo's compiled model has it at ``home`` (mass,
inertia, pose), the support box, and the tolerances the engines must meet."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from real2sim.export.writers.manifest import PackageManifest
from real2sim.transforms import quat_to_matrix

if TYPE_CHECKING:
    import mujoco

LIFT = 0.005
"""Height [m] above its resting pose each dynamic body is released from."""
SETTLE_SECONDS = 2.0
"""Simulated time [s] a released body has to come back to rest."""
MAX_REST_ERROR = 0.002
"""Largest allowed distance [m] between a body's centre of mass after ``SETTLE_SECONDS`` and MuJoCo's resting one."""
MASS_RTOL = 1e-4
"""Masses and inertia tensors must equal MuJoCo's within this relative tolerance."""


@dataclass(frozen=True)
class Body:
    """One object as MuJoCo has it at ``home``: mass, inertia tensor about the COM in the body frame, body pose."""

    name: str
    label: str
    dynamic: bool
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    pos: np.ndarray
    quat: np.ndarray

    @property
    def world_com(self) -> np.ndarray:
        return quat_to_matrix(self.quat) @ self.com + self.pos


@dataclass(frozen=True)
class EngineInputs:
    """What an engine check reads: the package's USD, its per-object URDFs (in manifest order), MuJoCo's reference
    bodies and support box (``reference``), and the collider vertex budget."""

    usd: Path
    urdfs: list[Path]
    bodies: list[Body]
    support: tuple[np.ndarray, np.ndarray, np.ndarray]
    max_verts: int


def reference(
    model: mujoco.MjModel, man: PackageManifest
) -> tuple[list[Body], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The objects of the compiled MJCF at ``home`` and the support box (centre, wxyz quaternion, half-extents)."""
    import mujoco

    data = mujoco.MjData(model)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
    if key >= 0:
        mujoco.mj_resetDataKeyframe(model, data, key)
    mujoco.mj_forward(model, data)
    bodies = []
    for o in man.objects:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, o.name)
        r = quat_to_matrix(model.body_iquat[b])
        bodies.append(
            Body(
                o.name,
                o.label,
                o.role == "dynamic",
                float(model.body_mass[b]),
                model.body_ipos[b].copy(),
                r @ np.diag(model.body_inertia[b]) @ r.T,
                data.xpos[b].copy(),
                data.xquat[b].copy(),
            )
        )
    g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "support")
    support = (model.geom_pos[g].copy(), model.geom_quat[g].copy(), model.geom_size[g].copy())
    return bodies, support


def rel_error(a: ArrayLike, b: ArrayLike) -> float:
    """Largest difference of ``a`` and ``b`` relative to the largest magnitude in ``b``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))
