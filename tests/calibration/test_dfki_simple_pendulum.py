"""DFKI simple pendulum: fit on the identification run, beat the published model on the 4 validation logs
(median joint-angle RMSE over 0.5 s windows re-initialised from the measured state, torque held)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from real2sim.calibration.run import CalibrateCfg, build_problem, fit_problem, make_objective
from tests.helpers import dfki_baselines as B

MODELS = Path(__file__).resolve().parents[2] / "calibration" / "models"


def test_beats_published_model(shared_data: Path) -> None:
    d = shared_data / "robot_logs" / "simple_pendulum"
    val = tuple(sorted((d / "validation").glob("*_data_measured.csv")))
    assert len(val) == 4
    cfg = CalibrateCfg(
        model=MODELS / "simple_pendulum.xml",
        logs=(d / "sysid" / "data_measured.csv",),
        holdout=val,
        map=MODELS / "simple_pendulum_map.toml",
        fit=(
            "joint:*.damping",
            "joint:*.frictionloss",
            "joint:*.armature",
            "body:pendulum.mass",
            "actuator:*.bias",
            "delay:*",
        ),
        qvel_weight=0.0,
        qvel_from_qpos=True,
        smooth_qvel_wn=0.1,
    )
    prob = build_problem(cfg)
    x, out, obj = fit_problem(prob, cfg)
    obj.sim.close()
    assert out.cost_final < out.cost_initial
    ho = make_objective(prob, prob.holdout, cfg)
    ours, _ = ho.window_rmse(x)
    published = B.window_rmse(
        B.simulate_windows(B.simple_pendulum_rhs(B.SIMPLE_PENDULUM_PUBLISHED), ho.sim.win), ho.sim.win
    )
    ho.sim.close()
    assert np.median(ours) < np.median(published), (np.median(ours), np.median(published))
