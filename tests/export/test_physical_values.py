"""Known physical values at export, on the sample tabletop scan's scene: ``--mass`` reaches the MJCF, the USD and the
per-object URDF with the inertia scaled to it, ``--material`` sets density and friction from the table, the README,
report and ``export.json`` say where every value came from, and bad values are one-line errors with nothing
written."""

from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from real2sim.cli import cli
from real2sim.export.config import ExportCfg
from real2sim.export.package import export_scene
from real2sim.export.physics.materials import MATERIALS
from real2sim.export.writers.manifest import PackageManifest
from real2sim.scene import load_scene

MASS = 0.321


@pytest.fixture(scope="module")
def sample_scene_dir(sample_data, tmp_path_factory) -> Path:
    """The scene recon makes from the committed sample scans (4 objects: object_1 ... object_4)."""
    from real2sim.recon.pointcloud.config import PointCloudReconCfg
    from real2sim.recon.pointcloud.run import run_recon_pointcloud

    s = tomllib.loads((sample_data / "session.toml").read_text())
    out = tmp_path_factory.mktemp("phys") / "scene"
    cfg = PointCloudReconCfg(
        inputs=tuple(sample_data / f for f in s["lidar"]["files"]),
        out_dir=out,
        poses=sample_data / s["lidar"]["poses"],
    )
    run_recon_pointcloud(cfg)
    return out


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory, cache_dir) -> Path:
    """``$REAL2SIM_CACHE`` of the CLI runs: its ``coacd`` is the session's decomposition cache (the sample scene's
    objects are decomposed once per test session, most of this module's time)."""
    root = tmp_path_factory.mktemp("phys_cache")
    (root / "coacd").symlink_to(cache_dir, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def baseline(sample_scene_dir, tmp_path_factory, cache_root):
    """The scene exported with its own values (MJCF only, no renders: the reference masses and inertias)."""
    out = tmp_path_factory.mktemp("phys_base") / "base"
    cfg = ExportCfg(cache_dir=cache_root / "coacd", render=False, formats=("mjcf",), workers=1)
    return export_scene(load_scene(sample_scene_dir), out, cfg)


@pytest.fixture(scope="module")
def given(sample_scene_dir, tmp_path_factory, cache_root):
    """``real2sim export SCENE -o PKG --mass object_1=0.321 --material object_2=rubber``."""
    out = tmp_path_factory.mktemp("phys_given") / "pkg"
    args = ["-q", "export", str(sample_scene_dir), "-o", str(out), "--workers", "1", "--name", "tabletop"]
    args += ["--mass", f"object_1={MASS}", "--material", "object_2=rubber"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REAL2SIM_CACHE", str(cache_root))
        r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return out


def _model(path: Path):
    import mujoco

    return mujoco.MjModel.from_xml_path(str(path / "scene.xml"))


def _principal(inertia: np.ndarray) -> np.ndarray:
    return np.linalg.eigvalsh(np.asarray(inertia, dtype=float))


def test_given_mass_is_in_the_mjcf_usd_and_object_urdf_with_the_inertia_scaled(baseline, given):
    base, m = _model(baseline.path), _model(given)
    old = float(base.body("object_1").mass[0])
    scale = MASS / old
    assert abs(old - MASS) > 0.1 * MASS  # the sample's default-density mass is far from the given one
    assert m.body("object_1").mass[0] == pytest.approx(MASS, rel=1e-9)
    want = np.sort(base.body("object_1").inertia) * scale  # MuJoCo writes 6 significant digits: rtol 2e-5
    np.testing.assert_allclose(np.sort(m.body("object_1").inertia), want, rtol=2e-5)
    np.testing.assert_allclose(m.body("object_1").ipos, base.body("object_1").ipos, atol=1e-9)
    for other in ("object_3", "object_4"):  # objects nobody named keep their mass
        assert m.body(other).mass[0] == pytest.approx(base.body(other).mass[0], rel=1e-9)

    # the per-object URDF: inertial mass and the full tensor (products included) scaled
    link = ET.parse(given / "urdf" / "object_1.urdf").getroot().find("link/inertial")
    assert float(link.find("mass").get("value")) == pytest.approx(MASS, rel=1e-9)
    rubber = ET.parse(given / "urdf" / "object_2.urdf").getroot().find("link/contact/lateral_friction")
    assert float(rubber.get("value")) == MATERIALS["rubber"].friction  # PyBullet's friction tag
    i = {k: float(v) for k, v in link.find("inertia").attrib.items()}
    tensor = np.array(
        [[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]]
    )
    np.testing.assert_allclose(_principal(tensor), want, rtol=2e-5)

    # the USD: UsdPhysics MassAPI mass and principal moments
    pytest.importorskip("pxr", reason="usd-core is not installed: pip install 'real2sim[engines]'")
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(str(given / "tabletop.usd"))
    api = UsdPhysics.MassAPI(stage.GetPrimAtPath("/tabletop/object_1"))
    assert api.GetMassAttr().Get() == pytest.approx(MASS, rel=1e-6)
    moments = np.sort(np.array(api.GetDiagonalInertiaAttr().Get(), dtype=float))
    np.testing.assert_allclose(moments, want, rtol=2e-5)


def test_material_sets_density_and_friction_from_the_table(baseline, given):
    rubber = MATERIALS["rubber"]
    base, m = _model(baseline.path), _model(given)
    volume = base.body("object_2").mass[0] / 500.0  # the default density's mass over the same mesh
    assert m.body("object_2").mass[0] == pytest.approx(rubber.density * volume, rel=2e-5)  # 6 digits in XML
    geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("object_2").id and m.geom_contype[g]]
    assert geoms and all(m.geom_friction[g][0] == pytest.approx(rubber.friction) for g in geoms)
    others = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("object_4").id and m.geom_contype[g]]
    assert others and all(m.geom_friction[g][0] == pytest.approx(0.8) for g in others)

    # the object's friction is its contact's with the support (priority), not the larger of the two geoms'
    import mujoco

    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_step(m, d, 20)
    support = m.geom("support").id
    seen = {}
    for c in d.contact[: d.ncon]:
        if support in (c.geom1, c.geom2):
            other = c.geom2 if c.geom1 == support else c.geom1
            seen.setdefault(m.body(m.geom_bodyid[other]).name, set()).add(round(float(c.friction[0]), 9))
    assert seen["object_2"] == {rubber.friction} and seen["object_4"] == {0.8}, seen

    pybullet = pytest.importorskip("pybullet")
    cid = pybullet.connect(pybullet.DIRECT)
    try:  # PyBullet reads the per-object URDF's mass and friction
        body = pybullet.loadURDF(str(given / "urdf" / "object_2.urdf"), physicsClientId=cid)
        info = pybullet.getDynamicsInfo(body, -1, physicsClientId=cid)
        assert info[0] == pytest.approx(m.body("object_2").mass[0], rel=2e-5) and info[1] == rubber.friction
    finally:
        pybullet.disconnect(physicsClientId=cid)

    pytest.importorskip("pxr", reason="usd-core is not installed")
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(str(given / "tabletop.usd"))
    mat = UsdPhysics.MaterialAPI(stage.GetPrimAtPath("/tabletop/materials/object_2"))
    assert mat.GetDynamicFrictionAttr().Get() == pytest.approx(rubber.friction)


def _physics_table(readme: str) -> dict[str, list[str]]:
    section = readme.split("## Physical properties", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    return {r.split("|")[1].strip(" `"): [c.strip() for c in r.split("|")[2:-1]] for r in rows}


def test_readme_report_and_manifest_say_where_each_value_came_from(given):
    table = _physics_table((given / "README.md").read_text())
    assert sorted(table) == ["object_1", "object_2", "object_3", "object_4"]
    # columns: mass, from, density, from, friction, from
    assert table["object_1"][0] == "0.321" and table["object_1"][1::2] == ["weighed", "weighed", "default"]
    assert table["object_2"][1::2] == ["material:rubber"] * 3
    assert table["object_2"][2] == "1100" and table["object_2"][4] == "0.9"
    assert table["object_4"][1::2] == ["default"] * 3 and table["object_4"][2:5:2] == ["500", "0.8"]
    html = (given / "report.html").read_text()
    assert "<h2>Physical properties</h2>" in html and "<td>material:rubber</td>" in html
    assert "<td>weighed</td>" in html
    objs = {o.name: o for o in PackageManifest.from_json(given).objects}
    assert (
        objs["object_1"].physics["mass"].value == MASS
        and objs["object_1"].physics["mass"].source == "weighed"
    )
    assert objs["object_2"].physics["friction"].value[0] == 0.9
    assert objs["object_2"].physics["friction"].source == "material:rubber"
    raw = json.loads((given / "export.json").read_text())
    assert raw["objects"][0]["physics"]["density"]["source"] == "weighed"


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--mass", "object_1=-0.3"], "--mass object_1=-0.3: must be a positive, finite number of kg"),
        (["--mass", "object_1=0"], "--mass object_1=0: must be a positive"),
        (["--mass", "object_1=nan"], "--mass object_1=nan: must be a positive"),
        (["--density", "object_1=inf"], "--density object_1=inf: must be a positive, finite number of kg/m^3"),
        (["--friction", "object_1=-0.1"], "--friction object_1=-0.1: must be a finite number >= 0"),
        (["--friction", "object_1=heavy"], "--friction object_1=heavy: 'heavy' is not a number"),
        (["--mass", "object_1"], "--mass: expected NAME=KG, got 'object_1'"),
        (["--mass", "objct_1=0.3"], "--mass: no object 'objct_1' in the scene (did you mean object_1"),
        (["--material", "object_1=rubbr"], "--material object_1=rubbr: unknown material 'rubbr' (did you mean rubber"),
        (["--mass", "object_1=1", "--density", "object_1=500"], "object_1 has both a mass and a density"),
        (["--mass", "object_1=1", "--mass", "object_1=2"], "--mass: object_1 is given twice"),
    ],
)  # fmt: skip
def test_bad_values_are_one_line_errors_and_nothing_is_written(sample_scene_dir, tmp_path, args, expect):
    out = tmp_path / "pkg"
    r = CliRunner().invoke(cli, ["-q", "export", str(sample_scene_dir), "-o", str(out), *args])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert expect in lines[0], lines[0]
    if "material" in expect:  # the valid names are listed
        assert "materials: wood, plastic, steel" in lines[0]
    if "no object" in expect:
        assert "objects: object_1, object_2, object_3, object_4" in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_later_tool_can_mark_a_value_fitted(given):
    """The calibrate write-back's path: ``export.json`` read back, a value marked ``fitted``, the README's section
    rewritten; the rest of the README is kept byte for byte."""
    from dataclasses import replace

    from real2sim.export.report.pages import with_physics
    from real2sim.export.writers.manifest import PhysicalValue

    info = PackageManifest.from_json(given)
    assert PackageManifest.from_json(given).to_json() == (given / "export.json").read_text()  # round trip
    o = info.objects[0]
    fitted = replace(o, physics={**o.physics, "friction": PhysicalValue((0.55, 0.005, 0.0001), "fitted")})
    info = replace(info, objects=(fitted, *info.objects[1:]))
    readme = (given / "README.md").read_text()
    new = with_physics(readme, info)
    assert _physics_table(new)["object_1"][4:] == ["0.55", "fitted"]
    assert _physics_table(new)["object_2"] == _physics_table(readme)["object_2"]
    a, b = readme.split("## Physical properties"), new.split("## Physical properties")
    assert a[0] == b[0] and a[1].split("\n## ", 1)[1] == b[1].split("\n## ", 1)[1]


# the box and the stone (the cylinder, taller than wide, would tip over rather than slide)
@pytest.mark.parametrize(("obj", "mu"), [("object_3", 0.8), ("object_4", 0.8)])
def test_pybullet_slides_each_object_with_its_own_friction(given, obj, mu):
    """Loaded as the README says (every entry of ``urdf/poses.json``, the table included), an object pushed along
    the table stops where Coulomb friction with its own coefficient stops it: v^2 / (2 mu g)."""
    pybullet = pytest.importorskip("pybullet")
    poses = json.loads((given / "urdf" / "poses.json").read_text())
    assert poses["support"]["urdf"] == "support.urdf" and poses["support"]["fixed"]
    cid = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setGravity(0, 0, -9.81, physicsClientId=cid)
        ids = {
            name: pybullet.loadURDF(
                str(given / "urdf" / e["urdf"]),
                e["xyz"],
                e["quat_xyzw"],
                useFixedBase=e["fixed"],
                flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                physicsClientId=cid,
            )
            for name, e in poses.items()
        }
        for _ in range(120):  # settle on the table
            pybullet.stepSimulation(physicsClientId=cid)
        body = ids[obj]
        start = np.array(pybullet.getBasePositionAndOrientation(body, physicsClientId=cid)[0])
        v = 0.5
        pybullet.resetBaseVelocity(body, [v, 0, 0], [0, 0, 0], physicsClientId=cid)
        for _ in range(240):
            pybullet.stepSimulation(physicsClientId=cid)
        end = np.array(pybullet.getBasePositionAndOrientation(body, physicsClientId=cid)[0])
    finally:
        pybullet.disconnect(physicsClientId=cid)
    slid = float(np.linalg.norm((end - start)[:2]))
    assert slid == pytest.approx(v**2 / (2 * mu * 9.81), rel=0.15), slid
