"""Point-level boundary refinement (``segment_refine.py``) on hand-made geometry with known labels: a box standing
on a box, the upper box's convex corner right at the contact (where a plane fitted across two faces fits badly)."""

from __future__ import annotations

import numpy as np
import pytest

from real2sim.recon.segmentation.refine import refine_boundaries

STEP = 0.004


def _grid(u0: float, u1: float, v0: float, v1: float) -> tuple[np.ndarray, np.ndarray]:
    u, v = np.meshgrid(np.arange(u0, u1 + 1e-9, STEP), np.arange(v0, v1 + 1e-9, STEP))
    return u.ravel(), v.ravel()


def _boxes(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The lower box's top (z = 0.05) and front (y = -0.06) faces, label 0; the upper box standing on it, its left
    (x = -0.03) and front (y = -0.03) faces meeting at a convex edge, and its lid, label 1; 0.5 mm noise."""
    x, y = _grid(-0.08, 0.08, -0.06, 0.06)
    foot = (np.abs(x) < 0.03) & (np.abs(y) < 0.03)
    top = np.c_[x, y, np.full(x.size, 0.05)][~foot]
    x, z = _grid(-0.08, 0.08, 0.0, 0.046)
    lower = np.r_[top, np.c_[x, np.full(x.size, -0.06), z]]
    y, z = _grid(-0.03, 0.03, 0.054, 0.11)
    left = np.c_[np.full(y.size, -0.03), y, z]
    x, z = _grid(-0.026, 0.03, 0.054, 0.11)
    front = np.c_[x, np.full(x.size, -0.03), z]
    x, y = _grid(-0.026, 0.03, -0.026, 0.03)
    upper = np.r_[left, front, np.c_[x, y, np.full(x.size, 0.11)]]
    pts = np.r_[lower, upper] + np.random.default_rng(seed).normal(0.0, 0.0005, (len(lower) + len(upper), 3))
    return pts, np.r_[np.zeros(len(lower), np.int64), np.ones(len(upper), np.int64)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_boundary_strips_return_to_their_surface(seed: int) -> None:
    pts, truth = _boxes(seed)
    # correct labels stay (at most a few points right at the crease move), the convex corner included
    assert (refine_boundaries(pts, truth, STEP) != truth).sum() <= 5
    # a strip of the lower top face around the upper box's foot given to the upper box, and a strip of the upper
    # box's faces at the contact given to the lower box (what a patch straddling the crease does): mostly returned
    near_foot = np.maximum(np.abs(pts[:, 0]), np.abs(pts[:, 1])) < 0.039
    for strip, wrong in (
        ((truth == 0) & (pts[:, 2] > 0.045) & near_foot, 1),
        ((truth == 1) & (pts[:, 2] < 0.063), 0),
    ):
        out = refine_boundaries(pts, np.where(strip, wrong, truth), STEP)
        assert (out[strip] == truth[strip]).mean() >= 0.7, (out[strip] == truth[strip]).mean()
        assert (out[~strip] != truth[~strip]).sum() <= 3
