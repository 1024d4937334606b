"""`real2sim calibrate MODEL --log FILE... --map MAP.toml --fit PARAM[,PARAM...]... [--holdout FILE...] -o OUT_DIR [--json]`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.calibration.config import CalibrateCfg
from real2sim.cli.options import Opt, build, options
from real2sim.cli.sections import SectionedCommand
from real2sim.stdio import route_mujoco_warnings

SECTIONS = (
    (
        "Logs and maps",
        ("logs", "holdout", "map", "log_models", "despike", "qvel_from_qpos", "smooth_qvel_wn"),
    ),
    ("What to fit", ("fit",)),
    (
        "Method",
        (
            "method",
            "window_s",
            "max_windows",
            "qvel_weight",
            "velocity_filter_wn",
            "prior_weight",
            "randomize",
        ),
    ),
    ("Robots' actuators", ("gain_constant", "gain_reference")),
    ("Free bodies (contact)", ("contact_window_s", "contact_cone")),
    ("Outputs", ("out_dir", "overwrite", "report", "package", "as_json")),
)
"""The headings of ``calibrate --help``: its options by what they are for."""


@click.command("calibrate", cls=SectionedCommand, sections=SECTIONS)
@click.argument("model", type=click.Path(path_type=Path))
@options(
    CalibrateCfg,
    "logs",
    "map",
    "fit",
    "holdout",
    "out_dir",
    "overwrite",
    "method",
    "window_s",
    "contact_window_s",
    "contact_cone",
    "qvel_weight",
    "qvel_from_qpos",
    "smooth_qvel_wn",
    "velocity_filter_wn",
    "prior_weight",
    "max_windows",
    "report",
    "package",
    "despike",
    "gain_constant",
    "gain_reference",
    "log_models",
    "randomize",
    logs=Opt(("--log",), multiple=True, required=True),
    fit=Opt(multiple=True, required=True, commas=True),
    holdout=Opt(multiple=True),
    log_models=Opt(("--log-model",), multiple=True),
    out_dir=Opt(("-o", "--out"), required=True),
    overwrite=Opt(("--overwrite",)),
    window_s=Opt(("--window",)),
    contact_window_s=Opt(("--contact-window",)),
    smooth_qvel_wn=Opt(("--smooth-qvel",)),
    velocity_filter_wn=Opt(("--velocity-filter",)),
)
@click.option("--json", "as_json", is_flag=True, help="Print result.json to stdout.")
def command(model: Path, as_json: bool, **params: Any) -> None:
    """Fit friction, inertia, actuator and delay parameters of MODEL to robot logs."""
    cfg = build(CalibrateCfg, params, model=model)
    cfg.validate()  # light: bad options and missing files are reported before the fit's libraries load
    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.calibration.run import run_calibrate

    out_dir = params["out_dir"]
    res = run_calibrate(cfg)
    from real2sim.calibration.contact.run import ContactReport

    if isinstance(res, ContactReport):  # free bodies: a contact fit has its own summary
        from real2sim.calibration.contact.outputs import echo_summary

        echo_summary(res, as_json)
        return
    if as_json:
        from real2sim.atomic import dumps_json

        click.echo(dumps_json(res.to_json()), nl=False)
        return
    for p, v, s in zip(res.params, res.values, res.stderr, strict=True):
        click.echo(f"{p.name:40s} {v:12.6g} ± {s:.3g}")
    click.echo(f"cost {res.cost_initial:.6g} -> {res.cost_final:.6g}")
    for le in res.logs:
        click.echo(
            f"{le.file:30s} {le.split:8s} rmse_qpos {le.rmse_qpos:.4g} rad  rmse_qvel {le.rmse_qvel:.4g} rad/s"
        )
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"wrote {out_dir}")
