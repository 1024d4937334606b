"""Servo parameters written into an MJCF (package XML edit and MjSpec write-back) equal the model setter's values."""

import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest

from real2sim.calibration.outputs.package import set_xml
from real2sim.calibration.params.actuator import set_spec_actuator
from real2sim.calibration.params.resolve import get_value, resolve, set_value
from real2sim.params import ParamSpec

XML = """<mujoco><worldbody><body><joint name="j" type="hinge"/><geom size=".05" mass="1"/></body></worldbody>
<actuator>
  <general name="g" joint="j" gainprm="10" biastype="affine" biasprm="0 -10 -0.5"/>
  <position name="p" joint="j" kp="17.8" kv="0.2"/>
</actuator></mujoco>"""


@pytest.mark.parametrize("act", ["g", "p"])
@pytest.mark.parametrize(("attr", "value"), [("kp", 29.08), ("kv", 1.179), ("forcerange", 5.51)])
def test_servo_values_written_as_the_setter_sets_them(act, attr, value):
    model = mujoco.MjModel.from_xml_string(XML)
    (p,) = resolve([ParamSpec(f"actuator:{act}.{attr}")], model)
    set_value(model, p, value)
    want = (model.actuator_gainprm[p.obj_id, :3].copy(), model.actuator_biasprm[p.obj_id, :3].copy())

    root = ET.fromstring(XML)
    assert set_xml(root, p, value, model) is None
    edited = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    spec = mujoco.MjSpec.from_string(XML)
    set_spec_actuator(spec.actuator(act), attr, value)
    from_spec = spec.compile()
    for m in (edited, from_spec):
        assert get_value(m, p) == pytest.approx(value, rel=1e-8)
        np.testing.assert_allclose(m.actuator_gainprm[p.obj_id, :3], want[0], rtol=1e-8)
        np.testing.assert_allclose(m.actuator_biasprm[p.obj_id, :3], want[1], rtol=1e-8)
        if attr == "forcerange":
            np.testing.assert_allclose(m.actuator_forcerange[p.obj_id], [-value, value])
