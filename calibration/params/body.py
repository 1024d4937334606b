"""``body:NAME.mass|com|inertia``: a body's mass, centre of mass (3 components) and principal moments (3
components, about the model's principal axes)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.calibration.params.kind import ParamKind, fmt
from real2sim.calibration.params.resolved import Resolved


class Body(ParamKind):
    obj = "mjOBJ_BODY"
    xml_tags = ("body",)

    def count(self, model) -> int:
        return model.nbody

    def selectable(self, model, i: int) -> bool:
        return i > 0  # never the world body

    def components(self, attribute: str | None) -> int:
        return 3 if attribute in ("com", "inertia") else 1

    def get(self, model, p: Resolved) -> float:
        i = p.obj_id
        if p.attribute == "mass":
            return float(model.body_mass[i])
        if p.attribute == "com":
            return float(model.body_ipos[i, p.index])
        return float(model.body_inertia[i, p.index])

    def set(self, model, p: Resolved, v: float) -> None:
        i = p.obj_id
        if p.attribute == "mass":
            model.body_mass[i] = v
        elif p.attribute == "com":
            model.body_ipos[i, p.index] = v
            # compiled bodies whose inertial frame coincided with the body frame skip ipos at run time
            model.body_sameframe[i] = 0
        else:
            model.body_inertia[i, p.index] = v

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        b = spec.body(p.element)
        b.explicitinertial = True
        if p.attribute == "mass":
            b.mass = float(v)
        elif p.attribute == "com":
            ipos = np.array(b.ipos, float)
            ipos[p.index] = v
            b.ipos = ipos
        else:
            if np.any(np.asarray(b.fullinertia)[:3] != 0) and not np.isnan(np.asarray(b.fullinertia)[0]):
                b.fullinertia = [np.nan] * 6
            inertia = np.array(b.inertia, float)
            inertia[p.index] = v
            b.inertia = inertia

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        inert = el.find("inertial")
        if inert is None:
            return "the body has no explicit <inertial>"
        if p.attribute == "mass":
            inert.set("mass", fmt(v))
            return None
        key = "pos" if p.attribute == "com" else "diaginertia"
        old = inert.get(key)
        if old is None:
            return f"<inertial> has no {key}"
        vec = old.split()
        vec[p.index] = fmt(v)
        inert.set(key, " ".join(vec))
        return None

    def urdf_target(self, root: ET.Element, p: Resolved) -> tuple[ET.Element, str, str] | None:
        """A link's mass."""
        if p.attribute != "mass":
            return None
        for link in root.iter("link"):
            m = link.find("inertial/mass") if link.get("name") == p.element else None
            if m is not None:
                return m, "value", m.get("value", "0")
        return None


KIND = Body()
