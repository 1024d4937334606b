"""`real2sim twin --robot ROBOT.xml --scene PKG/ [--calibration CAL/] [--base-pose ...] -o TWIN/`: the robot composed
into a scene package, calibrated, standing where it stands, with a resting `home` keyframe."""

from __future__ import annotations

from typing import Any

import click

from real2sim.cli.inputs import check_path
from real2sim.cli.options import Opt, build, options
from real2sim.stdio import route_mujoco_warnings
from real2sim.twin.config import TwinCfg


@click.command("twin")
@options(
    TwinCfg,
    "robot",
    "scene",
    "out_dir",
    "overwrite",
    "calibration",
    "base_pose",
    "prefix",
    "home",
    "marker_images",
    "marker_cameras",
    "marker_size",
    "marker_dictionary",
    "marker_id",
    "base_from_marker",
    "icp_scan",
    "icp_scene",
    "icp_max_distance",
    "cameras",
    "cut_margin",
    "rest_seconds",
    "rest_limit",
    "usd",
    robot=Opt(("--robot",), required=True),
    scene=Opt(("--scene",), required=True),
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
)
def command(**params: Any) -> None:
    """Compose the robot's MJCF with a scene package into one calibrated twin (TWIN/scene.xml)."""
    check_path(params["robot"], "file", "no such robot model")
    check_path(params["scene"], "dir", "no such scene package")
    cfg = build(TwinCfg, params)
    cfg.validate()
    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.cli.echo import echo_summary
    from real2sim.twin.run import run_twin

    res = run_twin(cfg)
    doc = res.manifest
    b, h = doc["base"], doc["home"]
    for note in doc["notes"]:
        click.echo(f"note: {note}", err=True)
    usd = doc["usd"].get("file") or f"no USD ({doc['usd'].get('reason')})"
    echo_summary(
        f"wrote {res.path} (scene.xml, {usd}): {doc['robot']['name']} under {doc['robot']['prefix']} in "
        f"{doc['package']['name']}, base at {b['pos']} ({b['route']}, ± {b['sigma_position_m']} m); home rests: "
        f"objects move {h['max_object_motion_m'] * 1e3:.3f} mm in {h['seconds']:g} s"
    )
