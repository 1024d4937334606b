"""The session's two description files: ``session.toml`` (what the session holds) and ``ground_truth.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from real2sim.atomic import dumps_json, write_text


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps_toml(tables: dict[str, dict[str, Any]]) -> str:
    """TOML text for a two-level mapping ``{table: {key: value}}`` (values: scalars, lists, inline tables)."""
    out = []
    for name, items in tables.items():
        out.append(f"[{name}]")
        out += [f"{k} = {_toml_value(v)}" for k, v in items.items()]
        out.append("")
    return "\n".join(out)


def session_tables(
    lidar_files: list[str],
    marker: dict[str, Any],
    robot: dict[str, Any] | None,
    default_density: float = 500.0,
    friction: float = 0.8,
) -> dict[str, dict[str, Any]]:
    """The ``session.toml`` content. ``robot`` is the ground-truth dict of ``write_robot`` (its last log is held out),
    or None when the session has no robot."""
    tables: dict[str, dict[str, Any]] = {
        "session": {"name": "sample_tabletop"},
        "lidar": {"files": lidar_files, "poses": "lidar/poses.json", "units": "m"},
        "photos": {
            "dir": "images",
            "marker": {"dictionary": marker["dictionary"], "id": marker["id"], "size": marker["size"]},
        },
        "objects": {"density": default_density, "friction": friction},
    }
    if robot is not None:
        logs = [lg["file"] for lg in robot["logs"]]
        tables["robot"] = {
            "model": robot["model"],
            "map": robot.get("map", "logs/map.toml"),
            "logs": logs[:-1],
            "holdout": logs[-1:],
            "fit": ["joint:*.damping", "joint:*.frictionloss", "joint:*.armature", "delay:*"],
        }
    return tables


def write_session(out_dir: Path, tables: dict[str, dict[str, Any]], ground_truth: dict[str, Any]) -> None:
    write_text(out_dir / "session.toml", dumps_toml(tables))
    write_text(out_dir / "ground_truth.json", dumps_json(ground_truth))
