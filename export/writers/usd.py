"""``<name>.usd`` built with ``pxr`` (usd-core): UsdPhysics rigid bodies for Isaac Sim / Isaac Lab / Newton.

Z up, metres, kilograms; ``/<name>`` is the default prim and holds the physics scene, one friction material per
object, the support (a static box collider) and one Xform per object (``RigidBodyAPI`` + ``MassAPI`` when dynamic)
with its visual mesh and its collision children (primitives, or convex-hull meshes, and a support-contact hull whose
collision groups match the MJCF's ``contype``/``conaffinity``: ``support_contact``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from trimesh.visual import ColorVisuals

from real2sim.export.config import ExportCfg
from real2sim.export.objects.prepare import PlacedObject
from real2sim.export.writers.mjcf import support_box
from real2sim.scene import Support
from real2sim.transforms import matrix_to_quat

if TYPE_CHECKING:
    from pxr import Usd

GRAVITY = 9.81
"""Gravity [m/s^2] of the physics scene, along -z."""
USD_FORMAT = "usdc"
"""File format of ``<name>.usd`` (binary crate: compact, and byte-identical for the same input)."""


def usd_file(name: str) -> str:
    return f"{name}.usd"


def without_usd_if_missing(cfg: ExportCfg) -> ExportCfg:
    """``cfg`` without the ``usd`` format (and one warning naming the extra) when usd-core is not installed."""
    import importlib.util
    import logging

    if "usd" not in cfg.formats or importlib.util.find_spec("pxr") is not None:
        return cfg
    logging.getLogger(__name__).warning(
        "usd-core is not installed, so no USD is written: pip install 'real2sim[engines]'"
    )
    return replace(cfg, formats=tuple(f for f in cfg.formats if f != "usd"))


def principal_axes(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments (ascending) and the wxyz rotation whose columns are the principal axes (right-handed)."""
    ev, vec = np.linalg.eigh(0.5 * (inertia + inertia.T))
    if np.linalg.det(vec) < 0:
        vec[:, 2] = -vec[:, 2]
    return ev, matrix_to_quat(vec)


def _xform(prim, pos, quat_wxyz, scale=None) -> None:
    from pxr import Gf, UsdGeom

    x = UsdGeom.Xformable(prim)
    x.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*(float(v) for v in pos)))
    w, *xyz = (float(v) for v in quat_wxyz)
    x.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(w, Gf.Vec3d(*xyz)))
    if scale is not None:
        x.AddScaleOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*(float(v) for v in scale)))


def _mesh(stage, path: str, vertices: np.ndarray, faces: np.ndarray):
    from pxr import UsdGeom, Vt

    m = UsdGeom.Mesh.Define(stage, path)
    m.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(np.asarray(vertices, dtype=np.float32)))
    m.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, dtype=np.int32)))
    m.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(np.asarray(faces, dtype=np.int32).ravel()))
    m.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    m.CreateExtentAttr(UsdGeom.Boundable.ComputeExtentFromPlugins(m, 0.0))
    return m


def _collider(prim, material, mesh: bool, guide: bool = True) -> None:
    """Make ``prim`` a collider with ``material`` bound for physics; ``guide``: hidden in renders."""
    from pxr import UsdGeom, UsdPhysics, UsdShade

    UsdPhysics.CollisionAPI.Apply(prim)
    if mesh:
        UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(UsdPhysics.Tokens.convexHull)
    if guide:
        UsdGeom.Imageable(prim).CreatePurposeAttr(UsdGeom.Tokens.guide)
    UsdShade.MaterialBindingAPI.Apply(prim).Bind(material, UsdShade.Tokens.weakerThanDescendants, "physics")


def _material(stage, path: str, friction: float):
    from pxr import UsdPhysics, UsdShade

    mat = UsdShade.Material.Define(stage, path)
    api = UsdPhysics.MaterialAPI.Apply(mat.GetPrim())
    api.CreateStaticFrictionAttr(float(friction))
    api.CreateDynamicFrictionAttr(float(friction))
    api.CreateRestitutionAttr(0.0)
    return mat


def _primitive(stage, path: str, prim):
    from pxr import UsdGeom

    s = [float(v) for v in prim.size]
    if prim.kind == "box":
        g = UsdGeom.Cube.Define(stage, path)
        g.CreateSizeAttr(2.0)
        _xform(g.GetPrim(), prim.pos, prim.quat, s)
    else:
        if prim.kind == "sphere":
            g = UsdGeom.Sphere.Define(stage, path)
        elif prim.kind == "cylinder":
            g = UsdGeom.Cylinder.Define(stage, path)
            g.CreateHeightAttr(2 * s[1])
            g.CreateAxisAttr(UsdGeom.Tokens.z)
        else:
            g = UsdGeom.Capsule.Define(stage, path)
            g.CreateHeightAttr(2 * s[1])  # the spine between the two half spheres, like MuJoCo's
            g.CreateAxisAttr(UsdGeom.Tokens.z)
        g.CreateRadiusAttr(s[0])
        _xform(g.GetPrim(), prim.pos, prim.quat)
    g.CreateExtentAttr(UsdGeom.Boundable.ComputeExtentFromPlugins(g, 0.0))
    return g.GetPrim()


def build_stage(name: str, objects: list[PlacedObject], support: Support) -> Usd.Stage:
    """The in-memory ``Usd.Stage`` of the package (see the module docstring)."""
    from pxr import Gf, Usd, UsdGeom, UsdPhysics, Vt

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    root = f"/{name}"
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, root).GetPrim())
    scene = UsdPhysics.Scene.Define(stage, f"{root}/physics_scene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(GRAVITY)
    UsdGeom.Scope.Define(stage, f"{root}/materials")

    c, q, h = support_box(support, objects)
    sup = UsdGeom.Xform.Define(stage, f"{root}/support")
    _xform(sup.GetPrim(), c, q)
    box = UsdGeom.Cube.Define(stage, f"{root}/support/box")
    box.CreateSizeAttr(2.0)
    box.CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(0.55, 0.45, 0.35)]))
    _xform(box.GetPrim(), np.zeros(3), (1, 0, 0, 0), h)
    sup_mat = _material(stage, f"{root}/materials/support", 1.0)
    _collider(box.GetPrim(), sup_mat, mesh=False, guide=False)
    contact: list[str] = []  # support-contact hulls and the pieces of their objects
    pieces: list[str] = []

    for o in objects:
        n, path = o.name, f"{root}/{o.name}"
        body = UsdGeom.Xform.Define(stage, path).GetPrim()
        t = o.world_from_object
        _xform(body, t[:3, 3], matrix_to_quat(t[:3, :3]))
        mp = o.obj.mass
        if o.role == "dynamic":
            UsdPhysics.RigidBodyAPI.Apply(body)
            mass = UsdPhysics.MassAPI.Apply(body)
            moments, axes = principal_axes(mp.inertia)
            mass.CreateMassAttr(float(mp.mass))
            mass.CreateCenterOfMassAttr(Gf.Vec3f(*(float(v) for v in mp.com)))
            mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*(float(v) for v in moments)))
            w, *xyz = (float(v) for v in axes)
            mass.CreatePrincipalAxesAttr(Gf.Quatf(w, Gf.Vec3f(*xyz)))
        mat = _material(stage, f"{root}/materials/{n}", o.friction[0])
        v = o.obj.visual
        vis = _mesh(stage, f"{path}/visual", v.vertices, v.faces)
        if isinstance(v.visual, ColorVisuals) and v.visual.kind == "vertex":
            col = np.asarray(v.visual.vertex_colors, dtype=np.float32)[:, :3] / 255.0
            vis.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex).Set(Vt.Vec3fArray.FromNumpy(col))
        else:
            vis.CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(*(float(x) for x in o.obj.rgba[:3]))]))
        prim = o.obj.collision.primitive
        if prim is not None:
            _collider(_primitive(stage, f"{path}/collision_0", prim), mat, mesh=False)
        else:
            for i, (hv, hf) in enumerate(o.obj.collision.hulls):
                _collider(_mesh(stage, f"{path}/collision_{i}", hv, hf).GetPrim(), mat, mesh=True)
        if o.support_file() is not None and o.obj.support is not None:
            _collider(_mesh(stage, f"{path}/support_contact", *o.obj.support).GetPrim(), mat, mesh=True)
            contact.append(f"{path}/support_contact")
            pieces += [f"{path}/collision_{i}" for i in range(len(o.obj.collision.hulls))]
    if contact:
        _collision_groups(stage, root, f"{root}/support/box", contact, pieces)
    return stage


def _collision_groups(stage, root: str, support: str, contact: list[str], pieces: list[str]) -> None:
    """``support_contact``'s classes as UsdPhysics collision groups: the support-contact hulls collide with the
    support only (an inverted filter), the pieces of their objects with everything but the support."""
    from pxr import Sdf, UsdGeom, UsdPhysics

    UsdGeom.Scope.Define(stage, f"{root}/collision_groups")
    groups = {}
    for name, paths in (("support", [support]), ("support_contact", contact), ("object_pieces", pieces)):
        g = UsdPhysics.CollisionGroup.Define(stage, f"{root}/collision_groups/{name}")
        g.GetCollidersCollectionAPI().CreateIncludesRel().SetTargets([Sdf.Path(p) for p in paths])
        groups[name] = g
    groups["support_contact"].CreateInvertFilteredGroupsAttr().Set(True)
    groups["support_contact"].CreateFilteredGroupsRel().SetTargets([groups["support"].GetPath()])
    groups["object_pieces"].CreateFilteredGroupsRel().SetTargets([groups["support"].GetPath()])
    groups["support"].CreateFilteredGroupsRel().SetTargets([groups["object_pieces"].GetPath()])


def write_usd(folder: Path, name: str, objects: list[PlacedObject], support: Support) -> Path:
    """Write ``folder/<name>.usd`` (``USD_FORMAT``) and return its path."""
    stage = build_stage(name, objects, support)
    path = Path(folder) / usd_file(name)
    if not stage.GetRootLayer().Export(str(path), args={"format": USD_FORMAT}):
        raise OSError(f"usd-core could not write {path}")
    return path


def write(folder: Path, name: str, objects: list[PlacedObject], support: Support) -> None:
    """The package's USD (``write_usd``)."""
    write_usd(folder, name, objects, support)
