"""Inverse dynamics cannot see a delay: asked to fit only delays by inverse dynamics, calibrate says so (a
ConfigError, one line for the CLI) instead of failing on the missing fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from real2sim.calibration.config import CalibrateCfg
from real2sim.calibration.run import calibrate
from real2sim.errors import ConfigError


def test_inverse_with_only_delays_is_refused(sample_data: Path) -> None:
    cfg = CalibrateCfg(
        model=sample_data / "robot" / "double_pendulum.xml",
        logs=(sample_data / "logs" / "excite_00.csv",),
        map=sample_data / "logs" / "map.toml",
        fit=("delay:*",),
        method="inverse",
        max_windows=3,
        report=False,
    )
    with pytest.raises(ConfigError, match="method 'inverse' fits no delay"):
        calibrate(cfg)
