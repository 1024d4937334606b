"""Log readers: every format becomes a table ``{column name: 1-D float array}``.

CSV (optionally .gz) and NPZ are built in; Parquet (incl. the LeRobot layout, where vector columns such as
``observation.state`` are split into ``observation.state[0]``, ...), ROS 2 bags / MCAP (``sensor_msgs/JointState``
via ``rosbags``; columns ``time`` (header stamp, seconds since the first message), ``<joint>.position``,
``.velocity``, ``.effort``), LeRobot dataset folders (``calibration.logs.lerobot``) and HDF5 (every 1-D/2-D dataset) need the
``formats`` extra (``pip install real2sim[formats]``). The formats by suffix are listed in ``formats.FORMATS``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np

from real2sim.calibration.logs.columns import Table
from real2sim.calibration.logs.formats import FORMATS
from real2sim.errors import InputError


def _reader(module: str, function: str) -> Callable[[Path], Table]:
    mod = importlib.import_module(f"real2sim.calibration.logs.{module}")
    return cast(Callable[[Path], Table], getattr(mod, function))


def read_table(path: str | Path) -> Table:
    """Read a log file into named float columns."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "log file does not exist")
    name = path.name.lower()
    for suffixes, module, function in FORMATS:
        if name.endswith(suffixes):
            return _reader(module, function)(path)
    if path.is_dir():
        return _read_folder(path)
    raise InputError(
        path, "unknown log format (expected .csv, .csv.gz, .npz, .parquet, .h5, .mcap or a ROS 2 bag)"
    )


def _read_folder(path: Path) -> Table:
    """A folder: a LeRobot dataset (``meta/info.json``) or a ROS 2 bag (``metadata.yaml`` and .mcap/.db3 files)."""
    from real2sim.calibration.logs import lerobot
    from real2sim.calibration.logs.rosbag import read_rosbag

    if lerobot.is_dataset(path):
        return lerobot.read_dataset(path).table
    if (path / "metadata.yaml").is_file() or any(path.glob("*.mcap")) or any(path.glob("*.db3")):
        return read_rosbag(path)
    raise InputError(
        path,
        "is a directory but neither a LeRobot dataset (meta/info.json) nor a ROS 2 bag (metadata.yaml, .mcap/.db3 files)",
    )


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
