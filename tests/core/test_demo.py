"""The demo end to end on the committed sample session, then `process` reusing what the demo finished."""

import json

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli


@pytest.fixture(scope="module")
def demo_out(demo_run):
    """The demo of the test run (``tests/conftest.py``: run once, shared with the twin's tests, which read a copy
    of its package)."""
    out, output, _ = demo_run
    return out, output


def test_demo_package_loads_and_steps_without_warnings(demo_out):
    out, _ = demo_out
    model = mujoco.MjModel.from_xml_path(str(out / "package" / "scene.xml"))
    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    start = data.qpos.copy()
    while data.time < 2.0:
        mujoco.mj_step(model, data)
    assert all(w.number == 0 for w in data.warning), [(i, w.number) for i, w in enumerate(data.warning)]
    assert np.all(np.isfinite(data.qpos))
    # every free body is still where it was placed (resting objects don't drift)
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            a = model.jnt_qposadr[j]
            assert np.linalg.norm(data.qpos[a : a + 3] - start[a : a + 3]) < 2e-3


def test_demo_finds_every_sample_object_and_recovers_the_robot(demo_out, sample_data):
    out, output = demo_out
    truth = json.loads((sample_data / "ground_truth.json").read_text())
    run = json.loads((out / "run.json").read_text())["stages"]
    assert len(run["recon"]["summary"]["objects"]) == len(truth["objects"])
    assert all(c["passed"] for c in run["export"]["summary"]["checks"])
    fitted = run["calibrate"]["summary"]["parameters"]
    for name, true in truth["robot"]["parameters"].items():
        assert abs(fitted[name]["value"] / true - 1) < 0.05, (name, fitted[name]["value"], true)
    assert "Reconstructed objects" in output and "Calibrated robot parameters" in output


def test_process_reuses_finished_stages(demo_out, sample_data):
    out, _ = demo_out
    before = {p: p.read_bytes() for p in (out / "package").rglob("*") if p.is_file()}
    r = CliRunner().invoke(cli, ["process", str(sample_data), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.count("reused") == 3, r.output
    assert {p: p.read_bytes() for p in (out / "package").rglob("*") if p.is_file()} == before


def test_export_of_the_saved_scene_matches_the_in_memory_one(demo_out, sample_data):
    """The demo's export got recon's Scene in memory; exporting the saved scene folder writes the same bytes."""
    out, _ = demo_out
    before = {p: p.read_bytes() for p in (out / "package").rglob("*") if p.is_file()}
    args = ["-q", "process", str(sample_data), "-o", str(out), "--stages", "export", "--force"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert {p: p.read_bytes() for p in (out / "package").rglob("*") if p.is_file()} == before


def test_process_bad_session_leaves_nothing(tmp_path):
    r = CliRunner().invoke(cli, ["process", str(tmp_path / "missing"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 1 and "no such session folder" in r.output and not (tmp_path / "out").exists()
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(cli, ["process", str(tmp_path / "empty"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 1 and "holds nothing to process" in r.output and not (tmp_path / "out").exists()


def test_batch_of_sessions_runs_in_parallel_with_one_folder_each(tmp_path, sample_data):
    import shutil

    for name, scans in (("left", ["scan_00.ply", "scan_01.ply"]), ("right", ["scan_01.ply", "scan_02.ply"])):
        (tmp_path / name / "lidar").mkdir(parents=True)
        for s in scans:
            shutil.copy(sample_data / "lidar" / s, tmp_path / name / "lidar" / s)
        shutil.copy(sample_data / "lidar" / "poses.json", tmp_path / name / "lidar" / "poses.json")
    out = tmp_path / "out"
    args = ["-q", "process", str(tmp_path / "left"), str(tmp_path / "right"), "-o", str(out)]
    r = CliRunner().invoke(cli, [*args, "--stages", "recon", "--workers", "2"])
    assert r.exit_code == 0, r.output
    for name in ("left", "right"):
        summary = json.loads((out / name / "run.json").read_text())["stages"]["recon"]["summary"]
        assert len(summary["objects"]) >= 3, (name, summary)
        assert (out / name / "scene" / "scene.json").is_file()
