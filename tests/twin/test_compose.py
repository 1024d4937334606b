"""Composing a twin: the SO-101 (shared data) on the demo's sample tabletop, and a small robot on a small package for
the cases the real pair does not show (a scanned robot cut out, merged keyframes, refused inputs)."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.errors import InputError
from real2sim.twin.config import TwinCfg
from real2sim.twin.run import run_twin
from tests.twin.conftest import BASE_XY, mini_package


def _names(model, obj, n):
    return [mujoco.mj_id2name(model, obj, i) for i in range(n)]


def test_so101_twin_compiles_with_every_body_and_rests_at_home(so101_twin, so101, sample_package):
    folder, doc, _ = so101_twin
    model = mujoco.MjModel.from_xml_path(
        str(folder / "scene.xml")
    )  # loads from its own folder, no other file
    robot = mujoco.MjSpec.from_file(str(so101 / "model" / "so101_new_calib.xml"))  # as parsed, not compiled
    pkg = mujoco.MjSpec.from_file(str(sample_package / "scene.xml"))
    bodies = _names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody)
    want = ["robot/" + b.name for b in robot.bodies if b.name != "world"]
    want += [b.name for b in pkg.bodies if b.name != "world"]
    assert sorted(bodies[1:]) == sorted(want)
    for obj, n in ((mujoco.mjtObj.mjOBJ_GEOM, model.ngeom), (mujoco.mjtObj.mjOBJ_JOINT, model.njnt),
                   (mujoco.mjtObj.mjOBJ_MESH, model.nmesh), (mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu)):  # fmt: skip
        named = [x for x in _names(model, obj, n) if x]
        assert len(named) == len(set(named)), obj  # no name twice
    # the robot as it was: masses, joint ranges and servo gains unchanged (no calibration given)
    for j in robot.joints:
        assert np.allclose(model.joint("robot/" + j.name).range, j.range)
    for b in robot.bodies:
        if b.name != "world":
            assert model.body("robot/" + b.name).mass[0] == pytest.approx(b.mass)
    for a in robot.actuators:
        assert model.actuator("robot/" + a.name).gainprm[0] == pytest.approx(a.gainprm[0])
    # home is keyframe 0; 2 s from it: objects move < 1 mm, the arm holds, MuJoCo never warns
    assert mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_KEY, 0) == "home"
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    objs = [model.body(n).id for n in doc["package"]["objects"]]
    start, arm = (
        data.xpos[objs].copy(),
        data.qpos[[model.joint("robot/" + j).qposadr[0] for j in doc["robot"]["joints"]]].copy(),
    )
    mujoco.mj_step(model, data, nstep=int(round(2.0 / model.opt.timestep)))
    assert np.max(np.linalg.norm(data.xpos[objs] - start, axis=1)) < 1e-3
    arm_now = data.qpos[[model.joint("robot/" + j).qposadr[0] for j in doc["robot"]["joints"]]]
    assert np.max(np.abs(arm_now - arm)) < 1e-3
    assert all(w.number == 0 for w in data.warning)
    assert doc["home"]["rests"] and doc["home"]["max_object_motion_m"] < 1e-3
    # stood on the table at the given x, y: the base's lowest point on the support's top
    assert doc["base"]["pos"][:2] == list(BASE_XY) and doc["base"]["route"] == "pose"
    assert doc["package"]["cut"] == []


def test_so101_twin_usd_converts(so101_twin):
    from pxr import Usd, UsdPhysics

    folder, doc, _ = so101_twin
    assert doc["usd"]["file"] == "twin.usd"
    stage = Usd.Stage.Open(str(folder / "twin.usd"))
    parsed = UsdPhysics.UsdPhysicsLoadStageFromPrimRange(stage, ["/"])
    counts = {str(k): len(v[0]) for k, v in parsed.items()}
    assert counts["RevoluteJoint"] == 6 and counts["Articulation"] == 1
    assert counts["RigidBody"] == 7 + len(
        doc["package"]["objects"]
    )  # the robot's links and the package's objects


def test_mini_robot_keyframes_merge_and_a_scanned_robot_is_cut_out(tmp_path, mini_robot):
    # object_a stands where the robot's base goes (the scan saw the robot as an object), object_b elsewhere
    pkg = mini_package(tmp_path / "pkg", {"object_a": (0.0, 0.0, 0.015), "object_b": (0.3, 0.3, 0.03)})
    res = run_twin(
        TwinCfg(robot=mini_robot, scene=pkg, out_dir=tmp_path / "twin", base_pose=(0.0, 0.0), usd=False)
    )
    doc = res.manifest
    assert doc["package"]["removed"] == ["object_a"] and doc["package"]["objects"] == ["object_b"]
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "twin" / "scene.xml"))
    keys = _names(model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)
    assert keys == ["home", "robot/home", "robot/rest"]
    pan = model.joint("robot/pan").qposadr[0]
    assert model.key_qpos[0][pan] == pytest.approx(0.3, abs=0.02)  # the robot's own home, settled
    assert doc["base"]["pos"][2] == pytest.approx(0.0, abs=1e-9)  # box base bottom at z = 0: on the table top


def test_calibrated_values_are_written_on_top(tmp_path, mini_robot):
    pkg = mini_package(tmp_path / "pkg", {"object_b": (0.3, 0.3, 0.03)})
    cal = tmp_path / "cal"
    cal.mkdir()
    params = {"joint:lift.damping": 0.9, "actuator:pan.kp": 44.0, "delay:lift": 0.02}
    (cal / "result.json").write_text(json.dumps({"parameters": {k: {"value": v} for k, v in params.items()}}))
    (cal / "randomization.yaml").write_text("joint:lift.damping: [0.8, 1.0]\n")
    res = run_twin(
        TwinCfg(robot=mini_robot, scene=pkg, out_dir=tmp_path / "twin", calibration=cal, usd=False)
    )
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "twin" / "scene.xml"))
    assert model.dof_damping[model.joint("robot/lift").dofadr[0]] == pytest.approx(0.9)
    assert model.actuator_gainprm[model.actuator("robot/pan").id, 0] == pytest.approx(44.0)
    assert model.actuator_biasprm[model.actuator("robot/pan").id, 1] == pytest.approx(-44.0)
    assert model.actuator_delay[model.actuator("robot/lift").id] == pytest.approx(0.02)
    assert res.manifest["calibration"]["randomization"] == {"joint:lift.damping": [0.8, 1.0]}
    (cal / "result.json").write_text(json.dumps({"parameters": {"joint:elbow.damping": {"value": 1.0}}}))
    with pytest.raises(InputError, match="does not fit this robot.*no joint named 'elbow'"):
        run_twin(TwinCfg(robot=mini_robot, scene=pkg, calibration=cal, usd=False))


def _one_line(r) -> str:
    lines = [ln for ln in r.output.strip().splitlines() if ln]
    assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    return lines[0]


def test_bad_inputs_are_one_line(tmp_path, mini_robot):
    pkg = mini_package(tmp_path / "pkg", {"object_b": (0.3, 0.3, 0.03)})
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><asset><mesh name="m" file="missing.stl"/></asset><worldbody><body><joint/>'
                   '<geom type="mesh" mesh="m"/></body></worldbody></mujoco>')  # fmt: skip
    line = _one_line(
        CliRunner().invoke(cli, ["twin", "--robot", str(bad), "--scene", str(pkg), "-o", str(tmp_path / "o")])
    )
    assert "bad.xml" in line and "missing.stl" in line
    args = ["twin", "--robot", str(mini_robot), "--scene", str(pkg), "-o", str(tmp_path / "o2"),
            "--base-pose", "0.1,0.1,-0.05,1,0,0,0"]  # fmt: skip
    line = _one_line(CliRunner().invoke(cli, args))
    assert "inside the support" in line and "50.0 mm" in line
    assert not (tmp_path / "o").exists() and not (tmp_path / "o2").exists()
    with pytest.raises(InputError, match="already has bodies named object_"):
        run_twin(TwinCfg(robot=mini_robot, scene=pkg, prefix="object_", usd=False))
    with pytest.raises(InputError, match="not a scene package"):
        run_twin(TwinCfg(robot=mini_robot, scene=tmp_path, usd=False))
