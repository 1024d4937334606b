"""LeRobot datasets (v2.1 and v3.0): read a dataset folder into one table, and convert LeRobot's units to radians.

A dataset folder holds ``meta/info.json`` and parquet files under ``data/`` (v2.1: ``chunk-XXX/episode_XXXXXX.parquet``,
v3.0: ``chunk-XXX/file-XXX.parquet``). Every row carries ``episode_index``; vector features are split into
``observation.state[i]`` and aliased by the names in ``info.json``: ``observation.state.shoulder_pan.pos``.

Units, as LeRobot writes them (``lerobot.motors.motors_bus``): a motor in ``RANGE_M100_100`` maps its calibrated
tick range [range_min, range_max] onto -100..100, ``RANGE_0_100`` (grippers) onto 0..100, both mirrored when
``drive_mode`` is 1; ``DEGREES`` is degrees about the middle of the range. The calibration JSON is the one LeRobot
saves per robot: ``{motor: {id, drive_mode, homing_offset, range_min, range_max}}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.bounded import load_json
from real2sim.errors import InputError

TICKS_PER_TURN = 4096
"""Feetech STS3215 / Dynamixel XL330 resolution: LeRobot's ``model_resolution_table`` (4096 for both)."""


def is_dataset(path: Path) -> bool:
    return path.is_dir() and (path / "meta" / "info.json").is_file()


@dataclass(frozen=True)
class Dataset:
    """A LeRobot dataset read whole: its rows as float columns and what ``meta/info.json`` says."""

    path: Path
    version: str
    fps: float
    table: dict[str, np.ndarray]
    names: dict[str, str]
    """Named column (``observation.state.shoulder_pan.pos``) → the split column (``observation.state[0]``)."""

    @property
    def episodes(self) -> list[int]:
        return [int(e) for e in np.unique(self.table["episode_index"])]


def _data_files(path: Path, info: dict) -> list[Path]:
    files = sorted((path / "data").glob("chunk-*/*.parquet"))
    if not files:
        pattern = info.get("data_path", "data/chunk-XXX/*.parquet")
        raise InputError(path, f"LeRobot dataset has no parquet files under data/ (info.json: {pattern})")
    return files


def read_dataset(path: str | Path) -> Dataset:
    """All data files of the dataset, concatenated in file order."""
    from real2sim.calibration.logs.columns import read_parquet

    path = Path(path)
    info = load_json(path / "meta" / "info.json", "LeRobot info.json")
    if not isinstance(info, dict):
        raise InputError(path / "meta" / "info.json", "LeRobot info.json must hold a JSON object")
    version = str(info.get("codebase_version", "?"))
    if version.split(".")[0] not in ("v2", "v3"):
        raise InputError(path, f"LeRobot codebase_version {version!r} is not supported (v2.1 or v3.0)")
    parts = [read_parquet(f) for f in _data_files(path, info)]
    keys = [k for k in parts[0] if all(k in p for p in parts)]
    table = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    if "episode_index" not in table:
        raise InputError(path, "LeRobot data files have no episode_index column")
    names: dict[str, str] = {}
    for feat, spec in (info.get("features") or {}).items():
        fnames = spec.get("names") if isinstance(spec, dict) else None
        if isinstance(fnames, dict):  # v2.0 style {"motors": [...]}
            fnames = next(iter(fnames.values()), None)
        if spec.get("dtype") in ("video", "image") or not isinstance(fnames, list):
            continue
        for i, n in enumerate(fnames):
            if f"{feat}[{i}]" in table:
                names[f"{feat}.{n}"] = f"{feat}[{i}]"
    for alias, col in names.items():
        table.setdefault(alias, table[col])
    return Dataset(path, version, float(info.get("fps", 0.0)), table, names)


def motor_of(column: str) -> str:
    """``observation.state.shoulder_pan.pos`` → ``shoulder_pan``; a column without a motor name → itself."""
    for feat in ("observation.state.", "action."):
        if column.startswith(feat):
            column = column[len(feat) :]
    return column.removesuffix(".pos")


def load_calibration(path: Path) -> dict[str, dict]:
    """LeRobot's calibration JSON: ``{motor: {id, drive_mode, homing_offset, range_min, range_max}}``."""
    doc = load_json(Path(path), "LeRobot calibration file")
    if not isinstance(doc, dict):
        raise InputError(path, "the LeRobot calibration file must hold a JSON object")
    for motor, c in doc.items():
        if not isinstance(c, dict) or not {"range_min", "range_max"} <= set(c):
            raise InputError(
                path, f"motor {motor!r} needs range_min and range_max (LeRobot calibration JSON)"
            )
        if c["range_max"] == c["range_min"]:
            raise InputError(path, f"motor {motor!r} has range_min == range_max")
    return doc


def to_radians(
    values: np.ndarray, motor: str, units: str, calib: dict[str, dict] | None, zero_to_100: bool
) -> np.ndarray:
    """LeRobot values of one motor → radians about the middle of its calibrated range (the SO-101 "new calib"
    zero). ``units``: 'normalized' (needs ``calib``) or 'degrees' (``zero_to_100`` motors stay normalised)."""
    v = np.asarray(values, float)
    if units == "degrees" and not zero_to_100:
        return np.deg2rad(v)
    if calib is None or motor not in calib:
        raise KeyError(motor)
    c = calib[motor]
    lo, hi = float(c["range_min"]), float(c["range_max"])
    mirrored = bool(c.get("drive_mode", 0))
    if zero_to_100:
        frac = (100.0 - v if mirrored else v) / 100.0
    else:
        frac = ((-v if mirrored else v) + 100.0) / 200.0
    ticks = lo + frac * (hi - lo)
    return (ticks - 0.5 * (lo + hi)) * (2 * np.pi / TICKS_PER_TURN)


def to_model_range(values: np.ndarray, lo: float, hi: float, zero_to_100: bool) -> np.ndarray:
    """Normalised values mapped linearly onto a model joint's range [lo, hi] (no calibration file)."""
    v = np.asarray(values, float)
    frac = v / 100.0 if zero_to_100 else (v + 100.0) / 200.0
    return lo + frac * (hi - lo)
