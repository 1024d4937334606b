"""Check a package the way a user would: compile, load the URDF, step 5 s, and measure what matters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from real2sim.errors import InputError
from real2sim.executor import thread_budget
from real2sim.export.collision.primitives import SIZE_COUNT, Primitive, kind_of_geom
from real2sim.export.config import ValidateCfg
from real2sim.export.engines import engine_checks
from real2sim.export.inertia import inertia_problems
from real2sim.export.manifest import PackageManifest
from real2sim.results import Check

if TYPE_CHECKING:
    import mujoco


SURFACE_WARNING = "the best fidelity within the budget (warning; --strict refuses)"
"""Ends a collision-to-surface check's detail when the budget kept it over the limit and the export is not strict."""


def _body_geoms(model, body: int, group: int) -> list[int]:
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_group[g] == group]


def _geom_mesh(model, g: int):
    """The geom as a triangle mesh in its body's frame."""
    import trimesh

    t = trimesh.transformations.quaternion_matrix(
        model.geom_quat[g]
    )  # not transforms.pose_matrix: last bits differ
    t[:3, 3] = model.geom_pos[g]
    kind = kind_of_geom(model.geom_type[g])
    if kind is None:  # a mesh
        m = model.geom_dataid[g]
        v0, nv = model.mesh_vertadr[m], model.mesh_vertnum[m]
        f0, nf = model.mesh_faceadr[m], model.mesh_facenum[m]
        mesh = trimesh.Trimesh(
            model.mesh_vert[v0 : v0 + nv].astype(np.float64), model.mesh_face[f0 : f0 + nf], process=False
        )
        mesh.apply_transform(t)
        return mesh
    n = SIZE_COUNT[kind]
    return Primitive(
        kind, model.geom_pos[g].copy(), model.geom_quat[g].copy(), model.geom_size[g][:n].copy(), 0.0
    ).to_mesh()


def _simulate(model, data, steps: int) -> None:
    """``steps`` steps from the state in ``data``, which ends in the final state with MuJoCo's warning counts. One
    ``mujoco.rollout`` call, which releases the GIL for all of it (a loop of ``mj_step`` takes the GIL back every
    step), so ``validate_package`` runs it on a thread while the checks that do not need the simulated state run."""
    import mujoco
    from mujoco import rollout

    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.zeros(mujoco.mj_stateSize(model, spec))
    warnings = np.zeros(len(data.warning), dtype=np.int64)
    done = 0
    while done < steps:  # in chunks: rollout returns every step's state, so memory stays bounded
        n = min(ROLLOUT_CHUNK, steps - done)
        mujoco.mj_getState(model, data, state, spec)
        rollout.rollout(model, data, state[None], nstep=n)
        warnings += [w.number for w in data.warning]  # each rollout call starts its counts at zero
        done += n
    for w, n in zip(data.warning, warnings, strict=True):
        w.number = int(n)


ROLLOUT_CHUNK = 5000
"""Steps per ``mujoco.rollout`` call in ``_simulate`` (its output holds one full state per step)."""


def physics_checks(model: mujoco.MjModel) -> list[Check]:
    """Every geom's friction finite, >= 0 and within ``physics.FRICTION_MAX``; every body's mass finite and >= 0;
    every plane geom facing up (the package is z-up): a hand-edited package with invalid physics fails here."""
    import mujoco

    from real2sim import physics

    problems = []
    for g in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}"
        try:
            physics.friction(model.geom_friction[g].tolist(), f"geom {name!r} friction")
        except ValueError as exc:
            problems.append(str(exc))
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE) and model.geom_bodyid[g] == 0:
            z = np.zeros(9)
            mujoco.mju_quat2Mat(z, model.geom_quat[g])
            try:
                physics.support_normal(z.reshape(3, 3)[:, 2].tolist(), f"plane {name!r} normal")
            except ValueError as exc:
                problems.append(str(exc))
    for b in range(1, model.nbody):
        m = float(model.body_mass[b])
        if not (np.isfinite(m) and m >= 0):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"#{b}"
            problems.append(f"body {name!r} mass {m:g}: must be finite and >= 0")
    detail = "; ".join(problems) or f"friction, masses and support planes of {model.ngeom} geoms valid"
    return [Check("physics values", not problems, detail)]


def _urdf_checks(urdf: Path) -> list[Check]:
    """The URDF loads in MuJoCo and in yourdfpy."""
    import mujoco

    checks = []
    try:
        um = mujoco.MjModel.from_xml_path(str(urdf))
        checks.append(Check("urdf loads in mujoco", True, f"{um.nbody - 1} bodies, {um.ngeom} geoms"))
    except Exception as exc:
        checks.append(Check("urdf loads in mujoco", False, str(exc).splitlines()[0]))
    try:
        import yourdfpy

        u = yourdfpy.URDF.load(str(urdf), build_scene_graph=True, load_meshes=True)
        ok = u.validate()
        checks.append(Check("urdf loads in yourdfpy", bool(ok), f"{len(u.link_map)} links"))
    except Exception as exc:
        checks.append(Check("urdf loads in yourdfpy", False, f"{exc.__class__.__name__}: {exc}"))
    return checks


def _static_checks(
    model, b: int, label: str, cfg: ValidateCfg, max_hulls: int, max_verts: int
) -> list[Check]:
    """Checks of one body that do not need the simulation: inertia, hull budget, collision-to-surface distance."""
    import mujoco

    checks = []
    i = np.diag(model.body_inertia[b])
    probs = inertia_problems(i) + ([] if model.body_mass[b] > 0 else ["mass <= 0"])
    checks.append(
        Check(
            f"inertia {label}",
            not probs,
            "; ".join(probs)
            or f"mass {model.body_mass[b]:.4g} kg, principal {np.round(model.body_inertia[b], 8).tolist()}",
        )
    )
    cols = _body_geoms(model, b, 3)
    nverts = [
        int(model.mesh_vertnum[model.geom_dataid[g]])
        for g in cols
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_MESH)
    ]
    within = 1 <= len(cols) <= max_hulls and all(v <= max_verts for v in nverts)
    checks.append(
        Check(
            f"hull budget {label}",
            within,
            f"{len(cols)} geoms (max {max_hulls}), max {max(nverts, default=0)} vertices (max {max_verts})",
            float(len(cols)),
            float(max_hulls),
        )
    )
    vis = _body_geoms(model, b, 2)
    if vis and cols:
        import trimesh

        from real2sim.export.fidelity import hull_fidelity

        surf = cast(
            trimesh.Trimesh, trimesh.util.concatenate([_geom_mesh(model, g) for g in vis])
        )  # of meshes: a mesh
        fid = hull_fidelity(surf, [_geom_mesh(model, g) for g in cols], samples=cfg.samples)
        within = fid.hausdorff_rel <= cfg.max_surface_distance
        checks.append(
            Check(
                f"collision-to-surface {label}",
                within or not cfg.strict,
                f"Hausdorff {fid.hausdorff * 1e3:.2f} mm ({fid.hausdorff_rel:.1%} of diagonal)"
                + (
                    ""
                    if within
                    else f", over {cfg.max_surface_distance:.1%}: {'--strict' if cfg.strict else SURFACE_WARNING}"
                ),
                fid.hausdorff_rel,
                cfg.max_surface_distance,
            )
        )
    return checks


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
        rest = pool.submit(_simulate, model, data, steps) if thread_budget() > 1 else None
        urdf_checks = _urdf_checks(urdf) if cfg.check_urdf and urdf.is_file() else []
        static = {
            o.name: _static_checks(model, bodies[o.name], o.label, cfg, max_hulls, max_verts) for o in objects
        }
        engines = engine_checks(pkg_dir, man, model, cfg.engines, max_verts)  # while MuJoCo steps
        if rest is None:
            _simulate(model, data, steps)
        else:
            rest.result()  # re-raises what the simulation raised

    checks = [compiled, *physics_checks(model), *urdf_checks]
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
