"""The twin as USD (usd-core's UsdPhysics): the scene package's own USD as a sublayer and the robot as an articulation
beside it: one rigid body per link at the robot's reference pose (qpos0, so that the joints' zero is MuJoCo's),
mass, centre of mass and principal inertia, convex-hull colliders, revolute / prismatic joints with their limits and
a position drive per servo. USD has no keyframes: ``home`` stays in the MJCF. The stage is read back with UsdPhysics'
own parser; when anything of the robot does not convert, no USD is written and the reason is given."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np

USD_NAME = "twin.usd"
"""Binary crate (usdc): compact, and the same bytes for the same twin."""


def _pose(prim, pos, quat) -> None:
    from pxr import Gf, UsdGeom

    x = UsdGeom.Xformable(prim)
    x.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*map(float, pos)))
    x.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(
        Gf.Quatd(float(quat[0]), Gf.Vec3d(*map(float, quat[1:])))
    )


def _quatf(q) -> object:
    from pxr import Gf

    return Gf.Quatf(float(q[0]), Gf.Vec3f(*map(float, q[1:])))


def _axis_rotation(axis: np.ndarray) -> np.ndarray:
    """wxyz rotation taking +x onto ``axis`` (USD joints turn about their frame's x axis)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    x = np.array([1.0, 0.0, 0.0])
    c = float(np.dot(x, a))
    if c < -1 + 1e-12:
        return np.array([0.0, 0.0, 1.0, 0.0])
    v = np.cross(x, a)
    q = np.array([1.0 + c, *v])
    return q / np.linalg.norm(q)


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])  # fmt: skip


def _geom(stage, path: str, model, g: int, collide: bool) -> str | None:
    """One geom as a prim (a triangle mesh, or a cube / sphere / capsule / cylinder); a reason when it cannot be."""
    import mujoco
    from pxr import UsdGeom, UsdPhysics, Vt

    t = int(model.geom_type[g])
    size = model.geom_size[g]
    if t == int(mujoco.mjtGeom.mjGEOM_MESH):
        m = int(model.geom_dataid[g])
        v0, nv = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
        f0, nf = int(model.mesh_faceadr[m]), int(model.mesh_facenum[m])
        prim = UsdGeom.Mesh.Define(stage, path)
        prim.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(model.mesh_vert[v0 : v0 + nv].astype(np.float32)))
        prim.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(nf, 3, np.int32)))
        prim.CreateFaceVertexIndicesAttr(
            Vt.IntArray.FromNumpy(model.mesh_face[f0 : f0 + nf].astype(np.int32).ravel())
        )
        prim.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    elif t == int(mujoco.mjtGeom.mjGEOM_BOX):
        prim = UsdGeom.Cube.Define(stage, path)
        prim.CreateSizeAttr(2.0)
    elif t == int(mujoco.mjtGeom.mjGEOM_SPHERE):
        prim = UsdGeom.Sphere.Define(stage, path)
        prim.CreateRadiusAttr(float(size[0]))
    elif t in (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_CYLINDER)):
        cls = UsdGeom.Capsule if t == int(mujoco.mjtGeom.mjGEOM_CAPSULE) else UsdGeom.Cylinder
        prim = cls.Define(stage, path)
        prim.CreateRadiusAttr(float(size[0]))
        prim.CreateHeightAttr(2 * float(size[1]))
        prim.CreateAxisAttr(UsdGeom.Tokens.z)
    else:
        return f"geom type {mujoco.mjtGeom(t).name} has no USD counterpart here"
    _pose(prim.GetPrim(), model.geom_pos[g], model.geom_quat[g])
    if t == int(mujoco.mjtGeom.mjGEOM_BOX):
        UsdGeom.Xformable(prim).AddScaleOp().Set(tuple(float(s) for s in size))
    prim.CreateDisplayColorAttr([tuple(float(c) for c in model.geom_rgba[g][:3])])
    if collide:
        UsdPhysics.CollisionAPI.Apply(prim.GetPrim())
        if t == int(mujoco.mjtGeom.mjGEOM_MESH):
            UsdPhysics.MeshCollisionAPI.Apply(prim.GetPrim()).CreateApproximationAttr(
                UsdPhysics.Tokens.convexHull
            )
    return None


def _shape_key(model, g: int) -> tuple:
    """What a geom draws: its type, mesh, size and pose in its body."""
    return (int(model.geom_type[g]), int(model.geom_dataid[g]), *np.round(model.geom_size[g], 9),
            *np.round(model.geom_pos[g], 9), *np.round(model.geom_quat[g], 9))  # fmt: skip


def _robot(stage, model, data, root: str, bodies: list[int], names: dict[int, str]) -> str | None:
    import mujoco
    from pxr import Gf, Sdf, UsdPhysics

    UsdPhysics.ArticulationRootAPI.Apply(stage.DefinePrim(root, "Xform"))
    for b in bodies:
        path = f"{root}/{names[b]}"
        prim = stage.DefinePrim(path, "Xform")
        _pose(prim, data.xpos[b], data.xquat[b])
        UsdPhysics.RigidBodyAPI.Apply(prim)
        mass = UsdPhysics.MassAPI.Apply(prim)
        mass.CreateMassAttr(float(model.body_mass[b]))
        mass.CreateCenterOfMassAttr(Gf.Vec3f(*map(float, model.body_ipos[b])))
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*map(float, model.body_inertia[b])))
        mass.CreatePrincipalAxesAttr(_quatf(model.body_iquat[b]))
        geoms = [int(g) for g in np.nonzero(model.geom_bodyid == b)[0]]
        shown = {_shape_key(model, g) for g in geoms if model.geom_contype[g] or model.geom_conaffinity[g]}
        for g in geoms:
            collide = bool(model.geom_contype[g] or model.geom_conaffinity[g])
            if not collide and _shape_key(model, g) in shown:
                continue  # a visual geom drawing what a (visible) collider already draws: the mesh once
            why = _geom(stage, f"{path}/{'collision' if collide else 'visual'}_{g}", model, g, collide)
            if why:
                return why
        parent = int(model.body_parentid[b])
        jnts = [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) == b]
        if len(jnts) > 1:
            return f"body {names[b]} has {len(jnts)} joints (USD joints join two bodies once)"
        p_pos, p_quat = data.xpos[parent], data.xquat[parent]
        if not jnts:
            joint = UsdPhysics.FixedJoint.Define(stage, f"{path}/fixed")
        else:
            j = jnts[0]
            kind = int(model.jnt_type[j])
            cls = (
                UsdPhysics.RevoluteJoint
                if kind == int(mujoco.mjtJoint.mjJNT_HINGE)
                else UsdPhysics.PrismaticJoint
            )
            joint = cls.Define(stage, f"{path}/joint")
            joint.CreateAxisAttr("X")
            if model.jnt_limited[j]:
                lo, hi = model.jnt_range[j]
                scale = 180 / math.pi if cls is UsdPhysics.RevoluteJoint else 1.0
                joint.CreateLowerLimitAttr(float(lo * scale))
                joint.CreateUpperLimitAttr(float(hi * scale))
            r1 = _axis_rotation(model.jnt_axis[j])
            anchor = data.xanchor[j]
            joint.CreateLocalPos1Attr(Gf.Vec3f(*map(float, model.jnt_pos[j])))
            joint.CreateLocalRot1Attr(_quatf(r1))
            inv_p = np.array([p_quat[0], -p_quat[1], -p_quat[2], -p_quat[3]])
            local0 = np.zeros(3)
            mujoco.mju_rotVecQuat(local0, anchor - p_pos, inv_p)
            joint.CreateLocalPos0Attr(Gf.Vec3f(*map(float, local0)))
            joint.CreateLocalRot0Attr(_quatf(_qmul(_qmul(inv_p, data.xquat[b]), r1)))
            _drive(joint.GetPrim(), model, j, cls is UsdPhysics.RevoluteJoint)
        if parent in bodies:
            joint.CreateBody0Rel().SetTargets([Sdf.Path(f"{root}/{names[parent]}")])
        elif parent != 0:
            return f"body {names[b]}'s parent is not part of the robot"
        joint.CreateBody1Rel().SetTargets([Sdf.Path(path)])
    return None


def _drive(prim, model, j: int, angular: bool) -> None:
    """A position drive for the servo holding joint ``j`` (UsdPhysics: stiffness per degree for angular drives)."""
    import mujoco
    from pxr import UsdPhysics

    for a in range(model.nu):
        if int(model.actuator_trnid[a, 0]) != j or int(model.actuator_trntype[a]) != int(
            mujoco.mjtTrn.mjTRN_JOINT
        ):
            continue
        kp, kv = float(model.actuator_gainprm[a, 0]), -float(model.actuator_biasprm[a, 2])
        scale = math.pi / 180 if angular else 1.0
        drive = UsdPhysics.DriveAPI.Apply(prim, "angular" if angular else "linear")
        drive.CreateTypeAttr("force")
        drive.CreateStiffnessAttr(kp * scale)
        drive.CreateDampingAttr(max(kv, 0.0) * scale)
        drive.CreateTargetPositionAttr(0.0)
        if model.actuator_forcelimited[a]:
            drive.CreateMaxForceAttr(float(np.max(np.abs(model.actuator_forcerange[a]))))
        return


def write_twin_usd(twin, dest: Path) -> dict:
    """``dest/twin.usda`` (+ the package's USD beside it as its sublayer) or, where the robot does not convert, no
    USD and the reason."""
    import importlib.util

    if importlib.util.find_spec("pxr") is None:
        return {"file": None, "reason": "usd-core is not installed (pip install 'real2sim[engines]')"}
    import mujoco
    from pxr import Usd, UsdGeom, UsdPhysics

    pkg_usd = next(
        (p for p in sorted(Path(twin.package_dir).glob(f"{twin.package}.usd*")) if p.is_file()), None
    )
    model = twin.model
    data = mujoco.MjData(model)
    mujoco.mj_resetData(model, data)  # qpos0: the USD joints' zero is MuJoCo's
    mujoco.mj_forward(model, data)
    pre = twin.robot.prefix
    names = {
        b: mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body_{b}" for b in range(model.nbody)
    }
    bodies = sorted(b for b in range(1, model.nbody) if names[b].startswith(pre))
    safe = {b: "".join(c if c.isalnum() else "_" for c in names[b].removeprefix(pre)) for b in bodies}
    if pkg_usd is not None:
        shutil.copyfile(pkg_usd, dest / pkg_usd.name)
    stage = Usd.Stage.CreateNew(str(dest / USD_NAME))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    if pkg_usd is not None:
        stage.GetRootLayer().subLayerPaths.append(pkg_usd.name)
    else:
        UsdPhysics.Scene.Define(stage, "/physicsScene")
    why = _robot(stage, model, data, "/Robot", bodies, safe)
    if why:
        for f in (dest / USD_NAME, *([dest / pkg_usd.name] if pkg_usd is not None else [])):
            f.unlink(missing_ok=True)
        return {"file": None, "reason": f"the robot does not convert: {why}"}
    stage.SetDefaultPrim(stage.GetPrimAtPath("/Robot"))
    stage.GetRootLayer().Save()
    parsed = UsdPhysics.UsdPhysicsLoadStageFromPrimRange(Usd.Stage.Open(str(dest / USD_NAME)), ["/Robot"])
    counts = {str(k): len(v[0]) for k, v in parsed.items()}
    return {"file": USD_NAME, "sublayer": pkg_usd.name if pkg_usd else None, "robot_bodies": len(bodies),
            "usdphysics_parsed": dict(sorted(counts.items()))}  # fmt: skip
