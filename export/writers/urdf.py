"""URDF with visual, collision and inertial elements (full inertia) and relative mesh paths (no ``package://``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.export.objects.prepare import PlacedObject
from real2sim.export.objects.visual import has_colours, texture_file
from real2sim.export.writers.mjcf import support_box
from real2sim.scene import Support
from real2sim.transforms import quat_to_matrix


def _f(x) -> str:
    return " ".join(f"{round(float(v), 9) + 0.0:.9g}" for v in np.ravel(x))


def _rpy(r: np.ndarray) -> np.ndarray:
    import warnings

    from scipy.spatial.transform import Rotation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gimbal lock: the angles still give the same rotation
        return Rotation.from_matrix(r).as_euler("xyz")


def _origin(parent: ET.Element, pos, r: np.ndarray) -> None:
    ET.SubElement(parent, "origin", {"xyz": _f(pos), "rpy": _f(_rpy(r))})


def urdf_xml(name: str, objects: list[PlacedObject], support: Support) -> str:
    robot = ET.Element("robot", {"name": name})
    mj = ET.SubElement(robot, "mujoco")  # MuJoCo's URDF extension: keep the assets/ folder in mesh paths
    ET.SubElement(mj, "compiler", {"strippath": "false", "balanceinertia": "false", "discardvisual": "true"})
    ET.SubElement(robot, "link", {"name": "world"})
    support_link(robot, support, objects)
    j = ET.SubElement(robot, "joint", {"name": "support_fixed", "type": "fixed"})
    ET.SubElement(j, "parent", {"link": "world"})
    ET.SubElement(j, "child", {"link": "support"})
    for o in objects:
        n = o.name
        object_link(robot, o, "assets")
        joint = ET.SubElement(
            robot,
            "joint",
            {
                "name": f"{n}_free" if o.role == "dynamic" else f"{n}_fixed",
                "type": "floating" if o.role == "dynamic" else "fixed",
            },
        )
        _origin(joint, o.world_from_object[:3, 3], o.world_from_object[:3, :3])
        ET.SubElement(joint, "parent", {"link": "world"})
        ET.SubElement(joint, "child", {"link": n})
    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


SUPPORT_CONTACT = {
    "lateral_friction": 1.0,
    "rolling_friction": 0.0,
    "spinning_friction": 0.0,
    "restitution": 1.0,
}
"""The support link's PyBullet contact values. Bullet multiplies the two bodies' lateral friction and restitution
and takes rolling / spinning friction as ``r0 f1 + f0 r1``: with these the support is neutral and every contact
gets the object's own values, as the MJCF's contact priority gives them in MuJoCo."""


def support_link(robot: ET.Element, support: Support, objects: list[PlacedObject]) -> ET.Element:
    """The static support slab as a link named ``support`` (box visual and collision, neutral contact values)."""
    c, q, h = support_box(support, objects)
    sup = ET.SubElement(robot, "link", {"name": "support"})
    contact = ET.SubElement(sup, "contact")
    for tag, value in SUPPORT_CONTACT.items():
        ET.SubElement(contact, tag, {"value": f"{value:g}"})
    for tag in ("visual", "collision"):
        e = ET.SubElement(sup, tag)
        _origin(e, c, quat_to_matrix(q))
        ET.SubElement(ET.SubElement(e, "geometry"), "box", {"size": _f(2 * h)})
    return sup


def object_link(robot: ET.Element, o: PlacedObject, assets: str) -> ET.Element:
    """The object's link: inertial (full tensor about the COM), contact (PyBullet's ``lateral_friction``: the sliding
    friction), visual (colour, texture) and collision geometry in the object's frame; mesh paths under ``assets``."""
    n = o.name
    link = ET.SubElement(robot, "link", {"name": n})
    mp = o.obj.mass
    inertial = ET.SubElement(link, "inertial")
    _origin(inertial, mp.com, np.eye(3))
    ET.SubElement(inertial, "mass", {"value": f"{mp.mass:.12g}"})
    i = mp.inertia
    ET.SubElement(
        inertial,
        "inertia",
        {
            k: f"{float(v):.12g}"
            for k, v in zip(
                ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                (i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2]),
                strict=True,
            )
        },
    )
    contact = ET.SubElement(link, "contact")  # PyBullet's friction of the link (other engines ignore it)
    ET.SubElement(contact, "lateral_friction", {"value": f"{float(o.friction[0]):.12g}"})
    vis = ET.SubElement(link, "visual", {"name": f"{n}_visual"})
    _origin(vis, np.zeros(3), np.eye(3))
    ET.SubElement(ET.SubElement(vis, "geometry"), "mesh", {"filename": f"{assets}/{o.visual_file()}"})
    mat = ET.SubElement(vis, "material", {"name": f"{n}_color"})
    ET.SubElement(mat, "color", {"rgba": _f(o.obj.rgba)})
    if has_colours(o.obj.visual):
        ET.SubElement(mat, "texture", {"filename": f"{assets}/{texture_file(o.visual_file())}"})
    prim = o.obj.collision.primitive
    if prim is not None and prim.kind != "capsule":
        colx = ET.SubElement(link, "collision", {"name": f"{n}_collision_0"})
        _origin(colx, prim.pos, quat_to_matrix(prim.quat))
        geo = ET.SubElement(colx, "geometry")
        if prim.kind == "box":
            ET.SubElement(geo, "box", {"size": _f(2 * prim.size)})
        elif prim.kind == "sphere":
            ET.SubElement(geo, "sphere", {"radius": _f(prim.size[0])})
        else:
            ET.SubElement(geo, "cylinder", {"radius": _f(prim.size[0]), "length": _f(2 * prim.size[1])})
    else:
        for k, f in enumerate(o.collision_files()):
            colx = ET.SubElement(link, "collision", {"name": f"{n}_collision_{k}"})
            _origin(colx, np.zeros(3), np.eye(3))
            ET.SubElement(ET.SubElement(colx, "geometry"), "mesh", {"filename": f"{assets}/{f}"})
    return link
