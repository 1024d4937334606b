"""The USD opens in usd-core and its physics schema is complete: z up, metres, kilograms, one physics scene, one
rigid body per dynamic object with MuJoCo's mass properties, colliders within the hull budget, friction materials."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.export.checks.reference import MASS_RTOL, Body, EngineInputs, rel_error
from real2sim.results import Check
from real2sim.transforms import quat_to_matrix


def _problems_of_collider(prim, max_verts: int) -> list[str]:
    from pxr import UsdGeom, UsdPhysics, UsdShade

    out = []
    where = prim.GetPath().pathString
    if prim.IsA(UsdGeom.Mesh):
        approx = UsdPhysics.MeshCollisionAPI(prim).GetApproximationAttr().Get()
        if approx != UsdPhysics.Tokens.convexHull:
            out.append(f"{where}: approximation {approx}, not convexHull")
        n = len(UsdGeom.Mesh(prim).GetPointsAttr().Get() or [])
        if n > max_verts:
            out.append(f"{where}: {n} vertices > {max_verts}")
    mat, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")
    if not mat or not mat.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
        out.append(f"{where}: no physics material")
    elif not UsdPhysics.MaterialAPI(mat.GetPrim()).GetDynamicFrictionAttr().Get() > 0:
        out.append(f"{where}: no friction")
    return out


def _mass_tensor(prim) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia tensor about it in the body frame) from a prim's ``MassAPI``."""
    from pxr import UsdPhysics

    api = UsdPhysics.MassAPI(prim)
    q = api.GetPrincipalAxesAttr().Get()
    r = quat_to_matrix([q.GetReal(), *q.GetImaginary()])
    moments = np.array(api.GetDiagonalInertiaAttr().Get(), float)
    return (
        float(api.GetMassAttr().Get()),
        np.array(api.GetCenterOfMassAttr().Get(), float),
        r @ np.diag(moments) @ r.T,
    )


def usd_checks(path: Path, bodies: list[Body], max_verts: int) -> list[Check]:
    """One check of the whole stage (units, scene, bodies, colliders, materials); its detail names the first
    problem."""
    from pxr import Usd, UsdGeom, UsdPhysics

    try:
        stage = Usd.Stage.Open(str(path))
    except Exception as exc:  # pxr raises Tf.ErrorException on an unreadable file
        return [Check("usd physics schema", False, f"usd-core cannot open {path.name}: {exc}")]
    problems = []
    if UsdGeom.GetStageUpAxis(stage) != UsdGeom.Tokens.z:
        problems.append(f"upAxis {UsdGeom.GetStageUpAxis(stage)}")
    if UsdGeom.GetStageMetersPerUnit(stage) != 1.0 or UsdPhysics.GetStageKilogramsPerUnit(stage) != 1.0:
        problems.append("units are not metres and kilograms")
    root = stage.GetDefaultPrim()
    if not root:
        problems.append("no defaultPrim")
    prims = list(stage.Traverse())
    scenes = [p for p in prims if p.IsA(UsdPhysics.Scene)]
    if len(scenes) != 1:
        problems.append(f"{len(scenes)} physics scenes")
    else:
        s = UsdPhysics.Scene(scenes[0])
        g = np.array(s.GetGravityDirectionAttr().Get()) * s.GetGravityMagnitudeAttr().Get()
        if not np.allclose(g, [0, 0, -9.81], atol=1e-3):
            problems.append(f"gravity {g.tolist()}")
    rigid = {p.GetName(): p for p in prims if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    dynamic = [b for b in bodies if b.dynamic]
    if sorted(rigid) != sorted(b.name for b in dynamic):
        problems.append(f"rigid bodies {sorted(rigid)}, MJCF's dynamic bodies {[b.name for b in dynamic]}")
    worst = 0.0
    ncol = 0
    for b in bodies:
        prim = root.GetChild(b.name) if root else None
        if not prim:
            problems.append(f"no prim for {b.name}")
            continue
        cols = [p for p in Usd.PrimRange(prim) if p.HasAPI(UsdPhysics.CollisionAPI)]
        ncol += len(cols)
        if not cols:
            problems.append(f"{b.name}: no colliders")
        for c in cols:
            problems += _problems_of_collider(c, max_verts)
        if b.dynamic and b.name in rigid:
            if not prim.HasAPI(UsdPhysics.MassAPI):
                problems.append(f"{b.name}: no MassAPI")
                continue
            m, com, inertia = _mass_tensor(prim)
            err = max(rel_error(m, b.mass), rel_error(inertia, b.inertia))
            worst = max(worst, err)
            if err > MASS_RTOL or np.max(np.abs(com - b.com)) > 1e-6:
                problems.append(f"{b.name}: mass properties differ from the MJCF's (relative {err:.2g})")
        elif prim.HasAPI(UsdPhysics.RigidBodyAPI):
            problems.append(f"{b.name}: static object with a RigidBodyAPI")
    detail = (
        f"z up, metres, 1 scene, {len(rigid)} rigid bodies, {ncol} colliders, mass and inertia within "
        f"{worst:.1g} of the MJCF's"
    )
    return [Check("usd physics schema", not problems, "; ".join(problems[:3]) or detail, worst, MASS_RTOL)]


def run(inp: EngineInputs) -> list[Check]:
    """This engine's checks of a package (the entry point ``engines.ENGINES`` calls)."""
    return usd_checks(inp.usd, inp.bodies, inp.max_verts)
