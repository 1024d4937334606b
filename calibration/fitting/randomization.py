"""Domain-randomisation ranges from the data: the spread of per-piece (or per-log) fits around the joint fit,
checked as a prediction band: the randomised ensemble simulated on held-out logs plus the fit's residual noise
(fraction of real samples inside the band's 5-95 % and its width); written as YAML and as mjlab / Isaac Lab
event terms."""

from __future__ import annotations

import numpy as np


def ranges_from_fits(
    center: np.ndarray,
    per_fit: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    k: float = 2.0,
    log: bool | np.ndarray = False,
) -> np.ndarray:
    """(P, 2) ranges: the joint fit ± k × the RMS deviation of the per-log (or per-window) fits from it (where
    ``log``, a bool or a per-parameter mask: of their logarithms, a multiplicative range), at least ±1 %, clipped
    to the bounds."""
    log = np.broadcast_to(np.asarray(log, bool), np.shape(center)) & (np.asarray(center) > 0)
    per_fit = np.asarray(per_fit, float)
    c = np.where(log, np.log(np.where(log, center, 1.0)), center)
    f = np.where(log[None], np.log(np.where(log[None], np.maximum(per_fit, 1e-300), 1.0)), per_fit)
    dev = np.sqrt(np.mean((f - c[None]) ** 2, axis=0))
    half_log = np.maximum(k * dev, 0.01)
    half_lin = np.maximum(k * dev, 0.01 * np.abs(center))
    lo = np.where(log, center * np.exp(-half_log), center - half_lin)
    hi = np.where(log, center * np.exp(half_log), center + half_lin)
    return np.stack([np.maximum(lower, lo), np.minimum(upper, hi)], axis=1)


def pieces(tr, seconds: float) -> list:
    """``tr`` cut into consecutive pieces of about ``seconds`` (the last one absorbs the remainder), each a
    ``Trajectory`` of its own: per-piece fits sample the spread more often than per-log ones."""
    from dataclasses import replace

    n = max(1, int(round((tr.time[-1] - tr.time[0]) / seconds)))
    cuts = np.linspace(0, tr.n, n + 1).round().astype(int)
    out = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        cut = {
            k: getattr(tr, k)[a:b] for k in ("qvel", "ctrl", "torque", "enable") if getattr(tr, k) is not None
        }
        poses = {k: v[a:b] for k, v in tr.object_poses.items()}
        out.append(replace(tr, time=tr.time[a:b], qpos=tr.qpos[a:b], object_poses=poses, **cut))
    return out


def with_prior(fun, center: np.ndarray, weight: float):
    """A batched residual with a weak pull towards ``center`` appended (log difference for positive values,
    relative difference otherwise), so that a per-log fit keeps the directions that one log cannot identify at
    the joint fit instead of wandering to a bound."""
    pos = np.asarray(center) > 0
    c = np.where(pos, np.log(np.where(pos, center, 1.0)), center)
    scale = np.where(pos, 1.0, np.maximum(np.abs(center), 1e-6))

    def f(batch: np.ndarray) -> np.ndarray:
        b = np.atleast_2d(batch)
        z = np.where(pos[None], np.log(np.where(pos[None], np.maximum(b, 1e-300), 1.0)), b)
        return np.concatenate([fun(b), weight * (z - c[None]) / scale[None]], axis=1)

    return f


def uniform_ranges(center: np.ndarray, frac: float) -> np.ndarray:
    """(P, 2) ranges ± ``frac`` of each value."""
    return np.stack([center * (1 - frac), center * (1 + frac)], axis=1)


def sample(ranges: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """(n, P) parameter sets drawn uniformly inside the ranges."""
    rng = np.random.default_rng(seed)
    return ranges[:, 0] + rng.random((n, ranges.shape[0])) * (ranges[:, 1] - ranges[:, 0])


def residual_std(pred: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Per-joint RMS of ``measured - pred`` (arrays (..., nj)): the residual noise the central fit leaves."""
    r = np.asarray(measured, float) - np.asarray(pred, float)
    return np.sqrt(np.nanmean(r.reshape(-1, r.shape[-1]) ** 2, axis=0))


def band_coverage(
    ensemble: np.ndarray,
    measured: np.ndarray,
    noise_std: float | np.ndarray = 0.0,
    draws: int = 8,
    seed: int = 0,
) -> tuple[float, float]:
    """(fraction of measured samples inside the ensemble's 5-95 % band, mean band width); ``ensemble`` (S, N, nj),
    ``measured`` (N, nj). With ``noise_std`` (scalar or per joint) the band is a prediction band: each member
    plus ``draws`` Gaussian draws of the residual noise (measurement noise and what no parameter explains)."""
    ens = np.asarray(ensemble, float)
    sd = np.broadcast_to(np.asarray(noise_std, float), ens.shape[-1:])
    if np.any(sd > 0):
        z = np.random.default_rng(seed).standard_normal((ens.shape[0], draws, *ens.shape[1:]))
        ens = (ens[:, None] + z * sd).reshape(-1, *ens.shape[1:])
    lo, hi = np.percentile(ens, [5, 95], axis=0)
    inside = (measured >= lo) & (measured <= hi)
    return float(np.mean(inside)), float(np.mean(hi - lo))


# Isaac Lab event terms (isaaclab.envs.mdp) per attribute: (function, its distribution-params prefix)
_ISAAC = {
    "frictionloss": ("randomize_joint_parameters", "friction"),
    "armature": ("randomize_joint_parameters", "armature"),
    "kp": ("randomize_actuator_gains", "stiffness"),
    "kv": ("randomize_actuator_gains", "damping"),
    "mass": ("randomize_rigid_body_mass", "mass"),
}
# mjlab (mdp.randomize_field) per attribute: the MuJoCo model field it writes
_MJLAB = {
    "damping": "dof_damping",
    "frictionloss": "dof_frictionloss",
    "armature": "dof_armature",
    "mass": "body_mass",
    "friction": "geom_friction",
}


def _split(name: str) -> tuple[str, str, str]:
    kind, rest = name.split(":", 1)
    elem, _, attr = rest.partition(".")
    return kind, elem, attr


def _var(elem: str, attr: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in f"{elem}_{attr}").lower().strip("_")


def to_yaml(
    names: list[str], ranges: np.ndarray, extra: dict | None = None, noise: dict | None = None
) -> str:
    """``name: [lo, hi]`` ranges, the per-joint observation noise std (``noise``: the fit's residual, part of
    the prediction band) and the check figures (``extra``) as YAML."""
    import yaml

    doc: dict = {"ranges": {n: [float(r[0]), float(r[1])] for n, r in zip(names, ranges, strict=True)}}
    if noise:
        doc["observation_noise_std"] = {k: float(v) for k, v in noise.items()}
    if extra:
        doc["check"] = extra
    return yaml.safe_dump(doc, sort_keys=False)


def _noise_lines(noise: dict | None, indent: str) -> list[str]:
    return [
        f"{indent}# observation noise on joint {j}: Gaussian std {sd:.6g} (the fit's residual; add it to the"
        " joint-position observation)"
        for j, sd in (noise or {}).items()
    ]


def event_terms(names: list[str], ranges: np.ndarray, noise: dict | None = None) -> str:
    """A ready Isaac Lab ``EventCfg`` (mode "startup", absolute values, operation "abs") as Python; parameters
    without a standard event term (joint damping, force limits, delays) are listed as comments."""
    lines = [
        '"""Domain randomisation from real2sim calibration (Isaac Lab): absolute ranges (operation "abs")."""',
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
        kind, elem, attr = _split(n)
        func, arg = _ISAAC.get(attr, (None, None))
        if func is None or kind == "delay":
            body.append(
                f"    # {n}: {lo:.6g}..{hi:.6g} (no standard event term: set it in the actuator/joint cfg)"
            )
            continue
        key = "body_names" if kind == "body" else "joint_names"  # actuator gains are addressed by joint
        target = elem if kind != "actuator" else ".*"  # an MJCF actuator name is not an Isaac Lab joint name
        body.append(
            f'    {_var(elem, attr)} = EventTerm(func=mdp.{func}, mode="startup", params={{'
            f'"asset_cfg": SceneEntityCfg("robot", {key}=["{target}"]), '
            f'"{arg}_distribution_params": ({lo:.6g}, {hi:.6g}), "operation": "abs"}})'
        )
    body += _noise_lines(noise, "    ")
    if all(ln.lstrip().startswith("#") for ln in body):  # a class body of comments only is not Python
        body.append("    pass")
    return "\n".join(lines + body) + "\n"


def mjlab_event_terms(names: list[str], ranges: np.ndarray, noise: dict | None = None) -> str:
    """The same ranges as mjlab ``EventTermCfg`` terms (``mdp.randomize_field`` on MuJoCo model fields) as Python;
    actuator gains, force limits and delays (several fields or none) are listed as comments."""
    lines = [
        '"""Domain randomisation from real2sim calibration (mjlab): absolute ranges on MuJoCo model fields."""',
        "",
        "from mjlab.envs import mdp",
        "from mjlab.managers.event_manager import EventTermCfg",
        "from mjlab.managers.scene_entity_config import SceneEntityCfg",
        "",
        "EVENTS = {",
    ]
    for n, (lo, hi) in zip(names, ranges, strict=True):
        kind, elem, attr = _split(n)
        field = _MJLAB.get(attr)
        if field is None or kind == "delay":
            note = "kp moves gainprm[0] and biasprm[1] together" if attr == "kp" else "no single model field"
            lines.append(f"    # {n}: {lo:.6g}..{hi:.6g} ({note})")
            continue
        key = {"joint": "joint_names", "body": "body_names", "geom": "geom_names"}[kind]
        lines.append(
            f'    "{_var(elem, attr)}": EventTermCfg(mode="startup", func=mdp.randomize_field, '
            f'domain_randomization=True, params={{"asset_cfg": SceneEntityCfg("robot", {key}=["{elem}"]), '
            f'"field": "{field}", "ranges": ({lo:.6g}, {hi:.6g}), "operation": "abs"}}),'
        )
    return "\n".join([*lines, *_noise_lines(noise, "    "), "}"]) + "\n"


def data_ranges(prob, cfg, values: np.ndarray, make_objective, prior: float = 0.1, n: int = 32):
    """Ranges from the spread of per-piece fits (each training log cut into pieces of 2 s or two fit windows,
    each piece fitted warm-started at the joint fit with a weak log prior towards it; the same windows as one
    per-log fit each, so about the same cost), scaled to cover 90 % of the training windows with the residual
    noise of the joint fit added (a prediction band), and their check: an ``n``-member ensemble on the held-out
    windows (or the training windows when there are no held-out logs). Returns ({name: (lo, hi)}, {"coverage",
    "band_width", "on", "k", "noise_std"})."""
    from real2sim.calibration.fitting.least_squares import fit_bounded

    per = []
    for tr in (q for t in prob.train for q in pieces(t, max(2.0, 2 * cfg.window_s))):
        obj = make_objective(prob, [tr], cfg, cfg.max_windows)
        fun = with_prior(obj, values, prior)
        per.append(fit_bounded(fun, values, prob.lower, prob.upper, prob.log_mask, max_nfev=10).values)
        obj.sim.close()
    log = prob.lower > 0
    train = make_objective(prob, prob.train, cfg, cfg.max_windows)
    nj = train.sim.meas_q.shape[-1]
    sd = residual_std(train.predict(values[None])[0][0], train.sim.meas_q)

    def coverage(o, rg):
        qp, _ = o.predict(sample(rg, n))
        return band_coverage(qp.reshape(n, -1, nj), o.sim.meas_q.reshape(-1, nj), sd)

    k, rg, _ = scale_to_coverage(
        values, np.array(per), prob.lower, prob.upper, lambda r: coverage(train, r)[0], log=log
    )
    train.sim.close()
    obj = make_objective(prob, prob.holdout or prob.train, cfg)
    cov, width = coverage(obj, rg)
    obj.sim.close()
    names = [p.name for p in prob.params]
    check = {"coverage": cov, "band_width": width, "on": "holdout" if prob.holdout else "train", "k": k}
    check["noise_std"] = [float(x) for x in sd]
    return {nm: (float(a), float(b)) for nm, (a, b) in zip(names, rg, strict=True)}, check


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
    k = next((k for k in seen if seen[k] >= target), max(seen, key=seen.__getitem__))
    return k, ranges_from_fits(center, per_fit, lower, upper, k, log), seen
