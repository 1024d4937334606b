"""What is fitted: ``ParamSpec`` names resolved against an ``MjModel`` into scalar parameters (``resolve.py``), read
and written per kind (one module per kind: ``joint``, ``body``, ``actuator``, ``geom``, ``delay``, registered in
``kinds.py``), and physically consistent inertial parameters (``inertial.py``)."""
