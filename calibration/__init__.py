"""real2sim.calibration: robot logs + a MuJoCo model to fitted physical parameters with uncertainty."""
