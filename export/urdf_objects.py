"""``urdf/<object>.urdf``: one URDF per object (YCB style), its base link the object, so any engine (PyBullet,
ManiSkill, Genesis, the Isaac URDF importer) loads it as a free body; mesh paths are relative to that file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from real2sim.atomic import dumps_json, write_text
from real2sim.export.prepare import PlacedObject
from real2sim.export.urdf import object_link
from real2sim.transforms import matrix_to_quat

URDF_DIR = "urdf"
"""Package subfolder of the per-object URDFs."""
POSES_FILE = f"{URDF_DIR}/poses.json"
"""Each object's resting pose in the world (the MJCF's ``home``): position [m], quaternion xyzw, fixed or free."""


def object_urdf_file(name: str) -> str:
    return f"{URDF_DIR}/{name}.urdf"


def object_urdf_xml(o: PlacedObject, assets: str = "../assets") -> str:
    """The URDF of one object in its own frame: inertial (full tensor about the COM), visual, collision."""
    robot = ET.Element("robot", {"name": o.name})
    object_link(robot, o, assets)
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
