"""real2sim.calibration: robot logs + a MuJoCo model to fitted physical parameters with uncertainty.

Entry points: ``run_calibrate`` / ``calibrate`` (``run.py``) and ``read_log``; options in ``config.py``. The work is
grouped by concern: ``logs/`` (log files to tables, one module per format), ``maps/`` (the TOML map: tables to
``Trajectory`` values), ``params/`` (what is fitted, one module per parameter kind), ``sim/`` (simulated windows and
replays), ``fitting/`` (least squares, inverse dynamics, delays, honest results, randomisation), ``outputs/``
(result.json, report, calibrated model, package write-back) and ``contact/`` (free bodies: friction and contact
fitted from their motion). The entry points load on first use, so that the CLI's options (``config.py``) import no
numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from real2sim.lazy import lazy_attributes

if TYPE_CHECKING:
    from real2sim.calibration.config import CalibrateCfg
    from real2sim.calibration.logs.read import read_log
    from real2sim.calibration.run import calibrate, run_calibrate

__all__ = ["CalibrateCfg", "calibrate", "read_log", "run_calibrate"]
_WHERE = {
    "CalibrateCfg": "real2sim.calibration.config",
    "calibrate": "real2sim.calibration.run",
    "read_log": "real2sim.calibration.logs.read",
    "run_calibrate": "real2sim.calibration.run",
}

__getattr__ = lazy_attributes(__name__, _WHERE)
