"""Each object's mass, density and friction at export, and where each value came from.

Values enter as ``NAME=VALUE`` pairs (``--mass``, ``--density``, ``--friction``, ``--material``, or
``[objects.NAME]`` in ``session.toml``) and are checked there; ``resolve_physics`` then picks, per object, what
``mass_properties`` and the geoms get, with a source for each value (``SOURCES``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from real2sim.errors import OptionError
from real2sim.export.physics.materials import material, material_names, nearest_names

if TYPE_CHECKING:  # the scene module loads trimesh: kept out of the CLI's option parsing
    from real2sim.scene import SceneObject

SOURCES = {
    "default": "real2sim's default (density 500 kg/m^3, friction 0.8)",
    "scene": "the scene folder's own value (set at reconstruction, e.g. by session.toml [objects])",
    "weighed": "a given mass (--mass, [objects.NAME] mass); density = mass / mesh volume",
    "given": "a given density or friction (--density, --friction, [objects.NAME])",
    "material:<name>": "the materials table (docs/materials.md)",
    "fitted": "fitted from logs of the object's motion (real2sim calibrate --package)",
}
"""What each source label of a value means (package README, report and ``export.json``)."""

UNITS = {"mass": "KG", "density": "KG_PER_M3", "friction": "MU", "material": "MATERIAL"}


@dataclass(frozen=True)
class Given:
    """What was given for one object (None: not given)."""

    mass: float | None = None
    density: float | None = None
    friction: float | None = None
    material: str | None = None


@dataclass(frozen=True)
class ObjectPhysics:
    """What one object is exported with: exactly one of ``mass`` [kg] and ``density`` [kg/m^3] (for
    ``mass_properties``), ``friction`` (sliding, torsional, rolling), and the source of the mass (and density, which
    follows from it) and of the friction."""

    mass: float | None
    density: float | None
    friction: tuple[float, float, float]
    mass_source: str
    friction_source: str


def value_problem(kind: str, value: float) -> str | None:
    """Why ``value`` is no valid ``kind``, by the bounds every entry point shares (``real2sim.physics``): mass and
    density positive, finite and within ``MASS_MAX`` / ``DENSITY_MAX``; sliding friction finite, >= 0 and within
    ``FRICTION_MAX``."""
    from real2sim.physics import DENSITY_MAX, FRICTION_MAX, MASS_MAX

    if kind == "friction":
        ok = math.isfinite(value) and 0 <= value <= FRICTION_MAX[0]
        return None if ok else f"must be a finite number >= 0 and at most {FRICTION_MAX[0]:g}"
    unit, upper = ("kg", MASS_MAX) if kind == "mass" else ("kg/m^3", DENSITY_MAX)
    ok = math.isfinite(value) and 0 < value <= upper
    return None if ok else f"must be a positive, finite number of {unit}, at most {upper:g}"


def material_problem(name: str) -> str | None:
    """Why ``name`` is not a material of the table (naming the nearest and every valid name), or None."""
    if material(name) is not None:
        return None
    names = material_names()
    near = nearest_names(name.lower(), names)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return f"unknown material {name!r}{hint}; materials: {', '.join(names)}"


def unknown_object(name: str, names: Sequence[str]) -> str:
    """The problem text for an object name that is not in the scene: the nearest names and every name."""
    near = nearest_names(name, list(names))
    hint = f" (did you mean {near[0]}?)" if near else ""
    return f"no object {name!r} in the scene{hint}; objects: {', '.join(names)}"


def parse_given(
    mass: Sequence[str] = (),
    density: Sequence[str] = (),
    friction: Sequence[str] = (),
    materials: Sequence[str] = (),
) -> dict[str, Given]:
    """The per-object values of ``NAME=VALUE`` option strings; ``OptionError`` (naming the option) on a malformed
    pair, a bad value, an unknown material, a name given twice, or both a mass and a density for one object."""
    out: dict[str, dict[str, float | str]] = {}
    for kind, pairs in (
        ("mass", mass),
        ("density", density),
        ("friction", friction),
        ("material", materials),
    ):
        opt = f"--{kind}"
        for pair in pairs:
            name, sep, text = (s.strip() for s in str(pair).rpartition("="))
            if not sep or not name or not text:
                raise OptionError(f"{opt}: expected NAME={UNITS[kind]}, got {pair!r}")
            if kind == "material":
                problem = material_problem(text)
                value: float | str = text.lower()
            else:
                try:
                    value = float(text)
                except ValueError:
                    value, problem = math.nan, f"{text!r} is not a number"
                else:
                    problem = value_problem(kind, value)
            if problem is not None:
                raise OptionError(f"{opt} {name}={text}: {problem}")
            if kind in out.setdefault(name, {}):
                raise OptionError(f"{opt}: {name} is given twice")
            out[name][kind] = value
    for name, d in out.items():
        if "mass" in d and "density" in d:
            raise OptionError(f"--mass/--density: {name} has both a mass and a density; give one")
    return {name: Given(**d) for name, d in out.items()}  # type: ignore[arg-type]


def check_names(given: dict[str, Given], objects: Sequence[SceneObject], bodies: Sequence[str]) -> None:
    """``OptionError`` for a given name that is neither an object's scene name nor its body name."""
    labels = [o.name for o in objects]
    for name, g in given.items():
        if name not in labels and name not in bodies:
            kind = next(k for k in ("mass", "density", "friction", "material") if getattr(g, k) is not None)
            raise OptionError(f"--{kind}: {unknown_object(name, labels)}")


def resolve_physics(o: SceneObject, body: str, given: dict[str, Given]) -> ObjectPhysics:
    """What object ``o`` (body name ``body``) is exported with: a given value first, then its material, then the
    scene's own value."""
    from real2sim.scene import DEFAULT_DENSITY, DEFAULT_FRICTION

    g = given.get(o.name) or given.get(body) or Given()
    mat = material(g.material) if g.material is not None else None
    mat_source = f"material:{mat.name}" if mat is not None else ""
    if g.mass is not None:
        mass, density, msource = g.mass, None, "weighed"
    elif g.density is not None:
        mass, density, msource = None, g.density, "given"
    elif mat is not None:
        mass, density, msource = None, mat.density, mat_source
    elif o.mass is not None:
        mass, density, msource = o.mass, None, "scene"
    else:
        mass, density = None, o.density
        msource = "default" if o.density == DEFAULT_DENSITY else "scene"
    fr = tuple(float(x) for x in o.friction)
    if g.friction is not None:
        friction, fsource = (g.friction, fr[1], fr[2]), "given"
    elif mat is not None:
        friction, fsource = (mat.friction, fr[1], fr[2]), mat_source
    else:
        friction, fsource = (fr[0], fr[1], fr[2]), "default" if fr == DEFAULT_FRICTION else "scene"
    return ObjectPhysics(mass, density, friction, msource, fsource)
