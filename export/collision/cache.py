"""The decomposition cache: one ``.npz`` per mesh, keyed by its content, the options that shape collision geometry
(``collision_options``) and the code that computes it (``code_version``), so no key is bumped by hand.

Safe to share between concurrent runs: entries are content-addressed (the same key always holds the same bytes) and
written to a temporary file in the cache folder then renamed into place (``os.replace``), so a reader sees a whole
entry or none; each entry carries the sha256 of its arrays, and one that fails the check on read (torn by a killed
run, a full disk, bit rot) is deleted and recomputed, with a warning. ``entry_lock`` makes concurrent runs compute a
missing entry once: the first takes the entry's lock, the others wait for it and then read the entry."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import trimesh

from real2sim.atomic import write_bytes
from real2sim.executor import Busy, may_defer
from real2sim.export.collision.primitives import SIZE_COUNT, Primitive, PrimitiveKind
from real2sim.export.collision.shape import Collision
from real2sim.export.config import ExportCfg, collision_options

log = logging.getLogger(__name__)

CODE = ("collision/*.py", "objects/visual.py")
"""Source files (relative to ``export/``) whose code shapes collision geometry: decomposition, primitive fits, the
surface queries refinement measures bulges with (``collision/fidelity.Surface``) and decimation
(``objects/visual.decimate``)."""


@functools.cache
def code_version() -> str:
    """sha256 of the source files in ``CODE`` (sorted by path): any edit to them misses the old cache entries."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted({p for pattern in CODE for p in root.glob(pattern)}):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


LIBRARIES = ("coacd", "manifold3d", "open3d", "scipy", "trimesh")
"""Libraries whose versions are part of the key: CoACD cuts, manifold3d splits, Open3D measures and decimates, Qhull
(scipy) builds the hulls, trimesh samples and fits primitives."""


@functools.cache
def library_versions() -> dict[str, str]:
    """Installed versions of ``LIBRARIES`` (looked up once per process)."""
    from importlib.metadata import version

    return {name: version(name) for name in LIBRARIES}


def cache_key(mesh: trimesh.Trimesh, cfg: ExportCfg) -> str:
    """sha256 of the mesh (vertices, faces), ``collision_options(cfg)``, ``library_versions()`` and
    ``code_version()``."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(mesh.vertices, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(mesh.faces, dtype="<i8").tobytes())
    opts = dict(collision_options(cfg), libraries=library_versions(), code=code_version())
    h.update(json.dumps(opts, sort_keys=True).encode())
    return h.hexdigest()


def digest(arrays: dict[str, np.ndarray]) -> str:
    """sha256 of the arrays' names, dtypes, shapes and bytes (in name order): the entry's checksum."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save(path: Path, col: Collision) -> None:
    """Write ``col`` to ``path`` with its checksum, atomically (temporary file in the same folder + rename)."""
    buf = io.BytesIO()
    arrays: dict[str, np.ndarray] = {}
    if col.primitive is not None:
        p = col.primitive
        arrays["prim_kind"] = np.array(p.kind)
        arrays["prim"] = np.concatenate([p.pos, p.quat, p.size, [p.error]])
    for i, (v, f) in enumerate(col.hulls):
        arrays[f"v{i}"], arrays[f"f{i}"] = v, f
    # the keys are prim*, v<i> and f<i>, never one of savez's own keywords (allow_pickle)
    np.savez(buf, sha256=np.array(digest(arrays)), **arrays)  # pyright: ignore[reportArgumentType]
    write_bytes(path, buf.getvalue())
    sweep_stale(path.parent)


STALE_SECONDS = 3600.0
"""A temporary file in the cache folder this old [s] was left by a killed run (a write takes well under a second)."""


def sweep_stale(folder: Path) -> int:
    """Delete the temporary files killed runs left in the cache ``folder`` (``.NAME.*.tmp`` older than
    ``STALE_SECONDS``); returns how many went. A write in progress is younger, so it is never touched."""
    import time

    gone = 0
    cutoff = time.time() - STALE_SECONDS
    for tmp in folder.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                gone += 1
    return gone


def load(path: Path) -> Collision | None:
    """The ``Collision`` saved at ``path``; None (after a warning, the entry deleted) if it is missing, torn or fails
    its checksum, so the caller recomputes it."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files if name != "sha256"}
            stored = str(z["sha256"]) if "sha256" in z.files else ""
        if stored != digest(arrays):
            raise ValueError("checksum mismatch" if stored else "no checksum")
        if "prim_kind" in arrays:
            a = arrays["prim"]
            kind = cast(
                PrimitiveKind, str(arrays["prim_kind"])
            )  # an unknown kind: KeyError below, recomputed
            n = SIZE_COUNT[kind]
            return Collision(Primitive(kind, a[:3], a[3:7], a[7 : 7 + n], float(a[7 + n])), (), cached=True)
        k = sum(1 for name in arrays if name.startswith("v"))
        return Collision(None, tuple((arrays[f"v{i}"], arrays[f"f{i}"]) for i in range(k)), cached=True)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - zipfile, numpy and the checks above: any damage means recompute
        log.warning(
            "decomposition cache entry %s is damaged (%s: %s); recomputing it", path, type(exc).__name__, exc
        )
        with contextlib.suppress(OSError):
            path.unlink()
        return None


@contextlib.contextmanager
def entry_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the cache entry ``path`` (``fcntl.flock`` on ``PATH.lock``) while computing it.
    When another process holds it: raise ``executor.Busy`` if the caller may do other work first
    (``executor.may_defer()``), else wait for it.

    The holder writes the entry, then removes the lock file before unlocking; a waiter that got the removed file's
    lock finds the entry written and reads it. Without ``fcntl`` (Windows) or write access, no lock is taken (two
    runs may then compute the same entry: same bytes, only time lost)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    lock = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if may_defer():
                raise Busy(str(path)) from None
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                lock.unlink()
    finally:
        os.close(fd)
