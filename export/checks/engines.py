"""Checks of a package in the engines it is written for besides MuJoCo: usd-core (the USD's physics schema), Newton
(the USD), PyBullet and urdf2webots (the per-object URDFs). Each is skipped with one line when its client is not
installed (``pip install 'real2sim[engines]'``); MuJoCo's compiled model is the reference they are compared with.

A new engine check is a module of this package with ``run(EngineInputs) -> list[Check]`` and one line in
``ENGINES``."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from real2sim.export.checks.reference import EngineInputs, reference
from real2sim.export.writers.manifest import PackageManifest
from real2sim.results import Check

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class Engine:
    """One engine check: the module it needs, the package file it reads, and its module in this package."""

    client: str
    reads: Literal["usd", "urdf"]
    module: str


ENGINES: dict[str, Engine] = {
    "usd": Engine("pxr", "usd", "usd"),
    "pybullet": Engine("pybullet", "urdf", "bullet"),
    "webots": Engine("urdf2webots", "urdf", "webots"),
    "newton": Engine("newton", "usd", "newton"),
}
"""Every engine check, in the order they run."""
EXPORT_ENGINES = ("usd", "webots")
"""The engine checks export runs; PyBullet's and Newton's, which cost more, run in ``real2sim validate``
(docs/engines.md)."""


def skipped(engine: str) -> Check:
    """The one line that says an engine's check did not run."""
    return Check(
        engine,
        False,
        f"{ENGINES[engine].client} is not installed: pip install 'real2sim[engines]'",
        skipped=True,
    )


def _run(engine: str) -> Callable[[EngineInputs], list[Check]]:
    mod = importlib.import_module(f"real2sim.export.checks.{ENGINES[engine].module}")
    return cast(Callable[[EngineInputs], list[Check]], mod.run)


def engine_checks(
    pkg_dir: Path, man: PackageManifest, model: mujoco.MjModel, engines: tuple[str, ...], max_verts: int
) -> list[Check]:
    """The checks of ``engines`` (see ``ENGINES``) that apply to the files in ``pkg_dir``."""
    usd = pkg_dir / f"{man.name}.usd"
    urdfs = [pkg_dir / "urdf" / f"{o.name}.urdf" for o in man.objects]
    has = {"usd": usd.is_file(), "urdf": all(p.is_file() for p in urdfs)}
    wanted = [e for e, spec in ENGINES.items() if e in engines and has[spec.reads]]
    if not wanted:
        return []
    bodies, support = reference(model, man)
    inputs = EngineInputs(usd, urdfs, bodies, support, max_verts)
    checks: list[Check] = []
    for e in wanted:
        if importlib.util.find_spec(ENGINES[e].client) is None:
            checks.append(skipped(e))
        else:
            checks += _run(e)(inputs)
    return checks
