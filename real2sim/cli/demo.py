"""`real2sim demo`: the whole pipeline on sample_data/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from real2sim.cli.options import Opt, build, options
from real2sim.pipeline.config import DemoCfg
from real2sim.stdio import route_mujoco_warnings


@click.command("demo")
@options(
    DemoCfg,
    "out_dir",
    "overwrite",
    "sample_dir",
    "workers",
    out_dir=Opt(("-o", "--out", "--output")),
    overwrite=Opt(("--overwrite",)),
    sample_dir=Opt(("--sample",), type=click.Path(exists=True, file_okay=False, path_type=Path)),
)
def command(**params: Any) -> None:
    """Run everything on sample_data/ (scans -> scene -> sim package; robot logs -> calibration) and summarise."""
    from rich.console import Console

    route_mujoco_warnings()  # the inputs are checked: MuJoCo may load now
    from real2sim.pipeline.demo import render_summary, run_demo

    res = run_demo(build(DemoCfg, params))
    console = Console()
    for r in render_summary(res):
        console.print(r)
