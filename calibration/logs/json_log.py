"""JSON record logs: a list of records ``[{"t": .., "q": ..}, ...]`` or an object holding one such list (the
STS3215 bench writes ``{"kp": 32, "mass": .., "entries": [...]}``), plain or gzipped.

Every numeric or boolean record field becomes a column (booleans as 0/1; a missing value as NaN). The object's
numeric scalars (the header) become constant columns of the same length, so the map can name them as per-log
constants (``constants = ["kp", "mass"]``); a header key that clashes with a record field is prefixed ``header.``.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from real2sim.bounded import load_json
from real2sim.errors import InputError

Table = dict[str, np.ndarray]


def _scalar(v: object) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, numbers.Real):
        return float(v)
    return None


def read_json_table(path: str | Path) -> Table:
    """Read a JSON record log into named float columns (see the module docstring)."""
    path = Path(path)
    doc = load_json(path)
    header: dict[str, float] = {}
    if isinstance(doc, dict):
        lists = [
            k for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)
        ]
        if len(lists) != 1:
            raise InputError(
                path,
                "a JSON log object must hold exactly one list of records "
                f"(found {len(lists)}: {', '.join(lists) or 'none'})",
            )
        records = doc[lists[0]]
        header = {k: s for k, v in doc.items() if (s := _scalar(v)) is not None}
    elif isinstance(doc, list) and doc and all(isinstance(r, dict) for r in doc):
        records = doc
    else:
        raise InputError(path, "a JSON log must be a list of records or an object holding one")
    keys: list[str] = []
    for r in records:
        for k, v in r.items():
            if k not in keys and _scalar(v) is not None:
                keys.append(k)
    if not keys:
        raise InputError(path, "the JSON records have no numeric fields")
    out: Table = {}
    for k in keys:
        col = [_scalar(r.get(k)) for r in records]
        out[k] = np.array([np.nan if v is None else v for v in col], dtype=float)
    n = len(records)
    for k, v in header.items():
        out[k if k not in out else f"header.{k}"] = np.full(n, v)
    return out
