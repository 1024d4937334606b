"""Object candidates beyond the seen support (``segment_candidates.py``): an object reaching over the table's seen
edge or standing whole on its hidden continuation is kept; a wall or a chair standing on the floor is not."""

from __future__ import annotations

import numpy as np

from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.support import inside_polygon
from real2sim.recon.segmentation.candidates import object_candidates

RNG = np.random.default_rng(0)
HULL = np.array([[0.0, 0.0], [0.6, 0.0], [0.6, 0.4], [0.0, 0.4]])  # the seen table top, counter-clockwise


def _box(lo: tuple[float, float, float], hi: tuple[float, float, float], step: float = 0.004) -> np.ndarray:
    """Points filling the box ``lo``..``hi`` on a jittered grid (dense enough to be one Euclidean cluster)."""
    ax = [np.arange(a, b + 1e-9, step) for a, b in zip(lo, hi, strict=True)]
    g = np.stack(np.meshgrid(*ax, indexing="ij"), axis=-1).reshape(-1, 3)
    return g + RNG.normal(0.0, 0.0005, g.shape)


def _candidates(parts: list[np.ndarray]) -> list[float]:
    """Share of each part's points (above ``min_height``) that are candidates."""
    cfg = PointCloudReconCfg()
    w = np.concatenate(parts)
    cand = np.zeros(len(w), dtype=bool)
    cand[object_candidates(w, HULL, inside_polygon(w[:, :2], HULL, cfg.crop_margin), cfg)] = True
    out, start = [], 0
    for p in parts:
        sel = slice(start, start + len(p))
        start += len(p)
        up = p[:, 2] >= cfg.min_height
        out.append(float(cand[sel][up].mean()))
    return out


def test_object_over_the_edge_and_behind_kept() -> None:
    over = _box((0.45, 0.3, 0.0), (0.55, 0.48, 0.08))  # a fifth of its footprint beyond the seen edge y = 0.4
    behind = _box((0.1, 0.5, 0.04), (0.2, 0.6, 0.15))  # whole, 10 cm beyond the edge, its foot hidden
    shares = _candidates([over, behind])
    assert shares == [1.0, 1.0], shares


def test_background_beyond_the_edge_dropped() -> None:
    wall = _box((-0.1, 0.55, -0.7), (0.7, 0.56, 1.2), step=0.008)  # rises from the floor behind the table
    chair = _box((0.65, 0.1, -0.45), (0.75, 0.2, 0.3), step=0.006)  # a chair back beside the table
    obj = _box((0.2, 0.1, 0.0), (0.3, 0.2, 0.1))
    shares = _candidates([wall, chair, obj])
    assert shares[0] == 0.0 and shares[1] == 0.0 and shares[2] == 1.0, shares


def test_pile_touching_a_wall_keeps_only_what_is_above_the_table() -> None:
    wall = _box((-0.1, 0.408, -0.7), (0.7, 0.418, 1.2), step=0.008)  # 8 mm behind the table's seen edge
    obj = _box((0.2, 0.3, 0.0), (0.3, 0.398, 0.1))  # touches the wall
    shares = _candidates([wall, obj])
    assert shares == [0.0, 1.0], shares
