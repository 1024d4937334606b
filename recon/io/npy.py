"""NumPy ``.npy`` point clouds: an (N, >= 3) array ``x y z [...]`` or a structured array with named fields."""

from __future__ import annotations

import math
import tokenize
import warnings
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.recon.io.cloud import PointCloud, cloud_from_fields


def _check_header(path: Path) -> None:
    """Refuse a header whose shape needs more bytes than the file holds (NumPy would allocate them first)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _fortran, dtype = read(f, max_header_size=10000)
        need = math.prod(shape) * dtype.itemsize
        if dtype.hasobject or need > size - f.tell():
            what = (
                "Python objects"
                if dtype.hasobject
                else f"{need} bytes of data, the file holds {size - f.tell()}"
            )
            raise InputError(path, f"not a readable .npy array (shape {shape} of {dtype} needs {what})")


def read_npy(path: Path) -> PointCloud:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's header parser warns (SyntaxWarning) on a corrupt header
            _check_header(path)
            arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError) as exc:
        raise InputError(path, f"not a readable .npy array ({' '.join(str(exc).split())})") from None
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
