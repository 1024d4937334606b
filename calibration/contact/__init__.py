"""Contact calibration: free bodies in logs (tosses, pushes, slides) → fitted friction, solref/solimp and mass."""
