"""``run_contact``: free-body logs + model + contact parameters → fitted, checked, written ``ContactReport``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.calibration.config import CalibrateCfg
from real2sim.calibration.contact import params as cp
from real2sim.calibration.contact.evaluate import Evaluation, evaluate
from real2sim.calibration.contact.fit import Residual, fit_windows, model_at
from real2sim.calibration.contact.logs import MotionLog, read_motions
from real2sim.calibration.contact.sim import Roller, layout, make_windows
from real2sim.errors import ConfigError, InputError

HOLDOUT_EVERY = 5
"""Without --holdout, every fifth log (the 5th, 10th, ...) is held out: evaluated, never fitted."""
MAX_WINDOWS = 1000
"""Contact windows fitted when --max-windows is not given (evenly thinned)."""


@dataclass(frozen=True)
class ContactReport:
    params: tuple[cp.ContactParam, ...]
    values: np.ndarray
    initial: np.ndarray
    stderr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    before: Evaluation
    after: Evaluation
    logs: tuple[MotionLog, ...]
    warnings: tuple[str, ...]
    randomization: dict[str, tuple[float, float]]
    randomization_check: dict
    model_path: Path
    fit_s: float
    fit_cpu_s: float
    windows: int
    horizon: float
    scale: float
    """Size [m] of the first body: errors are given in these units."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    cone: str | None = None
    """Friction cone written into the calibrated model ('elliptic'); None: the model's own is kept."""
    friction_cone: str = "pyramidal"
    """The calibrated model's friction cone, written or the model's own: 'elliptic' or 'pyramidal'."""

    def summary(self, when: str = "after") -> dict[str, dict[str, float]]:
        ev = self.after if when == "after" else self.before
        return {s: {w: ev.mean(s, w) for w in ("window", "whole", "rest")} for s in ("train", "holdout")}

    def to_json(self) -> dict:
        def num(x: float):
            return float(x) if math.isfinite(x) else None

        return {
            "kind": "contact",
            "model": self.model_path.name,
            "window_s": self.horizon,
            "friction_cone": self.friction_cone,
            "friction_cone_written": self.cone is not None,
            "fit_windows": self.windows,
            "params": [
                {
                    "name": p.name,
                    "value": float(v),
                    "initial": float(i),
                    "stderr": num(s),
                    "lower": float(lo),
                    "upper": float(hi),
                    "source": "fitted" if math.isfinite(s) else "prior (not identifiable)",
                }
                for p, v, i, s, lo, hi in zip(
                    self.params, self.values, self.initial, self.stderr, self.lower, self.upper, strict=True
                )
            ],
            "errors_in_body_sizes": {"before": self.summary("before"), "after": self.summary("after")},
            "logs": [
                {**a.to_json(), "before": {"window": b.window, "whole": b.whole, "rest": b.rest}}
                for a, b in zip(self.after.runs, self.before.runs, strict=True)
            ],
            "randomization": {k: list(v) for k, v in self.randomization.items()},
            "randomization_check": self.randomization_check,
            "warnings": list(self.warnings),
        }


def split_logs(cfg: CalibrateCfg, lmap, model) -> tuple[list[MotionLog], list[MotionLog], list[str]]:
    train = read_motions(list(cfg.logs), lmap, model)
    notes = [n for m in train for n in m.notes]
    if cfg.holdout:
        return train, read_motions(list(cfg.holdout), lmap, model), notes
    if len(train) < 2:
        return train, [], notes
    hold = [m for k, m in enumerate(train) if k % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
    fit = [m for k, m in enumerate(train) if k % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
    notes.append(f"no --holdout: every {HOLDOUT_EVERY}th log ({len(hold)}) held out, {len(fit)} fitted")
    return fit, hold, notes


def load_model(path: Path):
    import mujoco

    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise InputError(path, f"MuJoCo cannot load the model: {str(e).splitlines()[0]}") from None


def set_cone(model, cone: str) -> str | None:
    """Give ``model`` the friction cone ``cone`` ('elliptic' or 'model'); returns the cone set, None if unchanged."""
    import mujoco

    if cone != "elliptic" or model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC:
        return None
    model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    return "elliptic"


def run_contact(cfg: CalibrateCfg, lmap) -> ContactReport:
    import time

    import mujoco

    from real2sim.calibration.fitting import honest
    from real2sim.calibration.fitting.least_squares import uncertainty
    from real2sim.progress import step

    if lmap.actuators:
        raise InputError(
            lmap.source, "[actuators.*] with [bodies.*]: driven robots are not simulated by the contact fit"
        )
    model = load_model(Path(cfg.model))
    train, hold, notes = split_logs(cfg, lmap, model)
    params = cp.resolve_contact(list(cfg.fit) + [s.name for s in cfg.specs], model)
    if not params:
        raise ConfigError("no contact parameter to fit")
    x0 = np.array([cp.get_value(model, p) for p in params])
    bad = [
        p.name
        for p, v in zip(params, x0, strict=True)
        if not math.isfinite(v) or (p.space != "lin" and v <= 0)
    ]
    if bad:
        raise InputError(cfg.model, f"non-positive or NaN model value of {', '.join(bad)}")
    ts = float(model.opt.timestep)
    bounds = np.array([p.bounds(v, ts) for p, v in zip(params, x0, strict=True)])
    lower, upper = bounds[:, 0], bounds[:, 1]
    x0 = np.clip(x0, lower, upper)
    base = model_at(model, [], np.zeros(0))
    cp.give_priority(base, params)
    cone = set_cone(base, cfg.contact_cone)
    if cone:
        notes.append(
            f"friction cone: {cone} (isotropic Coulomb friction) in the fit and the calibrated model; "
            "--contact-cone model keeps the model's"
        )
    lay = layout(model, train[0])
    roller = Roller(model)
    warnings: list[str] = []
    idle = [i for i, p in enumerate(params) if not p.effective(model)]
    for i in idle:
        warnings.append(
            f"{params[i].name} has no effect with condim {int(model.geom_condim[params[i].obj_id])} "
            "(torsional friction needs condim >= 4, rolling condim 6): kept at its prior"
        )
    free = np.array([i for i in range(len(params)) if i not in idle], int)
    horizon = cfg.contact_window_s
    win = make_windows(
        model, lay, train, horizon, stride=2, contact_only=True, max_windows=cfg.max_windows or MAX_WINDOWS
    )
    if win.state.shape[0] == 0:
        raise InputError(
            cfg.logs[0], "no window of the logs touches anything: nothing tells the contact apart"
        )
    res = Residual(rot_weight=0.0)
    values = x0.copy()
    se = np.full(len(params), np.inf)
    t0, c0 = time.perf_counter(), time.process_time()
    with step(f"contact fit over {win.state.shape[0]} windows of {horizon:g} s"):
        sub = [params[i] for i in free]
        out = fit_windows(base, sub, x0[free], lower[free], upper[free], roller, lay, win, res, cfg.max_nfev)
        values[free] = out.values
        unc = uncertainty(out.jac, out.residual, [p.name for p in sub])
        se[free] = unc.stderr
        worse = honest.unidentifiable(values[free], x0[free], se[free], lower[free], upper[free])
        if worse.size:
            kept = free[worse]
            prev = free
            free = np.array([i for i in free if i not in set(kept.tolist())], int)
            values = x0.copy()
            se = np.full(len(params), np.inf)
            warnings.append(
                "not identifiable from these logs, kept at the initial value: "
                + ", ".join(f"{params[i].name} = {x0[i]:.6g}" for i in kept)
            )
            if free.size:
                sub = [params[i] for i in free]
                start = out.values[np.isin(prev, free)]
                out = fit_windows(base, sub, start, lower[free], upper[free], roller, lay, win, res, 10)
                values[free] = out.values
                se[free] = uncertainty(out.jac, out.residual, [p.name for p in sub]).stderr
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    logs = train + hold
    splits = ["train"] * len(train) + ["holdout"] * len(hold)
    fitted = model_at(base, params, values)
    with step(f"evaluating {len(logs)} logs before and after"):
        before = evaluate(model, lay, roller, logs, splits, horizon)
        after = evaluate(fitted, lay, roller, logs, splits, horizon)
    for what in ("window", "whole", "rest"):
        b, a = before.mean("holdout", what), after.mean("holdout", what)
        if math.isfinite(a) and a > b:
            warnings.append(f"held-out {what} error got worse: {b:.4g} -> {a:.4g} body sizes")
    with step("randomisation ranges"):
        from real2sim.calibration.contact.randomize import contact_ranges

        rand, chk = contact_ranges(
            base, params, values, lower, upper, roller, lay, train[:: max(1, len(train) // 60)], hold
        )
    from real2sim.calibration.contact.sim import close

    close(roller)
    return ContactReport(
        tuple(params), values, x0, se, lower, upper, before, after, tuple(logs), tuple(warnings), rand, chk,
        Path(cfg.model), fit_s, fit_cpu, int(win.state.shape[0]), horizon, lay.scale[0], tuple(notes),
        cone, "elliptic" if base.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal",
    )  # fmt: skip
