"""README.md's quick start, run verbatim (the command lines parsed from its code block) on a small real scan, and
export of scene folders with any name."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, SAMPLE_DATA, SHARED_DATA

pytestmark = pytest.mark.slow  # the demo, one reconstruction and exports (~1 min on 2 idle cores)


def quick_start_commands() -> list[str]:
    """The command lines of README.md's ``## Quick start`` bash block, comments stripped."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"^## Quick start\n.*?```bash\n(.*?)```", text, flags=re.S | re.M)
    assert block, "README.md has no Quick start bash block"
    lines = [ln.split("  #", 1)[0].strip() for ln in block.group(1).splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def write_scan_ply(path: Path) -> None:
    """``scan.ply``: the real OSD test0 Kinect scan (x y z and colour) when the shared data is there, else the first
    sample LiDAR scan."""
    pcd = SHARED_DATA / "pointclouds" / "osd_tabletop" / "test0.pcd"
    if not pcd.is_file():
        path.write_bytes((SAMPLE_DATA / "lidar" / "scan_00.ply").read_bytes())
        return
    from real2sim.recon.io import read_points

    cloud = read_points(pcd)
    ok = np.isfinite(cloud.points).all(axis=1)
    rec = np.empty(int(ok.sum()), dtype=[("p", "<f4", 3), ("c", "u1", 3)])
    rec["p"] = cloud.points[ok]
    rec["c"] = np.round(np.asarray(cloud.colors)[ok] * 255)
    head = (
        f"ply\nformat binary_little_endian 1.0\nelement vertex {len(rec)}\nproperty float x\nproperty float y\n"
        "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
    )
    path.write_bytes(head.encode("ascii") + rec.tobytes())


def shell_env(tmp: Path) -> dict[str, str]:
    """PATH with a ``real2sim`` that runs this checkout (the installed one may be another worktree's)."""
    bin_dir = tmp / "_bin"
    bin_dir.mkdir()
    exe = bin_dir / "real2sim"
    exe.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m real2sim "$@"\n')
    exe.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    env.setdefault("MUJOCO_GL", "egl")
    return env


def run(cmd: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_readme_quick_start_runs_verbatim(tmp_path):
    cmds = quick_start_commands()
    assert [c.split()[:2] for c in cmds] == [
        ["real2sim", "demo"],
        ["real2sim", "recon"],
        ["real2sim", "export"],
        ["real2sim", "validate"],
    ]
    assert any("scan.ply" in c for c in cmds)
    write_scan_ply(tmp_path / "scan.ply")
    env = shell_env(tmp_path)
    for cmd in cmds:
        r = run(cmd, tmp_path, env)
        assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
        assert "MeshFix" not in r.stdout + r.stderr
    check_demo_renders(tmp_path / "demo_out")
    assert (tmp_path / "scene" / "scene.json").is_file()
    pkg = tmp_path / "pkg"
    assert (pkg / "scene.xml").is_file() and (pkg / "scene_model.xml").is_file()
    assert len(list((pkg / "renders").glob("*.png"))) >= 2
    if (
        SHARED_DATA / "pointclouds"
    ).is_dir():  # the Kinect scan has colour: it reaches the package as a texture
        assert list((pkg / "assets").glob("*_visual.png"))


def check_demo_renders(out: Path) -> None:
    """Each demo object drawn in both halves of its render, in frame, in its scan's colour (chromaticity of the
    rendered visual mesh = that of the scan points' median colour); the box and can clearly coloured."""
    import json

    from tests.export.test_render import load, object_mask, saturation

    objects = json.loads((out / "scene" / "scene.json").read_text())["objects"]
    html = (out / "package" / "report.html").read_text()
    coloured = 0
    for o in objects:
        img = load(out / "package" / "renders" / f"{o['name']}.png")
        mask = object_mask(img)
        half = img.shape[1] // 2
        assert mask[:, :half].mean() > 0.02 and mask[:, half:].mean() > 0.02, o["name"]
        assert not np.concatenate([mask[0], mask[-1], mask[:, 0], mask[:, -1]]).any(), o["name"]
        left = img[:, :half][mask[:, :half]].astype(float)
        med, scan = np.median(left, axis=0), np.asarray(o["rgba"][:3])
        assert np.abs(med / med.sum() - scan / scan.sum()).max() < 0.03, (o["name"], med, scan)
        coloured += np.median(saturation(left)) > 0.4
        assert f"src='renders/{o['name']}.png'" in html
    assert coloured >= 2  # the orange box and the blue can
    assert object_mask(load(out / "package" / "renders" / "scene_overview.png")).mean() > 0.05


@pytest.mark.parametrize("folder", ["scene", "Scene", "my scans v1.2", "a.b.c", "scene.xml"])
def test_export_of_any_scene_folder_name(tmp_path, folder, cache_dir_env):
    from click.testing import CliRunner

    from real2sim.cli import cli

    scene_dir = tmp_path / folder
    synthetic_scene_dir(scene_dir)
    r = CliRunner().invoke(cli, ["-q", "export", str(scene_dir), "-o", str(tmp_path / "pkg out.d")])
    assert r.exit_code == 0, r.output
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(tmp_path / "pkg out.d" / "scene.xml"))
    assert model.nbody >= 2


def synthetic_scene_dir(path: Path) -> None:
    import trimesh

    from real2sim.scene import Scene, SceneObject, Support, save_scene

    box = trimesh.creation.box((0.06, 0.08, 0.05))
    t = np.eye(4)
    t[2, 3] = 0.025
    save_scene(Scene(Support(size=(0.5, 0.5)), (SceneObject("box", box, t, density=500.0),)), path)


@pytest.fixture
def cache_dir_env(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("REAL2SIM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
