"""real2sim: captures of the real world to simulation-ready worlds and calibrated simulators.

The stage packages live in the repository's top-level folders ``recon/``, ``calibration/`` and ``export/``
and import as ``real2sim.recon``, ``real2sim.calibration`` and ``real2sim.export``. An installed wheel has them
inside this package; in a source checkout they sit beside it, so the checkout root joins ``__path__``.
"""

from __future__ import annotations

import os as _os

# Headless by default: MuJoCo renders through EGL unless the user chose a backend or has a display.
if not _os.environ.get("DISPLAY"):
    _os.environ.setdefault("MUJOCO_GL", "egl")
    _os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

__version__ = "0.1.0"

_here = _os.path.dirname(_os.path.abspath(__file__))
_root = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "recon")) and _os.path.isfile(
    _os.path.join(_root, "recon", "__init__.py")
):
    __path__.append(_root)  # type: ignore[name-defined]  # noqa: F821

from real2sim.errors import Real2SimError  # noqa: E402

__all__ = ["Real2SimError", "__version__"]
