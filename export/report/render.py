"""PNG renders, MuJoCo offscreen (EGL): an overview of the package's scene and each object's visual mesh (left) beside
its collision geometry (right); lit, framed, on a light background. All views live in one model drawn by one
renderer (one GL context, assets uploaded once); each view shows only its own geoms."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

import numpy as np

from real2sim.atomic import write_bytes
from real2sim.export.objects.prepare import PlacedObject
from real2sim.export.objects.visual import texture_file
from real2sim.export.writers.mjcf import support_box
from real2sim.scene import Support
from real2sim.transforms import matrix_to_quat

log = logging.getLogger(__name__)
WIDTH, HEIGHT = 640, 360
OVERVIEW = "renders/scene_overview.png"
HIDDEN = 5
"""Geom group not drawn (MuJoCo draws groups 0-2 by default): every view's geoms but the current one's."""
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


def _stage(spec) -> None:
    """Offscreen size, light background, headlight and a key light for ``spec``."""
    import mujoco

    spec.visual.global_.offwidth, spec.visual.global_.offheight = WIDTH, HEIGHT
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


def _geom(spec, name: str, pos, quat=(1.0, 0.0, 0.0, 0.0)):
    import mujoco

    g = spec.worldbody.add_geom()
    g.name, g.pos, g.quat = name, [float(x) for x in pos], [float(x) for x in quat]
    g.contype = g.conaffinity = 0  # drawn only: MuJoCo then builds no collision hull of a mesh
    g.type = mujoco.mjtGeom.mjGEOM_MESH
    return g


def _visual_asset(spec, i: int, o: PlacedObject, folder: Path) -> str | None:
    """Mesh ``visual<i>`` from the package file; the name of its textured material (``None``: plain colour)."""
    import mujoco

    m = spec.add_mesh()
    m.name, m.file = f"visual{i}", str(folder / "assets" / o.visual_file())
    png = folder / "assets" / texture_file(o.visual_file())
    if not png.is_file():
        return None
    t = spec.add_texture()
    t.name, t.type, t.file = f"visual{i}", mujoco.mjtTexture.mjTEXTURE_2D, str(png)
    mat = spec.add_material()
    mat.name = f"visual{i}"
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = t.name
    return mat.name


def _paint(g, o: PlacedObject, material: str | None) -> None:
    if material is None:
        g.rgba = list(o.obj.rgba)
    else:
        g.material = material


def _views_spec(folder: Path, placed: list[PlacedObject], support: Support):
    """One spec holding every view: the overview (support slab and visual meshes at their poses) and, per object,
    its visual mesh beside its collision pieces around the origin; camera ``view<k>`` and geoms ``v<k>_*`` each
    (view 0 the overview)."""
    import mujoco

    spec = mujoco.MjSpec()
    _stage(spec)
    c, q, h = support_box(support, placed)
    slab = _geom(spec, "v0_support", c, q)
    slab.type, slab.size, slab.rgba = mujoco.mjtGeom.mjGEOM_BOX, h.tolist(), [0.55, 0.45, 0.35, 1]
    pts = []
    for i, o in enumerate(placed):
        t = o.world_from_object
        mat = _visual_asset(spec, i, o, folder)
        g = _geom(spec, f"v0_object{i}", t[:3, 3], matrix_to_quat(t[:3, :3]))
        g.meshname = f"visual{i}"
        _paint(g, o, mat)
        b = o.obj.watertight.bounds
        corners = np.array([[x, y, z] for x in b[:, 0] for y in b[:, 1] for z in b[:, 2]])
        pts.append(corners @ t[:3, :3].T + t[:3, 3])
        k = i + 1
        diag = float(np.linalg.norm(o.obj.watertight.extents))
        centre = o.obj.watertight.bounds.mean(axis=0)
        shift = 0.6 * diag
        g = _geom(spec, f"v{k}_visual", -centre + [-shift, 0, 0])
        g.meshname = f"visual{i}"
        _paint(g, o, mat)
        for j, hull in enumerate(o.obj.collision.meshes()):
            m = spec.add_mesh()
            m.name = f"hull{i}_{j}"
            m.uservert = np.asarray(hull.vertices, dtype=np.float32).ravel().tolist()
            m.userface = np.asarray(hull.faces, dtype=np.int32).ravel().tolist()
            g = _geom(spec, f"v{k}_hull{j}", -centre + [shift, 0, 0])
            g.meshname, g.rgba = m.name, [*PALETTE[j % len(PALETTE)].tolist(), 1.0]
        cam = spec.worldbody.add_camera()
        cam.name, cam.fovy = f"view{k}", 45
        cam.pos, cam.quat = _look(np.zeros(3), 2.0 * diag)
    p = np.concatenate(pts)
    lo, hi = p.min(axis=0), p.max(axis=0)
    cam = spec.worldbody.add_camera()
    cam.name, cam.fovy = "view0", 45
    cam.pos, cam.quat = _look((lo + hi) / 2, 1.15 * float(np.linalg.norm(hi - lo)) + 0.05)
    return spec


def _png(img: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(img)).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def render_package(folder: Path, placed: list[PlacedObject], support: Support) -> list[str]:
    """Write ``OVERVIEW`` and ``renders/<object>.png`` (visual | collision) into ``folder`` (which holds the
    package's ``assets/`` already); returns the relative paths written (none if rendering is unavailable)."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    if not placed:
        return []
    try:
        import mujoco

        model = _views_spec(folder, placed, support).compile()
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        names = [model.geom(g).name for g in range(model.ngeom)]
        view_of = np.array([int(n[1 : n.index("_")]) for n in names])
        images = []
        with mujoco.Renderer(model, HEIGHT, WIDTH, max_geom=MAX_GEOM_EXTRA + model.ngeom) as r:
            for k in range(len(placed) + 1):
                model.geom_group[:] = np.where(view_of == k, 0, HIDDEN)
                r.update_scene(data, camera=f"view{k}")
                images.append(r.render().copy())
    except Exception as exc:  # no EGL/OSMesa context (or no PIL) on this machine
        log.warning("renders skipped: %s", exc)
        return []
    out = [OVERVIEW] + [f"renders/{o.name}.png" for o in placed]
    for rel, img in zip(out, images, strict=True):
        write_bytes(folder / rel, _png(img))
    return out
