"""`real2sim demo`: the whole pipeline on sample_data/ (not built yet)."""

from __future__ import annotations

import click

from real2sim.errors import NotBuiltError


@click.command("demo")
@click.option("-o", "--output", default="demo_out", type=click.Path(), help="Output folder.")
def command(output: str) -> None:
    """Run everything on sample_data/ and print a summary."""
    raise NotBuiltError("'real2sim demo' is not built yet")
