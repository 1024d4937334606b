"""Honest results: unidentifiable parameters keep their prior; loud warnings when the map leaves the model unforced
or the fit makes the training cost / held-out error worse (issue 18's observations on the sample arm and the DFKI
simple pendulum); fitted delays written as MuJoCo actuator delay reproduce the fitted simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from real2sim.calibration.config import CalibrateCfg
from real2sim.calibration.run import calibrate

MODELS = Path(__file__).resolve().parents[2] / "calibration" / "models"


def _arm(sample_data: Path, **kw) -> CalibrateCfg:
    base = dict(
        model=sample_data / "robot" / "double_pendulum.xml",
        logs=(sample_data / "logs" / "excite_00.csv",),
        holdout=(sample_data / "logs" / "excite_01.csv",),
        map=sample_data / "logs" / "map.toml",
        fit=("body:forearm.com", "joint:*.damping"),
        max_windows=12,
        report=False,
    )
    base.update(kw)
    return CalibrateCfg(**base)


def test_unidentifiable_com_keeps_prior(sample_data: Path, tmp_path: Path) -> None:
    import mujoco

    from real2sim.calibration.outputs.write import write_outputs

    rep = calibrate(_arm(sample_data))
    res = rep.result
    names = [p.name for p in res.params]
    k = names.index("body:forearm.com[1]")  # along the hinge axis: no effect on the planar motion
    assert res.values[k] == res.initial[k] == 0.0 and not np.isfinite(res.stderr[k])
    assert np.all(np.isfinite(np.delete(res.stderr, k)))  # the others were refitted without it
    assert any("kept at the initial value" in w and "body:forearm.com[1] = 0" in w for w in res.warnings)
    held = next(le for le in res.logs if le.split == "holdout")
    assert held.rmse_qpos > held.rmse_qpos_initial  # fitting the com on one log: worse elsewhere, and loud
    assert any("held-out joint-angle RMSE got WORSE" in w for w in res.warnings), res.warnings
    write_outputs(rep, tmp_path, plots=False)
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "double_pendulum_calibrated.xml"))
    assert m.body("forearm").ipos[1] == 0.0  # issue 18: was a free-floating 0.495 m before


def test_unforced_map_is_loud(sample_data: Path, tmp_path: Path) -> None:
    text = (sample_data / "logs" / "map.toml").read_text()
    (tmp_path / "map.toml").write_text(text[: text.index("[actuators.")])
    res = calibrate(
        _arm(sample_data, map=tmp_path / "map.toml", fit=("joint:*.damping",), max_windows=6)
    ).result
    assert any("unforced" in w for w in res.warnings), res.warnings


def test_dfki_inverse_worse_cost_is_loud(shared_data: Path) -> None:
    d = shared_data / "robot_logs" / "simple_pendulum"
    fit = (
        "joint:*.damping",
        "joint:*.frictionloss",
        "joint:*.armature",
        "body:pendulum.mass",
        "actuator:*.bias",
    )
    cfg = CalibrateCfg(
        model=MODELS / "simple_pendulum.xml",
        logs=(d / "sysid" / "data_measured.csv",),
        holdout=(d / "validation" / "energy_shaping_data_measured.csv",),
        map=MODELS / "simple_pendulum_map.toml",
        fit=fit,
        method="inverse",
        qvel_from_qpos=True,
        smooth_qvel_wn=0.1,
        report=False,
    )
    res = calibrate(cfg).result
    assert res.cost_final > res.cost_initial  # torque least squares does not minimise the trajectory error
    assert any("WORSE than the initial one on the training windows" in w for w in res.warnings), res.warnings


def test_written_delay_reproduces_fitted_simulation(sample_data: Path, tmp_path: Path) -> None:
    """The calibrated MJCF's MuJoCo actuator delay (history warm, as in a running simulation) gives the same
    joint angles as the fitted simulator's shifted ctrl."""
    import mujoco

    from real2sim.calibration.logs.signal import held_shifted_mean
    from real2sim.calibration.outputs.write import write_outputs
    from real2sim.calibration.run import build_problem, make_objective

    cfg = _arm(sample_data, fit=("delay:*",), holdout=(), max_windows=3)
    rep = calibrate(cfg)
    write_outputs(rep, tmp_path, plots=False)
    delays = rep.result.values
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "double_pendulum_calibrated.xml"))
    np.testing.assert_allclose(m.actuator_delay, delays, rtol=1e-5)  # MJCF keeps 6 digits
    prob = build_problem(cfg)
    obj = make_objective(prob, prob.train, cfg, 3)
    fitted, _ = obj.predict(delays[None])
    tr, h, d = prob.train[0], m.opt.timestep, mujoco.MjData(m)
    for w, s in enumerate(obj.sim.win.start):
        mujoco.mj_resetData(m, d)
        t0 = tr.time[s] + 1.0  # positive simulation time throughout

        def u(t: float) -> list[float]:
            return [
                held_shifted_mean(tr.time, tr.ctrl[:, a], 0.0, np.array([t - 1.0]), h)[0] for a in range(2)
            ]

        d.time = t0 - 40 * h  # fill the ctrl history while holding the window's initial state
        for _ in range(40):
            d.qpos[:], d.qvel[:], d.ctrl[:] = tr.qpos[s], tr.qvel[s], u(d.time)
            mujoco.mj_step(m, d)
        d.qpos[:], d.qvel[:], d.time = tr.qpos[s], tr.qvel[s], t0
        qs = [d.qpos.copy()]
        for _ in range(obj.sim.win.nstep):
            d.ctrl[:] = u(d.time)
            mujoco.mj_step(m, d)
            qs.append(d.qpos.copy())
        qs = np.array(qs)
        rt = obj.sim.rel_t[w] / h
        native = np.stack([np.interp(rt, np.arange(len(qs)), qs[:, j]) for j in range(2)], 1)
        np.testing.assert_allclose(native, fitted[0, w], atol=2e-3)
    obj.sim.close()


@pytest.mark.parametrize("bad", [np.inf, 5.0])
def test_unidentifiable_rule(bad: float) -> None:
    from real2sim.calibration.fitting.honest import unidentifiable

    v = np.array([0.1, 0.2])
    idx = unidentifiable(v, v, np.array([0.01, bad]), np.zeros(2), np.ones(2))
    assert idx.tolist() == [1]
