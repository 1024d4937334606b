"""Length units of capture files (light: the CLI's options import it)."""

from __future__ import annotations

from typing import Literal

Units = Literal["m", "cm", "mm"]
"""What one file unit is: metres, centimetres or millimetres."""

UNITS: dict[str, float] = {"m": 1.0, "cm": 0.01, "mm": 0.001}
