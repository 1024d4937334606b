"""``joint:NAME.damping|frictionloss|armature|stiffness``: one-dof (hinge, slide) joints."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.calibration.params.kind import ParamKind, fmt
from real2sim.calibration.params.resolved import Resolved


def _field(model, attribute: str):
    return {
        "damping": model.dof_damping,
        "frictionloss": model.dof_frictionloss,
        "armature": model.dof_armature,
        "stiffness": model.jnt_stiffness,
    }[attribute]


class Joint(ParamKind):
    obj = "mjOBJ_JOINT"
    xml_tags = ("joint",)

    def count(self, model) -> int:
        return model.njnt

    def selectable(self, model, i: int) -> bool:
        return model.jnt_type[i] in (2, 3)  # slide/hinge: one dof

    def get(self, model, p: Resolved) -> float:
        assert p.attribute is not None  # every joint parameter names its attribute (parse_param_name)
        i = p.obj_id
        return float(_field(model, p.attribute)[i if p.attribute == "stiffness" else model.jnt_dofadr[i]])

    def set(self, model, p: Resolved, v: float) -> None:
        assert p.attribute is not None
        i = p.obj_id
        _field(model, p.attribute)[i if p.attribute == "stiffness" else model.jnt_dofadr[i]] = v

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        assert p.attribute is not None
        j = spec.joint(p.element)
        cur = getattr(j, p.attribute)
        if np.ndim(cur):  # MuJoCo >= 3.4: damping/stiffness are 3-vectors (polynomial); first term is linear
            arr = np.array(cur, float)
            arr[0] = v
            setattr(j, p.attribute, arr)
        else:
            setattr(j, p.attribute, float(v))

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        assert p.attribute is not None
        el.set(p.attribute, fmt(v))
        return None

    def urdf_target(self, root: ET.Element, p: Resolved) -> tuple[ET.Element, str, str] | None:
        """A joint's damping and friction (``<dynamics>``, added when missing)."""
        if p.attribute not in ("damping", "frictionloss"):
            return None
        for j in root.iter("joint"):
            if j.get("name") == p.element:
                dyn = j.find("dynamics")
                if dyn is None:
                    dyn = ET.SubElement(j, "dynamics")
                attr = "damping" if p.attribute == "damping" else "friction"
                return dyn, attr, dyn.get(attr, "0")
        return None


KIND = Joint()
