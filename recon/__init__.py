"""real2sim.recon: scans, photos and splats to a gravity-aligned, metric, segmented ``Scene``."""

from real2sim.recon.io.points import read_points
from real2sim.recon.io.splat import read_splat

__all__ = ["read_points", "read_splat"]
