"""Servo replay: whole logs simulated open loop from their first measured state (goal positions as commands,
actuation off while the enable flag is off), one model per log; per-log position RMSE."""

from __future__ import annotations

import numpy as np

from real2sim.calibration.sim.simulate import Simulator, Windows
from real2sim.trajectory import Trajectory


def whole_log_windows(tr: Trajectory, timestep: float) -> Windows:
    n = tr.n
    nstep = int(np.ceil((tr.time[-1] - tr.time[0]) / timestep - 1e-9))
    return Windows((tr,), np.array([0]), np.array([0]), n, nstep)


def replay(models: list, trajs: list[Trajectory], delays: np.ndarray | None = None) -> list[np.ndarray]:
    """Simulated qpos (N-1, nj) of each whole log (after its first sample); ``models[k]`` simulates log k, or a
    list of candidate models for log k (then the result for that log is (C, N-1, nj)). ``delays``: per actuator
    [s], or (C, na) per candidate."""
    out = []
    for k, tr in enumerate(trajs):
        cands = models[k] if isinstance(models[k], list) else [models[k]]
        sim = Simulator(
            cands[0],
            whole_log_windows(tr, float(cands[0].opt.timestep)),
            tr.joint_names,
            tr.actuator_names,
            nthread=1,
        )
        d = np.zeros(len(tr.actuator_names)) if delays is None else np.asarray(delays, float)
        qp, _ = sim.predict(cands, [d[i] for i in range(d.shape[0])] if d.ndim == 2 else [d] * len(cands))
        sim.close()
        q = qp[:, 0]
        out.append(q if isinstance(models[k], list) else q[0])
    return out


def replay_rmse(models: list, trajs: list[Trajectory], delays: np.ndarray | None = None) -> np.ndarray:
    """Position RMSE [rad or m] of each whole log replayed open loop."""
    sims = replay(models, trajs, delays)
    return np.array(
        [float(np.sqrt(np.mean((q - tr.qpos[1:]) ** 2))) for q, tr in zip(sims, trajs, strict=True)]
    )
