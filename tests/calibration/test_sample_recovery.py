"""Recover the sample robot's true parameters from its generated logs (noise-free: 1 %, noisy: 5 %)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from real2sim.atomic import dumps_json
from real2sim.calibration.run import CalibrateCfg, run_calibrate
from real2sim.params import ParamSpec
from real2sim.samplegen.robot import LOG_RATE, write_robot

FIT = ("joint:*.damping", "joint:*.frictionloss", "joint:*.armature", "delay:*")


def _perturbed_specs(truth: dict) -> tuple[ParamSpec, ...]:
    """Start every joint parameter far from the truth (×1.8 or ×0.5); delays from cross-correlation."""
    specs = []
    for i, (name, v) in enumerate(sorted(truth.items())):
        if name.startswith("delay:"):
            continue
        specs.append(ParamSpec(name, lower=0.0, upper=1.0, initial=v * (1.8 if i % 2 else 0.5)))
    return tuple(specs)


@pytest.mark.parametrize("noise,tol", [(False, 0.01), (True, 0.05)])
def test_recovers_sample_robot(tmp_path: Path, noise: bool, tol: float) -> None:
    gt = write_robot(tmp_path / "session", seed=0, noise=noise)
    s = tmp_path / "session"
    cfg = CalibrateCfg(
        model=s / gt["model"],
        logs=tuple(s / f"logs/excite_0{i}.csv" for i in range(3)),
        holdout=(s / "logs/excite_03.csv",),
        map=s / "logs/map.toml",
        fit=FIT,
        specs=_perturbed_specs(gt["parameters"]),
        out_dir=tmp_path / "out",
        report=False,
    )
    res = run_calibrate(cfg)
    for name, true in gt["parameters"].items():
        got = res.value(name)
        if name.startswith("delay:"):
            assert abs(got - true) < 1.0 / LOG_RATE, f"{name}: {got} vs {true}"
        assert abs(got - true) <= tol * abs(true), (
            f"{name}: {got} vs {true} ({100 * (got / true - 1):+.2f} %)"
        )
    assert res.cost_final < res.cost_initial
    assert np.all(np.isfinite(res.stderr))
    text = (tmp_path / "out" / "result.json").read_text()
    assert text == dumps_json(res.to_json())  # the typed result is the file, byte for byte
    doc = json.loads(text)
    assert set(doc["parameters"]) == set(gt["parameters"])
    assert doc["logs"]["excite_03.csv"]["split"] == "holdout"
    assert (tmp_path / "out" / "double_pendulum_calibrated.xml").is_file()
    changes = (tmp_path / "out" / "changes.csv").read_text()
    assert all(name in changes for name in gt["parameters"] if not name.startswith("delay:"))
