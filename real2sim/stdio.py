"""Silence chatty native libraries at the file-descriptor level (their C/C++ code writes past ``sys.stdout``)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.RLock()
"""One silenced block at a time: overlapping blocks in threads would restore each other's null device."""


def _flush_c_stdio() -> None:
    """``fflush(NULL)``: empty the C library's stdout/stderr buffers (C++ streams write through them)."""
    import ctypes

    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library handle on this platform
        pass


@contextmanager
def native_output_silenced(fds: tuple[int, ...] = (1, 2)) -> Iterator[None]:
    """Send what native code writes to ``fds`` (stdout, stderr) to the null device while the block runs
    (e.g. pymeshfix's "MeshFix could not fix everything"); Python's own streams are flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError):  # replaced or closed stream
            pass
    with _LOCK:
        try:
            saved = [os.dup(fd) for fd in fds]
        except OSError:  # no such descriptor (embedded interpreter): nothing to silence
            yield
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for fd in fds:
                os.dup2(null, fd)
            yield
        finally:
            _flush_c_stdio()  # C/C++ buffers written in the block go to the null device, not out at exit
            for fd, s in zip(fds, saved, strict=True):
                os.dup2(s, fd)
                os.close(s)
            os.close(null)
