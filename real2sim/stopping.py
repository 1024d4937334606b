"""Stopping a run on SIGINT / SIGTERM: one line, exit 130 / 143, no partial output, no worker left.

The first signal raises ``KeyboardInterrupt`` (``Terminated`` for SIGTERM) in the main thread, so every
``atomic.output_dir`` removes its partial folder and ``executor`` kills its workers as the stack unwinds; later
signals are ignored while that cleanup runs. A Python signal handler only runs between bytecodes: when the main
thread sits in native code (a long CoACD or Open3D call), a watchdog thread, woken by the signal through
``signal.set_wakeup_fd``, removes the partial folders itself after ``GRACE_S`` and ends the process (pool workers
die with it: ``executor.die_with_parent``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from real2sim.errors import Terminated

GRACE_S = 5.0
"""Seconds the main thread has to unwind after a signal before the watchdog ends the process."""
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
_LIVE: set[Path] = set()
"""Partial output folders being written now."""
_LIVE_LOCK = threading.Lock()
_REPORTED = threading.Event()


@contextlib.contextmanager
def partial_folder(path: Path) -> Iterator[None]:
    """Note ``path`` as a partial output folder for the block (the watchdog removes it on a hard stop)."""
    with _LIVE_LOCK:
        _LIVE.add(path)
    try:
        yield
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(path)


def report(line: str) -> None:
    """Print the one line a stopped run ends with (once, whoever gets there first)."""
    if not _REPORTED.is_set():
        _REPORTED.set()
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"{line}\n")
            sys.stderr.flush()


def _stop(signum: int, frame: FrameType | None) -> None:
    for s in EXIT_CODES:
        signal.signal(s, signal.SIG_IGN)  # the cleanup the exception starts runs undisturbed
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _watchdog(rfd: int) -> None:
    while True:
        try:
            data = os.read(rfd, 1)
        except InterruptedError:
            continue
        if data and data[0] in {int(s) for s in EXIT_CODES}:
            break
    signum = signal.Signals(data[0])
    time.sleep(GRACE_S)
    with _LIVE_LOCK:
        for p in list(_LIVE):
            shutil.rmtree(p, ignore_errors=True)
    report("terminated" if signum == signal.SIGTERM else "interrupted")
    os._exit(EXIT_CODES[signum])


def install_stop_handlers() -> None:
    """SIGINT and SIGTERM stop the run cleanly (call once, from the main thread, before the work starts)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for s in EXIT_CODES:
        signal.signal(s, _stop)
    if sys.platform != "win32":
        rfd, wfd = os.pipe()
        os.set_blocking(wfd, False)
        signal.set_wakeup_fd(wfd, warn_on_full_buffer=False)
        threading.Thread(target=_watchdog, args=(rfd,), daemon=True, name="stop-watchdog").start()
