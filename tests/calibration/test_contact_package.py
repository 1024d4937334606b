"""``calibrate --package`` with free-body logs: an exported cube package gets the fitted contact in its MJCF (and
replays held-out tosses with the fitted model's error), USD, per-object and scene URDF (read back by PyBullet),
and README (values marked fitted)."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from tests.helpers.cube import MAP, toss_folder, tosses


@pytest.fixture(scope="module")
def written(shared_data: Path, tmp_path_factory) -> tuple[Path, dict, Path]:
    import trimesh

    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.scene import Scene, SceneObject, Support

    tosses(shared_data)  # skips without the shared data, before the export
    tmp = tmp_path_factory.mktemp("cpkg")
    pose = np.eye(4)
    pose[2, 3] = 0.0524
    scene = Scene(
        Support(size=(1.0, 1.0)), (SceneObject("cube", trimesh.creation.box((0.1048,) * 3), pose, mass=0.37),)
    )
    pkg = tmp / "pkg"
    export_scene(scene, pkg, ExportCfg(workers=1))
    logs = toss_folder(shared_data, tmp / "tosses", slice(20, 30))
    (tmp / "map.toml").write_text(MAP)
    out = tmp / "out"
    args = ["calibrate", str(pkg / "pkg.xml"), "--log", str(logs), "--map", str(tmp / "map.toml")]
    args += ["--fit", "geom:cube_collision_0.friction[0]", "--fit", "geom:cube_collision_0.solref"]
    args += ["--max-windows", "120", "--package", str(pkg), "--no-report", "-o", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return pkg, json.loads((out / "result.json").read_text()), tmp


def test_package_mjcf_replays_the_fit(written) -> None:
    from real2sim.calibration.contact.evaluate import evaluate
    from real2sim.calibration.contact.logs import read_motions
    from real2sim.calibration.contact.sim import Roller, layout
    from real2sim.calibration.maps.logmap import load_map

    pkg, res, tmp = written
    vals = {p["name"]: p["value"] for p in res["params"]}
    m = mujoco.MjModel.from_xml_path(str(pkg / "scene.xml"))
    g = m.geom("cube_collision_0").id
    assert m.geom_friction[g, 0] == pytest.approx(vals["geom:cube_collision_0.friction[0]"], rel=1e-6)
    assert m.geom_priority[g] > m.geom_priority[m.geom("support").id]
    assert res["friction_cone"] == "elliptic"  # the exported package's own (real2sim exports elliptic cones)
    assert m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    files = sorted((tmp / "tosses").iterdir())
    hold = [f for k, f in enumerate(files) if k % 5 == 4]
    logs = read_motions(hold, load_map(tmp / "map.toml"), m)
    ev = evaluate(m, layout(m, logs[0]), Roller(m, 1), logs, ["holdout"] * len(logs), 0.1)
    want = res["errors_in_body_sizes"]["after"]["holdout"]
    for what in ("window", "whole", "rest"):
        assert ev.mean("holdout", what) == pytest.approx(want[what], rel=0.02), what


def test_usd_urdf_readme_hold_the_fitted_friction(written) -> None:
    import pybullet as pb
    from pxr import Usd, UsdPhysics, UsdShade

    pkg, res, _ = written
    mu = next(p["value"] for p in res["params"] if p["name"] == "geom:cube_collision_0.friction[0]")
    for urdf in (pkg / "urdf" / "cube.urdf", pkg / "pkg.urdf"):
        cid = pb.connect(pb.DIRECT)
        try:
            body = pb.loadURDF(str(urdf), physicsClientId=cid)
            link = -1 if urdf.name == "cube.urdf" else _link(pb, body, "cube", cid)
            info = pb.getDynamicsInfo(body, link, physicsClientId=cid)
            assert info[1] == pytest.approx(mu, rel=1e-5)  # lateral friction as PyBullet reads it
        finally:
            pb.disconnect(cid)
    stage = Usd.Stage.Open(str(pkg / "pkg.usd"))
    found = []
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.CollisionAPI) and "cube" in str(prim.GetPath()):
            mat = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")[0]
            target = mat.GetPrim() if mat else prim
            found.append(UsdPhysics.MaterialAPI(target).GetDynamicFrictionAttr().Get())
    assert found and all(f == pytest.approx(mu, rel=1e-6) for f in found)
    readme = (pkg / "README.md").read_text()
    assert "## Contact calibration" in readme and "| `cube_collision_0` | friction |" in readme
    assert "| fitted |" in readme


def _link(pb, body: int, name: str, cid: int) -> int:
    for j in range(pb.getNumJoints(body, physicsClientId=cid)):
        if pb.getJointInfo(body, j, physicsClientId=cid)[12].decode() == name:
            return j
    raise AssertionError(f"no link {name}")
