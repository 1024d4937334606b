"""`real2sim demo`: the whole pipeline on sample_data/."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("demo")
@click.option(
    "-o",
    "--out",
    "--output",
    "output",
    default="demo_out",
    show_default=True,
    type=click.Path(path_type=Path),
    help="Output folder.",
)
@click.option(
    "--sample",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Sample session folder (default: ./sample_data or the checkout's).",
)
@click.option("--workers", default=0, show_default=True, help="Worker processes (0 = one per core).")
def command(output: Path, sample: Path | None, workers: int) -> None:
    """Run everything on sample_data/ (scans -> scene -> sim package; robot logs -> calibration) and summarise."""
    from rich.console import Console

    from real2sim.pipeline.demo import DemoCfg, render_summary, run_demo

    res = run_demo(DemoCfg(out_dir=output, sample_dir=sample, workers=workers))
    console = Console()
    for r in render_summary(res):
        console.print(r)
