"""``validate_package``: check a package the way a user would: compile, load the URDF, step 5 s, and measure what
matters (the checks themselves are in ``export.checks``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.errors import InputError
from real2sim.executor import thread_budget
from real2sim.export.checks.compiled import physics_checks, simulate, static_checks, urdf_checks
from real2sim.export.checks.engines import engine_checks
from real2sim.export.config import ValidateCfg
from real2sim.export.writers.manifest import PackageManifest
from real2sim.results import Check

if TYPE_CHECKING:
    import mujoco


def validate_package(
    pkg_dir: str | Path,
    cfg: ValidateCfg | None = None,
    manifest: PackageManifest | None = None,
    model: mujoco.MjModel | None = None,
) -> tuple[Check, ...]:
    """All checks of a package folder (see ``ValidateCfg``); a package is good when every check passed. ``manifest``
    (None: read from the folder's ``export.json``) and ``model`` (the compiled ``scene.xml``; None: compiled here)
    let export pass what it has built instead of reading it back."""
    import mujoco

    cfg = cfg or ValidateCfg()
    cfg.validate()
    pkg_dir = Path(pkg_dir)
    if not pkg_dir.is_dir():
        raise InputError(pkg_dir, "no such package folder")
    man = manifest or PackageManifest.from_json(pkg_dir)
    name = man.name
    max_hulls = cfg.max_hulls or man.max_hulls
    max_verts = cfg.max_hull_vertices or man.max_hull_vertices
    if model is None:
        try:
            model = mujoco.MjModel.from_xml_path(str(pkg_dir / "scene.xml"))
        except Exception as exc:  # MuJoCo raises ValueError with its parser message
            return (Check("mjcf compiles", False, str(exc).splitlines()[0]),)
    assert model is not None  # (mujoco has no stubs: pyright keeps the parameter's None after the assignment)
    compiled = Check("mjcf compiles", True, f"scene.xml + {name}.xml: {model.nbody - 1} bodies")

    data = mujoco.MjData(model)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
    if key >= 0:
        mujoco.mj_resetDataKeyframe(model, data, key)
    mujoco.mj_forward(model, data)
    pen = max([0.0] + [-float(data.contact[i].dist) for i in range(data.ncon)])
    objects = man.objects
    bodies = {o.name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, o.name) for o in objects}
    x0 = {n: data.xpos[b].copy() for n, b in bodies.items()}
    steps = int(round(cfg.sim_seconds / model.opt.timestep))
    urdf = pkg_dir / f"{name}.urdf"
    with ThreadPoolExecutor(1) as pool:  # a worker with a 1-thread budget steps after the checks instead
        rest = pool.submit(simulate, model, data, steps) if thread_budget() > 1 else None
        urdf_found = urdf_checks(urdf) if cfg.check_urdf and urdf.is_file() else []
        static = {
            o.name: static_checks(model, bodies[o.name], o.label, cfg, max_hulls, max_verts) for o in objects
        }
        engines = engine_checks(pkg_dir, man, model, cfg.engines, max_verts)  # while MuJoCo steps
        if rest is None:
            simulate(model, data, steps)
        else:
            rest.result()  # re-raises what the simulation raised

    checks = [compiled, *physics_checks(model), *urdf_found]
    checks.append(
        Check(
            "initial penetration",
            pen <= cfg.max_penetration,
            f"{pen * 1e3:.3f} mm at 'home'",
            pen,
            cfg.max_penetration,
        )
    )
    nwarn = int(sum(w.number for w in data.warning))
    finite = bool(np.all(np.isfinite(data.qpos)))
    kinds = [mujoco.mjtWarning(i).name for i, w in enumerate(data.warning) if w.number]
    checks.append(
        Check(
            "no mujoco warnings",
            nwarn == 0 and finite,
            f"{nwarn} warnings {kinds} in {cfg.sim_seconds:g} s"
            if nwarn
            else f"none in {cfg.sim_seconds:g} s ({steps} steps)",
            float(nwarn),
            0.0,
        )
    )
    for o in objects:
        n, b = o.name, bodies[o.name]
        if o.role == "dynamic":
            d = float(np.linalg.norm(data.xpos[b] - x0[n]))
            checks.append(
                Check(
                    f"rest drift {o.label}",
                    d < cfg.max_drift,
                    f"{d * 1e3:.3f} mm in {cfg.sim_seconds:g} s",
                    d,
                    cfg.max_drift,
                )
            )
        checks.extend(static[n])
    return tuple(checks + engines)
