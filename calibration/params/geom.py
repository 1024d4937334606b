"""``geom:NAME.friction``: a geom's sliding friction (the contact fit's geom parameters are in
``calibration.contact.params``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.calibration.params.kind import ParamKind, fmt
from real2sim.calibration.params.resolved import Resolved


class Geom(ParamKind):
    obj = "mjOBJ_GEOM"
    xml_tags = ("geom",)

    def count(self, model) -> int:
        return model.ngeom

    def get(self, model, p: Resolved) -> float:
        return float(model.geom_friction[p.obj_id, 0])

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        g = spec.geom(p.element)
        f = np.array(g.friction, float)
        f[0] = v
        g.friction = f

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        gid = model.geom(p.element).id
        fr = [fmt(float(x)) for x in model.geom_friction[gid]]
        fr[0] = fmt(v)
        el.set("friction", " ".join(fr))
        return None


KIND = Geom()
