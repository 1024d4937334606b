"""Input paths checked by a command before it imports its stage, so that a mistyped path is reported at once.

The stages check the same paths with the same messages (their API is used without the CLI too); these checks only
answer first, without waiting for NumPy, trimesh, Open3D or MuJoCo to load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from real2sim.errors import InputError


def check_path(path: Path, kind: Literal["file", "dir", "any"], missing: str, not_file: str = "") -> None:
    """``InputError(path, missing)`` unless ``path`` exists as ``kind``; ``InputError(path, not_file)`` when a file
    is wanted and ``path`` is a folder (if ``not_file`` is given)."""
    path = Path(path)
    if kind == "file" and not_file and path.is_dir():
        raise InputError(path, not_file)
    found = {"file": path.is_file, "dir": path.is_dir, "any": path.exists}[kind]()
    if not found and kind == "file" and path.exists() and not path.is_dir():
        raise InputError(path, "not a regular file (a FIFO, socket or device)")
    if not found:
        raise InputError(path, missing)
