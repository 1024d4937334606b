"""A small table of common object materials: density and sliding friction for objects nobody weighed.

Each value's source, and how it was chosen from it, is in ``docs/materials.md``. Densities are of the solid
material: an object that is hollow inside its closed surface (an empty box, a can, a mug) weighs much less than
density x mesh volume, so weigh it (``--mass``) instead.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Material:
    """A material of the table: ``density`` [kg/m^3] of the solid material and ``friction``, MuJoCo's sliding
    coefficient of the material on a dry table top (one value for sticking and sliding)."""

    name: str
    density: float
    friction: float


MATERIALS: dict[str, Material] = {
    m.name: m
    for m in (
        Material("wood", 600.0, 0.4),
        Material("plastic", 1050.0, 0.5),
        Material("steel", 7850.0, 0.4),
        Material("aluminium", 2700.0, 0.4),
        Material("glass", 2500.0, 0.68),
        Material("ceramic", 2400.0, 0.68),
        Material("cardboard", 689.0, 0.4),
        Material("rubber", 1100.0, 0.9),
        Material("foam", 50.0, 0.5),
    )
}
"""The materials by name (``docs/materials.md`` gives each value's source)."""

ALIASES: dict[str, str] = {"metal": "steel", "aluminum": "aluminium", "porcelain": "ceramic"}
"""Other names of the table's materials."""


def material_names() -> list[str]:
    """Every name ``material`` accepts, table names first."""
    return [*MATERIALS, *ALIASES]


def nearest_names(name: str, names: list[str]) -> list[str]:
    """The name in ``names`` closest in spelling to ``name``, if one is close (an empty list if none)."""
    return difflib.get_close_matches(name, names, n=1, cutoff=0.5)


def material(name: str) -> Material | None:
    """The material called ``name`` (case-insensitive, aliases included), or None."""
    key = name.strip().lower()
    return MATERIALS.get(ALIASES.get(key, key))
