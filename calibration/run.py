"""``run_calibrate``: logs + model + parameter names → fitted, validated, written-back ``CalibrationResult``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from real2sim.calibration.config import CalibrateCfg
from real2sim.calibration.outputs.write import CalibrationReport, LogPlot
from real2sim.errors import ConfigError, InputError
from real2sim.outguard import check_output
from real2sim.params import ParamSpec
from real2sim.results import CalibrationResult, LogError, Split
from real2sim.trajectory import Trajectory

if TYPE_CHECKING:
    import mujoco

    from real2sim.calibration.contact.run import ContactReport


def load_model(path: Path):
    import mujoco

    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise InputError(path, f"MuJoCo cannot load the model: {str(e).splitlines()[0]}") from None


def prepare(
    trajs: list[Trajectory], wn: float, smooth_wn: float | None = None, from_qpos: bool = False
) -> list[Trajectory]:
    """Explicit step: derive qvel from qpos (Butterworth + differentiation) where the log has none."""
    from dataclasses import replace

    from real2sim.calibration.logs.signal import butter_filtfilt, differentiate

    out = []
    for tr in trajs:
        if from_qpos:
            tr = replace(tr, qvel=differentiate(tr.time, butter_filtfilt(tr.qpos, smooth_wn or 0.1, 3)))
        elif tr.qvel is None:
            tr = replace(tr, qvel=differentiate(tr.time, butter_filtfilt(tr.qpos, wn, 3)))
        elif smooth_wn is not None:
            tr = replace(tr, qvel=butter_filtfilt(tr.qvel, smooth_wn, 3))
        out.append(tr)
    return out


@dataclass
class Problem:
    """Everything a fit needs, built once (used by run_calibrate and the benchmark)."""

    model: mujoco.MjModel
    params: list
    x0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    log_mask: np.ndarray
    train: list[Trajectory]
    holdout: list[Trajectory]
    notes: list[str]
    model_path: Path | None = None

    def fit_inverse(self, samples, x0: np.ndarray | None = None, **kw):
        """Inverse-dynamics least squares of all parameters on ``samples`` (``inverse.fit_inverse``), from ``x0``
        (default: the initial values) within the problem's bounds; returns (values, fit output)."""
        from real2sim.calibration.fitting.inverse import fit_inverse

        tr = self.train[0]
        x = self.x0 if x0 is None else x0
        return fit_inverse(
            self.model, self.params, x, self.lower, self.upper, samples, tr.joint_names, tr.actuator_names,
            log_mask=self.log_mask, **kw,
        )  # fmt: skip


def build_problem(cfg: CalibrateCfg) -> Problem:
    from real2sim.calibration.fitting.delay import estimate_delays
    from real2sim.calibration.maps.logmap import load_map, load_trajectories
    from real2sim.calibration.params.resolve import default_bounds, get_value, resolve

    cfg.validate()
    model = load_model(Path(cfg.model))
    lmap = load_map(cfg.map)
    notes: list[str] = []
    train, hold = [], []
    for paths, dest in ((cfg.logs, train), (cfg.holdout, hold)):
        for p in paths:
            trs, n = load_trajectories(p, lmap, model, holdout=dest is hold)
            notes += n
            if cfg.despike is not None:
                from real2sim.calibration.logs.signal import despike

                trs = [despike(tr, cfg.despike) for tr in trs]
            dest.extend(trs)
    train = prepare(train, cfg.velocity_filter_wn, cfg.smooth_qvel_wn, cfg.qvel_from_qpos)
    hold = prepare(hold, cfg.velocity_filter_wn, cfg.smooth_qvel_wn, cfg.qvel_from_qpos)
    by_name = {s.name: s for s in cfg.specs}
    specs = list(cfg.specs) + [ParamSpec(n) for n in cfg.fit if n not in by_name]
    params = resolve(specs, model)
    x0 = np.array([p.spec.initial if p.spec.initial is not None else get_value(model, p) for p in params])
    for i, p in enumerate(params):  # a delay already in the model (MuJoCo actuator delay) is the fit's start
        if p.kind == "delay" and model.actuator_delay[p.obj_id] > 0:
            if p.spec.initial is None:
                x0[i] = float(model.actuator_delay[p.obj_id])
            model.actuator_delay[p.obj_id] = 0.0  # the simulator applies the fitted delay itself
    delays_needed = [
        i for i, p in enumerate(params) if p.kind == "delay" and p.spec.initial is None and x0[i] == 0
    ]
    if delays_needed and cfg.delay_init == "xcorr":
        est = estimate_delays(model, train)
        acts = train[0].actuator_names
        for i in delays_needed:
            if params[i].element in acts:
                x0[i] = est[acts.index(params[i].element)]
    bounds = np.array([default_bounds(p, v) for p, v in zip(params, x0, strict=True)])
    lower, upper = bounds[:, 0], bounds[:, 1]
    x0 = np.clip(x0, lower, upper)
    log_mask = np.array([p.spec.log_scale for p in params], bool)
    from real2sim.calibration.params.inertial import Reparam, second_moments

    for t in Reparam(params, x0).triplets:
        if np.any(second_moments(x0[list(t)]) <= 0):
            notes.append(
                f"body {params[t[0]].element!r}: initial principal moments {x0[list(t)].tolist()} violate "
                "the triangle inequality (not a rigid body); the fit starts from the nearest physical one"
            )
    return Problem(model, params, x0, lower, upper, log_mask, train, hold, notes, Path(cfg.model))


def make_objective(prob: Problem, trajs: list[Trajectory], cfg: CalibrateCfg, max_windows: int | None = None):
    from real2sim.calibration.sim.objective import WindowObjective
    from real2sim.calibration.sim.simulate import Simulator, make_windows

    win = make_windows(trajs, cfg.window_s, float(prob.model.opt.timestep), max_windows)
    sim = Simulator(prob.model, win, trajs[0].joint_names, trajs[0].actuator_names)
    setups = None
    if cfg.gain_constant or cfg.log_models:
        from real2sim.calibration.sim.setups import log_setups

        setups = log_setups(prob, trajs, cfg, load_model)
    return WindowObjective(
        sim, prob.params, trajs[0].actuator_names, qvel_weight=cfg.qvel_weight, setups=setups
    )


def _delays_of(prob: Problem, values: np.ndarray) -> np.ndarray:
    acts = prob.train[0].actuator_names
    d = np.zeros(len(acts))
    for p, v in zip(prob.params, values, strict=True):
        if p.kind == "delay" and p.element in acts:
            d[acts.index(p.element)] = v
    return d


def fit_problem(prob: Problem, cfg: CalibrateCfg):
    """Warm start (inverse dynamics) and/or trajectory matching. Returns (values, fit output, objective)."""
    from real2sim.calibration.fitting.inverse import id_samples
    from real2sim.calibration.params.inertial import fit_physical
    from real2sim.progress import step

    x = prob.x0.copy()
    out = None
    if cfg.method in ("inverse", "inverse+windows") and any(p.kind != "delay" for p in prob.params):
        with step("inverse-dynamics least squares"):
            s = id_samples(prob.train, wn=cfg.velocity_filter_wn, max_samples=4000)
            x, out = prob.fit_inverse(s, x, prior_weight=cfg.prior_weight)
    obj = make_objective(prob, prob.train, cfg, cfg.max_windows)
    if cfg.method in ("windows", "inverse+windows"):
        with step(f"trajectory matching over {len(obj.sim.win.start)} windows"):
            out = fit_physical(
                obj, prob.params, x, prob.lower, prob.upper, prob.log_mask, max_nfev=cfg.max_nfev
            )
            x = out.values
    return x, out, obj


def calibrate(cfg: CalibrateCfg) -> CalibrationReport:
    """Fit, then evaluate every log before and after: the result and what its report shows (nothing written)."""
    from real2sim.calibration.fitting.least_squares import cost_of, uncertainty

    prob = build_problem(cfg)
    values, out, obj = fit_problem(prob, cfg)
    if out is None:  # method inverse with only delays to fit: no least squares ran, so no Jacobian
        raise ConfigError("method 'inverse' fits no delay: add a physical parameter or use inverse+windows")
    names = [p.name for p in prob.params]
    r_final = obj(values[None])[0]
    r_init = obj(prob.x0[None])[0]
    warnings: list[str] = list(prob.notes)
    if cfg.method == "inverse":
        jac = out.jac
        unc = uncertainty(
            jac, out.residual, [n for n, p in zip(names, prob.params, strict=True) if p.kind != "delay"]
        )
        se = np.full(len(names), np.inf)
        corr = np.eye(len(names))
        idx = [i for i, p in enumerate(prob.params) if p.kind != "delay"]
        se[idx] = unc.stderr
        corr[np.ix_(idx, idx)] = unc.correlation
    else:
        unc = uncertainty(out.jac, out.residual, names)
        se, corr = unc.stderr, unc.correlation
    for g in unc.groups:
        warnings.append(f"not identifiable from these logs (correlated group): {', '.join(g)}")
    # --- honest results (issue 18): unidentifiable parameters keep their prior; unforced / worse warnings
    from real2sim.calibration.fitting import honest

    if (w := honest.unforced_warning(prob.model, prob.train)) is not None:
        warnings.append(w)
    fitted = np.array([cfg.method != "inverse" or p.kind != "delay" for p in prob.params])
    bad = np.array(
        [i for i in honest.unidentifiable(values, prob.x0, se, prob.lower, prob.upper) if fitted[i]], int
    )
    if bad.size:
        values, out2, free = honest.refit_fixed(prob, cfg, obj, bad)
        se = np.full(len(names), np.inf)
        corr = np.eye(len(names))
        if out2 is not None:
            unc2 = uncertainty(out2.jac, out2.residual, [names[i] for i in free])
            se[free], corr[np.ix_(free, free)] = unc2.stderr, unc2.correlation
        se[bad] = np.inf
        r_final = obj(values[None])[0]
        warnings.append(
            "not identifiable from these logs, kept at the initial value (not written into the model): "
            + ", ".join(f"{names[i]} = {prob.x0[i]:.6g}" for i in bad)
        )
    # --- end honest results
    # per-log errors
    from real2sim.calibration.fitting.inverse import id_samples, joint_torques, torque_r2
    from real2sim.calibration.outputs.report import segments
    from real2sim.calibration.params.resolve import apply
    from real2sim.calibration.sim.simulate import clone

    calibrated = clone(prob.model)
    apply(
        calibrated,
        [p for p in prob.params if p.kind != "delay"],
        np.array([v for v, p in zip(values, prob.params, strict=True) if p.kind != "delay"]),
    )
    logs: list[LogError] = []
    plots: list[LogPlot] = []
    all_trajs = prob.train + prob.holdout
    splits: list[Split] = ["train" if k < len(prob.train) else "holdout" for k in range(len(all_trajs))]
    eval_obj = make_objective(prob, all_trajs, cfg)
    eq_b, _ = eval_obj.window_rmse(prob.x0)
    eq_a, ev_a = eval_obj.window_rmse(values)
    qp_b, _ = eval_obj.predict(prob.x0[None])
    qp_a, _ = eval_obj.predict(values[None])
    segs = (segments(eval_obj.sim, qp_b[0]), segments(eval_obj.sim, qp_a[0]))
    li = eval_obj.sim.win.log_index
    for k, tr in enumerate(all_trajs):
        sel = li == k
        if not np.any(sel):
            continue
        r2 = None
        if tr.ctrl is not None:
            s = id_samples([tr], wn=cfg.velocity_filter_wn)
            pred, appl = joint_torques(calibrated, s, tr.joint_names, tr.actuator_names)
            r2 = tuple(round(float(v), 6) for v in torque_r2(pred, appl))
        name = Path(tr.source).name
        logs.append(
            LogError(
                file=name,
                split=splits[k],
                rmse_qpos=float(np.sqrt(np.mean(eq_a[sel] ** 2))),
                rmse_qvel=float(np.sqrt(np.mean(ev_a[sel] ** 2))),
                torque_r2=r2,
                rmse_qpos_initial=float(np.sqrt(np.mean(eq_b[sel] ** 2))),
            )
        )
        plots.append(
            LogPlot(name, splits[k], tr.joint_names, tr.time, tr.qpos, tuple(segs[0][k]), tuple(segs[1][k]))
        )
    train_err = np.sqrt(np.mean(eq_a[np.isin(li, np.arange(len(prob.train)))] ** 2))
    for le in logs:
        if le.split == "holdout" and le.rmse_qpos > cfg.holdout_warn_ratio * train_err:
            warnings.append(
                f"held-out log {le.file}: joint-angle RMSE {le.rmse_qpos:.4g} rad is "
                f"{le.rmse_qpos / max(train_err, 1e-12):.1f}x the training error {train_err:.4g} rad — "
                "the model structure (or payload) does not match this log"
            )
    warnings += honest.worse_warnings(cost_of(r_init), cost_of(r_final), cfg.method, logs)
    rand = {}
    for p, v, s, b_lo, b_hi in zip(prob.params, values, se, prob.lower, prob.upper, strict=True):
        if math.isfinite(s):
            rand[p.name] = (float(max(b_lo, v - 2 * s)), float(min(b_hi, v + 2 * s)))
        else:
            rand[p.name] = (float(b_lo), float(b_hi))
    if cfg.randomize == "logs" and len(prob.train) > 1:
        from real2sim.calibration.fitting.randomization import data_ranges

        rand, chk = data_ranges(prob, cfg, values, make_objective)
        warnings.append(
            f"randomisation: {chk['coverage']:.0%} of {chk['on']} samples in the ensemble's 5-95 % band "
            f"(ranges fit ± {chk['k']:g} × the per-piece spread, observation noise std "
            f"{', '.join(f'{x:.3g}' for x in chk['noise_std'])} added)"
        )
    result = CalibrationResult(
        params=tuple(p.spec for p in prob.params),
        values=values,
        initial=prob.x0.copy(),
        stderr=se,
        correlation=corr,
        cost_initial=cost_of(r_init),
        cost_final=cost_of(r_final),
        lower=prob.lower,
        upper=prob.upper,
        logs=tuple(logs),
        randomization=rand,
        warnings=tuple(warnings),
    )
    obj.sim.close()
    eval_obj.sim.close()
    return CalibrationReport(result, Path(cfg.model), tuple(prob.params), tuple(plots))


def run_calibrate(cfg: CalibrateCfg) -> CalibrationResult | ContactReport:
    """``calibrate``, then write its outputs to ``cfg.out_dir`` when one is set: a ``CalibrationResult`` of a
    robot's joints, or a ``ContactReport`` when the map names free bodies (``[bodies.NAME]``)."""
    from real2sim.calibration.maps.logmap import load_map
    from real2sim.calibration.outputs.write import write_outputs

    cfg.validate()
    inputs = (cfg.model, cfg.map, cfg.package, *cfg.logs, *cfg.holdout, *cfg.log_models)
    if cfg.out_dir is not None:
        check_output(cfg.out_dir, inputs, overwrite=cfg.overwrite)
    lmap = load_map(cfg.map)
    if lmap.bodies:
        from real2sim.calibration.contact.outputs import run_and_write

        return run_and_write(cfg, lmap)
    if cfg.package is not None:
        from real2sim.calibration.outputs.package import package_files

        package_files(Path(cfg.package))  # fail before fitting
    report = calibrate(cfg)
    if cfg.package is not None:
        report = _write_package(report, Path(cfg.package))
    if cfg.out_dir is not None:
        write_outputs(report, cfg.out_dir, plots=cfg.report, overwrite=cfg.overwrite, inputs=inputs)
    return report.result


def _write_package(report: CalibrationReport, pkg: Path) -> CalibrationReport:
    """Calibrated values into the package (identifiable ones only); what it could not place becomes a warning."""
    from dataclasses import replace

    from real2sim.calibration.outputs.package import write_package

    res = report.result
    edit = write_package(pkg, list(report.params), res.values, np.isfinite(res.stderr))
    extra = [f"package {pkg.name}: not written: {s}" for s in edit.skipped] + edit.notes
    return replace(report, result=replace(res, warnings=tuple(res.warnings) + tuple(extra)))
