"""The options of the splat route (``real2sim recon splat``): which Gaussians are kept (``SplatCleanCfg``) and the
route (``SplatReconCfg``). Light (no numerical library): the CLI's options read them; ``recon.splat`` and
``recon.splat_recon`` re-export them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from real2sim.errors import ConfigError


@dataclass(frozen=True)
class SplatCleanCfg:
    """Which Gaussians count as surface."""

    min_opacity: float = 0.5
    """Gaussians more transparent than this (activated opacity) are dropped."""
    max_scale_ratio: float = 10.0
    """Gaussians whose largest axis exceeds this multiple of the median largest axis are dropped (oversized)."""
    max_scale_extent: float = 0.1
    """... or exceeds this fraction of the splat's robust extent (the 1-99 % range of the centres)."""
    outlier_neighbors: int = 16
    """Floaters: neighbours considered for the statistical outlier test (0 turns it off)."""
    outlier_std: float = 3.0
    """Floaters: mean neighbour distance above mean + this many std."""
    min_cluster_fraction: float = 0.02
    """Floaters: connected groups of Gaussians holding less than this share of the kept ones are dropped."""
    drop_hidden: bool = True
    """Drop Gaussians that are invisible from every direction outside the splat (``visible_mask``): interior
    Gaussians that training left behind the surface (segmented scenes; a solid object keeps them, inside it)."""
    hidden_transmittance: float = 0.5
    """A Gaussian is visible when some ray from it to the outside keeps at least this transmittance."""

    def validate(self) -> None:
        if not 0 <= self.min_opacity < 1:
            raise ConfigError(f"min_opacity must be in [0, 1); got {self.min_opacity}")
        if self.max_scale_ratio <= 1 or not 0 < self.max_scale_extent <= 1:
            raise ConfigError("max_scale_ratio must be > 1 and max_scale_extent in (0, 1]")
        if self.outlier_neighbors < 0 or self.outlier_std <= 0 or not 0 <= self.min_cluster_fraction < 1:
            raise ConfigError(
                "outlier_neighbors >= 0, outlier_std > 0, min_cluster_fraction in [0, 1) required"
            )
        if not 0 < self.hidden_transmittance < 1:
            raise ConfigError(f"hidden_transmittance must be in (0, 1); got {self.hidden_transmittance}")


@dataclass(frozen=True)
class SplatReconCfg:
    """Options of ``real2sim recon splat``."""

    input: Path = field(default=Path(), metadata={"hashed_path": True})
    """The splat PLY (INRIA 3DGS, nerfstudio ns-export or SuperSplat uncompressed layout)."""
    out_dir: Path | None = None
    """Scene folder to write; ``None``: return the scene only."""
    overwrite: bool = False
    """Replace the output folder even when it holds files real2sim did not write (never an input, ~ or /)."""
    scale: float | None = None
    """Metres per splat unit (splats have no inherent scale); ``None``: 1 (the splat is taken to be metric)."""
    object_only: bool = False
    """One object with no support in view (e.g. a splat cropped to the object)."""
    clean: SplatCleanCfg = field(default_factory=SplatCleanCfg)
    """Which Gaussians are kept as surface."""
    mesh_max_cells: int = 128
    """Meshing grid cells along the object's largest extent (segmented scenes: the point-cloud mesher)."""
    object_cells: int = 160
    """``object_only``: grid cells of the Gaussian-solid mesher along the object's largest extent."""
    max_triangles: int = 20000
    """Triangle budget per object mesh."""
    density: float = 500.0
    """Density [kg/m^3] of the objects."""

    def validate(self) -> SplatReconCfg:
        if self.scale is not None and not (math.isfinite(self.scale) and self.scale > 0):
            raise ConfigError(f"scale must be a positive number of metres per splat unit; got {self.scale}")
        if (
            self.mesh_max_cells < 8
            or self.object_cells < 8
            or self.max_triangles < 12
            or not self.density > 0
        ):
            raise ConfigError(
                "mesh_max_cells >= 8, object_cells >= 8, max_triangles >= 12 and density > 0 are required"
            )
        self.clean.validate()
        return self
