"""Logs as named float columns (``Table``): the shared column handling of the log readers, and Parquet (plain logs and
LeRobot's data files)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.errors import InputError

Table = dict[str, np.ndarray]
"""Column name -> 1-D float array."""


def missing_extra(path: Path, module: str) -> InputError:
    """The error for a format whose optional reader is not installed."""
    return InputError(path, f"reading this format needs '{module}': pip install 'real2sim[formats]'")


def split_columns(cols: dict[str, np.ndarray], path: Path) -> Table:
    """Numeric columns as float arrays; a 2-D column becomes ``name[j]`` columns; others are dropped."""
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


def read_parquet(path: Path) -> Table:
    """A Parquet file (a LeRobot data file among them) as named float columns."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise missing_extra(path, "pyarrow") from None
    table = pq.read_table(path)
    cols = {name: np.asarray(table.column(name).to_pylist(), dtype=object) for name in table.column_names}
    out = split_columns(cols, path)
    # LeRobot layout: 'timestamp' is the time column; keep an alias 'time' for convenience.
    if "timestamp" in out and "time" not in out:
        out["time"] = out["timestamp"]
    return out
