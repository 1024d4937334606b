"""Multiple-shooting simulation of logs: windows re-initialised from the measured state, the logged ctrl
replayed open loop (held between samples, shifted by the actuator delay, averaged over each physics step),
all windows and all candidate models of a finite-difference Jacobian batched into one ``mujoco.rollout`` call.
A candidate is one model for all logs or one model per log (setups: payloads, gains). Logs with an ``enable``
flag are rolled out in chunks between its switches, a switched-off actuator's gain and bias zeroed (no force).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from real2sim.calibration.logs.signal import held_shifted_mean
from real2sim.errors import InputError
from real2sim.executor import thread_budget
from real2sim.trajectory import Trajectory


@dataclass(frozen=True)
class Windows:
    """Windows of ``length`` samples cut from prepared trajectories (each with qvel)."""

    trajs: tuple[Trajectory, ...]
    log_index: np.ndarray  # (W,)
    start: np.ndarray  # (W,) first sample
    length: int  # samples per window, first one is the initial state
    nstep: int  # physics steps per window


GAP_SPAN = 1.5
"""A window whose samples span more than this multiple of its nominal length holds a gap in the log and is dropped."""


def make_windows(
    trajs: list[Trajectory],
    window_s: float,
    timestep: float,
    max_windows: int | None = None,
    stride_s: float | None = None,
) -> Windows:
    """Cut every trajectory into windows of ``window_s`` seconds (every ``stride_s``, default non-overlapping);
    keep at most ``max_windows``, spread evenly."""
    logs, starts, lengths = [], [], []
    for k, tr in enumerate(trajs):
        if tr.qvel is None:
            raise InputError(tr.source, "windows need qvel (differentiate qpos explicitly first)")
        L = max(2, int(round(window_s / tr.dt)) + 1)
        stride = L - 1 if stride_s is None else max(1, int(round(stride_s / tr.dt)))
        for s in range(0, tr.n - L + 1, stride):
            if tr.time[s + L - 1] - tr.time[s] > GAP_SPAN * (L - 1) * tr.dt:
                continue  # the window spans a gap in the log: the log splits there, the gap is not simulated
            logs.append(k)
            starts.append(s)
            lengths.append(L)
    if not starts:
        raise InputError(trajs[0].source if trajs else "logs", f"logs shorter than one {window_s} s window")
    L = min(lengths)
    idx = np.arange(len(starts))
    if max_windows is not None and len(idx) > max_windows:
        idx = np.unique(np.round(np.linspace(0, len(starts) - 1, max_windows)).astype(int))
    log_index = np.asarray(logs)[idx]
    start = np.asarray(starts)[idx]
    span = max(trajs[k].time[s + L - 1] - trajs[k].time[s] for k, s in zip(log_index, start, strict=True))
    nstep = int(np.ceil(span / timestep - 1e-9))
    return Windows(tuple(trajs), log_index, start, L, nstep)


class Simulator:
    """Simulates ``Windows`` for a model; ``predict`` runs many (model, delays) candidates in one batch."""

    def __init__(
        self,
        model,
        windows: Windows,
        joint_names: tuple[str, ...],
        actuator_names: tuple[str, ...],
        nthread: int | None = None,
    ):
        import mujoco

        self.model = model
        self.win = windows
        self.h = float(model.opt.timestep)
        self.qadr = np.array(
            [model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in joint_names]
        )
        self.vadr = np.array(
            [model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in joint_names]
        )
        self.aid = np.array(
            [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in actuator_names], dtype=int
        )
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.nstate = mujoco.mj_stateSize(model, self.spec)
        self.nthread = nthread or min(thread_budget(), 8)
        self.datas = [mujoco.MjData(model) for _ in range(self.nthread)]
        W, L = len(windows.start), windows.length
        self.x0 = np.zeros((W, self.nstate))
        self.meas_q = np.zeros((W, L - 1, len(joint_names)))
        self.meas_v = np.zeros((W, L - 1, len(joint_names)))
        self.rel_t = np.zeros((W, L - 1))
        self.t0 = np.zeros(W)
        d = mujoco.MjData(model)
        for w, (k, s) in enumerate(zip(windows.log_index, windows.start, strict=True)):
            tr = windows.trajs[k]
            mujoco.mj_resetData(model, d)
            d.qpos[self.qadr] = tr.qpos[s]
            d.qvel[self.vadr] = tr.qvel[s]
            mujoco.mj_getState(model, d, self.x0[w], self.spec)
            self.x0[w, 0] = 0.0  # time
            self.meas_q[w] = tr.qpos[s + 1 : s + L]
            self.meas_v[w] = tr.qvel[s + 1 : s + L]
            self.rel_t[w] = tr.time[s + 1 : s + L] - tr.time[s]
            self.t0[w] = tr.time[s]
        self._rollout = None
        self.enable = self._enable_steps()

    def _enable_steps(self) -> np.ndarray | None:
        """(W, nstep, na) bool: each actuator's enable flag held over the physics steps; None: always on."""
        if all(tr.enable is None for tr in self.win.trajs):
            return None
        W, na = len(self.win.start), len(self.aid)
        on = np.ones((W, self.win.nstep, na), bool)
        steps = self.h * np.arange(self.win.nstep)
        for w, (k, t0) in enumerate(zip(self.win.log_index, self.t0, strict=True)):
            tr = self.win.trajs[k]
            if tr.enable is None:
                continue
            i = np.clip(np.searchsorted(tr.time, t0 + steps + 1e-9, side="right") - 1, 0, tr.n - 1)
            on[w] = tr.enable[i]
        return on

    def controls(self, delays: np.ndarray) -> np.ndarray:
        """(W, nstep, nu) actuator inputs for the given per-actuator delays [s] (unlogged actuators: 0)."""
        W = len(self.win.start)
        u = np.zeros((W, self.win.nstep, self.model.nu))
        steps = self.h * np.arange(self.win.nstep)
        for k, tr in enumerate(self.win.trajs):
            sel = np.nonzero(self.win.log_index == k)[0]
            if sel.size == 0 or tr.ctrl is None:
                continue
            t_abs = (self.t0[sel][:, None] + steps[None, :]).ravel()
            for a, aid in enumerate(self.aid):
                u[sel, :, aid] = held_shifted_mean(
                    tr.time, tr.ctrl[:, a], float(delays[a]), t_abs, self.h
                ).reshape(sel.size, -1)
        return u

    def _run(self, models: list, x0: np.ndarray, ctrl: np.ndarray) -> np.ndarray:
        """Roll out (C·W) windows; with enable flags, in chunks between switches with switched-off actuators."""
        from mujoco import rollout

        if self._rollout is None:
            self._rollout = rollout.Rollout(nthread=self.nthread)
        W = len(self.win.start)
        mlist = [
            m[self.win.log_index[w]] if isinstance(m, list | tuple) else m for m in models for w in range(W)
        ]
        if self.enable is None or self.enable.all():
            return self._rollout.rollout(mlist, self.datas, x0, ctrl)[0]
        change = np.nonzero(np.any(self.enable[:, 1:] != self.enable[:, :-1], axis=(0, 2)))[0] + 1
        bounds = [0, *change.tolist(), self.win.nstep]
        off_cache: dict[tuple[int, bytes], object] = {}
        out, x = [], x0
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            chunk = []
            for i, m in enumerate(mlist):
                on = self.enable[i % W, a]
                if on.all():
                    chunk.append(m)
                    continue
                key = (id(m), on.tobytes())
                if key not in off_cache:
                    off_cache[key] = switched_off(m, self.aid[~on])
                chunk.append(off_cache[key])
            st = self._rollout.rollout(chunk, self.datas, x, ctrl[:, a:b])[0]
            out.append(st)
            x = st[:, -1].copy()
        return np.concatenate(out, axis=1)

    def predict(self, models: list, delays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """qpos, qvel predictions at the measured sample times: arrays (C, W, L-1, nj) for C candidates
        (each candidate one model, or a list of one model per log)."""
        W = len(self.win.start)
        C = len(models)
        ctrl = np.concatenate([self.controls(d) for d in delays], axis=0)
        x0 = np.tile(self.x0, (C, 1))
        state = self._run(models, x0, ctrl)
        qp = np.concatenate(
            [
                np.broadcast_to(x0[:, None, 1 : 1 + self.model.nq], (C * W, 1, self.model.nq)),
                state[:, :, 1 : 1 + self.model.nq],
            ],
            axis=1,
        )[:, :, self.qadr]
        off = 1 + self.model.nq
        qv = np.concatenate(
            [
                np.broadcast_to(x0[:, None, off : off + self.model.nv], (C * W, 1, self.model.nv)),
                state[:, :, off : off + self.model.nv],
            ],
            axis=1,
        )[:, :, self.vadr]
        # linear interpolation between physics steps at the sample times
        s = np.tile(self.rel_t, (C, 1)) / self.h
        i0 = np.clip(np.floor(s).astype(int), 0, self.win.nstep - 1)
        f = (s - i0)[..., None]
        rows = np.arange(C * W)[:, None]
        qpi = (1 - f) * qp[rows, i0] + f * qp[rows, i0 + 1]
        qvi = (1 - f) * qv[rows, i0] + f * qv[rows, i0 + 1]
        L1 = self.win.length - 1
        nj = len(self.qadr)
        return qpi.reshape(C, W, L1, nj), qvi.reshape(C, W, L1, nj)

    def close(self) -> None:
        if self._rollout is not None:
            self._rollout.close()
            self._rollout = None


def clone(model):
    return copy.copy(model)


def switched_off(model, actuator_ids) -> object:
    """A copy of ``model`` whose given actuators produce no force (gain and bias zeroed)."""
    m = clone(model)
    for a in actuator_ids:
        m.actuator_gainprm[a] = 0.0
        m.actuator_biasprm[a] = 0.0
    return m
