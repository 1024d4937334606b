"""Progress bars and console output (rich), quiet when asked or when output is not a terminal.

rich is imported on first use (a bar, a spinner, a log record), not at import: ``real2sim --help`` stays instant.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console
    from rich.logging import RichHandler

_state = {"quiet": False}


class Advance(Protocol):
    """What ``progress`` yields: ``advance()`` one step, ``advance(k)`` k steps."""

    def __call__(self, k: int = 1) -> None: ...


@functools.cache
def get_console() -> Console:
    """The stderr console that progress bars, spinners and log records share."""
    from rich.console import Console

    return Console(stderr=True)


def __getattr__(name: str) -> Any:
    if name == "console":  # ``from real2sim.progress import console`` still works, creating it on first use
        return get_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _LazyRichHandler(logging.Handler):
    """A ``RichHandler`` on the shared console, built when the first record is emitted."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self._rich: RichHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._rich is None:
            from rich.logging import RichHandler

            self._rich = RichHandler(console=get_console(), show_time=False, show_path=False)
            self._rich.setFormatter(self.formatter or logging.Formatter("%(message)s"))
        self._rich.emit(record)


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


_HANDLER = DeferredLogs(_LazyRichHandler())


def configure(verbosity: int = 0, quiet: bool = False) -> None:
    """Set log level from ``-v``/``-q`` (0: warnings, 1: info, 2: debug)."""
    _state["quiet"] = quiet
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logging.basicConfig(level=level, format="%(message)s", handlers=[_HANDLER], force=True)
    # Python warnings (numpy's RuntimeWarning ...) are log records, shown with -v
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").setLevel(logging.WARNING if verbosity else logging.CRITICAL)


@contextlib.contextmanager
def deferred_logs(show: bool = False) -> Iterator[DeferredLogs]:
    """Hold the console's log records while the block runs (``show``: pass them through at once, as with -v)."""
    _HANDLER.holding = not show
    try:
        yield _HANDLER
    finally:
        _HANDLER.replay()


@contextlib.contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Advance]:
    """``with progress("meshing", total=n) as advance: ... advance()``; silent when quiet or not a terminal."""
    if _state["quiet"] or not get_console().is_terminal:
        yield lambda k=1: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cols = [
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*cols, console=get_console(), transient=True) as p:
        task = p.add_task(description, total=total)
        yield lambda k=1: p.advance(task, k)


@contextlib.contextmanager
def step(description: str) -> Iterator[None]:
    """A spinner for one long step with no natural count."""
    if _state["quiet"] or not get_console().is_terminal:
        yield
        return
    from rich.markup import escape

    with get_console().status(escape(description)):  # file names are text, not markup
        yield
