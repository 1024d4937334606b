"""The parts of the clutter segmentation on hand-made geometry with known answers: LCCP edge classification
(convex, concave, smooth, step, sanity criterion), surfaces continuing behind an occluder, convex unions."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from real2sim.recon.segmentation.convexity import (
    classify_edges,
    concavity_depth,
    merge_convex_unions,
    patch_graph,
)
from real2sim.recon.segmentation.occlusion import MIN_PATCH_POINTS, RangeImage, merge_occluded


def _edge(c0, n0, c1, n1, tol=10.0) -> bool:
    c = np.array([c0, c1], dtype=float)
    n = np.array([n0, n1], dtype=float)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    return bool(classify_edges(c, n, np.array([[0, 1]]), tol, seed=0.02, step_slack=0.003)[0])


def test_lccp_edge_classes() -> None:
    s = np.sqrt(0.5)
    # a ridge (box edge): normals open away from each other -> convex, joined
    assert _edge([-0.01, 0, 0], [-s, 0, s], [0.01, 0, 0], [s, 0, s])
    # a valley (a box standing on another): normals turn toward each other -> concave, cut
    assert not _edge([-0.01, 0, 0], [s, 0, s], [0.01, 0, 0], [-s, 0, s])
    # slightly concave within the tolerance (range noise on a plane) -> joined; beyond it -> cut
    a = np.radians(4.0)
    assert _edge([-0.01, 0, 0], [np.sin(a), 0, np.cos(a)], [0.01, 0, 0], [-np.sin(a), 0, np.cos(a)])
    a = np.radians(8.0)
    assert not _edge([-0.01, 0, 0], [np.sin(a), 0, np.cos(a)], [0.01, 0, 0], [-np.sin(a), 0, np.cos(a)])
    # parallel planes offset by a step (two boxes of different height side by side): cut
    assert _edge([-0.01, 0, 0], [0, 0, 1], [0.01, 0, 0.002], [0, 0, 1])
    assert not _edge([-0.01, 0, 0], [0, 0, 1], [0.01, 0, 0.02], [0, 0, 1])
    # sanity criterion: patches meeting along the crease direction (only at a corner) are not joined
    assert not _edge([0, -0.01, 0], [-s, 0, s], [0, 0.01, 0], [s, 0, s])


def _plane(x0, x1, z, step=0.004, y0=-0.04, y1=0.04):
    x, y = np.meshgrid(np.arange(x0, x1 + 1e-9, step), np.arange(y0, y1 + 1e-9, step))
    return np.c_[x.ravel(), y.ravel(), np.full(x.size, z)]


def test_surface_continues_behind_an_occluder() -> None:
    """A flat face cut in two by a slab in front of it (nearer the sensor) is one surface; the same two pieces
    with the gap between them seen through (the table far behind seen there) are two."""
    sensor = np.array([0.0, 0.0, 1.0])
    left, right = _plane(-0.12, -0.03, 0.05), _plane(0.03, 0.12, 0.05)
    slab = _plane(-0.05, 0.05, 0.3)
    floor = _plane(-0.03, 0.03, 0.0)  # seen through the gap: free space where the face would be
    for occluder, joined in ((slab, True), (floor, False)):
        pts = np.r_[left, right]
        nrm = np.tile([0.0, 0.0, 1.0], (len(pts), 1))
        g = patch_graph(
            pts, nrm, None, seed=0.016, radius=0.0072, concavity_tolerance_deg=10.0, step_slack=0.004
        )
        seg = (pts[:, 0] > 0).astype(np.int64)
        image = RangeImage(np.r_[pts, occluder], sensor, 0.004)
        out = merge_occluded(seg, g, g.pairs, image, concavity_deg=10.0, step=0.008, spacing=0.004)
        assert (out.max() == 0) == joined, joined


def test_continuation_does_not_hinge_on_the_nearest_patch_pair() -> None:
    """The same face, its left piece reaching nearer the right one along one edge, where a thin piece lies on the
    face in the gap (seen within the range noise: not hidden); the slab hides the rest of the gap. The nearest patch
    pair's line runs over the thin piece only, the next ones' behind the slab: one surface."""
    sensor = np.array([0.0, 0.0, 1.0])
    left = np.r_[_plane(-0.12, -0.036, 0.05, y1=-0.028), _plane(-0.12, -0.04, 0.05, y0=-0.024)]
    right = _plane(0.036, 0.12, 0.05)
    thin = _plane(-0.032, 0.032, 0.054, y1=-0.028)
    slab = _plane(-0.05, 0.05, 0.3, y0=-0.024)
    pts = np.r_[left, right]
    nrm = np.tile([0.0, 0.0, 1.0], (len(pts), 1))
    g = patch_graph(pts, nrm, None, seed=0.016, radius=0.0072, concavity_tolerance_deg=10.0, step_slack=0.004)
    seg = (pts[:, 0] > 0).astype(np.int64)
    image = RangeImage(np.r_[pts, thin, slab], sensor, 0.004)
    a, b = min(_cross_pairs(g, seg), key=lambda p: np.linalg.norm(g.centroid[p[1]] - g.centroid[p[0]]))
    seen, r = image.seen_range(
        g.centroid[a] + np.linspace(0, 1, 30)[:, None] * (g.centroid[b] - g.centroid[a])
    )
    assert not (seen < r - 0.008).any()  # nothing hidden on the nearest pair's line
    out = merge_occluded(seg, g, g.pairs, image, concavity_deg=10.0, step=0.008, spacing=0.004)
    assert out.max() == 0


def _ridge(x0: float, x1: float, side: int) -> tuple[np.ndarray, np.ndarray]:
    """A 1 x 1.2 cm flat strip at z = 0.05 from ``x0`` to ``x1``, then a face rising at 45 degrees away from the gap
    (``side``: -1 to the left, 1 to the right); points and normals."""
    flat = _plane(x0, x1, 0.05, y0=-0.006, y1=0.006)
    u = _plane(0.004, 0.08, 0.0)
    edge = x0 if side < 0 else x1
    ramp = np.c_[edge + side * u[:, 0] / np.sqrt(2), u[:, 1], 0.05 + u[:, 0] / np.sqrt(2)]
    up = np.tile([0.0, 0.0, 1.0], (len(flat), 1))
    tilted = np.tile([-side / np.sqrt(2), 0.0, 1 / np.sqrt(2)], (len(ramp), 1))
    return np.r_[flat, ramp], np.r_[up, tilted]


def test_one_line_is_no_vote() -> None:
    """Two ridges 8 cm apart whose only coplanar patches are one small flat strip each, the gap between them hidden
    by a slab: a single line between the two strips is all the evidence of one surface, and they stay apart."""
    sensor = np.array([0.0, 0.0, 1.0])
    (lp, ln), (rp, rn) = _ridge(-0.05, -0.04, -1), _ridge(0.04, 0.05, 1)
    pts, nrm = np.r_[lp, rp], np.r_[ln, rn]
    g = patch_graph(pts, nrm, None, seed=0.016, radius=0.0072, concavity_tolerance_deg=10.0, step_slack=0.004)
    seg = (pts[:, 0] > 0).astype(np.int64)
    coplanar = [
        (a, b)
        for a, b in _cross_pairs(g, seg)
        if g.normal[a] @ g.normal[b] > np.cos(np.radians(10.0))
        and abs((g.centroid[b] - g.centroid[a]) @ g.normal[a]) <= 0.008
    ]
    assert len(coplanar) == 1
    image = RangeImage(np.r_[pts, _plane(-0.045, 0.045, 0.3)], sensor, 0.004)
    out = merge_occluded(seg, g, g.pairs, image, concavity_deg=10.0, step=0.008, spacing=0.004)
    assert out.max() == 1


def _cross_pairs(g, seg: np.ndarray) -> list[tuple[int, int]]:
    """Patch pairs across the two segments, of the patches ``merge_occluded`` measures."""
    ps = np.zeros(len(g.size), dtype=np.int64)
    ps[g.patch] = seg
    use = g.size >= MIN_PATCH_POINTS
    return [(a, b) for a in np.flatnonzero(use & (ps == 0)) for b in np.flatnonzero(use & (ps == 1))]


def test_convex_union_depth() -> None:
    """A bumpy but convex surface has a shallow union depth; a box standing on a box has a deep notch."""
    rng = np.random.default_rng(0)
    u = rng.normal(size=(3000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    stone = 0.05 * u * (1.0 + 0.03 * np.sin(7 * u[:, :1]))  # 1.5 mm relief on a 5 cm sphere
    assert concavity_depth(stone) < 0.005
    lower = np.c_[rng.uniform(-0.1, 0.1, 3000), rng.uniform(-0.1, 0.1, 3000), np.full(3000, 0.05)]
    upper = np.c_[rng.uniform(-0.03, 0.03, (2000, 2)), rng.uniform(0.05, 0.15, 2000)]
    upper[:, 0] = np.where(rng.uniform(size=2000) < 0.5, -0.03, 0.03)  # two side faces of the upper box
    pts = np.r_[lower, upper]
    assert concavity_depth(pts) > 0.02
    seg = np.r_[np.zeros(3000, np.int64), np.ones(2000, np.int64)]
    near = np.array([[0, 3000]])
    assert merge_convex_unions(pts, seg, near, 0.01).max() == 1
    halves = (stone[:, 0] > 0).astype(np.int64)
    near = np.array([[np.flatnonzero(halves == 0)[0], np.flatnonzero(halves == 1)[0]]])
    assert merge_convex_unions(stone, halves, near, 0.01).max() == 0


def test_convex_union_ignores_a_neighbours_strip() -> None:
    """A box's top face and front face, cut apart, are one convex union, also when the top face carries a strip of
    the box standing on it (its lowest 1.5 cm, which the patches gave to the wrong side): the strip stretches the
    union's hull over the top face, so the hull is spanned by the points not in contact with a third segment."""
    rng = np.random.default_rng(0)
    top = np.c_[rng.uniform(-0.1, 0.1, 2000), rng.uniform(-0.05, 0.05, 2000), np.full(2000, 0.05)]
    front = np.c_[rng.uniform(-0.1, 0.1, 1000), np.full(1000, -0.05), rng.uniform(0.0, 0.05, 1000)]
    standing = np.c_[rng.uniform(0.05, 0.09, 1500), np.zeros(1500), rng.uniform(0.05, 0.12, 1500)]
    strip, rest = standing[standing[:, 2] < 0.065], standing[standing[:, 2] >= 0.065]
    pts = np.r_[top, strip, front, rest]
    seg = np.repeat([0, 0, 1, 2], [len(top), len(strip), len(front), len(rest)])
    near = cKDTree(pts).query_pairs(0.015, output_type="ndarray")
    assert (
        concavity_depth(pts[seg < 2]) > 0.01
    )  # the hull of the whole union: the strip makes it look notched
    out = merge_convex_unions(pts, seg, near, 0.01)
    assert out[0] == out[len(top) + len(strip)] != out[-1]
