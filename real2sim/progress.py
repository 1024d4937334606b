"""Progress bars and console output (rich), quiet when asked or when output is not a terminal."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Protocol

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)
_state = {"quiet": False}


class Advance(Protocol):
    """What ``progress`` yields: ``advance()`` one step, ``advance(k)`` k steps."""

    def __call__(self, k: int = 1) -> None: ...


def configure(verbosity: int = 0, quiet: bool = False) -> None:
    """Set log level from ``-v``/``-q`` (0: warnings, 1: info, 2: debug)."""
    _state["quiet"] = quiet
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logging.basicConfig(
        level=level,
        format="%(message)s",
        handlers=[RichHandler(console=console, show_time=False, show_path=False)],
        force=True,
    )


@contextlib.contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Advance]:
    """``with progress("meshing", total=n) as advance: ... advance()``; silent when quiet or not a terminal."""
    if _state["quiet"] or not console.is_terminal:
        yield lambda k=1: None
        return
    cols = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*cols, console=console, transient=True) as p:
        task = p.add_task(description, total=total)
        yield lambda k=1: p.advance(task, k)


@contextlib.contextmanager
def step(description: str) -> Iterator[None]:
    """A spinner for one long step with no natural count."""
    if _state["quiet"] or not console.is_terminal:
        yield
        return
    with console.status(description):
        yield
