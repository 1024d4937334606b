"""Fitting: residuals become fitted values with uncertainty (``least_squares.py``: bounded least squares, standard
errors), inverse-dynamics torque fits (``inverse.py``), control delays (``delay.py``), honest results (``honest.py``:
what the data cannot identify keeps its prior) and randomisation ranges from the data (``randomization.py``)."""
