"""``Resolved``: one scalar parameter bound to a model element (a ``ParamSpec`` after wildcards and vector
attributes are expanded against a model)."""

from __future__ import annotations

from dataclasses import dataclass

from real2sim.params import Kind, ParamSpec


@dataclass(frozen=True)
class Resolved:
    """One scalar parameter bound to a model element."""

    spec: ParamSpec
    kind: Kind
    element: str
    attribute: str | None
    obj_id: int
    index: int = 0  # component for vector attributes

    @property
    def name(self) -> str:
        return self.spec.name
