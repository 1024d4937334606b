"""PNG renders of each object's visual mesh (left) beside its collision geometry (right), MuJoCo offscreen (EGL)."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes
from real2sim.export.prepare import PlacedObject

log = logging.getLogger(__name__)
WIDTH, HEIGHT = 640, 320
OFFSAMPLES = 0
"""Multisample anti-aliasing samples of the offscreen buffer (none: a preview does not need it)."""
SHADOW_SIZE = 64
"""Shadow-map texture size (small: only the headlight lights these renders and it casts no shadow)."""

MAX_GEOM_EXTRA = 16
"""Scene geoms allotted beyond the model's own (decorations; these renders draw none)."""


def _add_mesh(spec, name: str, vertices: np.ndarray, faces: np.ndarray) -> None:
    """A mesh asset from arrays (no OBJ text to format and parse again: the package files are already written)."""
    m = spec.add_mesh()
    m.name = name
    m.uservert = np.asarray(vertices, dtype=np.float32).ravel().tolist()
    m.userface = np.asarray(faces, dtype=np.int32).ravel().tolist()


def _object_spec(o: PlacedObject, folder: Path):
    import mujoco

    spec = mujoco.MjSpec()
    spec.visual.headlight.ambient = [0.4, 0.4, 0.4]
    spec.visual.headlight.diffuse = [0.6, 0.6, 0.6]
    spec.visual.global_.offwidth, spec.visual.global_.offheight = WIDTH, HEIGHT
    spec.visual.quality.offsamples = OFFSAMPLES
    spec.visual.quality.shadowsize = SHADOW_SIZE
    diag = float(np.linalg.norm(o.obj.watertight.extents))
    centre = o.obj.watertight.bounds.mean(axis=0)
    shift = 0.6 * diag
    _add_mesh(spec, "visual", o.obj.visual.vertices, o.obj.visual.faces)
    g = spec.worldbody.add_geom()
    g.type, g.meshname, g.pos = mujoco.mjtGeom.mjGEOM_MESH, "visual", (-centre + [-shift, 0, 0]).tolist()
    g.rgba = list(o.obj.rgba)
    g.contype = g.conaffinity = 0  # drawn only: MuJoCo then builds no collision hull of the visual mesh
    palette = np.array(
        [[0.9, 0.3, 0.3], [0.3, 0.8, 0.3], [0.3, 0.4, 0.9], [0.9, 0.8, 0.2], [0.8, 0.3, 0.9], [0.2, 0.8, 0.8]]
    )
    for i, h in enumerate(o.obj.collision.meshes()):
        _add_mesh(spec, f"hull{i}", h.vertices, h.faces)
        g = spec.worldbody.add_geom()
        g.type, g.meshname, g.pos = mujoco.mjtGeom.mjGEOM_MESH, f"hull{i}", (-centre + [shift, 0, 0]).tolist()
        g.rgba = [*palette[i % len(palette)].tolist(), 1.0]
        g.contype = g.conaffinity = 0
    cam = spec.worldbody.add_camera()
    cam.name = "view"
    d = 1.6 * diag
    cam.pos = [0, -d * 1.3, d * 0.6]
    fwd = -np.array(cam.pos) / np.linalg.norm(cam.pos)
    right = np.cross(fwd, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    cam.alt.xyaxes = [*right.tolist(), *up.tolist()]
    cam.fovy = 45
    return spec


def render_objects(folder: Path, placed: list[PlacedObject]) -> list[str]:
    """Write ``renders/<object>.png`` for each object; returns the relative paths (none if rendering is unavailable)."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        import mujoco
        from PIL import Image
    except ImportError as exc:
        log.warning("renders skipped: %s", exc)
        return []
    out = []
    for o in placed:
        try:
            model = _object_spec(o, folder).compile()
            data = mujoco.MjData(model)
            mujoco.mj_forward(model, data)
            with mujoco.Renderer(model, HEIGHT, WIDTH, max_geom=MAX_GEOM_EXTRA + model.ngeom) as r:
                r.update_scene(data, camera="view")
                img = r.render()
        except Exception as exc:  # no EGL/OSMesa context on this machine
            log.warning("render of %s skipped: %s", o.name, exc)
            return out
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG", optimize=False)
        rel = f"renders/{o.name}.png"
        write_bytes(folder / rel, buf.getvalue())
        out.append(rel)
    return out
