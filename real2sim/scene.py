"""The reconstruction → export contract: ``Scene`` and its folder format (``scene.json`` + ``meshes/``).

Frame: always z-up, metres, gravity along -z. Transforms are named ``a_from_b`` and stored as 4x4 row-major.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import trimesh

from real2sim import physics
from real2sim.atomic import dumps_json, output_dir, write_text
from real2sim.errors import InputError
from real2sim.meshio import load_mesh, save_mesh
from real2sim.provenance import Provenance

SCENE_VERSION = 1
Role = Literal["dynamic", "static"]
DEFAULT_FRICTION = (0.8, 0.005, 0.0001)  # MuJoCo order: sliding, torsional, rolling
DEFAULT_DENSITY = 500.0  # kg/m^3


def sanitize_name(name: str, taken: set[str] | None = None) -> str:
    """A safe, unique identifier for files and model elements: ASCII letters, digits and ``_``.

    Non-ASCII letters are transliterated where Unicode allows (``é`` -> ``e``), everything else becomes ``_``.
    """
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_") or "object"
    if s[0].isdigit():
        s = "obj_" + s
    if taken is not None:
        base, k = s, 1
        while s in taken:
            k += 1
            s = f"{base}_{k}"
        taken.add(s)
    return s


def _triple(value: Any, what: str) -> Any:
    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 3:
        raise ValueError(f"{what} must be [x, y, z], got {value!r}")
    return value


def as_transform(m: Any, what: str = "transform") -> np.ndarray:
    a = np.asarray(m, dtype=np.float64)
    if a.shape != (4, 4) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be a finite 4x4 matrix, got shape {a.shape}")
    return a


@dataclass(frozen=True)
class Support:
    """The surface objects rest on, in the scene frame.

    ``kind="plane"``: infinite plane through ``point`` [m] with unit ``normal`` (+z for a gravity-aligned scene);
    ``size`` optionally gives the seen extent (x, y) [m] centred at ``point``.
    ``kind="box"``: a solid box with pose ``world_from_support`` and full extents ``size`` (x, y, z) [m]; its top face
    is the surface.
    """

    kind: Literal["plane", "box"] = "plane"
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    point: tuple[float, float, float] = (0.0, 0.0, 0.0)
    size: tuple[float, ...] | None = None
    world_from_support: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("plane", "box"):
            raise ValueError(f"support type must be 'plane' or 'box', got {self.kind!r}")
        if self.kind == "plane":
            object.__setattr__(self, "normal", physics.support_normal(self.normal))
        point = tuple(physics.number(v, "support point") for v in _triple(self.point, "support point"))
        object.__setattr__(self, "point", point)
        if self.size is not None:
            n = 2 if self.kind == "plane" else 3
            if isinstance(self.size, str | bytes) or len(self.size) not in (n, 3):
                raise ValueError(f"support size must hold {n} numbers, got {self.size!r}")
            size = tuple(physics.positive(v, "support size", 1e4) for v in self.size)
            object.__setattr__(self, "size", size)
        if self.world_from_support is not None:
            pose = physics.rigid(self.world_from_support, "support pose")
            object.__setattr__(self, "world_from_support", pose)

    def top_height(self) -> float:
        """Height [m] of the support surface at its centre."""
        if self.kind == "box" and self.world_from_support is not None and self.size is not None:
            return float(self.world_from_support[2, 3] + self.size[2] / 2)
        return float(self.point[2])

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.kind}
        if self.kind == "plane":
            d["normal"] = [float(x) for x in self.normal]
            d["point"] = [float(x) for x in self.point]
            if self.size is not None:
                d["size"] = [float(x) for x in self.size]
        else:
            d["pose"] = np.asarray(self.world_from_support, dtype=float).tolist()
            d["size"] = [float(x) for x in self.size or ()]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> Support:
        if d["type"] == "plane":
            return Support(
                "plane",
                tuple(d["normal"]),
                tuple(d["point"]),
                tuple(d["size"]) if "size" in d else None,
            )
        if d["type"] == "box":
            pose = as_transform(d["pose"], "support pose")
            return Support("box", (0.0, 0.0, 1.0), tuple(pose[:3, 3]), tuple(d["size"]), pose)
        raise ValueError(f"unknown support type {d['type']!r} (expected 'plane' or 'box')")


@dataclass(frozen=True)
class SceneObject:
    """One object: a watertight mesh in its own frame, placed by ``world_from_object``.

    Exactly one of ``mass`` [kg] and ``density`` [kg/m^3] is normally set; ``friction`` is MuJoCo's
    (sliding, torsional, rolling). ``rgba`` is an optional uniform colour (0-1); ``source`` says which input
    (file, cluster, splat) the object came from.
    """

    name: str
    mesh: trimesh.Trimesh
    world_from_object: np.ndarray = field(default_factory=lambda: np.eye(4))
    role: Role = "dynamic"
    mass: float | None = None
    density: float | None = DEFAULT_DENSITY
    friction: tuple[float, float, float] = DEFAULT_FRICTION
    rgba: tuple[float, float, float, float] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        """Refuse invalid physics where it enters (``real2sim.physics``): every value is checked and normalised."""
        physics.name(self.name, "object name")
        what = f"object {self.name!r}"
        set_ = object.__setattr__
        set_(self, "world_from_object", physics.rigid(self.world_from_object, f"{what}: world_from_object"))
        if self.role not in ("dynamic", "static"):
            raise ValueError(f"{what}: role must be 'dynamic' or 'static', got {self.role!r}")
        if self.mass is not None:
            set_(self, "mass", physics.positive(self.mass, f"{what}: mass [kg]", physics.MASS_MAX))
        if self.density is not None:
            set_(
                self,
                "density",
                physics.positive(self.density, f"{what}: density [kg/m^3]", physics.DENSITY_MAX),
            )
        set_(self, "friction", physics.friction(self.friction, f"{what}: friction"))
        if self.rgba is not None:
            set_(self, "rgba", physics.rgba(self.rgba, f"{what}: rgba"))
        if not isinstance(self.source, str):
            raise ValueError(f"{what}: source must be a string, got {self.source!r}")

    def mesh_in_world(self) -> trimesh.Trimesh:
        m = self.mesh.copy()
        m.apply_transform(self.world_from_object)
        return m


@dataclass(frozen=True)
class Scene:
    """A reconstructed scene: support + objects in a z-up metric frame (gravity along -z)."""

    support: Support
    objects: tuple[SceneObject, ...]
    world_from_input: dict[str, np.ndarray] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    frame: dict[str, str] = field(default_factory=lambda: {"up": "+z", "units": "m"})

    def object(self, name: str) -> SceneObject:
        for o in self.objects:
            if o.name == name:
                return o
        raise KeyError(f"no object {name!r}; available: {', '.join(o.name for o in self.objects)}")


def scene_to_json(scene: Scene, mesh_paths: list[str]) -> dict[str, Any]:
    objs = []
    for o, mp in zip(scene.objects, mesh_paths, strict=True):
        d: dict[str, Any] = {
            "name": o.name,
            "mesh": mp,
            "world_from_object": np.asarray(o.world_from_object, dtype=float).tolist(),
            "role": o.role,
        }
        if o.mass is not None:
            d["mass"] = float(o.mass)
        if o.density is not None:
            d["density"] = float(o.density)
        d["friction"] = [float(x) for x in o.friction]
        if o.rgba is not None:
            d["rgba"] = [float(x) for x in o.rgba]
        if o.source:
            d["source"] = o.source
        objs.append(d)
    return {
        "version": SCENE_VERSION,
        "frame": dict(scene.frame),
        "support": scene.support.to_json(),
        "objects": objs,
        "world_from_input": {
            k: np.asarray(v, dtype=float).tolist() for k, v in scene.world_from_input.items()
        },
        "provenance": scene.provenance.to_json(),
    }


def write_scene_into(scene: Scene, folder: Path) -> None:
    """Write ``scene.json`` and ``meshes/`` into an existing (staging) folder."""
    names = [o.name for o in scene.objects]
    if len(set(names)) != len(names):
        raise ValueError(f"object names must be unique, got {names}")
    mesh_paths = []
    for o in scene.objects:
        rel = f"meshes/{o.name}.ply"
        if not (folder / rel).resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"object name {o.name!r} would write its mesh outside the scene folder")
        save_mesh(folder / rel, o.mesh)
        mesh_paths.append(rel)
    write_text(folder / "scene.json", dumps_json(scene_to_json(scene, mesh_paths)))


def save_scene(
    scene: Scene, scene_dir: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()
) -> Path:
    """Write the scene folder atomically: it appears complete, or the old one stays (``atomic.output_dir``)."""
    with output_dir(scene_dir, overwrite=overwrite, inputs=inputs) as tmp:
        write_scene_into(scene, tmp)
    return Path(scene_dir)


def _inside(scene_dir: Path, js: Path, rel: Any) -> Path:
    """``scene_dir / rel`` if it resolves (symlinks followed) inside the scene folder, else an ``InputError``."""
    path = scene_dir / rel
    if not path.resolve().is_relative_to(scene_dir.resolve()):
        raise InputError(
            js, f"mesh path {str(rel)!r} points outside the scene folder; meshes must lie inside it"
        )
    return path


MESH_MIN_EXTENT = 1e-4
"""Smallest object [m] (0.1 mm): below it masses, inertias and contacts fall under the simulators' tolerances."""


def _check_mesh_size(mesh: trimesh.Trimesh, name: str) -> None:
    if len(mesh.vertices) == 0 or not np.all(np.isfinite(mesh.vertices)):
        raise ValueError(f"object {name!r}: the mesh has no vertices or non-finite ones")
    ext = float(np.max(mesh.extents))
    if ext < MESH_MIN_EXTENT:
        raise ValueError(
            f"object {name!r}: the mesh is {ext:.3g} m across, under {MESH_MIN_EXTENT:g} m; are the units metres?"
        )


def load_scene(scene_dir: str | Path) -> Scene:
    """Read a scene folder; every problem is reported as one ``InputError`` naming the file."""
    scene_dir = Path(scene_dir)
    js = scene_dir / "scene.json"
    if not scene_dir.exists():
        raise InputError(scene_dir, "no such scene folder")
    if not js.is_file():
        raise InputError(
            js, "not found: a scene folder holds scene.json and meshes/ (made by `real2sim recon`)"
        )
    if not js.is_file():
        raise InputError(js, "not a regular file")
    try:
        d = json.loads(js.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(js, f"malformed JSON ({exc})") from None
    except RecursionError:
        raise InputError(js, "malformed JSON (nested too deeply)") from None
    if not isinstance(d, dict):
        raise InputError(js, f"invalid scene: expected a JSON object, got {type(d).__name__}")
    try:
        if d.get("version") != SCENE_VERSION:
            raise ValueError(
                f"unsupported version {d.get('version')!r} (this real2sim reads {SCENE_VERSION})"
            )
        frame = dict(d["frame"])
        if frame.get("up") != "+z" or frame.get("units") != "m":
            raise ValueError(f"frame must be up '+z', units 'm'; got {frame}")
        support = Support.from_json(d["support"])
        objects = []
        if not isinstance(d["objects"], list):
            raise ValueError("'objects' must be a list")
        for i, od in enumerate(d["objects"]):
            if not isinstance(od, dict):
                raise ValueError(f"objects[{i}] must be a JSON object")
            name = physics.name(od["name"], f"objects[{i}].name")
            if any(o.name == name for o in objects):
                raise ValueError(f"two objects are named {name!r}; names must be unique")
            if not isinstance(od["mesh"], str):
                raise ValueError(f"object {name!r}: mesh must be a path string, got {od['mesh']!r}")
            obj = SceneObject(
                name=name,
                mesh=trimesh.Trimesh(),
                world_from_object=od["world_from_object"],
                role=od.get("role", "dynamic"),
                mass=od.get("mass"),
                density=od.get("density"),
                friction=od.get("friction", DEFAULT_FRICTION),
                rgba=od.get("rgba"),
                source=od.get("source", ""),
            )  # the values are checked before the mesh is read
            mesh = load_mesh(_inside(scene_dir, js, od["mesh"]))
            _check_mesh_size(mesh, name)
            objects.append(replace(obj, mesh=mesh))
        wfi = {k: as_transform(v, f"world_from_input[{k}]") for k, v in d.get("world_from_input", {}).items()}
        prov = Provenance.from_json(d.get("provenance", {}))
    except InputError:
        raise
    except (
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
    ) as exc:  # AttributeError: a list where a dict belongs
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        what = f"a field has the wrong type ({exc})" if isinstance(exc, AttributeError) else what
        raise InputError(js, f"invalid scene: {what}") from None
    return Scene(support=support, objects=tuple(objects), world_from_input=wfi, provenance=prov, frame=frame)
