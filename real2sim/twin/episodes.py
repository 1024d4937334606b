"""Real episodes for replay: a LeRobot dataset's episodes (v2.1 / v3.0) or a CSV / Parquet log, read through a log
map as ``real2sim calibrate`` reads them (``calibration/mapping.py``), in radians of the twin's joints; with what the
sim dataset needs to be written in the same features and units."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from real2sim.errors import InputError
from real2sim.trajectory import Trajectory
from real2sim.twin.compose import RobotInfo
from real2sim.twin.config import ReplayCfg
from real2sim.twin.units import MotorUnits


@dataclass(frozen=True)
class Episode:
    """One real episode in the twin's joint order: measured joint positions and commanded goals [rad]."""

    index: int
    traj: Trajectory
    """``qpos`` (N, joints), ``ctrl`` (N, actuators) [rad], names with the twin's prefix."""
    frames: dict[str, np.ndarray] = field(default_factory=dict)
    """The episode's original columns (for a LeRobot dataset: its parquet columns, vectors as (N, k))."""
    task: str = ""


@dataclass(frozen=True)
class Source:
    """What replay read: the episodes, the dataset's fps and features, the units of each joint and the notes."""

    path: Path
    fps: float
    episodes: tuple[Episode, ...]
    joints: tuple[str, ...]
    """The robot joints (unprefixed) of ``observation.state``, in its order."""
    actuators: tuple[str, ...]
    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    units: tuple[MotorUnits, ...]
    """Per state column: how its values relate to radians."""
    lerobot: bool
    info: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    assumption: str = ""


def _motor(name: str) -> str:
    return name.removesuffix(".pos")


def _names(info: dict, feature: str, path: Path) -> list[str]:
    spec = (info.get("features") or {}).get(feature)
    names = spec.get("names") if isinstance(spec, dict) else None
    if isinstance(names, dict):
        names = next(iter(names.values()), None)
    if not isinstance(names, list):
        raise InputError(path, f"the dataset's info.json gives no names for {feature!r}: give a --map")
    return [str(n) for n in names]


def _match(dataset_joints: list[str], robot: RobotInfo, path: Path) -> None:
    if sorted(dataset_joints) != sorted(robot.joints):
        raise InputError(
            path,
            f"the dataset's joints ({', '.join(dataset_joints)}; {len(dataset_joints)}) do not match the robot's "
            f"({', '.join(robot.joints)}; {len(robot.joints)}): give a --map naming each robot joint's column",
        )


def _tasks(path: Path) -> list[str]:
    """Task strings by task index (v3.0: meta/tasks.parquet, v2.1: meta/tasks.jsonl); [] when absent."""
    pq_path, jl = path / "meta" / "tasks.parquet", path / "meta" / "tasks.jsonl"
    if pq_path.is_file():
        import pyarrow.parquet as pq

        t = pq.read_table(pq_path).to_pydict()
        idx = t.get("task_index", [])
        text = t.get("__index_level_0__") or t.get("task") or [""] * len(idx)
        out = [""] * (max(idx, default=-1) + 1)
        for i, s in zip(idx, text, strict=True):
            out[int(i)] = str(s)
        return out
    if jl.is_file():
        rows = [json.loads(line) for line in jl.read_text().splitlines() if line.strip()]
        out = [""] * (max((int(r["task_index"]) for r in rows), default=-1) + 1)
        for r in rows:
            out[int(r["task_index"])] = str(r.get("task", ""))
        return out
    return []


def _lerobot_calibration(cfg: ReplayCfg) -> Path | None:
    if cfg.lerobot_calibration is not None:
        return Path(cfg.lerobot_calibration)
    own = Path(cfg.episodes) / "meta" / "calibration.json"
    return own if own.is_file() else None


def read_source(cfg: ReplayCfg, model, robot: RobotInfo) -> Source:
    """The selected episodes of ``cfg.episodes`` in the twin's joints (cut to ``cfg.max_frames``)."""
    from real2sim.calibration.logs import lerobot

    path = Path(cfg.episodes)
    if lerobot.is_dataset(path) and cfg.map is None:
        src = _read_lerobot(cfg, model, robot, path)
    elif cfg.map is None:
        raise InputError(
            path, "a log that is not a LeRobot dataset needs --map (log columns -> robot joints)"
        )
    else:
        src = _read_mapped(cfg, model, robot, path)
    if cfg.max_frames is None:
        return src
    return replace(src, episodes=tuple(_cut(e, cfg.max_frames) for e in src.episodes))


def _cut(ep: Episode, n: int) -> Episode:
    tr = ep.traj
    arrays = {
        k: getattr(tr, k)[:n] for k in ("qvel", "ctrl", "torque", "enable") if getattr(tr, k) is not None
    }
    poses = {k: v[:n] for k, v in tr.object_poses.items()}
    traj = replace(tr, time=tr.time[:n], qpos=tr.qpos[:n], object_poses=poses, **arrays)
    return replace(ep, traj=traj, frames={k: v[:n] for k, v in ep.frames.items()})


def _read_lerobot(cfg: ReplayCfg, model, robot: RobotInfo, path: Path) -> Source:
    from real2sim.calibration.logs import lerobot
    from real2sim.calibration.maps.logmap import JointColumns, LogMap, table_trajectory

    ds = lerobot.read_dataset(path)
    info = json.loads((path / "meta" / "info.json").read_text())
    state_names = _names(info, "observation.state", path)
    action_names = _names(info, "action", path)
    joints = [_motor(n) for n in state_names]
    _match(joints, robot, path)
    by_joint = {j: a for a, j in zip(robot.actuators, robot.actuator_joints, strict=True) if j}
    acts = []
    for n in action_names:
        m = _motor(n)
        if m not in by_joint and m not in robot.actuators:
            raise InputError(
                path,
                f"action {n!r} drives no actuator of the robot (actuators: {', '.join(robot.actuators)})",
            )
        acts.append(by_joint.get(m, m))
    calib = _lerobot_calibration(cfg)
    assumption = ""
    if cfg.units == "normalized" and calib is None:
        assumption = (
            f"{path}: no LeRobot calibration file (meta/calibration.json or --lerobot-calibration); each joint's "
            "normalised range (-100..100, "
            + "/".join(cfg.zero_to_100)
            + " 0..100) is taken as the model joint's "
            "range (actions: the actuator's ctrlrange), so angles may be off by a scale and an offset per joint"
        )
    pre = robot.prefix
    log_map = LogMap(
        time="timestamp",
        joints={
            pre + j: JointColumns(qpos=f"observation.state.{n}")
            for j, n in zip(joints, state_names, strict=True)
        },
        actuators={pre + a: f"action.{n}" for a, n in zip(acts, action_names, strict=True)},
        source=str(path),
        units=cfg.units,
        calibration=None if calib is None else str(calib),
        normalized_range="model" if calib is None else None,
        zero_to_100=tuple(cfg.zero_to_100),
    )
    have = ds.episodes
    chosen = list(cfg.episode) or have
    missing = [e for e in chosen if e not in have]
    if missing:
        raise InputError(
            path, f"episode {missing[0]} is not in the dataset (it has {', '.join(map(str, have))})"
        )
    tasks = _tasks(path)
    col = ds.table["episode_index"]
    episodes, notes = [], []
    for e in chosen:
        rows = {k: v[col == e] for k, v in ds.table.items()}
        tr, n = table_trajectory(rows, log_map, path / f"episode_{e:06d}", model, dataset=path)
        notes += n
        ti = int(rows["task_index"][0]) if "task_index" in rows and len(rows["task_index"]) else 0
        episodes.append(Episode(e, tr, _frames(rows), tasks[ti] if ti < len(tasks) else ""))
    units = _units(cfg, model, robot, joints, calib)
    return Source(path, ds.fps, tuple(episodes), tuple(joints), tuple(acts), tuple(state_names),
                  tuple(action_names), units, True, info, tuple(notes), assumption)  # fmt: skip


def _frames(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A dataset's columns regrouped: ``action[0..k]`` back into one (N, k) array per vector feature."""
    out: dict[str, np.ndarray] = {}
    vec: dict[str, dict[int, np.ndarray]] = {}
    for k, v in rows.items():
        if k.endswith("]") and "[" in k:
            base, _, i = k[:-1].rpartition("[")
            if i.isdigit():
                vec.setdefault(base, {})[int(i)] = v
                continue
        out[k] = v
    for base, parts in vec.items():
        out[base] = np.stack([parts[i] for i in sorted(parts)], axis=1)
    return out


def _units(
    cfg: ReplayCfg, model, robot: RobotInfo, joints: list[str], calib: Path | None
) -> tuple[MotorUnits, ...]:
    import mujoco

    from real2sim.calibration.logs.lerobot import load_calibration

    cal = load_calibration(calib) if calib is not None else None
    out = []
    for j in joints:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, robot.prefix + j)
        rng = (float(model.jnt_range[jid, 0]), float(model.jnt_range[jid, 1]))
        out.append(MotorUnits(cfg.units, j in cfg.zero_to_100, None if cal is None else cal.get(j), rng))
    return tuple(out)


def _read_mapped(cfg: ReplayCfg, model, robot: RobotInfo, path: Path) -> Source:
    """A log (or a dataset) through the user's map: joints and actuators named as in the robot's own model."""
    from real2sim.calibration.maps.logmap import load_map, load_trajectories

    assert cfg.map is not None
    m = load_map(cfg.map)
    _match(list(m.joints), robot, cfg.map)
    pre = robot.prefix
    prefixed = replace(
        m,
        joints={pre + j: c for j, c in m.joints.items()},
        actuators={pre + a: c for a, c in m.actuators.items()},
        enable={pre + a: c for a, c in m.enable.items()},
        episodes=tuple(cfg.episode) or m.episodes,
    )
    trajs, notes = load_trajectories(path, prefixed, model)
    if len(trajs[0].time) < 2:
        raise InputError(path, "the log has fewer than two samples")
    fps = 1.0 / float(np.median(np.diff(trajs[0].time)))
    episodes = []
    chosen = list(prefixed.episodes or range(len(trajs)))
    for e, tr in zip(chosen, trajs, strict=False):
        frames = {"observation.state": tr.qpos, "timestamp": tr.time}
        if tr.ctrl is not None:
            frames["action"] = tr.ctrl
        episodes.append(Episode(int(e), tr, frames))
    joints = tuple(j.removeprefix(pre) for j in prefixed.joints)
    acts = tuple(a.removeprefix(pre) for a in prefixed.actuators)
    units = tuple(MotorUnits("radians") for _ in joints)
    return Source(path, fps, tuple(episodes), joints, acts, joints, acts, units, False, {}, tuple(notes))
