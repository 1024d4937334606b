"""``urdf/<object>.urdf``: one URDF per object (YCB style), its base link the object, so any engine (PyBullet,
ManiSkill, Genesis, the Isaac URDF importer) loads it as a free body; mesh paths are relative to that file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from real2sim.atomic import dumps_json, write_text
from real2sim.export.prepare import PlacedObject
from real2sim.export.urdf import _f, _origin
from real2sim.transforms import matrix_to_quat, quat_to_matrix

URDF_DIR = "urdf"
"""Package subfolder of the per-object URDFs."""
POSES_FILE = f"{URDF_DIR}/poses.json"
"""Each object's resting pose in the world (the MJCF's ``home``): position [m], quaternion xyzw, fixed or free."""


def object_urdf_file(name: str) -> str:
    return f"{URDF_DIR}/{name}.urdf"


def object_urdf_xml(o: PlacedObject, assets: str = "../assets") -> str:
    """The URDF of one object in its own frame: inertial (full tensor about the COM), visual, collision."""
    n, mp = o.name, o.obj.mass
    robot = ET.Element("robot", {"name": n})
    link = ET.SubElement(robot, "link", {"name": n})
    inertial = ET.SubElement(link, "inertial")
    _origin(inertial, mp.com, np.eye(3))
    ET.SubElement(inertial, "mass", {"value": f"{mp.mass:.12g}"})
    i = mp.inertia
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    values = (i[0, 0], i[0, 1], i[0, 2], i[1, 1], i[1, 2], i[2, 2])
    ET.SubElement(inertial, "inertia", {k: f"{float(v):.12g}" for k, v in zip(names, values, strict=True)})
    vis = ET.SubElement(link, "visual", {"name": f"{n}_visual"})
    _origin(vis, np.zeros(3), np.eye(3))
    ET.SubElement(ET.SubElement(vis, "geometry"), "mesh", {"filename": f"{assets}/{o.visual_file()}"})
    ET.SubElement(ET.SubElement(vis, "material", {"name": f"{n}_color"}), "color", {"rgba": _f(o.obj.rgba)})
    prim = o.obj.collision.primitive
    if prim is not None and prim.kind != "capsule":
        col = ET.SubElement(link, "collision", {"name": f"{n}_collision_0"})
        _origin(col, prim.pos, quat_to_matrix(prim.quat))
        geo = ET.SubElement(col, "geometry")
        if prim.kind == "box":
            ET.SubElement(geo, "box", {"size": _f(2 * prim.size)})
        elif prim.kind == "sphere":
            ET.SubElement(geo, "sphere", {"radius": _f(prim.size[0])})
        else:
            ET.SubElement(geo, "cylinder", {"radius": _f(prim.size[0]), "length": _f(2 * prim.size[1])})
    else:
        for k, f in enumerate(o.collision_files()):
            col = ET.SubElement(link, "collision", {"name": f"{n}_collision_{k}"})
            _origin(col, np.zeros(3), np.eye(3))
            ET.SubElement(ET.SubElement(col, "geometry"), "mesh", {"filename": f"{assets}/{f}"})
    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def poses_json(objects: list[PlacedObject]) -> str:
    """``urdf/poses.json``: where to load each per-object URDF (``POSES_FILE``)."""
    poses = {}
    for o in objects:
        t = o.world_from_object
        w, x, y, z = matrix_to_quat(t[:3, :3])
        poses[o.name] = {
            "urdf": f"{o.name}.urdf",
            "xyz": [round(float(v), 9) + 0.0 for v in t[:3, 3]],
            "quat_xyzw": [round(float(v), 9) + 0.0 for v in (x, y, z, w)],
            "fixed": o.role != "dynamic",
        }
    return dumps_json(poses)


def write_object_urdfs(folder: Path, objects: list[PlacedObject]) -> list[Path]:
    """Write ``folder/urdf/<object>.urdf`` for every object and ``urdf/poses.json``; return the URDFs' paths."""
    out = []
    for o in objects:
        p = Path(folder) / object_urdf_file(o.name)
        write_text(p, object_urdf_xml(o))
        out.append(p)
    write_text(Path(folder) / POSES_FILE, poses_json(objects))
    return out
