"""Checks of a package in the engines it is written for besides MuJoCo: usd-core (the USD's physics schema), Newton
(the USD), PyBullet and urdf2webots (the per-object URDFs). Each is skipped with one line when its client is not
installed (``pip install 'real2sim[engines]'``); MuJoCo's compiled model is the reference they are compared with."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.export.manifest import PackageManifest
from real2sim.results import Check
from real2sim.transforms import quat_to_matrix

ENGINES = ("usd", "pybullet", "webots", "newton")
"""Every engine check, in the order they run."""
EXPORT_ENGINES = ("usd", "webots")
"""The engine checks export runs; PyBullet's and Newton's, which cost more, run in ``real2sim validate``
(docs/engines.md)."""
CLIENTS = {"usd": "pxr", "pybullet": "pybullet", "webots": "urdf2webots", "newton": "newton"}
"""The module each check needs."""
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
    friction: float

    @property
    def world_com(self) -> np.ndarray:
        return quat_to_matrix(self.quat) @ self.com + self.pos


def reference(model, man: PackageManifest) -> tuple[list[Body], tuple[np.ndarray, np.ndarray, np.ndarray]]:
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
        cols = [g for g in range(model.ngeom) if model.geom_bodyid[g] == b and model.geom_group[g] == 3]
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
                float(model.geom_friction[cols[0], 0]) if cols else 1.0,
            )
        )
    g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "support")
    support = (model.geom_pos[g].copy(), model.geom_quat[g].copy(), model.geom_size[g].copy())
    return bodies, support


def skipped(engine: str) -> Check:
    """The one line that says an engine's check did not run."""
    return Check(
        engine, False, f"{CLIENTS[engine]} is not installed: pip install 'real2sim[engines]'", skipped=True
    )


def engine_checks(
    pkg_dir: Path, man: PackageManifest, model, engines: tuple[str, ...], max_verts: int
) -> list[Check]:
    """The checks of ``engines`` (see ``ENGINES``) that apply to the files in ``pkg_dir``."""
    usd = pkg_dir / f"{man.name}.usd"
    urdfs = [pkg_dir / "urdf" / f"{o.name}.urdf" for o in man.objects]
    has_urdfs = all(p.is_file() for p in urdfs)
    wanted = [e for e in ENGINES if e in engines and (usd.is_file() if e in ("usd", "newton") else has_urdfs)]
    if not wanted:
        return []
    bodies, support = reference(model, man)
    checks: list[Check] = []
    for e in wanted:
        if importlib.util.find_spec(CLIENTS[e]) is None:
            checks.append(skipped(e))
        elif e == "usd":
            from real2sim.export.check_usd import usd_checks

            checks += usd_checks(usd, bodies, max_verts)
        elif e == "newton":
            from real2sim.export.check_newton import newton_checks

            checks += newton_checks(usd, bodies)
        elif e == "pybullet":
            from real2sim.export.check_bullet import bullet_checks

            checks += bullet_checks(urdfs, bodies, support)
        else:
            from real2sim.export.check_webots import webots_checks

            checks += webots_checks(urdfs[0])
    return checks


def rel_error(a, b) -> float:
    """Largest difference of ``a`` and ``b`` relative to the largest magnitude in ``b``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))
