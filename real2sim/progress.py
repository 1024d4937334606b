"""Progress bars and console output (rich), quiet when asked or when output is not a terminal."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)
_state = {"quiet": False}


def configure(verbosity: int = 0, quiet: bool = False) -> None:
    """Set log level from ``-v``/``-q`` (0: warnings, 1: info, 2: debug)."""
    _state["quiet"] = quiet
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logging.basicConfig(
        level=level,
        format="%(message)s",
        handlers=[_HANDLER],
        force=True,
    )
    logging.captureWarnings(
        True
    )  # Python warnings (numpy's RuntimeWarning ...) are log records, shown with -v
    logging.getLogger("py.warnings").setLevel(logging.WARNING if verbosity else logging.CRITICAL)


class DeferredLogs(logging.Handler):
    """The console's log handler, which can hold records while a command runs: replayed when it succeeds, dropped
    when it fails (the one ``error:`` line is then all the user reads)."""

    def __init__(self, target: logging.Handler) -> None:
        super().__init__(logging.NOTSET)
        self.target = target
        self.holding = False
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if self.holding:
            self.records.append(record)
        else:
            self.target.handle(record)

    def discard(self) -> None:
        self.records.clear()

    def replay(self) -> None:
        self.holding = False
        records, self.records = self.records, []
        for record in records:
            self.target.handle(record)


_HANDLER = DeferredLogs(RichHandler(console=console, show_time=False, show_path=False))


@contextlib.contextmanager
def deferred_logs(show: bool = False) -> Iterator[DeferredLogs]:
    """Hold the console's log records while the block runs (``show``: pass them through at once, as with -v)."""
    _HANDLER.holding = not show
    try:
        yield _HANDLER
    finally:
        _HANDLER.replay()


@contextlib.contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """``with progress("meshing", total=n) as advance: ... advance()``; silent when quiet or not a terminal."""
    if _state["quiet"] or not console.is_terminal:
        yield lambda k=1: None
        return
    cols = [
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*cols, console=console, transient=True) as p:
        task = p.add_task(description, total=total)
        yield lambda k=1: p.advance(task, k)


@contextlib.contextmanager
def step(description: str) -> Iterator[None]:
    """A spinner for one long step with no natural count."""
    if _state["quiet"] or not console.is_terminal:
        yield
        return
    with console.status(escape(description)):  # file names are text, not markup
        yield
