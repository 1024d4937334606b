"""Replaying real episodes in the twin: the shared SO-101 recording (LeRobot v3.0) in the SO-101 + sample tabletop
twin, a CSV log through a map in a small twin, and the sim dataset read back."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from real2sim.calibration.logs.lerobot import read_dataset, to_radians
from real2sim.cli import cli
from real2sim.twin.config import ReplayCfg, TwinCfg
from real2sim.twin.plots import REAL, SIM
from real2sim.twin.replay import stepping
from real2sim.twin.run import run_replay, run_twin
from real2sim.twin.units import MotorUnits
from tests.twin.conftest import mini_package

FRAMES = 90
"""Frames of the shared episode replayed in the tests (3 s; whole episodes: benchmarks/bench_twin.py)."""


@pytest.fixture(scope="module")
def replayed(so101_twin, so101, tmp_path_factory):
    out = tmp_path_factory.mktemp("replay") / "out"
    cfg = ReplayCfg(twin=so101_twin[0], episodes=so101 / "dataset", out_dir=out, episode=(3,), max_frames=FRAMES,
                    variations=3)  # fmt: skip
    return out, run_replay(cfg)


def _has(img: np.ndarray, hex_colour: str) -> int:
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int(np.sum(np.all(np.abs(img[..., :3].astype(int) - rgb) < 12, axis=-1)))


def test_actuated_replay_reports_tracking_per_joint(replayed):
    out, res = replayed
    rep = json.loads((out / "replay.json").read_text())
    assert rep["stepping"]["steps_per_frame"] == 17 and rep["stepping"]["timestep"] == pytest.approx(1 / 510)
    assert rep["assumption"] and "model joint's range" in rep["assumption"]  # no calibration file: said once
    t = rep["episodes"][0]["tracking"]
    assert set(t["joints"]) == {
        "shoulder_pan",
        "shoulder_lift",
        "elbow_flex",
        "wrist_flex",
        "wrist_roll",
        "gripper",
    }
    for j in t["joints"].values():
        assert 0 <= j["rmse_rad"] <= j["max_abs_rad"] < 1.0
    assert 0 < t["mean_rmse_rad"] < 0.3
    img = np.asarray(Image.open(out / "traces_episode_000003.png"))
    assert _has(img, REAL) > 500 and _has(img, SIM) > 500  # both traces drawn in every panel


def test_dataset_reads_back_with_the_same_frames_fps_and_features(replayed, so101):
    out, _ = replayed
    real = read_dataset(so101 / "dataset")
    sim = read_dataset(out / "dataset")
    assert sim.version == "v3.0" and sim.fps == real.fps == 30
    assert sim.episodes == [0, 1, 2, 3] and len(sim.table["index"]) == 4 * FRAMES
    info_r = json.loads((so101 / "dataset" / "meta" / "info.json").read_text())["features"]
    info_s = json.loads((out / "dataset" / "meta" / "info.json").read_text())["features"]
    kept = {k for k, v in info_r.items() if v["dtype"] not in ("video", "image")}
    assert set(info_s) == kept | {"observation.environment_state"}
    assert info_s["observation.state"]["names"] == info_r["observation.state"]["names"]
    rows = real.table["episode_index"] == 3
    for i in range(6):  # the real actions and timestamps, frame for frame, in each variation
        for e in range(4):
            ours = sim.table["episode_index"] == e
            assert np.array_equal(sim.table[f"action[{i}]"][ours], real.table[f"action[{i}]"][rows][:FRAMES])
    assert np.array_equal(
        sim.table["timestamp"][sim.table["episode_index"] == 0], real.table["timestamp"][rows][:FRAMES]
    )
    # the simulated follower, in LeRobot's units, near the real one
    ours = sim.table["episode_index"] == 0
    diff = [np.abs(sim.table[f"observation.state[{i}]"][ours] - real.table[f"observation.state[{i}]"][rows][:FRAMES])
            for i in range(6)]  # fmt: skip
    assert np.mean(diff) < 15.0
    assert np.all(sim.table["observation.state[0]"][ours][:1] == real.table["observation.state[0]"][rows][:1])


def test_variations_start_the_objects_where_recorded(replayed):
    out, _ = replayed
    var = json.loads((out / "dataset" / "meta" / "variations.json").read_text())["episodes"]
    assert [v["source_episode"] for v in var] == [3, 3, 3, 3] and [v["variation"] for v in var] == [
        0,
        1,
        2,
        3,
    ]
    sim = read_dataset(out / "dataset")
    names = json.loads((out / "dataset" / "meta" / "info.json").read_text())["features"][
        "observation.environment_state"]["names"]  # fmt: skip
    starts = []
    for v in var:
        rows = sim.table["episode_index"] == v["dataset_episode"]
        first = np.array(
            [sim.table[f"observation.environment_state[{i}]"][rows][0] for i in range(len(names))]
        )
        recorded = np.concatenate([v["objects"][o]["start"] if "start" in v["objects"][o] else first[7 * k : 7 * k + 7]
                                   for k, o in enumerate(dict.fromkeys(n.split(".")[0] for n in names))])  # fmt: skip
        assert np.allclose(first, recorded, atol=1e-6)
        starts.append(first)
    for a in range(4):
        for b in range(a + 1, 4):
            assert np.max(np.abs(starts[a] - starts[b])) > 1e-3  # each variation starts its objects elsewhere
    for v in var[1:]:
        for o in v["objects"].values():
            assert abs(o["dx_m"]) <= 0.03 and abs(o["dy_m"]) <= 0.03 and abs(o["dyaw_deg"]) <= 15.0


@pytest.mark.skipif(importlib.util.find_spec("lerobot") is None,
                    reason="lerobot is not installed here (it needs torch; not a dependency of real2sim)")  # fmt: skip
def test_dataset_reads_back_through_lerobot(replayed):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset  # pyright: ignore[reportMissingImports]

    out, _ = replayed
    ds = LeRobotDataset("real2sim/twin_replay", root=out / "dataset")
    assert ds.num_episodes == 4 and ds.num_frames == 4 * FRAMES and ds.fps == 30
    item = ds[FRAMES + 1]
    assert int(item["episode_index"]) == 1 and tuple(item["observation.environment_state"].shape) == (28,)


def test_kinematic_replay_follows_the_log_and_repeats_byte_for_byte(so101_twin, so101, tmp_path):
    outs = []
    for k in range(2):
        cfg = ReplayCfg(twin=so101_twin[0], episodes=so101 / "dataset", out_dir=tmp_path / f"k{k}", episode=(0,),
                        max_frames=20, mode="kinematic", plots=False)  # fmt: skip
        res = run_replay(cfg)
        assert res.report["episodes"][0]["tracking"]["mean_rmse_rad"] < 1e-9
        outs.append({p.relative_to(tmp_path / f"k{k}"): p.read_bytes() for p in (tmp_path / f"k{k}").rglob("*")
                     if p.is_file() and p.name != ".real2sim"})  # fmt: skip
    assert outs[0] == outs[1]
    actuated, resync = (
        run_replay(
            ReplayCfg(twin=so101_twin[0], episodes=so101 / "dataset", episode=(0,), max_frames=20, mode=m)
        ).report["episodes"][0]["tracking"]["mean_rmse_rad"]
        for m in ("actuated", "resync:2")
    )
    assert resync < actuated  # set back to the measured state every 2 frames, the twin stays nearer the log


def test_bad_episode_and_joint_mismatch_are_one_line(so101_twin, so101, tmp_path, mini_robot):
    args = [
        "replay",
        str(so101_twin[0]),
        "--episodes",
        str(so101 / "dataset"),
        "--episode",
        "9",
        "-o",
        str(tmp_path / "o"),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "episode 9 is not in the dataset (it has 0, 1, 2, 3)" in r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
    pkg = mini_package(tmp_path / "pkg", {"box": (0.3, 0.3, 0.03)})
    run_twin(TwinCfg(robot=mini_robot, scene=pkg, out_dir=tmp_path / "mini", usd=False))
    r = CliRunner().invoke(cli, ["replay", str(tmp_path / "mini"), "--episodes", str(so101 / "dataset"), "-o",
                                 str(tmp_path / "o")])  # fmt: skip
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert "shoulder_pan" in r.output and "pan, lift" in r.output and "6" in r.output and "2" in r.output


def test_a_csv_log_replays_through_a_map_with_physics_drawn(tmp_path, mini_robot):
    pkg = mini_package(tmp_path / "pkg", {"box": (0.3, 0.3, 0.03)})
    cal = tmp_path / "cal"
    cal.mkdir()
    (cal / "result.json").write_text(json.dumps({"parameters": {"joint:lift.damping": {"value": 0.9}}}))
    (cal / "randomization.yaml").write_text("joint:lift.damping: [0.8, 1.0]\ndelay:pan: [0.0, 0.01]\n")
    run_twin(TwinCfg(robot=mini_robot, scene=pkg, out_dir=tmp_path / "mini", calibration=cal, usd=False))
    t = np.arange(60) / 50.0
    pan, lift = 0.3 + 0.4 * np.sin(2 * t), 0.2 + 0.3 * np.sin(3 * t)
    rows = ["time,pan,lift,pan_goal,lift_goal"] + [
        f"{a},{b},{c},{b},{c}" for a, b, c in zip(t, pan, lift, strict=True)
    ]
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "map.toml").write_text('time = "time"\n[joints.pan]\nqpos = "pan"\n[joints.lift]\nqpos = "lift"\n'
                                       '[actuators.pan]\nctrl = "pan_goal"\n[actuators.lift]\nctrl = "lift_goal"\n')  # fmt: skip
    res = run_replay(ReplayCfg(twin=tmp_path / "mini", episodes=tmp_path / "log.csv", map=tmp_path / "map.toml",
                               out_dir=tmp_path / "out", plots=False, variations=2))  # fmt: skip
    drawn = [v["physics"] for v in res.report["episodes"][0]["variations"]]
    assert drawn[0] == {} and all(
        0.8 <= d["joint:lift.damping"] <= 1.0 and 0 <= d["delay:pan"] <= 0.01 for d in drawn[1:]
    )
    assert drawn[1] != drawn[2]
    t0 = res.report["episodes"][0]["tracking"]
    assert set(t0["joints"]) == {"pan", "lift"} and t0["mean_rmse_rad"] < 0.1
    sim = read_dataset(tmp_path / "out" / "dataset")
    assert sim.fps == pytest.approx(50.0) and len(sim.table["index"]) == 3 * 60


def test_units_invert_lerobots_normalisation():
    calib = {"range_min": 1000, "range_max": 3000, "drive_mode": 1}
    v = np.array([-100.0, -37.5, 0.0, 64.0, 100.0])
    for z100, vals in ((False, v), (True, np.abs(v))):
        q = to_radians(vals, "m", "normalized", {"m": calib}, z100)
        assert np.allclose(MotorUnits("normalized", z100, calib).from_radians(q), vals)
    m = MotorUnits("normalized", False, None, (-1.9, 1.9))
    assert np.allclose(m.from_radians(np.array([-1.9, 0.0, 1.9])), [-100, 0, 100])
    assert MotorUnits("degrees").from_radians(np.array([np.pi]))[0] == pytest.approx(180.0)
    s = stepping(30.0, 0.002)
    assert s.steps_per_frame == 17 and s.timestep * s.steps_per_frame * 30 == pytest.approx(1.0)


def test_rendered_images_join_the_dataset(so101_twin, so101, tmp_path):
    import io

    import pyarrow.parquet as pq

    cfg = ReplayCfg(twin=so101_twin[0], episodes=so101 / "dataset", out_dir=tmp_path / "r", episode=(3,), max_frames=2,
                    mode="kinematic", render=True, render_width=160, render_height=120, plots=False)  # fmt: skip
    run_replay(cfg)
    info = json.loads((tmp_path / "r" / "dataset" / "meta" / "info.json").read_text())["features"]
    assert info["observation.images.overview"] == {"dtype": "image", "shape": [120, 160, 3],
                                                   "names": ["height", "width", "channels"]}  # fmt: skip
    col = pq.read_table(tmp_path / "r" / "dataset" / "data" / "chunk-000" / "file-000.parquet")
    img = np.asarray(Image.open(io.BytesIO(col.column("observation.images.overview")[1].as_py()["bytes"])))
    assert img.shape == (120, 160, 3)
    yellow = (img[..., 0] > 180) & (img[..., 1] > 130) & (img[..., 2] < 90)  # the SO-101's printed parts
    assert yellow.sum() > 50
