"""NumPy ``.npz`` logs: one array per column (2-D arrays split into ``name[i]``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.calibration.logs.columns import Table, split_columns


def read_npz(path: Path) -> Table:
    """The archive's arrays as columns."""
    with np.load(path) as z:
        return split_columns({k: z[k] for k in z.files}, path)
