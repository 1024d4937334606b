"""``calibrate --package``: calibrated values written into an exported package's MJCF, URDF and USD, with the diff
in its README; unidentifiable parameters and elements the package lacks are not written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.outputs.package import write_package
from real2sim.calibration.params.resolve import resolve
from real2sim.params import ParamSpec

ARM_URDF = """<?xml version="1.0" encoding="utf-8"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper_arm"><inertial><mass value="1.0"/><inertia ixx="0.008" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="0.0006"/></inertial></link>
  <link name="forearm"><inertial><mass value="0.6"/><inertia ixx="0.0032" ixy="0" ixz="0" iyy="0.0032" iyz="0" izz="0.0003"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper_arm"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="6" velocity="10"/><dynamics damping="0.06"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper_arm"/><child link="forearm"/><origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="3" velocity="10"/></joint>
</robot>
"""  # noqa: E501


@pytest.fixture(scope="module")
def box_package(tmp_path_factory) -> Path:
    """A real package: one box exported by real2sim export (2 s)."""
    import trimesh

    from real2sim.export.config import ExportCfg
    from real2sim.export.package import export_scene
    from real2sim.scene import Scene, SceneObject, Support

    pose = np.eye(4)
    pose[2, 3] = 0.025
    scene = Scene(
        Support(size=(0.5, 0.5)),
        (SceneObject("box", trimesh.creation.box((0.1, 0.08, 0.05)), pose, mass=0.3),),
    )
    out = tmp_path_factory.mktemp("pkg") / "tabletop"
    export_scene(scene, out, ExportCfg(workers=1))
    return out


def test_object_mass_and_friction_into_exported_package(box_package: Path, tmp_path: Path) -> None:
    import mujoco

    pkg = tmp_path / "pkg"
    shutil.copytree(box_package, pkg)
    has_usd = (pkg / "tabletop.usd").is_file()  # export writes it when usd-core is installed
    model = mujoco.MjModel.from_xml_path(str(pkg / "scene.xml"))
    params = resolve([ParamSpec("body:box.mass"), ParamSpec("geom:box_collision_*.friction")], model)
    edit = write_package(pkg, params, np.array([0.35, 0.55]), np.array([True, True]))
    m2 = mujoco.MjModel.from_xml_path(str(pkg / "scene.xml"))  # still loads, with the new values
    assert m2.body("box").mass[0] == pytest.approx(0.35)
    assert m2.geom("box_collision_0").friction[0] == pytest.approx(0.55)
    urdf = (pkg / "tabletop.urdf").read_text()
    assert '<mass value="0.35"' in urdf
    readme = (pkg / "README.md").read_text()
    assert "| `body:box.mass` | `tabletop.xml` | 0.3 -> 0.35 |" in readme
    assert "| `geom:box_collision_0.friction` | `tabletop.xml` | 0.8 -> 0.55 |" in readme
    assert readme.startswith("# tabletop")  # the exporter's README is kept, the section appended
    if has_usd:
        from pxr import Usd, UsdPhysics

        stage = Usd.Stage.Open(str(pkg / "tabletop.usd"))
        assert UsdPhysics.MassAPI(stage.GetPrimAtPath("/tabletop/box")).GetMassAttr().Get() == pytest.approx(
            0.35
        )
        mat = stage.GetPrimAtPath("/tabletop/materials/box")
        for k in ("physics:dynamicFriction", "physics:staticFriction"):
            assert mat.GetAttribute(k).Get() == pytest.approx(0.55)
        assert "| `body:box.mass` | `tabletop.usd` | 0.3 -> 0.35 |" in readme
        assert "| `geom:box_collision_0.friction` | `tabletop.usd` | 0.8 -> 0.55 |" in readme
    # a second write replaces the section instead of appending another
    write_package(pkg, params, np.array([0.4, 0.5]), np.array([True, True]))
    readme = (pkg / "README.md").read_text()
    assert readme.count("## Calibration") == 1 and "0.35 -> 0.4" in readme
    assert not edit.skipped


def test_calibrate_cli_writes_robot_package(sample_data: Path, tmp_path: Path) -> None:
    pkg = tmp_path / "armpkg"
    pkg.mkdir()
    shutil.copy(sample_data / "robot" / "double_pendulum.xml", pkg / "arm.xml")
    (pkg / "arm.urdf").write_text(ARM_URDF)
    (pkg / "export.json").write_text(json.dumps({"name": "arm"}))
    (pkg / "README.md").write_text("# arm\n")
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "real2sim", "calibrate", str(sample_data / "robot" / "double_pendulum.xml")]
        + [
            "--log",
            str(sample_data / "logs" / "excite_00.csv"),
            "--map",
            str(sample_data / "logs" / "map.toml"),
        ]
        + ["--fit", "joint:*.damping", "--fit", "body:forearm.com", "--fit", "delay:*", "--max-windows", "12"]
        + ["--no-report", "--package", str(pkg), "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    vals = {k: v["value"] for k, v in res["parameters"].items()}
    assert vals["body:forearm.com[1]"] == 0.0  # not identifiable: kept its prior, not written
    assert any("forearm.com[1]" in w and "not identifiable" in w for w in res["warnings"])
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(pkg / "arm.xml"))
    assert m.dof_damping[m.joint("shoulder").dofadr[0]] == pytest.approx(
        vals["joint:shoulder.damping"], rel=1e-5
    )
    assert m.actuator_delay[m.actuator("shoulder_motor").id] == pytest.approx(
        vals["delay:shoulder_motor"], rel=1e-5
    )
    assert m.body("forearm").ipos[1] == 0.0
    readme = (pkg / "README.md").read_text()
    assert "`joint:elbow.damping` | `arm.urdf` | 0 ->" in readme  # URDF joint without <dynamics> before
    assert "`body:forearm.com[1]` (not identifiable" in readme
    assert "delay:elbow_motor` | `arm.xml` | 0 ->" in readme
