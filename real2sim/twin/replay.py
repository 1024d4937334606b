"""One real episode played in the twin: the sim stepped ``round(1 / (fps · timestep))`` times per frame (the timestep
trimmed so that those steps span one frame exactly, so sim time and the log's timestamps agree), and per mode:

- ``actuated``: each frame's action sent to the (calibrated) actuators, held over the frame;
- ``kinematic``: the joints set along the measured positions (linear within a frame), objects simulated;
- ``resync:N``: actuated, the robot's state set to the measured one every N frames.

The robot starts at the episode's first measured state, the objects at home (or a variation's draw).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.errors import InputError
from real2sim.twin.episodes import Episode
from real2sim.twin.home import Ids


@dataclass(frozen=True)
class Stepping:
    """How the sim is stepped against the log: steps per frame and the timestep that makes them one frame."""

    fps: float
    steps_per_frame: int
    timestep: float
    model_timestep: float

    def to_json(self) -> dict:
        return {
            "fps": self.fps,
            "steps_per_frame": self.steps_per_frame,
            "timestep": self.timestep,
            "model_timestep": self.model_timestep,
        }


def stepping(fps: float, timestep: float) -> Stepping:
    if not fps > 0:
        raise InputError("episodes", f"the log's frame rate must be > 0, got {fps}")
    n = max(1, int(round(1.0 / (fps * timestep))))
    return Stepping(float(fps), n, 1.0 / (fps * n), float(timestep))


def frame_gaps(time: np.ndarray, fps: float) -> np.ndarray:
    """Frames between each recorded frame and the next (1 normally; more where frames were dropped)."""
    return np.maximum(1, np.round(np.diff(time) * fps)).astype(int)


@dataclass(frozen=True)
class SimTrace:
    """What the twin did over an episode, sampled at the recorded frames."""

    qpos: np.ndarray
    """(N, joints) robot joint positions [rad], in the episode's joint order."""
    objects: np.ndarray
    """(N, objects, 7) object poses: position [m] and wxyz quaternion."""
    images: dict[str, list[bytes]]
    """Camera name -> one PNG per frame (rendered runs only)."""
    warnings: dict[str, int]
    start_contacts: tuple[str, ...] = ()
    """Where the episode's first measured state puts the robot more than 1 mm into the scene (the solver pushes it
    out in the first steps: the log's angles and the twin's geometry disagree there)."""


def _columns(model, ix: Ids, ep: Episode, prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qpos addresses, dof addresses of the episode's joints, actuator ids of its ctrl columns)."""
    import mujoco

    def jid(n):
        return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n)

    qa = np.array([model.jnt_qposadr[jid(n)] for n in ep.traj.joint_names], int)
    da = np.array([model.jnt_dofadr[jid(n)] for n in ep.traj.joint_names], int)
    acts = np.array(
        [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in ep.traj.actuator_names], int
    )
    return qa, da, acts


def _velocity(q: np.ndarray, fps: float) -> np.ndarray:
    """Per-frame joint velocities [rad/s] from positions (central differences)."""
    if len(q) < 2:
        return np.zeros_like(q)
    return np.gradient(q, 1.0 / fps, axis=0)


def simulate(
    model,
    data,
    ix: Ids,
    ep: Episode,
    prefix: str,
    step: Stepping,
    mode: str,
    resync: int | None,
    object_start: np.ndarray | None = None,
    render=None,
) -> SimTrace:
    """Play ``ep`` from the home keyframe (objects at ``object_start``, (objects, 7), when given)."""
    import mujoco

    qa, da, acts = _columns(model, ix, ep, prefix)
    q, ctrl = ep.traj.qpos, ep.traj.ctrl
    if mode != "kinematic" and (ctrl is None or not len(acts)):
        raise InputError(
            ep.traj.source, "actuated replay needs the log's actions (ctrl); use --mode kinematic"
        )
    n = len(ep.traj.time)
    gaps = frame_gaps(ep.traj.time, step.fps)
    vel = _velocity(q, step.fps)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    names = list(ix.objects)
    if object_start is not None:
        for k, name in enumerate(names):
            a = ix.object_qpos[name]
            data.qpos[a : a + 7] = object_start[k]
    data.qpos[qa] = q[0]
    data.qvel[da] = 0.0
    for a, adr in ix.servo_qpos.items():
        data.ctrl[a] = data.qpos[adr]
    if ctrl is not None and len(acts):
        data.ctrl[acts] = ctrl[0]
    from real2sim.twin.home import MAX_PENETRATION, penetrations, warning_counts

    start = tuple(penetrations(model, data, ix, MAX_PENETRATION, self_contacts=True))
    out_q = np.empty((n, len(qa)))
    out_o = np.empty((n, len(names), 7))
    bodies = [ix.objects[k] for k in names]
    images: dict[str, list[bytes]] = {}
    for k in range(n):
        out_q[k] = data.qpos[qa]
        out_o[k, :, :3] = data.xpos[bodies]
        out_o[k, :, 3:] = data.xquat[bodies]
        if render is not None:
            for cam, png in render(data).items():
                images.setdefault(cam, []).append(png)
        if k == n - 1:
            break
        if resync and k > 0 and k % resync == 0:
            data.qpos[qa] = q[k]
            data.qvel[da] = vel[k]
            mujoco.mj_forward(model, data)
        steps = int(gaps[k]) * step.steps_per_frame
        if mode == "kinematic":
            for s in range(1, steps + 1):
                f = s / steps
                data.qpos[qa] = (1 - f) * q[k] + f * q[k + 1]
                data.qvel[da] = (q[k + 1] - q[k]) * step.fps / gaps[k]
                for a, adr in ix.servo_qpos.items():
                    data.ctrl[a] = data.qpos[adr]
                mujoco.mj_step(model, data)
            data.qpos[qa] = q[k + 1]
            mujoco.mj_forward(model, data)
        else:
            assert ctrl is not None
            data.ctrl[acts] = ctrl[k]
            mujoco.mj_step(model, data, nstep=steps)
    return SimTrace(out_q, out_o, images, warning_counts(data), start)


def lag_frames(real: np.ndarray, sim: np.ndarray, max_lag: int) -> int | None:
    """The shift (frames; > 0: the sim behind the real joint) maximising the correlation of the two traces' frame
    differences, within ±``max_lag``; None when the joint hardly moves."""
    a, b = np.diff(real), np.diff(sim)
    if len(a) < 4 or np.std(a) < 1e-9 or np.std(b) < 1e-9:
        return None
    best, best_c = 0, -np.inf
    for lag in range(-max_lag, max_lag + 1):
        x, y = (a[: len(a) - lag], b[lag:]) if lag >= 0 else (a[-lag:], b[: len(b) + lag])
        if len(x) < 4 or np.std(x) < 1e-12 or np.std(y) < 1e-12:
            continue
        c = float(np.corrcoef(x, y)[0, 1])
        if c > best_c + 1e-12:
            best, best_c = lag, c
    return best


def tracking(ep: Episode, trace: SimTrace, joints: tuple[str, ...], fps: float, max_lag_s: float) -> dict:
    """Per joint: RMSE and max error [rad] of the sim against the real follower (frames 1..N-1: frame 0 is set
    equal), and the lag [s]; their means over joints."""
    real, sim = ep.traj.qpos[1:], trace.qpos[1:]
    err = sim - real
    out: dict = {"joints": {}}
    lags = []
    for j, name in enumerate(joints):
        lag = lag_frames(ep.traj.qpos[:, j], trace.qpos[:, j], max(1, int(round(max_lag_s * fps))))
        rmse = float(np.sqrt(np.mean(err[:, j] ** 2))) if len(err) else 0.0
        out["joints"][name] = {
            "rmse_rad": round(rmse, 9),
            "max_abs_rad": round(float(np.max(np.abs(err[:, j]), initial=0.0)), 9),
            "lag_s": None if lag is None else round(lag / fps, 6),
        }
        if lag is not None:
            lags.append(lag / fps)
    rm = [v["rmse_rad"] for v in out["joints"].values()]
    out["mean_rmse_rad"] = round(float(np.mean(rm)), 9) if rm else 0.0
    out["mean_lag_s"] = round(float(np.mean(lags)), 6) if lags else None
    return out
