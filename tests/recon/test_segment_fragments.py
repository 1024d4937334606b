"""Fragments (segments under ``min_points``) join the object their chain of fragments continues, not the object one
of them merely grazes: a bowl's rim seen as a string of small pieces, one of which lies near what sits beside the
bowl. Exact labels and contacts, so every choice is known."""

from __future__ import annotations

import numpy as np
import pytest

from real2sim.recon.segmentation.segment import merge_small_regions

BOWL, CONTENT, RIM_A, RIM_B = 0, 1, 2, 3


def _pairs(lab: np.ndarray, contacts: dict[tuple[int, int], int]) -> np.ndarray:
    """``contacts[(s, t)]`` distinct point pairs between regions s and t."""
    out = []
    for (s, t), n in contacts.items():
        a, b = np.flatnonzero(lab == s), np.flatnonzero(lab == t)
        out += [(a[k % len(a)], b[(3 * k) % len(b)]) for k in range(n)]
    return np.asarray(out, dtype=np.int64)


@pytest.mark.parametrize(
    ("rim_b_on_bowl", "rim_a_joins"),
    [
        # RIM_A touches RIM_B most and CONTENT a little; RIM_B touches the bowl most: RIM_A waits and follows RIM_B
        (25, BOWL),
        # each fragment's strongest contact is the other fragment: none can wait, each takes its large neighbour
        (2, CONTENT),
    ],
)
def test_a_rim_fragment_follows_its_chain_not_the_neighbour_it_grazes(rim_b_on_bowl: int, rim_a_joins: int):
    lab = np.repeat([BOWL, CONTENT, RIM_A, RIM_B], [100, 100, 10, 12])
    pairs = _pairs(lab, {(RIM_A, RIM_B): 20, (RIM_A, CONTENT): 3, (RIM_B, BOWL): rim_b_on_bowl})
    out = merge_small_regions(lab, pairs, min_points=30)
    assert out.max() == 1
    assert out[0] != out[100]
    assert (out[lab == RIM_B] == out[0]).all()
    assert (out[lab == RIM_A] == out[100 * rim_a_joins]).all()
