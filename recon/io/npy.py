"""NumPy ``.npy`` point clouds: an (N, >= 3) array ``x y z [...]`` or a structured array with named fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields


def read_npy(path: Path) -> PointCloud:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(path, f"not a readable .npy array ({exc})") from None
    if arr.dtype.names:
        return cloud_from_fields({n: arr[n] for n in arr.dtype.names}, path)
    if arr.ndim != 2 or arr.shape[1] < 3:
        raise InputError(path, f"expected an (N, >=3) array of x y z [...], got shape {arr.shape}")
    fields = {"x": arr[:, 0], "y": arr[:, 1], "z": arr[:, 2]}
    if arr.shape[1] == 4:
        fields["intensity"] = arr[:, 3]
    elif arr.shape[1] >= 6:
        fields.update(red=arr[:, 3], green=arr[:, 4], blue=arr[:, 5])
    return cloud_from_fields(fields, path)
