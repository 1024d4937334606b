"""The URDF files: ``<name>.urdf`` (the scene) and ``urdf/<object>.urdf``, one URDF per object (YCB style), its base link the object, so any engine (PyBullet,
ManiSkill, Genesis, the Isaac URDF importer) loads it as a free body; mesh paths are relative to that file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from real2sim.atomic import dumps_json, write_text
from real2sim.export.objects.prepare import PlacedObject
from real2sim.export.writers.urdf import object_link, support_link, urdf_xml
from real2sim.scene import Support
from real2sim.transforms import matrix_to_quat

URDF_DIR = "urdf"
"""Package subfolder of the per-object URDFs."""
POSES_FILE = f"{URDF_DIR}/poses.json"
"""Each object's resting pose in the world (the MJCF's ``home``): position [m], quaternion xyzw, fixed or free; and
the support's (``support.urdf``, fixed, its box placed in the file)."""
SUPPORT_URDF = "support.urdf"


def object_urdf_file(name: str) -> str:
    return f"{URDF_DIR}/{name}.urdf"


def object_urdf_xml(o: PlacedObject, assets: str = "../assets") -> str:
    """The URDF of one object in its own frame: inertial (full tensor about the COM), visual, collision."""
    robot = ET.Element("robot", {"name": o.name})
    object_link(robot, o, assets)
    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def support_urdf_xml(support: Support, objects: list[PlacedObject]) -> str:
    """The support slab as a URDF of its own (``support.urdf``), with the contact values that leave each contact the
    object's friction and restitution in PyBullet (``urdf.SUPPORT_CONTACT``)."""
    robot = ET.Element("robot", {"name": "support"})
    support_link(robot, support, objects)
    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def poses_json(objects: list[PlacedObject]) -> str:
    """``urdf/poses.json``: where to load each per-object URDF and the support's (``POSES_FILE``)."""
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
    poses["support"] = {
        "urdf": SUPPORT_URDF,
        "xyz": [0.0, 0.0, 0.0],
        "quat_xyzw": [0.0, 0.0, 0.0, 1.0],
        "fixed": True,
    }
    return dumps_json(poses)


def write_object_urdfs(folder: Path, objects: list[PlacedObject], support: Support) -> list[Path]:
    """Write ``folder/urdf/<object>.urdf`` for every object, ``urdf/support.urdf`` and ``urdf/poses.json``; return
    the objects' URDF paths."""
    out = []
    for o in objects:
        p = Path(folder) / object_urdf_file(o.name)
        write_text(p, object_urdf_xml(o))
        out.append(p)
    write_text(Path(folder) / URDF_DIR / SUPPORT_URDF, support_urdf_xml(support, objects))
    write_text(Path(folder) / POSES_FILE, poses_json(objects))
    return out


def write(folder: Path, name: str, objects: list[PlacedObject], support: Support) -> None:
    """The package's URDF files: ``<name>.urdf`` (the scene) and the per-object ones (``write_object_urdfs``)."""
    write_text(Path(folder) / f"{name}.urdf", urdf_xml(name, objects, support))
    write_object_urdfs(folder, objects, support)
