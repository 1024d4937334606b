"""PNG renders, MuJoCo offscreen (EGL): each object's visual mesh (left) beside its collision geometry (right), and
an overview of the whole package; lit, framed, on a light background."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes
from real2sim.export.prepare import PlacedObject
from real2sim.export.visual import texture_file
from real2sim.transforms import matrix_to_quat

log = logging.getLogger(__name__)
WIDTH, HEIGHT = 640, 320
OVERVIEW_WIDTH, OVERVIEW_HEIGHT = 640, 400
OVERVIEW = "renders/scene_overview.png"
OFFSAMPLES = 0
"""Multisample anti-aliasing samples of the offscreen buffer (none: a preview does not need it)."""
SHADOW_SIZE = 64
"""Shadow-map texture size (small: the lights of these renders cast no shadow)."""
BACKGROUND = (0.93, 0.94, 0.96)
"""Light grey-blue background (a flat skybox), so dark objects and their outlines show."""
ELEVATION = np.radians(25.0)
"""Camera elevation above the horizontal: objects seen from the front and a little above."""

MAX_GEOM_EXTRA = 16
"""Scene geoms allotted beyond the model's own (decorations; these renders draw none)."""

PALETTE = np.array(
    [[0.9, 0.3, 0.3], [0.3, 0.8, 0.3], [0.3, 0.4, 0.9], [0.9, 0.8, 0.2], [0.8, 0.3, 0.9], [0.2, 0.8, 0.8]]
)
"""Collision piece colours, in turn."""


def _look(target: np.ndarray, distance: float, azimuth: float = -np.pi / 2) -> tuple[list, list]:
    """(pos, wxyz quat) of a camera ``distance`` from ``target`` at ``azimuth`` and ``ELEVATION``, looking at it."""
    d = np.array(
        [np.cos(azimuth) * np.cos(ELEVATION), np.sin(azimuth) * np.cos(ELEVATION), np.sin(ELEVATION)]
    )
    pos = target + distance * d
    fwd = -d
    right = np.cross(fwd, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    return pos.tolist(), matrix_to_quat(np.stack([right, up, -fwd], axis=1)).tolist()


def _stage(spec, width: int, height: int) -> None:
    """Offscreen size, light background, headlight and a key light for ``spec``."""
    import mujoco

    spec.visual.global_.offwidth, spec.visual.global_.offheight = width, height
    spec.visual.quality.offsamples = OFFSAMPLES
    spec.visual.quality.shadowsize = SHADOW_SIZE
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.45, 0.45, 0.45]
    spec.visual.headlight.specular = [0.05, 0.05, 0.05]
    sky = spec.add_texture()
    sky.name = "render_background"
    sky.type = mujoco.mjtTexture.mjTEXTURE_SKYBOX
    sky.builtin = mujoco.mjtBuiltin.mjBUILTIN_FLAT
    sky.rgb1 = sky.rgb2 = list(BACKGROUND)
    sky.width = sky.height = 8
    light = spec.worldbody.add_light()
    light.name = "render_key"
    light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    light.dir = [0.3, 0.5, -1.0]
    light.diffuse = [0.45, 0.45, 0.45]
    light.castshadow = False


def _visual_geom(spec, body, o: PlacedObject, folder: Path, pos: list[float]) -> None:
    """The visual mesh as packaged (with its colour texture, if any) at ``pos``."""
    import mujoco

    m = spec.add_mesh()
    m.name = "visual"
    m.file = str(folder / "assets" / o.visual_file())
    g = body.add_geom()
    g.type, g.meshname, g.pos = mujoco.mjtGeom.mjGEOM_MESH, "visual", pos
    g.contype = g.conaffinity = 0  # drawn only: MuJoCo then builds no collision hull of the visual mesh
    png = folder / "assets" / texture_file(o.visual_file())
    if png.is_file():
        t = spec.add_texture()
        t.name, t.type, t.file = "visual", mujoco.mjtTexture.mjTEXTURE_2D, str(png)
        mat = spec.add_material()
        mat.name = "visual"
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "visual"
        g.material = "visual"
    else:
        g.rgba = list(o.obj.rgba)


def _object_spec(o: PlacedObject, folder: Path):
    import mujoco

    spec = mujoco.MjSpec()
    _stage(spec, WIDTH, HEIGHT)
    diag = float(np.linalg.norm(o.obj.watertight.extents))
    centre = o.obj.watertight.bounds.mean(axis=0)
    shift = 0.6 * diag
    _visual_geom(spec, spec.worldbody, o, folder, (-centre + [-shift, 0, 0]).tolist())
    for i, h in enumerate(o.obj.collision.meshes()):
        m = spec.add_mesh()
        m.name = f"hull{i}"
        m.uservert = np.asarray(h.vertices, dtype=np.float32).ravel().tolist()
        m.userface = np.asarray(h.faces, dtype=np.int32).ravel().tolist()
        g = spec.worldbody.add_geom()
        g.type, g.meshname, g.pos = mujoco.mjtGeom.mjGEOM_MESH, f"hull{i}", (-centre + [shift, 0, 0]).tolist()
        g.rgba = [*PALETTE[i % len(PALETTE)].tolist(), 1.0]
        g.contype = g.conaffinity = 0
    cam = spec.worldbody.add_camera()
    cam.name = "view"
    cam.pos, cam.quat = _look(np.zeros(3), 2.0 * diag)
    cam.fovy = 45
    return spec


def _png(img: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _render(model, camera, height: int, width: int) -> np.ndarray:
    import mujoco

    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, height, width, max_geom=MAX_GEOM_EXTRA + model.ngeom) as r:
        r.update_scene(data, camera=camera)
        return r.render()


def render_objects(folder: Path, placed: list[PlacedObject]) -> list[str]:
    """Write ``renders/<object>.png`` for each object (visual | collision); returns the relative paths (none if
    rendering is unavailable). ``folder`` holds the package's ``assets/`` already."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        import mujoco  # noqa: F401
        from PIL import Image  # noqa: F401
    except ImportError as exc:
        log.warning("renders skipped: %s", exc)
        return []
    out = []
    for o in placed:
        try:
            img = _render(_object_spec(o, folder).compile(), "view", HEIGHT, WIDTH)
        except Exception as exc:  # no EGL/OSMesa context on this machine
            log.warning("render of %s skipped: %s", o.name, exc)
            return out
        rel = f"renders/{o.name}.png"
        write_bytes(folder / rel, _png(img))
        out.append(rel)
    return out


def render_overview(folder: Path, name: str, placed: list[PlacedObject]) -> str | None:
    """Write ``OVERVIEW``: the package model ``<name>.xml`` (support and visual meshes at ``home``) seen from the
    front and above; returns its relative path (``None`` if rendering is unavailable)."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        import mujoco

        spec = mujoco.MjSpec.from_file(str(folder / f"{name}.xml"))
        _stage(spec, OVERVIEW_WIDTH, OVERVIEW_HEIGHT)
        pts = []
        for o in placed:
            b = o.obj.watertight.bounds
            corners = np.array([[x, y, z] for x in b[:, 0] for y in b[:, 1] for z in b[:, 2]])
            t = o.world_from_object
            pts.append(corners @ t[:3, :3].T + t[:3, 3])
        p = np.concatenate(pts)
        lo, hi = p.min(axis=0), p.max(axis=0)
        cam = spec.worldbody.add_camera()
        cam.name = "render_overview"
        cam.pos, cam.quat = _look((lo + hi) / 2, 1.6 * float(np.linalg.norm(hi - lo)) + 0.05)
        cam.fovy = 45
        img = _render(spec.compile(), "render_overview", OVERVIEW_HEIGHT, OVERVIEW_WIDTH)
    except Exception as exc:  # no EGL/OSMesa context on this machine
        log.warning("overview render skipped: %s", exc)
        return None
    write_bytes(folder / OVERVIEW, _png(img))
    return OVERVIEW
