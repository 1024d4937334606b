"""A stage's work in a process of its own, started before stages it does not depend on (``process`` runs the
calibration beside recon and export): its result and wall time, or the error it raised, come back through a pipe.

The process is spawned (Open3D and MuJoCo state is not fork-safe) with this process's environment, its thread
pools sized to ``threads`` when given (results do not depend on it: the tests compare the bytes). It shows no progress bars (the stages
running here show theirs); its log records go to stderr at this process's level. A run that fails elsewhere stops
it (``cancel``), so nothing is written after the command has reported its error.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from real2sim.errors import StageError

T = TypeVar("T")


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds, so atomic outputs remove their partial folders


def _child(fn: Callable[[Any], Any], arg: Any, conn: Any, level: int) -> None:
    import signal

    from real2sim.progress import configure

    signal.signal(signal.SIGTERM, _stop)
    configure(quiet=True)  # no bars from the background
    logging.getLogger().setLevel(level)
    t0 = time.perf_counter()
    try:
        msg: tuple[str, Any, float] = ("ok", fn(arg), time.perf_counter() - t0)
    except BaseException as exc:  # every failure goes back to the parent, which raises it
        try:
            pickle.dumps(exc)
        except Exception:
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        msg = ("error", exc, 0.0)
    conn.send(msg)
    conn.close()


class Background(Generic[T]):
    """``fn(arg)`` running in its own process from construction; ``result()`` waits for it."""

    def __init__(self, fn: Callable[[Any], T], arg: Any, what: str, threads: int | None = None) -> None:
        import multiprocessing as mp

        from real2sim.executor import spawn_env

        ctx = mp.get_context("spawn")
        self.what = what
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(fn, arg, send, logging.getLogger().getEffectiveLevel()))
        # the thread pools the process sizes when its libraries load
        with spawn_env(threads) if threads is not None else contextlib.nullcontext():
            self._proc.start()
        send.close()

    def result(self) -> tuple[T, float]:
        """The value and the seconds it took; the error it raised is raised here."""
        try:
            status, value, seconds = self._recv.recv()
        except EOFError:
            self._proc.join()
            raise StageError(
                f"{self.what}: its worker process died (exit code {self._proc.exitcode})"
            ) from None
        self._proc.join()
        if status == "error":
            raise value
        return value, seconds

    def cancel(self) -> None:
        """Stop the work (a failure elsewhere ended the run)."""
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join()
