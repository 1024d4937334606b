"""Log files to tables: every format becomes a ``Table`` (``{column name: 1-D float array}``), one module per
format, registered in ``formats.py``; ``read.read_log`` is the entry point. LeRobot dataset folders
(``lerobot.py``, which also converts LeRobot's units) and the explicit signal-processing steps applied to logged
signals (``signal.py``: resampling, filtering, differentiation, despiking) live here too."""
