"""real2sim.calibration: robot logs + a MuJoCo model to fitted physical parameters with uncertainty."""

from real2sim.calibration.logs import read_log

__all__ = ["read_log"]
