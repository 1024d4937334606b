"""The published DFKI models simulated in their own equations (the baselines the calibration must beat), with
the same windows, held torques and interpolation as the MuJoCo simulator; and the benchmark's held-out torque
diagnostics against the published double pendulum."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from real2sim.calibration.sim.simulate import Windows

G = 9.81

SIMPLE_PENDULUM_PUBLISHED = {
    "J": 6.259e-02,
    "mcx": 1.022e-01,
    "Fv": 4.707e-02,
    "Fc": 1.839e-01,
    "offset": -7.586e-02,
}


def simple_pendulum_rhs(p: dict) -> Callable:
    def f(q, qd, tau):
        return (
            tau - p["offset"] - p["mcx"] * G * np.sin(q) - p["Fv"] * qd - p["Fc"] * np.arctan(100 * qd)
        ) / p["J"]

    return f


def load_double_pendulum_params(path: Path) -> dict:
    import yaml

    return {k: float(v) for k, v in yaml.safe_load(Path(path).read_text()).items()}


def double_pendulum_mass(p: dict, q2: np.ndarray) -> np.ndarray:
    c2 = np.cos(q2)
    m11 = (
        p["I1"]
        + p["I2"]
        + p["m2"] * p["l1"] ** 2
        + 2 * p["m2"] * p["l1"] * p["r2"] * c2
        + p["gr"] ** 2 * p["Ir"]
        + p["Ir"]
    )
    m12 = p["I2"] + p["m2"] * p["l1"] * p["r2"] * c2 - p["gr"] * p["Ir"]
    m22 = p["I2"] + p["gr"] ** 2 * p["Ir"]
    return np.stack([np.stack([m11, m12], -1), np.stack([m12, m22 * np.ones_like(m11)], -1)], -2)


def double_pendulum_bias(p: dict, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Coriolis + gravity + friction: tau = M qdd + bias(q, qd)."""
    q1, q2 = q[..., 0], q[..., 1]
    d1, d2 = qd[..., 0], qd[..., 1]
    s2 = np.sin(q2)
    h = p["m2"] * p["l1"] * p["r2"] * s2
    c1 = -2 * h * d1 * d2 - h * d2**2
    c2 = h * d1**2
    g1 = G * (p["m1"] * p["r1"] + p["m2"] * p["l1"]) * np.sin(q1) + G * p["m2"] * p["r2"] * np.sin(q1 + q2)
    g2 = G * p["m2"] * p["r2"] * np.sin(q1 + q2)
    f1 = p["b1"] * d1 + p["cf1"] * np.arctan(100 * d1)
    f2 = p["b2"] * d2 + p["cf2"] * np.arctan(100 * d2)
    return np.stack([c1 + g1 + f1, c2 + g2 + f2], -1)


def double_pendulum_torque(p: dict, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """The published model's inverse dynamics: tau = M(q) qdd + bias(q, qd), (N, 2)."""
    return np.einsum("nij,nj->ni", double_pendulum_mass(p, q[:, 1]), qdd) + double_pendulum_bias(p, q, qd)


def double_pendulum_rhs(p: dict) -> Callable:
    def f(q, qd, tau):
        m = double_pendulum_mass(p, q[..., 1])
        return np.linalg.solve(m, (tau - double_pendulum_bias(p, q, qd))[..., None])[..., 0]

    return f


def simulate_windows(rhs: Callable, win: Windows, h: float = 0.001) -> np.ndarray:
    """RK4 of every window at step ``h`` (all windows vectorised), torque held at the logged sample; returns
    qpos (W, L-1, nj) at the measured sample times."""
    W, L = len(win.start), win.length
    nj = win.trajs[0].qpos.shape[1]
    q = np.stack([win.trajs[k].qpos[s] for k, s in zip(win.log_index, win.start, strict=True)])
    v = np.stack([win.trajs[k].qvel[s] for k, s in zip(win.log_index, win.start, strict=True)])
    t0 = np.array([win.trajs[k].time[s] for k, s in zip(win.log_index, win.start, strict=True)])
    rel = np.stack(
        [
            win.trajs[k].time[s + 1 : s + L] - win.trajs[k].time[s]
            for k, s in zip(win.log_index, win.start, strict=True)
        ]
    )
    nstep = int(np.ceil(rel.max() / h - 1e-9))
    qs = np.zeros((nstep + 1, W, nj))
    qs[0] = q
    for n in range(nstep):
        t = t0 + n * h
        tau = np.zeros((W, nj))
        for w, k in enumerate(win.log_index):
            tr = win.trajs[k]
            i = min(max(int(np.searchsorted(tr.time, t[w] + 1e-12, side="right")) - 1, 0), tr.n - 1)
            tau[w] = tr.ctrl[i]

        def f(qq, vv, tau=tau):
            return rhs(qq[:, 0], vv[:, 0], tau[:, 0])[:, None] if nj == 1 else rhs(qq, vv, tau)

        k1q, k1v = v, f(q, v)
        k2q, k2v = v + 0.5 * h * k1v, f(q + 0.5 * h * k1q, v + 0.5 * h * k1v)
        k3q, k3v = v + 0.5 * h * k2v, f(q + 0.5 * h * k2q, v + 0.5 * h * k2v)
        k4q, k4v = v + h * k3v, f(q + h * k3q, v + h * k3v)
        q = q + h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        qs[n + 1] = q
    s = rel / h
    i0 = np.clip(np.floor(s).astype(int), 0, nstep - 1)
    f = (s - i0)[..., None]
    cols = np.arange(W)[:, None]
    return (1 - f) * qs[i0, cols] + f * qs[i0 + 1, cols]


def window_rmse(pred: np.ndarray, win: Windows) -> np.ndarray:
    meas = np.stack(
        [win.trajs[k].qpos[s + 1 : s + win.length] for k, s in zip(win.log_index, win.start, strict=True)]
    )
    return np.sqrt(np.mean((pred - meas) ** 2, axis=(1, 2)))


def heldout_diagnostics(
    prob, hprob, holdout_names: list[str], pub: dict, fitted: np.ndarray, published_r2: list[float]
) -> dict:
    """Where the held-out torque residual comes from, and how much room the fitted parameter class leaves.

    ``prob``: the benchmark's problem; ``hprob``: the same logs with their logged velocities; ``pub``: the
    published parameters; ``fitted``: the trajectory fit's values; ``published_r2``: the published model's R².

    - per held-out run, torque R² of the published model and of the trajectory fit, and the share of the pooled
      residual sum of squares carried by the samples whose published-model residual exceeds 1 N·m (the logged
      torque spikes of the swing-ups);
    - headroom (diagnostic only, never used to choose anything): the parameter class of the fit (joint damping,
      frictionloss, armature, link masses: the torque is affine in them) fitted by bounded least squares on the
      held-out runs themselves, for joint weights w and 1 − w (each over its torque variance); the best
      min_j(R²_j − published R²_j) over w says how far above the published model on both joints any fit of this
      class, on any data, could land.
    """
    from scipy.optimize import lsq_linear

    from real2sim.calibration.fitting.inverse import (
        build_regressor,
        id_samples,
        param_jacobian,
        regressor_residual,
        torque_r2,
    )

    s = id_samples(hprob.holdout, wn=0.02, order=3)
    tr = hprob.holdout[0]
    keep = [i for i, p in enumerate(prob.params) if p.kind != "delay"]
    params = [prob.params[i] for i in keep]
    x0, lo, hi = prob.x0[keep], prob.lower[keep], prob.upper[keep]
    reg = build_regressor(prob.model, params, x0, s, tr.joint_names, tr.actuator_names)
    r0 = regressor_residual(reg, params, x0, x0)
    A = param_jacobian(reg, params, x0)
    x_t = np.asarray(fitted)[keep]
    affine = np.max(np.abs(r0 + A @ (x_t - x0) - regressor_residual(reg, params, x0, x_t)))
    nj, n = len(tr.joint_names), s.q.shape[0]
    y = s.ctrl.T  # applied torque per joint (gear 1)
    sst = np.array([np.sum((y[j] - y[j].mean()) ** 2) for j in range(nj)])
    pred_pub = double_pendulum_torque(pub, s.q, s.qd, s.qdd)
    res = {"published": (pred_pub - s.ctrl).T, "real2sim": (r0 + A @ (x_t - x0)).reshape(nj, n)}
    spike = np.abs(res["published"]) > 1.0

    def r2_1d(
        e: np.ndarray, yj: np.ndarray
    ) -> float:  # R² of one joint from its residual e = predicted - torque
        return torque_r2((yj + e)[:, None], yj[:, None])[0]

    def r2(e, m):
        return [round(r2_1d(e[j][m], y[j][m]), 4) for j in range(nj)]

    runs = {}
    for k, name in enumerate(holdout_names):
        m = s.log == k
        runs[name] = {name: r2(e, m) for name, e in res.items()}
    spikes = {"fraction_of_samples": [round(float(spike[j].mean()), 4) for j in range(nj)]}
    for name, e in res.items():
        spikes[f"{name}_sse_share"] = [
            round(float(np.sum(e[j][spike[j]] ** 2) / np.sum(e[j] ** 2)), 4) for j in range(nj)
        ]
        spikes[f"{name}_r2_without"] = [round(r2_1d(e[j][~spike[j]], y[j][~spike[j]]), 4) for j in range(nj)]
    best = None
    for w in np.linspace(0.05, 0.95, 19):
        rw = np.sqrt(np.repeat(np.array([w, 1.0 - w]) / sst, n))
        sol = lsq_linear(rw[:, None] * A, -rw * (r0 - A @ x0), bounds=(lo, hi))
        e = (r0 + A @ (sol.x - x0)).reshape(nj, n)
        pair = [r2_1d(e[j], y[j]) for j in range(nj)]
        margin = min(a - b for a, b in zip(pair, published_r2, strict=True))
        if best is None or margin > best["margin"]:
            best = {
                "margin": round(margin, 4),
                "weight_joint1": round(float(w), 2),
                "torque_r2": [round(v, 4) for v in pair],
            }
    return {
        "per_run_torque_r2": runs,
        "spikes_over_1Nm": spikes,
        "class_headroom_fit_on_holdout": best,
        "affine_check_max_abs": float(affine),
    }
