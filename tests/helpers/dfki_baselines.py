"""The published DFKI models simulated in their own equations (the baselines the calibration must beat), with
the same windows, held torques and interpolation as the MuJoCo simulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from real2sim.calibration.simulate import Windows

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
