"""Fixtures of the twin's tests: the SO-101 (shared data) composed with the demo's sample tabletop package once per
run, and a small hand-written robot and package (real MJCF files, compiled by MuJoCo) for the cases the real ones do
not have: a scanned robot to cut out, a keyframe to merge, a joint count that does not match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_once

SO101 = Path("robot_logs") / "so101_lerobot"
BASE_XY = (0.0, 0.3)
"""Where the SO-101 stands on the sample table: clear of its four objects."""

MINI_ROBOT = """<mujoco model="mini_arm">
  <compiler angle="radian" autolimits="true"/>
  <default><default class="servo"><joint damping="0.5" armature="0.01"/><position kp="30" forcerange="-2 2"/></default></default>
  <worldbody>
    <body name="base" childclass="servo">
      <geom name="base_geom" type="box" size="0.05 0.05 0.02" pos="0 0 0.02" rgba="0.9 0.7 0.1 1"/>
      <body name="link" pos="0 0 0.04">
        <joint name="pan" axis="0 0 1" range="-2 2"/>
        <geom name="link_geom" type="box" size="0.015 0.015 0.08" pos="0 0 0.09" mass="0.2"/>
        <body name="tip" pos="0 0 0.18">
          <joint name="lift" axis="0 1 0" range="-1.5 1.5"/>
          <geom name="tip_geom" type="capsule" size="0.01 0.05" pos="0 0 0.06" mass="0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position class="servo" name="pan" joint="pan" ctrlrange="-2 2"/>
    <position class="servo" name="lift" joint="lift" ctrlrange="-1.5 1.5"/>
  </actuator>
  <keyframe><key name="home" qpos="0.3 0.2" ctrl="0.3 0.2"/><key name="rest" qpos="0 1.2" ctrl="0 1.2"/></keyframe>
</mujoco>
"""


def mini_package(folder: Path, objects: dict[str, tuple[float, float, float]]) -> Path:
    """A package folder as export lays it out (export.json, <name>.xml, scene.xml): a 1 x 1 m table top at z = 0 and
    one free cube per object, (x, y, half side), standing on it."""
    folder.mkdir(parents=True, exist_ok=True)
    bodies = "\n".join(
        f'    <body name="{n}" pos="{x} {y} {h}"><freejoint name="{n}_free"/>'
        f'<geom name="{n}_collision_0" type="box" size="{h} {h} {h}" mass="0.1"/></body>'
        for n, (x, y, h) in objects.items()
    )
    (folder / "mini.xml").write_text(
        '<mujoco model="mini"><option integrator="implicitfast" cone="elliptic"/><worldbody>\n'
        '    <geom name="support" type="box" size="0.5 0.5 0.02" pos="0 0 -0.02"/>\n'
        f'{bodies}\n  </worldbody><keyframe><key name="home"/></keyframe></mujoco>\n'
    )
    (folder / "scene.xml").write_text(
        '<mujoco model="mini scene"><include file="mini.xml"/><worldbody>'
        '<geom name="floor" type="plane" size="0 0 0.05" pos="0 0 -0.75"/></worldbody></mujoco>\n'
    )
    (folder / "export.json").write_text(json.dumps({"name": "mini", "objects": []}))
    return folder


@pytest.fixture
def mini_robot(tmp_path) -> Path:
    p = tmp_path / "robot" / "mini_arm.xml"
    p.parent.mkdir()
    p.write_text(MINI_ROBOT)
    return p


@pytest.fixture(scope="session")
def so101(shared_data) -> Path:
    p = shared_data / SO101
    if not (p / "model" / "so101_new_calib.xml").is_file():
        pytest.skip(f"{p} not present")
    return p


@pytest.fixture(scope="session")
def sample_package(demo_run) -> Path:
    return demo_run[2]


@pytest.fixture(scope="session")
def so101_twin(tmp_path_factory, so101, sample_package) -> tuple[Path, dict, float]:
    """The SO-101 composed with the sample tabletop at ``BASE_XY``: (twin folder, twin.json, seconds)."""

    def compute(root: Path):
        from real2sim.twin.config import TwinCfg
        from real2sim.twin.run import run_twin

        cfg = TwinCfg(robot=so101 / "model" / "so101_new_calib.xml", scene=sample_package, out_dir=root / "twin",
                      base_pose=BASE_XY)  # fmt: skip
        res = run_twin(cfg)
        return root / "twin", res.manifest, res.seconds

    return run_once(tmp_path_factory, "so101_twin", compute)
