"""``Collision``: an object's collision geometry, one primitive or convex hulls."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from real2sim.export.collision.primitives import Primitive


@dataclass(frozen=True)
class Collision:
    """An object's collision geometry in its own frame: one ``primitive`` or convex ``hulls`` (vertices, faces)."""

    primitive: Primitive | None
    hulls: tuple[tuple[np.ndarray, np.ndarray], ...]
    cached: bool = False
    seconds: float = 0.0

    @property
    def count(self) -> int:
        return 1 if self.primitive is not None else len(self.hulls)

    def meshes(self) -> list[trimesh.Trimesh]:
        if self.primitive is not None:
            return [self.primitive.to_mesh()]
        return [trimesh.Trimesh(v, f, process=False) for v, f in self.hulls]
