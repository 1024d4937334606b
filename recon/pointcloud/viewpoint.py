"""Which side of the support is up, and whether the sensor origins can be where the sensors were.

A scan in a map frame (a registered map, a survey with the floor at z = 0, a merged multi-scan file) carries no
sensor at its origin. Two facts of a single line of sight decide without one:

- **Occlusion side.** A sensor above a support cannot see under it: inside the support's footprint the points lie
  on the sensor's side. The side holding more points within ``max_height`` of the plane is up.
- **Shadows.** A ray from the true sensor to a point above the support ends there; the support behind that point
  is hidden. Where the rays from a claimed origin through the points above the support meet the support plane,
  the support must mostly be unseen. When it is mostly seen, the origin is not the sensor's.

Origins that fail either test are not used (no normal orientation toward them, no free-space carving); a warning
says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from real2sim.recon.pointcloud.config import PointCloudReconCfg
from real2sim.recon.pointcloud.support import SupportFit, inside_polygon

log = logging.getLogger(__name__)

MAX_SHADOW_SEEN = 0.25
"""Origins are rejected when more than this share of the shadows they cast on the support's seen extent land on
measured support points (true sensors: a few per cent, from mixed pixels at silhouettes)."""
MAX_SENSORS = 32
"""With more distinct sensor positions than this (a moving sensor), the shadow test is left out."""
MIN_SHADOWS = 50
"""Fewer shadows inside the support's extent than this leave the shadow test undecided."""


@dataclass(frozen=True)
class SideCounts:
    """Points inside the support's footprint above (``above``) and below (``below``) it, within ``min_height`` ..
    ``max_height`` of the plane."""

    above: int
    below: int

    def flipped(self, min_points: int) -> bool:
        """The geometry says the free side is -z: clearly more points under the support than over it."""
        return self.below > self.above and self.below >= min_points


def side_counts(w: np.ndarray, inside: np.ndarray, cfg: PointCloudReconCfg) -> SideCounts:
    """``SideCounts`` of scene-frame points ``w`` (``inside``: within the support's footprint)."""
    z = w[:, 2]
    above = inside & (z >= cfg.min_height) & (z <= cfg.max_height)
    below = inside & (z <= -cfg.min_height) & (z >= -cfg.max_height)
    return SideCounts(int(above.sum()), int(below.sum()))


def shadow_seen_fraction(
    w: np.ndarray, w_orig: np.ndarray, support: np.ndarray, cand: np.ndarray, hull: np.ndarray, voxel: float
) -> tuple[float, int]:
    """Share of the shadows of the points ``cand`` (indices into ``w``), cast from their origins onto the plane
    z = 0 inside ``hull``, that land on a cell holding measured support points (``support`` mask), and how many
    shadows landed inside ``hull``."""
    sup = w[support, :2]
    if len(sup) < 3 or len(cand) == 0:
        return 0.0, 0
    x, y = hull[:, 0], hull[:, 1]
    area = 0.5 * abs(float(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))))
    cell = max(2.0 * voxel, 3.0 * float(np.sqrt(area / len(sup))))  # a few mean point spacings: no holes
    lo = sup.min(axis=0)
    ij = np.floor((sup - lo) / cell).astype(np.int64)
    grid = np.zeros(ij.max(axis=0) + 1, dtype=bool)
    grid[ij[:, 0], ij[:, 1]] = True
    p, o = w[cand], w_orig[cand]
    t = o[:, 2] / (o[:, 2] - p[:, 2])  # origins above every candidate: t > 1, the plane behind the point
    q = o[:, :2] + t[:, None] * (p[:, :2] - o[:, :2])
    ok = np.isfinite(q).all(axis=1)
    q = q[ok][inside_polygon(q[ok], hull)]
    if len(q) == 0:
        return 0.0, 0
    qi = np.floor((q - lo) / cell).astype(np.int64)
    inb = np.all((qi >= 0) & (qi < grid.shape), axis=1)
    seen = np.zeros(len(q), dtype=bool)
    seen[inb] = grid[qi[inb, 0], qi[inb, 1]]
    return float(seen.mean()), len(q)


def origin_problem(
    w: np.ndarray,
    w_orig: np.ndarray,
    inside: np.ndarray,
    support: np.ndarray,
    hull: np.ndarray,
    sides: SideCounts,
    cfg: PointCloudReconCfg,
) -> str | None:
    """Why the scene-frame origins ``w_orig`` cannot be the sensors' positions, or ``None`` when they can."""
    oz = w_orig[:, 2]
    if not bool((oz > cfg.plane_distance).all()):
        return (
            f"a sensor origin lies on or below the support (z = {float(oz.min()):.3g} m in the scene frame)"
        )
    z = w[:, 2]
    cand = inside & (z >= cfg.min_height) & (z <= cfg.max_height) & (oz > z)
    # each sensor hides the support only from itself: shadows are checked against its own support points
    if bool(np.all(w_orig == w_orig[:1])):
        uniq, sid = w_orig[:1], np.zeros(len(w_orig), dtype=np.int64)
    else:
        uniq, sid = np.unique(np.round(w_orig, 6), axis=0, return_inverse=True)
        sid = sid.reshape(-1)
    seen, n = 0.0, 0
    for k in range(len(uniq) if len(uniq) <= MAX_SENSORS else 0):
        mine = sid == k
        f, m = shadow_seen_fraction(w, w_orig, support & mine, np.flatnonzero(cand & mine), hull, cfg.voxel)
        seen, n = seen + f * m, n + m
    frac = seen / max(n, 1)
    if n >= MIN_SHADOWS:
        if frac > MAX_SHADOW_SEEN:
            return (
                f"{frac:.0%} of the support behind the objects, seen from the origin, was measured "
                "(a sensor cannot see behind them)"
            )
        return None
    if sides.flipped(cfg.min_object_points):
        return f"the support's far side from the origin holds more points ({sides.below} vs {sides.above})"
    return None


def warn_origins_ignored(name: str, why: str) -> None:
    log.warning(
        "%s: sensor origins ignored (%s); no free-space carving, normals oriented from the geometry "
        "(give --sensor-origin X,Y,Z if known)",
        name,
        why,
    )


def settle_frame(
    pts: np.ndarray,
    origins: np.ndarray | None,
    fit: SupportFit,
    cfg: PointCloudReconCfg,
    name: str,
    refit: Callable[[np.ndarray], SupportFit] | None,
) -> tuple[SupportFit, np.ndarray | None]:
    """The support fit with its up side checked, and the per-point ``origins`` (input frame) when they can be the
    sensors' (else ``None``, with a warning). Without usable origins, the occlusion side decides up: a fit
    oriented the other way is redone by ``refit(up)`` (``None``: up was given, keep it)."""
    T = fit.world_from_input
    w = pts @ T[:3, :3].T + T[:3, 3]
    inside = inside_polygon(w[:, :2], fit.hull, cfg.crop_margin)
    sides = side_counts(w, inside, cfg)
    if origins is not None:
        one = bool(np.all(origins == origins[:1]))  # one sensor: map one row
        w_orig = (
            np.broadcast_to(origins[:1] @ T[:3, :3].T + T[:3, 3], w.shape)
            if one
            else origins @ T[:3, :3].T + T[:3, 3]
        )
        support = inside & (np.abs(w[:, 2]) < cfg.plane_distance)
        why = origin_problem(w, w_orig, inside, support, fit.hull, sides, cfg)
        if why is None:
            return fit, origins
        warn_origins_ignored(name, why)
    if refit is not None and sides.flipped(cfg.min_object_points):
        fit = refit(-fit.normal)
    return fit, None
