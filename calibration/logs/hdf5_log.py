"""HDF5 logs (the ``formats`` extra): every 1-D or 2-D dataset, by its path in the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.calibration.logs.columns import Table, missing_extra, split_columns


def read_hdf5(path: Path) -> Table:
    """Every 1-D/2-D dataset of the file as columns (2-D ones split into ``name[i]``)."""
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
