"""LeRobot datasets: the shared SO-101 v3.0 recording (folder dispatch, info.json names, units, episodes), the same
data rewritten as a v2.1 dataset, and an end-to-end calibration of the SO-101 model from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.logs import lerobot
from real2sim.calibration.logs.read import read_table
from real2sim.calibration.maps.logmap import load_map, load_trajectories
from real2sim.errors import InputError

MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


def write_map(path: Path, extra: str = "") -> Path:
    lines = ['time = "timestamp"', extra]
    for m in MOTORS:
        lines += [f"[joints.{m}]", f'qpos = "observation.state.{m}.pos"']
    for m in MOTORS:
        lines += [f"[actuators.{m}]", f'ctrl = "action.{m}.pos"']
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "robot_logs" / "so101_lerobot"


@pytest.fixture(scope="module")
def model(so101: Path):
    import mujoco

    return mujoco.MjModel.from_xml_path(str(so101 / "model" / "so101_new_calib.xml"))


def test_dataset_folder_reads_with_names(so101: Path) -> None:
    t = read_table(so101 / "dataset")  # a folder with meta/info.json is a dataset, not a ROS bag
    assert np.array_equal(t["observation.state.elbow_flex.pos"], t["observation.state[2]"])
    assert np.array_equal(t["action.gripper.pos"], t["action[5]"])
    assert sorted(np.unique(t["episode_index"]).astype(int)) == [0, 1, 2, 3]
    assert t["timestamp"].size == 1492


def test_normalised_without_calibration_is_one_line(so101: Path, tmp_path: Path, model) -> None:
    m = load_map(write_map(tmp_path / "map.toml"))
    with pytest.raises(InputError, match="normalised units") as e:
        load_trajectories(so101 / "dataset", m, model)
    assert "so101_lerobot/dataset" in str(e.value) and "\n" not in str(e.value)
    r = subprocess.run(
        [sys.executable, "-m", "real2sim", "calibrate", str(so101 / "model" / "so101_new_calib.xml")]
        + ["--log", str(so101 / "dataset"), "--map", str(tmp_path / "map.toml"), "--fit", "joint:*.damping"]
        + ["-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "dataset" in lines[0] and "calibration" in lines[0], r.stderr


def test_calibration_file_and_model_range(so101: Path, tmp_path: Path, model) -> None:
    # a LeRobot calibration: ticks 1000..3000 (drive_mode 1 on the elbow), gripper 2000..3400
    calib = {m: {"id": i + 1, "drive_mode": 0, "homing_offset": 0, "range_min": 1000, "range_max": 3000}
             for i, m in enumerate(MOTORS)}  # fmt: skip
    calib["elbow_flex"]["drive_mode"] = 1
    calib["gripper"].update(range_min=2000, range_max=3400)
    (tmp_path / "so101.json").write_text(json.dumps(calib))
    raw = read_table(so101 / "dataset")
    sel = raw["episode_index"] == 2
    m = load_map(write_map(tmp_path / "map.toml", 'calibration = "so101.json"\nepisode = 2'))
    (tr,), _ = load_trajectories(so101 / "dataset", m, model)
    assert tr.source.endswith("episode_000002") and tr.n == int(sel.sum())
    step = 2 * np.pi / 4096
    pan = raw["observation.state.shoulder_pan.pos"][sel]
    np.testing.assert_allclose(tr.qpos[:, 0], pan / 100 * 1000 * step, atol=1e-9)  # ±100 ↔ ±1000 ticks
    elbow = raw["observation.state.elbow_flex.pos"][sel]
    np.testing.assert_allclose(tr.qpos[:, 2], -elbow / 100 * 1000 * step, atol=1e-9)  # mirrored
    grip = raw["observation.state.gripper.pos"][sel]
    np.testing.assert_allclose(tr.qpos[:, 5], (grip / 100 - 0.5) * 1400 * step, atol=1e-9)  # 0..100
    # without a file: each motor's range onto the model joint's (actuator's ctrl) range
    m2 = load_map(write_map(tmp_path / "m2.toml", 'normalized_range = "model"\nepisodes = [1, 3]'))
    trs, _ = load_trajectories(so101 / "dataset", m2, model)
    assert [t.source[-1] for t in trs] == ["1", "3"]
    lo, hi = model.jnt_range[model.joint("gripper").id]
    g = raw["observation.state.gripper.pos"][raw["episode_index"] == 1]
    np.testing.assert_allclose(trs[0].qpos[:, 5], lo + g / 100 * (hi - lo), atol=1e-9)
    with pytest.raises(InputError, match="needs holdout_episodes"):
        load_trajectories(so101 / "dataset", m2, model, holdout=True)
    with pytest.raises(InputError, match=r"episodes \[7\]"):
        load_trajectories(
            so101 / "dataset", load_map(write_map(tmp_path / "m3.toml", "episodes = [7]")), model
        )


def test_v21_layout_same_trajectories(so101: Path, tmp_path: Path, model) -> None:
    import pyarrow.parquet as pq

    src = so101 / "dataset"
    ds = tmp_path / "v21"
    (ds / "meta").mkdir(parents=True)
    info = json.loads((src / "meta" / "info.json").read_text())
    info["codebase_version"] = "v2.1"
    info["data_path"] = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
    (ds / "meta" / "info.json").write_text(json.dumps(info))
    table = pq.read_table(src / "data" / "chunk-000" / "file-000.parquet")
    ep = np.asarray(table.column("episode_index"))
    (ds / "data" / "chunk-000").mkdir(parents=True)
    with open(ds / "meta" / "episodes.jsonl", "w") as f:
        for e in np.unique(ep):
            rows = np.nonzero(ep == e)[0]
            pq.write_table(
                table.slice(rows[0], rows.size), ds / "data" / "chunk-000" / f"episode_{e:06d}.parquet"
            )
            f.write(json.dumps({"episode_index": int(e), "length": int(rows.size)}) + "\n")
    m = load_map(write_map(tmp_path / "map.toml", 'normalized_range = "model"'))
    a, _ = load_trajectories(src, m, model)
    b, _ = load_trajectories(ds, m, model)
    assert len(a) == len(b) == 4
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.qpos, y.qpos)
        np.testing.assert_array_equal(x.ctrl, y.ctrl)
    assert lerobot.read_dataset(ds).version == "v2.1"


def test_so101_calibrates_end_to_end(so101: Path, tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[2] / "calibration" / "models" / "so101_lerobot_map.toml"
    (tmp_path / "map.toml").write_text(shipped.read_text().replace("episodes = [0, 1]", "episodes = [0]"))
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "real2sim", "calibrate", str(so101 / "model" / "so101_new_calib.xml")]
        + [
            "--log",
            str(so101 / "dataset"),
            "--holdout",
            str(so101 / "dataset"),
            "--map",
            str(tmp_path / "map.toml"),
        ]
        + ["--fit", "joint:elbow_flex.damping", "--max-windows", "4"]
        + ["--no-report", "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert {k: v["split"] for k, v in res["logs"].items()} == {
        "episode_000000": "train",
        "episode_000003": "holdout",
    }
    assert all(np.isfinite(v["rmse_qpos"]) for v in res["logs"].values())
    assert (out / "so101_new_calib_calibrated.xml").exists() and (out / "changes.csv").exists()
