"""LeRobot joint units both ways for one motor: what ``calibration/lerobot.py`` turns into radians, turned back, so
that a simulated ``observation.state`` is written in the units of the real one.

LeRobot (``lerobot.motors.motors_bus.MotorsBus._normalize``): ``RANGE_M100_100`` maps a motor's calibrated tick
range [range_min, range_max] onto -100..100 (negated when ``drive_mode`` is 1), ``RANGE_0_100`` (grippers) onto
0..100 (``100 - n`` when mirrored), ``DEGREES`` is degrees about the middle of the range. Without the calibration
file the normalised range is taken as the model joint's range (a stated assumption).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from real2sim.calibration.logs.lerobot import TICKS_PER_TURN


@dataclass(frozen=True)
class MotorUnits:
    """How one motor's logged values relate to its joint's radians."""

    unit: str
    """normalized, degrees or radians."""
    zero_to_100: bool = False
    calib: dict | None = None
    """The motor's LeRobot calibration (range_min, range_max, drive_mode), if known."""
    model_range: tuple[float, float] | None = None
    """The joint's range [rad], used for normalised values when ``calib`` is None."""

    def from_radians(self, q: np.ndarray) -> np.ndarray:
        """Radians (about the middle of the calibrated range) → the log's unit."""
        q = np.asarray(q, float)
        if self.unit == "radians":
            return q
        if self.unit == "degrees" and not self.zero_to_100:
            return np.rad2deg(q)
        if self.calib is not None:
            lo, hi = float(self.calib["range_min"]), float(self.calib["range_max"])
            ticks = q * TICKS_PER_TURN / (2 * np.pi) + 0.5 * (lo + hi)
            frac = (ticks - lo) / (hi - lo)
            mirrored = bool(self.calib.get("drive_mode", 0))
        else:
            assert self.model_range is not None  # units.py's callers give one or the other
            lo, hi = self.model_range
            frac = (q - lo) / (hi - lo)
            mirrored = False
        if self.zero_to_100:
            v = 100.0 * frac
            return 100.0 - v if mirrored else v
        v = 200.0 * frac - 100.0
        return -v if mirrored else v
