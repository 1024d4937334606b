"""Logs of free bodies (and joints) → ``MotionLog``: one per file, a folder read in name order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.calibration.logs.read import read_log
from real2sim.calibration.maps.logmap import LogMap, find_gaps, table_column
from real2sim.errors import InputError

SUFFIXES = (".csv", ".csv.gz", ".npz")


@dataclass(frozen=True)
class MotionLog:
    """One logged run: per body ``pose`` (N, 7) = world position + w-x-y-z quaternion and ``vel`` (N, 6) = world
    linear velocity + body-frame angular velocity (MuJoCo's free-joint convention); per joint qpos/qvel (N, nj)."""

    source: str
    time: np.ndarray
    pose: dict[str, np.ndarray]
    vel: dict[str, np.ndarray]
    joint_names: tuple[str, ...] = ()
    qpos: np.ndarray | None = None
    qvel: np.ndarray | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return Path(self.source).name


def log_files(path: Path) -> list[Path]:
    """A file → itself; a folder → its CSV/NPZ logs in name order (not a LeRobot dataset or a bag)."""
    from real2sim.calibration.logs import lerobot

    if not path.is_dir():
        return [path]
    if lerobot.is_dataset(path):
        raise InputError(path, "a LeRobot dataset: free-body logs are a folder of CSV/NPZ files, one per run")
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.lower().endswith(SUFFIXES))
    if not files:
        raise InputError(path, f"no log files ({', '.join(SUFFIXES)}) in the folder")
    return files


def quat_rate_body(time: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """Body-frame angular velocity from w-x-y-z quaternions: ω = 2 conj(q) ⊗ dq/dt (central differences)."""
    q = quat.copy()
    for i in range(1, len(q)):  # one hemisphere, so differences do not jump by the sign flip
        if np.dot(q[i], q[i - 1]) < 0:
            q[i] = -q[i]
    dq = np.gradient(q, time, axis=0)
    w, v = q[:, :1], -q[:, 1:]
    dw, dv = dq[:, :1], dq[:, 1:]
    vec = w * dv + dw * v + np.cross(v, dv)
    return 2.0 * vec


def rotate_to_world(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Body vectors (N, 3) into the world frame by w-x-y-z quaternions (N, 4)."""
    w, u = quat[:, :1], quat[:, 1:]
    t = 2.0 * np.cross(u, vec)
    return vec + w * t + np.cross(u, t)


def rotate_to_body(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """World vectors (N, 3) into the body frames of w-x-y-z quaternions (N, 4)."""
    return rotate_to_world(np.concatenate([quat[:, :1], -quat[:, 1:]], axis=1), vec)


def read_motion(path: Path, log_map: LogMap, model=None) -> MotionLog:
    """One log file through the map's ``[bodies.*]`` (and ``[joints.*]``) tables."""
    import mujoco

    table = read_log(path)
    if model is not None:
        for b in log_map.bodies:
            bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b)
            if bid < 0:
                raise InputError(log_map.source or path, f"body {b!r} in the map is not in the model")
            j = model.body_jntadr[bid]
            if model.body_jntnum[bid] != 1 or model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE:
                raise InputError(
                    log_map.source or path, f"body {b!r} in the map has no free joint in the model"
                )
        for jn in log_map.joints:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, jn) < 0:
                raise InputError(log_map.source or path, f"joint {jn!r} in the map is not in the model")
    first = next(iter(log_map.bodies.values())).pos[0] if log_map.bodies else None
    if log_map.time:
        t = table_column(table, log_map.time, path) * log_map.time_scale
    else:
        t = np.arange(table_column(table, first or next(iter(log_map.joints.values())).qpos, path).size)
        t = t / float(log_map.rate or 1.0)
    if t.size < 3:
        raise InputError(path, f"needs at least 3 samples, has {t.size}")
    back = np.nonzero(np.diff(t) <= 0)[0]
    if back.size:
        raise InputError(path, f"time runs backwards or repeats at row {int(back[0]) + 1}")
    t = t - t[0]
    pose, vel = {}, {}
    for name, bc in log_map.bodies.items():
        pos = np.stack([table_column(table, c, path) for c in bc.pos], axis=1)
        quat = np.stack([table_column(table, c, path) for c in bc.quat], axis=1)
        norm = np.linalg.norm(quat, axis=1)
        bad = np.nonzero(np.abs(norm - 1.0) > 0.1)[0]
        if bad.size:
            raise InputError(
                path,
                f"[bodies.{name}] quat has norm {norm[bad[0]]:.3g} at row {int(bad[0])} (not a unit quaternion)",
            )
        quat = quat / norm[:, None]
        lin = (
            np.gradient(pos, t, axis=0)
            if bc.linvel is None
            else np.stack([table_column(table, c, path) for c in bc.linvel], axis=1)
        )
        if bc.angvel is None:
            ang = quat_rate_body(t, quat)
        else:
            ang = np.stack([table_column(table, c, path) for c in bc.angvel], axis=1)
            if bc.angvel_frame == "world":
                ang = rotate_to_body(quat, ang)
        pose[name] = np.concatenate([pos, quat], axis=1)
        vel[name] = np.concatenate([lin, ang], axis=1)
    names = tuple(log_map.joints)
    qpos = qvel = None
    if names:
        qpos = np.stack([table_column(table, log_map.joints[j].qpos, path) for j in names], axis=1)
        if all(log_map.joints[j].qvel for j in names):
            qvel = np.stack([table_column(table, str(log_map.joints[j].qvel), path) for j in names], axis=1)
        else:
            qvel = np.gradient(qpos, t, axis=0)
    notes = tuple(f"{path.name}: time gap {a:.4f}-{b:.4f} s" for a, b in find_gaps(t))
    return MotionLog(str(path), t, pose, vel, names, qpos, qvel, notes)


def read_motions(paths: tuple[Path, ...] | list[Path], log_map: LogMap, model=None) -> list[MotionLog]:
    """Every file of every path (folders in name order) → one ``MotionLog`` each."""
    return [read_motion(f, log_map, model) for p in paths for f in log_files(Path(p))]
