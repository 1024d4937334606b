"""Cut LCCP segments where one object rests on another and only a few patch edges hold them together.

LCCP joins two patches across a concave crease when their normals differ by less than the concavity tolerance. A
patch that straddles the crease where a box lies on another box has a normal between the two faces, and two such
patches side by side can join the boxes. The boundary between the two boxes is then concave almost everywhere, with
a few joining edges. ``split_weak_links`` finds such boundaries: inside each LCCP segment, patches merge
average-linkage style (the adjacent pair with the largest share of joining contact first, while that share is at
least ``WEAK_LINK``), giving parts; the parts are regrouped (small parts join the group they share the most joining
contact with; groups whose union is convex within ``max_depth`` join; groups that touch and of which neither rests
on the other join), and a segment left in two or more groups, each convex within ``max_depth``, is cut into them. A
part stays cut off only when it rests on its neighbour or carries it, and is convex: a mug's handle, a tray's walls
or the two halves of a bowl meet their other parts side by side, and the inside of a mug seen over its rim is not
convex; they stay whole.
"""

from __future__ import annotations

import heapq

import numpy as np

from real2sim.recon.segmentation.convexity import PatchGraph, concavity_depth
from real2sim.recon.segmentation.stacking import rests_on

WEAK_LINK = 0.5
"""Patches merge into parts while at least this share of the contact between them is over joining edges."""


def _roots(parent: np.ndarray) -> np.ndarray:
    root = parent.copy()
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt


def agglomerate(
    g: PatchGraph, seg: np.ndarray, within: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, int], list[float]]]:
    """Average-linkage merging of the patches inside each segment of ``seg`` (per patch) that ``within`` (per
    segment) selects. Returns each patch's part (a root patch), the points per root, and [joining, total] contact
    between adjacent roots (keys i < j)."""
    npat = len(g.size)
    parent = np.arange(npat)
    size = g.size.astype(np.int64).copy()
    a, b = g.edges[:, 0], g.edges[:, 1]
    inside = (seg[a] == seg[b]) & within[seg[a]]
    stats: dict[tuple[int, int], list[float]] = {}
    nbr: dict[int, set[int]] = {}
    for i, j, c, ok in zip(
        a[inside].tolist(),
        b[inside].tolist(),
        g.contact[inside].tolist(),
        g.convex[inside].tolist(),
        strict=True,
    ):
        s = stats.setdefault((i, j), [0.0, 0.0])
        s[0] += c if ok else 0.0
        s[1] += c
        nbr.setdefault(i, set()).add(j)
        nbr.setdefault(j, set()).add(i)
    version = np.zeros(npat, dtype=np.int64)
    heap = [(-s[0] / s[1], -s[1], i, j, 0, 0) for (i, j), s in stats.items() if s[0] >= WEAK_LINK * s[1]]
    heapq.heapify(heap)
    while heap:
        _, _, i, j, vi, vj = heapq.heappop(heap)
        if version[i] != vi or version[j] != vj or parent[i] != i or parent[j] != j:
            continue
        parent[j] = i
        size[i] += size[j]
        version[i] += 1
        stats.pop((i, j), None)
        nbr[i].discard(j)
        for c in sorted(nbr.pop(j)):
            if c == i:
                continue
            sj = stats.pop((min(j, c), max(j, c)))
            s = stats.setdefault((min(i, c), max(i, c)), [0.0, 0.0])
            s[0] += sj[0]
            s[1] += sj[1]
            nbr[c].discard(j)
            nbr[c].add(i)
            nbr[i].add(c)
        for c in sorted(nbr[i]):
            s = stats[(min(i, c), max(i, c))]
            if s[0] >= WEAK_LINK * s[1]:
                lo, hi = min(i, c), max(i, c)
                heapq.heappush(heap, (-s[0] / s[1], -s[1], lo, hi, int(version[lo]), int(version[hi])))
    return _roots(parent), size, stats


def _regroup(
    points: np.ndarray,
    normals: np.ndarray,
    g: PatchGraph,
    lab: np.ndarray,
    root_idx: list[np.ndarray],
    big: np.ndarray,
    link: tuple[np.ndarray, np.ndarray],
    *,
    max_depth: float,
    spacing: float,
) -> np.ndarray | None:
    """Group per part (a part's id is its index; a group is named by one of its big parts) for one segment, or None
    when it stays whole. ``lab``: per point, the cluster's segments with this one's points at -1; ``root_idx``: the
    points of each part; ``big``: parts of ``min_points`` or more; ``link``: (joining, total) contact between parts."""
    n = len(root_idx)
    gid = np.arange(n)
    joining, total = link

    def between(x: int, y: int) -> tuple[float, float]:
        mx, my = gid == x, gid == y
        return float(joining[np.ix_(mx, my)].sum()), float(total[np.ix_(mx, my)].sum())

    def idx_of(*heads: int) -> np.ndarray:
        return np.concatenate([root_idx[k] for k in range(n) if gid[k] in heads])

    def heads() -> list[int]:
        return sorted(set(gid[big].tolist()))

    small = np.flatnonzero(~big).tolist()
    while small:  # each small part joins the group it shares the most joining contact with
        scored = [(between(r, h), h, r) for r in small for h in heads()]
        scored = [x for x in scored if x[0][1] > 0]
        if not scored:
            break
        _, h, r = max(scored, key=lambda x: (x[0][0], x[0][1], -x[1], -x[2]))
        gid[r] = h
        small.remove(r)
    while True:  # groups whose union is convex, shallowest first
        hs = heads()
        depths = [
            (concavity_depth(points[idx_of(x, y)]), x, y)
            for i, x in enumerate(hs)
            for y in hs[i + 1 :]
            if between(x, y)[1] > 0
        ]
        depths = [d for d in depths if d[0] <= max_depth]
        if not depths:
            break
        _, x, y = min(depths)
        gid[gid == y] = x
    hs = heads()
    if len(hs) < 2:
        return None
    base = int(lab.max()) + 1
    for k, h in enumerate(hs):
        lab[idx_of(h)] = base + k
    lab[lab < 0] = base + len(hs)  # points of small parts left without a group
    dense = np.unique(lab, return_inverse=True)[1].reshape(-1)
    rest = rests_on(points, normals, dense, g.pairs, spacing)
    ids = [int(dense[idx_of(h)[0]]) for h in hs]
    for i, x in enumerate(hs):  # touching groups of which neither rests on the other are one object
        for k, y in enumerate(hs[i + 1 :], start=i + 1):
            if between(x, y)[1] > 0 and not (rest[ids[i], ids[k]] or rest[ids[k], ids[i]]):
                gid[gid == y] = x
    hs = heads()
    if len(hs) < 2 or any(concavity_depth(points[idx_of(h)]) > max_depth for h in hs):
        return None  # what is cut off is a convex object: a part that is not (a mug's inside) stays
    return gid


def split_weak_links(
    points: np.ndarray,
    normals: np.ndarray,
    g: PatchGraph,
    seg: np.ndarray,
    *,
    min_points: int,
    max_depth: float,
    spacing: float,
) -> np.ndarray:
    """Per patch, ``seg`` (LCCP segments, per patch) with each segment cut where a part resting on another is held
    to it by a few joining edges only (module docstring). Labels 0..K-1."""
    point_seg = seg[g.patch]
    # only a segment that is not convex as a whole can hold two objects (``merge_convex_unions`` would join them)
    within = np.zeros(int(seg.max()) + 1, dtype=bool)
    for s_id in np.flatnonzero(np.bincount(point_seg) >= 2 * min_points).tolist():
        within[s_id] = concavity_depth(points[point_seg == s_id]) > max_depth
    if not within.any():
        return seg
    root, size, stats = agglomerate(g, seg, within)
    order = np.argsort(g.patch, kind="stable")
    starts = np.searchsorted(g.patch[order], np.arange(len(g.size) + 1))
    out = seg.copy()
    next_label = int(seg.max()) + 1
    for s_id in np.flatnonzero(within).tolist():
        members = np.flatnonzero(seg == s_id)
        roots = np.unique(root[members])
        big = size[roots] >= min_points
        if big.sum() < 2:
            continue
        parts = [members[root[members] == r] for r in roots]
        pos = {int(r): k for k, r in enumerate(roots)}
        joining, total = np.zeros((len(roots), len(roots))), np.zeros((len(roots), len(roots)))
        for (p, q), (j, t) in stats.items():
            if p in pos and q in pos:
                a, b = pos[p], pos[q]
                joining[a, b] = joining[b, a] = j
                total[a, b] = total[b, a] = t
        lab = point_seg.copy()
        lab[point_seg == s_id] = -1
        gid = _regroup(
            points, normals, g, lab, [np.concatenate([order[starts[p] : starts[p + 1]] for p in ps]) for ps in parts],
            big, (joining, total), max_depth=max_depth, spacing=spacing,
        )  # fmt: skip
        if gid is None:
            continue
        heads = sorted(set(gid[big].tolist()))
        alone = np.flatnonzero(
            ~big & (gid == np.arange(len(gid)))
        ).tolist()  # small parts left without a group
        for h in heads[1:] + alone:  # the first group keeps the segment's label
            out[np.concatenate([parts[k] for k in np.flatnonzero(gid == h)])] = next_label
            next_label += 1
    _, out = np.unique(out, return_inverse=True)
    return out.reshape(-1).astype(np.int64)
