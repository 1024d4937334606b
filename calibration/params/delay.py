"""``delay:NAME``: an actuator's control delay [s]. The fit's simulator shifts that actuator's control by it; the
calibrated MJCF carries it as MuJoCo's own actuator delay (a control history of ``nsample`` physics steps)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from real2sim.calibration.params.actuator import TAGS
from real2sim.calibration.params.kind import ParamKind, fmt
from real2sim.calibration.params.resolved import Resolved


class Delay(ParamKind):
    obj = "mjOBJ_ACTUATOR"
    xml_tags = TAGS

    def count(self, model) -> int:
        return model.nu

    def get(self, model, p: Resolved) -> float:
        return 0.0  # not stored in the model

    def default_bounds(self, p: Resolved, value: float) -> tuple[float, float] | None:
        return 0.0, 0.1

    def compiled_value(self, model, p: Resolved) -> float | None:
        import mujoco

        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, p.element)
        return None if i < 0 else float(model.actuator_delay[i])

    def write_spec(self, spec, p: Resolved, v: float) -> None:
        a = spec.actuator(p.element)
        a.delay = float(v)
        if v > 0:
            a.nsample = max(int(a.nsample), int(np.ceil(v / spec.option.timestep)) + 2)
            a.interp = 1  # linear between stored steps

    def write_xml(self, el: ET.Element, p: Resolved, v: float, model) -> str | None:
        step = float(model.opt.timestep)
        el.set("delay", fmt(v))
        el.set("nsample", str(max(int(el.get("nsample", "0")), int(np.ceil(v / step)) + 2)))
        el.set("interp", "linear")
        return None


KIND = Delay()
