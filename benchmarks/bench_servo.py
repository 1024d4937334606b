"""Servo benchmark on the real STS3215 pendulum bench: calibrate a position servo from the Kp-32 logs (start:
MuJoCo Menagerie's SO-101 servo values), replay every whole log open loop on other payloads and firmware gains,
compare with the published M1 MuJoCo export, with plain ``mujoco.sysid`` on the same parameters and windows, and
check the randomised ensemble's coverage of held-out logs.

    python benchmarks/bench_servo.py                 # full run (a few minutes on 2 cores)
    python benchmarks/bench_servo.py --quick         # CI smoke (fewer windows and iterations, no sysid)
    python benchmarks/bench_servo.py --json out.json
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data" / "robot_logs" / "sts3215_bench"
G = 9.81
MENAGERIE = {"kp": 17.8, "damping": 0.60, "armature": 0.028, "frictionloss": 0.052, "forcerange": 3.35}
M1 = {
    "kp": 29.07744066635301,
    "damping": 1.1793454779199242,
    "armature": 0.025896903176634425,
    "frictionloss": 0.11434146818509992,
    "forcerange": 5.510764878546495,
}  # published/id008/mujoco_params.txt
FIRMWARE_REF = 32.0  # the published export and the training logs are at firmware Kp 32
FIT = [
    "actuator:servo.kp",
    "actuator:servo.forcerange",
    "actuator:servo.kv",
    "joint:hinge.damping",
    "joint:hinge.armature",
    "joint:hinge.frictionloss",
]
MAP = """time = "timestamp"
constants = ["kp", "mass", "length"]
[joints.hinge]
qpos = "position"
[actuators.servo]
ctrl = "goal_position"
enable = "torque_enable"
"""
MAP_EMF = (
    MAP
    + """[actuators.servo_emf]
ctrl = "goal_position"
enable = "torque_enable"
"""
)


def yaml_inertia(mass: float) -> tuple[float, float]:
    """(inertia about the axis [kg·m²], gravity torque amplitude [N·m]) from the authors' configs."""
    import yaml

    name = "sysid_config_mB-len100.yaml" if mass < 0.7 else "sysid_config_mBC-len100.yaml"
    cfg = yaml.safe_load((DATA / "published" / "configs" / name).read_text())["sysid"]
    return float(cfg["total_inertia"]), abs(float(cfg["total_g_bias"]))


def pendulum_mjcf(mass: float, servo: dict, timestep: float = 0.002) -> str:
    """1-DoF bench: hanging arm (q = 0 down) whose inertia about the axis and gravity torque match the yaml.
    With ``servo["emf"]``: the DC-motor form, a back-EMF damper outside the torque limit, on while powered."""
    emf = ""
    if "emf" in servo:
        emf = (
            f'<general name="servo_emf" joint="hinge" gainprm="0" biastype="affine" '
            f'biasprm="0 0 {-servo["emf"]}"/>'
        )
    inertia, gbias = yaml_inertia(mass)
    m = mass + 0.036  # disc + arm
    d = gbias / (m * G)
    icom = inertia - m * d * d
    return f"""<mujoco model="sts3215_bench">
  <option timestep="{timestep}" integrator="implicitfast"/>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{servo["damping"]}" armature="{servo["armature"]}"
             frictionloss="{servo["frictionloss"]}"/>
      <inertial pos="0 0 {-d}" mass="{m}" diaginertia="{icom} {icom} {icom}"/>
    </body>
  </worldbody>
  <actuator>
    <position name="servo" joint="hinge" kp="{servo["kp"]}" kv="{servo.get("kv", 0.0)}" forcerange="{-servo["forcerange"]} {servo["forcerange"]}"/>
    {emf}
  </actuator>
</mujoco>
"""


def load_logs(tmp: Path, pattern: str = "*.json.gz", emf: bool = False):
    from real2sim.calibration.mapping import load_map, load_trajectory
    from real2sim.calibration.run import prepare
    from real2sim.calibration.signal import despike

    (tmp / "map.toml").write_text(MAP_EMF if emf else MAP)
    lmap = load_map(tmp / "map.toml")
    trajs = []
    for p in sorted((DATA / "logs").glob(pattern)):
        tr, _ = load_trajectory(p, lmap)
        trajs.append(despike(tr, 0.5))
    return prepare(trajs, 0.1, from_qpos=True, smooth_wn=0.2)


def model_for(tmp: Path, mass: float, servo: dict):
    import mujoco

    p = tmp / f"bench_{mass}_{abs(hash(tuple(servo.items())))}.xml"
    p.write_text(pendulum_mjcf(mass, servo))
    return mujoco.MjModel.from_xml_path(str(p))
