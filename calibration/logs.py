"""Log readers: every format becomes a table ``{column name: 1-D float array}``.

CSV (optionally .gz) and NPZ are built in; Parquet (incl. the LeRobot layout, where vector columns such as
``observation.state`` are split into ``observation.state[0]``, ...), ROS 2 bags / MCAP (``sensor_msgs/JointState``
via ``rosbags``; columns ``time`` (header stamp, seconds since the first message), ``<joint>.position``,
``.velocity``, ``.effort``), LeRobot dataset folders (``calibration.lerobot``) and HDF5 (every 1-D/2-D dataset) need the
``formats`` extra (``pip install real2sim[formats]``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from real2sim.bounded import gunzip
from real2sim.calibration.columns import Table, missing_extra, read_parquet, split_columns
from real2sim.errors import InputError

if TYPE_CHECKING:
    from rosbags.typesys.stores.ros2_humble import sensor_msgs__msg__JointState as JointState


def read_table(path: str | Path) -> Table:
    """Read a log file into named float columns."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "log file does not exist")
    name = path.name.lower()
    if name.endswith((".json", ".json.gz")):
        from real2sim.calibration.json_log import read_json_table

        return read_json_table(path)
    if name.endswith((".csv", ".csv.gz", ".txt")):
        return _read_csv(path)
    if name.endswith(".npz"):
        with np.load(path) as z:
            return split_columns({k: z[k] for k in z.files}, path)
    if name.endswith(".parquet"):
        return read_parquet(path)
    if name.endswith((".h5", ".hdf5")):
        return _read_hdf5(path)
    if name.endswith((".mcap", ".db3")):
        return _read_rosbag(path)
    if path.is_dir():
        return _read_folder(path)
    raise InputError(
        path, "unknown log format (expected .csv, .csv.gz, .npz, .parquet, .h5, .mcap or a ROS 2 bag)"
    )


def _read_folder(path: Path) -> Table:
    """A folder: a LeRobot dataset (``meta/info.json``) or a ROS 2 bag (``metadata.yaml`` and .mcap/.db3 files)."""
    from real2sim.calibration import lerobot

    if lerobot.is_dataset(path):
        return lerobot.read_dataset(path).table
    if (path / "metadata.yaml").is_file() or any(path.glob("*.mcap")) or any(path.glob("*.db3")):
        return _read_rosbag(path)
    raise InputError(
        path,
        "is a directory but neither a LeRobot dataset (meta/info.json) nor a ROS 2 bag (metadata.yaml, .mcap/.db3 files)",
    )


CSV_BUDGET = 256 << 20
"""Most bytes of CSV text read from one log (256 MiB, some 3 million rows; parsing needs several times that)."""


def _read_csv(path: Path) -> Table:
    if path.name.lower().endswith(".gz"):
        raw = gunzip(path, CSV_BUDGET)
    elif path.stat().st_size > CSV_BUDGET:
        raise InputError(
            path, f"is {path.stat().st_size >> 20} MiB; at most {CSV_BUDGET >> 20} MiB of CSV is read"
        )
    else:
        raw = path.read_bytes()
    text = raw.decode(
        "utf-8-sig", errors="replace"
    )  # utf-8-sig: Excel's byte-order mark is not in the header
    lines = text.splitlines()
    if not lines:
        raise InputError(path, "empty CSV")
    header = [h.strip() for h in lines[0].split(",")]
    if any(not h for h in header):
        raise InputError(path, "CSV header has an empty column name")
    if not any(ln.strip() for ln in lines[1:]):  # before genfromtxt, which warns on empty input
        raise InputError(path, "CSV has a header but no rows")
    try:
        data = np.genfromtxt(io.StringIO("\n".join(lines[1:])), delimiter=",", dtype=float, ndmin=2)
    except ValueError as e:
        raise InputError(path, f"CSV rows do not match the header ({' '.join(str(e).split())})") from None
    if data.size == 0:
        raise InputError(path, "CSV has a header but no rows")
    if data.shape[1] != len(header):
        raise InputError(path, f"CSV has {len(header)} header columns but {data.shape[1]} values per row")
    return {h: data[:, i] for i, h in enumerate(header)}


def _read_hdf5(path: Path) -> Table:
    try:
        import h5py
    except ImportError:
        raise missing_extra(path, "h5py") from None
    cols: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as f:

        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset) and obj.ndim in (1, 2):
                cols[name] = obj[()]

        f.visititems(visit)
    return split_columns(cols, path)


def _read_rosbag(path: Path) -> Table:
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


def read_log(path: str | Path) -> dict[str, np.ndarray]:
    """Read a robot log (CSV, CSV.gz, NPZ, Parquet/LeRobot, HDF5, ROS 2 bag / MCAP) into named float columns; every
    problem with the file is one single-line ``InputError`` naming it."""
    import struct
    import warnings
    import zipfile
    import zlib

    malformed = (ValueError, OSError, EOFError, KeyError, IndexError, TypeError, NotImplementedError, RuntimeError,
                 zlib.error, zipfile.BadZipFile, struct.error, OverflowError)  # fmt: skip
    path = Path(path)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. genfromtxt's "Empty input file" before the one-line error
            table = read_table(path)
    except InputError as exc:
        if "\n" in exc.problem:
            raise InputError(exc.path, " ".join(exc.problem.split())) from None
        raise
    except malformed as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputError(path, f"malformed log file ({type(exc).__name__}: {detail})") from None
    lengths = {k: len(v) for k, v in table.items()}
    if len(set(lengths.values())) > 1:
        short = min(lengths, key=lengths.__getitem__)
        long = max(lengths, key=lengths.__getitem__)
        raise InputError(
            path,
            f"columns of different lengths: {short!r} has {lengths[short]} rows, {long!r} has {lengths[long]}",
        )
    return table
