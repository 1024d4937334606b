"""real2sim: captures of the real world to simulation-ready worlds and calibrated simulators.

The stage packages live in the repository's top-level folders ``recon/``, ``calibration/`` and ``export/``
and import as ``real2sim.recon``, ``real2sim.calibration`` and ``real2sim.export``: in a checkout, through the
symbolic links ``real2sim/recon`` etc. to those folders (so Python, editors and type checkers find them with no
import hook); in a wheel or an install, through setuptools' ``package-dir`` mapping in ``pyproject.toml``.
"""

from __future__ import annotations

import os as _os

from real2sim.errors import Real2SimError

# Headless by default: MuJoCo renders through EGL unless the user chose a backend or has a display.
if not _os.environ.get("DISPLAY"):
    _os.environ.setdefault("MUJOCO_GL", "egl")
    _os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

__version__ = "0.1.0"

__all__ = ["Real2SimError", "__version__"]
