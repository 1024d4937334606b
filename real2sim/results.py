"""Stage results: ``CalibrationResult`` (calibration → write-back/export) and ``SimPackage`` (export → user)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from real2sim.params import ParamSpec


@dataclass(frozen=True)
class LogError:
    """Sim-vs-real error on one log. ``split`` is ``train`` or ``holdout``."""

    file: str
    split: str
    rmse_qpos: float
    rmse_qvel: float
    torque_r2: tuple[float, ...] | None = None


@dataclass(frozen=True)
class CalibrationResult:
    """Fitted values with uncertainty. ``stderr`` is inf for a parameter the data cannot identify."""

    params: tuple[ParamSpec, ...]
    values: np.ndarray
    initial: np.ndarray
    stderr: np.ndarray
    correlation: np.ndarray
    cost_initial: float
    cost_final: float
    logs: tuple[LogError, ...] = ()
    randomization: dict[str, tuple[float, float]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def value(self, name: str) -> float:
        for p, v in zip(self.params, self.values, strict=True):
            if p.name == name:
                return float(v)
        raise KeyError(f"no fitted parameter {name!r}; fitted: {', '.join(p.name for p in self.params)}")


@dataclass(frozen=True)
class Check:
    """One validation check of a package: what was measured, against what limit, and whether it passed."""

    name: str
    passed: bool
    detail: str = ""
    value: float | None = None
    limit: float | None = None


@dataclass(frozen=True)
class SimPackage:
    """An exported package folder (Menagerie shape) and the checks it passed."""

    path: Path
    name: str
    mjcf: Path
    scene_xml: Path
    urdf: Path | None
    checks: tuple[Check, ...] = ()

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)
