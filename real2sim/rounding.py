"""Numbers written the same on every CPU: a BLAS/LAPACK result's last bits depend on the kernel the CPU picks
(``OPENBLAS_CORETYPE``), so frames and figures are rounded before they are used or written."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def round_frame(a: ArrayLike, decimals: int = 12) -> np.ndarray:
    """``a`` (a transform, a rotation, a unit vector) rounded to ``decimals``, with -0.0 made 0.0."""
    return np.round(np.asarray(a, dtype=np.float64), decimals) + 0.0


def significant(x: float, digits: int = 12) -> float:
    """``x`` rounded to ``digits`` significant digits (a scale, a figure of a report)."""
    return float(f"{float(x):.{digits}g}")
