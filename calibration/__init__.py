"""real2sim.calibration: robot logs + a MuJoCo model to fitted physical parameters with uncertainty.

``read_log`` loads on first use, so that the CLI's options (``config.py``) import no numerical library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from real2sim.calibration.logs import read_log

__all__ = ["read_log"]


def __getattr__(name: str) -> Any:
    if name != "read_log":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module("real2sim.calibration.logs").read_log
    globals()[name] = value
    return value
