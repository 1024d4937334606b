"""Write fitted values back: calibrated MJCF via ``MjSpec`` (and URDF when the input was URDF), plus a diff."""

from __future__ import annotations

import difflib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from real2sim.calibration.params import Resolved


def set_spec_value(spec, p: Resolved, v: float) -> None:
    """Write parameter ``p`` = ``v`` into an ``MjSpec`` (the MJCF write-back of ``params.set_value``)."""

    if p.kind == "joint":
        assert p.attribute is not None  # every joint parameter names its attribute (parse_param_name)
        j = spec.joint(p.element)
        cur = getattr(j, p.attribute)
        if np.ndim(cur):  # MuJoCo >= 3.4: damping/stiffness are 3-vectors (polynomial); first term is linear
            arr = np.array(cur, float)
            arr[0] = v
            setattr(j, p.attribute, arr)
        else:
            setattr(j, p.attribute, float(v))
    elif p.kind == "body":
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
    elif p.kind == "actuator":
        from real2sim.calibration.params import set_spec_actuator

        set_spec_actuator(spec.actuator(p.element), p.attribute, v)
    elif p.kind == "delay":  # MuJoCo's own actuator delay: a ctrl history of nsample physics steps
        a = spec.actuator(p.element)
        a.delay = float(v)
        if v > 0:
            a.nsample = max(int(a.nsample), int(np.ceil(v / spec.option.timestep)) + 2)
            a.interp = 1  # linear between stored steps
    elif p.kind == "geom":
        g = spec.geom(p.element)
        f = np.array(g.friction, float)
        f[0] = v
        g.friction = f


def calibrated_mjcf(model_path: Path, params: list[Resolved], values: np.ndarray) -> str:
    import mujoco

    spec = mujoco.MjSpec.from_file(str(model_path))
    for p, v in zip(params, values, strict=True):
        set_spec_value(spec, p, v)
    spec.compile()
    return spec.to_xml()


def urdf_target(root: ET.Element, p: Resolved) -> tuple[ET.Element, str, str] | None:
    """Where ``p`` lives in a URDF tree: (element, attribute, current value), or None (a link mass, a joint's
    damping/friction; a missing ``<dynamics>`` is added). Other parameters exist only in the MJCF."""
    if p.kind == "body" and p.attribute == "mass":
        for link in root.iter("link"):
            m = link.find("inertial/mass") if link.get("name") == p.element else None
            if m is not None:
                return m, "value", m.get("value", "0")
    elif p.kind == "joint" and p.attribute in ("damping", "frictionloss"):
        for j in root.iter("joint"):
            if j.get("name") == p.element:
                dyn = j.find("dynamics")
                if dyn is None:
                    dyn = ET.SubElement(j, "dynamics")
                attr = "damping" if p.attribute == "damping" else "friction"
                return dyn, attr, dyn.get(attr, "0")
    return None


def calibrated_urdf(urdf_path: Path, params: list[Resolved], values: np.ndarray) -> str:
    """URDF with joint damping/friction and link masses replaced (other parameters only in the MJCF)."""
    root = ET.parse(urdf_path).getroot()
    for p, v in zip(params, values, strict=True):
        target = urdf_target(root, p)
        if target is not None:
            target[0].set(target[1], repr(float(v)))
    return ET.tostring(root, encoding="unicode") + "\n"


def change_table(params: list[Resolved], initial: np.ndarray, values: np.ndarray) -> str:
    lines = ["parameter,before,after,relative_change"]
    for p, a, b in zip(params, initial, values, strict=True):
        rel = (b - a) / abs(a) if a != 0 else float("inf") if b != 0 else 0.0
        lines.append(f"{p.name},{a:.9g},{b:.9g},{rel:+.4g}")
    return "\n".join(lines) + "\n"


def text_diff(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), fromfile=f"a/{name}", tofile=f"b/{name}"
        )
    )
