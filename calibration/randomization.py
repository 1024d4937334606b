"""Domain-randomisation ranges from the data: the spread of per-log fits around the joint fit, checked by
simulating the randomised ensemble on held-out logs (fraction of real samples inside the ensemble's 5-95 % band
and the band's width); written as YAML and as mjlab / Isaac Lab event terms."""

from __future__ import annotations

import numpy as np


def ranges_from_fits(
    center: np.ndarray,
    per_fit: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    k: float = 2.0,
    log: bool = False,
) -> np.ndarray:
    """(P, 2) ranges: the joint fit ± k × the RMS deviation of the per-log (or per-window) fits from it (with
    ``log``: of their logarithms, a multiplicative range), at least ±1 %, clipped to the bounds."""
    c, f = (np.log(center), np.log(per_fit)) if log else (center, np.asarray(per_fit))
    dev = np.sqrt(np.mean((f - c[None]) ** 2, axis=0))
    if log:
        half = np.maximum(k * dev, 0.01)
        lo, hi = center * np.exp(-half), center * np.exp(half)
    else:
        half = np.maximum(k * dev, 0.01 * np.abs(center))
        lo, hi = center - half, center + half
    return np.stack([np.maximum(lower, lo), np.minimum(upper, hi)], axis=1)


def with_prior(fun, center: np.ndarray, weight: float):
    """A batched residual with a weak pull of log(values) towards ``center`` appended, so that a per-log fit
    keeps the directions that one log cannot identify at the joint fit instead of wandering to a bound."""

    def f(batch: np.ndarray) -> np.ndarray:
        b = np.atleast_2d(batch)
        return np.concatenate([fun(b), weight * (np.log(b) - np.log(center)[None])], axis=1)

    return f


def uniform_ranges(center: np.ndarray, frac: float) -> np.ndarray:
    """(P, 2) ranges ± ``frac`` of each value."""
    return np.stack([center * (1 - frac), center * (1 + frac)], axis=1)


def sample(ranges: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """(n, P) parameter sets drawn uniformly inside the ranges."""
    rng = np.random.default_rng(seed)
    return ranges[:, 0] + rng.random((n, ranges.shape[0])) * (ranges[:, 1] - ranges[:, 0])


def band_coverage(ensemble: np.ndarray, measured: np.ndarray) -> tuple[float, float]:
    """(fraction of measured samples inside the ensemble's 5-95 % band, mean band width); ``ensemble`` (S, N, nj),
    ``measured`` (N, nj)."""
    lo, hi = np.percentile(ensemble, [5, 95], axis=0)
    inside = (measured >= lo) & (measured <= hi)
    return float(np.mean(inside)), float(np.mean(hi - lo))


_EVENT = {
    "damping": ("randomize_joint_parameters", "damping"),
    "frictionloss": ("randomize_joint_parameters", "friction"),
    "armature": ("randomize_joint_parameters", "armature"),
    "kp": ("randomize_actuator_gains", "stiffness"),
    "kv": ("randomize_actuator_gains", "damping"),
    "forcerange": ("randomize_actuator_gains", "effort_limit"),
    "mass": ("randomize_rigid_body_mass", "mass"),
    "friction": ("randomize_rigid_body_material", "static_friction"),
}


def to_yaml(names: list[str], ranges: np.ndarray, extra: dict | None = None) -> str:
    """``name: [lo, hi]`` ranges plus the check figures (``extra``) as YAML."""
    import yaml

    doc = {"ranges": {n: [float(r[0]), float(r[1])] for n, r in zip(names, ranges, strict=True)}}
    if extra:
        doc["check"] = extra
    return yaml.safe_dump(doc, sort_keys=False)


def event_terms(names: list[str], ranges: np.ndarray) -> str:
    """A ready mjlab / Isaac Lab ``EventCfg`` (mode "startup", absolute values via operation "abs") as Python."""
    lines = [
        '"""Domain randomisation from real2sim calibration: ranges are absolute values (operation "abs")."""',
        "",
        "from isaaclab.envs import mdp",
        "from isaaclab.managers import EventTermCfg as EventTerm",
        "from isaaclab.managers import SceneEntityCfg",
        "from isaaclab.utils import configclass",
        "",
        "",
        "@configclass",
        "class CalibratedEventCfg:",
    ]
    body = []
    for n, (lo, hi) in zip(names, ranges, strict=True):
        if n.startswith("delay:"):
            body.append(f"    # {n}: actuator latency {lo:.4g}..{hi:.4g} s (use a delayed actuator model)")
            continue
        kind, rest = n.split(":", 1)
        elem, _, attr = rest.partition(".")
        func, arg = _EVENT.get(attr, (None, None))
        if func is None:
            body.append(f"    # {n}: {lo:.6g}..{hi:.6g} (no standard event term)")
            continue
        key = "actuator_names" if kind == "actuator" else ("joint_names" if kind == "joint" else "body_names")
        var = "".join(c if c.isalnum() else "_" for c in f"{elem}_{attr}").lower()
        dist = f'"{arg}_distribution_params": ({lo:.6g}, {hi:.6g})'
        body.append(
            f'    {var} = EventTerm(func=mdp.{func}, mode="startup", params={{'
            f'"asset_cfg": SceneEntityCfg("robot", {key}=["{elem}"]), {dist}, "operation": "abs"}})'
        )
    return "\n".join(lines + (body or ["    pass"])) + "\n"


def scale_to_coverage(
    center,
    per_fit,
    lower,
    upper,
    coverage_of,
    target: float = 0.9,
    ks: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0),
    log: bool = False,
):
    """The smallest multiplier k in ``ks`` whose ranges reach ``target`` coverage by ``coverage_of(ranges)`` (run
    it on training logs; held-out logs check the result), else the k of the best coverage. Returns (k, ranges,
    {k: coverage})."""
    seen: dict[float, float] = {}
    for k in ks:
        seen[k] = coverage_of(ranges_from_fits(center, per_fit, lower, upper, k, log))
        if seen[k] >= target:
            break
    k = next((k for k in seen if seen[k] >= target), max(seen, key=seen.get))
    return k, ranges_from_fits(center, per_fit, lower, upper, k, log), seen
