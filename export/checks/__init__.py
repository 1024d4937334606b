"""Checks of a written package: MuJoCo's compiled model (``compiled.py``: physics values, URDF loading, inertia,
hull budget, collision-to-surface distance, rest) and the other engines it is written for, one module per engine
(``usd``, ``newton``, ``bullet``, ``webots``) registered in ``engines.py``, each compared with MuJoCo's reference
values (``reference.py``). A package folder (+ its ``PackageManifest`` and compiled model) enters; ``Check`` values
leave."""
