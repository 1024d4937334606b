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


@contextmanager
def native_output_captured(show: bool = False) -> Iterator[None]:
    """Send what native code (and worker processes) write to descriptors 1 and 2 into an unnamed temporary file
    while the block runs, and replay it on stderr at the end only when ``show`` (``-v``); Python's
    ``sys.stdout``/``sys.stderr`` keep writing to the real streams. Nothing happens where the streams are not the
    process's descriptors 1 and 2 (click's test runner, an embedded interpreter) or when ``show``."""
    if show:
        yield
        return
    try:
        if sys.stdout.fileno() != 1 or sys.stderr.fileno() != 2:
            raise ValueError
    except (AttributeError, ValueError, OSError):
        yield
        return
    import io
    import tempfile

    try:
        sink = tempfile.TemporaryFile()  # unlinked at once: nothing is left in the temporary folder
    except OSError:  # no writable temporary folder: nothing is captured
        yield
        return
    old = sys.stdout, sys.stderr
    for s in old:
        s.flush()
    saved = os.dup(1), os.dup(2)
    streams = [
        io.TextIOWrapper(
            io.FileIO(fd, "w", closefd=False),
            encoding=s.encoding,
            errors=s.errors,
            line_buffering=bool(getattr(s, "line_buffering", False)),
        )
        for fd, s in zip(saved, old, strict=True)
    ]
    os.dup2(sink.fileno(), 1)
    os.dup2(sink.fileno(), 2)
    sys.stdout, sys.stderr = streams
    try:
        yield
    finally:
        for s in streams:
            s.flush()
        _flush_c_stdio()
        sys.stdout, sys.stderr = old
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        sink.close()


def _mujoco_warning(text: str) -> None:
    import logging

    logging.getLogger("mujoco").info("MuJoCo: %s", text)


def route_mujoco_warnings() -> None:
    """Route MuJoCo's warnings to logging (shown with ``-v``): MuJoCo's default handler prints them and appends
    them to ``MUJOCO_LOG.TXT`` in the current folder, outside ``-o``. Imports MuJoCo: each command that simulates
    calls it once its inputs are checked (so that --help and input errors stay instant)."""
    import mujoco

    mujoco.set_mju_user_warning(_mujoco_warning)
