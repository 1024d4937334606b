"""A stage's work on a thread beside the stages before it, its progress displays silent (one live display at once)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from real2sim.progress import silent


class Background:
    """``work()`` started now on a thread; ``result()`` waits for it and returns its value or raises its error."""

    def __init__(self, work: Callable[[], Any]):
        self.started = time.perf_counter()
        self._out: list[Any] = []
        self._err: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(work,), name="real2sim-background")
        self._thread.start()

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            with silent():
                self._out.append(work())
        except BaseException as exc:  # handed to the caller of result()
            self._err.append(exc)

    def join(self) -> None:
        self._thread.join()

    def result(self) -> Any:
        self._thread.join()
        if self._err:
            raise self._err[0]
        return self._out[0]
