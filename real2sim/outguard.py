"""Where output may go: ``-o`` never replaces what real2sim did not write.

An output folder may be replaced when it is absent, empty, or was written by real2sim: every output folder holds a
marker file (``MARKER``) listing the entries real2sim put there, and a folder holding anything else is the user's.
``--overwrite`` lets a user replace such a folder anyway; an input, a folder holding an input, the current folder
(or one holding it), the home folder (or one holding it) and ``/`` are refused even then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from real2sim.errors import InputError

MARKER = ".real2sim"
"""File in each output folder: which of its entries real2sim wrote (JSON)."""
NAME_MAX = 255
"""Longest file name (bytes) on Linux file systems."""
PATH_MAX = 4095
"""Longest path (bytes) the kernel accepts."""
OVERWRITE_HINT = "choose a new or empty folder, or pass --overwrite to replace it"


def _resolved(p: str | Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(p))).resolve()


def written_entries(folder: Path) -> set[str] | None:
    """The entries the marker of ``folder`` lists, or None when it has no readable marker."""
    try:
        data = json.loads((folder / MARKER).read_text())
        names = data["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {str(n) for n in names} if isinstance(names, list) else None


def foreign_entries(folder: Path) -> list[str]:
    """Entries of ``folder`` that real2sim did not write (sorted); ``[]`` for an empty or real2sim folder. An entry
    is real2sim's when the folder's marker lists it, or when it is itself a real2sim output folder (a scene saved
    into ``OUT/scene`` by an earlier ``recon``, say) whose own marker lists everything in it."""
    names = sorted(os.listdir(folder))
    ours = (written_entries(folder) or set()) | {MARKER}
    return [n for n in names if n not in ours and not _own_folder(folder / n)]


def _own_folder(path: Path) -> bool:
    return (
        path.is_dir()
        and not path.is_symlink()
        and written_entries(path) is not None
        and not foreign_entries(path)
    )


def marker_json(entries: Iterable[str]) -> str:
    """The marker's text for a folder holding ``entries`` (deterministic: sorted names)."""
    names = sorted(e for e in entries if e != MARKER)
    return json.dumps({"written_by": "real2sim", "entries": names}, indent=2) + "\n"


def check_output(
    out: str | Path, inputs: Iterable[str | Path | None] = (), *, overwrite: bool = False
) -> Path:
    """The resolved output folder ``out``, or an ``InputError`` naming it when real2sim may not write there.

    Refused always: a path too long for the file system, a path under a regular file, a regular file, ``/``, the
    current or home folder or a folder holding them, an input or a folder holding one. Refused unless
    ``overwrite``: an existing folder holding entries real2sim did not write.
    """
    o = _resolved(out)
    if len(os.fsencode(str(o))) > PATH_MAX or any(len(os.fsencode(n)) > NAME_MAX for n in o.parts):
        raise InputError(out, f"path too long (at most {NAME_MAX} bytes a name, {PATH_MAX} in all)")
    if o == Path(o.anchor):
        raise InputError(out, "is the root folder; choose a new folder for the output")
    for what, where in (("the current folder", Path.cwd()), ("your home folder", Path.home())):
        w = _resolved(where)
        if w == o:
            raise InputError(out, f"is {what}; choose a new folder for the output (it would be replaced)")
        if w.is_relative_to(o):
            raise InputError(out, f"holds {what}; choose a new folder for the output (it would be replaced)")
    for i in inputs:
        if i is None:
            continue
        r = _resolved(i)
        if r == o:
            raise InputError(out, "is an input of this run; choose another output folder")
        if r.is_relative_to(o):
            raise InputError(out, f"holds the input {i}; choose another output folder")
    for parent in [o, *o.parents]:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                where = "is a file" if parent == o else f"is under {parent}, a file"
                raise InputError(out, f"{where}, not a folder; choose a folder for the output")
            break
    if o.is_dir() and not overwrite:
        foreign = foreign_entries(o)
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise InputError(out, f"holds files real2sim did not write ({shown}); {OVERWRITE_HINT}")
    return o


def make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents (with the process umask); the ones created, outermost first."""
    missing = [p for p in [folder, *folder.parents] if not p.exists()][::-1]
    created = []
    for p in missing:
        try:
            p.mkdir()
        except FileExistsError:
            continue
        created.append(p)
    return created


def remove_created(created: list[Path]) -> None:
    """Remove the folders ``make_parents`` created, innermost first, where they are still empty."""
    for p in reversed(created):
        try:
            p.rmdir()
        except OSError:
            break
