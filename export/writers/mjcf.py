"""MJCF built with ``mujoco.MjSpec``: ``<name>.xml`` (the model) and ``scene.xml`` (includes it; floor + light)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.export.collision.primitives import mj_geom_type
from real2sim.export.collision.support_contact import GROUP, HULL, PIECES, SUPPORT
from real2sim.export.config import ExportCfg
from real2sim.export.objects.prepare import PlacedObject
from real2sim.export.objects.visual import has_colours, texture_file
from real2sim.scene import Support
from real2sim.transforms import matrix_to_quat

if TYPE_CHECKING:
    import mujoco

FLOOR_BELOW_PLANE = 0.75
"""Height [m] of a plane support (a table top) above the floor added by ``scene.xml``."""
SLAB = 0.04
"""Thickness [m] of the static slab that stands for a plane support."""


def _r(x, nd: int = 9) -> list[float]:
    return [round(float(v), nd) + 0.0 for v in np.ravel(x)]


def support_box(support: Support, objects: list[PlacedObject]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, wxyz quaternion, half-extents) of the static support slab."""
    if support.kind == "box" and support.world_from_support is not None and support.size is not None:
        t = np.asarray(support.world_from_support)
        return t[:3, 3].copy(), matrix_to_quat(t[:3, :3]), np.asarray(support.size, dtype=float) / 2
    top = support.top_height()
    if support.size is not None and len(support.size) >= 2:
        cx, cy = support.point[0], support.point[1]
        hx, hy = support.size[0] / 2, support.size[1] / 2
    else:
        cx, cy, hx, hy = 0.0, 0.0, 0.25, 0.25
    for o in objects:  # the slab must hold every object's footprint
        p = o.world_from_object[:3, 3]
        ext = float(np.linalg.norm(o.obj.watertight.extents))
        hx = max(hx, abs(p[0] - cx) + ext)
        hy = max(hy, abs(p[1] - cy) + ext)
    return np.array([cx, cy, top - SLAB / 2]), np.array([1.0, 0, 0, 0]), np.array([hx, hy, SLAB / 2])


def floor_height(support: Support, objects: list[PlacedObject]) -> float:
    c, q, h = support_box(support, objects)
    if support.kind == "box":
        return float(c[2] - h[2])
    return support.top_height() - FLOOR_BELOW_PLANE


def build_model(name: str, objects: list[PlacedObject], support: Support, cfg: ExportCfg) -> mujoco.MjSpec:
    """The model ``MjSpec``: assets, ``visual``/``collision`` classes, support, one body per object, ``home``."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.meshdir = "assets"
    spec.texturedir = "assets"
    spec.compiler.degree = False
    spec.option.timestep = cfg.timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    vis = spec.add_default("visual", spec.default)
    vis.geom.contype = 0
    vis.geom.conaffinity = 0
    vis.geom.group = 2
    vis.geom.density = 0
    vis.mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    col = spec.add_default("collision", spec.default)
    col.geom.group = 3
    col.geom.condim = 4
    col.geom.priority = (
        1  # an object's friction is its contact's with the support (else MuJoCo takes the larger)
    )
    col.geom.rgba = [0.5, 0.6, 0.9, 0.6]

    c, q, h = support_box(support, objects)
    g = spec.worldbody.add_geom()
    g.name = "support"
    g.type = mujoco.mjtGeom.mjGEOM_BOX
    g.pos, g.quat, g.size = _r(c), _r(q), _r(h)
    g.rgba = [0.55, 0.45, 0.35, 1]
    g.condim = 4
    g.contype, g.conaffinity = SUPPORT

    qpos: list[float] = []
    for o in objects:
        n = o.name
        m = spec.add_mesh()
        m.name = f"{n}_visual"
        m.file = o.visual_file()
        m.classname = vis
        body = spec.worldbody.add_body()
        body.name = n
        t = o.world_from_object
        body.pos, body.quat = _r(t[:3, 3]), _r(matrix_to_quat(t[:3, :3]))
        if o.role == "dynamic":
            j = body.add_freejoint()
            j.name = f"{n}_free"
            qpos += _r(t[:3, 3]) + _r(matrix_to_quat(t[:3, :3]))
        mp = o.obj.mass
        body.explicitinertial = True
        body.mass = round(mp.mass, 12)
        body.ipos = _r(mp.com)
        body.fullinertia = [round(float(x), 15) for x in mp.full_inertia()]
        vg = body.add_geom(vis)
        vg.name = f"{n}_visual"
        vg.type = mujoco.mjtGeom.mjGEOM_MESH
        vg.meshname = f"{n}_visual"
        if has_colours(o.obj.visual):  # the capture's colours: texture atlas on the visual mesh's UVs
            tex = spec.add_texture()
            tex.name, tex.type = f"{n}_visual", mujoco.mjtTexture.mjTEXTURE_2D
            tex.file = texture_file(o.visual_file())
            mat = spec.add_material()
            mat.name = f"{n}_visual"
            mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
            vg.material = mat.name
        else:
            vg.rgba = _r(o.obj.rgba, 4)
        prim, sup = o.obj.collision.primitive, o.support_file()
        if prim is not None:
            cg = body.add_geom(col)
            cg.name = f"{n}_collision_0"
            cg.type = mj_geom_type(prim.kind)
            cg.pos, cg.quat = _r(prim.pos), _r(prim.quat)
            cg.size = _r(np.concatenate([prim.size, np.zeros(3 - len(prim.size))]))
            cg.friction = list(o.friction)
        else:
            for i, f in enumerate(o.collision_files()):
                cm = spec.add_mesh()
                cm.name = f"{n}_collision_{i}"
                cm.file = f
                cm.maxhullvert = cfg.max_hull_vertices
                cg = body.add_geom(col)
                cg.name = f"{n}_collision_{i}"
                cg.type = mujoco.mjtGeom.mjGEOM_MESH
                cg.meshname = cm.name
                cg.friction = list(o.friction)
                if sup is not None:
                    cg.contype, cg.conaffinity = PIECES
        if sup is not None:
            _support_geom(spec, body, col, o, sup, cfg.max_hull_vertices)
    if qpos:
        k = spec.add_key()
        k.name = "home"
        k.qpos = qpos
    else:
        k = spec.add_key()
        k.name = "home"
    return spec


def _support_geom(spec, body, col, o: PlacedObject, file: str, max_vertices: int) -> None:
    """The object's support-contact hull (``support_contact``): touches the support only."""
    import mujoco

    m = spec.add_mesh()
    m.name, m.file, m.maxhullvert = f"{o.name}_support", file, max_vertices
    g = body.add_geom(col)
    g.name, g.type, g.meshname = f"{o.name}_support", mujoco.mjtGeom.mjGEOM_MESH, m.name
    g.group = GROUP
    g.contype, g.conaffinity = HULL
    g.friction = list(o.friction)


def model_xml(name: str, objects: list[PlacedObject], support: Support, cfg: ExportCfg, folder: Path) -> str:
    """The model XML (``<name>.xml``); ``folder`` holds ``assets/`` already (``to_xml`` compiles the spec: it fails
    there, with MuJoCo's message, on anything invalid)."""
    spec = build_model(name, objects, support, cfg)
    spec.modelfiledir = str(folder)
    return spec.to_xml()


def compile_scene(folder: Path) -> mujoco.MjModel:
    """The compiled ``MjModel`` of ``folder/scene.xml`` (with the model it includes and ``assets/``); raises
    MuJoCo's ``ValueError`` on anything invalid."""
    import mujoco

    return mujoco.MjModel.from_xml_path(str(Path(folder) / "scene.xml"))


def scene_xml(name: str, support: Support, objects: list[PlacedObject]) -> str:
    """``scene.xml``: floor, light, camera and an ``<include>`` of ``<name>.xml``."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.modelname = f"{name} scene"
    spec.visual.headlight.ambient = [0.3, 0.3, 0.3]
    spec.visual.headlight.diffuse = [0.5, 0.5, 0.5]
    tex = spec.add_texture()
    tex.name = "grid"
    tex.type = mujoco.mjtTexture.mjTEXTURE_2D
    tex.builtin = mujoco.mjtBuiltin.mjBUILTIN_CHECKER
    tex.rgb1, tex.rgb2 = [0.2, 0.3, 0.4], [0.1, 0.2, 0.3]
    tex.width = tex.height = 512
    mat = spec.add_material()
    mat.name = "grid"
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
    mat.texrepeat = [4, 4]
    mat.reflectance = 0.1
    light = spec.worldbody.add_light()
    light.name = "top"
    light.pos = [0, 0, 3]
    light.dir = [0, 0, -1]
    light.castshadow = True
    floor = spec.worldbody.add_geom()
    floor.name = "floor"
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [0, 0, 0.05]
    floor.pos = [0, 0, round(floor_height(support, objects), 9)]
    floor.material = "grid"
    root = ET.fromstring(spec.to_xml())
    inc = ET.Element("include", {"file": f"{name}.xml"})
    root.insert(0, inc)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"
