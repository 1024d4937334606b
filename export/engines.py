"""Checks of a package in the engines it is written for besides MuJoCo: usd-core (the USD's physics schema), Newton
(the USD), PyBullet and urdf2webots (the per-object URDFs). Each is skipped with one line when its client is not
installed (``pip install 'real2sim[engines]'``); MuJoCo's compiled model is the reference they are compared with."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from real2sim.export.engine_reference import reference
from real2sim.export.manifest import PackageManifest
from real2sim.results import Check

if TYPE_CHECKING:
    import mujoco

ENGINES = ("usd", "pybullet", "webots", "newton")
"""Every engine check, in the order they run."""
EXPORT_ENGINES = ("usd", "webots")
"""The engine checks export runs; PyBullet's and Newton's, which cost more, run in ``real2sim validate``
(docs/engines.md)."""
CLIENTS = {"usd": "pxr", "pybullet": "pybullet", "webots": "urdf2webots", "newton": "newton"}
"""The module each check needs."""


def skipped(engine: str) -> Check:
    """The one line that says an engine's check did not run."""
    return Check(
        engine, False, f"{CLIENTS[engine]} is not installed: pip install 'real2sim[engines]'", skipped=True
    )


def engine_checks(
    pkg_dir: Path, man: PackageManifest, model: mujoco.MjModel, engines: tuple[str, ...], max_verts: int
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
