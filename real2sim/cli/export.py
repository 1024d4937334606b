"""`real2sim export` (not built yet)."""

from __future__ import annotations

import click

from real2sim.errors import NotBuiltError


@click.command("export", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args: tuple[str, ...]) -> None:
    """Not built yet."""
    raise NotBuiltError("'real2sim export' is not built yet")
