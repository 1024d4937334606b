"""real2sim.export: a ``Scene`` to a checked MuJoCo/USD/URDF sim package (Menagerie shape).

Entry points: ``export_scene`` / ``run_export`` (``package.py``) and ``validate_package`` (``validate.py``); options
in ``config.py``. The work is grouped by concern: ``objects/`` (per-object repair, visual mesh, preparation),
``collision/`` (hulls and primitives within an engine budget), ``physics/`` (mass, friction and their sources,
inertia, settling), ``writers/`` (MJCF, URDF, USD, OBJ, the manifest), ``checks/`` (MuJoCo and every other engine)
and ``report/`` (renders, README, report.html). The entry points load on first use, so that importing this package
(or the CLI's options in ``config.py``) loads no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from real2sim.lazy import lazy_attributes

if TYPE_CHECKING:
    from real2sim.export.config import ExportCfg, ValidateCfg
    from real2sim.export.package import export_scene, run_export
    from real2sim.export.validate import validate_package

__all__ = ["ExportCfg", "ValidateCfg", "export_scene", "run_export", "validate_package"]
_WHERE = {
    "ExportCfg": "real2sim.export.config",
    "ValidateCfg": "real2sim.export.config",
    "export_scene": "real2sim.export.package",
    "run_export": "real2sim.export.package",
    "validate_package": "real2sim.export.validate",
}

__getattr__ = lazy_attributes(__name__, _WHERE)
