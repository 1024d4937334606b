"""The TOML map (log columns → model joints/actuators) and ``load_trajectory``: file + map → ``Trajectory``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.calibration.logs import Table, read_table
from real2sim.errors import InputError
from real2sim.trajectory import Trajectory


@dataclass(frozen=True)
class JointColumns:
    """The log columns of one joint."""

    qpos: str
    """Position [rad or m]."""
    qvel: str | None = None
    """Velocity [rad/s or m/s]; None: derived from qpos by an explicit step."""
    torque: str | None = None
    """Measured joint torque [N·m or N]; None: not logged."""


@dataclass(frozen=True)
class LogMap:
    """Which column holds time, each joint's position/velocity/torque and each actuator's ctrl."""

    time: str
    """Column holding the sample time."""
    joints: dict[str, JointColumns]
    """Model joint name → its columns."""
    actuators: dict[str, str]
    """Model actuator name → the column of its ctrl."""
    time_scale: float = 1.0
    """Factor from the time column's unit to seconds."""
    source: str = ""
    """The map file it was read from."""
    episode: int | None = None
    """With several episodes in one file (LeRobot ``episode_index``): the one to load."""
    episode_column: str = "episode_index"
    enable: dict[str, str] = field(default_factory=dict)
    """Model actuator name → the column of its on/off flag (``enable = "COLUMN"``; nonzero = powered)."""
    constants: tuple[str, ...] = ()
    """Columns (e.g. JSON header values such as ``kp``) read as per-log constants."""


def load_map(path: str | Path) -> LogMap:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "map file does not exist")
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, f"not valid TOML: {e}") from None
    if "time" not in doc or not isinstance(doc["time"], str):
        raise InputError(path, "missing 'time = \"<column>\"'")
    joints = {}
    for name, j in (doc.get("joints") or {}).items():
        if not isinstance(j, dict) or "qpos" not in j:
            raise InputError(path, f'[joints.{name}] needs qpos = "<column>"')
        joints[name] = JointColumns(qpos=j["qpos"], qvel=j.get("qvel"), torque=j.get("torque"))
    if not joints:
        raise InputError(path, "no [joints.<name>] table")
    actuators, enable = {}, {}
    for name, a in (doc.get("actuators") or {}).items():
        if not isinstance(a, dict) or "ctrl" not in a:
            raise InputError(path, f'[actuators.{name}] needs ctrl = "<column>"')
        actuators[name] = a["ctrl"]
        if "enable" in a:
            enable[name] = str(a["enable"])
    episode = doc.get("episode")
    if episode is not None and (isinstance(episode, bool) or not isinstance(episode, int)):
        raise InputError(path, f"episode must be an integer, got {episode!r}")
    return LogMap(
        time=doc["time"],
        joints=joints,
        actuators=actuators,
        time_scale=float(doc.get("time_scale", LogMap.time_scale)),
        source=str(path),
        episode=episode,
        episode_column=str(doc.get("episode_column", LogMap.episode_column)),
        enable=enable,
        constants=tuple(str(c) for c in doc.get("constants", ())),
    )


def select_episode(table: Table, log_map: LogMap, path: Path) -> Table:
    """Rows of one episode when the log holds several (LeRobot datasets); the map's ``episode`` picks it."""
    col = table.get(log_map.episode_column)
    if col is None:
        if log_map.episode is not None:
            raise InputError(
                path,
                f"the map selects episode {log_map.episode} but the log has no "
                f"{log_map.episode_column!r} column",
            )
        return table
    episodes = np.unique(col)
    if log_map.episode is None:
        if episodes.size > 1:
            raise InputError(
                path,
                f"log holds {episodes.size} episodes in {log_map.episode_column!r} "
                f"({', '.join(str(int(e)) for e in episodes[:10])}); choose one with "
                "episode = N in the map",
            )
        return table
    keep = col == log_map.episode
    if not np.any(keep):
        raise InputError(
            path,
            f"episode {log_map.episode} is not in the log (has "
            f"{', '.join(str(int(e)) for e in episodes[:10])})",
        )
    return {k: v[keep] for k, v in table.items()}


def _column(table: Table, col: str, path: Path) -> np.ndarray:
    if col not in table:
        close = [c for c in table if c.lower() == col.lower()]
        hint = f" (did you mean {close[0]!r}?)" if close else f" (columns: {', '.join(list(table)[:20])})"
        raise InputError(path, f"column {col!r} named in the map is not in the log{hint}")
    v = table[col]
    bad = np.nonzero(~np.isfinite(v))[0]
    if bad.size:
        raise InputError(path, f"column {col!r} has NaN/inf at row {int(bad[0])} ({bad.size} rows in all)")
    return v


def _enable(table: Table, log_map: LogMap, acts: tuple[str, ...], path: Path, n: int) -> np.ndarray | None:
    if not log_map.enable:
        return None
    on = [
        _column(table, log_map.enable[a], path) != 0 if a in log_map.enable else np.ones(n, bool)
        for a in acts
    ]
    return np.stack(on, axis=1)


def find_gaps(time: np.ndarray, factor: float = 3.0) -> list[tuple[float, float]]:
    """Intervals (start, end) where the sample spacing exceeds ``factor`` × the median spacing."""
    dt = np.diff(time)
    med = float(np.median(dt))
    idx = np.nonzero(dt > factor * med)[0]
    return [(float(time[i]), float(time[i + 1])) for i in idx]


def load_trajectory(path: str | Path, log_map: LogMap, model=None) -> tuple[Trajectory, list[str]]:
    """Read one log through the map. Returns the trajectory and notes (e.g. time gaps found).

    With ``model`` (an MjModel) the joint and actuator names are checked against it.
    """
    import mujoco

    path = Path(path)
    table = select_episode(read_table(path), log_map, path)
    if model is not None:
        for j in log_map.joints:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) < 0:
                raise InputError(log_map.source or path, f"joint {j!r} in the map is not in the model")
        for a in log_map.actuators:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) < 0:
                raise InputError(log_map.source or path, f"actuator {a!r} in the map is not in the model")
    t = _column(table, log_map.time, path) * log_map.time_scale
    back = np.nonzero(np.diff(t) <= 0)[0]
    if back.size:
        i = int(back[0]) + 1
        raise InputError(
            path, f"time column {log_map.time!r} runs backwards or repeats at row {i} ({t[i - 1]} -> {t[i]})"
        )
    t = t - t[0]
    names = tuple(log_map.joints)
    qpos = np.stack([_column(table, log_map.joints[j].qpos, path) for j in names], axis=1)
    qvel = None
    if all(log_map.joints[j].qvel for j in names):
        qvel = np.stack([_column(table, log_map.joints[j].qvel, path) for j in names], axis=1)
    torque = None
    if all(log_map.joints[j].torque for j in names):
        torque = np.stack([_column(table, log_map.joints[j].torque, path) for j in names], axis=1)
    acts = tuple(log_map.actuators)
    ctrl = np.stack([_column(table, log_map.actuators[a], path) for a in acts], axis=1) if acts else None
    notes = [f"{path.name}: time gap {a:.4f}-{b:.4f} s" for a, b in find_gaps(t)]
    traj = Trajectory(
        time=t,
        qpos=qpos,
        joint_names=names,
        qvel=qvel,
        ctrl=ctrl,
        actuator_names=acts,
        torque=torque,
        source=str(path),
        enable=_enable(table, log_map, acts, path, t.shape[0]),
        constants={c: float(_column(table, c, path)[0]) for c in log_map.constants},
    )
    return traj, notes
