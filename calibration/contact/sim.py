"""Rollouts of logged free bodies in MuJoCo: short windows from measured states and whole runs from the first."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.calibration.contact.logs import MotionLog


@dataclass(frozen=True)
class Layout:
    """Where each logged body and joint lives in the model's state (time, qpos, qvel first)."""

    bodies: tuple[str, ...]
    qadr: tuple[int, ...]
    vadr: tuple[int, ...]
    joints: tuple[str, ...]
    jq: tuple[int, ...]
    jv: tuple[int, ...]
    nq: int
    nstate: int
    scale: tuple[float, ...]
    """Per body the length errors are measured in [m]: its largest geom extent."""


def layout(model, log: MotionLog) -> Layout:
    import mujoco

    bodies = tuple(log.pose)
    qadr, vadr, scale = [], [], []
    for b in bodies:
        bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b)
        j = model.body_jntadr[bid]
        qadr.append(int(model.jnt_qposadr[j]))
        vadr.append(int(model.jnt_dofadr[j]))
        geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == bid]
        ext = max((2.0 * float(np.max(model.geom_aabb[g, 3:])) for g in geoms), default=1.0)
        scale.append(ext if np.isfinite(ext) and ext > 0 else 1.0)
    jids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in log.joint_names]
    return Layout(
        bodies,
        tuple(qadr),
        tuple(vadr),
        log.joint_names,
        tuple(int(model.jnt_qposadr[j]) for j in jids),
        tuple(int(model.jnt_dofadr[j]) for j in jids),
        int(model.nq),
        int(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)),
        tuple(scale),
    )


def states(model, lay: Layout, log: MotionLog, rows: np.ndarray) -> np.ndarray:
    """Full physics states (len(rows), nstate) of the log's samples ``rows``: the model's qpos0 elsewhere."""
    s = np.zeros((rows.size, lay.nstate))
    s[:, 1 : 1 + lay.nq] = model.qpos0
    s[:, 0] = log.time[rows]
    for b, qa, va in zip(lay.bodies, lay.qadr, lay.vadr, strict=True):
        s[:, 1 + qa : 1 + qa + 7] = log.pose[b][rows]
        s[:, 1 + lay.nq + va : 1 + lay.nq + va + 6] = log.vel[b][rows]
    if lay.joints and log.qpos is not None and log.qvel is not None:
        s[:, [1 + q for q in lay.jq]] = log.qpos[rows]
        s[:, [1 + lay.nq + v for v in lay.jv]] = log.qvel[rows]
    return s


@dataclass(frozen=True)
class Windows:
    """Short rollouts: each starts from a measured state; targets are the measured poses ``nstep`` steps later."""

    state: np.ndarray
    target: np.ndarray
    """(W, nb, 7) measured position + quaternion at the window's end."""
    log_index: np.ndarray
    t0: np.ndarray
    nstep: int


def _interp_pose(log: MotionLog, body: str, t: np.ndarray) -> np.ndarray:
    p = log.pose[body]
    pos = np.stack([np.interp(t, log.time, p[:, c]) for c in range(3)], axis=1)
    k = np.clip(np.searchsorted(log.time, t), 0, log.time.size - 1)
    return np.concatenate([pos, p[k, 3:]], axis=1)


def make_windows(
    model,
    lay: Layout,
    logs: list[MotionLog],
    horizon: float,
    stride: int = 1,
    contact_only: bool = False,
    max_windows: int | None = None,
) -> Windows:
    """Windows of ``horizon`` seconds starting every ``stride`` samples of every log.

    ``contact_only`` keeps windows whose real end is off the contact-free (ballistic) prediction by more than a
    tenth of the body's size: in flight the contact parameters change nothing, at rest or on impact they do.
    """
    ts = float(model.opt.timestep)
    nstep = max(1, int(round(horizon / ts)))
    g = np.asarray(model.opt.gravity, float)
    S, T, L, T0 = [], [], [], []
    for k, log in enumerate(logs):
        rows = np.arange(0, log.time.size, stride)
        rows = rows[log.time[rows] + nstep * ts <= log.time[-1] + 1e-9]
        if rows.size == 0:
            continue
        t_end = log.time[rows] + nstep * ts
        tgt = np.stack([_interp_pose(log, b, t_end) for b in lay.bodies], axis=1)
        if contact_only:
            keep = np.zeros(rows.size, bool)
            h = nstep * ts
            for j, (b, sc) in enumerate(zip(lay.bodies, lay.scale, strict=True)):
                p0, v0 = log.pose[b][rows, :3], log.vel[b][rows, :3]
                ball = p0 + v0 * h + 0.5 * g * h * h
                keep |= np.linalg.norm(tgt[:, j, :3] - ball, axis=1) > 0.1 * sc
            rows, tgt, t_end = rows[keep], tgt[keep], t_end[keep]
        S.append(states(model, lay, log, rows))
        T.append(tgt)
        L.append(np.full(rows.size, k))
        T0.append(log.time[rows])
    nb = len(lay.bodies)
    win = Windows(
        np.concatenate(S) if S else np.zeros((0, lay.nstate)),
        np.concatenate(T) if T else np.zeros((0, nb, 7)),
        np.concatenate(L) if L else np.zeros(0, int),
        np.concatenate(T0) if T0 else np.zeros(0),
        nstep,
    )
    if max_windows is not None and win.state.shape[0] > max_windows:
        pick = np.unique(np.linspace(0, win.state.shape[0] - 1, max_windows).round().astype(int))
        win = Windows(win.state[pick], win.target[pick], win.log_index[pick], win.t0[pick], nstep)
    return win


class Roller:
    """``mujoco.rollout`` with reused MjData (``nthread`` threads)."""

    def __init__(self, model, nthread: int = 2) -> None:
        import mujoco

        self.datas = [mujoco.MjData(model) for _ in range(max(1, nthread))]

    def run(self, model, state: np.ndarray, nstep: int) -> np.ndarray:
        """States (B, nstep, nstate) after each step."""
        from mujoco import rollout

        if state.shape[0] == 0:
            return np.zeros((0, nstep, state.shape[1]))
        out, _ = rollout.rollout(model, self.datas, state, nstep=nstep, persistent_pool=len(self.datas) > 1)
        return out

    def window_ends(self, model, lay: Layout, win: Windows) -> np.ndarray:
        """(W, nb, 7) simulated body poses at each window's end."""
        out = self.run(model, win.state, win.nstep)[:, -1]
        return np.stack([out[:, 1 + q : 1 + q + 7] for q in lay.qadr], axis=1)

    def whole(self, model, lay: Layout, logs: list[MotionLog]) -> list[np.ndarray]:
        """Each log simulated from its first sample: body poses (N, nb, 7) at the log's sample times."""
        ts = float(model.opt.timestep)
        nstep = max(int(np.ceil(log.time[-1] / ts)) + 1 for log in logs)
        s0 = np.concatenate([states(model, lay, log, np.array([0])) for log in logs])
        out = self.run(model, s0, nstep)
        st = np.arange(1, nstep + 1) * ts
        res = []
        for k, log in enumerate(logs):
            per = []
            for q in lay.qadr:
                sim = out[k, :, 1 + q : 1 + q + 7]
                pos = np.stack(
                    [
                        np.interp(log.time, st, sim[:, c], left=log.pose[lay.bodies[0]][0, c])
                        for c in range(3)
                    ],
                    1,
                )
                idx = np.clip(np.searchsorted(st, log.time), 0, nstep - 1)
                per.append(np.concatenate([pos, sim[idx, 3:]], axis=1))
            res.append(np.stack(per, axis=1))
        return res


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle [rad] between w-x-y-z quaternions (..., 4)."""
    d = np.abs(np.sum(a * b, axis=-1))
    return 2.0 * np.arccos(np.clip(d, 0.0, 1.0))


def close(roller: Roller) -> None:
    from mujoco import rollout

    if len(roller.datas) > 1:
        rollout.shutdown_persistent_pool()
