"""The TOML map from log columns to model joints, actuators and free bodies: a ``Table`` and a ``LogMap`` become a
``Trajectory`` (``logmap.load_trajectory``) or, with ``[bodies.NAME]`` tables, the columns of free bodies
(``bodymap.py``)."""
