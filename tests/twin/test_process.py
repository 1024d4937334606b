"""``process`` composes the twin when the session's ``[robot]`` asks for it (``twin = true`` / ``base_pose``)."""

from __future__ import annotations

import json
import shutil

from real2sim.pipeline.config import ProcessCfg
from real2sim.pipeline.process import run_process
from real2sim.pipeline.session import load_session


def test_process_composes_the_twin_and_reuses_it(tmp_path, so101, sample_package):
    sess = tmp_path / "session"
    shutil.copytree(so101 / "model", sess / "robot")
    (sess / "logs").mkdir()
    shutil.copy("calibration/models/so101_lerobot_map.toml", sess / "logs" / "map.toml")
    (sess / "logs" / "log.csv").write_text(
        "timestamp\n0\n"
    )  # calibrate is not run here: the twin stage alone
    (sess / "session.toml").write_text(
        '[robot]\nmodel = "robot/so101_new_calib.xml"\nmap = "logs/map.toml"\nlogs = ["logs/log.csv"]\n'
        "base_pose = [0.0, 0.3]\n"
    )
    s = load_session(sess)
    assert s.robot is not None and s.robot.twin and s.robot.base_pose == (0.0, 0.3)
    out = tmp_path / "out"
    shutil.copytree(sample_package, out / "package")
    cfg = ProcessCfg(session_dir=sess, out_dir=out, stages=("twin",), overwrite=True)
    res = run_process(cfg)
    run = res.stage("twin")
    assert not run.reused and (out / "twin" / "scene.xml").is_file()
    doc = json.loads((out / "twin" / "twin.json").read_text())
    assert doc["base"]["pos"][:2] == [0.0, 0.3] and doc["calibration"] is None
    assert (
        json.loads((out / "run.json").read_text())["stages"]["twin"]["summary"]["max_object_motion_m"] < 1e-3
    )
    assert run_process(cfg).stage("twin").reused
