"""ROS 2 bags and MCAP files (the ``formats`` extra, ``rosbags``): ``sensor_msgs/JointState`` messages as columns
``time``, ``<joint>.position``, ``.velocity``, ``.effort``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from real2sim.calibration.logs.columns import Table, missing_extra
from real2sim.errors import InputError

if TYPE_CHECKING:
    from rosbags.typesys.stores.ros2_humble import sensor_msgs__msg__JointState as JointState


def read_rosbag(path: Path) -> Table:
    """All ``sensor_msgs/JointState`` messages of the bag, one row per distinct stamp (several topics publishing
    different joints at the same stamp share a row; a joint missing from a row holds its last value)."""
    try:
        from rosbags.highlevel import AnyReader
    except ImportError:
        raise missing_extra(path, "rosbags") from None
    rows: dict[int, dict[str, tuple[float, float, float]]] = {}
    with AnyReader([path]) as reader:
        conns = [c for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"]
        if not conns:
            raise InputError(path, "no sensor_msgs/JointState topic in the bag")
        for conn, t_bag, raw in reader.messages(connections=conns):
            msg = cast("JointState", reader.deserialize(raw, conn.msgtype))  # the topic's type, checked above
            stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)  # exact
            vals = rows.setdefault(stamp if stamp > 0 else int(t_bag), {})  # unset header stamp: bag time
            for i, n in enumerate(msg.name):
                p = msg.position[i] if len(msg.position) > i else np.nan
                v = msg.velocity[i] if len(msg.velocity) > i else np.nan
                e = msg.effort[i] if len(msg.effort) > i else np.nan
                vals[n] = (p, v, e)
    if not rows:
        raise InputError(path, "the JointState topic has no messages")
    stamps = sorted(rows)
    names = sorted({n for v in rows.values() for n in v})
    # seconds since the first message, from integer nanoseconds (epoch seconds in float64 lose ~0.2 µs)
    ns = np.array(stamps, dtype=np.int64)
    out: Table = {"time": (ns - ns[0]).astype(float) * 1e-9}
    for n in names:
        vals = np.array([rows[s].get(n, (np.nan,) * 3) for s in stamps], dtype=float)
        present = np.array([n in rows[s] for s in stamps])
        seen = np.where(present, np.arange(len(stamps)), 0)
        vals = vals[np.maximum.accumulate(seen)]  # hold the last message's value
        for i, field in enumerate(("position", "velocity", "effort")):
            out[f"{n}.{field}"] = vals[:, i]
    return out
