"""real2sim.recon: scans, photos and splats to a gravity-aligned, metric, segmented ``Scene``.

The readers below load on first use, so that importing a light module of this package (a stage's config, read by
the CLI's options) does not import numpy and the readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from real2sim.lazy import lazy_attributes

if TYPE_CHECKING:
    from real2sim.recon.io.points import read_points
    from real2sim.recon.io.splat import read_splat

__all__ = ["read_points", "read_splat"]

_LAZY = {"read_points": "real2sim.recon.io.points", "read_splat": "real2sim.recon.io.splat"}

__getattr__ = lazy_attributes(__name__, _LAZY)
