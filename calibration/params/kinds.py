"""The parameter kinds calibration can fit, one line each: ``kind name → ParamKind`` (the kind's module says how
its parameters are found, read and written). A new kind is a module in this folder, one line here, and its name
and attributes in ``real2sim.params.ATTRIBUTES`` (the grammar of parameter names, which the CLI checks before any
model loads)."""

from __future__ import annotations

from real2sim.calibration.params import actuator, body, delay, geom, joint
from real2sim.calibration.params.kind import ParamKind

KINDS: dict[str, ParamKind] = {
    "joint": joint.KIND,
    "body": body.KIND,
    "actuator": actuator.KIND,
    "geom": geom.KIND,
    "delay": delay.KIND,
}
