"""Randomisation ranges for contact parameters whose ensemble covers real rest positions.

Ranges are the fitted value scaled by exp(±s) in each parameter's free space (log / logit); ``s`` is the smallest
of ``SCALES`` whose ensemble holds ``TARGET`` of the training runs' real rest positions, and the held-out figure is
then measured the same way, next to uniform ±20 % ranges on the same parameters.
"""

from __future__ import annotations

import numpy as np

from real2sim.calibration.contact import params as cp
from real2sim.calibration.contact.logs import MotionLog
from real2sim.calibration.contact.sim import Layout, Roller

SCALES = (0.05, 0.1, 0.2, 0.4, 0.8)
TARGET = 0.9
MEMBERS = 16


def _ensemble(params, lo: np.ndarray, hi: np.ndarray, space: str) -> np.ndarray:
    """Deterministic Latin-hypercube draws (MEMBERS, P) within [lo, hi] (in free space when ``space`` is 'free')."""
    rng = np.random.default_rng(0)
    p = len(params)
    u = (np.stack([rng.permutation(MEMBERS) for _ in range(p)], axis=1) + rng.random((MEMBERS, p))) / MEMBERS
    if space == "free":
        zl, zh = cp.to_free(params, lo), cp.to_free(params, hi)
        return np.array([cp.from_free(params, zl + (zh - zl) * r) for r in u])
    return lo + (hi - lo) * u


def coverage(
    base, params, draws: np.ndarray, roller: Roller, lay: Layout, logs: list[MotionLog]
) -> tuple[float, float]:
    """(fraction of runs whose real rest position lies within the ensemble's 90 % radius about its mean rest
    position, mean radius in body sizes)."""
    from real2sim.calibration.contact.fit import model_at

    rests = []
    for x in draws:
        paths = roller.whole(model_at(base, params, x), lay, logs)
        rests.append(np.stack([p[-1, 0, :3] for p in paths]))
    r = np.stack(rests)  # (M, L, 3)
    real = np.stack([log.pose[lay.bodies[0]][-1, :3] for log in logs])
    centre = r.mean(axis=0)
    rad = np.quantile(np.linalg.norm(r - centre[None], axis=-1), 0.9, axis=0)
    inside = np.linalg.norm(real - centre, axis=-1) <= rad
    return float(inside.mean()), float(rad.mean() / lay.scale[0])


def contact_ranges(
    base, params, values: np.ndarray, lower, upper, roller: Roller, lay: Layout, train, holdout
) -> tuple[dict[str, tuple[float, float]], dict]:
    """Ranges and the check: ``{"scale", "train", "holdout", "holdout_pm20"}`` (fraction, band width)."""
    z = cp.to_free(params, values)
    zl, zh = cp.to_free(params, np.asarray(lower)), cp.to_free(params, np.asarray(upper))
    chosen = SCALES[-1]
    lo = hi = values
    for s in SCALES:
        lo = cp.from_free(params, np.maximum(z - s, zl))
        hi = cp.from_free(params, np.minimum(z + s, zh))
        cov, _ = coverage(base, params, _ensemble(params, lo, hi, "free"), roller, lay, train)
        if cov >= TARGET:
            chosen = s
            break
    check: dict[str, float | tuple[float, float]] = {"scale": chosen}
    check["train"] = coverage(base, params, _ensemble(params, lo, hi, "free"), roller, lay, train)
    if holdout:
        check["holdout"] = coverage(base, params, _ensemble(params, lo, hi, "free"), roller, lay, holdout)
        plo = np.clip(values * 0.8, lower, upper)
        phi = np.clip(values * 1.2, lower, upper)
        check["holdout_pm20"] = coverage(
            base, params, _ensemble(params, plo, phi, "lin"), roller, lay, holdout
        )
    ranges = {p.name: (float(a), float(b)) for p, a, b in zip(params, lo, hi, strict=True)}
    return ranges, check
