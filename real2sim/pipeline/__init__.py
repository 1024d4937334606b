"""Orchestration above the stages: capture sessions (``session``), ``process`` with stage reuse (``cache``,
``summary``) and the ``demo``. The only package besides ``real2sim.cli`` that imports the stages."""
