"""Atomic, deterministic output: a folder appears complete or not at all; files are replaced in one rename."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


@contextlib.contextmanager
def output_dir(path: str | Path, *, overwrite: bool = True) -> Iterator[Path]:
    """Build an output folder in a hidden sibling and move it into place only when the block succeeds.

    On any exception the partial folder is removed and ``path`` is left as it was (absent, or the previous
    complete output).
    """
    path = Path(path).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.partial-"))
    try:
        yield tmp
        if path.exists():
            if not overwrite:
                raise FileExistsError(path)
            old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.old-"))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
