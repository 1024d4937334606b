"""The TOML map (log columns → model joints/actuators) and ``load_trajectory``: file + map → ``Trajectory``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from real2sim.calibration.logs.read import Table, read_log
from real2sim.calibration.maps.bodymap import SECTION_KEYS, TOP_KEYS, BodyColumns, bodies_of, unknown_keys
from real2sim.errors import InputError
from real2sim.trajectory import Trajectory

Units = Literal["radians", "degrees", "normalized"]


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
    rate: float | None = None
    """Sample rate [Hz] for logs without a time column (e.g. ACT/ALOHA HDF5 episodes); then ``time`` is ''."""
    source: str = ""
    """The map file it was read from."""
    episode: int | None = None
    """With several episodes in one file (LeRobot ``episode_index``): the one to load."""
    episode_column: str = "episode_index"
    episodes: tuple[int, ...] | None = None
    """LeRobot dataset folders: the episodes to load as training logs (None: ``episode`` or all)."""
    holdout_episodes: tuple[int, ...] | None = None
    """LeRobot dataset folders given as held-out logs: their episodes (None: as ``episodes``)."""
    units: Units | None = None
    """Unit of the position columns (qpos, qvel, ctrl): radians (None: radians, LeRobot datasets: normalized)."""
    calibration: str | None = None
    """LeRobot calibration JSON of the robot (normalised units → radians)."""
    normalized_range: Literal["model"] | None = None
    """'model': map each motor's normalised range onto the model joint's range (no calibration file)."""
    zero_to_100: tuple[str, ...] = ("gripper",)
    """Motors LeRobot normalises to 0..100 (``RANGE_0_100``) instead of -100..100."""
    enable: dict[str, str] = field(default_factory=dict)
    """Model actuator name → the column of its on/off flag (``enable = "COLUMN"``; nonzero = powered)."""
    constants: tuple[str, ...] = ()
    """Columns (e.g. JSON header values such as ``kp``) read as per-log constants."""
    bodies: dict[str, BodyColumns] = field(default_factory=dict)
    """Model free-body name → its pose (and velocity) columns."""


def load_map(path: str | Path) -> LogMap:
    path = Path(path)
    if not path.exists():
        raise InputError(path, "map file does not exist")
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, f"not valid TOML: {e}") from None
    unknown_keys(doc, TOP_KEYS, "the map", path)
    for sec, valid in SECTION_KEYS.items():
        for name, body in (doc.get(sec) or {}).items():
            if isinstance(body, dict):
                unknown_keys(body, valid, f"[{sec}.{name}]", path)
    rate = doc.get("rate")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0):
        raise InputError(path, f"rate must be a positive number of samples per second, got {rate!r}")
    if rate is not None and "time" not in doc:
        doc["time"] = ""
    if "time" not in doc or not isinstance(doc["time"], str):
        raise InputError(path, "missing 'time = \"<column>\"' (or 'rate = <Hz>' for logs without time)")
    joints = {}
    for name, j in (doc.get("joints") or {}).items():
        if not isinstance(j, dict) or "qpos" not in j:
            raise InputError(path, f'[joints.{name}] needs qpos = "<column>"')
        joints[name] = JointColumns(qpos=j["qpos"], qvel=j.get("qvel"), torque=j.get("torque"))
    bodies = bodies_of(doc, path)
    if not joints and not bodies:
        raise InputError(path, "no [joints.<name>] or [bodies.<name>] table")
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
    units = doc.get("units")
    if units is not None and units not in get_args(Units):
        raise InputError(path, f"units must be one of {', '.join(get_args(Units))}, got {units!r}")
    nrange = doc.get("normalized_range")
    if nrange not in (None, "model"):
        raise InputError(path, f'normalized_range must be "model", got {nrange!r}')
    calib = doc.get("calibration")
    if calib is not None:
        calib = str((path.parent / calib).resolve())
        if not Path(calib).is_file():
            raise InputError(path, f"calibration file {calib} does not exist")
    return LogMap(
        time=doc["time"],
        rate=None if rate is None else float(rate),
        joints=joints,
        actuators=actuators,
        time_scale=float(doc.get("time_scale", LogMap.time_scale)),
        source=str(path),
        episode=episode,
        episode_column=str(doc.get("episode_column", LogMap.episode_column)),
        episodes=_int_list(doc, "episodes", path),
        holdout_episodes=_int_list(doc, "holdout_episodes", path),
        units=units,
        calibration=calib,
        normalized_range=nrange,
        zero_to_100=tuple(doc.get("zero_to_100", LogMap.zero_to_100)),
        enable=enable,
        constants=tuple(str(c) for c in doc.get("constants", ())),
        bodies=bodies,
    )


def _int_list(doc: dict, key: str, path: Path) -> tuple[int, ...] | None:
    v = doc.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not v or any(isinstance(e, bool) or not isinstance(e, int) for e in v):
        raise InputError(path, f"{key} must be a non-empty list of integers, got {v!r}")
    return tuple(v)


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


def table_column(table: Table, col: str, path: Path) -> np.ndarray:
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
        table_column(table, log_map.enable[a], path) != 0 if a in log_map.enable else np.ones(n, bool)
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
    path = Path(path)
    return table_trajectory(select_episode(read_log(path), log_map, path), log_map, path, model)


def load_trajectories(
    path: str | Path, log_map: LogMap, model=None, holdout: bool = False
) -> tuple[list[Trajectory], list[str]]:
    """A log file → one trajectory; a LeRobot dataset folder → one per selected episode."""
    from real2sim.calibration.logs import lerobot

    path = Path(path)
    if not lerobot.is_dataset(path):
        tr, notes = load_trajectory(path, log_map, model)
        return [tr], notes
    ds = lerobot.read_dataset(path)
    if holdout and log_map.holdout_episodes is None:
        raise InputError(
            path,
            "a LeRobot dataset given as --holdout needs holdout_episodes = [...] in the map (else it "
            "would hold out the training episodes)",
        )
    chosen = (log_map.holdout_episodes if holdout else None) or log_map.episodes
    if chosen is None:
        chosen = (log_map.episode,) if log_map.episode is not None else tuple(ds.episodes)
    missing = [e for e in chosen if e not in ds.episodes]
    if missing:
        raise InputError(path, f"episodes {missing} are not in the dataset (has {ds.episodes})")
    trajs, notes = [], []
    col = ds.table["episode_index"]
    for e in chosen:
        rows = {k: v[col == e] for k, v in ds.table.items()}
        tr, n = table_trajectory(rows, log_map, path / f"episode_{e:06d}", model, dataset=path)
        trajs.append(tr)
        notes += n
    return trajs, notes


MAX_SAMPLE_INTERVAL = 1.0
"""Largest median interval [s] between log samples: a robot log samples at 1 Hz or faster, so a longer one says
the time column is not in seconds (milliseconds, nanoseconds) and the map's ``time_scale`` is missing."""


def _check_time_unit(t: np.ndarray, log_map: LogMap, path: Path) -> None:
    if len(t) < 2:
        return
    dt = float(np.median(np.diff(t)))
    if dt > MAX_SAMPLE_INTERVAL:
        raise InputError(
            path,
            f"time column {log_map.time!r} steps by a median {dt:.4g} s after time_scale {log_map.time_scale:g}: "
            "not seconds? give the map 'time_scale' (0.001 for milliseconds, 1e-9 for nanoseconds)",
        )


def table_trajectory(
    table: Table, log_map: LogMap, path: Path, model=None, dataset: Path | None = None
) -> tuple[Trajectory, list[str]]:
    """One table (one log or episode) → ``Trajectory``; positions converted to radians per the map's units."""
    import mujoco

    if model is not None:
        for j in log_map.joints:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j) < 0:
                raise InputError(log_map.source or path, f"joint {j!r} in the map is not in the model")
        for a in log_map.actuators:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) < 0:
                raise InputError(log_map.source or path, f"actuator {a!r} in the map is not in the model")
    if log_map.time:
        t = table_column(table, log_map.time, path) * log_map.time_scale
    else:  # no time column: samples at the map's rate
        n = table_column(table, next(iter(log_map.joints.values())).qpos, path).size
        assert log_map.rate is not None  # read_log_map requires a rate where there is no time column
        t = np.arange(n) / log_map.rate
    back = np.nonzero(np.diff(t) <= 0)[0]
    if back.size:
        i = int(back[0]) + 1
        raise InputError(
            path, f"time column {log_map.time!r} runs backwards or repeats at row {i} ({t[i - 1]} -> {t[i]})"
        )
    t = t - t[0]
    _check_time_unit(t, log_map, path)
    units = log_map.units or ("normalized" if dataset is not None else "radians")
    conv = _converter(log_map, units, model, dataset or path)
    names = tuple(log_map.joints)
    qpos = np.stack(
        [
            conv(table_column(table, log_map.joints[j].qpos, path), log_map.joints[j].qpos, ("joint", j))
            for j in names
        ],
        axis=1,
    )
    qvel = None
    qvel_cols = [c for j in names if (c := log_map.joints[j].qvel)]
    if len(qvel_cols) == len(names):
        qvel = np.stack([table_column(table, c, path) for c in qvel_cols], axis=1)
        if units == "degrees":
            qvel = np.deg2rad(qvel)
        elif units == "normalized":
            raise InputError(
                dataset or path, "velocities in normalised units cannot be converted; map no qvel"
            )
    torque = None
    torque_cols = [c for j in names if (c := log_map.joints[j].torque)]
    if len(torque_cols) == len(names):
        torque = np.stack([table_column(table, c, path) for c in torque_cols], axis=1)
    acts = tuple(log_map.actuators)
    ctrl = None
    if acts:
        ctrl = np.stack(
            [
                conv(table_column(table, log_map.actuators[a], path), log_map.actuators[a], ("actuator", a))
                for a in acts
            ],
            axis=1,
        )
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
        constants={c: float(table_column(table, c, path)[0]) for c in log_map.constants},
    )
    return traj, notes


def _converter(log_map: LogMap, units: str, model, where: Path):
    """``(values, column, (kind, element)) → radians`` for the map's units (identity for radians)."""
    from real2sim.calibration.logs import lerobot

    if units == "radians":
        return lambda v, col, el: v
    calib = lerobot.load_calibration(Path(log_map.calibration)) if log_map.calibration else None
    by_range = log_map.normalized_range == "model"
    if units == "normalized" and calib is None and not by_range:
        raise InputError(
            where,
            "positions are in LeRobot's normalised units (-100..100, gripper 0..100) and the map names no "
            'calibration file: add calibration = "<robot>.json" (LeRobot\'s calibration of this robot) or '
            'normalized_range = "model" to the map',
        )

    def conv(v: np.ndarray, col: str, el: tuple[str, str]) -> np.ndarray:
        motor = lerobot.motor_of(col)
        z100 = motor in log_map.zero_to_100
        if units == "degrees" and not z100:
            return np.deg2rad(v)
        if calib is not None:
            if motor not in calib:
                raise InputError(
                    log_map.calibration or where, f"no motor {motor!r} (column {col!r}) in the calibration"
                )
            return lerobot.to_radians(v, motor, "normalized", calib, z100)
        if by_range and model is not None:
            lo, hi = _model_range(model, *el)
            return lerobot.to_model_range(v, lo, hi, z100)
        raise InputError(
            where,
            f'column {col!r} (motor {motor!r}) is normalised 0..100: the map needs calibration = "<robot>.json" '
            'or normalized_range = "model"',
        )

    return conv


def _model_range(model, kind: str, name: str) -> tuple[float, float]:
    import mujoco

    if kind == "actuator":
        a = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        if model.actuator_ctrllimited[a]:
            return float(model.actuator_ctrlrange[a, 0]), float(model.actuator_ctrlrange[a, 1])
        jid = int(model.actuator_trnid[a, 0])
    else:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if not model.jnt_limited[jid]:
        raise InputError(name, 'normalized_range = "model" needs a joint range in the model')
    return float(model.jnt_range[jid, 0]), float(model.jnt_range[jid, 1])
