"""Atomic, deterministic output: a folder appears complete or not at all; files are replaced in one rename.

Files and folders are created with the process's umask, like any Unix tool. A folder is built in a hidden sibling
``.NAME.partial-XXXXXXXX`` beside a lock file ``.NAME.partial-XXXXXXXX.lock`` held while the run lives; a partial
folder whose lock nobody holds is left by a killed run, and the next run into the same output removes it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from real2sim.outguard import MARKER, check_output, make_parents, marker_json, remove_created, written_entries
from real2sim.stopping import partial_folder

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _create_file(folder: Path, prefix: str, suffix: str) -> tuple[int, Path]:
    """A new file ``folder/prefix<random>suffix`` opened for writing, mode 0666 less the umask."""
    while True:
        p = folder / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            return os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), p
        except FileExistsError:
            continue


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_file(path.parent, f".{_short(path.name)}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: str | Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: Any) -> str:
    """Deterministic JSON: fixed indentation, keys in insertion order, floats as Python's shortest repr."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: str | Path, obj: Any) -> None:
    write_text(path, dumps_json(obj))


def _short(name: str) -> str:
    """``name`` cut so that hidden siblings built from it stay within the file system's name limit."""
    b = os.fsencode(name)
    return name if len(b) <= 200 else os.fsdecode(b[:200]).rstrip("\udcff")


def _partial_prefix(path: Path) -> str:
    return f".{_short(path.name)}.partial-"


def _held(lock: Path) -> bool:
    """Whether a live process holds ``lock`` (its run is still going)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)
    return False


def remove_stale_partials(path: Path) -> list[Path]:
    """Remove the partial folders of output ``path`` that killed runs left (no live lock); those removed."""
    prefix = _partial_prefix(path)
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(path.parent)):
            p = path.parent / name
            if not name.startswith(prefix) or name.endswith(".lock"):
                continue
            lock = Path(f"{p}.lock") if not name.endswith(".old") else p.parent / f"{name[:-4]}.lock"
            if _held(lock):
                continue
            shutil.rmtree(p, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
            removed.append(p)
        for name in os.listdir(path.parent):  # locks whose folder is gone
            lock = path.parent / name
            if name.startswith(prefix) and name.endswith(".lock") and not _held(lock):
                if not Path(str(lock)[: -len(".lock")]).exists():
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(lock)
    return removed


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done (a folder swap is not left half done); then they act."""
    if threading.current_thread() is not threading.main_thread():  # handlers run in the main thread only
        yield
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if got:
            h = old[signal.Signals(got[0])]
            if callable(h):
                h(got[0], None)
            elif h == signal.SIG_DFL:
                signal.raise_signal(got[0])


@contextlib.contextmanager
def output_dir(
    path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path | None] = ()
) -> Iterator[Path]:
    """Build an output folder in a hidden sibling and move it into place only when the block succeeds.

    ``path`` may hold an earlier output of real2sim (it is replaced) but nothing else, unless ``overwrite``
    (``outguard.check_output``). On any exception the partial folder, and the parents created for it, are
    removed and ``path`` is left as it was (absent, or the previous complete output). The folder gets a marker
    listing what real2sim wrote into it.
    """
    path = check_output(path, inputs, overwrite=overwrite)
    created: list[Path] = []
    lock: Path | None = None
    lock_fd = -1
    done = False
    try:
        with signals_deferred():  # a stop comes once what this makes is known to the cleanup below
            created = make_parents(path.parent)
        remove_stale_partials(path)
        with signals_deferred():
            lock_fd, lock = _create_file(path.parent, _partial_prefix(path), ".lock")
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        tmp = Path(str(lock)[: -len(".lock")])
        tmp.mkdir()
        with partial_folder(tmp):
            yield tmp
        (tmp / MARKER).write_text(marker_json(os.listdir(tmp)))
        check_output(path, inputs, overwrite=overwrite)  # nothing of the user's arrived while the run went on
        with signals_deferred():
            if path.exists():
                old = Path(f"{tmp}.old")
                os.replace(path, old)
                os.replace(tmp, path)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, path)
        done = True
    finally:
        if lock is not None:
            if not done:
                shutil.rmtree(Path(str(lock)[: -len(".lock")]), ignore_errors=True)
            os.close(lock_fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
        if not done:
            remove_created(created)


def claim_folder(folder: Path, entries: Iterable[str]) -> list[Path]:
    """Make ``folder`` (a checked output filled entry by entry, not replaced whole) and mark ``entries`` as
    real2sim's, beside those an earlier run marked; returns the folders created (``outguard.remove_created``)."""
    created = make_parents(folder)
    names = set(os.listdir(folder))
    ours = (written_entries(folder) or set()) & names
    write_text(folder / MARKER, marker_json(ours | set(entries)))
    return created
