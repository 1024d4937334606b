"""Servo path on the real STS3215 bench logs: JSON record logs, enable flags, header constants, servo
parameters, enable-switched rollouts and the bench's --quick mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_servo as B  # noqa: E402

from tests.helpers.bench import run_bench  # noqa: E402

pytestmark = pytest.mark.skipif(not B.DATA.exists(), reason="shared bench logs not available")


def test_json_log_table_and_map(tmp_path: Path) -> None:
    from real2sim.calibration.logs.read import read_table
    from real2sim.calibration.logs.signal import despike
    from real2sim.calibration.maps.logmap import load_map, load_trajectory

    path = B.DATA / "logs" / "lift_and_drop_kp16_m0.535_L0.1.json.gz"
    t = read_table(path)
    assert t["kp"].shape == t["position"].shape == (600,)
    assert np.all(t["kp"] == 16)
    (tmp_path / "map.toml").write_text(B.MAP)
    tr, _ = load_trajectory(path, load_map(tmp_path / "map.toml"))
    assert tr.constants == {"kp": 16.0, "mass": 0.535, "length": 0.1}
    assert tr.enable.shape == (600, 1) and tr.enable[:200].all() and not tr.enable[200:].any()
    spiky, _ = load_trajectory(
        B.DATA / "logs" / "brutal_kp8_m0.535_L0.1.json.gz", load_map(tmp_path / "map.toml")
    )
    clean = despike(spiky, 0.5)
    assert clean.n == spiky.n - 1 and clean.qpos.min() > -0.1


def test_servo_params_move_gain_and_bias(tmp_path: Path) -> None:
    from real2sim.calibration.params.resolve import apply, get_value, resolve
    from real2sim.params import ParamSpec

    m = B.model_for(tmp_path, 0.535, B.MENAGERIE)
    ps = resolve(
        [ParamSpec(n) for n in ("actuator:servo.kp", "actuator:servo.kv", "actuator:servo.forcerange")], m
    )
    assert [get_value(m, p) for p in ps] == pytest.approx([17.8, 0.0, 3.35])
    apply(m, ps, np.array([30.0, 0.5, 4.0]))
    assert m.actuator_gainprm[0, 0] == 30.0 and m.actuator_biasprm[0, 1] == -30.0
    assert m.actuator_biasprm[0, 2] == -0.5 and tuple(m.actuator_forcerange[0]) == (-4.0, 4.0)


def test_enable_switches_actuator_off(tmp_path: Path) -> None:
    from dataclasses import replace

    from real2sim.calibration.sim.servo import replay

    (tr,) = B.load_logs(tmp_path, "lift_and_drop_kp32_m0.535*")
    servo = dict(B.M1, damping=0.02)  # little joint damping: the unpowered arm swings
    m = B.model_for(tmp_path, 0.535, servo)
    q_on, q_sw = replay([m, m], [replace(tr, enable=None), tr])
    before = tr.time[1:] < 2.0
    np.testing.assert_allclose(q_on[before], q_sw[before], atol=1e-9)
    # powered, the servo holds the arm near the goal; switched off, it falls back and swings through q = 0
    late = tr.time[1:] > 2.5
    assert np.abs(q_on[late] - tr.ctrl[1:][late]).max() < 0.3
    assert q_sw[late].max() > -0.2
    # the gain acts while powered: a 10x gain changes the motion before the drop
    m10 = B.model_for(tmp_path, 0.535, dict(servo, kp=10 * servo["kp"]))
    (q10,) = replay([m10], [tr])
    assert np.abs(q10[before] - q_sw[before]).max() > 1e-3


def test_bench_servo_quick(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    run_bench("bench_servo.py", "--json", str(out), "--out", str(tmp_path / "dr"), timeout=180)
    res = json.loads(out.read_text())
    assert res["fit"]["cost_final"] < res["fit"]["cost_initial"]
    med = res["median_holdout_rmse"]
    assert med["real2sim"] < med["menagerie"]
    assert len(res["replay_rmse"]) == 20
    assert "observation_noise_std" in (tmp_path / "dr" / "randomization.yaml").read_text()
    rand = res["randomization"]  # the fit's residual noise widens the band: it covers more
    assert rand["data"]["coverage"] > rand["data_no_noise"]["coverage"]
    for f in ("events_isaaclab.py", "events_mjlab.py"):
        text = (tmp_path / "dr" / f).read_text()
        compile(text, f, "exec")  # valid Python
        assert "EventTerm" in text


def test_spec_writeback_matches_model_values() -> None:
    import mujoco

    from real2sim.calibration.params.actuator import set_spec_actuator
    from real2sim.calibration.params.resolve import apply, resolve
    from real2sim.params import ParamSpec

    xml = B.pendulum_mjcf(0.535, dict(B.MENAGERIE, kv=0.1, emf=0.1))
    vals = {"kp": 25.0, "kv": 0.7, "forcerange": 2.6}
    spec = mujoco.MjSpec.from_string(xml)
    for k, v in vals.items():
        set_spec_actuator(spec.actuator("servo"), k, v)
    m_spec, m = spec.compile(), mujoco.MjModel.from_xml_string(xml)
    apply(m, resolve([ParamSpec(f"actuator:servo.{k}") for k in vals], m), np.array(list(vals.values())))
    for f in ("actuator_gainprm", "actuator_biasprm", "actuator_forcerange", "actuator_forcelimited"):
        np.testing.assert_allclose(getattr(m_spec, f), getattr(m, f))


def test_joint_fit_over_setups_and_reuse(tmp_path: Path) -> None:
    """Two payloads (their own model files) and two firmware gains fitted jointly for one servo; the fitted
    servo then builds another setup's model without refitting."""
    from real2sim.calibration.fitting.least_squares import fit_bounded
    from real2sim.calibration.params.resolve import resolve
    from real2sim.calibration.sim.objective import WindowObjective
    from real2sim.calibration.sim.setups import Setup, SetupModels, gain_setups
    from real2sim.calibration.sim.simulate import Simulator, make_windows
    from real2sim.params import ParamSpec

    trajs = [t for t in B.load_logs(tmp_path, "up_and_down_*") if t.constants["kp"] >= 16]
    models = [B.model_for(tmp_path, t.constants["mass"], B.MENAGERIE) for t in trajs]
    setups = gain_setups(trajs, "kp", 32.0, models)
    assert [s.gain_scale for s in setups] == [0.5, 1.0, 1.0]
    base = models[1]
    params = resolve([ParamSpec(n) for n in ("actuator:servo.kp", "joint:hinge.armature")], base)
    win = make_windows(trajs, 1.0, float(base.opt.timestep))
    sm = SetupModels(base, params, setups)
    obj = WindowObjective(
        Simulator(base, win, ("hinge",), ("servo",), nthread=1), params, ("servo",), setups=sm
    )
    x0 = np.array([17.8, 0.028])
    out = fit_bounded(obj, x0, np.array([5.0, 0.005]), np.array([60.0, 0.1]), np.ones(2, bool), max_nfev=4)
    assert out.cost_final < 0.9 * out.cost_initial  # measured: 0.81x after 4 evaluations
    built = sm.models(params, out.values)
    assert built[0].actuator_gainprm[0, 0] == pytest.approx(0.5 * out.values[0])
    assert built[0].body_mass[1] != built[2].body_mass[1]  # 0.535 kg vs 0.969 kg payload
    other = B.model_for(tmp_path, 0.969, B.MENAGERIE)
    (reused,) = SetupModels(other, params, [Setup(gain_scale=0.25, actuators=("servo",))]).models(
        params, out.values
    )
    assert reused.actuator_biasprm[0, 1] == pytest.approx(-0.25 * out.values[0])
    assert reused.dof_armature[0] == pytest.approx(out.values[1])


def test_cli_calibrates_json_logs_over_setups(tmp_path: Path) -> None:
    """`real2sim calibrate` on JSON logs: enable column, header kp scaling the gain, a per-log payload model."""
    logs = B.DATA / "logs"
    (tmp_path / "map.toml").write_text(B.MAP)
    light, heavy = tmp_path / "b.xml", tmp_path / "bc.xml"
    light.write_text(B.pendulum_mjcf(0.535, B.MENAGERIE))
    heavy.write_text(B.pendulum_mjcf(0.969, B.MENAGERIE))
    cmd = [sys.executable, "-m", "real2sim", "calibrate", str(light), "--map", str(tmp_path / "map.toml")]
    cmd += ["--log", str(logs / "lift_and_drop_kp16_m0.535_L0.1.json.gz")]
    cmd += ["--log", str(logs / "up_and_down_kp32_m0.969_L0.1.json.gz")]
    cmd += [
        "--log-model",
        str(light),
        "--log-model",
        str(heavy),
        "--gain-constant",
        "kp",
        "--gain-reference",
        "32",
    ]
    cmd += [
        "--fit",
        "actuator:servo.kp",
        "--fit",
        "joint:hinge.damping",
        "--window",
        "1.0",
        "--qvel-from-qpos",
    ]
    cmd += ["--despike", "0.5", "--max-windows", "8", "--no-report", "-o", str(tmp_path / "out"), "--json"]
    cmd += ["--randomize", "logs"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout)
    assert res["cost"]["final"] < res["cost"]["initial"]
    assert set(res["logs"]) == {
        "lift_and_drop_kp16_m0.535_L0.1.json.gz",
        "up_and_down_kp32_m0.969_L0.1.json.gz",
    }
    assert any(w.startswith("randomisation: ") for w in res["warnings"]), res["warnings"]
    mjcf = next((tmp_path / "out").glob("*_calibrated.xml")).read_text()
    assert "hinge" in mjcf


def test_inverse_dynamics_applies_no_force_while_off(tmp_path: Path) -> None:
    from real2sim.calibration.fitting.inverse import id_samples, joint_torques

    (tr,) = B.load_logs(tmp_path, "lift_and_drop_kp32_m0.535*")
    s = id_samples([tr], wn=0.1)
    _, appl = joint_torques(B.model_for(tmp_path, 0.535, B.M1), s, tr.joint_names, tr.actuator_names)
    assert np.all(appl[~s.enable[:, 0]] == 0.0) and np.abs(appl[s.enable[:, 0]]).max() > 0.1


def test_scale_to_coverage_picks_smallest_k_reaching_target() -> None:
    from real2sim.calibration.fitting import randomization as R

    center, per = np.array([1.0, 2.0]), np.array([[1.1, 2.2], [0.9, 1.8]])
    lo, hi = np.zeros(2), np.full(2, 10.0)
    k, rg, seen = R.scale_to_coverage(center, per, lo, hi, lambda r: float(r[0, 1] - r[0, 0]) / 0.5, log=True)
    assert k == 3.0 and seen[3.0] >= 0.9 > seen[2.0]
    assert rg[0, 0] < 1.0 < rg[0, 1]


def test_prediction_band_adds_the_residual_noise() -> None:
    from real2sim.calibration.fitting import randomization as R

    rng = np.random.default_rng(1)
    meas = rng.normal(0.0, 0.02, (4000, 1))  # a perfect model plus measurement noise of std 0.02
    ens = np.zeros((16, 4000, 1))
    sd = R.residual_std(ens[0], meas)
    assert abs(sd[0] - 0.02) < 1e-3
    assert R.band_coverage(ens, meas)[0] < 0.01  # parameters alone: a zero-width band covers nothing
    cov, width = R.band_coverage(ens, meas, sd)
    assert 0.87 < cov < 0.93 and abs(width - 2 * 1.645 * 0.02) < 0.005


def test_event_terms_with_noise_are_python() -> None:
    from real2sim.calibration.fitting import randomization as R

    rg = np.array([[0.01, 0.03]])
    for text in (
        R.event_terms(["delay:servo"], rg, {"hinge": 0.02}),
        R.mjlab_event_terms(["delay:servo"], rg),
    ):
        compile(text, "events.py", "exec")
    assert "std 0.02" in R.event_terms(["joint:hinge.armature"], rg, {"hinge": 0.02})
    assert "observation_noise_std" in R.to_yaml(["delay:servo"], rg, None, {"hinge": 0.02})


def test_pieces_cut_a_log_into_consecutive_trajectories(tmp_path: Path) -> None:
    from real2sim.calibration.fitting import randomization as R

    (tr,) = B.load_logs(tmp_path, "lift_and_drop_kp32_m0.535*")
    parts = R.pieces(tr, 2.0)
    assert len(parts) == 3 and sum(p.n for p in parts) == tr.n
    np.testing.assert_array_equal(np.concatenate([p.enable for p in parts]), tr.enable)
    assert parts[0].enable.all() and not parts[2].enable.any()  # torque off after 2 s
