"""Package renders by pixel statistics (drawn, in frame, coloured), the colour texture, report.html, determinism."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh
from PIL import Image

from real2sim.export.config import ExportCfg
from real2sim.export.objects.visual import colour_atlas
from real2sim.export.package import export_scene
from real2sim.export.report.render import BACKGROUND
from real2sim.scene import Scene, SceneObject, Support

from .conftest import at, l_shape


def coloured_ball() -> trimesh.Trimesh:
    """A sphere painted red on top and blue below (per-vertex colours, as recon gives a coloured scan)."""
    m = trimesh.creation.icosphere(4, 0.04)
    c = np.full((len(m.vertices), 4), 255, dtype=np.uint8)
    top = m.vertices[:, 2] > 0
    c[top, :3] = (210, 40, 30)
    c[~top, :3] = (30, 60, 200)
    m.visual = trimesh.visual.ColorVisuals(m, vertex_colors=c)
    return m


@pytest.fixture(scope="module")
def packages(tmp_path_factory, cache_dir):
    scene = Scene(
        Support(size=(0.6, 0.6)),
        (
            SceneObject("ball", coloured_ball(), at(0.1, 0.0, 0.04), density=300.0),
            SceneObject("L block", l_shape(), at(-0.1, 0.05, 0.0), density=900.0),
        ),
    )
    root = tmp_path_factory.mktemp("render")
    cfg = ExportCfg(workers=1, cache_dir=cache_dir, formats=("mjcf", "urdf"))
    return [export_scene(scene, root / f"run{k}", cfg) for k in (1, 2)]


def object_mask(img: np.ndarray) -> np.ndarray:
    """Pixels that are not the light background."""
    bg = np.array(BACKGROUND) * 255
    return np.abs(img[:, :, :3].astype(float) - bg).max(axis=2) > 12


def saturation(px: np.ndarray) -> np.ndarray:
    px = px.astype(float)
    return (px.max(axis=1) - px.min(axis=1)) / np.maximum(px.max(axis=1), 1.0)


def load(p: Path) -> np.ndarray:
    return np.asarray(Image.open(p).convert("RGB"))


@pytest.mark.parametrize("name", ["ball", "L_block"])
def test_object_render_draws_both_halves_in_frame(packages, name):
    img = load(packages[0].path / "renders" / f"{name}.png")
    assert img.shape == (360, 640, 3)
    mask = object_mask(img)
    assert not (img == 0).all() and 0.02 < mask.mean() < 0.6, mask.mean()
    half = img.shape[1] // 2
    assert mask[:, :half].mean() > 0.01 and mask[:, half:].mean() > 0.01  # visual | collision
    border = np.concatenate([mask[0], mask[-1], mask[:, 0], mask[:, -1]])
    assert not border.any(), "object touches the frame"
    right = img[:, half:][mask[:, half:]]
    assert np.median(saturation(right)) > 0.3  # collision pieces in palette colours


def test_coloured_object_renders_in_its_capture_colours(packages):
    img = load(packages[0].path / "renders" / "ball.png")
    mask = object_mask(img)
    half = img.shape[1] // 2
    left = img[:, :half][mask[:, :half]].astype(int)
    red = (left[:, 0] > left[:, 1] + 40) & (left[:, 0] > left[:, 2] + 40)
    blue = (left[:, 2] > left[:, 0] + 40) & (left[:, 2] > left[:, 1] + 40)
    assert red.mean() > 0.2 and blue.mean() > 0.1, (red.mean(), blue.mean())
    plain = load(packages[0].path / "renders" / "L_block.png")
    pm = object_mask(plain)
    assert np.median(saturation(plain[:, :half][pm[:, :half]])) < 0.15  # no capture colour: grey


def test_overview_shows_the_objects_and_report_embeds_every_render(packages):
    pkg = packages[0]
    img = load(pkg.path / "renders" / "scene_overview.png")
    mask = object_mask(img)
    assert 0.05 < mask.mean() < 0.95
    px = img[mask].astype(int)
    assert ((px[:, 0] > px[:, 1] + 40) & (px[:, 0] > px[:, 2] + 40)).sum() > 50  # the red ball top
    html = (pkg.path / "report.html").read_text()
    for p in sorted((pkg.path / "renders").glob("*.png")):
        assert f"src='renders/{p.name}'" in html


def test_texture_in_mjcf_and_urdf(packages):
    pkg = packages[0]
    assets = pkg.path / "assets"
    assert (assets / "ball_visual.png").is_file() and not (assets / "L_block_visual.png").exists()
    model = mujoco.MjModel.from_xml_path(str(pkg.scene_xml))
    g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "ball_visual")
    mat = model.geom_matid[g]
    assert mat >= 0 and model.mat_texid[mat, int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] >= 0
    assert model.mesh_texcoordnum[model.geom_dataid[g]] > 0
    urdf = ET.parse(pkg.urdf).getroot()
    tex = urdf.find("link[@name='ball']/visual/material/texture")
    assert tex is not None and tex.get("filename") == "assets/ball_visual.png"


def test_renders_and_texture_are_deterministic(packages):
    a, b = (p.path for p in packages)
    files = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    assert any(f.startswith("renders/") for f in files)
    for f in files:
        if f.startswith(("renders/", "assets/")):
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_atlas_puts_each_corner_colour_at_its_uv():
    m = coloured_ball()
    atlas = colour_atlas(m)
    assert atlas is not None and len(atlas.uv) == 3 * len(m.faces)
    h, w, _ = atlas.image.shape
    px = np.floor(np.stack([atlas.uv[:, 0] * w, (1 - atlas.uv[:, 1]) * h], axis=1)).astype(int)
    got = atlas.image[px[:, 1], px[:, 0]]
    want = np.asarray(m.visual.vertex_colors)[m.faces.ravel(), :3]
    assert np.abs(got.astype(int) - want).max() <= 1
    assert colour_atlas(trimesh.creation.box()) is None
