"""Inverse dynamics: predicted joint torques from measured motion (``mj_inverse``) and a bounded least-squares fit
of the parameters on torque residuals (the warm start for trajectory matching, or a fit of its own when the
log has torques).

Joint dry friction in the inverse model is ``frictionloss · (2/π) · atan(qd / v_s)`` with ``v_s = 0.01 rad/s``:
MuJoCo's frictionloss is a constraint force that ``mj_inverse`` cannot attribute from the motion alone, so the
smooth sign stands in for its sliding value (equal to it for |qd| ≫ v_s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from real2sim.calibration.params import Resolved, apply
from real2sim.calibration.signal import butter_filtfilt, differentiate
from real2sim.calibration.simulate import clone

from real2sim.trajectory import Trajectory

V_SMOOTH = 0.01  # rad/s


@dataclass(frozen=True)
class IdSamples:
    """Stacked samples for inverse dynamics: q, qd, qdd (N, nj), actuator ctrl (N, na), source log index."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    ctrl: np.ndarray
    log: np.ndarray


def id_samples(trajs: list[Trajectory], wn: float = 0.02, order: int = 3, max_samples: int | None = None,
               velocity_from: str = "qvel") -> IdSamples:
    """Velocities through a zero-phase Butterworth (order ``order``, cutoff ``wn`` × Nyquist), accelerations by
    differentiating them; optionally subsampled evenly to ``max_samples``."""
    qs, qds, qdds, us, ls = [], [], [], [], []
    for k, tr in enumerate(trajs):
        v = tr.qvel if (tr.qvel is not None and velocity_from == "qvel") else differentiate(tr.time, tr.qpos)
        vf = butter_filtfilt(v, wn, order)
        a = differentiate(tr.time, vf)
        qs.append(tr.qpos)
        qds.append(vf)
        qdds.append(a)
        us.append(tr.ctrl if tr.ctrl is not None else np.zeros((tr.n, 0)))
        ls.append(np.full(tr.n, k))
    s = IdSamples(*(np.concatenate(x) for x in (qs, qds, qdds, us, ls)))
    if max_samples is not None and s.q.shape[0] > max_samples:
        idx = np.round(np.linspace(0, s.q.shape[0] - 1, max_samples)).astype(int)
        s = IdSamples(s.q[idx], s.qd[idx], s.qdd[idx], s.ctrl[idx], s.log[idx])
    return s


def joint_torques(model, s: IdSamples, joint_names, actuator_names) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, applied): joint torque the model needs for the motion, and what the logged ctrl applies
    (through gear, gain and bias), both (N, nj)."""
    import mujoco

    qadr = [model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in joint_names]
    vadr = [model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in joint_names]
    aid = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in actuator_names]
    fl = model.dof_frictionloss[vadr].copy()
    m = clone(model)
    m.dof_frictionloss[:] = 0.0
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    d = mujoco.MjData(m)
    n = s.q.shape[0]
    pred = np.zeros((n, len(vadr)))
    appl = np.zeros((n, len(vadr)))
    for i in range(n):
        d.qpos[qadr] = s.q[i]
        d.qvel[vadr] = s.qd[i]
        d.qacc[vadr] = s.qdd[i]
        if aid:
            d.ctrl[aid] = s.ctrl[i]
        mujoco.mj_inverse(m, d)
        pred[i] = d.qfrc_inverse[vadr]
        mujoco.mj_fwdActuation(m, d)
        appl[i] = d.qfrc_actuator[vadr]
    pred += fl[None, :] * (2.0 / np.pi) * np.arctan(s.qd / V_SMOOTH)
    return pred, appl


def torque_r2(pred: np.ndarray, appl: np.ndarray) -> tuple[float, ...]:
    """Per-joint R² of the predicted against the applied (measured) torque."""
    out = []
    for j in range(pred.shape[1]):
        y = appl[:, j]
        ss = float(np.sum((y - y.mean()) ** 2))
        out.append(1.0 - float(np.sum((y - pred[:, j]) ** 2)) / ss if ss > 0 else float("nan"))
    return tuple(out)


def fit_inverse(model, params: list[Resolved], x0: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                s: IdSamples, joint_names, actuator_names, prior_weight: float = 0.0):
    """Bounded least squares of the torque residual over the non-delay parameters (delays keep ``x0``).

    ``prior_weight`` > 0 adds ``prior_weight · (x − x0)/(upper − lower)`` per parameter (a weak pull towards the
    prior that keeps weakly excited parameters physical). Returns (values, FitOutput).
    """
    from real2sim.calibration.fit import fit_bounded

    idx = [i for i, p in enumerate(params) if p.kind != "delay"]
    sub = [params[i] for i in idx]
    span = np.where(np.isfinite(upper - lower), upper - lower, 1.0)[idx]

    def fun(batch: np.ndarray) -> np.ndarray:
        rows = []
        for v in batch:
            m = clone(model)
            apply(m, sub, v)
            pred, appl = joint_torques(m, s, joint_names, actuator_names)
            r = (pred - appl).ravel()
            if prior_weight > 0:
                r = np.concatenate([r, prior_weight * np.sqrt(len(r)) * (v - x0[idx]) / span])
            rows.append(r)
        return np.stack(rows)

    out = fit_bounded(fun, x0[idx], lower[idx], upper[idx], np.zeros(len(idx), bool), max_nfev=30)
    values = np.asarray(x0, float).copy()
    values[idx] = out.values
    return values, out
