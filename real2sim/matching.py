"""One-to-one matching by least total cost (the Hungarian method), shared by the demo, tests and benchmarks."""

from __future__ import annotations

import numpy as np


def match_pairs(cost: np.ndarray) -> list[tuple[int, int, float]]:
    """Pairs ``(row, column, cost)`` of a least-total-cost one-to-one assignment of a (n, m) cost matrix.

    ``min(n, m)`` pairs, in row order; an empty matrix gives no pairs. Maximise a score by passing ``-score``
    (the returned cost is then the negated score).
    """
    c = np.asarray(cost, float)
    if c.ndim != 2 or 0 in c.shape:
        return []
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(c)
    return [(int(i), int(j), float(c[i, j])) for i, j in zip(rows, cols, strict=True)]
