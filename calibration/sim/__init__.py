"""Simulating logs: a model + ``Trajectory`` values become simulated windows re-initialised from the measured state
(``simulate.py``), whole-log servo replays (``servo.py``), per-log models of several setups (``setups.py``), and the
trajectory-matching residual built on them (``objective.py``)."""
