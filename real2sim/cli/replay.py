"""`real2sim replay TWIN/ --episodes DATASET [--mode kinematic|actuated|resync:N] [--variations K] -o OUT/`: real
episodes played in the twin; tracking error per joint, traces, and a LeRobot v3.0 sim dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.stdio import route_mujoco_warnings
from real2sim.twin.config import ReplayCfg


@click.command("replay")
@click.argument("twin", type=click.Path(path_type=Path))
@options(
    ReplayCfg,
    "episodes",
    "out_dir",
    "overwrite",
    "mode",
    "episode",
    "max_frames",
    "map",
    "lerobot_calibration",
    "units",
    "zero_to_100",
    "variations",
    "object_shift",
    "object_yaw",
    "seed",
    "dataset",
    "render",
    "render_width",
    "render_height",
    "plots",
    "max_lag",
    episodes=Opt(("--episodes",), required=True),
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    mode=Opt(metavar="kinematic|actuated|resync:N"),
)
def command(twin: Path, **params: Any) -> None:
    """Replay real episodes (LeRobot datasets, or logs through a map) in the twin TWIN."""
    check_path(twin, "dir", "no such twin folder")
    check_path(params["episodes"], "any", "no such dataset or log")
    cfg = build(ReplayCfg, params, twin=twin)
    cfg.validate()
    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.cli.echo import echo_summary
    from real2sim.twin.run import run_replay

    res = run_replay(cfg)
    if res.assumption:
        click.echo(f"assumption: {res.assumption}", err=True)
    lines = []
    for e in res.report["episodes"]:
        t = e["tracking"]
        per = ", ".join(f"{j} {v['rmse_rad']:.4f}" for j, v in t["joints"].items())
        lag = "n/a" if t["mean_lag_s"] is None else f"{t['mean_lag_s']:+.3f} s"
        if e.get("start_penetration"):
            click.echo(
                f"note: episode {e['episode']} starts with the robot inside the scene: "
                + "; ".join(e["start_penetration"][:3]),
                err=True,
            )
        lines.append(
            f"episode {e['episode']}: tracking RMSE [rad] mean {t['mean_rmse_rad']:.4f} ({per}); lag {lag}"
        )
    ds = res.report.get("dataset")
    lines.append(
        f"wrote {res.path}" + (f" (dataset/: {ds['episodes']} episodes, {ds['frames']} frames)" if ds else "")
    )
    echo_summary("\n".join(lines))
