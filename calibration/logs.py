"""Log readers: every format becomes a table ``{column name: 1-D float array}``.

CSV (optionally .gz) and NPZ are built in; Parquet (incl. the LeRobot layout, where vector columns such as
``observation.state`` are split into ``observation.state[0]``, ...), ROS 2 bags / MCAP (``sensor_msgs/JointState``
via ``rosbags``; columns ``time`` (header stamp, seconds since the first message), ``<joint>.position``,
``.velocity``, ``.effort``) and HDF5 (every 1-D/2-D dataset) need the
``formats`` extra (``pip install real2sim[formats]``).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np

from real2sim.errors import InputError

Table = dict[str, np.ndarray]


def _missing_extra(path: Path, module: str) -> InputError:
    return InputError(path, f"reading this format needs '{module}': pip install 'real2sim[formats]'")


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
            return _split_columns({k: z[k] for k in z.files}, path)
    if name.endswith(".parquet"):
        return _read_parquet(path)
    if name.endswith((".h5", ".hdf5")):
        return _read_hdf5(path)
    if name.endswith(".mcap") or path.is_dir() or name.endswith(".db3"):
        return _read_rosbag(path)
    raise InputError(
        path, "unknown log format (expected .csv, .csv.gz, .npz, .parquet, .h5, .mcap or a ROS 2 bag)"
    )


def _read_csv(path: Path) -> Table:
    raw = gzip.open(path, "rb").read() if path.name.lower().endswith(".gz") else path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if not lines:
        raise InputError(path, "empty CSV")
    header = [h.strip() for h in lines[0].split(",")]
    if any(not h for h in header):
        raise InputError(path, "CSV header has an empty column name")
    try:
        data = np.genfromtxt(io.StringIO("\n".join(lines[1:])), delimiter=",", dtype=float, ndmin=2)
    except ValueError as e:
        raise InputError(path, f"CSV rows do not match the header ({e})") from None
    if data.size == 0:
        raise InputError(path, "CSV has a header but no rows")
    if data.shape[1] != len(header):
        raise InputError(path, f"CSV has {len(header)} header columns but {data.shape[1]} values per row")
    return {h: data[:, i] for i, h in enumerate(header)}


def _split_columns(cols: dict[str, np.ndarray], path: Path) -> Table:
    out: Table = {}
    for k, v in cols.items():
        a = np.asarray(v)
        if a.dtype == object:
            try:
                a = np.stack([np.asarray(x, dtype=float) for x in a])
            except (TypeError, ValueError):
                continue
        if not np.issubdtype(a.dtype, np.number) and a.dtype != bool:
            continue
        a = a.astype(float)
        if a.ndim == 1:
            out[k] = a
        elif a.ndim == 2:
            for j in range(a.shape[1]):
                out[f"{k}[{j}]"] = a[:, j]
    if not out:
        raise InputError(path, "no numeric columns found")
    return out


def _read_parquet(path: Path) -> Table:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise _missing_extra(path, "pyarrow") from None
    table = pq.read_table(path)
    cols = {name: np.asarray(table.column(name).to_pylist(), dtype=object) for name in table.column_names}
    out = _split_columns(cols, path)
    # LeRobot layout: 'timestamp' is the time column; keep an alias 'time' for convenience.
    if "timestamp" in out and "time" not in out:
        out["time"] = out["timestamp"]
    return out


def _read_hdf5(path: Path) -> Table:
    try:
        import h5py
    except ImportError:
        raise _missing_extra(path, "h5py") from None
    cols: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as f:

        def visit(name: str, obj: object) -> None:
            if isinstance(obj, h5py.Dataset) and obj.ndim in (1, 2):
                cols[name] = obj[()]

        f.visititems(visit)
    return _split_columns(cols, path)


def _read_rosbag(path: Path) -> Table:
    try:
        from rosbags.highlevel import AnyReader
    except ImportError:
        raise _missing_extra(path, "rosbags") from None
    rows: list[tuple[int, dict[str, tuple[float, float, float]]]] = []
    with AnyReader([path]) as reader:
        conns = [c for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"]
        if not conns:
            raise InputError(path, "no sensor_msgs/JointState topic in the bag")
        for conn, _t, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)  # exact
            vals = {}
            for i, n in enumerate(msg.name):
                p = msg.position[i] if len(msg.position) > i else np.nan
                v = msg.velocity[i] if len(msg.velocity) > i else np.nan
                e = msg.effort[i] if len(msg.effort) > i else np.nan
                vals[n] = (p, v, e)
            rows.append((stamp, vals))
    rows.sort(key=lambda r: r[0])
    names = sorted({n for _, v in rows for n in v})
    if not rows:
        raise InputError(path, "the JointState topic has no messages")
    # seconds since the first message, from integer nanoseconds (epoch seconds in float64 lose ~0.2 µs)
    ns = np.array([r[0] for r in rows], dtype=np.int64)
    out: Table = {"time": (ns - ns[0]).astype(float) * 1e-9}
    for n in names:
        for i, field in enumerate(("position", "velocity", "effort")):
            out[f"{n}.{field}"] = np.array([r[1].get(n, (np.nan,) * 3)[i] for r in rows], dtype=float)
    return out
