"""``ParamKind``: how the parameters of one kind of model element are found, read and written: on a compiled
``MjModel`` (the fit), in an ``MjSpec`` (the calibrated MJCF), in an MJCF tree (an exported package) and in a URDF.
Each kind is a module of this package with one subclass, registered in ``kinds.py``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from real2sim.calibration.params.resolved import Resolved


def fmt(v: float) -> str:
    """A value as written into an MJCF attribute."""
    return f"{v:.9g}"


class ParamKind:
    """The base: a kind whose elements are MuJoCo objects of type ``obj`` and MJCF tags ``xml_tags``."""

    obj: str = ""
    """The ``mujoco.mjtObj`` member of the kind's elements, e.g. ``mjOBJ_JOINT``."""
    xml_tags: tuple[str, ...] = ()
    """The MJCF element tags that hold the kind's elements."""

    def count(self, model) -> int:
        """How many elements of this kind ``model`` has."""
        raise NotImplementedError

    def selectable(self, model, i: int) -> bool:
        """Whether element ``i`` can carry the kind's parameters (e.g. one-dof joints only)."""
        return True

    def components(self, attribute: str | None) -> int:
        """Scalars per attribute (a vector attribute is fitted as one parameter per component)."""
        return 1

    def get(self, model, p: Resolved) -> float:
        """The value of ``p`` in the compiled model."""
        raise NotImplementedError

    def set(self, model, p: Resolved, v: float) -> None:
        """Set ``p`` = ``v`` in the compiled model."""

    def default_bounds(self, p: Resolved, value: float) -> tuple[float, float] | None:
        """Bounds of ``p`` when its spec gives none (None: the attribute's usual bounds, ``resolve.default_bounds``)."""
        return None

    def compiled_value(self, model, p: Resolved) -> float | None:
        """The value of ``p`` in another compiled model (an exported package), its element found by name; None when
        it has no element of that name."""
        import mujoco

        i = mujoco.mj_name2id(model, getattr(mujoco.mjtObj, self.obj), p.element)
        return None if i < 0 else self.get(model, replace(p, obj_id=i))

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        """Write ``p`` = ``v`` into an ``MjSpec`` (the MJCF write-back of ``set``)."""
        raise NotImplementedError

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        """Set ``p`` on its MJCF element ``el``; returns why not, or None when set."""
        raise NotImplementedError

    def urdf_target(self, root: ET.Element, p: Resolved) -> tuple[ET.Element, str, str] | None:
        """Where ``p`` lives in a URDF tree: (element, attribute, current value), or None (only in the MJCF)."""
        return None
