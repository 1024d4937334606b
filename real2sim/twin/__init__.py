"""The digital twin: a robot's MJCF composed with a scene package (``run_twin``), real episodes replayed in it, and a
LeRobot dataset of the simulated episodes with randomised variations (``run_replay``).

Enters: the robot's MJCF, a scene package (``real2sim export``), optionally a calibration folder (``real2sim
calibrate``: ``result.json``, ``randomization.yaml``), the base's pose (given, a marker in the capture's photos, or
ICP into a scan), LeRobot datasets (v2.1 / v3.0) or CSV / Parquet logs with a map. Leaves: the twin folder
(``scene.xml``, ``assets/``, ``twin.json``) and the replay folder (``replay.json``, trace plots, ``dataset/``).
It sits above the stages (it reads export's packages and calibration's results), below ``pipeline`` and ``cli``.
"""
