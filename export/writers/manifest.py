"""``PackageManifest``: what export knows about a package, built once, written to ``export.json`` and the README, and
read back by validation (in-process, or from ``export.json`` by ``real2sim validate PKG_DIR``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from real2sim.atomic import dumps_json
from real2sim.bounded import load_json
from real2sim.errors import InputError
from real2sim.rounding import significant
from real2sim.scene import Role

MANIFEST_FILE = "export.json"
"""The package file that holds the manifest's validation part (name, budget, objects)."""


@dataclass(frozen=True)
class PhysicalValue:
    """A physical value of an object and where it came from (``physics.SOURCES``: default, scene, weighed, given,
    material:<name>, fitted)."""

    value: float | tuple[float, ...]
    source: str

    def to_json(self) -> dict[str, Any]:
        v = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"value": v, "source": self.source}

    @staticmethod
    def from_json(d: dict[str, Any]) -> PhysicalValue:
        v = d["value"]
        return PhysicalValue(
            tuple(float(x) for x in v) if isinstance(v, list) else float(v), str(d["source"])
        )


def _round(x: float) -> float:
    return significant(x)


def physical_values(
    mass: float, density: float, friction: tuple[float, ...], mass_source: str, friction_source: str
) -> dict[str, PhysicalValue]:
    """An object's ``physics``: mass [kg] and density [kg/m^3] (one source: one follows from the other and the mesh
    volume) and friction (sliding, torsional, rolling)."""
    return {
        "mass": PhysicalValue(_round(mass), mass_source),
        "density": PhysicalValue(_round(density), mass_source),
        "friction": PhysicalValue(tuple(_round(f) for f in friction), friction_source),
    }


@dataclass(frozen=True)
class ManifestObject:
    """One object of the package. ``name``: its body; ``label``: its name in the scene. ``mass`` [kg], ``collision``
    (a primitive's kind or ``"<n> hulls"``) and ``warnings`` go to the README only (None / empty when read back);
    ``physics`` (mass, density, friction with their sources) is also in ``export.json``, where a later tool (the
    calibrate write-back) updates it."""

    name: str
    label: str
    role: Role
    mass: float | None = None
    collision: str = ""
    warnings: tuple[str, ...] = ()
    physics: dict[str, PhysicalValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "label": self.label, "role": self.role}
        if self.physics:
            d["physics"] = {k: v.to_json() for k, v in self.physics.items()}
        return d

    @staticmethod
    def from_json(o: dict[str, Any]) -> ManifestObject:
        physics = {k: PhysicalValue.from_json(v) for k, v in o.get("physics", {}).items()}
        return ManifestObject(o["name"], o.get("label", o["name"]), o["role"], physics=physics)


@dataclass(frozen=True)
class PackageManifest:
    """A package's model name, hull budget and objects (``export.json``), and how it was made: ``urdf`` written,
    ``inputs`` (file -> sha256), ``tools`` (name -> version) and ``options`` (README only; empty when read back)."""

    name: str
    max_hulls: int
    max_hull_vertices: int
    objects: tuple[ManifestObject, ...]
    urdf: bool = False
    inputs: dict[str, str] = field(default_factory=dict)
    tools: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """The text of ``export.json``: what validation needs (name, budget, objects' name, label, role) and each
        object's physical values with their sources."""
        return dumps_json(
            {
                "name": self.name,
                "budget": {"max_hulls": self.max_hulls, "max_hull_vertices": self.max_hull_vertices},
                "objects": [o.to_json() for o in self.objects],
            }
        )

    @classmethod
    def from_json(cls, pkg_dir: str | Path) -> PackageManifest:
        """The manifest of the package folder ``pkg_dir`` (its ``export.json``); ``InputError`` if there is none."""
        p = Path(pkg_dir) / MANIFEST_FILE
        if not p.is_file():
            raise InputError(p, "not found: not a real2sim package (made by `real2sim export`)")
        try:
            d = load_json(p)
            return cls(
                name=d["name"],
                max_hulls=int(d["budget"]["max_hulls"]),
                max_hull_vertices=int(d["budget"]["max_hull_vertices"]),
                objects=tuple(ManifestObject.from_json(o) for o in d["objects"]),
                urdf=(Path(pkg_dir) / f"{d['name']}.urdf").is_file(),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(p, f"not a real2sim manifest (missing or bad {exc})") from None
