"""real2sim.calibration: robot logs + a MuJoCo model to fitted physical parameters with uncertainty."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def read_log(path: str | Path) -> dict[str, np.ndarray]:
    """Read a robot log (CSV, CSV.gz, NPZ, Parquet/LeRobot, HDF5, ROS 2 bag / MCAP) into named float columns; every
    problem with the file is one single-line ``InputError`` naming it."""
    import struct
    import warnings
    import zipfile
    import zlib

    from real2sim.calibration.logs import read_table
    from real2sim.errors import InputError

    malformed = (ValueError, OSError, EOFError, KeyError, IndexError, TypeError, NotImplementedError, RuntimeError,
                 zlib.error, zipfile.BadZipFile, struct.error, OverflowError)  # fmt: skip
    path = Path(path)
    if path.is_dir() and not (path / "metadata.yaml").is_file():
        raise InputError(path, "is a directory, not a log file (a ROS 2 bag folder holds metadata.yaml)")
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. genfromtxt's "Empty input file" before the one-line error
            return read_table(path)
    except InputError as exc:
        if "\n" in exc.problem:
            raise InputError(exc.path, " ".join(exc.problem.split())) from None
        raise
    except malformed as exc:
        detail = " ".join(str(exc).split())[:200]
        raise InputError(path, f"malformed log file ({type(exc).__name__}: {detail})") from None
