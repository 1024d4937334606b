"""Log readers beyond CSV: NPZ, Parquet (LeRobot dataset layout), ROS 2 bags (sqlite3 and MCAP) with
``sensor_msgs/JointState``, HDF5. Each writes the sample robot's first log in that format with the real library
and must load into the same trajectory as the CSV."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from real2sim.calibration.maps.logmap import load_map, load_trajectory
from real2sim.errors import InputError

JOINTS = ("shoulder", "elbow")
ACTS = ("shoulder_motor", "elbow_motor")


@pytest.fixture(scope="module")
def reference(sample_data: Path):
    model = mujoco.MjModel.from_xml_path(str(sample_data / "robot" / "double_pendulum.xml"))
    tr, _ = load_trajectory(
        sample_data / "logs" / "excite_00.csv", load_map(sample_data / "logs" / "map.toml"), model
    )
    return model, tr


def write_map(
    path: Path, time: str, q: list[str], v: list[str] | None, u: list[str], extra: str = ""
) -> Path:
    lines = [f'time = "{time}"', extra]
    for j, (jn, qc) in enumerate(zip(JOINTS, q, strict=True)):
        lines += [f"[joints.{jn}]", f'qpos = "{qc}"'] + ([f'qvel = "{v[j]}"'] if v else [])
    for an, uc in zip(ACTS, u, strict=True):
        lines += [f"[actuators.{an}]", f'ctrl = "{uc}"']
    path.write_text("\n".join(lines) + "\n")
    return path


def same_table(tr, ref, with_qvel: bool = True, atol: float = 1e-12) -> None:
    assert tr.joint_names == JOINTS and tr.actuator_names == ACTS
    np.testing.assert_allclose(tr.time, ref.time, atol=atol)
    np.testing.assert_allclose(tr.qpos, ref.qpos, atol=atol)
    np.testing.assert_allclose(tr.ctrl, ref.ctrl, atol=atol)
    if with_qvel:
        np.testing.assert_allclose(tr.qvel, ref.qvel, atol=atol)


def test_npz_matrix_columns(tmp_path: Path, reference) -> None:
    model, ref = reference
    np.savez(tmp_path / "log.npz", t=ref.time, q=ref.qpos, qd=ref.qvel, tau=ref.ctrl, label=np.array("x"))
    m = write_map(tmp_path / "map.toml", "t", ["q[0]", "q[1]"], ["qd[0]", "qd[1]"], ["tau[0]", "tau[1]"])
    tr, _ = load_trajectory(tmp_path / "log.npz", load_map(m), model)
    same_table(tr, ref)


def _lerobot_table(ref, episodes: int):
    import pyarrow as pa

    n = ref.n
    state = np.concatenate([ref.qpos, ref.qvel], axis=1)
    rows = {"observation.state": [], "action": [], "timestamp": [], "episode_index": [], "frame_index": []}
    for e in range(episodes):
        scale = 1.0 + e  # episodes differ, so a wrong selection shows
        rows["observation.state"] += [list(map(float, s * scale)) for s in state]
        rows["action"] += [list(map(float, u * scale)) for u in ref.ctrl]
        rows["timestamp"] += list(map(float, ref.time))
        rows["episode_index"] += [e] * n
        rows["frame_index"] += list(range(n))
    return pa.table(
        {
            "observation.state": pa.array(rows["observation.state"], type=pa.list_(pa.float32())),
            "action": pa.array(rows["action"], type=pa.list_(pa.float32())),
            "timestamp": pa.array(rows["timestamp"], type=pa.float32()),
            "episode_index": pa.array(rows["episode_index"], type=pa.int64()),
            "frame_index": pa.array(rows["frame_index"], type=pa.int64()),
        }
    )


def test_parquet_lerobot_layout(tmp_path: Path, reference) -> None:
    import pyarrow.parquet as pq

    model, ref = reference
    pq.write_table(_lerobot_table(ref, 1), tmp_path / "episode_000000.parquet")
    cols = (
        ["observation.state[0]", "observation.state[1]"],
        ["observation.state[2]", "observation.state[3]"],
        ["action[0]", "action[1]"],
    )
    m = write_map(tmp_path / "map.toml", "timestamp", *cols)
    tr, _ = load_trajectory(tmp_path / "episode_000000.parquet", load_map(m), model)
    # LeRobot stores float32: equal to the float64 log within float32 rounding
    np.testing.assert_allclose(tr.qpos, ref.qpos, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.qvel, ref.qvel, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.ctrl, ref.ctrl, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.time, ref.time, atol=1e-5)


def test_parquet_lerobot_episode_selection(tmp_path: Path, reference) -> None:
    import pyarrow.parquet as pq

    model, ref = reference
    path = tmp_path / "chunk.parquet"
    pq.write_table(_lerobot_table(ref, 3), path)
    cols = (
        ["observation.state[0]", "observation.state[1]"],
        ["observation.state[2]", "observation.state[3]"],
        ["action[0]", "action[1]"],
    )
    with pytest.raises(InputError, match="3 episodes.*episode = N"):
        load_trajectory(path, load_map(write_map(tmp_path / "m0.toml", "timestamp", *cols)), model)
    tr, _ = load_trajectory(
        path, load_map(write_map(tmp_path / "m1.toml", "timestamp", *cols, extra="episode = 2")), model
    )
    assert tr.n == ref.n
    np.testing.assert_allclose(tr.qpos, 3.0 * ref.qpos, rtol=1e-6, atol=1e-6)
    with pytest.raises(InputError, match="episode 7 is not in the log"):
        load_trajectory(
            path, load_map(write_map(tmp_path / "m7.toml", "timestamp", *cols, extra="episode = 7")), model
        )


def ros2_types():
    """ROS 2 Humble's typestore and its JointState, Header and Time message classes."""
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_HUMBLE)
    t = ts.types
    return ts, t["sensor_msgs/msg/JointState"], t["std_msgs/msg/Header"], t["builtin_interfaces/msg/Time"]


def bag_writer(bag: Path, storage: str):
    """A rosbag2 writer for ``bag`` in ``storage`` (``mcap`` or ``sqlite3``)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    return Writer(bag, version=9, storage_plugin=plugin)


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_ros2_bag_joint_state(tmp_path: Path, reference, storage: str) -> None:
    model, ref = reference
    ts, JointState, Header, Time = ros2_types()
    bag = tmp_path / "bag"
    t0_ns = 1_700_000_000 * 10**9  # epoch stamps: float64 seconds would lose ~0.2 µs here
    with bag_writer(bag, storage) as w:
        conn = w.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        # a second, unrelated joint published in between must not disturb the mapped ones
        for i in range(ref.n):
            stamp = t0_ns + int(round(float(ref.time[i]) * 1e9))
            sec, ns = divmod(stamp, 10**9)
            msg = JointState(
                header=Header(stamp=Time(sec=sec, nanosec=ns), frame_id=""),
                name=["elbow", "shoulder", "gripper"],
                position=np.array([ref.qpos[i, 1], ref.qpos[i, 0], 0.0]),
                velocity=np.array([ref.qvel[i, 1], ref.qvel[i, 0], 0.0]),
                effort=np.array([ref.ctrl[i, 1], ref.ctrl[i, 0], 0.0]),
            )
            w.write(conn, stamp, ts.serialize_cdr(msg, JointState.__msgtype__))
    m = write_map(
        tmp_path / "map.toml",
        "time",
        ["shoulder.position", "elbow.position"],
        ["shoulder.velocity", "elbow.velocity"],
        ["shoulder.effort", "elbow.effort"],
    )
    path = bag / "bag.mcap" if storage == "mcap" else bag
    if storage == "mcap":
        assert path.exists(), sorted(p.name for p in bag.iterdir())
    tr, _ = load_trajectory(path, load_map(m), model)
    same_table(tr, ref, atol=1e-9)  # stamps are integer nanoseconds


def test_ros2_bag_without_joint_state(tmp_path: Path, reference) -> None:
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    model, _ = reference
    ts = get_typestore(Stores.ROS2_HUMBLE)
    String = ts.types["std_msgs/msg/String"]
    bag = tmp_path / "bag"
    with Writer(bag, version=9) as w:
        conn = w.add_connection("/chatter", String.__msgtype__, typestore=ts)
        w.write(conn, 1, ts.serialize_cdr(String(data="hi"), String.__msgtype__))
    m = write_map(
        tmp_path / "map.toml",
        "time",
        ["shoulder.position", "elbow.position"],
        None,
        ["shoulder.effort", "elbow.effort"],
    )
    with pytest.raises(InputError, match="no sensor_msgs/JointState"):
        load_trajectory(bag, load_map(m), model)


def test_hdf5_nested_datasets(tmp_path: Path, reference) -> None:
    import h5py

    model, ref = reference
    with h5py.File(tmp_path / "log.h5", "w") as f:
        f["time"] = ref.time
        g = f.create_group("robot")
        g["qpos"] = ref.qpos
        g["qvel"] = ref.qvel
        g["effort"] = ref.ctrl
        f["images"] = np.zeros((ref.n, 2, 2, 3))  # 4-D: not a log column, ignored
    m = write_map(
        tmp_path / "map.toml",
        "time",
        ["robot/qpos[0]", "robot/qpos[1]"],
        ["robot/qvel[0]", "robot/qvel[1]"],
        ["robot/effort[0]", "robot/effort[1]"],
    )
    tr, _ = load_trajectory(tmp_path / "log.h5", load_map(m), model)
    same_table(tr, ref)
    bad = write_map(
        tmp_path / "bad.toml",
        "time",
        ["robot/qpos[0]", "robot/qpos[5]"],
        None,
        ["robot/effort[0]", "robot/effort[1]"],
    )
    with pytest.raises(InputError, match=r"robot/qpos\[5\]"):
        load_trajectory(tmp_path / "log.h5", load_map(bad), model)
