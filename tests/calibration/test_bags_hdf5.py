"""ROS 2 bags and HDF5 as robots write them: several JointState topics at different rates, unset header stamps,
a bag folder given as --log; ACT/ALOHA-style HDF5 episodes without a time column (the map's ``rate``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.logs.read import read_table
from real2sim.calibration.maps.logmap import load_map, load_trajectory
from real2sim.errors import InputError
from tests.calibration.test_readers import (  # noqa: F401 (fixture)
    bag_writer,
    reference,
    ros2_types,
    same_table,
    write_map,
)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_folder_two_topics_unset_stamps(tmp_path: Path, reference, storage: str) -> None:  # noqa: F811
    model, ref = reference
    ts, JointState, Header, Time = ros2_types()
    bag = tmp_path / "bag"
    t0_ns = 1_700_000_000 * 10**9
    with bag_writer(bag, storage) as w:
        arm = w.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        grip = w.add_connection("/gripper/joint_states", JointState.__msgtype__, typestore=ts)
        for i in range(ref.n):
            t_ns = t0_ns + int(round(float(ref.time[i]) * 1e9))
            unset = Header(stamp=Time(sec=0, nanosec=0), frame_id="")  # a driver that leaves stamps at 0
            msg = JointState(
                header=unset,
                name=["elbow", "shoulder"],
                position=np.array([ref.qpos[i, 1], ref.qpos[i, 0]]),
                velocity=np.array([ref.qvel[i, 1], ref.qvel[i, 0]]),
                effort=np.array([ref.ctrl[i, 1], ref.ctrl[i, 0]]),
            )
            w.write(arm, t_ns, ts.serialize_cdr(msg, JointState.__msgtype__))
            if i % 2 == 0:  # the gripper publishes at half the rate, at the same bag times
                g = JointState(
                    header=unset,
                    name=["gripper"],
                    position=np.array([0.01 * i]),
                    velocity=np.zeros(0),
                    effort=np.zeros(0),
                )
                w.write(grip, t_ns, ts.serialize_cdr(g, JointState.__msgtype__))
    table = read_table(bag)  # the folder: a ROS 2 bag (metadata.yaml + storage file)
    assert table["time"].size == ref.n  # one row per stamp, not one per message
    np.testing.assert_array_equal(
        table["gripper.position"][:4], [0.0, 0.0, 0.02, 0.02]
    )  # held between messages
    m = write_map(
        tmp_path / "map.toml",
        "time",
        ["shoulder.position", "elbow.position"],
        ["shoulder.velocity", "elbow.velocity"],
        ["shoulder.effort", "elbow.effort"],
    )
    tr, _ = load_trajectory(bag, load_map(m), model)
    same_table(tr, ref, atol=1e-9)


def test_folder_neither_dataset_nor_bag(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="neither a LeRobot dataset"):
        read_table(tmp_path / "logs")


def test_hdf5_act_episode_with_rate(tmp_path: Path, reference) -> None:  # noqa: F811
    import h5py

    model, ref = reference
    rate = 1.0 / ref.dt
    n = ref.n
    with h5py.File(tmp_path / "episode_0.hdf5", "w") as f:  # ACT / ALOHA layout: no timestamps
        f.attrs["sim"] = False
        f["observations/qpos"] = ref.qpos
        f["observations/qvel"] = ref.qvel
        f["observations/images/top"] = np.zeros((n, 2, 2, 3), np.uint8)
        f["action"] = ref.ctrl
    write_map(
        tmp_path / "map.toml",
        "",
        ["observations/qpos[0]", "observations/qpos[1]"],
        ["observations/qvel[0]", "observations/qvel[1]"],
        ["action[0]", "action[1]"],
        extra=f"rate = {rate!r}",
    )
    text = (tmp_path / "map.toml").read_text().replace('time = ""\n', "")
    (tmp_path / "map.toml").write_text(text)
    tr, _ = load_trajectory(tmp_path / "episode_0.hdf5", load_map(tmp_path / "map.toml"), model)
    np.testing.assert_allclose(tr.time, np.arange(n) / rate)
    np.testing.assert_array_equal(tr.qpos, ref.qpos)
    np.testing.assert_array_equal(tr.ctrl, ref.ctrl)
    (tmp_path / "bad.toml").write_text(text.replace(f"rate = {rate!r}", "rate = -1"))
    with pytest.raises(InputError, match="rate must be a positive"):
        load_map(tmp_path / "bad.toml")
