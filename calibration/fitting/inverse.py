"""Inverse dynamics: predicted joint torques from measured motion (``mj_inverse``) and a bounded least-squares fit
of the parameters on torque residuals (the warm start for trajectory matching, or a fit of its own when the
log has torques).

Joint dry friction in the inverse model is ``frictionloss · (2/π) · atan(qd / v_s)`` with ``v_s = 0.01 rad/s``:
MuJoCo's frictionloss is a constraint force that ``mj_inverse`` cannot attribute from the motion alone, so the
smooth sign stands in for its sliding value (equal to it for |qd| ≫ v_s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from real2sim.calibration.logs.signal import butter_filtfilt, differentiate
from real2sim.calibration.params.resolve import apply
from real2sim.calibration.params.resolved import Resolved
from real2sim.calibration.sim.simulate import clone, switched_off
from real2sim.trajectory import Trajectory

if TYPE_CHECKING:
    import mujoco

V_SMOOTH = 0.01  # rad/s
CAUCHY_C = 2.385  # the Cauchy loss's usual tuning constant: 95 % efficiency on Gaussian residuals
IRLS_PASSES = 3


@dataclass(frozen=True)
class IdSamples:
    """Stacked samples for inverse dynamics: q, qd, qdd (N, nj), actuator ctrl (N, na), source log index, and
    the actuators' enable flags (N, na) where a log has them (None: always on)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    ctrl: np.ndarray
    log: np.ndarray
    enable: np.ndarray | None = None


def id_samples(
    trajs: list[Trajectory],
    wn: float = 0.02,
    order: int = 3,
    max_samples: int | None = None,
    velocity_from: Literal["qvel", "qpos"] = "qvel",
) -> IdSamples:
    """Velocities through a zero-phase Butterworth (order ``order``, cutoff ``wn`` × Nyquist), accelerations by
    differentiating them; optionally subsampled evenly to ``max_samples``. ``velocity_from="qpos"`` (or a log
    without qvel) differentiates qpos first."""
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
    on = None
    if any(tr.enable is not None for tr in trajs):
        on = np.concatenate(
            [
                tr.enable if tr.enable is not None else np.ones(u.shape, bool)
                for tr, u in zip(trajs, us, strict=True)
            ]
        )
    s = IdSamples(*(np.concatenate(x) for x in (qs, qds, qdds, us, ls)), enable=on)
    if max_samples is not None and s.q.shape[0] > max_samples:
        idx = np.round(np.linspace(0, s.q.shape[0] - 1, max_samples)).astype(int)
        s = IdSamples(
            s.q[idx], s.qd[idx], s.qdd[idx], s.ctrl[idx], s.log[idx], None if on is None else on[idx]
        )
    return s


def joint_torques(model, s: IdSamples, joint_names, actuator_names) -> tuple[np.ndarray, np.ndarray]:
    """(predicted, applied): joint torque the model needs for the motion, and what the logged ctrl applies
    (through gear, gain and bias; nothing from a switched-off actuator), both (N, nj)."""
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
    off_models: dict[bytes, mujoco.MjModel] = {}
    for i in range(n):
        d.qpos[qadr] = s.q[i]
        d.qvel[vadr] = s.qd[i]
        d.qacc[vadr] = s.qdd[i]
        if aid:
            d.ctrl[aid] = s.ctrl[i]
        mujoco.mj_inverse(m, d)
        pred[i] = d.qfrc_inverse[vadr]
        ma = m
        if s.enable is not None and not s.enable[i].all():
            key = s.enable[i].tobytes()
            if key not in off_models:
                off_models[key] = switched_off(m, np.asarray(aid)[~s.enable[i]])
            ma = off_models[key]
        mujoco.mj_fwdActuation(ma, d)
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


def _residual(model, s: IdSamples, joint_names, actuator_names) -> np.ndarray:
    pred, appl = joint_torques(model, s, joint_names, actuator_names)
    return (pred - appl).T.ravel()  # joint-major


@dataclass(frozen=True)
class Regressor:
    """The torque residual (predicted − applied, joint-major) as an affine function of the parameters:
    ``r = r0 + A (x_lin − x0_lin) + Σ_b B_b (φ_b − φ_b0)``. Every non-body, non-delay parameter enters linearly
    (damping, armature, smoothed frictionloss, actuator gain and bias); a body enters through its 10 standard
    inertial parameters φ. Columns come from exact differences of ``mj_inverse`` (linear, so step-independent)."""

    r0: np.ndarray
    lin: tuple[int, ...]
    A: np.ndarray
    bodies: tuple[int, ...]  # MuJoCo body ids
    body_params: tuple[tuple[int, ...], ...]  # indices into params per body
    B: tuple[np.ndarray, ...]
    phi0: tuple[np.ndarray, ...]
    base: mujoco.MjModel  # model with x0 applied


def build_regressor(
    model, params: list[Resolved], x0: np.ndarray, s: IdSamples, joint_names, actuator_names
) -> Regressor:
    from real2sim.calibration.params.inertial import phi_of, set_phi

    base = clone(model)
    nd = [i for i, p in enumerate(params) if p.kind != "delay"]
    apply(base, [params[i] for i in nd], x0[nd])
    r0 = _residual(base, s, joint_names, actuator_names)
    lin = tuple(i for i in nd if params[i].kind != "body")
    cols = []
    for i in lin:
        m = clone(base)
        h = 1e-3 * max(abs(float(x0[i])), 1e-2)
        apply(m, [params[i]], np.array([x0[i] + h]))
        cols.append((_residual(m, s, joint_names, actuator_names) - r0) / h)
    A = np.stack(cols, 1) if cols else np.zeros((r0.size, 0))
    bodies: dict[int, list[int]] = {}
    for i in nd:
        if params[i].kind == "body":
            bodies.setdefault(params[i].obj_id, []).append(i)
    Bs, phis = [], []
    for b in bodies:
        phi0 = phi_of(base, b)
        scale = np.concatenate(
            [
                [phi0[0]],
                np.full(3, max(abs(phi0[0]) * 1e-2, np.abs(phi0[1:4]).max())),
                np.full(6, max(np.abs(phi0[4:7]).max(), 1e-6)),
            ]
        )
        cb = []
        for k in range(10):
            h = 1e-3 * scale[k]
            rr = []
            for sign in (1.0, -1.0):
                m = clone(base)
                ph = phi0.copy()
                ph[k] += sign * h
                set_phi(m, b, ph)
                rr.append(_residual(m, s, joint_names, actuator_names))
            cb.append((rr[0] - rr[1]) / (2 * h))
        Bs.append(np.stack(cb, 1))
        phis.append(phi0)
    return Regressor(
        r0, lin, A, tuple(bodies), tuple(tuple(v) for v in bodies.values()), tuple(Bs), tuple(phis), base
    )


def regressor_coords(
    reg: Regressor, params: list[Resolved], x0: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """``u`` with ``r = r0 + [A, B_1, …] u``: linear parameter offsets, then each body's φ − φ0."""
    from real2sim.calibration.params.inertial import phi_from

    parts = [values[list(reg.lin)] - x0[list(reg.lin)]]
    m = reg.base
    for b, idx, phi0 in zip(reg.bodies, reg.body_params, reg.phi0, strict=True):
        mass, com, inertia = float(m.body_mass[b]), m.body_ipos[b].copy(), m.body_inertia[b].copy()
        for i in idx:
            p = params[i]
            if p.attribute == "mass":
                mass = float(values[i])
            elif p.attribute == "com":
                com[p.index] = values[i]
            else:
                inertia[p.index] = values[i]
        parts.append(phi_from(mass, com, inertia, m.body_iquat[b]) - phi0)
    return np.concatenate(parts)


def regressor_matrix(reg: Regressor) -> np.ndarray:
    return np.concatenate([reg.A, *reg.B], axis=1)


def regressor_residual(
    reg: Regressor, params: list[Resolved], x0: np.ndarray, values: np.ndarray
) -> np.ndarray:
    return reg.r0 + regressor_matrix(reg) @ regressor_coords(reg, params, x0, values)


def param_jacobian(reg: Regressor, params: list[Resolved], x0: np.ndarray) -> np.ndarray:
    """d residual / d parameter at ``x0`` (columns in ``params`` order), by differences of ``regressor_residual``:
    exact where the torque is affine in a parameter (damping, armature, frictionloss, gains, body mass with the
    centre of mass and inertia about it fixed)."""
    r0 = regressor_residual(reg, params, x0, x0)
    cols = []
    for i in range(len(x0)):
        x = x0.copy()
        x[i] += 1e-3 * max(abs(float(x0[i])), 1e-3)
        cols.append((regressor_residual(reg, params, x0, x) - r0) / (x[i] - x0[i]))
    return np.stack(cols, 1)


def robust_weights(residual: np.ndarray, n_joints: int, c: float = CAUCHY_C) -> np.ndarray:
    """Row weights √w of one IRLS step of the Cauchy loss: ``w = 1 / (1 + (r / (c·σ_j))²)``, with σ_j the
    median absolute deviation (× 1.4826) of joint j's torque residual. Logged motor torques carry impulsive
    spikes (current-sensing glitches, stick-slip) that plain least squares turns into biased friction and
    inertia; the Cauchy loss bounds their influence and keeps ~all weight on Gaussian-sized residuals."""
    r = residual.reshape(n_joints, -1)
    med = np.median(r, axis=1, keepdims=True)
    sigma = np.maximum(1.4826 * np.median(np.abs(r - med), axis=1, keepdims=True), 1e-12)
    return np.sqrt(1.0 / (1.0 + (r / (c * sigma)) ** 2)).ravel()


def fit_inverse(
    model,
    params: list[Resolved],
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    s: IdSamples,
    joint_names,
    actuator_names,
    prior_weight: float = 0.0,
    log_mask: np.ndarray | None = None,
    reg: Regressor | None = None,
    robust: bool = True,
):
    """Bounded least squares of the torque residual over the non-delay parameters (delays keep ``x0``), on the
    affine ``Regressor`` (built once: every iterate costs a matrix product, not a pass of ``mj_inverse``). Body
    inertias are fitted in physically consistent coordinates (``inertial.Reparam``): no iterate is unphysical.

    ``prior_weight`` > 0 adds a pull towards ``x0`` scaled to the torque residual: per parameter
    ``prior_weight · √M · (x − x0)/span`` (span = the bound range; for body mass and inertia the log ratio,
    for a centre of mass the shift over 5 cm). Returns (values, FitOutput) with cost, residual and Jacobian of
    the full (uncompressed) torque residual.

    ``robust`` (default): iteratively reweighted least squares with the Cauchy loss (``robust_weights``, a few
    passes, each on the exact affine regressor) instead of plain least squares.
    """
    from dataclasses import replace

    from real2sim.calibration.fitting.least_squares import cost_of
    from real2sim.calibration.params.inertial import fit_physical, second_moments

    x0 = np.asarray(x0, float)
    idx = [i for i, p in enumerate(params) if p.kind != "delay"]
    sub = [params[i] for i in idx]
    if reg is None:
        reg = build_regressor(model, params, x0, s, joint_names, actuator_names)
    n_res = reg.r0.size
    span = np.where(np.isfinite(upper - lower), upper - lower, np.maximum(np.abs(x0), 1.0))
    w = prior_weight * np.sqrt(n_res)

    def prior(v: np.ndarray) -> np.ndarray:
        out = []
        for i, p in enumerate(params):
            if p.kind == "delay":
                continue
            if p.kind == "body" and p.attribute == "mass":
                out.append(np.log(max(v[i], 1e-12) / max(x0[i], 1e-12)))
            elif p.kind == "body" and p.attribute == "com":
                out.append((v[i] - x0[i]) / 0.05)
            elif p.kind == "body" and p.attribute == "inertia":
                comps = [
                    j
                    for j, q in enumerate(params)
                    if q.kind == "body" and q.element == p.element and q.attribute == "inertia"
                ]
                if len(comps) == 3:
                    k = comps.index(i)
                    a = second_moments(v[comps])[k]
                    a0 = second_moments(x0[comps])[k]
                    out.append(np.log(max(a, 1e-15) / max(a0, 1e-15)) if a0 > 0 else 0.0)
                else:
                    out.append(np.log(max(v[i], 1e-15) / max(x0[i], 1e-15)))
            else:
                out.append((v[i] - x0[i]) / span[i])
        return w * np.asarray(out, float)

    # The torque residual is affine in u (at most 10 per body + 1 per linear parameter): fit on its QR-compressed
    # form, Qᵀr0 + R u, which has the same cost up to a constant and the same Jacobian normal matrix.
    G = regressor_matrix(reg)
    n_j = len(joint_names)
    wrow = np.ones(n_res)  # IRLS row weights (all 1: plain least squares)
    Q, R = np.linalg.qr(G)
    c0 = Q.T @ reg.r0

    def full(v: np.ndarray) -> np.ndarray:
        out = x0.copy()
        out[idx] = v
        return out

    def make(compressed: bool):
        def fun(batch: np.ndarray) -> np.ndarray:
            rows = []
            for v in np.atleast_2d(batch):
                x = full(v)
                u = regressor_coords(reg, params, x0, x)
                r = c0 + R @ u if compressed else wrow * (reg.r0 + G @ u)
                if prior_weight > 0:
                    r = np.concatenate([r, prior(x)])
                rows.append(r)
            return np.stack(rows)

        return fun

    lm = np.zeros(len(idx), bool) if log_mask is None else np.asarray(log_mask, bool)[idx]
    fit = fit_physical(make(True), sub, x0[idx], lower[idx], upper[idx], lm, max_nfev=200)
    for _ in range(IRLS_PASSES if robust else 0):
        u = regressor_coords(reg, params, x0, full(fit.values))
        wrow = robust_weights(reg.r0 + G @ u, n_j)
        Q, R = np.linalg.qr(wrow[:, None] * G)
        c0 = Q.T @ (wrow * reg.r0)
        fit = fit_physical(make(True), sub, fit.values, lower[idx], upper[idx], lm, max_nfev=200)
    values = x0.copy()
    values[idx] = fit.values
    # report on the full residual: cost, residual and Jacobian (by differences in model units)
    f = make(False)
    r_fin = f(fit.values)[0]
    h = 1e-6 * np.maximum(np.abs(fit.values), 1e-3)
    jac = (f(fit.values[None, :] + np.diag(h)) - r_fin[None, :]).T / h[None, :]
    out = replace(
        fit, cost_initial=cost_of(f(x0[idx])[0]), cost_final=cost_of(r_fin), residual=r_fin, jac=jac
    )
    return values, out
