"""CSV logs (optionally gzipped): a header row of column names, then one row of numbers per sample."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from real2sim.bounded import gunzip
from real2sim.calibration.logs.columns import Table
from real2sim.errors import InputError

CSV_BUDGET = 256 << 20
"""Most bytes of CSV text read from one log (256 MiB, some 3 million rows; parsing needs several times that)."""


def read_csv(path: Path) -> Table:
    """A CSV log's columns by header name."""
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
