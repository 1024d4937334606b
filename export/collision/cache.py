"""The decomposition cache: one ``.npz`` per mesh, keyed by its content, the options that shape collision geometry
(``collision_options``) and the code that computes it (``code_version``), so no key is bumped by hand."""

from __future__ import annotations

import functools
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import trimesh

from real2sim.atomic import write_bytes
from real2sim.export.collision.primitives import SIZE_COUNT, Primitive
from real2sim.export.collision.shape import Collision
from real2sim.export.config import ExportCfg, collision_options

CODE = ("collision/*.py", "visual.py", "fidelity.py")
"""Source files (relative to ``export/``) whose code shapes collision geometry: decomposition, primitive fits,
decimation (``visual.decimate``) and the surface queries refinement measures bulges with (``fidelity.Surface``)."""


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


def save(path: Path, col: Collision) -> None:
    """Write ``col`` to ``path`` (atomically)."""
    buf = io.BytesIO()
    arrays: dict[str, np.ndarray] = {}
    if col.primitive is not None:
        p = col.primitive
        arrays["prim_kind"] = np.array(p.kind)
        arrays["prim"] = np.concatenate([p.pos, p.quat, p.size, [p.error]])
    for i, (v, f) in enumerate(col.hulls):
        arrays[f"v{i}"], arrays[f"f{i}"] = v, f
    np.savez(buf, **arrays)
    write_bytes(path, buf.getvalue())


def load(path: Path) -> Collision | None:
    """The ``Collision`` saved at ``path``, or None if it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "prim_kind" in z:
                a = z["prim"]
                kind = str(z["prim_kind"])
                n = SIZE_COUNT[kind]
                return Collision(
                    Primitive(kind, a[:3], a[3:7], a[7 : 7 + n], float(a[7 + n])), (), cached=True
                )
            k = sum(1 for name in z.files if name.startswith("v"))
            return Collision(None, tuple((z[f"v{i}"], z[f"f{i}"]) for i in range(k)), cached=True)
    except (OSError, ValueError, KeyError):
        return None
