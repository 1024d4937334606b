"""real2sim: captures of the real world to simulation-ready worlds and calibrated simulators.

The stage packages live in the repository's top-level folders ``recon/``, ``calibration/`` and ``export/``
and import as ``real2sim.recon``, ``real2sim.calibration`` and ``real2sim.export``. An installed wheel has them
inside this package. In a source checkout they sit beside it: ``_StageFinder`` maps exactly those three names to
the sibling folders (nothing else of the checkout becomes importable under ``real2sim``).
"""

from __future__ import annotations

import importlib.machinery as _machinery
import os as _os
import sys as _sys

# Headless by default: MuJoCo renders through EGL unless the user chose a backend or has a display.
if not _os.environ.get("DISPLAY"):
    _os.environ.setdefault("MUJOCO_GL", "egl")
    _os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

__version__ = "0.1.0"

STAGES = ("recon", "calibration", "export")


class _StageFinder:
    """Finds ``real2sim.<stage>`` in the checkout's ``<stage>/`` folder beside this package."""

    def __init__(self, root: str):
        self.root = root

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001
        prefix, _, stage = fullname.partition(".")
        if prefix != "real2sim" or stage not in STAGES:
            return None
        return _machinery.PathFinder.find_spec(fullname, [self.root])


def _install_stage_finder() -> None:
    here = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(here)
    if _os.path.isdir(_os.path.join(here, "recon")):
        return  # installed wheel: the stages are sub-folders of this package
    if not all(_os.path.isfile(_os.path.join(root, s, "__init__.py")) for s in STAGES):
        return
    if any(isinstance(f, _StageFinder) and f.root == root for f in _sys.meta_path):
        return
    _sys.meta_path.insert(0, _StageFinder(root))


_install_stage_finder()

from real2sim.stdio import install_mujoco_warning_hook  # noqa: E402

install_mujoco_warning_hook()  # MuJoCo's warnings to logging, not MUJOCO_LOG.TXT in the current folder

from real2sim.errors import Real2SimError  # noqa: E402

__all__ = ["Real2SimError", "__version__"]
