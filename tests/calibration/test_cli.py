"""`real2sim calibrate` end to end on the sample robot: velocity flags reach the fit, result.json and the
calibrated model are written; a bad filter cutoff is one clear error line."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
from click.testing import CliRunner

from real2sim.cli import cli


def _args(sample_data: Path, out: Path, *extra: str) -> list[str]:
    logs = sample_data / "logs"
    return [
        "calibrate",
        str(sample_data / "robot" / "double_pendulum.xml"),
        "--log",
        str(logs / "excite_00.csv"),
        "--holdout",
        str(logs / "excite_03.csv"),
        "--map",
        str(logs / "map.toml"),
        "--fit",
        "joint:*.damping",
        "--fit",
        "joint:*.armature",
        "--method",
        "inverse",
        "--no-report",
        "-o",
        str(out),
        *extra,
    ]


def test_cli_velocity_flags(sample_data: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        cli, _args(sample_data, tmp_path / "a", "--qvel-from-qpos", "--smooth-qvel", "0.2", "--json")
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert set(doc["logs"]) == {"excite_00.csv", "excite_03.csv"}
    assert doc["logs"]["excite_03.csv"]["split"] == "holdout"
    for name in (
        "joint:shoulder.damping",
        "joint:elbow.damping",
        "joint:shoulder.armature",
        "joint:elbow.armature",
    ):
        p = doc["parameters"][name]
        assert p["bounds"][0] <= p["value"] <= p["bounds"][1] and p["value"] != p["initial"], (name, p)
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "a" / "double_pendulum_calibrated.xml"))
    j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "elbow")
    assert np.isclose(
        model.dof_damping[model.jnt_dofadr[j]], doc["parameters"]["joint:elbow.damping"]["value"]
    )
    # the flags change what the fit sees: logged velocities give a different (but equally valid) answer
    res2 = runner.invoke(cli, _args(sample_data, tmp_path / "b", "--json"))
    assert res2.exit_code == 0, res2.output
    doc2 = json.loads(res2.output)
    assert (
        doc2["parameters"]["joint:elbow.damping"]["value"]
        != doc["parameters"]["joint:elbow.damping"]["value"]
    )
    assert doc2["logs"]["excite_00.csv"]["rmse_qvel"] != doc["logs"]["excite_00.csv"]["rmse_qvel"]


def test_cli_bad_cutoff(sample_data: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, _args(sample_data, tmp_path / "c", "--smooth-qvel", "1.5"))
    assert res.exit_code == 1
    lines = [ln for ln in res.output.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:") and "--smooth-qvel" in lines[0], res.output
    assert not (tmp_path / "c").exists()
