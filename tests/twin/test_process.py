"""``process`` composes the twin when the session's ``[robot]`` asks for it (``base_pose`` / ``twin = true``), and
reuses it while nothing it reads has changed."""

from __future__ import annotations

import json
import shutil

from real2sim.pipeline.config import ProcessCfg
from real2sim.pipeline.process import run_process
from real2sim.pipeline.session import load_session
from tests.twin.conftest import mini_package


def test_process_composes_the_twin_and_reuses_it(tmp_path, mini_robot):
    sess = tmp_path / "session"
    shutil.copytree(mini_robot.parent, sess / "robot")
    (sess / "logs").mkdir()
    (sess / "logs" / "map.toml").write_text('time = "t"\n[joints.pan]\nqpos = "pan"\n')
    (sess / "logs" / "log.csv").write_text(
        "t,pan\n0,0\n0.1,0\n"
    )  # calibrate is not run here: the twin stage alone
    (sess / "session.toml").write_text(
        '[robot]\nmodel = "robot/mini_arm.xml"\nmap = "logs/map.toml"\nlogs = ["logs/log.csv"]\n'
        "base_pose = [0.1, -0.2]\n"
    )
    s = load_session(sess)
    assert s.robot is not None and s.robot.twin and s.robot.base_pose == (0.1, -0.2)
    out = tmp_path / "out"
    mini_package(out / "package", {"box": (0.3, 0.3, 0.03)})
    cfg = ProcessCfg(session_dir=sess, out_dir=out, stages=("twin",), overwrite=True)
    run = run_process(cfg).stage("twin")
    assert not run.reused and (out / "twin" / "scene.xml").is_file()
    doc = json.loads((out / "twin" / "twin.json").read_text())
    assert doc["base"]["pos"][:2] == [0.1, -0.2] and doc["calibration"] is None
    assert (
        json.loads((out / "run.json").read_text())["stages"]["twin"]["summary"]["max_object_motion_m"] < 1e-3
    )
    assert run_process(cfg).stage("twin").reused
