"""PyBullet loads every per-object URDF (inertia from the file) on the package's ``urdf/support.urdf``; each dynamic body, released
``LIFT`` above MuJoCo's resting pose, comes back to it within ``MAX_REST_ERROR`` in ``SETTLE_SECONDS``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.export.checks.reference import (
    LIFT,
    MASS_RTOL,
    MAX_REST_ERROR,
    SETTLE_SECONDS,
    Body,
    EngineInputs,
)
from real2sim.export.writers.urdf_objects import SUPPORT_URDF
from real2sim.results import Check

HZ = 240
"""PyBullet's time step is 1/240 s (its default, which its contact parameters are tuned for)."""


def _xyzw(q_wxyz) -> list[float]:
    w, x, y, z = (float(v) for v in q_wxyz)
    return [x, y, z, w]


def _import_quietly():
    """``pybullet``, without the build-time line its C code prints on import."""
    import sys

    from real2sim.stdio import native_output_silenced

    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    with native_output_silenced():
        import pybullet
    return pybullet


def bullet_checks(urdfs: list[Path], bodies: list[Body], support) -> list[Check]:
    p = _import_quietly()

    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -9.81, physicsClientId=cid)
        p.setTimeStep(1.0 / HZ, physicsClientId=cid)
        support_urdf = urdfs[0].parent / SUPPORT_URDF if urdfs else None
        if (
            support_urdf is not None and support_urdf.is_file()
        ):  # the package's table, with its contact values
            p.loadURDF(str(support_urdf), useFixedBase=True, physicsClientId=cid)
        else:
            c, q, h = support
            box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[float(v) for v in h], physicsClientId=cid)
            sup = p.createMultiBody(0, box, -1, [float(v) for v in c], _xyzw(q), physicsClientId=cid)
            p.changeDynamics(sup, -1, lateralFriction=1.0, physicsClientId=cid)
        ids = []
        for u, b in zip(urdfs, bodies, strict=True):
            try:
                i = p.loadURDF(
                    str(u),
                    [float(v) for v in b.pos + [0, 0, LIFT if b.dynamic else 0.0]],
                    _xyzw(b.quat),
                    useFixedBase=not b.dynamic,
                    flags=p.URDF_USE_INERTIA_FROM_FILE,
                    physicsClientId=cid,
                )
            except p.error as exc:
                return [Check(f"pybullet loads {u.name}", False, str(exc))]
            ids.append(i)
        for _ in range(int(round(SETTLE_SECONDS * HZ))):
            p.stepSimulation(physicsClientId=cid)
        checks = []
        for i, b in zip(ids, bodies, strict=True):
            if not b.dynamic:
                continue
            com = np.array(p.getBasePositionAndOrientation(i, physicsClientId=cid)[0])  # the inertial frame
            mass = p.getDynamicsInfo(i, -1, physicsClientId=cid)[0]
            ref = b.world_com
            d = float(np.linalg.norm(com - ref))
            checks.append(
                Check(
                    f"pybullet rest {b.label}",
                    d < MAX_REST_ERROR and abs(mass - b.mass) <= MASS_RTOL * b.mass,
                    f"{d * 1e3:.2f} mm from MuJoCo's rest after a {LIFT * 1e3:g} mm drop "
                    f"(height {(com[2] - ref[2]) * 1e3:+.2f} mm), {SETTLE_SECONDS:g} s; mass {mass:.6g} kg",
                    d,
                    MAX_REST_ERROR,
                )
            )
        return checks
    finally:
        p.disconnect(physicsClientId=cid)


def run(inp: EngineInputs) -> list[Check]:
    """This engine's checks of a package (the entry point ``engines.ENGINES`` calls)."""
    return bullet_checks(inp.urdfs, inp.bodies, inp.support)
