"""real2sim.recon: scans, photos and splats to a gravity-aligned, metric, segmented ``Scene``."""
