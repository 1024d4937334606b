"""``real2sim process SESSION --package``: the calibrate stage writes its values into the run's package/, and
re-runs when that package is exported again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.calibration.test_package_writeback import ARM_URDF

SESSION = """[robot]
model = "robot/arm.xml"
map = "logs/map.toml"
logs = ["logs/excite_00.csv"]
fit = ["joint:*.damping"]
"""


def _process(session: Path, out: Path, package: bool = False):
    from real2sim.pipeline.process import ProcessCfg, run_process

    cfg = ProcessCfg(
        session, out, ("calibrate",), workers=1, calibration_max_windows=6, calibration_package=package
    )
    return run_process(cfg).stage("calibrate")


def test_process_package_writes_calibrated_values(sample_data: Path, tmp_path: Path) -> None:
    import mujoco

    session = tmp_path / "session"
    (session / "robot").mkdir(parents=True)
    shutil.copy(sample_data / "robot" / "double_pendulum.xml", session / "robot" / "arm.xml")
    shutil.copytree(sample_data / "logs", session / "logs")
    (session / "session.toml").write_text(SESSION)
    out = tmp_path / "out"
    pkg = out / "package"  # what an earlier run's export stage left there
    pkg.mkdir(parents=True)
    shutil.copy(sample_data / "robot" / "double_pendulum.xml", pkg / "arm.xml")
    (pkg / "arm.urdf").write_text(ARM_URDF)
    (pkg / "export.json").write_text(json.dumps({"name": "arm"}))
    (pkg / "README.md").write_text("# arm\n")
    before = (pkg / "arm.xml").read_bytes()
    _process(session, out)  # without the option the package is left alone
    assert (pkg / "arm.xml").read_bytes() == before
    assert not _process(session, out, True).reused  # the package write-back is part of the stage's key
    res = json.loads((out / "calibration" / "result.json").read_text())
    damping = res["parameters"]["joint:shoulder.damping"]["value"]
    m = mujoco.MjModel.from_xml_path(str(pkg / "arm.xml"))
    assert m.dof_damping[m.joint("shoulder").dofadr[0]] == pytest.approx(damping, rel=1e-5)
    assert "`joint:elbow.damping` | `arm.urdf` | 0 ->" in (pkg / "README.md").read_text()
    assert _process(session, out, True).reused
