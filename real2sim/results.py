"""Stage results: ``CalibrationResult`` (calibration → write-back/export) and ``SimPackage`` (export → user)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from real2sim.params import ParamSpec

Split = Literal["train", "holdout"]
"""Whether a log was fitted (``train``) or only evaluated (``holdout``)."""


@dataclass(frozen=True)
class LogError:
    """Sim-vs-real error on one log: joint-angle RMSE [rad] and velocity RMSE [rad/s] over its windows."""

    file: str
    split: Split
    rmse_qpos: float
    rmse_qvel: float
    torque_r2: tuple[float, ...] | None = None
    """Per-joint R² of the calibrated inverse-dynamics torque against the logged one (None: no ctrl logged)."""
    rmse_qpos_initial: float | None = None
    """Joint-angle RMSE [rad] with the initial values (before calibration)."""


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
    lower: np.ndarray
    """Lower bound each value was fitted within."""
    upper: np.ndarray
    """Upper bound each value was fitted within."""
    logs: tuple[LogError, ...] = ()
    randomization: dict[str, tuple[float, float]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def value(self, name: str) -> float:
        for p, v in zip(self.params, self.values, strict=True):
            if p.name == name:
                return float(v)
        raise KeyError(f"no fitted parameter {name!r}; fitted: {', '.join(p.name for p in self.params)}")

    def to_json(self) -> dict:
        """The result as written to ``result.json`` (infinite numbers as the strings ``inf`` / ``-inf``)."""

        def num(x: float):
            return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        return {
            "parameters": {
                p.name: {
                    "value": float(v),
                    "stderr": num(s),
                    "initial": float(i),
                    "bounds": [num(lo), num(hi)],
                }
                for p, v, s, i, lo, hi in zip(
                    self.params, self.values, self.stderr, self.initial, self.lower, self.upper, strict=True
                )
            },
            "cost": {"initial": self.cost_initial, "final": self.cost_final},
            "logs": {
                le.file: {
                    "split": le.split,
                    "rmse_qpos": le.rmse_qpos,
                    "rmse_qvel": le.rmse_qvel,
                    **({"torque_r2": list(le.torque_r2)} if le.torque_r2 is not None else {}),
                }
                for le in self.logs
            },
            "correlation": {
                "names": [p.name for p in self.params],
                "matrix": [[round(float(c), 6) for c in row] for row in self.correlation],
            },
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Check:
    """One validation check of a package: what was measured, against what limit, and whether it passed."""

    name: str
    passed: bool
    detail: str = ""
    value: float | None = None
    limit: float | None = None
    skipped: bool = False
    """The check did not run (e.g. its engine is not installed): neither passed nor failed, counted apart."""

    @property
    def failed(self) -> bool:
        return not self.passed and not self.skipped

    @property
    def result(self) -> str:
        """``pass``, ``FAIL`` or ``skipped``."""
        return "skipped" if self.skipped else "pass" if self.passed else "FAIL"


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
        return not any(c.failed for c in self.checks)
