"""Write fitted values back: calibrated MJCF via ``MjSpec`` (and URDF when the input was URDF), plus a diff."""

from __future__ import annotations

import difflib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from real2sim.calibration.params.kinds import KINDS
from real2sim.calibration.params.resolved import Resolved


def set_spec_value(spec, p: Resolved, v: float) -> None:
    """Write parameter ``p`` = ``v`` into an ``MjSpec`` (the MJCF write-back of ``params.set_value``)."""
    KINDS[p.kind].write_spec(spec, p, v)


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
    return KINDS[p.kind].urdf_target(root, p)


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
