"""What a command prints on stdout for the user: its result summary."""

from __future__ import annotations

import click


def echo_summary(text: str) -> None:
    """Print a result summary to stdout (tables and lines meant for the user, not logs)."""
    from real2sim.progress import get_console

    if get_console().is_terminal:
        from rich.console import Console

        Console().print(text, markup=False, highlight=False)
    else:
        click.echo(text)
