"""What a fit leaves: a ``CalibrationReport`` becomes the output folder (``write.py``: result.json, plots, HTML
report via ``report.py``), the calibrated MJCF/URDF and its diff (``writeback.py``), and the values written into an
exported package (``package.py``)."""
