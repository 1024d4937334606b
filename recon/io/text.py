"""Text point clouds (XYZ / PTS / TXT): ``x y z [intensity] [r g b] [nx ny nz]`` per line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields


def read_text(path: Path) -> PointCloud:
    text = path.read_text(encoding="utf-8", errors="strict")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "//"))]
    if lines and len(lines[0].split()) == 1 and re.fullmatch(r"\d+", lines[0].strip()):
        lines = lines[1:]  # PTS: first line is the point count
    if not lines:
        raise InputError(path, "the file holds no points")
    rows = [ln.replace(",", " ").split() for ln in lines]
    ncol = len(rows[0])
    if ncol < 3 or any(len(r) != ncol for r in rows):
        bad = next(i for i, r in enumerate(rows) if len(r) != ncol or ncol < 3)
        raise InputError(path, f"line {bad + 1} of the data has {len(rows[bad])} values; every line needs the same "
                               f"number (>= 3: x y z [intensity] [r g b])")  # fmt: skip
    arr = np.array(rows, dtype=np.float64)
    fields: dict[str, np.ndarray] = {"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2]}
    if ncol in (4, 7):
        fields["intensity"] = arr[:, 3]
    if ncol in (6, 7):
        rgb = arr[:, ncol - 3 :]
        for k, n in enumerate(("red", "green", "blue")):
            fields[n] = rgb[:, k] if rgb.max() <= 1.0 else np.round(rgb[:, k]).astype(np.int64)
    if ncol == 9:  # x y z r g b nx ny nz
        for k, n in enumerate(("red", "green", "blue")):
            fields[n] = arr[:, 3 + k]
        fields.update(nx=arr[:, 6], ny=arr[:, 7], nz=arr[:, 8])
    return cloud_from_fields(fields, path)
