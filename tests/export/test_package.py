"""End-to-end export: checks pass, names are safe XML, URDF loads, failing packages leave nothing, determinism."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.errors import StageError
from real2sim.export.config import ExportCfg
from real2sim.export.package import export_scene, run_export
from real2sim.export.validate import validate_package
from real2sim.scene import Scene, SceneObject, Support, save_scene

from .conftest import at, l_shape


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_synthetic_package_passes_every_check(synthetic_package):
    pkg = synthetic_package
    assert pkg.ok and len(pkg.checks) > 10
    names = {c.name for c in pkg.checks}
    for must in (
        "mjcf compiles",
        "urdf loads in mujoco",
        "urdf loads in yourdfpy",
        "initial penetration",
        "no mujoco warnings",
    ):
        assert must in names
    drift = [c for c in pkg.checks if c.name.startswith("rest drift")]
    assert len(drift) == 5 and all(c.value < 1e-3 for c in drift)
    # primitives where they fit, hulls for the L
    model = mujoco.MjModel.from_xml_path(str(pkg.scene_xml))
    kinds = {
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g): int(model.geom_type[g])
        for g in range(model.ngeom)
    }
    assert kinds["box_collision_0"] == int(mujoco.mjtGeom.mjGEOM_BOX)
    assert kinds["can_collision_0"] == int(mujoco.mjtGeom.mjGEOM_CYLINDER)
    assert kinds["ball_collision_0"] == int(mujoco.mjtGeom.mjGEOM_SPHERE)
    assert kinds["L_block_collision_0"] == int(mujoco.mjtGeom.mjGEOM_MESH)
    assert (pkg.path / "assets" / "L_block_collision_0.obj").is_file()
    for f in ("README.md", "report.html", "export.json", "synth.urdf", "synth.xml", "scene.xml"):
        assert (pkg.path / f).is_file(), f
    assert len(list((pkg.path / "renders").glob("*.png"))) == 6  # 5 objects + scene overview


def test_classes_keyframe_and_scene_include(synthetic_package):
    root = ET.parse(synthetic_package.mjcf).getroot()
    classes = {d.get("class"): d for d in root.iter("default") if d.get("class")}
    vg = classes["visual"].find("geom")
    assert vg.get("contype") == "0" and vg.get("conaffinity") == "0" and vg.get("group") == "2"
    assert classes["collision"].find("geom").get("group") == "3"
    assert root.find("keyframe/key").get("name") == "home"
    scene = ET.parse(synthetic_package.scene_xml).getroot()
    assert scene.find("include").get("file") == "synth.xml"
    assert any(g.get("type") == "plane" for g in scene.iter("geom"))
    assert scene.find("worldbody/light") is not None
    model = mujoco.MjModel.from_xml_path(str(synthetic_package.scene_xml))
    assert model.njnt == 5 and all(model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE for j in range(5))


def test_weird_names_give_valid_loadable_xml(synthetic_package):
    root = ET.parse(synthetic_package.mjcf).getroot()  # parses: the XML is well formed
    bodies = [b.get("name") for b in root.iter("body")]
    odd = [b for b in bodies if b.startswith("my_")]
    assert odd and odd[0].isascii() and all(ch.isalnum() or ch == "_" for ch in odd[0])
    urdf = ET.parse(synthetic_package.urdf).getroot()
    assert odd[0] in {link.get("name") for link in urdf.iter("link")}
    for mesh in urdf.iter("mesh"):
        fn = mesh.get("filename")
        assert fn.startswith("assets/") and "://" not in fn and (synthetic_package.path / fn).is_file()
    readme = (synthetic_package.path / "README.md").read_text(encoding="utf-8")
    assert 'my "mug" <1> é' in readme  # the source name is kept for the user


def test_validate_cli_json_and_exit_code(synthetic_package):
    r = CliRunner().invoke(cli, ["validate", str(synthetic_package.path), "--json"])
    assert r.exit_code == 0, r.output
    checks = json.loads(r.output)
    assert checks and all(c["passed"] for c in checks)


def test_failing_package_raises_and_leaves_no_folder(tmp_path, cache_dir):
    floating = Scene(
        Support(), (SceneObject("high", trimesh.creation.box((0.05, 0.05, 0.05)), at(0, 0, 0.3)),)
    )
    out = tmp_path / "bad"
    with pytest.raises(StageError, match="rest drift high"):
        export_scene(floating, out, ExportCfg(workers=1, cache_dir=cache_dir, render=False))
    assert not out.exists() and not list(tmp_path.iterdir())


def test_cli_missing_scene_is_one_line(tmp_path):
    out = tmp_path / "x"
    r = CliRunner().invoke(cli, ["export", "/nonexistent", "-o", str(out)])
    assert r.exit_code == 1
    assert r.output.strip().count("\n") == 0 and "/nonexistent" in r.output
    assert not out.exists()


def test_export_is_deterministic_and_cli_runs(tmp_path, cache_dir):
    rng = np.random.default_rng(3)
    pts = np.abs(rng.normal(size=(60, 3))) * [0.03, 0.02, 0.02] * [1, 1, 2] - [0.015, 0.01, 0]
    ring = np.c_[0.03 * np.cos(np.arange(12) / 2), 0.03 * np.sin(np.arange(12) / 2), np.zeros(12)]
    blob = trimesh.convex.convex_hull(np.vstack([pts, ring]))  # irregular, with a flat base to rest on
    scene = Scene(
        Support(),
        (
            SceneObject("L", l_shape(), at(0.0, 0.0, 0.0), density=800.0),
            SceneObject("blob", blob, at(0.2, 0.0, 0.0), mass=0.2),
        ),
    )
    save_scene(scene, tmp_path / "scene")
    a, b = tmp_path / "a", tmp_path / "b"
    known = {"mass": ("blob=0.25",), "material": ("L=wood",)}  # the options give the same bytes as the config
    run_export(ExportCfg(scene_dir=tmp_path / "scene", out_dir=a, workers=1, cache=False, name="m", **known))
    r = CliRunner().invoke(
        cli,
        ["export", str(tmp_path / "scene"), "-o", str(b), "--name", "m", "--workers", "2", "--no-cache"]
        + ["--mass", "blob=0.25", "--material", "L=wood"],
    )
    assert r.exit_code == 0, r.output
    fa, fb = _files(a), _files(b)
    assert fa.keys() == fb.keys() and len(fa) > 8
    diff = [k for k in fa if fa[k] != fb[k]]
    assert diff == []
    assert all(c.passed for c in validate_package(b))
