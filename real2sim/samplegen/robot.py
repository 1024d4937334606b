"""Robot part of the sample session: a MuJoCo double pendulum with known joint parameters and motor latency,
excited by multisine torques, logged with encoder-like sensor noise.

Ground truth semantics (the calibration stage models the plant the same way):

- joint ``damping`` [N·m·s/rad], ``frictionloss`` [N·m] (MuJoCo dry friction), ``armature`` [kg·m²];
- ``delay:<actuator>`` [s]: the plant applies the logged command ``delay`` seconds late; the logged command
  is held between log samples (zero-order hold) and each physics step applies the mean of the shifted, held
  signal over that step (what a motor integrating its torque command over the step would see).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.atomic import write_text

JOINTS = ("shoulder", "elbow")
ACTUATORS = ("shoulder_motor", "elbow_motor")

TRUE_PARAMS: dict[str, float] = {
    "joint:shoulder.damping": 0.060,
    "joint:elbow.damping": 0.030,
    "joint:shoulder.frictionloss": 0.080,
    "joint:elbow.frictionloss": 0.040,
    "joint:shoulder.armature": 0.020,
    "joint:elbow.armature": 0.008,
    "delay:shoulder_motor": 0.012,
    "delay:elbow_motor": 0.008,
}

TIMESTEP = 0.001  # physics step [s]
LOG_RATE = 200.0  # log sample rate [Hz]
DURATION = 4.0  # seconds per log
N_LOGS = 4

# Sensor model: 16-bit absolute encoder (quantised) plus electrical noise; velocity from the drive's observer.
QPOS_RESOLUTION = 2.0 * np.pi / 2**16  # [rad]
QPOS_SIGMA = 1.0e-4  # [rad]
QVEL_SIGMA = 5.0e-3  # [rad/s]

_MJCF = """<mujoco model="double_pendulum">
  <!-- real2sim sample robot: two-link planar arm (double pendulum), torque-driven at both joints. -->
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{timestep}" gravity="0 0 -9.81" integrator="Euler"/>
  <default>
    <geom contype="0" conaffinity="0" rgba="0.7 0.7 0.75 1"/>
  </default>
  <worldbody>
    <light pos="0 -1 2" dir="0 1 -2"/>
    <body name="base" pos="0 0 0.8">
      <geom type="cylinder" size="0.04 0.03" euler="1.5707963 0 0" rgba="0.2 0.2 0.2 1"/>
      <body name="upper_arm">
        <joint name="shoulder" type="hinge" axis="0 1 0" damping="{shoulder_damping}"
               frictionloss="{shoulder_frictionloss}" armature="{shoulder_armature}"/>
        <inertial pos="0 0 -0.15" mass="1.0" diaginertia="0.0080 0.0080 0.0006"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.025"/>
        <body name="forearm" pos="0 0 -0.3">
          <joint name="elbow" type="hinge" axis="0 1 0" damping="{elbow_damping}"
                 frictionloss="{elbow_frictionloss}" armature="{elbow_armature}"/>
          <inertial pos="0 0 -0.125" mass="0.6" diaginertia="0.0032 0.0032 0.0003"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.02" rgba="0.8 0.5 0.3 1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="shoulder_motor" joint="shoulder" gear="1" ctrlrange="-6 6"/>
    <motor name="elbow_motor" joint="elbow" gear="1" ctrlrange="-3 3"/>
  </actuator>
</mujoco>
"""

_MAP_TOML = """# Maps the log columns to the model (real2sim calibration map format).
time = "time"                 # seconds

[joints.shoulder]
qpos = "q_shoulder"
qvel = "qd_shoulder"

[joints.elbow]
qpos = "q_elbow"
qvel = "qd_elbow"

[actuators.shoulder_motor]
ctrl = "tau_shoulder"

[actuators.elbow_motor]
ctrl = "tau_elbow"
"""


def robot_mjcf(params: dict[str, float] | None = None) -> str:
    """The MJCF text of the sample robot with the given (default: true) joint parameters."""
    p = dict(TRUE_PARAMS if params is None else params)
    fields = {"timestep": repr(TIMESTEP)}
    for j in JOINTS:
        for a in ("damping", "frictionloss", "armature"):
            fields[f"{j}_{a}"] = repr(float(p[f"joint:{j}.{a}"]))
    return _MJCF.format(**fields)


def held_shifted_mean(
    t_log: np.ndarray, u_log: np.ndarray, delay: float, t0: np.ndarray, h: float
) -> np.ndarray:
    """Mean over [t0, t0 + h] of the zero-order-held log signal shifted ``delay`` seconds later.

    ``u_log`` (N,) is held from ``t_log[k]`` until ``t_log[k+1]`` (the first value also before the log, the
    last after it). The result is continuous and piecewise linear in ``delay``.
    """

    # Integral of the held signal from t_log[0] up to time s (clamped outside the log).
    def cumulative(s: np.ndarray) -> np.ndarray:
        dts = np.diff(t_log)
        cum = np.concatenate([[0.0], np.cumsum(u_log[:-1] * dts)])
        k = np.clip(np.searchsorted(t_log, s, side="right") - 1, 0, len(t_log) - 1)
        val = cum[k] + u_log[k] * (s - t_log[k])
        before = s < t_log[0]
        return np.where(before, u_log[0] * (s - t_log[0]), val)

    a = t0 - delay
    return (cumulative(a + h) - cumulative(a)) / h


def _excitation(rng: np.random.Generator, t: np.ndarray, amp: float, fmax: float) -> np.ndarray:
    """Random-phase multisine with a slowly varying offset and a short quiet phase (stiction is visible)."""
    freqs = np.sort(rng.uniform(0.15, fmax, size=7))
    phases = rng.uniform(0, 2 * np.pi, size=freqs.size)
    weights = rng.uniform(0.5, 1.0, size=freqs.size) / np.sqrt(freqs.size)
    u = np.zeros_like(t)
    for f, ph, w in zip(freqs, phases, weights, strict=True):
        u += w * np.sin(2 * np.pi * f * t + ph)
    u *= amp / max(1e-9, np.max(np.abs(u)))
    # a chirp burst adds high-frequency content (armature and delay show up there)
    t_c0 = rng.uniform(0.5, DURATION - 1.5)
    in_burst = (t >= t_c0) & (t < t_c0 + 1.0)
    tc = t - t_c0
    u += np.where(in_burst, 0.35 * amp * np.sin(2 * np.pi * (2.0 * tc + 3.0 * tc**2)), 0.0)
    return u


def simulate_log(
    params: dict[str, float], ctrl: np.ndarray, t_log: np.ndarray, q0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Run the true plant: returns (qpos, qvel) at the log times for the logged commands ``ctrl`` (N, 2)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(robot_mjcf(params))
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    mujoco.mj_forward(model, data)
    n = t_log.size
    steps = int(round((t_log[-1] - t_log[0]) / TIMESTEP))
    sub = int(round(1.0 / (LOG_RATE * TIMESTEP)))
    t_steps = t_log[0] + TIMESTEP * np.arange(steps)
    applied = np.stack(
        [
            held_shifted_mean(t_log, ctrl[:, i], params[f"delay:{a}"], t_steps, TIMESTEP)
            for i, a in enumerate(ACTUATORS)
        ],
        axis=1,
    )
    qpos = np.zeros((n, 2))
    qvel = np.zeros((n, 2))
    qpos[0], qvel[0] = data.qpos, data.qvel
    for s in range(steps):
        data.ctrl[:] = applied[s]
        mujoco.mj_step(model, data)
        if (s + 1) % sub == 0:
            k = (s + 1) // sub
            qpos[k], qvel[k] = data.qpos, data.qvel
    return qpos, qvel


def _fmt_csv(header: list[str], cols: np.ndarray) -> str:
    lines = [",".join(header)]
    for row in cols:
        lines.append(",".join(f"{v:.9g}" for v in row))
    return "\n".join(lines) + "\n"


def write_robot(out_dir: Path, seed: int = 0, noise: bool = True) -> dict:
    """Write ``robot/double_pendulum.xml``, ``logs/excite_00..03.csv``, ``logs/map.toml`` under ``out_dir``.

    Returns the ground truth for the session's ``robot`` key (true parameters, sensor noise, log list).
    Deterministic for a given ``seed``.
    """
    out_dir = Path(out_dir)
    rng = np.random.default_rng(seed)
    write_text(out_dir / "robot" / "double_pendulum.xml", robot_mjcf(TRUE_PARAMS))
    write_text(out_dir / "logs" / "map.toml", _MAP_TOML)
    n = int(round(DURATION * LOG_RATE)) + 1
    t = np.arange(n) / LOG_RATE
    logs = []
    for i in range(N_LOGS):
        ctrl = np.stack([_excitation(rng, t, 2.2, 3.0), _excitation(rng, t, 0.7, 4.0)], axis=1)
        q0 = rng.uniform(-0.3, 0.3, size=2)
        qpos, qvel = simulate_log(TRUE_PARAMS, ctrl, t, q0)
        if noise:
            qpos = qpos + rng.normal(0.0, QPOS_SIGMA, size=qpos.shape)
            qpos = np.round(qpos / QPOS_RESOLUTION) * QPOS_RESOLUTION
            qvel = qvel + rng.normal(0.0, QVEL_SIGMA, size=qvel.shape)
        name = f"excite_{i:02d}.csv"
        cols = np.column_stack([t, qpos, qvel, ctrl])
        header = ["time", "q_shoulder", "q_elbow", "qd_shoulder", "qd_elbow", "tau_shoulder", "tau_elbow"]
        write_text(out_dir / "logs" / name, _fmt_csv(header, cols))
        logs.append({"file": f"logs/{name}", "duration": DURATION, "rate_hz": LOG_RATE, "q0": q0.tolist()})
    return {
        "model": "robot/double_pendulum.xml",
        "map": "logs/map.toml",
        "parameters": dict(TRUE_PARAMS),
        "noise": {
            "enabled": bool(noise),
            "qpos_sigma": QPOS_SIGMA if noise else 0.0,
            "qpos_resolution": QPOS_RESOLUTION if noise else 0.0,
            "qvel_sigma": QVEL_SIGMA if noise else 0.0,
        },
        "timestep": TIMESTEP,
        "delay_semantics": "plant applies the logged ctrl delay seconds late, held between samples, "
        "averaged over each physics step",
        "logs": logs,
    }
