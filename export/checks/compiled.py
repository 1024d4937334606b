"""Checks of the compiled MuJoCo model of a package: physics values, the URDF loading in MuJoCo and yourdfpy, each
body's inertia, hull budget and collision-to-surface distance, and the simulation that rest drift is measured on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from real2sim.export.collision.primitives import SIZE_COUNT, Primitive, kind_of_geom
from real2sim.export.config import ValidateCfg
from real2sim.export.physics.inertia import inertia_problems
from real2sim.results import Check

if TYPE_CHECKING:
    import mujoco


SURFACE_WARNING = "the best fidelity within the budget (warning; --strict refuses)"
"""Ends a collision-to-surface check's detail when the budget kept it over the limit and the export is not strict."""


def body_geoms(model, body: int, group: int) -> list[int]:
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_group[g] == group]


def geom_mesh(model, g: int):
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


def simulate(model, data, steps: int) -> None:
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
"""Steps per ``mujoco.rollout`` call in ``simulate`` (its output holds one full state per step)."""


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


def urdf_checks(urdf: Path) -> list[Check]:
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


def static_checks(model, b: int, label: str, cfg: ValidateCfg, max_hulls: int, max_verts: int) -> list[Check]:
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
    cols = body_geoms(model, b, 3)
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
    vis = body_geoms(model, b, 2)
    if vis and cols:
        import trimesh

        from real2sim.export.collision.fidelity import hull_fidelity

        surf = cast(
            trimesh.Trimesh, trimesh.util.concatenate([geom_mesh(model, g) for g in vis])
        )  # of meshes: a mesh
        fid = hull_fidelity(surf, [geom_mesh(model, g) for g in cols], samples=cfg.samples)
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
