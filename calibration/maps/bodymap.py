"""Map tables of free bodies (``[bodies.NAME]``) and the map's valid keys (an unknown key names the nearest)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from real2sim.errors import InputError

BodyFrame = Literal["body", "world"]


@dataclass(frozen=True)
class BodyColumns:
    """The log columns of one free body: its pose, optionally its velocities.

    ``quat`` lists the columns in the order w, x, y, z of the quaternion (world from body), whatever order the
    file stores them in: a log with x-y-z-w columns ``q0..q3`` maps as ``quat = ["q3", "q0", "q1", "q2"]``.
    """

    pos: tuple[str, str, str]
    """Columns of the body origin in the world frame [m]."""
    quat: tuple[str, str, str, str]
    """Columns of the orientation quaternion, listed w, x, y, z."""
    linvel: tuple[str, str, str] | None = None
    """Columns of the linear velocity of the body origin in the world frame [m/s]; None: from the positions."""
    angvel: tuple[str, str, str] | None = None
    """Columns of the angular velocity [rad/s]; None: from the quaternions."""
    angvel_frame: BodyFrame = "body"
    """Frame of ``angvel``: 'body' (as MuJoCo's free joint) or 'world'."""


TOP_KEYS = (
    "time", "rate", "time_scale", "joints", "actuators", "bodies", "episode", "episode_column", "episodes",
    "holdout_episodes", "units", "calibration", "normalized_range", "zero_to_100", "constants",
)  # fmt: skip
SECTION_KEYS = {
    "joints": ("qpos", "qvel", "torque"),
    "actuators": ("ctrl", "enable"),
    "bodies": ("pos", "quat", "linvel", "angvel", "angvel_frame"),
}


def unknown_keys(keys, valid: tuple[str, ...], where: str, path: Path) -> None:
    """An unknown key → ``InputError`` naming the nearest valid one."""
    import difflib

    for k in keys:
        if k not in valid:
            near = difflib.get_close_matches(str(k), valid, n=1, cutoff=0.0)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise InputError(path, f"unknown key {k!r} in {where}{hint}; valid: {', '.join(valid)}")


def _columns(v, n: int, what: str, path: Path) -> tuple[str, ...]:
    if not isinstance(v, list) or len(v) != n or not all(isinstance(c, str) and c for c in v):
        raise InputError(path, f"{what} must be a list of {n} column names, got {v!r}")
    return tuple(v)


def bodies_of(doc: dict, path: Path) -> dict[str, BodyColumns]:
    out = {}
    for name, b in (doc.get("bodies") or {}).items():
        if not isinstance(b, dict) or "pos" not in b or "quat" not in b:
            raise InputError(
                path, f'[bodies.{name}] needs pos = ["x","y","z"] and quat = ["qw","qx","qy","qz"]'
            )
        unknown_keys(b, SECTION_KEYS["bodies"], f"[bodies.{name}]", path)
        frame = b.get("angvel_frame", "body")
        if frame not in ("body", "world"):
            raise InputError(path, f'[bodies.{name}] angvel_frame must be "body" or "world", got {frame!r}')
        lin, ang = b.get("linvel"), b.get("angvel")
        out[name] = BodyColumns(
            pos=_columns(b["pos"], 3, f"[bodies.{name}] pos", path),  # type: ignore[arg-type]
            quat=_columns(b["quat"], 4, f"[bodies.{name}] quat (w, x, y, z)", path),  # type: ignore[arg-type]
            linvel=None if lin is None else _columns(lin, 3, f"[bodies.{name}] linvel", path),  # type: ignore[arg-type]
            angvel=None if ang is None else _columns(ang, 3, f"[bodies.{name}] angvel", path),  # type: ignore[arg-type]
            angvel_frame=frame,
        )
    return out
