"""``actuator:NAME.gain|bias|kp|kv|forcerange``: ``gain`` is the first gain parameter, ``bias`` a constant force
added to the actuator output (MuJoCo affine bias ``biasprm[0]``); position servos: ``kp`` sets gainprm[0] = kp and
biasprm[1] = -kp together, ``kv`` biasprm[2] = -kv, ``forcerange`` a symmetric force limit ±value."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.calibration.params.kind import ParamKind, fmt
from real2sim.calibration.params.resolved import Resolved

TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper")
"""The MJCF actuator elements (``<general>`` and its shortcuts)."""


def set_spec_actuator(a, attribute: str | None, v: float) -> None:
    """Write an actuator parameter into an ``MjSpec`` actuator (the MJCF write-back of ``Actuator.set``)."""
    import mujoco

    g, b = np.array(a.gainprm, float), np.array(a.biasprm, float)
    if attribute in ("gain", "kp"):
        g[0] = v
    if attribute in ("bias", "kp", "kv"):
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        idx = {"bias": 0, "kp": 1, "kv": 2}[attribute]
        b[idx] = v if attribute == "bias" else -v
    if attribute == "forcerange":
        a.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        a.forcerange = np.array([-v, v])
    a.gainprm, a.biasprm = g, b


def _set_general(el: ET.Element, attribute: str | None, v: float) -> None:
    """gain -> gainprm[0]; bias -> biasprm[0]; kp -> gainprm[0] and biasprm[1] = -kp; kv -> biasprm[2] = -kv."""

    def put(key: str, i: int, x: float) -> None:
        vec = (el.get(key) or "0").split()
        vec += ["0"] * (i + 1 - len(vec))
        vec[i] = fmt(x)
        el.set(key, " ".join(vec))

    if attribute in ("gain", "kp"):
        put("gainprm", 0, v)
    if attribute in ("bias", "kp", "kv"):
        idx = {"bias": 0, "kp": 1, "kv": 2}[attribute]
        put("biasprm", idx, v if attribute == "bias" else -v)
        el.set("biastype", "affine")


class Actuator(ParamKind):
    obj = "mjOBJ_ACTUATOR"
    xml_tags = TAGS

    def count(self, model) -> int:
        return model.nu

    def get(self, model, p: Resolved) -> float:
        i, attr = p.obj_id, p.attribute
        if attr == "kp":
            return float(model.actuator_gainprm[i, 0])
        if attr == "kv":
            return float(-model.actuator_biasprm[i, 2])
        if attr == "forcerange":
            return float(max(abs(model.actuator_forcerange[i, 0]), abs(model.actuator_forcerange[i, 1])))
        return float(model.actuator_gainprm[i, 0] if attr == "gain" else model.actuator_biasprm[i, 0])

    def set(self, model, p: Resolved, v: float) -> None:
        i, attr = p.obj_id, p.attribute
        if attr in ("gain", "kp"):
            model.actuator_gainprm[i, 0] = v
            if attr == "kp":  # position servo: force = kp (ctrl - q) - kv qdot
                model.actuator_biastype[i] = 1
                model.actuator_biasprm[i, 1] = -v
        elif attr == "kv":
            model.actuator_biastype[i] = 1
            model.actuator_biasprm[i, 2] = -v
        elif attr == "forcerange":
            model.actuator_forcelimited[i] = 1
            model.actuator_forcerange[i] = (-v, v)
        else:
            model.actuator_biastype[i] = 1  # affine: bias = biasprm[0] + ...
            model.actuator_biasprm[i, 0] = v

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        set_spec_actuator(spec.actuator(p.element), p.attribute, v)

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        if p.attribute == "forcerange":
            el.set("forcerange", f"{fmt(-v)} {fmt(v)}")
            el.set("forcelimited", "true")
        elif el.tag == "position" and p.attribute in ("kp", "kv"):
            el.set(p.attribute, fmt(v))
        elif el.tag != "general":
            return f"<{el.tag}> shortcut: {p.attribute} is written for <general> (and <position> kp/kv) actuators only"
        else:
            _set_general(el, p.attribute, v)
        return None


KIND = Actuator()
